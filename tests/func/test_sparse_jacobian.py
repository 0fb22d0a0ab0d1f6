"""``dualad.func.sparse_jacobian`` and ``sparse_hessian``: structured cases, patterns given by
the user, argnums, dtypes, data-dependent functions and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dualad
from dualad.func import hessian, jacfwd, sparse_hessian, sparse_jacobian
from dualad.tracing import sparsity


def _plan(transformed):
    (plan,) = transformed._plans.values()
    return plan


def _same_as_dense(transformed, f, *args, argnums=0):
    result = transformed(*args)
    dense = jacfwd(f, argnums=argnums)(*args)
    if isinstance(argnums, tuple):
        for block, expect in zip(result, dense):
            np.testing.assert_allclose(block.toarray(), np.asarray(expect).reshape(block.shape))
    else:
        expect = np.asarray(dense).reshape(result.shape)
        np.testing.assert_allclose(result.toarray(), expect, rtol=1e-12, atol=1e-14)
        assert not ((expect != 0) & ~transformed.pattern.toarray()).any()
    return result


def tridiagonal_residual(x):
    return x[2:] - 2 * x[1:-1] + x[:-2] + x[1:-1] ** 3


def test_tridiagonal_residual_three_colours_and_exact_pattern():
    x = np.linspace(-1.0, 1.0, 50)
    jac = sparse_jacobian(tridiagonal_residual)
    assert jac.pattern is None
    J = _same_as_dense(jac, tridiagonal_residual, x)
    assert isinstance(J, sp.csr_matrix) and J.dtype == np.float64
    assert jac.pattern.dtype == bool and jac.pattern.nnz == 3 * 48
    assert _plan(jac).k == 3
    # a later call reuses the pattern and colouring (no second detection)
    plan = _plan(jac)
    np.testing.assert_allclose(
        jac(x * 2).toarray(), np.asarray(jacfwd(tridiagonal_residual)(x * 2))
    )
    assert _plan(jac) is plan


def test_two_dimensional_stencil():
    def laplacian(x):
        u = x.reshape(12, 10)
        inner = u[1:-1, 1:-1]
        return (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * inner + inner**2
        ).reshape(-1)

    jac = sparse_jacobian(laplacian)
    _same_as_dense(jac, laplacian, np.random.default_rng(0).random(120))
    assert _plan(jac).k <= 6
    assert jac.pattern.nnz == 5 * 10 * 8


def test_block_diagonal_and_dense():
    def blocks(x):
        b = x.reshape(6, 3)
        return (dualad.sin(b) * b.sum(1, keepdim=True)).reshape(-1)

    jac = sparse_jacobian(blocks)
    _same_as_dense(jac, blocks, np.random.default_rng(1).random(18))
    assert _plan(jac).k == 3 and jac.pattern.nnz == 6 * 9

    def dense(x):
        return dualad.exp(x) * dualad.exp(x).sum()

    jac = sparse_jacobian(dense)
    _same_as_dense(jac, dense, np.random.default_rng(2).random(7))
    assert _plan(jac).k == 7


def test_reverse_mode_when_rows_need_fewer_colours():
    def f(x):  # one dense row: every column conflicts, but rows need two colours only
        return dualad.cat([x**2, x.sum(0, keepdim=True)])

    jac = sparse_jacobian(f)
    _same_as_dense(jac, f, np.arange(1.0, 9.0))
    assert _plan(jac).mode == "rows" and _plan(jac).k == 2


def test_ops_without_a_rule_are_dense_and_correct():
    def f(x):  # a matrix inverse: every output depends on every input (the dense rule)
        return dualad.linalg.inv(x[:4].reshape(2, 2)).reshape(-1) * x[4:]

    jac = sparse_jacobian(f)
    _same_as_dense(jac, f, np.array([2.0, 1.0, 0.5, 3.0, 1.0, 2.0, 3.0, 4.0]))
    assert jac.pattern.nnz == 4 * 5


def test_dense_rules_past_the_limit_raise(monkeypatch):
    monkeypatch.setattr(sparsity, "DENSE_LIMIT", 50)
    with pytest.raises(
        ValueError, match=r"op 'linalg_lu_factor' has the dense sparsity rule.*sparsity="
    ):
        sparse_jacobian(lambda x: dualad.linalg.inv(x.reshape(4, 4)))(np.eye(4).ravel() + 1)


def test_matrix_products_follow_the_constant_factor_nonzeros():
    banded = np.diag(np.full(6, 2.0)) + np.diag(np.full(5, -1.0), 1)
    for f in (
        lambda x: dualad.tensor(banded) @ x,  # matrix-vector: the band
        lambda x: x @ dualad.tensor(banded),  # vector-matrix
        lambda x: (x.reshape(3, 2) @ dualad.tensor(banded[:2, :3])) ** 2,
        lambda x: x.reshape(2, 3) @ x.reshape(3, 2),  # both vary
        lambda x: x @ x,
    ):
        jac = sparse_jacobian(f)
        dense = _same_as_dense(jac, f, np.arange(1.0, 7.0)).toarray()
        assert jac.pattern.nnz == np.count_nonzero(dense)
    # a stack of matrices: the dense rule, still correct
    f = lambda x: x.reshape(2, 1, 3) @ dualad.tensor(np.ones((2, 3, 1)))
    _same_as_dense(sparse_jacobian(f), f, np.arange(1.0, 7.0))


def test_in_place_writes():
    def f(x):
        y = x * 1.0
        y[1:3] = x[3:5] ** 2
        return y

    _same_as_dense(sparse_jacobian(f), f, np.arange(1.0, 7.0))


def test_argnums_tuple_and_other_arguments():
    def f(x, c, y):
        return x[1:] * y[:-1] * c + y[1:]

    x, y = np.arange(1.0, 6.0), np.arange(2.0, 7.0)
    jac = sparse_jacobian(f, argnums=(0, 2))
    blocks = _same_as_dense(jac, f, x, 3.0, y, argnums=(0, 2))
    assert [b.shape for b in blocks] == [(4, 5), (4, 5)]
    assert jac.pattern.shape == (4, 10)


def test_float32_keeps_its_dtype():
    x = np.linspace(0.1, 1.0, 20, dtype=np.float32)
    J = sparse_jacobian(tridiagonal_residual)(x)
    assert J.dtype == np.float32
    expect = np.asarray(jacfwd(tridiagonal_residual)(x.astype(np.float64)))
    np.testing.assert_allclose(J.toarray(), expect, rtol=1e-5, atol=1e-6)


def test_tensor_inputs_give_the_same_matrix():
    x = np.linspace(0.1, 1.0, 9)
    a = sparse_jacobian(tridiagonal_residual)(x).toarray()
    b = sparse_jacobian(tridiagonal_residual)(dualad.tensor(x)).toarray()
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# patterns given by the user


def test_user_pattern():
    n = 8
    pattern = sp.diags([1, 1, 1], [0, 1, 2], shape=(n - 2, n), dtype=bool)
    jac = sparse_jacobian(tridiagonal_residual, sparsity=pattern)
    assert jac.pattern.shape == (n - 2, n)
    _same_as_dense(jac, tridiagonal_residual, np.linspace(0, 1, n))
    # a dense NumPy pattern is accepted too
    jac = sparse_jacobian(tridiagonal_residual, sparsity=pattern.toarray())
    _same_as_dense(jac, tridiagonal_residual, np.linspace(0, 1, n))


def test_user_pattern_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"sparsity has shape \(6, 9\), expected"):
        sparse_jacobian(tridiagonal_residual, sparsity=sp.eye(6, 9, dtype=bool))(np.ones(8))
    with pytest.raises(ValueError, match=r"sparsity has 5 rows but the function's output has 6"):
        sparse_jacobian(tridiagonal_residual, sparsity=sp.eye(5, 8, dtype=bool))(np.ones(8))
    with pytest.raises(ValueError, match=r"sparsity has shape \(3, 3\), expected \(4, 4\)"):
        sparse_hessian(lambda x: (x**3).sum(), sparsity=sp.eye(3, dtype=bool))(np.ones(4))


def test_bad_sparsity_arguments():
    with pytest.raises(ValueError, match=r"'auto' or a scipy\.sparse pattern"):
        sparse_jacobian(tridiagonal_residual, sparsity="dense")
    with pytest.raises(TypeError, match="got list"):
        sparse_jacobian(tridiagonal_residual, sparsity=[[1, 0]])
    with pytest.raises(TypeError, match="expected a function"):
        sparse_jacobian(3)


# ---------------------------------------------------------------------------------------------
# bad inputs and outputs


def test_non_array_outputs():
    with pytest.raises(TypeError, match="must return one tensor, got tuple"):
        sparse_jacobian(lambda x: (x, x))(np.ones(3))
    with pytest.raises(TypeError, match="must return one tensor, got float"):
        sparse_jacobian(lambda x: 1.0)(np.ones(3))
    for bad in (None, {"a": 1}):
        with pytest.raises(TypeError, match="must return one tensor, got"):
            sparse_hessian(lambda x, bad=bad: bad)(np.ones(3))
    with pytest.raises(TypeError, match=r"got ndarray \(a NumPy array is a constant"):
        sparse_jacobian(lambda x: np.ones(3))(np.ones(3))
    # with a pattern given (no detection), the evaluation says the same
    pattern = sp.eye(3, dtype=bool)
    with pytest.raises(TypeError, match="must return one tensor, got list"):
        sparse_jacobian(lambda x: [x], sparsity=pattern)(np.ones(3))
    with pytest.raises(TypeError, match="must return one tensor, got tuple"):
        sparse_jacobian(lambda x: (x,), sparsity=pattern.tocsc())(np.ones(3))
    # outputs without derivatives (booleans, integers): a zero Jacobian, as jacfwd gives
    assert sparse_jacobian(lambda x: x > 0)(np.ones(3)).nnz == 0


def test_inputs_that_are_not_real_floating():
    with pytest.raises(TypeError, match="dtype int64"):
        sparse_jacobian(lambda x: x * 2)(np.arange(3))
    with pytest.raises(TypeError, match="dtype complex128"):
        sparse_jacobian(lambda x: x * 2)(np.ones(3, dtype=complex))
    with pytest.raises(TypeError, match="pytree of them is not supported"):
        sparse_jacobian(lambda x: x[0] * 2)([np.ones(3)])


def test_closed_over_tensor_that_requires_grad():
    w = dualad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"could not be traced.*requires grad.*sparsity="):
        sparse_jacobian(lambda x: x * w)(np.ones(3))


# ---------------------------------------------------------------------------------------------
# data-dependent sparsity


def test_branch_on_values_is_detected_again():
    def f(x):
        if x.sum() > 0:
            return x**2
        return x.flip(0) * x[0]

    jac = sparse_jacobian(f)
    _same_as_dense(jac, f, np.arange(1.0, 5.0))
    diagonal = jac.pattern
    _same_as_dense(jac, f, -np.arange(1.0, 5.0))  # the other branch: a new pattern
    assert (jac.pattern != diagonal).nnz > 0
    _same_as_dense(jac, f, np.arange(2.0, 6.0))
    assert (jac.pattern != diagonal).nnz == 0


def test_guards_checked_without_writing_the_callers_array():
    def f(x):
        x.mul_(1.0)  # an in-place op on the input, and a branch on its values
        return x**2 if x[0] > 0 else x.flip(0) ** 2

    x = np.arange(1.0, 5.0)
    jac = sparse_jacobian(f)
    _same_as_dense(jac, f, x)
    again = np.arange(1.0, 5.0)
    jac(again)
    np.testing.assert_array_equal(again, np.arange(1.0, 5.0))
    _same_as_dense(jac, f, -x)


def test_index_computed_from_the_inputs_is_dense():
    def f(x):
        return x[dualad.argmax(x)] * x

    jac = sparse_jacobian(f)
    _same_as_dense(jac, f, np.array([1.0, 5.0, 2.0]))
    _same_as_dense(jac, f, np.array([7.0, 5.0, 2.0]))  # another index: the pattern holds it


# ---------------------------------------------------------------------------------------------
# Hessians


def energy(x):
    u = x.reshape(9, 8)
    return ((u[1:] - u[:-1]) ** 2).sum() + ((u[:, 1:] - u[:, :-1]) ** 2).sum() + (u**4).sum() / 4


def test_sparse_hessian_of_a_laplacian_energy():
    x = np.random.default_rng(4).random(72)
    h = sparse_hessian(energy)
    H = h(x)
    expect = np.asarray(hessian(energy)(x))
    np.testing.assert_allclose(H.toarray(), expect, rtol=1e-12, atol=1e-12)
    assert not ((expect != 0) & ~h.pattern.toarray()).any()
    assert h.pattern.nnz == 72 + 2 * (8 * 8 + 9 * 7)  # the 5-point stencil exactly
    assert _plan(h).mode == "symmetric" and _plan(h).k <= 6


def test_sparse_hessian_star_colouring_beats_distance_two():
    # an arrow-head Hessian: distance-2 colouring needs n colours, a star colouring 2
    def f(x):
        return (x[0] * x[1:] ** 2).sum()

    h = sparse_hessian(f)
    x = np.arange(1.0, 8.0)
    np.testing.assert_allclose(h(x).toarray(), np.asarray(hessian(f)(x)))
    assert _plan(h).k == 2


def test_sparse_hessian_argnums_and_errors():
    def f(x, y):
        return (x * y**2).sum() + (x**3).sum()

    x, y = np.arange(1.0, 4.0), np.arange(2.0, 5.0)
    blocks = sparse_hessian(f, argnums=(0, 1))(x, y)
    dense = hessian(f, argnums=(0, 1))(x, y)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(blocks[i][j].toarray(), np.asarray(dense[i][j]))
    with pytest.raises(RuntimeError, match="must return a scalar, got an output of shape"):
        sparse_hessian(lambda x: x**2)(np.ones(3))


def test_sparse_hessian_of_an_affine_function_is_empty():
    H = sparse_hessian(lambda x: (3 * x).sum())(np.ones(4))
    assert H.shape == (4, 4) and H.nnz == 0


# ---------------------------------------------------------------------------------------------
# the jitted compressed evaluation


def test_later_calls_replay_the_jitted_evaluation():
    jac = sparse_jacobian(tridiagonal_residual)
    x = np.linspace(-1.0, 1.0, 30)
    for scale in (1.0, 2.0, -0.5):
        _same_as_dense(jac, tridiagonal_residual, x * scale)
    info = _plan(jac).evaluate.cache_info()
    assert (info.misses, info.hits, info.eager_calls) == (1, 2, 0)


def test_in_place_ops_on_the_argument_leave_the_seeds_alone():
    def f(x):
        x.mul_(2.0)  # writes into the dual's tangent too: a view of the seed rows
        return x[1:] * x[:-1]

    x = np.arange(1.0, 7.0)
    jac = sparse_jacobian(f)
    for _ in range(3):  # the first call (traced), then replays
        _same_as_dense(jac, f, x)
    np.testing.assert_array_equal(x, np.arange(1.0, 7.0))
    # eagerly (an argument that dualad.jit does not take): the same
    jac = sparse_jacobian(lambda x, fn: fn(x))
    for _ in range(2):
        J = jac(x, f)
        np.testing.assert_allclose(J.toarray(), np.asarray(jacfwd(f)(x)))


def test_other_arguments_change_between_calls():
    def f(x, c, w):
        return x[1:] * x[:-1] * c + w[1:] * x[1:]

    jac = sparse_jacobian(f)
    x = np.arange(1.0, 6.0)
    for c, w in ((2.0, np.ones(5)), (-3.0, np.arange(5.0)), (2.0, np.full(5, 7.0))):
        J = jac(x, c, w)
        np.testing.assert_allclose(J.toarray(), np.asarray(jacfwd(f)(x, c, w)))


def test_arguments_that_require_grad_and_calls_under_transforms():
    x = dualad.tensor(np.arange(1.0, 6.0), requires_grad=True)
    w = dualad.tensor(np.arange(2.0, 7.0), requires_grad=True)
    jac = sparse_jacobian(lambda x, w: x**2 * w)
    expect = np.diag(2 * np.arange(1.0, 6.0) * np.arange(2.0, 7.0))
    for _ in range(2):
        np.testing.assert_allclose(jac(x, w).toarray(), expect)
    # inside another transform the evaluation runs eagerly: the same matrix
    seen = []
    dualad.func.grad(lambda v: seen.append(jac(x.detach(), w.detach())) or (v**2).sum())(x)
    np.testing.assert_allclose(seen[0].toarray(), expect)


def test_indices_computed_from_the_inputs_are_exact_guarded_then_conservative():
    def f(x):
        return dualad.sort(x, 0).values * 2.0

    jac = sparse_jacobian(f)
    rng = np.random.default_rng(5)
    first = rng.permutation(6).astype(float)
    _same_as_dense(jac, f, first)
    assert jac.pattern.nnz == 6  # a permutation: exact at the traced order
    assert _plan(jac).detection is not None  # guarded: the order is checked on each call
    _same_as_dense(jac, f, first * 3.0)  # the same order: no new detection
    assert jac._detections == {(((6,), np.dtype("float64"), np.ndarray),): 1}
    _same_as_dense(jac, f, first[::-1].copy())  # another order: detected again, exact
    assert jac.pattern.nnz == 6
    _same_as_dense(jac, f, rng.permutation(6).astype(float))  # a third: for any order
    assert jac.pattern.nnz == 36 and _plan(jac).detection is None
    _same_as_dense(jac, f, rng.permutation(6).astype(float))  # (no guard left to fail)
    assert sum(jac._detections.values()) == 3
