"""Trigonometric and hyperbolic functions, their inverses (complex: principal branches, like
NumPy), atan2, hypot, sinc and unit conversions.

sin, cos and tanh have fused derivative ops (``sin_backward`` & co, PyTorch's
``tanh_backward``): one op each for the VJP and the JVP of the hottest elementwise ops,
differentiable themselves (create_graph, forward-over-reverse) through their partials.
"""

from __future__ import annotations

import math as _math

import numpy as np

from .._dispatch import apply1
from .._tensor import Tensor
from ._exports import Exports
from ._helpers import _unary_with_params, binary, unary
from ._promotion import _PY_SCALARS, _float_array, _floating, _floating_pair
from .arithmetic import reciprocal, rsqrt, sqrt
from .comparison import where

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# derivatives fused with the product by a (co)tangent: one op each for the VJP and the JVP of
# the hottest elementwise ops (PyTorch's tanh_backward, sigmoid_backward); differentiable
# themselves (create_graph, forward-over-reverse) through their partials


def _scalar_math(fn, x):
    """``fn(x)`` for a Python scalar ``x``, as a Python scalar (weakly typed: float32 times it
    is float32, as for ``x`` itself)."""
    return fn(x).item()


def _cos_of(x):
    return cos(x) if isinstance(x, Tensor) else _scalar_math(np.cos, x)


def _sin_of(x):
    return sin(x) if isinstance(x, Tensor) else _scalar_math(np.sin, x)


sin_backward = binary(
    "sin_backward",
    lambda xp, t, x: (
        t * (xp.cos(_floating(x)) if type(x) not in _PY_SCALARS else _scalar_math(np.cos, x))
    ),
    (lambda t, x, y: _cos_of(x), lambda t, x, y: -(t * _sin_of(x))),
    uses="ab",
    doc="``t * cos(x)``: sine's derivative at ``x`` times ``t``.",
)
cos_backward = binary(
    "cos_backward",
    lambda xp, t, x: (
        -(t * (xp.sin(_floating(x)) if type(x) not in _PY_SCALARS else _scalar_math(np.sin, x)))
    ),
    (lambda t, x, y: -_sin_of(x), lambda t, x, y: -(t * _cos_of(x))),
    uses="ab",
    doc="``-t * sin(x)``: cosine's derivative at ``x`` times ``t``.",
)
tanh_backward = binary(
    "tanh_backward",
    lambda xp, t, y: t * (1 - y * y),
    (lambda t, y, out: 1 - y * y, lambda t, y, out: -2 * (t * y)),
    uses="ab",
    doc="``t * (1 - y**2)``: tanh's derivative at its output ``y`` times ``t``.",
)

# their impls on floating arrays as steps, written inline by dualad.jit's code generator
# (OpDef.inline: the same operations in the same order, so the same values)
sin_backward.op.inline = (("cos", (1,)), ("multiply", (0, ("r", 0))))
cos_backward.op.inline = (("sin", (1,)), ("multiply", (0, ("r", 0))), ("negative", (("r", 1),)))
tanh_backward.op.inline = (
    ("multiply", (1, 1)),
    ("subtract", (("c", 1), ("r", 0))),
    ("multiply", (0, ("r", 1))),
)

# ---------------------------------------------------------------------------------------------
# trigonometric and hyperbolic

