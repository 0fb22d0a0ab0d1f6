"""Batching rules shared by many ops.

A batching rule gets ``(op, args, bdims, params)``: the arguments one level down (physical
values) and, for each, the dimension that carries the batch (``None``: not batched). It returns
``(outputs, out_bdims)``. Rules call dualad ops, so they compose with every other transform.
"""

from __future__ import annotations

from .._dispatch import apply, dispatch
from .._state import LEVELS
from .._tensor import Tensor


def move_bdim_to_front(x, bdim):
    """``x`` with its batch dimension first (no-op when it already is)."""
    if bdim is None or bdim == 0:
        return x
    from ..ops.shape import movedim

    return movedim(x, bdim, 0)


def _aligned(args, bdims) -> bool:
    """Whether NumPy's broadcasting of two arguments already lines up their logical dims: each
    batched one has its batch first, and an unbatched one has fewer dims than a batched one
    (both batched: equal ranks). The common case of the elementwise rule (nothing to move)."""
    ba, bb = bdims
    a, b = args
    if ba == 0:
        if bb == 0:
            return a.ndim == b.ndim
        return bb is None and (not isinstance(b, Tensor) or b.ndim < a.ndim)
    return bb == 0 and ba is None and (not isinstance(a, Tensor) or a.ndim < b.ndim)


def elementwise(op, args, bdims, params):
    """Broadcasting elementwise ops: batch dims go first and batched arguments are padded to
    the largest logical rank, so that NumPy's right-aligned broadcasting lines up the logical
    dimensions (an unbatched argument of higher rank would otherwise meet the batch dim)."""
    if len(args) == 2 and _aligned(args, bdims):
        if not LEVELS and not params and op.fast is not None:
            return op.fast(*args), 0  # nothing below but eager autograd: the op's fast path
        out = dispatch(op, args, params)
        return out, ((0,) * len(out) if isinstance(out, tuple) else 0)
    logical_rank = 0
    for a, b in zip(args, bdims):
        if isinstance(a, Tensor):
            rank = a.ndim if b is None else a.ndim - 1
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
            from ..ops.shape import reshape

            a = reshape(a, (a.shape[0],) + (1,) * missing + tuple(a.shape[1:]))
        moved[i] = a
    if not LEVELS and not params and op.fast is not None:
        out = op.fast(*moved)  # nothing below but eager autograd: the op's own fast path
    else:
        out = dispatch(op, tuple(moved), params)
    if isinstance(out, tuple):
        return out, (0,) * len(out)
    return out, 0


# ---------------------------------------------------------------------------------------------
# ops without a rule of their own that may run as a loop over the examples under vmap (with a
# one-time PerformanceWarning); every other op needs a batching rule (registry test). Both are
# data-dependent: the per-example results stack only when their shapes agree.

LOOP_BATCHED = frozenset({"nonzero", "repeat_interleave_index"})


def _batch_size(args, bdims) -> int:
    return next(a.shape[b] for a, b in zip(args, bdims) if b is not None)


def _front(x, bdim, size: int):
    """``x`` with the batch first; an unbatched tensor is broadcast along a new batch dim."""
    if bdim is not None:
        return move_bdim_to_front(x, bdim)
    from ..ops.shape import broadcast_to, reshape

    shape = tuple(x.shape)
    return broadcast_to(reshape(x, (1, *shape)), (size, *shape))


def _pad_after_batch(x, rank: int):
    """A batch-first ``x`` with size-1 dims after the batch dim up to ``rank`` logical dims (so
    NumPy's right-aligned broadcasting lines up its logical dims)."""
    missing = rank - (x.ndim - 1)
    if missing <= 0:
        return x
    from ..ops.shape import reshape

    return reshape(x, (x.shape[0],) + (1,) * missing + tuple(x.shape[1:]))


# Rules for ops of modules that are still being edited (mutation, indexing, elementwise.to_device):
# attached to their registry records by ``attach_rules`` unless the op got a rule of its own.


