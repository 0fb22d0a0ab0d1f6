"""dualad.optimize.least_squares and root against scipy's finite-difference runs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from _problems import Counter

import dualad
from dualad import optimize

T = np.linspace(0.0, 3.0, 30)
Y = 2.5 * np.exp(-1.3 * T) + 0.5 + 0.01 * np.sin(7 * T)  # (a fixed, slightly noisy decay)


def decay(p):
    return p["amplitude"] * dualad.exp(-p["rate"] * T) + p["offset"] - Y


def decay_np(v):
    return v[0] * np.exp(-v[1] * T) + v[2] - Y


@pytest.mark.parametrize("method", ["trf", "dogbox", "lm"])
def test_least_squares_matches_scipy_with_fewer_calls(method):
    x0 = {"amplitude": 1.0, "rate": 1.0, "offset": 0.0}
    counted, counted_np = Counter(decay), Counter(decay_np)
    res = optimize.least_squares(counted, x0, method=method)
    fd = so.least_squares(counted_np, np.array([1.0, 1.0, 0.0]), method=method)
    assert res.success and fd.success
    found = np.array([res.x["amplitude"], res.x["rate"], res.x["offset"]])
    np.testing.assert_allclose(found, fd.x, atol=1e-6)
    np.testing.assert_allclose(res.cost, fd.cost, rtol=1e-8)
    # scipy's trf/dogbox leave the finite differences' calls out of nfev: count the calls
    assert counted.calls < counted_np.calls
    # one call per value, one per Jacobian (and for lm, scipy's own first call, outside nfev)
    assert counted.calls == res.nfev + res.njev + (method == "lm")
    assert x0 == {"amplitude": 1.0, "rate": 1.0, "offset": 0.0}


def broyden_tridiagonal(x):
    """A banded system (each residual reads three neighbours): its Jacobian is sparse."""
    left = dualad.cat([dualad.zeros(1), x[:-1]])
    right = dualad.cat([x[1:], dualad.zeros(1)])
    return (3.0 - 2.0 * x) * x - left - 2.0 * right + 1.0


def test_sparse_jacobians_for_trf():
    x0 = -np.ones(40)
    dense = optimize.least_squares(broyden_tridiagonal, x0)
    res = optimize.least_squares(broyden_tridiagonal, x0, jac="sparse")
    assert sp.issparse(res.jac) and res.jac.nnz == 3 * 40 - 2
    np.testing.assert_allclose(res.x, dense.x, atol=1e-8)
    assert res.cost < 1e-16
    pattern = sp.diags([1, 1, 1], [-1, 0, 1], shape=(40, 40), dtype=bool)
    given = optimize.least_squares(broyden_tridiagonal, x0, jac="sparse", jac_sparsity=pattern)
    np.testing.assert_allclose(given.x, res.x, atol=1e-10)
    with pytest.raises(ValueError, match="trf"):
        optimize.least_squares(broyden_tridiagonal, x0, jac="sparse", method="lm")


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev", "auto"])
def test_jacobian_modes_agree(mode):
    # 2 residuals, 5 parameters: "auto" picks reverse mode (one pass per residual)
    def under(x):
        return dualad.stack([(x**2).sum() - 1.0, x.sum() - 1.0])

    res = optimize.least_squares(under, np.full(5, 0.3), jac=mode)
    np.testing.assert_allclose(res.fun, 0.0, atol=1e-9)


def test_the_users_jacobian_passes_through():
    jac = Counter(
        lambda v: np.stack(
            [np.exp(-v[1] * T), -v[0] * T * np.exp(-v[1] * T), np.ones_like(T)], axis=1
        )
    )
    res = optimize.least_squares(decay_np, np.array([1.0, 1.0, 0.0]), jac=jac)
    assert jac.calls == res.njev
    with pytest.raises(ValueError, match="method"):
        optimize.least_squares(decay, {"amplitude": 1.0, "rate": 1.0, "offset": 0.0}, method="x")


def system(x):
    # scipy.optimize.root's documentation example: the root is (0.8411639, 0.1588361)
    return dualad.stack([x[0] + 0.5 * (x[0] - x[1]) ** 3 - 1.0, 0.5 * (x[1] - x[0]) ** 3 + x[1]])


def system_np(x):
    return np.array([x[0] + 0.5 * (x[0] - x[1]) ** 3 - 1.0, 0.5 * (x[1] - x[0]) ** 3 + x[1]])


@pytest.mark.parametrize("method", ["hybr", "lm"])
def test_root_matches_scipy_with_fewer_calls(method):
    res = optimize.root(system, np.zeros(2), method=method)
    assert res.success
    # (scipy's own lm run with finite differences stops at (0.725, 0) from this start)
    np.testing.assert_allclose(res.x, [0.8411639, 0.1588361], atol=1e-7)
    # 40 unknowns: a finite-difference Jacobian costs 40 calls, dualad's one (vmapped jacfwd)
    counted = Counter(broyden_tridiagonal)
    counted_np = Counter(lambda x: broyden_tridiagonal(dualad.tensor(x)).numpy())
    res = optimize.root(counted, -np.ones(40), method=method)
    fd = so.root(counted_np, -np.ones(40), method=method)
    assert res.success and fd.success
    np.testing.assert_allclose(res.x, fd.x, atol=1e-10)
    assert counted.calls < counted_np.calls
    # one call per value, one per Jacobian, and scipy's first call checking the output shape
    assert counted.calls == res.nfev + res.get("njev", 0) + 1


def test_root_of_a_pytree_and_methods_without_jacobians():
    def equations(p):
        return dualad.stack([p["a"] ** 2 - 4.0, p["b"] * p["a"] - 6.0])

    res = optimize.root(equations, {"a": np.float32(1.0), "b": np.float32(1.0)})
    assert res.x["a"].dtype == np.float32
    np.testing.assert_allclose([res.x["a"], res.x["b"]], [2.0, 3.0], rtol=1e-6)
    krylov = optimize.root(lambda x: x**3 - 8.0, np.ones(3), method="krylov")
    np.testing.assert_allclose(krylov.x, 2.0, rtol=1e-5)
    with pytest.raises(ValueError, match="Unknown solver"):
        optimize.root(system, np.zeros(2), method="newton")
    with pytest.raises(TypeError, match="int64"):
        optimize.root(lambda x: dualad.tensor([1, 2]), np.zeros(2))
