"""Finite differences for the tests of dualad.linalg (NumPy arrays in, NumPy arrays out)."""

from __future__ import annotations

import numpy as np


def fd_grad(f, a, h=1e-6):
    """Central differences of a real function of a (complex) array: d/dRe + i d/dIm."""
    g = np.zeros(a.shape, dtype=a.dtype)
    for index in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[index] = h
        g[index] = (f(a + e) - f(a - e)) / (2 * h)
        if a.dtype.kind == "c":
            e[index] = 1j * h
            g[index] += 1j * (f(a + e) - f(a - e)) / (2 * h)
    return g


def fd_hvp(f, a, t, h=1e-4):
    """The derivative of the finite-difference gradient in the direction ``t``."""
    return (fd_grad(f, a + h * t, 1e-5) - fd_grad(f, a - h * t, 1e-5)) / (2 * h)
