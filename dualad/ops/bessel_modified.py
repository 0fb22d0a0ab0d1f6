"""Modified Bessel functions of real argument and real order: ``iv ive kv kve`` (order ``v``,
an argument without a derivative, as in ``bessel_cylinder``) and ``k0 k1 k0e k1e`` (orders 0
and 1; ``i0 i1 i0e i1e`` are in ``bessel``). ``ive = exp(-|x|) I_v``, ``kve = exp(x) K_v``.

Values are ``scipy.special``'s (``cupyx.scipy.special`` on CuPy, else scipy on the host), in
the input's dtype. ``iv`` and ``kv`` take complex x too (holomorphic rules, the order real);
the scaled ones and ``k0 k1 k0e k1e`` real x only. Derivatives use the recurrences
``I_v' = (I_{v-1} + I_{v+1}) / 2`` and ``K_v' = -(K_{v-1} + K_{v+1}) / 2`` through the ops of
orders ``v -+ 1`` (exact at every order), the scaled ones adding ``-sign(x) ive`` and ``+kve``.
Where that sum cancels (beyond ``|x| = 50 + 10 v**2``, the scale's term and the recurrence's
agree to ``1/(2|x|)``), the derivative of the asymptotic series is used instead.

Singular points (scipy's values kept): ``K_v(0) = inf`` with derivative ``-inf`` (the
recurrence's terms all have one sign there, so every order is right; ``kve``'s, which would
read ``inf - inf``, are those of the pole ``-x**(-|v|)``); ``K_v`` is nan for ``x < 0``, and
``I_v`` for ``x < 0`` and non-integer ``v``, so are their derivatives; ``ive``'s derivative
jumps at 0 (the kink of ``exp(-|x|)``) and is the mean of the one-sided ones there, as
``i0e``'s.
"""

from __future__ import annotations

import math as _math

from ._special_impls import scipy_unary
from .arithmetic import sqrt
from .bessel import i0, i0e, i1, i1e
from .bessel_cylinder import _is_number, by_order, order_op
from .comparison import logical_and, logical_or, where
from .complex_parts import absolute
from .rounding import floor, sign
from .trigonometric import cos

# e**(-x) I_v(x) ~ (2 pi x)**-1/2 sum_k (-1)**k a_k(v) x**-k and e**x K_v(x) ~ (pi / (2 x))**1/2
# sum_k a_k(v) x**-k for large x > 0, a_k(v) = prod_{j<=k} (4 v**2 - (2j - 1)**2) / (k! 8**k).
# Twelve terms of their derivatives are exact to double precision beyond 50 + 10 v**2.
_FAR = 50.0
_TERMS = 12


def _far_deriv(v, x, scale: float, alternating: bool):
    """The derivative of ``scale * sum_k (+-1)**k a_k(v) x**(-k - 1/2)`` at x > 0 (``v`` a
    number or a tensor: the coefficients are then tensors too)."""
    u = 1 / x
    coefficients, a = [], 1.0
    four_v2 = 4 * v * v
    for k in range(_TERMS):
        if k:
            a = a * (four_v2 - (2 * k - 1) ** 2) * (1 / (k * 8))
        sign_ = -1.0 if (alternating and k % 2) else 1.0
        coefficients.append(a * (-(k + 0.5) * scale * sign_))
    series = coefficients[-1] * u
    for coefficient in reversed(coefficients[1:-1]):
        series = (series + coefficient) * u
    return (series + coefficients[0]) * (u * sqrt(u))


def _far_limit(v):
    return _FAR + 10.0 * v * v


def _iv_deriv(v, x):
    return (_i(v - 1, x) + _i(v + 1, x)) * 0.5


def _kv_deriv(v, x):
    return (_k(v - 1, x) + _k(v + 1, x)) * -0.5


def _ive_deriv(v, x, y):
    near = (_ie(v - 1, x) + _ie(v + 1, x)) * 0.5 - sign(x) * y
    limit = _far_limit(v)
    if _is_number(v):
        integral = float(v).is_integer()
        far = (absolute(x) > limit) if integral else (x > limit)
        parity = (-1.0) ** int(v) if integral else 1.0  # I_n(-x) = (-1)**n I_n(x)
    else:
        integral = v == floor(v)
        far = logical_and(absolute(x) > limit, logical_or(x > 0, integral))
        parity = cos(v * _math.pi)  # (+-1 where used: integer v)
    # f(x) = parity g(-x) for x < 0, so f'(x) = -parity g'(|x|); double where: the series
    # never sees small x
    series = _far_deriv(v, absolute(where(far, x, limit)), 1 / _math.sqrt(2 * _math.pi), True)
    return where(far, where(x > 0, series, -parity * series), near)


def _kve_deriv(v, x):
    # at 0 the recurrence reads inf - inf: there the derivatives of the pole -x**(-|v|). (Not
    # the output y: its own derivative at 0 is infinite, and the where's zero cotangent times
    # it would be nan.)
    zero = x == 0
    limit = _far_limit(v)
    far = x > limit
    safe = where(zero, 1.0, x)
    near = _ke(v, safe) - (_ke(v - 1, safe) + _ke(v + 1, safe)) * 0.5
    series = _far_deriv(v, where(far, x, limit), _math.sqrt(_math.pi / 2), False)
    pole = -((where(zero, x, 1.0) + 0.0) ** (-absolute(v) - 1))  # (+ 0.0: -0.0 is +0.0)
    return where(zero, pole, where(far, series, near))


_iv = order_op("iv", lambda v, x, y: _iv_deriv(v, x), complex_ok=True)
_kv = order_op("kv", lambda v, x, y: _kv_deriv(v, x), complex_ok=True)
_ive = order_op("ive", _ive_deriv, uses="aby")
_kve = order_op("kve", lambda v, x, y: _kve_deriv(v, x))

_k0 = scipy_unary("k0", lambda x, y: -_k1(x))
_k1 = scipy_unary("k1", lambda x, y: _kv_deriv(1, x))
_k0e = scipy_unary("k0e", lambda x, y: _kve_deriv(0, x))
_k1e = scipy_unary("k1e", lambda x, y: _kve_deriv(1, x))

_i = by_order(i0, i1, _iv)
_ie = by_order(i0e, i1e, _ive)
_k = by_order(_k0, _k1, _kv)
_ke = by_order(_k0e, _k1e, _kve)
