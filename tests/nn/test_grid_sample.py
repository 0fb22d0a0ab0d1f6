"""grid_sample and affine_grid of ``dualad.nn.functional``: PyTorch's values and grid gradients
at the kinks (corners, borders, reflections), nearest's zero grid derivative, higher orders,
vmap over either argument, and bad input.

Finite differences, JVPs and vmap at points clear of the kinks are checked by the registry tests
from ``dualad/testing/opdb/_grid_samples.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.func import grad, jacfwd, jacrev, vmap
from dualad.testing.opdb._grid_samples import ref_grid_sample

X = np.arange(12.0).reshape(1, 1, 3, 4) ** 1.5
# corners, the far corner, a point on a pixel centre row, a point outside
G = np.array([[[[-1.0, -1.0], [1.0, 1.0], [0.0, 0.5], [1.3, -1.2]]]])

# PyTorch 2.13's values and grid gradients of grid_sample(X, G).sum()
TORCH = {
    ("zeros", False): (
        [0.0, 9.1207181735, 25.2182010187, 0.0],
        [[0.0, 0.0], [-36.4828726939, -27.3621545204], [8.6924641871, 24.5591236931], [0, 0]],
    ),
    ("zeros", True): (
        [0.0, 36.4828726939, 21.1250137365, 2.286307066],
        [
            [1.5, 8.0],
            [-54.7243090409, -36.4828726939],
            [6.1045313782, 16.3727491287],
            [-6.2353829072, 2.8578838325],
        ],
    ),
    ("border", False): (
        [0.0, 36.4828726939, 25.2182010187, 5.1961524227],
        [[0.0, 0.0], [0.0, 0.0], [8.6924641871, 24.5591236931], [0.0, 0.0]],
    ),
    ("reflection", False): (
        [0.0, 36.4828726939, 25.2182010187, 4.9593798929],
        [[0.0, 0.0], [0.0, 0.0], [8.6924641871, 24.5591236931], [-4.7354505959, 0.0]],
    ),
    ("reflection", True): (
        [0.0, 36.4828726939, 21.1250137365, 6.6644938015],
        [[0.0, 0.0], [0.0, 0.0], [6.1045313782, 16.3727491287], [-3.9882665738, -12.6690888145]],
    ),
}


@pytest.mark.parametrize(("padding_mode", "align_corners"), sorted(TORCH))
def test_values_and_grid_gradients_at_the_kinks_match_pytorch(padding_mode, align_corners):
    values, grid_grad = TORCH[padding_mode, align_corners]
    x = dualad.tensor(X, requires_grad=True)
    g = dualad.tensor(G, requires_grad=True)
    y = F.grid_sample(x, g, padding_mode=padding_mode, align_corners=align_corners)
    assert np.allclose(y.detach().numpy().ravel(), values)
    (gg,) = dualad.autograd.grad(y.sum(), g)
    assert np.allclose(gg.numpy()[0, 0], grid_grad)
    assert np.allclose(
        y.detach().numpy(), ref_grid_sample(X, G, "bilinear", padding_mode, align_corners)
    )


def test_nearest_has_a_zero_grid_derivative_and_rounds_half_to_even():
    x = dualad.tensor(X, requires_grad=True)
    g = dualad.tensor(G, requires_grad=True)
    y = F.grid_sample(x, g, mode="nearest")
    assert np.allclose(y.detach().numpy().ravel(), [0.0, 0.0, 31.622776601683793, 0.0])
    gx, gg = dualad.autograd.grad(y.sum(), (x, g))
    assert np.array_equal(gg.numpy(), np.zeros_like(G))
    # pixel (0, 0) (the corner -1 maps to -0.5, rounded to -0) and (2, 2); the others are padding
    assert np.array_equal(np.argwhere(gx.numpy()[0, 0]), [[0, 0], [2, 2]])
    # (gx + 1) * W / 2 - 0.5 = 1.5 exactly: nearbyint rounds to 2
    x1 = dualad.tensor(np.arange(4.0).reshape(1, 1, 1, 4))
    half = dualad.tensor([[[[0.0, 0.0]]]])
    assert F.grid_sample(x1, half, mode="nearest").item() == 2.0


def test_second_order_cross_term_of_bilinear():
    # f(gx, gy) = bilinear sample of [[a, b], [c, d]]: d2f/dgx dgy = (a - b - c + d) * sx * sy
    x = dualad.tensor([[[[1.0, 2.0], [4.0, 9.0]]]])

    def f(p):
        return F.grid_sample(x, dualad.reshape(p, (1, 1, 1, 2)), align_corners=True).sum()

    hessian = jacfwd(jacrev(f))(dualad.tensor([0.1, -0.3]))
    assert np.allclose(hessian.numpy(), [[0.0, 1.0], [1.0, 0.0]])  # (1 - 2 - 4 + 9) / 4


def test_vmap_over_the_grid_or_the_input():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 2, 2, 4, 5))
    g = rng.uniform(-1.2, 1.2, size=(3, 2, 3, 3, 2))
    both = vmap(F.grid_sample)(dualad.tensor(x), dualad.tensor(g)).numpy()
    only_x = vmap(lambda t: F.grid_sample(t, dualad.tensor(g[0])))(dualad.tensor(x)).numpy()
    only_g = vmap(lambda t: F.grid_sample(dualad.tensor(x[0]), t))(dualad.tensor(g)).numpy()
    for i in range(3):
        assert np.allclose(both[i], ref_grid_sample(x[i], g[i]))
        assert np.allclose(only_x[i], ref_grid_sample(x[i], g[0]))
        assert np.allclose(only_g[i], ref_grid_sample(x[0], g[i]))
    per_grid = vmap(grad(lambda t: F.grid_sample(dualad.tensor(x[0]), t).sum()))(dualad.tensor(g))
    assert per_grid.shape == g.shape


def test_affine_grid_of_the_identity_is_the_pixel_centres():
    theta = dualad.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = F.affine_grid(theta, (1, 1, 2, 3), align_corners=False).numpy()
    assert np.allclose(grid[0, :, :, 0], [[-2 / 3, 0.0, 2 / 3]] * 2)
    assert np.allclose(grid[0, :, :, 1], [[-0.5] * 3, [0.5] * 3])
    x = dualad.tensor(np.random.default_rng(1).normal(size=(1, 1, 2, 3)))
    same = F.grid_sample(x, F.affine_grid(theta, (1, 1, 2, 3)), align_corners=False)
    assert np.allclose(same.numpy(), x.numpy())


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x, g: F.grid_sample(x[0], g), RuntimeError, "same batch size"),
        (lambda x, g: F.grid_sample(x, g[:1]), RuntimeError, "same batch size"),
        (lambda x, g: F.grid_sample(x, g[..., :1]), RuntimeError, "size 2 in last dimension"),
        (lambda x, g: F.grid_sample(x, g, mode="foo"), ValueError, "expected mode"),
        (lambda x, g: F.grid_sample(x, g, padding_mode="foo"), ValueError, "padding_mode"),
        (lambda x, g: F.grid_sample(x, g, mode="bicubic"), NotImplementedError, "bicubic"),
        (lambda x, g: F.grid_sample(x, g.float()), RuntimeError, "same dtype"),
        (lambda x, g: F.grid_sample(x, g.long()), RuntimeError, "real floating"),
        (lambda x, g: F.affine_grid(g[0, 0], (1, 1, 2, 2)), ValueError, "Nx2x3"),
        (lambda x, g: F.affine_grid(dualad.ones(1, 2, 3), (1, 2, 3)), NotImplementedError, "4D"),
        (lambda x, g: F.affine_grid(dualad.ones(2, 2, 3), (3, 1, 2, 2)), ValueError, "Nx2x3"),
    ],
)
def test_bad_input_raises(call, error, message):
    x = dualad.ones(2, 3, 4, 5)
    g = dualad.zeros(2, 6, 7, 2)
    with pytest.raises(error, match=message):
        call(x, g)
