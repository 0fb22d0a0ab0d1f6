"""NumPy's elementwise functions that are not ufuncs (ufuncs answer ``__array_ufunc__``):
``real imag angle sinc i0 nan_to_num real_if_close``, on dualad's ops, with NumPy's dtypes
(``imag`` of a real input is zeros of its dtype, ``angle`` of a real input is 0 or pi).

>>> import dualad
>>> import dualad.numpy as dnp
>>> z = dualad.tensor([1.0 + 1.0j, -2.0 + 0.0j])
>>> dnp.angle(z, deg=True)
tensor([ 45., 180.])
>>> dnp.nan_to_num(dualad.tensor([float("nan"), 1.0]), nan=-1.0)
tensor([-1.,  1.])
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import zeros
from ._common import floating, tensor_of

__all__ = ["real", "imag", "angle", "sinc", "i0", "nan_to_num", "real_if_close"]


def real(val):
    """``numpy.real``: the real part (the input itself when it is real).

    >>> import dualad, dualad.numpy as dnp
    >>> z = dualad.tensor([1.0 + 2.0j, 3.0 - 4.0j], requires_grad=True)
    >>> dnp.real(z)
    tensor([1., 3.], grad_fn=<RealBackward0>)
    """
    return ops.real(tensor_of(val))


def imag(val):
    """``numpy.imag``: the imaginary part (zeros of the input's dtype when it is real).

    >>> import dualad, dualad.numpy as dnp
    >>> z = dualad.tensor([1.0 + 2.0j, 3.0 - 4.0j], requires_grad=True)
    >>> dnp.imag(z)
    tensor([ 2., -4.], grad_fn=<ImagBackward0>)
    """
    x = tensor_of(val)
    if x.dtype.kind == "c":
        return ops.imag(x)
    return zeros(tuple(x.shape), dtype=x.dtype, device=x.device)


def angle(z, deg=False):
    """``numpy.angle``: the argument of ``z`` in radians (degrees with ``deg``); the
    derivative of a real input's angle is 0.

    >>> import dualad, dualad.numpy as dnp
    >>> z = dualad.tensor([1.0 + 1.0j, -2.0j], requires_grad=True)
    >>> dnp.angle(z)
    tensor([ 0.78539816, -1.57079633], grad_fn=<AngleBackward0>)
    """
    r = ops.angle(tensor_of(z))
    return r * (180.0 / np.pi) if deg else r


def i0(x):
    """``numpy.i0``: the modified Bessel function of the first kind, order 0 (real input; its
    derivative is ``i1``, values from ``scipy.special``).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.i0(x)
    tensor([1.26606588, 2.2795853 , 4.88079259], grad_fn=<I0Backward0>)
    """
    x = tensor_of(x)
    if x.dtype.kind == "c":
        raise TypeError("dualad.numpy.i0: i0 not supported for complex values (as NumPy)")
    return ops.i0(floating(x))


def sinc(x):
    """``numpy.sinc``: ``sin(pi x) / (pi x)``, 1 at 0 (its derivative there is 0).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([0.0, 0.5, 1.5], requires_grad=True)
    >>> dnp.sinc(x)
    tensor([ 1.        ,  0.63661977, -0.21220659], grad_fn=<SincBackward0>)
    """
    return ops.sinc(floating(tensor_of(x)))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``numpy.nan_to_num``: NaN, +inf and -inf replaced by ``nan``, ``posinf`` and
    ``neginf`` (the dtype's largest and most negative numbers by default); complex inputs
    part by part. The replaced entries have derivative 0, the others 1.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, dnp.nan, dnp.inf], requires_grad=True)
    >>> dnp.nan_to_num(x, posinf=9.0)
    tensor([1., 0., 9.], grad_fn=<NanToNumBackward0>)
    """
    t = tensor_of(x)
    if t.dtype.kind in "biu":
        return ops.clone(t) if copy else t
    if t.dtype.kind == "c":
        parts = [ops.nan_to_num(p, nan, posinf, neginf) for p in (ops.real(t), ops.imag(t))]
        return parts[0] + parts[1] * 1j
    return ops.nan_to_num(t, nan, posinf, neginf)


def real_if_close(a, tol=100):
    """``numpy.real_if_close``: the real part of a complex ``a`` when every imaginary part is
    below ``tol`` (in machine epsilons of its dtype when ``tol > 1``), else ``a`` itself. Which
    one depends on the values, so under ``vmap`` it needs them as plain values.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.real_if_close(dualad.tensor([1.0 + 1e-15j, 2.0 + 0j]))
    tensor([1., 2.])
    """
    x = tensor_of(a)
    if x.dtype.kind != "c":
        return x
    if tol > 1:
        tol = np.finfo(x.dtype).eps * tol
    if bool(ops.all(ops.abs(ops.imag(x)) < tol)):
        return ops.real(x)
    return x
