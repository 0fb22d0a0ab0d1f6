"""NumPy's functions that apply a Python function over a tensor: ``apply_along_axis
apply_over_axes fromfunction``. They call the function on tensors (slices, index grids), so a
function written with ``dualad.numpy`` keeps its derivative.

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> dnp.apply_along_axis(lambda row: dnp.sum(row * row), 1, x)
tensor([ 5., 25.], grad_fn=<ViewBackward0>)
>>> dnp.fromfunction(lambda i, j: i + 2 * j, (2, 2))
tensor([[0., 2.],
        [1., 3.]])
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor
from ._common import axis_of, tensor_of
from .manipulation import expand_dims

__all__ = ["apply_along_axis", "apply_over_axes", "fromfunction"]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``numpy.apply_along_axis``: ``func1d`` applied to each 1-D slice along ``axis``, its
    results (of one shape) in place of that axis. A Python loop over the slices, so any
    ``func1d`` written with dualad.numpy differentiates (``vmap`` is faster where it applies).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.apply_along_axis(dnp.sum, 1, a)
    tensor([3., 7.], grad_fn=<ViewBackward0>)
    """
    x = tensor_of(arr)
    axis = axis_of(axis, x.ndim)
    moved = ops.moveaxis(x, axis, -1)
    outer = tuple(moved.shape[:-1])
    if 0 in outer:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    rows = ops.reshape(moved, (-1, x.shape[axis]))
    results = [tensor_of(func1d(rows[i], *args, **kwargs)) for i in range(rows.shape[0])]
    stacked = ops.stack(results, 0)
    out = ops.reshape(stacked, outer + tuple(stacked.shape[1:]))
    k = stacked.ndim - 1
    if not k:
        return out
    return ops.moveaxis(out, tuple(range(len(outer), len(outer) + k)), tuple(range(axis, axis + k)))


def apply_over_axes(func, a, axes):
    """``numpy.apply_over_axes``: ``func(a, axis)`` for each of ``axes`` in turn, a result
    with one axis fewer getting it back (length 1).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.apply_over_axes(dnp.sum, a, [0])
    tensor([[4., 6.]], grad_fn=<ViewBackward0>)
    """
    x = tensor_of(a)
    for axis in np.atleast_1d(np.asarray(axes)).tolist():
        axis = axis_of(axis, x.ndim)
        r = tensor_of(func(x, axis))
        if r.ndim == x.ndim - 1:
            r = expand_dims(r, axis)
        elif r.ndim != x.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        x = r
    return x


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``numpy.fromfunction``: ``function`` called once with the index grids (tensors of
    ``dtype``) of ``shape``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.fromfunction(lambda i, j: i + 2 * j, (2, 3))
    tensor([[0., 2., 4.],
            [1., 3., 5.]])
    """
    grids = np.indices(tuple(shape), dtype=dtype)
    return function(*(as_tensor(g) for g in grids), **kwargs)
