"""scipy.special's distribution functions: stdtr, stdtrit (Student's t), chdtr, chdtrc, chdtri
(chi-square), gdtr, gdtrc, gdtrix (gamma), fdtr, fdtrc, fdtri (F), pdtr, pdtrc, pdtri (Poisson),
bdtr, bdtrc, bdtri (binomial), nbdtr, nbdtrc, nbdtri (negative binomial), ndtri_exp.

``dualad.special`` exports them under scipy's names. Values come from ``scipy.special``, real
arguments only, in the promoted dtype. Each is differentiable in its continuous variable: the
derivative of a CDF is the density, written in dualad ops from the densities of gammainc and
betainc (``gamma_density``, ``beta_density``), whose own derivatives are regular at every order;
an inverse CDF's derivative is 1 / the density at the result. gdtr and gdtrc are
differentiable in their rate ``a`` too. Degrees of freedom, shapes and counts have no
closed-form derivative: a tracked one raises ``NotImplementedError`` when its derivative is
needed. Counts are floored as scipy does (``pdtr``'s ``k``, ``bdtr``'s ``k`` and ``n``).
"""

from __future__ import annotations

import math as _math

from ._helpers import _as_scalar_tensor, binary, unary
from ._special_calls import (
    caller,
    elementwise_op,
    own_impls,
    scipy_impl,
)
from .comparison import where
from .exp_log import exp, log, log1p
from .gamma_functions import _gamma_density, gammaln
from .incomplete_beta import _beta_density
from .rounding import floor
from .special import _no_derivative, erfcx

_WHY = "the derivative of a distribution function in this parameter has no closed form"


def _no(name, argument):
    return _no_derivative(f"special.{name}", argument, _WHY)


def _floored(k, like):
    """A count floored as scipy floors it (a constant: counts have no derivative)."""
    if isinstance(k, (int, float)):
        return float(_math.floor(k))
    return floor(_as_scalar_tensor(k, like))


def _in_second(name, argument, partial, doc, *, uses="ab"):
    """scipy's ``name(parameter, variable)`` as an op differentiable in the variable, by
    ``partial(parameter, variable, out)``; a tracked parameter raises."""
    return binary(name, scipy_impl(name, name), (_no(name, argument), partial), uses=uses, doc=doc)


def _increasing_and_decreasing(names, argument, density):
    """scipy's distribution function ``names[0](parameter, variable)`` (derivative ``density``)
    and its complement ``names[1]`` (derivative ``-density``), differentiable in the variable."""
    up, down = names
    return (
        _in_second(up, argument, lambda a, x, y: density(a, x), f"See dualad.special.{up}."),
        _in_second(down, argument, lambda a, x, y: -density(a, x), f"See dualad.special.{down}."),
    )


# ---------------------------------------------------------------------------------------------
# Student's t


_LOG_SQRT_PI = 0.5 * _math.log(_math.pi)
_LOG_SQRT_2PI = 0.5 * _math.log(2 * _math.pi)


def _t_density(df, t):
    """Student's t density with ``df`` degrees of freedom (a constant); the normal density for
    ``df = inf`` (scipy's limit). (Double where: the t branch never sees an infinite df.)"""
    df = _as_scalar_tensor(df, t)
    infinite = df == float("inf")
    d = where(infinite, 1.0, df)
    log_norm = gammaln((d + 1) * 0.5) - gammaln(d * 0.5) - 0.5 * log(d) - _LOG_SQRT_PI
    t_density = exp(log_norm - (d + 1) * 0.5 * log1p(t * t / d))
    return where(infinite, exp((t * t) * -0.5 - _LOG_SQRT_2PI), t_density)


_stdtr = _in_second(
    "stdtr", "df", lambda df, t, y: _t_density(df, t), "Student's t CDF (see dualad.special.stdtr)."
)
_stdtrit = _in_second(
    "stdtrit",
    "df",
    lambda df, p, t: 1 / _t_density(df, t),
    "The inverse of stdtr in t (see dualad.special.stdtrit).",
    uses="aby",
)

# ---------------------------------------------------------------------------------------------
# chi-square: chdtr(v, x) = gammainc(v/2, x/2)


def _chi2_density(v, x):
    return _gamma_density(v * 0.5, x * 0.5) * 0.5


_chdtr, _chdtrc = _increasing_and_decreasing(("chdtr", "chdtrc"), "v", _chi2_density)
# chdtri inverts chdtrc (the upper tail): its derivative is -1 / the density at the result
_chdtri = _in_second(
    "chdtri",
    "v",
    lambda v, p, x: -1 / _chi2_density(v, x),
    "The inverse of chdtrc in x (see dualad.special.chdtri).",
    uses="aby",
)

# ---------------------------------------------------------------------------------------------
# gamma: gdtr(a, b, x) = gammainc(b, a x), a the rate


def _gdtr_da(a, b, x, y):
    return x * _gamma_density(b, a * x)


def _gdtr_dx(a, b, x, y):
    return a * _gamma_density(b, a * x)


_gdtr = caller(
    elementwise_op("gdtr", scipy_impl("gdtr", "gdtr"), (_gdtr_da, _no("gdtr", "b"), _gdtr_dx))
)
_gdtrc = caller(
    elementwise_op(
        "gdtrc",
        scipy_impl("gdtrc", "gdtrc"),
        (
            lambda a, b, x, y: -_gdtr_da(a, b, x, y),
            _no("gdtrc", "b"),
            lambda a, b, x, y: -_gdtr_dx(a, b, x, y),
        ),
    )
)

# ---------------------------------------------------------------------------------------------
# F: fdtr(dfn, dfd, x) = betainc(dfn/2, dfd/2, w), w = dfn x / (dfd + dfn x)


