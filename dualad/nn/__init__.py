"""``dualad.nn``: neural-network building blocks; today the functional interface only."""

from __future__ import annotations

from . import functional

__all__ = ["functional"]
