"""index_select / index_add, masks (masked_fill, masked_select), take and nonzero: like the ops of
``gather_scatter.py``, they take their index tensor (or boolean mask) as an argument."""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor
from .._dispatch import SCALAR_TYPES, OpDef, apply, dispatch, register
from .._opdef import GATHER
from .._tensor import Tensor
from . import _xp_compat
from ._batching import batch_size, batched_front, front
from ._batching import elementwise as elementwise_batch
from ._dims import normalize_dim
from ._exports import Exports
from ._helpers import _broadcast_to_output
from .base import broadcast_to, move_bdim_to_front, reshape
from .casts import astype
from .comparison import where
from .gather_scatter import _accumulating_jvp, _index_tensor, _scatter_add_op, _zeros, gather
from .slicing import getitem

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# index_select / index_add


def _index_select_impl(xp, x, index, *, dim):
    return xp.take(x, index, axis=dim)


def _index_select_vjp(cts, outs, args, params, needs):
    x, index = args
    return index_add(_zeros(x.shape, cts[0]), params["dim"], index, cts[0]), None


def _index_select_batch(op, args, bdims, params):
    x, index = args
    dim = params["dim"]
    if bdims[1] is None:
        return apply(op, move_bdim_to_front(x, bdims[0]), index, dim=dim + 1), 0
    # a batched index picks different rows per example: a gather with the index spread out
    x, index = batched_front(args, bdims)
    size = index.shape[0]
    shape = list(x.shape)
    shape[dim + 1] = index.shape[1]
    view = [size] + [1] * (x.ndim - 1)
    view[dim + 1] = index.shape[1]
    return gather(x, dim + 1, broadcast_to(reshape(index, tuple(view)), tuple(shape))), 0


_index_select_op = register(
    OpDef(
        "index_select",
        _index_select_impl,
        vjp=_index_select_vjp,
        jvp=lambda tangents, outs, args, params: index_select(tangents[0], params["dim"], args[1]),
        batch=_index_select_batch,
        sparsity=GATHER,
    )
)


def _vector_index(index, x: Tensor, op: str) -> Tensor:
    index = _index_tensor(index, x, op)
    if index.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    return reshape(index, (1,)) if index.ndim == 0 else index


@public.method
def index_select(x, dim: int, index):
    """The entries of ``x`` at positions ``index`` (a 1-d integer tensor) along ``dim``.

    >>> import dualad
    >>> dualad.arange(6).reshape(2, 3).index_select(1, dualad.tensor([2, 0]))
    tensor([[2, 0],
            [5, 3]])
    """
    index = _vector_index(index, x, "index_select")
    if x.ndim == 0:
        return reshape(index_select(reshape(x, (1,)), 0, index), ())
    dim = normalize_dim(dim, x.ndim, op="index_select")
    return dispatch(_index_select_op, (x, index), {"dim": dim})


def _index_add_impl(xp, x, index, source, *, dim, alpha):
    out = x.copy()
    if alpha != 1:
        source = source * alpha
    _xp_compat.add_at(xp, out, (slice(None),) * dim + (index,), source)
    return out


def _index_add_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    _, index, _ = args
    alpha = params["alpha"]
    grad_source = None
    if needs[2]:
        grad_source = index_select(ct, params["dim"], index)
        if alpha != 1:
            grad_source = grad_source * (alpha.conjugate() if isinstance(alpha, complex) else alpha)
    return (ct if needs[0] else None), None, grad_source


_index_add_jvp = _accumulating_jvp(
    lambda t_x, index, t_source, params: index_add(
        t_x, params["dim"], index, t_source, alpha=params["alpha"]
    )
)


def _index_add_batch(op, args, bdims, params):
    """index_add along ``dim``; a batched index becomes a scatter_add with the index spread over
    the source's shape (each example adds at its own positions)."""
    x, index, source = args
    size = batch_size(args, bdims)
    dim = params["dim"]
    x = front(x, bdims[0], size)
    source = front(source, bdims[2], size)
    if bdims[1] is None:
        return apply(op, x, index, source, dim=dim + 1, alpha=params["alpha"]), 0
    index = move_bdim_to_front(index, bdims[1])
    view = [size] + [1] * (source.ndim - 1)
    view[dim + 1] = index.shape[1]
    index = broadcast_to(reshape(index, tuple(view)), tuple(source.shape))
    if params["alpha"] != 1:
        source = source * params["alpha"]
    return apply(_scatter_add_op, x, index, source, dim=dim + 1), 0


_index_add_op = register(
    OpDef(
        "index_add",
        _index_add_impl,
        vjp=_index_add_vjp,
        jvp=_index_add_jvp,
        batch=_index_add_batch,
    )
)


@public.inplace
def index_add(x, dim: int, index, source, *, alpha=1):
    """A copy of ``x`` with ``alpha * source`` added at positions ``index`` along ``dim``;
    repeated indices accumulate.

    >>> import dualad
    >>> dualad.zeros(3).index_add(0, dualad.tensor([0, 0]), dualad.tensor([1.0, 2.0]))
    tensor([3., 0., 0.])
    """
    index = _vector_index(index, x, "index_add")
    dim = normalize_dim(dim, x.ndim, op="index_add")
    expected = list(x.shape)
    if expected:
        expected[dim] = index.shape[0]
    if list(source.shape) != expected:
        raise RuntimeError(
            f"index_add_(): Source/destination tensor must have same slice shapes. Source "
            f"{list(source.shape)}, destination {list(x.shape)}, index {list(index.shape)} "
            f"along dim {dim}"
        )
    return dispatch(_index_add_op, (x, index, source), {"dim": dim, "alpha": alpha})


