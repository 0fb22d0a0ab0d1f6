"""Shape ops and basic indexing. Most are views: they share memory and the version counter with
their base, and an in-place op on them updates the base's gradient history (see rev/inplace.py).
"""

from __future__ import annotations

import itertools

import numpy as np

from .._dispatch import OpDef, apply, apply1, dispatch, register
from .._tensor import Tensor
from ._batching import move_bdim_to_front
from ._dims import normalize_dim, normalize_dims, pick_dim, size_args
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
            raise RuntimeError(
                f"dualad.{op}: shape '{list(shape)}' is invalid for input of size {numel}"
            )
        shape = tuple(numel // known if s == -1 else s for s in shape)
    total = 1
    for s in shape:
        total *= s
    if total != numel:
        raise RuntimeError(
            f"dualad.{op}: shape '{list(shape)}' is invalid for input of size {numel}"
        )
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
    lambda xp, x, *, shape: _broadcast_impl(xp, x, shape),
    lambda ct, x, *, shape: _sum_to(ct, x.shape),
    batch=_broadcast_batch,
    view=True,
    node_name="ExpandBackward0",
)


def _broadcast_impl(xp, x, shape: tuple):
    if type(x) is np.ndarray and x.flags.c_contiguous:
        # np.broadcast_to goes through nditer (~1.7 us); a contiguous array's broadcast view is
        # one ndarray call with the strides worked out here (read-only, like broadcast_to's)
        lead = len(shape) - x.ndim
        strides = [0] * lead
        for size, n, stride in zip(x.shape, shape[lead:], x.strides):
            strides.append(stride if size == n else 0)
        out = np.ndarray(shape, x.dtype, x, 0, strides)
        out.flags.writeable = False
        return out
    return xp.broadcast_to(x, shape)


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


def expand_to(x, shape: tuple):
    """``x`` broadcast to ``shape``, a tuple of ints known to be compatible (for rules: no
    checks, no conversions)."""
    if x.shape == shape:
        return x
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
    if shape == tuple(x.shape):
        return dispatch(_broadcast_op, (x,), {"shape": shape})  # torch: expand is always a view
    return broadcast_to(x, shape)


def expand_as(x, other):
    return expand(x, tuple(other.shape))


def broadcast_tensors(*tensors):
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(broadcast_to(t, shape) for t in tensors)


# ---------------------------------------------------------------------------------------------
# permuting dims


def _permute_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, dims=(0, *(d + 1 for d in params["dims"]))), 0


def inverse_permutation(dims) -> tuple:
    """The dims that undo ``permute(x, dims)``: ``permute(permute(x, dims), inverse)`` is x's
    order again (also for ``ndarray.transpose``)."""
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return tuple(inverse)


_permute_op = linear(
    "permute",
    lambda xp, x, *, dims: xp.transpose(x, dims),
    lambda ct, x, *, dims: permute(ct, inverse_permutation(dims)),
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


def copy_in_order(x, order):
    """A copy of ``x`` (same shape and values, differentiable) whose memory holds its dims in
    ``order``, outermost first: C order for ``order == range(ndim)``. For code that must lay a
    result out as another tensor is laid out (a gradient as its base, a batched result batch
    first), so that later views of it behave as on that tensor.

    >>> import dualad
    >>> y = copy_in_order(dualad.ones(2, 3), (1, 0))
    >>> tuple(y.shape), y.mT.view(-1).shape    # y.mT is C order: it views as flat
    ((2, 3), (6,))
    """
    from .elementwise import clone

    order = tuple(order)
    return permute(clone(permute(x, order)), inverse_permutation(order))


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
    return transpose(x, 0, 1) if x.ndim == 2 else _same_shape_view(x)


def matrix_transpose(x):
    """Swap the last two dims (``x.mT``)."""
    if x.ndim < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
        )
    return transpose(x, -2, -1)


# ---------------------------------------------------------------------------------------------
# indexing

_SEQUENCE_ITEM_TYPES = (list, tuple, slice, type(Ellipsis), type(None), np.ndarray, Tensor)


