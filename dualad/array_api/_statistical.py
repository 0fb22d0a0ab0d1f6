"""The array API's statistical and utility functions: ``cumulative_sum``, ``cumulative_prod``,
``max``, ``mean``, ``min``, ``prod``, ``std``, ``sum``, ``var``, ``all``, ``any``, ``diff``;
every reduction takes ``axis`` (None, an int or a tuple) and ``keepdims``; all but ``all`` and
``any`` are differentiable.

``sum``, ``prod`` and the cumulative ones accumulate integers in the default integer dtype of
their signedness (int64, uint64) and keep a floating dtype, as the standard says.

>>> import dualad, dualad.array_api as xp
>>> x = dualad.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
>>> xp.std(x, axis=1, correction=1)
tensor([0.70710678, 1.41421356], grad_fn=<StdBackward0>)
"""

from __future__ import annotations

import builtins

from .. import ops
from .._creation import full
from .._tensor import Tensor
from ._common import axis_tuple, tensor_arg
from ._dtypes import _dtype, int64, uint64


def _accumulation_dtype(name: str, x, dtype):
    if dtype is not None:
        return _dtype(name, dtype)
    if x.dtype.kind in "ib":
        return int64
    if x.dtype.kind == "u":
        return uint64
    return None


def _reduce(name: str, op, x, axis, keepdims, **kwargs) -> Tensor:
    x = tensor_arg(name, x)
    axes = axis_tuple(axis, x.ndim)
    if not axes:
        return _noop(op, x, kwargs)
    dtype = kwargs.get("dtype")
    if dtype is not None and dtype.kind == "u":
        # dualad's sum/prod with an unsigned dtype= leave a NumPy scalar as a 0-d result's data
        # (a bug of ops/reductions): accumulate in the signed dtype and cast back (same bits)
        signed = ops.astype(x, int64) if x.dtype != dtype else x
        out = op(signed, axis=axes, keepdims=keepdims)
        return ops.astype(out, dtype)
    return op(x, axis=axes, keepdims=keepdims, **kwargs)


def _noop(op, x, kwargs) -> Tensor:
    # a reduction over no axis (a 0-d x, or axis=()) is the identity (after the dtype change)
    dtype = kwargs.get("dtype")
    return ops.astype(x, dtype) if dtype is not None and dtype != x.dtype else ops.clone(x)


def sum(x, /, *, axis=None, dtype=None, keepdims: builtins.bool = False) -> Tensor:
    """The sum over ``axis``."""
    dtype = _accumulation_dtype("sum", tensor_arg("sum", x), dtype)
    return _reduce("sum", ops.sum, x, axis, keepdims, dtype=dtype)


def prod(x, /, *, axis=None, dtype=None, keepdims: builtins.bool = False) -> Tensor:
    """The product over ``axis``."""
    dtype = _accumulation_dtype("prod", tensor_arg("prod", x), dtype)
    return _reduce("prod", ops.prod, x, axis, keepdims, dtype=dtype)


def mean(x, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """The arithmetic mean over ``axis`` (floating and complex ``x``)."""
    x = tensor_arg("mean", x)
    if not axis_tuple(axis, x.ndim):
        return ops.clone(x)
    return _reduce("mean", ops.mean, x, axis, keepdims)


def _spread(name: str, op, x, axis, correction, keepdims) -> Tensor:
    x = tensor_arg(name, x)
    return op(x, axis=axis_tuple(axis, x.ndim), keepdims=keepdims, correction=correction)


def std(x, /, *, axis=None, correction=0.0, keepdims: builtins.bool = False) -> Tensor:
    """The standard deviation over ``axis`` with ``correction`` (Bessel's: 1) degrees of
    freedom removed."""
    return _spread("std", ops.std, x, axis, correction, keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims: builtins.bool = False) -> Tensor:
    """The variance over ``axis`` with ``correction`` degrees of freedom removed."""
    return _spread("var", ops.var, x, axis, correction, keepdims)


def _extremum(name: str, op, x, axis, keepdims) -> Tensor:
    x = tensor_arg(name, x)
    axes = axis_tuple(axis, x.ndim)
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"dualad.array_api.{name}: zero-size reduction has no identity")
    return op(x, axis=axes, keepdims=keepdims) if axes else ops.clone(x)


def max(x, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """The largest element over ``axis`` (ties share the gradient, as ``dualad.amax``)."""
    return _extremum("max", ops.amax, x, axis, keepdims)


def min(x, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """The smallest element over ``axis`` (ties share the gradient, as ``dualad.amin``)."""
    return _extremum("min", ops.amin, x, axis, keepdims)


def _cumulative(name: str, op, x, axis, dtype, include_initial, initial) -> Tensor:
    x = tensor_arg(name, x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"dualad.array_api.{name}: axis is required for a multi-dimensional x")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"dualad.array_api.{name}: x must have at least one dimension")
    (axis,) = axis_tuple(axis, x.ndim)
    dtype = _accumulation_dtype(name, x, dtype)
    out = op(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        first = full(tuple(shape), initial, dtype=out.dtype, device=out.device)
        out = ops.concat([first, out], axis=axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False) -> Tensor:
    """The running sum along ``axis`` (with a leading 0 when ``include_initial``)."""
    return _cumulative("cumulative_sum", ops.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False) -> Tensor:
    """The running product along ``axis`` (with a leading 1 when ``include_initial``)."""
    return _cumulative("cumulative_prod", ops.cumprod, x, axis, dtype, include_initial, 1)


def all(x, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (non-zero)."""
    x = tensor_arg("all", x)
    axes = axis_tuple(axis, x.ndim)
    return ops.all(x, axis=axes, keepdims=keepdims) if axes else ops.astype(x, "bool")


def any(x, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """Whether some element over ``axis`` is true (non-zero)."""
    x = tensor_arg("any", x)
    axes = axis_tuple(axis, x.ndim)
    return ops.any(x, axis=axes, keepdims=keepdims) if axes else ops.astype(x, "bool")


def diff(x, /, *, axis: int = -1, n: int = 1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``axis`` (``prepend``/``append`` joined first)."""
    x = tensor_arg("diff", x)
    if x.dtype.kind == "b":
        raise TypeError("dualad.array_api.diff: x must have a numeric dtype, not bool")
    if x.ndim == 0:
        raise ValueError("dualad.array_api.diff: x must have at least one dimension")
    (axis,) = axis_tuple(axis, x.ndim)
    if n < 0:
        raise ValueError(f"dualad.array_api.diff: n must be non-negative, got {n}")
    parts = [tensor_arg("diff", p) for p in (prepend, x, append) if p is not None]
    x = ops.concat(parts, axis=axis) if len(parts) > 1 else x
    for _ in range(n):
        length = x.shape[axis]
        upper = ops.narrow(x, axis, builtins.min(length, 1), builtins.max(length - 1, 0))
        lower = ops.narrow(x, axis, 0, builtins.max(length - 1, 0))
        x = ops.sub(upper, lower)
    return x


__all__ = [
    "cumulative_sum",
    "cumulative_prod",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
    "all",
    "any",
    "diff",
]
