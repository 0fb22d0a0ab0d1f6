"""Activations, softmax and log_softmax: values and gradients against numbers taken from
PyTorch 2.13 (float64), the conventions at kinks, stability at large inputs, the singular points
of softmax/log_softmax/logsumexp (all -inf slices), the spellings (F, dualad, Tensor methods) and
errors. (Finite differences, JVPs, vmap and second order come from dualad/testing/opdb/nn.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.func import grad, hessian, jacfwd, jacrev, jvp, vmap

INF = float("inf")
X = [-2.0, -0.5, 0.3, 1.5]

# values and gradients of sum(f(X)) from torch.nn.functional, float64
TORCH = {
    "gelu": (
        [-0.04550026, -0.15426877, 0.18537343, 1.3997892],
        [-0.0852318, 0.13250488, 0.73232777, 1.12746919],
    ),
    "silu": (
        [-0.23840584, -0.18877033, 0.17233276, 1.22636171],
        [-0.09078425, 0.26003881, 0.64778001, 1.04129415],
    ),
    "mish": (
        [-0.25250148, -0.22074377, 0.20800137, 1.40337827],
        [-0.10835509, 0.28951068, 0.7828273, 1.08848799],
    ),
    "logsigmoid": (
        [-2.12692801, -0.97407698, -0.55435524, -0.20141328],
        [0.88079708, 0.62245933, 0.42555748, 0.18242552],
    ),
    "tanhshrink": (
        [-1.03597242, -0.03788284, 0.00868739, 0.59485175],
        [0.92934918, 0.21355227, 0.08486304, 0.81929336],
    ),
    "softsign": (
        [-0.66666667, -0.33333333, 0.23076923, 0.6],
        [0.11111111, 0.44444444, 0.59171598, 0.16],
    ),
    "elu": ([-0.86466472, -0.39346934, 0.3, 1.5], [0.13533528, 0.60653066, 1.0, 1.0]),
    "selu": (
        [-1.52016647, -0.69175819, 0.3152103, 1.57605148],
        [0.23793287, 1.06634115, 1.05070099, 1.05070099],
    ),
    "celu": ([-0.86466472, -0.39346934, 0.3, 1.5], [0.13533528, 0.60653066, 1.0, 1.0]),
    "leaky_relu": ([-0.02, -0.005, 0.3, 1.5], [0.01, 0.01, 1.0, 1.0]),
    "hardtanh": ([-1.0, -0.5, 0.3, 1.0], [0.0, 1.0, 1.0, 0.0]),
    "relu6": ([0.0, 0.0, 0.3, 1.5], [0.0, 0.0, 1.0, 1.0]),
}


def close(actual, expected, rtol=1e-7, atol=1e-8):
    np.testing.assert_allclose(np.asarray(actual.detach().numpy()), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(TORCH))
def test_activation_values_and_gradients_match_pytorch(name):
    x = dualad.tensor(X, requires_grad=True)
    y = getattr(F, name)(x)
    (g,) = dualad.autograd.grad(y.sum(), x)
    values, grads = TORCH[name]
    close(y, values)
    close(g, grads)
    close(getattr(dualad, name)(x), values)  # the op's own spelling
    close(getattr(x, name)(), values)  # and the Tensor method


def test_gelu_tanh_matches_pytorch():
    close(
        F.gelu(dualad.tensor(X), approximate="tanh"),
        [-0.04540231, -0.15428599, 0.18537092, 1.39957158],
    )


def test_parameters_match_their_formulas():
    x = dualad.tensor(X)
    xs = np.array(X)
    close(F.elu(x, alpha=0.5), np.where(xs > 0, xs, 0.5 * np.expm1(xs)))
    close(F.celu(x, alpha=2.0), np.where(xs > 0, xs, 2.0 * np.expm1(xs / 2.0)))
    close(F.leaky_relu(x, 0.2), np.where(xs > 0, xs, 0.2 * xs))
    close(F.hardtanh(x, -0.5, 0.5), np.clip(xs, -0.5, 0.5))
    close(F.softplus(x, beta=2.0), np.log1p(np.exp(2 * xs)) / 2)


def test_kinks_follow_pytorch_conventions():
    x = dualad.tensor([0.0, 0.0, 6.0, -1.0, 1.0], requires_grad=True)

    def g(f):
        return dualad.autograd.grad(f(x).sum(), x)[0]

    close(g(lambda v: F.leaky_relu(v, 0.1))[:2], [0.1, 0.1])  # the negative side's slope
    close(g(F.relu6)[:3], [0.0, 0.0, 0.0])  # no gradient at 0 and 6
    close(g(F.hardtanh)[3:], [0.0, 0.0])  # nor at min_val and max_val
    close(g(lambda v: F.elu(v, alpha=2.0))[:1], [2.0])  # the negative side's derivative alpha
    close(g(F.selu)[:1], [1.0507009873554805 * 1.6732632423543772])
    close(g(F.relu)[:1], [0.0])


def test_large_inputs_stay_finite_and_exact():
    big = dualad.tensor([-1000.0, 1000.0], requires_grad=True)
    for f, values, grads in [
        (F.logsigmoid, [-1000.0, 0.0], [1.0, 0.0]),
        (F.silu, [0.0, 1000.0], [0.0, 1.0]),
        (F.mish, [0.0, 1000.0], [0.0, 1.0]),
        (F.gelu, [0.0, 1000.0], [0.0, 1.0]),
        (F.elu, [-1.0, 1000.0], [0.0, 1.0]),
        (F.softsign, [-1000 / 1001, 1000 / 1001], [1 / 1001**2, 1 / 1001**2]),
    ]:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            y = f(big)
            (g,) = dualad.autograd.grad(y.sum(), big)
        close(y, values)
        close(g, grads)


def test_inplace_variants_write_into_their_input_and_keep_the_graph():
    a = dualad.tensor([-0.5, 2.0], requires_grad=True)
    for f, expected_grad in [
        (lambda v: F.relu(v, inplace=True), [0.0, 1.0]),
        (F.relu_, [0.0, 1.0]),
        (lambda v: F.elu(v, inplace=True), [np.exp(-0.5), 1.0]),
        (lambda v: F.leaky_relu_(v, 0.5), [0.5, 1.0]),
        (lambda v: F.hardtanh(v, inplace=True), [1.0, 0.0]),
    ]:
        b = a * 1.0
        out = f(b)
        assert out is b
        (g,) = dualad.autograd.grad(out.sum(), a)
        close(g, expected_grad)


def test_activation_errors():
    x = dualad.tensor(X)
    with pytest.raises(ValueError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="fast")
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 1.0, -1.0)
    with pytest.raises(ValueError, match="alpha must be nonzero"):
        F.celu(x, alpha=0.0)
    with pytest.raises(TypeError, match="complex"):
        F.gelu(dualad.tensor([1j]))
    with pytest.raises(TypeError, match="negative_slope"):
        F.leaky_relu(x, "0.1")


# ---------------------------------------------------------------------------------------------
# softmax and log_softmax


def test_softmax_values_match_numpy_and_spellings_agree():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(3, 4, 5)) * 10
    x = dualad.tensor(xs)
    for dim in (0, 1, -1):
        e = np.exp(xs - xs.max(axis=dim, keepdims=True))
        expected = e / e.sum(axis=dim, keepdims=True)
        close(F.softmax(x, dim), expected, rtol=1e-12)
        close(dualad.softmax(x, dim=dim), expected, rtol=1e-12)
        close(x.softmax(dim), expected, rtol=1e-12)
        close(dualad.softmax(x, axis=dim), expected, rtol=1e-12)
        close(x.log_softmax(dim), np.log(expected), rtol=1e-12)
        close(F.log_softmax(x, dim), np.log(expected), rtol=1e-12)
        close(F.softmin(x, dim), F.softmax(-x, dim).numpy(), rtol=1e-12)


def test_softmax_dtype_casts_first():
    x = dualad.tensor([1.0, 2.0], dtype=dualad.float32)
    assert F.softmax(x, 0, dtype=dualad.float64).dtype == np.float64
    assert F.log_softmax(dualad.tensor([1, 2]), 0).dtype == dualad.get_default_dtype()


def test_softmax_without_dim_warns_and_uses_pytorchs_implicit_dim():
    x = dualad.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x)
    close(y, F.softmax(x, 1).numpy())


def test_softmax_of_a_0d_tensor_is_one():
    close(F.softmax(dualad.tensor(3.0), 0), 1.0)
    close(F.log_softmax(dualad.tensor(3.0), 0), 0.0)


def _masked_rows():
    return dualad.tensor([[-INF, -INF, -INF], [1.0, -INF, 2.0]], requires_grad=True)


def test_softmax_of_an_all_minus_inf_slice_is_zero_with_zero_gradient():
    # PyTorch gives NaN forward and backward; the documented choice here: 0 and gradient 0
    x = _masked_rows()
    y = F.softmax(x, 1)
    close(y[0], [0.0, 0.0, 0.0])
    close(y[1], [1 / (1 + np.e), 0.0, np.e / (1 + np.e)])
    ct = dualad.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    (g,) = dualad.autograd.grad(y, x, ct)
    assert np.isfinite(g.numpy()).all()
    close(g[0], [0.0, 0.0, 0.0])
    s = 1 / (1 + np.e)
    close(g[1], [s * (1 - s) * (1 - 3), 0.0, s * (1 - s) * (3 - 1)])


def test_log_softmax_of_an_all_minus_inf_slice_is_minus_inf_with_zero_gradient():
    x = _masked_rows()
    y = F.log_softmax(x, 1)
    close(y[0], [-INF, -INF, -INF])
    (g,) = dualad.autograd.grad(y, x, dualad.ones(2, 3))
    close(g[0], [0.0, 0.0, 0.0])
    # a single -inf in a live slice: the exact gradient of x_i - logsumexp(x)
    s = np.exp(y[1].detach().numpy())
    close(g[1], 1 - 3 * s)


@pytest.mark.parametrize("f", [lambda x: F.softmax(x, 1), lambda x: F.log_softmax(x, 1)])
def test_forward_mode_and_second_order_at_the_all_minus_inf_slice(f):
    x = _masked_rows().detach()
    t = dualad.tensor([[1.0, -2.0, 0.5], [0.3, 0.7, -1.0]])
    _, tangent = jvp(f, (x,), (t,))
    close(tangent[0], [0.0, 0.0, 0.0])
    assert np.isfinite(tangent.numpy()).all()

    def scalar(v):
        y = f(v)
        return dualad.where(dualad.isinf(y), 0.0, y * t).sum()

    for h in (hessian(scalar)(x), jacfwd(jacrev(scalar))(x)):
        h = h.numpy()
        assert np.isfinite(h).all()
        assert not h[0].any() and not h[:, :, 0].any()  # the masked row: no second derivatives


def test_softmax_plus_inf_and_nan_give_nan_like_pytorch():
    y = F.softmax(dualad.tensor([INF, 0.0]), 0).numpy()
    assert np.isnan(y).all()
    assert np.isnan(F.log_softmax(dualad.tensor([np.nan, 0.0]), 0).numpy()).all()


def test_logsumexp_of_all_minus_inf_is_minus_inf_with_zero_derivatives():
    x = dualad.tensor([[-INF, -INF], [0.0, 1.0]], requires_grad=True)
    y = F.logsumexp(x, 1)
    close(y[0], -INF)
    (g,) = dualad.autograd.grad(y[0], x)
    close(g, [[0.0, 0.0], [0.0, 0.0]])
    _, tangent = jvp(lambda v: dualad.logsumexp(v, 1), (x.detach(),), (dualad.ones(2, 2),))
    close(tangent[0], 0.0)
    h = hessian(
        lambda v: (
            dualad.logsumexp(v, 1)[1]
            + dualad.where(dualad.isinf(dualad.logsumexp(v, 1)), 0.0, dualad.logsumexp(v, 1))[0]
        )
    )(x.detach())
    assert np.isfinite(h.numpy()).all() and not h.numpy()[0].any()


def test_softmax_under_vmap_matches_a_loop_and_per_example_jacobians():
    rng = np.random.default_rng(2)
    xs = dualad.tensor(rng.normal(size=(4, 3, 5)))
    for f in (lambda v: F.softmax(v, -1), lambda v: F.log_softmax(v, 0)):
        batched = vmap(jacrev(f))(xs).numpy()
        for i in range(4):
            np.testing.assert_allclose(batched[i], jacrev(f)(xs[i]).numpy(), atol=1e-14)
    g = vmap(grad(lambda v: F.log_softmax(v, 0)[1]))(xs[:, 0]).numpy()
    s = F.softmax(xs[:, 0], 1).numpy()
    np.testing.assert_allclose(g, np.eye(5)[1] - s, atol=1e-14)


def test_softmax_errors():
    x = dualad.tensor([[1.0, 2.0]])
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(x, 2)
    with pytest.raises(TypeError, match="complex"):
        F.softmax(dualad.tensor([1j, 2.0]), 0)
    with pytest.raises(TypeError, match="pass either dim= or axis="):
        dualad.softmax(x, dim=0, axis=0)


# ---------------------------------------------------------------------------------------------
# the piecewise composites of F, at their kinks too (PyTorch's numbers)

KINKS = [-4.0, -3.0, -0.7, 0.2, 0.5, 3.0, 4.0]


@pytest.mark.parametrize(
    "f, values, grads",
    [
        (
            F.hardsigmoid,
            [0.0, 0.0, 0.3833333333333333, 0.5333333333333333, 0.5833333333333334, 1.0, 1.0],
            [0.0, 0.0, 1 / 6, 1 / 6, 1 / 6, 0.0, 0.0],
        ),
        (
            F.hardswish,
            [0.0, 0.0, -0.2683333333333333, 0.10666666666666669, 0.2916666666666667, 3.0, 4.0],
            [0.0, 0.0, 0.2666666666666667, 0.5666666666666667, 0.6666666666666666, 1.0, 1.0],
        ),
        (
            F.hardshrink,
            [-4.0, -3.0, -0.7, 0.0, 0.0, 3.0, 4.0],
            [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0],
        ),
        (
            F.softshrink,
            [-3.5, -2.5, -0.2, 0.0, 0.0, 2.5, 3.5],
            [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0],
        ),
        (
            lambda v: F.threshold(v, 0.2, -1.0),
            [-1.0, -1.0, -1.0, -1.0, 0.5, 3.0, 4.0],
            [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        ),
    ],
)
def test_piecewise_composites_match_pytorch_at_their_kinks(f, values, grads):
    x = dualad.tensor(KINKS, requires_grad=True)
    y = f(x)
    (g,) = dualad.autograd.grad(y.sum(), x)
    close(y, values)
    close(g, grads)


def test_hardswish_is_finite_at_infinities():
    x = dualad.tensor([-INF, INF], requires_grad=True)
    with np.errstate(invalid="raise"):
        y = F.hardswish(x)
        (g,) = dualad.autograd.grad(y.sum(), x)
    close(y, [0.0, INF])
    close(g, [0.0, 1.0])


def test_glu_and_prelu_match_pytorch():
    x = dualad.tensor([[1.0, -2.0, 0.5, 3.0]], requires_grad=True)
    y = F.glu(x)
    close(y, [[0.6224593312018546, -1.9051482536448667]])
    (g,) = dualad.autograd.grad(y.sum(), x)
    close(g, [[0.6224593312018546, 0.9525741268224334, 0.2350037122015945, -0.090353319461824]])
    xp = dualad.tensor([[-1.0, 2.0], [-3.0, -0.5]])
    close(F.prelu(xp, dualad.tensor([0.25, 0.5])), [[-0.25, 2.0], [-0.75, -0.25]])
    close(F.prelu(xp, dualad.tensor([0.1])), [[-0.1, 2.0], [-0.3, -0.05]])
    w = dualad.tensor([0.25], requires_grad=True)
    z = dualad.tensor([0.0, -2.0], requires_grad=True)
    gz, gw = dualad.autograd.grad(F.prelu(z, w).sum(), (z, w))
    close(gz, [0.25, 0.25])  # at 0: the negative side's slope, as in PyTorch
    close(gw, [-2.0])
    with pytest.raises(ValueError, match="Halving dimension must be even"):
        F.glu(dualad.ones(3))
    with pytest.raises(ValueError, match="Mismatch of parameter numbers"):
        F.prelu(xp, dualad.ones(3))
    with pytest.raises(ValueError, match="lambda must be greater or equal to 0"):
        F.softshrink(xp, -1.0)
