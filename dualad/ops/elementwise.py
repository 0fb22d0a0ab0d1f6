"""Elementwise ops: arithmetic, transcendental functions, complex parts, casts, comparisons.

One line (or one block) per op; every rule is written in dualad ops so that it can be
differentiated again, run under dual levels and batched.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math
import operator as _operator

import numpy as np
import scipy.special

from .. import _dtypes
from .._dispatch import (
    EMPTY,
    SCALAR_TYPES,
    OpDef,
    apply,
    apply1,
    as_arg,
    binary_caller,
    dispatch,
    register,
    unary_caller,
)
from .._state import GRAD
from .._tensor import Tensor
from . import _batching as batching
from ._helpers import (
    _broadcast_to_output,
    _conj_if_complex,
    bilinear,
    binary,
    nondiff_binary,
    nondiff_unary,
    piecewise_constant,
    piecewise_constant_op,
    unary,
    unary_op,
    zero_jvp,
    zero_vjp,
)

# ---------------------------------------------------------------------------------------------
# dtype helpers for impls


def _floating(x):
    """Bool and integer arrays as the default float dtype (PyTorch promotes them for float math;
    NumPy would pick float16 for int8 and ignore ``set_default_dtype``). Python scalars pass."""
    try:
        if x.dtype in _FLOAT_DTYPES:  # the common case first: one set lookup (hot path)
            return x
    except AttributeError:
        return x
    if x.dtype.kind in "biu":
        return x.astype(_dtypes.get_default_dtype())
    return x


_FLOAT_DTYPES = frozenset(np.dtype(c) for c in "efdgFDG")


def _floating_pair(a, b):
    """The operands of a floating-point binary op (atan2, hypot, ...): with a floating or
    complex array among them NumPy promotes as ``promote_types`` (int16 with float16 is
    float32); with none, integer and bool arrays become the default float dtype."""
    if getattr(a, "dtype", None) in _FLOAT_DTYPES or getattr(b, "dtype", None) in _FLOAT_DTYPES:
        return a, b
    return _floating(a), _floating(b)


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
    None,
    (1, 1),
    uses="",
    doc="``a + b`` with broadcasting.",
    kernel=_operator.add,
)
sub = binary(
    "sub",
    None,
    (1, -1),
    uses="",
    doc="``a - b`` with broadcasting.",
    kernel=_operator.sub,
)
mul = bilinear("mul", None, doc="``a * b`` with broadcasting.", kernel=_operator.mul)


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


neg = unary("neg", None, lambda x, y: -1, uses="", doc="``-x``.", kernel=_operator.neg)
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
    "exp2",
    lambda xp, x: xp.exp2(_floating(x)),
    lambda x, y: y * float(np.log(2.0)),
    uses="y",
    doc="``2 ** x``.",
)
expm1 = unary(
    "expm1",
    lambda xp, x: xp.expm1(_floating(x)),
    lambda x, y: y + 1,
    uses="y",
    doc="``exp(x) - 1``.",
)
log = unary(
    "log", lambda xp, x: xp.log(_floating(x)), lambda x, y: reciprocal(x), doc="Natural log."
)
log2 = unary(
    "log2",
    lambda xp, x: xp.log2(_floating(x)),
    lambda x, y: 1 / (x * float(np.log(2.0))),
    doc="Base-2 log.",
)
log10 = unary(
    "log10",
    lambda xp, x: xp.log10(_floating(x)),
    lambda x, y: 1 / (x * float(np.log(10.0))),
    doc="Base-10 log.",
)
log1p = unary(
    "log1p", lambda xp, x: xp.log1p(_floating(x)), lambda x, y: 1 / (1 + x), doc="``log(1 + x)``."
)

# ---------------------------------------------------------------------------------------------
# derivatives fused with the product by a (co)tangent: one op each for the VJP and the JVP of
# the hottest elementwise ops (PyTorch's tanh_backward, sigmoid_backward); differentiable
# themselves (create_graph, forward-over-reverse) through their partials


def _scalar_math(fn, x):
    """``fn(x)`` for a Python scalar ``x``, as a Python scalar (weakly typed: float32 times it
    is float32, as for ``x`` itself)."""
    return fn(x).item()


def _cos_of(x):
    return cos(x) if isinstance(x, Tensor) else _scalar_math(np.cos, x)


def _sin_of(x):
    return sin(x) if isinstance(x, Tensor) else _scalar_math(np.sin, x)


sin_backward = binary(
    "sin_backward",
    lambda xp, t, x: (
        t * (xp.cos(_floating(x)) if type(x) not in _PY_SCALARS else _scalar_math(np.cos, x))
    ),
    (lambda t, x, y: _cos_of(x), lambda t, x, y: -(t * _sin_of(x))),
    uses="ab",
    doc="``t * cos(x)``: sine's derivative at ``x`` times ``t``.",
)
cos_backward = binary(
    "cos_backward",
    lambda xp, t, x: (
        -(t * (xp.sin(_floating(x)) if type(x) not in _PY_SCALARS else _scalar_math(np.sin, x)))
    ),
    (lambda t, x, y: -_sin_of(x), lambda t, x, y: -(t * _cos_of(x))),
    uses="ab",
    doc="``-t * sin(x)``: cosine's derivative at ``x`` times ``t``.",
)
tanh_backward = binary(
    "tanh_backward",
    lambda xp, t, y: t * (1 - y * y),
    (lambda t, y, out: 1 - y * y, lambda t, y, out: -2 * (t * y)),
    uses="ab",
    doc="``t * (1 - y**2)``: tanh's derivative at its output ``y`` times ``t``.",
)
sigmoid_backward = binary(
    "sigmoid_backward",
    lambda xp, t, y: t * (y * (1 - y)),
    (lambda t, y, out: y * (1 - y), lambda t, y, out: t * (1 - 2 * y)),
    uses="ab",
    doc="``t * y * (1 - y)``: the logistic function's derivative at its output ``y`` times ``t``.",
)

# ---------------------------------------------------------------------------------------------
# trigonometric and hyperbolic

sin = unary("sin", lambda xp, x: xp.sin(_floating(x)), None, doc="Sine.", fused=sin_backward)
cos = unary("cos", lambda xp, x: xp.cos(_floating(x)), None, doc="Cosine.", fused=cos_backward)
tan = unary(
    "tan", lambda xp, x: xp.tan(_floating(x)), lambda x, y: 1 + y * y, uses="y", doc="Tangent."
)
tanh = unary(
    "tanh",
    lambda xp, x: xp.tanh(_floating(x)),
    None,
    uses="y",
    doc="Hyperbolic tangent.",
    fused=tanh_backward,
)
sinh = unary(
    "sinh", lambda xp, x: xp.sinh(_floating(x)), lambda x, y: cosh(x), doc="Hyperbolic sine."
)
cosh = unary(
    "cosh", lambda xp, x: xp.cosh(_floating(x)), lambda x, y: sinh(x), doc="Hyperbolic cosine."
)

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


# xp.real/xp.imag of a complex array are views of it; real and imag are not view ops (writing
# into the result must not change the input behind autograd's and forward mode's back): copy
def _real_impl(xp, x):
    return xp.real(x).copy()


def _imag_impl(xp, x):
    return xp.imag(x).copy()


def _real_vjp(cts, outs, args, params, needs):
    # the cotangent of Re(z) is real; as a gradient w.r.t. complex z it is ct + 0j
    return (cts[0],)


_real_op = register(
    OpDef(
        "real",
        _real_impl,
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
        _imag_impl,
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
        enabled = GRAD.enabled  # (a cast to a non-differentiable dtype records nothing)
        GRAD.enabled = False
        try:
            return apply1(_astype_op, x, {"dtype": dtype})
        finally:
            GRAD.enabled = enabled
    return apply1(_astype_op, x, {"dtype": dtype})


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


clone = unary_caller(_clone_op, doc="A copy of ``x`` with its own memory (differentiable).")


def _to_device_impl(xp, x, *, device):
    from .._backend import to_device

    out = to_device(x, device)
    # already there: to_device hands back the array itself; the op promises a copy (a result
    # sharing the input's memory without being a view would let in-place writes leak into it)
    return out.copy() if out is x else out


_to_device_op = register(
    OpDef(
        "to_device",
        _to_device_impl,
        vjp=lambda cts, outs, args, params, needs: (
            to_device_op(cts[0], device=_device_of_meta(args[0], cts[0])),
        ),
        jvp=lambda tangents, outs, args, params: to_device_op(tangents[0], **params),
        batch=lambda op, args, bdims, params: (apply(op, args[0], **params), bdims[0]),
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
    condition = args[0]
    ct = cts[0]
    zero = 0.0
    return (
        None,
        where(condition, ct, zero) if needs[1] else None,
        where(condition, zero, ct) if needs[2] else None,
    )


def _where_jvp(tangents, outs, args, params):
    condition = args[0]
    _, t_a, t_b = tangents
    t_a = 0.0 if t_a is None else t_a
    t_b = 0.0 if t_b is None else t_b
    out = where(condition, t_a, t_b)
    return _output_tangent(out, outs[0])


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
    # a real loss through |z| is ct * z / |z| (PyTorch's sgn(z)), 0 at 0 (so abs'(0) == 0).
    (x,) = args
    if x.dtype.kind == "c":
        return (cts[0] * _unit(x),)
    return (cts[0] * sgn(x),)  # real x: piecewise constant, so the nondifferentiable sign


def _abs_jvp(tangents, outs, args, params):
    (x,) = args
    if x.dtype.kind == "c":
        return real(conj(_unit(x)) * tangents[0])  # d|z| = Re(conj(z) dz) / |z|
    return tangents[0] * sgn(x)


def _unit(z):
    """z / |z| (0 at 0) written in differentiable ops, so complex abs is twice differentiable."""
    magnitude = abs(z)
    zero = magnitude == 0
    return where(zero, 0.0, z / where(zero, 1.0, magnitude))


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
sign = piecewise_constant(
    "sign", lambda xp, x: xp.sign(x), doc="Sign of x (-1, 0, 1); zero gradient (PyTorch's)."
)


def _sgn_impl(xp, x):
    if x.dtype.kind != "c":
        return xp.sign(x)
    magnitude = xp.abs(x)
    safe = xp.where(magnitude == 0, 1, magnitude)
    return xp.where(magnitude == 0, 0, x / safe)


def _sgn_inverse_magnitude(x):
    # 1 / |x|, 0 at 0 (where sgn's derivative is taken to be 0, as PyTorch's sgn_backward)
    magnitude = abs(x)
    zero = magnitude == 0
    return where(zero, 0.0, reciprocal(where(zero, 1.0, magnitude)))


def _sgn_vjp(cts, outs, args, params, needs):
    (x,) = args
    ct = cts[0]
    if x.dtype.kind != "c":
        return zero_vjp(cts, outs, args, params, needs)
    # u = z / |z|: du = (dz - u Re(conj(u) dz)) / |z|, whose adjoint for a real loss is
    # (g - Re(g conj(u)) u) / |z| (not holomorphic: no conjugated derivative to multiply)
    u = outs[0]
    return ((ct - real(ct * conj(u)) * u) * _sgn_inverse_magnitude(x),)


def _sgn_jvp(tangents, outs, args, params):
    (x,) = args
    if x.dtype.kind != "c":
        return zero_jvp(tangents, outs, args, params)
    u = outs[0]
    t = tangents[0]
    return (t - u * real(conj(u) * t)) * _sgn_inverse_magnitude(x)


_sgn_op = register(
    OpDef("sgn", _sgn_impl, vjp=_sgn_vjp, jvp=_sgn_jvp, batch=batching.elementwise, save_out=True)
)
sgn = unary_caller(
    _sgn_op,
    doc="x / |x| (0 at 0); sign for real x (zero gradient), differentiable for complex x.",
)
floor = piecewise_constant("floor", lambda xp, x: xp.floor(x), doc="Round down (zero gradient).")
ceil = piecewise_constant("ceil", lambda xp, x: xp.ceil(x), doc="Round up (zero gradient).")
trunc = piecewise_constant("trunc", lambda xp, x: xp.trunc(x), doc="Round to zero (zero gradient).")
floor_divide = nondiff_binary("floor_divide", lambda xp, a, b: xp.floor_divide(a, b))
remainder = binary(
    "remainder",
    lambda xp, a, b: xp.remainder(a, b),
    (lambda a, b, y: 1, lambda a, b, y: -floor_divide(a, b)),
    doc="Python-style remainder (sign of the divisor).",
)

# Methods with an in-place ``name_`` twin, then those without (they change the dtype or have
# no PyTorch in-place form).
INPLACE_METHODS = (
    "add",
    "sub",
    "mul",
    "div",
    "true_divide",
    "pow",
    "neg",
    "negative",
    "reciprocal",
    "square",
    "sqrt",
    "rsqrt",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "logical_and",
    "logical_or",
    "logical_not",
    "abs",
    "absolute",
    "sign",
    "sgn",
    "floor",
    "ceil",
    "trunc",
    "floor_divide",
    "remainder",
)
TENSOR_METHODS = (
    *INPLACE_METHODS,
    "conj",
    "real",
    "imag",
    "astype",
    "clone",
    "where",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_xor",
    "isnan",
    "isinf",
    "isfinite",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "equal",
    "not_equal",
    "bitwise_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
)


# ---------------------------------------------------------------------------------------------
# helpers for the ops below


def _unary_with_params(name, impl, deriv, *, uses="x", node_name=None):
    """An elementwise op with static params, from ``deriv(x, y, **params)`` in dualad ops."""
    return unary_op(name, impl, deriv, uses=uses, node_name=node_name, takes_params=True)


def _sum_tangents(terms, out):
    """The sum of the non-None ``terms``, broadcast to the output's shape (None if all are)."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return _output_tangent(total, out)


