"""Elementwise ops: values, derivatives (VJP, JVP, second order), batching rules, PyTorch's
conventions at kinks, dtype rules, the NumPy special functions, methods and errors.

The generic checks are driven by the op database entries of ``dualad.testing.opdb.elementwise``
(each op's samples stay inside its domain and away from kinks). Finite differences here are
written independently of ``dualad.testing._numeric``: each input element (its real and imaginary
parts separately for complex inputs) is perturbed by +-1e-6 and the real loss
``L = Re(sum(conj(ct) * f(x)))`` is differenced; PyTorch's convention says the gradient of a
complex input is ``dL/dRe + 1j * dL/dIm``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dualad
from dualad._dispatch import REGISTRY, Level, apply, suspended
from dualad._state import pop_level, push_level
from dualad.testing.opdb import elementwise as opdb

ENTRIES = opdb.OPS
NEW_OPS = [
    "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh", "sigmoid", "logit", "relu",
    "softplus", "erf", "erfc", "erfinv", "hypot", "maximum", "minimum", "fmax", "fmin", "clamp",
    "round", "fmod", "angle", "lerp", "xlogy", "logaddexp", "logaddexp2", "sinc", "deg2rad",
    "rad2deg", "nan_to_num", "copysign", "signbit", "heaviside",
]  # fmt: skip
EPS = 1e-6
HIGH = {"f": "float64", "c": "complex128"}


def _id(info):
    return info.name


def _high_precision_dtypes(info):
    return [d for d in info.dtypes if d in ("float64", "complex128")]


def _cases(select, dtypes=_high_precision_dtypes):
    params = []
    for info in ENTRIES:
        if not select(info):
            continue
        for dtype in dtypes(info):
            for index, sample in enumerate(info.sample_inputs(dtype)):
                params.append(pytest.param(info, sample, id=f"{info.name}-{dtype}-{index}"))
    return params


DIFF_CASES = _cases(lambda info: info.differentiable)
GRADGRAD_CASES = _cases(lambda info: info.differentiable and info.twice_differentiable)
REF_CASES = _cases(
    lambda info: info.ref is not None,
    dtypes=lambda info: [d for d in info.dtypes if d in ("float64", "complex128", "int64", "bool")],
)
FLOAT32_CASES = _cases(
    lambda info: info.differentiable, dtypes=lambda info: [d for d in info.dtypes if d == "float32"]
)


# ---------------------------------------------------------------------------------------------
# helpers


def _numpy(t):
    return np.asarray(t.detach()._data) if isinstance(t, dualad.Tensor) else np.asarray(t)


def _call(info, sample, leaves=None, requires_grad=False):
    """Run the entry on ``sample`` (with its differentiable arrays replaced by ``leaves``)."""
    if leaves is not None:
        sample = sample.with_leaves(leaves)
    args, kwargs, tensors = sample.tensors(requires_grad=requires_grad)
    return info.fn(*args, **kwargs), tensors


def _real_inner(ct, out) -> float:
    return float(np.real(np.sum(np.conj(ct) * out)))


def _finite_difference_gradient(loss, arrays):
    """Central differences of the real function ``loss(list_of_arrays)`` per element; complex
    arrays get ``dL/dRe + 1j dL/dIm``."""
    grads = []
    for k, array in enumerate(arrays):
        grad = np.zeros(array.shape, dtype=array.dtype)
        units = (1.0, 1j) if array.dtype.kind == "c" else (1.0,)
        for index in np.ndindex(array.shape):
            for unit in units:
                plus = [a.copy() for a in arrays]
                minus = [a.copy() for a in arrays]
                plus[k][index] += EPS * unit
                minus[k][index] -= EPS * unit
                grad[index] += (loss(plus) - loss(minus)) / (2 * EPS) * unit
        grads.append(grad)
    return grads


def _random_like(rng, array):
    array = np.asarray(array)
    values = rng.uniform(-1, 1, array.shape)
    if array.dtype.kind == "c":
        values = values + 1j * rng.uniform(-1, 1, array.shape)
    return np.asarray(values).astype(array.dtype)


def _assert_close(actual, expected, what, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(
        np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol, equal_nan=True, err_msg=what
    )


def _first_order(info, sample, leaves, cotangent, create_graph=False):
    out, tensors = _call(info, sample, leaves, requires_grad=True)
    grads = dualad.autograd.grad(
        out, tensors, dualad.tensor(cotangent), create_graph=create_graph, allow_unused=True
    )
    return out, tensors, grads


def _as_arrays(grads, like):
    return [np.zeros(a.shape, a.dtype) if g is None else _numpy(g) for g, a in zip(grads, like)]


# ---------------------------------------------------------------------------------------------
# forward values against NumPy


@pytest.mark.parametrize("info, sample", REF_CASES)
def test_forward_matches_numpy(info, sample):
    expected = np.asarray(info.ref(*sample.args, **sample.kwargs))
    for requires_grad in (False, True):
        out, _ = _call(info, sample, requires_grad=requires_grad and info.differentiable)
        actual = _numpy(out)
        assert actual.shape == expected.shape
        assert actual.dtype == expected.dtype, f"{info.name}: {actual.dtype} != {expected.dtype}"
        if expected.dtype.kind in "fc":
            _assert_close(actual, expected, info.name, rtol=1e-12, atol=1e-14)
        else:
            np.testing.assert_array_equal(actual, expected)


# ---------------------------------------------------------------------------------------------
# VJP against central differences (complex: real and imaginary parts separately)


@pytest.mark.parametrize("info, sample", DIFF_CASES)
def test_vjp_matches_finite_differences(info, sample):
    rng = np.random.default_rng(0)
    arrays = sample.leaves()
    out, _ = _call(info, sample)
    cotangent = _random_like(rng, _numpy(out))
    _, _, grads = _first_order(info, sample, arrays, cotangent)
    actual = _as_arrays(grads, arrays)
    for grad, array in zip(grads, arrays):
        if grad is not None:
            assert grad.shape == array.shape and grad.dtype == array.dtype

    def loss(values):
        with dualad.no_grad():
            return _real_inner(cotangent, _numpy(_call(info, sample, values)[0]))

    expected = _finite_difference_gradient(loss, arrays)
    for k, (a, e) in enumerate(zip(actual, expected)):
        if arrays[k].dtype.kind == "c":
            # the two halves of PyTorch's convention, checked separately
            _assert_close(a.real, e.real, f"{info.name}: d/dRe of input {k}", info.rtol, info.atol)
            _assert_close(a.imag, e.imag, f"{info.name}: d/dIm of input {k}", info.rtol, info.atol)
        else:
            _assert_close(a, e, f"{info.name}: gradient of input {k}", info.rtol, info.atol)


# ---------------------------------------------------------------------------------------------
# second order: d/dx <v, VJP(x, ct)> against differences of the first-order VJP


@pytest.mark.parametrize("info, sample", GRADGRAD_CASES)
def test_grad_of_grad_matches_finite_differences(info, sample):
    rng = np.random.default_rng(1)
    arrays = sample.leaves()
    out, _ = _call(info, sample)
    cotangent = _random_like(rng, _numpy(out))
    directions = [_random_like(rng, a) for a in arrays]
    _, tensors, grads = _first_order(info, sample, arrays, cotangent, create_graph=True)
    connected = [k for k, g in enumerate(grads) if g is not None and g.requires_grad]
    if connected:
        second = dualad.autograd.grad(
            [grads[k] for k in connected],
            tensors,
            [dualad.tensor(directions[k]) for k in connected],
            allow_unused=True,
        )
    else:
        second = [None] * len(tensors)
    actual = _as_arrays(second, arrays)

    def second_order_loss(values):
        _, _, first = _first_order(info, sample, values, cotangent)
        return sum(_real_inner(v, g) for v, g in zip(directions, _as_arrays(first, values)))

    expected = _finite_difference_gradient(second_order_loss, arrays)
    for k, (a, e) in enumerate(zip(actual, expected)):
        _assert_close(a, e, f"{info.name}: second-order gradient of input {k}", 1e-4, 1e-5)


# ---------------------------------------------------------------------------------------------
# float32: values and gradients stay float32 and agree with float64


@pytest.mark.parametrize("info, sample", FLOAT32_CASES)
def test_float32_values_and_gradients(info, sample):
    rng = np.random.default_rng(2)
    arrays = sample.leaves()
    out, _ = _call(info, sample)
    assert out.dtype in (np.float32, np.complex64), f"{info.name}: float32 gave {out.dtype}"
    cotangent = _random_like(rng, _numpy(out))
    _, _, grads = _first_order(info, sample, arrays, cotangent)
    high = sample.upcast()
    high_out, _ = _call(info, high)
    high_cotangent = cotangent.astype(np.result_type(cotangent.dtype, np.float64))
    _, _, high_grads = _first_order(info, high, high.leaves(), high_cotangent)
    scale = max(1.0, float(np.nanmax(np.abs(_numpy(high_out)), initial=0.0)))
    _assert_close(_numpy(out), _numpy(high_out), f"{info.name} value", 1e-5, 1e-6 * scale)
    for grad, high_grad in zip(grads, high_grads):
        if grad is None:
            assert high_grad is None
            continue
        assert grad.dtype == np.float32, f"{info.name}: float32 gradient is {grad.dtype}"
        expected = _numpy(high_grad)
        scale = max(1e-2, float(np.max(np.abs(expected), initial=0.0)))
        _assert_close(_numpy(grad), expected, f"{info.name} gradient", 1e-3, 1e-3 * scale)


# ---------------------------------------------------------------------------------------------
# JVP and batching rules, called directly on the registry ops each entry runs


class _Recorder(Level):
    """A level that owns the sample's tensors and records the ops called on them."""

    __slots__ = ("calls", "owned")

    def __init__(self, owned):
        self.owned = owned
        self.calls = []

    def owns(self, value):
        return any(value is t for t in self.owned)

    def process(self, op, args, params):
        self.calls.append((op, args, params))
        with suspended(self):
            return apply(op, *args, **params)


