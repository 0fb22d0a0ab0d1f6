"""Reordering and repeating elements (copies): flip, roll, tile, repeat, repeat_interleave."""

from __future__ import annotations

import numpy as np

from .._dispatch import OpDef, apply, apply1, dispatch, register
from .._tensor import Tensor
from ._dims import normalize_dim, normalize_dims, size_args
from ._exports import Exports
from .base import linear, move_bdim_to_front, reshape
from .indexing import index_select
from .reductions import sum as reduce_sum

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# reordering and repeating elements (copies)


def _dims_batch(op, args, bdims, params):
    """Ops with a ``dims`` tuple of normalised dims: batch dim first, shift dims by one."""
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, **dict(params, dims=tuple(d + 1 for d in params["dims"]))), 0


_flip_op = linear(
    "flip",
    lambda xp, x, *, dims: xp.flip(x, axis=dims).copy() if dims else x.copy(),
    lambda ct, x, *, dims: dispatch(_flip_op, (ct,), {"dims": dims}),
    batch=_dims_batch,
)


@public.method
def flip(x, *dims, axis=None):
    """Reverse the order of elements along ``dims`` (a copy, as in torch).

    ``x.flip(0)``, ``x.flip(0, 1)`` and ``dualad.flip(x, (0, 1))`` are all accepted; NumPy's
    ``axis=`` (None: every dim) too.

    >>> import dualad
    >>> dualad.arange(3).flip(0)
    tensor([2, 1, 0])
    """
    if dims and axis is not None:
        raise TypeError("dualad.flip: pass either dims or axis=, not both")
    if not dims:
        dims = tuple(range(x.ndim)) if axis is None else axis
    elif len(dims) == 1:
        dims = dims[0]
    if isinstance(dims, (int, np.integer)):
        dims = (int(dims),)
    dims = normalize_dims(dims, x.ndim, op="flip")
    return apply1(_flip_op, x, {"dims": dims})


@public.method
def fliplr(x):
    """Flip the columns (dim 1) of a tensor with at least 2 dims.

    >>> import dualad
    >>> dualad.fliplr(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[2., 1.],
            [4., 3.]])
    """
    if x.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(x, 1)


@public.method
def flipud(x):
    """Flip the rows (dim 0) of a tensor with at least 1 dim.

    >>> import dualad
    >>> dualad.flipud(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[3., 4.],
            [1., 2.]])
    """
    if x.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(x, 0)


def _roll_impl(xp, x, *, shifts, dims):
    if dims is None:
        return xp.roll(x, shifts[0])
    return xp.roll(x, shifts, axis=dims)


def _roll_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    dims = params["dims"]
    if dims is None:  # roll of the flattened logical tensor
        flat = reshape(x, (x.shape[0], -1))
        rolled = apply(op, flat, shifts=params["shifts"], dims=(1,))
        return reshape(rolled, x.shape), 0
    return apply(op, x, shifts=params["shifts"], dims=tuple(d + 1 for d in dims)), 0


_roll_op = linear(
    "roll",
    _roll_impl,
    lambda ct, x, *, shifts, dims: dispatch(
        _roll_op, (ct,), {"shifts": tuple(-s for s in shifts), "dims": dims}
    ),
    batch=_roll_batch,
)


@public.method
def roll(x, shifts, dims=None):
    """Shift elements cyclically by ``shifts`` along ``dims`` (the flattened tensor when
    ``dims`` is None). A copy.

    >>> import dualad
    >>> dualad.arange(4).roll(1)
    tensor([3, 0, 1, 2])
    """
    shifts = (int(shifts),) if isinstance(shifts, (int, np.integer)) else tuple(map(int, shifts))
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(
                f"roll: shifts ({list(shifts)}) must be a single int when dims is not given"
            )
        return apply1(_roll_op, x, {"shifts": shifts, "dims": None})
    dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    dims = tuple(normalize_dim(int(d), x.ndim, op="roll") for d in dims)
    return apply1(_roll_op, x, {"shifts": shifts, "dims": dims})


