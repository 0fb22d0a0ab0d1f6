"""The pieces under dualad.optimize: pytree parameters flattened and restored, and the
derivatives handed to scipy checked against scipy's own exact formulas."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from _problems import rosen, rosen_start

import dualad
from dualad import optimize
from dualad.optimize._objective import Objective
from dualad.optimize._params import Params
from dualad.optimize._vector import VectorFunction


def test_nested_structures_and_mixed_dtypes_round_trip():
    x0 = {
        "layer": (np.ones((2, 2), dtype=np.float32), [np.zeros(3)]),
        "scale": 2,
        "t": dualad.ones(2),
    }
    params = Params(x0, "minimize")
    assert params.size == 4 + 3 + 1 + 2
    assert params.x0.dtype == np.float64 and params.dtype == np.float64
    back = params.tree(params.x0)
    assert back["layer"][0].dtype == np.float32 and back["layer"][0].shape == (2, 2)
    assert isinstance(back["layer"][1], list) and back["layer"][1][0].shape == (3,)
    assert back["scale"] == 2.0 and back["scale"].dtype == np.float64  # an int becomes float64
    assert isinstance(back["t"], dualad.Tensor)

    def seen(p):
        # fun sees each leaf with its own dtype
        assert p["layer"][0].dtype == np.float32 and p["layer"][1][0].dtype == np.float64
        return (
            (p["layer"][0] ** 2).sum()
            + (p["layer"][1][0] ** 2).sum()
            + (p["scale"] - 1) ** 2
            + (p["t"] ** 2).sum()
        )

    res = optimize.minimize(seen, x0, method="BFGS")
    np.testing.assert_allclose(res.x["layer"][0], 0.0, atol=1e-4)
    assert res.x["layer"][0].dtype == np.float32
    np.testing.assert_allclose(res.x["scale"], 1.0, atol=1e-6)


def test_the_derivatives_are_scipys_exact_ones():
    x = rosen_start(7) + 0.1
    objective = Objective(Params(np.zeros(7), "minimize"), rosen, "minimize")
    value, gradient = objective.value_and_grad(x)
    np.testing.assert_allclose(value, so.rosen(x))
    np.testing.assert_allclose(gradient, so.rosen_der(x), rtol=1e-12)
    np.testing.assert_allclose(objective.hess(x), so.rosen_hess(x), rtol=1e-12)
    sparse = objective.hess_sparse(x)
    assert sp.issparse(sparse) and sparse.dtype == np.float64 and sparse.nnz == 7 + 2 * 6
    np.testing.assert_allclose(sparse.toarray(), so.rosen_hess(x), rtol=1e-12)
    p = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(objective.hessp(x, p), so.rosen_hess_prod(x, p), rtol=1e-12)
    assert objective.evaluations > 0


def test_scipy_receives_float64_from_float32_parameters():
    # (scipy#18730: L-BFGS-B crashed on a float32 gradient)
    objective = Objective(Params(np.zeros(5, dtype=np.float32), "minimize"), rosen, "minimize")
    x = rosen_start(5)
    assert isinstance(objective.fun(x), float)
    gradient = objective.jac(x)
    assert gradient.dtype == np.float64 and gradient.flags.writeable
    np.testing.assert_allclose(gradient, so.rosen_der(x), rtol=1e-5)
    assert objective.hess(x).dtype == np.float64
    assert objective.hessp(x, np.ones(5)).dtype == np.float64
    assert objective.hess_sparse(x).dtype == np.float64


def test_constraint_jacobians_in_both_modes_and_the_weighted_hessian():
    params = Params({"a": np.zeros(2), "b": 0.0}, "minimize")

    def c(p):
        return dualad.stack(
            [p["a"][0] * p["b"], (p["a"] ** 2).sum(), dualad.sin(p["b"]), p["a"][1] ** 3]
        )

    function = VectorFunction(params, c, "minimize", "constraint function")
    x = np.array([0.5, -1.0, 0.3])
    expected = np.array(
        [[0.3, 0.0, 0.5], [1.0, -2.0, 0.0], [0.0, 0.0, np.cos(0.3)], [0.0, 3.0, 0.0]]
    )
    for mode in ("jacfwd", "jacrev", "auto"):
        np.testing.assert_allclose(function.jacobian(x, mode=mode), expected, rtol=1e-12)
    np.testing.assert_allclose(function.jacobian(x, mode="sparse").toarray(), expected, rtol=1e-12)
    v = np.array([1.0, 2.0, 3.0, 4.0])
    expected_hessian = np.array(
        [[4.0, 0.0, 1.0], [0.0, 4.0 + 4 * 6 * -1.0, 0.0], [1.0, 0.0, -3.0 * np.sin(0.3)]]
    )
    np.testing.assert_allclose(function.hess_dot(x, v), expected_hessian, rtol=1e-12)


def test_bounds_in_the_parameters_structure():
    x0 = {"w": np.full(3, 5.0), "b": 0.0}
    bounds = {"w": (np.array([1.0, 2.0, -np.inf]), None), "b": (None, -1.0)}
    res = optimize.minimize(
        lambda p: (p["w"] ** 2).sum() + p["b"] ** 2, x0, method="L-BFGS-B", bounds=bounds
    )
    np.testing.assert_allclose(res.x["w"], [1.0, 2.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(res.x["b"], -1.0)
    # scipy's own flat forms pass through
    flat = optimize.minimize(
        lambda x: (x**2).sum(), np.full(2, 5.0), method="L-BFGS-B", bounds=[(1, None), (None, None)]
    )
    np.testing.assert_allclose(flat.x, [1.0, 0.0], atol=1e-6)


def test_a_parameter_tracked_by_an_outer_transform_is_refused():
    # (an optimum is no differentiable function of x0 here: say so rather than drop the level)
    with pytest.raises(TypeError, match="tracked"):
        dualad.func.grad(lambda x: optimize.minimize(rosen, x).fun)(np.ones(2))


def test_jit_gives_the_same_runs():
    x0 = rosen_start(6)
    for method, extra in (("BFGS", {}), ("trust-exact", {}), ("Newton-CG", {"hessp": True})):
        eager = optimize.minimize(rosen, x0, method=method, **extra)
        jitted = optimize.minimize(rosen, x0, method=method, jit=True, **extra)
        np.testing.assert_allclose(jitted.x, eager.x, rtol=1e-10)
        assert jitted.nfev == eager.nfev
    circle = so.NonlinearConstraint(lambda v: (v**2).sum(), -np.inf, 1.0)
    runs = [
        optimize.minimize(
            lambda v: ((v - 2.0) ** 2).sum(),
            np.array([0.1, 0.2, 0.5]),
            method="trust-constr",
            constraints=[circle],
            jit=jit,
        )
        for jit in (False, True)
    ]
    np.testing.assert_allclose(runs[1].x, runs[0].x, rtol=1e-10)
    t = np.linspace(0.0, 3.0, 30)
    y = 2.5 * np.exp(-1.3 * t) + 0.5
    fits = [
        optimize.least_squares(
            lambda p: p[0] * dualad.exp(-p[1] * t) + p[2] - y, np.ones(3), jit=jit
        )
        for jit in (False, True)
    ]
    np.testing.assert_allclose(fits[1].x, fits[0].x, rtol=1e-10)
    roots = [optimize.root(lambda x: x**3 - 8.0, np.ones(3), jit=jit) for jit in (False, True)]
    np.testing.assert_allclose(roots[1].x, roots[0].x, rtol=1e-12)
