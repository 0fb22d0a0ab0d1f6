"""dualad.linalg's solvers and factorisations against numpy.linalg / scipy.linalg: values,
dtypes, batches, both spellings, gradients and forward mode against finite differences, vmap
against a loop, and that the rules reuse the forward's factorisation.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import dualad
from dualad import func, linalg
from dualad.ops import _lapack
from dualad.testing import gradcheck, gradgradcheck

RNG = np.random.default_rng(1414)


def _t(a, requires_grad=False):
    return dualad.tensor(np.asarray(a), requires_grad=requires_grad)


def _square(*shape, dtype="float64"):
    n = shape[-1]
    a = RNG.standard_normal(shape) + 2 * np.sqrt(n) * np.eye(n)
    if dtype.startswith("complex"):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _spd(n, batch=()):
    m = RNG.standard_normal((*batch, n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


DTYPES = ["float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 1, 3, 3), (4, 3, 2))],
)
def test_solve_and_inv_match_numpy(dtype, shape_a, shape_b):
    a, b = _square(*shape_a, dtype=dtype), RNG.standard_normal(shape_b).astype(dtype)
    x, expected = linalg.solve(_t(a), _t(b)), np.linalg.solve(a, b)
    assert x.dtype == expected.dtype and x.shape == expected.shape
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-4, atol=1e-6)
    inverse = linalg.inv(_t(a))
    assert inverse.dtype == a.dtype
    np.testing.assert_allclose(inverse.numpy(), np.linalg.inv(a), rtol=1e-4, atol=1e-6)


def test_solve_numpy2_vector_rule_and_left_false():
    a = _square(2, 3, 3)
    with pytest.raises(ValueError, match="solve"):  # b (2, 3) is a matrix: 2 rows, not 3
        linalg.solve(_t(a), _t(RNG.standard_normal((2, 3))))
    b = RNG.standard_normal((4, 3))
    x = linalg.solve(_t(a[0]), _t(b), left=False)  # X A = B
    np.testing.assert_allclose(x.numpy() @ a[0], b, atol=1e-10)


def test_integer_inputs_promote_like_numpy_and_inputs_are_not_mutated():
    a, b = np.array([[2, 1], [1, 3]]), np.array([1, 2])
    a_copy, b_copy = a.copy(), b.copy()
    x = np.linalg.solve(_t(a), _t(b))
    assert x.dtype == np.linalg.solve(a, b).dtype == np.float64
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b))
    assert linalg.det(_t(a)).dtype == np.float64
    np.testing.assert_array_equal(a, a_copy)
    np.testing.assert_array_equal(b, b_copy)
    f = _square(3, 3)
    before = f.copy()
    t = _t(f)
    linalg.inv(t), linalg.slogdet(t), linalg.lu_factor(t), linalg.cholesky(_t(_spd(3)))
    np.testing.assert_array_equal(t.numpy(), before)


def test_solve_gradients_forward_mode_and_second_order():
    a, b = _t(_square(3, 3), True), _t(RNG.standard_normal((3, 2)), True)
    assert gradcheck(linalg.solve, (a, b), check_forward_ad=True)
    assert gradgradcheck(linalg.solve, (a, b))
    c = _t(_square(2, 3, 3, dtype="complex128"), True)
    d = _t(RNG.standard_normal(3) + 1j * RNG.standard_normal(3), True)
    assert gradcheck(linalg.solve, (c, d), check_forward_ad=True)
    assert gradcheck(lambda x, y: linalg.solve(x, y, left=False), (c, _t(np.ones((2, 4, 3)), True)))


def test_solve_rules_reuse_the_forward_factorisation(monkeypatch):
    calls = []
    original = _lapack.lu_factor
    monkeypatch.setattr(
        "dualad.ops.factorizations.lu_factor",
        lambda xp, a: calls.append(a.shape) or original(xp, a),
    )
    a, b = _t(_square(4, 4), True), _t(RNG.standard_normal(4), True)
    x = linalg.solve(a, b)
    dualad.autograd.grad(x.sum(), (a, b), create_graph=True)
    func.jvp(lambda m: linalg.solve(m, _t(np.ones(4))), (a.detach(),), (_t(np.eye(4)),))
    assert len(calls) == 2  # one per forward (the eager call and the one under jvp)


def test_solve_vmap_matches_a_loop_with_mixed_batches():
    a, b = _square(4, 3, 3), RNG.standard_normal((4, 3))
    out = func.vmap(linalg.solve)(_t(a), _t(b)).numpy()
    np.testing.assert_allclose(out, np.stack([np.linalg.solve(x, y) for x, y in zip(a, b)]))
    out = func.vmap(linalg.solve, in_dims=(None, 0))(_t(a[0]), _t(b)).numpy()
    np.testing.assert_allclose(out, np.linalg.solve(a[0], b.T).T)
    grads = func.vmap(func.grad(lambda m, v: linalg.solve(m, v).sum()))(_t(a), _t(b)).numpy()
    for g, m, v in zip(grads, a, b):
        x = np.linalg.solve(m, v)
        np.testing.assert_allclose(g, -np.outer(np.linalg.solve(m.T, np.ones(3)), x))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_solve_triangular_scipy_spelling(lower, trans):
    a = _square(3, 3, dtype="complex128")
    b = RNG.standard_normal(3)
    x = linalg.solve_triangular(_t(a), _t(b), lower=lower, trans=trans, unit_diagonal=True)
    expected = scipy.linalg.solve_triangular(a, b, lower=lower, trans=trans, unit_diagonal=True)
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-10)
    t = _t(a, True)
    assert gradcheck(lambda m: linalg.solve_triangular(m, _t(b), lower=lower, trans=trans), (t,))


def test_cholesky_values_gradient_and_upper():
    s = _spd(3, (2,))
    np.testing.assert_allclose(linalg.cholesky(_t(s)).numpy(), np.linalg.cholesky(s))
    np.testing.assert_allclose(
        linalg.cholesky(_t(s), upper=True).numpy(), np.linalg.cholesky(s, upper=True)
    )
    # a function of the symmetric matrix: checked through a symmetric parametrisation
    m = _t(RNG.standard_normal((3, 3)), True)

    def through_sym(x, upper=False):
        return linalg.cholesky(x @ x.mT + 3 * dualad.eye(3), upper=upper)

    assert gradcheck(through_sym, (m,), check_forward_ad=True)
    assert gradgradcheck(through_sym, (m,))
    # the gradient itself is symmetric (PyTorch's convention)
    t = _t(s[0], True)
    (g,) = dualad.autograd.grad((linalg.cholesky(t) * _t(RNG.standard_normal((3, 3)))).sum(), t)
    np.testing.assert_allclose(g.numpy(), g.numpy().T, atol=1e-12)


def test_cho_solve_and_cholesky_solve_match_scipy():
    s, b = _spd(4), RNG.standard_normal(4)
    c = np.linalg.cholesky(s)
    x = linalg.cho_solve((_t(c), True), _t(b))
    np.testing.assert_allclose(x.numpy(), scipy.linalg.cho_solve((c, True), b))
    u = c.T
    x = linalg.cholesky_solve(_t(b[:, None]), _t(u), upper=True)
    np.testing.assert_allclose(x.numpy()[:, 0], np.linalg.solve(s, b))


def test_lu_lu_factor_and_lu_solve_match_scipy():
    a = _square(2, 4, 4)
    lu, pivots = linalg.lu_factor(_t(a))
    ref_lu, ref_piv = scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(lu.numpy(), ref_lu)
    assert pivots.dtype == np.int32
    np.testing.assert_array_equal(pivots.numpy(), ref_piv + 1)  # PyTorch's 1-based pivots
    p, lower, upper = linalg.lu(_t(a))
    for mine, ref in zip((p, lower, upper), scipy.linalg.lu(a)):
        np.testing.assert_allclose(mine.numpy(), ref)
    b = RNG.standard_normal((2, 4, 3))
    np.testing.assert_allclose(linalg.lu_solve(lu, pivots, _t(b)).numpy(), np.linalg.solve(a, b))
    x = linalg.lu_solve(lu, pivots, _t(b), adjoint=True)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(np.swapaxes(a, -1, -2), b))
    t = _t(a[0], True)
    assert gradcheck(lambda m: tuple(linalg.lu(m))[1:], (t,), check_forward_ad=True)
    assert gradcheck(lambda m: linalg.lu_factor(m).LU, (t,))


def test_lu_derivative_at_a_singular_matrix_raises():
    t = _t(np.array([[1.0, 2.0], [2.0, 4.0]]), True)
    lower_upper = linalg.lu_factor(t).LU
    with pytest.raises(np.linalg.LinAlgError):
        dualad.autograd.grad(lower_upper.sum(), t)


def test_lstsq_matches_numpy_and_is_batched():
    a, b = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))
    result = linalg.lstsq(_t(a), _t(b))
    for mine, ref in zip(result, np.linalg.lstsq(a, b, rcond=None)):
        np.testing.assert_allclose(np.asarray(mine.numpy()), ref, rtol=1e-10)
    assert result.solution is result[0] and result.singular_values is result[3]
    stack = RNG.standard_normal((3, 5, 3))
    batched = linalg.lstsq(_t(stack), _t(b)).solution.numpy()
    for x, m in zip(batched, stack):
        np.testing.assert_allclose(x, np.linalg.lstsq(m, b, rcond=None)[0], rtol=1e-10)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_lstsq_solution_derivatives_at_full_rank(shape):
    a = _t(RNG.standard_normal(shape), True)
    b = _t(RNG.standard_normal((shape[0], 2)), True)

    def solution(x, y):
        return linalg.lstsq(x, y).solution

    assert gradcheck(solution, (a, b), check_forward_ad=True)
    assert gradgradcheck(solution, (a, b))


def test_lstsq_rank_deficient_derivative_raises():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    t = _t(a, True)
    result = linalg.lstsq(t, _t(np.ones(3)))  # the forward works, as NumPy's
    np.testing.assert_allclose(result.solution.detach().numpy(), np.linalg.lstsq(a, np.ones(3))[0])
    assert result.rank.item() == 1
    with pytest.raises(np.linalg.LinAlgError, match="rank deficient"):
        dualad.autograd.grad(result.solution.sum(), t)


def test_pinv_matrix_rank():
    a = RNG.standard_normal((2, 4, 3))
    np.testing.assert_allclose(linalg.pinv(_t(a)).numpy(), np.linalg.pinv(a), atol=1e-12)
    assert gradcheck(linalg.pinv, (_t(a, True),), check_forward_ad=True)
    deficient = RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 3))
    # the constant-rank formula: exact along perturbations that keep the rank
    u, v = RNG.standard_normal((4, 2)), RNG.standard_normal((2, 3))

    def along_rank_two(x, y):
        return linalg.pinv(x @ y)

    assert gradcheck(along_rank_two, (_t(u, True), _t(v, True)))
    ranks = linalg.matrix_rank(_t(np.stack([deficient, a[0]])))
    np.testing.assert_array_equal(ranks.numpy(), [2, 3])
    assert not ranks.requires_grad and ranks.dtype == np.int64
    t = _t(deficient, True)
    assert not linalg.matrix_rank(t).requires_grad
    loop = func.vmap(linalg.matrix_rank)(_t(a)).numpy()
    np.testing.assert_array_equal(loop, np.linalg.matrix_rank(a))
    assert linalg.matrix_rank(_t(deficient), tol=1e-3).item() == 2


def test_tensorsolve_tensorinv_matrix_power():
    a = _square(6, 6).reshape(2, 3, 6)
    b = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(
        linalg.tensorsolve(_t(a), _t(b)).numpy(), np.linalg.tensorsolve(a, b), rtol=1e-10
    )
    c = _square(6, 6).reshape(3, 6, 2).transpose(0, 2, 1)  # (3, 2, 6)
    d = RNG.standard_normal((3, 2))
    np.testing.assert_allclose(
        linalg.tensorsolve(_t(c), _t(d), axes=(2,)).numpy(),
        np.linalg.tensorsolve(c, d, axes=(2,)),
        rtol=1e-10,
    )
    e = _square(6, 6).reshape(6, 2, 3)
    np.testing.assert_allclose(
        linalg.tensorinv(_t(e), ind=1).numpy(), np.linalg.tensorinv(e, ind=1), rtol=1e-10
    )
    m = _square(2, 3, 3) / 4
    for n in (-3, -1, 0, 1, 2, 7):
        np.testing.assert_allclose(
            linalg.matrix_power(_t(m), n).numpy(), np.linalg.matrix_power(m, n), rtol=1e-10
        )
    t = _t(m, True)
    (g,) = dualad.autograd.grad(linalg.matrix_power(t, 0).sum(), t)
    np.testing.assert_array_equal(g.numpy(), np.zeros_like(m))
    assert gradcheck(lambda x: linalg.matrix_power(x, -2), (t,), check_forward_ad=True)


def test_gaussian_log_likelihood_gradient_matches_the_analytic_formula():
    n = 6
    s, x, mu = _spd(n), RNG.standard_normal(n), RNG.standard_normal(n)
    ts, tmu = _t(s, True), _t(mu, True)
    lower = linalg.cholesky(ts)
    z = linalg.solve_triangular(lower, _t(x) - tmu, lower=True)
    loss = 0.5 * (z * z).sum() + dualad.log(dualad.diagonal(lower, 0, -2, -1)).sum()
    g_s, g_mu = dualad.autograd.grad(loss, (ts, tmu))
    inverse = np.linalg.inv(s)
    alpha = inverse @ (x - mu)
    r = x - mu
    expected = 0.5 * r @ inverse @ r + 0.5 * np.linalg.slogdet(s)[1]
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-12)
    np.testing.assert_allclose(g_s.numpy(), 0.5 * (inverse - np.outer(alpha, alpha)), atol=1e-12)
    np.testing.assert_allclose(g_mu.numpy(), -alpha, atol=1e-12)


def test_the_per_matrix_loop_of_single_matrix_backends_matches_the_batched_routines():
    # (CuPy's routines take one matrix at a time: the loop, run here on NumPy arrays)
    a, b = _square(2, 3, 4, 4), RNG.standard_normal((3, 4, 2))
    lu, piv = _lapack.per_matrix(scipy.linalg.lu_factor, (2, 3), (2,), a)
    np.testing.assert_allclose(lu, scipy.linalg.lu_factor(a)[0])
    solve = _lapack.per_matrix(
        lambda m, p, r: scipy.linalg.lu_solve((m, p), r), (2, 3), (2, 1, 2), lu, piv, b
    )
    np.testing.assert_allclose(solve, np.linalg.solve(a, b))
