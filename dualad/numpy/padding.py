"""``numpy.pad`` over tensors: the modes ``constant``, ``edge``, ``wrap``, ``reflect`` and
``symmetric``. Each padded axis is one gather of the input along that axis (the index of the
element each output entry copies), so the gradient of a padded entry goes to the element it
copies; constant padding joins constant blocks (no gradient).

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
from ._common import cast, tensor_of

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


def pad(array, pad_width, mode="constant", **kwargs):
    """``numpy.pad``: ``array`` padded by ``pad_width`` (one number, a pair, or a pair per
    axis) in ``mode`` 'constant' (``constant_values``), 'edge', 'wrap', 'reflect' or
    'symmetric' (``reflect_type='even'``, NumPy's default)."""
    allowed = {"constant": {"constant_values"}, "edge": set(), "wrap": set(),
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}  # fmt: skip
    if mode not in allowed:
        raise ValueError(
            f"dualad.numpy.pad: mode={mode!r} is not supported (use one of {', '.join(allowed)})"
        )
    unknown = set(kwargs) - allowed[mode]
    if unknown:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(unknown)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError("dualad.numpy.pad: only reflect_type='even' is supported")
    x = tensor_of(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        values = np.broadcast_to(np.asarray(kwargs.get("constant_values", 0)), (x.ndim, 2))
        return _constant(x, widths, values)
    for axis in range(x.ndim):
        before, after = int(widths[axis, 0]), int(widths[axis, 1])
        if not (before or after):
            continue
        n = x.shape[axis]
        if n == 0:
            raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant'")
        index = as_tensor(_source_index(n, before, after, mode), device=x.device)
        x = ops.index_select(x, axis, index)
    return x
