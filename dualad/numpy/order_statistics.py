"""NumPy's order statistics over tensors: ``sort sort_complex partition median quantile percentile
nanmedian nanquantile nanpercentile``, on dualad's
``sort`` op (its gradient goes back through the sorting permutation), so they differentiate in
the data: a quantile's gradient goes to the one or two sorted elements it interpolates.

``quantile``/``percentile`` support the methods ``linear`` (NumPy's default), ``lower``,
``higher``, ``nearest`` and ``midpoint``; ``q`` is a plain number or array (the positions it
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

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``numpy.sort``: the values sorted along ``axis`` (of the flattened input when None);
    every ``kind`` gives the same values (ties are equal values)."""
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
    through that permutation."""
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
    """``numpy.sort_complex``: sorted by real part, then imaginary part, as complex."""
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
    ``axis``."""
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


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.quantile``: the ``q``-th quantiles (``q`` in [0, 1]) over ``axis``; for an
    array ``q`` the quantiles are along the first axes of the result."""
    method, qs, x, dtype = _prepare(a, q, method, weights, interpolation)
    s, keep_shape = _sorted_last(cast(x, dtype), axis)
    n = s.shape[-1]
    if n == 0:
        raise IndexError("dualad.numpy.quantile: the quantile of an empty slice is undefined")
    virtual = qs * (n - 1)
    lo = np.floor(virtual).astype(np.int64)

    def at(index):
        return ops.take(s, as_tensor(index, device=s.device), axis=-1)

    if method in ("lower", "higher", "nearest"):
        pick = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method]
        r = at(pick(virtual).astype(np.int64))
    else:  # NumPy's interpolation between the two neighbours (midpoint: halfway, if apart)
        gamma = virtual - lo
        t = gamma if method == "linear" else np.where(gamma > 0, 0.5, 0.0)
        t = as_tensor(np.asarray(t, dtype=s.dtype), device=s.device)
        r = _lerp(at(lo), at(np.minimum(lo + 1, n - 1)), t)
    if s.dtype.kind in "fc":  # NaN where the slice holds one (sorted last)
        nan = ops.reshape(ops.isnan(s[..., -1]), tuple(s.shape[:-1]) + (1,) * qs.ndim)
        r = ops.where(nan, np.nan, r)
    return _finished(r, keep_shape, qs, keepdims, out, "quantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.percentile``: ``quantile`` with ``q`` in percent (in [0, 100])."""
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
    if method in ("lower", "higher", "nearest"):
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
    NaNs only). Each slice's positions depend on its count of NaNs, so they are computed with
    dualad ops (this also runs under vmap)."""
    method, qs, x, dtype = _prepare(a, q, method, weights, interpolation)
    if x.dtype.kind not in "fc":
        return quantile(x, q, axis, out, False, method, keepdims)
    s, keep_shape = _sorted_last(cast(x, dtype), axis)  # (NaNs sorted last)
    reduced = tuple(s.shape[:-1])
    count = ops.sum(ops.logical_not(ops.isnan(s)), axis=-1, keepdims=True)
    count = cast(ops.reshape(count, reduced + (1,) * qs.ndim), s.dtype)
    virtual = as_tensor(qs.astype(s.dtype), device=s.device) * (count - 1)
    last = ops.maximum(count - 1, 0)

    def at(index):  # the sorted values at float positions ``index`` (of shape reduced + q)
        flat = ops.reshape(cast(ops.clip(index, 0, last), np.int64), (*reduced, -1))
        return ops.reshape(ops.take_along_dim(s, flat, -1), reduced + qs.shape)

    if method in ("lower", "higher", "nearest"):
        r = at({"lower": ops.floor, "higher": ops.ceil, "nearest": ops.round}[method](virtual))
    else:
        lo = ops.floor(virtual)
        gamma = virtual - lo
        t = gamma if method == "linear" else ops.where(gamma > 0, 0.5, 0.0)
        r = _lerp(at(lo), at(lo + 1), t)
    r = ops.where(count == 0, np.nan, r)  # (NumPy warns: All-NaN slice)
    return _finished(r, keep_shape, qs, keepdims, out, "nanquantile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):  # fmt: skip
    """``numpy.nanpercentile``: ``nanquantile`` with ``q`` in percent."""
    return nanquantile(a, _percent(q), axis, out, overwrite_input, method, keepdims,
                       weights=weights, interpolation=interpolation)  # fmt: skip


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``numpy.nanmedian``: ``median`` of the values that are not NaN."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)
