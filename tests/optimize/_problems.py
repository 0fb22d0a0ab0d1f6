"""Test problems for dualad.optimize, each written twice: with dualad ops (what dualad
differentiates) and with NumPy (what scipy's finite differences see)."""

from __future__ import annotations

import numpy as np

import dualad


def rosen(x):
    """The Rosenbrock function of a 1-d tensor (scipy.optimize.rosen's formula)."""
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def rosen_start(n: int) -> np.ndarray:
    return np.where(np.arange(n) % 2 == 0, -1.2, 1.0)


# a fixed synthetic logistic regression: 200 points, 4 features
_rng = np.random.default_rng(1234)
FEATURES = _rng.standard_normal((200, 4))
_TRUE_W = np.array([1.5, -2.0, 0.5, 0.0])
LABELS = np.where(FEATURES @ _TRUE_W + 0.3 + _rng.standard_normal(200) > 0, 1.0, -1.0)
PENALTY = 0.01


def logistic_loss(params):
    """Mean logistic loss with an L2 penalty; ``params`` is ``{"w": (4,), "b": ()}``."""
    margins = LABELS * (FEATURES @ params["w"] + params["b"])
    return dualad.logaddexp(0.0, -margins).mean() + PENALTY * (params["w"] ** 2).sum()


def logistic_loss_np(flat):
    w, b = flat[:4], flat[4]
    margins = LABELS * (FEATURES @ w + b)
    return np.logaddexp(0.0, -margins).mean() + PENALTY * (w**2).sum()


class Counter:
    """A function that counts its calls."""

    def __init__(self, fn):
        self.fn = fn
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)
