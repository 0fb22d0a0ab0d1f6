"""Shape ops and basic indexing. Most are views: they share memory and the version counter with
their base, and an in-place op on them updates the base's gradient history (see rev/inplace.py).
"""

from __future__ import annotations

import numpy as np

from .._dispatch import OpDef, apply, apply1, dispatch, register
from .._tensor import Tensor
from ..vmap.rules import move_bdim_to_front
from ._dims import normalize_dim, normalize_dims, size_args
from ._helpers import linear

# ---------------------------------------------------------------------------------------------
# reshaping


def _infer_shape(shape: tuple, numel: int, op: str) -> tuple:
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError(f"dualad.{op}: only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"dualad.{op}: shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    total = 1
    for s in shape:
        total *= s
    if total != numel:
        raise RuntimeError(f"dualad.{op}: shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _reshape_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, shape=(x.shape[0], *params["shape"])), 0


_reshape_op = linear(
    "reshape",
    lambda xp, x, *, shape: xp.reshape(x, shape),
    lambda ct, x, *, shape: reshape(ct, x.shape),
    batch=_reshape_batch,
    view="maybe",
    node_name="ViewBackward0",
)


def reshape(x, *shape):
    """``x`` with a new shape (a view when possible). ``-1`` infers one dimension.

    >>> import dualad
    >>> dualad.arange(6).reshape(2, -1).shape
    (2, 3)
    """
    shape = _infer_shape(size_args(shape), x.numel(), "reshape")
    if shape == x.shape:
        return _same_shape_view(x)
    return apply1(_reshape_op, x, {"shape": shape})


def _view_impl(xp, x, *, shape):
    out = x.view()
    try:
        out.shape = shape
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return out


_view_op = linear(
    "view",
    _view_impl,
    lambda ct, x, *, shape: reshape(ct, x.shape),
    batch=_reshape_batch,
    view=True,
)


def view(x, *shape):
    """``x`` with a new shape, always sharing memory (error when that is impossible)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        from .elementwise import astype

        return astype(x, shape[0])  # view(dtype): a cast here (no bit reinterpretation)
    shape = _infer_shape(size_args(shape), x.numel(), "view")
    return dispatch(_view_op, (x,), {"shape": shape})


def _same_shape_view(x):
    return dispatch(_view_op, (x,), {"shape": tuple(x.shape)})


def view_as(x, other):
    return view(x, tuple(other.shape))


def reshape_as(x, other):
    return reshape(x, tuple(other.shape))


def flatten(x, start_dim: int = 0, end_dim: int = -1):
    """Merge dims ``start_dim..end_dim`` into one."""
    if x.ndim == 0:
        return reshape(x, (1,))
    start = normalize_dim(start_dim, x.ndim, op="flatten")
    end = normalize_dim(end_dim, x.ndim, op="flatten")
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = x.shape
    merged = 1
    for s in shape[start : end + 1]:
        merged *= s
    return reshape(x, (*shape[:start], merged, *shape[end + 1 :]))


def unflatten(x, dim: int, sizes):
    dim = normalize_dim(dim, x.ndim, op="unflatten")
    sizes = _infer_shape(tuple(sizes), x.shape[dim], "unflatten")
    return reshape(x, (*x.shape[:dim], *sizes, *x.shape[dim + 1 :]))


def unsqueeze(x, dim: int):
    """Insert a dimension of size 1 at ``dim``."""
    dim = normalize_dim(dim, x.ndim + 1, op="unsqueeze")
    return view(x, (*x.shape[:dim], 1, *x.shape[dim:]))


def squeeze(x, dim=None):
    """Remove dimensions of size 1 (all of them, or those in ``dim`` that have size 1)."""
    if dim is None:
        dims = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        dims = [d for d in normalize_dims(dim, x.ndim, op="squeeze") if x.shape[d] == 1]
    return view(x, tuple(s for i, s in enumerate(x.shape) if i not in dims))


# ---------------------------------------------------------------------------------------------
# broadcasting


def _broadcast_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    shape = params["shape"]
    logical = x.shape[1:]
    if len(logical) < len(shape):  # left-pad the logical dims so the batch dim stays first
        x = reshape(x, (x.shape[0],) + (1,) * (len(shape) - len(logical)) + tuple(logical))
    return apply(op, x, shape=(x.shape[0], *shape)), 0


_broadcast_op = linear(
    "broadcast_to",
    lambda xp, x, *, shape: xp.broadcast_to(x, shape),
    lambda ct, x, *, shape: _sum_to(ct, x.shape),
    batch=_broadcast_batch,
    view=True,
    node_name="ExpandBackward0",
)


def _sum_to(ct, shape):
    from .reductions import sum_to

    return sum_to(ct, shape)


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (a read-only view, like NumPy's)."""
    shape = tuple(int(s) for s in shape)
    if tuple(x.shape) == shape:
        return x
    try:
        np.broadcast_shapes(tuple(x.shape), shape)
    except ValueError:
        raise RuntimeError(
            f"dualad.broadcast_to: the shape {tuple(x.shape)} cannot be broadcast to {shape}"
        ) from None
    return dispatch(_broadcast_op, (x,), {"shape": shape})


def expand(x, *sizes):
    """torch's expand: ``-1`` keeps a dimension's size."""
    sizes = size_args(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({x.ndim})"
        )
    shape = tuple(
        (x.shape[i - lead] if s == -1 else s) if i >= lead else s for i, s in enumerate(sizes)
    )
    return broadcast_to(x, shape)


def expand_as(x, other):
    return broadcast_to(x, tuple(other.shape))


def broadcast_tensors(*tensors):
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(broadcast_to(t, shape) for t in tensors)


# ---------------------------------------------------------------------------------------------
# permuting dims


def _permute_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, dims=(0, *(d + 1 for d in params["dims"]))), 0


def _inverse(dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return tuple(inverse)


_permute_op = linear(
    "permute",
    lambda xp, x, *, dims: xp.transpose(x, dims),
    lambda ct, x, *, dims: permute(ct, _inverse(dims)),
    batch=_permute_batch,
    view=True,
)


def permute(x, *dims):
    """Reorder the dimensions of ``x`` (a view)."""
    dims = size_args(dims)
    if len(dims) != x.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    dims = tuple(normalize_dim(d, x.ndim, op="permute") for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if dims == tuple(range(x.ndim)):
        return _same_shape_view(x)
    return dispatch(_permute_op, (x,), {"dims": dims})


def transpose(x, dim0: int = 0, dim1: int = 1):
    """Swap two dimensions (a view)."""
    n = max(x.ndim, 1)
    dim0, dim1 = normalize_dim(dim0, n, op="transpose"), normalize_dim(dim1, n, op="transpose")
    if x.ndim < 2:
        return _same_shape_view(x)
    dims = list(range(x.ndim))
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return permute(x, tuple(dims))


swapaxes = swapdims = transpose


def movedim(x, source, destination):
    """Move dimension(s) ``source`` to position(s) ``destination`` (a view)."""
    if isinstance(source, int):
        source = (source,)
    if isinstance(destination, int):
        destination = (destination,)
    source = [normalize_dim(s, x.ndim, op="movedim") for s in source]
    destination = [normalize_dim(d, x.ndim, op="movedim") for d in destination]
    if len(source) != len(destination):
        raise RuntimeError("movedim: Invalid source or destination dims")
    order = [d for d in range(x.ndim) if d not in source]
    for dst, src in sorted(zip(destination, source)):
        order.insert(dst, src)
    return permute(x, tuple(order))


moveaxis = movedim


def t(x):
    """Transpose of a tensor with at most 2 dims."""
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return transpose(x, 0, 1) if x.ndim == 2 else x


def matrix_transpose(x):
    """Swap the last two dims (``x.mT``)."""
    if x.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(x, -2, -1)


# ---------------------------------------------------------------------------------------------
# indexing


def _normalize_key(key):
    """Index keys as NumPy understands them: tensors become arrays, lists of ints arrays."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            k = k._data
            if k.dtype.kind not in "iub":
                raise IndexError(
                    "tensors used as indices must be long, int, byte or bool tensors"
                )
        elif isinstance(k, list):
            k = np.asarray(k)
            if k.dtype.kind not in "iub":
                raise IndexError(f"dualad: list index must hold integers or booleans: {k!r}")
        out.append(k)
    return tuple(out)


def is_basic_key(key: tuple) -> bool:
    """True if indexing with ``key`` gives a view (ints, slices, None, Ellipsis only)."""
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
                or (isinstance(k, np.ndarray) is False and type(k) is bool)):
            return False
        if type(k) is bool:
            return False
    return True


class IndexKey:
    """An index key held as a static parameter (arrays inside are not hashed or compared)."""

    __slots__ = ("basic", "key")

    def __init__(self, key: tuple) -> None:
        self.key = key
        self.basic = is_basic_key(key)

    def __repr__(self) -> str:
        return f"IndexKey({self.key!r})"


def _device_key(xp, key):
    if xp is np:
        return key
    return tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


def _getitem_impl(xp, x, *, index):
    return x[_device_key(xp, index.key)]


def _index_put_zeros_impl(xp, ct, *, index, shape):
    out = xp.zeros(shape, dtype=ct.dtype)
    key = _device_key(xp, index.key)
    if index.basic:
        out[key] = ct
    else:
        xp.add.at(out, key, ct)  # repeated indices accumulate
    return out


_getitem_view_op = linear(
    "getitem",
    _getitem_impl,
    lambda ct, x, *, index: index_put_zeros(ct, index, x.shape),
    view=True,
    node_name="SliceBackward0",
)
_getitem_copy_op = linear(
    "index",
    _getitem_impl,
    lambda ct, x, *, index: index_put_zeros(ct, index, x.shape),
    node_name="IndexBackward0",
)
_index_put_zeros_op = linear(
    "index_put_zeros",
    _index_put_zeros_impl,
    lambda ct, x, *, index, shape: getitem(ct, index),
    node_name="IndexPutBackward0",
)


def index_put_zeros(values, index: IndexKey, shape):
    """Zeros of ``shape`` with ``values`` added at ``index`` (the transpose of indexing)."""
    return dispatch(_index_put_zeros_op, (values,), {"index": index, "shape": tuple(shape)})


def getitem(x, key):
    """``x[key]``: basic indexing gives a view, advanced indexing a copy (NumPy rules)."""
    index = key if isinstance(key, IndexKey) else IndexKey(_normalize_key(key))
    op = _getitem_view_op if index.basic else _getitem_copy_op
    return dispatch(op, (x,), {"index": index})


def select(x, dim: int, index: int):
    """The slice of ``x`` at ``index`` along ``dim`` (a view without that dim)."""
    dim = normalize_dim(dim, x.ndim, op="select")
    size = x.shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {tuple(x.shape)} at "
            f"dimension {dim}"
        )
    return getitem(x, (slice(None),) * dim + (int(index),))


def narrow(x, dim: int, start: int, length: int):
    """``length`` elements of ``x`` along ``dim`` from ``start`` (a view)."""
    dim = normalize_dim(dim, x.ndim, op="narrow")
    if start < 0:
        start += x.shape[dim]
    if not 0 <= start <= x.shape[dim] - length or length < 0:
        raise IndexError(
            f"start ({start}) + length ({length}) exceeds dimension size ({x.shape[dim]})."
        )
    return getitem(x, (slice(None),) * dim + (slice(start, start + length),))


def _unbind_impl(xp, x, *, dim):
    return tuple(x[(slice(None),) * dim + (i,)] for i in range(x.shape[dim]))


def _unbind_vjp(cts, outs, args, params, needs):
    return (stack(list(cts), params["dim"]),)


_unbind_op = register(
    OpDef(
        "unbind",
        _unbind_impl,
        vjp=_unbind_vjp,
        jvp=lambda tangents, outs, args, params: unbind(tangents[0], params["dim"]),
        save_args=False,
        view=True,
        nout=-1,
    )
)


def unbind(x, dim: int = 0):
    """The slices of ``x`` along ``dim`` as a tuple of views."""
    dim = normalize_dim(dim, x.ndim, op="unbind")
    if x.shape[dim] == 0:
        return ()
    return dispatch(_unbind_op, (x,), {"dim": dim})


def _stack_impl(xp, *arrays, dim):
    return xp.stack(arrays, axis=dim)


def _stack_vjp(cts, outs, args, params, needs):
    parts = unbind(cts[0], params["dim"])
    return tuple(p if need else None for p, need in zip(parts, needs))


def _stack_jvp(tangents, outs, args, params):
    from .._creation import zeros_like

    filled = [zeros_like(a) if t is None else t for a, t in zip(args, tangents)]
    return stack(filled, params["dim"])


_stack_op = register(
    OpDef(
        "stack",
        _stack_impl,
        vjp=_stack_vjp,
        jvp=_stack_jvp,
        save_args=False,
    )
)


def stack(tensors, dim: int = 0):
    """Join tensors of one shape along a new dimension ``dim``."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    dim = normalize_dim(dim, len(first) + 1, op="stack")
    return dispatch(_stack_op, tuple(tensors), {"dim": dim})


TENSOR_METHODS = (
    "reshape", "view", "view_as", "reshape_as", "flatten", "unflatten", "unsqueeze", "squeeze",
    "broadcast_to", "expand", "expand_as", "permute", "transpose", "swapaxes", "swapdims",
    "movedim", "moveaxis", "t", "select", "narrow", "unbind",
)
INPLACE_METHODS = ()
