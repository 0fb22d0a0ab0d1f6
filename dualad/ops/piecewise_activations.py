"""The piecewise activations of ``torch.nn.functional`` as one op each: hardsigmoid, hardswish,
hardshrink, softshrink, threshold, prelu, and the gated linear unit glu.

Each elementwise one is an op with its derivative written in dualad ops (so every order and
transform composes); at a kink the derivative is the one PyTorch's backward gives there:

- ``hardsigmoid``: ``1/6`` strictly inside ``(-3, 3)``, 0 at and beyond -3 and 3;
- ``hardswish``: ``x / 3 + 1/2`` strictly inside, 0 at and below -3, 1 at and above 3;
- ``hardshrink``, ``softshrink``: 1 where ``|x| > lambd``, 0 at ``+-lambd`` and between;
- ``threshold``: 1 where ``x > threshold``, 0 at and below it;
- ``prelu(x, w)`` (broadcasting): in ``x``, 1 where ``x > 0`` and ``w`` at and below 0; in
  ``w``, ``x`` at and below 0 and 0 above.

Their second derivatives are 0 (hardswish: ``1/3`` strictly inside). Real inputs only, as in
PyTorch; integers become the default float (``threshold`` keeps NumPy's promotion of the input
and ``value``). ``glu(x, dim)`` is ``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``x``
along ``dim``, its rules written with ``narrow``, ``cat`` and ``sigmoid``; its batching rule
moves the vmap dim to the front and shifts ``dim``.
"""

from __future__ import annotations

from .._dispatch import OpDef, apply, apply1, register
from ._exports import Exports
from ._helpers import _scalar_like, _unary_with_params, binary, unary
from ._promotion import (
    _check_number,
    _floating,
    _floating_pair,
    _plain_scalar,
    _reject_complex,
)
from .activations import sigmoid
from .base import move_bdim_to_front
from .comparison import where
from .complex_parts import abs
from .joining import cat
from .slicing import narrow

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _real_float(name, x):
    _reject_complex(name, x)
    return _floating(x)


def _hardsigmoid_impl(xp, x):
    x = _real_float("hardsigmoid", x)
    return xp.clip(x / 6 + 0.5, 0, 1).astype(x.dtype, copy=False)


hardsigmoid = public.method(
    unary(
        "hardsigmoid",
        _hardsigmoid_impl,
        lambda x, y: ((x > -3) & (x < 3)) * _scalar_like(1 / 6, x),
        doc="""``relu6(x + 3) / 6``: 0 up to -3, 1 from 3, ``x / 6 + 1/2`` between; the
    gradient is ``1/6`` strictly inside and 0 at and beyond the kinks -3 and 3 (PyTorch's).

    >>> import dualad
    >>> dualad.hardsigmoid(dualad.tensor([-4.0, 0.0, 1.5]))
    tensor([0.  , 0.5 , 0.75])
    """,
    )
)


def _hardswish_impl(xp, x):
    x = _real_float("hardswish", x)
    middle = x * (x + 3) / 6
    return xp.where(x <= -3, 0, xp.where(x >= 3, x, middle)).astype(x.dtype, copy=False)


hardswish = public.method(
    unary(
        "hardswish",
        _hardswish_impl,
        lambda x, y: where(x >= 3, 1.0, where(x > -3, x / 3 + 0.5, 0.0)),
        doc="""``x * relu6(x + 3) / 6``; the gradient is ``x / 3 + 1/2`` strictly inside
    ``(-3, 3)``, 0 at and below -3 and 1 at and above 3 (PyTorch's values at the kinks).

    >>> import dualad
    >>> dualad.hardswish(dualad.tensor([-4.0, 1.0, 4.0]))
    tensor([0.        , 0.66666667, 4.        ])
    """,
    )
)


def _lambd(name, lambd):
    lambd = _plain_scalar(lambd)
    _check_number(name, "lambd", lambd)
    return lambd


def _hardshrink_impl(xp, x, *, lambd):
    x = _real_float("hardshrink", x)
    return xp.where(xp.abs(x) > lambd, x, 0).astype(x.dtype, copy=False)


def _outside(x, y, *, lambd):
    return abs(x) > lambd


_hardshrink_op = _unary_with_params("hardshrink", _hardshrink_impl, _outside)


@public.method
def hardshrink(x, lambd: float = 0.5):
    """``x`` where ``|x| > lambd``, else 0 (``torch.nn.functional.hardshrink``); the gradient
    is 1 outside ``[-lambd, lambd]`` and 0 on it, its ends included (PyTorch's).

    >>> import dualad
    >>> dualad.hardshrink(dualad.tensor([-1.0, 0.2, 0.7]))
    tensor([-1. ,  0. ,  0.7])
    """
    _reject_complex("hardshrink", x)
    return apply1(_hardshrink_op, x, {"lambd": _lambd("hardshrink", lambd)})


