"""NumPy's sorting indices and searching functions, not differentiable (integer results):
``argsort``, ``argpartition``, ``lexsort``, ``searchsorted``, ``digitize``, ``argmax``,
``argmin``, ``nanargmax``, ``nanargmin``, ``nonzero``, ``flatnonzero``, ``argwhere``,
``count_nonzero``, the flat/multi-index conversions ``unravel_index``,
``ravel_multi_index``, and the bit packing ``packbits``, ``unpackbits``.

They take tensors of every level and return untracked tensors (under ``vmap`` batched per
example), with NumPy's signatures, values, dtypes and shapes.

>>> import dualad, dualad.numpy as dnp
>>> x = dualad.tensor([3.0, 1.0, 2.0], requires_grad=True)
>>> dnp.argsort(x)
tensor([1, 2, 0])
>>> dnp.searchsorted(dualad.tensor([1.0, 2.0, 3.0]), x, side="right")
tensor([3, 1, 2])
"""

from __future__ import annotations

import operator

from .. import ops
from .._dispatch import REGISTRY, apply
from .._tensor import Tensor
from ..ops.searching import (
    argpartition_op,
    argsort_op,
    digitize_op,
    lexsort_op,
    nanargmax_op,
    nanargmin_op,
    packbits_op,
    ravel_multi_index_op,
    searchsorted_op,
    unpackbits_op,
    unravel_index_op,
)
from ._nondiff import arg, axis_index, axis_tuple, no_out, uses

__all__ = [
    "argmax",
    "argmin",
    "argpartition",
    "argsort",
    "argwhere",
    "count_nonzero",
    "digitize",
    "flatnonzero",
    "lexsort",
    "nanargmax",
    "nanargmin",
    "nonzero",
    "packbits",
    "ravel_multi_index",
    "searchsorted",
    "unpackbits",
    "unravel_index",
]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _along(a, axis):
    """``(a, axis)`` with ``axis=None`` meaning the flattened array and a 0-d ``a`` as one
    element (NumPy's rule for the sorting functions)."""
    a = arg(a)
    if axis is None or a.ndim == 0:
        if a.ndim == 0 and axis is not None:
            axis_index(axis, 1)
        return ops.reshape(a, (-1,)), 0
    return a, axis_index(axis, a.ndim)


def _no_order(name, order):
    if order is not None:
        raise ValueError(  # (NumPy's class: tensors have no fields)
            f"dualad.numpy.{name}: Cannot specify order when the array has no fields."
        )


@uses(argsort_op)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """The indices that sort ``a`` along ``axis`` (``None``: the flattened array), NumPy's
    ``argsort``; ``stable=True`` or ``kind="stable"`` keeps equal elements in order.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.argsort(dualad.tensor([3.0, 1.0, 2.0]))
    tensor([1, 2, 0])
    """
    _no_order("argsort", order)
    if kind not in _KINDS:
        raise ValueError(f"dualad.numpy.argsort: kind must be one of {_KINDS[1:]}, got {kind!r}")
    if stable is not None and kind is not None:
        raise ValueError(
            "dualad.numpy.argsort: `kind` and `stable` parameters can't both be specified"
        )
    a, axis = _along(a, axis)
    return apply(argsort_op, a, axis=axis, kind=kind, stable=stable)


@uses(argpartition_op)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """The indices that partition ``a`` around its ``kth`` element(s) along ``axis`` (NumPy's
    ``argpartition``: element ``kth`` in its sorted place, smaller ones before it).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.argpartition(dualad.tensor([3.0, 1.0, 2.0]), 0)[0]
    tensor(1)
    """
    _no_order("argpartition", order)
    a, axis = _along(a, axis)
    if isinstance(kth, (list, tuple)) or getattr(kth, "ndim", 0):
        kth = tuple(int(k) for k in (kth.tolist() if hasattr(kth, "tolist") else kth))
    else:
        kth = int(kth)
    return apply(argpartition_op, a, kth=kth, axis=axis, kind=kind)


