"""The CuPy stand-in behaves like CuPy where host/device mistakes show, and dualad's transforms
(Jacobians, Hessians, sparse Jacobians, jit) run on "cuda" under it with no hidden transfer.

Under a real CuPy (DUALAD_TEST_DEVICE=cuda on a GPU) the stand-in's own tests are skipped and
the dualad ones run on the GPU (transfers are then not counted).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import dualad
from dualad.func import hessian, jacfwd, jacrev, sparse_hessian, sparse_jacobian
from dualad.testing import fake_cupy
from dualad.testing._numeric import as_numpy
from dualad.testing.device import CUDA_EXPECTED_FAILURES


@pytest.fixture
def cp(cuda_standin):
    if not cuda_standin:
        pytest.skip("the stand-in's own behaviour (the run uses a real CuPy)")
    return fake_cupy.cupy


def _no_transfers(cuda_standin):
    return fake_cupy.no_transfers() if cuda_standin else contextlib.nullcontext()


# ---------------------------------------------------------------------------------------------
# the stand-in is CuPy-like


def test_implicit_conversion_to_numpy_is_refused(cp):
    x = cp.arange(3.0)
    with pytest.raises(TypeError, match=r"Implicit conversion to a NumPy array is not allowed"):
        np.asarray(x)
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.array([x, x])


def test_numpy_arrays_do_not_mix_with_device_arrays(cp):
    x = cp.ones(3)
    host = np.ones(3)
    for mixed in (lambda: x + host, lambda: host * x, lambda: cp.maximum(x, host)):
        with pytest.raises(TypeError, match="Unsupported type"):
            mixed()
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.concatenate([x, host])


def test_numpy_functions_dispatch_to_cupy_like_cupy(cp):
    x = cp.arange(4.0)
    assert type(np.exp(x)) is cp.ndarray  # __array_ufunc__
    assert type(np.sum(x)) is cp.ndarray  # __array_function__: a 0-d array, as CuPy's
    assert np.sum(x).shape == ()
    with pytest.raises(TypeError):  # NumPy's function that CuPy lacks: no implementation
        np.spacing(x)


def test_scalars_come_out_and_transfers_are_logged(cp):
    x = cp.asarray(np.array([1.5, 2.5]))
    assert fake_cupy.TRANSFERS[-1][:2] == ("to_device", (2,))
    assert float(x.sum()) == 4.0 and x[0].item() == 1.5 and bool(x[1] > 2)
    assert fake_cupy.TRANSFERS[-1][0] == "scalar"
    assert isinstance(x.get(), np.ndarray) and fake_cupy.TRANSFERS[-1][:2] == ("to_host", (2,))
    assert isinstance(cp.asnumpy(x), np.ndarray)
    with pytest.raises(AssertionError, match="1 host/device transfer"), fake_cupy.no_transfers():
        x.get()


def test_only_cupys_own_names_exist(cp):
    import cupyx.scipy.linalg
    import cupyx.scipy.special

    assert hasattr(cupyx.scipy.special, "erf") and not hasattr(cupyx.scipy.special, "jv")
    assert not hasattr(cp, "spacing") and hasattr(cp, "nextafter")
    assert hasattr(cp.linalg, "eigh") and not hasattr(cp.linalg, "schur")
    with pytest.raises(ValueError, match="expected a matrix"):  # one matrix at a time
        cupyx.scipy.linalg.lu_factor(cp.ones((2, 3, 3)))


def test_install_and_uninstall_restore_sys_modules(cp):
    import sys

    assert sys.modules["cupy"] is cp and sys.modules["cupyx.scipy.special"].__name__.startswith(
        "cupyx"
    )


# ---------------------------------------------------------------------------------------------
# dualad on "cuda" under it


def _stencil(x):
    return x[1:] * x[:-1] + dualad.sin(x[1:]) - x[:-1] ** 2


def test_dense_jacobians_and_hessians_on_cuda(cuda_standin):
    x0 = np.linspace(0.1, 1.0, 6)
    x = dualad.tensor(x0, device="cuda")
    energy = lambda x: (_stencil(x) ** 2).sum()
    with _no_transfers(cuda_standin):
        results = [jacrev(_stencil)(x), jacfwd(_stencil)(x), hessian(energy)(x)]
    expected = [jacrev(_stencil)(dualad.tensor(x0)), hessian(energy)(dualad.tensor(x0))]
    for got in results:
        assert str(got.device) == "cuda:0"
    np.testing.assert_allclose(as_numpy(results[0]), as_numpy(expected[0]), rtol=1e-12)
    np.testing.assert_allclose(as_numpy(results[1]), as_numpy(expected[0]), rtol=1e-12)
    np.testing.assert_allclose(as_numpy(results[2]), as_numpy(expected[1]), rtol=1e-12)


def test_sparse_jacobian_on_cuda_is_a_cupyx_matrix_and_reuses_its_pattern(cuda_standin):
    import cupyx.scipy.sparse

    x0 = np.linspace(0.1, 1.0, 9)
    x = dualad.tensor(x0, device="cuda")
    jacobian = sparse_jacobian(_stencil)
    first = jacobian(x)  # (detects the pattern and uploads its structure once)
    with _no_transfers(cuda_standin):
        again = jacobian(x)
    assert isinstance(again, cupyx.scipy.sparse.csr_matrix)
    assert again.shape == (8, 9) and first.nnz == again.nnz
    dense = as_numpy(jacrev(_stencil)(dualad.tensor(x0)))
    np.testing.assert_allclose(again.get().toarray(), dense, rtol=1e-12)
    hess = sparse_hessian(lambda x: (_stencil(x) ** 2).sum())(x)
    assert isinstance(hess, cupyx.scipy.sparse.csr_matrix) and hess.shape == (9, 9)


def test_sparse_jacobian_without_nonzeros_on_cuda_is_a_cupyx_matrix(cuda_standin):
    import cupyx.scipy.sparse

    x = dualad.tensor(np.ones(4), device="cuda")
    jacobian = sparse_jacobian(lambda x: dualad.zeros_like(x) + 1.0)(x)
    assert isinstance(jacobian, cupyx.scipy.sparse.csr_matrix) and jacobian.nnz == 0


def test_jit_on_cuda(cuda_standin):
    f = dualad.jit(lambda x: (dualad.exp(x) * x).sum())
    x = dualad.tensor(np.linspace(0.0, 1.0, 5), device="cuda", requires_grad=True)
    f(x)
    with _no_transfers(cuda_standin):
        y = f(x)
        (g,) = dualad.autograd.grad(y, [x])
    x0 = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(as_numpy(g), np.exp(x0) * (1 + x0), rtol=1e-12)


def test_special_function_that_cupyx_lacks_raises_naming_it(cuda_standin):
    x = dualad.tensor(np.array([0.5, 1.5]), device="cuda")
    with pytest.raises(NotImplementedError, match=r"cupyx.scipy.special has no jv.*\.cpu\(\)"):
        dualad.special.jv(1.0, x)
    # on the CPU, as the message says
    assert dualad.special.jv(1.0, x.cpu()).device == "cpu"


def test_expected_failures_name_what_cupy_lacks():
    assert len(CUDA_EXPECTED_FAILURES) > 50
    for op, why in CUDA_EXPECTED_FAILURES.items():
        assert "has no" in why or "CuPy has no" in why, (op, why)


def test_cpu_scalars_join_cuda_tensors_as_in_pytorch(cuda_standin):
    x = dualad.tensor(np.array([1.0, 2.0]), device="cuda")
    scalar = dualad.log(2.0)  # a 0-d cpu tensor made of a Python number
    out = x * scalar
    assert str(out.device) == "cuda:0"
    np.testing.assert_allclose(as_numpy(out), [np.log(2.0), 2 * np.log(2.0)])
    # quantile's midpoint interpolation builds such a scalar (it raised on cuda)
    q = dualad.quantile(x, 0.5, interpolation="midpoint")
    assert str(q.device) == "cuda:0" and float(q) == 1.5
    with pytest.raises(RuntimeError, match="same device"):  # a gradient would be lost
        x * dualad.tensor(2.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="same device"):  # not a scalar
        x * dualad.tensor([2.0, 3.0])
