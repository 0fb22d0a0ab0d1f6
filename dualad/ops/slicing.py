"""``x[key]`` with a static key (``getitem``), its transpose ``index_put_zeros``, select, narrow.

Basic indexing gives a view, advanced indexing a copy (NumPy's rules); a key holding index
tensors goes to ``tensor_index.py``.
"""

from __future__ import annotations

import numpy as np

from .._dispatch import apply, dispatch
from . import _xp_compat
from ._dims import normalize_dim
from ._exports import Exports
from ._keys import IndexKey, _advanced_layout, _device_key, resolve_key
from .base import linear, move_bdim_to_front, movedim
from .tensor_index import examples_contiguous, index_tensors

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _getitem_impl(xp, x, *, index):
    key = _device_key(xp, index.key)
    out = x[key]
    if isinstance(out, np.generic):
        # NumPy returns a scalar copy when ints select one element; a trailing Ellipsis gives
        # the 0-d view that select/x[i] must be (it shares memory and version with x)
        out = x[(*key, Ellipsis)]
    return out


def _index_impl(xp, x, *, index):
    out = x[_device_key(xp, index.key)]
    if out.base is not None and (out.base is x or out.base is x.base):
        out = out.copy()  # advanced indexing never aliases its input
    elif not out.flags.c_contiguous:  # (contiguous as PyTorch's: see tensor_index._index_impl)
        out = xp.ascontiguousarray(out)
    return out


def _index_put_zeros_impl(xp, ct, *, index, shape):
    out = xp.zeros(shape, dtype=ct.dtype)
    key = _device_key(xp, index.key)
    if index.basic:
        out[key] = ct
    else:
        _xp_compat.add_at(xp, out, key, ct)  # repeated indices accumulate
    return out


def _getitem_batch(op, args, bdims, params):
    """Index the logical dims: put the batch dim first and prepend a full slice to the key."""
    x = move_bdim_to_front(args[0], bdims[0])
    index = params["index"]
    key = (slice(None), *index.key)
    out = dispatch(op, (x,), {"index": IndexKey(key)})
    if index.basic:
        return out, 0
    adjacent, ndim = _advanced_layout(index.key)
    return examples_contiguous(out, 0 if adjacent else ndim)


def _index_put_zeros_batch(op, args, bdims, params):
    ct = move_bdim_to_front(args[0], bdims[0])
    index = params["index"]
    key = (slice(None), *index.key)
    if not index.basic:
        adjacent, ndim = _advanced_layout(index.key)
        if not adjacent:  # the advanced dims lead the values; the batch dim must follow them
            ct = movedim(ct, 0, ndim)
    shape = (ct.shape[0] if index.basic or adjacent else ct.shape[ndim], *params["shape"])
    return apply(op, ct, index=IndexKey(key), shape=shape), 0


_getitem_view_op = linear(
    "getitem",
    _getitem_impl,
    lambda ct, x, *, index: index_put_zeros(ct, index, x.shape),
    batch=_getitem_batch,
    view=True,
    node_name="SliceBackward0",
)
_getitem_copy_op = linear(
    "index",
    _index_impl,
    lambda ct, x, *, index: index_put_zeros(ct, index, x.shape),
    batch=_getitem_batch,
    node_name="IndexBackward0",
)
_index_put_zeros_op = linear(
    "index_put_zeros",
    _index_put_zeros_impl,
    lambda ct, x, *, index, shape: getitem(ct, index),
    batch=_index_put_zeros_batch,
    node_name="IndexPutBackward0",
)


def index_put_zeros(values, index: IndexKey, shape):
    """Zeros of ``shape`` with ``values`` added at ``index`` (the transpose of indexing)."""
    return dispatch(_index_put_zeros_op, (values,), {"index": index, "shape": tuple(shape)})


@public.function
def getitem(x, key):
    """``x[key]``: basic indexing gives a view, advanced indexing a copy (NumPy rules).

    Integer arrays, boolean masks, slices, None, Ellipsis and integer/boolean tensors (0-d ones
    included) are accepted; a list holding sequences, slices or tensors is a tuple of indices
    (PyTorch's rule). Repeated indices accumulate their gradients.

    >>> import dualad
    >>> x = dualad.arange(6.0).reshape(2, 3)
    >>> x[:, [2, 0]]
    tensor([[2., 0.],
            [5., 3.]])
    """
    index, tensor_key = resolve_key(key)
    if tensor_key is not None:
        template, tensors = tensor_key
        return index_tensors(x, tensors, template)
    op = _getitem_view_op if index.basic else _getitem_copy_op
    return dispatch(op, (x,), {"index": index})


def _slice_key(dim: int, item) -> IndexKey:
    return IndexKey((slice(None),) * dim + (item,))


@public.method
def select(x, dim: int, index: int):
    """The slice of ``x`` at ``index`` along ``dim`` (a view without that dim).

    >>> import dualad
    >>> dualad.arange(6).reshape(2, 3).select(1, -1)
    tensor([2, 5])
    """
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, x.ndim, op="select")
    size = x.shape[dim]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(x.shape)} at "
            f"dimension {dim}"
        )
    return getitem(x, _slice_key(dim, index))


@public.method
def narrow(x, dim: int, start: int, length: int):
    """``length`` elements of ``x`` along ``dim`` from ``start`` (a view).

    >>> import dualad
    >>> dualad.arange(5).narrow(0, 1, 3)
    tensor([1, 2, 3])
    """
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, x.ndim, op="narrow")
    start, length = int(start), int(length)
    if start < 0:
        start += x.shape[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not 0 <= start <= x.shape[dim] - length:
        raise IndexError(
            f"start ({start}) + length ({length}) exceeds dimension size ({x.shape[dim]})."
        )
    return getitem(x, _slice_key(dim, slice(start, start + length)))
