"""Special functions defined by integrals: the exponential integrals ``expi``, ``exp1``,
``expn`` (static integer order ``n >= 0``), the sine/cosine integrals ``si``, ``ci`` and their
hyperbolic versions ``shi``, ``chi`` (scipy's ``sici``/``shichi``), the Fresnel integrals
``fresnel_s``, ``fresnel_c``, Dawson's integral ``dawsn``, the imaginary error function
``erfi`` (the dilogarithm ``spence`` is in ``elementary_special``).

Values are ``scipy.special``'s (``_special_impls``). The derivatives are the integrands,
written with ops whose own derivatives are exact where the integrand has a removable
singularity: ``si' = sin(x)/x = spherical_jn(0, x)``, ``shi' = spherical_in(0, x)``,
``exp1' = -_expn(0, x) = -exp(-x)/x``, ``expn(n)' = -expn(n - 1)``. Complex arguments for the
entire functions ``fresnel_s fresnel_c dawsn erfi`` (holomorphic rules, PyTorch's conjugate
convention); the others are real only (their complex versions have branch cuts).

Singular points (scipy's values kept): ``expi(0) = -inf`` (derivative ``1/x`` there: +inf;
the higher ones nan, the two sides differing); ``exp1(0) = inf`` with derivative -inf, nan for
``x < 0`` (so are the derivatives); ``expn(n, 0) = 1/(n - 1)`` for n >= 2, with derivative
``-expn(n - 1, 0)``; ``ci(0) = chi(0) = -inf`` with derivative +inf (``ci`` and ``chi`` are
even in scipy: ``ci(-x) = ci(x)``, derivative ``cos(x)/x``).
"""

from __future__ import annotations

import math as _math

from .._dispatch import apply1
from ._helpers import _unary_with_params
from ._special_impls import scipy_unary, special_impl
from .exp_log import exp
from .gamma_functions import _static_int
from .spherical_bessel import spherical
from .trigonometric import cos, cosh, sin

# ---------------------------------------------------------------------------------------------
# exponential integrals


def _expn_deriv(x, y, *, n):
    if n == 0:  # (exp(-x)/x)' = -(exp(-x)/x) (1 + 1/x)
        return -(y + y / x)
    return -_expn(n - 1, x)


_expn_op = _unary_with_params("expn", special_impl("special.expn", "expn"), _expn_deriv, uses="xy")


def _expn(n, x):
    """``E_n(x)`` for a static integer ``n >= 0`` (``dualad.special.expn`` documents it)."""
    return apply1(_expn_op, x, {"n": _static_int("special.expn", "n", n, 0)})


_expi = scipy_unary("expi", lambda x, y: exp(x) / x)
_exp1 = scipy_unary("exp1", lambda x, y: -_expn(0, x))


# ---------------------------------------------------------------------------------------------
# sine, cosine and their hyperbolic integrals


_si = scipy_unary("si", lambda x, y: spherical("jn", 0, x), function="sici", index=0)
_ci = scipy_unary("ci", lambda x, y: cos(x) / x, function="sici", index=1)
_shi = scipy_unary("shi", lambda x, y: spherical("in", 0, x), function="shichi", index=0)
_chi = scipy_unary("chi", lambda x, y: cosh(x) / x, function="shichi", index=1)

# ---------------------------------------------------------------------------------------------
# Fresnel, Dawson, erfi: entire functions, complex too

_HALF_PI = _math.pi / 2
_fresnel_s, _fresnel_c = (
    scipy_unary(f"fresnel_{part}", deriv, function="fresnel", index=index, complex_ok=True)
    for part, index, deriv in (
        ("s", 0, lambda x, y: sin(x * x * _HALF_PI)),
        ("c", 1, lambda x, y: cos(x * x * _HALF_PI)),
    )
)
_dawsn = scipy_unary("dawsn", lambda x, y: 1 - 2 * x * y, uses="xy", complex_ok=True)
_erfi = scipy_unary("erfi", lambda x, y: exp(x * x) * (2 / _math.sqrt(_math.pi)), complex_ok=True)