sin = public.inplace(
    unary(
        "sin",
        lambda xp, x: xp.sin(_floating(x)),
        None,
        doc="""Sine.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.sin(x)
        tensor([0.        , 0.84147098], grad_fn=<SinBackward0>)
        >>> dualad.autograd.grad(dualad.sin(x).sum(), x)
        (tensor([1.        , 0.54030231]),)
        """,
        fused=sin_backward,
    )
)
cos = public.inplace(
    unary(
        "cos",
        lambda xp, x: xp.cos(_floating(x)),
        None,
        doc="""Cosine.

        >>> import dualad
        >>> x = dualad.tensor([0.5, 1.0], requires_grad=True)
        >>> dualad.cos(x)
        tensor([0.87758256, 0.54030231], grad_fn=<CosBackward0>)
        >>> dualad.autograd.grad(dualad.cos(x).sum(), x)
        (tensor([-0.47942554, -0.84147098]),)
        """,
        fused=cos_backward,
    )
)
tan = public.inplace(
    unary(
        "tan",
        lambda xp, x: xp.tan(_floating(x)),
        lambda x, y: 1 + y * y,
        uses="y",
        doc="""Tangent.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.tan(x)
        tensor([0.        , 1.55740772], grad_fn=<TanBackward0>)
        >>> dualad.autograd.grad(dualad.tan(x).sum(), x)
        (tensor([1.        , 3.42551882]),)
        """,
    )
)
tanh = public.inplace(
    unary(
        "tanh",
        lambda xp, x: xp.tanh(_floating(x)),
        None,
        uses="y",
        doc="""Hyperbolic tangent.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.tanh(x)
        tensor([0.        , 0.76159416], grad_fn=<TanhBackward0>)
        >>> dualad.autograd.grad(dualad.tanh(x).sum(), x)
        (tensor([1.        , 0.41997434]),)
        """,
        fused=tanh_backward,
    )
)
sinh = public.inplace(
    unary(
        "sinh",
        lambda xp, x: xp.sinh(_floating(x)),
        lambda x, y: cosh(x),
        doc="""Hyperbolic sine.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.sinh(x)
        tensor([0.        , 1.17520119], grad_fn=<SinhBackward0>)
        >>> dualad.autograd.grad(dualad.sinh(x).sum(), x)
        (tensor([1.        , 1.54308063]),)
        """,
    )
)
cosh = public.inplace(
    unary(
        "cosh",
        lambda xp, x: xp.cosh(_floating(x)),
        lambda x, y: sinh(x),
        doc="""Hyperbolic cosine.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.cosh(x)
        tensor([1.        , 1.54308063], grad_fn=<CoshBackward0>)
        >>> dualad.autograd.grad(dualad.cosh(x).sum(), x)
        (tensor([0.        , 1.17520119]),)
        """,
    )
)


# ---------------------------------------------------------------------------------------------
# inverse trigonometric and hyperbolic functions (complex: principal branches, like NumPy)
# (declared alike, as every unary op is: each its NumPy function, derivative and doc in one call)

