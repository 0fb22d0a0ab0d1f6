"""Regularised incomplete beta functions and the inverses of the incomplete gamma and beta
functions: betainc, betaincc, betaincinv, gammaincinv, gammainccinv; and the beta density
``x**(a-1) (1-x)**(b-1) / B(a, b)`` (betainc's derivative in x) as an op of its own.

``dualad.special`` exports them under scipy's names. Values come from ``scipy.special``, real
arguments only, in the promoted dtype. They are differentiable in ``x`` (betainc, betaincc) and
in ``y`` (the inverses) only: the derivatives in the shape parameters a, b have no closed form,
so a tracked a or b raises ``NotImplementedError`` when its derivative is needed.
"""

from __future__ import annotations

import numpy as np

from ._helpers import binary
from ._promotion import _reject_complex
from ._special_calls import (
    caller,
    elementwise_op,
    own_impls,
    result_dtype,
    scipy_call,
    scipy_impl,
)
from .gamma_functions import _gamma_density
from .special import _no_derivative

_AB_WHY = "the derivative of the incomplete beta function in a shape parameter has no closed form"
_A_WHY = "the derivative of the incomplete gamma function in its parameter a has no closed form"


def _beta_density_impl(xp, a, b, x):
    _reject_complex("special.betainc", a, b, x)
    dtype = result_dtype((a, b, x))
    a, b, x = (xp.asarray(v, dtype=np.float64) for v in (a, b, x))
    with np.errstate(all="ignore"):
        # x**(a-1) (1-x)**(b-1) in logs, 0**0 = 1 (the limits at a == 1, b == 1)
        power = xp.where(a == 1, 0.0, (a - 1) * xp.log(x))
        power = power + xp.where(b == 1, 0.0, (b - 1) * xp.log1p(-x))
        positive = (a > 0) & (b > 0)
        log_norm = scipy_call(xp, "betaln", xp.where(positive, a, 1.0), xp.where(positive, b, 1.0))
        # 1 / B(a, b) = poch(a, b) / Gamma(b) outside a, b > 0 (the derivatives of the density
        # reach a, b <= 0): finite where Gamma(a) and Gamma(a + b) both have poles, 0 where only
        # Gamma(a) or Gamma(b) has one
        # (the other way round, poch(b, a) / Gamma(a), where b is a pole: poch(a, b) of a
        # non-positive integer b would be Gamma(a + b)'s pole over a finite Gamma(a))
        b_pole = (b <= 0) & (b == xp.floor(b))
        inverse = xp.where(
            b_pole,
            scipy_call(xp, "poch", b, a) * scipy_call(xp, "rgamma", a),
            scipy_call(xp, "poch", a, b) * scipy_call(xp, "rgamma", b),
        )
        out = xp.where(positive, xp.exp(power - log_norm), xp.exp(power) * inverse)
        out = xp.where(~positive & (inverse == 0), 0.0, out)
        out = xp.where((x < 0) | (x > 1), xp.nan, out)
    return out.astype(dtype, copy=False)


def _beta_density_dx(a, b, x, y):
    # d/dx of x**(a-1) (1-x)**(b-1) / B(a, b) is (a + b - 1) (f(a - 1, b) - f(a, b - 1)): regular
    # at every order, also at x = 0 and 1 where a formula in (a - 1) / x would be 0 * inf
    return (a + b - 1) * (_beta_density(a - 1, b, x) - _beta_density(a, b - 1, x))


def _no_ab_of(name):
    """The partials of a and b: raising when a tracked one's derivative is needed."""
    return _no_derivative(f"special.{name}", "a", _AB_WHY), _no_derivative(
        f"special.{name}", "b", _AB_WHY
    )


_beta_density = caller(
    elementwise_op("beta_density", _beta_density_impl, (*_no_ab_of("betainc"), _beta_density_dx))
)


_betainc = caller(
    elementwise_op(
        "betainc",
        scipy_impl("betainc", "betainc"),
        (*_no_ab_of("betainc"), lambda a, b, x, y: _beta_density(a, b, x)),
    )
)
_betaincc = caller(
    elementwise_op(
        "betaincc",
        scipy_impl("betaincc", "betaincc"),
        (*_no_ab_of("betaincc"), lambda a, b, x, y: -_beta_density(a, b, x)),
    )
)
# the inverse's derivative is 1 / the density at the result (inf where the density is 0)
_betaincinv = caller(
    elementwise_op(
        "betaincinv",
        scipy_impl("betaincinv", "betaincinv"),
        (*_no_ab_of("betaincinv"), lambda a, b, p, x: 1 / _beta_density(a, b, x)),
        uses_out=True,
    )
)


_gammaincinv = binary(
    "gammaincinv",
    scipy_impl("gammaincinv", "gammaincinv"),
    (_no_derivative("special.gammaincinv", "a", _A_WHY), lambda a, p, x: 1 / _gamma_density(a, x)),
    uses="aby",
    doc="The inverse of gammainc in x (see dualad.special.gammaincinv).",
)
_gammainccinv = binary(
    "gammainccinv",
    scipy_impl("gammainccinv", "gammainccinv"),
    (
        _no_derivative("special.gammainccinv", "a", _A_WHY),
        lambda a, p, x: -1 / _gamma_density(a, x),
    ),
    uses="aby",
    doc="The inverse of gammaincc in x (see dualad.special.gammainccinv).",
)

own_impls(__name__, _beta_density, _betainc, _betaincc, _betaincinv)
own_impls(__name__, _gammaincinv, _gammainccinv)
