"""Op database entries of ``dualad.nn.functional``: softmax and log_softmax, the activations,
and the losses and layers made of ops (each entry names the registry ops it exercises).

The references are NumPy written here, independently of the impls. Samples keep clear of the
activations' kinks (0 for the rectifiers, the clamp bounds of hardtanh).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special as sp

import dualad
import dualad.nn.functional as F

from . import OpInfo, SampleInput, away_from, uniform
from ._elementwise_samples import unary_samples
from .nn_composites import layer_entries, loss_entries
from .nn_extras import more_loss_entries

PIECEWISE = {"twice_differentiable": False}
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946

# (shape, dim) of the softmax samples
SOFTMAX_CASES = [((), 0), ((5,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1)]


def softmax_samples(rng, dtype):
    out = []
    for shape, dim in SOFTMAX_CASES:
        x = uniform(rng, shape, dtype, -3.0, 3.0)
        out.append(SampleInput((x, dim), note=f"{shape} dim={dim}"))
    return out


def np_softmax(x, dim):
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def np_log_softmax(x, dim):
    if x.ndim == 0:
        return np.zeros_like(x)
    z = x - np.max(x, axis=dim, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=dim, keepdims=True))


def np_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + sp.erf(x / math.sqrt(2)))


def np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * (np.exp(np.minimum(x, 0)) - 1))


def prelu_samples(rng, dtype):
    out = []
    for shape, channels in [((3, 4), 4), ((2, 3, 5), 3), ((2, 3), 1), ((5,), 5)]:
        x = away_from(rng, shape, dtype, (0.0,), 0.15)
        w = uniform(rng, (channels,), dtype, 0.1, 0.9)
        out.append(SampleInput((x, w), diff=(0, 1), note=f"{shape} {channels} slopes"))
    return out


def np_prelu(x, w):
    if w.size > 1 and x.ndim >= 2:
        w = w.reshape((-1,) + (1,) * (x.ndim - 2))
    elif w.size == 1:
        w = w.reshape(())
    return np.where(x > 0, x, w * x)


def glu_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (4,), dtype),), note="(4,)"),
        SampleInput((uniform(rng, (3, 4, 2), dtype), 1), note="(3, 4, 2) dim 1"),
    ]


def np_glu(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return a / (1 + np.exp(-b))


def _activation(name, ref, low=-3.0, high=3.0, avoid=None, fn=None, ops=None, **options):
    return OpInfo(
        name,
        fn or getattr(dualad, name),
        unary_samples(low, high, avoid=avoid, margin=0.15, extra=((4, 5), low, high)),
        ops=ops or (name,),
        ref=ref,
        **options,
    )


OPS = [
    OpInfo("softmax", dualad.softmax, softmax_samples, ref=np_softmax),
    OpInfo("log_softmax", dualad.log_softmax, softmax_samples, ref=np_log_softmax),
    OpInfo(
        "softmax_dtype",
        lambda x, dim: F.softmax(x, dim, dtype=dualad.float64),
        softmax_samples,
        ops=("softmax", "astype"),
        ref=lambda x, dim: np_softmax(x.astype(np.float64), dim),
        skips={"float32": "the output is float64 by request"},
    ),
    _activation("gelu", np_gelu),
    _activation(
        "gelu_tanh",
        lambda x: np_gelu(x, "tanh"),
        fn=lambda x: dualad.gelu(x, approximate="tanh"),
        ops=("gelu",),
    ),
    _activation("silu", lambda x: x / (1 + np.exp(-x))),
    _activation("mish", lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    _activation("logsigmoid", lambda x: -np.log1p(np.exp(-x)), low=-8.0, high=8.0),
    _activation("tanhshrink", lambda x: x - np.tanh(x)),
    _activation("softsign", lambda x: x / (1 + np.abs(x)), avoid=(0.0,)),
    # the exponential branch of elu/selu/celu meets the linear one at 0: a kink of the second
    # derivative (of the first too when alpha != 1), so the samples keep clear of 0
    _activation("elu", np_elu, avoid=(0.0,)),
    _activation(
        "elu_alpha",
        lambda x: np_elu(x, 0.5),
        avoid=(0.0,),
        fn=lambda x: dualad.elu(x, alpha=0.5),
        ops=("elu",),
    ),
    _activation("selu", lambda x: SELU_SCALE * np_elu(x, SELU_ALPHA), avoid=(0.0,), ops=("elu",)),
    _activation(
        "celu",
        lambda x: np.maximum(x, 0) + np.minimum(0, 2.0 * np.expm1(np.minimum(x, 0) / 2.0)),
        avoid=(0.0,),
        fn=lambda x: dualad.celu(x, alpha=2.0),
        ops=("elu",),
    ),
    _activation(
        "leaky_relu",
        lambda x: np.where(x > 0, x, 0.2 * x),
        avoid=(0.0,),
        fn=lambda x: dualad.leaky_relu(x, 0.2),
        **PIECEWISE,
    ),
    _activation(
        "hardtanh",
        lambda x: np.clip(x, -1.0, 1.0),
        avoid=(-1.0, 1.0),
        fn=lambda x: dualad.hardtanh(x),
        **PIECEWISE,
    ),
    _activation(
        "relu6",
        lambda x: np.clip(x, 0.0, 6.0),
        low=-2.0,
        high=8.0,
        avoid=(0.0, 6.0),
        ops=("hardtanh",),
        **PIECEWISE,
    ),
    # the piecewise activations: samples clear of their kinks
    _activation(
        "hardsigmoid",
        lambda x: np.clip(x / 6 + 0.5, 0.0, 1.0),
        low=-5.0,
        high=5.0,
        avoid=(-3.0, 3.0),
        fn=F.hardsigmoid,
        ops=("hardsigmoid",),
        **PIECEWISE,
    ),
    _activation(
        "hardswish",
        lambda x: x * np.clip(x + 3, 0.0, 6.0) / 6,
        low=-5.0,
        high=5.0,
        avoid=(-3.0, 3.0),
        fn=F.hardswish,
        ops=("hardswish",),
        **PIECEWISE,
    ),
    _activation(
        "hardshrink",
        lambda x: np.where(np.abs(x) > 0.5, x, 0.0),
        avoid=(-0.5, 0.5),
        fn=F.hardshrink,
        ops=("hardshrink",),
        **PIECEWISE,
    ),
    _activation(
        "softshrink",
        lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.7, 0.0),
        avoid=(-0.7, 0.7),
        fn=lambda x: F.softshrink(x, 0.7),
        ops=("softshrink",),
        **PIECEWISE,
    ),
    _activation(
        "threshold",
        lambda x: np.where(x > 0.3, x, -2.0),
        avoid=(0.3,),
        fn=lambda x: F.threshold(x, 0.3, -2.0),
        ops=("threshold",),
        **PIECEWISE,
    ),
    OpInfo("prelu", F.prelu, prelu_samples, ref=np_prelu, **PIECEWISE),
    OpInfo("glu", F.glu, glu_samples, ref=np_glu),
    *loss_entries(),
    *layer_entries(),
    *more_loss_entries(),
]
