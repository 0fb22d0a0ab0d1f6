"""NumPy's order statistics over tensors: ``sort sort_complex partition median quantile percentile
nanmedian nanquantile nanpercentile``, on dualad's
``sort`` op (its gradient goes back through the sorting permutation), so they differentiate in
the data: a quantile's gradient goes to the one or two sorted elements it interpolates.

``quantile``/``percentile`` (and their ``nan`` versions) support all of NumPy's 13 methods,
``linear`` the default; ``q`` is a plain number or array (the positions it
picks fix the result's structure). A slice holding a NaN gives NaN, as in NumPy.

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([4.0, 1.0, 3.0, 2.0], requires_grad=True)
>>> dnp.median(x)
tensor(2.5, grad_fn=<WhereBackward0>)
>>> dnp.quantile(x, 0.25).backward()
>>> x.grad
tensor([0.  , 0.25, 0.  , 0.75])
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor
from .._tensor import Tensor
from ._common import axes_of, axis_of, cast, finish, floating, tensor_of
from .searching import argpartition

__all__ = [
    "sort",
    "median",
    "quantile",
    "percentile",
    "nanmedian",
    "nanquantile",
    "nanpercentile",
    "sort_complex",
    "partition",
]

_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_METHODS = ("linear", "averaged_inverted_cdf", "interpolated_inverted_cdf", "hazen", "weibull",
            "median_unbiased", "normal_unbiased", "midpoint", *_DISCRETE)  # fmt: skip


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``numpy.sort``: the values sorted along ``axis`` (of the flattened input when None);
    every ``kind`` gives the same values (ties are equal values).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> dnp.sort(x)
    tensor([1., 2., 3.], grad_fn=<SortBackward0>)
    """
    if order is not None:
        raise ValueError("dualad.numpy.sort: order= (structured arrays) is not supported")
    x = tensor_of(a)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    return ops.sort(x, axis_of(axis, x.ndim)).values


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.partition``: ``a`` rearranged along ``axis`` (of the flattened input when None)
    so that its ``kth`` element(s) sit where sorting puts them, smaller ones before; the values
    are NumPy's (taken at ``argpartition``'s indices, the same selection) and differentiate
    through that permutation.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([3.0, 1.0, 4.0, 2.0], requires_grad=True)
    >>> dnp.partition(x, 1)[1]
    tensor(2., grad_fn=<SliceBackward0>)
    """
    if order is not None:
        raise ValueError("dualad.numpy.partition: order= (structured arrays) is not supported")
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    x = tensor_of(a)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    axis = axis_of(axis, x.ndim)  # (NumPy's AxisError, for a 0-d input too)
    return ops.take_along_dim(x, argpartition(x, kth, axis=axis), axis)


def sort_complex(a):
    """``numpy.sort_complex``: sorted by real part, then imaginary part, as complex.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.sort_complex(dualad.tensor([2.0, 1.0, 3.0]))
    tensor([1.+0.j, 2.+0.j, 3.+0.j])
    """
    x = tensor_of(a)
    if x.dtype.kind == "c":
        dtype = x.dtype
    else:  # NumPy's rule: small integers to complex64, everything else to complex128
        dtype = np.complex64 if x.dtype.char in "bhBH" else np.complex128
    return ops.sort(cast(x, dtype), -1).values


def _sorted_last(x, axis):
    """``x`` with the ``axis`` axes merged into a sorted last axis, and the kept shape for
    ``keepdims`` (1 on the reduced axes)."""
    axes = axes_of(axis, x.ndim)
    axes = tuple(range(x.ndim)) if axes is None else axes
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = ops.permute(x, (*kept, *axes)) if x.ndim else x
    merged = ops.reshape(moved, (*(x.shape[d] for d in kept), -1))
    keep_shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    return ops.sort(merged, -1).values, keep_shape


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``numpy.median``: the middle value (the mean of the two middle values) over
    ``axis``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([3.0, 1.0, 4.0, 2.0], requires_grad=True)
    >>> dnp.median(x)
    tensor(2.5, grad_fn=<WhereBackward0>)
    """
    x = floating(tensor_of(a))
    s, keep_shape = _sorted_last(x, axis)
    n = s.shape[-1]
    if n == 0:
        raise ValueError("dualad.numpy.median: the median of an empty slice is undefined")
    half = n // 2
    r = s[..., half] if n % 2 else (s[..., half - 1] + s[..., half]) / 2.0
    r = ops.where(ops.isnan(s[..., -1]), np.nan, r)  # a NaN in the slice (sorted last)
    return finish(ops.reshape(r, keep_shape) if keepdims else r, out, "median")


