"""Gather and scatter: ops that take an integer index tensor (or a boolean mask) as an
argument, as opposed to ``x[key]`` (``slicing.getitem``), whose key is a static parameter.

Index tensors are ordinary (non-differentiable) positional arguments, so they live on the data's
device and can carry a batch dim under vmap. The gradient rules pair up: gather <-> scatter_add,
index_select <-> index_add, scatter(value) -> the cotangent with the written positions zeroed.
Like PyTorch's, these nodes save their arguments (``x`` included), so changing ``x`` in place
after the op and before backward raises the usual version error.
"""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor, zeros_for
from .._dispatch import SCALAR_TYPES, OpDef, apply, dispatch, register
from .._opdef import GATHER
from .._tensor import Tensor
from . import _xp_compat
from ._batching import batched_front
from ._dims import normalize_dim
from ._exports import Exports
from ._keys import IndexKey
from .base import broadcast_to, reshape
from .slicing import index_put_zeros

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _index_tensor(index, like: Tensor, op: str) -> Tensor:
    """``index`` as an integer tensor on ``like``'s device."""
    if not isinstance(index, Tensor):
        array = np.asarray(index)
        if array.size == 0 and array.dtype.kind == "f":
            array = array.astype(np.int64)
        index = as_tensor(array, device=like.device)
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, but got {index.dtype}")
    return index


def _along_key(xp, index, dim: int) -> tuple:
    """The advanced-index key that pairs ``index[i, j, k]`` with position
    ``(i, index[i, j, k], k)`` (for dim 1): aranges broadcast along every other dim."""
    key = []
    ndim = index.ndim
    for d, size in enumerate(index.shape):
        if d == dim:
            key.append(index)
        else:
            shape = [1] * ndim
            shape[d] = size
            key.append(xp.arange(size).reshape(shape))
    return tuple(key)


def _leading_block(array, shape):
    """``array[:shape[0], :shape[1], ...]`` (torch's scatter only reads that block of src)."""
    if tuple(array.shape) == tuple(shape):
        return array
    return array[tuple(slice(0, n) for n in shape)]


def _pad_to(t: Tensor, shape) -> Tensor:
    """``t`` in the leading block of zeros of ``shape`` (the transpose of ``_leading_block``)."""
    shape = tuple(shape)
    if tuple(t.shape) == shape:
        return t
    return index_put_zeros(t, IndexKey(tuple(slice(0, n) for n in t.shape)), shape)


def _zeros(shape, like: Tensor) -> Tensor:
    return zeros_for(tuple(shape), like.dtype, (like,))


def _check_along(op: str, x: Tensor, dim: int, index: Tensor, src=None) -> None:
    """torch's shape rules for gather/scatter: same ndim; index no larger than x (apart from
    ``dim``) and than src (everywhere)."""
    if index.ndim != x.ndim and not (x.ndim == 0 and index.ndim <= 1):
        raise RuntimeError(
            f"{op}(): Index tensor must have the same number of dimensions as input tensor "
            f"(got index {list(index.shape)} and input {list(x.shape)})"
        )
    for d in range(index.ndim):
        if d != dim and x.ndim and index.shape[d] > x.shape[d]:
            raise RuntimeError(
                f"{op}(): Size does not match at dimension {d} expected index "
                f"{list(index.shape)} to be smaller than self {list(x.shape)} apart from "
                f"dimension {dim}"
            )
    if isinstance(src, Tensor):
        if src.ndim != index.ndim:
            raise RuntimeError(
                f"{op}(): Index tensor must have the same number of dimensions as src tensor"
            )
        for d in range(index.ndim):
            if index.shape[d] > src.shape[d]:
                raise RuntimeError(
                    f"{op}(): Size does not match at dimension {d} expected index "
                    f"{list(index.shape)} to be smaller than src {list(src.shape)}"
                )


def _along_batch(op, args, bdims, params):
    """gather/scatter/scatter_add: every tensor argument batched at 0, ``dim`` shifted."""
    return apply(op, *batched_front(args, bdims), **dict(params, dim=params["dim"] + 1)), 0


