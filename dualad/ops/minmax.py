"""Elementwise maxima and minima (maximum, minimum, fmax, fmin) and clamp: which argument the
gradient goes to.
"""

from __future__ import annotations

from .._dispatch import EMPTY, OpDef, binary_caller, dispatch, register
from . import _batching as batching
from ._exports import Exports
from ._helpers import _sum_tangents
from ._promotion import _plain_scalar, _reject_complex
from .comparison import isnan, where

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# binary maxima/minima: which argument the gradient goes to


def _route(value, tie, lose):
    """``value`` where this argument was selected, 0 where it lost, half of it at ties."""
    out = where(lose, 0.0, value)
    if tie is not None:
        out = where(tie, value * 0.5, out)
    return out


def _selection_op(name, impl, masks, doc):
    """A broadcasting op that selects one of its arguments per element (maximum, fmin, ...), as
    a public function and Tensor method.

    ``masks(a, b) -> (tie, a_loses, b_loses)``; ``tie`` may be None (no split at ties). The JVP
    routes tangents with the same masks as the VJP routes cotangents, so the two are adjoint.
    """

    def vjp(cts, outs, args, params, needs):
        a, b = args
        tie, a_loses, b_loses = masks(a, b)
        ct = cts[0]
        return (
            _route(ct, tie, a_loses) if needs[0] else None,
            _route(ct, tie, b_loses) if needs[1] else None,
        )

    def jvp(tangents, outs, args, params):
        a, b = args
        t_a, t_b = tangents
        tie, a_loses, b_loses = masks(a, b)
        terms = (
            None if t_a is None else _route(t_a, tie, a_loses),
            None if t_b is None else _route(t_b, tie, b_loses),
        )
        return _sum_tangents(terms, outs[0])

    def checked_impl(xp, a, b):
        _reject_complex(name, a, b)
        return impl(xp, a, b)

    op = register(OpDef(name, checked_impl, vjp=vjp, jvp=jvp, batch=batching.elementwise))
    return public.method(binary_caller(op, doc=doc))


# PyTorch: maximum/minimum split the gradient equally at ties; where one argument is NaN (the
# result is NaN), both receive the full gradient (neither "loses" a comparison).
maximum = _selection_op(
    "maximum",
    lambda xp, a, b: xp.maximum(a, b),
    lambda a, b: (a == b, a < b, a > b),
    """Elementwise maximum (NaN propagates); ties split the gradient 0.5/0.5.

    >>> import dualad
    >>> a = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dualad.maximum(a, dualad.tensor(2.0))
    tensor([2., 2., 3.], grad_fn=<MaximumBackward0>)
    >>> dualad.autograd.grad(dualad.maximum(a, dualad.tensor(2.0)).sum(), a)  # the tie splits
    (tensor([0. , 0.5, 1. ]),)
    """,
)
minimum = _selection_op(
    "minimum",
    lambda xp, a, b: xp.minimum(a, b),
    lambda a, b: (a == b, a > b, a < b),
    """Elementwise minimum (NaN propagates); ties split the gradient 0.5/0.5.

    >>> import dualad
    >>> a = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dualad.minimum(a, dualad.tensor(2.0))
    tensor([1., 2., 2.], grad_fn=<MinimumBackward0>)
    >>> dualad.autograd.grad(dualad.minimum(a, dualad.tensor(2.0)).sum(), a)  # the tie splits
    (tensor([1. , 0.5, 0. ]),)
    """,
)


def _fmax_masks(a, b):
    # PyTorch: the first argument gets the gradient where a >= b or b is NaN (ties: all to a)
    a_wins = (a >= b) | isnan(b)
    return None, ~a_wins, a_wins


def _fmin_masks(a, b):
    a_wins = (a <= b) | isnan(b)
    return None, ~a_wins, a_wins