def _recorded_calls(info, sample):
    args, kwargs, _ = sample.tensors(requires_grad=False)
    owned = [a for a in (*args, *kwargs.values()) if isinstance(a, dualad.Tensor)]
    recorder = _Recorder(owned)
    push_level(recorder)
    try:
        info.fn(*args, **kwargs)
    finally:
        pop_level(recorder)
    return recorder.calls


def _perturbed(args, tangents, step):
    return [
        a if t is None else dualad.tensor(_numpy(a) + step * _numpy(t))
        for a, t in zip(args, tangents)
    ]


@pytest.mark.parametrize("info, sample", DIFF_CASES)
def test_jvp_rule_matches_finite_differences(info, sample):
    rng = np.random.default_rng(3)
    calls = _recorded_calls(info, sample)
    if not calls:  # conj/real of a real tensor: the input itself, no op, nothing to check
        args, kwargs, _ = sample.tensors(requires_grad=False)
        assert info.fn(*args, **kwargs) is args[0], f"{info.name}: no registry op was called"
        return
    for op, args, params in calls:
        if not op.differentiable:
            continue
        assert op.jvp is not None, f"{op.name} has no JVP rule"
        out = apply(op, *args, **params)
        floating = [
            k for k, a in enumerate(args) if isinstance(a, dualad.Tensor) and a.dtype.kind in "fc"
        ]
        # all tangents at once, then each alone (the others None: symbolic zeros)
        for chosen in [floating, *([k] for k in floating)] if len(floating) > 1 else [floating]:
            tangents = [
                dualad.tensor(_random_like(rng, _numpy(a))) if k in chosen else None
                for k, a in enumerate(args)
            ]
            tangent = op.jvp(tuple(tangents), (out,), tuple(args), params)
            assert tuple(tangent.shape) == tuple(out.shape), f"{op.name}: tangent shape"
            assert tangent.dtype == out.dtype, f"{op.name}: tangent {tangent.dtype} for {out.dtype}"
            plus = apply(op, *_perturbed(args, tangents, EPS), **params)
            minus = apply(op, *_perturbed(args, tangents, -EPS), **params)
            expected = (_numpy(plus) - _numpy(minus)) / (2 * EPS)
            _assert_close(_numpy(tangent), expected, f"{op.name} JVP (tangents at {chosen})")


