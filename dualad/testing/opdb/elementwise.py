"""Op database entries for elementwise ops (``dualad/ops``: arithmetic, exp_log, trig, ...).

Sample inputs (``_elementwise_samples.py``) stay inside each op's domain and away from its
kinks, poles and branch cuts (for complex inputs the range of the real and imaginary parts is
chosen per op), so that central differences are accurate. References are NumPy (or ``math``
element by element where NumPy has no such function) and keep the input's dtype, as the ops do.
"""

from __future__ import annotations

import math

import numpy as np

import dualad
from dualad.ops import activations as _act
from dualad.ops import floating as _floating
from dualad.ops import trigonometric as _trig

from . import ALL_DIFF, OpInfo
from ._elementwise_samples import (
    angle_samples,
    binary_samples,
    clamp_samples,
    comparison_samples,
    fmax_samples,
    heaviside_diff_samples,
    int_samples,
    int_unary_samples,
    ldexp_samples,
    lerp_samples,
    nan_to_num_samples,
    piecewise_constant_samples,
    predicate_samples,
    remainder_samples,
    round_diff_samples,
    shift_samples,
    signbit_samples,
    unary_samples,
    where_samples,
)

COMPLEX = ("complex64", "complex128")


# ---------------------------------------------------------------------------------------------
# references where NumPy has no function (computed in float64, returned in the input's dtype)


def _elementwise_math(function):
    def ref(x):
        x = np.asarray(x)
        values = [function(float(v)) for v in x.reshape(-1)]
        return np.asarray(values, dtype=np.float64).reshape(x.shape).astype(x.dtype)

    return ref


def _erfinv_scalar(y: float) -> float:
    """Bisection on math.erf: slow but independent of dualad's algorithm."""
    if abs(y) >= 1:
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    low, high = -7.0, 7.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if math.erf(middle) < y:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def _clamp_ref(x, min=None, max=None):
    # (the steps of ops/minmax.py's _clamp_impl, written again on purpose: a reference
    # must not share the code it checks)
    out = x
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    return out


def _softplus_ref(x, beta=1.0, threshold=20.0):
    z = x * beta
    return np.where(z > threshold, x, np.log1p(np.exp(z)) / beta)


