"""Activation-style functions: sigmoid (expit), logit, relu, softplus, and the
piecewise-linear ones of ``torch.nn.functional``: leaky_relu, hardtanh, relu6.

The smooth activations of neural networks (gelu, silu, elu, ...) are in
``smooth_activations.py``: they need exp, erf and tanh, defined below this module.
"""

from __future__ import annotations

from .._dispatch import apply1
from ._exports import Exports
from ._helpers import _unary_with_params, binary, unary
from ._promotion import _check_number, _float_array, _floating, _plain_scalar, _reject_complex
from .arithmetic import reciprocal
from .comparison import where

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


sigmoid_backward = binary(
    "sigmoid_backward",
    lambda xp, t, y: t * (y * (1 - y)),
    (lambda t, y, out: y * (1 - y), lambda t, y, out: t * (1 - 2 * y)),
    uses="ab",
    doc="``t * y * (1 - y)``: the logistic function's derivative at its output ``y`` times ``t``.",
)
# (its impl on floating arrays as steps, for dualad.jit's code generator: OpDef.inline)
sigmoid_backward.op.inline = (
    ("subtract", (("c", 1), 1)),
    ("multiply", (1, ("r", 0))),
    ("multiply", (0, ("r", 1))),
)


# ---------------------------------------------------------------------------------------------
# activation-style functions


def _sigmoid_impl(xp, x):
    x = _float_array(x)
    if x.dtype.kind == "c":
        return 1 / (1 + xp.exp(-x))
    # exp of -|x| only: no overflow (and no warning) for large |x|
    e = xp.exp(-xp.abs(x))
    positive_side = 1 / (1 + e)
    return xp.where(x >= 0, positive_side, e * positive_side)


sigmoid = public.inplace(
    unary(
        "sigmoid",
        _sigmoid_impl,
        None,
        uses="y",
        doc="""Logistic function ``1 / (1 + exp(-x))``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 2.0], requires_grad=True)
        >>> dualad.sigmoid(x)
        tensor([0.5       , 0.88079708], grad_fn=<SigmoidBackward0>)
        >>> dualad.autograd.grad(dualad.sigmoid(x).sum(), x)
        (tensor([0.25      , 0.10499359]),)
        """,
        fused=sigmoid_backward,
    )
)
expit = public.function(sigmoid, "expit")


def _logit_impl(xp, x, *, eps):
    x = _floating(x)
    if eps is not None:
        x = xp.clip(x, eps, 1 - eps)
    return xp.log(x / (1 - x))


def _logit_deriv(x, y, *, eps):
    d = reciprocal(x * (1 - x))
    if eps is None:
        return d
    # PyTorch: no gradient where the input was clamped to [eps, 1 - eps]
    return where((x < eps) | (x > 1 - eps), 0.0, d)


_logit_op = _unary_with_params("logit", _logit_impl, _logit_deriv)


@public.inplace
def logit(x, eps: float | None = None):
    """``log(x / (1 - x))``, with ``x`` first clamped to ``[eps, 1 - eps]`` when ``eps`` is given.

    The gradient is 0 where the input was clamped (PyTorch's convention).

    >>> import dualad
    >>> dualad.logit(dualad.tensor([0.5, 0.0]), eps=0.25)
    tensor([ 0.        , -1.09861229])
    """
    if eps is not None:
        eps = _plain_scalar(eps)
        _check_number("logit", "eps", eps)
        eps = float(eps)
    return apply1(_logit_op, x, {"eps": eps})


def _relu_impl(xp, x):
    _reject_complex("relu", x)
    return xp.maximum(x, 0)


relu = public.inplace(
    unary(
        "relu",
        _relu_impl,
        lambda x, y: y > 0,  # relu'(0) == 0, as in PyTorch
        uses="y",
        doc="""``max(x, 0)``; the gradient at 0 is 0 (PyTorch's convention).

        >>> import dualad
        >>> x = dualad.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        >>> dualad.relu(x)
        tensor([0., 0., 2.], grad_fn=<ReluBackward0>)
        >>> dualad.autograd.grad(dualad.relu(x).sum(), x)
        (tensor([0., 0., 1.]),)
        """,
    )
)