def _stack_copies(value, bdim, copies):
    array = _numpy(value)
    if array.dtype.kind in "fc":
        versions = [array + 0.01 * i for i in range(copies)]
    else:
        versions = [np.roll(array.reshape(-1), i).reshape(array.shape) for i in range(copies)]
    return versions, dualad.tensor(np.stack(versions, axis=bdim))


@pytest.mark.parametrize("info", [e for e in ENTRIES if e.name not in ("to_device",)], ids=_id)
def test_batch_rule_matches_a_loop(info):
    rng = np.random.default_rng(4)
    dtype = "float64" if "float64" in info.dtypes else info.dtypes[0]
    for sample in info.sample_inputs(dtype):
        for op, args, params in _recorded_calls(info, sample):
            assert op.batch is not None, f"{op.name} has no batching rule"
            tensor_positions = [k for k, a in enumerate(args) if isinstance(a, dualad.Tensor)]
            for trial in range(2):
                bdims = [
                    None if k not in tensor_positions else int(rng.integers(0, args[k].ndim + 1))
                    for k in range(len(args))
                ]
                if trial == 1 and len(tensor_positions) > 1:
                    bdims[tensor_positions[0]] = None  # mix batched and unbatched arguments
                batched, per_example = list(args), [list(args) for _ in range(3)]
                for k, bdim in enumerate(bdims):
                    if bdim is None:
                        continue
                    versions, batched[k] = _stack_copies(args[k], bdim, 3)
                    for i in range(3):
                        per_example[i][k] = dualad.tensor(versions[i])
                out, out_bdim = op.batch(op, tuple(batched), tuple(bdims), params)
                expected = np.stack(
                    [_numpy(apply(op, *example, **params)) for example in per_example]
                )
                actual = np.moveaxis(_numpy(out), out_bdim, 0)
                _assert_close(actual, expected, f"{op.name} batched with bdims {bdims}", 1e-12, 0)


