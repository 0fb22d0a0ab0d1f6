"""scipy.linalg's matrix equations in dualad.linalg: values against SciPy (real, complex, float32,
batches), derivatives in every argument against finite differences at first and second order,
singular equations and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from _linalg_fd import fd_grad, fd_hvp

import dualad
from dualad import func, linalg

RNG = np.random.default_rng(77)


def t(a):
    return dualad.tensor(a)


def _matrix(n, dtype="float64", shift=0.0, m=None):
    a = RNG.standard_normal((n, m or n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal((n, m or n))
    return (0.4 * a + shift * np.eye(n, m or n)).astype(dtype)


# (name, scipy function, coefficient makers)
CASES = {
    "sylvester": (
        linalg.solve_sylvester,
        scipy.linalg.solve_sylvester,
        lambda d: (_matrix(3, d, 2.0), _matrix(2, d, 1.0), _matrix(3, d, m=2)),
    ),
    "continuous": (
        linalg.solve_continuous_lyapunov,
        scipy.linalg.solve_continuous_lyapunov,
        lambda d: (_matrix(3, d, -1.5), _matrix(3, d)),
    ),
    "discrete": (
        linalg.solve_discrete_lyapunov,
        scipy.linalg.solve_discrete_lyapunov,
        lambda d: (_matrix(3, d, 0.3), _matrix(3, d)),
    ),
}


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
@pytest.mark.parametrize("case", list(CASES))
def test_values_match_scipy(case, dtype):
    fn, ref, make = CASES[case]
    args = make(dtype)
    out = fn(*map(t, args))
    assert out.dtype == np.dtype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(out.numpy(), ref(*args), rtol=tol, atol=tol)


def test_discrete_lyapunov_of_a_large_matrix_uses_scipy_bilinear_method():
    a, q = _matrix(12, shift=0.2), _matrix(12)
    np.testing.assert_allclose(
        linalg.solve_discrete_lyapunov(t(a), t(q)).numpy(),
        scipy.linalg.solve_discrete_lyapunov(a, q),
        atol=1e-10,
    )


@pytest.mark.parametrize("case", list(CASES))
def test_batch_dims_broadcast(case):
    fn, ref, make = CASES[case]
    first = make("float64")
    stacked = [np.stack([x, x + 0.05 * RNG.standard_normal(x.shape)]) for x in first]
    args = [stacked[0][:, None], *first[1:-1], stacked[-1]]  # (2,1,..), (..), (2,..)
    out = fn(*map(t, args)).numpy()
    assert out.shape == (2, 2, *first[-1].shape)
    for i in range(2):
        for j in range(2):
            coefficients = [stacked[0][i], *list(first[1:-1]), stacked[-1][j]]
            np.testing.assert_allclose(out[i, j], ref(*coefficients), atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("case", list(CASES))
def test_derivatives_in_every_argument_match_finite_differences(case, dtype):
    fn, ref, make = CASES[case]
    args = make(dtype)
    weights = RNG.standard_normal(args[-1].shape)
    for k in range(len(args)):

        def loss(x, k=k):
            inputs = [t(a) for a in args]
            inputs[k] = x
            return dualad.real((fn(*inputs) * t(weights)).sum())

        def loss_np(x, k=k):
            inputs = list(args)
            inputs[k] = x
            return np.real((ref(*inputs) * weights).sum())

        grad = func.grad(loss)(t(args[k])).numpy()
        np.testing.assert_allclose(grad, fd_grad(loss_np, args[k]), rtol=1e-6, atol=1e-7)
        if dtype == "float64":
            direction = RNG.standard_normal(args[k].shape)
            second = func.jvp(func.grad(loss), (t(args[k]),), (t(direction),))[1].numpy()
            np.testing.assert_allclose(
                second, fd_hvp(loss_np, args[k], direction), rtol=1e-4, atol=1e-5
            )


def test_jvp_in_all_arguments_at_once():
    a, b, q = CASES["sylvester"][2]("float64")
    ta, tb, tq = (RNG.standard_normal(x.shape) for x in (a, b, q))
    _, tangent = func.jvp(linalg.solve_sylvester, (t(a), t(b), t(q)), (t(ta), t(tb), t(tq)))
    h = 1e-6
    fd = (
        scipy.linalg.solve_sylvester(a + h * ta, b + h * tb, q + h * tq)
        - scipy.linalg.solve_sylvester(a - h * ta, b - h * tb, q - h * tq)
    ) / (2 * h)
    np.testing.assert_allclose(tangent.numpy(), fd, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# singular equations and bad input


def test_singular_equations_raise_linalgerror_naming_the_op_and_shapes():
    eye = t(np.eye(2))
    with pytest.raises(np.linalg.LinAlgError, match=r"solve_sylvester \(a \(2, 2\).*singular"):
        linalg.solve_sylvester(eye, -eye, eye)  # SciPy returns 4.5e15 here
    with pytest.raises(np.linalg.LinAlgError, match=r"solve_continuous_lyapunov.*singular"):
        linalg.solve_continuous_lyapunov(t(np.array([[0.0, 1.0], [-1.0, 0.0]])), eye)
    with pytest.raises(np.linalg.LinAlgError, match=r"solve_discrete_lyapunov.*singular"):
        linalg.solve_discrete_lyapunov(eye, eye)


def test_bad_shapes_raise_valueerror_naming_the_op_and_shapes():
    a, b, q = (t(x) for x in CASES["sylvester"][2]("float64"))
    with pytest.raises(ValueError, match=r"solve_sylvester: a must be a square.*a \(3, 2\)"):
        linalg.solve_sylvester(t(np.ones((3, 2))), b, q)
    with pytest.raises(ValueError, match=r"solve_sylvester: q must be a 3x2 matrix.*q \(2, 3\)"):
        linalg.solve_sylvester(a, b, q.mT)
    with pytest.raises(ValueError, match=r"batch dims do not broadcast"):
        linalg.solve_sylvester(t(np.stack([a.numpy()] * 2)), b, t(np.stack([q.numpy()] * 3)))
    with pytest.raises(ValueError, match=r"solve_continuous_lyapunov: q must be a 3x3"):
        linalg.solve_continuous_lyapunov(a, t(np.ones(3)))
    with pytest.raises(ValueError, match=r"solve_discrete_lyapunov: a must be a square"):
        linalg.solve_discrete_lyapunov(t(np.ones(3)), t(np.ones((3, 3))))
    with pytest.raises(TypeError, match="float16"):
        linalg.solve_continuous_lyapunov(*[t(np.eye(2, dtype=np.float16))] * 2)


def test_integer_inputs_promote_and_inputs_are_not_mutated():
    a = np.array([[-2, 0], [1, -3]])
    q = np.array([[1, 2], [3, 4]])
    out = linalg.solve_continuous_lyapunov(t(a), t(q))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), scipy.linalg.solve_continuous_lyapunov(a, q))
    np.testing.assert_array_equal(a, [[-2, 0], [1, -3]])


# ---------------------------------------------------------------------------------------------
# the continuous algebraic Riccati equation


def _riccati(dtype):
    a, b = _matrix(3, dtype), _matrix(3, dtype, m=2)
    q = a @ np.conj(a.T) + np.eye(3)
    r = np.eye(2, dtype=dtype) * 2
    return a, b, q.astype(dtype), r


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32"])
def test_riccati_matches_scipy(dtype):
    args = _riccati(dtype)
    out = linalg.solve_continuous_are(*map(t, args))
    assert out.dtype == np.dtype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(out.numpy(), scipy.linalg.solve_continuous_are(*args), atol=tol)


def test_riccati_without_a_stabilising_solution_and_bad_input_raise():
    zero, one = t(np.zeros((1, 1))), t(np.ones((1, 1)))
    with pytest.raises(np.linalg.LinAlgError, match=r"solve_continuous_are \(a \(1, 1\)"):
        linalg.solve_continuous_are(zero, zero, one, one)  # uncontrollable, marginal mode
    a, b, q, r = (t(x) for x in _riccati("float64"))
    with pytest.raises(ValueError, match=r"b must be n x m \(a \(3, 3\), b \(2, 3\)"):
        linalg.solve_continuous_are(a, b.mT, q, r)
    with pytest.raises(ValueError, match=r"r must be 2x2"):
        linalg.solve_continuous_are(a, b, q, q)
    with pytest.raises(ValueError, match=r"solve_continuous_are.*symmetric"):
        linalg.solve_continuous_are(a, b, q + t(np.triu(np.ones((3, 3)))), r)
