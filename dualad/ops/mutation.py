"""Functional forms of the mutating ops (fill, zero, copy, index assignment).

Each is an ordinary op whose first argument is the tensor being overwritten; ``rev/inplace.py``
turns them into ``fill_``, ``zero_``, ``copy_`` and ``__setitem__``. Overwritten positions get no
gradient from the result; the written values get theirs.
"""

from __future__ import annotations

import numpy as np

from .._creation import zeros_like
from .._dispatch import EMPTY, OpDef, apply, dispatch, register
from .._tensor import Tensor
from ._batching import batch_size, front, pad_after_batch
from ._keys import IndexKey, _advanced_layout, _device_key, resolve_key
from .base import broadcast_to, move_bdim_to_front, movedim, reshape, unsqueeze
from .casts import astype
from .reductions import sum as reduce_sum
from .slicing import getitem
from .tensor_index import index_put_tensors

# The functional forms of in-place ops keep x's memory layout (as the eager in-place write
# does): a func.grad level rebinds the written tensor to their result, and a later view (e.g.
# ``view(-1)``) of it must succeed exactly when it does eagerly.


def _fill_impl(xp, x, value):
    return xp.full_like(x, value)


def _overwritten_grad(ct, needs):
    """The overwritten tensor's gradient: zeros, not None (torch: ``self: zeros_like(grad)``),
    so ``grad(x.clone().fill_(v), x)`` is zeros rather than "unused"."""
    if not needs[0]:
        return None
    return zeros_like(ct)


def _fill_vjp(cts, outs, args, params, needs):
    return _overwritten_grad(cts[0], needs), (reduce_sum(cts[0]) if needs[1] else None)


fill_op = register(
    OpDef(
        "fill",
        _fill_impl,
        vjp=_fill_vjp,
        jvp=lambda tangents, outs, args, params: _fill_jvp(tangents, outs),
        batch=lambda op, args, bdims, params: _fill_batch(op, args, bdims),
        save_args=False,
    )
)


def _fill_jvp(tangents, outs):
    t_value = tangents[1]
    if t_value is None:
        return zeros_like(outs[0])
    return broadcast_to(t_value, outs[0].shape) + 0


def _fill_batch(op, args, bdims):
    """fill(x, value): a batched (0-d logical) value fills each example with its own value."""
    x, value = args
    if bdims[1] is None:
        return apply(op, x, value), bdims[0]
    x = front(x, bdims[0], batch_size(args, bdims))
    value = pad_after_batch(move_bdim_to_front(value, bdims[1]), x.ndim - 1)
    return apply(copy_op, x, value), 0


def fill(x, value):
    """A tensor like ``x`` filled with ``value`` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value.ndim} dimensions."
        )
    return dispatch(fill_op, (x, value), EMPTY)


def zero(x):
    """A tensor of zeros like ``x`` (functional ``zero_``)."""
    return dispatch(fill_op, (x, 0), EMPTY)


def _copy_impl(xp, x, src):
    out = xp.empty_like(x)  # (x's layout: not the broadcast or transposed layout of src)
    out[...] = src
    return out


def _copy_vjp(cts, outs, args, params, needs):
    return _overwritten_grad(cts[0], needs), (cts[0] if needs[1] else None)


def _copy_jvp(tangents, outs, args, params):
    t_src = tangents[1]
    if t_src is None:
        return zeros_like(outs[0])
    return astype(broadcast_to(t_src, outs[0].shape), outs[0].dtype)


copy_op = register(
    OpDef(
        "copy_from",
        _copy_impl,
        vjp=_copy_vjp,
        jvp=_copy_jvp,
        batch=lambda op, args, bdims, params: _copy_from_batch(op, args, bdims),
        save_args=False,
        node_name="CopyBackwards",
    )
)


def _copy_from_batch(op, args, bdims):
    """copy_from(x, src): src broadcasts against x's logical shape."""
    x, src = args
    x = front(x, bdims[0], batch_size(args, bdims))
    if bdims[1] is not None:
        src = pad_after_batch(move_bdim_to_front(src, bdims[1]), x.ndim - 1)
    return apply(op, x, src), 0


def copy_from(x, src):
    """``src`` broadcast to x's shape and cast to x's dtype (functional ``copy_``)."""
    return dispatch(copy_op, (x, src), EMPTY)


def _index_put_impl(xp, x, value, *, index):
    out = x.copy(order="K")
    out[_device_key(xp, index.key)] = value
    return out


def _index_put_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    index = params["index"]
    grad_x = index_put(ct, index, 0.0) if needs[0] else None
    grad_value = getitem(ct, index) if needs[1] else None
    return grad_x, grad_value


def _index_put_jvp(tangents, outs, args, params):
    t_x, t_value = tangents
    index = params["index"]
    if t_x is None:
        t_x = zeros_like(outs[0])
    return index_put(t_x, index, 0.0 if t_value is None else t_value)


index_put_op = register(
    OpDef(
        "index_put",
        _index_put_impl,
        vjp=_index_put_vjp,
        jvp=_index_put_jvp,
        batch=lambda op, args, bdims, params: _index_put_batch(op, args, bdims, params["index"]),
        save_args=False,
        node_name="IndexPutBackward0",
    )
)


def _region_shape(shape: tuple, key: tuple) -> tuple:
    """The shape of ``x[key]`` for an x of ``shape`` (indexing a zero-strided stand-in)."""
    return np.broadcast_to(np.zeros((), dtype=np.int8), shape)[key].shape


def _index_put_batch(op, args, bdims, index):
    """index_put(x, value) at a static key: prepend a full slice to the key; the value is laid
    out like the indexed region of the batch-first x (NumPy moves the batch dim behind the
    advanced-index dims when those are not adjacent)."""
    x, value = args
    x = front(x, bdims[0], batch_size(args, bdims))
    region = _region_shape(tuple(x.shape[1:]), index.key)
    position = 0
    if not index.basic:
        adjacent, advanced_ndim = _advanced_layout(index.key)
        position = 0 if adjacent else advanced_ndim
    if bdims[1] is not None:
        value = pad_after_batch(move_bdim_to_front(value, bdims[1]), len(region))
        if position:
            value = movedim(value, 0, position)
    elif position and isinstance(value, Tensor) and value.ndim:
        missing = len(region) - value.ndim
        if missing > 0:
            value = reshape(value, (1,) * missing + tuple(value.shape))
        value = unsqueeze(value, position)
    return apply(op, x, value, index=IndexKey((slice(None), *index.key))), 0


def index_put(x, key, value):
    """A copy of ``x`` with ``value`` written at ``key`` (functional ``x[key] = value``)."""
    index, tensor_key = resolve_key(key)
    if tensor_key is not None:
        template, tensors = tensor_key
        return index_put_tensors(x, value, tensors, template)
    return dispatch(index_put_op, (x, value), {"index": index})