def _output_tangent(tangent, out):
    """``tangent`` broadcast to the output's shape, in memory of its own.

    An in-place op on the output writes into its tangent, so the tangent of an op that is not a
    view may be neither a broadcast view (read-only) nor share memory with an input's tangent.
    """
    result = _broadcast_to_output(tangent, out)
    if result is not tangent:
        return clone(result)
    return result


def _as_scalar_tensor(value, like):
    """A Python scalar as a 0-d tensor of ``like``'s dtype (keeps float32 rules in float32)."""
    return _scalar_like(value, like) if type(value) in _PY_SCALARS else value


def _scalar_log(value) -> float:
    """log of a real Python scalar with NumPy's conventions (-inf at 0, nan below)."""
    if value > 0:
        return _math.log(value)
    return float("-inf") if value == 0 else float("nan")


def _check_number(op: str, name: str, value) -> None:
    if type(value) not in _PY_SCALARS or type(value) is complex:
        raise TypeError(
            f"dualad.{op}: argument '{name}' must be a real number, got {type(value).__name__}"
        )


def _plain_scalar(value):
    """NumPy scalars as Python scalars: they then promote like Python numbers (NEP 50)."""
    return value.item() if isinstance(value, np.generic) else value


# ---------------------------------------------------------------------------------------------
# inverse trigonometric and hyperbolic functions (complex: principal branches, like NumPy)