# ---------------------------------------------------------------------------------------------
# PyTorch's conventions at kinks and ties


def _grad(fn, *values, cotangent=None):
    tensors = [dualad.tensor(v, requires_grad=True) for v in values]
    out = fn(*tensors)
    ct = dualad.ones_like(out) if cotangent is None else dualad.tensor(cotangent)
    grads = dualad.autograd.grad(out, tensors, ct, allow_unused=True)
    return [None if g is None else _numpy(g) for g in grads]


def test_relu_and_abs_have_zero_gradient_at_zero():
    (g,) = _grad(dualad.relu, [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])
    (g,) = _grad(dualad.abs, [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(g, [-1.0, 0.0, 1.0])
    (g,) = _grad(dualad.abs, np.array([0j, 3 + 4j]))
    np.testing.assert_allclose(g, [0.0, 0.6 + 0.8j])


def test_maximum_and_minimum_split_ties_equally():
    a, b = [1.0, 2.0, 3.0], [1.0, 1.0, 4.0]
    ga, gb = _grad(dualad.maximum, a, b)
    np.testing.assert_array_equal(ga, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(gb, [0.5, 0.0, 1.0])
    ga, gb = _grad(dualad.minimum, a, b)
    np.testing.assert_array_equal(ga, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gb, [0.5, 1.0, 0.0])
    # against a Python scalar
    (g,) = _grad(lambda x: dualad.maximum(x, 1.0), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.5, 1.0])


def test_maximum_propagates_nan_and_fmax_ignores_it():
    nan = float("nan")
    a, b = [nan, 1.0, nan], [2.0, nan, nan]
    np.testing.assert_array_equal(
        _numpy(dualad.maximum(dualad.tensor(a), dualad.tensor(b))), [nan, nan, nan]
    )
    np.testing.assert_array_equal(
        _numpy(dualad.fmax(dualad.tensor(a), dualad.tensor(b))), [2.0, 1.0, nan]
    )
    np.testing.assert_array_equal(
        _numpy(dualad.fmin(dualad.tensor(a), dualad.tensor(b))), [2.0, 1.0, nan]
    )
    ga, gb = _grad(dualad.fmax, a, b)
    np.testing.assert_array_equal(ga, [0.0, 1.0, 1.0])  # PyTorch: a wins where b is NaN
    np.testing.assert_array_equal(gb, [1.0, 0.0, 0.0])
    # maximum with a NaN: both arguments get the gradient (PyTorch's masks)
    ga, gb = _grad(dualad.maximum, [nan], [1.0])
    np.testing.assert_array_equal(ga, [1.0])
    np.testing.assert_array_equal(gb, [1.0])


def test_fmax_fmin_ties_go_to_the_first_argument():
    ga, gb = _grad(dualad.fmax, [1.0, 2.0], [1.0, 3.0])
    np.testing.assert_array_equal(ga, [1.0, 0.0])
    np.testing.assert_array_equal(gb, [0.0, 1.0])
    ga, gb = _grad(dualad.fmin, [1.0, 2.0], [1.0, 3.0])
    np.testing.assert_array_equal(ga, [1.0, 1.0])
    np.testing.assert_array_equal(gb, [0.0, 0.0])


def test_clamp_boundaries_pass_the_gradient():
    x = [-2.0, -1.0, 0.0, 1.0, 2.0]
    (g,) = _grad(lambda t: dualad.clamp(t, -1.0, 1.0), x)
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0, 1.0, 0.0])
    (g,) = _grad(lambda t: dualad.clamp(t, min=0.0), x)
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0, 1.0, 1.0])
    (g,) = _grad(lambda t: dualad.clip(t, max=0.0), x)
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0, 0.0, 0.0])
    # tensor bounds: x at a bound keeps the gradient; the bound gets it only strictly beyond
    gx, glow, ghigh = _grad(dualad.clamp, x, [-1.0] * 5, [1.0] * 5)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(glow, [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ghigh, [0.0, 0.0, 0.0, 0.0, 1.0])
    # crossing bounds: the result is max, and so is the gradient's destination
    out = dualad.clamp(dualad.tensor(x), dualad.tensor([1.0] * 5), dualad.tensor([-1.0] * 5))
    np.testing.assert_array_equal(_numpy(out), [-1.0] * 5)
    gx, glow, ghigh = _grad(dualad.clamp, x, [1.0] * 5, [-1.0] * 5)
    np.testing.assert_array_equal(gx, [0.0] * 5)
    np.testing.assert_array_equal(glow, [0.0] * 5)
    np.testing.assert_array_equal(ghigh, [1.0] * 5)


def test_clamp_keeps_dtype_and_accepts_numpy_scalars():
    x = dualad.tensor(np.array([-2.0, 0.5, 3.0], dtype=np.float32))
    out = dualad.clamp(x, np.float64(-1.0), np.float64(1.0))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(_numpy(out), [-1.0, 0.5, 1.0])
    assert dualad.clamp_min(x, 0).dtype == np.float32
    np.testing.assert_array_equal(_numpy(dualad.clamp_max(x, 0.0)), [-2.0, 0.0, 0.0])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0), 0/0: as in NumPy
