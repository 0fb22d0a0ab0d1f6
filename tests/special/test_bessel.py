"""The Bessel functions of dualad.special (j0 ... k1e, jv jve yv yve iv ive kv kve): values
against scipy in float32 and float64, derivatives to the fourth order against scipy's closed
forms (jvp, yvp, ivp, kvp), the third against finite differences of the second, the
singular points at 0 and the nan outside the real domain, the scaled functions' asymptotic
branch, and orders without a derivative (a tracked one raises).

The registry tests (dualad/testing/opdb/special_functions.py) check first and second order,
forward mode and vmap against finite differences and loops for every sample.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func, fwd
from tests.special._derivatives import derivatives, quiet_singular_points  # noqa: F401

UNARY = ["j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e"]
ORDERED = ["jv", "jve", "yv", "yve", "iv", "ive", "kv", "kve"]
POINTS = np.array([-3.5, -1.0, 0.0, 0.25, 1.0, 2.5, 7.0, 30.0, 120.0])

# the n-th derivative of each function (n >= 1), from scipy's closed forms
_N_TH = {
    "jv": sp.jvp,
    "jve": sp.jvp,
    "yv": sp.yvp,
    "yve": sp.yvp,
    "iv": sp.ivp,
    "kv": sp.kvp,
}


def _nth(name, v, x, n):
    """The n-th derivative of ``special.<name>(v, .)`` at x (> 0 for the scaled ones)."""
    if name in _N_TH:
        return _N_TH[name](v, x, n)
    # Leibniz's rule for exp(-+x) C_v(x)
    base, sign = (sp.ivp, -1.0) if name == "ive" else (sp.kvp, 1.0)
    total = sum(sp.comb(n, k) * sign ** (n - k) * base(v, x, k) for k in range(n + 1))
    return total * np.exp(sign * x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_are_scipys(name, dtype):
    x = POINTS.astype(dtype)
    out = getattr(special, name)(dualad.tensor(x))
    assert out.dtype == dtype
    expected = getattr(sp, name)(x.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(out.numpy(), expected)  # the same values, nan and inf too


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ORDERED)
def test_ordered_values_are_scipys_with_broadcast_orders(name, dtype):
    v = np.array([[-1.5], [0.0], [0.5], [2.0], [3.7]], dtype=dtype)
    x = POINTS.astype(dtype)
    out = getattr(special, name)(v, dualad.tensor(x))
    assert out.shape == (5, POINTS.size) and out.dtype == dtype
    expected = getattr(sp, name)(v.astype(np.float64), x.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(out.numpy(), expected)
    # a number order, a NumPy scalar and a tensor of orders agree
    for order in (2.0, np.float64(2.0), dualad.tensor(np.asarray(2.0, dtype))):
        got = getattr(special, name)(order, dualad.tensor(x)).numpy()
        np.testing.assert_array_equal(
            got, getattr(sp, name)(2.0, x.astype(np.float64)).astype(dtype)
        )


@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("v", [0.0, 1.0, 0.4, 2.5, -1.3])
def test_derivatives_to_the_fourth_order_are_scipys(name, v):
    x = np.array([0.3, 1.1, 2.5, 6.0, 13.0])
    for k, d in enumerate(derivatives(lambda t: getattr(special, name)(v, t), x, 4)):
        np.testing.assert_allclose(d, _nth(name, v, x, k + 1), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", UNARY)
def test_unary_derivatives_to_the_fourth_order_are_scipys(name):
    v = float(name[1])
    family = {"j": "jv", "y": "yv", "k": "kve" if name.endswith("e") else "kv"}[name[0]]
    x = np.array([0.3, 1.1, 2.5, 6.0, 13.0])
    for k, d in enumerate(derivatives(getattr(special, name), x, 4)):
        np.testing.assert_allclose(d, _nth(family, v, x, k + 1), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", ["j1", "y1", "k1e", "jv", "yv", "iv", "ive", "kve"])
def test_third_derivative_matches_finite_differences_of_the_second(name):
    fn = getattr(special, name)
    if name in ORDERED:
        fn = lambda t, fn=fn: fn(1.7, t)
    x = np.array([0.6, 1.9, 4.4])
    h = 1e-5
    third = derivatives(fn, x, 3)[2]
    plus, minus = derivatives(fn, x + h, 2)[1], derivatives(fn, x - h, 2)[1]
    np.testing.assert_allclose(third, (plus - minus) / (2 * h), rtol=1e-6, atol=1e-9)


def test_negative_integer_orders_and_negative_x_of_integer_orders():
    x = np.array([-4.0, -1.5, 0.7, 3.0])
    for name in ("jv", "iv"):
        for v in (-2.0, 3.0):
            first, second = derivatives(lambda t, v=v: getattr(special, name)(v, t), x, 2)  # noqa: B023
            np.testing.assert_allclose(first, _nth(name, v, x, 1), rtol=1e-10)
            np.testing.assert_allclose(second, _nth(name, v, x, 2), rtol=1e-10)
    h = 1e-6
    (d,) = derivatives(lambda t: special.ive(3.0, t), -np.abs(x), 1)
    fd = (sp.ive(3.0, -np.abs(x) + h) - sp.ive(3.0, -np.abs(x) - h)) / (2 * h)
    np.testing.assert_allclose(d, fd, rtol=1e-7)


# ---------------------------------------------------------------------------------------------
# singular points and the real domain


def test_second_kind_at_zero_is_minus_inf_with_the_polesderivatives():
    # Y_v(0) = -inf; Y_v'(0) = +inf, Y_v''(0) = -inf, Y_v'''(0) = +inf (the pole -x**(-v))
    for fn in (special.y0, special.y1, lambda t: special.yv(1.5, t)):
        assert fn(dualad.tensor([0.0])).item() == -np.inf
        ders = [d[0] for d in derivatives(fn, [0.0], 3)]
        assert ders == [np.inf, -np.inf, np.inf]
    # scipy's yve is nan at 0, and so are its derivatives
    assert np.isnan(special.yve(2.0, dualad.tensor([0.0])).item())
    assert np.isnan(derivatives(lambda t: special.yve(2.0, t), [0.0], 1)[0]).all()
    # a tensor order (and -0.0, the same point)
    v = dualad.tensor([0.5, 1.0, 3.0])
    (d,) = autograd.grad(
        special.yv(v, x := dualad.tensor([-0.0, 0.0, 0.0], requires_grad=True)).sum(), x
    )
    assert np.all(d.numpy() == np.inf)


def test_modified_second_kind_at_zero_is_inf_with_alternatingderivatives():
    for fn in (
        special.k0,
        special.k1,
        special.k0e,
        special.k1e,
        lambda t: special.kv(0.5, t),
        lambda t: special.kve(2.5, t),
        lambda t: special.kve(dualad.tensor(-1.5), t),
    ):
        assert fn(dualad.tensor([0.0])).item() == np.inf
        ders = [d[0] for d in derivatives(fn, [0.0], 3)]
        assert ders == [-np.inf, np.inf, -np.inf]


def test_outside_the_real_domain_values_and_derivatives_are_nan():
    x = [-1.0, -0.5]
    for fn in (
        special.y0,
        special.y1,
        special.k0,
        special.k1e,
        lambda t: special.yv(2.0, t),
        lambda t: special.kve(0.5, t),
        lambda t: special.jv(0.5, t),
        lambda t: special.iv(1.5, t),
        lambda t: special.ive(1.5, t),
    ):
        assert np.isnan(fn(dualad.tensor(x)).numpy()).all()
        for d in derivatives(fn, x, 2):
            assert np.isnan(d).all()
    # beyond the asymptotic limit too (a non-integer order of ive at x < -50 is nan)
    (d,) = derivatives(lambda t: special.ive(0.5, t), [-80.0], 1)
    assert np.isnan(d).all()


def test_first_kind_near_zero():
    # J_v'(0) is infinite for 0 < v < 1, 1/2 for v = 1, 0 for v > 1; J_0'(0) = 0
    ders = derivatives(lambda t: special.jv(dualad.tensor([0.5, 1.0, 2.0]), t), [0.0] * 3, 1)
    assert list(ders[0]) == [np.inf, 0.5, 0.0]
    first, second = derivatives(special.j0, [0.0], 2)
    assert first[0] == 0.0 and second[0] == -0.5


def test_ive_derivative_at_zero_is_the_mean_of_the_one_sided_ones():
    # ive(0, x) = i0e: the kink of exp(-|x|); ive(1, x): I_1'(0) = 1/2
    ders = derivatives(lambda t: special.ive(dualad.tensor([0.0, 1.0]), t), [0.0, 0.0], 1)
    np.testing.assert_array_equal(ders[0], [0.0, 0.5])


# ---------------------------------------------------------------------------------------------
# the scaled functions far out, where their derivative switches to the asymptotic series


@pytest.mark.parametrize("name, v", [("ive", 0.5), ("ive", 2.0), ("kve", 0.0), ("kve", 1.5)])
def test_scaled_derivatives_far_out_are_accurate(name, v):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = np.array([45.0, 55.0, 80.0, 400.0, 1e4, 1e6])
    if name == "ive":
        exact = [mpmath.diff(lambda t: mpmath.exp(-t) * mpmath.besseli(v, t), t) for t in x]
    else:
        exact = [mpmath.diff(lambda t: mpmath.exp(t) * mpmath.besselk(v, t), t) for t in x]
    first, second = derivatives(lambda t: getattr(special, name)(v, t), x, 2)
    np.testing.assert_allclose(first, np.array(exact, dtype=float), rtol=1e-13)
    assert np.all(np.isfinite(second))
    # and float32 stays float32, accurate to float32
    (d32,) = derivatives(lambda t: getattr(special, name)(v, t), x, 1, np.float32)
    assert d32.dtype == np.float32
    np.testing.assert_allclose(d32, np.array(exact, dtype=float), rtol=1e-5)


def test_k0e_k1e_far_out_match_kve():
    x = np.array([40.0, 70.0, 300.0])
    for name, v in (("k0e", 0.0), ("k1e", 1.0)):
        for a, b in zip(
            derivatives(getattr(special, name), x, 3),
            derivatives(lambda t, v=v: special.kve(v, t), x, 3),
            strict=True,
        ):
            np.testing.assert_allclose(a, b, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# orders have no derivative


@pytest.mark.parametrize("name", ORDERED)
def test_a_tracked_order_raises(name):
    fn = getattr(special, name)
    x = dualad.tensor([0.5, 2.0])
    v = dualad.tensor([1.5, 2.5], requires_grad=True)
    with pytest.raises(NotImplementedError, match=rf"dualad\.special\.{name}.*respect to v"):
        autograd.grad(fn(v, x).sum(), v)
    with pytest.raises(NotImplementedError, match=rf"dualad\.special\.{name}"):
        func.grad(lambda o: fn(o, x).sum())(dualad.tensor([1.5, 2.5]))
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([1.5, 2.5]), dualad.ones(2))
        with pytest.raises(NotImplementedError, match=rf"dualad\.special\.{name}"):
            fn(dual, x)
    # a tracked order whose derivative is not asked for is fine
    xg = dualad.tensor([0.5, 2.0], requires_grad=True)
    (g,) = autograd.grad(fn(v, xg).sum(), xg)
    np.testing.assert_allclose(g.numpy(), _nth(name, v.detach().numpy(), xg.detach().numpy(), 1))


def test_vmap_over_orders_and_arguments():
    v = dualad.tensor([0.5, 1.5, 2.5])
    x = dualad.tensor([0.7, 1.3, 2.9])
    grad_x = func.vmap(func.grad(lambda o, t: special.jv(o, t), argnums=1))(v, x)
    np.testing.assert_allclose(grad_x.numpy(), sp.jvp(v.numpy(), x.numpy()), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["jv", "yv", "iv", "kv"])
def test_complex_arguments_values_and_holomorphic_derivatives(name, dtype):
    z = np.array([1.0 + 0.5j, 2.0 - 1.0j, 0.3 + 2.0j, -1.5 + 0.2j]).astype(dtype)
    for v in (0, 1, 1.5, -2.3):
        got = getattr(special, name)(v, dualad.tensor(z))
        assert got.dtype == dtype
        expected = getattr(sp, name)(v, z.astype(np.complex128)).astype(dtype)
        np.testing.assert_array_equal(got.numpy(), expected)
        if dtype == np.complex64:
            continue
        derivative = _N_TH[name](v, z, 1)
        _, tangent = func.jvp(
            lambda t, v=v: getattr(special, name)(v, t), (dualad.tensor(z),), (dualad.ones(4) + 0j,)
        )
        np.testing.assert_allclose(tangent.numpy(), derivative, rtol=1e-12)
        zt = dualad.tensor(z, requires_grad=True)
        (g,) = autograd.grad(getattr(special, name)(v, zt).real.sum(), zt)
        np.testing.assert_allclose(g.numpy(), np.conj(derivative), rtol=1e-12)  # PyTorch's


def test_bad_orders_and_complex_arguments_raise():
    with pytest.raises(TypeError, match="order"):
        special.jv("1", dualad.tensor([1.0]))
    with pytest.raises(TypeError, match=r"dualad\.special\.j0: not supported for complex"):
        special.j0(dualad.tensor([1.0 + 1j]))
    for name in ("jve", "yve", "ive", "kve"):
        with pytest.raises(TypeError, match=rf"dualad\.special\.{name}: not supported for complex"):
            getattr(special, name)(1.0, dualad.tensor([1.0 + 1j]))
    with pytest.raises(TypeError, match=r"dualad\.special\.jv: not supported for complex"):
        special.jv(dualad.tensor([1.0 + 1j]), dualad.tensor([1.0]))  # the order is real
