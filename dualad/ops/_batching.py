"""Batching rules shared by many ops, and the helpers batching rules use.

A batching rule gets ``(op, args, bdims, params)``: the arguments one level down (physical
values) and, for each, the dimension that carries the batch (``None``: not batched). It returns
``(outputs, out_bdims)``. Rules call dualad ops, so they compose with every other transform.
(``move_bdim_to_front`` itself is in ``base.py``, with the permute it calls.)
"""

from __future__ import annotations

from .._dispatch import dispatch
from .._state import ACTIVE, GRAD
from .._tensor import Tensor
from .base import broadcast_to, move_bdim_to_front, reshape


def _aligned(args, bdims) -> bool:
    """Whether NumPy's broadcasting of two arguments already lines up their logical dims: each
    batched one has its batch first, and an unbatched one has fewer dims than a batched one
    (both batched: equal ranks). The common case of the elementwise rule (nothing to move)."""
    ba, bb = bdims
    a, b = args
    if ba == 0:
        if bb == 0:
            return a.ndim == b.ndim
        # (an unbatched NumPy array counts by its rank, as a Tensor does; a number has none)
        return bb is None and getattr(b, "ndim", 0) < a.ndim
    return bb == 0 and ba is None and getattr(a, "ndim", 0) < b.ndim


def elementwise(op, args, bdims, params):
    """Broadcasting elementwise ops: batch dims go first and batched arguments are padded to
    the largest logical rank, so that NumPy's right-aligned broadcasting lines up the logical
    dimensions (an unbatched argument of higher rank would otherwise meet the batch dim)."""
    if len(args) == 2 and _aligned(args, bdims):
        if (not ACTIVE or not GRAD.levels) and not params and op.fast is not None:
            return op.fast(*args), 0  # nothing below but eager autograd: the op's fast path
        out = dispatch(op, args, params)
        return out, ((0,) * len(out) if isinstance(out, tuple) else 0)
    logical_rank = 0
    for a, b in zip(args, bdims):
        rank = getattr(a, "ndim", 0) if b is None else a.ndim - 1  # (NumPy arrays count too)
        if rank > logical_rank:
            logical_rank = rank
    moved = args
    for i, (a, b) in enumerate(zip(args, bdims)):
        if b is None or (b == 0 and a.ndim - 1 == logical_rank):
            continue  # the common case: nothing to move
        if moved is args:
            moved = list(args)
        a = move_bdim_to_front(a, b)
        missing = logical_rank - (a.ndim - 1)
        if missing:
            a = reshape(a, (a.shape[0],) + (1,) * missing + tuple(a.shape[1:]))
        moved[i] = a
    if (not ACTIVE or not GRAD.levels) and not params and op.fast is not None:
        out = op.fast(*moved)  # nothing below but eager autograd: the op's own fast path
    else:
        out = dispatch(op, tuple(moved), params)
    if isinstance(out, tuple):
        return out, (0,) * len(out)
    return out, 0


def batch_size(args, bdims) -> int:
    """The batch size: the size of the first batched argument's batch dim."""
    return next(a.shape[b] for a, b in zip(args, bdims) if b is not None)


def front(x, bdim, size: int):
    """``x`` with the batch first; an unbatched tensor is broadcast along a new batch dim."""
    if bdim is not None:
        return move_bdim_to_front(x, bdim)
    shape = tuple(x.shape)
    return broadcast_to(reshape(x, (1, *shape)), (size, *shape))


def batched_front(args, bdims):
    """Every tensor argument with its batch first; unbatched tensors are broadcast along a new
    batch dim (views); other arguments pass."""
    size = batch_size(args, bdims)
    return [front(a, b, size) if isinstance(a, Tensor) else a for a, b in zip(args, bdims)]


def pad_after_batch(x, rank: int):
    """A batch-first ``x`` with size-1 dims after the batch dim up to ``rank`` logical dims (so
    NumPy's right-aligned broadcasting lines up its logical dims)."""
    missing = rank - (x.ndim - 1)
    if missing <= 0:
        return x
    return reshape(x, (x.shape[0],) + (1,) * missing + tuple(x.shape[1:]))


def leading_batch(op, args, bdims, params):
    """The rule of an op whose leading dims are batch dims, equal on every tensor argument
    (``cdist``, ``convolve_full``): the batch goes first on all of them (broadcast where
    unbatched) and the op runs once."""
    return dispatch(op, tuple(batched_front(args, bdims)), params), 0
