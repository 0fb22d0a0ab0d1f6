"""Hypergeometric functions ``hyp0f1 hyp1f1 hyp2f1 hyperu`` and the Struve functions ``struve
modstruve``, differentiable in their argument; the parameters (``a b c``, the order ``v``) are
static real numbers (``static_real``: a tracked tensor raises NotImplementedError).

Values are ``scipy.special``'s, real arguments only. Derivatives raise the parameters, calling
the op of the next parameters (every order exact): ``0F1(b; z)' = 0F1(b+1; z) / b``,
``1F1(a; b; x)' = a/b 1F1(a+1; b+1; x)``, ``2F1(a, b; c; z)' = ab/c 2F1(a+1, b+1; c+1; z)``,
``U(a, b, x)' = -a U(a+1, b+1, x)``; Struve's ``H_v' = (H_{v-1} - H_{v+1})/2 + t_v`` and
``L_v' = (L_{v-1} + L_{v+1})/2 + t_v`` with ``t_v = (x/2)**v / (2 sqrt(pi) Gamma(v + 3/2))``.

Singular points (scipy's values kept): ``2F1`` at ``z = 1`` (inf where ``c - a - b <= 0``,
its derivative then inf too) and nan beyond; ``U(a, b, 0)`` inf for ``b >= 1``; ``H_v``,
``L_v`` nan for ``x < 0`` and non-integer ``v``; at ``x = 0`` the Struve derivatives of
order two and more are nan for non-integer ``v < 2`` (the recurrence's terms are singular).
"""

from __future__ import annotations

import math as _math
import numbers

import scipy.special

from .._dispatch import apply1
from .._tensor import Tensor
from ._helpers import _unary_with_params
from ._special_impls import special_impl


def static_real(name: str, argument: str, value) -> float:
    """A parameter given as a real number (or a one-element tensor without a derivative) as a
    Python float; a tracked tensor raises NotImplementedError, anything else ValueError."""
    if isinstance(value, Tensor):
        tracked = value.requires_grad or value._fw or type(value) is not Tensor
        if tracked:  # (requires grad, a tangent, or a transform's input: never a silent 0)
            why = "a tracked or batched tensor was given; pass a Python number"
        elif value.numel() != 1:
            why = f"one number per call, got a tensor of shape {tuple(value.shape)}"
        else:
            return float(value.item())
        error = NotImplementedError if tracked else ValueError
        raise error(f"dualad.{name}: {argument} is a parameter without a derivative here: {why}")
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"dualad.{name}: {argument} must be a real number, got {value!r}")


def _op(name, deriv):
    return _unary_with_params(name, special_impl(f"special.{name}", name), deriv)


_hyp0f1_op = _op("hyp0f1", lambda z, y, *, b: hyp(_hyp0f1_op, z, b=b + 1) * (1 / b))
_hyp1f1_op = _op("hyp1f1", lambda x, y, *, a, b: hyp(_hyp1f1_op, x, a=a + 1, b=b + 1) * (a / b))
_hyp2f1_op = _op(
    "hyp2f1",
    lambda z, y, *, a, b, c: hyp(_hyp2f1_op, z, a=a + 1, b=b + 1, c=c + 1) * (a * b / c),
)
_hyperu_op = _op("hyperu", lambda x, y, *, a, b: hyp(_hyperu_op, x, a=a + 1, b=b + 1) * -a)


def hyp(op, x, **params):
    """The hypergeometric op ``op`` at ``x`` with the static parameters ``params``."""
    return apply1(op, x, params)


def _struve_term(x, v):
    """``(x/2)**v / (2 sqrt(pi) Gamma(v + 3/2))``: constant for v = 0 (no ``0**-1`` in its
    derivative), 0 where ``Gamma(v + 3/2)`` has a pole."""
    scale = float(scipy.special.rgamma(v + 1.5)) / (2 * _math.sqrt(_math.pi))
    if v == 0:
        return scale
    return (x * 0.5) ** v * scale


_struve_op = _op(
    "struve",
    lambda x, y, *, v: (
        (hyp(_struve_op, x, v=v - 1) - hyp(_struve_op, x, v=v + 1)) * 0.5 + _struve_term(x, v)
    ),
)
_modstruve_op = _op(
    "modstruve",
    lambda x, y, *, v: (
        (hyp(_modstruve_op, x, v=v - 1) + hyp(_modstruve_op, x, v=v + 1)) * 0.5 + _struve_term(x, v)
    ),
)
