"""Rounding, signs and remainders: sign, floor, ceil, trunc, round, floor_divide, remainder, fmod,
copysign, nan_to_num, heaviside. Piecewise-constant ops have zero gradients (PyTorch's).
"""

from __future__ import annotations

from .._dispatch import OpDef, apply1, binary_caller, register
from . import _batching as batching
from ._exports import Exports
from ._helpers import (
    _output_tangent,
    _unary_with_params,
    binary,
    nondiff_binary,
    piecewise_constant,
    piecewise_constant_op,
    zero_jvp,
    zero_vjp,
)
from ._promotion import _check_number, _floating_pair, _plain_scalar, _reject_complex
from .comparison import isfinite, where

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


sign = public.inplace(
    piecewise_constant(
        "sign",
        lambda xp, x: xp.sign(x),
        doc="""Sign of x (-1, 0, 1); zero gradient (PyTorch's).

        >>> import dualad
        >>> x = dualad.tensor([-2.0, 0.0, 3.0], requires_grad=True)
        >>> dualad.sign(x)
        tensor([-1.,  0.,  1.], grad_fn=<SignBackward0>)
        >>> dualad.autograd.grad(dualad.sign(x).sum(), x)
        (tensor([0., 0., 0.]),)
        """,
    )
)
floor = public.inplace(
    piecewise_constant(
        "floor",
        lambda xp, x: xp.floor(x),
        doc="""Round down (zero gradient).

        >>> import dualad
        >>> x = dualad.tensor([-1.5, 0.2], requires_grad=True)
        >>> dualad.floor(x)
        tensor([-2.,  0.], grad_fn=<FloorBackward0>)
        >>> dualad.autograd.grad(dualad.floor(x).sum(), x)
        (tensor([0., 0.]),)
        """,
    )
)
ceil = public.inplace(
    piecewise_constant(
        "ceil",
        lambda xp, x: xp.ceil(x),
        doc="""Round up (zero gradient).

        >>> import dualad
        >>> x = dualad.tensor([-1.5, 0.2], requires_grad=True)
        >>> dualad.ceil(x)
        tensor([-1.,  1.], grad_fn=<CeilBackward0>)
        >>> dualad.autograd.grad(dualad.ceil(x).sum(), x)
        (tensor([0., 0.]),)
        """,
    )
)
trunc = public.inplace(
    piecewise_constant(
        "trunc",
        lambda xp, x: xp.trunc(x),
        doc="""Round to zero (zero gradient).

        >>> import dualad
        >>> x = dualad.tensor([-1.5, 0.7], requires_grad=True)
        >>> dualad.trunc(x)
        tensor([-1.,  0.], grad_fn=<TruncBackward0>)
        >>> dualad.autograd.grad(dualad.trunc(x).sum(), x)
        (tensor([0., 0.]),)
        """,
    )
)


# ---------------------------------------------------------------------------------------------
# rounding to decimals (zero gradient)


def _round_impl(xp, x, *, decimals):
    return xp.round(x, decimals)


_round_op = piecewise_constant_op("round", _round_impl)


@public.inplace
def round(x, decimals: int = 0):
    """Round half to even, to ``decimals`` decimal places (like ``torch.round``); zero gradient.

    >>> import dualad
    >>> dualad.round(dualad.tensor([0.5, 1.5, 2.567]), decimals=0)
    tensor([0., 2., 3.])
    """
    if type(decimals) is not int:
        decimals = _plain_scalar(decimals)
        if type(decimals) is not int:
            raise TypeError(f"dualad.round: decimals must be an int, got {type(decimals).__name__}")
    return apply1(_round_op, x, {"decimals": decimals})


floor_divide = public.inplace(
    nondiff_binary(
        "floor_divide",
        lambda xp, a, b: xp.floor_divide(a, b),
        doc="""``a // b`` elementwise, rounding towards -inf like Python and NumPy (no derivative).

        >>> import dualad
        >>> dualad.floor_divide(dualad.tensor([7, -7]), dualad.tensor([2, 2]))
        tensor([ 3, -4])
        >>> dualad.floor_divide(dualad.tensor([7.5, -7.5]), 2.0)
        tensor([ 3., -4.])
        """,
    )
)
remainder = public.inplace(
    binary(
        "remainder",
        lambda xp, a, b: xp.remainder(a, b),
        (lambda a, b, y: 1, lambda a, b, y: -floor_divide(a, b)),
        doc="""Python-style remainder (sign of the divisor).

        >>> import dualad
        >>> a = dualad.tensor([-7.0, 7.0], requires_grad=True)
        >>> dualad.remainder(a, 3.0)
        tensor([2., 1.], grad_fn=<RemainderBackward0>)
        >>> dualad.autograd.grad(dualad.remainder(a, 3.0).sum(), a)
        (tensor([1., 1.]),)
        """,
    )
)