def test_xlogy_at_zero():
    out = dualad.xlogy(dualad.tensor([0.0, 0.0, 2.0, 0.0]), dualad.tensor([0.0, 3.0, 3.0, np.nan]))
    np.testing.assert_array_equal(_numpy(out), [0.0, 0.0, 2 * math.log(3.0), np.nan])
    gx, gy = _grad(dualad.xlogy, [0.0, 0.0, 2.0], [0.0, 3.0, 3.0])
    # d/dx: log(y), but 0 where x == 0 and y <= 0; d/dy: x / y (0/0 is NaN, as in PyTorch)
    np.testing.assert_allclose(gx, [0.0, math.log(3.0), math.log(3.0)])
    np.testing.assert_allclose(gy[1:], [0.0, 2 / 3])
    (gx,) = _grad(lambda x: dualad.xlogy(x, 0.0), [0.0, 1.0])
    np.testing.assert_array_equal(gx, [0.0, -np.inf])
    (gx,) = _grad(lambda x: dualad.xlogy(x, 2.0), [0.0, 1.0])
    np.testing.assert_allclose(gx, [math.log(2.0)] * 2)


def test_logit_eps_and_softplus_threshold():
    (g,) = _grad(lambda x: dualad.logit(x, eps=0.25), [0.1, 0.25, 0.5, 0.9])
    np.testing.assert_allclose(g, [0.0, 1 / (0.25 * 0.75), 4.0, 0.0])
    out = dualad.softplus(dualad.tensor([-800.0, 0.0, 21.0, 800.0]))
    np.testing.assert_allclose(_numpy(out), [0.0, math.log(2.0), 21.0, 800.0])
    (g,) = _grad(lambda x: dualad.softplus(x, beta=2.0, threshold=1.0), [0.0, 0.4, 0.6])
    np.testing.assert_allclose(g, [0.5, 1 / (1 + math.exp(-0.8)), 1.0])


def test_sigmoid_is_stable_for_large_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = dualad.sigmoid(dualad.tensor([-1000.0, 0.0, 1000.0]))
        np.testing.assert_array_equal(_numpy(out), [0.0, 0.5, 1.0])
        (g,) = _grad(dualad.sigmoid, [-1000.0, 0.0, 1000.0])
        np.testing.assert_array_equal(g, [0.0, 0.25, 0.0])


