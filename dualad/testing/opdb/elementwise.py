"""Op database entries for elementwise ops (``dualad/ops/elementwise.py``).

Sample inputs stay inside each op's domain and away from its kinks, poles and branch cuts (for
complex inputs the range of the real and imaginary parts is chosen per op), so that central
differences are accurate. References are NumPy (or ``math`` element by element where NumPy has
no such function) and keep the input's dtype, as the ops do.
"""

from __future__ import annotations

import math

import numpy as np

import dualad
from dualad.ops import activations as _act
from dualad.ops import trigonometric as _trig

from . import ALL_DIFF, OpInfo, SampleInput, away_from, uniform

COMPLEX = ("complex64", "complex128")
SHAPES = [(), (3,), (2, 3)]
BROADCAST_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((1, 3), (2, 1)), ((), (2, 2))]


# ---------------------------------------------------------------------------------------------
# sample generators


def _values(rng, shape, dtype, low, high, avoid, margin):
    if avoid is None:
        return uniform(rng, shape, dtype, low, high)
    return away_from(rng, shape, dtype, avoid, margin, low, high)


def unary_samples(low=-2.0, high=2.0, avoid=None, margin=0.2, complex_range=None, extra=None):
    """One sample per shape in ``SHAPES``; complex inputs draw both parts from
    ``complex_range`` (default: the real range). ``extra=(shape, low, high)`` adds one larger
    sample (exercises vectorised code paths)."""

    def samples(rng, dtype):
        lo, hi = (complex_range or (low, high)) if dtype.kind == "c" else (low, high)
        out = [SampleInput((_values(rng, s, dtype, lo, hi, avoid, margin),)) for s in SHAPES]
        if extra is not None:
            shape, extra_low, extra_high = extra
            x = _values(rng, shape, dtype, extra_low, extra_high, avoid, margin)
            out.append(SampleInput((x,), note=f"large {shape}"))
        return out

    return samples


def binary_samples(
    low=-2.0, high=2.0, b_low=None, b_high=None, scalar=1.5, avoid=None, b_avoid=None, margin=0.2
):
    """Broadcasting pairs plus tensor-scalar and scalar-tensor calls."""
    b_low = low if b_low is None else b_low
    b_high = high if b_high is None else b_high

    def samples(rng, dtype):
        out = []
        for sa, sb in BROADCAST_PAIRS:
            a = _values(rng, sa, dtype, low, high, avoid, margin)
            b = _values(rng, sb, dtype, b_low, b_high, b_avoid, margin)
            out.append(SampleInput((a, b), diff=(0, 1), note=f"{sa} with {sb}"))
        a = _values(rng, (2, 3), dtype, low, high, avoid, margin)
        out.append(SampleInput((a, scalar), diff=(0,), note="tensor-scalar"))
        b = _values(rng, (2, 3), dtype, b_low, b_high, b_avoid, margin)
        out.append(SampleInput((scalar, b), diff=(1,), note="scalar-tensor"))
        return out

    return samples


def _quotient_clear_of_integers(a, b, margin=0.15) -> bool:
    fraction = np.mod(np.asarray(a) / np.asarray(b), 1.0)
    return bool(np.all((fraction > margin) & (fraction < 1 - margin)))


