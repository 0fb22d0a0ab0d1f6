"""``dualad.numpy.fft``: the functions of ``numpy.fft`` that dualad has today: ``fftshift``
and ``ifftshift`` (rolls, so differentiable) and the sample frequencies ``fftfreq`` and
``rfftfreq`` (differentiable in a tensor spacing ``d``).

The transforms themselves (``fft``, ``ifft``, ``rfft``, ...) are not here yet: there is no
attribute for them, so ``np.fft.fft(t)`` raises the protocol's TypeError instead of converting
the tensor and dropping its derivative.

>>> import dualad
>>> import dualad.numpy as dnp
>>> dnp.fft.fftshift(dualad.tensor([0.0, 1.0, 2.0, -2.0, -1.0]))
tensor([-2., -1.,  0.,  1.,  2.])
>>> dnp.fft.fftfreq(4, d=0.5)
tensor([ 0. ,  0.5, -1. , -0.5])
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor
from .._tensor import Tensor
from ._common import axes_of, tensor_of

__all__ = ["fftshift", "ifftshift", "fftfreq", "rfftfreq"]


def _shifted(x, axes, sign):
    x = tensor_of(x)
    axes = axes_of(axes, x.ndim)
    axes = tuple(range(x.ndim)) if axes is None else axes
    if not axes:
        return x
    return ops.roll(x, tuple(sign * (x.shape[d] // 2) for d in axes), axes)


def fftshift(x, axes=None):
    """``numpy.fft.fftshift``: the zero frequency moved to the centre of ``axes`` (all)."""
    return _shifted(x, axes, 1)


def ifftshift(x, axes=None):
    """``numpy.fft.ifftshift``: the inverse of ``fftshift``."""
    return _shifted(x, axes, -1)


def _frequencies(numpy_fn, n, d, device):
    if isinstance(d, Tensor):  # k / (n d): differentiable in the spacing
        return as_tensor(numpy_fn(n, 1.0), device=d.device) / d
    return as_tensor(numpy_fn(n, d), device=device)


def fftfreq(n, d=1.0, device=None):
    """``numpy.fft.fftfreq``: the sample frequencies of an ``n``-point FFT with spacing ``d``."""
    return _frequencies(np.fft.fftfreq, n, d, device)


def rfftfreq(n, d=1.0, device=None):
    """``numpy.fft.rfftfreq``: the sample frequencies of an ``n``-point real FFT."""
    return _frequencies(np.fft.rfftfreq, n, d, device)
