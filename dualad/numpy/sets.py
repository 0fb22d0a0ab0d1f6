"""NumPy's set functions, not differentiable: ``unique`` (``return_index``,
``return_inverse``, ``return_counts``, ``axis``, ``equal_nan``, ``sorted``), the Array API's
``unique_values``, ``unique_counts``, ``unique_inverse``, ``unique_all``, and ``isin``,
``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``.

Results are untracked tensors. Under ``vmap`` the functions whose result size depends on the
values run once per example and stack when the sizes agree (otherwise vmap says so).

>>> import dualad, dualad.numpy as dnp
>>> values, counts = dnp.unique(dualad.tensor([2.0, 1.0, 2.0]), return_counts=True)
>>> values, counts
(tensor([1., 2.]), tensor([1, 2]))
>>> dnp.isin(dualad.tensor([1, 5]), [5, 6])
tensor([False,  True])
"""

from __future__ import annotations

from typing import NamedTuple

from .._dispatch import apply
from .._tensor import Tensor
from ..ops.sets import (
    intersect1d_op,
    isin_op,
    setdiff1d_op,
    setxor1d_op,
    union1d_op,
    unique_op,
    unique_values_op,
)
from ._nondiff import arg, axis_index, uses

__all__ = [
    "intersect1d",
    "isin",
    "setdiff1d",
    "setxor1d",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result (NumPy's and the Array API's field names)."""

    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result."""

    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result."""

    values: Tensor
    inverse_indices: Tensor


@uses(unique_op, unique_values_op)
def unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    sorted=True,
):
    """The sorted unique elements of ``ar`` (rows, columns ... along ``axis``), with the
    indices of their first occurrences, the inverse (``ar`` rebuilt from the unique values)
    and their counts as NumPy's ``unique`` gives them.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.unique(dualad.tensor([2, 1, 2, 3]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 2, 1]))
    """
    ar = arg(ar)
    if axis is not None:
        axis = axis_index(axis, ar.ndim)
    if not (return_index or return_inverse or return_counts):
        if axis is None:
            return apply(unique_values_op, ar, equal_nan=bool(equal_nan), sorted=bool(sorted))
        return apply(unique_op, ar, axis=axis, equal_nan=bool(equal_nan))[0]
    values, index, inverse, counts = apply(unique_op, ar, axis=axis, equal_nan=bool(equal_nan))
    flags = (return_index, return_inverse, return_counts)
    return (values, *(out for out, flag in zip((index, inverse, counts), flags) if flag))


@uses(unique_values_op)
def unique_values(x):
    """The unique elements of ``x`` (flattened), in no particular order (the Array API's).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.unique_values(dualad.tensor([2, 1, 2]))
    tensor([1, 2])
    """
    return apply(unique_values_op, arg(x), equal_nan=False, sorted=False)


@uses(unique_op)
def unique_counts(x):
    """``(values, counts)`` of the unique elements of ``x`` (flattened).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.unique_counts(dualad.tensor([2, 1, 2]))
    UniqueCountsResult(values=tensor([1, 2]), counts=tensor([1, 2]))
    """
    values, _, _, counts = apply(unique_op, arg(x), axis=None, equal_nan=False)
    return UniqueCountsResult(values, counts)


@uses(unique_op)
def unique_inverse(x):
    """``(values, inverse_indices)``: the unique elements, and ``x``'s shape of indices into
    them.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.unique_inverse(dualad.tensor([2, 1, 2]))
    UniqueInverseResult(values=tensor([1, 2]), inverse_indices=tensor([1, 0, 1]))
    """
    _, _, inverse, _ = outs = apply(unique_op, arg(x), axis=None, equal_nan=False)
    return UniqueInverseResult(outs[0], inverse)


@uses(unique_op)
def unique_all(x):
    """``(values, indices, inverse_indices, counts)`` of the unique elements of ``x``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.unique_all(dualad.tensor([2, 1, 2])).counts
    tensor([1, 2])
    """
    return UniqueAllResult(*apply(unique_op, arg(x), axis=None, equal_nan=False))


@uses(isin_op)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """True where an element of ``element`` is in ``test_elements`` (of ``element``'s shape).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.isin(dualad.tensor([1, 2, 3]), [2, 4])
    tensor([False,  True, False])
    """
    if kind not in (None, "sort", "table"):
        raise ValueError(f"dualad.numpy.isin: kind must be None, 'sort' or 'table', got {kind!r}")
    return apply(
        isin_op,
        arg(element),
        arg(test_elements),
        assume_unique=bool(assume_unique),
        invert=bool(invert),
        kind=kind,
    )


@uses(intersect1d_op)
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted unique values in both ``ar1`` and ``ar2`` (flattened); with
    ``return_indices`` also their first indices in each.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.intersect1d(dualad.tensor([1, 3, 2]), [2, 3, 4])
    tensor([2, 3])
    """
    values, i1, i2 = apply(intersect1d_op, arg(ar1), arg(ar2), assume_unique=bool(assume_unique))
    return (values, i1, i2) if return_indices else values


@uses(union1d_op)
def union1d(ar1, ar2):
    """The sorted unique values in ``ar1`` or ``ar2`` (flattened).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.union1d(dualad.tensor([1, 3]), [2, 3])
    tensor([1, 2, 3])
    """
    return apply(union1d_op, arg(ar1), arg(ar2))


@uses(setdiff1d_op)
def setdiff1d(ar1, ar2, assume_unique=False):
    """The unique values of ``ar1`` that are not in ``ar2`` (sorted unless
    ``assume_unique``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.setdiff1d(dualad.tensor([1, 3, 2]), [2])
    tensor([1, 3])
    """
    return apply(setdiff1d_op, arg(ar1), arg(ar2), assume_unique=bool(assume_unique))


@uses(setxor1d_op)
def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted unique values in exactly one of ``ar1`` and ``ar2``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.setxor1d(dualad.tensor([1, 3, 2]), [2, 4])
    tensor([1, 3, 4])
    """
    return apply(setxor1d_op, arg(ar1), arg(ar2), assume_unique=bool(assume_unique))
