"""dualad.special's Kelvin functions: values against scipy (float32, float64), the first and
second derivatives against scipy's (``berp`` ...) and Kelvin's equation (checked here against
finite differences of scipy's values), the third against finite differences of the second,
the series of ``berp/x``, ``beip/x`` at and near 0, and the singular points of ker and kei.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from tests.special._derivatives import derivatives, quiet_singular_points  # noqa: F401

NAMES = ["ber", "bei", "ker", "kei", "berp", "beip", "kerp", "keip"]
SECOND = {  # Kelvin's equation: w'' = -w'/x + i w
    "ber": lambda x: -sp.berp(x) / x - sp.bei(x),
    "bei": lambda x: -sp.beip(x) / x + sp.ber(x),
    "ker": lambda x: -sp.kerp(x) / x - sp.kei(x),
    "kei": lambda x: -sp.keip(x) / x + sp.ker(x),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_values_are_scipys(name, dtype):
    x = np.array([-3.0, -0.5, 0.0, 0.7, 2.0, 9.0, 30.0], dtype=dtype)
    got = getattr(special, name)(dualad.tensor(x))
    assert got.dtype == dtype
    expected = getattr(sp, name)(x.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(got.numpy(), expected)


def test_kelvins_equation_holds_for_scipys_values():
    x = np.array([0.3, 1.2, 4.0, 9.0])
    h = 1e-5
    for name, second in SECOND.items():
        derivative = getattr(sp, name + "p")
        fd = (derivative(x + h) - derivative(x - h)) / (2 * h)
        np.testing.assert_allclose(second(x), fd, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("name", list(SECOND))
def test_first_and_second_derivatives(name):
    x = np.array([0.05, 0.6, 0.999, 1.001, 2.5, 7.0])
    first, second, third = derivatives(getattr(special, name), x, 3)
    np.testing.assert_allclose(first, getattr(sp, name + "p")(x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(second, SECOND[name](x), rtol=1e-10, atol=1e-13)
    h = 1e-5
    fd = (
        derivatives(getattr(special, name), x + h, 2)[1]
        - derivatives(getattr(special, name), x - h, 2)[1]
    ) / (2 * h)
    np.testing.assert_allclose(third, fd, rtol=1e-6, atol=1e-8)


def test_ber_bei_are_smooth_at_zero():
    # ber = 1 - x**4/64 + ...: derivatives 0, 0, 0, -3/8 at 0; bei = x**2/4 - ...: 0, 1/2, 0, 0
    np.testing.assert_allclose(
        [d[0] for d in derivatives(special.ber, [0.0], 4)], [0, 0, 0, -3 / 8], atol=1e-15
    )
    np.testing.assert_allclose(
        [d[0] for d in derivatives(special.bei, [0.0], 4)], [0, 0.5, 0, 0], atol=1e-15
    )
    # evenness: derivatives odd
    x = np.array([0.4, 1.7])
    for name in ("ber", "bei"):
        a, b = (
            derivatives(getattr(special, name), x, 1)[0],
            derivatives(getattr(special, name), -x, 1)[0],
        )
        np.testing.assert_allclose(a, -b, rtol=1e-14)


def test_ker_kei_singular_points():
    assert special.ker(dualad.tensor([0.0])).item() == np.inf
    assert [d[0] for d in derivatives(special.ker, [0.0], 2)] == [-np.inf, np.inf]
    assert special.kei(dualad.tensor([0.0])).item() == pytest.approx(-np.pi / 4)
    first, second, third = (d[0] for d in derivatives(special.kei, [0.0], 3))
    assert first == 0.0 and second == np.inf and third == -np.inf
    for name in ("ker", "kei", "kerp", "keip"):
        fn = getattr(special, name)
        assert np.isnan(fn(dualad.tensor([-1.0])).item())
        assert np.isnan(derivatives(fn, [-1.0], 1)[0][0])
    with pytest.raises(TypeError, match=r"dualad\.special\.ber: not supported for complex"):
        special.ber(dualad.tensor([1.0 + 1j]))
