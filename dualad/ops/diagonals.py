"""Diagonals and triangles: diagonal, diag_embed, diag, tril, triu."""

from __future__ import annotations

import numpy as np

from .._dispatch import apply, apply1, dispatch
from ._dims import normalize_dim
from ._exports import Exports
from ._helpers import clone
from .base import linear, move_bdim_to_front

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# diagonals and triangles


def _diagonal_view(xp, x, offset, dim1, dim2):
    """``xp.diagonal`` as a writable view when ``x`` is writable (NumPy returns read-only
    diagonal views for backward compatibility; the memory is ``x``'s own, so writing through is
    safe, and in-place ops on diagonals need it)."""
    out = xp.diagonal(x, offset, dim1, dim2)
    if xp is np and not out.flags.writeable and x.flags.writeable:
        out.flags.writeable = True
    return out


def _diag_embed_impl(xp, x, *, shape, offset, dim1, dim2):
    out = xp.zeros(shape, dtype=x.dtype)
    _diagonal_view(xp, out, offset, dim1, dim2)[...] = x
    return out


def _diagonal_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, **dict(params, dim1=params["dim1"] + 1, dim2=params["dim2"] + 1)), 0


def _diag_embed_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    shifted = dict(params, dim1=params["dim1"] + 1, dim2=params["dim2"] + 1)
    shifted["shape"] = (x.shape[0], *params["shape"])
    return apply(op, x, **shifted), 0


_diagonal_op = linear(
    "diagonal",
    lambda xp, x, *, offset, dim1, dim2: _diagonal_view(xp, x, offset, dim1, dim2),
    lambda ct, x, *, offset, dim1, dim2: dispatch(
        _diag_embed_op,
        (ct,),
        {"shape": tuple(x.shape), "offset": offset, "dim1": dim1, "dim2": dim2},
    ),
    batch=_diagonal_batch,
    view=True,
)
_diag_embed_op = linear(
    "diag_embed",
    _diag_embed_impl,
    lambda ct, x, *, shape, offset, dim1, dim2: dispatch(
        _diagonal_op, (ct,), {"offset": offset, "dim1": dim1, "dim2": dim2}
    ),
    batch=_diag_embed_batch,
)


def _diagonal_dims(dim1, dim2, ndim, op):
    d1 = normalize_dim(dim1, ndim, op=op)
    d2 = normalize_dim(dim2, ndim, op=op)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@public.method
def diagonal(x, offset: int = 0, dim1: int = 0, dim2: int = 1, *, axis1=None, axis2=None):
    """The diagonal of ``x`` w.r.t. ``dim1`` and ``dim2`` (``offset`` > 0: above it), as the
    last dim of a writable view (in-place ops on it change ``x``).

    >>> import dualad
    >>> dualad.arange(9).reshape(3, 3).diagonal(1)
    tensor([1, 5])
    """
    if x.ndim < 2:
        raise RuntimeError(f"diagonal(): input must have at least 2 dimensions, but got {x.ndim}")
    dim1 = dim1 if axis1 is None else axis1
    dim2 = dim2 if axis2 is None else axis2
    d1, d2 = _diagonal_dims(dim1, dim2, x.ndim, "diagonal")
    params = {"offset": int(offset), "dim1": d1, "dim2": d2}
    return dispatch(_diagonal_op, (x,), params)


@public.method
def diag_embed(x, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """A tensor whose diagonals (w.r.t. the new dims ``dim1``, ``dim2``) are the last dim of
    ``x``; zeros elsewhere.

    >>> import dualad
    >>> dualad.diag_embed(dualad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    if x.ndim < 1:
        raise RuntimeError("diag_embed(): input must have at least 1 dimension")
    d1, d2 = _diagonal_dims(dim1, dim2, x.ndim + 1, "diag_embed")
    offset = int(offset)
    size = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])
    low, high = sorted((d1, d2))
    shape.insert(low, size)
    shape.insert(high, size)
    params = {"shape": tuple(shape), "offset": offset, "dim1": d1, "dim2": d2}
    return dispatch(_diag_embed_op, (x,), params)


_diagonal_of = diagonal  # ``diag``'s parameter is named ``diagonal`` (torch)


@public.method
def diag(x, diagonal: int = 0):
    """1-d ``x``: the square matrix with ``x`` on its ``diagonal``-th diagonal; 2-d ``x``: a
    copy of that diagonal.

    >>> import dualad
    >>> dualad.diag(dualad.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    if x.ndim == 1:
        return diag_embed(x, diagonal, 0, 1)
    if x.ndim == 2:
        return clone(_diagonal_of(x, diagonal))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


def _triangle_batch(op, args, bdims, params):
    return apply(op, move_bdim_to_front(args[0], bdims[0]), **params), 0


_tril_op = linear(
    "tril",
    lambda xp, x, *, diagonal: xp.tril(x, diagonal),
    lambda ct, x, *, diagonal: dispatch(_tril_op, (ct,), {"diagonal": diagonal}),
    batch=_triangle_batch,
)
_triu_op = linear(
    "triu",
    lambda xp, x, *, diagonal: xp.triu(x, diagonal),
    lambda ct, x, *, diagonal: dispatch(_triu_op, (ct,), {"diagonal": diagonal}),
    batch=_triangle_batch,
)


def _triangle(op, name, x, diagonal):
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply1(op, x, {"diagonal": int(diagonal)})


@public.inplace
def tril(x, diagonal: int = 0, *, k=None):
    """The lower triangle of the last two dims (elements on and below the ``diagonal``-th
    diagonal); zeros elsewhere. NumPy's ``k=`` is accepted.

    >>> import dualad
    >>> dualad.ones(2, 2).tril()
    tensor([[1., 0.],
            [1., 1.]])
    """
    return _triangle(_tril_op, "tril", x, diagonal if k is None else k)


@public.inplace
def triu(x, diagonal: int = 0, *, k=None):
    """The upper triangle of the last two dims (on and above the ``diagonal``-th diagonal).

    >>> import dualad
    >>> dualad.ones(2, 2).triu(1)
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _triangle(_triu_op, "triu", x, diagonal if k is None else k)