# ---------------------------------------------------------------------------------------------
# masks


def _masked_fill_impl(xp, x, mask, value):
    return xp.where(mask, value, x).astype(x.dtype, copy=False)


def _masked_fill_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    mask = args[1]
    grad_x = where(mask, 0.0, ct) if needs[0] else None
    grad_value = where(mask, ct, 0.0) if needs[2] else None  # summed to a 0-d by the engine
    return grad_x, None, grad_value


def _masked_fill_jvp(tangents, outs, args, params):
    t_x, _, t_value = tangents
    out = where(args[1], 0.0 if t_value is None else t_value, 0.0 if t_x is None else t_x)
    if out.dtype != outs[0].dtype:
        out = astype(out, outs[0].dtype)
    return _broadcast_to_output(out, outs[0])


_masked_fill_op = register(
    OpDef(
        "masked_fill",
        _masked_fill_impl,
        vjp=_masked_fill_vjp,
        jvp=_masked_fill_jvp,
        batch=elementwise_batch,
    )
)


def _check_mask(op: str, mask) -> None:
    if mask.dtype != np.bool_:
        raise RuntimeError(
            f"{op} only supports boolean masks, but got mask with dtype {mask.dtype}"
        )


@public.inplace
def masked_fill(x, mask, value):
    """``x`` with ``value`` (a number or a 0-d tensor, which may require grad) where ``mask``
    is true; ``mask`` broadcasts with ``x``.

    >>> import dualad
    >>> dualad.tensor([1.0, 2.0, 3.0]).masked_fill(dualad.tensor([True, False, True]), 0.0)
    tensor([0., 2., 0.])
    """
    if not isinstance(mask, Tensor):
        mask = as_tensor(np.asarray(mask), device=x.device)
    _check_mask("masked_fill_", mask)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        if value.dtype != x.dtype:
            value = astype(value, x.dtype)
    elif type(value) not in SCALAR_TYPES:
        value = float(value) if x.dtype.kind != "c" else complex(value)
    return dispatch(_masked_fill_op, (x, mask, value), {})


@public.method
def masked_select(x, mask):
    """The elements of ``x`` where ``mask`` is true, as a 1-d tensor (both broadcast).

    >>> import dualad
    >>> dualad.tensor([1.0, 2.0, 3.0]).masked_select(dualad.tensor([True, False, True]))
    tensor([1., 3.])
    """
    if not isinstance(mask, Tensor):
        mask = as_tensor(np.asarray(mask), device=x.device)
    _check_mask("masked_select", mask)
    shape = np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    if tuple(mask.shape) != shape:
        mask = broadcast_to(mask, shape)
    return getitem(broadcast_to(x, shape), (mask,))


@public.method
def take(x, index, axis: int | None = None):
    """torch.take: the elements of the flattened ``x`` at ``index`` (output has index's shape).
    With NumPy's ``axis=``, the index selects along that axis instead.

    >>> import dualad
    >>> dualad.tensor([[1, 2], [3, 4]]).take(dualad.tensor([0, 3]))
    tensor([1, 4])
    """
    index = _index_tensor(index, x, "take")
    if axis is None:
        return getitem(reshape(x, (-1,)), (index,))
    axis = normalize_dim(axis, x.ndim, op="take")
    return getitem(x, (slice(None),) * axis + (index,))


# ---------------------------------------------------------------------------------------------
# nonzero (no gradient: integer output of data-dependent shape)


def _nonzero_impl(xp, x):
    if x.ndim == 0:
        return xp.zeros((1 if bool(x) else 0, 0), dtype=xp.int64)
    return xp.stack(xp.nonzero(x), axis=1).astype(xp.int64, copy=False)


_nonzero_op = register(OpDef("nonzero", _nonzero_impl, differentiable=False))


@public.method
def nonzero(x, *, as_tuple: bool = False):
    """The indices of the nonzero elements of ``x``: an ``(n, x.ndim)`` int64 tensor, or with
    ``as_tuple=True`` one 1-d tensor per dim (NumPy's ``nonzero``).

    >>> import dualad
    >>> dualad.tensor([[0, 1], [2, 0]]).nonzero()
    tensor([[0, 1],
            [1, 0]])
    """
    if as_tuple:
        if x.ndim == 0:
            x = reshape(x, (1,))
        found = dispatch(_nonzero_op, (x,), {})
        return tuple(getitem(found, (slice(None), d)) for d in range(x.ndim))
    return dispatch(_nonzero_op, (x,), {})


@public.method
def argwhere(x):
    """``nonzero(x)``: the ``(n, x.ndim)`` indices of the nonzero elements.

    >>> import dualad
    >>> dualad.argwhere(dualad.tensor([[0.0, 1.0], [2.0, 0.0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    return nonzero(x)
