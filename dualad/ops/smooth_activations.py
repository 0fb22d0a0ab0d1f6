"""The smooth activations of ``torch.nn.functional``: gelu (exact and tanh), silu, mish, elu,
selu, celu, logsigmoid, tanhshrink, softsign.

Each is one elementwise op whose derivative is written in dualad ops (so every order and
transform composes), evaluated without overflow for large ``|x|`` (``logsigmoid(-1000)`` is
``-1000``, not ``-inf``). Real inputs only, as in PyTorch; integers become the default float.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from .._dispatch import apply1
from ._exports import Exports
from ._helpers import _unary_with_params, unary
from ._promotion import _check_number, _floating, _plain_scalar, _reject_complex
from .activations import sigmoid, softplus
from .comparison import where
from .complex_parts import abs
from .exp_log import exp
from .special import erf
from .trigonometric import tanh

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_GELU_CUBIC = 0.044715
# SELU's constants (Klambauer et al. 2017), PyTorch's values
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _real_float(name, x, xp=None):
    _reject_complex(name, x)
    return _floating(x)


def _stable_softplus(xp, x):
    """``log(1 + exp(x))`` without overflow (no threshold: exact for every x)."""
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0)


# ---------------------------------------------------------------------------------------------
# gelu


def _gelu_impl(xp, x, *, approximate):
    x = _real_float("gelu", x, xp)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
        return (0.5 * x * (1 + xp.tanh(inner))).astype(x.dtype, copy=False)
    return (0.5 * x * (1 + _erf(xp, x * _SQRT_HALF))).astype(x.dtype, copy=False)


def _erf(xp, x):
    if xp is np:
        return scipy.special.erf(x)
    from cupyx.scipy import special  # CuPy's SciPy functions: imported on first GPU use

    return special.erf(x)


def _gelu_deriv(x, y, *, approximate):
    if approximate == "tanh":
        t = tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * (x * x * x)))
        return 0.5 * (1 + t) + (0.5 * x) * (1 - t * t) * (
            _SQRT_2_OVER_PI * (1 + (3 * _GELU_CUBIC) * (x * x))
        )
    # Phi(x) + x phi(x)
    return 0.5 * (1 + erf(x * _SQRT_HALF)) + x * (_INV_SQRT_2PI * exp(-0.5 * (x * x)))


_gelu_op = _unary_with_params("gelu", _gelu_impl, _gelu_deriv)


@public.method
def gelu(x, approximate: str = "none"):
    """Gaussian error linear unit ``x * Phi(x)`` (``torch.nn.functional.gelu``).

    ``approximate="tanh"``: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``. Smooth
    everywhere.

    >>> import dualad
    >>> dualad.gelu(dualad.tensor([-1.0, 0.0, 1.0]))
    tensor([-0.15865525,  0.        ,  0.84134475])
    >>> dualad.gelu(dualad.tensor([1.0]), approximate="tanh")
    tensor([0.84119199])
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(
            f"dualad.gelu: approximate argument must be either none or tanh, got {approximate!r}"
        )
    return apply1(_gelu_op, x, {"approximate": approximate})


# ---------------------------------------------------------------------------------------------
# silu, mish, logsigmoid, tanhshrink, softsign: no parameters


silu = public.method(
    unary(
        "silu",
        lambda xp, x: _silu_values(xp, _real_float("silu", x, xp)),
        lambda x, y: _silu_deriv(x),
        doc="""Sigmoid linear unit (swish) ``x * sigmoid(x)``; smooth everywhere.

    >>> import dualad
    >>> dualad.silu(dualad.tensor([-1000.0, 0.0, 1.0]))
    tensor([-0.        ,  0.        ,  0.73105858])
    """,
    )
)


def _silu_values(xp, x):
    # x * sigmoid(x) with sigmoid from exp(-|x|): no overflow warning at large |x|
    with np.errstate(over="ignore"):
        e = xp.exp(-xp.abs(x))
        s = xp.where(x >= 0, 1 / (1 + e), e / (1 + e))
    return (x * s).astype(x.dtype, copy=False)


def _silu_deriv(x):
    s = sigmoid(x)
    return s * (1 + x * (1 - s))


def _mish_values(xp, x):
    return (x * xp.tanh(_stable_softplus(xp, x))).astype(x.dtype, copy=False)


def _mish_deriv(x):
    t = tanh(softplus(x, threshold=float("inf")))
    return t + x * sigmoid(x) * (1 - t * t)


mish = public.method(
    unary(
        "mish",
        lambda xp, x: _mish_values(xp, _real_float("mish", x, xp)),
        lambda x, y: _mish_deriv(x),
        doc="""``x * tanh(softplus(x))`` (Misra 2019); smooth everywhere.

    >>> import dualad
    >>> dualad.mish(dualad.tensor([-1.0, 0.0, 1.0]))
    tensor([-0.30340146,  0.        ,  0.86509839])
    """,
    )
)


