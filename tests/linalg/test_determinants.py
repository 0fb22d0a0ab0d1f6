"""det, slogdet and logdet: values against NumPy, and the singular points (issue 14, item 7).

det is a polynomial: its gradient (the transposed adjugate), JVP, Hessian and jvp-of-grad must
equal finite differences at singular matrices of every rank and at repeated eigenvalues, where
formulas through ``A^{-1}`` or an SVD's ``1 / (s_i - s_j)`` break. slogdet of a singular matrix
is ``(0, -inf)`` with a NaN gradient (the derivative does not exist), never a finite number.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import func, linalg
from dualad.ops import _lapack, determinants
from dualad.ops.determinants import det_grad
from dualad.testing import gradcheck, gradgradcheck

RNG = np.random.default_rng(14)


def _t(a, requires_grad=False):
    return dualad.tensor(np.asarray(a), requires_grad=requires_grad)


def _det_hessian_fd(a, eps=1e-3):
    """The Hessian of det by central differences of the numerical gradient (det is a
    polynomial of degree n: the differences are exact up to rounding for small n)."""
    n = a.shape[-1]
    out = np.zeros((n, n, n, n))
    for i in range(n):
        for j in range(n):
            e = np.zeros((n, n))
            e[i, j] = eps
            out[:, :, i, j] = (_det_grad_fd(a + e) - _det_grad_fd(a - e)) / (2 * eps)
    return out


def _det_grad_fd(a, eps=1e-4):
    n = a.shape[-1]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e = np.zeros((n, n))
            e[i, j] = eps
            out[i, j] = (np.linalg.det(a + e) - np.linalg.det(a - e)) / (2 * eps)
    return out


def _rank(n, r):
    u, v = RNG.standard_normal((n, r)), RNG.standard_normal((r, n))
    return u @ v


SINGULAR_POINTS = {
    "rank n-1": _rank(3, 2),
    "rank n-2": _rank(3, 1),
    "rank n-2 of 4": _rank(4, 2),
    "zero": np.zeros((3, 3)),
    "identity": np.eye(3),
    "2I": 2 * np.eye(3),
    "repeated eigenvalue, defective": np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0, 0, 1.0]]),
    "rank 2 with repeated zero eigenvalues": np.array([[0.0, 1.0, 0], [0, 0, 0], [0, 0, 3.0]]),
}


def test_det_gradient_at_a_singular_matrix_is_the_transposed_adjugate():
    a = _t([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    (grad,) = dualad.autograd.grad(linalg.det(a), a)
    np.testing.assert_allclose(grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    # its JVP likewise: tr(adj(A) E)
    e = np.array([[1.0, 0.5], [-1.0, 2.0]])
    _, tangent = func.jvp(linalg.det, (_t([[1.0, 2.0], [2.0, 4.0]]),), (_t(e),))
    np.testing.assert_allclose(tangent.numpy(), np.sum(np.array([[4, -2], [-2, 1]]) * e))


@pytest.mark.parametrize("name", list(SINGULAR_POINTS))
def test_det_derivatives_of_first_and_second_order_at_singular_points(name):
    a = SINGULAR_POINTS[name]
    n = a.shape[-1]
    t = _t(a, requires_grad=True)
    (grad,) = dualad.autograd.grad(linalg.det(t), t)
    np.testing.assert_allclose(grad.numpy(), _det_grad_fd(a), atol=1e-7)
    hessian = func.hessian(linalg.det)(_t(a)).numpy()
    np.testing.assert_allclose(hessian, _det_hessian_fd(a), atol=1e-6)
    # jvp of grad (forward over reverse) and grad of jvp (reverse over forward)
    e = RNG.standard_normal((n, n))
    _, jvp_of_grad = func.jvp(func.grad(linalg.det), (_t(a),), (_t(e),))
    expected = np.einsum("ijkl,kl->ij", _det_hessian_fd(a), e)
    np.testing.assert_allclose(jvp_of_grad.numpy(), expected, atol=1e-6)

    def directional(x):
        return func.jvp(linalg.det, (x,), (_t(e),))[1]

    np.testing.assert_allclose(func.grad(directional)(_t(a)).numpy(), expected, atol=1e-6)


def test_det_gradients_pass_gradcheck_at_singular_matrices_real_and_complex():
    for a in (_rank(3, 2), _rank(3, 1), np.eye(3)):
        assert gradcheck(linalg.det, (_t(a, True),))
        assert gradgradcheck(linalg.det, (_t(a, True),))
    c = (_rank(3, 2) + 1j * _rank(3, 2)).astype(np.complex128)
    c[:, 2] = c[:, 0] + 2 * c[:, 1]  # rank 2
    assert gradcheck(linalg.det, (_t(c, True),))
    assert gradgradcheck(linalg.det, (_t(c, True),))


def _det_directional_fd(a, directions, eps=1e-2):
    """``D^k det(a)[E1, ..., Ek]`` by a k-fold central difference of the polynomial
    ``det(a + sum t_i E_i)`` (degree n): the signs keep the terms odd in every ``t_i``, so the
    error is O(eps^2) from terms of degree k + 2 (none when n < k + 2) plus rounding."""
    k = len(directions)
    total = 0.0
    for signs in np.ndindex(*(2,) * k):
        s = [1.0 if b == 0 else -1.0 for b in signs]
        point = a + sum(si * eps * e for si, e in zip(s, directions))
        total = total + np.prod(s) * np.linalg.det(point)
    return total / (2 * eps) ** k


THIRD_ORDER_POINTS = {
    "regular 3x3": RNG.standard_normal((3, 3)),
    "regular 4x4": RNG.standard_normal((4, 4)),
    "singular [[1, 2], [2, 4]]": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "rank 1 of 4": _rank(4, 1),
    "rank 2 of 4": _rank(4, 2),
    "identity 4": np.eye(4),
    "zero 4": np.zeros((4, 4)),
}


@pytest.mark.parametrize("name", list(THIRD_ORDER_POINTS))
def test_det_third_derivatives_match_finite_differences(name):
    a = THIRD_ORDER_POINTS[name]
    n = a.shape[-1]
    e, w, h = (RNG.standard_normal((n, n)) for _ in range(3))
    expected = _det_directional_fd(a, [e, w, h])

    # forward over forward over reverse, and the full third-derivative tensors (jacfwd and
    # jacrev of the Hessian: batched rules)
    def hvp(x):
        return func.jvp(func.grad(linalg.det), (x,), (_t(e),))[1]

    _, third = func.jvp(hvp, (_t(a),), (_t(w),))
    np.testing.assert_allclose(np.sum(third.numpy() * h), expected, rtol=1e-6, atol=1e-6)
    for transform in (func.jacfwd, func.jacrev):
        tensor3 = transform(func.hessian(linalg.det))(_t(a)).numpy()
        got = np.einsum("abcdef,ab,cd,ef", tensor3, e, w, h)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    # reverse over reverse over reverse
    t = _t(a, requires_grad=True)
    (g,) = dualad.autograd.grad(linalg.det(t), t, create_graph=True)
    (g2,) = dualad.autograd.grad((g * _t(e)).sum(), t, create_graph=True)
    (g3,) = dualad.autograd.grad((g2 * _t(w)).sum(), t)
    np.testing.assert_allclose(np.sum(g3.numpy() * h), expected, rtol=1e-6, atol=1e-6)


def test_det_fourth_derivative_and_complex_and_batched_third_derivatives():
    a = _rank(4, 2)
    e, w, v, h = (RNG.standard_normal((4, 4)) for _ in range(4))

    def third(x):
        return func.jvp(func.grad(linalg.det), (x,), (_t(e),))[1]

    def fourth_along(x):
        return func.jvp(third, (x,), (_t(w),))[1]

    _, fourth = func.jvp(fourth_along, (_t(a),), (_t(v),))
    expected = _det_directional_fd(a, [e, w, v, h], eps=1e-1)  # degree 4: exact up to rounding
    np.testing.assert_allclose(np.sum(fourth.numpy() * h), expected, rtol=1e-8, atol=1e-8)
    # complex, singular
    c = _rank(3, 2) + 1j * _rank(3, 2)
    c[:, 2] = c[:, 0] - c[:, 1]
    assert gradgradcheck(
        lambda x: func.grad(lambda y: dualad.real(linalg.det(y)))(x), (_t(c, True),)
    )
    # a batch with a singular and a regular member, against each one alone
    stack = np.stack([_rank(3, 2), RNG.standard_normal((3, 3))])
    batched = func.vmap(func.jacfwd(func.hessian(linalg.det)))(_t(stack)).numpy()
    for got, x in zip(batched, stack):
        alone = func.jacfwd(func.hessian(linalg.det))(_t(x)).numpy()
        np.testing.assert_allclose(got, alone, atol=1e-10)


def test_det_batched_and_vmapped_with_singular_members():
    stack = np.stack([_rank(3, 2), np.eye(3), RNG.standard_normal((3, 3))])
    np.testing.assert_allclose(linalg.det(_t(stack)).numpy(), np.linalg.det(stack), atol=1e-12)
    grads = func.vmap(func.grad(linalg.det))(_t(stack)).numpy()
    for g, a in zip(grads, stack):
        np.testing.assert_allclose(g, _det_grad_fd(a), atol=1e-7)
    hessians = func.vmap(func.hessian(linalg.det))(_t(stack)).numpy()
    for h, a in zip(hessians, stack):
        np.testing.assert_allclose(h, _det_hessian_fd(a), atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_det_and_slogdet_values_match_numpy(dtype):
    a = RNG.standard_normal((2, 4, 4)).astype(dtype)
    if dtype.startswith("complex"):
        a = a + 1j * RNG.standard_normal((2, 4, 4)).astype(dtype)
    det = linalg.det(_t(a))
    assert det.dtype == np.linalg.det(a).dtype
    np.testing.assert_allclose(det.numpy(), np.linalg.det(a), rtol=1e-4)
    sign, logabs = linalg.slogdet(_t(a))
    expected = np.linalg.slogdet(a)
    assert sign.dtype == expected.sign.dtype and logabs.dtype == expected.logabsdet.dtype
    np.testing.assert_allclose(sign.numpy(), expected.sign, rtol=1e-4)
    np.testing.assert_allclose(logabs.numpy(), expected.logabsdet, rtol=1e-4)


def test_slogdet_gradient_is_the_inverse_transpose():
    a = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
    t = _t(a, requires_grad=True)
    (grad,) = dualad.autograd.grad(linalg.slogdet(t).logabsdet, t)
    np.testing.assert_allclose(grad.numpy(), np.linalg.inv(a).T, rtol=1e-10)
    c = a + 1j * RNG.standard_normal((4, 4))
    assert gradcheck(lambda x: tuple(linalg.slogdet(x)), (_t(c, True),))
    assert gradgradcheck(lambda x: linalg.slogdet(x).logabsdet, (_t(c, True),))


def test_slogdet_of_a_singular_matrix():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    t = _t(a, requires_grad=True)
    sign, logabs = linalg.slogdet(t)
    assert sign.item() == 0.0 and logabs.item() == -np.inf
    assert tuple(np.linalg.slogdet(a)) == (0.0, -np.inf)
    # the derivative of logabsdet does not exist: NaN, never a finite number
    (grad,) = dualad.autograd.grad(logabs, t, retain_graph=True)
    assert np.isnan(grad.numpy()).all()
    _, tangent = func.jvp(lambda x: linalg.slogdet(x).logabsdet, (_t(a),), (_t(np.eye(2)),))
    assert np.isnan(tangent.item())
    # the sign's gradient is 0 (it is piecewise constant for real matrices)
    (grad_sign,) = dualad.autograd.grad(sign, t)
    np.testing.assert_array_equal(grad_sign.numpy(), np.zeros((2, 2)))
    # complex: the sign is 0 too, its gradient 0
    c = _t(a.astype(complex), requires_grad=True)
    (grad_sign,) = dualad.autograd.grad(dualad.real(linalg.slogdet(c).sign), c)
    np.testing.assert_array_equal(grad_sign.numpy(), np.zeros((2, 2)))


def test_logdet():
    a = RNG.standard_normal((3, 3))
    spd = a @ a.T + np.eye(3)
    np.testing.assert_allclose(linalg.logdet(_t(spd)).numpy(), np.log(np.linalg.det(spd)))
    with np.errstate(invalid="ignore"):  # (log of a negative sign: NaN, as NumPy's log)
        assert np.isnan(linalg.logdet(_t(np.diag([1.0, -1.0]))).item())
    t = _t(spd, requires_grad=True)
    (grad,) = dualad.autograd.grad(dualad.logdet(t), t)
    np.testing.assert_allclose(grad.numpy(), np.linalg.inv(spd), rtol=1e-10)


def test_slogdet_reuses_the_forward_factorisation(monkeypatch):
    calls = []
    original = _lapack.lu_factor
    monkeypatch.setattr(
        "dualad.ops.determinants.lu_factor", lambda xp, a: calls.append(1) or original(xp, a)
    )
    t = _t(RNG.standard_normal((5, 5)) + 5 * np.eye(5), requires_grad=True)
    dualad.autograd.grad(linalg.slogdet(t).logabsdet, t)
    assert len(calls) == 1


def test_det_rules_through_the_inverse_equal_the_svd_frame(monkeypatch):
    a = _t(RNG.standard_normal((2, 4, 4)) + 1j * RNG.standard_normal((2, 4, 4)))
    e = _t(RNG.standard_normal((2, 4, 4)))
    fast = [det_grad(a).numpy(), det_grad(a, e).numpy()]
    monkeypatch.setattr(determinants, "_RCOND_FAST", np.inf)  # every matrix to the SVD frame
    slow = [det_grad(a).numpy(), det_grad(a, e).numpy()]
    for f, s in zip(fast, slow):
        np.testing.assert_allclose(f, s, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype, n", [("float64", 17), ("float32", 7)])
def test_det_third_derivatives_refuse_sizes_where_rounding_would_dominate(dtype, n):
    # the mean over shifted matrices cancels terms 3^n larger than the result: past these sizes
    # it could be a plausible wrong number, so it raises (the Hessian itself stays exact)
    a = _t(np.random.default_rng(0).standard_normal((n, n)).astype(dtype))
    hessian = func.hessian(dualad.linalg.det)
    assert hessian(a).shape == (n, n, n, n)
    with pytest.raises(NotImplementedError, match=f"up to {n - 1}x{n - 1}"):
        func.jacfwd(hessian)(a)
