"""``numpy.pad`` over tensors, in all of NumPy's named modes. For ``edge``, ``wrap`` and the
even ``reflect``/``symmetric``, each padded axis is one gather of the input along that axis
(the index of the element each output entry copies), so the gradient of a padded entry goes
to the element it copies; constant padding joins constant blocks (no gradient); the odd
reflections, ramps and statistics are computed from the edges with dualad ops.

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([1.0, 2.0, 3.0])
>>> dnp.pad(x, (2, 1), mode="reflect")
tensor([3., 2., 1., 2., 3., 2.])
>>> dnp.pad(x, 1, constant_values=-1.0)
tensor([-1.,  1.,  2.,  3., -1.])
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor, full
from ._common import cast, floating, tensor_of
from .order_statistics import median

__all__ = ["pad"]


def _source_index(n, before, after, mode):
    """For each entry of an axis of length ``n`` padded by ``before``/``after``, the index of
    the input element it copies (NumPy's modes; ``reflect`` is the 'even' reflection)."""
    i = np.arange(-before, n + after)
    if mode == "edge":
        return np.clip(i, 0, n - 1)
    if mode == "wrap":
        return i % n
    if mode == "symmetric":  # period 2n: ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...
        j = i % (2 * n)
        return np.where(j < n, j, 2 * n - 1 - j)
    if n == 1:  # reflect of a single element repeats it
        return np.zeros_like(i)
    j = i % (2 * (n - 1))  # reflect, period 2(n - 1): ... 2 1 | 0 1 ... n-1 | n-2 ...
    return np.where(j < n, j, 2 * (n - 1) - j)


def _constant(x, widths, values):
    for axis in range(x.ndim):
        for side in (0, 1):
            width = int(widths[axis, side])
            if width:
                shape = list(x.shape)
                shape[axis] = width
                fill = cast(full(tuple(shape), values[axis, side].item(), device=x.device), x.dtype)
                x = ops.cat([fill, x] if side == 0 else [x, fill], axis)
    return x


def _along(x, axis, start, stop):
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _reflect_odd(x, axis, before, after, include_edge, period):
    """NumPy's odd reflection (``_set_reflect_both``): chunks of the filled area reflected
    through the current edge value (``2 edge - v``), repeated until the widths are filled."""
    while before or after:
        filled = x.shape[axis]
        if include_edge:  # (chunks are whole periods of the original values)
            old, offset = filled // period * period, 1
        else:
            old, offset = (filled - 1) // (period - 1) * (period - 1), 0
        if before:
            c = min(old, before)
            chunk = ops.flip(_along(x, axis, 1 - offset, 1 - offset + c), (axis,))
            x = ops.cat([2 * _along(x, axis, 0, 1) - chunk, x], axis)
            before -= c
        if after:
            c, n = min(old, after), x.shape[axis]
            chunk = ops.flip(_along(x, axis, n - 1 - c + offset, n - 1 + offset), (axis,))
            x = ops.cat([x, 2 * _along(x, axis, n - 1, n) - chunk], axis)
            after -= c
    return x


def _pairs(value, ndim, name):
    """NumPy's ``_as_pairs``: a number, a pair or a pair per axis as an (ndim, 2) array."""
    if value is None:
        return np.full((ndim, 2), None, dtype=object)
    try:
        return np.broadcast_to(np.asarray(value, dtype=object), (ndim, 2))
    except ValueError:
        raise ValueError(f"dualad.numpy.pad: {name} must be a number, a pair or one pair per "
                         f"axis (got {value!r})") from None  # fmt: skip


def _statistic(mode, chunk, axis):
    if mode == "maximum":
        return ops.amax(chunk, axis, keepdim=True)
    if mode == "minimum":
        return ops.amin(chunk, axis, keepdim=True)
    if mode == "median":
        return median(chunk, axis=axis, keepdims=True)
    return ops.mean(floating(chunk), axis, keepdim=True)


def _stat_sides(x, axis, lengths, mode):
    """The statistic of the first and of the last ``lengths`` values along ``axis`` (all of
    them for None or a longer length), rounded for integers (NumPy's ``_get_stats``)."""
    n = x.shape[axis]
    left, right = (n if v is None else min(int(v), n) for v in lengths)
    if left < 0 or right < 0:
        raise ValueError("index can't contain negative values")
    if 0 in (left, right) and mode in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")
    stats = [_statistic(mode, _along(x, axis, 0, left), axis)]
    stats.append(
        stats[0] if left == right == n else _statistic(mode, _along(x, axis, n - right, n), axis)
    )
    if x.dtype.kind in "iub":
        stats = [ops.round(v) if v.dtype.kind in "fc" else v for v in stats]
    return [cast(v, x.dtype) for v in stats]


def _ramp(x, axis, width, end, edge, reverse):
    """NumPy's linear ramp: ``linspace(end, edge, width, endpoint=False)`` along ``axis``."""
    if width == 0:  # (no division by a zero width: it would reach the derivative)
        return _along(x, axis, 0, 0)
    steps = np.arange(width, dtype=np.float64)
    shape = [1] * x.ndim
    shape[axis] = width
    i = as_tensor(np.reshape(steps[::-1] if reverse else steps, shape), device=x.device)
    return cast(i * ((edge - end) / width) + end, x.dtype)


def _fill_axis(x, axis, before, after, mode, option):
    """Axis ``axis`` of ``x`` padded in the modes that compute their values from the edges."""
    if mode == "linear_ramp":
        n = x.shape[axis]
        first, last = _along(x, axis, 0, 1), _along(x, axis, n - 1, n)
        sides = [_ramp(x, axis, before, float(option[0]), first, False),
                 _ramp(x, axis, after, float(option[1]), last, True)]  # fmt: skip
    else:
        stats = _stat_sides(x, axis, option, mode)
        shapes = [list(x.shape), list(x.shape)]
        shapes[0][axis], shapes[1][axis] = before, after
        sides = [ops.broadcast_to(v, tuple(shape)) for v, shape in zip(stats, shapes)]
    return ops.cat([sides[0], x, sides[1]], axis)


_ALLOWED = {"constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
            "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
            "linear_ramp": {"end_values"}, "maximum": {"stat_length"},
            "minimum": {"stat_length"}, "mean": {"stat_length"},
            "median": {"stat_length"}}  # fmt: skip


def pad(array, pad_width, mode="constant", **kwargs):
    """``numpy.pad``: ``array`` padded by ``pad_width`` (one number, a pair, or a pair per
    axis) in any of NumPy's named modes: 'constant' (``constant_values``), 'edge', 'wrap',
    'reflect' and 'symmetric' (``reflect_type`` 'even' or 'odd'), 'linear_ramp'
    (``end_values``), 'maximum', 'minimum', 'mean', 'median' (``stat_length``) and 'empty'
    (whose padding, undefined in NumPy, is 0 here). Axes are padded in order, each one over the
    previous ones' padding, as NumPy does. The derivative of a padded entry goes to the
    elements it is computed from (the one it copies, the edge of a ramp, the elements of a
    statistic; for 'maximum'/'minimum' the extreme one, shared equally between ties).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.pad(dualad.tensor([1.0, 2.0, 4.0]), 2, mode="linear_ramp", end_values=(0.0, 8.0))
    tensor([0. , 0.5, 1. , 2. , 4. , 6. , 8. ])
    """
    if callable(mode):
        raise ValueError("dualad.numpy.pad: a function as mode is not supported")
    if mode not in _ALLOWED:
        raise ValueError(f"mode '{mode}' is not supported")
    unknown = set(kwargs) - _ALLOWED[mode]
    if unknown:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(unknown)}")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"dualad.numpy.pad: reflect_type must be 'even' or 'odd' (got "
                         f"{reflect_type!r})")  # fmt: skip
    x = tensor_of(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    if mode in ("constant", "empty"):
        values = np.broadcast_to(np.asarray(kwargs.get("constant_values", 0)), (x.ndim, 2))
        return _constant(x, widths, values)
    if mode == "linear_ramp":
        options = _pairs(kwargs.get("end_values", 0), x.ndim, "end_values")
    else:
        options = _pairs(kwargs.get("stat_length"), x.ndim, "stat_length")
    for axis in range(x.ndim):
        before, after = int(widths[axis, 0]), int(widths[axis, 1])
        if not (before or after):
            continue
        n = x.shape[axis]
        if n == 0:
            raise ValueError(f"can't extend empty axis {axis} using modes other than "
                             "'constant' or 'empty'")  # fmt: skip
        if mode in ("linear_ramp", "maximum", "minimum", "mean", "median"):
            x = _fill_axis(x, axis, before, after, mode, options[axis])
        elif mode in ("reflect", "symmetric") and reflect_type == "odd" and n > 1:
            x = _reflect_odd(x, axis, before, after, mode == "symmetric", n)
        else:
            index = as_tensor(_source_index(n, before, after, mode), device=x.device)
            x = ops.index_select(x, axis, index)
    return x