@uses(lexsort_op)
def lexsort(keys, axis=-1):
    """The indices that sort by several keys, the last key the primary one (NumPy's
    ``lexsort``); ``keys`` a sequence of same-shape arrays or a 2-d array (its rows).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.lexsort([dualad.tensor([2, 1, 3]), dualad.tensor([1, 1, 0])])
    tensor([2, 1, 0])
    """
    keys = [arg(k) for k in keys]
    if not keys:
        raise TypeError("dualad.numpy.lexsort: need sequence of keys with len > 0 in lexsort")
    shapes = {tuple(k.shape) for k in keys}
    if len(shapes) > 1:
        raise ValueError(f"dualad.numpy.lexsort: all keys need to be the same shape, got {shapes}")
    if keys[0].ndim == 0:
        keys = [ops.reshape(k, (1,)) for k in keys]
    axis = axis_index(axis, keys[0].ndim)
    return apply(lexsort_op, *keys, axis=axis)


@uses(searchsorted_op)
def searchsorted(a, v, side="left", sorter=None):
    """Where the values ``v`` would be inserted into the sorted 1-d ``a`` to keep it sorted
    (NumPy's ``searchsorted``); ``sorter`` the indices that sort ``a``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.searchsorted(dualad.tensor([1.0, 2.0, 3.0]), [2.5, 0.0])
    tensor([2, 0])
    """
    if side not in ("left", "right"):
        raise ValueError(
            f"dualad.numpy.searchsorted: side must be 'left' or 'right' (got {side!r})"
        )
    a = arg(a)
    if a.ndim != 1:
        raise ValueError(f"dualad.numpy.searchsorted: a must be 1-d, got shape {tuple(a.shape)}")
    if sorter is not None:
        a = ops.take(a, arg(sorter))
    values = arg(v)
    if not isinstance(v, Tensor):  # values given as host data: on a's device, as NumPy's
        values = values.to(a.device)
    return apply(searchsorted_op, a, values, side=side)


@uses(digitize_op)
def digitize(x, bins, right=False):
    """The index of the bin of ``bins`` (monotonic, 1-d) that each value of ``x`` falls in
    (NumPy's ``digitize``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.digitize(dualad.tensor([0.5, 1.5, 2.5]), [1.0, 2.0])
    tensor([0, 1, 2])
    """
    bins = arg(bins)
    if bins.ndim != 1:
        raise ValueError("dualad.numpy.digitize: bins must be 1-dimensional")
    return apply(digitize_op, arg(x), bins, right=bool(right))


def _arg_extremum(fn, a, axis, out, keepdims, name):
    no_out(name, out)
    a = arg(a)
    if axis is None:
        result = fn(a)
        return ops.reshape(result, (1,) * a.ndim) if keepdims else result
    axis = axis_index(axis, max(a.ndim, 1))
    if a.ndim == 0:
        return fn(a)
    return fn(a, dim=axis, keepdim=bool(keepdims))


@uses(REGISTRY["argmax"])
def argmax(a, axis=None, out=None, *, keepdims=False):
    """The index of the maximum along ``axis`` (of the flattened array by default).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.argmax(a, axis=1)
    tensor([1, 1])
    """
    return _arg_extremum(ops.argmax, a, axis, out, keepdims, "argmax")


@uses(REGISTRY["argmin"])
def argmin(a, axis=None, out=None, *, keepdims=False):
    """The index of the minimum along ``axis`` (of the flattened array by default).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.argmin(x)
    tensor(0)
    """
    return _arg_extremum(ops.argmin, a, axis, out, keepdims, "argmin")


def _nan_arg_extremum(op, a, axis, out, keepdims, name):
    no_out(name, out)
    a = arg(a)
    if axis is None:
        result = apply(op, ops.reshape(a, (-1,)), axis=0)
        return ops.reshape(result, (1,) * a.ndim) if keepdims else result
    if a.ndim == 0:
        axis_index(axis, 1)
        return apply(op, ops.reshape(a, (1,)), axis=0)
    axis = axis_index(axis, a.ndim)
    result = apply(op, a, axis=axis)
    return ops.unsqueeze(result, axis) if keepdims else result


@uses(nanargmax_op)
def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """The index of the maximum along ``axis`` ignoring NaNs (ValueError for an all-NaN
    slice, as NumPy).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanargmax(x)
    tensor(2)
    """
    return _nan_arg_extremum(nanargmax_op, a, axis, out, keepdims, "nanargmax")