def _sequence_as_tuple(key: list) -> bool:
    """PyTorch's (and old NumPy's) rule: a short list holding a sequence, slice, None, Ellipsis
    or tensor is a tuple of indices (``x[[[0, 1], [1, 0]]]`` is ``x[[0, 1], [1, 0]]``); a list of
    plain integers or booleans is one index array. Seed tests pin this for indexing/setitem."""
    return len(key) < 32 and any(isinstance(k, _SEQUENCE_ITEM_TYPES) for k in key)


def _normalize_key(key, tensor_args: bool = False):
    """Index keys as NumPy understands them: tensors become arrays, lists of ints arrays.

    With ``tensor_args``, a key holding a tensor gives None instead: its tensors are to be op
    arguments (``split_tensor_key``)."""
    if isinstance(key, list) and _sequence_as_tuple(key):
        key = tuple(key)
    elif not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            if tensor_args:
                return None
            k = k._data
            if k.dtype.kind not in "iub":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            # a copy: the key is kept for backward, and the index tensor may change in place
            k = k.astype(bool) if k.dtype == np.uint8 else k.copy()  # torch: bytes are a mask
        elif isinstance(k, (list, tuple)):
            try:
                k = np.asarray(k)
            except ValueError:
                raise IndexError(f"dualad: ragged index sequence {k!r}") from None
            if k.size == 0:
                k = k.astype(np.int64)
            if k.dtype.kind not in "iub":
                raise IndexError(f"dualad: list index must hold integers or booleans: {k!r}")
        elif isinstance(k, np.ndarray):
            if k.dtype.kind not in "iub":
                raise IndexError(
                    f"dualad: arrays used as indices must be integer or boolean: {k!r}"
                )
            k = k.copy()
        elif isinstance(k, float):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got float)"
            )
        out.append(k)
    return tuple(out)


def is_basic_key(key: tuple) -> bool:
    """True if indexing with ``key`` gives a view (ints, slices, None, Ellipsis only)."""
    for k in key:
        if type(k) is bool:
            return False
        if not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))):
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


class _Slot:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<tensor>"


SLOT = _Slot()  # where an index tensor goes in a TensorKey


class TensorKey:
    """The static part of an index key whose tensors are op arguments (``SLOT`` marks them)."""

    __slots__ = ("key",)

    def __init__(self, key: tuple) -> None:
        self.key = key

    def fill(self, xp, arrays: tuple) -> tuple:
        """The array-module key with ``arrays`` (the index tensors' data) in the slots."""
        it = iter(arrays)
        out = []
        for k in self.key:
            if k is SLOT:
                k = next(it)
                if k.dtype == np.uint8:
                    k = k.astype(bool)  # torch: a byte tensor is a mask
            out.append(k)
        return _device_key(xp, tuple(out))

    def with_batch_index(self, position: int) -> TensorKey:
        """This key with one more slot (the batch's arange) before element ``position``."""
        return TensorKey((*self.key[:position], SLOT, *self.key[position:]))

    def __repr__(self) -> str:
        return f"TensorKey({self.key!r})"


def split_tensor_key(key):
    """``(TensorKey, index tensors)`` for a key that holds tensors, None for any other key."""
    if isinstance(key, Tensor):
        parts = (key,)
    elif isinstance(key, tuple):
        parts = key
    elif isinstance(key, list) and _sequence_as_tuple(key):
        parts = tuple(key)
    else:
        return None
    tensors = [k for k in parts if isinstance(k, Tensor)]
    if not tensors:
        return None
    for t in tensors:
        if t.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    static = iter(_normalize_key(tuple(k for k in parts if not isinstance(k, Tensor))))
    template = tuple(SLOT if isinstance(k, Tensor) else next(static) for k in parts)
    return TensorKey(template), tensors


def _device_key(xp, key):
    if xp is np:
        return key
    return tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


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
        xp.add.at(out, key, ct)  # repeated indices accumulate
    return out


def _advanced_layout(key: tuple) -> tuple[bool, int]:
    """For a key with advanced parts: (are they adjacent?, ndim of their broadcast result).

    NumPy puts the advanced result dims where the first advanced index was when the advanced
    indices are adjacent, and first otherwise (ints count as advanced next to arrays).
    """
    positions = []
    ndim = 0
    for i, k in enumerate(key):
        if isinstance(k, np.ndarray):
            positions.append(i)
            ndim = max(ndim, 1 if k.dtype == bool else k.ndim)
        elif type(k) is bool:
            positions.append(i)
            ndim = max(ndim, 1)
        elif isinstance(k, (int, np.integer)):
            positions.append(i)
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    return adjacent, ndim


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


