"""NumPy's finite differences, integration and interpolation over tensors: ``diff ediff1d
gradient trapezoid interp unwrap``, made of slices and arithmetic (dualad ops), so they
differentiate in the values and in tensor spacings or sample points.

>>> import dualad
>>> import dualad.numpy as dnp
>>> y = dualad.tensor([0.0, 1.0, 4.0, 9.0], requires_grad=True)
>>> dnp.gradient(y)
tensor([1., 2., 4., 5.], grad_fn=<CatBackward0>)
>>> dnp.trapezoid(y, dx=0.5)
tensor(4.75, grad_fn=<SumBackward0>)
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._tensor import Tensor
from ._common import _NoValue, axis_of, cast, floating, tensor_of
from .joining import concatenate
from .manipulation import ravel
from .searching import argsort, searchsorted

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "interp", "unwrap"]


def _along(x, axis, start=None, stop=None):
    """``x[..., start:stop, ...]`` with the slice on ``axis``."""
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _edge(value, x, axis):
    """``prepend``/``append`` as a tensor of ``x``'s shape but length 1 on ``axis`` when it
    is a scalar (NumPy's rule), else as given."""
    v = tensor_of(value)
    if v.ndim == 0:
        shape = list(x.shape)
        shape[axis] = 1
        v = ops.broadcast_to(v, tuple(shape))
    return v


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    """``numpy.diff``: the ``n``-th differences along ``axis`` (``!=`` for booleans).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 4.0, 9.0], requires_grad=True)
    >>> dnp.diff(x)
    tensor([3., 5.], grad_fn=<SubBackward0>)
    """
    x = tensor_of(a)
    if n == 0:
        return x
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = axis_of(axis, x.ndim)
    parts = [x]
    if prepend is not _NoValue:
        parts.insert(0, _edge(prepend, x, axis))
    if append is not _NoValue:
        parts.append(_edge(append, x, axis))
    if len(parts) > 1:
        x = concatenate(parts, axis)
    for _ in range(n):
        later, earlier = _along(x, axis, 1), _along(x, axis, None, -1)
        x = ops.ne(later, earlier) if x.dtype.kind == "b" else later - earlier
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """``numpy.ediff1d``: the differences of the flattened input, with ``to_begin`` and
    ``to_end`` around them (cast to the input's dtype).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 4.0, 9.0], requires_grad=True)
    >>> dnp.ediff1d(x, to_begin=0.0)
    tensor([0., 3., 5.], grad_fn=<CatBackward0>)
    """
    x = ravel(tensor_of(ary))
    parts = [diff(x)]
    if to_begin is not None:
        parts.insert(0, cast(ravel(tensor_of(to_begin)), x.dtype))
    if to_end is not None:
        parts.append(cast(ravel(tensor_of(to_end)), x.dtype))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def _spacings(varargs, x, axes):
    """One spacing per axis: a number (uniform) or a 1-D tensor of coordinates."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and tensor_of(varargs[0]).ndim == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    out = []
    for spacing, axis in zip(varargs, axes):
        if tensor_of(spacing).ndim == 0:
            out.append(spacing)
            continue
        coords = tensor_of(spacing)
        if coords.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if coords.shape[0] != x.shape[axis]:
            raise ValueError(
                "when 1d, distances must match the length of the corresponding dimension"
            )
        out.append(coords)
    return out


def _shaped(v, axis, ndim):
    """A 1-D tensor ``v`` shaped to broadcast along ``axis`` of an ``ndim``-D tensor."""
    if not hasattr(v, "ndim") or v.ndim == 0:
        return v
    return ops.reshape(v, tuple(-1 if d == axis else 1 for d in range(ndim)))


def _gradient_along(f, axis, spacing, edge_order):
    n, nd = f.shape[axis], f.ndim
    if n < edge_order + 1:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least "
            "(edge_order + 1) elements are required."
        )
    mid = _along(f, axis, 1, -1)
    # the first three and the last three values (the third ones only used with n >= 3)
    first, second, third = (_along(f, axis, i, i + 1) for i in range(3))
    last, before, third_last = (_along(f, axis, n - 1 - i, n - i) for i in range(3))
    if not isinstance(spacing, Tensor) or spacing.ndim == 0:  # uniform: NumPy's formulas
        h = spacing
        inner = (_along(f, axis, 2) - _along(f, axis, None, -2)) / (2.0 * h)
        if edge_order == 1:
            start, end = (second - first) / h, (last - before) / h
        else:
            start = -(1.5 * first - 2.0 * second + 0.5 * third) / h
            end = (0.5 * third_last - 2.0 * before + 1.5 * last) / h
    else:
        dx = diff(spacing)
        dx1, dx2 = _shaped(dx[:-1], axis, nd), _shaped(dx[1:], axis, nd)
        a = -(dx2) / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        inner = a * _along(f, axis, None, -2) + b * mid + c * _along(f, axis, 2)
        if edge_order == 1:
            start, end = (second - first) / dx[0], (last - before) / dx[-1]
        else:
            d1, d2 = dx[0], dx[1]
            start = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * first + (d1 + d2) / (d1 * d2) * second
                     - d1 / (d2 * (d1 + d2)) * third)  # fmt: skip
            d1, d2 = dx[-2], dx[-1]
            end = (d2 / (d1 * (d1 + d2)) * third_last - (d2 + d1) / (d1 * d2) * before
                   + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * last)  # fmt: skip
    if n == 2:
        return concatenate([start, end], axis)
    return concatenate([start, inner, end], axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient``: second-order central differences inside, one-sided differences of
    order ``edge_order`` (1 or 2) at the boundaries; spacings are numbers or coordinates
    (tensors differentiate). One tensor for one axis, else a tuple.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 4.0, 9.0, 16.0], requires_grad=True)
    >>> dnp.gradient(x)
    tensor([3., 4., 6., 7.], grad_fn=<CatBackward0>)
    """
    x = floating(tensor_of(f))
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if axis is None:
        axes = tuple(range(x.ndim))
    else:  # (in the order given, unlike a reduction's axes)
        axes = tuple(axis_of(a, x.ndim) for a in (axis if isinstance(axis, tuple) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    spacings = _spacings(varargs, x, axes)
    out = tuple(_gradient_along(x, a, s, edge_order) for a, s in zip(axes, spacings))
    return out[0] if len(out) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``numpy.trapezoid``: the integral of ``y`` along ``axis`` by the trapezoidal rule,
    over sample points ``x`` (1-D along ``axis``, or ``y``'s shape) or spacing ``dx``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.trapezoid(x, dx=0.5)
    tensor(2., grad_fn=<SumBackward0>)
    """
    values = floating(tensor_of(y))
    axis = axis_of(axis, values.ndim)
    if x is None:
        d = dx
    else:
        points = tensor_of(x)
        if points.ndim == 1:
            d = _shaped(diff(points), axis, values.ndim)
        else:
            d = diff(points, axis=axis)
    heights = (_along(values, axis, 1) + _along(values, axis, None, -1)) / 2.0
    return ops.sum(d * heights, axis=axis)


def _periodic(points, knots, values, period):
    """NumPy's periodic ``interp``: everything modulo ``period``, the sample points sorted and
    extended by one period-shifted point at each end."""
    if period == 0:
        raise ValueError("period must be a non-zero value")
    period = abs(period)
    points, knots = ops.remainder(points, period), ops.remainder(knots, period)
    order = argsort(knots)
    knots, values = ops.take(knots, order), ops.take(values, order)
    knots = concatenate([knots[-1:] - period, knots, knots[:1] + period])
    return points, knots, concatenate([values[-1:], values, values[:1]])


def interp(x, xp, fp, left=None, right=None, period=None):
    """``numpy.interp``: the piecewise-linear interpolant through ``(xp, fp)`` (``xp``
    increasing) at ``x``; ``left``/``right`` outside ``[xp[0], xp[-1]]`` (``fp[0]``/``fp[-1]`` by
    default), or periodic in ``period``. Differentiable in ``x``, ``xp`` and ``fp``; at a sample
    point ``xp[k]`` the derivative in ``x`` is the slope of the segment to its right (the left
    one at ``xp[-1]``). Each point's segment is found by a binary search (``searchsorted``:
    cost ``len(x) log len(xp)``, batched under vmap).

    >>> import dualad, dualad.numpy as dnp
    >>> fp = dualad.tensor([0.0, 10.0], requires_grad=True)
    >>> dnp.interp([0.25, 0.5], [0.0, 1.0], fp)
    tensor([2.5, 5. ], grad_fn=<WhereBackward0>)
    """
    points, knots, values = tensor_of(x), tensor_of(xp), tensor_of(fp)
    if knots.ndim != 1 or values.ndim != 1:
        raise ValueError("data points must be 1-D sequences")
    if knots.shape[0] != values.shape[0]:
        raise ValueError("fp and xp are not of the same length")
    if knots.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    points, knots = cast(points, np.float64), cast(knots, np.float64)
    values = cast(values, np.complex128 if values.dtype.kind == "c" else np.float64)
    if period is not None:  # (left and right are ignored, as in NumPy)
        points, knots, values = _periodic(points, knots, values, period)
        left = right = None
    n = knots.shape[0]
    if n == 1:
        y = ops.broadcast_to(values[0], tuple(points.shape))
    else:
        below = searchsorted(knots, points, side="right")  # (the knots <= each point)
        segment = ops.clip(below - 1, 0, n - 2)
        x0, x1 = ops.take(knots, segment), ops.take(knots, segment + 1)
        y0, y1 = ops.take(values, segment), ops.take(values, segment + 1)
        y = y0 + (y1 - y0) / (x1 - x0) * (points - x0)
        y = ops.where(points == knots[-1], values[-1], y)
    low = values[0] if left is None else left
    high = values[-1] if right is None else right
    y = ops.where(points < knots[0], low, y)
    return ops.where(points > knots[-1], high, y)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """``numpy.unwrap``: jumps between neighbours larger than ``discont`` (``period / 2``)
    undone by adding multiples of ``period`` (NumPy's formula); the additions are piecewise
    constant, so the derivative is the identity.

    >>> import dualad, dualad.numpy as dnp
    >>> p = dualad.tensor([0.0, 3.0, 6.5], requires_grad=True)
    >>> dnp.unwrap(p)
    tensor([0.        , 3.        , 0.21681469], grad_fn=<CatBackward0>)
    """
    x = floating(tensor_of(p))
    axis = axis_of(axis, x.ndim)
    step = diff(x, axis=axis)
    discont = period / 2 if discont is None else discont
    high = period / 2
    folded = ops.remainder(step + high, period) - high
    folded = ops.where((folded == -high) & (step > 0), high, folded)  # (NumPy's boundary rule)
    correction = ops.where(ops.abs(step) < discont, 0.0, folded - step)
    rest = _along(x, axis, 1) + ops.cumsum(correction, axis=axis)
    return concatenate([_along(x, axis, 0, 1), rest], axis)
