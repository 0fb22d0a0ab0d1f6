"""NumPy's reductions and scans over tensors, built from dualad ops so every level
differentiates them: ``sum mean prod std var max amax min amin ptp cumsum cumprod
cumulative_sum cumulative_prod average all any nansum nanmean nanprod nanstd nanvar nanmax nanmin
nancumsum nancumprod``.

NumPy's signatures and semantics: ``axis`` None/int/negative/tuple (``AxisError`` when out of
range), ``keepdims``, ``dtype`` (integer and bool inputs of ``mean``/``std``/``var`` are computed
in float64, like NumPy), ``ddof``/``correction``, ``initial`` and ``where`` masks, ``out=`` into a
tensor. ``std``/``var`` default to ``ddof=0`` (NumPy's, not PyTorch's unbiased default).

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
>>> dnp.std(x, axis=0)
tensor([1. , 1.5], grad_fn=<StdBackward0>)
>>> dnp.sum(x, where=dualad.tensor([[True, False], [True, True]])).backward()
>>> x.grad
tensor([[1., 0.],
        [1., 1.]])
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import ops
from .._creation import full
from .._tensor import Tensor
from ._common import _NoValue, axes_of, axis_of, cast, finish, floating, tensor_of

__all__ = [
    "sum",
    "mean",
    "prod",
    "std",
    "var",
    "max",
    "amax",
    "min",
    "amin",
    "ptp",
    "all",
    "any",
    "cumsum",
    "cumprod",
    "cumulative_sum",
    "cumulative_prod",
    "average",
    "nansum",
    "nanmean",
    "nanprod",
    "nanstd",
    "nanvar",
    "nanmax",
    "nanmin",
    "nancumsum",
    "nancumprod",
]


def _masked(x, where, fill):
    """``x`` with the elements outside the ``where`` mask replaced by ``fill``."""
    if where is _NoValue or where is True:
        return x
    return ops.where(tensor_of(where), x, fill)


def _count(x, axes, keepdims, where, dtype):
    """How many elements (inside the ``where`` mask) each reduction sees, as ``dtype``."""
    mask = ops.broadcast_to(tensor_of(where if where is not _NoValue else True), x.shape)
    return cast(ops.sum(cast(mask, np.int64), axis=axes, keepdims=keepdims), dtype)


def _real_dtype(x):
    return ops.real(x).dtype if x.dtype.kind == "c" else x.dtype


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """``numpy.sum``: the sum over ``axis`` (all axes by default).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.sum(x)
    tensor(6., grad_fn=<SumBackward0>)
    """
    # the common call, kept within 1.2x of ``t.sum()`` (benchmarks/numpy_functions_dispatch.py)
    if (
        axis is None
        and out is None
        and initial is _NoValue
        and where is _NoValue
        and (isinstance(a, Tensor))
    ):
        return ops.sum(a, None, keepdims, dtype=dtype)
    x = tensor_of(a)
    axes = axes_of(axis, x.ndim)
    r = ops.sum(_masked(x, where, 0), axis=axes, keepdims=keepdims, dtype=dtype)
    if initial is not _NoValue:
        r = r + initial
    return finish(r, out, "sum")


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """``numpy.prod``: the product over ``axis`` (all axes by default).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.prod(x)
    tensor(6., grad_fn=<ProdBackward0>)
    """
    x = tensor_of(a)
    axes = axes_of(axis, x.ndim)
    r = ops.prod(_masked(x, where, 1), axis=axes, keepdims=keepdims, dtype=dtype)
    if initial is not _NoValue:
        r = r * initial
    return finish(r, out, "prod")


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue):
    """``numpy.mean``: the mean over ``axis``; integer and bool input give float64.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.mean(a, axis=1)
    tensor([1.5, 3.5], grad_fn=<MeanBackward0>)
    """
    x = tensor_of(a)
    axes = axes_of(axis, x.ndim)
    x = floating(x) if dtype is None else cast(x, dtype)
    if where is _NoValue or where is True:
        r = ops.mean(x, axis=axes, keepdims=keepdims)
    else:
        total = ops.sum(_masked(x, where, 0), axis=axes, keepdims=keepdims)
        r = total / _count(x, axes, keepdims, where, _real_dtype(x))
    return finish(r, out, "mean")


def _ddof(ddof, correction, name):
    if correction is _NoValue:
        return ddof
    if ddof != 0:
        raise ValueError(f"dualad.numpy.{name}: ddof and correction can't be given together")
    return correction


def _squared_magnitude(d):
    return ops.real(d * ops.conj(d)) if d.dtype.kind == "c" else d * d


def _var(a, axis, dtype, ddof, keepdims, where, mean_):
    """The variance made of dualad ops where ``where`` or ``mean`` is given (None otherwise:
    the caller uses the var/std op), the input as computed, its axes."""
    x = tensor_of(a)
    axes = axes_of(axis, x.ndim)
    x = floating(x) if dtype is None else cast(x, dtype)
    plain = where is _NoValue or where is True
    if plain and mean_ is _NoValue:
        return None, x, axes
    n = _count(x, axes, True, where, _real_dtype(x))
    if mean_ is _NoValue:
        mean_ = ops.sum(_masked(x, where, 0), axis=axes, keepdims=True) / n
    else:  # NumPy's precomputed mean, of the keepdims=True shape
        mean_ = tensor_of(mean_)
    deviation = _masked(x - mean_, where, 0)
    total = ops.sum(_squared_magnitude(deviation), axis=axes, keepdims=keepdims)
    if not keepdims:
        n = ops.reshape(n, total.shape)
    return total / (n - ddof), x, axes


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
        mean=_NoValue, correction=_NoValue):  # fmt: skip
    """``numpy.var``: the variance over ``axis`` with ``ddof`` (0 by default).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.var(x, ddof=1)
    tensor(1., grad_fn=<VarBackward0>)
    """
    ddof = _ddof(ddof, correction, "var")
    r, x, axes = _var(a, axis, dtype, ddof, keepdims, where, mean)
    if r is None:
        r = ops.var(x, axis=axes, keepdims=keepdims, ddof=ddof)
    return finish(r, out, "var")


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
        mean=_NoValue, correction=_NoValue):  # fmt: skip
    """``numpy.std``: the standard deviation over ``axis`` with ``ddof`` (0 by default).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.std(x)
    tensor(0.81649658, grad_fn=<StdBackward0>)
    """
    ddof = _ddof(ddof, correction, "std")
    r, x, axes = _var(a, axis, dtype, ddof, keepdims, where, mean)
    r = ops.std(x, axis=axes, keepdims=keepdims, ddof=ddof) if r is None else ops.sqrt(r)
    return finish(r, out, "std")


def _extremum(name, reduce, combine, a, axis, out, keepdims, initial, where):
    x = tensor_of(a)
    axes = axes_of(axis, x.ndim)
    if where is not _NoValue and where is not True:
        if initial is _NoValue:
            raise ValueError(
                f"dualad.numpy.{name}: reduction operation '{name}' does not have an identity, "
                "so to use a where mask one has to specify 'initial'"
            )
        x = _masked(x, where, initial)
    reduced = range(x.ndim) if axes is None else axes
    if builtins.any(x.shape[d] == 0 for d in reduced):
        if initial is _NoValue:
            raise ValueError(
                f"dualad.numpy.{name}: zero-size array to reduction operation {name} which has "
                "no identity (give initial=)"
            )
        return finish(ops.sum(x * 0, axis=axes, keepdims=keepdims) + initial, out, name)
    r = reduce(x, axis=axes, keepdims=keepdims)
    if initial is not _NoValue:
        r = combine(r, initial)
    return finish(r, out, name)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """``numpy.max``: the largest element over ``axis`` (ties share the gradient).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.max(a, axis=0)
    tensor([3., 4.], grad_fn=<AmaxBackward0>)
    """
    return _extremum("max", ops.amax, ops.maximum, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """``numpy.min``: the smallest element over ``axis`` (ties share the gradient).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.min(a, axis=0)
    tensor([1., 2.], grad_fn=<AminBackward0>)
    """
    return _extremum("min", ops.amin, ops.minimum, a, axis, out, keepdims, initial, where)


amax = max
amin = min


def _truth(name, op, a, axis, out, keepdims, where, fill):
    x = tensor_of(a)
    if where is not _NoValue:  # elements outside the mask count as the reduction's identity
        x = ops.where(tensor_of(where), x, fill)
    return finish(op(x, axis=axes_of(axis, x.ndim), keepdims=keepdims), out, name)


def all(a, axis=None, out=None, keepdims=False, *, where=_NoValue):
    """``numpy.all``: whether every element over ``axis`` is true (a bool result, untracked).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.all(x > 0)
    tensor(True)
    """
    return _truth("all", ops.all, a, axis, out, keepdims, where, True)


def any(a, axis=None, out=None, keepdims=False, *, where=_NoValue):
    """``numpy.any``: whether some element over ``axis`` is true (a bool result, untracked).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.any(x > 2.5)
    tensor(True)
    """
    return _truth("any", ops.any, a, axis, out, keepdims, where, False)


def ptp(a, axis=None, out=None, keepdims=False):
    """``numpy.ptp``: ``max - min`` over ``axis``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.ptp(x)
    tensor(2., grad_fn=<SubBackward0>)
    """
    x = tensor_of(a)
    return finish(max(x, axis, None, keepdims) - min(x, axis, None, keepdims), out, "ptp")


def _scan(name, op, a, axis, dtype, out):
    x = tensor_of(a)
    if axis is None:
        x, axis = ops.reshape(x, -1), 0
    return finish(op(x, axis=axis_of(axis, x.ndim), dtype=dtype), out, name)


def cumsum(a, axis=None, dtype=None, out=None):
    """``numpy.cumsum``: running sums along ``axis`` (of the flattened input when None).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.cumsum(x)
    tensor([1., 3., 6.], grad_fn=<CumsumBackward0>)
    """
    return _scan("cumsum", ops.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """``numpy.cumprod``: running products along ``axis`` (flattened input when None).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.cumprod(x)
    tensor([1., 2., 6.], grad_fn=<CumprodBackward0>)
    """
    return _scan("cumprod", ops.cumprod, a, axis, dtype, out)


def _cumulative(name, op, identity, x, axis, dtype, out, include_initial):
    x = tensor_of(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                f"dualad.numpy.{name}: axis must be given for arrays of more than one dimension"
            )
        axis = 0
    r = _scan(name, op, x, axis_of(axis, x.ndim) if x.ndim else axis, dtype, None)
    if include_initial:
        axis = axis_of(axis, r.ndim)
        shape = list(r.shape)
        shape[axis] = 1
        first = full(tuple(shape), identity, dtype=r.dtype, device=r.device)
        r = ops.concatenate([first, r], axis=axis)
    return finish(r, out, name)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """``numpy.cumulative_sum``: ``cumsum`` that may start with the sum of nothing (0).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.cumulative_sum(x, include_initial=True)
    tensor([0., 1., 3., 6.], grad_fn=<CatBackward0>)
    """
    return _cumulative("cumulative_sum", ops.cumsum, 0, x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """``numpy.cumulative_prod``: ``cumprod`` that may start with the empty product (1).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.cumulative_prod(x, include_initial=True)
    tensor([1., 1., 2., 6.], grad_fn=<CatBackward0>)
    """
    return _cumulative("cumulative_prod", ops.cumprod, 1, x, axis, dtype, out, include_initial)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """``numpy.average``: the mean over ``axis`` weighted by ``weights``; with ``returned``
    also the sum of the weights. Differentiable in ``a`` and ``weights``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.average(x, weights=[3.0, 1.0, 0.0])
    tensor(1.25, grad_fn=<DivBackward0>)
    """
    x = tensor_of(a)
    axes = axes_of(axis, x.ndim)
    if weights is None:
        avg = mean(x, axis, keepdims=keepdims)
        scale = _count(x, axes, keepdims, _NoValue, avg.dtype)
        return (avg, ops.broadcast_to(scale, avg.shape)) if returned else avg
    w = tensor_of(weights)
    if x.dtype.kind in "biu":
        x = floating(x)
    dtype = np.result_type(x.dtype, w.dtype)
    x, w = cast(x, dtype), cast(w, dtype)
    if w.shape != x.shape:
        w = _weights_along(x, w, axes)
    scale = ops.sum(ops.broadcast_to(w, x.shape), axis=axes, keepdims=keepdims)
    if type(scale) is Tensor and bool(ops.any(scale == 0)):  # (wrappers: no value to test)
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = ops.sum(x * w, axis=axes, keepdims=keepdims) / scale
    return (avg, ops.broadcast_to(scale, avg.shape)) if returned else avg


def _weights_along(x, w, axes):
    if axes is None:
        raise TypeError(
            "dualad.numpy.average: axis must be specified when shapes of a and weights differ."
        )
    if tuple(w.shape) != tuple(x.shape[d] for d in axes):
        raise ValueError(
            "dualad.numpy.average: shape of weights must be consistent with shape of a along "
            "specified axis."
        )
    shape = [x.shape[d] if d in axes else 1 for d in range(x.ndim)]
    return ops.reshape(w, tuple(shape))


def _nan_filled(x, fill):
    x = tensor_of(x)
    if x.dtype.kind not in "fc":
        return x
    return ops.where(ops.isnan(x), fill, x)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """``numpy.nansum``: ``sum`` counting NaNs as 0 (their gradient is 0).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nansum(x)
    tensor(4., grad_fn=<SumBackward0>)
    """
    return sum(_nan_filled(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """``numpy.nanprod``: ``prod`` counting NaNs as 1 (their gradient is 0).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanprod(x)
    tensor(3., grad_fn=<ProdBackward0>)
    """
    return prod(_nan_filled(a, 1), axis, dtype, out, keepdims, initial, where)


def _not_nan(x, where):
    mask = ops.logical_not(ops.isnan(x))
    if where is not _NoValue and where is not True:
        mask = ops.logical_and(mask, tensor_of(where))
    return mask


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue):
    """``numpy.nanmean``: ``mean`` of the elements that are not NaN.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanmean(x)
    tensor(2., grad_fn=<DivBackward0>)
    """
    x = tensor_of(a)
    if x.dtype.kind not in "fc":
        return mean(x, axis, dtype, out, keepdims, where=where)
    return mean(x, axis, dtype, out, keepdims, where=_not_nan(x, where))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
           mean=_NoValue, correction=_NoValue):  # fmt: skip
    """``numpy.nanvar``: ``var`` of the elements that are not NaN.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanvar(x)
    tensor(1., grad_fn=<DivBackward0>)
    """
    x = tensor_of(a)
    if x.dtype.kind in "fc":
        where = _not_nan(x, where)
        x = _nan_filled(x, 0)  # (masked out, but a NaN times a zero gradient is still NaN)
    return var(x, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
           mean=_NoValue, correction=_NoValue):  # fmt: skip
    """``numpy.nanstd``: ``std`` of the elements that are not NaN.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanstd(x)
    tensor(1., grad_fn=<SqrtBackward0>)
    """
    x = tensor_of(a)
    if x.dtype.kind in "fc":
        where = _not_nan(x, where)
        x = _nan_filled(x, 0)
    return std(x, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)


def _nan_extremum(name, fn, fill, a, axis, out, keepdims, initial, where):
    x = tensor_of(a)
    if x.dtype.kind not in "f":
        return fn(x, axis, out, keepdims, initial, where)
    nan = ops.isnan(x)
    r = fn(ops.where(nan, fill, x), axis, None, keepdims, initial, where)
    all_nan = ops.all(nan, axis=axes_of(axis, x.ndim), keepdims=keepdims)
    return finish(ops.where(all_nan, np.nan, r), out, name)


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """``numpy.nanmax``: ``max`` ignoring NaNs (NaN where a slice is all NaN).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanmax(x)
    tensor(3., grad_fn=<WhereBackward0>)
    """
    return _nan_extremum("nanmax", max, -np.inf, a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
    """``numpy.nanmin``: ``min`` ignoring NaNs (NaN where a slice is all NaN).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanmin(x)
    tensor(1., grad_fn=<WhereBackward0>)
    """
    return _nan_extremum("nanmin", min, np.inf, a, axis, out, keepdims, initial, where)


def nancumsum(a, axis=None, dtype=None, out=None):
    """``numpy.nancumsum``: ``cumsum`` counting NaNs as 0.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nancumsum(x)
    tensor([1., 1., 4.], grad_fn=<CumsumBackward0>)
    """
    return cumsum(_nan_filled(a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """``numpy.nancumprod``: ``cumprod`` counting NaNs as 1.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nancumprod(x)
    tensor([1., 1., 3.], grad_fn=<CumprodBackward0>)
    """
    return cumprod(_nan_filled(a, 1), axis, dtype, out)