def examples_contiguous(out, bdim: int):
    """``(out, 0)``: a batched advanced-index result (or its VJP, ``index_accumulate``'s zeros
    with the batch at the indexed dim) with each example C-contiguous, as an eager one is (see
    ``_index_impl``). With the batch dim inside (``x[i, :, j]``: NumPy puts the
    index dims first, the batch behind them; or a batched index block after a slice) every
    example was strided, so a reshape of it copied where eager gives a view (missing later
    in-place writes) and view(-1) raised."""
    if bdim == 0:
        return out, 0
    from .elementwise import clone

    return clone(movedim(out, bdim, 0)), 0


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


def resolve_key(key) -> tuple:
    """``(IndexKey, None)`` for an indexing key of constants, or ``(None, (template, tensors))``
    when it holds index tensors: those are op arguments (they may be batched, saved...)."""
    if isinstance(key, IndexKey):
        return key, None
    normalized = _normalize_key(key, tensor_args=True)
    if normalized is None:
        return None, split_tensor_key(key)
    return IndexKey(normalized), None


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
        from .tensor_index import index_tensors

        template, tensors = tensor_key
        return index_tensors(x, tensors, template)
    op = _getitem_view_op if index.basic else _getitem_copy_op
    return dispatch(op, (x,), {"index": index})


def _slice_key(dim: int, item) -> IndexKey:
    return IndexKey((slice(None),) * dim + (item,))


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


# ---------------------------------------------------------------------------------------------
# splitting into views (multi-output view ops) and joining


def _multi_output_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    outs = apply(op, x, **dict(params, dim=params["dim"] + 1))
    return outs, (0,) * len(outs)


def _unbind_impl(xp, x, *, dim):
    # the trailing Ellipsis keeps 0-d results views (x[i] of a 1-d array is a NumPy scalar copy)
    return tuple(x[(slice(None),) * dim + (i, Ellipsis)] for i in range(x.shape[dim]))


def _unbind_vjp(cts, outs, args, params, needs):
    return (stack(list(cts), params["dim"]),)


_unbind_op = register(
    OpDef(
        "unbind",
        _unbind_impl,
        vjp=_unbind_vjp,
        jvp=lambda tangents, outs, args, params: unbind(tangents[0], params["dim"]),
        batch=_multi_output_batch,
        save_args=False,
        view=True,
        nout=-1,
    )
)


def unbind(x, dim: int = 0):
    """The slices of ``x`` along ``dim`` as a tuple of views.

    >>> import dualad
    >>> [t.tolist() for t in dualad.tensor([[1, 2], [3, 4]]).unbind(1)]
    [[1, 3], [2, 4]]
    """
    if x.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = normalize_dim(dim, x.ndim, op="unbind")
    if x.shape[dim] == 0:
        return ()
    return dispatch(_unbind_op, (x,), {"dim": dim})


def _split_impl(xp, x, *, sizes, dim):
    lead = (slice(None),) * dim
    out = []
    start = 0
    for size in sizes:
        out.append(x[(*lead, slice(start, start + size))])
        start += size
    return tuple(out)


def _split_vjp(cts, outs, args, params, needs):
    return (cat(list(cts), params["dim"]),)


_split_op = register(
    OpDef(
        "split",
        _split_impl,
        vjp=_split_vjp,
        jvp=lambda tangents, outs, args, params: _split_sizes(tangents[0], **params),
        batch=_multi_output_batch,
        save_args=False,
        view=True,
        nout=-1,
        node_name="SplitWithSizesBackward0",
    )
)


def _split_sizes(x, *, sizes, dim):
    if not sizes:
        return ()
    return dispatch(_split_op, (x,), {"sizes": tuple(sizes), "dim": dim})


