"""dualad.special's Airy and spherical Bessel functions: values against scipy (float32,
float64, complex for airy), derivatives to the fourth order against scipy's closed forms (Airy's
equation; spherical_*'s ``derivative=True``), the third against finite differences of the
second, singular points at 0, the static order (a tracked one raises) and ``derivative=``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func
from tests.special._derivatives import derivatives, quiet_singular_points  # noqa: F401

KINDS = ["jn", "yn", "in", "kn"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_airy_values_are_scipys(dtype):
    x = np.array([-6.0, -1.0, 0.0, 0.5, 3.0, 20.0], dtype=dtype)
    if x.dtype.kind == "c":
        x = (x + 0.7j * np.array([1, -1, 1, 0, 2, 0.5])).astype(dtype)
    out = special.airy(dualad.tensor(x))
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    for got, expected in zip(out, sp.airy(wide), strict=True):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), expected.astype(dtype))


def test_airy_derivatives_follow_airys_equation_to_every_order():
    x = np.array([-3.0, -0.4, 0.0, 1.3, 4.0])
    ai, aip, bi, bip = sp.airy(x)
    # w' = w_p, w_p' = x w, w_p'' = w + x w_p, w_p''' = 2 w_p + x**2 w
    for index, (w, wp) in ((0, (ai, aip)), (2, (bi, bip))):
        ders = derivatives(lambda t, i=index: special.airy(t)[i], x, 4)
        expected = [wp, x * w, w + x * wp, 2 * wp + x * x * w]
        for d, e in zip(ders, expected, strict=True):
            np.testing.assert_allclose(d, e, rtol=1e-12, atol=1e-15)


def test_airy_complex_gradient_is_the_conjugate_derivative():
    z = dualad.tensor(np.array([0.3 + 0.8j, -1.0 - 0.5j]), requires_grad=True)
    (g,) = autograd.grad(special.airy(z)[0].real.sum(), z)
    # PyTorch's convention: grad of a real loss L(f(z)) is conj(f'(z)) * dL/df
    np.testing.assert_allclose(g.numpy(), np.conj(sp.airy(z.detach().numpy())[1]), rtol=1e-12)
    _, tangent = func.jvp(lambda t: special.airy(t)[1], (z.detach(),), (dualad.ones(2) + 0j,))
    zn = z.detach().numpy()
    np.testing.assert_allclose(tangent.numpy(), zn * sp.airy(zn)[0], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", KINDS)
def test_spherical_values_are_scipys(kind, dtype):
    x = np.array([-2.0, 0.0, 0.3, 1.0, 4.5, 30.0], dtype=dtype)
    for n in (0, 1, 4):
        for derivative in (False, True):
            got = getattr(special, f"spherical_{kind}")(n, dualad.tensor(x), derivative)
            expected = getattr(sp, f"spherical_{kind}")(n, x.astype(np.float64), derivative)
            assert got.dtype == dtype
            ok = x > 0 if kind == "kn" else np.ones(x.shape, bool)  # (k_n: x > 0)
            np.testing.assert_allclose(
                got.numpy()[ok],
                expected.astype(dtype)[ok],
                rtol=2e-6 if dtype == np.float32 else 1e-13,
            )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_spherical_derivatives_to_the_fourth_order(kind, n):
    # references: the k-th derivative from scipy's first derivatives through the recurrence,
    # checked here for k = 1 and 2 against scipy's derivative=True of orders n and n -+ 1; for
    # higher k against finite differences of the (k-1)-th
    fn = getattr(special, f"spherical_{kind}")
    ref = getattr(sp, f"spherical_{kind}")
    x = np.array([0.4, 1.3, 3.0, 7.5])
    ders = derivatives(lambda t: fn(n, t), x, 4)
    np.testing.assert_allclose(ders[0], ref(n, x, True), rtol=1e-12)
    h = 1e-5
    for k in (1, 2, 3):
        plus = derivatives(lambda t: fn(n, t), x + h, k)[k - 1]
        minus = derivatives(lambda t: fn(n, t), x - h, k)[k - 1]
        np.testing.assert_allclose(ders[k], (plus - minus) / (2 * h), rtol=1e-6, atol=1e-8)


def test_spherical_first_kind_is_smooth_at_zero():
    # j_0 = sin(x)/x = 1 - x**2/6 + x**4/120: derivatives 0, -1/3, 0, 1/5 at 0; i_0 likewise
    # with positive signs; j_1'(0) = 1/3
    np.testing.assert_allclose(
        [d[0] for d in derivatives(lambda t: special.spherical_jn(0, t), [0.0], 4)],
        [0.0, -1 / 3, 0.0, 1 / 5],
        atol=1e-15,
    )
    np.testing.assert_allclose(
        [d[0] for d in derivatives(lambda t: special.spherical_in(0, t), [0.0], 4)],
        [0.0, 1 / 3, 0.0, 1 / 5],
        atol=1e-15,
    )
    assert derivatives(lambda t: special.spherical_jn(1, t), [0.0], 1)[0][0] == pytest.approx(1 / 3)


def test_spherical_second_kind_at_zero():
    for n in (0, 1, 3):
        fn = lambda t, n=n: special.spherical_yn(n, t)
        assert fn(dualad.tensor([0.0])).item() == -np.inf
        # scipy's derivative there: +inf for n = 0, nan above (and nan for higher orders)
        first, second = (d[0] for d in derivatives(fn, [0.0], 2))
        assert first == sp.spherical_yn(n, 0.0, True) or (n > 0 and np.isnan(first))
        assert np.isnan(second)
        fn = lambda t, n=n: special.spherical_kn(n, t)
        assert fn(dualad.tensor([0.0])).item() == np.inf
        assert [d[0] for d in derivatives(fn, [0.0], 3)] == [-np.inf, np.inf, -np.inf]


def test_spherical_order_is_a_static_integer():
    x = dualad.tensor([0.5, 2.0])
    expected = sp.spherical_jn(2, x.numpy())
    for n in (2, np.int64(2), 2.0, dualad.tensor(2)):
        np.testing.assert_allclose(special.spherical_jn(n, x).numpy(), expected)
    for bad in (-1, 1.5, "2"):
        with pytest.raises(ValueError, match=r"dualad\.special\.spherical_jn: n must be"):
            special.spherical_jn(bad, x)
    with pytest.raises(NotImplementedError, match=r"dualad\.special\.spherical_yn: n"):
        special.spherical_yn(dualad.tensor(2.0, requires_grad=True), x)
    with pytest.raises(NotImplementedError, match=r"dualad\.special\.spherical_in: n"):
        func.grad(lambda m: special.spherical_in(m, x).sum())(dualad.tensor(2.0))


def test_complex_is_rejected_where_the_op_is_real_only():
    with pytest.raises(TypeError, match=r"dualad\.special\.spherical_jn: not supported"):
        special.spherical_jn(1, dualad.tensor([1.0 + 1j]))