def _plain_q(q):
    """``q`` as a float64 array: the positions it picks fix the result, so it is a plain
    value (a tensor that carries a derivative raises TrackedConversionError)."""
    if isinstance(q, Tensor):
        q = q.numpy()
    return np.asarray(q, dtype=np.float64)


def _q_first(r, qs):
    """The axes of ``q`` (last in ``r``) moved first, as NumPy orders a quantile's result."""
    return ops.moveaxis(r, tuple(range(-qs.ndim, 0)), tuple(range(qs.ndim))) if qs.ndim else r


def _lerp(a, b, t):
    """NumPy's ``_lerp``: ``a + (b - a) t``, from the nearer end (exact at t = 0 and 1)."""
    diff = b - a
    return ops.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


# Hyndman and Fan's continuous methods: (alpha, beta) of NumPy's _compute_virtual_index
_ALPHA_BETA = {
    "interpolated_inverted_cdf": (0, 1),
    "hazen": (0.5, 0.5),
    "weibull": (0, 0),
    "median_unbiased": (1 / 3.0, 1 / 3.0),
    "normal_unbiased": (3 / 8.0, 3 / 8.0),
}


def _discrete(index, keep_previous):
    """NumPy's ``_discrete_interpolation_to_boundaries``: the order statistic below or above
    the float ``index`` (below where ``keep_previous(gamma, index)``), at least 0."""
    previous = ops.floor(index)
    chosen = ops.where(keep_previous(index - previous, index), previous, previous + 1)
    return ops.maximum(chosen, 0.0)


def _positions(method, n, q):
    """Where each quantile lies in a sorted slice of ``n`` values (NumPy's methods, in float64
    tensors, ``n`` a number or a tensor of counts): the lower and upper indices and the weight
    of the upper one (None for the methods that pick one order statistic)."""
    if method in ("lower", "higher", "nearest"):
        pick = {"lower": ops.floor, "higher": ops.ceil, "nearest": ops.round}[method]
        index = pick((n - 1) * q)
        return index, index, None
    if method == "inverted_cdf":
        index = _discrete(n * q - 1, lambda g, i: g == 0)
        return index, index, None
    if method == "closest_observation":  # the nearest even order statistic (1-based) at ties
        index = _discrete(n * q - 1 - 0.5, lambda g, i: (g == 0) & (ops.floor(i) % 2 == 1))
        return index, index, None
    if method == "linear":
        virtual = (n - 1) * q
    elif method == "averaged_inverted_cdf":
        virtual = n * q - 1
    elif method == "midpoint":
        virtual = 0.5 * (ops.floor((n - 1) * q) + ops.ceil((n - 1) * q))
    else:
        alpha, beta = _ALPHA_BETA[method]
        virtual = n * q + (alpha + q * (1 - alpha - beta)) - 1
    previous = ops.floor(virtual)
    gamma = virtual - previous
    if method == "averaged_inverted_cdf":
        gamma = ops.where(gamma == 0, 0.5, 1.0)
    elif method == "midpoint":
        gamma = ops.where(virtual % 1 == 0, 0.0, 0.5)
    # out of bounds: both neighbours are the last (first) value
    above, below = virtual >= n - 1, virtual < 0
    last = n - 1.0
    lower = ops.where(above, last, ops.where(below, 0.0, previous))
    upper = ops.where(above, last, ops.where(below, 0.0, previous + 1))
    return lower, upper, gamma