def split(x, split_size_or_sections, dim: int = 0):
    """Split ``x`` along ``dim`` into views: chunks of ``split_size`` (the last one may be
    smaller) when it is an int, or chunks of the given sizes when it is a list.

    >>> import dualad
    >>> [t.tolist() for t in dualad.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    >>> [t.tolist() for t in dualad.arange(5).split([1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, x.ndim, op="split")
    length = x.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(int(s) for s in split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != length:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {length} (input "
                f"tensor's size at dimension {dim}), but got split_sizes={list(sizes)}"
            )
    else:
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and length != 0):
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of "
                f"{length}"
                if size == 0
                else f"split expects split_size be non-negative, but got split_size={size}"
            )
        if length == 0:
            sizes = (0,)
        else:
            sizes = (size,) * (length // size) + ((length % size,) if length % size else ())
    return _split_sizes(x, sizes=sizes, dim=dim)


def chunk(x, chunks: int, dim: int = 0):
    """Split ``x`` into ``chunks`` views of (almost) equal size along ``dim`` (torch.chunk: each
    has ``ceil(size / chunks)`` elements, so fewer chunks may come back).

    >>> import dualad
    >>> [t.tolist() for t in dualad.arange(5).chunk(3)]
    [[0, 1], [2, 3], [4]]
    """
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, x.ndim, op="chunk")
    length = x.shape[dim]
    if length == 0:
        return _split_sizes(x, sizes=(0,) * chunks, dim=dim)
    return split(x, -(-length // chunks), dim)


def tensor_split(x, indices_or_sections, dim: int = 0):
    """NumPy's ``array_split``: ``sections`` nearly equal parts (the first ``size % sections``
    one larger), or the pieces between the given indices. Each piece is a view.

    >>> import dualad
    >>> [t.tolist() for t in dualad.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    >>> [t.tolist() for t in dualad.arange(5).tensor_split([1, 3])]
    [[0], [1, 2], [3, 4]]
    """
    if x.ndim == 0:
        raise RuntimeError("tensor_split expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, x.ndim, op="tensor_split")
    length = x.shape[dim]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0, *(int(i) for i in indices_or_sections), length]
        pieces = []
        for start, stop in itertools.pairwise(bounds):
            start = min(max(start + length if start < 0 else start, 0), length)
            stop = min(max(stop + length if stop < 0 else stop, 0), length)
            pieces.append(getitem(x, _slice_key(dim, slice(start, max(start, stop)))))
        return tuple(pieces)
    sections = int(indices_or_sections)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    small, extra = divmod(length, sections)
    sizes = (small + 1,) * extra + (small,) * (sections - extra)
    return _split_sizes(x, sizes=sizes, dim=dim)


def _stack_impl(xp, *arrays, dim):
    return xp.stack(arrays, axis=dim)


def _stack_vjp(cts, outs, args, params, needs):
    parts = unbind(cts[0], params["dim"])
    return tuple(p if need else None for p, need in zip(parts, needs))


def _fill_tangents(tangents, args):
    from .._creation import zeros_like

    return [zeros_like(a) if t is None else t for a, t in zip(args, tangents)]


def _stack_jvp(tangents, outs, args, params):
    return stack(_fill_tangents(tangents, args), params["dim"])


def _batch_size(args, bdims) -> int:
    for a, b in zip(args, bdims):
        if b is not None:
            return a.shape[b]
    raise RuntimeError("dualad: batching rule called without a batched argument")


def _all_batched_front(args, bdims):
    """Every tensor argument with its batch dim first; unbatched ones are expanded (views)."""
    size = _batch_size(args, bdims)
    out = []
    for a, b in zip(args, bdims):
        if b is None:
            a = broadcast_to(reshape(a, (1, *a.shape)), (size, *a.shape))
        else:
            a = move_bdim_to_front(a, b)
        out.append(a)
    return out


def _join_batch(op, args, bdims, params):
    return apply(op, *_all_batched_front(args, bdims), dim=params["dim"] + 1), 0


_stack_op = register(
    OpDef(
        "stack",
        _stack_impl,
        vjp=_stack_vjp,
        jvp=_stack_jvp,
        batch=_join_batch,
        save_args=False,
    )
)


def _as_tensors(tensors, op: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"dualad.{op}: expected a sequence of tensors, got a single Tensor")
    from .._dispatch import as_arg

    tensors = [as_arg(t) for t in tensors]
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def stack(tensors, dim: int = 0, *, axis=None):
    """Join tensors of one shape along a new dimension ``dim``.

    >>> import dualad
    >>> dualad.stack([dualad.tensor([1, 2]), dualad.tensor([3, 4])], dim=1)
    tensor([[1, 3],
            [2, 4]])
    """
    tensors = _as_tensors(tensors, "stack")
    dim = dim if axis is None else axis
    first = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    dim = normalize_dim(dim, len(first) + 1, op="stack")
    return dispatch(_stack_op, tuple(tensors), {"dim": dim})


def _cat_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    dim = params["dim"]
    grads = []
    start = 0
    for a, need in zip(args, needs):
        stop = start + a.shape[dim]
        grads.append(getitem(ct, _slice_key(dim, slice(start, stop))) if need else None)
        start = stop
    return tuple(grads)


def _cat_jvp(tangents, outs, args, params):
    return cat(_fill_tangents(tangents, args), params["dim"])


_cat_op = register(
    OpDef(
        "cat",
        lambda xp, *arrays, dim: xp.concatenate(arrays, axis=dim),
        vjp=_cat_vjp,
        jvp=_cat_jvp,
        batch=_join_batch,
        save_args=False,
    )
)


def cat(tensors, dim: int | None = None, *, axis=None):
    """Join tensors along an existing dimension ``dim`` (their other sizes must match).

    ``concatenate``/``concat`` are the same op; dtypes promote as in NumPy.

    >>> import dualad
    >>> dualad.cat([dualad.zeros(1, 2), dualad.ones(2, 2)]).shape
    (3, 2)
    """
    tensors = _as_tensors(tensors, "cat")
    dim = pick_dim(dim, axis, default=0)
    # torch's legacy rule: 1-d empty tensors are skipped next to tensors of other ranks
    if any(t.ndim != 1 or t.shape[0] != 0 for t in tensors):
        kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
        if kept and any(t.ndim != 1 for t in kept):
            tensors = kept
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if t.ndim != first.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.ndim} and {t.ndim}"
            )
    dim = normalize_dim(dim, first.ndim, op="cat")
    for i, t in enumerate(tensors):
        for d in range(first.ndim):
            if d != dim and t.shape[d] != first.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{first.shape[d]} but got size {t.shape[d]} for tensor number {i} in the "
                    "list."
                )
    return dispatch(_cat_op, tuple(tensors), {"dim": dim})


concatenate = concat = cat


def atleast_1d(*tensors):
    """``x`` with at least one dimension (a view); several tensors give a tuple."""
    out = tuple(reshape(t, (1,)) if t.ndim == 0 else t for t in _unpack_varargs(tensors))
    return out[0] if len(out) == 1 else out


def atleast_2d(*tensors):
    """``x`` with at least two dimensions: ``(n,)`` becomes ``(1, n)`` (a view)."""
    out = tuple(
        reshape(t, (1,) * (2 - t.ndim) + tuple(t.shape)) if t.ndim < 2 else t
        for t in _unpack_varargs(tensors)
    )
    return out[0] if len(out) == 1 else out


def atleast_3d(*tensors):
    """``x`` with at least three dims: ``(n,)`` -> ``(1, n, 1)``, ``(m, n)`` -> ``(m, n, 1)``."""
    shapes = {0: lambda s: (1, 1, 1), 1: lambda s: (1, s[0], 1), 2: lambda s: (*s, 1)}
    out = tuple(
        reshape(t, shapes[t.ndim](tuple(t.shape))) if t.ndim < 3 else t
        for t in _unpack_varargs(tensors)
    )
    return out[0] if len(out) == 1 else out


def _unpack_varargs(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    from .._dispatch import as_arg

    return tuple(as_arg(t) for t in tensors)


def hstack(tensors):
    """Concatenate column-wise: along dim 1, or dim 0 for 1-d tensors.

    >>> import dualad
    >>> dualad.hstack([dualad.tensor([1, 2]), dualad.tensor([3])])
    tensor([1, 2, 3])
    """
    tensors = [atleast_1d(t) for t in _as_tensors(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenate row-wise after making each tensor at least 2-d.

    >>> import dualad
    >>> dualad.vstack([dualad.tensor([1, 2]), dualad.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return cat([atleast_2d(t) for t in _as_tensors(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors):
    """Concatenate depth-wise (dim 2) after making each tensor at least 3-d."""
    return cat([atleast_3d(t) for t in _as_tensors(tensors, "dstack")], 2)


def column_stack(tensors):
    """Stack 1-d tensors as columns (``(n,)`` -> ``(n, 1)``), then concatenate along dim 1."""
    tensors = _as_tensors(tensors, "column_stack")
    return hstack([reshape(t, (-1, 1)) if t.ndim <= 1 else t for t in tensors])


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


def fliplr(x):
    """Flip the columns (dim 1) of a tensor with at least 2 dims."""
    if x.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(x, 1)


def flipud(x):
    """Flip the rows (dim 0) of a tensor with at least 1 dim."""
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
    from .reductions import sum as reduce_sum

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
    from .reductions import sum as reduce_sum

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
        from .indexing import index_select

        return index_select(x, dim, dispatch(_repeat_index_op, (repeats,), {}))
    repeats = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    return apply1(_repeat_interleave_op, x, {"repeats": repeats, "dim": dim})


# ---------------------------------------------------------------------------------------------
# diagonals and triangles


def _diagonal_view(xp, x, offset, dim1, dim2):
    """``xp.diagonal`` as a writable view when ``x`` is writable (NumPy returns read-only
    diagonal views for backward compatibility; the memory is ``x``'s own, so writing through is
    safe, and in-place ops on diagonals need it)."""
    out = xp.diagonal(x, offset, dim1, dim2)
    if xp is np and not out.flags.writeable and x.flags.writeable:
        out.flags.writeable = True
    return out


def _diag_embed_impl(xp, x, *, shape, offset, dim1, dim2):
    out = xp.zeros(shape, dtype=x.dtype)
    _diagonal_view(xp, out, offset, dim1, dim2)[...] = x
    return out


def _diagonal_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, **dict(params, dim1=params["dim1"] + 1, dim2=params["dim2"] + 1)), 0


def _diag_embed_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    shifted = dict(params, dim1=params["dim1"] + 1, dim2=params["dim2"] + 1)
    shifted["shape"] = (x.shape[0], *params["shape"])
    return apply(op, x, **shifted), 0


_diagonal_op = linear(
    "diagonal",
    lambda xp, x, *, offset, dim1, dim2: _diagonal_view(xp, x, offset, dim1, dim2),
    lambda ct, x, *, offset, dim1, dim2: dispatch(
        _diag_embed_op,
        (ct,),
        {"shape": tuple(x.shape), "offset": offset, "dim1": dim1, "dim2": dim2},
    ),
    batch=_diagonal_batch,
    view=True,
)
_diag_embed_op = linear(
    "diag_embed",
    _diag_embed_impl,
    lambda ct, x, *, shape, offset, dim1, dim2: dispatch(
        _diagonal_op, (ct,), {"offset": offset, "dim1": dim1, "dim2": dim2}
    ),
    batch=_diag_embed_batch,
)


def _diagonal_dims(dim1, dim2, ndim, op):
    d1 = normalize_dim(dim1, ndim, op=op)
    d2 = normalize_dim(dim2, ndim, op=op)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(x, offset: int = 0, dim1: int = 0, dim2: int = 1, *, axis1=None, axis2=None):
    """The diagonal of ``x`` w.r.t. ``dim1`` and ``dim2`` (``offset`` > 0: above it), as the
    last dim of a writable view (in-place ops on it change ``x``).

    >>> import dualad
    >>> dualad.arange(9).reshape(3, 3).diagonal(1)
    tensor([1, 5])
    """
    if x.ndim < 2:
        raise RuntimeError(f"diagonal(): input must have at least 2 dimensions, but got {x.ndim}")
    dim1 = dim1 if axis1 is None else axis1
    dim2 = dim2 if axis2 is None else axis2
    d1, d2 = _diagonal_dims(dim1, dim2, x.ndim, "diagonal")
    params = {"offset": int(offset), "dim1": d1, "dim2": d2}
    return dispatch(_diagonal_op, (x,), params)


def diag_embed(x, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """A tensor whose diagonals (w.r.t. the new dims ``dim1``, ``dim2``) are the last dim of
    ``x``; zeros elsewhere.

    >>> import dualad
    >>> dualad.diag_embed(dualad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    if x.ndim < 1:
        raise RuntimeError("diag_embed(): input must have at least 1 dimension")
    d1, d2 = _diagonal_dims(dim1, dim2, x.ndim + 1, "diag_embed")
    offset = int(offset)
    size = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])
    low, high = sorted((d1, d2))
    shape.insert(low, size)
    shape.insert(high, size)
    params = {"shape": tuple(shape), "offset": offset, "dim1": d1, "dim2": d2}
    return dispatch(_diag_embed_op, (x,), params)


