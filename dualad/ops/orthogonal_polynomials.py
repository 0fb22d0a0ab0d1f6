"""Classical orthogonal polynomials of scipy.special, differentiable in x: eval_chebyt,
eval_chebyu, eval_chebyc, eval_chebys, eval_sh_chebyt, eval_sh_chebyu, eval_legendre,
eval_sh_legendre, eval_gegenbauer, eval_laguerre, eval_genlaguerre, eval_hermite,
eval_hermitenorm, eval_jacobi, eval_sh_jacobi.

``dualad.special`` exports them under scipy's names. The degree ``n`` is a static integer
``>= 0`` and the parameters (``alpha``, ``beta``) static numbers: a tracked one raises. Values
come from ``scipy.special`` (complex ``x`` too, except for the Hermite polynomials, as scipy),
in the input's dtype. Each derivative is another polynomial of the family, by identities
regular everywhere, so every order is exact:

- ``T_n' = n U_(n-1)``, ``U_n = C_n^(1)``, ``C_n^(a)' = 2a C_(n-1)^(a+1)``, ``P_n = C_n^(1/2)``;
- ``chebyc(n, x) = 2 T_n(x/2)``, ``chebys(n, x) = U_n(x/2)``, ``sh_legendre(n, x) = P_n(2x-1)``;
- ``L_n^(a)' = -L_(n-1)^(a+1)``, ``H_n' = 2n H_(n-1)``, ``He_n' = n He_(n-1)``;
- ``P_n^(a,b)' = (n + a + b + 1)/2 P_(n-1)^(a+1,b+1)``; the shifted ones (``sh_``) at ``2x - 1``,
  and ``G_n^(p,q)' = n G_(n-1)^(p+2,q+1)`` for ``eval_sh_jacobi``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._dispatch import apply1
from ._helpers import _unary_with_params
from ._promotion import _float_array, _reject_complex
from ._special_calls import scipy_call
from .gamma_functions import _static_int, _untracked_item


def _static_number(name: str, argument: str, value) -> float:
    """A parameter given as a Python number (or a one-element tensor without a derivative)."""
    value = _untracked_item(f"special.{name}", argument, value, "a static parameter", "number")
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    raise TypeError(f"dualad.special.{name}: {argument} must be a real number, got {value!r}")


def _impl(name: str, complex_ok: bool = True):
    def impl(xp, x, *, n, **params):
        x = _float_array(x)
        if not complex_ok:
            _reject_complex(f"special.{name}", x)
        if x.dtype.kind == "c":
            # scipy's complex loops take the degree as a float
            wide, order = x.astype(np.complex128, copy=False), float(n)
        else:
            wide, order = x.astype(np.float64, copy=False), np.int64(n)
        with np.errstate(all="ignore"):
            out = scipy_call(xp, name, order, *params.values(), wide)
        return out.astype(x.dtype, copy=False)

    impl.__module__ = __name__
    return impl


def _op(name, deriv, *, complex_ok=True, uses="x"):
    return _unary_with_params(name, _impl(name, complex_ok), deriv, uses=uses)


# the derivative of degree 0 is 0 (x * 0: a tensor of x's kind, shape and level)
def _chebyt_deriv(x, y, *, n):
    return n * _chebyu(n - 1, x) if n else x * 0.0


def _chebyu_deriv(x, y, *, n):
    return 2 * _gegenbauer(n - 1, 2.0, x) if n else x * 0.0


def _chebyc_deriv(x, y, *, n):
    return n * _chebyu(n - 1, x * 0.5) if n else x * 0.0


def _chebys_deriv(x, y, *, n):
    return _gegenbauer(n - 1, 2.0, x * 0.5) if n else x * 0.0


def _legendre_deriv(x, y, *, n):
    return _gegenbauer(n - 1, 1.5, x) if n else x * 0.0


def _sh_legendre_deriv(x, y, *, n):
    return 2 * _gegenbauer(n - 1, 1.5, 2 * x - 1) if n else x * 0.0


def _laguerre_deriv(x, y, *, n):
    return -_genlaguerre(n - 1, 1.0, x) if n else x * 0.0


def _hermite_deriv(x, y, *, n):
    return (2 * n) * _hermite(n - 1, x) if n else x * 0.0


def _hermitenorm_deriv(x, y, *, n):
    return n * _hermitenorm(n - 1, x) if n else x * 0.0


def _sh_chebyt_deriv(x, y, *, n):
    return (2 * n) * _chebyu(n - 1, 2 * x - 1) if n else x * 0.0


def _sh_chebyu_deriv(x, y, *, n):
    return 4 * _gegenbauer(n - 1, 2.0, 2 * x - 1) if n else x * 0.0


# with parameters: + y * 0 keeps scipy's nan (parameters outside the domain) in the derivative
def _gegenbauer_deriv(x, y, *, n, alpha):
    return (2 * alpha) * _gegenbauer(n - 1, alpha + 1, x) + y * 0.0 if n else x * 0.0


def _genlaguerre_deriv(x, y, *, n, alpha):
    return y * 0.0 - _genlaguerre(n - 1, alpha + 1, x) if n else x * 0.0


def _jacobi_deriv(x, y, *, n, alpha, beta):
    if not n:
        return x * 0.0
    scale = (n + alpha + beta + 1) / 2
    return scale * _jacobi(n - 1, alpha + 1, beta + 1, x) + y * 0.0


# G_n^(p,q)(x) = P_n^(p-q,q-1)(2x - 1) / binom(2n + p - 1, n): G' = n G_(n-1)^(p+2,q+1)
def _sh_jacobi_deriv(x, y, *, n, p, q):
    return n * _sh_jacobi(n - 1, p + 2, q + 1, x) + y * 0.0 if n else x * 0.0


_OPS = {
    "eval_chebyt": _op("eval_chebyt", _chebyt_deriv),
    "eval_chebyu": _op("eval_chebyu", _chebyu_deriv),
    "eval_chebyc": _op("eval_chebyc", _chebyc_deriv),
    "eval_chebys": _op("eval_chebys", _chebys_deriv),
    "eval_legendre": _op("eval_legendre", _legendre_deriv),
    "eval_sh_legendre": _op("eval_sh_legendre", _sh_legendre_deriv),
    "eval_laguerre": _op("eval_laguerre", _laguerre_deriv),
    "eval_hermite": _op("eval_hermite", _hermite_deriv, complex_ok=False),
    "eval_hermitenorm": _op("eval_hermitenorm", _hermitenorm_deriv, complex_ok=False),
    "eval_gegenbauer": _op("eval_gegenbauer", _gegenbauer_deriv, uses="xy"),
    "eval_genlaguerre": _op("eval_genlaguerre", _genlaguerre_deriv, uses="xy"),
    "eval_jacobi": _op("eval_jacobi", _jacobi_deriv, uses="xy"),
    "eval_sh_chebyt": _op("eval_sh_chebyt", _sh_chebyt_deriv),
    "eval_sh_chebyu": _op("eval_sh_chebyu", _sh_chebyu_deriv),
    "eval_sh_jacobi": _op("eval_sh_jacobi", _sh_jacobi_deriv, uses="xy"),
}
# (as names of this module: the op table reads an op's module from them)
_chebyt_op, _chebyu_op, _chebyc_op, _chebys_op = (
    _OPS[f"eval_cheby{k}"] for k in ("t", "u", "c", "s")
)
_legendre_op, _sh_legendre_op = _OPS["eval_legendre"], _OPS["eval_sh_legendre"]
_laguerre_op, _genlaguerre_op = _OPS["eval_laguerre"], _OPS["eval_genlaguerre"]
_hermite_op, _hermitenorm_op = _OPS["eval_hermite"], _OPS["eval_hermitenorm"]
_gegenbauer_op, _jacobi_op = _OPS["eval_gegenbauer"], _OPS["eval_jacobi"]
_sh_chebyt_op, _sh_chebyu_op = _OPS["eval_sh_chebyt"], _OPS["eval_sh_chebyu"]
_sh_jacobi_op = _OPS["eval_sh_jacobi"]


def polynomial(name: str, n, x, **params):
    """``name``'s polynomial of static degree ``n`` (and static ``params``) at ``x``."""
    n = _static_int(f"special.{name}", "n", n, 0)
    values = {key: _static_number(name, key, value) for key, value in params.items()}
    return apply1(_OPS[name], x, {"n": n, **values})


def _chebyu(n, x):
    return apply1(_chebyu_op, x, {"n": n})


def _gegenbauer(n, alpha, x):
    return apply1(_gegenbauer_op, x, {"n": n, "alpha": alpha})


def _genlaguerre(n, alpha, x):
    return apply1(_genlaguerre_op, x, {"n": n, "alpha": alpha})


def _hermite(n, x):
    return apply1(_hermite_op, x, {"n": n})


def _hermitenorm(n, x):
    return apply1(_hermitenorm_op, x, {"n": n})


def _jacobi(n, alpha, beta, x):
    return apply1(_jacobi_op, x, {"n": n, "alpha": alpha, "beta": beta})


def _sh_jacobi(n, p, q, x):
    return apply1(_sh_jacobi_op, x, {"n": n, "p": p, "q": q})