def _divisors(rng, shape):
    return rng.uniform(0.8, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _remainder_samples(rng, dtype):
    """a / b stays away from integers, where remainder and fmod jump (rejection sampling)."""
    out = []
    cases = [(sa, sb, (0, 1)) for sa, sb in BROADCAST_PAIRS]
    cases += [((2, 3), None, (0,)), (None, (2, 3), (1,))]  # tensor-scalar, scalar-tensor
    for sa, sb, diff in cases:
        while True:
            a = 1.5 if sa is None else uniform(rng, sa, dtype, -5.0, 5.0)
            b = -1.25 if sb is None else _divisors(rng, sb).astype(dtype)
            if _quotient_clear_of_integers(a, b):
                break
        note = "scalar-tensor" if sa is None else "tensor-scalar" if sb is None else str(sa)
        out.append(SampleInput((a, b), diff=diff, note=note))
    return out


def _clamp_samples(rng, dtype):
    out = []
    x = away_from(rng, (2, 3), dtype, (-0.5, 0.5), 0.1)
    out.append(SampleInput((x, -0.5, 0.5), note="number bounds"))
    x = away_from(rng, (3,), dtype, (-0.3,), 0.1)
    out.append(SampleInput((x,), {"min": -0.3}, note="min only"))
    x = away_from(rng, (), dtype, (0.3,), 0.1)
    out.append(SampleInput((x,), {"max": 0.3}, note="max only"))
    # tensor bounds (broadcasting), x away from both
    low = uniform(rng, (3,), dtype, -1.5, -0.2)
    high = uniform(rng, (2, 1), dtype, 0.2, 1.5)
    x = uniform(rng, (2, 3), dtype, -2.0, 2.0)
    for index in np.ndindex(x.shape):
        while min(abs(x[index] - low[index[1]]), abs(x[index] - high[index[0], 0])) < 0.1:
            x[index] = uniform(rng, (), dtype, -2.0, 2.0)
    out.append(SampleInput((x, low, high), diff=(0, 1, 2), note="tensor bounds"))
    out.append(SampleInput((x,), {"max": high}, diff=(0, "max"), note="tensor max keyword"))
    # crossing bounds: the result is max everywhere, so only max gets a gradient
    low = uniform(rng, (3,), dtype, 0.5, 1.0)
    high = uniform(rng, (3,), dtype, -1.0, -0.5)
    x = uniform(rng, (3,), dtype, -2.0, 2.0)
    out.append(SampleInput((x, low, high), diff=(0, 1, 2), note="min > max"))
    return out


def _lerp_samples(rng, dtype):
    out = []
    for sa, sb in BROADCAST_PAIRS[:3]:
        a, b = uniform(rng, sa, dtype), uniform(rng, sb, dtype)
        out.append(SampleInput((a, b, 0.3), diff=(0, 1), note="weight 0.3"))
        out.append(SampleInput((a, b, 0.8), diff=(0, 1), note="weight 0.8"))
    a, b = uniform(rng, (2, 3), dtype), uniform(rng, (2, 3), dtype)
    weight = uniform(rng, (3,), dtype, -0.5, 1.5)  # both formulas, extrapolation too
    out.append(SampleInput((a, b, weight), diff=(0, 1, 2), note="tensor weight"))
    out.append(SampleInput((a, b), {"weight": weight}, diff=(0, 1, "weight"), note="keyword"))
    return out


def _where_samples(rng, dtype):
    out = []
    for sa, sb in BROADCAST_PAIRS:
        shape = np.broadcast_shapes(sa, sb)
        condition = rng.uniform(size=shape) < 0.5
        a, b = uniform(rng, sa, dtype), uniform(rng, sb, dtype)
        out.append(SampleInput((condition, a, b), diff=(1, 2), note=f"{sa} with {sb}"))
    condition = rng.uniform(size=(2, 3)) < 0.5
    out.append(SampleInput((condition, uniform(rng, (2, 3), dtype), 0.0), diff=(1,), note="num"))
    return out


def _angle_samples(rng, dtype):
    """Real: away from 0 (the jump from pi to 0). Complex: away from the negative real axis."""
    out = []
    for shape in SHAPES:
        if dtype.kind == "c":
            imag = rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
            x = np.asarray(rng.uniform(-2.0, 2.0, shape) + 1j * imag).astype(dtype)
        else:
            x = away_from(rng, shape, dtype, (0.0,), 0.2)
        out.append(SampleInput((x,)))
    return out


def _nan_to_num_samples(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    out = [SampleInput((x,), note="finite")]
    y = uniform(rng, (2, 4), dtype).reshape(-1)
    if dtype.kind == "c":
        y[[1, 5]] = complex(np.nan, np.nan)
        y[[2]] = complex(np.inf, np.inf)
    else:
        y[[1, 5]] = np.nan
        y[2], y[6] = np.inf, -np.inf
    y = y.reshape(2, 4)
    # finite replacements of moderate size: the default (the dtype's largest value) would swamp
    # the finite-difference loss
    kwargs = {"nan": 1.5, "posinf": 3.0, "neginf": -3.0}
    out.append(SampleInput((y,), kwargs, note="nan, inf, -inf replaced"))
    z = uniform(rng, (4,), dtype)
    z[0] = complex(np.nan, np.nan) if dtype.kind == "c" else np.nan  # both parts replaced
    out.append(SampleInput((z,), note="nan to 0"))
    return out


def _fmax_samples(rng, dtype):
    out = binary_samples()(rng, dtype)
    a, b = uniform(rng, (4,), dtype), uniform(rng, (4,), dtype)
    a[1] = np.nan  # ignored: the result (and the gradient) is b's there
    out.append(SampleInput((a, b), diff=(0, 1), note="nan in a"))
    return out


def _int_samples(rng, dtype):
    out = []
    for sa, sb in BROADCAST_PAIRS:
        if dtype.kind == "b":
            a, b = rng.uniform(size=sa) < 0.5, rng.uniform(size=sb) < 0.5
        else:
            a = rng.integers(-8, 8, sa).astype(dtype)
            b = rng.integers(-8, 8, sb).astype(dtype)
        out.append(SampleInput((np.asarray(a), np.asarray(b)), diff=()))
    return out


def _int_unary_samples(rng, dtype):
    return [SampleInput(sample.args[:1], diff=()) for sample in _int_samples(rng, dtype)]


def _predicate_samples(rng, dtype):
    x = uniform(rng, (2, 4), dtype).reshape(-1)
    x[1], x[3], x[6] = np.nan, np.inf, -np.inf
    return [SampleInput((x.reshape(2, 4),)), SampleInput((uniform(rng, (), dtype),))]


def _clear_of_jumps(rng, shape, dtype, low, high, step, offset=0.0, margin=0.2):
    """Values in about [low, high) at least ``margin * step`` from the jumps of a rounding to
    multiples of ``step`` (floor, ceil, trunc: the multiples; round: the half-way points, so
    ``offset=0.5`` shifts the values by half a step): central differences see a constant."""
    values = rng.uniform(low, high, shape) / step
    fraction = values - np.floor(values)
    values = np.floor(values) + np.clip(fraction, margin, 1 - margin) + offset
    return np.asarray(values * step).astype(dtype)


def _piecewise_constant_samples(offset=0.0):
    def samples(rng, dtype):
        return [
            SampleInput((_clear_of_jumps(rng, shape, dtype, -3.0, 3.0, 1.0, offset),))
            for shape in ((2, 4), ())
        ]

    return samples


def _round_diff_samples(rng, dtype):
    # round's jumps are at the half-way points: values shifted by half a step sit clear of them
    out = _piecewise_constant_samples(0.5)(rng, dtype)
    for decimals, step in ((2, 0.01), (-1, 10.0)):
        x = _clear_of_jumps(rng, (5,), dtype, -30.0, 30.0, step, 0.5)
        out.append(SampleInput((x,), {"decimals": decimals}, note=f"decimals={decimals}"))
    return out


def _heaviside_diff_samples(rng, dtype):
    # x clear of its jump at 0, where the output is constant in both arguments (the derivative
    # in ``values`` at x == 0 is checked in tests/test_small_fixes.py: central differences in x
    # would straddle the jump there)
    x = away_from(rng, (2, 4), dtype, (0.0,), 0.2)
    return [
        SampleInput((x, uniform(rng, (4,), dtype)), diff=(0, 1)),
        SampleInput((x, np.asarray(0.5, dtype)), diff=(0, 1)),
    ]


def _signbit_samples(rng, dtype):
    x = uniform(rng, (6,), dtype)
    x[:2] = [0.0, -0.0]
    return [SampleInput((x,)), SampleInput((uniform(rng, (2, 2), dtype),))]


def _comparison_samples(rng, dtype):
    out = binary_samples()(rng, dtype)
    a = uniform(rng, (4,), dtype)
    out.append(SampleInput((a, a.copy()), diff=(0, 1), note="equal values"))
    return out


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
    OpInfo(
        "remainder",
        dualad.remainder,
        _remainder_samples,
        ref=np.remainder,
        **PIECEWISE,
    ),
    OpInfo("fmod", dualad.fmod, _remainder_samples, ref=np.fmod, **PIECEWISE),
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
    OpInfo("fmax", dualad.fmax, _fmax_samples, ref=np.fmax, **PIECEWISE),
    OpInfo("fmin", dualad.fmin, _fmax_samples, ref=np.fmin, **PIECEWISE),
    OpInfo("clamp", dualad.clamp, _clamp_samples, ref=_clamp_ref, **PIECEWISE),
    # interpolation, sign transfer, cleanup
    OpInfo("lerp", dualad.lerp, _lerp_samples, dtypes=ALL_DIFF, ref=_lerp_ref),
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
        _nan_to_num_samples,
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
    OpInfo("angle", dualad.angle, _angle_samples, dtypes=ALL_DIFF, ref=np.angle),
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
    OpInfo("where", dualad.where, _where_samples, dtypes=ALL_DIFF, ref=np.where),
    # no gradient
    # piecewise constant: zero derivatives (samples clear of the jumps)
    OpInfo("sign", dualad.sign, unary_samples(avoid=(0.0,)), ref=np.sign),
    OpInfo("sgn", dualad.sgn, unary_samples(avoid=(0.0,)), dtypes=ALL_DIFF, ref=_sgn_ref),
    OpInfo("floor", dualad.floor, _piecewise_constant_samples(), ref=np.floor),
    OpInfo("ceil", dualad.ceil, _piecewise_constant_samples(), ref=np.ceil),
    OpInfo("trunc", dualad.trunc, _piecewise_constant_samples(), ref=np.trunc),
    OpInfo("round", dualad.round, _round_diff_samples, ref=np.round),
    OpInfo("heaviside", dualad.heaviside, _heaviside_diff_samples, ref=np.heaviside),
    # no gradient
    # no gradient
    OpInfo(
        "floor_divide",
        dualad.floor_divide,
        binary_samples(b_avoid=(0.0,)),
        differentiable=False,
        ref=np.floor_divide,
    ),
    OpInfo("signbit", dualad.signbit, _signbit_samples, differentiable=False, ref=np.signbit),
    OpInfo("isnan", dualad.isnan, _predicate_samples, differentiable=False, ref=np.isnan),
    OpInfo("isinf", dualad.isinf, _predicate_samples, differentiable=False, ref=np.isinf),
    OpInfo("isfinite", dualad.isfinite, _predicate_samples, differentiable=False, ref=np.isfinite),
    *(
        OpInfo(name, getattr(dualad, name), _comparison_samples, differentiable=False, ref=ref)
        for name, ref in (
            ("eq", np.equal),
            ("ne", np.not_equal),
            ("lt", np.less),
            ("le", np.less_equal),
            ("gt", np.greater),
            ("ge", np.greater_equal),
            ("logical_and", np.logical_and),
            ("logical_or", np.logical_or),
            ("logical_xor", np.logical_xor),
        )
    ),
    OpInfo(
        "logical_not",
        dualad.logical_not,
        unary_samples(),
        differentiable=False,
        ref=np.logical_not,
    ),
    *(
        OpInfo(
            name,
            getattr(dualad, name),
            _int_samples,
            dtypes=("int64", "bool"),
            differentiable=False,
            ref=ref,
        )
        for name, ref in (
            ("bitwise_and", np.bitwise_and),
            ("bitwise_or", np.bitwise_or),
            ("bitwise_xor", np.bitwise_xor),
        )
    ),
    OpInfo(
        "bitwise_not",
        dualad.bitwise_not,
        _int_unary_samples,
        dtypes=("int64", "bool"),
        differentiable=False,
        ref=np.invert,
    ),
]
