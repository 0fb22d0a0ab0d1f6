"""Helpers of the tests of dualad.special's scipy families: derivatives of an elementwise
function by repeated reverse mode, and quiet singular points."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad
from dualad import autograd


def derivatives(fn, x, order, dtype=np.float64):
    """The first ``order`` derivatives of elementwise ``fn`` at the points ``x``, by repeated
    reverse mode (each one differentiable: ``create_graph``)."""
    x = dualad.tensor(np.asarray(x, dtype=dtype), requires_grad=True)
    out, value = [], fn(x)
    for k in range(order):
        (value,) = autograd.grad(value.sum(), x, create_graph=k + 1 < order)
        out.append(value.detach().numpy())
    return out


@pytest.fixture(autouse=True)
def quiet_singular_points():
    """NumPy's warnings at the poles (1/0, 0 to negative powers, inf - inf) are expected."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
