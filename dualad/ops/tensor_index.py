"""Advanced indexing by index tensors: ``x[idx]`` and ``x[idx] = v`` where the key holds integer
or boolean tensors.

The key's tensors are ARGUMENTS of these ops, not static parameters as the rest of a key is
(``_keys.IndexKey``), so the transform levels see them: under ``vmap`` a batched index tensor
selects different elements in every example (the batching rules below), and like any saved
tensor the index is kept by the graph node and version-checked at backward. ``TensorKey`` holds
the static rest of the key, with ``SLOT`` where each tensor goes.

Three ops, each the transpose of another:

- ``index_tensors(x, *indices)``: ``x[key]`` (always a copy, as advanced indexing is);
- ``index_accumulate(ct, *indices)``: zeros of x's shape with ``ct`` added at ``key`` (repeated
  positions accumulate): the VJP of ``index_tensors``;
- ``index_put_tensors(x, value, *indices)``: a copy of ``x`` with ``value`` written at ``key``
  (functional ``x[key] = value``).

Batching with a batched index (NumPy's placement rules, see ``_layout``): the batch dim of x is
moved to the dim that the first advanced index selects from, and an ``arange(B)`` index is put
into the key just before that index; the advanced indices then stay consecutive exactly when
they were, so the broadcast index dims land where they would for one example, with the batch
dim first among them. A batched boolean mask selects a different number of elements per example
(a data-dependent shape) and raises, as in ``torch.func``.
"""

from __future__ import annotations

import numpy as np

from .._creation import arange, zeros_like
from .._dispatch import OpDef, dispatch, register
from .._opdef import GATHER
from .._tensor import Tensor
from . import _xp_compat
from ._batching import batch_size
from ._helpers import clone
from ._keys import SLOT, TensorKey
from .base import broadcast_to, move_bdim_to_front, movedim, reshape, unsqueeze


def _is_mask(dtype) -> bool:
    return dtype == np.bool_ or dtype == np.uint8


# ---------------------------------------------------------------------------------------------
# the ops


def _index_impl(xp, x, *indices, key):
    out = x[key.fill(xp, indices)]
    if isinstance(out, np.generic):
        out = np.asarray(out)
    elif out.base is not None and (out.base is x or out.base is x.base):
        out = out.copy()  # (0-d integer arrays index like ints: a view) advanced: a copy
    elif not out.flags.c_contiguous:
        # NumPy lays x[:, idx] out with the index dims outermost; PyTorch's result is contiguous,
        # and a later reshape must be a view of it (so that it sees in-place writes) exactly then
        out = xp.ascontiguousarray(out)
    return out


def _accumulate_impl(xp, ct, *indices, key, shape):
    out = xp.zeros(shape, dtype=ct.dtype)
    _xp_compat.add_at(xp, out, key.fill(xp, indices), ct)  # repeated positions accumulate
    return out


def _put_impl(xp, x, value, *indices, key):
    out = x.copy(order="K")  # (x's layout, as an eager write keeps it: see mutation.py)
    out[key.fill(xp, indices)] = value
    return out


def _save_indices(needs):
    """Only the index tensors are read by the VJPs (x's shape comes from its stand-in)."""
    return (False, *([True] * (len(needs) - 1)))


def _save_put_indices(needs):
    return (False, False, *([True] * (len(needs) - 2)))


def index_tensors(x, indices, key: TensorKey):
    """``x[key]`` with ``indices`` in the key's slots."""
    return dispatch(_index_op, (x, *indices), {"key": key})


def index_accumulate(ct, indices, key: TensorKey, shape: tuple):
    """Zeros of ``shape`` with ``ct`` added at ``key`` (the transpose of ``index_tensors``)."""
    return dispatch(_accumulate_op, (ct, *indices), {"key": key, "shape": tuple(shape)})


def index_put_tensors(x, value, indices, key: TensorKey):
    """A copy of ``x`` with ``value`` written at ``key`` (functional ``x[key] = value``)."""
    return dispatch(_put_op, (x, value, *indices), {"key": key})


def _index_vjp(cts, outs, args, params, needs):
    grad = None
    if needs[0]:
        grad = index_accumulate(cts[0], args[1:], params["key"], tuple(args[0].shape))
    return (grad, *([None] * (len(args) - 1)))


def _index_jvp(tangents, outs, args, params):
    return index_tensors(tangents[0], args[1:], params["key"])


def _accumulate_vjp(cts, outs, args, params, needs):
    grad = index_tensors(cts[0], args[1:], params["key"]) if needs[0] else None
    return (grad, *([None] * (len(args) - 1)))


def _accumulate_jvp(tangents, outs, args, params):
    return index_accumulate(tangents[0], args[1:], params["key"], params["shape"])


def _put_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    indices = args[2:]
    key = params["key"]
    # the overwritten positions get no gradient; the written values get what reached them (the
    # engine sums a broadcast value's cotangent down to its shape)
    grad_x = index_put_tensors(ct, 0.0, indices, key) if needs[0] else None
    grad_value = index_tensors(ct, indices, key) if needs[1] else None
    return (grad_x, grad_value, *([None] * len(indices)))


