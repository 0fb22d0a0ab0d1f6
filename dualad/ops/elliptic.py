"""Elliptic integrals and functions (scipy's parameter convention ``m = k**2``): the complete
integrals ``ellipk``, ``ellipkm1`` (``K(1 - p)``), ``ellipe`` (differentiable in ``m``/``p``),
the incomplete ``ellipkinc``, ``ellipeinc`` (in ``phi`` and ``m``), and Jacobi's ``ellipj``
(four ops ``sn cn dn ph``, differentiable in ``u``; ``m`` has no derivative there: a tracked
``m`` raises NotImplementedError).

Values are ``scipy.special``'s; real arguments only. Derivatives:
``K' = (E - (1-m) K) / (2 m (1-m))``, ``E' = (E - K) / (2m)``,
``dF/dphi = 1/sqrt(1 - m sin(phi)**2)``, ``dE/dphi = sqrt(1 - m sin(phi)**2)``,
``dF/dm = E(phi|m) / (2m(1-m)) - F(phi|m) / (2m) - sin(2 phi) / (4 (1-m) sqrt(...))``,
``dE/dm = (E(phi|m) - F(phi|m)) / (2m)``, ``sn' = cn dn``, ``cn' = -sn dn``, ``dn' = -m sn cn``,
``ph' = dn``. Their 0/0 at ``m = 0`` is removable: for ``|m| < 0.1`` the rules are the
derivatives of the power series in ``m`` (every order exact there, no cancellation).

Singular points (scipy's values kept): ``K(1) = inf`` with every derivative +inf (from the
pole ``1/(2(1-m))``); ``ellipkm1(0) = inf``, derivative -inf; ``E'(1) = -inf`` (the higher
derivatives of ``E`` at 1 are nan); ``K``, ``E`` are nan for ``m > 1``. ``ellipkinc``'s and
``ellipeinc``'s derivatives in ``m`` at ``m = 1`` are nan (a removable 0/0 there for
``|phi| < pi/2``, not resolved).
"""

from __future__ import annotations

import math as _math

from ._helpers import binary
from ._special_impls import scipy_unary, special_impl
from .arithmetic import sqrt
from .comparison import where
from .complex_parts import absolute
from .special import _no_derivative
from .trigonometric import cos, sin

_NEAR_ZERO = 0.1  # |m| below which the rules are the series in m
_TERMS = 20  # m**19 < 1e-19 there


def _squared_ratios():
    """``c_n**2`` with ``c_n = (2n-1)!! / (2n)!!`` (``K = pi/2 sum c_n**2 m**n``)."""
    out, c = [], 1.0
    for n in range(_TERMS):
        if n:
            c *= (2 * n - 1) / (2 * n)
        out.append(c * c)
    return out


_C2 = _squared_ratios()
# K'(m) and E'(m) as series: pi/2 sum_{n>=1} n c_n**2 m**(n-1) (times 1/(1-2n) for E)
_K_PRIME = [_math.pi / 2 * n * _C2[n] for n in range(1, _TERMS)]
_E_PRIME = [_math.pi / 2 * n * _C2[n] / (1 - 2 * n) for n in range(1, _TERMS)]


def _polynomial(coefficients, x):
    total = coefficients[-1] * x
    for coefficient in reversed(coefficients[1:-1]):
        total = (total + coefficient) * x
    return total + coefficients[0]


def _near_zero(m, far, series):
    """``series(m)`` for |m| < 0.1, else ``far(m)`` (double where: neither sees the other's
    inputs, so neither gives nan cotangents)."""
    near = absolute(m) < _NEAR_ZERO
    return where(near, series(where(near, m, 0.0)), far(where(near, 0.5, m)))


def _ellipk_deriv(m):
    one = m == 1
    pole = 0.5 / (1 - where(one, m, 0.0))  # K ~ -log(1 - m)/2: +inf at every order

    def far(t):
        p = 1 - t
        return (_ellipe(t) - p * _ellipk(t)) / (2 * t * p)

    regular = _near_zero(where(one, 0.5, m), far, lambda t: _polynomial(_K_PRIME, t))
    return where(one, pole, regular)


