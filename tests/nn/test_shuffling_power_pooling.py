"""pixel_shuffle, pixel_unshuffle, channel_shuffle, lp_pool1d/2d/3d and local_response_norm:
round trips, PyTorch's values at its singular points, and bad input.

Values against element-by-element references, finite differences, JVPs and vmap are checked by
the registry tests from ``dualad/testing/opdb/_rearrange_samples.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F


def test_pixel_unshuffle_inverts_pixel_shuffle():
    x = dualad.tensor(np.random.default_rng(0).normal(size=(2, 3, 4, 6)))
    assert np.array_equal(F.pixel_shuffle(F.pixel_unshuffle(x, 2), 2).numpy(), x.numpy())
    assert F.pixel_unshuffle(x, 2).shape == (2, 12, 2, 3)


def test_channel_shuffle_twice_with_transposed_groups_is_the_identity():
    x = dualad.arange(12.0).reshape(1, 6, 2)
    assert np.array_equal(F.channel_shuffle(F.channel_shuffle(x, 2), 3).numpy(), x.numpy())


def test_lp_pool_with_zeros_and_negative_values_matches_pytorch():
    # p = 2, PyTorch's numbers: zeros inside a window with a positive sum get gradient 0
    x = dualad.tensor([[[1.0, -2.0, 3.0, 0.0, 0.0, 0.5]]], requires_grad=True)
    y = F.lp_pool1d(x, 2, 2)
    assert np.allclose(y.detach().numpy(), [[[5**0.5, 3.0, 0.5]]])
    (g,) = dualad.autograd.grad(y.sum(), x)
    assert np.allclose(g.numpy(), [[[5**-0.5, -2 * 5**-0.5, 1.0, 0.0, 0.0, 1.0]]])
    # p = 1 is the plain window sum, negative sums included (sign * relu(|s|) is s)
    assert np.allclose(F.lp_pool1d(x, 1, 2).detach().numpy(), [[[-1.0, 3.0, 0.5]]])


def test_local_response_norm_of_an_empty_input_is_the_input():
    x = dualad.ones(0, 3, 2)
    assert F.local_response_norm(x, 2) is x


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: F.pixel_shuffle(dualad.ones(4, 3), 2), RuntimeError, "at least 3 dimensions"),
        (lambda: F.pixel_shuffle(dualad.ones(5, 3, 3), 2), RuntimeError, "not divisible by 4"),
        (lambda: F.pixel_shuffle(dualad.ones(4, 3, 3), 0), RuntimeError, "positive upscale"),
        (lambda: F.pixel_unshuffle(dualad.ones(1, 5, 6), 2), RuntimeError, "height to be"),
        (lambda: F.pixel_unshuffle(dualad.ones(1, 4, 5), 2), RuntimeError, "width to be"),
        (lambda: F.pixel_unshuffle(dualad.ones(1, 4, 6), 0), RuntimeError, "positive downscale"),
        (lambda: F.channel_shuffle(dualad.ones(1, 5, 2), 2), RuntimeError, "divisible by groups"),
        (lambda: F.channel_shuffle(dualad.ones(1, 6, 2), 0), RuntimeError, "must be positive"),
        (lambda: F.channel_shuffle(dualad.ones(6, 2), 2), RuntimeError, "> 2 dims"),
        (lambda: F.local_response_norm(dualad.ones(2, 3), 2), ValueError, "3D or higher"),
        (lambda: F.lp_pool2d(dualad.ones(2, 3), 2, 2), RuntimeError, "Expected 3D or 4D"),
    ],
)
def test_bad_input_raises(call, error, message):
    with pytest.raises(error, match=message):
        call()
