"""scipy.special's elementary functions: log_expit, exprel, powm1, cosm1, exp10, sindg, cosdg,
tandg, cotdg, boxcox, boxcox1p, inv_boxcox, inv_boxcox1p, huber, pseudo_huber, owens_t, spence,
wrightomega; and two
helper ops whose derivatives close the chains at the removable singularities:
``exprel_phi(k, x) = sum_j x**j / (j + k)!`` (the phi functions of exponential integrators:
exprel is phi_1, and phi_k' = phi_k - k phi_(k+1)) and ``log1p_ratio(k, t)``, the k-th
derivative of ``log1p(t) / t``.

``dualad.special`` exports them under scipy's names. Values come from ``scipy.special`` (real
arguments only, as scipy's), in the promoted dtype. Where a formula has a removable singularity
(exprel at 0, the Box-Cox transforms at lmbda = 0) the derivatives are written through
exprel_phi and log1p_ratio, regular there at every order.
"""

from __future__ import annotations

import math as _math

import numpy as np

from .._dispatch import apply1
from ._helpers import _as_scalar_tensor, _unary_with_params, binary, unary
from ._promotion import _float_array, _reject_complex
from ._special_calls import own_impls, scipy_impl
from .activations import expit
from .arithmetic import sqrt
from .comparison import where
from .complex_parts import abs
from .exp_log import exp, log, log1p, pow
from .rounding import sign
from .special import erf
from .trigonometric import sin

# ---------------------------------------------------------------------------------------------
# exprel and its phi functions


def _phi_values(xp, x, k: int):
    """phi_k(x) = sum_j x**j / (j + k)! of a float64 array of ``xp``: the series for |x| < 1 (30
    terms: exact to double precision), else phi_1 = expm1(x) / x and phi_(j+1) = (phi_j - 1/j!)
    / x, which loses at most a factor j / |x| <= j per step there."""
    small = xp.abs(x) < 1
    xs = xp.where(small, x, 0.0)
    series = xp.zeros_like(x)
    for j in reversed(range(30)):
        series = series * xs + 1.0 / _math.factorial(j + k)
    with np.errstate(all="ignore"):
        xl = xp.where(small, 1.0, x)
        big = xp.expm1(xl) / xl
        for j in range(1, k):
            big = (big - 1.0 / _math.factorial(j)) / xl
        big = xp.where(x == xp.inf, xp.inf, xp.where(x == -xp.inf, 0.0, big))
    return xp.where(small, series, big)


def _phi_impl(xp, x, *, k):
    x = _float_array(x)
    _reject_complex("special.exprel", x)
    wide = x.astype(np.float64, copy=False)
    return _phi_values(xp, wide, k).astype(x.dtype, copy=False)


_phi_op = _unary_with_params(
    "exprel_phi", _phi_impl, lambda x, y, *, k: y - k * _phi(k + 1, x), uses="xy"
)


def _phi(k: int, x):
    """phi_k(x) (k >= 2 static); phi_1 is exprel."""
    return apply1(_phi_op, x, {"k": k})


_exprel = unary(
    "exprel",
    scipy_impl("exprel", "exprel"),
    lambda x, y: y - _phi(2, x),
    uses="xy",
    doc="(exp(x) - 1) / x (see dualad.special.exprel).",
)

# ---------------------------------------------------------------------------------------------
# log1p(t) / t and its derivatives (the Box-Cox inverses)


def _log1p_ratio_values(xp, t, k: int):
    """The k-th derivative of log1p(t) / t of a float64 array: the series sum_j (-1)**j
    t**j / (j + 1) differentiated k times for |t| < 1/2, Leibniz's rule on log1p(t) * (1/t)
    elsewhere (t > -1; nan below, inf at -1 for k = 0). Complex t too (log1p's principal
    branch: a cut along t < -1)."""
    small = xp.abs(t) < 0.5
    ts = xp.where(small, t, 0.0)
    series = xp.zeros_like(ts)
    for j in reversed(range(k, 80 + 4 * k)):
        coefficient = (-1) ** j * _math.perm(j, k) / (j + 1)
        series = series * ts + coefficient
    with np.errstate(all="ignore"):
        tl = xp.where(small, 1.0, t)
        big = xp.zeros_like(tl)
        for i in range(k + 1):
            if i == 0:
                log_part = xp.log1p(tl)
            else:
                log_part = (-1) ** (i - 1) * _math.factorial(i - 1) / (1 + tl) ** i
            m = k - i
            big = big + _math.comb(k, i) * log_part * (-1) ** m * _math.factorial(m) / tl ** (m + 1)
    return xp.where(small, series, big)


