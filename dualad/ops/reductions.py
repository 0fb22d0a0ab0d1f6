"""Reductions: sum, mean, logsumexp, all/any/count_nonzero, nansum/nanmean.

The sum op itself and ``sum_to`` are in ``base.py``; prod and cumprod in ``products.py``, var
and std in ``moments.py``, max/min in ``extrema.py``, norms in ``norms.py``.
"""

from __future__ import annotations

import builtins

import numpy as np

from .._creation import as_tensor
from .._dispatch import OpDef, apply1, register
from .._dtypes import real_dtype
from .._opdef import REDUCE_AFFINE
from .._tensor import Tensor
from ._dims import normalize_dims, pick_dim, pick_keepdim
from ._exports import Exports
from ._reducing import (
    _INF,
    _as_tensor,
    _floating_input,
    _keep,
    _numel,
    _reduce_params,
    _sum,
    _to_floating,
)
from .base import _reduction_batch, _sum_op, expand_reduced, linear
from .casts import astype
from .comparison import eq, isnan, logical_not, where
from .exp_log import exp

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


@public.method
def sum(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None) -> Tensor:
    """Sum over ``dim`` (all dims by default).

    >>> import dualad
    >>> dualad.sum(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
    tensor([4., 6.])
    """
    if not isinstance(x, Tensor):
        x = as_tensor(x)
    dims = normalize_dims(pick_dim(dim, axis), x.ndim, op="sum")
    if dtype is not None:
        x = astype(x, dtype)
    elif x.dtype.kind in "biu":
        x = astype(x, "int64")
    return apply1(_sum_op, x, {"dims": dims, "keepdim": pick_keepdim(keepdim, keepdims)})


_mean_op = linear(
    "mean",
    lambda xp, x, *, dims, keepdim: xp.mean(x, axis=dims, keepdims=keepdim),
    lambda ct, x, *, dims, keepdim: (
        expand_reduced(ct, x.shape, dims, keepdim) / _numel(x.shape, dims)
    ),
    batch=_reduction_batch,
    sparsity=REDUCE_AFFINE,
)


@public.method
def mean(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None) -> Tensor:
    """Mean over ``dim`` (all dims by default); floating and complex tensors only.

    >>> import dualad
    >>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dualad.mean(x, dim=0)
    tensor([2., 3.], grad_fn=<MeanBackward0>)
    >>> dualad.autograd.grad(dualad.mean(x), x)
    (tensor([[0.25, 0.25],
            [0.25, 0.25]]),)
    """
    # the common case checked inline (no call): a floating tensor, no dtype
    if not isinstance(x, Tensor) or dtype is not None or x.dtype.kind not in "fc":
        x = _floating_input(
            x,
            dtype,
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            "complex dtype. Got: ",
        )
    dims = normalize_dims(pick_dim(dim, axis), x.ndim, op="mean")
    return apply1(_mean_op, x, {"dims": dims, "keepdim": pick_keepdim(keepdim, keepdims)})


# ---------------------------------------------------------------------------------------------
# logsumexp


def _logsumexp_impl(xp, x, *, dims, keepdim):
    with np.errstate(divide="ignore"):  # log(0) = -inf for all -inf (or empty) groups
        if builtins.any(x.shape[d] == 0 for d in dims):
            return xp.log(xp.sum(xp.exp(x), axis=dims, keepdims=keepdim))
        # (complex x: a real shift, the largest real part, leaves the principal log's argument)
        shift = xp.max(x.real if x.dtype.kind == "c" else x, axis=dims, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, 0)
        out = xp.log(xp.sum(xp.exp(x - shift), axis=dims, keepdims=True)) + shift
    return out if keepdim else xp.squeeze(out, axis=dims)


def _softmax_weights(x, out, dims, keepdim):
    """exp(x - logsumexp(x)); an all -inf group gets weights 0 instead of NaN."""
    out = _keep(out, x.shape, dims, keepdim)
    if x.dtype.kind == "c":
        return exp(x - out)
    return exp(x - where(eq(out, -_INF), 0, out))


def _logsumexp_vjp(cts, outs, args, params, needs):
    x = args[0]
    dims, keepdim = params["dims"], params["keepdim"]
    weights = _softmax_weights(x, outs[0], dims, keepdim)
    if x.dtype.kind == "c":  # holomorphic: the cotangent times the conjugate derivative
        weights = weights.conj()
    return (_keep(cts[0], x.shape, dims, keepdim) * weights,)


