"""amax/amin and max/min/argmax/argmin: ties in amax/amin and the full max/min share the
gradient evenly, ``max(x, dim)`` sends it to the selected index only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._dispatch import OpDef, apply, apply1, register
from .._opdef import SELECT
from .._tensor import Tensor
from ._dims import normalize_dim, pick_dim, pick_keepdim
from ._exports import Exports
from ._reducing import (
    _as_tensor,
    _check_nonempty,
    _check_ordered,
    _count,
    _dim_batch,
    _fresh,
    _keep,
    _numel,
    _reduce_params,
    _sum,
)
from .base import _reduction_batch, move_bdim_to_front, reshape
from .comparison import eq, isnan, logical_and, logical_or, where
from .minmax import maximum, minimum

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# amax, amin and the full max/min: ties share the gradient evenly


def _ties(x, value):
    """Where ``x`` equals the reduced ``value`` (a NaN result is matched by NaN inputs)."""
    return logical_or(eq(x, value), logical_and(isnan(x), isnan(value)))


def _extremum_vjp(cts, outs, args, params, needs):
    x = args[0]
    dims, keepdim = params["dims"], params["keepdim"]
    if not dims:
        return (cts[0],)
    ct = _keep(cts[0], x.shape, dims, keepdim)
    mask = _ties(x, _keep(outs[0], x.shape, dims, keepdim))
    return (where(mask, ct / _count(mask, dims, True, ct.dtype), 0),)


def _extremum_jvp(tangents, outs, args, params):
    x, t = args[0], tangents[0]
    dims, keepdim = params["dims"], params["keepdim"]
    if not dims:
        return _fresh(t)
    mask = _ties(x, _keep(outs[0], x.shape, dims, keepdim))
    return _sum(where(mask, t, 0), dims, keepdim) / _count(mask, dims, keepdim, t.dtype)


def _extremum_op(name, largest, node_name=None):
    def impl(xp, x, *, dims, keepdim):
        return (xp.max if largest else xp.min)(x, axis=dims, keepdims=keepdim)

    return register(
        OpDef(
            name,
            impl,
            vjp=_extremum_vjp,
            jvp=_extremum_jvp,
            batch=_reduction_batch,
            save_out=True,
            node_name=node_name,
        )
    )


_amax_op = _extremum_op("amax", True)
_amin_op = _extremum_op("amin", False)
_max_all_op = _extremum_op("max_all", True, "MaxBackward1")
_min_all_op = _extremum_op("min_all", False, "MinBackward1")


def _extremum(op, x, dim, axis, keepdim, keepdims, name):
    x = _as_tensor(x)
    _check_ordered(x, name)
    params = _reduce_params(x, dim, axis, keepdim, keepdims, name)
    _check_nonempty(x, params["dims"], name)
    return apply1(op, x, params)


@public.method
def amax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Maximum over ``dim`` (all dims by default); tied maxima share the gradient evenly.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 3.0, 3.0], requires_grad=True)
    >>> dualad.amax(x).backward()
    >>> x.grad
    tensor([0. , 0.5, 0.5])
    """
    return _extremum(_amax_op, x, dim, axis, keepdim, keepdims, "amax")


