"""``dualad.fft``: discrete Fourier transforms with reverse, forward and batching rules."""

from __future__ import annotations

__all__: list[str] = []