def _softshrink_impl(xp, x, *, lambd):
    x = _real_float("softshrink", x)
    shrunk = xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, 0))
    return shrunk.astype(x.dtype, copy=False)


_softshrink_op = _unary_with_params("softshrink", _softshrink_impl, _outside)


@public.method
def softshrink(x, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0
    (``torch.nn.functional.softshrink``; ``lambd >= 0``). The gradient is 1 outside
    ``[-lambd, lambd]``, 0 on it, its ends included (PyTorch's).

    >>> import dualad
    >>> dualad.softshrink(dualad.tensor([-1.0, 0.2, 0.7]))
    tensor([-0.5,  0. ,  0.2])
    """
    lambd = _lambd("softshrink", lambd)
    if lambd < 0:
        raise ValueError(
            f"dualad.softshrink: lambda must be greater or equal to 0, but found to be {lambd}."
        )
    _reject_complex("softshrink", x)
    return apply1(_softshrink_op, x, {"lambd": lambd})


def _threshold_impl(xp, x, *, threshold, value):
    _reject_complex("threshold", x)
    out = xp.where(x > threshold, x, value)
    return out.astype(x.dtype, copy=False) if x.dtype.kind == "f" else out


_threshold_op = _unary_with_params(
    "threshold", _threshold_impl, lambda x, y, *, threshold, value: x > threshold
)


@public.method
def threshold(x, threshold: float, value: float):
    """``x`` where ``x > threshold``, else ``value`` (``torch.nn.functional.threshold``); the
    gradient is 1 above the threshold and 0 at and below it (PyTorch's).

    >>> import dualad
    >>> dualad.threshold(dualad.tensor([0.1, 0.5]), 0.2, -1.0)
    tensor([-1. ,  0.5])
    """
    threshold, value = _plain_scalar(threshold), _plain_scalar(value)
    _check_number("threshold", "threshold", threshold)
    _check_number("threshold", "value", value)
    return apply1(_threshold_op, x, {"threshold": threshold, "value": value})


def _prelu_impl(xp, x, w):
    _reject_complex("prelu", x, w)
    x, w = _floating_pair(x, w)
    return xp.where(x > 0, x, w * x)


prelu = public.method(
    binary(
        "prelu",
        _prelu_impl,
        (lambda x, w, y: where(x > 0, 1.0, w), lambda x, w, y: where(x > 0, 0.0, x)),
        doc="""``x`` where ``x > 0``, else ``w * x`` (broadcasting; ``torch.prelu``): at 0 the
    derivative in ``x`` is the negative side's, ``w`` (PyTorch's).

    >>> import dualad
    >>> dualad.prelu(dualad.tensor([-2.0, 3.0]), dualad.tensor(0.25))
    tensor([-0.5,  3. ])
    """,
    )
)


# ---------------------------------------------------------------------------------------------
# glu


def _glu_impl(xp, x, *, dim):
    x = _real_float("glu", x)
    half = x.shape[dim] // 2
    a, b = xp.split(x, [half], axis=dim)
    # a * sigmoid(b) with exp of -|b| only: no overflow for large |b|
    e = xp.exp(-xp.abs(b))
    s = xp.where(b >= 0, 1 / (1 + e), e / (1 + e))
    return (a * s).astype(x.dtype, copy=False)


def _halves(x, dim):
    half = x.shape[dim] // 2
    return narrow(x, dim, 0, half), narrow(x, dim, half, half)


def _glu_vjp(cts, outs, args, params, needs):
    dim = params["dim"]
    a, b = _halves(args[0], dim)
    s = sigmoid(b)
    ct = cts[0]
    return (cat([ct * s, ct * (a * (s * (1 - s)))], dim),)


def _glu_jvp(tangents, outs, args, params):
    dim = params["dim"]
    a, b = _halves(args[0], dim)
    ta, tb = _halves(tangents[0], dim)
    s = sigmoid(b)
    return ta * s + tb * (a * (s * (1 - s)))


def _glu_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, dim=params["dim"] + 1), 0


_glu_op = register(OpDef("glu", _glu_impl, vjp=_glu_vjp, jvp=_glu_jvp, batch=_glu_batch))


@public.function
def glu(x, dim: int = -1):
    """Gated linear unit ``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``x`` along ``dim``
    (``torch.nn.functional.glu``; the size along ``dim`` must be even). Smooth everywhere.

    >>> import dualad
    >>> dualad.glu(dualad.tensor([1.0, -2.0, 0.0, 100.0]))
    tensor([ 0.5, -2. ])
    """
    _reject_complex("glu", x)
    ndim = x.ndim
    size = x.shape[dim] if ndim and -ndim <= dim < ndim else None
    if ndim == 0 or size is None or size % 2:
        raise ValueError(
            f"dualad.glu: Halving dimension must be even, but dimension {dim} is size {size}"
        )
    return apply1(_glu_op, x, {"dim": dim % ndim})
