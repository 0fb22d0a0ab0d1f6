"""``dualad.special``: special functions (values from ``scipy.special``), differentiable."""

from __future__ import annotations

__all__: list[str] = []
