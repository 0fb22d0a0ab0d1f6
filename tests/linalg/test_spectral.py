"""dualad.linalg's decompositions: values against NumPy/SciPy (reconstructions and invariants,
since vectors carry a free sign or phase), gradients, forward mode and second order against
finite differences, vmap against a loop, complex input, errors, and the singular points
(DESIGN.md 8): repeated eigen/singular values, A = I, defective matrices, gauge-dependent
losses (NaN, never a finite wrong number)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from _linalg_fd import fd_grad, fd_hvp

import dualad
import dualad.numpy as dnp
from dualad import func
from dualad.linalg import eig, eigh, eigvals, eigvalsh, matrix_exp, qr, svd, svdvals

RNG = np.random.default_rng(1234)


def sym(a):
    return (a + np.conj(a.T)) / 2


def t(a):
    return dualad.tensor(a)


def grad_of(f, a):
    return func.grad(f)(t(a)).numpy()


def jvp_of_grad(f, a, direction):
    return func.jvp(func.grad(f), (t(a),), (t(direction),))[1].numpy()


def random_hermitian(n, complex_=False):
    a = RNG.standard_normal((n, n))
    if complex_:
        a = a + 1j * RNG.standard_normal((n, n))
    return sym(a)


# ---------------------------------------------------------------------------------------------
# values


@pytest.mark.parametrize("complex_", [False, True])
def test_eigh_values_reconstruct_the_matrix(complex_):
    a = random_hermitian(4, complex_)
    L, V = eigh(t(a))
    np.testing.assert_allclose(L.numpy(), np.linalg.eigvalsh(a), atol=1e-12)
    v = V.numpy()
    np.testing.assert_allclose((v * L.numpy()) @ v.conj().T, a, atol=1e-12)
    np.testing.assert_allclose(eigvalsh(t(a)).numpy(), np.linalg.eigvalsh(a), atol=1e-12)


def test_eigh_reads_only_the_uplo_triangle():
    a = random_hermitian(3)
    junk = np.triu(RNG.standard_normal((3, 3)), 1)
    np.testing.assert_allclose(eigvalsh(t(a + junk)).numpy(), np.linalg.eigvalsh(a), atol=1e-12)
    np.testing.assert_allclose(
        eigvalsh(t(a + junk.T), UPLO="U").numpy(), np.linalg.eigvalsh(a), atol=1e-12
    )


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_values(shape, full_matrices):
    a = RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    U, S, Vh = svd(t(a), full_matrices=full_matrices)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    assert U.shape == u.shape and Vh.shape == vh.shape
    np.testing.assert_allclose(S.numpy(), s, atol=1e-12)
    k = s.shape[-1]
    rebuilt = (U.numpy()[..., :k] * S.numpy()[..., None, :]) @ Vh.numpy()[..., :k, :]
    np.testing.assert_allclose(rebuilt, a, atol=1e-12)
    np.testing.assert_allclose(svdvals(t(a)).numpy(), s, atol=1e-12)


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_numpy(mode):
    a = RNG.standard_normal((4, 3))
    expected = np.linalg.qr(a, mode=mode)
    got = dnp.linalg.qr(t(a), mode=mode)
    if mode == "r":
        np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
    else:
        np.testing.assert_allclose(got.Q.numpy(), expected.Q, atol=1e-12)
        np.testing.assert_allclose(got.R.numpy(), expected.R, atol=1e-12)


def test_eig_values_and_numpy_result_types():
    a = RNG.standard_normal((4, 4))
    L, V = eig(t(a))
    assert L.dtype == np.complex128 and V.dtype == np.complex128
    v = V.numpy()
    np.testing.assert_allclose(a @ v, v * L.numpy(), atol=1e-10)
    np.testing.assert_allclose(
        np.sort_complex(eigvals(t(a)).numpy()),
        np.sort_complex(np.linalg.eigvals(a).astype(complex)),
        atol=1e-10,
    )
    # NumPy gives real results when every eigenvalue of real input is real
    triangular = np.triu(RNG.standard_normal((3, 3)))
    assert dnp.linalg.eigvals(t(triangular)).dtype == np.linalg.eigvals(triangular).dtype
    assert type(dnp.linalg.eig(t(triangular))).__name__ == "EigResult"


def test_numpy_result_types_and_hermitian_svd():
    a = random_hermitian(4)
    r = dnp.linalg.svd(t(a), hermitian=True)
    assert type(r).__name__ == "SVDResult"
    np.testing.assert_allclose(r.S.numpy(), np.linalg.svd(a, hermitian=True).S, atol=1e-12)
    np.testing.assert_allclose((r.U.numpy() * r.S.numpy()) @ r.Vh.numpy(), a, atol=1e-12)
    assert type(np.linalg.eigh(t(a))).__name__ == "EighResult"  # through __array_function__
    np.testing.assert_allclose(
        np.linalg.svd(t(a), compute_uv=False).numpy(), np.linalg.svd(a, compute_uv=False)
    )


def test_integer_input_promotes_like_numpy():
    a = np.array([[2, 1], [1, 3]])
    assert eigvalsh(t(a)).dtype == np.linalg.eigvalsh(a).dtype == np.float64
    assert dnp.linalg.svd(t(a)).S.dtype == np.float64
    assert dnp.linalg.qr(t(a)).Q.dtype == np.float64
    assert matrix_exp(t(a)).dtype == np.float64


def test_float32_stays_float32():
    a = random_hermitian(3).astype(np.float32)
    assert eigh(t(a)).eigenvalues.dtype == np.float32
    assert svd(t(a)).U.dtype == np.float32
    assert eig(t(a)).eigenvalues.dtype == np.complex64
    assert matrix_exp(t(a)).dtype == np.float32


def test_matrix_exp_matches_scipy():
    a = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3))
    np.testing.assert_allclose(matrix_exp(t(a)).numpy(), scipy.linalg.expm(a), atol=1e-12)


# ---------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("fn", [eigh, eigvalsh, eig, eigvals, matrix_exp])
def test_non_square_input_is_a_linalg_error(fn):
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        fn(dualad.ones(2, 3))
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        fn(dualad.ones(3))


@pytest.mark.parametrize("fn", [eigh, svd, eigvalsh])
def test_non_convergence_propagates_linalg_error(fn):
    with pytest.raises(np.linalg.LinAlgError, match="converge"):
        fn(dualad.full((3, 3), float("nan")))


def test_bad_arguments():
    with pytest.raises(ValueError, match="UPLO"):
        eigh(dualad.eye(2), UPLO="X")
    with pytest.raises(ValueError, match="mode"):
        qr(dualad.eye(2), mode="economic")
    with pytest.raises(NotImplementedError, match="raw"):
        dnp.linalg.qr(dualad.eye(2), mode="raw")


def test_qr_complete_tall_raises_when_differentiated():
    a = t(RNG.standard_normal((4, 3)))
    with pytest.raises(RuntimeError, match="complete"):
        func.grad(lambda x: qr(x, mode="complete").R.sum())(a)


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_of_a_wide_matrix_differentiates_as_finite_differences(mode):
    # A = [X | Y]: Q and R's square block come from X alone, R's last columns are Q^H Y
    a = RNG.standard_normal((3, 5))
    w = RNG.standard_normal((3, 5))
    wq = RNG.standard_normal((3, 3))

    def loss(x):
        out = qr(x, mode)
        value = (out.R * t(w)).sum()
        return value if mode == "r" else value + (out.Q * t(wq)).sum()

    g = func.grad(loss)(t(a))
    eps = 1e-6
    numeric = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[index] = eps
        numeric[index] = (loss(t(a + e)).item() - loss(t(a - e)).item()) / (2 * eps)
    np.testing.assert_allclose(g.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_inputs_are_not_mutated():
    a = random_hermitian(3)
    x = t(a.copy())
    eigh(x), svd(x), qr(x), eig(x), matrix_exp(x)
    np.testing.assert_array_equal(x.numpy(), a)


# ---------------------------------------------------------------------------------------------
# vmap against a loop, batches


def test_vmap_matches_a_loop():
    a = np.stack([random_hermitian(3) for _ in range(4)])

    def f(x):
        L, V = eigh(x)
        return L.sum() + (V * L) @ V.mT + svdvals(x).sum() + matrix_exp(x).sum()

    batched = func.vmap(f)(t(a)).numpy()
    looped = np.stack([f(t(x)).numpy() for x in a])
    np.testing.assert_allclose(batched, looped, atol=1e-12)
    grads = func.vmap(func.grad(lambda x: svdvals(x).sum() + eigvalsh(x).sum()))(t(a)).numpy()
    for g, x in zip(grads, a):
        ref = func.grad(lambda y: svdvals(y).sum() + eigvalsh(y).sum())(t(x)).numpy()
        np.testing.assert_allclose(g, ref, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# singular points: repeated eigenvalues


def _spectral_loss(x):
    L = eigvalsh(x)
    return dualad.exp(L).sum() + (L**3).sum()


def _spectral_loss_np(a):
    L = np.linalg.eigvalsh(sym(a))
    return np.exp(L).sum() + (L**3).sum()


REPEATED = [np.eye(3), np.diag([1.0, 1.0, 2.0]), np.zeros((3, 3))]


@pytest.mark.parametrize("a", REPEATED, ids=["I", "diag(1,1,2)", "zero"])
def test_eigenvalue_losses_are_exact_at_repeated_eigenvalues(a):
    np.testing.assert_allclose(grad_of(_spectral_loss, a), fd_grad(_spectral_loss_np, a), atol=1e-7)
    direction = sym(RNG.standard_normal((3, 3)))
    # forward over reverse: the second derivative of a spectral function, Lewis' formula
    np.testing.assert_allclose(
        jvp_of_grad(_spectral_loss, a, direction),
        fd_hvp(_spectral_loss_np, a, direction),
        rtol=1e-5,
        atol=1e-5,
    )
    # forward mode: the eigenvalue tangent of eigh is diag(V^H dA V): right for symmetric sums
    _, tangent = func.jvp(lambda x: eigvalsh(x).sum(), (t(a),), (t(direction),))
    assert abs(tangent.item() - np.trace(direction)) < 1e-12


def test_eigenvalue_losses_through_eigh_are_exact_at_repeated_eigenvalues():
    a = np.diag([1.0, 1.0, 2.0])

    def loss(x):
        L, _ = eigh(x)
        return (L**2).sum()

    np.testing.assert_allclose(grad_of(loss, a), 2 * a, atol=1e-12)


def _projector_loss(x):
    """The projector onto the whole repeated eigenspace (the two smallest eigenvalues)."""
    _, V = eigh(x)
    P = V[:, :2] @ V[:, :2].mT
    return (P * dualad.tensor(C)).sum()


C = RNG.standard_normal((3, 3))


def _projector_loss_np(a):
    _, v = np.linalg.eigh(sym(a))
    return ((v[:, :2] @ v[:, :2].T) * C).sum()


def test_projector_onto_a_whole_repeated_eigenspace_is_exact():
    a = np.diag([1.0, 1.0, 2.0])
    np.testing.assert_allclose(
        grad_of(_projector_loss, a), fd_grad(_projector_loss_np, a), atol=1e-7
    )


def test_projector_forward_mode_is_exact_along_tangents_keeping_the_eigenspace():
    # reverse mode sees that the loss ignores the basis of the eigenspace (its cotangent has no
    # part inside the block); forward mode cannot see the loss: along a tangent that splits the
    # repeated eigenvalue the eigenvector tangent does not exist, so it is inf/NaN (never a
    # finite number, wrong for a loss of the basis), along one that keeps the eigenspace exact
    a = np.diag([1.0, 1.0, 2.0])
    splitting = sym(RNG.standard_normal((3, 3)))
    with np.errstate(invalid="ignore"):
        _, tangent = func.jvp(_projector_loss, (t(a),), (t(splitting),))
    assert not np.isfinite(tangent.item())
    keeping = splitting.copy()
    keeping[0, 1] = keeping[1, 0] = 0.0
    keeping[1, 1] = keeping[0, 0]  # (the tangent's block a multiple of I)
    _, tangent = func.jvp(_projector_loss, (t(a),), (t(keeping),))
    eps = 1e-6
    expected = (_projector_loss_np(a + eps * keeping) - _projector_loss_np(a - eps * keeping)) / (
        2 * eps
    )
    np.testing.assert_allclose(tangent.item(), expected, rtol=1e-6, atol=1e-8)


def test_a_loss_of_an_undefined_eigenvector_basis_is_not_finite():
    a = np.diag([1.0, 1.0, 2.0])

    def loss(x):
        _, V = eigh(x)
        return (V[:, 0] * dualad.tensor([1.0, 2.0, 3.0])).sum() ** 2

    g = grad_of(loss, a)
    assert not np.all(np.isfinite(g))
    # forward mode: the eigenvector tangent in the repeated block is inf unless the tangent
    # leaves the eigenspace alone
    direction = sym(RNG.standard_normal((3, 3)))
    _, tangent = func.jvp(lambda x: eigh(x)[1], (t(a),), (t(direction),))
    assert not np.all(np.isfinite(tangent.numpy()))
    block_free = np.diag([0.3, -0.2, 0.5])
    block_free[0, 2] = block_free[2, 0] = 0.7
    _, tangent = func.jvp(lambda x: eigh(x)[1], (t(a),), (t(block_free),))
    assert np.all(np.isfinite(tangent.numpy()))


def test_non_symmetric_eigenvalue_loss_gets_the_block_mean():
    # the smallest eigenvalue of I is not differentiable: the basis-free subgradient I/3
    g = func.grad(lambda x: eigvalsh(x)[0])(dualad.eye(3)).numpy()
    np.testing.assert_allclose(g, np.eye(3) / 3, atol=1e-12)


def test_complex_eigenvector_phase_dependence_is_nan():
    a = random_hermitian(3, complex_=True)

    def loss(x):
        _, V = eigh(x)
        # depends on the free phase of the first eigenvector
        return dualad.real(V[1, 0] * (1.0 + 2.0j))

    assert np.isnan(grad_of(loss, a)).any()

    def invariant(x):
        _, V = eigh(x)
        return dualad.real((V[:, 0] * dualad.conj(V[:, 0])).sum() + dualad.abs(V[1, 0]) ** 2)

    ref = fd_grad(lambda b: float(np.abs(np.linalg.eigh(sym(b))[1][1, 0]) ** 2 + 1), a)
    np.testing.assert_allclose(grad_of(invariant, a), ref, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# singular points: repeated and zero singular values


def _singular_loss(x):
    return (svdvals(x) ** 3).sum() + dualad.linalg.matrix_norm(x, "nuc")


def _singular_loss_np(a):
    s = np.linalg.svd(a, compute_uv=False)
    return (s**3).sum() + s.sum()


Q, _ = np.linalg.qr(RNG.standard_normal((4, 4)))
REPEATED_SINGULAR = [np.eye(3), Q[:, :3] * np.array([2.0, 2.0, 1.0]), Q[:3] * 1.5]


@pytest.mark.parametrize("a", REPEATED_SINGULAR, ids=["I", "tall 2,2,1", "wide 1.5"])
def test_singular_value_losses_are_exact_at_repeated_singular_values(a):
    np.testing.assert_allclose(grad_of(_singular_loss, a), fd_grad(_singular_loss_np, a), atol=1e-7)
    direction = RNG.standard_normal(a.shape)
    np.testing.assert_allclose(
        jvp_of_grad(_singular_loss, a, direction),
        fd_hvp(_singular_loss_np, a, direction),
        rtol=1e-5,
        atol=1e-5,
    )


def test_reverse_over_reverse_at_repeated_values_is_nan_not_wrong():
    direction = t(RNG.standard_normal((3, 3)))
    hvp = func.grad(lambda x: (func.grad(_singular_loss)(x) * direction).sum())(dualad.eye(3))
    assert np.isnan(hvp.numpy()).any()


def test_svd_full_matrices_extra_columns():
    a = RNG.standard_normal((4, 2))
    # a loss of the first k columns is exact
    w = dualad.tensor([1.0, 2.0])

    def used(x):
        U, _, Vh = svd(x, full_matrices=True)
        return (((U[:, :2] * w) @ Vh[:2]) ** 2).sum()

    def used_np(b):
        u, _, vh = np.linalg.svd(b, full_matrices=True)
        return (((u[:, :2] * [1.0, 2.0]) @ vh[:2]) ** 2).sum()

    np.testing.assert_allclose(grad_of(used, a), fd_grad(used_np, a), atol=1e-7)
    # the extra columns are any basis of the complement: NaN
    g = grad_of(lambda x: svd(x, full_matrices=True).U[:, 3].sum() ** 2, a)
    assert np.isnan(g).all()


def test_svd_of_rank_deficient_matrix():
    a = np.diag([2.0, 1.0, 0.0])
    # the nuclear norm has a kink at a zero singular value: the subgradient of least norm,
    # U1 V1^H over the non-zero ones (abs's 0 at 0)
    g = grad_of(lambda x: dualad.linalg.matrix_norm(x, "nuc"), a)
    np.testing.assert_allclose(g, np.diag([1.0, 1.0, 0.0]), atol=1e-12)
    # the Frobenius norm through the singular values is smooth there
    g = grad_of(lambda x: (svdvals(x) ** 2).sum(), a)
    np.testing.assert_allclose(g, 2 * a, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# matrix_exp at A = I and at defective matrices


def _exp_loss_np(a):
    return np.real((scipy.linalg.expm(a) * C).sum())


@pytest.mark.parametrize(
    "a",
    [
        np.eye(3),
        np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]),
        np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]),
    ],
    ids=["I", "nilpotent", "jordan block"],
)
def test_matrix_exp_is_finite_and_exact_where_eigendecompositions_fail(a):
    def loss(x):
        return (matrix_exp(x) * dualad.tensor(C)).sum()

    np.testing.assert_allclose(grad_of(loss, a), fd_grad(_exp_loss_np, a), atol=1e-7)
    direction = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(
        jvp_of_grad(loss, a, direction), fd_hvp(_exp_loss_np, a, direction), atol=1e-5
    )
    hvp = func.grad(lambda x: (func.grad(loss)(x) * t(direction)).sum())(t(a)).numpy()
    np.testing.assert_allclose(hvp, fd_hvp(_exp_loss_np, a, direction), atol=1e-5)


# ---------------------------------------------------------------------------------------------
# eig


def test_eig_gradient_of_a_phase_invariant_loss():
    a = RNG.standard_normal((3, 3))
    w = np.array([1.0, 2.0, 3.0])

    def canonical(values, vectors):
        order = np.lexsort((values.imag, values.real))
        return values[order], vectors[:, order]

    def loss(x):
        L, V = eig(x)
        order = np.lexsort((L.detach().numpy().imag, L.detach().numpy().real))
        L, V = L[dualad.tensor(order)], V[:, dualad.tensor(order)]
        P = (V * dualad.tensor(w)) @ dualad.conj(V.mT)
        return dualad.real((L * dualad.tensor(w)).sum() + (P * dualad.tensor(C)).sum())

    def loss_np(b):
        L, V = canonical(*np.linalg.eig(b))
        P = (V * w) @ V.conj().T
        return np.real((L * w).sum() + (P * C).sum())

    g = func.grad(loss)(t(a)).numpy()
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, fd_grad(loss_np, a), atol=1e-6)


def test_eig_phase_dependent_loss_is_nan():
    a = RNG.standard_normal((3, 3))
    g = grad_of(lambda x: dualad.real(eig(x).eigenvectors[0, 0] * 1j), a)
    assert np.isnan(g).any()


def test_hessian_of_a_spectral_function_at_the_identity():
    # func.hessian is forward over reverse (jacfwd of jacrev): exact at A = I, under vmap
    def loss(x):
        return dualad.exp(eigvalsh(x)).sum()

    def loss_np(b):
        return np.exp(np.linalg.eigvalsh(sym(b))).sum()

    for a in (np.eye(2), np.diag([1.0, 1.0, 2.0])):
        n = a.shape[0]
        hessian = func.hessian(loss)(t(a)).numpy().reshape(n * n, n * n)
        # the Hessian of the function of the Hermitian part (the gradient's convention)
        for direction in np.eye(n * n):
            d = direction.reshape(n, n)
            expected = fd_hvp(loss_np, a, d)
            np.testing.assert_allclose((hessian @ d.ravel()).reshape(n, n), expected, atol=1e-5)


def test_hessian_of_singular_value_losses_at_repeated_values():
    def loss(x):
        return dualad.linalg.matrix_norm(x, "nuc") + (svdvals(x) ** 3).sum()

    def loss_np(b):
        s = np.linalg.svd(b, compute_uv=False)
        return s.sum() + (s**3).sum()

    for a in (np.eye(2), np.diag([2.0, 2.0, 1.0])[:, :2] @ np.eye(2) * 1.0):
        m, n = a.shape
        hessian = func.hessian(loss)(t(a)).numpy().reshape(m * n, m * n)
        for direction in np.eye(m * n):
            d = direction.reshape(m, n)
            expected = fd_hvp(loss_np, a, d)
            np.testing.assert_allclose((hessian @ d.ravel()).reshape(m, n), expected, atol=1e-5)


@pytest.mark.parametrize(
    "matrix",
    [
        [[2.0, -1.0], [1.0, 0.0]],
        [[1.0, 1.0], [0.0, 1.0]],
        [[3.0, 1.0, 0.0], [0.0, 3.0, 1.0], [0.0, 0.0, 3.0]],
    ],
)
def test_defective_matrices_give_nan_not_a_finite_wrong_number(matrix):
    # the eigenvectors of a defective matrix come out (nearly) parallel: a solve with them
    # gave large finite numbers (grad of sum(eigvals) at [[2, -1], [1, 0]] was
    # [[1.207, -0.207], [-0.207, 1.207]], not the trace's I): now NaN, reverse and forward
    a = dualad.tensor(matrix, requires_grad=True)
    (g,) = dualad.autograd.grad(dualad.real(dualad.linalg.eigvals(a)).sum(), a)
    assert np.all(np.isnan(g.numpy()))
    t = dualad.func.jvp(
        lambda m: dualad.real(dualad.linalg.eigvals(m)).sum(), (a.detach(),), (dualad.ones_like(a),)
    )[1]
    assert np.isnan(t.item())


def test_roots_at_a_repeated_root_give_nan():
    p = dualad.tensor([1.0, -2.0, 1.0], requires_grad=True)
    (g,) = dualad.autograd.grad(dnp.roots(p).sum(), p)
    assert np.all(np.isnan(g.numpy()))