def _softplus_impl(xp, x, *, beta, threshold):
    x = _floating(x)
    z = x * beta
    # log(1 + exp(z)) = log1p(exp(-|z|)) + max(z, 0): no overflow for any z
    smooth = (xp.log1p(xp.exp(-xp.abs(z))) + xp.maximum(z, 0)) / beta
    return xp.where(z > threshold, x, smooth)


def _softplus_deriv(x, y, *, beta, threshold):
    z = x if beta == 1 else x * beta
    return where(z > threshold, 1.0, sigmoid(z))


_softplus_op = _unary_with_params("softplus", _softplus_impl, _softplus_deriv)


@public.method
def softplus(x, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    Like ``torch.nn.functional.softplus``; the gradient is ``sigmoid(beta * x)`` (1 above the
    threshold).

    >>> import dualad
    >>> dualad.softplus(dualad.tensor([0.0, 30.0]))
    tensor([ 0.69314718, 30.        ])
    """
    beta, threshold = _plain_scalar(beta), _plain_scalar(threshold)
    _check_number("softplus", "beta", beta)
    _check_number("softplus", "threshold", threshold)
    _reject_complex("softplus", x)
    return apply1(_softplus_op, x, {"beta": beta, "threshold": threshold})


# ---------------------------------------------------------------------------------------------
# piecewise-linear activations (torch.nn.functional's); the derivative at a kink is PyTorch's


def _leaky_relu_impl(xp, x, *, negative_slope):
    x = _floating(x)
    return xp.where(x > 0, x, x * negative_slope)


_leaky_relu_op = _unary_with_params(
    "leaky_relu",
    _leaky_relu_impl,
    # PyTorch's convention at 0: the negative side's slope
    lambda x, y, *, negative_slope: where(x > 0, 1.0, negative_slope),
)


@public.method
def leaky_relu(x, negative_slope: float = 0.01):
    """``x`` where ``x > 0``, else ``negative_slope * x`` (``torch.nn.functional.leaky_relu``).

    Kink at 0: the gradient there is ``negative_slope`` (PyTorch's convention).

    >>> import dualad
    >>> dualad.leaky_relu(dualad.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2,  3. ])
    """
    negative_slope = _plain_scalar(negative_slope)
    _check_number("leaky_relu", "negative_slope", negative_slope)
    _reject_complex("leaky_relu", x)
    return apply1(_leaky_relu_op, x, {"negative_slope": negative_slope})


def _hardtanh_impl(xp, x, *, min_val, max_val):
    x = _floating(x)
    return xp.clip(x, min_val, max_val).astype(x.dtype, copy=False)


_hardtanh_op = _unary_with_params(
    "hardtanh",
    _hardtanh_impl,
    # PyTorch's convention: no gradient at min_val and max_val themselves
    lambda x, y, *, min_val, max_val: (x > min_val) & (x < max_val),
)


def _hardtanh(name, x, min_val, max_val):
    min_val, max_val = _plain_scalar(min_val), _plain_scalar(max_val)
    _check_number(name, "min_val", min_val)
    _check_number(name, "max_val", max_val)
    if min_val > max_val:
        raise ValueError(f"dualad.{name}: min_val cannot be greater than max_val")
    _reject_complex(name, x)
    return apply1(_hardtanh_op, x, {"min_val": min_val, "max_val": max_val})


@public.method
def hardtanh(x, min_val: float = -1.0, max_val: float = 1.0):
    """``x`` clamped to ``[min_val, max_val]`` (``torch.nn.functional.hardtanh``).

    The gradient is 1 strictly inside, 0 outside and at the two kinks (PyTorch's convention).

    >>> import dualad
    >>> dualad.hardtanh(dualad.tensor([-2.0, 0.5, 3.0]))
    tensor([-1. ,  0.5,  1. ])
    """
    return _hardtanh("hardtanh", x, min_val, max_val)


@public.method
def relu6(x):
    """``min(max(x, 0), 6)``: ``hardtanh(x, 0, 6)``, with its gradient (0 at 0 and at 6).

    >>> import dualad
    >>> dualad.relu6(dualad.tensor([-1.0, 3.0, 7.0]))
    tensor([0., 3., 6.])
    """
    return _hardtanh("relu6", x, 0.0, 6.0)
