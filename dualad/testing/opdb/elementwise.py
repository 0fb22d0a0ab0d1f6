"""Op database entries for elementwise ops."""

from __future__ import annotations

import numpy as np

import dualad

from . import ALL_DIFF, OpInfo, SampleInput, away_from, uniform

SHAPES = [(), (3,), (2, 3)]
BROADCAST_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((1, 3), (2, 1)), ((), (2, 2))]


def unary_samples(low=-2.0, high=2.0, avoid=None, margin=0.2):
    def samples(rng, dtype):
        out = []
        for shape in SHAPES:
            if avoid is None:
                x = uniform(rng, shape, dtype, low, high)
            else:
                x = away_from(rng, shape, dtype, avoid, margin, low, high)
            out.append(SampleInput((x,)))
        return out

    return samples


def binary_samples(low=-2.0, high=2.0, b_low=None, b_high=None, scalar=1.5):
    def samples(rng, dtype):
        out = []
        for sa, sb in BROADCAST_PAIRS:
            a = uniform(rng, sa, dtype, low, high)
            b = uniform(rng, sb, dtype, b_low or low, b_high or high)
            out.append(SampleInput((a, b), diff=(0, 1)))
        a = uniform(rng, (2, 3), dtype, low, high)
        out.append(SampleInput((a, scalar), diff=(0,), note="tensor-scalar"))
        out.append(SampleInput((scalar, a), diff=(1,), note="scalar-tensor"))
        return out

    return samples


OPS = [
    OpInfo("add", dualad.add, binary_samples(), dtypes=ALL_DIFF, ref=np.add),
    OpInfo("sub", dualad.sub, binary_samples(), dtypes=ALL_DIFF, ref=np.subtract),
    OpInfo("mul", dualad.mul, binary_samples(), dtypes=ALL_DIFF, ref=np.multiply),
    OpInfo("div", dualad.div, binary_samples(b_low=0.5, b_high=2.0), dtypes=ALL_DIFF,
           ref=np.divide),
    OpInfo("pow", dualad.pow, binary_samples(low=0.5, high=2.0, scalar=2.0), ref=np.power),
    OpInfo("neg", dualad.neg, unary_samples(), dtypes=ALL_DIFF, ref=np.negative),
    OpInfo("reciprocal", dualad.reciprocal, unary_samples(0.5, 2.0), dtypes=ALL_DIFF),
    OpInfo("square", dualad.square, unary_samples(), dtypes=ALL_DIFF, ref=np.square),
    OpInfo("sqrt", dualad.sqrt, unary_samples(0.5, 2.0), dtypes=ALL_DIFF, ref=np.sqrt),
    OpInfo("rsqrt", dualad.rsqrt, unary_samples(0.5, 2.0)),
    OpInfo("exp", dualad.exp, unary_samples(), dtypes=ALL_DIFF, ref=np.exp),
    OpInfo("exp2", dualad.exp2, unary_samples(), ref=np.exp2),
    OpInfo("expm1", dualad.expm1, unary_samples(), ref=np.expm1),
    OpInfo("log", dualad.log, unary_samples(0.5, 2.0), dtypes=ALL_DIFF, ref=np.log),
    OpInfo("log2", dualad.log2, unary_samples(0.5, 2.0), ref=np.log2),
    OpInfo("log10", dualad.log10, unary_samples(0.5, 2.0), ref=np.log10),
    OpInfo("log1p", dualad.log1p, unary_samples(-0.5, 2.0), ref=np.log1p),
    OpInfo("sin", dualad.sin, unary_samples(), dtypes=ALL_DIFF, ref=np.sin),
    OpInfo("cos", dualad.cos, unary_samples(), dtypes=ALL_DIFF, ref=np.cos),
    OpInfo("tan", dualad.tan, unary_samples(-1.2, 1.2), dtypes=ALL_DIFF, ref=np.tan),
    OpInfo("tanh", dualad.tanh, unary_samples(), dtypes=ALL_DIFF, ref=np.tanh),
    OpInfo("sinh", dualad.sinh, unary_samples(), dtypes=ALL_DIFF, ref=np.sinh),
    OpInfo("cosh", dualad.cosh, unary_samples(), dtypes=ALL_DIFF, ref=np.cosh),
    OpInfo("abs", dualad.abs, unary_samples(avoid=(0.0,)), twice_differentiable=False,
           ref=np.abs),
    OpInfo("remainder", dualad.remainder, binary_samples(0.1, 5.0, 1.1, 2.0),
           twice_differentiable=False, skips={"fd": "kinks at multiples of b"}),
]