asin = unary(
    "asin",
    lambda xp, x: xp.arcsin(_floating(x)),
    lambda x, y: rsqrt(1 - x * x),
    doc="Inverse sine (``arcsin``); derivative ``1 / sqrt(1 - x**2)``.",
)
acos = unary(
    "acos",
    lambda xp, x: xp.arccos(_floating(x)),
    lambda x, y: -rsqrt(1 - x * x),
    doc="Inverse cosine (``arccos``); derivative ``-1 / sqrt(1 - x**2)``.",
)
atan = unary(
    "atan",
    lambda xp, x: xp.arctan(_floating(x)),
    lambda x, y: reciprocal(1 + x * x),
    doc="Inverse tangent (``arctan``); derivative ``1 / (1 + x**2)``.",
)
asinh = unary(
    "asinh",
    lambda xp, x: xp.arcsinh(_floating(x)),
    lambda x, y: rsqrt(x * x + 1),
    doc="Inverse hyperbolic sine; derivative ``1 / sqrt(x**2 + 1)``.",
)
acosh = unary(
    "acosh",
    lambda xp, x: xp.arccosh(_floating(x)),
    # sqrt(x - 1) * sqrt(x + 1), not sqrt(x**2 - 1): the right branch for complex x
    lambda x, y: reciprocal(sqrt(x - 1) * sqrt(x + 1)),
    doc="Inverse hyperbolic cosine; derivative ``1 / sqrt(x**2 - 1)``.",
)
atanh = unary(
    "atanh",
    lambda xp, x: xp.arctanh(_floating(x)),
    lambda x, y: reciprocal(1 - x * x),
    doc="Inverse hyperbolic tangent; derivative ``1 / (1 - x**2)``.",
)
arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh


