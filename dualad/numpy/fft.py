"""``dualad.numpy.fft``: ``numpy.fft`` on tensors, with NumPy's semantics: every transform
(``fft ifft rfft irfft hfft ihfft`` and their ``2``/``n`` versions, with ``n``/``s``, ``axis``/
``axes``, ``norm`` and ``out=``), ``fftshift`` and ``ifftshift`` (rolls, so differentiable) and
the sample frequencies ``fftfreq`` and ``rfftfreq`` (differentiable in a tensor spacing ``d``).

The transforms are made of three ops (``dualad/ops/fft.py``: complex-to-complex,
real-to-complex, complex-to-real) with their own VJP, JVP and batching rules, so
``np.fft.rfft(t)`` on a tensor (``__array_function__``) is differentiable at any order and
under vmap. Output dtypes are NumPy 2's: complex64 from float32 (and float16), complex128
from float64, integers and bools as float64; a repeated axis of an n-D transform is
transformed as often as it is named (NumPy's loop).

>>> import dualad
>>> import dualad.numpy as dnp
>>> dnp.fft.fftshift(dualad.tensor([0.0, 1.0, 2.0, -2.0, -1.0]))
tensor([-2., -1.,  0.,  1.,  2.])
>>> dnp.fft.fftfreq(4, d=0.5)
tensor([ 0. ,  0.5, -1. , -0.5])
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _dtypes, ops
from .._backend import allocate_on
from .._creation import as_tensor
from .._tensor import Tensor
from ..ops import astype
from ._common import axes_of, axis_of, finish, tensor_of

__all__ = ["fftshift", "ifftshift", "fftfreq", "rfftfreq"]


def _shifted(x, axes, sign):
    x = tensor_of(x)
    axes = axes_of(axes, x.ndim)
    axes = tuple(range(x.ndim)) if axes is None else axes
    if not axes:
        return x
    return ops.roll(x, tuple(sign * (x.shape[d] // 2) for d in axes), axes)


def fftshift(x, axes=None):
    """``numpy.fft.fftshift``: the zero frequency moved to the centre of ``axes`` (all).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.fft.fftshift(x)
    tensor([3., 1., 2.], grad_fn=<RollBackward0>)
    """
    return _shifted(x, axes, 1)


def ifftshift(x, axes=None):
    """``numpy.fft.ifftshift``: the inverse of ``fftshift``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.fft.ifftshift(x)
    tensor([2., 3., 1.], grad_fn=<RollBackward0>)
    """
    return _shifted(x, axes, -1)


def _frequencies(name: str, n, d, device):
    """``fftfreq``/``rfftfreq`` made by the array module of ``device`` (no host array copied
    to a GPU)."""
    if isinstance(d, Tensor):  # k / (n d): differentiable in the spacing
        return as_tensor(allocate_on(d.device, lambda xp: getattr(xp.fft, name)(n, 1.0))) / d
    return as_tensor(allocate_on(device, lambda xp: getattr(xp.fft, name)(n, d)))


def fftfreq(n, d=1.0, device=None):
    """``numpy.fft.fftfreq``: the sample frequencies of an ``n``-point FFT with spacing ``d``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.fft.fftfreq(4, d=0.5)
    tensor([ 0. ,  0.5, -1. , -0.5])
    """
    return _frequencies("fftfreq", n, d, device)


def rfftfreq(n, d=1.0, device=None):
    """``numpy.fft.rfftfreq``: the sample frequencies of an ``n``-point real FFT.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.fft.rfftfreq(4, d=0.5)
    tensor([0. , 0.5, 1. ])
    """
    return _frequencies("rfftfreq", n, d, device)


# ---------------------------------------------------------------------------------------------
# the transforms: NumPy's semantics on three ops (dualad/ops/fft.py) with their own rules

__all__ += [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
]

_OPS = {"c2c": ("fft_c2c",), "r2c": ("fft_r2c",), "c2r": ("fft_c2r",)}


def transform_input(a, kind: str, name: str, integer_dtype=_dtypes.float64) -> Tensor:
    """``a`` as the tensor a transform of ``kind`` reads: integers and bools as
    ``integer_dtype`` (NumPy: float64), float16 as float32 (the transforms are single or
    double precision); a complex input of a real-input transform is NumPy's TypeError (``name``
    qualified for the message: "numpy.fft.rfft", "fft.rfft")."""
    x = tensor_of(a)
    if x.dtype.kind in "biu":
        x = astype(x, integer_dtype)
    elif x.dtype == np.float16:
        x = astype(x, _dtypes.float32)
    if kind == "r2c" and x.dtype.kind == "c":
        raise TypeError(
            f"dualad.{name}: the input must be real, got {x.dtype} (use fft for complex input)"
        )
    return x


def one_axis(kind: str, x: Tensor, n, axis: int, norm, forward: bool = True):
    """The 1-D transform of ``kind`` of the tensor ``x`` along ``axis`` with ``n`` points (None:
    the default of NumPy's 1-D function)."""
    if kind == "c2c":
        return ops._fft_c2c(x, (axis,), forward, norm, None if n is None else (n,))
    if kind == "r2c":
        return ops._fft_r2c(x, (axis,), norm, None if n is None else (n,))
    return ops._fft_c2r(x, (axis,), norm, None if n is None else (n,))


def transform_nd(kind: str, x: Tensor, sizes, axes, norm, forward: bool = True):
    """The n-D transform of ``kind`` ("c2c", "r2c", "c2r") of ``x`` over ``axes`` (a list,
    non-empty, NumPy's order) with ``sizes`` (entries may be None: the 1-D default). Distinct
    axes make one op; a repeated axis is transformed as often as it is named, in NumPy's order
    (the last axis first, for c2r the others first)."""
    if len(set(axis % x.ndim for axis in axes)) == len(axes):
        if kind == "c2r" and sizes[-1] is None:
            sizes = [*sizes[:-1], 2 * (x.shape[axes[-1]] - 1)]
        sizes = tuple(x.shape[a] if s is None else s for s, a in zip(sizes, axes))
        if kind == "c2c":
            return ops._fft_c2c(x, tuple(axes), forward, norm, sizes)
        if kind == "r2c":
            return ops._fft_r2c(x, tuple(axes), norm, sizes)
        return ops._fft_c2r(x, tuple(axes), norm, sizes)
    if kind == "c2c":
        for ii in reversed(range(len(axes))):
            x = one_axis("c2c", x, sizes[ii], axes[ii], norm, forward)
        return x
    if kind == "r2c":
        x = one_axis("r2c", x, sizes[-1], axes[-1], norm)
        for ii in reversed(range(len(axes) - 1)):
            x = one_axis("c2c", x, sizes[ii], axes[ii], norm)
        return x
    for ii in range(len(axes) - 1):
        x = one_axis("c2c", x, sizes[ii], axes[ii], norm, forward=False)
    return one_axis("c2r", x, sizes[-1], axes[-1], norm)


def _finished(result: Tensor, given: Tensor, real_output: bool, out, name: str):
    """NumPy's output dtype (a float16 input: a float16 real output) and ``out=``."""
    if real_output and given.dtype == np.float16:
        result = astype(result, _dtypes.float16)
    return finish(result, out, f"fft.{name}")


def swapped_norm(norm):
    """The norm of the transform in the other direction (hfft/ihfft), NumPy's ValueError for
    an unknown one."""
    if norm not in _SWAP:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return _SWAP[norm]


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _1d(name: str, kind: str, forward: bool = True, conjugate: bool = False, example=""):
    """NumPy's 1-D transform ``name``: ``kind`` along ``axis`` (hfft/ihfft: the conjugate
    relations, with the norm of the other direction)."""

    def transform(a, n=None, axis=-1, norm=None, out=None):
        given = tensor_of(a)
        x = transform_input(given, kind, f"numpy.fft.{name}")
        axis = axis_of(axis, x.ndim)
        if conjugate:
            norm = swapped_norm(norm)
            if kind == "c2r":
                x = ops.conj(x)
        result = one_axis(kind, x, n, axis, norm, forward)
        if conjugate and kind == "r2c":
            result = ops.conj(result)
        return _finished(result, given, kind == "c2r", out, name)

    transform.__name__ = transform.__qualname__ = name
    transform.ops = _OPS[kind] + (("conj",) if conjugate else ())
    transform.__doc__ = _doc(name, "n=None, axis=-1", example)
    return transform


def cook_nd_args(x: Tensor, s, axes, name: str, warn: bool = True):
    """NumPy's ``s`` and ``axes`` of an n-D transform as two lists of equal length (NumPy 2's
    rules: ``axes`` None means the last ``len(s)`` axes, with NumPy's DeprecationWarning when
    ``s`` is given; -1 in ``s`` means the input's size)."""
    if axes is None:
        if s is not None and warn:
            warnings.warn(
                f"dualad.numpy.fft.{name}: `axes` should not be `None` if `s` is not `None` "
                "(Deprecated in NumPy 2.0)",
                DeprecationWarning,
                stacklevel=3,
            )
        axes = list(range(-(x.ndim if s is None else len(s)), 0))
    elif isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = [axis_of(axis, x.ndim) for axis in axes]
    s = [x.shape[a] for a in axes] if s is None else list(s)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    return [x.shape[a] if size == -1 else size for size, a in zip(s, axes)], axes


def _nd(name: str, kind: str, forward: bool = True, default_axes=None, example=""):
    """NumPy's n-D transform ``name`` (the 2-D ones: ``default_axes`` (-2, -1))."""

    def transform(a, s=None, axes=default_axes, norm=None, out=None):
        given = tensor_of(a)
        x = transform_input(given, kind, f"numpy.fft.{name}")
        sizes, axes = cook_nd_args(x, s, axes, name)
        if not axes:
            if kind != "c2c":  # (NumPy: an IndexError of its s[-1])
                raise IndexError(f"dualad.numpy.fft.{name}: no axes to transform")
            return finish(given, out, f"fft.{name}")  # NumPy returns the input as it is
        if kind == "c2r" and s is None:
            sizes[-1] = None  # NumPy's default: 2 (m - 1) samples from m bins
        result = transform_nd(kind, x, sizes, axes, norm, forward)
        return _finished(result, given, kind == "c2r", out, name)

    transform.__name__ = transform.__qualname__ = name
    transform.ops = _OPS[kind]
    axes = "axes=None" if default_axes is None else "axes=(-2, -1)"
    transform.__doc__ = _doc(name, f"s=None, {axes}", example)
    return transform


def _doc(name: str, signature: str, example: str) -> str:
    return f"""``numpy.fft.{name}(a, {signature}, norm=None, out=None)`` on tensors, with NumPy's
    values, dtypes and errors, differentiable (``dualad/ops/fft.py``).

    >>> import dualad
    >>> import dualad.numpy as dnp
    >>> {example}
    """


_FFT = """dnp.fft.fft(dualad.tensor([1.0, 2.0, 0.0, -1.0]))
    tensor([2.+0.j, 1.-3.j, 0.+0.j, 1.+3.j])"""
_IFFT = """dnp.fft.ifft(dualad.tensor([4.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])"""
_RFFT = """dnp.fft.rfft(dualad.tensor([1.0, 2.0, 0.0, -1.0]), n=3)
    tensor([3.+0.j        , 0.-1.73205081j])"""
_IRFFT = """dnp.fft.irfft(dualad.tensor([2.0, 1 - 3j, 0.0]))
    tensor([ 1.,  2.,  0., -1.])"""
_HFFT = """dnp.fft.hfft(dualad.tensor([1.0, 2.0, 3.0]))
    tensor([ 8., -2.,  0., -2.])"""
_IHFFT = """dnp.fft.ihfft(dualad.tensor([8.0, -2.0, 0.0, -2.0]))
    tensor([1.-0.j, 2.-0.j, 3.-0.j])"""
_FFTN = """dnp.fft.fftn(dualad.ones(2, 3)).real
    tensor([[6., 0., 0.],
            [0., 0., 0.]])"""
_IFFTN = """dnp.fft.ifftn(dualad.ones(2, 2), s=(2, 3), axes=(0, 1)).real
    tensor([[0.66666667, 0.16666667, 0.16666667],
            [0.        , 0.        , 0.        ]])"""
_RFFTN = """dnp.fft.rfftn(dualad.ones(2, 4)).shape
    (2, 3)"""
_IRFFTN = """dnp.fft.irfftn(dnp.fft.rfftn(dualad.ones(2, 4)))
    tensor([[1., 1., 1., 1.],
            [1., 1., 1., 1.]])"""
_FFT2 = """dnp.fft.fft2(dualad.ones(3, 2, 2)).shape
    (3, 2, 2)"""
_IFFT2 = """dnp.fft.ifft2(dualad.ones(2, 2), norm="forward").real
    tensor([[4., 0.],
            [0., 0.]])"""
_RFFT2 = """dnp.fft.rfft2(dualad.ones(2, 5, dtype=dualad.float32)).dtype
    dtype('complex64')"""
_IRFFT2 = """dnp.fft.irfft2(dualad.ones(2, 3), s=(2, 5)).shape
    (2, 5)"""

fft = _1d("fft", "c2c", example=_FFT)
ifft = _1d("ifft", "c2c", forward=False, example=_IFFT)
rfft = _1d("rfft", "r2c", example=_RFFT)
irfft = _1d("irfft", "c2r", example=_IRFFT)
hfft = _1d("hfft", "c2r", conjugate=True, example=_HFFT)
ihfft = _1d("ihfft", "r2c", conjugate=True, example=_IHFFT)
fftn = _nd("fftn", "c2c", example=_FFTN)
ifftn = _nd("ifftn", "c2c", forward=False, example=_IFFTN)
rfftn = _nd("rfftn", "r2c", example=_RFFTN)
irfftn = _nd("irfftn", "c2r", example=_IRFFTN)
fft2 = _nd("fft2", "c2c", default_axes=(-2, -1), example=_FFT2)
ifft2 = _nd("ifft2", "c2c", forward=False, default_axes=(-2, -1), example=_IFFT2)
rfft2 = _nd("rfft2", "r2c", default_axes=(-2, -1), example=_RFFT2)
irfft2 = _nd("irfft2", "c2r", default_axes=(-2, -1), example=_IRFFT2)