@uses(nanargmin_op)
def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """The index of the minimum along ``axis`` ignoring NaNs.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanargmin(x)
    tensor(0)
    """
    return _nan_arg_extremum(nanargmin_op, a, axis, out, keepdims, "nanargmin")


@uses(unravel_index_op)
def unravel_index(indices, shape, order="C"):
    """The coordinates in an array of ``shape`` of the flat ``indices``: one int tensor per
    dim, each of ``indices``'s shape.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.unravel_index([1, 5], (2, 3))
    (tensor([0, 1]), tensor([1, 2]))
    """
    shape = (operator.index(shape),) if hasattr(shape, "__index__") else tuple(shape)
    coordinates = apply(unravel_index_op, arg(indices), shape=shape, order=order)
    return tuple(coordinates[d] for d in range(len(shape)))


@uses(ravel_multi_index_op)
def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of the coordinates ``multi_index`` (a sequence of int arrays, one per
    dim, broadcast together) in an array of shape ``dims``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.ravel_multi_index(([0, 1], [2, 0]), (2, 3))
    tensor([2, 3])
    """
    index = tuple(i if isinstance(i, (int, Tensor)) else arg(i) for i in multi_index)
    mode = mode if isinstance(mode, str) else tuple(mode)
    dims = (operator.index(dims),) if hasattr(dims, "__index__") else tuple(dims)
    return apply(ravel_multi_index_op, *index, dims=dims, mode=mode, order=order)


def _bitorder(name, bitorder):
    if bitorder not in ("big", "little"):
        raise ValueError(f"dualad.numpy.{name}: 'order' must be either 'little' or 'big'")
    return bitorder


@uses(packbits_op)
def packbits(a, /, axis=None, bitorder="big"):
    """The elements of the int or bool ``a`` as bits (nonzero: 1) packed into uint8, along
    ``axis`` (``None``: the flattened array), padded with zero bits.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.packbits(dualad.tensor([1, 0, 1]))
    tensor([160], dtype=uint8)
    """
    a, axis = _along(a, axis)
    return apply(packbits_op, a, axis=axis, bitorder=_bitorder("packbits", bitorder))


@uses(unpackbits_op)
def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 ``a`` as a uint8 array of 0s and 1s along ``axis`` (``None``: the
    flattened array); ``count`` bits kept (negative: that many dropped).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.unpackbits(dualad.tensor([5], dtype=dnp.uint8))
    tensor([0, 0, 0, 0, 0, 1, 0, 1], dtype=uint8)
    """
    a, axis = _along(a, axis)
    count = None if count is None else operator.index(count)
    bitorder = _bitorder("unpackbits", bitorder)
    return apply(unpackbits_op, a, axis=axis, count=count, bitorder=bitorder)


@uses(REGISTRY["nonzero"])
def nonzero(a):
    """The indices of the nonzero elements of ``a``: one 1-d int64 tensor per dim.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.nonzero(dualad.tensor([0.0, 1.0, 2.0]))
    (tensor([1, 2]),)
    """
    a = arg(a)
    if a.ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() "
            "instead."
        )
    return ops.nonzero(a, as_tuple=True)


@uses(REGISTRY["nonzero"])
def flatnonzero(a):
    """The indices of the nonzero elements of the flattened ``a``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.flatnonzero(dualad.tensor([0.0, 1.0, 2.0]))
    tensor([1, 2])
    """
    return ops.nonzero(ops.reshape(arg(a), (-1,)), as_tuple=True)[0]


@uses(REGISTRY["nonzero"])
def argwhere(a):
    """The indices of the nonzero elements of ``a``, one row per element: ``(n, a.ndim)``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.argwhere(a > 1.5)
    tensor([[0, 1],
            [1, 0],
            [1, 1]])
    """
    return ops.nonzero(arg(a))


@uses(REGISTRY["count_nonzero"])
def count_nonzero(a, axis=None, *, keepdims=False):
    """The number of nonzero values of ``a`` along ``axis`` (all of them by default).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.count_nonzero(dualad.tensor([0.0, 1.0, 2.0]))
    tensor(2)
    """
    a = arg(a)
    dims = None if axis is None else axis_tuple(axis, a.ndim)
    if dims == ():  # no axis to count along: each element counts itself
        return ops.ne(a, 0).astype("intp")
    return ops.count_nonzero(a, axis=dims, keepdims=bool(keepdims))