def _logsigmoid_values(xp, x):
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): finite for every finite x
    return (xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)


logsigmoid = public.method(
    unary(
        "logsigmoid",
        lambda xp, x: _logsigmoid_values(xp, _real_float("logsigmoid", x, xp)),
        lambda x, y: sigmoid(-x),
        doc="""``log(sigmoid(x))``, computed without overflow; the derivative is
    ``sigmoid(-x)``.

    >>> import dualad
    >>> dualad.logsigmoid(dualad.tensor([-1000.0, 0.0, 1000.0]))
    tensor([-1.00000000e+03, -6.93147181e-01,  0.00000000e+00])
    """,
    )
)


tanhshrink = public.method(
    unary(
        "tanhshrink",
        lambda xp, x: (lambda v: v - xp.tanh(v))(_real_float("tanhshrink", x, xp)),
        lambda x, y: tanh(x) * tanh(x),
        doc="""``x - tanh(x)``; its derivative is ``tanh(x)**2``.

    >>> import dualad
    >>> dualad.tanhshrink(dualad.tensor([0.0, 1.0]))
    tensor([0.        , 0.23840584])
    """,
    )
)


def _softsign_deriv(x):
    d = 1 + abs(x)
    return 1 / (d * d)


softsign = public.method(
    unary(
        "softsign",
        lambda xp, x: (lambda v: v / (1 + xp.abs(v)))(_real_float("softsign", x, xp)),
        lambda x, y: _softsign_deriv(x),
        doc="""``x / (1 + |x|)``; its derivative ``1 / (1 + |x|)**2`` is continuous at 0 (its
    second derivative jumps there).

    >>> import dualad
    >>> dualad.softsign(dualad.tensor([-1.0, 3.0]))
    tensor([-0.5 ,  0.75])
    """,
    )
)


# ---------------------------------------------------------------------------------------------
# elu, selu, celu: exponential below 0


def _elu_impl(xp, x, *, alpha, scale, input_scale):
    x = _real_float("elu", x, xp)
    with np.errstate(over="ignore"):  # the untaken branch may overflow for large x
        negative = alpha * xp.expm1(x * input_scale)
    return (scale * xp.where(x > 0, x, negative)).astype(x.dtype, copy=False)


def _elu_deriv(x, y, *, alpha, scale, input_scale):
    # PyTorch's convention at 0: the negative side's derivative alpha * scale * input_scale;
    # the exponential is of min(x, 0) so the untaken branch never overflows (0 * inf = NaN)
    negative = (alpha * scale * input_scale) * exp(where(x > 0, 0.0, x) * input_scale)
    return where(x > 0, scale, negative)


_elu_op = _unary_with_params("elu", _elu_impl, _elu_deriv)


def _elu(name, x, alpha, scale, input_scale):
    alpha = _plain_scalar(alpha)
    _check_number(name, "alpha", alpha)
    _reject_complex(name, x)
    params = {"alpha": float(alpha), "scale": scale, "input_scale": input_scale}
    return apply1(_elu_op, x, params)


@public.method
def elu(x, alpha: float = 1.0):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (``torch.nn.functional.elu``).

    At 0 the gradient is the negative side's, ``alpha`` (PyTorch's convention; continuous when
    ``alpha == 1``).

    >>> import dualad
    >>> dualad.elu(dualad.tensor([-1.0, 2.0]))
    tensor([-0.63212056,  2.        ])
    """
    return _elu("elu", x, alpha, 1.0, 1.0)


@public.method
def selu(x):
    """``scale * elu(x, alpha)`` with SELU's constants (alpha 1.67326..., scale 1.05070...).

    At 0 the gradient is the negative side's, ``scale * alpha`` (PyTorch's convention).

    >>> import dualad
    >>> dualad.selu(dualad.tensor([-1.0, 1.0]))
    tensor([-1.11133074,  1.05070099])
    """
    return _elu("selu", x, _SELU_ALPHA, _SELU_SCALE, 1.0)


@public.method
def celu(x, alpha: float = 1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``torch.nn.functional.celu``):
    continuously differentiable for every ``alpha != 0`` (the gradient at 0 is 1).

    >>> import dualad
    >>> dualad.celu(dualad.tensor([-1.0, 2.0]), alpha=2.0)
    tensor([-0.78693868,  2.        ])
    """
    alpha = _plain_scalar(alpha)
    _check_number("celu", "alpha", alpha)
    if alpha == 0:
        raise ValueError("dualad.celu: alpha must be nonzero (ZeroDivisionError in PyTorch)")
    return _elu("celu", x, alpha, 1.0, 1.0 / alpha)
