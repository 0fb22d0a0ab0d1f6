"""Derivatives of dualad.special against closed forms from scipy.special, at every order the
rules chain to (first to fourth), in reverse and forward mode, under vmap; and where the naive
formula would cancel or divide 0 by 0 (erfcx for large x, i1 at 0, log_ndtr in the far tail).

The registry tests (from dualad/testing/opdb/special.py) check first and second order against
finite differences for every sample; here the references are exact formulas.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func


def _derivatives(fn, x, order):
    """The first ``order`` derivatives of elementwise ``fn`` at the points ``x`` (float64),
    by repeated reverse mode."""
    x = dualad.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    out, value = [], fn(x)
    for k in range(order):
        (value,) = autograd.grad(value.sum(), x, create_graph=k + 1 < order)
        out.append(value.detach().numpy())
    return out


def _assert_close(actual, expected, rtol=1e-12, atol=0.0):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


X_POSITIVE = np.array([0.3, 0.9, 2.5, 7.0, 40.0])
X_REAL = np.array([-3.7, -1.2, -0.4, 0.3, 1.5, 6.0])


def test_gammaln_digamma_polygamma_chain_to_every_order():
    ders = _derivatives(special.gammaln, X_POSITIVE, 4)
    for k, d in enumerate(ders):
        _assert_close(d, sp.polygamma(k, X_POSITIVE))
    for n in (0, 1, 3):
        ders = _derivatives(lambda x, n=n: special.polygamma(n, x), X_POSITIVE, 2)
        for k, d in enumerate(ders):
            _assert_close(d, sp.polygamma(n + k + 1, X_POSITIVE), rtol=1e-11)
    # between the poles too (log|Gamma|)
    x = np.array([-2.5, -1.3, -0.7])
    _assert_close(_derivatives(special.gammaln, x, 2)[1], sp.polygamma(1, x), rtol=1e-11)


def test_multigammaln_derivative_is_a_sum_of_digammas():
    a = np.array([2.1, 3.0, 9.5])
    for d in (1, 2, 4):
        first, second = _derivatives(lambda t, d=d: special.multigammaln(t, d), a, 2)
        _assert_close(first, sum(sp.psi(a - j / 2) for j in range(d)))
        _assert_close(second, sum(sp.polygamma(1, a - j / 2) for j in range(d)))


def test_betaln_partials_both_arguments():
    a = dualad.tensor([0.5, 2.0, 30.0], requires_grad=True)
    b = dualad.tensor([1.5, 0.25, 4.0], requires_grad=True)
    ga, gb = autograd.grad(special.betaln(a, b).sum(), (a, b))
    an, bn = a.detach().numpy(), b.detach().numpy()
    _assert_close(ga.numpy(), sp.psi(an) - sp.psi(an + bn))
    _assert_close(gb.numpy(), sp.psi(bn) - sp.psi(an + bn))
    # forward mode, both tangents: the sum of the partials times each
    _, tangent = func.jvp(
        special.betaln, (a.detach(), b.detach()), (dualad.ones(3), dualad.ones(3))
    )
    _assert_close(tangent.numpy(), ga.numpy() + gb.numpy())
    # broadcasting: a scalar a, the gradient reduced to its shape
    s = dualad.tensor(1.5, requires_grad=True)
    (gs,) = autograd.grad(special.betaln(s, b.detach()).sum(), s)
    _assert_close(gs.numpy(), np.sum(sp.psi(1.5) - sp.psi(1.5 + bn)))


def test_gammainc_derivative_in_x_is_the_gamma_density():
    a = np.array([0.5, 1.0, 2.5, 40.0])
    x = np.array([0.7, 3.0, 1.2, 38.0])
    for fn, sign in ((special.gammainc, 1), (special.gammaincc, -1)):
        first, second = _derivatives(lambda t, fn=fn: fn(dualad.tensor(a), t), x, 2)
        density = np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))
        _assert_close(first, sign * density)
        _assert_close(second, sign * density * ((a - 1) / x - 1), rtol=1e-10)


def test_zeta_derivative_in_q():
    x = dualad.tensor([2.0, 3.5, 7.0])
    q = np.array([0.5, 1.0, 3.0])
    first, second = _derivatives(lambda t: special.zeta(x, t), q, 2)
    xn = x.numpy()
    _assert_close(first, -xn * sp.zeta(xn + 1, q))
    _assert_close(second, xn * (xn + 1) * sp.zeta(xn + 2, q))


def test_bessel_derivatives_match_scipy_ivp_at_every_order_including_0():
    x = np.array([-4.0, -0.6, 0.0, 1e-9, 0.8, 5.0])
    for name, order in (("i0", 0), ("i1", 1)):
        for k, d in enumerate(_derivatives(getattr(special, name), x, 4), start=1):
            _assert_close(d, sp.ivp(order, x, k), rtol=1e-11, atol=1e-15)


def test_scaled_bessel_derivatives_away_from_the_kink():
    x = np.array([-4.0, -0.6, 0.8, 5.0, 300.0])
    for name, order in (("i0e", 0), ("i1e", 1)):
        for k, d in enumerate(_derivatives(getattr(special, name), x, 3), start=1):
            # (e^{-|x|} I)^(k) = e^{-|x|} sum_j C(k, j) (-sign x)^(k-j) I^(j)
            expected = sum(
                math.comb(k, j) * (-np.sign(x)) ** (k - j) * sp.ivp(order, x, j)
                for j in range(k + 1)
            ) * np.exp(-np.abs(x))
            _assert_close(d, expected, rtol=1e-9, atol=1e-15)


def test_erfcx_derivatives_do_not_cancel_for_large_x():
    x = np.array([200.0, 1e3, 1e8, 1e150])
    first, second = _derivatives(special.erfcx, x, 2)
    u = 1 / x**2
    # the asymptotic series (accurate to double precision at these x)
    d1 = -(u - 1.5 * u**2 + 15 / 4 * u**3 - 105 / 8 * u**4) / np.sqrt(np.pi)
    d2 = (2 * u - 6 * u**2 + 22.5 * u**3 - 105 * u**4) / (x * np.sqrt(np.pi))
    _assert_close(first, d1, rtol=1e-14)
    _assert_close(second, d2, rtol=1e-14)
    # and the closed form where it is accurate
    x = np.array([-3.0, 0.0, 2.0, 11.0, 13.0])
    first, second = _derivatives(special.erfcx, x, 2)
    y = sp.erfcx(x)
    _assert_close(first, 2 * x * y - 2 / np.sqrt(np.pi), rtol=1e-12, atol=1e-16)
    _assert_close(second, 2 * y + 2 * x * first, rtol=1e-10, atol=1e-16)


def test_error_function_inverses():
    p = np.array([0.01, 0.3, 1.0, 1.9])
    (d,) = _derivatives(special.erfcinv, p, 1)
    _assert_close(d, -np.sqrt(np.pi) / 2 * np.exp(sp.erfcinv(p) ** 2))
    second = _derivatives(special.erfcinv, p, 2)[1]
    y = sp.erfcinv(p)
    _assert_close(second, 2 * y * d * d)  # (exp(y^2))' = 2 y y' exp(y^2)


def test_normal_distribution_derivatives():
    x = np.array([-30.0, -2.0, 0.0, 1.5, 8.0])
    first, second = _derivatives(special.ndtr, x, 2)
    pdf = np.exp(-(x**2) / 2) / np.sqrt(2 * np.pi)
    _assert_close(first, pdf)
    _assert_close(second, -x * pdf, atol=1e-300)
    p = np.array([1e-10, 0.2, 0.5, 0.99])
    (d,) = _derivatives(special.ndtri, p, 1)
    _assert_close(d, np.sqrt(2 * np.pi) * np.exp(sp.ndtri(p) ** 2 / 2))
    first, second = _derivatives(special.log_ndtr, x, 2)
    ratio = np.exp(-(x**2) / 2 - 0.5 * np.log(2 * np.pi) - sp.log_ndtr(x))
    _assert_close(first, ratio, atol=1e-300)
    _assert_close(second, -ratio * (x + ratio), rtol=1e-10, atol=1e-300)


def test_entropy_derivatives():
    x = np.array([0.2, 1.0, 3.0])
    first, second = _derivatives(special.entr, x, 2)
    _assert_close(first, -(np.log(x) + 1))
    _assert_close(second, -1 / x)
    xs = dualad.tensor(x, requires_grad=True)
    ys = dualad.tensor([0.5, 2.0, 1.0], requires_grad=True)
    yn = ys.detach().numpy()
    for fn, dx, dy in (
        (special.rel_entr, np.log(x / yn) + 1, -x / yn),
        (special.kl_div, np.log(x / yn), 1 - x / yn),
        (special.xlog1py, np.log1p(yn), x / (1 + yn)),
        (special.xlogy, np.log(yn), x / yn),
    ):
        gx, gy = autograd.grad(fn(xs, ys).sum(), (xs, ys))
        _assert_close(gx.numpy(), dx)
        _assert_close(gy.numpy(), dy)


# ---------------------------------------------------------------------------------------------
# forward mode, transforms, vmap


UNARY = ["erfcinv", "erfcx", "gammaln", "digamma", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri",
         "log_ndtr", "entr"]  # fmt: skip


@pytest.mark.parametrize("name", UNARY)
def test_forward_mode_equals_reverse_mode(name):
    fn = getattr(special, name)
    x = np.array([0.15, 0.45, 0.8])
    _, tangent = func.jvp(fn, (dualad.tensor(x),), (dualad.ones(3),))
    (grad,) = _derivatives(fn, x, 1)
    _assert_close(tangent.numpy(), grad)
    # second order: forward over reverse equals reverse over reverse
    hvp = func.jvp(func.grad(lambda t: fn(t).sum()), (dualad.tensor(x),), (dualad.ones(3),))[1]
    _assert_close(hvp.numpy(), _derivatives(fn, x, 2)[1], rtol=1e-10)


def test_vmap_of_grad_of_a_parametrised_function():
    x = dualad.tensor(np.linspace(0.5, 3.0, 6).reshape(2, 3))
    g = func.vmap(func.grad(lambda t: special.polygamma(2, t).sum()))(x)
    _assert_close(g.numpy(), sp.polygamma(3, x.numpy()))
    g = func.vmap(func.grad(lambda t: special.multigammaln(t, 3).sum()))(x + 1)
    _assert_close(g.numpy(), sum(sp.psi(x.numpy() + 1 - j / 2) for j in range(3)))


def test_vmap_over_the_argument_without_a_derivative():
    # gammainc's a and zeta's x batched by vmap (no derivative asked): fine
    a = dualad.tensor([[0.5, 1.5], [2.0, 3.0]])
    x = dualad.tensor([0.7, 1.9])
    out = func.vmap(special.gammainc, in_dims=(0, None))(a, x)
    _assert_close(out.numpy(), sp.gammainc(a.numpy(), x.numpy()))
    g = func.vmap(func.grad(lambda s, t: special.gammainc(s, t).sum(), argnums=1), (0, None))(a, x)
    density = np.exp((a.numpy() - 1) * np.log(x.numpy()) - x.numpy() - sp.gammaln(a.numpy()))
    _assert_close(g.numpy(), density)
    orders = dualad.tensor([2.0, 3.0, 4.5])
    out = func.vmap(special.zeta, in_dims=(0, None))(orders, dualad.tensor(1.5))
    _assert_close(out.numpy(), sp.zeta(orders.numpy(), 1.5))
    out = func.vmap(special.zeta)(orders)
    _assert_close(out.numpy(), sp.zeta(orders.numpy()))


def test_hessian_of_a_log_likelihood_with_special_functions():
    # a gamma-distribution log-likelihood in its shape parameter k: -n gammaln(k) + ...; its
    # second derivative is -n polygamma(1, k)
    data = np.array([0.5, 1.2, 2.2, 3.1])

    def loglik(k):
        return (
            (k - 1) * dualad.log(dualad.tensor(data)).sum() - dualad.tensor(data).sum()
        ) - 4 * special.gammaln(k)

    k = dualad.tensor(1.7)
    h = func.hessian(loglik)(k)
    _assert_close(h.numpy(), -4 * sp.polygamma(1, 1.7))


def test_sinc_derivatives_at_0_are_its_taylor_coefficients_at_every_order():
    # sinc(x) = sum_m (-pi**2 x**2)**m / (2m + 1)!: the k-th derivative at 0 is 0 for odd k and
    # (-pi**2)**(k/2) / (k + 1) for even k (the first-order rule alone used to give 0 for all)
    ders = _derivatives(special.sinc, [0.0], 4)
    expected = [0.0, -(np.pi**2) / 3, 0.0, np.pi**4 / 5]
    for d, e in zip(ders, expected):
        _assert_close(d, [e], atol=1e-15)
    # forward mode too, and next to 0 the formula agrees
    h = func.jacfwd(func.jacfwd(special.sinc))(dualad.tensor(0.0))
    _assert_close(h.numpy(), -(np.pi**2) / 3)
    near = _derivatives(special.sinc, [1e-3], 2)[1]
    _assert_close(near, [-(np.pi**2) / 3 + np.pi**4 / 10 * 1e-6], rtol=1e-6)


def test_scaled_bessel_derivatives_do_not_cancel_for_large_x():
    # i0e' = i1e - sign(x) i0e loses 2|x| ulp to cancellation: beyond 50 the rules use the
    # asymptotic series; here its first three terms (exact to double precision at these x)
    x = np.array([1e6, -1e6, 1e15])
    t = np.abs(x)
    d_i0e = -(0.5 * t**-1.5 + 3 / 16 * t**-2.5 + 45 / 256 * t**-3.5) / np.sqrt(2 * np.pi)
    (g0,) = _derivatives(special.i0e, x, 1)
    _assert_close(g0, np.sign(x) * d_i0e, rtol=1e-14)
    # i1e ~ (2 pi t)**-1/2 (1 - 3/(8t) - 15/(128 t**2)): i1e' ~ -(1/2 t**-3/2 - 9/16 t**-5/2 ...)
    d_i1e = -(0.5 * t**-1.5 - 9 / 16 * t**-2.5 - 75 / 256 * t**-3.5) / np.sqrt(2 * np.pi)
    (g1,) = _derivatives(special.i1e, x, 1)
    _assert_close(g1, d_i1e, rtol=1e-14)
    # continuous across the switch at 50, at first and second order
    below, above = (
        _derivatives(special.i0e, [49.999999], 2),
        _derivatives(special.i0e, [50.000001], 2),
    )
    _assert_close(below[0], above[0], rtol=1e-7)
    _assert_close(below[1], above[1], rtol=1e-6)


def test_gammainc_derivatives_at_x_0_at_every_order():
    # gammainc(a, .) near 0: its k-th derivative there is the one-sided limit (gammainc(1, x) =
    # 1 - exp(-x); gammainc(2, x) = 1 - (1 + x) exp(-x); gammainc(3, x)'' = (2x - x**2) e^-x / 2)
    expected = {1.0: [1.0, -1.0, 1.0], 2.0: [0.0, 1.0, -2.0], 3.0: [0.0, 0.0, 1.0]}
    for a, values in expected.items():
        ders = _derivatives(lambda x, a=a: special.gammainc(a, x), [0.0], 3)
        _assert_close(np.concatenate(ders), values)
        ders = _derivatives(lambda x, a=a: special.gammaincc(a, x), [0.0], 3)
        _assert_close(np.concatenate(ders), [-v for v in values])
    with np.errstate(all="ignore"):
        ders = _derivatives(lambda x: special.gammainc(0.5, x), [0.0], 2)
    assert ders[0][0] == np.inf and ders[1][0] == -np.inf
    # and forward mode agrees
    h = func.jacfwd(func.jacfwd(lambda x: special.gammainc(2.0, x)))(dualad.tensor(0.0))
    _assert_close(h.numpy(), 1.0)
