"""scipy.special's distribution functions: stdtr, stdtrit (Student's t), chdtr, chdtrc, chdtri
(chi-square), gdtr, gdtrc (gamma), fdtr, fdtrc (F), pdtr, pdtrc (Poisson), bdtr, bdtrc
(binomial), nbdtr, nbdtrc (negative binomial), ndtri_exp.

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

import numpy as np

from ._helpers import _as_scalar_tensor, binary, unary
from ._promotion import _reject_complex
from ._special_calls import (
    caller,
    elementwise_op,
    own_impls,
    result_dtype,
    scipy_call,
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


_stdtr = binary(
    "stdtr",
    scipy_impl("stdtr", "stdtr"),
    (_no("stdtr", "df"), lambda df, t, y: _t_density(df, t)),
    doc="Student's t CDF (see dualad.special.stdtr).",
)
_stdtrit = binary(
    "stdtrit",
    scipy_impl("stdtrit", "stdtrit"),
    (_no("stdtrit", "df"), lambda df, p, t: 1 / _t_density(df, t)),
    uses="aby",
    doc="The inverse of stdtr in t (see dualad.special.stdtrit).",
)

# ---------------------------------------------------------------------------------------------
# chi-square: chdtr(v, x) = gammainc(v/2, x/2)


def _chi2_density(v, x):
    return _gamma_density(v * 0.5, x * 0.5) * 0.5


_chdtr = binary(
    "chdtr",
    scipy_impl("chdtr", "chdtr"),
    (_no("chdtr", "v"), lambda v, x, y: _chi2_density(v, x)),
    doc="The chi-square CDF (see dualad.special.chdtr).",
)
_chdtrc = binary(
    "chdtrc",
    scipy_impl("chdtrc", "chdtrc"),
    (_no("chdtrc", "v"), lambda v, x, y: -_chi2_density(v, x)),
    doc="The chi-square survival function (see dualad.special.chdtrc).",
)
# chdtri inverts chdtrc (the upper tail): its derivative is -1 / the density at the result
_chdtri = binary(
    "chdtri",
    scipy_impl("chdtri", "chdtri"),
    (_no("chdtri", "v"), lambda v, p, x: -1 / _chi2_density(v, x)),
    uses="aby",
    doc="The inverse of chdtrc in x (see dualad.special.chdtri).",
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


_pdtr = binary(
    "pdtr",
    scipy_impl("pdtr", "pdtr"),
    (_no("pdtr", "k"), lambda k, m, y: -_poisson_dm(k, m)),
    doc="The Poisson CDF in its mean m (see dualad.special.pdtr).",
)
_pdtrc = binary(
    "pdtrc",
    scipy_impl("pdtrc", "pdtrc"),
    (_no("pdtrc", "k"), lambda k, m, y: _poisson_dm(k, m)),
    doc="The Poisson survival function in its mean m (see dualad.special.pdtrc).",
)

# ---------------------------------------------------------------------------------------------
# binomial: bdtr(k, n, p) = betainc(n - k, k + 1, 1 - p); negative binomial: nbdtr(k, n, p) =
# betainc(n, k + 1, p) (k and n floored)


def _bdtr_dp(k, n, p, y):
    k, n = _floored(k, p), _floored(n, p)
    return -_beta_density(n - k, k + 1, 1 - p)


def _nbdtr_dp(k, n, p, y):
    k, n = _floored(k, p), _floored(n, p)
    return _beta_density(n, k + 1, p)


def _count_impl(name, integers):
    """scipy's ``name`` with the counts at positions ``integers`` floored to int64 (its integer
    loop: the float loop floors them too, with a DeprecationWarning); nan where one is not
    finite."""

    def impl(xp, *args):
        _reject_complex(f"special.{name}", *args)
        dtype = result_dtype(args)
        wide = [xp.asarray(a, dtype=np.float64) for a in args]
        finite = xp.ones(xp.broadcast_shapes(*(w.shape for w in wide)), dtype=bool)
        for i in integers:
            finite = finite & xp.isfinite(wide[i])
            wide[i] = xp.floor(xp.where(xp.isfinite(wide[i]), wide[i], 0.0)).astype(np.int64)
        with np.errstate(all="ignore"):
            out = scipy_call(xp, name, *wide)
        return xp.where(finite, out, xp.nan).astype(dtype, copy=False)

    return impl


def _counts(name, dp):
    return (_no(name, "k"), _no(name, "n"), dp)


_bdtr = caller(elementwise_op("bdtr", _count_impl("bdtr", (1,)), _counts("bdtr", _bdtr_dp)))
_bdtrc = caller(
    elementwise_op(
        "bdtrc",
        _count_impl("bdtrc", (1,)),
        _counts("bdtrc", lambda k, n, p, y: -_bdtr_dp(k, n, p, y)),
    )
)
_nbdtr = caller(elementwise_op("nbdtr", _count_impl("nbdtr", (0, 1)), _counts("nbdtr", _nbdtr_dp)))
_nbdtrc = caller(
    elementwise_op(
        "nbdtrc",
        _count_impl("nbdtrc", (0, 1)),
        _counts("nbdtrc", lambda k, n, p, y: -_nbdtr_dp(k, n, p, y)),
    )
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
