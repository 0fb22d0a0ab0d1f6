"""Layers of dualad.nn.functional: values and gradients against numbers taken from PyTorch 2.13
(float64), dropout's statistics and vmap randomness modes, embedding's padding_idx and max_norm,
one_hot, pad's modes, and the errors they raise. (Finite differences, JVPs, vmap against loops and
second order come from the op database entries in dualad/testing/opdb/nn_composites.py.)

(Named test_nn_layers.py: tests/ops/test_layers.py exists and pytest needs unique basenames.)"""

from __future__ import annotations

import re

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.func import grad, jacfwd, jacrev, jvp, vmap


def close(actual, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual.detach().numpy()), expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------
# linear, bilinear, layer_norm, normalize


def test_linear_and_bilinear_match_pytorch():
    x1, x2 = dualad.tensor([[1.0, 2.0]]), dualad.tensor([[0.5, -1.0, 2.0]])
    w = dualad.arange(12.0).reshape(2, 2, 3) / 10
    close(F.bilinear(x1, x2, w, dualad.tensor([1.0, -1.0])), [[2.8, 3.5]])
    x = dualad.tensor([[1.0, 2.0, 3.0]])
    close(F.linear(x, dualad.tensor([1.0, 0.0, -1.0])), [-2.0])  # a 1-d weight


def test_layer_norm_matches_pytorch():
    x = dualad.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
    w, b = dualad.tensor([1.0, 0.5, 2.0]), dualad.tensor([0.1, 0.0, -0.1])
    y = F.layer_norm(x, (3,), w, b)
    close(y[0], [-0.9690415314502977, -0.13363019143128727, 2.5726038286257435], rtol=1e-9)
    (g,) = dualad.autograd.grad((y * dualad.tensor([[1.0, 2, 3], [4, 5, 6]])).sum(), x)
    close(g[1], [-0.8163685044951903, 0.5102191366931867, 0.30614936780200397], rtol=1e-8)
    close(F.layer_norm(x, 3), F.layer_norm(x, [3]).detach().numpy())


def test_normalize_matches_pytorch_at_a_zero_vector_too():
    x = dualad.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
    y = F.normalize(x)
    close(y, [[0.6, 0.8], [0.0, 0.0]])
    (g,) = dualad.autograd.grad((y * dualad.tensor([[1.0, 2], [3, 4]])).sum(), x)
    close(g, [[-0.064, 0.048], [3e12, 4e12]], rtol=1e-9)  # at 0: ct / eps, PyTorch's value
    close(
        F.normalize(dualad.tensor([[3.0, -4.0], [1.0, 2.0]]), p=1, dim=0),
        [[0.75, -2 / 3], [0.25, 1 / 3]],
    )
    out = dualad.zeros(2, 2)
    assert F.normalize(x.detach(), out=out) is out
    close(out, [[0.6, 0.8], [0.0, 0.0]])


def test_layer_errors():
    with pytest.raises(ValueError, match="mat1 and mat2 shapes cannot be multiplied"):
        F.linear(dualad.ones(2, 3), dualad.ones(4, 2))
    with pytest.raises(ValueError, match="bilinear"):
        F.bilinear(dualad.ones(2, 3), dualad.ones(3, 2), dualad.ones(4, 3, 2))
    with pytest.raises(ValueError, match=r"expected input with shape \[\*, 4\]"):
        F.layer_norm(dualad.ones(2, 3), (4,))
    with pytest.raises(ValueError, match="weight must have shape"):
        F.layer_norm(dualad.ones(2, 3), (3,), weight=dualad.ones(2))


# ---------------------------------------------------------------------------------------------
# dropout


def test_dropout_statistics_and_scaling():
    dualad.manual_seed(0)
    x = dualad.ones(200_000)
    for p in (0.1, 0.5, 0.9):
        y = F.dropout(x, p).numpy()
        kept = y != 0
        assert abs(kept.mean() - (1 - p)) < 0.005
        np.testing.assert_allclose(y[kept], 1 / (1 - p))
        assert abs(y.mean() - 1.0) < 0.03  # unbiased


def test_dropout_gradient_is_the_mask_over_keep_probability():
    dualad.manual_seed(1)
    x = dualad.randn(1000, requires_grad=True)
    y = F.dropout(x, 0.3)
    (g,) = dualad.autograd.grad(y.sum(), x)
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(g.numpy(), kept / 0.7)


