"""interpolate: values and gradients against numbers taken from PyTorch 2.13 (float64) for the
nearest, nearest-exact, linear, bilinear and trilinear modes (size and scale_factor, with and
without align_corners), and errors. (Finite differences, JVPs, vmap against loops come from the
op database entry.)"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F


def close(actual, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual.detach().numpy()), expected, rtol=rtol, atol=atol)


CASES = [
    (
        {"size": (5, 3), "mode": "nearest"},
        (5, 3),
        [0.0, 0.8414709848078965, 0.9092974268256817],
        [[3.0, 5.0, 7.0, 0.0], [15.0, 17.0, 19.0, 0.0], [12.0, 13.0, 14.0, 0.0]],
    ),
    (
        {"scale_factor": 1.7, "mode": "nearest"},
        (5, 6),
        [0.0, 0.0, 0.8414709848078965, 0.8414709848078965, 0.9092974268256817, 0.9092974268256817],
        [[14.0, 22.0, 30.0, 0.0], [62.0, 70.0, 78.0, 0.0], [49.0, 53.0, 57.0, 0.0]],
    ),
    (
        {"size": (5, 3), "mode": "nearest-exact"},
        (5, 3),
        [0.0, 0.9092974268256817, 0.1411200080598672],
        [[3.0, 0.0, 5.0, 7.0], [6.0, 0.0, 7.0, 8.0], [21.0, 0.0, 23.0, 25.0]],
    ),
    (
        {"size": (5, 7), "mode": "bilinear"},
        (5, 7),
        [
            0.0,
            0.30052535171710587,
            0.7813659144644752,
            0.8753842058167891,
            0.8544276111995524,
            0.4154690861905153,
            0.1411200080598672,
        ],
        [
            [8.457142857142859, 13.442857142857143, 18.700000000000006, 22.400000000000002],
            [44.61428571428572, 51.68571428571429, 57.600000000000016, 60.3],
            [70.85714285714288, 78.44285714285712, 83.70000000000002, 84.79999999999998],
        ],
    ),
    (
        {"size": (5, 7), "mode": "bilinear", "align_corners": True},
        (5, 7),
        [
            0.0,
            0.42073549240394825,
            0.8414709848078965,
            0.8753842058167891,
            0.9092974268256817,
            0.5252087174427744,
            0.1411200080598672,
        ],
        [[6.0, 13.0, 19.0, 18.0], [43.0, 64.0, 72.0, 59.0], [58.5, 83.0, 89.0, 70.5]],
    ),
    (
        {"scale_factor": (2.5, 0.6), "mode": "bilinear"},
        (7, 2),
        [0.28049032826929887, 0.9092974268256817],
        [
            [2.9333333333333327, 1.4666666666666663, 6.899999999999999, 0.0],
            [10.799999999999999, 5.3999999999999995, 18.7, 0.0],
            [14.266666666666666, 7.133333333333335, 23.400000000000002, 0.0],
        ],
    ),
]


@pytest.mark.parametrize("kwargs, shape, row0, grad", CASES, ids=[str(c[0]) for c in CASES])
def test_interpolate_2d_matches_pytorch(kwargs, shape, row0, grad):
    x = dualad.sin(dualad.arange(12.0)).reshape(1, 1, 3, 4).requires_grad_()
    y = F.interpolate(x, **kwargs)
    assert y.shape == (1, 1, *shape)
    close(y[0, 0, 0], row0)
    weights = dualad.arange(float(y.numel())).reshape(y.shape)
    (g,) = dualad.autograd.grad((y * weights).sum(), x)
    close(g[0, 0], grad, rtol=1e-9)


def test_interpolate_linear_and_trilinear_match_pytorch():
    x = dualad.sin(dualad.arange(5.0)).reshape(1, 1, 5)
    close(
        F.interpolate(x, size=8, mode="linear"),
        [
            [
                [
                    0.0,
                    0.3681435558534547,
                    0.8457101374340081,
                    0.8881016636951238,
                    0.6692419834613647,
                    0.1891310967327306,
                    -0.3639614000845177,
                    -0.7568024953079282,
                ]
            ]
        ],
    )
    close(
        F.interpolate(x, scale_factor=0.5, mode="linear"),
        [[[0.42073549240394825, 0.5252087174427744]]],
    )
    x3 = dualad.sin(dualad.arange(8.0)).reshape(1, 1, 2, 2, 2)
    close(
        F.interpolate(x3, size=(3, 2, 3), mode="trilinear")[0, 0, 1],
        [
            [-0.37840124765396405, -0.21856394629079248, -0.05872664492762092],
            [0.3149409643133779, 0.35699713385135295, 0.3990533033893281],
        ],
    )


def test_interpolate_errors():
    x = dualad.ones(1, 1, 3, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="needs a 3D input"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(2, 3, 4))
    with pytest.raises(ValueError, match="not supported"):
        F.interpolate(x, size=3, mode="bicubic")
