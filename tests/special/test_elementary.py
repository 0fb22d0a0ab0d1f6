"""dualad.special's elementary functions: log_expit, exprel, powm1, cosm1, exp10, the
trigonometric functions in degrees, the Box-Cox transforms and their inverses, huber,
pseudo_huber, owens_t.

Values against scipy in float32 and float64 (the op database checks them per sample too); here
the removable singularities (exprel at 0, lmbda = 0 of the Box-Cox transforms: derivatives of
every order are the limits), second derivatives against finite differences, the stated
singular points, and complex input rejected (scipy's versions are real).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func


def _nth(fn, order, argnum=0):
    """The ``order``-th derivative of elementwise ``fn`` in argument ``argnum`` (nested
    func.grad of sums)."""
    g = fn
    for _ in range(order):
        g = (lambda h: func.grad(lambda *a: h(*a).sum(), argnums=argnum))(g)
    return g


def _fd2(f, x, h=1e-4):
    return (f(x + h) - 2 * f(x) + f(x - h)) / h**2


UNARY = [
    ("log_expit", np.array([-5.0, -0.3, 0.7, 6.0])),
    ("exprel", np.array([-3.0, -0.2, 0.4, 2.5])),
    ("cosm1", np.array([-2.0, 0.1, 1.5])),
    ("exp10", np.array([-1.0, 0.3, 1.2])),
    ("sindg", np.array([-100.0, 30.0, 200.0])),
    ("cosdg", np.array([-100.0, 30.0, 200.0])),
    ("tandg", np.array([-60.0, 10.0, 80.0])),
    ("cotdg", np.array([20.0, 100.0, 170.0])),
    ("spence", np.array([0.3, 0.99, 1.0, 2.5])),
    ("wrightomega", np.array([-3.0, 0.3, 5.0])),
]


@pytest.mark.parametrize("name, x", UNARY, ids=[u[0] for u in UNARY])
def test_unary_second_derivatives_match_finite_differences(name, x):
    fn, ref = getattr(special, name), getattr(sp, name)
    got = _nth(fn, 2)(dualad.tensor(x)).numpy()
    h = 1e-2 if name.endswith("dg") else 1e-4
    np.testing.assert_allclose(got, _fd2(ref, x, h), rtol=1e-5, atol=1e-7)


BINARY = [
    ("powm1", (1.7, 0.6)),
    ("boxcox", (1.7, 0.6)),
    ("boxcox", (1.7, 0.0)),
    ("boxcox1p", (0.4, -0.3)),
    ("inv_boxcox", (0.8, 0.4)),
    ("inv_boxcox1p", (0.8, -0.3)),
    ("huber", (1.2, 0.5)),
    ("huber", (1.2, -2.0)),
    ("pseudo_huber", (0.7, -1.3)),
    ("owens_t", (0.6, 1.4)),
]


@pytest.mark.parametrize("name, point", BINARY)
def test_binary_hessians_match_finite_differences(name, point):
    fn, ref = getattr(special, name), getattr(sp, name)
    a, b = point
    hess = func.hessian(fn, argnums=(0, 1))(dualad.tensor(a), dualad.tensor(b))
    h = 1e-4
    expected = [
        [(ref(a + h, b) - 2 * ref(a, b) + ref(a - h, b)) / h**2, None],
        [None, (ref(a, b + h) - 2 * ref(a, b) + ref(a, b - h)) / h**2],
    ]
    mixed = (ref(a + h, b + h) - ref(a + h, b - h) - ref(a - h, b + h) + ref(a - h, b - h)) / (
        4 * h * h
    )
    expected[0][1] = expected[1][0] = mixed
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(float(hess[i][j]), expected[i][j], rtol=1e-5, atol=1e-7)


def test_exprel_derivatives_at_zero_are_the_limits():
    # exprel = sum_j x**j / (j + 1)!, so its n-th derivative at 0 is 1 / (n + 1)
    zero = dualad.tensor([0.0])
    for n in range(1, 5):
        assert float(_nth(special.exprel, n)(zero)[0]) == pytest.approx(1 / (n + 1), rel=1e-14)


@pytest.mark.parametrize("name", ["boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p"])
def test_box_cox_derivatives_in_lmbda_at_zero_are_the_limits(name):
    # the derivatives at lmbda = 0 (the formulas' removable singularity) equal the mean of those
    # just beside it, at orders 1 to 3
    fn = getattr(special, name)
    x = dualad.tensor([0.5, 1.7])
    for order in (1, 2, 3):
        g = _nth(lambda lm: fn(x, lm), order)
        at_zero = g(dualad.tensor(0.0)).numpy()
        around = (g(dualad.tensor(1e-5)).numpy() + g(dualad.tensor(-1e-5)).numpy()) / 2
        np.testing.assert_allclose(at_zero, around, rtol=1e-8)
    # and the first one in closed form: log(x)**2 / 2 for boxcox
    if name == "boxcox":
        g = _nth(lambda lm: fn(dualad.tensor(2.0), lm), 1)(dualad.tensor(0.0))
        assert float(g) == pytest.approx(math.log(2.0) ** 2 / 2, rel=1e-15)


def test_box_cox_derivative_in_x_at_lmbda_zero():
    x = dualad.tensor([0.5, 2.0], requires_grad=True)
    (g,) = autograd.grad(special.boxcox(x, 0.0).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 0.5])
    (g,) = autograd.grad(special.inv_boxcox(x, 0.0).sum(), x)
    np.testing.assert_allclose(g.numpy(), np.exp([0.5, 2.0]))


def test_singular_points():
    # boxcox at x = 0: the derivative in x is inf for lmbda < 1; tandg at 90 degrees: inf
    x = dualad.tensor([0.0], requires_grad=True)
    (g,) = autograd.grad(special.boxcox(x, 0.5).sum(), x)
    assert g.numpy()[0] == np.inf
    d = dualad.tensor([90.0], requires_grad=True)
    (g,) = autograd.grad(special.tandg(d).sum(), d)
    assert g.numpy()[0] == np.inf
    # powm1 at x = 0: inf in x for 0 < y < 1, nan in y (0 times log(0))
    x0 = dualad.tensor([0.0], requires_grad=True)
    y0 = dualad.tensor([0.5], requires_grad=True)
    gx, gy = autograd.grad(special.powm1(x0, y0).sum(), (x0, y0))
    assert gx.numpy()[0] == np.inf and np.isnan(gy.numpy()[0])
    # huber and pseudo_huber with delta < 0: inf (scipy) with nan derivatives
    delta = dualad.tensor([-1.0], requires_grad=True)
    r = dualad.tensor([0.5], requires_grad=True)
    for fn in (special.huber, special.pseudo_huber):
        y = fn(delta, r)
        assert y.detach().numpy()[0] == np.inf
        gd, gr = autograd.grad(y.sum(), (delta, r))
        assert np.isnan(gd.numpy()[0]) and np.isnan(gr.numpy()[0])
    # pseudo_huber at delta = 0: the value 0, the derivative in delta |r|
    delta0 = dualad.tensor([0.0], requires_grad=True)
    (g,) = autograd.grad(special.pseudo_huber(delta0, dualad.tensor([-1.5])).sum(), delta0)
    np.testing.assert_allclose(g.numpy(), [1.5])
    # huber on its kink |r| = delta takes the inner branch (r, and 0 in delta)
    r = dualad.tensor([1.0], requires_grad=True)
    gd, gr = autograd.grad(special.huber(delta0 + 1.0, r).sum(), (delta0, r))
    np.testing.assert_allclose([gd.numpy()[0], gr.numpy()[0]], [0.0, 1.0])


def test_inv_boxcox_derivative_in_y_is_nan_at_the_edge():
    # lmbda y = -1: x = 0 and the derivative x / (1 + lmbda y) is 0 / 0 (documented), never a
    # finite number
    y = dualad.tensor([-2.0], requires_grad=True)
    assert special.inv_boxcox(y, 0.5).detach().numpy()[0] == 0.0
    (g,) = autograd.grad(special.inv_boxcox(y, 0.5).sum(), y)
    assert np.isnan(g.numpy()[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_equal_scipys(dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 2.0, 6).astype(dtype)
    lm = rng.uniform(-0.8, 0.8, 6).astype(dtype)
    cases = [(name, (x,)) for name, _ in UNARY]
    cases += [(name, (x, lm)) for name in ("powm1", "boxcox", "boxcox1p", "huber")]
    cases += [(name, (x, lm)) for name in ("pseudo_huber", "owens_t")]
    cases += [(name, (lm, x * 0.4)) for name in ("inv_boxcox", "inv_boxcox1p")]
    for name, args in cases:
        out = getattr(special, name)(*(dualad.tensor(v) for v in args)).numpy()
        assert out.dtype == np.dtype(dtype), name
        expected = getattr(sp, name)(*(v.astype(np.float64) for v in args)).astype(dtype)
        np.testing.assert_allclose(out, expected, rtol=2e-6 if dtype == "float32" else 1e-15)


@pytest.mark.parametrize("name", ["exprel", "log_expit", "boxcox", "owens_t", "huber"])
def test_complex_input_is_rejected(name):
    fn = getattr(special, name)
    args = [dualad.tensor([0.5 + 0.1j])] + ([0.5] if name not in ("exprel", "log_expit") else [])
    with pytest.raises(TypeError, match=f"dualad.special.{name}: not supported for complex"):
        fn(*args)


def test_spence_derivatives_at_one_are_the_limits_and_infinite_at_zero():
    # spence'(z) = log(z) / (1 - z): -1 at z = 1; the k-th derivative there from the series of
    # -log1p(t) / t = -sum_j (-t)**j / (j + 1): (-1)**(k+1) k! / (k + 1) at t = 0
    one = dualad.tensor([1.0])
    for order in range(1, 5):
        k = order - 1
        expected = -((-1) ** k) * math.factorial(k) / (k + 1)
        got = float(_nth(special.spence, order)(one)[0])
        assert got == pytest.approx(expected, rel=1e-13), order
    z = dualad.tensor([0.0], requires_grad=True)
    (g,) = autograd.grad(special.spence(z).sum(), z)
    assert g.numpy()[0] == -np.inf


@pytest.mark.parametrize("name", ["spence", "wrightomega"])
def test_complex_derivatives_are_holomorphic(name):
    fn, ref = getattr(special, name), getattr(sp, name)
    z = np.array([0.5 + 0.3j, 2.0 - 1.0j, 1.0 + 0.0j, 0.3 - 0.2j])
    h = 1e-6
    expected = (ref(z + h) - ref(z - h)) / (2 * h)
    ones = dualad.ones(4, dtype="complex128")
    _, tangent = func.jvp(fn, (dualad.tensor(z),), (ones,))
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-7)
    t = dualad.tensor(z, requires_grad=True)
    (g,) = autograd.grad(fn(t), t, grad_outputs=ones)
    np.testing.assert_allclose(g.numpy(), np.conj(expected), rtol=1e-7)
