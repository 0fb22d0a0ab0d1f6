"""Discrete Fourier transforms: three core ops from which every public transform is built.

- ``fft_c2c``: the complex-to-complex transform over ``axes``, forward (``xp.fft.fftn``) or
  inverse (``xp.fft.ifftn``);
- ``fft_r2c``: the real-to-complex transform (``xp.fft.rfftn``), one-sided along the last of
  ``axes`` (``m // 2 + 1`` bins for ``m`` samples);
- ``fft_c2r``: the complex-to-real inverse (``xp.fft.irfftn``) to ``last_size`` samples along
  the last axis, whose input must hold ``last_size // 2 + 1`` bins there.

Each takes ``norm`` in NumPy's sense ("backward", "ortho", "forward": which direction carries
the ``1/n``). They are linear, so the JVP is the op applied to the tangent and the VJP is the
adjoint transform (PyTorch's convention for complex gradients: the gradient of a real loss with
respect to ``z`` is ``dL/dRe z + i dL/dIm z``):

- c2c: the adjoint of ``fftn(norm)`` is ``ifftn`` with the swapped norm ("backward" <->
  "forward"): the scale stays, the direction flips. A real input takes the real part.
- c2r computes, exactly as NumPy's ``irfftn`` (c2c over the other axes, then a one-sided real
  inverse per row, which reads only the real part of the DC and Nyquist bins),
  ``scale * Re(F^H (w * pad(Y)))`` with the Hermitian weights ``w = (1, 2, ..., 2, 1)`` (the last
  1 only for an even ``last_size``: the Nyquist bin; an odd one has no Nyquist bin) and ``pad``
  the zero-padding to ``last_size``. Its adjoint is ``w * rfftn(ct, swapped norm)``: the DC and
  Nyquist bins get a real gradient (their imaginary parts are ignored by the forward), the
  others count twice (they stand for their mirror bin too).
- r2c is ``scale * crop(F x)``; its adjoint ``Re(F^H pad(ct))`` is ``irfftn(ct / w)`` with the
  swapped norm (the same identity read backwards).

Each is made by ``linear`` (``ops/base.py``): the JVP is the op, the VJP its transpose. The VJPs
are written with these ops themselves, so every order of derivative and every transform
composes. The batching rule moves the batch dim first: ``axes`` are stored negative,
counted from the end, so they name the same logical dims with a batch dim in front.

Singular points: none. The transforms are linear, so their derivatives are constant maps,
defined everywhere (a zero input included); ``abs`` of a spectrum has its own (``abs``'s
subgradient 0 at 0).

``n``/``s`` (the transform sizes) are applied before the op by cropping (a view, ``getitem``)
and zero-padding (``index_put_zeros``): both are linear ops with their own rules.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .._backend import allocate_on
from .._creation import as_tensor
from .._dispatch import apply, dispatch
from .._opdef import LINES
from ._exports import Exports
from ._keys import IndexKey
from .base import linear, move_bdim_to_front
from .complex_parts import real
from .slicing import getitem, index_put_zeros

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

NORMS = ("backward", "ortho", "forward")
# the norm of the adjoint transform: the same scale on the transform in the other direction
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _batch(op, args, bdims, params):
    # axes are negative (counted from the end): the batch dim in front is never transformed
    return apply(op, move_bdim_to_front(args[0], bdims[0]), **params), 0


def _real_if_real(grad, x):
    """The gradient of a real input: the real part of the adjoint (its imaginary part is the
    direction the input cannot move in)."""
    return grad if x.dtype.kind == "c" else real(grad)


def _hermitian_weights(like, axis: int, last_size: int, inverse: bool):
    """The weights ``(1, 2, ..., 2, 1)`` of the one-sided bins along ``axis`` (negative), shaped
    to broadcast against ``like`` (``inverse``: their reciprocals). The last weight is 1 only
    for an even ``last_size``: that bin is the Nyquist frequency, its own mirror."""
    bins = last_size // 2 + 1
    real_dtype = np.empty(0, like.dtype).real.dtype

    def make(xp):  # made on like's device: no host array copied over
        weights = xp.full(bins, 2.0)
        weights[0] = 1.0
        if last_size % 2 == 0:
            weights[-1] = 1.0
        if inverse:
            weights = 1.0 / weights
        return weights.astype(real_dtype).reshape((bins,) + (1,) * (-axis - 1))

    return as_tensor(allocate_on(like.device, make))


# ---------------------------------------------------------------------------------------------
# complex to complex


def _c2c_impl(xp, x, *, axes, forward, norm):
    transform = xp.fft.fftn if forward else xp.fft.ifftn
    return transform(x, axes=axes, norm=norm)


def _c2c_transpose(ct, x, *, axes, forward, norm):
    return _real_if_real(_c2c_raw(ct, axes, not forward, _SWAP[norm]), x)


_c2c_op = linear(
    "fft_c2c",
    _c2c_impl,
    _c2c_transpose,
    batch=_batch,
    node_name="FftC2CBackward0",
    sparsity=LINES,
)


def _c2c_raw(x, axes, forward, norm):
    return dispatch(_c2c_op, (x,), {"axes": axes, "forward": forward, "norm": norm})


# ---------------------------------------------------------------------------------------------
# real to complex (one-sided along the last axis)


def _r2c_impl(xp, x, *, axes, norm):
    return xp.fft.rfftn(x, axes=axes, norm=norm)


def _r2c_transpose(ct, x, *, axes, norm):
    last_size = x.shape[axes[-1]]
    ct = ct * _hermitian_weights(ct, axes[-1], last_size, inverse=True)
    return _c2r_raw(ct, axes, last_size, _SWAP[norm])


_r2c_op = linear(
    "fft_r2c",
    _r2c_impl,
    _r2c_transpose,
    batch=_batch,
    node_name="FftR2CBackward0",
    sparsity=LINES,
)


def _r2c_raw(x, axes, norm):
    return dispatch(_r2c_op, (x,), {"axes": axes, "norm": norm})


# ---------------------------------------------------------------------------------------------
# complex to real (from the one-sided bins along the last axis)


def _c2r_impl(xp, x, *, axes, last_size, norm):
    # NumPy's irfftn spelled out (c2c over the other axes, then the one-sided inverse per row):
    # the rules rely on exactly this map for inputs that are not Hermitian on the DC plane,
    # which a backend's fused n-D complex-to-real plan (cuFFT's) need not reproduce
    if len(axes) > 1:
        x = xp.fft.ifftn(x, axes=axes[:-1], norm=norm)
    return xp.fft.irfft(x, n=last_size, axis=axes[-1], norm=norm)


def _c2r_transpose(ct, x, *, axes, last_size, norm):
    grad = _r2c_raw(ct, axes, _SWAP[norm])
    grad = grad * _hermitian_weights(grad, axes[-1], last_size, inverse=False)
    return _real_if_real(grad, x)


_c2r_op = linear(
    "fft_c2r",
    _c2r_impl,
    _c2r_transpose,
    batch=_batch,
    node_name="FftC2RBackward0",
    sparsity=LINES,
)


def _c2r_raw(x, axes, last_size, norm):
    params = {"axes": axes, "last_size": last_size, "norm": norm}
    return dispatch(_c2r_op, (x,), params)


# ---------------------------------------------------------------------------------------------
# the public entry points: checked arguments, sizes applied by cropping and zero-padding


def _resized(x, axes, sizes):
    """``x`` cropped or zero-padded at the end of each of ``axes`` to ``sizes`` (NumPy's ``n``
    and ``s``): a view when it only crops, a padded copy otherwise."""
    shape = list(x.shape)
    crop = [slice(None)] * x.ndim
    padded = list(shape)
    cropped = grown = False
    for axis, size in zip(axes, sizes):
        axis += x.ndim
        if size < shape[axis]:
            crop[axis] = slice(0, size)
            shape[axis] = padded[axis] = size
            cropped = True
        elif size > shape[axis]:
            padded[axis] = size
            grown = True
    if cropped:
        x = getitem(x, tuple(crop))
    if grown:
        x = index_put_zeros(x, IndexKey(tuple(slice(0, s) for s in shape)), padded)
    return x


def _checked(op: str, x, axes, sizes, norm):
    """Negative ``axes``, the ``sizes`` (None: x's) as ints >= 1, and the norm (None: backward);
    NumPy's ValueErrors otherwise."""
    if norm is None:
        norm = "backward"
    if norm not in NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    ndim = x.ndim
    axes = tuple(normalize_axis_index(int(a), ndim) - ndim for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"dualad.{op}: the axes {axes} repeat an axis (FFT dims must be unique)")
    if sizes is None:
        sizes = tuple(x.shape[a] for a in axes)
    sizes = tuple(int(s) for s in sizes)
    for size in sizes:
        if size < 1:
            raise ValueError(f"Invalid number of FFT data points ({size}) specified.")
    return axes, sizes, norm


@public.function
def _fft_c2c(x, axes, forward: bool = True, norm=None, sizes=None):
    """The complex-to-complex DFT of ``x`` over ``axes`` (``xp.fft.fftn``, or ``ifftn`` when
    not ``forward``), ``x`` first cropped or zero-padded to ``sizes``. A real ``x`` gives the
    complex transform of the same precision (float32 -> complex64); its gradient is real.
    ``dualad.fft`` and ``dualad.numpy.fft`` are built on it.

    >>> import dualad
    >>> dualad._fft_c2c(dualad.tensor([1.0, 2.0, 3.0, 4.0]), (0,))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    axes, sizes, norm = _checked("fft", x, axes, sizes, norm)
    return _c2c_raw(_resized(x, axes, sizes), axes, bool(forward), norm)


@public.function
def _fft_r2c(x, axes, norm=None, sizes=None):
    """The real-to-complex DFT of real ``x`` over ``axes`` (``xp.fft.rfftn``): the last of
    ``axes`` keeps its ``m // 2 + 1`` non-negative frequencies. ``x`` is first cropped or
    zero-padded to ``sizes``.

    >>> import dualad
    >>> dualad._fft_r2c(dualad.tensor([1.0, 2.0, 3.0, 4.0]), (0,))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    if x.dtype.kind == "c":
        raise TypeError(f"dualad.rfft: expects a real input tensor, but got {x.dtype}")
    axes, sizes, norm = _checked("rfft", x, axes, sizes, norm)
    return _r2c_raw(_resized(x, axes, sizes), axes, norm)


@public.function
def _fft_c2r(x, axes, norm=None, sizes=None):
    """The complex-to-real inverse DFT of the one-sided ``x`` over ``axes``
    (``xp.fft.irfftn``): ``sizes`` are the output's sizes (default: ``x``'s, and ``2 (k - 1)``
    along the last axis for ``k`` bins there); the input is cropped or zero-padded to them,
    the last axis to ``sizes[-1] // 2 + 1`` bins. The imaginary parts of the DC bin (and of the
    Nyquist bin for an even size) are ignored, so their gradients are real.

    >>> import dualad
    >>> dualad._fft_c2r(dualad.tensor([10.0 + 0j, -2 + 2j, -2 + 0j]), (0,))
    tensor([1., 2., 3., 4.])
    """
    if sizes is None:  # x's sizes, and 2 (m - 1) samples from m bins
        axes, sizes, norm = _checked("irfft", x, axes, None, norm)
        sizes = (*sizes[:-1], 2 * (sizes[-1] - 1))
    axes, sizes, norm = _checked("irfft", x, axes, sizes, norm)
    last_size = sizes[-1]
    x = _resized(x, axes, (*sizes[:-1], last_size // 2 + 1))
    return _c2r_raw(x, axes, last_size, norm)
