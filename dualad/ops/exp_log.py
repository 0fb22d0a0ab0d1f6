"""Exponentials, logarithms and powers: exp, exp2, expm1, log, log2, log10, log1p, pow,
logaddexp, logaddexp2, xlogy.
"""

from __future__ import annotations

import math as _math

import numpy as np

from .._dispatch import SCALAR_TYPES, as_arg
from .._tensor import Tensor
from ._exports import Exports
from ._helpers import _as_scalar_tensor, binary, unary
from ._promotion import (
    _PY_SCALARS,
    _float_operands,
    _floating,
    _floating_pair,
    _reject_complex,
    _scalar_log,
)
from .arithmetic import reciprocal
from .comparison import where

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# exponentials and logarithms

exp = public.inplace(
    unary(
        "exp",
        lambda xp, x: xp.exp(_floating(x)),
        lambda x, y: y,
        uses="y",
        doc="""``e ** x``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.exp(x)
        tensor([1.        , 2.71828183], grad_fn=<ExpBackward0>)
        >>> dualad.autograd.grad(dualad.exp(x).sum(), x)
        (tensor([1.        , 2.71828183]),)
        """,
    )
)
exp2 = public.inplace(
    unary(
        "exp2",
        lambda xp, x: xp.exp2(_floating(x)),
        lambda x, y: y * float(np.log(2.0)),
        uses="y",
        doc="""``2 ** x``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 3.0], requires_grad=True)
        >>> dualad.exp2(x)
        tensor([1., 8.], grad_fn=<Exp2Backward0>)
        >>> dualad.autograd.grad(dualad.exp2(x).sum(), x)
        (tensor([0.69314718, 5.54517744]),)
        """,
    )
)
expm1 = public.inplace(
    unary(
        "expm1",
        lambda xp, x: xp.expm1(_floating(x)),
        lambda x, y: y + 1,
        uses="y",
        doc="""``exp(x) - 1``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1e-10], requires_grad=True)
        >>> dualad.expm1(x)
        tensor([0.e+00, 1.e-10], grad_fn=<Expm1Backward0>)
        >>> dualad.autograd.grad(dualad.expm1(x).sum(), x)
        (tensor([1., 1.]),)
        """,
    )
)
log = public.inplace(
    unary(
        "log",
        lambda xp, x: xp.log(_floating(x)),
        lambda x, y: reciprocal(x),
        doc="""Natural log.

        >>> import dualad
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> dualad.log(x)
        tensor([0.        , 0.69314718], grad_fn=<LogBackward0>)
        >>> dualad.autograd.grad(dualad.log(x).sum(), x)
        (tensor([1. , 0.5]),)
        """,
    )
)


def _log_base(name, impl, base, doc):
    """The log to ``base``: d/dx = 1 / (x ln(base))."""
    ln_base = float(np.log(base))
    return public.inplace(unary(name, impl, lambda x, y: 1 / (x * ln_base), doc=doc))


log2 = _log_base(
    "log2",
    lambda xp, x: xp.log2(_floating(x)),
    2.0,
    """Base-2 log.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 8.0], requires_grad=True)
    >>> dualad.log2(x)
    tensor([0., 3.], grad_fn=<Log2Backward0>)
    >>> dualad.autograd.grad(dualad.log2(x).sum(), x)
    (tensor([1.44269504, 0.18033688]),)
    """,
)
log10 = _log_base(
    "log10",
    lambda xp, x: xp.log10(_floating(x)),
    10.0,
    """Base-10 log.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 100.0], requires_grad=True)
    >>> dualad.log10(x)
    tensor([0., 2.], grad_fn=<Log10Backward0>)
    >>> dualad.autograd.grad(dualad.log10(x).sum(), x)
    (tensor([0.43429448, 0.00434294]),)
    """,
)
log1p = public.inplace(
    unary(
        "log1p",
        lambda xp, x: xp.log1p(_floating(x)),
        lambda x, y: 1 / (1 + x),
        doc="""``log(1 + x)``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1e-10], requires_grad=True)
        >>> dualad.log1p(x)
        tensor([0.e+00, 1.e-10], grad_fn=<Log1pBackward0>)
        >>> dualad.autograd.grad(dualad.log1p(x).sum(), x)
        (tensor([1., 1.]),)
        """,
    )
)


def _pow_dbase(a, b, y):
    if isinstance(b, Tensor):
        # d/da a**b = b * a**(b-1), defined as 0 where b == 0 (so 0**0 has gradient 0)
        return where(b == 0, 0.0, b * pow(a, b - 1))
    if b == 0:
        return 0.0
    # (no shortcut for b = 1 or 2: ``b * a ** (b - 1)`` keeps the result a function of ``a``,
    # so the next derivative exists as in PyTorch, e.g. d4/dx4 x**3 = 0 rather than an error)
    return b * pow(a, b - 1)


def _pow_dexponent(a, b, y):
    # d/db a**b = a**b * log(a), defined as 0 where a == 0 and b >= 0 (PyTorch's convention)
    if isinstance(a, Tensor):
        return where((a == 0) & (b >= 0), 0.0, y * log(a))
    if a == 0:
        return where(b >= 0, 0.0, y * float("-inf"))
    return y * (complex(np.log(complex(a))) if isinstance(a, complex) else float(np.log(a)))