def _put_jvp(tangents, outs, args, params):
    t_x, t_value = tangents[0], tangents[1]
    if t_x is None:
        t_x = zeros_like(outs[0])
    return index_put_tensors(t_x, 0.0 if t_value is None else t_value, args[2:], params["key"])


def examples_contiguous(out, bdim: int):
    """``(out, 0)``: a batched advanced-index result (or its VJP, ``index_accumulate``'s zeros
    with the batch at the indexed dim) with each example C-contiguous, as an eager one is (see
    ``_index_impl``). With the batch dim inside (``x[i, :, j]``: NumPy puts the
    index dims first, the batch behind them; or a batched index block after a slice) every
    example was strided, so a reshape of it copied where eager gives a view (missing later
    in-place writes) and view(-1) raised."""
    if bdim == 0:
        return out, 0
    return clone(movedim(out, bdim, 0)), 0


# ---------------------------------------------------------------------------------------------
# batching


class _Layout:
    """Where NumPy puts things for ``x[key]`` (x of ``ndim`` logical dims).

    ``first``: the key position of the first advanced element (arrays, and ints when arrays are
    present); ``dim``: the dim of x it selects from; ``block``: the output position of the
    broadcast index dims (where ``first`` was when the advanced elements are ``consecutive`` in
    the key, else 0); ``nb``: their number; ``rank``: the output's number of dims.
    """

    __slots__ = ("block", "consecutive", "dim", "first", "nb", "rank")

    def __init__(self, key: TensorKey, ndim: int, slot_ranks: list) -> None:
        ranks = iter(slot_ranks)  # (is a mask, ndim) per slot
        elements = []  # (kind, dims consumed, index dims)
        for k in key.key:
            if k is SLOT or isinstance(k, np.ndarray):
                mask, r = next(ranks) if k is SLOT else (k.dtype == np.bool_, k.ndim)
                if mask and r == 0:
                    raise _unsupported("a 0-d boolean index")
                elements.append(("fancy", r if mask else 1, 1 if mask else r))
            elif type(k) is bool:
                raise _unsupported("a Python bool index")
            elif isinstance(k, (int, np.integer)):
                elements.append(("fancy", 1, 0))
            elif k is None:
                elements.append(("new", 0, 0))
            elif k is Ellipsis:
                elements.append(("ellipsis", 0, 0))
            else:
                elements.append(("slice", 1, 0))
        consumed = sum(e[1] for e in elements)
        span = ndim - consumed  # the Ellipsis' dims, or the implicit trailing full slices
        self.nb = max(e[2] for e in elements if e[0] == "fancy")
        self.first = next(i for i, e in enumerate(elements) if e[0] == "fancy")
        dim = out = 0
        block = None
        status = 0  # 0: no advanced element yet, 1: in the first run, 2: after it
        for i, (kind, used, _) in enumerate(elements):
            if i == self.first:
                self.dim = dim
            if kind == "fancy":
                if status == 0:
                    block, status = out, 1
                elif status == 2:
                    block, status = 0, 3  # a second run: NumPy puts the index dims first
            else:
                if status == 1:
                    status = 2
                out += span if kind == "ellipsis" else 1
                used = span if kind == "ellipsis" else used
            dim += used
        has_ellipsis = any(e[0] == "ellipsis" for e in elements)
        self.block = block
        self.consecutive = status != 3
        self.rank = out + self.nb + (0 if has_ellipsis else span)


def _unsupported(what: str) -> RuntimeError:
    return RuntimeError(f"dualad.vmap: {what} together with batched index tensors is not supported")


def _batched_mask_error() -> RuntimeError:
    return RuntimeError(
        "dualad.vmap: indexing with a batched boolean mask (x[mask] or x[mask] = v with a mask "
        "that differs per example) is not supported: each example selects a different number "
        "of elements, so the result has a data-dependent shape that cannot be batched. Use "
        "dualad.where(mask, x, other) instead, or index outside vmap."
    )


def _layout(key: TensorKey, ndim: int, indices: tuple, bdims: tuple) -> _Layout:
    ranks = []
    for t, b in zip(indices, bdims):
        if _is_mask(t.dtype):
            if b is not None:
                raise _batched_mask_error()
            ranks.append((True, t.ndim))
        else:
            ranks.append((False, t.ndim - (b is not None)))
    return _Layout(key, ndim, ranks)


def _batched_indices(indices, bdims, layout: _Layout, size: int, like) -> tuple:
    """The index tensors with the batch's arange first: batched indices batch-first and padded
    to the common index rank (so their batch dims broadcast with the arange's only)."""
    rank = layout.nb
    out = []
    for t, b in zip(indices, bdims):
        if b is not None:
            t = move_bdim_to_front(t, b)
            missing = rank - (t.ndim - 1)
            if missing:
                t = reshape(t, (size, *(1,) * missing, *t.shape[1:]))
        out.append(t)
    batch = reshape(arange(size, device=like.device), (size, *(1,) * rank))
    return (batch, *out)


