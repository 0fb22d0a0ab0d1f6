"""Complex parts: real, imag, abs, sgn, angle (conj is in ``_helpers.py``).

abs, sgn and angle are not holomorphic: their rules are written out (PyTorch's conventions).
"""

from __future__ import annotations

import math as _math

from .._dispatch import EMPTY, OpDef, dispatch, register, unary_caller
from .._tensor import Tensor
from . import _batching as batching
from ._exports import Exports
from ._helpers import conj, identity_on_real, zero_jvp, zero_vjp
from ._promotion import _float_array
from .arithmetic import mul, reciprocal
from .comparison import where

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# xp.real/xp.imag of a complex array are views of it; real and imag are not view ops (writing
# into the result must not change the input behind autograd's and forward mode's back): copy
def _real_impl(xp, x):
    return xp.real(x).copy()


def _imag_impl(xp, x):
    return xp.imag(x).copy()


def _real_vjp(cts, outs, args, params, needs):
    # the cotangent of Re(z) is real; as a gradient w.r.t. complex z it is ct + 0j
    return (cts[0],)


_real_op = register(
    OpDef(
        "real",
        _real_impl,
        vjp=_real_vjp,
        jvp=lambda tangents, outs, args, params: real(tangents[0]),
        batch=batching.elementwise,
        save_args=False,
    )
)


real = public.method(
    identity_on_real(
        _real_op,
        """Real part (``x`` itself for real tensors).

    >>> import dualad
    >>> dualad.real(dualad.tensor([1.0 + 2.0j, 3.0 - 1.0j]))
    tensor([1., 3.])
    """,
    )
)


_imag_op = register(
    OpDef(
        "imag",
        _imag_impl,
        # d Im(z): the gradient w.r.t. z of a real loss through Im(z) is ct * 1j
        vjp=lambda cts, outs, args, params, needs: (mul(cts[0], 1j),),
        jvp=lambda tangents, outs, args, params: imag(tangents[0]),
        batch=batching.elementwise,
        save_args=False,
    )
)


@public.method
def imag(x):
    """Imaginary part (complex tensors only, like PyTorch).

    >>> import dualad
    >>> z = dualad.tensor([1.0 + 2.0j, 3.0 - 1.0j], requires_grad=True)
    >>> dualad.imag(z)
    tensor([ 2., -1.], grad_fn=<ImagBackward0>)
    >>> dualad.autograd.grad(dualad.imag(z).sum(), z)
    (tensor([0.+1.j, 0.+1.j]),)
    """
    if isinstance(x, Tensor) and x._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return dispatch(_imag_op, (x,), EMPTY)


# ---------------------------------------------------------------------------------------------
# absolute value and sgn


def _abs_vjp(cts, outs, args, params, needs):
    # |z| is not holomorphic, so the generic ``ct * conj(f'(z))`` does not apply: the gradient of
    # a real loss through |z| is ct * z / |z| (PyTorch's sgn(z)), 0 at 0 (so abs'(0) == 0).
    (x,) = args
    if x.dtype.kind == "c":
        return (cts[0] * _unit(x),)
    return (cts[0] * sgn(x),)  # real x: piecewise constant, so the nondifferentiable sign


def _abs_jvp(tangents, outs, args, params):
    (x,) = args
    if x.dtype.kind == "c":
        return real(conj(_unit(x)) * tangents[0])  # d|z| = Re(conj(z) dz) / |z|
    return tangents[0] * sgn(x)


def _unit(z):
    """z / |z| (0 at 0) written in differentiable ops, so complex abs is twice differentiable."""
    magnitude = abs(z)
    zero = magnitude == 0
    return where(zero, 0.0, z / where(zero, 1.0, magnitude))


_abs_op = register(
    OpDef(
        "abs",
        lambda xp, x: xp.abs(x),
        vjp=_abs_vjp,
        jvp=_abs_jvp,
        batch=batching.elementwise,
        node_name="AbsBackward0",
    )
)
abs = public.inplace(
    unary_caller(
        _abs_op,
        doc="""Absolute value (gradient sgn(x), 0 at 0).

    >>> import dualad
    >>> x = dualad.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    >>> dualad.abs(x)
    tensor([2., 0., 3.], grad_fn=<AbsBackward0>)
    >>> dualad.autograd.grad(dualad.abs(x).sum(), x)  # 0 at the kink
    (tensor([-1.,  0.,  1.]),)
    """,
    )
)
absolute = public.inplace(abs, "absolute")


