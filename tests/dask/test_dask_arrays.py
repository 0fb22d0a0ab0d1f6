"""``dualad.dask``: Jacobians, Hessians and per-example gradients as dask arrays equal
``dualad.func``'s, on dask's default scheduler and on a ``LocalCluster`` of 2 worker processes
(one cluster for the module); bad input, a closed Client included, raises clearly."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import dask  # noqa: E402

import dualad  # noqa: E402
import dualad.dask  # noqa: E402
from dualad import func  # noqa: E402

# the workers unpickle this module's functions by value, as they would on another machine
# (where this test file does not exist)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

RNG = np.random.default_rng(11)
W = RNG.standard_normal((3, 2, 4, 3)) / 3


def residual(x):
    """(4, 3) -> (3, 2): a nonlinear map with dense derivatives."""
    weights = dualad.tensor(W, device=x.device)
    return dualad.tanh(dualad.tensordot(weights, dualad.sin(x), dims=2)) * x.sum()


def energy(x):
    return (dualad.tanh(residual(x)) ** 2).sum() + (x**4).sum()


def loss(params, example):
    inputs, target = example
    hidden = dualad.tanh(params["w"] @ inputs + params["b"])
    return ((hidden.sum() - target) ** 2) * params["scale"]


PARAMS = {"w": RNG.standard_normal((3, 4)), "b": RNG.standard_normal(3), "scale": np.array(0.5)}
BATCH = (RNG.standard_normal((7, 4)), RNG.standard_normal(7))
X = RNG.standard_normal((4, 3))


@pytest.fixture(scope="module")
def client():
    # (fork: the workers start in 0.2 s rather than seconds; tasks and results still cross
    # process boundaries pickled, and this module's functions are pickled by value above)
    method = "fork" if sys.platform == "linux" else "spawn"
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        cluster = distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        )
        with distributed.Client(cluster) as connected:
            yield connected
        cluster.close()


def expected_per_example():
    grads = func.vmap(func.grad(loss), in_dims=(None, 0))(PARAMS, BATCH)
    return {key: np.asarray(value) for key, value in grads.items()}


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("block_size", [1, 4, 5, "auto"])
def test_jacobian_on_the_default_scheduler(mode, block_size):
    J = dualad.dask.jacobian(residual, X, mode=mode, block_size=block_size)
    assert isinstance(J, da.Array) and J.shape == (3, 2, 4, 3)
    np.testing.assert_allclose(J.compute(), func.jacrev(residual)(X), rtol=1e-12, atol=1e-14)
    if block_size == 4 and mode == "rev":  # 4 output vectors: whole rows of 2, 2 of them
        assert J.chunks == ((2, 1), (2,), (4,), (3,))
    if block_size == 4 and mode == "fwd":  # 4 input vectors: a row of 3 is whole, 1 row
        assert J.chunks == ((3,), (2,), (1, 1, 1, 1), (3,))


def test_hessian_and_per_example_grad_on_the_default_scheduler():
    H = dualad.dask.hessian(energy, X, block_size=5)
    assert H.chunks[:2] == ((1,) * 4, (3,))
    np.testing.assert_allclose(H.compute(), func.hessian(energy)(X), rtol=1e-12, atol=1e-13)
    grads = dualad.dask.per_example_grad(loss, PARAMS, BATCH, chunk_size=3)
    assert set(grads) == {"w", "b", "scale"} and grads["w"].chunks == ((3, 3, 1), (3,), (4,))
    for key, value in expected_per_example().items():
        np.testing.assert_allclose(grads[key].compute(), value, rtol=1e-12, atol=1e-14)
    # a dask batch keeps its own chunks; tensors are accepted where arrays are
    lazy = (da.from_array(BATCH[0], chunks=2), da.from_array(BATCH[1], chunks=2))
    params = {key: dualad.tensor(value) for key, value in PARAMS.items()}
    grads = dualad.dask.per_example_grad(loss, params, lazy)
    assert grads["b"].chunks == ((2, 2, 2, 1), (3,))
    np.testing.assert_allclose(grads["b"].compute(), expected_per_example()["b"], rtol=1e-12)


def test_scalars_empty_arrays_and_a_copy_of_the_point():
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(dualad.dask.jacobian(lambda v: v**3, 2.0, mode=mode), 12.0)
        J = dualad.dask.jacobian(lambda v: v.sum(0), np.zeros((0, 3)), mode=mode)
        assert J.shape == (3, 0, 3) and J.compute().shape == (3, 0, 3)
    assert float(dualad.dask.hessian(lambda v: v**3, 2.0).compute()) == 12.0
    assert dualad.dask.hessian(lambda v: (v**2).sum(), np.zeros(0)).compute().shape == (0, 0)
    x = np.arange(3.0)
    J = dualad.dask.jacobian(lambda v: v**2, x)
    x[:] = 10.0  # the lazy result was built from the point as it was
    np.testing.assert_array_equal(J.compute(), np.diag([0.0, 2.0, 4.0]))


def test_on_a_distributed_cluster_of_two_processes(client):
    J = dualad.dask.jacobian(residual, X, mode="rev", block_size=2, client=client)
    distributed.wait(J)
    on_workers = sum(len(keys) for keys in client.has_what().values())
    assert on_workers >= J.npartitions  # the blocks were computed and are held by the workers
    np.testing.assert_allclose(J.compute(), func.jacrev(residual)(X), rtol=1e-12, atol=1e-14)
    Jf = dualad.dask.jacobian(residual, X, mode="fwd", block_size=3, client=client)
    np.testing.assert_allclose(Jf.compute(), func.jacfwd(residual)(X), rtol=1e-12, atol=1e-14)
    H = dualad.dask.hessian(energy, X, block_size=3, client=client)
    np.testing.assert_allclose(H.compute(), func.hessian(energy)(X), rtol=1e-12, atol=1e-13)
    grads = dualad.dask.per_example_grad(loss, PARAMS, BATCH, chunk_size=2, client=client)
    for key, value in expected_per_example().items():
        np.testing.assert_allclose(grads[key].compute(), value, rtol=1e-12, atol=1e-14)
    # a lazy result computes on the Client too (dask's default scheduler once one exists)
    lazy = dualad.dask.jacobian(residual, X, block_size=6)
    np.testing.assert_allclose(lazy.compute(), func.jacrev(residual)(X), rtol=1e-12, atol=1e-14)


def test_a_closed_client_raises(client):
    gone = distributed.Client(client.cluster)
    gone.close()
    for call in (
        lambda: dualad.dask.jacobian(residual, X, client=gone),
        lambda: dualad.dask.hessian(energy, X, client=gone),
        lambda: dualad.dask.per_example_grad(loss, PARAMS, BATCH, client=gone),
    ):
        with pytest.raises(RuntimeError, match=r"Client .* is not running \(status 'closed'\)"):
            call()


def test_a_function_that_does_not_pickle_raises(client):
    lock = threading.Lock()  # (a lock cannot be pickled, so neither can a closure over it)

    def locked(x):
        with lock:
            return dualad.sin(x)

    with pytest.raises(
        TypeError, match="jacobian: the function and its arguments cannot be pickled"
    ):
        dualad.dask.jacobian(locked, X, client=client)
    threads = dualad.dask.jacobian(locked, X).compute(scheduler="threads")  # (no pickling)
    np.testing.assert_allclose(threads, func.jacrev(dualad.sin)(X), rtol=1e-15)


def test_bad_input():
    with pytest.raises(TypeError, match=r"client must be a dask\.distributed\.Client"):
        dualad.dask.jacobian(residual, X, client="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="mode must be 'rev' or 'fwd', got 'backward'"):
        dualad.dask.jacobian(residual, X, mode="backward")
    for bad in (0, -2, 1.5, True, "big"):
        with pytest.raises(ValueError, match="block_size must be a positive int or 'auto'"):
            dualad.dask.jacobian(residual, X, block_size=bad)
        with pytest.raises(ValueError, match="chunk_size must be a positive int or 'auto'"):
            dualad.dask.per_example_grad(loss, PARAMS, BATCH, chunk_size=bad)
    with pytest.raises(TypeError, match="expected a function"):
        dualad.dask.hessian(3.0, X)
    with pytest.raises(RuntimeError, match=r"x requires grad.*x.detach\(\)"):
        dualad.dask.jacobian(residual, dualad.tensor(X, requires_grad=True))
    with pytest.raises(RuntimeError, match="tracked by an active transform"):
        func.vmap(lambda row: dualad.dask.jacobian(dualad.sin, row))(dualad.tensor(X))
    with pytest.raises(TypeError, match="must hold floating point numbers"):
        dualad.dask.jacobian(residual, np.arange(12).reshape(4, 3))
    with pytest.raises(TypeError, match="expected func to return one array"):
        dualad.dask.jacobian(lambda x: (x, x), X)
    with pytest.raises(ValueError, match=r"expected func to return a scalar, got shape \(3, 2\)"):
        dualad.dask.hessian(residual, X)
    with pytest.raises(ValueError, match="the same number of them"):
        dualad.dask.per_example_grad(loss, PARAMS, (BATCH[0], BATCH[1][:5]))
    with pytest.raises(RuntimeError, match="params requires grad"):
        dualad.dask.per_example_grad(
            loss, {**PARAMS, "b": dualad.tensor(PARAMS["b"], requires_grad=True)}, BATCH
        )


@pytest.mark.gpu
def test_cupy_points_give_cupy_blocks():
    import cupy

    x = cupy.asarray(X)
    J = dualad.dask.jacobian(residual, x, block_size=5)
    assert isinstance(J._meta, cupy.ndarray)
    got = J.compute()
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(got), func.jacrev(residual)(X), rtol=1e-12, atol=1e-14)
    H = dualad.dask.hessian(energy, x, block_size=4).compute()
    np.testing.assert_allclose(cupy.asnumpy(H), func.hessian(energy)(X), rtol=1e-12, atol=1e-13)
