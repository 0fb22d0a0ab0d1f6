"""conv1d / conv2d / conv_transpose1d / conv_transpose2d of ``dualad.nn.functional``.

Values and shapes against a NumPy reference written here as direct loops over the output
positions (unlike the ops' im2col and the op database's offset-by-offset reference) and against
PyTorch numbers kept as literals; gradients of first and second order against finite
differences, forward mode, per-example gradients of a small CNN under vmap against a loop, and
PyTorch's argument errors. (The registry tests check the ops' rules once more from the op
database entries.)
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.autograd import gradcheck, gradgradcheck
from dualad.func import grad, jvp, vmap

# ---------------------------------------------------------------------------------------------
# the reference: one output element at a time


def loops_conv(x, w, b, stride, padding, dilation, groups):
    """``y[n, o, p] = b[o] + sum_{c, k} w[o, c, k] x[n, g c, p * stride + k * dilation - lo]``,
    with ``padding`` a (low, high) pair per spatial dim."""
    nd = w.ndim - 2
    n = x.shape[0]
    cout, cg = w.shape[:2]
    size, kernel = x.shape[2:], w.shape[2:]
    out = [
        (s + lo + hi - d * (k - 1) - 1) // st + 1
        for s, k, st, (lo, hi), d in zip(size, kernel, stride, padding, dilation)
    ]
    y = np.zeros((n, cout, *out), dtype=np.result_type(x, w))
    per_group = cout // groups
    for i in range(n):
        for o in range(cout):
            g = o // per_group
            for p in itertools.product(*map(range, out)):
                total = 0.0 if b is None else b[o]
                for c in range(cg):
                    for k in itertools.product(*map(range, kernel)):
                        at = [
                            p[j] * stride[j] + k[j] * dilation[j] - padding[j][0] for j in range(nd)
                        ]
                        if all(0 <= at[j] < size[j] for j in range(nd)):
                            total = total + w[(o, c, *k)] * x[(i, g * cg + c, *at)]
                y[(i, o, *p)] = total
    return y


def _pairs(padding, kernel, dilation, nd):
    if padding == "valid":
        return ((0, 0),) * nd
    if padding == "same":
        return tuple(
            (d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation)
        )
    return tuple((p, p) for p in padding)


def _cases():
    for nd, stride, padding, dilation, groups in itertools.product(
        (1, 2), (1, 2, 3), (0, 1, 2, "valid", "same"), (1, 2), (1, 2)
    ):
        yield pytest.param(
            nd,
            stride,
            padding,
            dilation,
            groups,
            id=f"{nd}d-s{stride}-p{padding}-d{dilation}-g{groups}",
        )


@pytest.mark.parametrize("nd, stride, padding, dilation, groups", list(_cases()))
def test_values_and_shapes_match_the_loops(nd, stride, padding, dilation, groups):
    rng = np.random.default_rng(nd * 100 + stride * 10 + dilation + groups)
    size = (7, 6)[:nd]
    kernel = (3, 2)[:nd]
    x = rng.standard_normal((2, 2 * groups, *size))
    w = rng.standard_normal((3 * groups, 2, *kernel))
    b = rng.standard_normal(3 * groups)
    conv = F.conv1d if nd == 1 else F.conv2d
    if padding == "same" and stride > 1:
        with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
            conv(dualad.tensor(x), dualad.tensor(w), stride=stride, padding=padding)
        return
    pairs = _pairs(
        padding if isinstance(padding, str) else (padding,) * nd, kernel, (dilation,) * nd, nd
    )
    want = loops_conv(x, w, b, (stride,) * nd, pairs, (dilation,) * nd, groups)
    got = conv(
        dualad.tensor(x), dualad.tensor(w), dualad.tensor(b), stride, padding, dilation, groups
    )
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    if padding == "same":
        assert tuple(got.shape[2:]) == size
    # unbatched input: the same numbers without the batch dim
    single = conv(
        dualad.tensor(x[1]), dualad.tensor(w), dualad.tensor(b), stride, padding, dilation, groups
    )
    np.testing.assert_allclose(single.numpy(), want[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [(1, 0, 1, 1), (2, 1, 1, 2), ((1, 2, 1), (1, 0, 2), (2, 1, 1), 1), (1, "same", 2, 2)],
)
def test_conv3d_matches_the_loops(stride, padding, dilation, groups):
    rng = np.random.default_rng(10)
    x, w = (
        rng.standard_normal((2, 2 * groups, 5, 4, 6)),
        rng.standard_normal((2 * groups, 2, 2, 3, 2)),
    )
    got = F.conv3d(dualad.tensor(x), dualad.tensor(w), None, stride, padding, dilation, groups)

    def expand(v):
        return v if isinstance(v, tuple) else (v,) * 3

    pairs = _pairs(
        padding if isinstance(padding, str) else expand(padding), w.shape[2:], expand(dilation), 3
    )
    want = loops_conv(x, w, None, expand(stride), pairs, expand(dilation), groups)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_tuple_arguments_per_dim_match_the_loops():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 3, 8, 7)), rng.standard_normal((2, 3, 2, 3))
    got = F.conv2d(
        dualad.tensor(x), dualad.tensor(w), stride=(3, 1), padding=(2, 0), dilation=(1, 3)
    )
    want = loops_conv(x, w, None, (3, 1), ((2, 2), (0, 0)), (1, 3), 1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_float32_stays_float32():
    x = dualad.ones(1, 2, 5, dtype=dualad.float32, requires_grad=True)
    w = dualad.ones(3, 2, 2, dtype=dualad.float32, requires_grad=True)
    y = F.conv1d(x, w, dualad.zeros(3, dtype=dualad.float32))
    y.sum().backward()
    assert y.dtype == x.grad.dtype == w.grad.dtype == dualad.float32


# ---------------------------------------------------------------------------------------------
# PyTorch's numbers (torch 2.13, float64), kept as literals

X_T = (np.arange(40.0).reshape(1, 2, 4, 5) % 7 - 3) / 4
W_T = (((np.arange(12.0) * 5) % 11 - 5) / 3).reshape(2, 1, 2, 3)
B_T = np.array([0.5, -1.0])
# F.conv2d(x, w, b, stride=(1, 2), padding=(1, 1), groups=2) and the gradients of sum(y ** 2)
Y_TORCH = [
    [
        [-0.16666666666666669, 0.3333333333333333, 0.8333333333333333],
        [-0.16666666666666674, 0.4166666666666668, 0.3333333333333333],
        [1.5833333333333333, -1.5, 0.08333333333333348],
        [0.41666666666666674, 1.2499999999999998, -0.16666666666666674],
        [0.08333333333333331, 1.3333333333333335, 0.08333333333333331],
    ],
    [
        [0.5, 0.25, -0.6666666666666667],
        [-3.0, -0.5833333333333335, -0.41666666666666663],
        [-1.0, -2.5, -1.6666666666666665],
        [-0.16666666666666663, -0.3333333333333334, -1.1666666666666667],
        [-0.5833333333333333, -1.25, -1.25],
    ],
]
GX_TORCH = [
    [
        [
            -0.4444444444444445,
            -1.944444444444445,
            0.8888888888888888,
            -0.7222222222222218,
            2.222222222222222,
        ],
        [
            -0.44444444444444464,
            10.222222222222221,
            1.1111111111111114,
            -6.055555555555556,
            0.8888888888888888,
        ],
        [4.222222222222221, -3.8888888888888875, -4.0, 6.666666666666666, 0.2222222222222226],
        [
            1.1111111111111112,
            -5.555555555555556,
            3.3333333333333326,
            2.6111111111111125,
            -0.44444444444444464,
        ],
    ],
    [
        [
            6.333333333333333,
            -7.500000000000001,
            1.3333333333333337,
            -0.6666666666666666,
            0.3888888888888888,
        ],
        [0.0, 5.222222222222223, 4.611111111111111, -3.6111111111111103, 3.0555555555555554],
        [-0.33333333333333337, 9.11111111111111, -0.9999999999999997, 10.0, 1.2222222222222225],
        [
            1.0555555555555554,
            -1.833333333333333,
            2.2777777777777777,
            0.05555555555555647,
            1.7222222222222223,
        ],
    ],
]
GW_TORCH = [
    [
        [
            [-3.0000000000000004, 5.5, 6.75],
            [-1.3749999999999996, -2.666666666666667, -1.541666666666667],
        ]
    ],
    [
        [
            [1.166666666666667, -7.458333333333333, 7.791666666666666],
            [-1.333333333333333, -4.875, -5.333333333333333],
        ]
    ],
]
GB_TORCH = [9.5, -27.666666666666664]


def test_conv2d_matches_torch_numbers():
    x = dualad.tensor(X_T, requires_grad=True)
    w = dualad.tensor(W_T, requires_grad=True)
    b = dualad.tensor(B_T, requires_grad=True)
    y = F.conv2d(x, w, b, stride=(1, 2), padding=(1, 1), groups=2)
    np.testing.assert_allclose(y.detach().numpy()[0], Y_TORCH, rtol=1e-12, atol=1e-14)
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[0], GX_TORCH, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(w.grad.numpy(), GW_TORCH, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(b.grad.numpy(), GB_TORCH, rtol=1e-12)


def test_conv1d_same_with_an_even_dilated_kernel_matches_torch():
    # F.conv1d(x, w, padding='same', dilation=2): total padding 6, three on each side
    x = dualad.tensor([[[1.0, -2.0, 3.0, 0.5, -1.0, 2.0, 4.0]]])
    w = dualad.tensor([[[1.0, 2.0, -1.0, 0.5]], [[0.0, 1.0, 1.0, -2.0]]])
    want = [
        [2.25, -1.5, -3.5, 10.0, -3.0, -3.0, 4.5],
        [-3.0, 6.0, -5.5, -6.0, 2.5, 3.0, 2.0],
    ]
    np.testing.assert_allclose(F.conv1d(x, w, padding="same", dilation=2).numpy()[0], want)


def test_conv1d_same_with_an_even_kernel_pads_one_more_on_the_right():
    x = dualad.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    w = dualad.tensor([[[1.0, 10.0]]])  # total padding 1: none on the left, one on the right
    np.testing.assert_allclose(F.conv1d(x, w, padding="same").numpy(), [[[21.0, 32.0, 43.0, 4.0]]])


def test_conv_transpose2d_matches_torch():
    # F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2)
    x = dualad.tensor([[[[1.0, 2.0], [3.0, -1.0]], [[0.5, 0.0], [2.0, 1.0]]]])
    w = dualad.tensor([[[[1.0, -1.0], [2.0, 0.0]]], [[[0.0, 1.0], [1.0, 1.0]]]])
    want = [
        [[0.0, 4.0, 0.0], [-3.0, -1.0, 1.0], [0.0, -2.0, 0.0]],
        [[0.5, 0.0, 0.0], [2.0, 0.0, 1.0], [2.0, 1.0, 1.0]],
    ]
    y = F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2)
    np.testing.assert_allclose(y.numpy()[0], want)


def test_conv_transpose_is_the_input_gradient_of_conv():
    rng = np.random.default_rng(1)
    x = dualad.tensor(rng.standard_normal((2, 4, 9, 8)), requires_grad=True)
    w = dualad.tensor(rng.standard_normal((6, 2, 3, 2)))
    kwargs = {"stride": (2, 3), "padding": (1, 0), "dilation": (2, 1), "groups": 2}
    y = F.conv2d(x, w, **kwargs)
    ct = dualad.tensor(rng.standard_normal(tuple(y.shape)))
    (gx,) = dualad.autograd.grad(y, x, ct)
    extra = (9 + 2 - 2 * 2 - 1) % 2, (8 - 2) % 3  # the rows and columns no window reached
    again = F.conv_transpose2d(ct, w, output_padding=extra, **kwargs)
    np.testing.assert_allclose(again.numpy(), gx.numpy(), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# derivatives


def _random(rng, *shape, dtype=np.float64):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return dualad.tensor(values.astype(dtype), requires_grad=True)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gradcheck_and_gradgradcheck_conv2d(dtype):
    rng = np.random.default_rng(2)
    x, w, b = (
        _random(rng, 2, 4, 5, 4, dtype=dtype),
        _random(rng, 4, 2, 2, 3, dtype=dtype),
        _random(rng, 4, dtype=dtype),
    )

    def fn(x, w, b):
        return F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)

    assert gradcheck(fn, (x, w, b), check_forward_ad=True)
    assert gradgradcheck(fn, (x, w, b))


def test_gradcheck_conv_transpose1d_and_second_order():
    rng = np.random.default_rng(3)
    x, w, b = _random(rng, 2, 4, 5), _random(rng, 4, 3, 3), _random(rng, 6)

    def fn(x, w, b):
        return F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)

    assert gradcheck(fn, (x, w, b), check_forward_ad=True)
    assert gradgradcheck(fn, (x, w, b))


def test_forward_mode_is_bilinear():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((1, 3, 6, 6)), rng.standard_normal((2, 3, 3, 3))
    tx, tw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)

    def fn(x, w):
        return F.conv2d(x, w, stride=2, padding=1)

    _, tangent = jvp(
        fn, (dualad.tensor(x), dualad.tensor(w)), (dualad.tensor(tx), dualad.tensor(tw))
    )
    want = loops_conv(tx, w, None, (2, 2), ((1, 1),) * 2, (1, 1), 1) + loops_conv(
        x, tw, None, (2, 2), ((1, 1),) * 2, (1, 1), 1
    )
    np.testing.assert_allclose(tangent.numpy(), want, rtol=1e-12, atol=1e-12)


def test_hessian_vector_product_of_a_conv_loss_matches_finite_differences():
    rng = np.random.default_rng(5)
    x = dualad.tensor(rng.standard_normal((2, 2, 6)))
    w0, v = rng.standard_normal((3, 2, 3)), rng.standard_normal((3, 2, 3))

    def loss(w):
        return (dualad.tanh(F.conv1d(x, w, padding=1)) ** 2).sum()

    # jvp of grad (forward over reverse) against central differences of the gradient
    _, hv = jvp(grad(loss), (dualad.tensor(w0),), (dualad.tensor(v),))
    eps = 1e-6
    g = grad(loss)
    fd = (g(dualad.tensor(w0 + eps * v)).numpy() - g(dualad.tensor(w0 - eps * v)).numpy()) / (
        2 * eps
    )
    np.testing.assert_allclose(hv.numpy(), fd, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------------------------
# vmap: per-example gradients of a small CNN


def _cnn(params, x):
    """conv -> relu -> max pool -> grouped conv -> avg pool -> linear, on one example."""
    w1, b1, w2, w3 = params
    h = dualad.relu(F.conv2d(x, w1, b1, padding=1))
    h = F.max_pool2d(h, 2)
    h = dualad.tanh(F.conv2d(h, w2, stride=1, padding="same", groups=2))
    h = F.avg_pool2d(h, 2, ceil_mode=True)
    return (reshape_flat(h) * w3).sum()


def reshape_flat(h):
    return h.reshape(-1)


def test_per_example_gradients_of_a_small_cnn_under_vmap_match_a_loop():
    rng = np.random.default_rng(6)
    params = (
        dualad.tensor(rng.standard_normal((4, 2, 3, 3))),
        dualad.tensor(rng.standard_normal(4)),
        dualad.tensor(rng.standard_normal((4, 2, 3, 3))),
        dualad.tensor(rng.standard_normal(4 * 2 * 2)),
    )
    xs = dualad.tensor(rng.standard_normal((5, 2, 7, 7)))

    def loss(params, x):
        return (_cnn(params, x) - 1.0) ** 2

    batched = vmap(grad(loss), in_dims=(None, 0))(params, xs)
    for i in range(5):
        single = grad(loss)(params, xs[i])
        for got, want in zip(batched, single):
            np.testing.assert_allclose(got.numpy()[i], want.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("in_dims", [(0, None), (None, 0), (0, 0), (1, 2)])
def test_vmap_over_input_weight_or_both_matches_a_loop(in_dims):
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((3, 2, 4, 6))  # batch at 0: 3 examples of (2, 4, 6)
    ws = rng.standard_normal((3, 6, 2, 3))  # batch at 0: 3 weights of (6, 2, 3)
    x_in = xs if in_dims[0] in (0, None) else np.moveaxis(xs, 0, in_dims[0])
    w_in = ws if in_dims[1] in (0, None) else np.moveaxis(ws, 0, in_dims[1])
    x_arg = dualad.tensor(x_in if in_dims[0] is not None else xs[0])
    w_arg = dualad.tensor(w_in if in_dims[1] is not None else ws[0])

    def fn(x, w):
        return F.conv1d(x, w, stride=2, padding=1, groups=2)

    got = vmap(fn, in_dims=in_dims)(x_arg, w_arg).numpy()
    for i in range(3):
        x = xs[i] if in_dims[0] is not None else xs[0]
        w = ws[i] if in_dims[1] is not None else ws[0]
        want = loops_conv(x, w, None, (2,), ((1, 1),), (1,), 2)
        np.testing.assert_allclose(got[i], want, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# errors (PyTorch's classes and messages)


def _t(*shape, dtype=np.float64):
    return dualad.tensor(np.zeros(shape, dtype=dtype))


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: F.conv2d(_t(1, 3, 5, 5), _t(2, 2, 3, 3), groups=2),
            r"Given groups=2, weight of size \[2, 2, 3, 3\], expected input\[1, 3, 5, 5\] to have 4 channels, but got 3 channels instead",
        ),
        (
            lambda: F.conv2d(_t(1, 4, 5, 5), _t(3, 2, 3, 3), groups=2),
            r"Given groups=2, expected weight to be divisible by 2 at dimension 0",
        ),
        (
            lambda: F.conv2d(_t(1, 4, 2, 2), _t(2, 4, 3, 3)),
            r"Calculated padded input size per channel: \(2 x 2\). Kernel size: \(3 x 3\). Kernel size can't be greater than actual input size",
        ),
        (lambda: F.conv1d(_t(1, 4, 5), _t(2, 4, 3), dilation=3), r"Kernel size: \(7\)"),
        (
            lambda: F.conv2d(_t(1, 4, 5, 5), _t(2, 4, 3, 3), padding="same", stride=2),
            "padding='same' is not supported for strided convolutions",
        ),
        (
            lambda: F.conv2d(_t(1, 4, 5, 5), _t(2, 4, 3, 3), padding=-1),
            "negative padding is not supported",
        ),
        (
            lambda: F.conv2d(_t(1, 4, 5, 5), _t(2, 4, 3, 3), padding="full"),
            "Invalid padding string: 'full'",
        ),
        (
            lambda: F.conv2d(_t(5, 5), _t(2, 2, 3, 3)),
            r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: \[5, 5\]",
        ),
        (
            lambda: F.conv1d(_t(1, 4, 5), _t(2, 4, 3, 3)),
            r"Expected 4D \(unbatched\) or|Expected 4-dimensional input for 4-dimensional weight",
        ),
        (
            lambda: F.conv1d(_t(1, 4, 5), _t(2, 4, 3), stride=(1, 1)),
            r"expected stride to be a single integer value or a list of 1 values",
        ),
        (
            lambda: F.conv1d(_t(1, 4, 5), _t(2, 4, 3), stride=0),
            "non-positive stride is not supported",
        ),
        (
            lambda: F.conv1d(_t(1, 4, 5), _t(2, 4, 3), dilation=0),
            "dilation should be greater than zero",
        ),
        (
            lambda: F.conv1d(_t(1, 4, 5), _t(2, 4, 3), groups=0),
            "non-positive groups is not supported",
        ),
        (
            lambda: F.conv2d(_t(1, 4, 5, 5), _t(2, 4, 3, 3), bias=_t(3)),
            r"expected bias to be 1-dimensional with 2 elements, but got bias of size \[3\] instead",
        ),
        (
            lambda: F.conv1d(_t(1, 4, 5), _t(2, 4, 3, dtype=np.float32)),
            "expected input and weight to have the same dtype",
        ),
        (
            lambda: F.conv1d(_t(1, 4, 5, dtype=np.int64), _t(2, 4, 3, dtype=np.int64)),
            "convolutions take floating or complex tensors",
        ),
        (
            lambda: F.conv_transpose1d(_t(1, 4, 5), _t(3, 2, 3)),
            r"Given transposed=1, weight of size \[3, 2, 3\], expected input\[1, 4, 5\] to have 3 channels",
        ),
        (
            lambda: F.conv_transpose1d(_t(1, 4, 5), _t(4, 2, 3), stride=2, output_padding=2),
            "output padding must be non-negative and smaller than stride",
        ),
    ],
)
def test_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_an_empty_batch_and_strided_views():
    x = dualad.zeros(0, 4, 6, requires_grad=True)
    w = dualad.ones(2, 2, 3, requires_grad=True)
    y = F.conv1d(x, w, padding=1, groups=2)
    assert tuple(y.shape) == (0, 2, 6)
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, 4, 6) and np.all(w.grad.numpy() == 0)
    rng = np.random.default_rng(9)
    base, w = rng.standard_normal((7, 3, 2, 8)), rng.standard_normal((4, 3, 2, 3))
    view = dualad.tensor(base).permute(2, 1, 3, 0)[:, :, ::-1]  # (2, 3, 8, 7), odd strides
    want = loops_conv(
        base.transpose(2, 1, 3, 0)[:, :, ::-1], w, None, (1, 2), ((0, 0), (1, 1)), (1, 1), 1
    )
    got = F.conv2d(view, dualad.tensor(w), stride=(1, 2), padding=(0, 1))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_inputs_are_not_mutated():
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((1, 2, 5)), rng.standard_normal((2, 2, 3))
    tx, tw = (
        dualad.tensor(x.copy(), requires_grad=True),
        dualad.tensor(w.copy(), requires_grad=True),
    )
    F.conv1d(tx, tw, padding=2).sum().backward()
    np.testing.assert_array_equal(tx.detach().numpy(), x)
    np.testing.assert_array_equal(tw.detach().numpy(), w)