def _tile_transpose(ct, x, *, reps):
    interleaved = []
    for r, s in zip(reps, x.shape):
        interleaved += [r, s]
    summed = reduce_sum(reshape(ct, tuple(interleaved)), dim=tuple(range(0, 2 * len(reps), 2)))
    return reshape(summed, x.shape)


_tile_op = linear(
    "tile",
    lambda xp, x, *, reps: xp.tile(x, reps),
    _tile_transpose,
    batch=lambda op, args, bdims, params: (
        apply(op, move_bdim_to_front(args[0], bdims[0]), reps=(1, *params["reps"])),
        0,
    ),
)


@public.method
def tile(x, *dims):
    """Repeat ``x`` ``dims[i]`` times along each dim (``dims`` shorter than ``x.ndim`` is
    padded with ones on the left; ``x`` gets leading size-1 dims when it is longer).

    >>> import dualad
    >>> dualad.tensor([1, 2]).tile(2)
    tensor([1, 2, 1, 2])
    """
    reps = size_args(dims)
    for r in reps:
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: {list(reps)}")
    if len(reps) < x.ndim:
        reps = (1,) * (x.ndim - len(reps)) + reps
    elif len(reps) > x.ndim:
        x = reshape(x, (1,) * (len(reps) - x.ndim) + tuple(x.shape))
    return apply1(_tile_op, x, {"reps": reps})


@public.method(function=False)
def repeat(x, *sizes):
    """``Tensor.repeat`` (torch): like ``tile`` but ``sizes`` may not be shorter than x.ndim.

    >>> import dualad
    >>> dualad.tensor([1, 2]).repeat(2, 2).shape
    (2, 4)
    """
    sizes = size_args(sizes)
    if len(sizes) < x.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor"
        )
    return tile(x, sizes)


def _repeat_interleave_transpose(ct, x, *, repeats, dim):
    shape = tuple(x.shape)
    grouped = reshape(ct, (*shape[:dim], shape[dim], repeats, *shape[dim + 1 :]))
    return reduce_sum(grouped, dim=dim + 1)


_repeat_interleave_op = linear(
    "repeat_interleave",
    lambda xp, x, *, repeats, dim: xp.repeat(x, repeats, axis=dim),
    _repeat_interleave_transpose,
    batch=lambda op, args, bdims, params: (
        apply(op, move_bdim_to_front(args[0], bdims[0]), **dict(params, dim=params["dim"] + 1)),
        0,
    ),
)


def _repeat_index_impl(xp, repeats):
    if repeats.size and int(repeats.min()) < 0:
        raise RuntimeError("repeats can not be negative")
    return xp.repeat(xp.arange(repeats.shape[0]), repeats)


_repeat_index_op = register(
    OpDef("repeat_interleave_index", _repeat_index_impl, differentiable=False)
)


@public.method
def repeat_interleave(x, repeats=None, dim: int | None = None, *, output_size=None):
    """Repeat each element ``repeats`` times along ``dim`` (of the flattened tensor when ``dim``
    is None). ``repeats`` is an int or a tensor with one count per element; with a single
    integer tensor argument, returns ``arange(len(x))`` repeated ``x`` times (torch).

    >>> import dualad
    >>> dualad.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    >>> dualad.repeat_interleave(dualad.tensor([1, 2]))
    tensor([0, 1, 1])
    """
    if repeats is None:
        if x.ndim != 1 or x.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave: repeats must be a 1-d integer tensor")
        return dispatch(_repeat_index_op, (x,), {})
    if dim is None:
        x = reshape(x, (-1,))
        dim = 0
    else:
        dim = normalize_dim(dim, x.ndim, op="repeat_interleave")
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        if repeats.ndim != 1 or repeats.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim integer tensor")
        if repeats.shape[0] != x.shape[dim]:
            raise RuntimeError("repeats must have the same size as input along dim")
        return index_select(x, dim, dispatch(_repeat_index_op, (repeats,), {}))
    repeats = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    return apply1(_repeat_interleave_op, x, {"repeats": repeats, "dim": dim})
