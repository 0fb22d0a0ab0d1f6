"""Argument normalisation shared by the convolution and pooling functions."""

from __future__ import annotations


def expand_ints(value, nd: int) -> tuple[int, ...] | None:
    """An int or a sequence of ``nd`` ints (a single one stands for every dim) as a tuple of
    ``nd`` ints; None when ``value`` is neither (each caller raises PyTorch's own message)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * nd
    try:
        values = tuple(value)
    except TypeError:
        return None
    if len(values) == 1:
        values = values * nd
    if len(values) != nd or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    return values