def _log1p_ratio_impl(xp, t, *, k):
    t = _float_array(t)
    wide = t.astype(np.complex128 if t.dtype.kind == "c" else np.float64, copy=False)
    return _log1p_ratio_values(xp, wide, k).astype(t.dtype, copy=False)


_log1p_ratio_op = _unary_with_params(
    "log1p_ratio", _log1p_ratio_impl, lambda t, y, *, k: _log1p_ratio(k + 1, t)
)


def _log1p_ratio(k: int, t):
    """The k-th derivative of log1p(t) / t (k >= 0 static)."""
    return apply1(_log1p_ratio_op, t, {"k": k})


# ---------------------------------------------------------------------------------------------
# log_expit, powm1, cosm1, exp10, trigonometric functions in degrees

_log_expit = unary(
    "log_expit",
    scipy_impl("log_expit", "log_expit"),
    lambda x, y: expit(-x),
    doc="log(expit(x)) (see dualad.special.log_expit).",
)

_powm1 = binary(
    "powm1",
    scipy_impl("powm1", "powm1"),
    (lambda x, y, out: y * pow(x, y - 1), lambda x, y, out: (out + 1) * log(x)),
    uses="aby",
    doc="x**y - 1 (see dualad.special.powm1).",
)

_cosm1 = unary(
    "cosm1",
    scipy_impl("cosm1", "cosm1"),
    lambda x, y: -sin(x),
    doc="cos(x) - 1 (see dualad.special.cosm1).",
)

_LN10 = _math.log(10.0)

_exp10 = unary(
    "exp10",
    scipy_impl("exp10", "exp10"),
    lambda x, y: y * _LN10,
    uses="y",
    doc="10**x (see dualad.special.exp10).",
)

_DEGREE = _math.pi / 180

_sindg = unary(
    "sindg",
    scipy_impl("sindg", "sindg"),
    lambda x, y: _cosdg(x) * _DEGREE,
    doc="sin of x degrees (see dualad.special.sindg).",
)
_cosdg = unary(
    "cosdg",
    scipy_impl("cosdg", "cosdg"),
    lambda x, y: _sindg(x) * -_DEGREE,
    doc="cos of x degrees (see dualad.special.cosdg).",
)
_tandg = unary(
    "tandg",
    scipy_impl("tandg", "tandg"),
    lambda x, y: (1 + y * y) * _DEGREE,
    uses="y",
    doc="tan of x degrees (see dualad.special.tandg).",
)
_cotdg = unary(
    "cotdg",
    scipy_impl("cotdg", "cotdg"),
    lambda x, y: (1 + y * y) * -_DEGREE,
    uses="y",
    doc="cot of x degrees (see dualad.special.cotdg).",
)

# ---------------------------------------------------------------------------------------------
# Box-Cox transforms: (x**lmbda - 1) / lmbda = L exprel(lmbda L) with L = log(x), so the
# derivative in lmbda is L**2 exprel'(lmbda L) = L**2 (exprel - phi_2)(lmbda L), regular at
# lmbda = 0 (where it is L**2 / 2) and at every order


def _boxcox_dlmbda(logx, lmbda):
    t = lmbda * logx
    return (logx * logx) * (_exprel(t) - _phi(2, t))


_boxcox = binary(
    "boxcox",
    scipy_impl("boxcox", "boxcox"),
    (
        lambda x, lmbda, y: pow(x, lmbda - 1),
        lambda x, lmbda, y: _boxcox_dlmbda(log(x), lmbda),
    ),
    doc="The Box-Cox transform (see dualad.special.boxcox).",
)
_boxcox1p = binary(
    "boxcox1p",
    scipy_impl("boxcox1p", "boxcox1p"),
    (
        lambda x, lmbda, y: pow(x + 1, lmbda - 1),
        lambda x, lmbda, y: _boxcox_dlmbda(log1p(x), lmbda),
    ),
    doc="The Box-Cox transform of 1 + x (see dualad.special.boxcox1p).",
)


# inv_boxcox(y, lmbda) = exp(u) with u = log1p(lmbda y) / lmbda = y l(lmbda y), l(t) =
# log1p(t) / t: du/dy = 1 / (1 + lmbda y), du/dlmbda = y**2 l'(lmbda y) (-y**2 / 2 at lmbda = 0)
def _inv_dlmbda(y, lmbda):
    return (y * y) * _log1p_ratio(1, lmbda * y)


