"""Spherical Bessel functions of static integer order ``n >= 0``: ``spherical_jn``,
``spherical_yn``, ``spherical_in``, ``spherical_kn`` (scipy's), as ops with the order a
parameter.

Derivatives use the recurrences ``(2n+1) f_n' = n f_{n-1} -+ (n+1) f_{n+1}`` (``j``, ``y``:
minus; ``i``: plus; ``k``: ``-(n k_{n-1} + (n+1) k_{n+1})``) and ``j_0' = -j_1``, ``y_0' =
-y_1``, ``i_0' = i_1``, ``k_0' = -k_1``, through the ops of orders ``n -+ 1``: smooth at 0 for
``j`` and ``i`` (``j_0 = sin(x)/x`` has every derivative there), exact at every order.

Real arguments only. Singular points (scipy's values): ``y_n(0) = -inf``, its derivative
there ``-y_1(0) = +inf`` for ``n = 0`` and nan for ``n >= 1`` (the recurrence's ``-inf + inf``,
scipy's ``derivative=True`` value; for odd n the two one-sided limits differ in sign), nan for
the higher derivatives; ``k_n(0) = inf`` with derivative ``-inf`` (every order
right: the recurrence's terms have one sign); ``k_n`` is defined for ``x > 0`` (scipy's values
below are not those of a real function).
"""

from __future__ import annotations

from .._dispatch import apply1
from ._helpers import _unary_with_params
from ._special_impls import special_impl
from .gamma_functions import _static_int


def _recurrence(kind: str, n: int, x):
    """``f_n'(x)`` for ``f`` the spherical Bessel function ``kind`` ("jn", "yn", "in", "kn")."""
    up = spherical(kind, n + 1, x)
    if kind == "in":
        return up if n == 0 else (spherical(kind, n - 1, x) * n + up * (n + 1)) * (1 / (2 * n + 1))
    if n == 0:
        return -up
    down = spherical(kind, n - 1, x) * n
    if kind == "kn":
        return (down + up * (n + 1)) * (-1 / (2 * n + 1))
    return (down - up * (n + 1)) * (1 / (2 * n + 1))


def _op(kind: str, deriv):
    name = f"spherical_{kind}"
    return _unary_with_params(name, special_impl(f"special.{name}", name), deriv)


_spherical_jn = _op("jn", lambda x, y, *, n: _recurrence("jn", n, x))
_spherical_yn = _op("yn", lambda x, y, *, n: _recurrence("yn", n, x))
_spherical_in = _op("in", lambda x, y, *, n: _recurrence("in", n, x))
_spherical_kn = _op("kn", lambda x, y, *, n: _recurrence("kn", n, x))
_OPS = {"jn": _spherical_jn, "yn": _spherical_yn, "in": _spherical_in, "kn": _spherical_kn}


def spherical(kind: str, n, x, derivative: bool = False):
    """The spherical Bessel function ``kind`` of static order ``n`` at ``x`` (its derivative
    with ``derivative=True``, as scipy's keyword), differentiable in ``x``."""
    n = _static_int(f"special.spherical_{kind}", "n", n, 0)
    if derivative:
        return _recurrence(kind, n, x)
    return apply1(_OPS[kind], x, {"n": n})
