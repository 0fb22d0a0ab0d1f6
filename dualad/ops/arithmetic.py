"""Arithmetic: add, sub, mul, div, neg, reciprocal, square, sqrt, rsqrt, cbrt, lerp, positive.

One line (or one block) per op; every rule is written in dualad ops so that it can be
differentiated again, run under dual levels and batched.
"""

from __future__ import annotations

import builtins as _builtins
import operator as _operator

from .._dispatch import EMPTY, OpDef, binary_caller, dispatch, register
from .._tensor import Tensor
from . import _batching as batching
from ._exports import Exports
from ._helpers import (
    _conj_if_complex,
    _output_tangent,
    _sum_tangents,
    bilinear,
    binary,
    conj,
    unary,
)
from ._promotion import _PY_SCALARS, _floating, _plain_scalar, _reject_complex

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# arithmetic

add = public.inplace(
    binary(
        "add",
        None,
        (1, 1),
        uses="",
        doc="""``a + b`` with broadcasting.

        >>> import dualad
        >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> dualad.add(a, 10.0)
        tensor([11., 12.], grad_fn=<AddBackward0>)
        >>> dualad.autograd.grad(dualad.add(a, a).sum(), a)
        (tensor([2., 2.]),)
        """,
        kernel=_operator.add,
    )
)
sub = public.inplace(
    binary(
        "sub",
        None,
        (1, -1),
        uses="",
        doc="""``a - b`` with broadcasting.

        >>> import dualad
        >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> dualad.sub(a, 0.5)
        tensor([0.5, 1.5], grad_fn=<SubBackward0>)
        >>> dualad.autograd.grad(dualad.sub(1.0, a).sum(), a)
        (tensor([-1., -1.]),)
        """,
        kernel=_operator.sub,
    )
)
mul = public.inplace(
    bilinear(
        "mul",
        None,
        doc="""``a * b`` with broadcasting.

        >>> import dualad
        >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> dualad.mul(a, dualad.tensor([[1.0], [10.0]]))  # broadcasts to (2, 2)
        tensor([[ 1.,  2.],
                [10., 20.]], grad_fn=<MulBackward0>)
        >>> dualad.autograd.grad(dualad.mul(a, a).sum(), a)
        (tensor([2., 4.]),)
        """,
        kernel=_operator.mul,
    )
)


def _div_vjp(cts, outs, args, params, needs):
    # d(a/b)/da = 1/b and d(a/b)/db = -(a/b)/b: both from one quotient ct/b (fewer ops)
    ct = cts[0]
    a, b = args
    # (a transform's wrapper, vmap's BatchedTensor or a grad level's tensor, is a Tensor too: a
    # complex divisor under vmap(grad) was divided unconjugated)
    if type(b) is Tensor or isinstance(b, Tensor):
        quotient = ct / conj(b)
    else:
        quotient = ct / _conj_scalar(b)
    grad_b = None
    if needs[1]:
        grad_b = -(quotient * conj(a / b))
    return (quotient if needs[0] else None), grad_b


def _conj_scalar(value):
    return value.conjugate() if isinstance(value, complex) else value


def _div_jvp(tangents, outs, args, params):
    b = args[1]
    t_a, t_b = tangents
    if t_b is None:
        total = t_a / b
    elif t_a is None:
        total = -(t_b * outs[0]) / b
    else:
        total = (t_a - t_b * outs[0]) / b
    return _output_tangent(total, outs[0])


_div_op = register(
    OpDef(
        "div",
        None,
        kernel=_operator.truediv,
        vjp=_div_vjp,
        jvp=_div_jvp,
        batch=batching.elementwise,
        save_mask=lambda needs: (needs[1], True),  # the dividend only for the divisor's grad
        sparsity=("elementwise", "linear_in_first"),  # a / b: curved only where b varies
    )
)
div = public.inplace(
    binary_caller(
        _div_op,
        doc="""``a / b`` (true division) with broadcasting.

    >>> import dualad
    >>> a = dualad.tensor([1.0, 6.0], requires_grad=True)
    >>> dualad.div(a, 2.0)
    tensor([0.5, 3. ], grad_fn=<DivBackward0>)
    >>> dualad.autograd.grad(dualad.div(2.0, a).sum(), a)  # -2 / a**2
    (tensor([-2.        , -0.05555556]),)
    >>> dualad.div(dualad.tensor([3, 4]), dualad.tensor([2, 2]))  # ints give floats
    tensor([1.5, 2. ])
    """,
    )
)
true_divide = public.inplace(div, "true_divide")
divide = public.function(div, "divide")


