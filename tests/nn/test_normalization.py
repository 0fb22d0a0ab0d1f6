"""batch_norm, instance_norm, group_norm: values, gradients and running statistics against
numbers taken from PyTorch 2.13 (float64), per-example use under vmap, and errors. (Finite
differences, JVPs, vmap against loops and second order come from the op database entries.)"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.func import grad, vmap


def close(actual, expected, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual.detach().numpy()), expected, rtol=rtol, atol=atol)


def _x():
    return dualad.sin(dualad.arange(24.0)).reshape(2, 3, 4)


W = [1.0, 0.5, 2.0]
B = [0.1, 0.0, -0.1]


def test_batch_norm_training_matches_pytorch_and_updates_running_statistics():
    x = _x().requires_grad_()
    rm, rv = dualad.zeros(3), dualad.ones(3)
    y = F.batch_norm(x, rm, rv, dualad.tensor(W), dualad.tensor(B), training=True, momentum=0.2)
    close(y[0, :, 0], [-0.7617630145540494, -0.3322648532515168, 2.255485784401914])
    close(rm, [0.08540944335929096, -0.07971416287761374, 0.018799864755579362])
    close(rv, [0.8561281007363309, 0.8664211177213065, 0.9321015083372433])
    assert not rm.requires_grad
    (g,) = dualad.autograd.grad((y * dualad.cos(dualad.arange(24.0)).reshape(2, 3, 4)).sum(), x)
    close(g[1, :, 0], [0.36223649031170385, -1.151662232260647, 1.9465090801558576], rtol=1e-8)
    y = F.batch_norm(x, rm, rv, dualad.tensor(W), dualad.tensor(B))  # eval: running statistics
    close(y[1, :, 0], [-0.5722118380249244, -0.11183071034370683, 1.7522696061736491])


def test_instance_norm_and_group_norm_match_pytorch():
    rm, rv = dualad.zeros(3), dualad.ones(3)
    y = F.instance_norm(_x(), rm, rv, dualad.tensor(W), dualad.tensor(B), momentum=0.3)
    close(y[1, :, 0], [-1.5174444421642197, 0.20340668616664156, 1.825925122934499])
    close(rm, [0.12811416503893644, -0.1195712443164206, 0.028199797133369033])
    close(rv, [0.7973805381487915, 0.8145969224776244, 0.9244557568079679])
    x = dualad.sin(dualad.arange(24.0)).reshape(2, 4, 3)
    y = F.group_norm(x, 2, dualad.tensor([1.0, 2, 3, 4]), dualad.tensor([0.0, 1, 0, 1]))
    close(y[1, :, 0], [-0.8431332184869953, 2.74991835718738, -3.4991731395644727, 5.5947662885526])


def test_normalizations_agree_with_numpy():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(4, 6, 5))
    m = xs.mean(axis=(0, 2), keepdims=True)
    v = xs.var(axis=(0, 2), keepdims=True)
    close(F.batch_norm(dualad.tensor(xs), None, None, training=True), (xs - m) / np.sqrt(v + 1e-5))
    g = xs.reshape(4, 3, 10)
    expected = ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-5)).reshape(
        xs.shape
    )
    close(F.group_norm(dualad.tensor(xs), 3), expected)
    m, v = xs.mean(2, keepdims=True), xs.var(2, keepdims=True)
    close(F.instance_norm(dualad.tensor(xs)), (xs - m) / np.sqrt(v + 1e-5))


def test_per_example_gradients_through_group_norm():
    rng = np.random.default_rng(1)
    w = dualad.tensor(rng.normal(size=4))
    xs = dualad.tensor(rng.normal(size=(3, 1, 4, 5)))

    def loss(w, x):
        return (F.group_norm(x, 2, w) ** 3).sum()

    per_example = vmap(grad(loss), in_dims=(None, 0))(w, xs)
    for i in range(3):
        close(per_example[i], grad(loss)(w, xs[i]).numpy())


def test_normalization_errors():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(dualad.ones(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match="running_mean and running_var must be given"):
        F.batch_norm(dualad.ones(2, 3), None, None)
    with pytest.raises(ValueError, match="should contain 3 elements"):
        F.batch_norm(dualad.ones(2, 3), dualad.zeros(2), dualad.ones(3))
    with pytest.raises(ValueError, match="divisible by num_groups"):
        F.group_norm(dualad.ones(2, 3, 4), 2)
    with pytest.raises(ValueError, match=r"expected an input of shape \(N, C, \.\.\.\)"):
        F.instance_norm(dualad.ones(3))


def test_rms_norm_matches_pytorch():
    x = dualad.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]], requires_grad=True)
    y = F.rms_norm(x, (3,), dualad.tensor([1.0, 2.0, 0.5]))
    close(
        y,
        [
            [0.4629100498862757, 1.8516401995451028, 0.6943650748294136],
            [0.7745966692414832, -3.0983866769659327, 0.0],
        ],
        rtol=1e-7,
    )
    (g,) = dualad.autograd.grad(y.sum(), x)
    close(
        g,
        [
            [0.24798752672479055, 0.4959750534495811, -0.4133125445413176],
            [2.4787093415727455, 1.2393546707863743, 0.7745966692414832],
        ],
        rtol=1e-6,
    )
    # eps defaults to the dtype's machine epsilon: a zero vector stays 0, not NaN
    close(F.rms_norm(dualad.zeros(2, dtype=dualad.float32), (2,)), [0.0, 0.0])
    with pytest.raises(ValueError, match="expected input with shape"):
        F.rms_norm(x, (2,))
