"""Bad input to the solvers (issue 14, item 9): NumPy's exception classes, messages naming the
op and the shapes, never NaN returned where NumPy raises, inputs never mutated.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import linalg

LinAlgError = np.linalg.LinAlgError
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def _t(a, requires_grad=False):
    return dualad.tensor(np.asarray(a), requires_grad=requires_grad)


@pytest.mark.parametrize(
    "name, call",
    [
        ("solve", lambda a: linalg.solve(a, _t(np.ones(2)))),
        ("inv", linalg.inv),
        ("solve", lambda a: np.linalg.solve(a, np.ones(2))),
        ("inv", np.linalg.inv),
        ("inv", lambda a: linalg.matrix_power(a, -1)),
        ("solve", lambda a: linalg.tensorsolve(a, _t(np.ones(2)))),
    ],
)
def test_singular_matrices_raise_linalg_error_naming_op_and_shape(name, call):
    with pytest.raises(LinAlgError, match=rf"{name}: Singular matrix.*\(2, 2\)"):
        call(_t(SINGULAR, requires_grad=True))
    stack = np.stack([np.eye(2), SINGULAR])
    with pytest.raises(LinAlgError, match=r"\(2, 2, 2\) \(matrix \(1,\)\)"):
        linalg.inv(_t(stack))


def test_triangular_solve_with_a_zero_on_the_diagonal_raises():
    with pytest.raises(LinAlgError, match="solve_triangular: Singular matrix"):
        linalg.solve_triangular(_t([[1.0, 2.0], [0.0, 0.0]]), _t(np.ones((2, 1))), upper=True)


def test_cholesky_of_a_matrix_that_is_not_positive_definite():
    for a in (np.array([[1.0, 2.0], [2.0, 1.0]]), -np.eye(3)):
        with pytest.raises(LinAlgError, match=r"cholesky: Matrix is not positive definite.*\("):
            linalg.cholesky(_t(a))
        with pytest.raises(LinAlgError):
            np.linalg.cholesky(_t(a))


@pytest.mark.parametrize(
    "call",
    [
        linalg.inv,
        linalg.det,
        linalg.slogdet,
        linalg.cholesky,
        lambda a: linalg.solve(a, _t(np.ones(2))),
        lambda a: linalg.matrix_power(a, 2),
    ],
)
def test_non_square_inputs_raise_linalg_error_with_the_shape(call):
    with pytest.raises(LinAlgError, match=r"square.*\(2, 3\)|\(2, 3\).*square"):
        call(_t(np.ones((2, 3))))
    with pytest.raises(LinAlgError, match=r"at least two-dimensional|must be square"):
        call(_t(np.ones(3)))


def test_mismatched_shapes_raise_value_errors_naming_the_shapes():
    a = _t(np.eye(3) + np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match=r"solve.*\(2, 3, 3\).*\(4, 3, 1\)"):
        linalg.solve(a, _t(np.ones((4, 3, 1))))
    with pytest.raises(ValueError, match=r"solve.*\(2, 3, 3\).*\(2, 2, 1\)"):
        linalg.solve(a, _t(np.ones((2, 2, 1))))
    with pytest.raises(ValueError, match=r"solve_triangular.*\(3, 3\).*\(2, 1\)"):
        linalg.solve_triangular(_t(np.eye(3)), _t(np.ones((2, 1))), upper=True)
    with pytest.raises(LinAlgError, match=r"lstsq.*\(3, 2\).*\(4, 1\)"):
        linalg.lstsq(_t(np.ones((3, 2))), _t(np.ones((4, 1))))
    with pytest.raises(LinAlgError, match=r"tensorsolve.*\(2, 3\)"):
        linalg.tensorsolve(_t(np.ones((2, 3))), _t(np.ones(2)))
    with pytest.raises(LinAlgError, match=r"tensorinv.*\(2, 3\)"):
        linalg.tensorinv(_t(np.ones((2, 3))), ind=1)


def test_dtypes_without_a_lapack_routine_and_bad_arguments():
    with pytest.raises(TypeError, match="inv: array type float16"):
        linalg.inv(_t(np.eye(2, dtype=np.float16)))
    with pytest.raises(TypeError, match="exponent must be an integer"):
        linalg.matrix_power(_t(np.eye(2)), 1.5)
    with pytest.raises(TypeError, match="expected a tensor"):
        linalg.inv(np.eye(2))
    # integers promote as NumPy's (no error): float64
    assert linalg.inv(_t(np.array([[2, 0], [0, 4]]))).dtype == np.float64


def test_nothing_is_mutated_when_an_error_is_raised():
    a = SINGULAR.copy()
    t = _t(a)
    with pytest.raises(LinAlgError):
        linalg.solve(t, _t(np.ones(2)))
    np.testing.assert_array_equal(t.numpy(), SINGULAR)
    np.testing.assert_array_equal(a, SINGULAR)
