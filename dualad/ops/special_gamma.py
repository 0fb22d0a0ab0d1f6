"""The Gamma function itself and its relatives: gamma, loggamma, rgamma (real and complex),
gammasgn, poch, beta, binom (real); and digamma/polygamma of complex arguments (the derivatives
of the complex ones).

These ops have no top-level name (``dualad.gamma`` would read as a random distribution to a
NumPy user): ``dualad.special`` exports them under scipy's names. Values come from
``scipy.special`` (``cupyx.scipy.special`` on CuPy), in the input's dtype. The derivatives are
written in dualad ops and chain: gamma' = gamma digamma, digamma' = polygamma(1, .),
polygamma(n)' = polygamma(n + 1, .), for real and for complex arguments (holomorphic: PyTorch's
conjugate convention), so every order is exact.
"""

from __future__ import annotations

import math as _math

import numpy as np

from .._dispatch import apply1
from ._helpers import _unary_with_params, binary, piecewise_constant, unary
from ._promotion import _float_array
from ._special_calls import own_impls, scipy_impl
from .gamma_functions import digamma

# ---------------------------------------------------------------------------------------------
# digamma and polygamma of complex arguments

# B_2j / (2j)! ... of the Euler-Maclaurin tail: sum_{k>=0} (w + k)**-(n+1) = w**-n / n +
# w**-(n+1) / 2 + sum_j B_2j (n + 2j - 1)! / ((2j)! n!) w**-(n+2j); exact to double precision
# for |w| >= 20 + n with these ten terms
_BERNOULLI = (
    1 / 6,
    -1 / 30,
    1 / 42,
    -1 / 30,
    5 / 66,
    -691 / 2730,
    7 / 6,
    -3617 / 510,
    43867 / 798,
    -174611 / 330,
)


def _polygamma_series(xp, z, n: int):
    """polygamma(n, z), n >= 1, of a complex128 array of ``xp``: (-1)**(n+1) n! sum_k
    (z + k)**-(n+1),
    the first terms summed directly until Re(z + m) >= 20 + n, the rest by Euler-Maclaurin."""
    bound = 20.0 + n
    lowest = float(xp.min(z.real)) if z.size else bound
    shift = int(max(0.0, _math.ceil(bound - lowest))) if _math.isfinite(lowest) else 0
    total = xp.zeros_like(z)
    with np.errstate(all="ignore"):
        for k in range(shift):
            total += (z + k) ** -(n + 1)
        w = z + shift
        tail = w**-n / n + 0.5 * w ** -(n + 1)
        for j, bernoulli in enumerate(_BERNOULLI, start=1):
            factor = _math.factorial(n + 2 * j - 1) / (_math.factorial(2 * j) * _math.factorial(n))
            tail += bernoulli * factor * w ** -(n + 2 * j)
    return (-1) ** (n + 1) * _math.factorial(n) * (total + tail)


def _complex_polygamma_impl(xp, z, *, n):
    z = _float_array(z)
    dtype = np.result_type(z.dtype, np.complex64)
    wide = z.astype(np.complex128, copy=False)
    return _polygamma_series(xp, wide, n).astype(dtype, copy=False)


_complex_polygamma_op = _unary_with_params(
    "complex_polygamma",
    _complex_polygamma_impl,
    lambda z, y, *, n: _complex_polygamma(n + 1, z),
)


def _complex_polygamma(n: int, z):
    """polygamma(n, z) of complex z, n >= 1 static (poles at 0, -1, -2, ...)."""
    return apply1(_complex_polygamma_op, z, {"n": n})


_psi = scipy_impl("psi", "digamma", complex_ok=True)


def _complex_digamma_impl(xp, z):
    z = _float_array(z)
    dtype = np.result_type(z.dtype, np.complex64)
    return _psi(xp, z.astype(dtype, copy=False))


_complex_digamma = unary(
    "complex_digamma",
    _complex_digamma_impl,
    lambda z, y: _complex_polygamma(1, z),
    doc="digamma of complex z (scipy's psi); poles at 0, -1, -2, ...",
)


def _is_complex(x) -> bool:
    return getattr(x, "dtype", np.dtype(float)).kind == "c" or type(x) is complex


def _digamma_any(x):
    """digamma of a real or complex tensor (each with its own chain of derivatives)."""
    return _complex_digamma(x) if _is_complex(x) else digamma(x)


# ---------------------------------------------------------------------------------------------
# gamma, loggamma, rgamma, gammasgn

_gamma = unary(
    "gamma",
    scipy_impl("gamma", "gamma", complex_ok=True),
    lambda x, y: y * _digamma_any(x),
    uses="xy",
    doc="Gamma(x) of real or complex x (see dualad.special.gamma).",
)


def _loggamma_deriv(x, y):
    if _is_complex(x):
        return _complex_digamma(x)
    # scipy's real loggamma is nan for x < 0 (and inf at the poles): so is its derivative there
    return digamma(x) + y * 0.0


_loggamma = unary(
    "loggamma",
    scipy_impl("loggamma", "loggamma", complex_ok=True),
    _loggamma_deriv,
    uses="xy",
    doc="The principal branch of log Gamma(z) (see dualad.special.loggamma).",
)

_rgamma = unary(
    "rgamma",
    scipy_impl("rgamma", "rgamma", complex_ok=True),
    lambda x, y: -y * _digamma_any(x),
    uses="xy",
    doc="1 / Gamma(x) of real or complex x (see dualad.special.rgamma).",
)

_gammasgn = piecewise_constant(
    "gammasgn",
    scipy_impl("gammasgn", "gammasgn"),
    doc="The sign of Gamma(x), real x (see dualad.special.gammasgn).",
)


# ---------------------------------------------------------------------------------------------
# poch, beta


def _poch_dz(z, m, y):
    return y * (digamma(z + m) - digamma(z))


_poch = binary(
    "poch",
    scipy_impl("poch", "poch"),
    (_poch_dz, lambda z, m, y: y * digamma(z + m)),
    uses="aby",
    doc="Pochhammer's symbol Gamma(z + m) / Gamma(z) (see dualad.special.poch).",
)


def _beta_da(a, b, y):
    return y * (digamma(a) - digamma(a + b))


_beta = binary(
    "beta",
    scipy_impl("beta", "beta"),
    (_beta_da, lambda a, b, y: y * (digamma(b) - digamma(a + b))),
    uses="aby",
    doc="The beta function Gamma(a) Gamma(b) / Gamma(a + b) (see dualad.special.beta).",
)


def _binom_dn(n, k, y):
    return y * (digamma(n + 1) - digamma(n - k + 1))


_binom = binary(
    "binom",
    scipy_impl("binom", "binom"),
    (_binom_dn, lambda n, k, y: y * (digamma(n - k + 1) - digamma(k + 1))),
    uses="aby",
    doc="The binomial coefficient of real n and k (see dualad.special.binom).",
)

# the op table names an op's module after its impl's: these impls are made in _special_calls
own_impls(__name__, _complex_digamma, _gamma, _loggamma, _rgamma, _gammasgn, _poch, _beta)
own_impls(__name__, _binom)
