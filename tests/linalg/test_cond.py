"""dualad.linalg.cond: NumPy's values for every order, inf at singular matrices (gradient 0
there, finite gradients for the other matrices of a stack), derivatives, vmap."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad.autograd import gradcheck, gradgradcheck

ORDERS = [None, 2, -2, "fro", "nuc", np.inf, -np.inf, 1, -1]
RNG = np.random.default_rng(7)
STACK = RNG.normal(size=(3, 4, 4))
SINGULAR = np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 1, 0]])


@pytest.mark.parametrize("p", ORDERS)
def test_values_match_numpy(p):
    np.testing.assert_allclose(
        dualad.linalg.cond(dualad.tensor(STACK), p).numpy(), np.linalg.cond(STACK, p)
    )
    np.testing.assert_allclose(
        np.linalg.cond(dualad.tensor(STACK), p).numpy(), np.linalg.cond(STACK, p)
    )


@pytest.mark.parametrize("p", ["fro", "nuc", np.inf, -np.inf, 1, -1])
def test_a_singular_matrix_is_inf_with_gradient_zero_and_the_stack_stays_finite(p):
    stack = STACK.copy()
    stack[1] = SINGULAR
    x = dualad.tensor(stack, requires_grad=True)
    value = dualad.linalg.cond(x, p)
    assert np.isinf(value.detach().numpy()[1])
    np.testing.assert_allclose(value.detach().numpy()[[0, 2]], np.linalg.cond(stack[[0, 2]], p))
    (g,) = dualad.autograd.grad(value[0] + value[2], x)
    assert np.all(np.isfinite(g.numpy()))
    np.testing.assert_array_equal(g.numpy()[1], 0.0)


@pytest.mark.parametrize("p", ORDERS)
def test_derivatives_match_finite_differences(p):
    x = dualad.tensor(RNG.normal(size=(2, 3, 3)), requires_grad=True)
    assert gradcheck(lambda t: dualad.linalg.cond(t, p), (x,), check_forward_ad=True)


@pytest.mark.parametrize("p", [None, "fro", 1])
def test_second_derivatives(p):
    x = dualad.tensor(RNG.normal(size=(3, 3)), requires_grad=True)
    assert gradgradcheck(lambda t: dualad.linalg.cond(t, p), (x,))


def test_vmap_matches_a_loop():
    out = dualad.vmap(lambda t: dualad.linalg.cond(t, 1))(dualad.tensor(STACK))
    np.testing.assert_allclose(out.numpy(), [np.linalg.cond(m, 1) for m in STACK])


def test_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        dualad.linalg.cond(dualad.tensor([1.0, 2.0]))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        dualad.linalg.cond(dualad.tensor(RNG.normal(size=(3, 4))), p=1)
    with pytest.raises(ValueError, match="invalid norm order"):
        dualad.linalg.cond(dualad.tensor(STACK), p=3)
