"""Elementwise ops: arithmetic, transcendental functions, complex parts, casts, comparisons.

One line (or one block) per op; every rule is written in dualad ops so that it can be
differentiated again, run under dual levels and batched.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math

import numpy as np

from .. import _dtypes
from .._dispatch import (
    EMPTY,
    OpDef,
    apply,
    apply1,
    binary_caller,
    dispatch,
    register,
    unary_caller,
)
from .._tensor import Tensor
from ..vmap import rules as batching
from ._helpers import bilinear, binary, nondiff_binary, nondiff_unary, unary

# ---------------------------------------------------------------------------------------------
# dtype helpers for impls


def _floating(x):
    """Bool and integer arrays as the default float dtype (PyTorch promotes them for float math;
    NumPy would pick float16 for int8 and ignore ``set_default_dtype``). Python scalars pass."""
    try:
        kind = x.dtype.kind
    except AttributeError:
        return x
    if kind in "biu":
        return x.astype(_dtypes.get_default_dtype())
    return x


def _float_array(x):
    """Like ``_floating`` but Python scalars become 0-d arrays too (for impls that read dtype)."""
    if type(x) in _PY_SCALARS:
        complex_ = type(x) is complex
        dtype = _dtypes.default_complex_dtype() if complex_ else _dtypes.get_default_dtype()
        return np.asarray(x, dtype=dtype)
    return _floating(x)


_PY_SCALARS = frozenset((float, int, bool, complex))


def _reject_complex(name: str, *values) -> None:
    """PyTorch refuses these ops on complex tensors (NumPy would order complex numbers)."""
    for v in values:
        if type(v) is complex or getattr(getattr(v, "dtype", None), "kind", "") == "c":
            raise TypeError(f"dualad.{name}: not supported for complex tensors")


# ---------------------------------------------------------------------------------------------
# arithmetic

add = binary(
    "add",
    lambda xp, a, b: a + b,
    (lambda a, b, y: 1, lambda a, b, y: 1),
    uses="",
    doc="``a + b`` with broadcasting.",
)
sub = binary(
    "sub",
    lambda xp, a, b: a - b,
    (lambda a, b, y: 1, lambda a, b, y: -1),
    uses="",
    doc="``a - b`` with broadcasting.",
)
mul = bilinear("mul", lambda xp, a, b: a * b, doc="``a * b`` with broadcasting.")
def _div_vjp(cts, outs, args, params, needs):
    # d(a/b)/da = 1/b and d(a/b)/db = -(a/b)/b: both from one quotient ct/b (fewer ops)
    ct = cts[0]
    a, b = args
    quotient = ct / conj(b) if type(b) is Tensor else ct / _conj_scalar(b)
    grad_b = None
    if needs[1]:
        grad_b = -(quotient * conj(a / b))
    return (quotient if needs[0] else None), grad_b


def _conj_scalar(value):
    return value.conjugate() if isinstance(value, complex) else value


def _div_jvp(tangents, outs, args, params):
    a, b = args
    t_a, t_b = tangents
    if t_b is None:
        total = t_a / b
    elif t_a is None:
        total = -(t_b * outs[0]) / b
    else:
        total = (t_a - t_b * outs[0]) / b
    from ._helpers import _broadcast_to_output

    return _broadcast_to_output(total, outs[0])


_div_op = register(
    OpDef(
        "div",
        lambda xp, a, b: a / b,
        vjp=_div_vjp,
        jvp=_div_jvp,
        batch=batching.elementwise,
        save_mask=lambda needs: (needs[1], True),  # the dividend only for the divisor's grad
    )
)
div = binary_caller(_div_op, doc="``a / b`` (true division) with broadcasting.")
true_divide = divide = div


def _pow_dbase(a, b, y):
    if isinstance(b, Tensor):
        # d/da a**b = b * a**(b-1), defined as 0 where b == 0 (so 0**0 has gradient 0)
        return where(b == 0, 0.0, b * pow(a, b - 1))
    if b == 0:
        return 0.0
    return b * pow(a, b - 1)


def _pow_dexponent(a, b, y):
    # d/db a**b = a**b * log(a), defined as 0 where a == 0 and b >= 0 (PyTorch's convention)
    if isinstance(a, Tensor):
        return where((a == 0) & (b >= 0), 0.0, y * log(a))
    if a == 0:
        return where(b >= 0, 0.0, y * float("-inf"))
    return y * (complex(np.log(complex(a))) if isinstance(a, complex) else float(np.log(a)))


pow = binary(
    "pow",
    lambda xp, a, b: _power(xp, a, b),
    (_pow_dbase, _pow_dexponent),
    uses="aby",
    doc="``a ** b`` elementwise.",
)


def _power(xp, a, b):
    # integer tensors to negative integer powers: NumPy raises; follow PyTorch's error
    return xp.power(a, b)


neg = unary("neg", lambda xp, x: -x, lambda x, y: -1, uses="", doc="``-x``.")
negative = neg
reciprocal = unary(
    "reciprocal", lambda xp, x: 1 / _floating(x), lambda x, y: -(y * y), uses="y", doc="``1 / x``."
)
square = unary("square", lambda xp, x: x * x, lambda x, y: 2 * x, doc="``x * x``.")
sqrt = unary(
    "sqrt", lambda xp, x: xp.sqrt(_floating(x)), lambda x, y: 0.5 / y, uses="y", doc="Square root."
)
rsqrt = unary(
    "rsqrt",
    lambda xp, x: 1 / xp.sqrt(_floating(x)),
    lambda x, y: -0.5 * y * y * y,
    uses="y",
    doc="``1 / sqrt(x)``.",
)

# ---------------------------------------------------------------------------------------------
# exponentials and logarithms

exp = unary("exp", lambda xp, x: xp.exp(_floating(x)), lambda x, y: y, uses="y", doc="``e ** x``.")
exp2 = unary(
    "exp2", lambda xp, x: xp.exp2(_floating(x)), lambda x, y: y * float(np.log(2.0)), uses="y",
    doc="``2 ** x``.",
)
expm1 = unary(
    "expm1", lambda xp, x: xp.expm1(_floating(x)), lambda x, y: y + 1, uses="y", doc="``exp(x) - 1``."
)
log = unary("log", lambda xp, x: xp.log(_floating(x)), lambda x, y: reciprocal(x), doc="Natural log.")
log2 = unary(
    "log2", lambda xp, x: xp.log2(_floating(x)), lambda x, y: 1 / (x * float(np.log(2.0))),
    doc="Base-2 log.",
)
log10 = unary(
    "log10", lambda xp, x: xp.log10(_floating(x)), lambda x, y: 1 / (x * float(np.log(10.0))),
    doc="Base-10 log.",
)
log1p = unary("log1p", lambda xp, x: xp.log1p(_floating(x)), lambda x, y: 1 / (1 + x), doc="``log(1 + x)``.")

# ---------------------------------------------------------------------------------------------
# trigonometric and hyperbolic

sin = unary("sin", lambda xp, x: xp.sin(_floating(x)), lambda x, y: cos(x), doc="Sine.")
cos = unary("cos", lambda xp, x: xp.cos(_floating(x)), lambda x, y: -sin(x), doc="Cosine.")
tan = unary("tan", lambda xp, x: xp.tan(_floating(x)), lambda x, y: 1 + y * y, uses="y", doc="Tangent.")
tanh = unary(
    "tanh", lambda xp, x: xp.tanh(_floating(x)), lambda x, y: 1 - y * y, uses="y", doc="Hyperbolic tangent."
)
sinh = unary("sinh", lambda xp, x: xp.sinh(_floating(x)), lambda x, y: cosh(x), doc="Hyperbolic sine.")
cosh = unary("cosh", lambda xp, x: xp.cosh(_floating(x)), lambda x, y: sinh(x), doc="Hyperbolic cosine.")

# ---------------------------------------------------------------------------------------------
# complex parts and casts


def _conj_impl(xp, x):
    return xp.conj(x)


_conj_op = register(
    OpDef(
        "conj",
        _conj_impl,
        vjp=lambda cts, outs, args, params, needs: (conj(cts[0]),),
        jvp=lambda tangents, outs, args, params: conj(tangents[0]),
        batch=batching.elementwise,
        save_args=False,
        node_name="ConjBackward0",
    )
)


def conj(x):
    """Complex conjugate; returns ``x`` itself for real tensors (no copy, no graph node)."""
    if isinstance(x, Tensor) and x._data.dtype.kind != "c":
        return x
    return dispatch(_conj_op, (x,), EMPTY)


def _real_vjp(cts, outs, args, params, needs):
    # the cotangent of Re(z) is real; as a gradient w.r.t. complex z it is ct + 0j
    return (cts[0],)


_real_op = register(
    OpDef(
        "real",
        lambda xp, x: xp.real(x),
        vjp=_real_vjp,
        jvp=lambda tangents, outs, args, params: real(tangents[0]),
        batch=batching.elementwise,
        save_args=False,
    )
)


def real(x):
    """Real part (``x`` itself for real tensors)."""
    if isinstance(x, Tensor) and x._data.dtype.kind != "c":
        return x
    return dispatch(_real_op, (x,), EMPTY)


_imag_op = register(
    OpDef(
        "imag",
        lambda xp, x: xp.imag(x),
        # d Im(z): the gradient w.r.t. z of a real loss through Im(z) is ct * 1j
        vjp=lambda cts, outs, args, params, needs: (mul(cts[0], 1j),),
        jvp=lambda tangents, outs, args, params: imag(tangents[0]),
        batch=batching.elementwise,
        save_args=False,
    )
)


def imag(x):
    """Imaginary part (complex tensors only, like PyTorch)."""
    if isinstance(x, Tensor) and x._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return dispatch(_imag_op, (x,), EMPTY)


def _astype_vjp(cts, outs, args, params, needs):
    (x,) = args
    ct = cts[0]
    if x.dtype.kind != "c" and ct.dtype.kind == "c":
        ct = real(ct)
    return (astype(ct, x.dtype),)


_astype_op = register(
    OpDef(
        "astype",
        lambda xp, x, *, dtype: x.astype(dtype),
        vjp=_astype_vjp,
        jvp=lambda tangents, outs, args, params: astype(tangents[0], params["dtype"]),
        batch=lambda op, args, bdims, params: (apply(op, args[0], **params), bdims[0]),
        save_args=False,
        node_name="ToCopyBackward0",
    )
)


def astype(x, dtype):
    """A copy of ``x`` cast to ``dtype`` (differentiable between float/complex dtypes)."""
    dtype = _dtypes.to_dtype(dtype)
    if not _dtypes.is_differentiable(dtype):
        with _no_grad():
            return apply1(_astype_op, x, {"dtype": dtype})
    return apply1(_astype_op, x, {"dtype": dtype})


def _no_grad():
    from ..rev.grad_mode import no_grad

    return no_grad()


_clone_op = register(
    OpDef(
        "clone",
        lambda xp, x: x.copy(),
        vjp=lambda cts, outs, args, params, needs: (cts[0],),
        jvp=lambda tangents, outs, args, params: clone(tangents[0]),
        batch=batching.elementwise,
        save_args=False,
    )
)


def clone(x):
    """A copy of ``x`` with its own memory (differentiable)."""
    return dispatch(_clone_op, (x,), EMPTY)


def _to_device_impl(xp, x, *, device):
    from .._backend import to_device

    return to_device(x, device)


_to_device_op = register(
    OpDef(
        "to_device",
        _to_device_impl,
        vjp=lambda cts, outs, args, params, needs: (
            to_device_op(cts[0], device=_device_of_meta(args[0], cts[0])),
        ),
        jvp=lambda tangents, outs, args, params: to_device_op(tangents[0], **params),
        save_args=True,
        node_name="ToCopyBackward0",
    )
)


def _device_of_meta(x, like):
    return x.device


def to_device_op(x, *, device):
    """``x`` copied to ``device`` (differentiable: gradients go back to the source device)."""
    return apply1(_to_device_op, x, {"device": device})


# ---------------------------------------------------------------------------------------------
# selection


def _where_vjp(cts, outs, args, params, needs):
    condition, a, b = args
    ct = cts[0]
    zero = 0.0
    return (
        None,
        where(condition, ct, zero) if needs[1] else None,
        where(condition, zero, ct) if needs[2] else None,
    )


def _where_jvp(tangents, outs, args, params):
    condition, a, b = args
    _, t_a, t_b = tangents
    t_a = 0.0 if t_a is None else t_a
    t_b = 0.0 if t_b is None else t_b
    out = where(condition, t_a, t_b)
    from ._helpers import _broadcast_to_output

    return _broadcast_to_output(out, outs[0])


_where_op = register(
    OpDef(
        "where",
        lambda xp, c, a, b: xp.where(c, a, b),
        vjp=_where_vjp,
        jvp=_where_jvp,
        batch=batching.elementwise,
        node_name="WhereBackward0",
    )
)


def where(condition, a, b):
    """``a`` where ``condition`` is true, else ``b`` (broadcasting)."""
    if isinstance(a, Tensor) and not isinstance(b, Tensor) and b is not None:
        b = _scalar_like(b, a)
    elif isinstance(b, Tensor) and not isinstance(a, Tensor) and a is not None:
        a = _scalar_like(a, b)
    return dispatch(_where_op, (condition, a, b), EMPTY)


def _scalar_like(value, like: Tensor):
    """A Python scalar as a 0-d tensor of ``like``'s dtype (NumPy's where would widen it)."""
    if isinstance(value, Tensor):
        return value
    kind = like.dtype.kind
    if kind == "c" or (kind == "f" and not isinstance(value, complex)):
        from .._creation import as_tensor

        xp = type(like._data)
        array = np.asarray(value, dtype=like.dtype)
        if xp is not np.ndarray:
            from .._backend import to_device

            array = to_device(array, like.device)
        return as_tensor(array)
    return value


# ---------------------------------------------------------------------------------------------
# comparisons and logical ops: no gradient, still batchable

eq = nondiff_binary("eq", lambda xp, a, b: a == b, doc="``a == b`` elementwise.")
ne = nondiff_binary("ne", lambda xp, a, b: a != b, doc="``a != b`` elementwise.")
lt = nondiff_binary("lt", lambda xp, a, b: a < b, doc="``a < b`` elementwise.")
le = nondiff_binary("le", lambda xp, a, b: a <= b, doc="``a <= b`` elementwise.")
gt = nondiff_binary("gt", lambda xp, a, b: a > b, doc="``a > b`` elementwise.")
ge = nondiff_binary("ge", lambda xp, a, b: a >= b, doc="``a >= b`` elementwise.")
logical_and = nondiff_binary("logical_and", lambda xp, a, b: xp.logical_and(a, b))
logical_or = nondiff_binary("logical_or", lambda xp, a, b: xp.logical_or(a, b))
logical_xor = nondiff_binary("logical_xor", lambda xp, a, b: xp.logical_xor(a, b))
logical_not = nondiff_unary("logical_not", lambda xp, x: xp.logical_not(x))
bitwise_and = nondiff_binary("bitwise_and", lambda xp, a, b: a & b)
bitwise_or = nondiff_binary("bitwise_or", lambda xp, a, b: a | b)
bitwise_xor = nondiff_binary("bitwise_xor", lambda xp, a, b: a ^ b)
bitwise_not = nondiff_unary("bitwise_not", lambda xp, x: ~x)
isnan = nondiff_unary("isnan", lambda xp, x: xp.isnan(x), doc="True where x is NaN.")
isinf = nondiff_unary("isinf", lambda xp, x: xp.isinf(x), doc="True where x is +-inf.")
isfinite = nondiff_unary("isfinite", lambda xp, x: xp.isfinite(x), doc="True where finite.")
greater, greater_equal, less, less_equal, equal, not_equal = gt, ge, lt, le, eq, ne


# ---------------------------------------------------------------------------------------------
# absolute value, sign, rounding


def _abs_vjp(cts, outs, args, params, needs):
    # |z| is not holomorphic, so the generic ``ct * conj(f'(z))`` does not apply: the gradient of
    # a real loss through |z| is ct * z / |z| (PyTorch's sgn(z); 0 at 0, so abs'(0) == 0).
    return (cts[0] * sgn(args[0]),)


def _abs_jvp(tangents, outs, args, params):
    (x,) = args
    if x.dtype.kind == "c":
        return real(conj(sgn(x)) * tangents[0])  # d|z| = Re(conj(z) dz) / |z|
    return tangents[0] * sgn(x)


_abs_op = register(
    OpDef(
        "abs",
        lambda xp, x: xp.abs(x),
        vjp=_abs_vjp,
        jvp=_abs_jvp,
        batch=batching.elementwise,
        node_name="AbsBackward0",
    )
)
abs = unary_caller(_abs_op, doc="Absolute value (gradient sgn(x), 0 at 0).")
absolute = abs
sign = nondiff_unary("sign", lambda xp, x: xp.sign(x), doc="Sign of x (-1, 0, 1); no gradient.")


def _sgn_impl(xp, x):
    if x.dtype.kind != "c":
        return xp.sign(x)
    magnitude = xp.abs(x)
    safe = xp.where(magnitude == 0, 1, magnitude)
    return xp.where(magnitude == 0, 0, x / safe)


sgn = nondiff_unary("sgn", _sgn_impl, doc="x / |x| (0 at 0); sign for real x.")
floor = nondiff_unary("floor", lambda xp, x: xp.floor(x), doc="Round down (zero gradient).")
ceil = nondiff_unary("ceil", lambda xp, x: xp.ceil(x), doc="Round up (zero gradient).")
trunc = nondiff_unary("trunc", lambda xp, x: xp.trunc(x), doc="Round to zero (zero gradient).")
floor_divide = nondiff_binary("floor_divide", lambda xp, a, b: xp.floor_divide(a, b))
remainder = binary(
    "remainder",
    lambda xp, a, b: xp.remainder(a, b),
    (lambda a, b, y: 1, lambda a, b, y: -floor_divide(a, b)),
    doc="Python-style remainder (sign of the divisor).",
)

TENSOR_METHODS = (
    "add", "sub", "mul", "div", "true_divide", "pow", "neg", "negative", "reciprocal", "square",
    "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
    "tan", "tanh", "sinh", "cosh", "conj", "real", "imag", "astype", "clone", "where", "eq",
    "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
    "isnan", "isinf", "isfinite", "abs", "absolute", "sign", "sgn", "floor", "ceil", "trunc",
    "floor_divide", "remainder", "greater", "greater_equal", "less", "less_equal", "equal",
    "not_equal", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor",
)
INPLACE_METHODS = (
    "add", "sub", "mul", "div", "true_divide", "pow", "neg", "reciprocal", "square", "sqrt",
    "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
    "tanh", "sinh", "cosh", "abs", "sign", "sgn", "floor", "ceil", "trunc", "remainder",
    "floor_divide", "logical_not", "logical_and", "logical_or",
)