@public.method
def amin(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Minimum over ``dim`` (all dims by default); tied minima share the gradient evenly.

    >>> import dualad
    >>> x = dualad.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> dualad.amin(x, dim=1)
    tensor([1., 1.], grad_fn=<AminBackward0>)
    >>> dualad.autograd.grad(dualad.amin(x), x)  # the two tied minima share
    (tensor([[0. , 0.5],
            [0.5, 0. ]]),)
    """
    return _extremum(_amin_op, x, dim, axis, keepdim, keepdims, "amin")


# ---------------------------------------------------------------------------------------------
# max/min along one dim: (values, indices); the gradient goes to the selected index only

# NamedTuple's call form: fields typed Tensor for type checkers, the class keeps its name
max_result = NamedTuple("max", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014
min_result = NamedTuple("min", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014


def _index_mask_impl(xp, index, *, dim, size, keepdim):
    if not keepdim:
        index = xp.expand_dims(index, dim)
    positions = xp.arange(size).reshape((size,) + (1,) * (index.ndim - dim - 1))
    return positions == index


_index_mask_op = register(
    OpDef("index_mask", _index_mask_impl, batch=_dim_batch, differentiable=False)
)


def _index_mask(index, dim, size, keepdim):
    """Boolean mask, true at ``index`` along ``dim`` (a one-hot scatter of indices)."""
    return apply1(_index_mask_op, index, {"dim": dim, "size": size, "keepdim": keepdim})


def _select_impl(largest):
    def impl(xp, x, *, dim, keepdim):
        pick = xp.argmax if largest else xp.argmin
        index = pick(x, axis=dim, keepdims=True)
        values = xp.take_along_axis(x, index, axis=dim)
        index = index.astype(xp.int64, copy=False)
        if not keepdim:
            return xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
        return values, index

    return impl


def _select_vjp(cts, outs, args, params, needs):
    shape = args[0].shape
    dim, keepdim = params["dim"], params["keepdim"]
    mask = _index_mask(outs[1], dim, shape[dim], keepdim)
    return (where(mask, _keep(cts[0], shape, (dim,), keepdim), 0),)


def _select_jvp(tangents, outs, args, params):
    # the indices output is not differentiable: its tangent is None (a symbolic zero)
    dim, keepdim = params["dim"], params["keepdim"]
    mask = _index_mask(outs[1], dim, args[0].shape[dim], keepdim)
    return (_sum(where(mask, tangents[0], 0), (dim,), keepdim), None)


def _select_op(name, largest, node_name):
    return register(
        OpDef(
            name,
            _select_impl(largest),
            vjp=_select_vjp,
            jvp=_select_jvp,
            batch=_dim_batch,
            save_args=False,
            save_out=True,
            nout=2,
            nondiff_outputs=(1,),
            node_name=node_name,
            sparsity=SELECT,
        )
    )


_max_dim_op = _select_op("max_dim", True, "MaxBackward0")
_min_dim_op = _select_op("min_dim", False, "MinBackward0")


def _select_extremum(op, x, dim, keepdim, name, result):
    x = _as_tensor(x)
    _check_ordered(x, name)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(
            f"dualad.{name}: dim must be an int, a tuple of ints or None (or a tensor for the "
            f"elementwise {name}imum), got {type(dim).__name__}"
        )
    dim = int(dim)
    if x.ndim == 0:  # torch: dim 0 or -1 of a 0-d tensor selects the element itself
        normalize_dim(dim, 0, op=name)
        return result(*apply1(op, reshape(x, (1,)), {"dim": 0, "keepdim": False}))
    dim = normalize_dim(dim, x.ndim, op=name)
    _check_nonempty(x, (dim,), name)
    return result(*apply1(op, x, {"dim": dim, "keepdim": keepdim}))


# max's and min's forms: (name, elementwise op, full reduction, reduction over dims, selection
# along one dim, the selection's result type)
_MAX = ("max", maximum, _max_all_op, _amax_op, _max_dim_op, max_result)
_MIN = ("min", minimum, _min_all_op, _amin_op, _min_dim_op, min_result)


def _max_or_min(forms, x, dim, keepdim, axis, keepdims, other):
    """``max`` or ``min`` (``forms``: ``_MAX`` or ``_MIN``) in PyTorch's three forms."""
    name, elementwise, full, over_dims, along_dim, result = forms
    if other is not None or isinstance(dim, (Tensor, np.ndarray)):
        return elementwise(x, dim if other is None else other)
    dim = pick_dim(dim, axis)
    if dim is None:
        return _extremum(full, x, None, None, keepdim, keepdims, name)
    if isinstance(dim, (tuple, list)):
        return _extremum(over_dims, x, dim, None, keepdim, keepdims, name)
    return _select_extremum(along_dim, x, dim, pick_keepdim(keepdim, keepdims), name, result)


@public.method
def max(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, other=None):
    """Maximum, in PyTorch's three forms.

    - ``max(x)``: the largest value (tied maxima share the gradient evenly);
    - ``max(x, dim, keepdim=False)``: a named tuple ``(values, indices)`` (the gradient goes to
      the selected index only; indices are not differentiable);
    - ``max(a, b)`` with a tensor ``b``: the elementwise maximum (``dualad.maximum``).

    A tuple of dims (NumPy's ``axis=(0, 1)``) reduces like ``amax``.

    >>> import dualad
    >>> x = dualad.tensor([[1.0, 5.0], [4.0, 2.0]])
    >>> dualad.max(x)
    tensor(5.)
    >>> dualad.max(x, dim=1).indices
    tensor([1, 0])
    """
    return _max_or_min(_MAX, x, dim, keepdim, axis, keepdims, other)


@public.method
def min(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, other=None):
    """Minimum, in PyTorch's three forms (see ``max``).

    >>> import dualad
    >>> dualad.min(dualad.tensor([[1.0, 5.0], [4.0, 2.0]]), dim=0)
    min(values=tensor([1., 2.]), indices=tensor([0, 1]))
    """
    return _max_or_min(_MIN, x, dim, keepdim, axis, keepdims, other)


# ---------------------------------------------------------------------------------------------
# argmax, argmin (not differentiable)


def _arg_impl(largest):
    def impl(xp, x, *, dim, keepdim):
        pick = xp.argmax if largest else xp.argmin
        return xp.asarray(pick(x, axis=dim, keepdims=keepdim)).astype(xp.int64, copy=False)

    return impl


def _arg_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    if params["dim"] is not None:
        return apply(op, x, dim=params["dim"] + 1, keepdim=params["keepdim"]), 0
    batch, logical_ndim = x.shape[0], x.ndim - 1
    out = apply(op, reshape(x, (batch, _numel(x.shape, range(1, x.ndim)))), dim=1, keepdim=False)
    if params["keepdim"]:
        out = reshape(out, (batch,) + (1,) * logical_ndim)
    return out, 0


_argmax_op = register(OpDef("argmax", _arg_impl(True), batch=_arg_batch, differentiable=False))
_argmin_op = register(OpDef("argmin", _arg_impl(False), batch=_arg_batch, differentiable=False))


def _arg_extremum(op, x, dim, axis, keepdim, keepdims, name):
    x = _as_tensor(x)
    _check_ordered(x, name)
    dim = pick_dim(dim, axis)
    keepdim = pick_keepdim(keepdim, keepdims)
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError(
                f"dualad.{name}: {name}(): Expected reduction dim to be specified for "
                "input.numel() == 0."
            )
        if x.ndim == 0:
            return reshape(apply1(op, reshape(x, (1,)), {"dim": 0, "keepdim": False}), ())
        return apply1(op, x, {"dim": None, "keepdim": keepdim})
    if x.ndim == 0:
        normalize_dim(dim, 0, op=name)
        return reshape(apply1(op, reshape(x, (1,)), {"dim": 0, "keepdim": False}), ())
    dim = normalize_dim(dim, x.ndim, op=name)
    _check_nonempty(x, (dim,), name)
    return apply1(op, x, {"dim": dim, "keepdim": keepdim})


@public.method
def argmax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Index of the maximum along ``dim`` (of the flattened tensor by default); int64.

    >>> import dualad
    >>> dualad.argmax(dualad.tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
    tensor([1, 0])
    """
    return _arg_extremum(_argmax_op, x, dim, axis, keepdim, keepdims, "argmax")


@public.method
def argmin(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Index of the minimum along ``dim`` (of the flattened tensor by default); int64.

    >>> import dualad
    >>> x = dualad.tensor([[3.0, 1.0], [0.0, 2.0]])
    >>> dualad.argmin(x)
    tensor(2)
    >>> dualad.argmin(x, dim=1)
    tensor([1, 0])
    """
    return _arg_extremum(_argmin_op, x, dim, axis, keepdim, keepdims, "argmin")
