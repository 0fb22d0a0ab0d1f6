"""dualad.special.softmax / log_softmax: scipy's axis convention (None is every axis, tuples
normalise jointly), derivatives against finite differences, vmap against a loop."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import dualad
import dualad.special as special
from dualad.autograd import gradcheck, gradgradcheck

AXES = [None, 0, 1, -1, (0, 2), (2, 0), (1,), (0, 1, 2)]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", AXES)
def test_values_match_scipy(name, axis):
    x = np.random.default_rng(1).normal(size=(2, 3, 4))
    ours = getattr(special, name)(dualad.tensor(x), axis=axis)
    np.testing.assert_allclose(ours.numpy(), getattr(scipy.special, name)(x, axis=axis))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_derivatives_match_finite_differences(name, axis):
    x = dualad.tensor(np.random.default_rng(2).normal(size=(2, 3, 2)), requires_grad=True)
    fn = getattr(special, name)
    assert gradcheck(lambda t: fn(t, axis=axis), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: fn(t, axis=axis), (x,))


def test_vmap_matches_a_loop():
    x = np.random.default_rng(3).normal(size=(4, 2, 3))
    batched = dualad.vmap(lambda t: special.softmax(t))(dualad.tensor(x))
    loop = np.stack([scipy.special.softmax(row) for row in x])
    np.testing.assert_allclose(batched.numpy(), loop)


def test_a_slice_of_only_minus_inf_gives_zero_gradient():
    x = dualad.tensor([[-np.inf, -np.inf], [0.0, 1.0]], requires_grad=True)
    out = special.softmax(x, axis=1)
    np.testing.assert_array_equal(out.detach().numpy()[0], [0.0, 0.0])
    (g,) = dualad.autograd.grad((out * dualad.tensor([[1.0, 2.0], [3.0, 4.0]])).sum(), x)
    assert np.all(np.isfinite(g.numpy()))
    np.testing.assert_array_equal(g.numpy()[0], [0.0, 0.0])
