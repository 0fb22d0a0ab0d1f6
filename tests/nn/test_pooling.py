"""max_pool1d/2d and avg_pool1d/2d of ``dualad.nn.functional``.

Values, indices and shapes against a NumPy reference written here as loops over the output
positions (PyTorch's definitions: the first maximum of a window, divisors clipped to the padded
input or counting the input's elements) for every stride/padding/dilation/ceil_mode
combination, PyTorch numbers kept as literals, the tie and NaN conventions, gradients of first
and second order against finite differences, forward mode, vmap against a loop, and PyTorch's
argument errors.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.autograd import gradcheck, gradgradcheck
from dualad.func import jvp, vmap

# ---------------------------------------------------------------------------------------------
# the reference: one output element at a time


def out_size(s, k, st, p, d, ceil_mode):
    span = s + 2 * p - d * (k - 1) - 1
    o = (math.ceil(span / st) if ceil_mode else span // st) + 1
    if ceil_mode and (o - 1) * st >= s + p:
        o -= 1
    return o


def loops_max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    """(values, flat indices) over the trailing ``len(kernel)`` dims: the first maximum of each
    window in row-major order, padding never chosen."""
    nd = len(kernel)
    lead, size = x.shape[: x.ndim - nd], x.shape[x.ndim - nd :]
    out = [out_size(*a, ceil_mode) for a in zip(size, kernel, stride, padding, dilation)]
    values = np.zeros((*lead, *out))
    indices = np.zeros((*lead, *out), dtype=np.int64)
    for ld in itertools.product(*map(range, lead)):
        for p in itertools.product(*map(range, out)):
            best, where = -np.inf, None
            for k in itertools.product(*map(range, kernel)):
                at = [p[j] * stride[j] - padding[j] + k[j] * dilation[j] for j in range(nd)]
                if not all(0 <= at[j] < size[j] for j in range(nd)):
                    continue
                v = x[(*ld, *at)]
                if where is None or v > best:
                    best, where = v, at
            values[(*ld, *p)] = best
            indices[(*ld, *p)] = np.ravel_multi_index(where, size)
    return values, indices


def loops_avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    nd = len(kernel)
    lead, size = x.shape[: x.ndim - nd], x.shape[x.ndim - nd :]
    out = [out_size(*a, 1, ceil_mode) for a in zip(size, kernel, stride, padding)]
    y = np.zeros((*lead, *out))
    for ld in itertools.product(*map(range, lead)):
        for p in itertools.product(*map(range, out)):
            total, inputs, padded = 0.0, 0, 0
            for k in itertools.product(*map(range, kernel)):
                at = [p[j] * stride[j] - padding[j] + k[j] for j in range(nd)]
                if all(-padding[j] <= at[j] < size[j] + padding[j] for j in range(nd)):
                    padded += 1  # inside the padded input
                if all(0 <= at[j] < size[j] for j in range(nd)):
                    total += x[(*ld, *at)]
                    inputs += 1
            divisor = divisor_override or (padded if count_include_pad else inputs)
            y[(*ld, *p)] = total / divisor
    return y


def _cases(nd):
    kernels = (2, 3)
    for k, st, p, d, ceil in itertools.product(kernels, (1, 2, 3), (0, 1), (1, 2), (False, True)):
        if p > (d * (k - 1) + 1) // 2:
            continue
        yield pytest.param(k, st, p, d, ceil, id=f"{nd}d-k{k}-s{st}-p{p}-d{d}-ceil{int(ceil)}")


def _distinct(rng, shape):
    size = math.prod(shape)
    return (rng.permutation(size) + rng.uniform(0.2, 0.8, size)).reshape(shape) / size - 0.5


@pytest.mark.parametrize("nd", [1, 2])
@pytest.mark.parametrize("k, st, p, d, ceil", list(_cases(1)))
def test_max_pool_values_indices_and_shapes_match_the_loops(nd, k, st, p, d, ceil):
    rng = np.random.default_rng(k * 100 + st * 10 + p + 5 * d + ceil)
    x = _distinct(rng, (2, 3, *(8, 7)[:nd]))
    pool = F.max_pool1d if nd == 1 else F.max_pool2d
    values, indices = pool(dualad.tensor(x), k, st, p, d, ceil, return_indices=True)
    want_v, want_i = loops_max_pool(x, (k,) * nd, (st,) * nd, (p,) * nd, (d,) * nd, ceil)
    assert tuple(values.shape) == want_v.shape
    np.testing.assert_array_equal(values.numpy(), want_v)
    np.testing.assert_array_equal(indices.numpy(), want_i)
    assert indices.dtype == dualad.int64 and not indices.requires_grad
    # unbatched input
    single = pool(dualad.tensor(x[1]), k, st, p, d, ceil)
    np.testing.assert_array_equal(single.numpy(), want_v[1])


@pytest.mark.parametrize("nd", [1, 2])
@pytest.mark.parametrize("include", [True, False])
@pytest.mark.parametrize("k, st, p, d, ceil", [c for c in _cases(1) if c.values[3] == 1])
def test_avg_pool_values_and_shapes_match_the_loops(nd, include, k, st, p, d, ceil):
    rng = np.random.default_rng(k * 100 + st * 10 + p)
    x = rng.standard_normal((2, 3, *(8, 7)[:nd]))
    pool = F.avg_pool1d if nd == 1 else F.avg_pool2d
    got = pool(dualad.tensor(x), k, st, p, ceil, include)
    want = loops_avg_pool(x, (k,) * nd, (st,) * nd, (p,) * nd, ceil, include, None)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "k, st, p, d, ceil", [(2, 1, 0, 1, False), (3, 2, 1, 1, True), (2, 1, 1, 2, True)]
)
def test_3d_pooling_matches_the_loops(k, st, p, d, ceil):
    rng = np.random.default_rng(k + st + p + d)
    x = _distinct(rng, (1, 2, 5, 4, 6))
    values, indices = F.max_pool3d(dualad.tensor(x), k, st, p, d, ceil, return_indices=True)
    want_v, want_i = loops_max_pool(x, (k,) * 3, (st,) * 3, (p,) * 3, (d,) * 3, ceil)
    np.testing.assert_array_equal(values.numpy(), want_v)
    np.testing.assert_array_equal(indices.numpy(), want_i)
    if d == 1:
        got = F.avg_pool3d(dualad.tensor(x), k, st, p, ceil, False)
        want = loops_avg_pool(x, (k,) * 3, (st,) * 3, (p,) * 3, ceil, False, None)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_avg_pool2d_divisor_override_and_tuple_arguments():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 7, 6))
    got = F.avg_pool2d(dualad.tensor(x), (3, 2), (2, 1), (1, 0), True, False, divisor_override=5)
    want = loops_avg_pool(x, (3, 2), (2, 1), (1, 0), True, False, 5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# PyTorch's numbers (torch 2.13), kept as literals

XM = [
    [3.0, 1.0, 4.0, 1.0, 5.0],
    [9.0, 2.0, 6.0, 5.0, 3.0],
    [5.0, 8.0, 9.0, 7.0, 9.0],
    [3.0, 2.0, 3.0, 8.0, 4.0],
    [6.0, 2.0, 6.0, 4.0, 3.0],
]


def test_max_pool2d_matches_torch_ties_included():
    x = dualad.tensor([XM])
    # F.max_pool2d(x, (2, 3), stride=2, padding=1, ceil_mode=True, return_indices=True)
    values, indices = F.max_pool2d(x, (2, 3), 2, 1, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), [[[3, 4, 5], [9, 9, 9], [6, 8, 8]]])
    np.testing.assert_array_equal(indices.numpy(), [[[0, 2, 4], [5, 12, 14], [20, 18, 18]]])
    # F.max_pool2d(x, 2, stride=1, dilation=2, return_indices=True): 9 ties at 5, 12, 14
    values, indices = F.max_pool2d(x, 2, 1, dilation=2, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), [[[9, 8, 9], [9, 8, 6], [9, 8, 9]]])
    np.testing.assert_array_equal(indices.numpy(), [[[12, 11, 12], [5, 18, 7], [12, 11, 12]]])


def test_avg_pool_matches_torch():
    x = dualad.tensor([XM])
    cases = [
        # F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        (
            F.avg_pool2d(x, 3, 2, 1, True, False),
            [
                [3.75, 3.1666666666666665, 3.5],
                [4.833333333333333, 5.555555555555555, 6.0],
                [3.25, 4.166666666666667, 4.75],
            ],
        ),
        # the same with count_include_pad=True
        (
            F.avg_pool2d(x, 3, 2, 1, True, True),
            [
                [1.6666666666666667, 2.111111111111111, 1.5555555555555556],
                [3.2222222222222223, 5.555555555555555, 4.0],
                [1.4444444444444444, 2.7777777777777777, 2.111111111111111],
            ],
        ),
        # F.avg_pool2d(x, 2, stride=2, ceil_mode=True, divisor_override=3)
        (
            F.avg_pool2d(x, 2, 2, ceil_mode=True, divisor_override=3),
            [
                [5.0, 5.333333333333333, 2.6666666666666665],
                [6.0, 9.0, 4.333333333333333],
                [2.6666666666666665, 3.3333333333333335, 1.0],
            ],
        ),
        # F.avg_pool1d(x[:, 0:2], 3, stride=2, padding=1, ceil_mode=True)
        (
            F.avg_pool1d(x[:, 0:2], 3, 2, 1, True),
            [
                [1.3333333333333333, 2.0, 2.0],
                [3.6666666666666665, 4.333333333333333, 2.6666666666666665],
            ],
        ),
    ]
    for got, want in cases:
        np.testing.assert_allclose(got.numpy()[0], want, rtol=1e-12)


def test_tied_maxima_send_the_gradient_to_the_first():
    x = dualad.tensor([[[2.0, 2.0, 1.0, 3.0, 3.0]]], requires_grad=True)
    F.max_pool1d(x, 2, stride=1).sum().backward()
    # windows [2, 2] [2, 1] [1, 3] [3, 3]: the first of each tie wins (positions 0, 1, 3, 3)
    np.testing.assert_array_equal(x.grad.numpy(), [[[1.0, 1.0, 0.0, 2.0, 0.0]]])


def test_nan_and_all_minus_inf_windows_follow_torch():
    # torch: a window with NaN gives NaN at its last NaN; a window of -inf inputs picks its
    # first input element, never the padding
    x = dualad.tensor([[[1.0, np.nan, 3.0, np.nan, 0.0]]])
    values, indices = F.max_pool1d(x, 5, return_indices=True)
    assert np.isnan(values.numpy()).all() and indices.numpy().tolist() == [[[3]]]
    x = dualad.tensor([[[-np.inf, -np.inf, 1.0]]], requires_grad=True)
    values, indices = F.max_pool1d(x, 2, stride=1, padding=1, return_indices=True)
    np.testing.assert_array_equal(values.detach().numpy(), [[[-np.inf, -np.inf, 1.0, 1.0]]])
    np.testing.assert_array_equal(indices.numpy(), [[[0, 0, 2, 2]]])
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[2.0, 0.0, 2.0]]])


# ---------------------------------------------------------------------------------------------
# derivatives


def test_gradcheck_and_gradgradcheck_max_pool2d():
    rng = np.random.default_rng(1)
    x = dualad.tensor(_distinct(rng, (2, 2, 6, 5)), requires_grad=True)

    def fn(x):
        return F.max_pool2d(x, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True)

    assert gradcheck(fn, (x,), check_forward_ad=True, eps=1e-7)
    assert gradgradcheck(fn, (x,), eps=1e-7)


@pytest.mark.parametrize("include", [True, False])
def test_gradcheck_and_gradgradcheck_avg_pool(include):
    rng = np.random.default_rng(2)
    x = dualad.tensor(rng.standard_normal((2, 6, 7)), requires_grad=True)

    def fn(x):
        return F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=include)

    assert gradcheck(fn, (x,), check_forward_ad=True)
    assert gradgradcheck(fn, (x,))

    def fn1(x):
        return F.avg_pool1d(x, 2, stride=3, ceil_mode=True, count_include_pad=include)

    assert gradcheck(fn1, (x,), check_forward_ad=True)


def test_forward_mode_gathers_the_tangent_at_the_argmax():
    rng = np.random.default_rng(3)
    x = _distinct(rng, (1, 2, 6, 6))
    t = rng.standard_normal(x.shape)
    _, tangent = jvp(lambda v: F.max_pool2d(v, 2), (dualad.tensor(x),), (dualad.tensor(t),))
    _, index = loops_max_pool(x, (2, 2), (2, 2), (0, 0), (1, 1), False)
    want = np.take_along_axis(t.reshape(1, 2, 36), index.reshape(1, 2, 9), 2).reshape(1, 2, 3, 3)
    np.testing.assert_array_equal(tangent.numpy(), want)


# ---------------------------------------------------------------------------------------------
# vmap


@pytest.mark.parametrize("pool", ["max", "avg"])
def test_vmap_at_any_dim_matches_a_loop(pool):
    rng = np.random.default_rng(4)
    xs = _distinct(rng, (3, 2, 5, 4))  # two examples (3, 5, 4), batched at dim 1

    def fn(x):
        if pool == "max":
            return F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True)
        return (F.avg_pool2d(x, 2, stride=1, padding=1, count_include_pad=False),)

    got = vmap(fn, in_dims=1)(dualad.tensor(xs))
    for i in range(2):
        single = fn(dualad.tensor(xs[:, i]))
        for g, s in zip(got, single):
            np.testing.assert_array_equal(g.numpy()[i], s.numpy())


def test_an_empty_batch_and_strided_views():
    x = dualad.zeros(0, 2, 5, 4, requires_grad=True)
    for y, rows in ((F.max_pool2d(x, 2), 2), (F.avg_pool2d(x, 2, ceil_mode=True), 3)):
        assert tuple(y.shape) == (0, 2, rows, 2)
        y.sum().backward()
        assert tuple(x.grad.shape) == (0, 2, 5, 4)
    rng = np.random.default_rng(5)
    base = _distinct(rng, (4, 6, 2, 3))  # a transposed view (2, 3, 6, 4) with odd strides
    view = dualad.tensor(base).permute(2, 3, 1, 0)[:, :, ::-1]
    dense = np.ascontiguousarray(base.transpose(2, 3, 1, 0)[:, :, ::-1])
    for pool in (F.max_pool2d, F.avg_pool2d):
        np.testing.assert_array_equal(
            pool(view, 2, 1, 1).numpy(), pool(dualad.tensor(dense), 2, 1, 1).numpy()
        )


# ---------------------------------------------------------------------------------------------
# errors


def _t(*shape, dtype=np.float64):
    return dualad.tensor(np.zeros(shape, dtype=dtype))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: F.max_pool2d(_t(1, 4, 5, 5), 3, padding=2),
            RuntimeError,
            "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1",
        ),
        (
            lambda: F.max_pool2d(_t(1, 4, 5, 5), 2, padding=-1),
            RuntimeError,
            "pad must be non-negative, but got pad: -1",
        ),
        (
            lambda: F.max_pool2d(_t(1, 4, 2, 2), 3),
            RuntimeError,
            r"Given input size: \(4x2x2\). Calculated output size: \(4x0x0\). Output size is too small",
        ),
        (
            lambda: F.max_pool2d(_t(1, 4, 5, 5), 2, stride=0),
            RuntimeError,
            "stride should not be zero",
        ),
        (
            lambda: F.max_pool2d(_t(1, 4, 5, 5), 0),
            RuntimeError,
            "kernel size should be greater than zero",
        ),
        (
            lambda: F.max_pool2d(_t(1, 4, 5, 5), 2, dilation=0),
            RuntimeError,
            "dilation should be greater than zero",
        ),
        (
            lambda: F.max_pool2d(_t(1, 4, 5, 5), (2, 2, 2)),
            RuntimeError,
            "max_pool2d: kernel_size must either be a single int, or a tuple of two ints",
        ),
        (
            lambda: F.max_pool2d(_t(5, 5), 2),
            RuntimeError,
            r"max_pool2d: Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for input, but got: \[5, 5\]",
        ),
        (lambda: F.max_pool1d(_t(5), 2), RuntimeError, r"Expected 2D or 3D"),
        (
            lambda: F.max_pool1d(_t(1, 2, 8), 2, stride=1, padding=1, dilation=9),
            RuntimeError,
            "holds no element of the input",
        ),
        (
            lambda: F.max_pool2d(_t(1, 4, 5, 5, dtype=np.complex64), 3),
            NotImplementedError,
            "\"max_pool2d\" not implemented for 'ComplexFloat'",
        ),
        (
            lambda: F.avg_pool2d(_t(1, 4, 5, 5), 3, padding=2),
            RuntimeError,
            "pad should be at most half",
        ),
        (
            lambda: F.avg_pool2d(_t(1, 4, 5, 5), 2, divisor_override=0),
            RuntimeError,
            "divisor must be not zero",
        ),
        (lambda: F.avg_pool1d(_t(1, 1, 1), 3), RuntimeError, "Output size is too small"),
        (
            lambda: F.avg_pool1d(_t(1, 1, 4, dtype=np.int64), 2),
            RuntimeError,
            "pooling takes floating tensors",
        ),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
