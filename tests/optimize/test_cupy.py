"""dualad.optimize with CuPy parameters (run with a GPU: the tests are marked ``gpu``): fun
runs on the device, scipy on the host, and the results come back to the device."""

from __future__ import annotations

import numpy as np
import pytest
from _problems import FEATURES, LABELS, PENALTY, logistic_loss, rosen, rosen_start
from scipy.optimize import NonlinearConstraint

import dualad
from dualad import optimize


@pytest.mark.gpu
def test_cupy_parameters_stay_on_the_device_for_fun_and_come_back_there():
    import cupy

    seen = []

    def on_device(x):
        seen.append(str(x.device))
        return rosen(x)

    # (from inside the valley of (1, ..., 1): from rosen_start(6), float32 gradients on the GPU
    # can lead L-BFGS-B to the other local minimum near x0 = -1, a correct but different answer)
    x0 = cupy.full(6, 0.8, dtype=cupy.float32)
    for method in ("L-BFGS-B", "trust-exact", "Newton-CG"):
        seen.clear()
        hessp = True if method == "Newton-CG" else None
        res = optimize.minimize(on_device, x0, method=method, hessp=hessp)
        assert isinstance(res.x, cupy.ndarray) and res.x.dtype == cupy.float32
        np.testing.assert_allclose(cupy.asnumpy(res.x), np.ones(6), atol=2e-2)
        assert seen and all(device == "cuda:0" for device in seen)
    cpu = optimize.minimize(rosen, rosen_start(6), method="trust-constr", hess="sparse")
    gpu = optimize.minimize(
        rosen, cupy.asarray(rosen_start(6)), method="trust-constr", hess="sparse"
    )
    np.testing.assert_allclose(cupy.asnumpy(gpu.x), cpu.x, rtol=1e-6)


@pytest.mark.gpu
def test_cupy_dict_parameters_constraints_and_least_squares():
    import cupy

    x0 = {"w": cupy.zeros(4), "b": 0.0}
    res = optimize.minimize(logistic_loss_on(cupy), x0, method="BFGS")
    cpu = optimize.minimize(logistic_loss, {"w": np.zeros(4), "b": 0.0}, method="BFGS")
    assert isinstance(res.x["w"], cupy.ndarray) and isinstance(res.x["b"], cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(res.x["w"]), cpu.x["w"], rtol=1e-6)
    constrained = optimize.minimize(
        lambda v: ((v - 2.0) ** 2).sum(),
        cupy.asarray([0.1, 0.2, 0.5]),
        method="trust-constr",
        constraints=[NonlinearConstraint(lambda v: (v**2).sum(), -np.inf, 1.0)],
    )
    np.testing.assert_allclose(cupy.asnumpy(constrained.x), np.full(3, 3**-0.5), atol=2e-4)
    t = cupy.linspace(0.0, 3.0, 30)
    y = 2.5 * cupy.exp(-1.3 * t) + 0.5
    fit = optimize.least_squares(lambda p: p[0] * dualad.exp(-p[1] * t) + p[2] - y, cupy.ones(3))
    np.testing.assert_allclose(cupy.asnumpy(fit.x), [2.5, 1.3, 0.5], rtol=1e-6)
    root = optimize.root(lambda x: x**3 - 8.0, cupy.ones(3))
    np.testing.assert_allclose(cupy.asnumpy(root.x), 2.0, rtol=1e-8)


def logistic_loss_on(cupy):
    """``logistic_loss`` with its data on the device."""
    features, labels = cupy.asarray(FEATURES), cupy.asarray(LABELS)

    def loss(params):
        # (the tensors on the left, so that dualad's operators take the CuPy arrays)
        margins = (params["w"] @ features.T + params["b"]) * labels
        return dualad.logaddexp(0.0, -margins).mean() + PENALTY * (params["w"] ** 2).sum()

    return loss
