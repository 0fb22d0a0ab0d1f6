"""Cholesky's backward pass (``linalg_cholesky_grad``, a BLAS/LAPACK impl) against the formula
it computes, at sizes where LAPACK's blocked routines run (the op database's samples are 3x3),
for real and complex factors and broadcast batches, and that it never writes into its inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import linalg
from dualad.ops import _lapack
from dualad.ops.factorizations import cholesky_grad

RNG = np.random.default_rng(2016)


def _mh(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _factor(n, dtype, batch=()):
    a = RNG.standard_normal((*batch, n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal((*batch, n, n))
    return np.linalg.cholesky(a @ _mh(a) / n + np.eye(n)).astype(dtype)


def _formula(lower, g):
    """``sym(L^{-H} Phi(L^H g) L^{-1})`` written out with an explicit inverse."""
    x = _mh(lower) @ np.tril(g)
    p = np.tril(x, -1) + 0.5 * x * np.eye(x.shape[-1])
    inv = np.linalg.inv(lower)
    grad = _mh(inv) @ p @ inv
    return 0.5 * (grad + _mh(grad))


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
@pytest.mark.parametrize(
    "batch_l, batch_g", [((), ()), ((2,), ()), ((), (2,)), ((3, 1), (2,))], ids=str
)
def test_lapack_path_matches_the_formula(dtype, batch_l, batch_g):
    n = 300  # above LAPACK's block size (the blocked sygst/hegst runs) and the split product
    lower = _factor(n, dtype, batch_l)
    g = RNG.standard_normal((*batch_g, n, n)).astype(dtype)
    out = _lapack.cholesky_backward(np, lower, g)
    expected = _formula(lower.astype(np.complex128), g.astype(np.complex128))
    tol = 2e-4 if dtype == "float32" else 1e-10
    assert out.dtype == np.dtype(dtype)
    assert out.shape == np.broadcast_shapes(lower.shape, g.shape)
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol * np.abs(expected).max())
    np.testing.assert_array_equal(out, _mh(out))  # exactly Hermitian


@pytest.mark.parametrize("n", [1, 4, 70])
def test_inputs_are_never_written(n):
    lower = _factor(n, "complex128", (2,)) + 0.5j * np.eye(n)  # writable, a complex diagonal
    g = RNG.standard_normal((n, n)) + 1j
    kept = lower.copy(), g.copy()
    _lapack.cholesky_backward(np, lower, g)
    np.testing.assert_array_equal(lower, kept[0])
    np.testing.assert_array_equal(g, kept[1])


def test_cholesky_gradient_is_the_op_and_matches_the_formula():
    s = _factor(90, "float64")
    s = s @ s.T
    g = RNG.standard_normal((90, 90))
    t = dualad.tensor(s, requires_grad=True)
    lower = linalg.cholesky(t)
    (grad,) = dualad.autograd.grad((lower * dualad.tensor(g)).sum(), t)
    np.testing.assert_allclose(grad.numpy(), _formula(lower.detach().numpy(), g), atol=1e-12)
    assert lower.grad_fn.name() == "LinalgCholeskyBackward0"


def test_singular_factor_gives_non_finite_values_and_its_rules_raise():
    lower = dualad.tensor([[2.0, 0.0], [1.0, 0.0]], requires_grad=True)
    out = cholesky_grad(lower, dualad.eye(2))
    assert not np.isfinite(out.detach().numpy()).all()
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        dualad.autograd.grad(out.sum(), lower)