def _logit_ref(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _in_dtype_of(value, *inputs):
    """``value`` in the dtype the inputs promote to (a Python scalar input stays weak)."""
    return np.asarray(value).astype(np.result_type(*inputs))


def _xlogy_ref(x, y):
    dtype = np.result_type(x, y)  # a Python scalar takes the array's dtype
    x, y = np.asarray(x, dtype), np.asarray(y, dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, dtype.type(0), x * np.log(y))


def _lerp_ref(a, b, weight):
    return a + weight * (b - a)


def _sgn_ref(x):
    if x.dtype.kind != "c":
        return np.sign(x)
    magnitude = np.abs(x)
    return np.where(magnitude == 0, 0, x / np.where(magnitude == 0, 1, magnitude)).astype(x.dtype)


def _complex_of(x):
    return np.dtype(np.complex64 if x.dtype in (np.float32, np.complex64) else np.complex128)


# ---------------------------------------------------------------------------------------------
# the entries

PIECEWISE = {"twice_differentiable": False}

_INTEGRAL = ("int64", "bool")


def _no_gradient(samples, *refs, **options) -> list[OpInfo]:
    """Entries of ops without gradients (comparisons, logical and bitwise ops), one per
    ``(name, NumPy reference)`` in ``refs``, all drawing ``samples``."""
    return [
        OpInfo(name, getattr(dualad, name), samples, differentiable=False, ref=ref, **options)
        for name, ref in refs
    ]


OPS = [
    # arithmetic
    OpInfo("add", dualad.add, binary_samples(), dtypes=ALL_DIFF, ref=np.add),
    OpInfo("sub", dualad.sub, binary_samples(), dtypes=ALL_DIFF, ref=np.subtract),
    OpInfo("mul", dualad.mul, binary_samples(), dtypes=ALL_DIFF, ref=np.multiply),
    OpInfo(
        "div", dualad.div, binary_samples(b_low=0.5, b_high=2.0), dtypes=ALL_DIFF, ref=np.divide
    ),
    # complex: base and exponent parts in (0.5, 2): away from the cut of log(base)
    OpInfo(
        "pow",
        dualad.pow,
        binary_samples(low=0.5, high=2.0, scalar=2.0),
        dtypes=ALL_DIFF,
        ref=np.power,
        ops=("pow", "pow_scalar_exponent"),  # the tensor-scalar sample is the second
    ),
    OpInfo("neg", dualad.neg, unary_samples(), dtypes=ALL_DIFF, ref=np.negative),
    OpInfo(
        "reciprocal",
        dualad.reciprocal,
        unary_samples(0.5, 2.0),
        dtypes=ALL_DIFF,
        ref=np.reciprocal,
    ),
    OpInfo("square", dualad.square, unary_samples(), dtypes=ALL_DIFF, ref=np.square),
    OpInfo("sqrt", dualad.sqrt, unary_samples(0.5, 2.0), dtypes=ALL_DIFF, ref=np.sqrt),
    OpInfo(
        "rsqrt",
        dualad.rsqrt,
        unary_samples(0.5, 2.0),
        dtypes=ALL_DIFF,
        ref=lambda x: 1 / np.sqrt(x),
    ),
    # cbrt: real only; its derivative is infinite at 0, so the samples keep clear of it
    OpInfo(
        "cbrt",
        dualad.cbrt,
        unary_samples(avoid=(0.0,), margin=0.3, extra=((4, 5), -30.0, 30.0)),
        ref=np.cbrt,
    ),
    OpInfo(
        "remainder",
        dualad.remainder,
        remainder_samples,
        ref=np.remainder,
        **PIECEWISE,
    ),
    OpInfo("fmod", dualad.fmod, remainder_samples, ref=np.fmod, **PIECEWISE),
    # exponentials and logarithms
    OpInfo("exp", dualad.exp, unary_samples(), dtypes=ALL_DIFF, ref=np.exp),
    OpInfo("exp2", dualad.exp2, unary_samples(), dtypes=ALL_DIFF, ref=np.exp2),
    OpInfo("expm1", dualad.expm1, unary_samples(), dtypes=ALL_DIFF, ref=np.expm1),
    OpInfo("log", dualad.log, unary_samples(0.5, 2.0), dtypes=ALL_DIFF, ref=np.log),
    OpInfo("log2", dualad.log2, unary_samples(0.5, 2.0), dtypes=ALL_DIFF, ref=np.log2),
    OpInfo("log10", dualad.log10, unary_samples(0.5, 2.0), dtypes=ALL_DIFF, ref=np.log10),
    OpInfo("log1p", dualad.log1p, unary_samples(-0.5, 2.0), dtypes=ALL_DIFF, ref=np.log1p),
    OpInfo("logaddexp", dualad.logaddexp, binary_samples(-3.0, 3.0), ref=np.logaddexp),
    OpInfo("logaddexp2", dualad.logaddexp2, binary_samples(-3.0, 3.0), ref=np.logaddexp2),
    OpInfo(
        "xlogy",
        dualad.xlogy,
        binary_samples(-2.0, 2.0, b_low=0.5, b_high=2.0),
        ref=_xlogy_ref,
    ),
    # trigonometric and hyperbolic
    OpInfo("sin", dualad.sin, unary_samples(), dtypes=ALL_DIFF, ref=np.sin),
    OpInfo("cos", dualad.cos, unary_samples(), dtypes=ALL_DIFF, ref=np.cos),
    OpInfo("tan", dualad.tan, unary_samples(-1.2, 1.2), dtypes=ALL_DIFF, ref=np.tan),
    OpInfo("tanh", dualad.tanh, unary_samples(), dtypes=ALL_DIFF, ref=np.tanh),
    OpInfo("sinh", dualad.sinh, unary_samples(), dtypes=ALL_DIFF, ref=np.sinh),
    OpInfo("cosh", dualad.cosh, unary_samples(), dtypes=ALL_DIFF, ref=np.cosh),
    # the fused derivative ops the rules of sin, cos, tanh and sigmoid are made of
    OpInfo(
        "sin_backward",
        _trig.sin_backward,
        binary_samples(),
        dtypes=ALL_DIFF,
        ref=lambda t, x: _in_dtype_of(t * np.cos(x), t, x),
    ),
    OpInfo(
        "cos_backward",
        _trig.cos_backward,
        binary_samples(),
        dtypes=ALL_DIFF,
        ref=lambda t, x: _in_dtype_of(-t * np.sin(x), t, x),
    ),
    OpInfo(
        "tanh_backward",
        _trig.tanh_backward,
        binary_samples(),
        dtypes=ALL_DIFF,
        ref=lambda t, y: t * (1 - y * y),
    ),
    OpInfo(
        "sigmoid_backward",
        _act.sigmoid_backward,
        binary_samples(),
        dtypes=ALL_DIFF,
        ref=lambda t, y: t * y * (1 - y),
    ),
    # complex: |Re|, |Im| < 0.8 keeps clear of the cuts (real axis beyond +-1, imaginary axis
    # beyond +-i); acosh's cut is the real axis left of 1
    *(
        OpInfo(
            name,
            getattr(dualad, name),
            unary_samples(low, high, complex_range=complex_range),
            dtypes=ALL_DIFF,
            ref=ref,
        )
        for name, low, high, complex_range, ref in (
            ("asin", -0.9, 0.9, (-0.8, 0.8), np.arcsin),
            ("acos", -0.9, 0.9, (-0.8, 0.8), np.arccos),
            ("atan", -3.0, 3.0, (-0.8, 0.8), np.arctan),
            ("asinh", -3.0, 3.0, (-0.8, 0.8), np.arcsinh),
            ("acosh", 1.2, 3.0, None, np.arccosh),
            ("atanh", -0.9, 0.9, (-0.8, 0.8), np.arctanh),
        )
    ),
    # atan2(a, b) jumps across a == 0 for b < 0: keep a away from 0
    OpInfo(
        "atan2",
        dualad.atan2,
        binary_samples(avoid=(0.0,)),
        ref=np.arctan2,
    ),
    OpInfo("hypot", dualad.hypot, binary_samples(), ref=np.hypot),
    OpInfo(
        "sinc",
        dualad.sinc,
        unary_samples(avoid=(0.0,), complex_range=(-1.0, 1.0)),
        dtypes=ALL_DIFF,
        ref=np.sinc,
    ),
    OpInfo(
        "deg2rad",
        dualad.deg2rad,
        unary_samples(-200.0, 200.0),
        dtypes=ALL_DIFF,
        ref=lambda x: x * (np.pi / 180),
    ),
    OpInfo(
        "rad2deg",
        dualad.rad2deg,
        unary_samples(),
        dtypes=ALL_DIFF,
        ref=lambda x: x * (180 / np.pi),
    ),
    # activations
    OpInfo(
        "sigmoid",
        dualad.sigmoid,
        unary_samples(-6.0, 6.0, complex_range=(-2.0, 2.0)),
        dtypes=ALL_DIFF,
        ref=lambda x: 1 / (1 + np.exp(-x)),
    ),
    OpInfo("logit", dualad.logit, unary_samples(0.1, 0.9), ref=_logit_ref),
    OpInfo(
        "logit_eps",
        lambda x: dualad.logit(x, eps=0.2),
        unary_samples(0.05, 0.95, avoid=(0.2, 0.8), margin=0.05),
        ops=("logit",),
        ref=lambda x: _logit_ref(x, eps=0.2),
        skips={"gradgrad": "the clamped region's kinks sit at eps and 1 - eps"},
    ),
    OpInfo(
        "relu",
        dualad.relu,
        unary_samples(avoid=(0.0,)),
        ref=lambda x: np.maximum(x, 0),
        **PIECEWISE,
    ),
    OpInfo(
        "softplus",
        dualad.softplus,
        unary_samples(-4.0, 4.0),
        ref=_softplus_ref,
    ),
    OpInfo(
        "softplus_beta",
        lambda x: dualad.softplus(x, beta=2.0, threshold=3.0),
        unary_samples(-4.0, 4.0, avoid=(1.5,), margin=0.1),
        ops=("softplus",),
        ref=lambda x: _softplus_ref(x, beta=2.0, threshold=3.0),
        skips={"gradgrad": "the second derivative jumps at the threshold"},
    ),
    # error functions: the large samples run the vectorised NumPy algorithm (> 32 elements)
    OpInfo(
        "erf",
        dualad.erf,
        unary_samples(extra=((5, 8), -5.0, 5.0)),
        ref=_elementwise_math(math.erf),
    ),
    OpInfo(
        "erfc",
        dualad.erfc,
        unary_samples(extra=((5, 8), -5.0, 5.0)),
        ref=_elementwise_math(math.erfc),
    ),
    OpInfo(
        "erfinv",
        dualad.erfinv,
        unary_samples(-0.9, 0.9, extra=((6, 6), -0.99, 0.99)),
        ref=_elementwise_math(_erfinv_scalar),
    ),
    # maxima, minima, clamp
    OpInfo("maximum", dualad.maximum, binary_samples(), ref=np.maximum, **PIECEWISE),
    OpInfo("minimum", dualad.minimum, binary_samples(), ref=np.minimum, **PIECEWISE),
    OpInfo("fmax", dualad.fmax, fmax_samples, ref=np.fmax, **PIECEWISE),
    OpInfo("fmin", dualad.fmin, fmax_samples, ref=np.fmin, **PIECEWISE),
    OpInfo("clamp", dualad.clamp, clamp_samples, ref=_clamp_ref, **PIECEWISE),
    # interpolation, sign transfer, cleanup
    OpInfo("lerp", dualad.lerp, lerp_samples, dtypes=ALL_DIFF, ref=_lerp_ref),
    OpInfo(
        "copysign",
        dualad.copysign,
        binary_samples(avoid=(0.0,), b_avoid=(0.0,), scalar=-1.5),
        ref=np.copysign,
        **PIECEWISE,
    ),
    OpInfo(
        "nan_to_num",
        dualad.nan_to_num,
        nan_to_num_samples,
        dtypes=ALL_DIFF,
        ref=np.nan_to_num,
    ),
    # absolute value and complex parts
    OpInfo("abs", dualad.abs, unary_samples(avoid=(0.0,)), ref=np.abs, **PIECEWISE),
    OpInfo(
        "abs_complex",
        dualad.abs,
        unary_samples(avoid=(0.0,), margin=0.3),
        ops=("abs",),
        dtypes=COMPLEX,
        ref=np.abs,
    ),
    OpInfo("angle", dualad.angle, angle_samples, dtypes=ALL_DIFF, ref=np.angle),
    OpInfo("conj", dualad.conj, unary_samples(), dtypes=ALL_DIFF, ref=np.conj),
    OpInfo("real", dualad.real, unary_samples(), dtypes=ALL_DIFF, ref=np.real),
    OpInfo("imag", dualad.imag, unary_samples(), dtypes=COMPLEX, ref=np.imag),
    OpInfo(
        "astype",
        lambda x: dualad.astype(x, _complex_of(x)),
        unary_samples(),
        dtypes=ALL_DIFF,
        ref=lambda x: x.astype(_complex_of(x)),
    ),
    OpInfo("clone", dualad.clone, unary_samples(), dtypes=ALL_DIFF, ref=np.copy),
    OpInfo(
        "to_device",
        lambda x: dualad.to_device_op(x, device="cpu"),
        unary_samples(),
        dtypes=ALL_DIFF,
        ref=np.copy,
    ),
    OpInfo("where", dualad.where, where_samples, dtypes=ALL_DIFF, ref=np.where),
    # no gradient
    # piecewise constant: zero derivatives (samples clear of the jumps)
    OpInfo("sign", dualad.sign, unary_samples(avoid=(0.0,)), ref=np.sign),
    OpInfo("sgn", dualad.sgn, unary_samples(avoid=(0.0,)), dtypes=ALL_DIFF, ref=_sgn_ref),
    OpInfo("floor", dualad.floor, piecewise_constant_samples(), ref=np.floor),
    OpInfo("ceil", dualad.ceil, piecewise_constant_samples(), ref=np.ceil),
    OpInfo("trunc", dualad.trunc, piecewise_constant_samples(), ref=np.trunc),
    OpInfo("round", dualad.round, round_diff_samples, ref=np.round),
    OpInfo("heaviside", dualad.heaviside, heaviside_diff_samples, ref=np.heaviside),
    # no gradient
    OpInfo(
        "floor_divide",
        dualad.floor_divide,
        binary_samples(b_avoid=(0.0,)),
        differentiable=False,
        ref=np.floor_divide,
    ),
    OpInfo("signbit", dualad.signbit, signbit_samples, differentiable=False, ref=np.signbit),
    OpInfo("isnan", dualad.isnan, predicate_samples, differentiable=False, ref=np.isnan),
    OpInfo("isinf", dualad.isinf, predicate_samples, differentiable=False, ref=np.isinf),
    OpInfo("isfinite", dualad.isfinite, predicate_samples, differentiable=False, ref=np.isfinite),
    *_no_gradient(
        comparison_samples,
        ("eq", np.equal),
        ("ne", np.not_equal),
        ("lt", np.less),
        ("le", np.less_equal),
        ("gt", np.greater),
        ("ge", np.greater_equal),
        ("logical_and", np.logical_and),
        ("logical_or", np.logical_or),
        ("logical_xor", np.logical_xor),
    ),
    *_no_gradient(unary_samples(), ("logical_not", np.logical_not)),
    *_no_gradient(
        int_samples,
        ("bitwise_and", np.bitwise_and),
        ("bitwise_or", np.bitwise_or),
        ("bitwise_xor", np.bitwise_xor),
        dtypes=_INTEGRAL,
    ),
    *_no_gradient(int_unary_samples, ("bitwise_not", np.invert), dtypes=_INTEGRAL),
    *_no_gradient(int_unary_samples, ("bitwise_count", np.bitwise_count), dtypes=("int64",)),
    *_no_gradient(int_samples, ("gcd", np.gcd), ("lcm", np.lcm), dtypes=("int64", "int32")),
    *_no_gradient(
        shift_samples,
        ("left_shift", np.left_shift),
        ("right_shift", np.right_shift),
        dtypes=("int64", "int32"),
    ),
    # floating-point representation
    OpInfo("ldexp", dualad.ldexp, ldexp_samples, ref=np.ldexp),
    # frac: derivative 1 between its jumps at the integers (the samples keep clear of them)
    OpInfo("frac", dualad.frac, piecewise_constant_samples(), ref=lambda x: np.modf(x)[0]),
    OpInfo(
        "frexp_exponent",
        _floating._frexp_exponent,
        unary_samples(),
        differentiable=False,
        ref=lambda x: np.frexp(x)[1],
    ),
    OpInfo("nextafter", dualad.nextafter, binary_samples(), differentiable=False, ref=np.nextafter),
    OpInfo("spacing", dualad.spacing, unary_samples(), differentiable=False, ref=np.spacing),
]
