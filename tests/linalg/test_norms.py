"""dualad.linalg's norms (vector_norm, matrix_norm, norm) and dualad.numpy.linalg.norm's matrix
norms through singular values: values against NumPy, gradients and forward mode against finite
differences, and the singular points (0, repeated singular values, rank deficiency)."""

from __future__ import annotations

import numpy as np
import pytest
from _linalg_fd import fd_grad

import dualad
import dualad.numpy as dnp
from dualad import func
from dualad.linalg import matrix_norm, norm, vector_norm

RNG = np.random.default_rng(77)
INF = float("inf")


@pytest.mark.parametrize("ord", [2, 1, INF, -INF, 0, 3, 0.5])
@pytest.mark.parametrize("complex_", [False, True])
def test_vector_norm_matches_numpy(ord, complex_):
    x = RNG.standard_normal((3, 4))
    if complex_:
        x = x + 1j * RNG.standard_normal((3, 4))
    got = vector_norm(dualad.tensor(x), ord=ord, dim=1)
    np.testing.assert_allclose(got.numpy(), np.linalg.norm(x, ord=ord, axis=1), rtol=1e-12)
    got = vector_norm(dualad.tensor(x), ord=ord, axis=(0, 1), keepdims=True)
    expected = np.linalg.vector_norm(x, ord=ord, axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_vector_norm_at_zero_has_gradient_zero():
    # PyTorch's subgradient (DESIGN.md 8): not NaN
    x = dualad.zeros(3, requires_grad=True)
    (g,) = dualad.autograd.grad(vector_norm(x), x)
    np.testing.assert_array_equal(g.numpy(), np.zeros(3))
    _, tangent = func.jvp(vector_norm, (dualad.zeros(3),), (dualad.ones(3),))
    assert tangent.item() == 0.0
    a = dualad.zeros(2, 2, requires_grad=True)
    (g,) = dualad.autograd.grad(matrix_norm(a), a)
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 2)))


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, INF, -INF]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("complex_", [False, True])
def test_matrix_norm_values_and_gradients(ord, complex_):
    a = RNG.standard_normal((4, 3))
    if complex_:
        a = a + 1j * RNG.standard_normal((4, 3))
    got = matrix_norm(dualad.tensor(a), ord=ord)
    np.testing.assert_allclose(got.numpy(), np.linalg.norm(a, ord=ord), rtol=1e-12)
    g = func.grad(lambda x: matrix_norm(x, ord=ord))(dualad.tensor(a)).numpy()
    np.testing.assert_allclose(g, fd_grad(lambda b: np.linalg.norm(b, ord=ord), a), atol=1e-7)
    t = RNG.standard_normal(a.shape)
    _, tangent = func.jvp(
        lambda x: matrix_norm(x, ord=ord), (dualad.tensor(a),), (dualad.tensor(t),)
    )
    h = 1e-6
    expected = (np.linalg.norm(a + h * t, ord=ord) - np.linalg.norm(a - h * t, ord=ord)) / (2 * h)
    assert abs(tangent.item() - expected) < 1e-7


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_dims_and_keepdim(ord):
    a = RNG.standard_normal((2, 3, 4))
    got = matrix_norm(dualad.tensor(a), ord=ord, dim=(0, 2), keepdim=True)
    expected = np.linalg.norm(a, ord=ord, axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    batched = matrix_norm(dualad.tensor(a), ord=ord)
    np.testing.assert_allclose(batched.numpy(), np.linalg.matrix_norm(a, ord=ord), rtol=1e-12)


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_numpy_norm_of_matrices_through_singular_values(ord):
    a = RNG.standard_normal((3, 3, 2))
    for axis in ((0, 1), (2, 0)):
        got = dnp.linalg.norm(dualad.tensor(a), ord=ord, axis=axis, keepdims=True)
        expected = np.linalg.norm(a, ord=ord, axis=axis, keepdims=True)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    m = a[..., 0]
    # NumPy's own function answers on a tensor (``__array_function__``), with the derivative
    x = dualad.tensor(m, requires_grad=True)
    value = np.linalg.norm(x, ord)
    (g,) = dualad.autograd.grad(value, x)
    np.testing.assert_allclose(g.numpy(), fd_grad(lambda b: np.linalg.norm(b, ord), m), atol=1e-7)
    np.testing.assert_allclose(
        dnp.linalg.matrix_norm(dualad.tensor(a), ord=ord).numpy(),
        np.linalg.matrix_norm(a, ord=ord),
        rtol=1e-12,
    )


def test_torch_norm_spellings():
    a = RNG.standard_normal((3, 4))
    x = dualad.tensor(a)
    np.testing.assert_allclose(norm(x).numpy(), np.linalg.norm(a))
    np.testing.assert_allclose(norm(x, ord=2).numpy(), np.linalg.norm(a, 2))
    np.testing.assert_allclose(norm(x, ord=3, dim=1).numpy(), np.linalg.norm(a, 3, axis=1))
    np.testing.assert_allclose(norm(x, "nuc", dim=(0, 1)).numpy(), np.linalg.norm(a, "nuc"))
    np.testing.assert_allclose(dualad.norm(x, p="nuc").numpy(), np.linalg.norm(a, "nuc"))
    b = RNG.standard_normal((2, 3, 4))
    np.testing.assert_allclose(norm(dualad.tensor(b)).numpy(), np.linalg.norm(b.ravel()))


def test_norm_errors():
    with pytest.raises(RuntimeError, match="1D or 2D"):
        norm(dualad.ones(2, 2, 2), ord=2)
    with pytest.raises(RuntimeError, match="Order"):
        matrix_norm(dualad.ones(2, 2), ord=3)
    with pytest.raises(RuntimeError, match="at least 2"):
        matrix_norm(dualad.ones(2))
    with pytest.raises(RuntimeError, match="vectors"):
        norm(dualad.ones(2), ord="fro", dim=0)
    with pytest.raises(RuntimeError, match="floating point"):
        matrix_norm(dualad.ones(2, 2, dtype=dualad.int64))


def test_nuclear_and_frobenius_norms_at_repeated_singular_values():
    # A = I: every singular value repeated; nuc = trace is smooth there (gradient I, second
    # derivative of the polar factor), fro likewise
    a = np.eye(3)
    g = func.grad(lambda x: matrix_norm(x, "nuc"))(dualad.tensor(a)).numpy()
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)
    t = RNG.standard_normal((3, 3))
    _, hvp = func.jvp(
        func.grad(lambda x: matrix_norm(x, "nuc")), (dualad.tensor(a),), (dualad.tensor(t),)
    )
    h = 1e-4
    expected = (
        fd_grad(lambda b: np.linalg.norm(b, "nuc"), a + h * t, 1e-5)
        - fd_grad(lambda b: np.linalg.norm(b, "nuc"), a - h * t, 1e-5)
    ) / (2 * h)
    np.testing.assert_allclose(hvp.numpy(), expected, atol=1e-5)
