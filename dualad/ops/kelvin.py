"""Kelvin functions ``ber bei ker kei`` and their derivatives ``berp beip kerp keip`` (scipy's,
order 0), as eight unary ops: ``ber' = berp`` (likewise for the others), and the second
derivatives from Kelvin's equation ``w'' + w'/x = i w`` for ``w = ber + i bei`` and ``ker + i
kei`` (checked numerically against scipy in the tests):

    berp' = -berp/x - bei,  beip' = -beip/x + ber,  kerp' = -kerp/x - kei,  keip' = -keip/x + ker.

``berp/x`` and ``beip/x`` are smooth at 0: below ``|x| = 1`` they are their power series (every
order exact there). Real arguments only; ``ber``, ``bei`` are even, defined for every x;
``ker``, ``kei`` for ``x >= 0`` (nan below, as their derivatives). Singular points (scipy's
values kept): ``ker(0) = inf``, ``kerp(0) = -inf``, ``kerp'(0) = +inf``; ``kei(0) = -pi/4``,
``keip(0) = 0`` and ``keip'(0) = +inf`` (the pole ``-log(x)/2``'s, whose derivatives give the
higher orders there).
"""

from __future__ import annotations

import math as _math

from ._special_impls import scipy_unary
from .comparison import where
from .complex_parts import absolute
from .exp_log import log

_NEAR_ZERO = 1.0
_TERMS = 7  # (x/2)**(4k) / ((2k)!)**2 < 1e-20 for k = 7 below |x| = 1


def _series(coefficients, x, start):
    """``sum_k coefficients[k] (x/2)**(4k + start)`` by Horner in ``(x/2)**4``."""
    half = x * 0.5
    fourth = (half * half) * (half * half)
    total = coefficients[-1]
    for coefficient in reversed(coefficients[:-1]):
        total = total * fourth + coefficient
    return total * half**start if start else total


# berp/x = sum_{k>=1} (-1)**k k (x/2)**(4k-2) / ((2k)!)**2, beip/x = sum_{k>=0} (-1)**k (2k+1)
# (x/2)**(4k) / (2 ((2k+1)!)**2)
_BERP_OVER_X = [(-1) ** k * k / _math.factorial(2 * k) ** 2 for k in range(1, _TERMS + 1)]
_BEIP_OVER_X = [
    (-1) ** k * (2 * k + 1) / (2 * _math.factorial(2 * k + 1) ** 2) for k in range(_TERMS)
]


def _over_x(derivative, coefficients, start, x):
    """``derivative(x) / x``, from its series for |x| < 1 (double where: neither branch sees
    the other's inputs)."""
    near = absolute(x) < _NEAR_ZERO
    far = where(near, 2.0, x)
    return where(near, _series(coefficients, where(near, x, 0.0), start), derivative(far) / far)


def _keip_deriv(x):
    zero = x == 0
    pole = -0.5 * log(where(zero, x, 1.0) + 0.0)  # (+ 0.0: -0.0 is +0.0)
    safe = where(zero, 1.0, x)
    return where(zero, pole, _ker(safe) - _keip(safe) / safe)


_ber = scipy_unary("ber", lambda x, y: _berp(x))
_bei = scipy_unary("bei", lambda x, y: _beip(x))
_ker = scipy_unary("ker", lambda x, y: _kerp(x))
_kei = scipy_unary("kei", lambda x, y: _keip(x))
_berp = scipy_unary("berp", lambda x, y: -_over_x(_berp, _BERP_OVER_X, 2, x) - _bei(x))
_beip = scipy_unary("beip", lambda x, y: _ber(x) - _over_x(_beip, _BEIP_OVER_X, 0, x))
_kerp = scipy_unary("kerp", lambda x, y: -_kerp(x) / x - _kei(x))
_keip = scipy_unary("keip", lambda x, y: _keip_deriv(x))
