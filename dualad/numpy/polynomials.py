"""NumPy's polynomial and convolution functions over tensors: ``polyval vander convolve
correlate``, made of dualad ops (Horner's rule, running products, a product with sliding
windows), so they differentiate in the coefficients, the points and both sequences.

>>> import dualad
>>> import dualad.numpy as dnp
>>> p = dualad.tensor([1.0, 0.0, -2.0], requires_grad=True)
>>> dnp.polyval(p, 3.0)
tensor(7., grad_fn=<AddBackward0>)
>>> dnp.convolve(dualad.tensor([1.0, 2.0, 3.0]), dualad.tensor([0.0, 1.0, 0.5]))
tensor([0. , 1. , 2.5, 4. , 1.5])
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor
from ._common import cast, promoted_pair, tensor_of
from .manipulation import flip
from .padding import pad

__all__ = ["polyval", "vander", "convolve", "correlate"]


def polyval(p, x):
    """``numpy.polyval``: ``p[0] * x**(N-1) + ... + p[N-1]`` by Horner's rule."""
    coefficients, points = tensor_of(p), tensor_of(x)
    dtype = np.result_type(coefficients.dtype, points.dtype)
    coefficients, points = cast(coefficients, dtype), cast(points, dtype)
    y = points * 0
    for i in range(coefficients.shape[0] if coefficients.ndim else 1):
        y = y * points + (coefficients[i] if coefficients.ndim else coefficients)
    return y


def vander(x, N=None, increasing=False):
    """``numpy.vander``: the columns ``x**(N-1), ..., x, 1`` (reversed with ``increasing``),
    as running products like NumPy's."""
    v = tensor_of(x)
    if v.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = v.shape[0] if N is None else int(N)
    dtype = np.promote_types(v.dtype, np.int64)
    v = cast(v, dtype)
    if n == 0:
        return ops.reshape(v[:0], (v.shape[0], 0)) if v.shape[0] else ops.reshape(v, (0, 0))
    columns = [v * 0 + 1] + [v] * (n - 1)
    powers = ops.cumprod(ops.stack(columns, 1), axis=1)
    return powers if increasing else flip(powers, 1)


def _sequences(a, v):
    x, y = promoted_pair(a, v)
    if x.ndim > 1 or y.ndim > 1:
        raise ValueError("object too deep for desired array")
    x, y = ops.reshape(x, (-1,)), ops.reshape(y, (-1,))
    if x.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if y.shape[0] == 0:
        raise ValueError("v cannot be empty")
    return x, y


def _full_convolution(a, v):
    """``out[i] = sum_k a[k] v[i - k]``: windows of the zero-padded ``a`` times reversed ``v``."""
    n, m = a.shape[0], v.shape[0]
    padded = pad(a, m - 1)
    windows = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    return ops.matmul(ops.take(padded, as_tensor(windows, device=a.device)), flip(v))


def _mode(full, n, m, mode):
    if mode == "full":
        return full
    if mode == "same":
        start = (min(n, m) - 1) // 2
        return full[start : start + max(n, m)]
    if mode == "valid":
        return full[min(n, m) - 1 : max(n, m)]
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def convolve(a, v, mode="full"):
    """``numpy.convolve``: the discrete linear convolution of two 1-D sequences (``mode``
    'full', 'same' or 'valid')."""
    x, y = _sequences(a, v)
    if y.shape[0] > x.shape[0]:
        x, y = y, x
    return _mode(_full_convolution(x, y), x.shape[0], y.shape[0], mode)


def correlate(a, v, mode="valid"):
    """``numpy.correlate``: ``c[k] = sum_n a[n + k] conj(v[n])`` of two 1-D sequences."""
    x, y = _sequences(a, v)
    if y.dtype.kind == "c":
        y = ops.conj(y)
    # the convolution with the reversed (conjugated) v, for either length order
    return _mode(_full_convolution(x, flip(y)), x.shape[0], y.shape[0], mode)
