"""dualad.optimize.minimize against scipy.optimize.minimize: the same optimum as scipy's
finite-difference (or exact-derivative) runs, with fewer evaluations of the function."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so
from _problems import (
    Counter,
    logistic_loss,
    logistic_loss_np,
    rosen,
    rosen_start,
)
from scipy.optimize import Bounds, LinearConstraint, NonlinearConstraint

import dualad
from dualad import optimize


@pytest.mark.parametrize("n", [2, 20])
@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B", "CG"])
def test_first_order_methods_on_rosenbrock_match_scipy_with_fewer_evaluations(method, n):
    counted = Counter(rosen)
    res = optimize.minimize(counted, rosen_start(n), method=method)
    fd = so.minimize(so.rosen, rosen_start(n), method=method)  # scipy's finite differences
    assert res.success and fd.success
    np.testing.assert_allclose(res.x, np.ones(n), atol=1e-4)
    np.testing.assert_allclose(res.x, fd.x, atol=1e-4)
    assert res.nfev < fd.nfev
    # one evaluation of fun per point gives both the value and the gradient (the cache)
    assert counted.calls == res.nfev
    assert res.njev <= res.nfev


def test_l_bfgs_b_with_float32_parameters():
    # scipy#18730: a float32 gradient crashed L-BFGS-B; scipy only ever sees float64 here
    x0 = rosen_start(6).astype(np.float32)
    res = optimize.minimize(rosen, x0, method="L-BFGS-B")
    assert res.success
    assert res.x.dtype == np.float32 and res.jac.dtype == np.float32
    np.testing.assert_allclose(res.x, np.ones(6), atol=1e-2)
    np.testing.assert_array_equal(x0, rosen_start(6).astype(np.float32))  # not written to


@pytest.mark.parametrize("n", [2, 20])
@pytest.mark.parametrize("method", ["Newton-CG", "trust-ncg", "trust-krylov", "trust-exact"])
def test_second_order_methods_match_scipy_with_exact_derivatives(method, n):
    res = optimize.minimize(rosen, rosen_start(n), method=method)
    exact = so.minimize(
        so.rosen, rosen_start(n), method=method, jac=so.rosen_der, hess=so.rosen_hess
    )
    assert res.success == exact.success
    np.testing.assert_allclose(res.x, exact.x, atol=1e-6)
    assert res.nfev == exact.nfev  # the same iterations: the derivatives are the exact ones
    assert "nhev" in res and res.nhev > 0


def test_sparse_hessians_for_newton_cg():
    # the chained Rosenbrock function: a tridiagonal Hessian, 3 colours for 60 variables
    counted = Counter(rosen)
    res = optimize.minimize(counted, rosen_start(60), method="Newton-CG", hess="sparse")
    dense = optimize.minimize(rosen, rosen_start(60), method="Newton-CG")
    assert res.success
    np.testing.assert_allclose(res.x, dense.x, atol=1e-2)  # (CG's own tolerance)
    np.testing.assert_allclose(res.x, np.ones(60), atol=1e-2)


@pytest.mark.parametrize("method", ["Newton-CG", "trust-ncg", "trust-krylov", "trust-constr"])
def test_hessian_vector_products(method):
    res = optimize.minimize(rosen, rosen_start(2), method=method, hessp=True)
    exact = so.minimize(
        so.rosen, rosen_start(2), method=method, jac=so.rosen_der, hessp=so.rosen_hess_prod
    )
    assert res.success and exact.success
    np.testing.assert_allclose(res.x, np.ones(2), atol=1e-3)  # (trust-krylov's own gtol)
    np.testing.assert_allclose(res.x, exact.x, atol=1e-8)
    assert res.nfev == exact.nfev


def test_dogleg_and_newton_on_a_logistic_regression_with_dict_parameters():
    x0 = {"w": np.zeros(4), "b": np.float64(0.0)}
    fd = so.minimize(logistic_loss_np, np.zeros(5), method="BFGS")
    for method in ("BFGS", "dogleg", "trust-exact", "Newton-CG"):
        counted = Counter(logistic_loss)
        res = optimize.minimize(counted, x0, method=method)
        assert res.success, method
        assert set(res.x) == {"w", "b"} and res.x["w"].shape == (4,)
        assert isinstance(res.x["b"], np.float64)
        np.testing.assert_allclose(res.x["w"], fd.x[:4], atol=1e-4)
        np.testing.assert_allclose(res.x["b"], fd.x[4], atol=1e-4)
        assert res.nfev < fd.nfev
        assert set(res.jac) == {"w", "b"}
    assert x0["w"].tolist() == [0.0] * 4 and x0["b"] == 0.0  # x0 is not written to


def test_slsqp_with_dict_constraints_and_bounds():
    # scipy's tutorial problem: the optimum is (1.4, 1.7)
    def objective(p):
        return (p[0] - 1) ** 2 + (p[1] - 2.5) ** 2

    def objective_np(p):
        return (p[0] - 1) ** 2 + (p[1] - 2.5) ** 2

    rows = [(1.0, -2.0, 2.0), (-1.0, -2.0, 6.0), (-1.0, 2.0, 2.0)]
    ours = [
        {"type": "ineq", "fun": lambda p, a=a, b=b, c=c: a * p[0] + b * p[1] + c}
        for a, b, c in rows
    ]
    theirs = [
        {"type": "ineq", "fun": lambda p, a=a, b=b, c=c: a * p[0] + b * p[1] + c}
        for a, b, c in rows
    ]
    bounds = ((0, None), (0, None))
    res = optimize.minimize(objective, np.array([2.0, 0.0]), constraints=ours, bounds=bounds)
    fd = so.minimize(objective_np, np.array([2.0, 0.0]), constraints=theirs, bounds=bounds)
    assert res.success and fd.success
    np.testing.assert_allclose(res.x, [1.4, 1.7], atol=1e-6)
    np.testing.assert_allclose(fd.x, [1.4, 1.7], atol=1e-5)
    assert res.nfev < fd.nfev


def _constrained_problem():
    """min |x - 2|^2 subject to x + y + z = 3 and x^2 + y^2 <= 1, in 0 <= x <= 10: the optimum
    is (1/sqrt 2, 1/sqrt 2, 3 - sqrt 2) (KKT with multipliers of the right signs; convex)."""
    optimum = np.array([2**-0.5, 2**-0.5, 3 - 2**0.5])

    def objective(p):
        return ((p["xy"] - 2.0) ** 2).sum() + (p["z"] - 2.0) ** 2

    def total(p):
        return p["xy"].sum() + p["z"]

    def circle(p):
        return (p["xy"] ** 2).sum()

    return optimum, objective, total, circle


# (scipy's quasi-Newton update of the linear constraint's Hessian, in the runs without one)
@pytest.mark.filterwarnings("ignore:delta_grad == 0.0")
@pytest.mark.parametrize("hess", [None, "sparse", False])
def test_trust_constr_with_equality_inequality_and_bounds(hess):
    optimum, objective, total, circle = _constrained_problem()
    x0 = {"xy": np.array([0.1, 0.2]), "z": np.float64(0.5)}
    constraints = [NonlinearConstraint(total, 3.0, 3.0), NonlinearConstraint(circle, -np.inf, 1.0)]
    bounds = {"xy": (0.0, 10.0), "z": (0.0, None)}  # in x0's structure
    res = optimize.minimize(
        objective, x0, method="trust-constr", constraints=constraints, bounds=bounds, hess=hess
    )
    assert res.success
    assert set(res.grad) == {"xy", "z"}  # the objective's gradient in x0's structure
    found = np.append(res.x["xy"], res.x["z"])
    # (trust-constr's barrier stops ~1e-4 inside the disc, with exact derivatives too)
    np.testing.assert_allclose(found, optimum, atol=2e-4)
    if hess is not False:  # the same iterations as scipy given the exact derivatives
        exact = so.minimize(
            lambda v: ((v - 2.0) ** 2).sum(),
            np.array([0.1, 0.2, 0.5]),
            jac=lambda v: 2 * (v - 2.0),
            hess=lambda v: 2 * np.eye(3),
            method="trust-constr",
            constraints=[
                NonlinearConstraint(
                    lambda v: v.sum(),
                    3,
                    3,
                    jac=lambda v: np.ones((1, 3)),
                    hess=lambda v, w: np.zeros((3, 3)),
                ),
                NonlinearConstraint(
                    lambda v: (v[:2] ** 2).sum(),
                    -np.inf,
                    1,
                    jac=lambda v: np.array([[2 * v[0], 2 * v[1], 0]]),
                    hess=lambda v, w: w[0] * np.diag([2.0, 2.0, 0.0]),
                ),
            ],
            bounds=Bounds([0, 0, 0], [10, 10, np.inf]),
        )
        np.testing.assert_allclose(found, exact.x, atol=1e-8)
        assert res.nfev == exact.nfev

    def flat_objective(v):
        return ((v[:2] - 2.0) ** 2).sum() + (v[2] - 2.0) ** 2

    fd = so.minimize(
        flat_objective,
        np.array([0.1, 0.2, 0.5]),
        method="trust-constr",
        constraints=[
            NonlinearConstraint(lambda v: v.sum(), 3.0, 3.0),
            NonlinearConstraint(lambda v: (v[:2] ** 2).sum(), -np.inf, 1.0),
        ],
        bounds=Bounds([0, 0, 0], [10, 10, np.inf]),
    )
    np.testing.assert_allclose(fd.x, optimum, atol=1e-4)
    assert res.nfev < fd.nfev


def test_a_linear_constraint_and_a_dict_constraint_under_trust_constr():
    optimum, objective, _, circle = _constrained_problem()
    x0 = {"xy": np.array([0.1, 0.2]), "z": np.float64(0.5)}
    constraints = [
        LinearConstraint(np.ones((1, 3)), 3.0, 3.0),  # on the flat vector
        {"type": "ineq", "fun": lambda p: 1.0 - circle(p)},
    ]
    res = optimize.minimize(objective, x0, method="trust-constr", constraints=constraints)
    np.testing.assert_allclose(res.x["xy"], optimum[:2], atol=2e-4)


def test_the_users_derivatives_pass_through_unchanged():
    jac, hess = Counter(so.rosen_der), Counter(so.rosen_hess)
    counted = Counter(rosen)
    res = optimize.minimize(counted, rosen_start(2), method="trust-exact", jac=jac, hess=hess)
    exact = so.minimize(
        so.rosen, rosen_start(2), method="trust-exact", jac=so.rosen_der, hess=so.rosen_hess
    )
    np.testing.assert_allclose(res.x, exact.x)
    assert jac.calls == exact.njev and hess.calls == exact.nhev
    assert counted.calls == exact.nfev  # values only: dualad computed no derivative


def test_methods_without_derivatives_get_values_only():
    counted = Counter(lambda p: (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2)
    res = optimize.minimize(counted, [-1.0, 1.0], method="Nelder-Mead", options={"xatol": 1e-8})
    assert counted.calls == res.nfev
    assert isinstance(res.x, list) and len(res.x) == 2  # x0 was a list of two numbers
    np.testing.assert_allclose(np.array(res.x, dtype=float), [1.0, 1.0], atol=1e-4)


def test_tensor_parameters_come_back_as_tensors():
    x0 = dualad.tensor([-1.2, 1.0], dtype=dualad.float32)
    res = optimize.minimize(rosen, x0, method="BFGS")
    assert isinstance(res.x, dualad.Tensor) and res.x.dtype == np.float32
    np.testing.assert_allclose(res.x.detach().numpy(), [1.0, 1.0], atol=1e-3)
    np.testing.assert_array_equal(x0.numpy(), np.array([-1.2, 1.0], dtype=np.float32))


def test_a_constant_objective_has_a_zero_gradient():
    res = optimize.minimize(lambda x: 1.5, np.ones(2), method="BFGS")
    assert res.success and res.fun == 1.5
    np.testing.assert_array_equal(res.jac, [0.0, 0.0])


@pytest.mark.parametrize("method", ["BFGS", "trust-constr", "L-BFGS-B"])
def test_callbacks_see_the_parameters_structure(method):
    points, results = [], []
    x0 = {"w": np.array([2.0, -1.0], dtype=np.float32)}

    def loss(p):
        return ((p["w"] - 1.0) ** 2).sum()

    optimize.minimize(loss, x0, method=method, callback=lambda x, *rest: points.append(x))
    assert points and all(set(p) == {"w"} and p["w"].dtype == np.float32 for p in points)

    def stop(intermediate_result):
        results.append(intermediate_result)
        raise StopIteration

    res = optimize.minimize(loss, x0, method=method, callback=stop)
    assert len(results) == 1 and set(results[0].x) == {"w"}
    assert res.nit == 1 and set(res.x) == {"w"}


def test_args_reach_fun_and_are_not_differentiated():
    def shifted(x, shift):
        return ((x - shift) ** 2).sum()

    res = optimize.minimize(shifted, np.zeros(3), args=(np.arange(3.0),), method="BFGS")
    np.testing.assert_allclose(res.x, np.arange(3.0), atol=1e-6)


@pytest.mark.parametrize(
    ("fun", "x0", "error", "match"),
    [
        (lambda x: x * 2, np.ones(3), ValueError, "must return a scalar"),
        (lambda x: dualad.tensor(1), np.ones(2), TypeError, "int64"),
        (lambda x: (x * 1j).sum(), np.ones(2), TypeError, "complex"),
        (lambda x: "a", np.ones(2), TypeError, "real scalar"),
        (lambda x: np.ones(2), np.ones(2), ValueError, "must return a scalar"),
        (rosen, {}, ValueError, "no parameters"),
        (rosen, np.ones(2, dtype=complex), TypeError, "complex"),
        (rosen, ["a", "b"], TypeError, "str"),
    ],
)
def test_errors_a_user_can_act_on(fun, x0, error, match):
    with pytest.raises(error, match=match):
        optimize.minimize(fun, x0, method="BFGS")


def test_bad_options_raise():
    with pytest.raises(ValueError, match="Unknown solver"):
        optimize.minimize(rosen, np.ones(2), method="newton")
    with pytest.raises(ValueError, match="hessp=True"):
        optimize.minimize(rosen, np.ones(2), method="BFGS", hessp=True)
    with pytest.raises(ValueError, match="sparse"):
        optimize.minimize(rosen, np.ones(2), method="trust-exact", hess="sparse")
    with pytest.raises(ValueError, match="jac=True"):
        optimize.minimize(rosen, np.ones(2), jac=True)
    with pytest.raises(ValueError, match="bounds"):
        optimize.minimize(rosen, {"a": np.ones(2)}, method="L-BFGS-B", bounds={"b": (0, 1)})
