"""scipy.linalg's matrix functions in dualad.linalg: values against SciPy, derivatives against
finite differences at the awkward points (A = I, repeated eigenvalues, non-normal and defective
matrices), at every order, and the singular points each docstring states."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.linalg
from _linalg_fd import fd_grad, fd_hvp

import dualad
from dualad import func, linalg

RNG = np.random.default_rng(2024)
C = RNG.standard_normal((3, 3))

NAMES = ("logm", "sqrtm", "signm", "cosm", "sinm", "tanm", "coshm", "sinhm", "tanhm")
NEAR_I = np.eye(3) + 0.3 * RNG.standard_normal((3, 3))
SIGN_INPUT = np.array([[1.0, 2.0, 0.5], [0.0, -1.5, 1.0], [0.3, 0.0, 0.8]])


def t(a):
    return dualad.tensor(a)


def _input(name, dtype):
    a = SIGN_INPUT if name == "signm" else NEAR_I
    if np.dtype(dtype).kind == "c":
        a = a + 0.2j * RNG.standard_normal((3, 3))
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_values_match_scipy(name, dtype):
    a = _input(name, dtype)
    out = getattr(linalg, name)(t(a))
    assert out.dtype == np.dtype(dtype)
    expected = getattr(scipy.linalg, name)(a.astype(np.result_type(a.dtype, np.float64)))
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(out.numpy(), expected, rtol=tol, atol=tol)


def test_expm_is_matrix_exp_and_powers_match_scipy():
    assert linalg.expm is linalg.matrix_exp
    for power in (0.5, -1.3, 3.0, -2.0):
        np.testing.assert_allclose(
            linalg.fractional_matrix_power(t(NEAR_I), power).numpy(),
            np.real(scipy.linalg.fractional_matrix_power(NEAR_I, power)),
            atol=1e-12,
        )


def test_batch_dims_and_empty_matrices():
    a = np.stack([NEAR_I, NEAR_I.T, 2 * np.eye(3)])
    for name in NAMES[:2] + NAMES[3:]:
        out = getattr(linalg, name)(t(a.reshape(3, 1, 3, 3))).numpy()
        for k in range(3):
            np.testing.assert_allclose(
                out[k, 0], getattr(scipy.linalg, name)(a[k]), atol=1e-12, err_msg=name
            )
    assert linalg.logm(t(np.zeros((2, 0, 0)))).shape == (2, 0, 0)


def _loss_np(name, power=None):
    def loss(a):
        if power is not None:
            value = scipy.linalg.fractional_matrix_power(a, power)
        else:
            value = getattr(scipy.linalg, name)(a)
        return np.real((value * C).sum())

    return loss


def _loss(name, power=None):
    def loss(x):
        value = (
            linalg.fractional_matrix_power(x, power)
            if power is not None
            else getattr(linalg, name)(x)
        )
        return (value * t(C)).sum()

    return loss


AWKWARD = {
    "I": np.eye(3),
    "jordan": np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]]),
    "non-normal": np.array([[1.0, 5.0, 0.0], [0.0, 1.2, 4.0], [0.0, 0.0, 0.9]]),
    "repeated, normal": np.diag([1.5, 1.5, 0.7]),
}


@pytest.mark.parametrize("point", list(AWKWARD))
@pytest.mark.parametrize("name", ["logm", "sqrtm", "power", "cosm", "tanhm"])
def test_derivatives_at_repeated_eigenvalues_and_non_normal_matrices(name, point):
    a = AWKWARD[point]
    power = 0.3 if name == "power" else None
    loss, loss_np = _loss(name, power), _loss_np(name, power)
    grad = func.grad(loss)(t(a)).numpy()
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, fd_grad(loss_np, a), rtol=1e-5, atol=1e-6)
    direction = RNG.standard_normal((3, 3))
    expected = fd_hvp(loss_np, a, direction)
    fwd_over_rev = func.jvp(func.grad(loss), (t(a),), (t(direction),))[1].numpy()
    np.testing.assert_allclose(fwd_over_rev, expected, rtol=1e-3, atol=1e-4)
    rev_over_rev = func.grad(lambda x: (func.grad(loss)(x) * t(direction)).sum())(t(a))
    np.testing.assert_allclose(rev_over_rev.numpy(), expected, rtol=1e-3, atol=1e-4)


def test_signm_derivative_of_a_non_normal_matrix_is_not_zero_and_exact():
    loss, loss_np = _loss("signm"), _loss_np("signm")
    grad = func.grad(loss)(t(SIGN_INPUT)).numpy()
    assert np.abs(grad).max() > 0.1
    np.testing.assert_allclose(grad, fd_grad(loss_np, SIGN_INPUT), rtol=1e-5, atol=1e-6)


def test_complex_derivatives_follow_the_conjugate_convention():
    a = NEAR_I + 0.3j * RNG.standard_normal((3, 3))
    for name in ("logm", "sqrtm", "sinm"):
        fn = getattr(linalg, name)
        grad = func.grad(lambda x, fn=fn: dualad.real((fn(x) * t(C)).sum()))(t(a)).numpy()
        np.testing.assert_allclose(grad, fd_grad(_loss_np(name), a), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# singular points


def test_logm_of_a_singular_matrix_raises():
    with pytest.raises(np.linalg.LinAlgError, match=r"logm.*\(2, 2\).*singular"):
        linalg.logm(t(np.diag([0.0, 1.0])))


@pytest.mark.parametrize("name", ["logm", "sqrtm", "power"])
def test_real_input_with_a_negative_eigenvalue_raises_and_complex_input_matches_scipy(name):
    a = np.diag([-1.0, 2.0])
    fn = (
        (lambda x: linalg.fractional_matrix_power(x, 0.3))
        if name == "power"
        else getattr(linalg, name)
    )
    with pytest.raises(ValueError, match=r"negative real axis.*complex"):
        fn(t(a))
    ref = (
        scipy.linalg.fractional_matrix_power(a, 0.3)
        if name == "power"
        else getattr(scipy.linalg, name)(a)
    )
    np.testing.assert_allclose(fn(t(a.astype(complex))).numpy(), ref, atol=1e-12)


def test_sqrtm_and_powers_have_no_finite_derivative_at_a_singular_matrix():
    a = t(np.diag([0.0, 4.0]))
    e = t(np.ones((2, 2)))
    np.testing.assert_allclose(linalg.sqrtm(a).numpy(), np.diag([0.0, 2.0]))
    for fn in (linalg.sqrtm, lambda x: linalg.fractional_matrix_power(x, 0.5)):
        assert np.all(np.isnan(func.grad(lambda x, fn=fn: fn(x).sum())(a).numpy()))
        assert np.all(np.isnan(func.jvp(fn, (a,), (e,))[1].numpy()))
    # integer powers are polynomials: finite derivatives at singular matrices
    grad = func.grad(lambda x: linalg.fractional_matrix_power(x, 2.0).sum())(a).numpy()
    np.testing.assert_allclose(grad, fd_grad(lambda m: (m @ m).sum(), a.numpy()), atol=1e-6)


def test_near_singular_sqrtm_derivative_is_large_and_exact():
    a = np.diag([1e-6, 4.0])
    grad = func.grad(lambda x: linalg.sqrtm(x)[0, 0])(t(a)).numpy()
    np.testing.assert_allclose(grad[0, 0], 0.5 / np.sqrt(1e-6), rtol=1e-8)


def test_signm_with_an_eigenvalue_on_the_imaginary_axis_raises():
    with pytest.raises(np.linalg.LinAlgError, match=r"signm.*\(2, 2\).*imaginary axis"):
        linalg.signm(t(np.array([[0.0, 1.0], [-1.0, 0.0]])))
    with pytest.raises(np.linalg.LinAlgError, match="imaginary axis"):
        linalg.signm(t(np.diag([0.0, 1.0])))


def test_tanm_near_a_pole_is_as_large_as_tan():
    # cos(fl(pi/2)) is 6e-17, not 0: the value (and SciPy's) is tan's, 1.6e16
    a = np.diag([np.pi / 2, 0.1])
    np.testing.assert_allclose(linalg.tanm(t(a)).numpy(), np.diag(np.tan([np.pi / 2, 0.1])))


# ---------------------------------------------------------------------------------------------
# bad input


def test_bad_input_names_the_function_and_the_shape():
    with pytest.raises(np.linalg.LinAlgError, match=r"logm.*\(2, 3\)"):
        linalg.logm(t(np.ones((2, 3))))
    with pytest.raises(np.linalg.LinAlgError, match=r"sqrtm.*\(3,\)"):
        linalg.sqrtm(t(np.ones(3)))
    with pytest.raises(TypeError, match="float16"):
        linalg.cosm(t(np.eye(2, dtype=np.float16)))


def test_the_power_is_static_and_a_tracked_power_raises():
    a = t(NEAR_I)
    with pytest.raises(TypeError, match="t is a static number"):
        linalg.fractional_matrix_power(a, dualad.tensor(0.5, requires_grad=True))
    with pytest.raises(TypeError, match="real number"):
        linalg.fractional_matrix_power(a, "half")
    with pytest.raises(TypeError, match="static number"):
        func.grad(lambda p: linalg.fractional_matrix_power(a, p).sum())(dualad.tensor(0.5))


def test_inputs_are_not_mutated():
    a = NEAR_I.copy()
    for name in NAMES:
        getattr(linalg, name)(t(a) if name != "signm" else t(SIGN_INPUT))
    np.testing.assert_array_equal(a, NEAR_I)


# ---------------------------------------------------------------------------------------------
# expm_frechet


def test_expm_frechet_matches_scipy_and_is_differentiable_in_both_arguments():
    a, e = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    value, frechet = linalg.expm_frechet(t(a), t(e))
    expected = scipy.linalg.expm_frechet(a, e)
    np.testing.assert_allclose(value.numpy(), expected[0], atol=1e-12)
    np.testing.assert_allclose(frechet.numpy(), expected[1], atol=1e-12)
    only = linalg.expm_frechet(t(a), t(e + 0j), compute_expm=False)
    np.testing.assert_allclose(only.numpy(), scipy.linalg.expm_frechet(a, e + 0j)[1], atol=1e-12)

    def loss_np(x, y):
        return (scipy.linalg.expm_frechet(x, y, compute_expm=False) * C).sum()

    for k in range(2):
        grad = func.grad(
            lambda x, k=k: (
                linalg.expm_frechet(*((x, t(e)) if k == 0 else (t(a), x)), compute_expm=False)
                * t(C)
            ).sum()
        )(t((a, e)[k])).numpy()
        fd = fd_grad(lambda m, k=k: loss_np(*((m, e) if k == 0 else (a, m))), (a, e)[k])
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


def test_expm_frechet_bad_input():
    with pytest.raises(ValueError, match=r"expected A to be a square matrix \(A \(2, 3\)"):
        linalg.expm_frechet(t(np.ones((2, 3))), t(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"same shape \(A \(2, 2\), E \(3, 3\)\)"):
        linalg.expm_frechet(t(np.eye(2)), t(np.eye(3)))
    with pytest.raises(ValueError, match="unknown implementation"):
        linalg.expm_frechet(t(np.eye(2)), t(np.eye(2)), method="magic")


# ---------------------------------------------------------------------------------------------
# polar


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
def test_polar_matches_scipy(side, dtype):
    a = (
        RNG.standard_normal((2, 4, 3))
        + (1j * RNG.standard_normal((2, 4, 3)) if dtype[0] == "c" else 0)
    ).astype(dtype)
    u, p = linalg.polar(t(a), side)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for k in range(2):
        expected = scipy.linalg.polar(a[k], side)
        np.testing.assert_allclose(u.numpy()[k], expected[0], atol=tol)
        np.testing.assert_allclose(p.numpy()[k], expected[1], atol=tol)


def test_polar_derivative_at_a_repeated_singular_value_is_exact():
    a = np.eye(3) * 2.0  # P = 2 I: every singular value repeated
    w = RNG.standard_normal((2, 3, 3))

    def loss(x):
        u, p = linalg.polar(x)
        return (u * t(w[0])).sum() + (p * t(w[1])).sum()

    def loss_np(x):
        u, p = scipy.linalg.polar(x)
        return (u * w[0]).sum() + (p * w[1]).sum()

    np.testing.assert_allclose(func.grad(loss)(t(a)).numpy(), fd_grad(loss_np, a), atol=1e-7)


def test_polar_bad_input_and_points_without_a_derivative():
    with pytest.raises(ValueError, match="side must be"):
        linalg.polar(t(np.eye(2)), "up")
    with pytest.raises(np.linalg.LinAlgError, match=r"polar.*\(3,\)"):
        linalg.polar(t(np.ones(3)))
    wide = t(RNG.standard_normal((2, 3)))
    u, p = linalg.polar(wide)  # the value exists
    np.testing.assert_allclose((u @ p).numpy(), wide.numpy(), atol=1e-12)
    with pytest.raises(ValueError, match=r"polar decomposition of a 2x3 matrix does not exist"):
        func.grad(lambda x: linalg.polar(x)[0].sum())(wide)
    with pytest.raises(np.linalg.LinAlgError):
        func.grad(lambda x: linalg.polar(x)[0].sum())(t(np.diag([1.0, 0.0])))


def test_logm_and_powers_are_deterministic_and_leave_numpys_global_generator_alone():
    # SciPy's logm and fractional powers draw from NumPy's global generator (a randomised norm
    # estimate); ours draw nothing: the same result every call, from any thread, and a
    # thread drawing from the global generator meanwhile sees its own stream undisturbed
    a = RNG.standard_normal((6, 6)) + 4 * np.eye(6)
    calls = {
        "logm": lambda: linalg.logm(t(a)).numpy(),
        "power": lambda: linalg.fractional_matrix_power(t(a), 0.37).numpy(),
        "grad": lambda: func.grad(lambda x: linalg.logm(x).sum())(t(a)).numpy(),
    }
    first = {name: call() for name, call in calls.items()}
    np.random.seed(123)
    expected_stream = np.random.random(200)
    np.random.seed(123)
    results, draws, errors = [], [], []

    def compute():
        try:
            for _ in range(3):
                results.append({name: call() for name, call in calls.items()})
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def draw():
        draws.extend(np.random.random() for _ in range(200))

    threads = [threading.Thread(target=compute) for _ in range(3)]
    threads.append(threading.Thread(target=draw))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    np.testing.assert_array_equal(draws, expected_stream)
    for result in results:
        for name, value in result.items():
            np.testing.assert_array_equal(value, first[name], err_msg=name)