# ---------------------------------------------------------------------------------------------
# gather and scatter


def _gather_impl(xp, x, index, *, dim):
    return x[_along_key(xp, index, dim)]


def _gather_vjp(cts, outs, args, params, needs):
    x, index = args
    return scatter_add(_zeros(x.shape, cts[0]), params["dim"], index, cts[0]), None


def _gather_jvp(tangents, outs, args, params):
    return gather(tangents[0], params["dim"], args[1])


_gather_op = register(
    OpDef(
        "gather",
        _gather_impl,
        vjp=_gather_vjp,
        jvp=_gather_jvp,
        batch=_along_batch,
        sparsity=GATHER,
    )
)


@public.method
def gather(x, dim: int, index, *, sparse_grad: bool = False):
    """Values of ``x`` along ``dim`` at ``index``: ``out[i][j] = x[index[i][j]][j]`` (dim 0).

    ``index`` has x's number of dims and is no larger than ``x`` apart from ``dim``; the output
    has index's shape. ``sparse_grad`` is accepted and ignored (gradients are dense).

    >>> import dualad
    >>> x = dualad.tensor([[1, 2], [3, 4]])
    >>> dualad.gather(x, 1, dualad.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    index = _index_tensor(index, x, "gather")
    dim = normalize_dim(dim, x.ndim, op="gather")
    _check_along("gather", x, dim, index)
    if x.ndim == 0:
        return reshape(gather(reshape(x, (1,)), 0, reshape(index, (-1,))), index.shape)
    return dispatch(_gather_op, (x, index), {"dim": dim})


def _scatter_impl(xp, x, index, src, *, dim):
    out = x.copy()
    if type(src) in SCALAR_TYPES:
        out[_along_key(xp, index, dim)] = src
    else:
        out[_along_key(xp, index, dim)] = _leading_block(src, index.shape)
    return out


def _scatter_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    _, index, src = args
    dim = params["dim"]
    grad_x = scatter(ct, dim, index, 0) if needs[0] else None
    grad_src = _pad_to(gather(ct, dim, index), src.shape) if needs[2] else None
    return grad_x, None, grad_src


def _scatter_jvp(tangents, outs, args, params):
    t_x, _, t_src = tangents
    _, index, _ = args
    if t_x is None:
        t_x = _zeros(outs[0].shape, outs[0])
    if t_src is None:
        t_src = 0
    return scatter(t_x, params["dim"], index, t_src)


_scatter_op = register(
    OpDef("scatter", _scatter_impl, vjp=_scatter_vjp, jvp=_scatter_jvp, batch=_along_batch)
)


def _src_argument(op: str, x: Tensor, src, value):
    if (src is None) == (value is None):
        raise TypeError(f"dualad.{op}: pass exactly one of src (a tensor or number) and value")
    src = value if src is None else src
    if isinstance(src, Tensor):
        if src.dtype != x.dtype:
            raise RuntimeError(
                f"{op}(): Expected self.dtype to be equal to src.dtype (got {x.dtype} and "
                f"{src.dtype})"
            )
        return src
    if type(src) in SCALAR_TYPES:
        return src
    if isinstance(src, np.generic):
        return src.item()
    return as_tensor(np.asarray(src, dtype=x.dtype), device=x.device)


@public.inplace
def scatter(x, dim: int, index, src=None, *, value=None, reduce=None):
    """A copy of ``x`` with ``src`` written at ``index`` along ``dim``:
    ``out[index[i][j]][j] = src[i][j]`` (dim 0). ``src`` is a tensor (only its leading block of
    index's shape is read) or a number (``value=``). With repeated indices, which write wins is
    unspecified (as in torch).

    >>> import dualad
    >>> dualad.zeros(2, 3).scatter(1, dualad.tensor([[2], [0]]), 5.0)
    tensor([[0., 0., 5.],
            [5., 0., 0.]])
    """
    if reduce is not None:
        raise NotImplementedError("dualad.scatter: reduce= is not supported; use scatter_add")
    index = _index_tensor(index, x, "scatter")
    src = _src_argument("scatter", x, src, value)
    dim = normalize_dim(dim, x.ndim, op="scatter")
    _check_along("scatter", x, dim, index, src)
    return dispatch(_scatter_op, (x, index, src), {"dim": dim})


def _scatter_add_impl(xp, x, index, src, *, dim):
    out = x.copy()
    _xp_compat.add_at(xp, out, _along_key(xp, index, dim), _leading_block(src, index.shape))
    return out


def _scatter_add_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    _, index, src = args
    grad_src = _pad_to(gather(ct, params["dim"], index), src.shape) if needs[2] else None
    return (ct if needs[0] else None), None, grad_src


def _accumulating_jvp(accumulate):
    """JVP of ``(x, index, src) -> x`` with ``src`` added in at ``index``: linear in ``x`` and
    ``src``, so ``accumulate(t_x, index, t_src, params)`` (zeros for a missing ``t_x``)."""

    def jvp(tangents, outs, args, params):
        t_x, _, t_src = tangents
        if t_src is None:
            return t_x
        if t_x is None:
            t_x = _zeros(outs[0].shape, t_src)
        return accumulate(t_x, args[1], t_src, params)

    return jvp


_scatter_add_jvp = _accumulating_jvp(
    lambda t_x, index, t_src, params: scatter_add(t_x, params["dim"], index, t_src)
)


_scatter_add_op = register(
    OpDef(
        "scatter_add",
        _scatter_add_impl,
        vjp=_scatter_add_vjp,
        jvp=_scatter_add_jvp,
        batch=_along_batch,
    )
)


@public.inplace
def scatter_add(x, dim: int, index, src):
    """A copy of ``x`` with ``src`` added at ``index`` along ``dim``; repeated indices
    accumulate: ``out[index[i][j]][j] += src[i][j]`` (dim 0).

    >>> import dualad
    >>> dualad.zeros(3).scatter_add(0, dualad.tensor([0, 0, 2]), dualad.ones(3))
    tensor([2., 0., 1.])
    """
    index = _index_tensor(index, x, "scatter_add")
    if not isinstance(src, Tensor):
        src = _src_argument("scatter_add", x, src, None)
        if not isinstance(src, Tensor):
            raise TypeError("dualad.scatter_add: src must be a tensor")
    dim = normalize_dim(dim, x.ndim, op="scatter_add")
    if src.dtype != x.dtype:
        raise RuntimeError(
            f"scatter_add(): Expected self.dtype to be equal to src.dtype (got {x.dtype} and "
            f"{src.dtype})"
        )
    _check_along("scatter_add", x, dim, index, src)
    return dispatch(_scatter_add_op, (x, index, src), {"dim": dim})


@public.method
def take_along_dim(x, indices, dim: int | None = None):
    """NumPy's ``take_along_axis``: like ``gather``, but x and indices broadcast against each
    other apart from ``dim``; with ``dim`` None both are flattened.

    >>> import dualad
    >>> x = dualad.tensor([[10, 30, 20], [60, 40, 50]])
    >>> dualad.take_along_dim(x, dualad.tensor([[0], [1]]), dim=1)
    tensor([[10],
            [40]])
    """
    indices = _index_tensor(indices, x, "take_along_dim")
    if dim is None:
        return gather(reshape(x, (-1,)), 0, reshape(indices, (-1,)))
    if x.ndim != indices.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {x.ndim} dimensions for input, and {indices.ndim} dimensions "
            "for indices"
        )
    dim = normalize_dim(dim, x.ndim, op="take_along_dim")
    x_shape = list(x.shape)
    i_shape = list(indices.shape)
    x_shape[dim] = i_shape[dim] = 1
    try:
        common = list(np.broadcast_shapes(tuple(x_shape), tuple(i_shape)))
    except ValueError:
        raise RuntimeError(
            f"take_along_dim(): shapes {list(x.shape)} and {list(indices.shape)} cannot be "
            f"broadcast apart from dimension {dim}"
        ) from None
    common[dim] = x.shape[dim]
    x = broadcast_to(x, tuple(common))
    common[dim] = indices.shape[dim]
    indices = broadcast_to(indices, tuple(common))
    return gather(x, dim, indices)