_inv_boxcox = binary(
    "inv_boxcox",
    scipy_impl("inv_boxcox", "inv_boxcox"),
    (
        lambda y, lmbda, x: x / (lmbda * y + 1),
        lambda y, lmbda, x: x * _inv_dlmbda(y, lmbda),
    ),
    uses="aby",
    doc="The inverse of the Box-Cox transform (see dualad.special.inv_boxcox).",
)
_inv_boxcox1p = binary(
    "inv_boxcox1p",
    scipy_impl("inv_boxcox1p", "inv_boxcox1p"),
    (
        lambda y, lmbda, x: (x + 1) / (lmbda * y + 1),
        lambda y, lmbda, x: (x + 1) * _inv_dlmbda(y, lmbda),
    ),
    uses="aby",
    doc="The inverse of boxcox1p (see dualad.special.inv_boxcox1p).",
)

# ---------------------------------------------------------------------------------------------
# spence, wrightomega

# spence(z) = integral_1^z log(t) / (1 - t) dt: its derivative -log(z) / (z - 1) is
# -log1p_ratio(0, z - 1), regular at z = 1 (where it is -1) at every order
_spence = unary(
    "spence",
    scipy_impl("spence", "spence", complex_ok=True),
    lambda z, y: -_log1p_ratio(0, z - 1),
    doc="Spence's function (see dualad.special.spence).",
)

# the Wright omega function solves w + log(w) = z: w' = w / (1 + w)
_wrightomega = unary(
    "wrightomega",
    scipy_impl("wrightomega", "wrightomega", complex_ok=True),
    lambda z, w: w / (w + 1),
    uses="y",
    doc="The Wright omega function (see dualad.special.wrightomega).",
)

# ---------------------------------------------------------------------------------------------
# huber, pseudo_huber, owens_t

_NAN = float("nan")


def _tensors(delta, r):
    """A Python-number argument as a 0-d tensor of the other's dtype (the masks compare it)."""
    return _as_scalar_tensor(delta, r), _as_scalar_tensor(r, delta)


def _huber_ddelta(delta, r, y):
    delta, r = _tensors(delta, r)
    inside = abs(r) <= delta
    return where(delta < 0, _NAN, where(inside, 0.0, abs(r) - delta))


def _huber_dr(delta, r, y):
    delta, r = _tensors(delta, r)
    inside = abs(r) <= delta
    return where(delta < 0, _NAN, where(inside, r, delta * sign(r)))


_huber = binary(
    "huber",
    scipy_impl("huber", "huber"),
    (_huber_ddelta, _huber_dr),
    doc="Huber's loss of r (see dualad.special.huber).",
)


# pseudo_huber = delta (s - delta) with s = sqrt(delta**2 + r**2) (delta >= 0): d/dr = delta r
# / s, d/ddelta = 2 (s - delta) - r**2 / s = r**4 / (s (s + delta)**2) without cancellation
def _pseudo_huber_ddelta(delta, r, y):
    delta, r = _tensors(delta, r)
    s = sqrt(delta * delta + r * r)
    r2 = r * r
    return where(delta < 0, _NAN, (r2 * r2) / (s * (s + delta) ** 2))


def _pseudo_huber_dr(delta, r, y):
    delta, r = _tensors(delta, r)
    s = sqrt(delta * delta + r * r)
    return where(delta < 0, _NAN, delta * r / s)


_pseudo_huber = binary(
    "pseudo_huber",
    scipy_impl("pseudo_huber", "pseudo_huber"),
    (_pseudo_huber_ddelta, _pseudo_huber_dr),
    doc="The pseudo-Huber loss of r (see dualad.special.pseudo_huber).",
)

_TWO_SQRT_2PI = 2 * _math.sqrt(2 * _math.pi)
_SQRT_HALF = _math.sqrt(0.5)


def _owens_t_dh(h, a, y):
    # -h / (2 pi) integral_0^a exp(-h**2 (1 + x**2) / 2) dx, in closed form
    return exp((h * h) * -0.5) * erf(a * h * _SQRT_HALF) / -_TWO_SQRT_2PI


def _owens_t_da(h, a, y):
    q = a * a + 1
    return exp((h * h) * q * -0.5) / (q * (2 * _math.pi))


_owens_t = binary(
    "owens_t",
    scipy_impl("owens_t", "owens_t"),
    (_owens_t_dh, _owens_t_da),
    doc="Owen's T function (see dualad.special.owens_t).",
)

own_impls(__name__, _exprel, _log_expit, _powm1, _cosm1, _exp10, _sindg, _cosdg, _tandg)
own_impls(__name__, _cotdg, _boxcox, _boxcox1p, _inv_boxcox, _inv_boxcox1p, _huber)
own_impls(__name__, _pseudo_huber, _owens_t, _spence, _wrightomega)
