"""dualad.special's integral functions (expi exp1 expn sici shichi fresnel dawsn erfi spence):
values against scipy (float32, float64, complex where allowed), derivatives against their
integrands to the third order (and the third against finite differences of the second), the
removable singularities (si, shi at 0, spence at 1) exact at every order, the poles, and expn's
static order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func
from tests.special._derivatives import derivatives, quiet_singular_points  # noqa: F401

REAL = ["expi", "exp1", "dawsn", "erfi", "spence"]
PAIRS = {"sici": ("si", "ci"), "shichi": ("shi", "chi"), "fresnel": ("S", "C")}


POINTS = np.array([-2.5, -0.5, 0.0, 0.3, 1.0, 1.05, 4.0, 25.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", [*REAL, *PAIRS])
def test_values_are_scipys(name, dtype):
    x = POINTS.astype(dtype)
    got = getattr(special, name)(dualad.tensor(x))
    expected = getattr(sp, name)(x.astype(np.float64))
    if name in PAIRS:
        assert isinstance(got, tuple) and len(got) == 2
    else:
        got, expected = (got,), (expected,)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == dtype
        np.testing.assert_array_equal(g.numpy(), np.asarray(e).astype(dtype))
    for n in (0, 1, 2, 5):
        np.testing.assert_array_equal(
            special.expn(n, dualad.tensor(x)).numpy(),
            sp.expn(n, x.astype(np.float64)).astype(dtype),
        )


@pytest.mark.parametrize("name", ["fresnel", "dawsn", "erfi"])
def test_complex_values_and_holomorphicderivatives(name):
    z = np.array([0.3 + 0.4j, -1.1 + 0.2j, 0.7 - 1.3j])
    fn = getattr(special, name)
    pick = (lambda out: out[0]) if name == "fresnel" else (lambda out: out)
    got = pick(fn(dualad.tensor(z)))
    np.testing.assert_array_equal(got.numpy(), pick(getattr(sp, name)(z)))
    deriv = {
        "fresnel": lambda w: np.sin(np.pi * w * w / 2),
        "dawsn": lambda w: 1 - 2 * w * sp.dawsn(w),
        "erfi": lambda w: 2 / np.sqrt(np.pi) * np.exp(w * w),
    }[name](z)
    _, tangent = func.jvp(lambda t: pick(fn(t)), (dualad.tensor(z),), (dualad.ones(3) + 0j,))
    np.testing.assert_allclose(tangent.numpy(), deriv, rtol=1e-12)
    zt = dualad.tensor(z, requires_grad=True)
    (g,) = autograd.grad(pick(fn(zt)).real.sum(), zt)
    np.testing.assert_allclose(g.numpy(), np.conj(deriv), rtol=1e-12)  # PyTorch's convention


def _integrands():
    """name -> (function of x, [its derivatives of order 1, 2, 3] as NumPy functions)."""
    return {
        "si": (
            lambda t: special.sici(t)[0],
            [
                lambda x: np.sin(x) / x,
                lambda x: (x * np.cos(x) - np.sin(x)) / x**2,
                lambda x: -((x * x - 2) * np.sin(x) + 2 * x * np.cos(x)) / x**3,
            ],
        ),
        "ci": (
            lambda t: special.sici(t)[1],
            [
                lambda x: np.cos(x) / x,
                lambda x: -(x * np.sin(x) + np.cos(x)) / x**2,
                lambda x: ((2 - x * x) * np.cos(x) + 2 * x * np.sin(x)) / x**3,
            ],
        ),
        "shi": (
            lambda t: special.shichi(t)[0],
            [
                lambda x: np.sinh(x) / x,
                lambda x: (x * np.cosh(x) - np.sinh(x)) / x**2,
                lambda x: ((x * x + 2) * np.sinh(x) - 2 * x * np.cosh(x)) / x**3,
            ],
        ),
        "chi": (
            lambda t: special.shichi(t)[1],
            [
                lambda x: np.cosh(x) / x,
                lambda x: (x * np.sinh(x) - np.cosh(x)) / x**2,
                lambda x: ((x * x + 2) * np.cosh(x) - 2 * x * np.sinh(x)) / x**3,
            ],
        ),
        "expi": (
            special.expi,
            [
                lambda x: np.exp(x) / x,
                lambda x: np.exp(x) * (x - 1) / x**2,
                lambda x: np.exp(x) * (x * x - 2 * x + 2) / x**3,
            ],
        ),
        "exp1": (
            special.exp1,
            [
                lambda x: -np.exp(-x) / x,
                lambda x: np.exp(-x) * (x + 1) / x**2,
                lambda x: -np.exp(-x) * (x * x + 2 * x + 2) / x**3,
            ],
        ),
        "expn_3": (
            lambda t: special.expn(3, t),
            [lambda x: -sp.expn(2, x), lambda x: sp.expn(1, x), lambda x: -np.exp(-x) / x],
        ),
        "fresnel_c": (
            lambda t: special.fresnel(t)[1],
            [
                lambda x: np.cos(np.pi * x * x / 2),
                lambda x: -np.pi * x * np.sin(np.pi * x * x / 2),
                lambda x: (
                    -np.pi * np.sin(np.pi * x * x / 2)
                    - (np.pi * x) ** 2 * np.cos(np.pi * x * x / 2)
                ),
            ],
        ),
        "dawsn": (
            special.dawsn,
            [
                lambda x: 1 - 2 * x * sp.dawsn(x),
                lambda x: -2 * sp.dawsn(x) - 2 * x * (1 - 2 * x * sp.dawsn(x)),
                lambda x: (4 * x * x - 4) + (12 * x - 8 * x**3) * sp.dawsn(x) - 0 * x,
            ],
        ),
        "erfi": (
            special.erfi,
            [
                lambda x: 2 / np.sqrt(np.pi) * np.exp(x * x),
                lambda x: 4 * x / np.sqrt(np.pi) * np.exp(x * x),
                lambda x: (4 + 8 * x * x) / np.sqrt(np.pi) * np.exp(x * x),
            ],
        ),
        "spence": (
            special.spence,
            [
                lambda z: np.log(z) / (1 - z),
                lambda z: (1 / z) / (1 - z) + np.log(z) / (1 - z) ** 2,
                lambda z: (
                    -1 / (z * z * (1 - z)) + 2 / (z * (1 - z) ** 2) + 2 * np.log(z) / (1 - z) ** 3
                ),
            ],
        ),
    }


@pytest.mark.parametrize("name", list(_integrands()))
def test_derivatives_to_the_third_order(name):
    fn, expected = _integrands()[name]
    x = np.array([0.35, 0.8, 1.6, 3.2])
    for d, e in zip(derivatives(fn, x, 3), expected, strict=True):
        np.testing.assert_allclose(d, e(x), rtol=1e-9, atol=1e-13)
    # the third against finite differences of the second
    h = 1e-5
    plus, minus = derivatives(fn, x + h, 2)[1], derivatives(fn, x - h, 2)[1]
    np.testing.assert_allclose(derivatives(fn, x, 3)[2], (plus - minus) / (2 * h), rtol=1e-6)


def test_removable_singularities_are_exact_at_every_order():
    # Si' = sin(x)/x = 1 - x**2/6 + x**4/120: 1, 0, -1/3 at 0; Shi' likewise with + signs
    si = [d[0] for d in derivatives(lambda t: special.sici(t)[0], [0.0], 4)]
    np.testing.assert_allclose(si, [1.0, 0.0, -1 / 3, 0.0], atol=1e-15)
    shi = [d[0] for d in derivatives(lambda t: special.shichi(t)[0], [0.0], 4)]
    np.testing.assert_allclose(shi, [1.0, 0.0, 1 / 3, 0.0], atol=1e-15)
    # spence'(z) = log(z)/(1-z) = -1 + u/2 - u**2/3 + ... at u = z - 1: -1, 1/2, -2/3 at z = 1
    sp1 = [d[0] for d in derivatives(special.spence, [1.0], 3)]
    np.testing.assert_allclose(sp1, [-1.0, 0.5, -2 / 3], rtol=1e-14)
    # and across the switch to the series (|z - 1| = 0.1), continuously
    z = np.array([0.9 - 1e-9, 0.9 + 1e-9, 1.1 - 1e-9, 1.1 + 1e-9])
    first, second = derivatives(special.spence, z, 2)
    np.testing.assert_allclose(first, np.log(z) / (1 - z), rtol=1e-13)
    expected = (1 / z) / (1 - z) + np.log(z) / (1 - z) ** 2
    np.testing.assert_allclose(second, expected, rtol=1e-11)


def test_poles_and_domains():
    x = dualad.tensor([0.0])
    assert special.expi(x).item() == -np.inf
    assert derivatives(special.expi, [0.0], 1)[0][0] == np.inf
    assert special.exp1(x).item() == np.inf
    assert [d[0] for d in derivatives(special.exp1, [0.0], 2)] == [-np.inf, np.inf]
    for fn in (lambda t: special.sici(t)[1], lambda t: special.shichi(t)[1]):
        assert fn(x).item() == -np.inf
        assert derivatives(fn, [0.0], 1)[0][0] == np.inf
    assert special.spence(x).item() == pytest.approx(math.pi**2 / 6)
    assert derivatives(special.spence, [0.0], 1)[0][0] == -np.inf
    # E_n(0) = 1/(n-1) for n >= 2; its derivative -E_{n-1}(0)
    assert special.expn(3, x).item() == 0.5
    assert [d[0] for d in derivatives(lambda t: special.expn(3, t), [0.0], 2)] == [-1.0, np.inf]
    # nan below the real domain, derivatives too
    for fn in (special.exp1, special.spence, lambda t: special.expn(2, t)):
        assert np.isnan(fn(dualad.tensor([-1.0])).item())
        assert np.isnan(derivatives(fn, [-1.0], 1)[0][0])


def test_expn_order_is_a_static_integer():
    x = dualad.tensor([0.5, 2.0])
    for n in (2, np.int64(2), 2.0, dualad.tensor(2)):
        np.testing.assert_allclose(special.expn(n, x).numpy(), sp.expn(2, x.numpy()))
    for bad in (-1, 1.5, "2"):
        with pytest.raises(ValueError, match=r"dualad\.special\.expn: n must be"):
            special.expn(bad, x)
    with pytest.raises(NotImplementedError, match=r"dualad\.special\.expn: n"):
        special.expn(dualad.tensor(2.0, requires_grad=True), x)


def test_real_only_functions_reject_complex():
    for name in ("expi", "exp1", "sici", "shichi"):  # (spence takes complex z)
        with pytest.raises(TypeError, match="not supported for complex"):
            getattr(special, name)(dualad.tensor([1.0 + 1j]))
