"""dualad.linalg.products (see the package docstring for what it holds)."""

from __future__ import annotations

__all__: list[str] = []
