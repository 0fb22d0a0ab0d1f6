"""The array API's searching, sorting and set functions: ``argmax``, ``argmin``,
``count_nonzero``, ``nonzero``, ``searchsorted``, ``where``, ``argsort``, ``sort``, ``isin``,
``unique_all``, ``unique_counts``, ``unique_inverse``, ``unique_values``.

Indices, counts and masks have no derivative: they are untracked. ``sort`` and the values of the
``unique_*`` functions are differentiable: they gather ``x`` at indices found on its values
(each output element's derivative is that of the input element it came from). ``argsort``,
``searchsorted``, ``isin`` and ``unique_*`` have no dualad op yet and compute on the values (the
primal values inside ``func.grad`` and dual levels), so under ``vmap`` they raise
``TrackedConversionError``.

>>> import dualad, dualad.array_api as xp
>>> x = dualad.tensor([3.0, 1.0, 2.0], requires_grad=True)
>>> xp.sort(x, descending=True)
tensor([3., 2., 1.], grad_fn=<GatherBackward0>)
>>> xp.unique_counts(dualad.tensor([1, 1, 2])).counts
tensor([2, 1])
"""

from __future__ import annotations

import builtins
from typing import NamedTuple

from .. import ops
from .._tensor import Tensor, wrap
from ._common import axis_tuple, operand, tensor_arg, untracked


def _arg_extremum(name: str, op, x, axis, keepdims) -> Tensor:
    x = tensor_arg(name, x)
    if x.numel() == 0:
        raise ValueError(f"dualad.array_api.{name}: attempt to get {name} of an empty sequence")
    if axis is None:
        out = op(ops.reshape(x, (-1,)), axis=0)
        return ops.reshape(out, (1,) * x.ndim) if keepdims else out
    return op(x, axis=axis, keepdims=keepdims)


def argmax(x, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """The index of the first largest element (over the flattened ``x`` for ``axis=None``)."""
    return _arg_extremum("argmax", ops.argmax, x, axis, keepdims)


def argmin(x, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """The index of the first smallest element (over the flattened ``x`` for ``axis=None``)."""
    return _arg_extremum("argmin", ops.argmin, x, axis, keepdims)


def count_nonzero(x, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """The number of non-zero elements over ``axis``."""
    x = tensor_arg("count_nonzero", x)
    return ops.count_nonzero(x, axis=axis_tuple(axis, x.ndim), keepdims=keepdims)


def nonzero(x, /) -> tuple:
    """The indices of the non-zero elements, one array per axis (``x`` at least 1-d)."""
    x = tensor_arg("nonzero", x)
    if x.ndim == 0:
        raise ValueError("dualad.array_api.nonzero: x must have at least one dimension")
    return tuple(ops.nonzero(x, as_tuple=True))


def where(condition, x1, x2, /) -> Tensor:
    """``x1`` where ``condition`` is true, ``x2`` elsewhere (either may be a Python scalar);
    differentiable in ``x1`` and ``x2``."""
    condition = tensor_arg("where", condition)
    return ops.where(condition, operand(x1), operand(x2))


def argsort(x, /, *, axis: int = -1, descending=False, stable=True) -> Tensor:
    """The indices that sort ``x`` along ``axis`` (stable; ``descending``: largest first,
    ties still in their order)."""
    x = tensor_arg("argsort", x)
    if x.ndim == 0:
        raise ValueError("dualad.array_api.argsort: x must have at least one dimension")
    (axis,) = axis_tuple(axis, x.ndim)

    # always stable (``stable=False`` allows any order of ties, so a stable one is right too)
    def run(xp, a):
        if not descending:
            return xp.argsort(a, axis=axis, kind="stable")
        # descending with ties in their order: the stable ascending order of the reversed array,
        # read backwards, in the reversed array's positions mapped back
        n = a.shape[axis]
        rev = xp.flip(a, axis=axis)
        idx = xp.flip(xp.argsort(rev, axis=axis, kind="stable"), axis=axis)
        return n - 1 - idx

    return untracked("argsort", run, x)


def sort(x, /, *, axis: int = -1, descending=False, stable=True) -> Tensor:
    """``x`` sorted along ``axis``; differentiable (the derivative follows each element)."""
    x = tensor_arg("sort", x)
    if x.ndim == 0:
        raise ValueError("dualad.array_api.sort: x must have at least one dimension")
    index = argsort(x, axis=axis, descending=descending, stable=stable)
    return ops.take_along_dim(x, index, axis)


def searchsorted(x1, x2, /, *, side="left", sorter=None) -> Tensor:
    """The indices where ``x2``'s elements would go in the sorted 1-d ``x1`` (``side``:
    ``"left"`` or ``"right"`` of equal elements)."""
    if side not in ("left", "right"):
        raise ValueError(
            f"dualad.array_api.searchsorted: side must be 'left' or 'right', not {side!r}"
        )
    x1 = tensor_arg("searchsorted", x1)
    if x1.ndim != 1:
        raise ValueError("dualad.array_api.searchsorted: x1 must be 1-d")

    def run(xp, a, v, *s):
        return xp.searchsorted(a, v, side=side, sorter=s[0] if s else None)

    args = (x1, operand(x2)) + (() if sorter is None else (tensor_arg("searchsorted", sorter),))
    return untracked("searchsorted", run, *args)


def isin(x1, x2, /, *, invert=False) -> Tensor:
    """Whether each element of ``x1`` is in ``x2`` (``invert``: is not)."""

    def run(xp, a, b):
        return xp.isin(a, b, invert=invert)

    return untracked("isin", run, operand(x1), operand(x2))


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _unique(x):
    x = tensor_arg("unique", x)
    found = {}

    def run(xp, a):
        # NaNs are distinct (equal_nan=False), as the standard says
        _, first, inverse, counts = xp.unique(
            a.reshape(-1), return_index=True, return_inverse=True, return_counts=True,
            equal_nan=False,
        )  # fmt: skip
        found["first"], found["counts"] = first, counts
        return inverse.reshape(a.shape)

    inverse = untracked("unique", run, x)
    first, counts = wrap(found["first"]), wrap(found["counts"])
    values = ops.take(ops.reshape(x, (-1,)), first, 0)
    return values, first, inverse, counts


def unique_all(x, /) -> UniqueAllResult:
    """The unique elements of ``x`` (sorted), the index of each one's first occurrence, the
    inverse indices (``x``'s shape) and the counts."""
    return UniqueAllResult(*_unique(x))


def unique_counts(x, /) -> UniqueCountsResult:
    """The unique elements of ``x`` and their counts."""
    values, _, _, counts = _unique(x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /) -> UniqueInverseResult:
    """The unique elements of ``x`` and the inverse indices (``x``'s shape)."""
    values, _, inverse, _ = _unique(x)
    return UniqueInverseResult(values, inverse)


def unique_values(x, /) -> Tensor:
    """The unique elements of ``x``, sorted; differentiable (each value's derivative is that
    of its first occurrence in ``x``: with duplicates, a one-sided choice)."""
    return _unique(x)[0]


__all__ = [
    "argmax",
    "argmin",
    "count_nonzero",
    "nonzero",
    "where",
    "argsort",
    "sort",
    "searchsorted",
    "isin",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]