def _interpolated(s, method, n, q, at):
    """The quantiles of the sorted ``s``: ``at(index)`` gives the sorted values at the float
    ``index`` positions of ``_positions``."""
    lower, upper, gamma = _positions(method, n, q)
    if gamma is None:
        return at(lower)
    return _lerp(at(lower), at(upper), cast(gamma, s.dtype))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.quantile``: the ``q``-th quantiles (``q`` in [0, 1]) over ``axis``, by any of
    NumPy's 13 methods (``weights``, plain values, with ``inverted_cdf``); for an array ``q``
    the quantiles are along the first axes of the result. The derivative goes to the one or
    two order statistics each quantile is made of (the discontinuous methods' jumps, where
    ``q`` moves the choice, do not involve the data).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.quantile(x, [0.25, 0.75])
    tensor([1.5, 2.5], grad_fn=<ViewBackward0>)
    """
    method, qs, x, dtype = _prepare(a, q, method, None, interpolation)
    if weights is not None:
        return _weighted_quantile(cast(x, dtype), qs, axis, method, weights, keepdims, out)
    s, keep_shape = _sorted_last(cast(x, dtype), axis)
    n = s.shape[-1]
    if n == 0:
        raise IndexError("dualad.numpy.quantile: the quantile of an empty slice is undefined")

    def at(index):
        return ops.take(s, cast(index, np.int64), axis=-1)

    r = _interpolated(s, method, n, as_tensor(qs, device=s.device), at)
    if s.dtype.kind in "fc":  # NaN where the slice holds one (sorted last)
        nan = ops.reshape(ops.isnan(s[..., -1]), tuple(s.shape[:-1]) + (1,) * qs.ndim)
        r = ops.where(nan, np.nan, r)
    return _finished(r, keep_shape, qs, keepdims, out, "quantile")


def _weights(weights, x, axis):
    """NumPy's ``_weights_are_valid``: plain non-negative weights of ``x``'s shape, or 1-D
    (N-D) along the reduced ``axis``, broadcast to ``x``'s shape."""
    w = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights, np.float64)
    axes = axes_of(axis, x.ndim)
    if w.shape != tuple(x.shape):
        if axes is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.shape != tuple(x.shape[d] for d in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")  # fmt: skip
        w = w.transpose(np.argsort(axes))
        w = w.reshape(tuple(n if d in axes else 1 for d, n in enumerate(x.shape)))
    if np.any(w < 0):
        raise ValueError("Weights must be non-negative.")
    return np.broadcast_to(w, tuple(x.shape))


def _weighted_quantile(x, qs, axis, method, weights, keepdims, out):
    """NumPy's weighted ``inverted_cdf``: the first sorted value whose share of the total
    weight reaches ``q``. The weights choose the element (no derivative: they must be plain);
    the derivative in ``x`` goes to the chosen element."""
    if method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    plain = _weights(weights, x, axis)
    axes = axes_of(axis, x.ndim)
    axes = tuple(range(x.ndim)) if axes is None else axes
    total = plain.sum(axis=axes)  # (each slice's total: the order does not change it)
    if not np.all((total > 0) & np.isfinite(total)):
        raise ValueError("Weights included NaN, inf or were all zero.")
    w = as_tensor(plain, device=x.device)
    kept = [d for d in range(x.ndim) if d not in axes]
    order = (*kept, *axes)
    reduced = tuple(x.shape[d] for d in kept)

    def merged(t):
        return ops.reshape(ops.permute(t, order) if t.ndim else t, (*reduced, -1))

    values, index = ops.sort(merged(x), -1)
    n = values.shape[-1]
    if n == 0:
        raise IndexError("dualad.numpy.quantile: the quantile of an empty slice is undefined")
    cdf = ops.cumsum(ops.take_along_dim(merged(w), index, -1), -1)
    cdf = cdf / cdf[..., -1:]
    cdf = ops.where(cdf == 0, -1.0, cdf)  # (leading zero weights: never chosen, as NumPy)
    q = ops.reshape(as_tensor(qs, device=x.device), (1,) * len(reduced) + qs.shape + (1,))
    below = ops.unsqueeze(cdf, -2) if qs.ndim else cdf
    for _ in range(qs.ndim - 1):
        below = ops.unsqueeze(below, -2)
    count = ops.sum(below < q, axis=-1)  # (searchsorted, side left)
    pick = ops.reshape(ops.minimum(count, n - 1), (*reduced, -1))
    r = ops.reshape(ops.take_along_dim(values, pick, -1), reduced + qs.shape)
    if values.dtype.kind == "f":  # NaN where the slice holds one (sorted last)
        nan = ops.reshape(ops.isnan(values[..., -1]), reduced + (1,) * qs.ndim)
        r = ops.where(nan, np.nan, r)
    keep_shape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    return _finished(r, keep_shape, qs, keepdims, out, "quantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.percentile``: ``quantile`` with ``q`` in percent (in [0, 100]).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.percentile(x, 50)
    tensor(2., grad_fn=<WhereBackward0>)
    """
    return quantile(a, _percent(q), axis, out, overwrite_input, method, keepdims,
                    weights=weights, interpolation=interpolation)  # fmt: skip


def _prepare(a, q, method, weights, interpolation):
    """The quantile functions' checks: the method, ``q`` as a plain array in [0, 1], the
    input and the result's dtype (NumPy's, NEP 50 for a Python ``q``)."""
    method = interpolation or method
    if weights is not None:
        raise ValueError("dualad.numpy: weights= is not supported by the quantile functions")
    if method not in _METHODS:
        raise ValueError(f"dualad.numpy: method={method!r} is not supported (use one of "
                         f"{', '.join(_METHODS)})")  # fmt: skip
    qs = _plain_q(q)
    if not ((qs >= 0) & (qs <= 1)).all():
        raise ValueError("Quantiles must be in the range [0, 1]")
    x = tensor_of(a)
    if method in _DISCRETE:
        return method, qs, x, x.dtype
    return method, qs, x, np.result_type(x.dtype, q if type(q) in (int, float) else qs)


def _percent(q):
    """Percentiles ``q`` as quantiles (a Python number stays one: NEP 50)."""
    qs = _plain_q(q)
    if not ((qs >= 0) & (qs <= 100)).all():
        raise ValueError("Percentiles must be in the range [0, 100]")
    return q / 100 if type(q) in (int, float) else qs / 100


def _finished(r, keep_shape, qs, keepdims, out, name):
    if keepdims:
        r = ops.reshape(r, keep_shape + qs.shape)
    return finish(_q_first(r, qs), out, name)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.nanquantile``: ``quantile`` of the values that are not NaN (NaN for a slice of
    NaNs only), by any of NumPy's methods. Each slice's positions depend on its count of NaNs,
    so they are computed with dualad ops (this also runs under vmap); NaN entries get no
    derivative.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanquantile(x, 0.25)
    tensor(1.5, grad_fn=<WhereBackward0>)
    """
    method, qs, x, dtype = _prepare(a, q, method, weights, interpolation)
    if x.dtype.kind not in "fc":
        return quantile(x, q, axis, out, False, method, keepdims)
    s, keep_shape = _sorted_last(cast(x, dtype), axis)  # (NaNs sorted last)
    reduced = tuple(s.shape[:-1])
    count = ops.sum(ops.logical_not(ops.isnan(s)), axis=-1, keepdims=True)
    count = cast(ops.reshape(count, reduced + (1,) * qs.ndim), np.float64)
    last = ops.maximum(count - 1, 0)

    def at(index):  # the sorted values at float positions ``index`` (of shape reduced + q)
        index = ops.broadcast_to(index, reduced + qs.shape)
        flat = ops.reshape(cast(ops.clip(index, 0, last), np.int64), (*reduced, -1))
        return ops.reshape(ops.take_along_dim(s, flat, -1), reduced + qs.shape)

    r = _interpolated(s, method, count, as_tensor(qs, device=s.device), at)
    r = ops.where(count == 0, np.nan, r)  # (NumPy warns: All-NaN slice)
    return _finished(r, keep_shape, qs, keepdims, out, "nanquantile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.nanpercentile``: ``nanquantile`` with ``q`` in percent.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanpercentile(x, 25)
    tensor(1.5, grad_fn=<WhereBackward0>)
    """
    return nanquantile(a, _percent(q), axis, out, overwrite_input, method, keepdims,
                       weights=weights, interpolation=interpolation)  # fmt: skip


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``numpy.nanmedian``: ``median`` of the values that are not NaN.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, 3.0], requires_grad=True)
    >>> dnp.nanmedian(x)
    tensor(2., grad_fn=<WhereBackward0>)
    """
    return nanquantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)
