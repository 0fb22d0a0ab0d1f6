"""The array API's ``fft`` extension on dualad's transforms (``dualad/ops/fft.py``: reverse,
forward and batching rules): ``fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft``,
``fftfreq rfftfreq fftshift ifftshift``, with the standard's signatures and dtype rules
(complex input for the complex transforms and the inverses of the real ones, real floating
input for ``rfft``/``rfftn``/``ihfft``: a TypeError otherwise; outputs of the input's
precision).

>>> import dualad, dualad.array_api as xp
>>> x = dualad.tensor([1.0, 2.0, 0.0, -1.0], requires_grad=True)
>>> xp.fft.rfft(x)
tensor([2.+0.j, 1.-3.j, 0.+0.j], grad_fn=<FftR2CBackward0>)
"""

from __future__ import annotations

import numpy as np

from .. import fft as _fft
from .. import ops
from .._tensor import Tensor
from ..numpy import fft as _np_fft
from ._common import tensor_arg

__all__ = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_COMPLEX = "complex floating-point"
_REAL = "real floating-point"


def _checked(name: str, x, kinds: str, what: str) -> Tensor:
    x = tensor_arg(f"fft.{name}", x)
    if x.dtype.kind not in kinds:
        raise TypeError(f"dualad.array_api.fft.{name}: only {what} dtypes are allowed")
    return x


def _one_dim(name: str, kinds: str, what: str):
    transform = getattr(_fft, name)

    def one_dim(x, /, *, n=None, axis=-1, norm="backward") -> Tensor:
        return transform(_checked(name, x, kinds, what), n, axis, norm)

    one_dim.__name__ = one_dim.__qualname__ = name
    one_dim.__doc__ = f"``{name}`` of the standard (``dualad.fft.{name}``; {what} input)."
    return one_dim


def _n_dims(name: str, kinds: str, what: str):
    transform = getattr(_fft, name)

    def n_dims(x, /, *, s=None, axes=None, norm="backward") -> Tensor:
        return transform(_checked(name, x, kinds, what), s, axes, norm)

    n_dims.__name__ = n_dims.__qualname__ = name
    n_dims.__doc__ = f"``{name}`` of the standard (``dualad.fft.{name}``; {what} input)."
    return n_dims


fft = _one_dim("fft", "c", _COMPLEX)
ifft = _one_dim("ifft", "c", _COMPLEX)
rfft = _one_dim("rfft", "f", _REAL)
irfft = _one_dim("irfft", "c", _COMPLEX)
hfft = _one_dim("hfft", "c", _COMPLEX)
ihfft = _one_dim("ihfft", "f", _REAL)
fftn = _n_dims("fftn", "c", _COMPLEX)
ifftn = _n_dims("ifftn", "c", _COMPLEX)
rfftn = _n_dims("rfftn", "f", _REAL)
irfftn = _n_dims("irfftn", "c", _COMPLEX)


def _frequencies(name: str):
    numpy_fn = getattr(_np_fft, name)

    def frequencies(n, /, *, d=1.0, dtype=None, device=None) -> Tensor:
        if dtype is not None and np.dtype(dtype).kind != "f":
            raise ValueError(f"`dtype` must be a real floating-point type. Got {dtype=}.")
        out = numpy_fn(n, d=d, device=device)
        return out if dtype is None else ops.astype(out, dtype)

    frequencies.__name__ = frequencies.__qualname__ = name
    frequencies.__doc__ = f"``{name}`` of the standard (``dualad.numpy.fft.{name}``)."
    return frequencies


fftfreq = _frequencies("fftfreq")
rfftfreq = _frequencies("rfftfreq")


def fftshift(x, /, *, axes=None) -> Tensor:
    """``fftshift`` of the standard (floating-point input)."""
    return _np_fft.fftshift(_checked("fftshift", x, "fc", "floating-point"), axes)


def ifftshift(x, /, *, axes=None) -> Tensor:
    """``ifftshift`` of the standard (floating-point input)."""
    return _np_fft.ifftshift(_checked("ifftshift", x, "fc", "floating-point"), axes)
