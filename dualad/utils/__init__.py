"""torch.utils-shaped helpers: ``dualad.utils.checkpoint``."""

from __future__ import annotations

from . import checkpoint

__all__ = ["checkpoint"]