def _atan2_inverse_radius2(a, b):
    # 1 / (a**2 + b**2), 0 at the origin (PyTorch's atan2_backward masks the infinite
    # reciprocal): the partials b / r2 and -a / r2 are then 0 there instead of 0/0 = NaN, and so
    # are their derivatives (r2's reciprocal is a constant 0 on the masked points)
    r2 = a * a + b * b
    origin = r2 == 0
    return where(origin, 0.0, reciprocal(where(origin, 1.0, r2)))


atan2 = binary(
    "atan2",
    lambda xp, a, b: xp.arctan2(*_floating_pair(a, b)),
    (
        lambda a, b, y: b * _atan2_inverse_radius2(a, b),
        lambda a, b, y: -a * _atan2_inverse_radius2(a, b),
    ),
    doc="Angle of the point ``(b, a)``: ``atan2(a, b)`` with quadrant (``arctan2``).",
)
arctan2 = atan2
hypot = binary(
    "hypot",
    lambda xp, a, b: xp.hypot(*_floating_pair(a, b)),
    (lambda a, b, y: a / y, lambda a, b, y: b / y),
    uses="aby",
    doc="``sqrt(a**2 + b**2)`` without overflow.",
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


sigmoid = unary(
    "sigmoid",
    _sigmoid_impl,
    None,
    uses="y",
    doc="Logistic function ``1 / (1 + exp(-x))``.",
    fused=sigmoid_backward,
)
expit = sigmoid


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


relu = unary(
    "relu",
    _relu_impl,
    lambda x, y: y > 0,  # relu'(0) == 0, as in PyTorch
    uses="y",
    doc="``max(x, 0)``; the gradient at 0 is 0 (PyTorch's convention).",
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
# error function family: values from scipy.special (NumPy) or cupyx.scipy.special (CuPy)

_TWO_OVER_SQRT_PI = 2.0 / _math.sqrt(_math.pi)
_SQRT_PI_OVER_TWO = _math.sqrt(_math.pi) / 2.0


def _special_impl(name: str, numpy_version=None):
    """The impl of ``scipy.special``'s function ``name`` (or of ``numpy_version`` on NumPy) on
    real floating input (computed in float64, the result in the input's dtype)."""
    numpy_version = numpy_version or getattr(scipy.special, name)

    def impl(xp, x):
        x = _float_array(x)
        _reject_complex(name, x)
        if xp is np:
            return np.asarray(numpy_version(x.astype(np.float64, copy=False)), dtype=x.dtype)
        from cupyx.scipy import special  # CuPy's SciPy functions: imported on first GPU use

        return getattr(special, name)(x)

    return impl


def _erfc(x):
    """erfc of a float64 array to a few ulp. ``scipy.special.erfc`` loses up to ~400 ulp for
    x > 0.5; there erfc(x) = erfcx(x) * exp(-x**2), the square taken exactly: exp(-h**2) *
    exp(-(x - h)(x + h)) with h = x rounded down to 1/16 (h**2 has no rounding error)."""
    far = np.minimum(np.maximum(x, 0.5), 30.0)  # erfc(30) underflows to 0; no inf - inf
    high = np.trunc(far * 16.0) / 16.0
    tail = scipy.special.erfcx(far) * np.exp(-high * high) * np.exp(-(far - high) * (far + high))
    return np.where(x < 0.5, scipy.special.erfc(x), tail)


erf = unary(
    "erf",
    _special_impl("erf"),
    lambda x, y: exp(-(x * x)) * _TWO_OVER_SQRT_PI,
    doc="Error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.",
)
erfc = unary(
    "erfc",
    _special_impl("erfc", _erfc),
    lambda x, y: exp(-(x * x)) * -_TWO_OVER_SQRT_PI,
    doc="Complementary error function ``1 - erf(x)`` (accurate where erf(x) is close to 1).",
)
erfinv = unary(
    "erfinv",
    _special_impl("erfinv"),
    lambda x, y: exp(y * y) * _SQRT_PI_OVER_TWO,
    uses="y",
    doc="Inverse error function on (-1, 1) (±inf at ±1, nan outside).",
)


# ---------------------------------------------------------------------------------------------
# binary maxima/minima: which argument the gradient goes to


def _route(value, tie, lose):
    """``value`` where this argument was selected, 0 where it lost, half of it at ties."""
    out = where(lose, 0.0, value)
    if tie is not None:
        out = where(tie, value * 0.5, out)
    return out


def _selection_op(name, impl, masks, doc):
    """A broadcasting op that selects one of its arguments per element (maximum, fmin, ...).

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
    return binary_caller(op, doc=doc)


# PyTorch: maximum/minimum split the gradient equally at ties; where one argument is NaN (the
# result is NaN), both receive the full gradient (neither "loses" a comparison).
maximum = _selection_op(
    "maximum",
    lambda xp, a, b: xp.maximum(a, b),
    lambda a, b: (a == b, a < b, a > b),
    "Elementwise maximum (NaN propagates); ties split the gradient 0.5/0.5.",
)
minimum = _selection_op(
    "minimum",
    lambda xp, a, b: xp.minimum(a, b),
    lambda a, b: (a == b, a > b, a < b),
    "Elementwise minimum (NaN propagates); ties split the gradient 0.5/0.5.",
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
    "Elementwise maximum ignoring NaN (NaN only where both are NaN), like ``numpy.fmax``.",
)
fmin = _selection_op(
    "fmin",
    lambda xp, a, b: xp.fmin(a, b),
    _fmin_masks,
    "Elementwise minimum ignoring NaN (NaN only where both are NaN), like ``numpy.fmin``.",
)


# ---------------------------------------------------------------------------------------------
# clamp


def _clamp_impl(xp, x, low, high):
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


clip = clamp


def clamp_min(x, min):
    """``clamp(x, min=min)``."""
    return clamp(x, min, None)


def clamp_max(x, max):
    """``clamp(x, max=max)``."""
    return clamp(x, None, max)


# ---------------------------------------------------------------------------------------------
# more binary ops


def _fmod_impl(xp, a, b):
    return xp.fmod(a, b)


fmod = binary(
    "fmod",
    _fmod_impl,
    # PyTorch: d/db fmod(a, b) = -trunc(a / b) (trunc has no gradient)
    (lambda a, b, y: 1, lambda a, b, y: -trunc(a / b)),
    doc="C-style remainder ``a - trunc(a / b) * b`` (the sign of the dividend).",
)


def _float_operands(xp, a, b):
    """Both operands as float arrays of the result dtype (Python scalars adopt the tensor's
    dtype, as NumPy 2 does for them in ufuncs)."""
    a, b = _floating_pair(a, b)
    # dtypes only (NEP 50 keeps Python scalars weak): NumPy never touches CuPy data here
    dtype = np.result_type(getattr(a, "dtype", a), getattr(b, "dtype", b))
    if dtype.kind in "biu":
        dtype = _dtypes.get_default_dtype()
    if type(a) in _PY_SCALARS or a.dtype != dtype:
        a = xp.asarray(a, dtype=dtype)
    if type(b) in _PY_SCALARS or b.dtype != dtype:
        b = xp.asarray(b, dtype=dtype)
    return a, b


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


xlogy = binary(
    "xlogy",
    _xlogy_impl,
    (_xlogy_dx, lambda x, y, out: x / y),
    doc="``x * log(y)``, 0 where ``x == 0`` (unless y is NaN).",
)

logaddexp = binary(
    "logaddexp",
    lambda xp, a, b: xp.logaddexp(*_floating_pair(a, b)),
    (lambda a, b, y: exp(a - y), lambda a, b, y: exp(b - y)),
    uses="aby",
    doc="``log(exp(a) + exp(b))`` without overflow.",
)
logaddexp2 = binary(
    "logaddexp2",
    lambda xp, a, b: xp.logaddexp2(*_floating_pair(a, b)),
    (lambda a, b, y: exp2(a - y), lambda a, b, y: exp2(b - y)),
    uses="aby",
    doc="``log2(2**a + 2**b)`` without overflow.",
)


def _copysign_impl(xp, a, b):
    _reject_complex("copysign", a, b)
    return xp.copysign(*_floating_pair(a, b))


copysign = binary(
    "copysign",
    _copysign_impl,
    # PyTorch: d/da = result / a (+-1), 0 where a == 0; no gradient (zeros) for the sign source
    (lambda a, b, y: sign(a) * sign(y), lambda a, b, y: 0),
    uses="aby",
    doc="``|a|`` with the sign of ``b``.",
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


def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)``; ``weight`` a number or tensor.

    >>> import dualad
    >>> dualad.lerp(dualad.tensor([0.0, 1.0]), dualad.tensor([10.0, 3.0]), 0.25)
    tensor([2.5, 1.5])
    """
    return dispatch(_lerp_op, (input, end, _plain_scalar(weight)), EMPTY)


# ---------------------------------------------------------------------------------------------
# angle, sinc, unit conversions, nan_to_num


def _angle_impl(xp, x):
    x = _float_array(x)
    if x.dtype.kind == "c":
        return xp.angle(x)
    # real x: pi for x < 0, else 0 (PyTorch: angle(-0.0) == 0, NaN stays NaN)
    out = xp.where(x < 0, _math.pi, 0.0).astype(x.dtype)
    return xp.where(xp.isnan(x), x, out)


def _abs_squared(x):
    """|x|**2 and a copy with zeros replaced by 1 (a safe denominator)."""
    squared = real(x * conj(x))
    return squared, where(squared == 0, 1.0, squared)


def _angle_vjp(cts, outs, args, params, needs):
    (x,) = args
    ct = cts[0]
    if x.dtype.kind != "c":
        return (ct * 0.0,)  # piecewise constant in real x
    # d angle = (-Im(z) dRe + Re(z) dIm) / |z|**2: the gradient is ct * i z / |z|**2 (0 at 0)
    squared, safe = _abs_squared(x)
    return (where(squared == 0, 0.0, (ct / safe) * x * 1j),)


def _angle_jvp(tangents, outs, args, params):
    (x,) = args
    t = tangents[0]
    if x.dtype.kind != "c":
        return t * 0.0
    squared, safe = _abs_squared(x)
    return where(squared == 0, 0.0, imag(conj(x) * t) / safe)


_angle_op = register(
    OpDef("angle", _angle_impl, vjp=_angle_vjp, jvp=_angle_jvp, batch=batching.elementwise)
)
angle = unary_caller(
    _angle_op, doc="Argument of a complex number in (-pi, pi]; for real x, pi where x < 0 else 0."
)


def _sinc_impl(xp, x):
    x = _float_array(x)
    zero = x == 0
    scaled = xp.where(zero, 1, x * _math.pi)
    return xp.where(zero, 1, xp.sin(scaled) / scaled)


def _sinc_deriv(x, y):
    # (cos(pi x) - sinc(x)) / x, and 0 at x == 0 (PyTorch masks it the same way)
    zero = x == 0
    return where(zero, 0.0, (cos(x * _math.pi) - y) / where(zero, 1.0, x))


sinc = unary(
    "sinc",
    _sinc_impl,
    _sinc_deriv,
    uses="xy",
    doc="Normalised sinc ``sin(pi x) / (pi x)``, 1 at 0.",
)

_DEG_PER_RAD = 180.0 / _math.pi
_RAD_PER_DEG = _math.pi / 180.0
deg2rad = unary(
    "deg2rad",
    lambda xp, x: _floating(x) * _RAD_PER_DEG,
    lambda x, y: _RAD_PER_DEG,
    uses="",
    doc="Degrees to radians.",
)
rad2deg = unary(
    "rad2deg",
    lambda xp, x: _floating(x) * _DEG_PER_RAD,
    lambda x, y: _DEG_PER_RAD,
    uses="",
    doc="Radians to degrees.",
)


def _nan_to_num_impl(xp, x, *, nan, posinf, neginf):
    return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_nan_to_num_op = _unary_with_params(
    "nan_to_num",
    _nan_to_num_impl,
    # PyTorch: the gradient passes where x is finite, 0 where it was replaced
    lambda x, y, **params: isfinite(x),
)


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


# ---------------------------------------------------------------------------------------------
# rounding to decimals, sign bits, heaviside, positive: no gradient


def _round_impl(xp, x, *, decimals):
    return xp.round(x, decimals)


_round_op = piecewise_constant_op("round", _round_impl)


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


signbit = nondiff_unary(
    "signbit", lambda xp, x: xp.signbit(x), doc="True where the sign bit is set (also -0.0)."
)


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
heaviside = binary_caller(
    _heaviside_op,
    doc="Step function: 0 for x < 0, ``values`` at x == 0, 1 for x > 0. Zero gradient in x; "
    "the gradient in ``values`` is 1 where x == 0.",
)


def positive(x):
    """``x`` itself (``+x``); not defined for bool tensors, like PyTorch."""
    if isinstance(x, Tensor) and x.dtype.kind == "b":
        raise TypeError("dualad.positive: The `+` operator, on a bool tensor is not supported.")
    return x


# ---------------------------------------------------------------------------------------------
# methods and exports

_MORE_INPLACE = (
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
    "atan2",
    "arctan2",
    "hypot",
    "sigmoid",
    "logit",
    "relu",
    "erf",
    "erfc",
    "erfinv",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "fmod",
    "xlogy",
    "copysign",
    "lerp",
    "sinc",
    "deg2rad",
    "rad2deg",
    "nan_to_num",
    "round",
    "heaviside",
)
INPLACE_METHODS += _MORE_INPLACE
TENSOR_METHODS += (
    *_MORE_INPLACE,
    "softplus",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "logaddexp",
    "logaddexp2",
    "angle",
    "signbit",
    "positive",
)

# Only the ops: ``from .ops.elementwise import *`` must not leak helpers (np, register, ...).
__all__ = [
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "angle",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "ceil",
    "clamp",
    "clamp_max",
    "clamp_min",
    "clip",
    "clone",
    "conj",
    "copysign",
    "cos",
    "cosh",
    "deg2rad",
    "div",
    "divide",
    "eq",
    "equal",
    "erf",
    "erfc",
    "erfinv",
    "exp",
    "exp2",
    "expit",
    "expm1",
    "floor",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "heaviside",
    "hypot",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "le",
    "lerp",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "logit",
    "lt",
    "maximum",
    "minimum",
    "mul",
    "nan_to_num",
    "ne",
    "neg",
    "negative",
    "not_equal",
    "positive",
    "pow",
    "rad2deg",
    "real",
    "reciprocal",
    "relu",
    "remainder",
    "round",
    "rsqrt",
    "sgn",
    "sigmoid",
    "sign",
    "signbit",
    "sin",
    "sinc",
    "sinh",
    "softplus",
    "sqrt",
    "square",
    "sub",
    "tan",
    "tanh",
    "to_device_op",
    "true_divide",
    "trunc",
    "where",
    "xlogy",
]
