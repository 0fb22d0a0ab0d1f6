"""dualad.special's elliptic integrals and Jacobi functions: values against scipy (float32,
float64), derivatives against closed forms and finite differences (the third against finite
differences of the second), the series rules near m = 0 (exact at m = 0 at every order), the
singular points at m = 1 and p = 0, and ellipj's m without a derivative.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func, fwd
from tests.special._derivatives import derivatives, quiet_singular_points  # noqa: F401

M = np.array([-3.0, -0.5, -0.05, 0.0, 0.02, 0.3, 0.9, 0.999, 1.0, 1.5])
PHI = np.array([-4.0, -1.0, 0.0, 0.4, 1.2, 2.0, 7.0, 0.8, 1.1, 0.3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_are_scipys(dtype):
    m, phi = M.astype(dtype), PHI.astype(dtype)
    wide_m, wide_phi = m.astype(np.float64), phi.astype(np.float64)
    for name in ("ellipk", "ellipe", "ellipkm1"):
        got = getattr(special, name)(dualad.tensor(m))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), getattr(sp, name)(wide_m).astype(dtype))
    for name in ("ellipkinc", "ellipeinc"):
        got = getattr(special, name)(dualad.tensor(phi), dualad.tensor(m))
        expected = getattr(sp, name)(wide_phi, wide_m).astype(dtype)
        np.testing.assert_array_equal(got.numpy(), expected)
    got = special.ellipj(dualad.tensor(phi), dualad.tensor(m))
    for g, e in zip(got, sp.ellipj(wide_phi, wide_m), strict=True):
        np.testing.assert_array_equal(g.numpy(), e.astype(dtype))


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_complete_integrals_derivatives():
    m = np.array([-2.0, -0.3, -0.09, -1e-3, 0.0, 1e-3, 0.09, 0.11, 0.5, 0.95])
    k, e = sp.ellipk(m), sp.ellipe(m)
    with np.errstate(invalid="ignore", divide="ignore"):
        dk = np.where(m == 0, np.pi / 8, (e - (1 - m) * k) / (2 * m * (1 - m)))
        de = np.where(m == 0, -np.pi / 8, (e - k) / (2 * m))
    first, second = derivatives(special.ellipk, m, 2)
    np.testing.assert_allclose(first, dk, rtol=1e-7)  # (closed form cancels near 0)
    np.testing.assert_allclose(
        second, _fd(lambda t: derivatives(special.ellipk, t, 1)[0], m), rtol=1e-6
    )
    first, second = derivatives(special.ellipe, m, 2)
    np.testing.assert_allclose(first, de, rtol=1e-7)
    np.testing.assert_allclose(
        second, _fd(lambda t: derivatives(special.ellipe, t, 1)[0], m), rtol=1e-6
    )
    # ellipkm1(p) = K(1 - p)
    p = 1 - m
    np.testing.assert_allclose(derivatives(special.ellipkm1, p, 1)[0], -dk, rtol=1e-7)


def test_series_at_m_zero_is_exact_to_every_order():
    # K = pi/2 (1 + m/4 + 9 m**2/64 + 25 m**3/256 ...): K^(k)(0) = pi/2 k! c_k**2
    c2 = [1.0, 1 / 4, 9 / 64, 25 / 256, 1225 / 16384]
    ders = [d[0] for d in derivatives(special.ellipk, [0.0], 4)]
    expected = [math.pi / 2 * math.factorial(k) * c2[k] for k in range(1, 5)]
    np.testing.assert_allclose(ders, expected, rtol=1e-13)
    ders = [d[0] for d in derivatives(special.ellipe, [0.0], 4)]
    expected = [math.pi / 2 * math.factorial(k) * c2[k] / (1 - 2 * k) for k in range(1, 5)]
    np.testing.assert_allclose(ders, expected, rtol=1e-13)


@pytest.mark.parametrize("name", ["ellipkinc", "ellipeinc"])
def test_incomplete_integrals_partials(name):
    fn = getattr(special, name)
    ref = getattr(sp, name)
    phi = np.array([-3.0, -0.7, 0.3, 1.3, 2.9, 5.0, 0.6, 1.0])
    m = np.array([-0.8, 0.5, -0.05, 0.0, 0.07, 0.9, 0.11, 0.3])
    p, q = dualad.tensor(phi, requires_grad=True), dualad.tensor(m, requires_grad=True)
    gp, gm = autograd.grad(fn(p, q).sum(), (p, q))
    delta = 1 - m * np.sin(phi) ** 2
    np.testing.assert_allclose(gp.numpy(), delta ** (-0.5 if name == "ellipkinc" else 0.5))
    np.testing.assert_allclose(gm.numpy(), _fd(lambda t: ref(phi, t), m), rtol=1e-7, atol=1e-9)
    # second order, mixed included: the gradient's own partials against finite differences
    for wrt in (0, 1):

        def grad_m(a, b):
            ta = dualad.tensor(a, requires_grad=True)
            tb = dualad.tensor(b, requires_grad=True)
            return autograd.grad(fn(ta, tb).sum(), tb)[0].numpy()

        p, q = dualad.tensor(phi, requires_grad=True), dualad.tensor(m, requires_grad=True)
        (gm,) = autograd.grad(fn(p, q).sum(), q, create_graph=True)
        second = autograd.grad(gm.sum(), (p, q)[wrt])[0].numpy()
        h = 1e-5
        if wrt == 0:
            fd = (grad_m(phi + h, m) - grad_m(phi - h, m)) / (2 * h)
        else:
            fd = (grad_m(phi, m + h) - grad_m(phi, m - h)) / (2 * h)
        np.testing.assert_allclose(second, fd, rtol=1e-5, atol=1e-8)


def test_third_derivative_in_m_matches_finite_differences():
    m = np.array([-0.4, 0.0, 0.05, 0.3, 0.8])
    h = 1e-4
    for fn in (special.ellipk, special.ellipe, lambda t: special.ellipkinc(1.1, t)):
        third = derivatives(fn, m, 3)[2]
        fd = (derivatives(fn, m + h, 2)[1] - derivatives(fn, m - h, 2)[1]) / (2 * h)
        np.testing.assert_allclose(third, fd, rtol=1e-5, atol=1e-8)


def test_singular_points():
    assert special.ellipk(dualad.tensor([1.0])).item() == np.inf
    assert [d[0] for d in derivatives(special.ellipk, [1.0], 3)] == [np.inf] * 3
    assert special.ellipkm1(dualad.tensor([0.0])).item() == np.inf
    assert derivatives(special.ellipkm1, [0.0], 1)[0][0] == -np.inf
    assert special.ellipe(dualad.tensor([1.0])).item() == 1.0
    assert derivatives(special.ellipe, [1.0], 1)[0][0] == -np.inf
    for fn in (special.ellipk, special.ellipe):
        assert np.isnan(fn(dualad.tensor([1.5])).item())
        assert np.isnan(derivatives(fn, [1.5], 1)[0][0])


def test_jacobi_functions_derivatives_in_u():
    u = np.array([-2.5, -0.3, 0.0, 0.8, 3.1])
    m = 0.6
    sn, cn, dn, _ = sp.ellipj(u, m)
    expected = [cn * dn, -sn * dn, -m * sn * cn, dn]
    for index, e in enumerate(expected):
        first, second = derivatives(lambda t, i=index: special.ellipj(t, m)[i], u, 2)
        np.testing.assert_allclose(first, e, rtol=1e-12, atol=1e-15)
        fd = _fd(lambda t, i=index: sp.ellipj(t, m)[i], u, 1e-5)
        np.testing.assert_allclose(first, fd, rtol=1e-7, atol=1e-9)
        fd2 = _fd(lambda t, i=index: derivatives(lambda s: special.ellipj(s, m)[i], t, 1)[0], u)
        np.testing.assert_allclose(second, fd2, rtol=1e-6, atol=1e-8)


def test_ellipj_m_has_no_derivative():
    u = dualad.tensor([0.3, 1.0])
    m = dualad.tensor([0.2, 0.5], requires_grad=True)
    with pytest.raises(NotImplementedError, match=r"dualad\.special\.ellipj.*respect to m"):
        autograd.grad(special.ellipj(u, m)[0].sum(), m)
    with pytest.raises(NotImplementedError, match=r"dualad\.special\.ellipj"):
        func.grad(lambda t: special.ellipj(u, t)[2].sum())(dualad.tensor([0.2, 0.5]))
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([0.2, 0.5]), dualad.ones(2))
        with pytest.raises(NotImplementedError, match=r"dualad\.special\.ellipj"):
            special.ellipj(u, dual)
    # vmap over m as a constant is fine
    out = func.vmap(lambda t: special.ellipj(u, t)[0])(dualad.tensor([0.2, 0.5]))
    np.testing.assert_allclose(out.numpy(), sp.ellipj(u.numpy(), np.array([[0.2], [0.5]]))[0])


def test_complex_is_rejected():
    with pytest.raises(TypeError, match=r"dualad\.special\.ellipk: not supported for complex"):
        special.ellipk(dualad.tensor([0.5 + 0.1j]))
