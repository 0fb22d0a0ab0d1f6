"""``lp_pool1d/2d/3d`` and ``local_response_norm``, with PyTorch's signatures, as compositions of
average pooling and elementwise ops written as PyTorch defines them (so the values and the
derivatives are PyTorch's, its singular points included).

- ``lp_pool``: ``(sign(s) relu(|s|) * prod(kernel)) ** (1 / p)`` with ``s`` the average pooling
  of ``x ** p`` (no padding); a window whose ``p``-th powers sum to 0 has an infinite
  derivative in ``**(1/p)`` times a zero one: NaN, as in PyTorch. Non-integer ``p`` of negative
  inputs gives NaN (NumPy's and PyTorch's power).
- ``local_response_norm``: ``x / (k + alpha * mean of x**2 over size neighbouring channels)
  ** beta``, the window zero-padded by ``size // 2`` before and ``(size - 1) // 2`` after.
"""

from __future__ import annotations

import math

from ... import ops
from .layers import _tensor, pad
from .pooling import avg_pool1d, avg_pool2d, avg_pool3d

__all__ = ["local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d"]

_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    x = _tensor(input)
    kernel = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    pooled = _AVG[nd](x**norm_type, kernel, stride, 0, ceil_mode)
    out = ops.sign(pooled) * ops.relu(ops.abs(pooled))
    return (out * math.prod(kernel)) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling ``(sum of x**p over each window) ** (1/p)`` of ``(N, C, L)`` or
    ``(C, L)`` (``torch.nn.functional.lp_pool1d``; ``stride`` defaults to the kernel size).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.lp_pool1d(dualad.tensor([[[3.0, 4.0, 1.0, 0.0]]]), 2, 2)
    tensor([[[5., 1.]]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``lp_pool1d`` over the last two dims of ``(N, C, H, W)`` or ``(C, H, W)``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.lp_pool2d(dualad.ones(1, 2, 2), 1, 2)
    tensor([[[4.]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``lp_pool1d`` over the last three dims of ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.lp_pool3d(dualad.ones(1, 2, 2, 2), 2, 2)
    tensor([[[[2.82842712]]]])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalise each channel of ``(N, C, *)`` by its neighbours: ``x / (k + alpha / size *
    sum of x**2 over size channels) ** beta`` (``torch.nn.functional.local_response_norm``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.local_response_norm(dualad.ones(1, 3, 1), 2, alpha=1.0, beta=1.0).flatten()
    tensor([0.66666667, 0.5       , 0.5       ])
    """
    x = _tensor(input)
    if x.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {x.ndim} dimensions)")
    if x.numel() == 0:
        return x
    n, c, *rest = x.shape
    # the squares with the channels last, one row per (n, *rest): a 1-d window along them
    squares = ops.movedim(x * x, 1, -1)
    rows = ops.reshape(squares, (-1, 1, c))
    padded = pad(rows, (size // 2, (size - 1) // 2))
    mean = avg_pool1d(padded, size, 1)
    mean = ops.movedim(ops.reshape(mean, (n, *rest, c)), -1, 1)
    return x / (mean * alpha + k) ** beta
