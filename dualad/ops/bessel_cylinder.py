"""Bessel functions of the first and second kind of real argument: ``j0 j1 y0 y1`` (orders 0
and 1) and ``jv jve yv yve`` (any real order ``v``).

Values are ``scipy.special``'s (``cupyx.scipy.special`` on CuPy, else scipy on the host), in
the input's dtype; real inputs only (``jve``/``yve`` equal ``jv``/``yv`` for real x). The order
``v`` of the binary ops is an argument without a derivative: a tracked ``v`` raises
``NotImplementedError`` when its derivative is asked for; as a constant (a number, a plain or a
batched tensor) it broadcasts against ``x`` as in scipy.

Derivatives use the recurrences ``C_v' = (C_{v-1} - C_{v+1}) / 2`` (``j0' = -j1``,
``y0' = -y1``), calling the ops of orders ``v - 1`` and ``v + 1``, so every order of derivative
is exact. Singular points (scipy's values kept): ``Y_v(0) = -inf`` for ``v >= 0``, with
derivative ``+inf`` (and the signs of ``-x**(-v)``'s derivatives at every higher order, where
the recurrence would give ``inf - inf``); ``Y_v`` is nan for ``x < 0``, so are its derivatives;
``J_v`` for non-integer ``v`` is nan for ``x < 0``; ``J_v(0)`` has an infinite derivative for
``0 < v < 1``.
"""

from __future__ import annotations

from ._exports import Exports
from ._helpers import binary, unary
from ._special_impls import special_impl
from .comparison import logical_and, where
from .special import _no_derivative

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

_ORDER_WHY = "the derivative of a Bessel function in its order has no closed form"


def _is_number(v) -> bool:
    return type(v) in (int, float)


def _cylinder_deriv(of_order):
    """``d/dx C_v(x) = (C_{v-1}(x) - C_{v+1}(x)) / 2``, ``of_order(v, x)`` giving ``C_v``."""

    def deriv(v, x):
        return (of_order(v - 1, x) - of_order(v + 1, x)) * 0.5

    return deriv


def _second_kind_deriv(of_order):
    """``Y_v'`` from the recurrence, and at x == 0 (v >= 0), where it reads ``-inf + inf``, the
    derivatives of the pole ``-x**(-v)`` (``+x**(-v-1)``: +inf, then -inf, ...: the signs of
    ``Y_v``'s derivatives there; their size is infinite anyway)."""
    regular = _cylinder_deriv(of_order)

    def deriv(v, x):
        if _is_number(v) and v < 0:
            return regular(v, x)
        zero = x == 0
        if not _is_number(v):
            zero = logical_and(zero, v >= 0)
        # double where: neither branch sees the other's inputs, so neither gives nan cotangents
        pole = (where(zero, x, 1.0) + 0.0) ** (-v - 1)  # (+ 0.0: -0.0 is +0.0 here)
        return where(zero, pole, regular(v, where(zero, 1.0, x)))

    return deriv


def _order_op(name: str, deriv):
    """The binary op ``name(v, x)`` (scipy's function ``name``), differentiable in x."""
    return binary(
        name,
        special_impl(f"special.{name}", name),
        (
            _no_derivative(f"special.{name}", "v", _ORDER_WHY),
            lambda v, x, y: deriv(v, x),
        ),
        doc=f"scipy.special.{name}(v, x) for real x; differentiable in x (see dualad.special).",
    )


def _j(v, x):
    """``J_v(x)``: the op of order 0 or 1 for those Python orders, else ``jv``."""
    if _is_number(v):
        if v == 0:
            return _j0(x)
        if v == 1:
            return _j1(x)
    return _jv(v, x)


def _y(v, x):
    """``Y_v(x)``: the op of order 0 or 1 for those Python orders, else ``yv``."""
    if _is_number(v):
        if v == 0:
            return _y0(x)
        if v == 1:
            return _y1(x)
    return _yv(v, x)


_jv = _order_op("jv", _cylinder_deriv(_j))
_yv = _order_op("yv", _second_kind_deriv(_y))
# for real x these equal jv and yv (their scale exp(-|Im x|) is 1); their rules stay in the
# family, calling jve/yve of orders v -+ 1
_jve = _order_op("jve", _cylinder_deriv(lambda v, x: _jve(v, x)))
_yve = _order_op("yve", _second_kind_deriv(lambda v, x: _yve(v, x)))

_j0 = unary("j0", special_impl("special.j0", "j0"), lambda x, y: -_j1(x), doc="scipy.special.j0.")
_j1 = unary(
    "j1",
    special_impl("special.j1", "j1"),
    lambda x, y: _cylinder_deriv(_j)(1, x),
    doc="scipy.special.j1.",
)
_y0 = unary("y0", special_impl("special.y0", "y0"), lambda x, y: -_y1(x), doc="scipy.special.y0.")
_y1 = unary(
    "y1",
    special_impl("special.y1", "y1"),
    lambda x, y: _second_kind_deriv(_y)(1, x),
    doc="scipy.special.y1.",
)
