"""Issue 14, item 7: every singular point it lists, pinned in reverse mode, forward mode and at
second order. Most are tested beside their op; this file holds the checks that were missing
and says where the others are:

- ``norm``/``vector_norm`` at 0, gradient 0: ``tests/linalg/test_norms.py``
  (``test_vector_norm_at_zero_has_gradient_zero``: reverse and forward); second order and
  ``linalg.norm``/``matrix_norm('fro')``: here.
- ``det`` of a singular matrix, the adjugate, its JVP, Hessian, jvp of grad at repeated
  eigenvalues, third and fourth derivatives: ``tests/linalg/test_determinants.py``.
- ``slogdet`` of a singular matrix, ``(0, -inf)``, NaN gradient and tangent, sign's gradient 0:
  ``tests/linalg/test_determinants.py::test_slogdet_of_a_singular_matrix``.
- ``eigvalsh``/``svdvals``/traces of functions of eigenvalues/nuclear and Frobenius norms at
  repeated values, gradient and jvp of grad against finite differences:
  ``tests/linalg/test_spectral.py`` (``test_eigenvalue_losses_are_exact_at_repeated_eigenvalues``,
  ``test_singular_value_losses_are_exact_at_repeated_singular_values``,
  ``test_hessian_of_*``, and the forward mode of the projector onto a whole eigenspace:
  ``test_projector_forward_mode_*``), ``tests/linalg/test_norms.py`` (nuclear norm at I); the
  forward mode of ``svdvals``: here.
- a loss of an undefined eigenvector basis: inf/NaN in reverse and forward mode,
  ``tests/linalg/test_spectral.py::test_a_loss_of_an_undefined_eigenvector_basis_is_not_finite``.
- ``matrix_exp`` at ``I``, nilpotent and defective matrices: gradient, jvp of grad, grad of grad
  in ``tests/linalg/test_spectral.py``; its plain JVP: here.
- ``logsumexp``/``softmax``/``log_softmax`` over only ``-inf``: ``tests/nn/test_activations.py``
  (values, gradients, forward mode, second order).
- ``sqrt`` at 0 and ``where`` with a NaN derivative in the untaken branch (the double where):
  here.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import dualad
from dualad import func, linalg

RNG = np.random.default_rng(7)


def _t(a):
    return dualad.tensor(np.asarray(a, dtype=float))


def _directional_fd(fn, a, direction, eps=1e-6):
    return (fn(a + eps * direction) - fn(a - eps * direction)) / (2 * eps)


@pytest.mark.parametrize(
    "norm",
    [
        linalg.vector_norm,
        linalg.norm,
        lambda x: linalg.norm(x, "fro"),
        lambda x: linalg.matrix_norm(x, "fro"),
        dualad.norm,
    ],
    ids=["vector_norm", "norm", "norm fro", "matrix_norm fro", "dualad.norm"],
)
def test_norms_at_zero_have_zero_derivatives_of_first_and_second_order(norm):
    zero = dualad.zeros(2, 3)
    np.testing.assert_array_equal(func.grad(norm)(zero).numpy(), 0.0)
    _, tangent = func.jvp(norm, (zero,), (_t(RNG.standard_normal((2, 3))),))
    assert tangent.item() == 0.0
    # second order: the derivative of PyTorch's subgradient convention, 0 (never NaN)
    np.testing.assert_array_equal(func.hessian(norm)(zero).numpy(), 0.0)
    _, hvp = func.jvp(func.grad(norm), (zero,), (_t(RNG.standard_normal((2, 3))),))
    np.testing.assert_array_equal(hvp.numpy(), 0.0)


def test_sqrt_at_zero_is_infinite_in_every_mode():
    x = dualad.tensor(0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert func.grad(dualad.sqrt)(x).item() == np.inf
        assert func.jvp(dualad.sqrt, (x,), (dualad.tensor(1.0),))[1].item() == np.inf
        assert func.grad(func.grad(dualad.sqrt))(x).item() == -np.inf


def test_where_untaken_branch_and_the_double_where():
    x = dualad.tensor([0.0, 4.0])

    def naive(v):
        return dualad.where(v > 0, dualad.sqrt(v), 0.0).sum()

    def double(v):
        return dualad.where(v > 0, dualad.sqrt(dualad.where(v > 0, v, 1.0)), 0.0).sum()

    with np.errstate(divide="ignore", invalid="ignore"):
        g = func.grad(naive)(x).numpy()
        # reverse mode: 0 (the cotangent the untaken branch gets) times sqrt's inf is NaN
        assert np.isnan(g[0]) and g[1] == 0.25
        np.testing.assert_array_equal(func.grad(double)(x).numpy(), [0.0, 0.25])
        # forward mode selects the taken branch's tangent: no NaN even without the double where
        ones = dualad.ones(2)
        assert func.jvp(naive, (x,), (ones,))[1].item() == 0.25
        assert func.jvp(double, (x,), (ones,))[1].item() == 0.25
        # second order through the double where: finite, sqrt's -1/4 x^(-3/2) where it is taken
        np.testing.assert_allclose(
            func.hessian(double)(x).numpy(), [[0.0, 0.0], [0.0, -1 / 32]], atol=1e-15
        )


@pytest.mark.parametrize("a", [np.eye(3), np.diag([2.0, 2.0, 1.0])], ids=["I", "2,2,1"])
def test_forward_mode_of_singular_value_losses_at_repeated_values(a):
    def loss(x):
        return (linalg.svdvals(x) ** 3).sum() + linalg.matrix_norm(x, "nuc")

    def loss_np(m):
        s = np.linalg.svd(m, compute_uv=False)
        return (s**3).sum() + s.sum()

    direction = RNG.standard_normal((3, 3))
    _, tangent = func.jvp(loss, (_t(a),), (_t(direction),))
    np.testing.assert_allclose(tangent.item(), _directional_fd(loss_np, a, direction), rtol=1e-6)


@pytest.mark.parametrize(
    "a",
    [np.eye(3), np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])],
    ids=["I", "nilpotent"],
)
def test_forward_mode_of_matrix_exp_where_eigendecompositions_fail(a):
    direction = RNG.standard_normal((3, 3))
    _, tangent = func.jvp(linalg.matrix_exp, (_t(a),), (_t(direction),))
    expected = _directional_fd(scipy.linalg.expm, a, direction)
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-6, atol=1e-8)