_pow_tensor = binary(
    "pow",
    lambda xp, a, b: _power(xp, a, b),
    (_pow_dbase, _pow_dexponent),
    uses="aby",
)
# a Python-scalar exponent (x ** 2): the gradient needs the base only, so only the base is
# saved (the exponent's derivative, which reads the result, is never asked for)
_pow_scalar = binary(
    "pow_scalar_exponent",
    lambda xp, a, b: _power(xp, a, b),
    (_pow_dbase, None),
    uses="ab",
    node_name="PowBackward0",
)


@public.inplace
def pow(a, b):
    """``a ** b`` elementwise (with broadcasting; either may be a Python scalar).

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> (x ** 2).grad_fn.name()
    'PowBackward0'
    >>> dualad.autograd.grad((x ** 3).sum(), x)
    (tensor([ 3., 12.]),)
    """
    if type(b) in SCALAR_TYPES:
        return _pow_scalar(a, b)
    # arrays and lists as tensors here, not only in eager dispatch: under a level the rules get
    # the operands as given, and they tell a tensor from a scalar (``np.ones(2) ** x`` inside
    # func.grad reaches this through Tensor.__rpow__)
    if not isinstance(a, (Tensor, np.generic)) and type(a) not in SCALAR_TYPES:
        a = as_arg(a)
    if not isinstance(b, (Tensor, np.generic)):
        b = as_arg(b)
    return _pow_tensor(a, b)


def _power(xp, a, b):
    # integer tensors to negative integer powers: NumPy raises; follow PyTorch's error
    return xp.power(a, b)


def _logaddexp(name, impl, power, doc):
    """``log(power(a) + power(b))``, ``power`` exp or exp2: the partials are ``power(a - y)`` and
    ``power(b - y)``."""
    partials = (lambda a, b, y: power(a - y), lambda a, b, y: power(b - y))
    return public.method(binary(name, impl, partials, uses="aby", doc=doc))


logaddexp = _logaddexp(
    "logaddexp",
    lambda xp, a, b: xp.logaddexp(*_floating_pair(a, b)),
    exp,
    """``log(exp(a) + exp(b))`` without overflow.

    >>> import dualad
    >>> a = dualad.tensor([0.0, 1000.0], requires_grad=True)
    >>> dualad.logaddexp(a, dualad.tensor([0.0, 1000.0]))
    tensor([6.93147181e-01, 1.00069315e+03], grad_fn=<LogaddexpBackward0>)
    >>> dualad.autograd.grad(dualad.logaddexp(a, dualad.tensor([0.0, 1000.0])).sum(), a)
    (tensor([0.5, 0.5]),)
    """,
)
logaddexp2 = _logaddexp(
    "logaddexp2",
    lambda xp, a, b: xp.logaddexp2(*_floating_pair(a, b)),
    exp2,
    """``log2(2**a + 2**b)`` without overflow.

    >>> import dualad
    >>> a = dualad.tensor([1.0, 3.0], requires_grad=True)
    >>> dualad.logaddexp2(a, dualad.tensor([1.0, 3.0]))
    tensor([2., 4.], grad_fn=<Logaddexp2Backward0>)
    >>> dualad.autograd.grad(dualad.logaddexp2(a, dualad.tensor([1.0, 3.0])).sum(), a)
    (tensor([0.5, 0.5]),)
    """,
)


def _xlogy_impl(xp, x, y):
    _reject_complex("xlogy", x, y)
    x, y = _float_operands(xp, x, y)
    zero = x == 0
    out = x * xp.log(xp.where(zero, 1, y))  # log(1) where x == 0: no spurious warnings
    out = xp.where(zero, 0, out)
    return xp.where(xp.isnan(y), xp.nan, out)  # NaN y gives NaN even where x == 0


def _xlogy_dx(x, y, out):
    # PyTorch: log(y), but 0 where x == 0 and y <= 0 (where log(y) is not finite)
    if type(y) in _PY_SCALARS:
        if y > 0:
            return _math.log(y)
        return where(x == 0, 0.0, _as_scalar_tensor(_scalar_log(y), x))
    masked = (x == 0) & (y <= 0)
    return where(masked, 0.0, log(where(masked, 1.0, y)))  # no log(0) warnings where masked


xlogy = public.inplace(
    binary(
        "xlogy",
        _xlogy_impl,
        (_xlogy_dx, lambda x, y, out: x / y),
        doc="""``x * log(y)``, 0 where ``x == 0`` (unless y is NaN).

        >>> import dualad
        >>> a = dualad.tensor([0.0, 2.0], requires_grad=True)
        >>> dualad.xlogy(a, dualad.tensor([0.0, 3.0]))  # 0 log 0 = 0
        tensor([0.        , 2.19722458], grad_fn=<XlogyBackward0>)
        >>> dualad.autograd.grad(dualad.xlogy(a, dualad.tensor([0.0, 3.0])).sum(), a)
        (tensor([0.        , 1.09861229]),)
        """,
    )
)