fmax = _selection_op(
    "fmax",
    lambda xp, a, b: xp.fmax(a, b),
    _fmax_masks,
    """Elementwise maximum ignoring NaN (NaN only where both are NaN), like ``numpy.fmax``.

    >>> import dualad
    >>> import math
    >>> dualad.fmax(dualad.tensor([1.0, math.nan]), dualad.tensor([2.0, 0.5]))
    tensor([2. , 0.5])
    """,
)
fmin = _selection_op(
    "fmin",
    lambda xp, a, b: xp.fmin(a, b),
    _fmin_masks,
    """Elementwise minimum ignoring NaN (NaN only where both are NaN), like ``numpy.fmin``.

    >>> import dualad
    >>> import math
    >>> dualad.fmin(dualad.tensor([1.0, math.nan]), dualad.tensor([2.0, 0.5]))
    tensor([1. , 0.5])
    """,
)


# ---------------------------------------------------------------------------------------------
# clamp


def _clamp_impl(xp, x, low, high):
    # (testing/opdb/elementwise.py's _clamp_ref takes the same steps on purpose: a reference
    # must not share the code it checks)
    out = x
    if low is not None:
        out = xp.maximum(out, low)
    if high is not None:
        out = xp.minimum(out, high)
    return out


def _clamp_masks(x, low, high, want):
    """Where each argument's gradient goes (PyTorch's clamp_backward / clamp_backward_min_max):
    x where low <= x <= high (inclusive); low where x < low (and low < high); high where
    x > high or high < low (the result is high whenever the bounds cross)."""
    masks = [None, None, None]
    if want[0]:
        keep = None if low is None else x >= low
        if high is not None:
            below = x <= high
            keep = below if keep is None else keep & below
        masks[0] = keep
    if want[1]:
        masks[1] = x < low if high is None else (x < low) & (low < high)
    if want[2]:
        masks[2] = x > high if low is None else (x > high) | (high < low)
    return masks


def _clamp_vjp(cts, outs, args, params, needs):
    x, low, high = args
    ct = cts[0]
    masks = _clamp_masks(x, low, high, needs)
    return tuple(None if m is None else where(m, ct, 0.0) for m in masks)


def _clamp_jvp(tangents, outs, args, params):
    x, low, high = args
    masks = _clamp_masks(x, low, high, [t is not None for t in tangents])
    terms = [None if m is None else where(m, t, 0.0) for m, t in zip(masks, tangents)]
    return _sum_tangents(terms, outs[0])


_clamp_op = register(
    OpDef("clamp", _clamp_impl, vjp=_clamp_vjp, jvp=_clamp_jvp, batch=batching.elementwise)
)


@public.inplace
def clamp(x, min=None, max=None):
    """``x`` limited to ``[min, max]``; bounds are numbers or tensors (broadcasting), or None.

    Where ``min > max`` the result is ``max`` (PyTorch, NumPy). The gradient reaches ``x`` where
    ``min <= x <= max`` (boundaries included), a tensor ``min`` where ``x < min``, a tensor
    ``max`` where ``x > max``.

    >>> import dualad
    >>> dualad.clamp(dualad.tensor([-2.0, 0.5, 3.0]), min=-1.0, max=1.0)
    tensor([-1. ,  0.5,  1. ])
    """
    if min is None and max is None:
        raise RuntimeError("dualad.clamp: At least one of 'min' or 'max' must not be None")
    min, max = _plain_scalar(min), _plain_scalar(max)
    _reject_complex("clamp", x, min, max)
    return dispatch(_clamp_op, (x, min, max), EMPTY)


clip = public.inplace(clamp, "clip")


@public.inplace
def clamp_min(x, min):
    """``clamp(x, min=min)``.

    >>> import dualad
    >>> x = dualad.tensor([-1.0, 3.0], requires_grad=True)
    >>> dualad.clamp_min(x, 0.0)
    tensor([0., 3.], grad_fn=<ClampBackward0>)
    >>> dualad.autograd.grad(dualad.clamp_min(x, 0.0).sum(), x)
    (tensor([0., 1.]),)
    """
    return clamp(x, min, None)


@public.inplace
def clamp_max(x, max):
    """``clamp(x, max=max)``.

    >>> import dualad
    >>> x = dualad.tensor([-1.0, 3.0], requires_grad=True)
    >>> dualad.clamp_max(x, 1.0)
    tensor([-1.,  1.], grad_fn=<ClampBackward0>)
    >>> dualad.autograd.grad(dualad.clamp_max(x, 1.0).sum(), x)
    (tensor([1., 0.]),)
    """
    return clamp(x, None, max)