def test_sinc_copysign_angle_nan_to_num_conventions():
    (g,) = _grad(dualad.sinc, [0.0, 1.0])
    np.testing.assert_allclose(g, [0.0, -1.0])  # d/dx sinc at 1 = (cos(pi) - 0) / 1
    np.testing.assert_array_equal(_numpy(dualad.sinc(dualad.tensor([0.0]))), [1.0])
    ga, gb = _grad(dualad.copysign, [0.0, 2.0, -2.0], [-1.0, -1.0, -1.0])
    np.testing.assert_array_equal(ga, [0.0, -1.0, 1.0])
    np.testing.assert_array_equal(gb, [0.0, 0.0, 0.0])
    x = [-1.0, -0.0, 0.0, 2.0]
    np.testing.assert_array_equal(_numpy(dualad.angle(dualad.tensor(x))), [math.pi, 0, 0, 0])
    (g,) = _grad(dualad.angle, x)
    np.testing.assert_array_equal(g, [0.0] * 4)
    (g,) = _grad(dualad.angle, np.array([0j, 1j]))
    np.testing.assert_allclose(g, [0.0, -1.0])  # d angle / d Re at i is -1
    (g,) = _grad(dualad.nan_to_num, [np.nan, np.inf, 1.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])
    out = dualad.nan_to_num(dualad.tensor(np.array([np.nan, np.inf, -np.inf], np.float32)))
    np.testing.assert_array_equal(
        _numpy(out), [0.0, np.finfo(np.float32).max, np.finfo(np.float32).min]
    )


def test_lerp_weights_and_exact_endpoints():
    start, end = dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, -4.0])
    np.testing.assert_array_equal(_numpy(dualad.lerp(start, end, 1.0)), [3.0, -4.0])
    np.testing.assert_array_equal(_numpy(dualad.lerp(start, end, 0.0)), [1.0, 2.0])
    weight = dualad.tensor([0.25, 0.75])
    np.testing.assert_allclose(_numpy(start.lerp(end, weight)), [1.5, -2.5])
    gs, ge, gw = _grad(dualad.lerp, [1.0, 2.0], [3.0, -4.0], [0.25, 0.75])
    np.testing.assert_allclose(gs, [0.75, 0.25])
    np.testing.assert_allclose(ge, [0.25, 0.75])
    np.testing.assert_allclose(gw, [2.0, -6.0])


def test_rounding_and_sign_helpers():
    x = dualad.tensor([0.5, 1.5, 2.5, -0.5, 1.2345])
    np.testing.assert_array_equal(_numpy(dualad.round(x)), [0.0, 2.0, 2.0, -0.0, 1.0])
    np.testing.assert_allclose(_numpy(x.round(decimals=2)), [0.5, 1.5, 2.5, -0.5, 1.23])
    np.testing.assert_array_equal(
        _numpy(dualad.signbit(dualad.tensor([-0.0, 0.0, -1.0]))), [True, False, True]
    )
    np.testing.assert_array_equal(
        _numpy(dualad.heaviside(dualad.tensor([-1.0, 0.0, 2.0]), dualad.tensor(0.5))),
        [0.0, 0.5, 1.0],
    )
    t = dualad.tensor([1.0], requires_grad=True)
    assert dualad.positive(t) is t
    # round is piecewise constant (zero gradient, like floor); signbit's output is bool
    assert dualad.round(t).requires_grad
    assert not dualad.signbit(t).requires_grad


# ---------------------------------------------------------------------------------------------
# the special functions on NumPy


def _reference(function, values):
    return np.array([function(float(v)) for v in values])


def test_erf_erfc_match_math_to_a_few_ulp_on_both_paths():
    values = np.concatenate(
        [np.linspace(-7, 7, 3001), np.linspace(2.9, 27, 500), 10.0 ** np.linspace(-300, 0, 200)]
    )
    values = np.concatenate([values, -values[-200:]])
    for name, function in (("erf", math.erf), ("erfc", math.erfc)):
        expected = _reference(function, values)
        actual = _numpy(getattr(dualad, name)(dualad.tensor(values)))
        ulps = np.abs(actual - expected) / np.spacing(np.abs(expected) + 1e-300)
        assert ulps.max() <= 8, f"{name}: {ulps.max()} ulp at {values[ulps.argmax()]}"
        small = _numpy(getattr(dualad, name)(dualad.tensor(values[:20])))  # math.* path
        np.testing.assert_array_equal(small, expected[:20])