def _sgn_impl(xp, x):
    if x.dtype.kind != "c":
        return xp.sign(x)
    magnitude = xp.abs(x)
    safe = xp.where(magnitude == 0, 1, magnitude)
    return xp.where(magnitude == 0, 0, x / safe)


def _sgn_inverse_magnitude(x):
    # 1 / |x|, 0 at 0 (where sgn's derivative is taken to be 0, as PyTorch's sgn_backward)
    magnitude = abs(x)
    zero = magnitude == 0
    return where(zero, 0.0, reciprocal(where(zero, 1.0, magnitude)))


def _sgn_vjp(cts, outs, args, params, needs):
    (x,) = args
    ct = cts[0]
    if x.dtype.kind != "c":
        return zero_vjp(cts, outs, args, params, needs)
    # u = z / |z|: du = (dz - u Re(conj(u) dz)) / |z|, whose adjoint for a real loss is
    # (g - Re(g conj(u)) u) / |z| (not holomorphic: no conjugated derivative to multiply)
    u = outs[0]
    return ((ct - real(ct * conj(u)) * u) * _sgn_inverse_magnitude(x),)


def _sgn_jvp(tangents, outs, args, params):
    (x,) = args
    if x.dtype.kind != "c":
        return zero_jvp(tangents, outs, args, params)
    u = outs[0]
    t = tangents[0]
    return (t - u * real(conj(u) * t)) * _sgn_inverse_magnitude(x)


_sgn_op = register(
    OpDef("sgn", _sgn_impl, vjp=_sgn_vjp, jvp=_sgn_jvp, batch=batching.elementwise, save_out=True)
)
sgn = public.inplace(
    unary_caller(
        _sgn_op,
        doc="""x / |x| (0 at 0); sign for real x (zero gradient), differentiable for complex x.

        >>> import dualad
        >>> dualad.sgn(dualad.tensor([3.0 + 4.0j, 0j]))
        tensor([0.6+0.8j, 0. +0.j ])
        >>> dualad.sgn(dualad.tensor([-2.0, 0.0, 5.0]))
        tensor([-1.,  0.,  1.])
        """,
    )
)


# ---------------------------------------------------------------------------------------------
# angle


def _angle_impl(xp, x):
    x = _float_array(x)
    if x.dtype.kind == "c":
        return xp.angle(x)
    # real x: pi for x < 0, else 0 (PyTorch: angle(-0.0) == 0, NaN stays NaN)
    out = xp.where(x < 0, _math.pi, 0.0).astype(x.dtype)
    return xp.where(xp.isnan(x), x, out)


def _abs_squared(x):
    """|x|**2 and a copy with zeros replaced by 1 (a safe denominator)."""
    squared = real(x * conj(x))
    return squared, where(squared == 0, 1.0, squared)


def _angle_vjp(cts, outs, args, params, needs):
    (x,) = args
    ct = cts[0]
    if x.dtype.kind != "c":
        return (ct * 0.0,)  # piecewise constant in real x
    # d angle = (-Im(z) dRe + Re(z) dIm) / |z|**2: the gradient is ct * i z / |z|**2 (0 at 0)
    squared, safe = _abs_squared(x)
    return (where(squared == 0, 0.0, (ct / safe) * x * 1j),)


def _angle_jvp(tangents, outs, args, params):
    (x,) = args
    t = tangents[0]
    if x.dtype.kind != "c":
        return t * 0.0
    squared, safe = _abs_squared(x)
    return where(squared == 0, 0.0, imag(conj(x) * t) / safe)


_angle_op = register(
    OpDef("angle", _angle_impl, vjp=_angle_vjp, jvp=_angle_jvp, batch=batching.elementwise)
)
angle = public.method(
    unary_caller(
        _angle_op,
        doc="""Argument of a complex number in (-pi, pi]; for real x, pi where x < 0 else 0.

        >>> import dualad
        >>> dualad.angle(dualad.tensor([1j, -1.0 + 0j]))
        tensor([1.57079633, 3.14159265])
        >>> dualad.angle(dualad.tensor([-2.0, 3.0]))
        tensor([3.14159265, 0.        ])
        """,
    )
)
