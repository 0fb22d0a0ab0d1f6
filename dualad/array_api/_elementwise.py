"""The array API's elementwise functions, each one dualad op (so differentiable where the
function has a derivative, and batched under ``vmap`` like the op).

Binary functions take Python scalars for either argument (weak, NEP 50). Functions without a
derivative (comparisons, predicates, integer bit operations) return untracked tensors;
``nextafter`` computes on the values and refuses tracked arguments (see ``_common``).

>>> import dualad, dualad.array_api as xp
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> y = xp.sum(xp.multiply(xp.exp(x), 2.0))
>>> dualad.autograd.grad(y, x)[0]
tensor([ 3.29744254, 14.7781122 ])
"""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from ._common import PYTHON_SCALARS, operand, tensor_arg, untracked


def _unary(name: str, op):
    def fn(x, /) -> Tensor:
        return op(tensor_arg(name, x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of the array API standard (``dualad.{op.__name__}``)."
    return fn


def _binary(name: str, op):
    def fn(x1, x2, /) -> Tensor:
        a, b = operand(x1), operand(x2)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            raise TypeError(
                f"dualad.array_api.{name}: at least one argument must be an array (got "
                f"{type(x1).__name__} and {type(x2).__name__})"
            )
        return op(a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of the array API standard (``dualad.{op.__name__}``)."
    return fn


_UNARY = {
    "abs": ops.abs,
    "acos": ops.acos,
    "acosh": ops.acosh,
    "asin": ops.asin,
    "asinh": ops.asinh,
    "atan": ops.atan,
    "atanh": ops.atanh,
    "bitwise_invert": ops.bitwise_not,
    "cos": ops.cos,
    "cosh": ops.cosh,
    "exp": ops.exp,
    "expm1": ops.expm1,
    "isfinite": ops.isfinite,
    "isinf": ops.isinf,
    "isnan": ops.isnan,
    "log": ops.log,
    "log1p": ops.log1p,
    "log2": ops.log2,
    "log10": ops.log10,
    "logical_not": ops.logical_not,
    "negative": ops.negative,
    "positive": ops.positive,
    "reciprocal": ops.reciprocal,
    "signbit": ops.signbit,
    "sin": ops.sin,
    "sinh": ops.sinh,
    "square": ops.square,
    "sqrt": ops.sqrt,
    "tan": ops.tan,
    "tanh": ops.tanh,
}

_BINARY = {
    "add": ops.add,
    "atan2": ops.atan2,
    "bitwise_and": ops.bitwise_and,
    "bitwise_or": ops.bitwise_or,
    "bitwise_xor": ops.bitwise_xor,
    "copysign": ops.copysign,
    "divide": ops.divide,
    "equal": ops.equal,
    "floor_divide": ops.floor_divide,
    "greater": ops.greater,
    "greater_equal": ops.greater_equal,
    "hypot": ops.hypot,
    "less": ops.less,
    "less_equal": ops.less_equal,
    "logaddexp": ops.logaddexp,
    "logical_and": ops.logical_and,
    "logical_or": ops.logical_or,
    "logical_xor": ops.logical_xor,
    "maximum": ops.maximum,
    "minimum": ops.minimum,
    "multiply": ops.mul,
    "not_equal": ops.not_equal,
    "pow": ops.pow,
    "remainder": ops.remainder,
    "subtract": ops.sub,
}

for _name, _op in _UNARY.items():
    globals()[_name] = _unary(_name, _op)
for _name, _op in _BINARY.items():
    globals()[_name] = _binary(_name, _op)


def _rounding(name: str, op, x) -> Tensor:
    x = tensor_arg(name, x)
    if x.dtype.kind in "iub":
        # the standard: an integer array's floor/ceil/trunc is the array itself (same dtype)
        return ops.clone(x)
    return op(x)


def ceil(x, /) -> Tensor:
    """Elementwise ceiling (integer arrays unchanged); derivative zero."""
    return _rounding("ceil", ops.ceil, x)


def floor(x, /) -> Tensor:
    """Elementwise floor (integer arrays unchanged); derivative zero."""
    return _rounding("floor", ops.floor, x)


def trunc(x, /) -> Tensor:
    """Elementwise truncation toward zero (integer arrays unchanged); derivative zero."""
    return _rounding("trunc", ops.trunc, x)


def round(x, /) -> Tensor:
    """Round half to even (real and imaginary parts of complex ``x`` apart); derivative zero."""
    return ops.round(tensor_arg("round", x))


def sign(x, /) -> Tensor:
    """``-1``, ``0`` or ``1`` for real ``x``; ``x / |x|`` (``0`` at ``0``) for complex ``x``,
    differentiable there."""
    x = tensor_arg("sign", x)
    return ops.sgn(x) if x.dtype.kind == "c" else ops.sign(x)


def real(x, /) -> Tensor:
    """The real part (a real array's copy for real ``x``)."""
    x = tensor_arg("real", x)
    return ops.real(x) if x.dtype.kind == "c" else ops.clone(x)


def imag(x, /) -> Tensor:
    """The imaginary part of complex ``x`` (TypeError for real ``x``, as the standard's
    reference implementation)."""
    x = tensor_arg("imag", x)
    if x.dtype.kind != "c":
        raise TypeError(f"dualad.array_api.imag: x must be complex, not {x.dtype}")
    return ops.imag(x)


def conj(x, /) -> Tensor:
    """The complex conjugate (``x`` unchanged for real ``x``)."""
    x = tensor_arg("conj", x)
    return ops.conj(x) if x.dtype.kind == "c" else ops.clone(x)


def clip(x, /, min=None, max=None) -> Tensor:
    """``x`` clamped to ``[min, max]`` (arrays or scalars; None: no bound); the result keeps
    ``x``'s dtype. The derivative is 1 inside the bounds and 0 outside."""
    x = tensor_arg("clip", x)
    if min is None and max is None:
        return ops.clone(x)
    if type(min) in PYTHON_SCALARS and type(max) in PYTHON_SCALARS and min > max:
        raise ValueError(f"dualad.array_api.clip: min ({min}) is larger than max ({max})")
    out = ops.clip(x, min, max)
    return out if out.dtype == x.dtype else ops.astype(out, x.dtype)


def _shift(name: str, op):
    def fn(x1, x2, /) -> Tensor:
        return op(operand(x1), operand(x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of integer arrays (no derivative)."
    return fn


bitwise_left_shift = _shift("bitwise_left_shift", ops.left_shift)
bitwise_right_shift = _shift("bitwise_right_shift", ops.right_shift)


def nextafter(x1, x2, /) -> Tensor:
    """The next floating value after ``x1`` toward ``x2`` (computed on the values: dualad has
    no derivative of it, so an argument that requires grad raises)."""

    def run(xp, a, b):
        return xp.nextafter(a, b)

    return untracked("nextafter", run, operand(x1), operand(x2))


__all__ = [
    *_UNARY,
    *_BINARY,
    "ceil",
    "floor",
    "trunc",
    "round",
    "sign",
    "real",
    "imag",
    "conj",
    "clip",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "nextafter",
]
del _name, _op
