"""Normalising static parameters once, at the public boundary (never inside rules)."""

from __future__ import annotations


def normalize_dim(dim: int, ndim: int, *, op: str = "op") -> int:
    """A dimension index as a non-negative int, with PyTorch's error for out-of-range."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(
            f"dualad.{op}: Dimension out of range (expected to be in range of "
            f"[{-bound}, {bound - 1}], but got {dim})"
        )
    return dim % bound


def normalize_dims(dim, ndim: int, *, op: str = "op") -> tuple[int, ...]:
    """``dim`` (None, an int or a sequence) as a sorted tuple of non-negative ints."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    dims = tuple(sorted({normalize_dim(int(d), ndim, op=op) for d in dim}))
    if ndim == 0:
        return ()
    if len(dims) != len(tuple(dim)):
        raise RuntimeError(
            f"dualad.{op}: dim {tuple(dim)} appears multiple times in the list of dims"
        )
    return dims


def pick_dim(dim, axis, default=None):
    """Accept torch's ``dim=`` and NumPy's ``axis=`` (not both)."""
    if dim is not None and axis is not None:
        raise TypeError("dualad: pass either dim= or axis=, not both")
    return default if dim is None and axis is None else (dim if dim is not None else axis)


def pick_keepdim(keepdim, keepdims) -> bool:
    if keepdims is not None:
        return bool(keepdims)
    return bool(keepdim)


def size_args(shape: tuple) -> tuple:
    """torch-style varargs sizes: ``f(2, 3)`` and ``f((2, 3))`` both give ``(2, 3)``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)
