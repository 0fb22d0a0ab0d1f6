"""Sample inputs of the elementwise op database entries (``elementwise.py``): values inside
each op's domain and away from its kinks, poles and branch cuts, so that central differences are
accurate."""

from __future__ import annotations

import numpy as np

from . import SampleInput, away_from, uniform

SHAPES = [(), (3,), (2, 3)]
BROADCAST_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((1, 3), (2, 1)), ((), (2, 2))]


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


def remainder_samples(rng, dtype):
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


def clamp_samples(rng, dtype):
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


def lerp_samples(rng, dtype):
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


def where_samples(rng, dtype):
    out = []
    for sa, sb in BROADCAST_PAIRS:
        shape = np.broadcast_shapes(sa, sb)
        condition = rng.uniform(size=shape) < 0.5
        a, b = uniform(rng, sa, dtype), uniform(rng, sb, dtype)
        out.append(SampleInput((condition, a, b), diff=(1, 2), note=f"{sa} with {sb}"))
    condition = rng.uniform(size=(2, 3)) < 0.5
    out.append(SampleInput((condition, uniform(rng, (2, 3), dtype), 0.0), diff=(1,), note="num"))
    return out


def angle_samples(rng, dtype):
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


def nan_to_num_samples(rng, dtype):
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


def fmax_samples(rng, dtype):
    out = binary_samples()(rng, dtype)
    a, b = uniform(rng, (4,), dtype), uniform(rng, (4,), dtype)
    a[1] = np.nan  # ignored: the result (and the gradient) is b's there
    out.append(SampleInput((a, b), diff=(0, 1), note="nan in a"))
    return out


def int_samples(rng, dtype):
    out = []
    for sa, sb in BROADCAST_PAIRS:
        if dtype.kind == "b":
            a, b = rng.uniform(size=sa) < 0.5, rng.uniform(size=sb) < 0.5
        else:
            a = rng.integers(-8, 8, sa).astype(dtype)
            b = rng.integers(-8, 8, sb).astype(dtype)
        out.append(SampleInput((np.asarray(a), np.asarray(b)), diff=()))
    return out


def int_unary_samples(rng, dtype):
    return [SampleInput(sample.args[:1], diff=()) for sample in int_samples(rng, dtype)]


def predicate_samples(rng, dtype):
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


def piecewise_constant_samples(offset=0.0):
    def samples(rng, dtype):
        return [
            SampleInput((_clear_of_jumps(rng, shape, dtype, -3.0, 3.0, 1.0, offset),))
            for shape in ((2, 4), ())
        ]

    return samples


def round_diff_samples(rng, dtype):
    # round's jumps are at the half-way points: values shifted by half a step sit clear of them
    out = piecewise_constant_samples(0.5)(rng, dtype)
    for decimals, step in ((2, 0.01), (-1, 10.0)):
        x = _clear_of_jumps(rng, (5,), dtype, -30.0, 30.0, step, 0.5)
        out.append(SampleInput((x,), {"decimals": decimals}, note=f"decimals={decimals}"))
    return out


def heaviside_diff_samples(rng, dtype):
    # x clear of its jump at 0, where the output is constant in both arguments (the derivative
    # in ``values`` at x == 0 is checked in tests/test_small_fixes.py: central differences in x
    # would straddle the jump there)
    x = away_from(rng, (2, 4), dtype, (0.0,), 0.2)
    return [
        SampleInput((x, uniform(rng, (4,), dtype)), diff=(0, 1)),
        SampleInput((x, np.asarray(0.5, dtype)), diff=(0, 1)),
    ]


def signbit_samples(rng, dtype):
    x = uniform(rng, (6,), dtype)
    x[:2] = [0.0, -0.0]
    return [SampleInput((x,)), SampleInput((uniform(rng, (2, 2), dtype),))]


def comparison_samples(rng, dtype):
    out = binary_samples()(rng, dtype)
    a = uniform(rng, (4,), dtype)
    out.append(SampleInput((a, a.copy()), diff=(0, 1), note="equal values"))
    return out


def ldexp_samples(rng, dtype):
    """Mantissas of ``dtype`` with integer exponents (an array, broadcast, a Python int)."""
    out = []
    for sa, sb in (((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2,))):
        x = uniform(rng, sa, dtype, -2.0, 2.0)
        n = rng.integers(-4, 5, sb).astype("int32")
        out.append(SampleInput((x, n), diff=(0,), note=f"{sa} with {sb}"))
    out.append(SampleInput((uniform(rng, (3,), dtype, -2.0, 2.0), 3), diff=(0,), note="int"))
    return out


def shift_samples(rng, dtype):
    """Integers and shift counts in [0, 6) (NumPy leaves negative counts undefined)."""
    out = []
    for sa, sb in BROADCAST_PAIRS:
        a = rng.integers(-8, 8, sa).astype(dtype)
        b = rng.integers(0, 6, sb).astype(dtype)
        out.append(SampleInput((np.asarray(a), np.asarray(b)), diff=()))
    return out
