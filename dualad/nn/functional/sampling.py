"""``torch.nn.functional.interpolate`` for the modes ``nearest``, ``nearest-exact``, ``linear``,
``bilinear``, ``trilinear`` and ``area``, as a composite of ops.

Each spatial dim (every dim after the first two of ``(N, C, *spatial)``) is resampled in turn:
nearest modes gather the source index of each output entry (the gradient of an output entry goes
to the entry it copies); linear modes blend the two neighbouring entries with fixed weights
(linear in the input, so the derivative is exact); ``area`` is adaptive average pooling to the
output size (PyTorch's definition). Source coordinates follow PyTorch: ``scale``
is ``in / out`` for ``size=`` and ``1 / scale_factor`` for ``scale_factor=`` (unless
``recompute_scale_factor``), and ``align_corners`` maps the corner pixels onto each other.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ... import ops
from ..._creation import as_tensor
from ...ops.adaptive_pooling import adaptive_avg_pool
from .distances import _tensor

__all__ = ["interpolate"]

_MODES = {"nearest": 1, "nearest-exact": 1, "linear": 1, "bilinear": 2, "trilinear": 3, "area": 1}


def _per_dim(value, count, name):
    if value is None:
        return None
    if isinstance(value, (numbers.Number, np.generic)):
        return (value,) * count
    value = tuple(value)
    if len(value) != count:
        raise ValueError(
            f"dualad.nn.functional.interpolate: Input and {name} must have the same number of "
            f"spatial dimensions, but got input with spatial dimensions of {count} and {name} "
            f"of {len(value)}."
        )
    return value


def _source(mode, size_in, size_out, scale, align_corners):
    """For each output index, ``(i0, i1, w)``: the output is ``x[i0] (1 - w) + x[i1] w``
    (nearest modes: ``w`` None and ``i1`` unused)."""
    dst = np.arange(size_out, dtype=np.float64)
    if mode == "nearest":
        return np.minimum(np.floor(dst * scale), size_in - 1).astype(np.int64), None, None
    if mode == "nearest-exact":
        index = np.floor((dst + 0.5) * scale)
        return np.minimum(index, size_in - 1).astype(np.int64), None, None
    if align_corners:
        src = dst * ((size_in - 1) / (size_out - 1)) if size_out > 1 else np.zeros_like(dst)
    else:
        src = np.maximum((dst + 0.5) * scale - 0.5, 0.0)
    i0 = np.minimum(np.floor(src), size_in - 1).astype(np.int64)
    i1 = np.minimum(i0 + 1, size_in - 1)
    return i0, i1, src - i0


def _resample(x, dim, mode, size_out, scale, align_corners):
    i0, i1, w = _source(mode, x.shape[dim], size_out, scale, align_corners)
    first = ops.index_select(x, dim, as_tensor(i0, device=x.device))
    if w is None:
        return first
    second = ops.index_select(x, dim, as_tensor(i1, device=x.device))
    shape = [1] * x.ndim
    shape[dim] = size_out
    weight = as_tensor(w.reshape(shape).astype(x.dtype), device=x.device)
    return first + (second - first) * weight


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias: bool = False,
):
    """Resample the spatial dims of ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``
    (``torch.nn.functional.interpolate``; modes ``nearest``, ``nearest-exact``, ``linear`` (1
    spatial dim), ``bilinear`` (2), ``trilinear`` (3), ``area`` (adaptive average pooling)).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.interpolate(dualad.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    >>> F.interpolate(dualad.tensor([[[1.0, 2.0]]]), size=4, mode="linear", align_corners=True)
    tensor([[[1.        , 1.33333333, 1.66666667, 2.        ]]])
    """
    input = _tensor(input)
    spatial = input.ndim - 2
    if mode not in _MODES and mode != "bicubic":
        raise ValueError(
            f"dualad.nn.functional.interpolate: mode {mode!r} is not one of nearest, "
            f"nearest-exact, linear, bilinear, trilinear, area"
        )
    if mode == "bicubic" or antialias:
        raise ValueError(
            f"dualad.nn.functional.interpolate: mode={mode!r}"
            f"{' with antialias' if antialias else ''} is not supported"
        )
    if spatial < 1 or (mode in ("linear", "bilinear", "trilinear") and spatial != _MODES[mode]):
        raise ValueError(
            f"dualad.nn.functional.interpolate: mode {mode!r} needs a "
            f"{_MODES[mode] + 2}D input (N, C, *spatial), got {input.ndim}D"
        )
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError(
            "dualad.nn.functional.interpolate: align_corners option can only be set with the "
            "interpolating modes: linear | bilinear | bicubic | trilinear"
        )
    if (size is None) == (scale_factor is None):
        raise ValueError(
            "dualad.nn.functional.interpolate: only one of size or scale_factor should be defined"
        )
    sizes_in = tuple(input.shape[2:])
    size = _per_dim(size, spatial, "output size")
    factors = _per_dim(scale_factor, spatial, "scale_factor")
    if size is None:
        size = tuple(math.floor(n * f) for n, f in zip(sizes_in, factors))
    if any(s <= 0 for s in size):
        raise ValueError(
            f"dualad.nn.functional.interpolate: the output size {size} must be positive"
        )
    if mode == "area":  # the mean of each adaptive window (PyTorch's definition of area)
        return adaptive_avg_pool(input, tuple(int(s) for s in size))
    if factors is None or recompute_scale_factor:
        scales = tuple(n / s for n, s in zip(sizes_in, size))
    else:
        scales = tuple(1.0 / f for f in factors)
    out = input
    for k in range(spatial):
        if size[k] == sizes_in[k] and scales[k] == 1.0:
            continue
        out = _resample(out, 2 + k, mode, int(size[k]), scales[k], bool(align_corners))
    return out
