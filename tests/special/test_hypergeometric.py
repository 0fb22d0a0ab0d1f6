"""dualad.special's hypergeometric and Struve functions: values against scipy (float32,
float64), derivatives to the third order against scipy's parameter-raising identities and the
third against finite differences of the second, the singular points, and static parameters
(a tracked one raises).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import func
from tests.special._derivatives import derivatives, quiet_singular_points  # noqa: F401

# name, parameters, points, the k-th derivative as scipy values
CASES = {
    "hyp0f1": (
        (1.5,),
        np.array([-4.0, -0.5, 0.0, 1.0, 3.0]),
        lambda k, x: sp.hyp0f1(1.5 + k, x) / np.prod([1.5 + j for j in range(k)]),
    ),
    "hyp1f1": (
        (0.7, 1.3),
        np.array([-3.0, -0.5, 0.0, 1.0, 2.5]),
        lambda k, x: sp.poch(0.7, k) / sp.poch(1.3, k) * sp.hyp1f1(0.7 + k, 1.3 + k, x),
    ),
    "hyp2f1": (
        (0.5, 1.2, 2.1),
        np.array([-3.0, -0.5, 0.0, 0.4, 0.9]),
        lambda k, x: (
            sp.poch(0.5, k)
            * sp.poch(1.2, k)
            / sp.poch(2.1, k)
            * sp.hyp2f1(0.5 + k, 1.2 + k, 2.1 + k, x)
        ),
    ),
    "hyperu": (
        (0.6, 1.4),
        np.array([0.2, 0.9, 2.0, 5.0]),
        lambda k, x: (-1) ** k * sp.poch(0.6, k) * sp.hyperu(0.6 + k, 1.4 + k, x),
    ),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", [*CASES, "struve", "modstruve"])
def test_values_are_scipys(name, dtype):
    params = CASES[name][0] if name in CASES else (1.5,)
    x = np.array([-2.0, 0.0, 0.5, 1.0, 3.0], dtype=dtype)
    got = getattr(special, name)(*params, dualad.tensor(x))
    assert got.dtype == dtype
    expected = getattr(sp, name)(*params, x.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("name", list(CASES))
def test_derivatives_raise_the_parameters(name):
    params, x, nth = CASES[name]
    fn = lambda t: getattr(special, name)(*params, t)
    for k, d in enumerate(derivatives(fn, x, 3)):
        np.testing.assert_allclose(d, nth(k + 1, x), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", ["struve", "modstruve"])
@pytest.mark.parametrize("v", [0, 1, 1.5, 2.7])
def test_struve_derivatives(name, v):
    fn = lambda t: getattr(special, name)(v, t)
    ref = getattr(sp, name)
    x = np.array([0.3, 1.1, 2.4, 6.0])
    h = 1e-6
    first, second, third = derivatives(fn, x, 3)
    np.testing.assert_allclose(first, (ref(v, x + h) - ref(v, x - h)) / (2 * h), rtol=1e-7)
    h = 1e-5
    fd = (derivatives(fn, x + h, 1)[0] - derivatives(fn, x - h, 1)[0]) / (2 * h)
    np.testing.assert_allclose(second, fd, rtol=1e-6, atol=1e-9)
    fd = (derivatives(fn, x + h, 2)[1] - derivatives(fn, x - h, 2)[1]) / (2 * h)
    np.testing.assert_allclose(third, fd, rtol=1e-6, atol=1e-9)


def test_struve_at_zero_and_below():
    # H_0'(0) = 2/pi (H_0 ~ 2x/pi); L_1'(0) = 0; integer orders are defined below 0
    assert derivatives(lambda t: special.struve(0, t), [0.0], 1)[0][0] == pytest.approx(2 / np.pi)
    assert derivatives(lambda t: special.modstruve(1, t), [0.0], 1)[0][0] == 0.0
    x = np.array([-2.0, -0.5])
    (d,) = derivatives(lambda t: special.struve(2, t), x, 1)
    np.testing.assert_allclose(d, (sp.struve(2, x + 1e-6) - sp.struve(2, x - 1e-6)) / 2e-6, 1e-7)
    assert np.isnan(derivatives(lambda t: special.struve(1.5, t), [-1.0], 1)[0]).all()


def test_singular_points():
    # 2F1(1, 1; 2; z) = -log(1 - z)/z: inf at 1, derivative inf; nan beyond 1
    assert special.hyp2f1(1.0, 1.0, 2.0, dualad.tensor([1.0])).item() == np.inf
    assert derivatives(lambda t: special.hyp2f1(1.0, 1.0, 2.0, t), [1.0], 1)[0][0] == np.inf
    assert special.hyperu(1.0, 2.0, dualad.tensor([0.0])).item() == np.inf
    assert np.isnan(special.hyperu(1.0, 2.0, dualad.tensor([-1.0])).item())


def test_parameters_are_static():
    x = dualad.tensor([0.5, 1.0])
    for a in (0.7, np.float32(0.7), dualad.tensor(0.7)):
        np.testing.assert_allclose(
            special.hyp1f1(a, 1.3, x).numpy(), sp.hyp1f1(0.7, 1.3, x.numpy()), rtol=1e-7
        )
    with pytest.raises(NotImplementedError, match=r"dualad\.special\.hyp1f1: a is a parameter"):
        special.hyp1f1(dualad.tensor(0.7, requires_grad=True), 1.3, x)
    with pytest.raises(NotImplementedError, match=r"dualad\.special\.struve: v"):
        func.grad(lambda v: special.struve(v, x).sum())(dualad.tensor(1.0))
    with pytest.raises(ValueError, match="one number per call"):
        special.hyp2f1(dualad.tensor([1.0, 2.0]), 1.0, 2.0, x)
    with pytest.raises(ValueError, match="must be a real number"):
        special.hyp0f1("1", x)
    with pytest.raises(TypeError, match="not supported for complex"):
        special.hyp1f1(0.5, 1.5, dualad.tensor([1.0 + 1j]))