def _f_density(dfn, dfd, x):
    denominator = dfd + dfn * x
    w = dfn * x / denominator
    return _beta_density(dfn * 0.5, dfd * 0.5, w) * (dfn * dfd / (denominator * denominator))


_fdtr = caller(
    elementwise_op(
        "fdtr",
        scipy_impl("fdtr", "fdtr"),
        (_no("fdtr", "dfn"), _no("fdtr", "dfd"), lambda dfn, dfd, x, y: _f_density(dfn, dfd, x)),
    )
)
_fdtrc = caller(
    elementwise_op(
        "fdtrc",
        scipy_impl("fdtrc", "fdtrc"),
        (
            _no("fdtrc", "dfn"),
            _no("fdtrc", "dfd"),
            lambda dfn, dfd, x, y: -_f_density(dfn, dfd, x),
        ),
    )
)

# ---------------------------------------------------------------------------------------------
# Poisson: pdtr(k, m) = gammaincc(floor(k) + 1, m)


def _poisson_dm(k, m):
    return _gamma_density(_floored(k, m) + 1, m)


# pdtr is decreasing in m, pdtrc increasing
_pdtrc, _pdtr = _increasing_and_decreasing(("pdtrc", "pdtr"), "k", _poisson_dm)

# ---------------------------------------------------------------------------------------------
# binomial: bdtr(k, n, p) = betainc(n - k, k + 1, 1 - p); negative binomial: nbdtr(k, n, p) =
# betainc(n, k + 1, p) (k and n floored)


def _bdtr_dp(k, n, p, y):
    k, n = _floored(k, p), _floored(n, p)
    return -_beta_density(n - k, k + 1, 1 - p)


def _nbdtr_dp(k, n, p, y):
    k, n = _floored(k, p), _floored(n, p)
    return _beta_density(n, k + 1, p)


def _counts(name, dp):
    return (_no(name, "k"), _no(name, "n"), dp)


_bdtr = caller(
    elementwise_op("bdtr", scipy_impl("bdtr", "bdtr", integers=(1,)), _counts("bdtr", _bdtr_dp))
)
_bdtrc = caller(
    elementwise_op(
        "bdtrc",
        scipy_impl("bdtrc", "bdtrc", integers=(1,)),
        _counts("bdtrc", lambda k, n, p, y: -_bdtr_dp(k, n, p, y)),
    )
)
_nbdtr = caller(
    elementwise_op(
        "nbdtr", scipy_impl("nbdtr", "nbdtr", integers=(0, 1)), _counts("nbdtr", _nbdtr_dp)
    )
)
_nbdtrc = caller(
    elementwise_op(
        "nbdtrc",
        scipy_impl("nbdtrc", "nbdtrc", integers=(0, 1)),
        _counts("nbdtrc", lambda k, n, p, y: -_nbdtr_dp(k, n, p, y)),
    )
)

# ---------------------------------------------------------------------------------------------
# inverses in the variable: 1 / the distribution function's derivative at the result


def _inverse(name, partials, integers=()):
    return caller(
        elementwise_op(name, scipy_impl(name, name, integers=integers), partials, uses_out=True)
    )


_fdtri = _inverse(
    "fdtri",
    (_no("fdtri", "dfn"), _no("fdtri", "dfd"), lambda dfn, dfd, p, x: 1 / _f_density(dfn, dfd, x)),
)
# gdtrix(a, b, p) = gammaincinv(b, p) / a: -x / a in the rate a
_gdtrix = _inverse(
    "gdtrix",
    (
        lambda a, b, p, x: -x / a,
        _no("gdtrix", "b"),
        lambda a, b, p, x: 1 / _gdtr_dx(a, b, x, None),
    ),
)
_pdtri = caller(
    elementwise_op(
        "pdtri",
        scipy_impl("pdtri", "pdtri", integers=(0,)),
        (_no("pdtri", "k"), lambda k, y, m: -1 / _poisson_dm(k, m)),
        uses_out=True,
    )
)
_bdtri = _inverse(
    "bdtri", _counts("bdtri", lambda k, n, y, p: 1 / _bdtr_dp(k, n, p, None)), integers=(1,)
)
_nbdtri = _inverse(
    "nbdtri", _counts("nbdtri", lambda k, n, y, p: 1 / _nbdtr_dp(k, n, p, None)), integers=(0, 1)
)

# ---------------------------------------------------------------------------------------------
# ndtri_exp(y) = ndtri(exp(y)): its derivative exp(y) / pdf(x) = ndtr(x) / pdf(x) at the result
# x is sqrt(pi/2) erfcx(-x / sqrt(2)) exactly, accurate however negative y (and x) is

_SQRT_HALF_PI = _math.sqrt(_math.pi / 2)
_SQRT_HALF = _math.sqrt(0.5)

_ndtri_exp = unary(
    "ndtri_exp",
    scipy_impl("ndtri_exp", "ndtri_exp"),
    lambda y, x: erfcx(x * -_SQRT_HALF) * _SQRT_HALF_PI,
    uses="y",
    doc="ndtri(exp(y)) (see dualad.special.ndtri_exp).",
)

own_impls(__name__, _stdtr, _stdtrit, _chdtr, _chdtrc, _chdtri, _gdtr, _gdtrc, _fdtr, _fdtrc)
own_impls(__name__, _pdtr, _pdtrc, _bdtr, _bdtrc, _nbdtr, _nbdtrc, _ndtri_exp)
own_impls(__name__, _fdtri, _gdtrix, _pdtri, _bdtri, _nbdtri)