_diagonal_of = diagonal  # ``diag``'s parameter is named ``diagonal`` (torch)


def diag(x, diagonal: int = 0):
    """1-d ``x``: the square matrix with ``x`` on its ``diagonal``-th diagonal; 2-d ``x``: a
    copy of that diagonal.

    >>> import dualad
    >>> dualad.diag(dualad.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    if x.ndim == 1:
        return diag_embed(x, diagonal, 0, 1)
    if x.ndim == 2:
        from .elementwise import clone

        return clone(_diagonal_of(x, diagonal))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


def _triangle_batch(op, args, bdims, params):
    return apply(op, move_bdim_to_front(args[0], bdims[0]), **params), 0


_tril_op = linear(
    "tril",
    lambda xp, x, *, diagonal: xp.tril(x, diagonal),
    lambda ct, x, *, diagonal: dispatch(_tril_op, (ct,), {"diagonal": diagonal}),
    batch=_triangle_batch,
)
_triu_op = linear(
    "triu",
    lambda xp, x, *, diagonal: xp.triu(x, diagonal),
    lambda ct, x, *, diagonal: dispatch(_triu_op, (ct,), {"diagonal": diagonal}),
    batch=_triangle_batch,
)


def _triangle(op, name, x, diagonal):
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return apply1(op, x, {"diagonal": int(diagonal)})


def tril(x, diagonal: int = 0, *, k=None):
    """The lower triangle of the last two dims (elements on and below the ``diagonal``-th
    diagonal); zeros elsewhere. NumPy's ``k=`` is accepted.

    >>> import dualad
    >>> dualad.ones(2, 2).tril()
    tensor([[1., 0.],
            [1., 1.]])
    """
    return _triangle(_tril_op, "tril", x, diagonal if k is None else k)


def triu(x, diagonal: int = 0, *, k=None):
    """The upper triangle of the last two dims (on and above the ``diagonal``-th diagonal).

    >>> import dualad
    >>> dualad.ones(2, 2).triu(1)
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _triangle(_triu_op, "triu", x, diagonal if k is None else k)


# fmt: off
TENSOR_METHODS = (
    "reshape", "view", "view_as", "reshape_as", "flatten", "unflatten", "unsqueeze", "squeeze",
    "broadcast_to", "expand", "expand_as", "permute", "transpose", "swapaxes", "swapdims",
    "movedim", "moveaxis", "t", "select", "narrow", "unbind", "split", "chunk", "tensor_split",
    "flip", "fliplr", "flipud", "roll", "tile", "repeat", "repeat_interleave", "diagonal", "diag",
    "diag_embed", "tril", "triu",
)
INPLACE_METHODS = ("tril", "triu")

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "broadcast_to", "cat",
    "chunk", "column_stack", "concat", "concatenate", "diag", "diag_embed", "diagonal", "dstack",
    "expand", "expand_as", "flatten", "flip", "fliplr", "flipud", "getitem", "hstack",
    "matrix_transpose", "moveaxis", "movedim", "narrow", "permute", "repeat_interleave",
    "reshape", "reshape_as", "roll", "row_stack", "select", "split", "squeeze", "stack",
    "swapaxes", "swapdims", "t", "tensor_split", "tile", "transpose", "tril", "triu", "unbind",
    "unflatten", "unsqueeze", "view", "view_as", "vstack",
]
# fmt: on