# ---------------------------------------------------------------------------------------------
# remainders, copysign, nan_to_num, heaviside


def _fmod_impl(xp, a, b):
    return xp.fmod(a, b)


fmod = public.inplace(
    binary(
        "fmod",
        _fmod_impl,
        # PyTorch: d/db fmod(a, b) = -trunc(a / b) (trunc has no gradient)
        (lambda a, b, y: 1, lambda a, b, y: -trunc(a / b)),
        doc="""C-style remainder ``a - trunc(a / b) * b`` (the sign of the dividend).

        >>> import dualad
        >>> a = dualad.tensor([-7.0, 7.0], requires_grad=True)
        >>> dualad.fmod(a, 3.0)
        tensor([-1.,  1.], grad_fn=<FmodBackward0>)
        >>> dualad.autograd.grad(dualad.fmod(a, 3.0).sum(), a)
        (tensor([1., 1.]),)
        """,
    )
)


def _copysign_impl(xp, a, b):
    _reject_complex("copysign", a, b)
    return xp.copysign(*_floating_pair(a, b))


copysign = public.inplace(
    binary(
        "copysign",
        _copysign_impl,
        # PyTorch: d/da = result / a (+-1), 0 where a == 0; no gradient (zeros) for the sign source
        (lambda a, b, y: sign(a) * sign(y), lambda a, b, y: 0),
        uses="aby",
        doc="""``|a|`` with the sign of ``b``.

        >>> import dualad
        >>> a = dualad.tensor([2.0, 3.0], requires_grad=True)
        >>> dualad.copysign(a, dualad.tensor([-1.0, 1.0]))
        tensor([-2.,  3.], grad_fn=<CopysignBackward0>)
        >>> dualad.autograd.grad(dualad.copysign(a, dualad.tensor([-1.0, 1.0])).sum(), a)
        (tensor([-1.,  1.]),)
        """,
    )
)


def _nan_to_num_impl(xp, x, *, nan, posinf, neginf):
    return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_nan_to_num_op = _unary_with_params(
    "nan_to_num",
    _nan_to_num_impl,
    # PyTorch: the gradient passes where x is finite, 0 where it was replaced
    lambda x, y, **params: isfinite(x),
)


@public.inplace
def nan_to_num(x, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf``, ``neginf`` (None: the dtype's
    largest / lowest finite value). The gradient passes where ``x`` is finite.

    >>> import dualad
    >>> dualad.nan_to_num(dualad.tensor([float("nan"), 1.0, float("-inf")]), neginf=-5.0)
    tensor([ 0.,  1., -5.])
    """
    nan = 0.0 if nan is None else nan
    params = {"nan": _plain_scalar(nan), "posinf": _plain_scalar(posinf)}
    params["neginf"] = _plain_scalar(neginf)
    for name, value in params.items():
        if value is not None:
            _check_number("nan_to_num", name, value)
    return apply1(_nan_to_num_op, x, params)


def _heaviside_vjp(cts, outs, args, params, needs):
    # constant in x away from 0; ``values`` is the output exactly where x == 0
    x = args[0]
    ct = cts[0]
    grad_x = grad_values = None
    if needs[0]:
        grad_x = zero_vjp(cts, outs, args, params, (True,))[0]
    if needs[1]:
        grad_values = where(x == 0, ct, 0.0)
    return grad_x, grad_values


def _heaviside_jvp(tangents, outs, args, params):
    t_values = tangents[1]
    if t_values is None:
        return zero_jvp(tangents, outs, args, params)
    return _output_tangent(where(args[0] == 0, t_values, 0.0), outs[0])


_heaviside_op = register(
    OpDef(
        "heaviside",
        lambda xp, x, values: xp.heaviside(x, values),
        vjp=_heaviside_vjp,
        jvp=_heaviside_jvp,
        batch=batching.elementwise,
    )
)
heaviside = public.inplace(
    binary_caller(
        _heaviside_op,
        doc="""Step function: 0 for x < 0, ``values`` at x == 0, 1 for x > 0. Zero gradient in x;
        the gradient in ``values`` is 1 where x == 0.

        >>> import dualad
        >>> dualad.heaviside(dualad.tensor([-1.0, 0.0, 2.0]), dualad.tensor(0.5))
        tensor([0. , 0.5, 1. ])
        """,
    )
)