def _logsumexp_jvp(tangents, outs, args, params):
    dims, keepdim = params["dims"], params["keepdim"]
    weights = _softmax_weights(args[0], outs[0], dims, keepdim)
    return _sum(tangents[0] * weights, dims, keepdim)


_logsumexp_op = register(
    OpDef(
        "logsumexp",
        _logsumexp_impl,
        vjp=_logsumexp_vjp,
        jvp=_logsumexp_jvp,
        batch=_reduction_batch,
        save_out=True,
    )
)


@public.method
def logsumexp(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """``log(sum(exp(x)))`` over ``dim`` (all dims by default), computed stably.

    Singular point: over only ``-inf`` the value is ``-inf`` and the gradient, the tangent and
    the second derivatives are 0 (the weights ``exp(x - logsumexp)`` are taken as 0, not NaN).

    >>> import dualad
    >>> dualad.logsumexp(dualad.tensor([1000.0, 1000.0]), dim=0)
    tensor(1000.69314718)
    """
    x = _to_floating(_as_tensor(x))
    return apply1(_logsumexp_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "logsumexp"))


# ---------------------------------------------------------------------------------------------
# all, any, count_nonzero (not differentiable)


def _nondiff_reduction(name, impl):
    return register(OpDef(name, impl, batch=_reduction_batch, differentiable=False))


_all_op = _nondiff_reduction(
    "all", lambda xp, x, *, dims, keepdim: xp.all(x, axis=dims, keepdims=keepdim)
)
_any_op = _nondiff_reduction(
    "any", lambda xp, x, *, dims, keepdim: xp.any(x, axis=dims, keepdims=keepdim)
)
_count_nonzero_op = _nondiff_reduction(
    "count_nonzero",
    lambda xp, x, *, dims, keepdim: xp.sum(x != 0, axis=dims, keepdims=keepdim, dtype=xp.int64),
)


@public.method
def all(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Whether every element along ``dim`` is non-zero (bool tensor).

    >>> import dualad
    >>> dualad.all(dualad.tensor([[1.0, 0.0], [2.0, 3.0]]), dim=1)
    tensor([False,  True])
    """
    x = _as_tensor(x)
    return apply1(_all_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "all"))


@public.method
def any(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Whether some element along ``dim`` is non-zero (bool tensor).

    >>> import dualad
    >>> x = dualad.tensor([[0.0, 1.0], [0.0, 0.0]])
    >>> dualad.any(x)
    tensor(True)
    >>> dualad.any(x, dim=1)
    tensor([ True, False])
    """
    x = _as_tensor(x)
    return apply1(_any_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "any"))


@public.method
def count_nonzero(x, dim=None, *, keepdim: bool = False, axis=None, keepdims=None):
    """The number of non-zero elements along ``dim`` (int64).

    >>> import dualad
    >>> dualad.count_nonzero(dualad.tensor([[1.0, 0.0], [2.0, 3.0]]), dim=0)
    tensor([2, 1])
    """
    x = _as_tensor(x)
    return apply1(
        _count_nonzero_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "count_nonzero")
    )


# ---------------------------------------------------------------------------------------------
# NaN-ignoring sum and mean (composites: their gradients come from where and sum)


@public.method
def nansum(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
    """Sum treating NaN as 0 (NaN entries get gradient 0).

    >>> import dualad
    >>> dualad.nansum(dualad.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    x = _as_tensor(x)
    if x.dtype.kind in "fc":
        x = where(isnan(x), 0, x)
    return sum(x, dim, keepdim, axis=axis, keepdims=keepdims, dtype=dtype)


@public.method
def nanmean(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
    """Mean of the non-NaN elements along ``dim``.

    >>> import dualad
    >>> dualad.nanmean(dualad.tensor([1.0, float("nan"), 2.0]))
    tensor(1.5)
    """
    x = _floating_input(
        x, dtype, "nanmean(): expected input to have floating point or complex dtype but got "
    )
    present = logical_not(isnan(x))
    total = sum(where(present, x, 0), dim, keepdim, axis=axis, keepdims=keepdims)
    count = sum(present, dim, keepdim, axis=axis, keepdims=keepdims)
    return total / astype(count, real_dtype(x.dtype))