def test_dropout_identity_cases_and_p_one():
    x = dualad.randn(5, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    y = F.dropout(x, 1.0)
    close(y, np.zeros(5))
    (g,) = dualad.autograd.grad(y.sum(), x)
    close(g, np.zeros(5))


def test_dropout_inplace_writes_into_its_input():
    dualad.manual_seed(2)
    a = dualad.ones(100, requires_grad=True)
    b = a * 1.0
    out = F.dropout(b, 0.5, inplace=True)
    assert out is b
    (g,) = dualad.autograd.grad(out.sum(), a)
    np.testing.assert_allclose(g.numpy(), out.detach().numpy())


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_outside_0_1_raises(p):
    with pytest.raises(
        ValueError, match=re.escape(f"dropout probability has to be between 0 and 1, but got {p}")
    ):
        F.dropout(dualad.ones(3), p)
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout2d(dualad.ones(2, 3, 4, 4), p)


def test_dropout_under_vmap_randomness_modes():
    x = dualad.ones(8, 500)
    with pytest.raises(RuntimeError, match=r"vmap: .*random"):
        vmap(lambda v: F.dropout(v, 0.5))(x)
    same = vmap(lambda v: F.dropout(v, 0.5), randomness="same")(x).numpy()
    assert (same == same[0]).all()  # one mask for every example
    assert 0.4 < (same[0] != 0).mean() < 0.6
    different = vmap(lambda v: F.dropout(v, 0.5), randomness="different")(x).numpy()
    assert not (different == different[0]).all()  # a mask per example
    assert 0.45 < (different != 0).mean() < 0.55
    # not training: no random draw at all, so even randomness="error" passes
    close(vmap(lambda v: F.dropout(v, 0.5, training=False))(x), np.ones((8, 500)))


def test_per_example_gradients_through_dropout_with_different_masks():
    dualad.manual_seed(3)
    w = dualad.randn(6)
    xs = dualad.randn(4, 6)

    def loss(w, x):
        return (F.dropout(x * w, 0.5) ** 2).sum()

    grads = vmap(grad(loss), in_dims=(None, 0), randomness="different")(w, xs).numpy()
    # each row's gradient is 2 (x w)^2 / w * (mask / 0.5)^2 on its own mask: zeros differ per row
    zero_pattern = grads == 0
    assert not (zero_pattern == zero_pattern[0]).all()
    kept = ~zero_pattern
    expected = 2 * (xs.numpy() ** 2) * w.numpy() * 4
    np.testing.assert_allclose(grads[kept], expected[kept])


def test_channel_dropout_drops_whole_channels():
    dualad.manual_seed(4)
    y = F.dropout2d(dualad.ones(16, 32, 3, 3), 0.5).numpy()
    per_channel = y.reshape(16, 32, 9)
    assert (per_channel == per_channel[..., :1]).all()
    assert 0.4 < (per_channel[..., 0] != 0).mean() < 0.6
    y1 = F.dropout1d(dualad.ones(32, 5), 0.5).numpy()  # unbatched (C, L)
    assert (y1 == y1[:, :1]).all()
    with pytest.raises(ValueError, match="Expected 4D or 5D input"):
        F.dropout3d(dualad.ones(2, 3), 0.5)


# ---------------------------------------------------------------------------------------------
# embedding and one_hot


def test_embedding_padding_idx_row_gets_no_derivative():
    w = dualad.tensor([[0.5, 1.0], [1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    idx = dualad.tensor([[1, 2], [0, 1]])
    y = F.embedding(idx, w, padding_idx=0)
    close(y[1, 0], [0.5, 1.0])  # the padding row's values are looked up unchanged
    (g,) = dualad.autograd.grad(y.sum(), w)
    close(g, [[0.0, 0.0], [2.0, 2.0], [1.0, 1.0]])
    # forward mode agrees: the padding row is a constant (its tangent does not reach the output)
    _, t = jvp(lambda v: F.embedding(idx, v, padding_idx=-3), (w.detach(),), (dualad.ones(3, 2),))
    close(t, [[[1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [1.0, 1.0]]])


def test_embedding_max_norm_renormalises_looked_up_rows_in_place_like_pytorch():
    w = dualad.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    out = F.embedding(dualad.tensor([0, 1, 0]), w, max_norm=1.0)
    close(out, [[0.599999988, 0.799999984], [0.3, 0.4], [0.599999988, 0.799999984]], rtol=1e-9)
    close(w, [[0.599999988, 0.799999984], [0.3, 0.4], [6.0, 8.0]], rtol=1e-9)  # row 2: unused


def test_per_example_embedding_gradients_under_vmap():
    w = dualad.tensor(np.arange(10.0).reshape(5, 2))
    idx = dualad.tensor([[0, 1], [4, 4], [2, 0]])

    def loss(w, i):
        return (F.embedding(i, w) ** 2).sum()

    grads = vmap(grad(loss), in_dims=(None, 0))(w, idx).numpy()
    for k in range(3):
        close(grad(loss)(w, idx[k]), grads[k])
    jac = jacfwd(lambda v: F.embedding(idx, v))(w)
    close(jac, jacrev(lambda v: F.embedding(idx, v))(w).numpy())


def test_embedding_errors():
    w = dualad.ones(3, 2)
    with pytest.raises(TypeError, match="integer dtype"):
        F.embedding(dualad.tensor([0.0, 1.0]), w)
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(dualad.tensor([0, 3]), w)
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        F.embedding(dualad.tensor([0]), w, padding_idx=3)
    with pytest.raises(ValueError, match="sparse=True is not supported"):
        F.embedding(dualad.tensor([0]), w, sparse=True)
    with pytest.raises(ValueError, match="scale_grad_by_freq=True is not supported"):
        F.embedding(dualad.tensor([0]), w, scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="'weight' must be 2-D"):
        F.embedding(dualad.tensor([0]), dualad.ones(3))
    with pytest.raises(ValueError, match="max_norm"):
        vmap(lambda i: F.embedding(i, w, max_norm=1.0))(dualad.tensor([[0], [1]]))


def test_one_hot():
    y = F.one_hot(dualad.tensor([[0, 2], [1, 1]]))
    assert y.dtype == np.int64 and y.shape == (2, 2, 3)
    np.testing.assert_array_equal(y.numpy(), np.eye(3, dtype=np.int64)[[[0, 2], [1, 1]]])
    assert F.one_hot(dualad.tensor([1]), num_classes=4).tolist() == [[0, 1, 0, 0]]
    assert not F.one_hot(dualad.tensor([1]), 2).requires_grad
    batched = vmap(lambda t: F.one_hot(t, 3))(dualad.tensor([[0, 1], [2, 2]]))
    np.testing.assert_array_equal(batched.numpy(), np.eye(3, dtype=np.int64)[[[0, 1], [2, 2]]])
    with pytest.raises(TypeError, match="index tensor of integer type"):
        F.one_hot(dualad.tensor([1.0]))
    with pytest.raises(ValueError, match="Class values must be non-negative"):
        F.one_hot(dualad.tensor([-1, 0]), 3)
    with pytest.raises(ValueError, match="Class values must be smaller than num_classes"):
        F.one_hot(dualad.tensor([3]), 3)
    with pytest.raises(ValueError, match="Can not infer total number of classes"):
        F.one_hot(dualad.tensor([], dtype=dualad.int64))
    with pytest.raises(ValueError, match="pass num_classes"):
        vmap(F.one_hot)(dualad.tensor([[0], [1]]))


# ---------------------------------------------------------------------------------------------
# pad

X = np.arange(1.0, 7.0).reshape(1, 2, 3)


@pytest.mark.parametrize(
    "pad, kwargs, expected",
    [
        ((2, 1), {"mode": "reflect"}, [[[3, 2, 1, 2, 3, 2], [6, 5, 4, 5, 6, 5]]]),
        (
            (1, 2, 1, 0),
            {"mode": "replicate"},
            [[[1, 1, 2, 3, 3, 3], [1, 1, 2, 3, 3, 3], [4, 4, 5, 6, 6, 6]]],
        ),
        ((3, 1), {"mode": "circular"}, [[[1, 2, 3, 1, 2, 3, 1], [4, 5, 6, 4, 5, 6, 4]]]),
        ((-1, 2, 1, -1), {"value": 7.0}, [[[7, 7, 7, 7], [2, 3, 7, 7]]]),
    ],
)
def test_pad_matches_pytorch(pad, kwargs, expected):
    close(F.pad(dualad.tensor(X), pad, **kwargs), expected)


def test_pad_gradients_match_pytorch():
    x = dualad.tensor(X, requires_grad=True)
    (g,) = dualad.autograd.grad(F.pad(x, (2, 2), mode="reflect").sum(), x)
    close(g, [[[2.0, 3.0, 2.0], [2.0, 3.0, 2.0]]])
    y = F.pad(x, (1, 1, 1, 1), mode="circular")
    (g,) = dualad.autograd.grad((y * dualad.arange(20.0).reshape(1, 4, 5)).sum(), x)
    close(g, [[[50.0, 24.0, 46.0], [30.0, 14.0, 26.0]]])


def test_pad_errors():
    x = dualad.tensor(X)
    with pytest.raises(ValueError, match="divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(ValueError, match="Padding length too large"):
        F.pad(x, (1,) * 8)
    with pytest.raises(ValueError, match="Padding size should be less than the corresponding"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="wrapping around more than once"):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(ValueError, match="doesn't take in value"):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(ValueError, match="Unrecognised padding mode"):
        F.pad(x, (1, 1), mode="symmetric")
    with pytest.raises(ValueError, match="needs a"):
        F.pad(dualad.ones(3), (1, 1), mode="replicate")


def test_alpha_dropout_keeps_selu_statistics_and_its_affine_map():
    dualad.manual_seed(5)
    x = dualad.randn(200_000, requires_grad=True)
    y = F.alpha_dropout(x, 0.2, training=True)
    assert abs(y.mean().item()) < 0.01 and abs(y.var().item() - 1) < 0.02
    alpha, p = 1.7580993408473766, 0.2
    a = 1 / np.sqrt((alpha**2 * p + 1) * (1 - p))
    (g,) = dualad.autograd.grad(y.sum(), x)
    kept = g.numpy() != 0
    np.testing.assert_allclose(g.numpy()[kept], a)  # the gradient is the affine map's scale
    np.testing.assert_allclose(y.detach().numpy()[~kept], -alpha * a + alpha * a * p)
    assert abs(kept.mean() - 0.8) < 0.005
    assert F.alpha_dropout(x, 0.5) is x  # training=False by default, as in PyTorch
    z = F.feature_alpha_dropout(dualad.randn(8, 16, 3), 0.5, training=True).numpy()
    assert (np.isclose(z, -alpha / np.sqrt(alpha**2 * 0.5 + 1) / np.sqrt(0.5) * 0.5)).any()
    with pytest.raises(ValueError, match="dropout probability"):
        F.alpha_dropout(x, 2.0, training=True)


def test_rrelu_slopes_and_vmap_randomness():
    x = dualad.tensor([-1.0, 2.0, -3.0])
    close(F.rrelu(x, 0.1, 0.3), [-0.2, 2.0, -0.6])  # eval: the mean slope
    dualad.manual_seed(6)
    xs = -dualad.ones(10_000, requires_grad=True)
    y = F.rrelu(xs, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert (slopes >= 0.1).all() and (slopes < 0.3).all() and abs(slopes.mean() - 0.2) < 0.005
    (g,) = dualad.autograd.grad(y.sum(), xs)
    np.testing.assert_allclose(g.numpy(), slopes)  # the drawn slope is the derivative
    with pytest.raises(RuntimeError, match=r"vmap: .*random"):
        vmap(lambda v: F.rrelu(v, training=True))(dualad.ones(2, 3))


def test_pdist_matches_pytorch_with_repeated_rows():
    x = dualad.tensor([[0.0, 1, 2], [0, 1, 2], [1, -1, 0.5], [3, 0, 0]], requires_grad=True)
    y = F.pdist(x)
    close(
        y,
        [
            0.0,
            2.692582403567252,
            3.7416573867739413,
            2.692582403567252,
            3.7416573867739413,
            2.29128784747792,
        ],
    )
    (g,) = dualad.autograd.grad(y.sum(), x)
    close(g[0], [-1.173174402091377, 1.0100425946206317, 1.0916084983560044])  # no NaN at 0
    close(g[3], [2.476439012418516, -0.09808670335286401, -1.28726285788569])
    close(F.pdist(x, p=1), [0.0, 4.5, 6.0, 4.5, 6.0, 3.5])
    with pytest.raises(ValueError, match="pdist only supports 2D tensors"):
        F.pdist(dualad.ones(3))