asin = public.inplace(
    unary(
        "asin",
        lambda xp, x: xp.arcsin(_floating(x)),
        lambda x, y: rsqrt(1 - x * x),
        doc="""Inverse sine (``arcsin``); derivative ``1 / sqrt(1 - x**2)``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 0.5], requires_grad=True)
        >>> dualad.asin(x)
        tensor([0.        , 0.52359878], grad_fn=<AsinBackward0>)
        >>> dualad.autograd.grad(dualad.asin(x).sum(), x)
        (tensor([1.        , 1.15470054]),)
        """,
    )
)
acos = public.inplace(
    unary(
        "acos",
        lambda xp, x: xp.arccos(_floating(x)),
        lambda x, y: -rsqrt(1 - x * x),
        doc="""Inverse cosine (``arccos``); derivative ``-1 / sqrt(1 - x**2)``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 0.5], requires_grad=True)
        >>> dualad.acos(x)
        tensor([1.57079633, 1.04719755], grad_fn=<AcosBackward0>)
        >>> dualad.autograd.grad(dualad.acos(x).sum(), x)
        (tensor([-1.        , -1.15470054]),)
        """,
    )
)
atan = public.inplace(
    unary(
        "atan",
        lambda xp, x: xp.arctan(_floating(x)),
        lambda x, y: reciprocal(1 + x * x),
        doc="""Inverse tangent (``arctan``); derivative ``1 / (1 + x**2)``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.atan(x)
        tensor([0.        , 0.78539816], grad_fn=<AtanBackward0>)
        >>> dualad.autograd.grad(dualad.atan(x).sum(), x)
        (tensor([1. , 0.5]),)
        """,
    )
)
asinh = public.inplace(
    unary(
        "asinh",
        lambda xp, x: xp.arcsinh(_floating(x)),
        lambda x, y: rsqrt(x * x + 1),
        doc="""Inverse hyperbolic sine; derivative ``1 / sqrt(x**2 + 1)``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.asinh(x)
        tensor([0.        , 0.88137359], grad_fn=<AsinhBackward0>)
        >>> dualad.autograd.grad(dualad.asinh(x).sum(), x)
        (tensor([1.        , 0.70710678]),)
        """,
    )
)
acosh = public.inplace(
    unary(
        "acosh",
        lambda xp, x: xp.arccosh(_floating(x)),
        # sqrt(x - 1) * sqrt(x + 1), not sqrt(x**2 - 1): the right branch for complex x
        lambda x, y: reciprocal(sqrt(x - 1) * sqrt(x + 1)),
        doc="""Inverse hyperbolic cosine; derivative ``1 / sqrt(x**2 - 1)``.

        >>> import dualad
        >>> x = dualad.tensor([2.0, 3.0], requires_grad=True)
        >>> dualad.acosh(x)
        tensor([1.3169579 , 1.76274717], grad_fn=<AcoshBackward0>)
        >>> dualad.autograd.grad(dualad.acosh(x).sum(), x)
        (tensor([0.57735027, 0.35355339]),)
        """,
    )
)
atanh = public.inplace(
    unary(
        "atanh",
        lambda xp, x: xp.arctanh(_floating(x)),
        lambda x, y: reciprocal(1 - x * x),
        doc="""Inverse hyperbolic tangent; derivative ``1 / (1 - x**2)``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 0.5], requires_grad=True)
        >>> dualad.atanh(x)
        tensor([0.        , 0.54930614], grad_fn=<AtanhBackward0>)
        >>> dualad.autograd.grad(dualad.atanh(x).sum(), x)
        (tensor([1.        , 1.33333333]),)
        """,
    )
)
# NumPy's names (one line an alias: the name it is exported as, the op it is; the alias lists of
# comparison and trigonometric look alike on purpose: one greppable line a name, not a loop)
arcsin = public.inplace(asin, "arcsin")
arccos = public.inplace(acos, "arccos")
arctan = public.inplace(atan, "arctan")
arcsinh = public.inplace(asinh, "arcsinh")
arccosh = public.inplace(acosh, "arccosh")
arctanh = public.inplace(atanh, "arctanh")


def _atan2_inverse_radius2(a, b):
    # 1 / (a**2 + b**2), 0 at the origin (PyTorch's atan2_backward masks the infinite
    # reciprocal): the partials b / r2 and -a / r2 are then 0 there instead of 0/0 = NaN, and so
    # are their derivatives (r2's reciprocal is a constant 0 on the masked points)
    r2 = a * a + b * b
    origin = r2 == 0
    return where(origin, 0.0, reciprocal(where(origin, 1.0, r2)))


atan2 = public.inplace(
    binary(
        "atan2",
        lambda xp, a, b: xp.arctan2(*_floating_pair(a, b)),
        (
            lambda a, b, y: b * _atan2_inverse_radius2(a, b),
            lambda a, b, y: -a * _atan2_inverse_radius2(a, b),
        ),
        doc="""Angle of the point ``(b, a)``: ``atan2(a, b)`` with quadrant (``arctan2``).

        >>> import dualad
        >>> y = dualad.tensor([1.0, 0.0], requires_grad=True)
        >>> dualad.atan2(y, dualad.tensor([1.0, -1.0]))
        tensor([0.78539816, 3.14159265], grad_fn=<Atan2Backward0>)
        >>> dualad.autograd.grad(dualad.atan2(y, dualad.tensor([1.0, -1.0])).sum(), y)
        (tensor([ 0.5, -1. ]),)
        """,
    )
)
arctan2 = public.inplace(atan2, "arctan2")
hypot = public.inplace(
    binary(
        "hypot",
        lambda xp, a, b: xp.hypot(*_floating_pair(a, b)),
        (lambda a, b, y: a / y, lambda a, b, y: b / y),
        uses="aby",
        doc="""``sqrt(a**2 + b**2)`` without overflow.

        >>> import dualad
        >>> a = dualad.tensor([3.0, 5.0], requires_grad=True)
        >>> dualad.hypot(a, dualad.tensor([4.0, 12.0]))
        tensor([ 5., 13.], grad_fn=<HypotBackward0>)
        >>> dualad.autograd.grad(dualad.hypot(a, dualad.tensor([4.0, 12.0])).sum(), a)  # a / hypot
        (tensor([0.6       , 0.38461538]),)
        """,
    )
)


