"""``max_unpool``: the values of a max pooling put back at their indices, zeros elsewhere.

``max_unpool(x, indices, size)``: ``x`` and ``indices`` of shape ``(*lead, *S)`` (indices flat
positions in a spatial plane of ``size``, as max pooling returns them) to ``(*lead, *size)``.
Where an index repeats within a plane (overlapping pooling windows that chose one element),
the last of them in row-major order is written, as PyTorch's CPU kernel does; an index outside
the plane raises.

It is linear in ``x``: the JVP is the op on the tangent, and the VJP gathers the cotangent at
the indices, for the entries that were written only (``max_unpool_writers``, a
non-differentiable op, says which): an entry overwritten by a later one has no influence on
the output, so its gradient is 0 (PyTorch's backward gathers for every entry, counting a
repeated element's cotangent once per copy). ``indices`` are not differentiable. The lead dims
are free: the batching rules move the vmap dims to the front.
"""

from __future__ import annotations

import math

import numpy as np

from .._dispatch import OpDef, apply, register
from ._batching import leading_batch
from .base import reshape
from .comparison import where
from .gather_scatter import gather
from .pooling import lead_batch


def _planes(shape, nd: int) -> tuple[int, int]:
    return math.prod(shape[: len(shape) - nd]), math.prod(shape[len(shape) - nd :])


def _writers(xp, index, n: int):
    """Which entries of ``index`` ``(planes, m)`` are the last to write their position."""
    planes, m = index.shape
    key = (xp.arange(planes)[:, None] * n + index).reshape(-1)
    # stable: equal keys keep their order (CuPy's sort is always stable and refuses ``kind``)
    order = xp.argsort(key, kind="stable") if xp is np else xp.argsort(key)
    ranked = key[order]
    last = xp.ones(ranked.shape, dtype=bool)
    last[:-1] = ranked[:-1] != ranked[1:]
    keep = xp.empty(ranked.shape, dtype=bool)
    keep[order] = last
    return keep.reshape(planes, m)


def _writers_impl(xp, index, *, size):
    planes, m = _planes(index.shape, len(size))
    return _writers(xp, index.reshape(planes, m), math.prod(size)).reshape(index.shape)


_writers_op = register(
    OpDef("max_unpool_writers", _writers_impl, batch=lead_batch, differentiable=False)
)


def _unpool_impl(xp, x, index, *, size):
    nd = len(size)
    planes, m = _planes(x.shape, nd)
    n = math.prod(size)
    flat = index.reshape(planes, m)
    if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= n):
        bad = int(flat.min()) if int(flat.min()) < 0 else int(flat.max())
        raise RuntimeError(
            f"max_unpool{nd}d: Found an invalid max index: {bad} (output volumes are of size "
            f"{'x'.join(map(str, size))})"
        )
    keep = _writers(xp, flat, n)
    rows = xp.broadcast_to(xp.arange(planes)[:, None], flat.shape)
    out = xp.zeros((planes, n), dtype=x.dtype)
    out[rows[keep], flat[keep]] = x.reshape(planes, m)[keep]
    return out.reshape((*x.shape[: x.ndim - nd], *size))


def _unpool_vjp(cts, outs, args, params, needs):
    index = args[1]
    size = params["size"]
    shape = tuple(index.shape)
    ct = reshape(cts[0], _planes(tuple(cts[0].shape), len(size)))
    picked = reshape(gather(ct, 1, reshape(index, _planes(shape, len(size)))), shape)
    return where(apply(_writers_op, index, size=size), picked, 0.0), None


def _unpool_jvp(tangents, outs, args, params):
    return apply(_unpool_op, tangents[0], args[1], **params)


_unpool_op = register(
    OpDef(
        "max_unpool",
        _unpool_impl,
        vjp=_unpool_vjp,
        jvp=_unpool_jvp,
        batch=leading_batch,
        save_mask=lambda needs: (False, True),
        node_name="MaxUnpoolBackward0",
    )
)


def max_unpool(x, indices, size):
    """``x`` written at ``indices`` into zeros of spatial ``size`` (see the module docstring)."""
    return apply(_unpool_op, x, indices, size=tuple(size))


def max_unpool_writers(indices, size):
    """Which entries of ``indices`` ``(*lead, *S)`` are the last to write their position of
    a plane of spatial ``size`` (row-major order; not differentiable)."""
    return apply(_writers_op, indices, size=tuple(size))
