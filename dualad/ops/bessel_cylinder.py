"""Bessel functions of the first and second kind of real argument: ``j0 j1 y0 y1`` (orders 0
and 1) and ``jv jve yv yve`` (any real order ``v``).

Values are ``scipy.special``'s (``cupyx.scipy.special`` on CuPy, else scipy on the host), in
the input's dtype. ``jv`` and ``yv`` take complex x too (holomorphic rules, PyTorch's conjugate
convention; the order stays real); the others real x only (``jve``/``yve`` equal ``jv``/``yv``
for real x; for complex x their scale ``exp(-|Im x|)`` is not holomorphic). The order
``v`` of the binary ops is an argument without a derivative: a tracked ``v`` raises
``NotImplementedError`` when its derivative is asked for; as a constant (a number, a plain or a
batched tensor) it broadcasts against ``x`` as in scipy.

Derivatives use the recurrences ``C_v' = (C_{v-1} - C_{v+1}) / 2`` (``j0' = -j1``,
``y0' = -y1``), calling the ops of orders ``v - 1`` and ``v + 1``, so every order of derivative
is exact. Singular points (scipy's values kept): ``Y_v(0) = -inf`` for ``v >= 0`` (``yve``: nan, its
derivatives too), with
derivative ``+inf`` (and the signs of ``-x**(-v)``'s derivatives at every higher order, where
the recurrence would give ``inf - inf``); ``Y_v`` is nan for ``x < 0``, so are its derivatives;
``J_v`` for non-integer ``v`` is nan for ``x < 0``; ``J_v(0)`` has an infinite derivative for
``0 < v < 1``.
"""

from __future__ import annotations

from ._helpers import binary
from ._special_impls import scipy_unary, special_impl
from .comparison import logical_and, where
from .special import _no_derivative

_ORDER_WHY = "the derivative of a Bessel function in its order has no closed form"


def _is_number(v) -> bool:
    return type(v) in (int, float)


def by_order(order0, order1, general):
    """``of_order(v, x)``: ``C_v(x)`` as the op of its order (``order0``/``order1``, which are
    real only, for those Python orders and real x, else ``general(v, x)``)."""

    def of_order(v, x):
        if _is_number(v) and x.dtype.kind != "c":
            if v == 0:
                return order0(x)
            if v == 1:
                return order1(x)
        return general(v, x)

    return of_order


def order_op(name: str, deriv, uses="ab", complex_ok=False):
    """The binary op ``name(v, x)`` (scipy's function ``name``), differentiable in x by
    ``deriv(v, x, y)``; a tracked order ``v`` raises. ``complex_ok``: complex x too (the order
    stays real)."""
    return binary(
        name,
        special_impl(f"special.{name}", name, complex_ok=complex_ok, real_first=True),
        (_no_derivative(f"special.{name}", "v", _ORDER_WHY), deriv),
        uses=uses,
        doc=f"scipy.special.{name}(v, x); differentiable in x (see dualad.special).",
    )


def _cylinder_deriv(of_order, v, x):
    """``d/dx C_v(x) = (C_{v-1}(x) - C_{v+1}(x)) / 2``, ``of_order(v, x)`` giving ``C_v``."""
    return (of_order(v - 1, x) - of_order(v + 1, x)) * 0.5


def _second_kind_deriv(of_order, v, x):
    """``Y_v'`` from the recurrence, and at x == 0 (v >= 0), where it reads ``-inf + inf``, the
    derivatives of the pole ``-x**(-v)`` (``+x**(-v-1)``: +inf, then -inf, ...: the signs of
    ``Y_v``'s derivatives there; their size is infinite anyway)."""
    if _is_number(v) and v < 0:
        return _cylinder_deriv(of_order, v, x)
    zero = x == 0
    if not _is_number(v):
        zero = logical_and(zero, v >= 0)
    # double where: neither branch sees the other's inputs, so neither gives nan cotangents
    pole = (where(zero, x, 1.0) + 0.0) ** (-v - 1)  # (+ 0.0: -0.0 is +0.0 here)
    return where(zero, pole, _cylinder_deriv(of_order, v, where(zero, 1.0, x)))


_jv = order_op("jv", lambda v, x, y: _cylinder_deriv(_j, v, x), complex_ok=True)
_yv = order_op("yv", lambda v, x, y: _second_kind_deriv(_y, v, x), complex_ok=True)
# for real x these equal jv and yv (their scale exp(-|Im x|) is 1); their rules stay in the
# family, calling jve/yve of orders v -+ 1. scipy's yve(v, 0) is nan (not yv's -inf): so are its
# derivatives there (no pole branch)
_jve = order_op("jve", lambda v, x, y: _cylinder_deriv(_jve, v, x))
_yve = order_op("yve", lambda v, x, y: _cylinder_deriv(_yve, v, x))

_j0 = scipy_unary("j0", lambda x, y: -_j1(x))
_j1 = scipy_unary("j1", lambda x, y: _cylinder_deriv(_j, 1, x))
_y0 = scipy_unary("y0", lambda x, y: -_y1(x))
_y1 = scipy_unary("y1", lambda x, y: _second_kind_deriv(_y, 1, x))

_j = by_order(_j0, _j1, _jv)
_y = by_order(_y0, _y1, _yv)