def test_erf_family_special_values_and_dtypes():
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 30.0, -30.0] * 6)  # > 32: vectorised
    for size in (7, special.size):
        x = dualad.tensor(special[:size])
        np.testing.assert_array_equal(
            _numpy(dualad.erf(x)), np.tile([1, -1, np.nan, 0, -0.0, 1, -1], size // 7)
        )
        np.testing.assert_array_equal(
            _numpy(dualad.erfc(x)), np.tile([0, 2, np.nan, 1, 1, 0, 2], size // 7)
        )
    y = dualad.tensor([1.0, -1.0, 1.5, np.nan, 0.0, -0.0])
    np.testing.assert_array_equal(_numpy(dualad.erfinv(y)), [np.inf, -np.inf, np.nan, np.nan, 0, 0])
    assert math.copysign(1.0, float(_numpy(dualad.erf(dualad.tensor(-0.0))))) == -1.0
    for dtype in (np.float32, np.float16):
        x = dualad.tensor(np.array([0.1, 0.5], dtype))
        assert dualad.erf(x).dtype == dtype and dualad.erfinv(x).dtype == dtype
    assert dualad.erf(dualad.tensor([0, 1])).dtype == np.float64


def test_erfinv_inverts_erf():
    y = np.concatenate([np.linspace(-0.999999, 0.999999, 2001), 1 - 10.0 ** -np.arange(1, 16)])
    x = _numpy(dualad.erfinv(dualad.tensor(y)))
    back = _reference(math.erf, x)
    np.testing.assert_allclose(back, y, rtol=4e-16, atol=4e-16)
    tail = 1 - 10.0 ** -np.arange(1, 16)
    np.testing.assert_allclose(_reference(math.erfc, x[-15:]), 1 - tail, rtol=1e-14)
    # pinned values (mpmath)
    np.testing.assert_allclose(
        _numpy(dualad.erfinv(dualad.tensor([0.5, -0.9, 0.999]))),
        [0.4769362762044699, -1.1630871536766743, 2.326753765513525],
        rtol=1e-15,
    )


# ---------------------------------------------------------------------------------------------
# dtypes


def test_float32_stays_float32_with_python_scalars():
    x = dualad.tensor(np.array([0.5, 1.5], dtype=np.float32), requires_grad=True)
    for out in (
        x * 0.5,
        0.5 * x,
        x**2,
        x**0.5,
        2.0**x,
        x / 3,
        dualad.exp2(x),
        dualad.maximum(x, 1.0),
        dualad.clamp(x, 0.0, 1.0),
        dualad.xlogy(x, 2.0),
        dualad.xlogy(2, x),
        dualad.atan2(x, 1.0),
        dualad.lerp(x, x * 2, 0.3),
        dualad.softplus(x),
        dualad.logit(x / 2, eps=0.1),
        dualad.where(x > 1, x, 0.0),
        dualad.sinc(x),
        dualad.deg2rad(x),
        dualad.copysign(x, -1.0),
    ):
        assert out.dtype == np.float32, out
        (g,) = dualad.autograd.grad(out.sum(), x)
        assert g.dtype == np.float32


@pytest.mark.parametrize("int_dtype", [np.int8, np.int32, np.int64, np.uint8, np.bool_])
def test_float_math_on_integers_uses_the_default_dtype(int_dtype):
    i = dualad.tensor(
        np.array([1, 2], dtype=int_dtype) if int_dtype is not np.bool_ else np.array([True, True])
    )
    for name in (
        "sqrt",
        "log",
        "exp",
        "sin",
        "tanh",
        "reciprocal",
        "rsqrt",
        "sigmoid",
        "erf",
        "asinh",
        "expm1",
        "log1p",
        "deg2rad",
        "sinc",
        "angle",
    ):
        assert getattr(dualad, name)(i).dtype == np.float64, name
    try:
        dualad.set_default_dtype(dualad.float32)
        assert dualad.sqrt(i).dtype == np.float32
        assert dualad.erf(i).dtype == np.float32
        assert dualad.atan2(i, i).dtype == np.float32
    finally:
        dualad.set_default_dtype(dualad.float64)
    assert dualad.relu(dualad.tensor([-1, 2])).dtype == np.int64  # integer ops stay integer
    assert dualad.abs(dualad.tensor([-1, 2])).dtype == np.int64


def test_integer_tensors_mix_with_differentiable_ones():
    i = dualad.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="floating point and complex"):
        dualad.tensor([1, 2], requires_grad=True)
    x = dualad.tensor([0.5, 1.5, 2.5], requires_grad=True)
    for fn in (dualad.maximum, dualad.hypot, dualad.atan2, dualad.xlogy, dualad.fmod):
        out = fn(x, i)
        assert out.requires_grad
        (g,) = dualad.autograd.grad(out.sum(), x)
        assert g.dtype == x.dtype and g.shape == x.shape


# ---------------------------------------------------------------------------------------------
# methods, aliases, in-place versions


def test_aliases_and_methods():
    assert dualad.arcsin is dualad.asin and dualad.arctan2 is dualad.atan2
    assert dualad.clip is dualad.clamp and dualad.expit is dualad.sigmoid
    x = dualad.tensor([0.25, 0.5])
    for name in (
        "asin",
        "acos",
        "atan",
        "asinh",
        "atanh",
        "sigmoid",
        "logit",
        "relu",
        "erf",
        "erfc",
        "erfinv",
        "sinc",
        "deg2rad",
        "rad2deg",
        "nan_to_num",
        "round",
        "angle",
        "signbit",
        "softplus",
        "arcsin",
        "arccos",
        "arctan",
        "arcsinh",
        "arctanh",
    ):
        np.testing.assert_array_equal(_numpy(getattr(x, name)()), _numpy(getattr(dualad, name)(x)))
    y = dualad.tensor([0.75, 0.125])
    for name in (
        "atan2",
        "hypot",
        "maximum",
        "minimum",
        "fmax",
        "fmin",
        "fmod",
        "xlogy",
        "logaddexp",
        "logaddexp2",
        "copysign",
        "heaviside",
    ):
        np.testing.assert_array_equal(
            _numpy(getattr(x, name)(y)), _numpy(getattr(dualad, name)(x, y))
        )
    np.testing.assert_array_equal(_numpy(x.clamp(min=0.3)), [0.3, 0.5])
    np.testing.assert_array_equal(_numpy(x.clip(0.3, 0.4)), [0.3, 0.4])
    assert dualad.acosh(dualad.tensor([1.5])).shape == (1,)


def test_inplace_versions():
    x = dualad.tensor([-2.0, 0.5, 3.0])
    version = x._version
    assert x.clamp_(min=-1.0, max=1.0) is x
    np.testing.assert_array_equal(_numpy(x), [-1.0, 0.5, 1.0])
    assert x._version > version
    x.clip_(max=0.0).relu_()
    np.testing.assert_array_equal(_numpy(x), [0.0, 0.0, 0.0])
    y = dualad.tensor([0.25, 0.5])
    y.sigmoid_().logit_()
    np.testing.assert_allclose(_numpy(y), [0.25, 0.5])
    z = dualad.tensor([1.26, -2.5])
    z.round_(decimals=1)
    np.testing.assert_allclose(_numpy(z), [1.3, -2.5])
    w = dualad.tensor([1.0, 2.0])
    w.lerp_(dualad.tensor([3.0, 4.0]), 0.5).atan2_(dualad.tensor([1.0, 1.0]))
    np.testing.assert_allclose(_numpy(w), np.arctan2([2.0, 3.0], 1.0))
    # in-place on a non-leaf records history
    leaf = dualad.tensor([0.5, 2.0], requires_grad=True)
    h = leaf * 1.0
    h.clamp_(max=1.0).erf_()
    (g,) = dualad.autograd.grad(h.sum(), leaf)
    np.testing.assert_allclose(_numpy(g), [2 / math.sqrt(math.pi) * math.exp(-0.25), 0.0])


def test_new_ops_are_exported_and_registered():
    for name in NEW_OPS:
        assert name in REGISTRY, name
        assert callable(getattr(dualad, name)), name
    assert (
        not hasattr(dualad.ops.arithmetic, "__all__") or "np" not in dualad.ops.arithmetic.__all__
    )


# ---------------------------------------------------------------------------------------------
# errors


def test_errors():
    x = dualad.tensor([1.0, 2.0])
    z = dualad.tensor([1j, 2.0])
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        dualad.clamp(x)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        x.clamp_()
    for fn in (
        dualad.relu,
        dualad.erf,
        dualad.erfinv,
        lambda t: dualad.clamp(t, 0.0),
        lambda t: dualad.maximum(t, t),
        lambda t: dualad.fmin(t, 1.0),
        lambda t: dualad.xlogy(t, t),
        dualad.softplus,
    ):
        with pytest.raises(TypeError, match="complex"):
            fn(z)
    with pytest.raises(TypeError, match="decimals"):
        dualad.round(x, decimals=1.5)
    with pytest.raises(TypeError, match="eps"):
        dualad.logit(x, eps="small")
    with pytest.raises(TypeError, match="beta"):
        dualad.softplus(x, beta=None)
    with pytest.raises(TypeError, match="bool"):
        dualad.positive(dualad.tensor([True]))
    with pytest.raises(RuntimeError, match="non-complex"):
        dualad.imag(x)
    with pytest.raises(TypeError, match="atan2"):
        dualad.atan2(z, z)
    with pytest.raises(RuntimeError, match="shape"):
        x.clamp_(min=dualad.tensor([[0.0], [1.0]]))  # in-place result would change shape
