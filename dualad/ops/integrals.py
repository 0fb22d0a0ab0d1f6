"""Special functions defined by integrals: the exponential integrals ``expi``, ``exp1``,
``expn`` (static integer order ``n >= 0``), the sine/cosine integrals ``si``, ``ci`` and their
hyperbolic versions ``shi``, ``chi`` (scipy's ``sici``/``shichi``), the Fresnel integrals
``fresnel_s``, ``fresnel_c``, Dawson's integral ``dawsn``, the imaginary error function
``erfi`` and the dilogarithm ``spence``.

Values are ``scipy.special``'s (``_special_impls``). The derivatives are the integrands,
written with ops whose own derivatives are exact where the integrand has a removable
singularity: ``si' = sin(x)/x = spherical_jn(0, x)``, ``shi' = spherical_in(0, x)``,
``spence'(z) = log(z) / (1 - z) = -log1p(u)/u`` at ``u = z - 1`` (a series near ``z = 1``),
``exp1' = -_expn(0, x) = -exp(-x)/x``, ``expn(n)' = -expn(n - 1)``. Complex arguments for the
entire functions ``fresnel_s fresnel_c dawsn erfi`` (holomorphic rules, PyTorch's conjugate
convention); the others are real only (their complex versions have branch cuts).

Singular points (scipy's values kept): ``expi(0) = -inf`` (derivative ``1/x`` there: +inf;
the higher ones nan, the two sides differing); ``exp1(0) = inf`` with derivative -inf, nan for
``x < 0`` (so are the derivatives); ``expn(n, 0) = 1/(n - 1)`` for n >= 2, with derivative
``-expn(n - 1, 0)``; ``ci(0) = chi(0) = -inf`` with derivative +inf (``ci`` and ``chi`` are
even in scipy: ``ci(-x) = ci(x)``, derivative ``cos(x)/x``); ``spence(0) = pi**2/6`` with
derivative -inf; ``spence`` is nan for ``z < 0``.
"""

from __future__ import annotations

import math as _math

from .._dispatch import apply1
from ._helpers import _unary_with_params
from ._special_impls import scipy_unary, special_impl
from .comparison import where
from .complex_parts import absolute
from .exp_log import exp, log1p
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

# ---------------------------------------------------------------------------------------------
# the dilogarithm

# log1p(u)/u = sum_k (-u)**k / (k + 1): 17 terms are exact to double precision for |u| < 0.1
_NEAR_ONE = 0.1
_LOG1P_SERIES = [(-1) ** k / (k + 1) for k in range(17)]


def _log1p_over(u):
    """``log1p(u) / u``, 1 at ``u = 0``, with every derivative right there (the series)."""
    near = absolute(u) < _NEAR_ONE
    small = where(near, u, 0.0)  # double where: neither branch sees the other's inputs
    series = _LOG1P_SERIES[-1] * small
    for coefficient in reversed(_LOG1P_SERIES[1:-1]):
        series = (series + coefficient) * small
    series = series + _LOG1P_SERIES[0]
    far = where(near, 1.0, u)
    return where(near, series, log1p(far) / far)


_spence = scipy_unary("spence", lambda x, y: -_log1p_over(x - 1))