def _ellipkm1_deriv(p):
    # d/dp K(1 - p) = -K'(1 - p), written with ellipkm1 itself (accurate for small p)
    zero = p == 0
    pole = -0.5 / where(zero, p, 1.0)

    def far(m):
        q = 1 - m
        return -(_ellipe(m) - q * _ellipkm1(q)) / (2 * m * q)

    m = 1 - where(zero, 0.5, p)
    regular = _near_zero(m, far, lambda t: -_polynomial(_K_PRIME, t))
    return where(zero, pole, regular)


_ellipk = scipy_unary("ellipk", lambda m, y: _ellipk_deriv(m))
_ellipkm1 = scipy_unary("ellipkm1", lambda p, y: _ellipkm1_deriv(p))
_ellipe = scipy_unary(
    "ellipe",
    lambda m, y: _near_zero(
        m, lambda t: (_ellipe(t) - _ellipk(t)) / (2 * t), lambda t: _polynomial(_E_PRIME, t)
    ),
)


# ---------------------------------------------------------------------------------------------
# incomplete integrals: near m = 0, F = sum_n c_n m**n I_n(phi) and E = -sum_n c_n / (2n - 1)
# m**n I_n(phi), I_n = int_0^phi sin**(2n) = ((2n-1)/(2n)) I_{n-1} - sin**(2n-1) cos / (2n)


def _sine_power_integrals(phi):
    s, c = sin(phi), cos(phi)
    out, integral, power = [phi], phi, s
    for n in range(1, _TERMS):
        integral = integral * ((2 * n - 1) / (2 * n)) - power * c * (1 / (2 * n))
        out.append(integral)
        power = power * (s * s)
    return out


def _incomplete_series(phi, m, kind: str):
    """d/dm of F (``kind`` "F") or E (``kind`` "E") by the series in m (|m| < 0.1)."""
    integrals = _sine_power_integrals(phi)
    total = None
    c = 1.0
    for n in range(_TERMS - 1, 0, -1):  # Horner in m over n = 1 .. _TERMS - 1
        c = _math.sqrt(_C2[n])
        coefficient = n * c if kind == "F" else -n * c / (2 * n - 1)
        term = integrals[n] * coefficient
        total = term if total is None else total * m + term
    return total


def _delta(phi, m):
    s = sin(phi)
    return 1 - m * (s * s)


def _ellipkinc_dm(phi, m):
    def far(t):
        q = 1 - t
        return (
            _ellipeinc(phi, t) / (2 * t * q)
            - _ellipkinc(phi, t) / (2 * t)
            - sin(2 * phi) / (4 * q * sqrt(_delta(phi, t)))
        )

    return _near_zero(m, far, lambda t: _incomplete_series(phi, t, "F"))


def _ellipeinc_dm(phi, m):
    def far(t):
        return (_ellipeinc(phi, t) - _ellipkinc(phi, t)) / (2 * t)

    return _near_zero(m, far, lambda t: _incomplete_series(phi, t, "E"))


def _incomplete(name, d_phi, d_m):
    return binary(
        name,
        special_impl(f"special.{name}", name),
        (lambda phi, m, y: d_phi(phi, m), lambda phi, m, y: d_m(phi, m)),
        doc=f"``scipy.special.{name}(phi, m)`` as an op (``dualad.special`` documents it).",
    )


_ellipkinc = _incomplete("ellipkinc", lambda phi, m: 1 / sqrt(_delta(phi, m)), _ellipkinc_dm)
_ellipeinc = _incomplete("ellipeinc", lambda phi, m: sqrt(_delta(phi, m)), _ellipeinc_dm)


# ---------------------------------------------------------------------------------------------
# Jacobi's elliptic functions

_M_WHY = "the derivatives of Jacobi's elliptic functions in m are not implemented"


def _jacobi(name: str, index: int, d_u):
    return binary(
        f"ellipj_{name}",
        special_impl("special.ellipj", "ellipj", index=index),
        (lambda u, m, y: d_u(u, m), _no_derivative("special.ellipj", "m", _M_WHY)),
        doc=f"Item {index} of ``scipy.special.ellipj(u, m)`` as an op (``dualad.special``).",
    )


_sn = _jacobi("sn", 0, lambda u, m: _cn(u, m) * _dn(u, m))
_cn = _jacobi("cn", 1, lambda u, m: -_sn(u, m) * _dn(u, m))
_dn = _jacobi("dn", 2, lambda u, m: -m * _sn(u, m) * _cn(u, m))
_ph = _jacobi("ph", 3, lambda u, m: _dn(u, m))
