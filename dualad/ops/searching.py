"""Sorting indices and searching (no gradient: integer outputs): ``argsort``, ``argpartition``,
``lexsort``, ``searchsorted``, ``digitize``, ``nanargmax``, ``nanargmin``, ``unravel_index``,
``ravel_multi_index``, ``packbits``, ``unpackbits``; and ``rowwise_batch``, the batching rule of ops
that take a per-example table (the sorted array of ``searchsorted``, the bins of ``digitize``,
the test set of ``isin``).

Each op is non-differentiable (``differentiable=False``): its outputs never require grad and
carry no tangent, at every level. Their public functions, with NumPy's signatures, are in
``dualad.numpy`` (``dualad/numpy/searching.py``); these ops take normalised parameters (a
non-negative ``axis``), so their batching rules only shift the axis past the batch dim.
"""

from __future__ import annotations

import numpy as np

from .._dispatch import OpDef, dispatch, register
from . import _batching as batching
from .base import move_bdim_to_front

# ---------------------------------------------------------------------------------------------
# batching rules


def axis_batch(op, args, bdims, params):
    """Ops with one static non-negative ``axis`` parameter over same-shape tensor arguments:
    every tensor gets its batch first (unbatched ones broadcast) and ``axis`` moves past it."""
    moved = batching.batched_front(args, bdims)
    return dispatch(op, tuple(moved), {**params, "axis": params["axis"] + 1}), 0


def rowwise_batch(table: int):
    """The batching rule of an op whose argument ``table`` is a whole per-example table (the
    sorted array of ``searchsorted``) and whose other tensor arguments are elementwise queries
    (its output has the query's shape).

    An unbatched table: the op runs once on the batched query, the batch dim where it is. A
    batched table: every tensor argument gets its batch first and the op runs with one more
    leading row dim (``rows``), which its impl reads as "one table per leading row" (a loop over
    the rows in the impl, ``per_row``: the output shape is static, so this is a batching rule,
    not vmap's fallback). Nested vmaps add one row dim each."""

    def rule(op, args, bdims, params):
        rows = params.get("rows", 0)
        if bdims[table] is None and not rows:
            (query,) = (i for i, b in enumerate(bdims) if b is not None)
            return dispatch(op, args, params), bdims[query]
        return front_batch(op, args, bdims, params)

    return rule


def front_batch(op, args, bdims, params):
    """Ops whose impl reads ``rows=k`` as "one problem per index of the ``k`` leading dims"
    (``histogram``): every tensor argument gets its batch first, one more row dim."""
    moved = batching.batched_front(args, bdims)
    return dispatch(op, tuple(moved), {**params, "rows": params.get("rows", 0) + 1}), 0


def per_row(xp, fn, rows: int, *arrays):
    """``fn`` applied to the arrays' problems along their ``rows`` leading dims together, the
    results stacked (the impl of a ``front_batch``/``rowwise_batch`` op under vmap). A tuple
    result stacks per output."""
    if not rows:
        return fn(*arrays)
    results = [per_row(xp, fn, rows - 1, *parts) for parts in zip(*arrays)]
    if not results:
        raise RuntimeError("dualad.vmap: this op cannot run on an empty batch (batch size 0)")
    if isinstance(results[0], tuple):
        return tuple(xp.stack(parts) for parts in zip(*results))
    return xp.stack(results)


def options(**given):
    """The keyword arguments that differ from their defaults (None, or the second item of a
    ``(value, default)`` pair): an impl passes NumPy's newer options only when they are used,
    so that array modules without them (CuPy) still run the common calls."""
    out = {}
    for key, value in given.items():
        value, default = value if isinstance(value, tuple) else (value, None)
        if value != default:
            out[key] = value
    return out


def nondiff_op(name: str, impl, batch, *, nout: int = 1) -> OpDef:
    """Register a non-differentiable op (no VJP, no JVP: its outputs never require grad)."""
    return register(OpDef(name, impl, batch=batch, differentiable=False, nout=nout))


# ---------------------------------------------------------------------------------------------
# argsort, argpartition, lexsort


def _argsort_impl(xp, x, *, axis, kind, stable):
    if xp is not np:  # CuPy's sort is always stable (which every kind allows) and takes no
        return xp.argsort(x, axis=axis)  # ``stable=`` nor a ``kind`` but "stable"
    return xp.argsort(x, axis=axis, **options(kind=kind, stable=stable))


def _argpartition_impl(xp, x, *, kth, axis, kind):
    return xp.argpartition(x, kth, axis=axis, **options(kind=(kind, "introselect")))


def _lexsort_impl(xp, *keys, axis):
    return xp.lexsort(keys, axis=axis)


def _unravel_batch(op, args, bdims, params):
    # the coordinates are stacked in front of the indices' shape: the batch comes after them
    return dispatch(op, (move_bdim_to_front(args[0], bdims[0]),), params), 1


argsort_op = nondiff_op("argsort", _argsort_impl, axis_batch)
nanargmax_op = nondiff_op(
    "nanargmax", lambda xp, x, *, axis: xp.nanargmax(x, axis=axis), axis_batch
)
nanargmin_op = nondiff_op(
    "nanargmin", lambda xp, x, *, axis: xp.nanargmin(x, axis=axis), axis_batch
)
# unravel_index's coordinates as one array (one row per dim: one output, whatever the rank)
unravel_index_op = nondiff_op(
    "unravel_index",
    lambda xp, i, *, shape, order: xp.stack(xp.unravel_index(i, shape, order=order)),
    _unravel_batch,
)
packbits_op = nondiff_op(
    "packbits",
    lambda xp, x, *, axis, bitorder: xp.packbits(x, axis=axis, bitorder=bitorder),
    axis_batch,
)
unpackbits_op = nondiff_op(
    "unpackbits",
    lambda xp, x, *, axis, count, bitorder: xp.unpackbits(
        x, axis=axis, count=count, bitorder=bitorder
    ),
    axis_batch,
)
ravel_multi_index_op = nondiff_op(
    "ravel_multi_index",
    lambda xp, *index, dims, mode, order: xp.ravel_multi_index(index, dims, mode=mode, order=order),
    batching.elementwise,
)
argpartition_op = nondiff_op("argpartition", _argpartition_impl, axis_batch)
lexsort_op = nondiff_op("lexsort", _lexsort_impl, axis_batch)


# ---------------------------------------------------------------------------------------------
# searchsorted, digitize: a sorted table per example


def _searchsorted_impl(xp, a, v, *, side, rows=0):
    return per_row(xp, lambda r, q: xp.searchsorted(r, q, side=side), rows, a, v)


def _digitize_impl(xp, x, bins, *, right, rows=0):
    return per_row(xp, lambda q, r: xp.digitize(q, r, right=right), rows, x, bins)


searchsorted_op = nondiff_op("searchsorted", _searchsorted_impl, rowwise_batch(0))
digitize_op = nondiff_op("digitize", _digitize_impl, rowwise_batch(1))
