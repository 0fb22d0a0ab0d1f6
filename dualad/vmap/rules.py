"""Batching rules shared by many ops.

A batching rule gets ``(op, args, bdims, params)``: the arguments one level down (physical
values) and, for each, the dimension that carries the batch (``None``: not batched). It returns
``(outputs, out_bdims)``. Rules call dualad ops, so they compose with every other transform.
"""

from __future__ import annotations

from .._dispatch import apply
from .._tensor import Tensor


def move_bdim_to_front(x, bdim):
    """``x`` with its batch dimension first (no-op when it already is)."""
    if bdim is None or bdim == 0:
        return x
    from ..ops.shape import movedim

    return movedim(x, bdim, 0)


def elementwise(op, args, bdims, params):
    """Broadcasting elementwise ops: batch dims go first and batched arguments are padded to
    the largest logical rank, so that NumPy's right-aligned broadcasting lines up the logical
    dimensions (an unbatched argument of higher rank would otherwise meet the batch dim)."""
    from ..ops.shape import reshape

    logical_rank = max(
        (a.ndim - (b is not None) for a, b in zip(args, bdims) if isinstance(a, Tensor)),
        default=0,
    )
    moved = []
    for a, b in zip(args, bdims):
        if b is None or not isinstance(a, Tensor):
            moved.append(a)
            continue
        a = move_bdim_to_front(a, b)
        missing = logical_rank - (a.ndim - 1)
        if missing:
            a = reshape(a, (a.shape[0],) + (1,) * missing + tuple(a.shape[1:]))
        moved.append(a)
    out = apply(op, *moved, **params)
    if isinstance(out, tuple):
        return out, (0,) * len(out)
    return out, 0