def _move_batch(x, bdim, dim: int, size: int):
    """``x`` with its batch at ``dim`` (an unbatched x is broadcast along a new dim there)."""
    if bdim is None:
        shape = list(x.shape)
        shape.insert(dim, size)
        return broadcast_to(unsqueeze(x, dim), tuple(shape))
    return x if bdim == dim else movedim(x, bdim, dim)


def _index_batch(op, args, bdims, params):
    key = params["key"]
    x, indices, index_bdims = args[0], args[1:], bdims[1:]
    logical = x.ndim - (bdims[0] is not None)
    layout = _layout(key, logical, indices, index_bdims)
    if all(b is None for b in index_bdims):
        # only x is batched: its batch first, a full slice in front of the key; NumPy moves the
        # batch dim behind the index dims when the advanced elements are not consecutive
        x = move_bdim_to_front(x, bdims[0])
        out = dispatch(op, (x, *indices), {"key": TensorKey((slice(None), *key.key))})
        return examples_contiguous(out, 0 if layout.consecutive else layout.nb)
    size = batch_size(args, bdims)
    if bdims[0] is None:  # the batch comes from the indices alone: it leads the index dims
        padded = _batched_indices(indices, index_bdims, layout, size, x)[1:]
        return examples_contiguous(dispatch(op, (x, *padded), {"key": key}), layout.block)
    x = _move_batch(x, bdims[0], layout.dim, size)
    batched_indices = _batched_indices(indices, index_bdims, layout, size, x)
    out = dispatch(op, (x, *batched_indices), {"key": key.with_batch_index(layout.first)})
    return examples_contiguous(out, layout.block)


def _region_value(value, bdim, layout: _Layout, size: int):
    """A value (a cotangent, or what is written) laid out like the batched indexing result:
    padded to the result's rank, with its batch at the index block (size 1 if unbatched)."""
    if not isinstance(value, Tensor):
        return value
    if bdim is not None:
        value = move_bdim_to_front(value, bdim)
        missing = layout.rank - (value.ndim - 1)
        if missing > 0:
            value = reshape(value, (size, *(1,) * missing, *value.shape[1:]))
        return movedim(value, 0, layout.block) if layout.block else value
    if value.ndim == 0:
        return value
    missing = layout.rank - value.ndim
    if missing > 0:
        value = reshape(value, (*(1,) * missing, *value.shape))
    return unsqueeze(value, layout.block)


def _accumulate_batch(op, args, bdims, params):
    key = params["key"]
    shape = params["shape"]
    ct, indices, index_bdims = args[0], args[1:], bdims[1:]
    layout = _layout(key, len(shape), indices, index_bdims)
    size = batch_size(args, bdims)
    ct = _region_value(ct, bdims[0], layout, size)
    batched_indices = _batched_indices(indices, index_bdims, layout, size, ct)
    out_shape = list(shape)
    out_shape.insert(layout.dim, size)
    params = {"key": key.with_batch_index(layout.first), "shape": tuple(out_shape)}
    # (the zeros are allocated with the batch at ``layout.dim``; an eager result is contiguous,
    # so each example must be too: a view(-1) of x[:, idx]'s gradient raised under vmap)
    return examples_contiguous(dispatch(op, (ct, *batched_indices), params), layout.dim)


def _put_batch(op, args, bdims, params):
    key = params["key"]
    x, value, indices, index_bdims = args[0], args[1], args[2:], bdims[2:]
    logical = x.ndim - (bdims[0] is not None)
    layout = _layout(key, logical, indices, index_bdims)
    size = batch_size(args, bdims)
    x = _move_batch(x, bdims[0], layout.dim, size)
    value = _region_value(value, bdims[1], layout, size)
    batched_indices = _batched_indices(indices, index_bdims, layout, size, x)
    out = dispatch(op, (x, value, *batched_indices), {"key": key.with_batch_index(layout.first)})
    return out, layout.dim


# three declarations alike as every OpDef is (each op its own impl and rules, the saved indices
# masked the same way); a factory for three would only hide which rule belongs to which op
_index_op = register(
    OpDef(
        "index_tensors",
        _index_impl,
        vjp=_index_vjp,
        jvp=_index_jvp,
        batch=_index_batch,
        save_mask=_save_indices,
        node_name="IndexBackward0",
        sparsity=GATHER,
    )
)
_accumulate_op = register(
    OpDef(
        "index_accumulate",
        _accumulate_impl,
        vjp=_accumulate_vjp,
        jvp=_accumulate_jvp,
        batch=_accumulate_batch,
        save_mask=_save_indices,
        node_name="IndexPutBackward0",
    )
)
_put_op = register(
    OpDef(
        "index_put_tensors",
        _put_impl,
        vjp=_put_vjp,
        jvp=_put_jvp,
        batch=_put_batch,
        save_mask=_save_put_indices,
        node_name="IndexPutBackward0",
    )
)

__all__ = ["TensorKey", "index_accumulate", "index_put_tensors", "index_tensors"]
