"""The array API's searching, sorting and set functions: ``argmax``, ``argmin``,
``count_nonzero``, ``nonzero``, ``searchsorted``, ``where``, ``argsort``, ``sort``, ``isin``,
``unique_all``, ``unique_counts``, ``unique_inverse``, ``unique_values``.

Indices, counts and masks have no derivative: they are untracked, made of dualad's
non-differentiable ops (``dualad/ops/searching.py``, ``sets.py``), so they run inside
``func.grad``, dual levels and ``vmap`` (the ``unique_*`` functions once per example: their sizes
depend on the values, and the examples' results stack when the sizes agree). ``sort`` and the
values of the ``unique_*`` functions are differentiable: they gather ``x`` at those indices
(each output element's derivative is that of the input element it came from).

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
from .._dispatch import apply
from .._tensor import Tensor
from ..ops.searching import argsort_op, searchsorted_op
from ..ops.sets import isin_op, unique_op
from ._common import axis_tuple, operand, tensor_arg


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
    if not descending:
        return apply(argsort_op, x, axis=axis, kind="stable", stable=None)
    # descending with ties in their order: the stable ascending order of the reversed array,
    # read backwards, in the reversed array's positions mapped back
    index = apply(argsort_op, ops.flip(x, axis), axis=axis, kind="stable", stable=None)
    return (x.shape[axis] - 1) - ops.flip(index, axis)


def sort(x, /, *, axis: int = -1, descending=False, stable=True) -> Tensor:
    """``x`` sorted along ``axis``; differentiable (the derivative follows each element)."""
    x = tensor_arg("sort", x)
    if x.ndim == 0:
        raise ValueError("dualad.array_api.sort: x must have at least one dimension")
    index = argsort(x, axis=axis, descending=descending, stable=stable)
    return ops.take_along_dim(x, index, axis)


def searchsorted(x1, x2, /, *, side="left", sorter=None) -> Tensor:
    """The indices where ``x2``'s elements would go in the sorted 1-d ``x1`` (``side``:
    ``"left"`` or ``"right"`` of equal elements; ``sorter``: the indices that sort ``x1``)."""
    if side not in ("left", "right"):
        raise ValueError(
            f"dualad.array_api.searchsorted: side must be 'left' or 'right', not {side!r}"
        )
    x1 = tensor_arg("searchsorted", x1)
    if x1.ndim != 1:
        raise ValueError("dualad.array_api.searchsorted: x1 must be 1-d")
    if sorter is not None:
        x1 = ops.take(x1, tensor_arg("searchsorted", sorter), 0)
    return apply(searchsorted_op, x1, tensor_arg("searchsorted", x2), side=side)


def isin(x1, x2, /, *, invert=False) -> Tensor:
    """Whether each element of ``x1`` is in ``x2`` (``invert``: is not)."""
    x1, x2 = tensor_arg("isin", x1), tensor_arg("isin", x2)
    return apply(isin_op, x1, x2, assume_unique=False, invert=bool(invert), kind=None)


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
    # NaNs are distinct (equal_nan=False), as the standard says
    _, first, inverse, counts = apply(unique_op, x, axis=None, equal_nan=False)
    values = ops.take(ops.reshape(x, (-1,)), first, 0)
    return values, first, ops.reshape(inverse, x.shape), counts


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