def _to_device_batch(op, args, bdims, params):
    return apply(op, args[0], **params), bdims[0]


def _copy_from_batch(op, args, bdims, params):
    """copy_from(x, src): src broadcasts against x's logical shape."""
    x, src = args
    size = _batch_size(args, bdims)
    x = _front(x, bdims[0], size)
    if bdims[1] is not None:
        src = _pad_after_batch(move_bdim_to_front(src, bdims[1]), x.ndim - 1)
    return apply(op, x, src), 0


def _fill_batch(op, args, bdims, params):
    """fill(x, value): a batched (0-d logical) value fills each example with its own value."""
    x, value = args
    if bdims[1] is None:
        return apply(op, x, value), bdims[0]
    from .._dispatch import REGISTRY

    size = _batch_size(args, bdims)
    x = _front(x, bdims[0], size)
    value = _pad_after_batch(move_bdim_to_front(value, bdims[1]), x.ndim - 1)
    return apply(REGISTRY["copy_from"], x, value), 0


def _index_add_batch(op, args, bdims, params):
    """index_add along ``dim``; a batched index becomes a scatter_add with the index spread over
    the source's shape (each example adds at its own positions)."""
    from .._dispatch import REGISTRY
    from ..ops.shape import broadcast_to, reshape

    x, index, source = args
    size = _batch_size(args, bdims)
    dim = params["dim"]
    x = _front(x, bdims[0], size)
    source = _front(source, bdims[2], size)
    if bdims[1] is None:
        return apply(op, x, index, source, dim=dim + 1, alpha=params["alpha"]), 0
    index = move_bdim_to_front(index, bdims[1])
    view = [size] + [1] * (source.ndim - 1)
    view[dim + 1] = index.shape[1]
    index = broadcast_to(reshape(index, tuple(view)), tuple(source.shape))
    if params["alpha"] != 1:
        source = source * params["alpha"]
    return apply(REGISTRY["scatter_add"], x, index, source, dim=dim + 1), 0


def _region_shape(shape: tuple, key: tuple) -> tuple:
    """The shape of ``x[key]`` for an x of ``shape`` (indexing a zero-strided stand-in)."""
    import numpy as np

    return np.broadcast_to(np.zeros((), dtype=np.int8), shape)[key].shape


def _index_put_batch(op, args, bdims, params):
    """index_put(x, value) at a static key: prepend a full slice to the key; the value is laid
    out like the indexed region of the batch-first x (NumPy moves the batch dim behind the
    advanced-index dims when those are not adjacent)."""
    from ..ops.shape import IndexKey, _advanced_layout, movedim, reshape, unsqueeze

    x, value = args
    size = _batch_size(args, bdims)
    index = params["index"]
    x = _front(x, bdims[0], size)
    region = _region_shape(tuple(x.shape[1:]), index.key)
    position = 0
    if not index.basic:
        adjacent, advanced_ndim = _advanced_layout(index.key)
        position = 0 if adjacent else advanced_ndim
    if bdims[1] is not None:
        value = _pad_after_batch(move_bdim_to_front(value, bdims[1]), len(region))
        if position:
            value = movedim(value, 0, position)
    elif position and isinstance(value, Tensor) and value.ndim:
        missing = len(region) - value.ndim
        if missing > 0:
            value = reshape(value, (1,) * missing + tuple(value.shape))
        value = unsqueeze(value, position)
    return apply(op, x, value, index=IndexKey((slice(None), *index.key))), 0


_ATTACHED = {
    "to_device": _to_device_batch,
    "copy_from": _copy_from_batch,
    "fill": _fill_batch,
    "index_add": _index_add_batch,
    "index_put": _index_put_batch,
}


def attach_rules() -> None:
    """Give the ops in ``_ATTACHED`` their batching rule (once all op modules are imported)."""
    from .._dispatch import REGISTRY

    for name, rule in _ATTACHED.items():
        op = REGISTRY.get(name)
        if op is not None and op.batch is None:
            op.batch = rule