def _sinc_impl(xp, x):
    x = _float_array(x)
    zero = x == 0
    scaled = xp.where(zero, 1, x * _math.pi)
    return xp.where(zero, 1, xp.sin(scaled) / scaled)


def _sinc_taylor_impl(xp, x, *, k):
    # the k-th derivative of sinc at 0: 0 for odd k, (-pi**2)**(k/2) / (k + 1) for even k
    x = _float_array(x)
    value = 0.0 if k % 2 else (-(_math.pi**2)) ** (k // 2) / (k + 1)
    return xp.full(x.shape, value, dtype=x.dtype)


# sinc's derivatives at 0, each differentiable into the next (JAX's _sinc_maclaurin): the
# derivative at x == 0 is taken from here, so every order is right there, not only the first
_sinc_taylor_op = _unary_with_params(
    "sinc_taylor", _sinc_taylor_impl, lambda x, y, *, k: _sinc_taylor(k + 1, x)
)


def _sinc_taylor(k: int, x):
    """The k-th derivative of sinc at 0, in the shape and dtype of ``x``."""
    return apply1(_sinc_taylor_op, x, {"k": k})


def _sinc_deriv(x, y):
    # (cos(pi x) - sinc(x)) / x, and sinc'(0) = 0 at x == 0 (PyTorch's value) from the op whose
    # own derivative is sinc''(0) = -pi**2/3, and so on
    zero = x == 0
    return where(zero, _sinc_taylor(1, x), (cos(x * _math.pi) - y) / where(zero, 1.0, x))


sinc = public.inplace(
    unary(
        "sinc",
        _sinc_impl,
        _sinc_deriv,
        uses="xy",
        doc="""Normalised sinc ``sin(pi x) / (pi x)``, 1 at 0, where its derivatives of every
    order are its Taylor coefficients' (0, -pi**2/3, 0, pi**4/5, ...).

        >>> import dualad
        >>> x = dualad.tensor([0.0, 0.5], requires_grad=True)
        >>> dualad.sinc(x)
        tensor([1.        , 0.63661977], grad_fn=<SincBackward0>)
        >>> dualad.autograd.grad(dualad.sinc(x).sum(), x)
        (tensor([ 0.        , -1.27323954]),)
        """,
    )
)


def _scaling(name: str, factor: float, doc: str):
    """The op ``x * factor`` (a unit conversion): its derivative is the constant ``factor``."""
    return unary(name, lambda xp, x: _floating(x) * factor, lambda x, y: factor, uses="", doc=doc)


deg2rad = public.inplace(
    _scaling(
        "deg2rad",
        _math.pi / 180.0,
        """Degrees to radians.

    >>> import dualad
    >>> dualad.deg2rad(dualad.tensor([90.0, 180.0]))
    tensor([1.57079633, 3.14159265])
    """,
    )
)
rad2deg = public.inplace(
    _scaling(
        "rad2deg",
        180.0 / _math.pi,
        """Radians to degrees.

    >>> import dualad
    >>> dualad.rad2deg(dualad.tensor([1.0, 3.141592653589793]))
    tensor([ 57.29577951, 180.        ])
    """,
    )
)