neg = public.inplace(
    unary(
        "neg",
        None,
        lambda x, y: -1,
        uses="",
        doc="""``-x``.

        >>> import dualad
        >>> x = dualad.tensor([1.0, -2.0], requires_grad=True)
        >>> dualad.neg(x)
        tensor([-1.,  2.], grad_fn=<NegBackward0>)
        >>> dualad.autograd.grad(dualad.neg(x).sum(), x)
        (tensor([-1., -1.]),)
        """,
        kernel=_operator.neg,
    )
)
negative = public.inplace(neg, "negative")
reciprocal = public.inplace(
    unary(
        "reciprocal",
        lambda xp, x: 1 / _floating(x),
        lambda x, y: -(y * y),
        uses="y",
        doc="""``1 / x``.

        >>> import dualad
        >>> x = dualad.tensor([1.0, 4.0], requires_grad=True)
        >>> dualad.reciprocal(x)
        tensor([1.  , 0.25], grad_fn=<ReciprocalBackward0>)
        >>> dualad.autograd.grad(dualad.reciprocal(x).sum(), x)
        (tensor([-1.    , -0.0625]),)
        """,
    )
)
square = public.inplace(
    unary(
        "square",
        lambda xp, x: x * x,
        lambda x, y: 2 * x,
        doc="""``x * x``.

    >>> import dualad
    >>> x = dualad.tensor([-1.0, 3.0], requires_grad=True)
    >>> dualad.square(x)
    tensor([1., 9.], grad_fn=<SquareBackward0>)
    >>> dualad.autograd.grad(dualad.square(x).sum(), x)
    (tensor([-2.,  6.]),)
    """,
    )
)
sqrt = public.inplace(
    unary(
        "sqrt",
        lambda xp, x: xp.sqrt(_floating(x)),
        lambda x, y: 0.5 / y,
        uses="y",
        doc="""Square root; its derivative ``1 / (2 sqrt(x))`` is +inf at 0 (the one-sided
    limit: the derivative does not exist there, and dualad does not pretend it does).

    >>> import dualad
    >>> x = dualad.tensor([0.0, 4.0], requires_grad=True)
    >>> dualad.autograd.grad(dualad.sqrt(x).sum(), x)[0]
    tensor([ inf, 0.25])
    """,
    )
)
rsqrt = public.inplace(
    unary(
        "rsqrt",
        lambda xp, x: 1 / xp.sqrt(_floating(x)),
        lambda x, y: -0.5 * y * y * y,
        uses="y",
        doc="""``1 / sqrt(x)``.

        >>> import dualad
        >>> x = dualad.tensor([1.0, 4.0], requires_grad=True)
        >>> dualad.rsqrt(x)
        tensor([1. , 0.5], grad_fn=<RsqrtBackward0>)
        >>> dualad.autograd.grad(dualad.rsqrt(x).sum(), x)
        (tensor([-0.5   , -0.0625]),)
        """,
    )
)


def _cbrt_impl(xp, x):
    _reject_complex("cbrt", x)  # NumPy's cbrt is real only
    return xp.cbrt(_floating(x))


cbrt = public.inplace(
    unary(
        "cbrt",
        _cbrt_impl,
        lambda x, y: 1 / (3 * (y * y)),
        uses="y",
        doc="""Cube root of real ``x`` (negative ``x`` too); the derivative ``1 / (3 cbrt(x)**2)``
    is infinite at 0.

    >>> import dualad
    >>> x = dualad.tensor([-8.0, 1.0], requires_grad=True)
    >>> dualad.cbrt(x)
    tensor([-2.,  1.], grad_fn=<CbrtBackward0>)
    >>> dualad.autograd.grad(dualad.cbrt(x).sum(), x)
    (tensor([0.08333333, 0.33333333]),)
    """,
    )
)


# ---------------------------------------------------------------------------------------------
# lerp


def _lerp_impl(xp, start, end, weight):
    # PyTorch's two-sided formula: exact at weight 0 and weight 1
    if type(weight) in _PY_SCALARS:
        if _builtins.abs(weight) < 0.5:
            return start + weight * (end - start)
        return end - (end - start) * (1 - weight)
    return xp.where(
        xp.abs(weight) < 0.5, start + weight * (end - start), end - (end - start) * (1 - weight)
    )


def _lerp_vjp(cts, outs, args, params, needs):
    start, end, weight = args
    ct = cts[0]
    return (
        ct * _conj_if_complex(1 - weight) if needs[0] else None,
        ct * _conj_if_complex(weight) if needs[1] else None,
        ct * _conj_if_complex(end - start) if needs[2] else None,
    )


def _lerp_jvp(tangents, outs, args, params):
    start, end, weight = args
    t_start, t_end, t_weight = tangents
    terms = (
        None if t_start is None else t_start * (1 - weight),
        None if t_end is None else t_end * weight,
        None if t_weight is None else t_weight * (end - start),
    )
    return _sum_tangents(terms, outs[0])


_lerp_op = register(
    OpDef("lerp", _lerp_impl, vjp=_lerp_vjp, jvp=_lerp_jvp, batch=batching.elementwise)
)


@public.inplace
def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)``; ``weight`` a number or tensor.

    >>> import dualad
    >>> dualad.lerp(dualad.tensor([0.0, 1.0]), dualad.tensor([10.0, 3.0]), 0.25)
    tensor([2.5, 1.5])
    """
    return dispatch(_lerp_op, (input, end, _plain_scalar(weight)), EMPTY)


@public.method
def positive(x):
    """``x`` itself (``+x``); not defined for bool tensors, like PyTorch.

    >>> import dualad
    >>> dualad.positive(dualad.tensor([-1.0, 2.0]))
    tensor([-1.,  2.])
    """
    if isinstance(x, Tensor) and x.dtype.kind == "b":
        raise TypeError("dualad.positive: The `+` operator, on a bool tensor is not supported.")
    return x
