"""``sparse_jacobian``/``sparse_hessian`` on CuPy arrays: ``cupyx.scipy.sparse`` CSR results
equal to dense ``jacfwd``/``hessian`` (skipped without CuPy and a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad.func import hessian, jacfwd, sparse_hessian, sparse_jacobian

cupy = pytest.importorskip("cupy")
cusp = pytest.importorskip("cupyx.scipy.sparse")


def _host(a):
    return cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else np.asarray(a)


def _same(matrix, dense):
    assert isinstance(matrix, cusp.csr_matrix), type(matrix)
    np.testing.assert_allclose(_host(matrix.toarray()), _host(dense), rtol=1e-12, atol=1e-14)


def test_columns_rows_and_hessians():
    tridiagonal = lambda v: v[2:] - 2 * v[1:-1] + v[:-2] + v[1:-1] ** 3
    x = cupy.asarray(np.linspace(-1.0, 1.0, 50))
    jac = sparse_jacobian(tridiagonal)
    for scale in (1.0, 2.0):  # the first call, then a replay of the jitted evaluation
        _same(jac(x * scale), jacfwd(tridiagonal)(x * scale))
    one_dense_row = lambda v: dualad.cat([v**2, v.sum(0, keepdim=True)])
    x = cupy.arange(1.0, 9.0)
    _same(sparse_jacobian(one_dense_row)(x), jacfwd(one_dense_row)(x))
    energy = lambda v: ((v[1:] - v[:-1]) ** 2).sum() + (v**4).sum()
    x = cupy.asarray(np.linspace(-1.0, 1.0, 30))
    _same(sparse_hessian(energy)(x), hessian(energy)(x))


def test_argnums_constants_float32_and_traced_indices():
    f = lambda a, b: a[1:] * b[:-1]
    a, b = cupy.arange(1.0, 6.0), cupy.arange(2.0, 7.0)
    for block, dense in zip(sparse_jacobian(f, argnums=(0, 1))(a, b), jacfwd(f, (0, 1))(a, b)):
        _same(block, dense)
    constant = sparse_jacobian(lambda v: (v > 0).to(dtype="float64"))(cupy.ones(4))
    assert isinstance(constant, cusp.csr_matrix) and constant.nnz == 0
    J = sparse_jacobian(lambda v: v[1:] * v[:-1])(cupy.linspace(0.1, 1, 20, dtype=cupy.float32))
    assert J.dtype == np.float32
    by_rows = lambda v: dualad.sort(v.reshape(3, 4), 1).values.reshape(-1) * 2
    jac = sparse_jacobian(by_rows)
    rng = np.random.default_rng(0)
    for _ in range(4):  # exact at the traced order, detected again, then for any order
        x = cupy.asarray(rng.random(12))
        _same(jac(x), jacfwd(by_rows)(x))
