"""The losses of dualad.nn.functional: values and gradients against numbers taken from PyTorch
2.13 (float64), the singular points they define, per-example gradients under vmap, and the errors
they raise on bad input. (Derivatives against finite differences, JVPs, vmap against loops and
second order come from the op database entries in dualad/testing/opdb/nn_composites.py.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.func import grad, jacfwd, jacrev, vmap

SCORES = [[2.0, 0.0, -1.0, 0.5], [0.0, 1.0, 0.0, -2.0], [1.5, -0.5, 0.25, 0.0]]
WEIGHT = [1.0, 2.0, 0.5, 1.5]
TARGET = [0, 3, 1]
TARGET_IGNORED = [0, -100, 1]


def close(actual, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual.detach().numpy()), expected, rtol=rtol, atol=atol)


def value_and_grad(fn, x):
    x = dualad.tensor(x, requires_grad=True)
    y = fn(x)
    (g,) = dualad.autograd.grad(y.sum(), x)
    return y, g


# ---------------------------------------------------------------------------------------------
# cross_entropy and nll_loss against PyTorch

CE_CASES = [
    ({}, TARGET, 2.1399320328715574, [-0.09663335903794193, 0.032033858063365735]),
    ({}, TARGET_IGNORED, 1.42003593770359, [-0.1449500385569129, 0.048050787095048605]),
    ({"reduction": "sum"}, TARGET_IGNORED, 2.84007187540718, [-0.2899000771138258, 0.0961015741]),
    ({"weight": WEIGHT}, TARGET, 2.37941788960795, [-0.06442223935862795, 0.021355905375577]),
    ({"weight": WEIGHT}, TARGET_IGNORED, 1.7792647228081793, [-0.09663335903794193, 0.0320338581]),
    (
        {"weight": WEIGHT, "label_smoothing": 0.2},
        TARGET,
        2.211578539387175,
        [-0.023198906882114904, 0.00020147842213379317],
    ),
    (
        {"weight": WEIGHT, "label_smoothing": 0.2},
        TARGET_IGNORED,
        1.7371677678638084,
        [-0.034798360323172337, 0.00030221763320069416],
    ),
    ({"label_smoothing": 0.1}, TARGET, 2.1086820328715574, [-0.0716333590379419, 0.0237005247]),
    ({"label_smoothing": 0.1}, TARGET_IGNORED, 1.4606609377035902, [-0.1074500385569, 0.03555079]),
]


@pytest.mark.parametrize("kwargs, target, value, grad_row0", CE_CASES)
def test_cross_entropy_matches_pytorch(kwargs, target, value, grad_row0):
    kwargs = {k: dualad.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
    y, g = value_and_grad(lambda s: F.cross_entropy(s, dualad.tensor(target), **kwargs), SCORES)
    close(y, value)
    close(g[0, :2], grad_row0, rtol=1e-6)
    if -100 in target:
        close(g[1], [0.0] * 4)  # the ignored row gets no gradient


def test_cross_entropy_unreduced_with_weights_and_smoothing_matches_pytorch():
    y, g = value_and_grad(
        lambda s: F.cross_entropy(
            s,
            dualad.tensor(TARGET_IGNORED),
            weight=dualad.tensor(WEIGHT),
            reduction="none",
            label_smoothing=0.3,
        ),
        SCORES,
    )
    close(y, [0.9492758010690587, 0.0, 4.19908207010581])
    close(g[2], [1.0040468766993513, -1.4039668853163108, 0.2716521062113702, 0.1282679024055])


def test_cross_entropy_with_class_probabilities_matches_pytorch():
    p = dualad.tensor([[0.1, 0.2, 0.3, 0.4], [0.25] * 4, [0.7, 0.1, 0.1, 0.1]])
    s = dualad.tensor(SCORES)
    close(F.cross_entropy(s, p), 1.681598699538224)
    close(
        F.cross_entropy(s, p, weight=dualad.tensor(WEIGHT), label_smoothing=0.2),
        2.072089482702086,
    )
    close(
        F.cross_entropy(s, p, reduction="none"),
        [2.2423495823898225, 1.8297242232074917, 0.9727222930173579],
    )


def test_nll_loss_over_spatial_dims_matches_pytorch():
    logp = F.log_softmax(dualad.sin(dualad.arange(24.0).reshape(2, 3, 2, 2)), 1)
    target = dualad.tensor([[[0, 1], [2, -100]], [[1, 1], [0, 2]]])
    close(F.nll_loss(logp, target, weight=dualad.tensor([1.0, 2.0, 3.0])), 1.9047979215878197)


def test_cross_entropy_is_nll_of_log_softmax_with_numpy_reference():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 4, 3))
    t = rng.integers(0, 4, size=(5, 3))
    z = x - x.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    expected = -np.take_along_axis(logp, t[:, None], 1).mean()
    close(F.cross_entropy(dualad.tensor(x), dualad.tensor(t)), expected)
    close(F.nll_loss(F.log_softmax(dualad.tensor(x), 1), dualad.tensor(t)), expected)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_all_targets_ignored_gives_nan_mean_and_zero_gradient():
    # PyTorch: 0 / 0 = NaN for the mean; sum and none are 0; no gradient anywhere
    s = dualad.tensor(SCORES, requires_grad=True)
    t = dualad.tensor([-100, -100, -100])
    assert np.isnan(F.cross_entropy(s, t).item())
    close(F.cross_entropy(s, t, reduction="sum"), 0.0)
    (g,) = dualad.autograd.grad(F.cross_entropy(s, t, reduction="sum"), s)
    close(g, np.zeros((3, 4)))


def test_ignored_entries_with_infinite_log_probabilities_stay_finite():
    # an ignored row may hold -inf log-probabilities (a masked row): neither the loss nor the
    # gradient may pick up 0 * inf = NaN from it
    inf = float("inf")
    logp = dualad.tensor([[-inf, -inf], [-0.5, -1.0]], requires_grad=True)
    w = dualad.tensor([1.0, 2.0], requires_grad=True)
    loss = F.nll_loss(logp, dualad.tensor([-100, 1]), weight=w)
    close(loss, 1.0)
    g_logp, g_w = dualad.autograd.grad(loss, (logp, w))
    close(g_logp, [[0.0, 0.0], [0.0, -1.0]])
    close(g_w, [0.0, 0.0])


def test_cross_entropy_of_a_masked_row_of_scores():
    # scores -inf everywhere except the target: loss 0, gradient 0, no NaN
    inf = float("inf")
    s = dualad.tensor([[-inf, 3.0, -inf]], requires_grad=True)
    loss = F.cross_entropy(s, dualad.tensor([1]))
    close(loss, 0.0)
    (g,) = dualad.autograd.grad(loss, s)
    close(g, [[0.0, 0.0, 0.0]])


def test_unbatched_input_has_classes_along_dim_0():
    s = dualad.tensor([1.0, 2.0, 0.5])
    expected = F.cross_entropy(s.reshape(1, 3), dualad.tensor([2]))
    close(F.cross_entropy(s, dualad.tensor(2)), expected.item())


# ---------------------------------------------------------------------------------------------
# regression losses, binary cross entropy, kl_div against PyTorch

X = [0.5, -1.0, 2.0, 0.0]
Y = [1.0, 0.5, -1.0, 0.25]
W = [1.0, 2.0, 0.5, 3.0]


@pytest.mark.parametrize(
    "fn, kwargs, expected",
    [
        (F.mse_loss, {}, 2.890625),
        (F.mse_loss, {"reduction": "none"}, [0.25, 2.25, 9.0, 0.0625]),
        (F.l1_loss, {}, 1.3125),
        (F.huber_loss, {}, 0.9140625),
        (F.huber_loss, {"reduction": "none"}, [0.125, 1.0, 2.5, 0.03125]),
        (F.huber_loss, {"delta": 0.5}, 0.5390625),
        (F.smooth_l1_loss, {}, 0.9140625),
        (F.smooth_l1_loss, {"beta": 2.0}, 0.66015625),
        (F.smooth_l1_loss, {"beta": 0.0}, 1.3125),
        (F.mse_loss, {"weight": W}, 1.4519230769230769),
        (F.l1_loss, {"weight": W}, 0.8846153846153846),
        (F.huber_loss, {"weight": W}, 0.8671875),
    ],
)
def test_regression_losses_match_pytorch(fn, kwargs, expected):
    kwargs = {k: dualad.tensor(v) if k == "weight" else v for k, v in kwargs.items()}
    close(fn(dualad.tensor(X), dualad.tensor(Y), **kwargs), expected)


def test_l1_loss_gradient_at_a_tie_is_zero():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    (g,) = dualad.autograd.grad(F.l1_loss(x, dualad.tensor([1.0, 0.0]), reduction="sum"), x)
    close(g, [0.0, 1.0])


def test_binary_cross_entropy_matches_pytorch():
    p = dualad.tensor([0.1, 0.5, 0.9, 0.999])
    t = dualad.tensor([1.0, 0.0, 0.3, 1.0])
    close(F.binary_cross_entropy(p, t), 1.1600376234201886)
    close(F.binary_cross_entropy(p, t, weight=dualad.tensor(W), reduction="sum"), 4.5135898150113)


def test_binary_cross_entropy_clamps_logs_at_minus_100():
    # PyTorch's value at the saturated points; the gradient there is the clamped function's: 0
    p = dualad.tensor([0.0, 1.0, 1.0], requires_grad=True)
    t = dualad.tensor([1.0, 0.0, 1.0])
    loss = F.binary_cross_entropy(p, t, reduction="none")
    close(loss, [100.0, 100.0, 0.0])
    (g,) = dualad.autograd.grad(loss.sum(), p)
    assert np.isfinite(g.numpy()).all()
    close(g[:2], [0.0, 0.0])


def test_binary_cross_entropy_with_logits_matches_pytorch_and_is_stable():
    x = dualad.tensor([[-3.0, 0.5, 20.0], [1.0, -40.0, 2.0]], requires_grad=True)
    y = dualad.tensor([[0.0, 1.0, 0.5], [1.0, 1.0, 0.0]])
    pw = dualad.tensor([1.0, 2.0, 0.5])
    loss = F.binary_cross_entropy_with_logits(x, y, pos_weight=pw)
    close(loss, 15.572821836673505)
    (g,) = dualad.autograd.grad(loss, x)
    close(
        g,
        [
            [0.00790431219626113, -0.1258468895993818, 0.08333333307568913],
            [-0.04482357022833252, -0.3333333333333333, 0.14679951299631372],
        ],
        rtol=1e-8,
    )
    big = dualad.tensor([1000.0, -1000.0, 1000.0], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(big, dualad.tensor([0.0, 1.0, 1.0]), reduction="sum")
    close(loss, 2000.0)
    (g,) = dualad.autograd.grad(loss, big)
    close(g, [1.0, -1.0, 0.0])  # sigmoid(x) - y, exactly


def test_kl_div_matches_pytorch():
    lp = dualad.log(dualad.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]))
    q = dualad.tensor([[0.1, 0.0, 0.9], [0.5, 0.25, 0.25]])
    close(F.kl_div(lp, q, reduction="batchmean"), 0.2760123978644927)
    close(F.kl_div(lp, q, reduction="sum"), 0.5520247957289854)
    close(F.kl_div(lp, q, reduction="none")[0], [-0.06931471805599451, 0.0, 0.529007998411907])
    log_q = dualad.log(dualad.tensor([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
    close(F.kl_div(lp, log_q, reduction="batchmean", log_target=True), 0.08872717066514721)
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(lp, q)


def test_legacy_size_average_and_reduce_map_to_reductions():
    x, y = dualad.tensor(X), dualad.tensor(Y)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        close(F.mse_loss(x, y, size_average=False), 11.5625)
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.l1_loss(x, y, reduce=False).shape == (4,)


# ---------------------------------------------------------------------------------------------
# per-example gradients and higher order


def _classifier_loss(params, x, t):
    w, b = params
    hidden = F.gelu(F.linear(x, w, b))
    return F.cross_entropy(hidden, t, label_smoothing=0.1)


def test_per_example_gradients_of_a_classifier_vmap_matches_a_loop():
    rng = np.random.default_rng(0)
    w = dualad.tensor(rng.normal(size=(4, 3)))
    b = dualad.tensor(rng.normal(size=(4,)))
    xs = dualad.tensor(rng.normal(size=(6, 3)))
    ts = dualad.tensor(rng.integers(0, 4, size=6))
    per_example = vmap(grad(_classifier_loss), in_dims=(None, 0, 0))((w, b), xs, ts)
    for i in range(6):
        gw, gb = grad(_classifier_loss)((w, b), xs[i], ts[i])
        close(per_example[0][i], gw.numpy())
        close(per_example[1][i], gb.numpy())


@pytest.mark.parametrize(
    "loss",
    [
        lambda s, t, p: F.cross_entropy(s, t, weight=dualad.tensor(WEIGHT), label_smoothing=0.2),
        lambda s, t, p: F.cross_entropy(s, p, label_smoothing=0.1),
        lambda s, t, p: F.nll_loss(F.log_softmax(s, 1), t, reduction="sum"),
        lambda s, t, p: F.kl_div(F.log_softmax(s, 1), p, reduction="batchmean"),
        lambda s, t, p: F.binary_cross_entropy_with_logits(s, p, pos_weight=dualad.tensor(WEIGHT)),
    ],
)
def test_hessians_of_losses_reverse_and_forward_agree(loss):
    rng = np.random.default_rng(1)
    s = dualad.tensor(rng.normal(size=(3, 4)))
    t = dualad.tensor([0, -100, 3])
    p = dualad.tensor(rng.dirichlet(np.ones(4), size=3))
    f = lambda s: loss(s, t, p)
    h_rev = jacrev(jacrev(f))(s).numpy()
    h_fwd = jacfwd(jacrev(f))(s).numpy()
    np.testing.assert_allclose(h_rev, h_fwd, atol=1e-12)
    eps = 1e-6
    g = lambda v: grad(f)(dualad.tensor(v)).numpy()
    base = s.numpy()
    direction = rng.normal(size=(3, 4))
    fd = (g(base + eps * direction) - g(base - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", h_rev, direction), fd, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    "call",
    [
        lambda x, t: F.cross_entropy(x, t, reduction="avg"),
        lambda x, t: F.nll_loss(x, t, reduction="batchmean"),
        lambda x, t: F.mse_loss(x, x, reduction="total"),
        lambda x, t: F.kl_div(x, x, reduction="max"),
        lambda x, t: F.binary_cross_entropy_with_logits(x, x, reduction=None),
    ],
)
def test_bad_reduction_names_the_value(call):
    x = dualad.tensor([[0.1, 0.9], [0.5, 0.5]])
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        call(x, dualad.tensor([0, 1]))


def test_class_target_errors():
    x = dualad.tensor(SCORES)
    with pytest.raises(TypeError, match="integer"):
        F.nll_loss(x, dualad.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target"):
        F.cross_entropy(x, dualad.tensor([0, 1]))
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.cross_entropy(x, dualad.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        F.nll_loss(x, dualad.tensor([0, -1, 1]))
    with pytest.raises(ValueError, match="weight tensor should be defined"):
        F.cross_entropy(x, dualad.tensor(TARGET), weight=dualad.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"label_smoothing must be between 0\.0 and 1\.0"):
        F.cross_entropy(x, dualad.tensor(TARGET), label_smoothing=1.5)
    with pytest.raises(ValueError, match="ignore_index is not supported for floating point"):
        F.cross_entropy(x, dualad.ones(3, 4) / 4, ignore_index=0)
    with pytest.raises(ValueError, match="Expected 1 or more dimensions"):
        F.cross_entropy(dualad.tensor(1.0), dualad.tensor(0))


def test_binary_losses_errors():
    p = dualad.tensor([0.5, 0.5])
    with pytest.raises(ValueError, match="that is different to the input size"):
        F.binary_cross_entropy(p, dualad.tensor([1.0]))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(dualad.tensor([1.5, 0.5]), p)
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(p, dualad.tensor([[1.0, 0.0]]))
    with pytest.raises(ValueError, match="non-positive values for delta"):
        F.huber_loss(p, p, delta=0.0)
    with pytest.raises(ValueError, match="negative values for beta"):
        F.smooth_l1_loss(p, p, beta=-1.0)
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(p, p, weight=dualad.tensor([1.0]))


def test_broadcast_target_warns_like_pytorch():
    with pytest.warns(UserWarning, match="different to the input size"):
        loss = F.mse_loss(dualad.tensor([[1.0, 2.0]]), dualad.tensor([0.0]))
    close(loss, 2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(dualad.tensor([1.0]), dualad.tensor([0.0]))
