"""LU of square, tall (m > n) and wide (m < n) matrices (issue 14, item 1): ``linalg.lu`` and
``linalg.lu_factor`` against SciPy, and their derivatives (reverse, forward, second order,
complex, batched, vmap) against finite differences, through the one set of block rules of
``dualad/ops/factorizations.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import dualad
from dualad import func, linalg
from dualad.testing import gradcheck, gradgradcheck

RNG = np.random.default_rng(1515)
SHAPES = [(5, 3), (2, 4, 2), (4, 1), (3, 3), (2, 3, 3), (3, 5), (2, 2, 4), (1, 3)]


def _t(a, requires_grad=False):
    return dualad.tensor(np.asarray(a), requires_grad=requires_grad)


def _matrix(shape, complex_=False):
    a = RNG.standard_normal(shape)
    if complex_:
        a = a + 1j * RNG.standard_normal(shape)
    return a


def _factors(a):
    return tuple(linalg.lu(a))[1:]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu_and_lu_factor_match_scipy(shape, dtype):
    a = _matrix(shape, dtype.startswith("complex")).astype(dtype)
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    P, L, U = linalg.lu(_t(a))
    k = min(shape[-2:])
    assert L.shape == (*shape[:-1], k) and U.shape == (*shape[:-2], k, shape[-1])
    for mine, ref in zip((P, L, U), scipy.linalg.lu(a)):
        assert mine.dtype == a.dtype
        np.testing.assert_allclose(mine.numpy(), ref, rtol=tol, atol=tol)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, rtol=10 * tol, atol=10 * tol)
    LU, pivots = linalg.lu_factor(_t(a))
    ref_lu, ref_piv = scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(LU.numpy(), ref_lu, rtol=tol, atol=tol)
    assert pivots.dtype == np.int32
    np.testing.assert_array_equal(pivots.numpy(), ref_piv + 1)  # PyTorch's 1-based pivots


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_lu_derivatives_against_finite_differences(shape, complex_):
    t = _t(_matrix(shape, complex_), True)
    # reverse and forward mode, and second order (reverse over reverse) of L and U
    assert gradcheck(_factors, (t,), check_forward_ad=True)
    assert gradgradcheck(_factors, (t,))
    assert gradcheck(lambda m: linalg.lu_factor(m).LU, (t,), check_forward_ad=True)
    assert gradgradcheck(lambda m: linalg.lu_factor(m).LU, (t,))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)], ids=str)
def test_forward_over_reverse_of_a_tall_or_wide_lu_loss(shape):
    a = _matrix(shape)

    def loss(m):
        _, lower, upper = linalg.lu(m)
        return (dualad.sin(lower).sum() + (upper * upper).sum()) * 0.5

    v = RNG.standard_normal(shape)
    _, hvp = func.jvp(func.grad(loss), (_t(a),), (_t(v),))
    eps = 1e-6
    grad = func.grad(loss)
    fd = (grad(_t(a + eps * v)).numpy() - grad(_t(a - eps * v)).numpy()) / (2 * eps)
    np.testing.assert_allclose(hvp.numpy(), fd, rtol=1e-6, atol=1e-7)


def test_tall_lu_vmap_matches_a_loop():
    a = _matrix((3, 5, 2))
    out = dualad.vmap(_factors)(_t(a))
    for i in range(3):
        for got, ref in zip(out, _factors(_t(a[i]))):
            np.testing.assert_allclose(got.numpy()[i], ref.numpy())
    g = dualad.vmap(func.grad(lambda m: _factors(m)[0].sum() + _factors(m)[1].sum()))(_t(a))
    for i in range(3):
        ref = func.grad(lambda m: _factors(m)[0].sum() + _factors(m)[1].sum())(_t(a[i]))
        np.testing.assert_allclose(g.numpy()[i], ref.numpy())


def test_permutation_of_a_tall_matrix_has_a_zero_derivative():
    t = _t(_matrix((4, 2)), True)
    P, _, _ = linalg.lu(t)
    assert P.requires_grad and P.shape == (4, 4)
    (g,) = dualad.autograd.grad(P.sum(), t)
    np.testing.assert_array_equal(g.numpy(), 0.0)


@pytest.mark.parametrize(
    "a",
    [[[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], [[1.0, 2.0, 3.0], [2.0, 4.0, 5.0]]],
    ids=["tall rank 1", "wide with a singular leading block"],
)
def test_lu_of_a_rank_deficient_matrix_factors_but_its_derivative_raises(a):
    t = _t(a, True)
    P, L, U = linalg.lu(t)
    ref = scipy.linalg.lu(np.asarray(a))
    for mine, r in zip((P, L, U), ref):
        np.testing.assert_allclose(mine.detach().numpy(), r)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        dualad.autograd.grad(U.sum() + L.sum(), t)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        func.jvp(_factors, (t.detach(),), (dualad.ones_like(t),))
