"""dualad.special's gamma family beyond gammaln: gamma, loggamma, rgamma, gammasgn, poch, beta,
betainc, betaincc, betaincinv, gammaincinv, gammainccinv.

Values against scipy (the op database checks them too, per dtype); here the singular points each
docstring states, the second and third derivatives against finite differences of scipy, the
complex derivatives (holomorphic, PyTorch's conjugate convention), the shape parameters that
raise when tracked, and complex input rejected where scipy has no complex version.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func, fwd
from dualad.ops.special_gamma import _complex_polygamma


def _nth(fn, order):
    """The ``order``-th derivative of elementwise ``fn`` (nested func.grad of sums)."""
    g = fn
    for _ in range(order):
        g = (lambda h: lambda s: func.grad(lambda u: h(u).sum())(s))(g)
    return g


def _fd2(f, x, h=1e-4):
    return (f(x + h) - 2 * f(x) + f(x - h)) / h**2


def _fd3(f, x, h=5e-4):
    return (f(x + 2 * h) - 2 * f(x + h) + 2 * f(x - h) - f(x - 2 * h)) / (2 * h**3)


X = np.array([0.4, 1.3, 2.5, -0.5, -1.7])


@pytest.mark.parametrize(
    "name, ref",
    [("gamma", sp.gamma), ("rgamma", sp.rgamma)],
)
def test_second_and_third_derivatives_match_finite_differences(name, ref):
    fn = getattr(special, name)
    x = dualad.tensor(X)
    np.testing.assert_allclose(_nth(fn, 2)(x).numpy(), _fd2(ref, X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_nth(fn, 3)(x).numpy(), _fd3(ref, X), rtol=1e-4, atol=1e-5)


def test_loggamma_is_gammaln_for_positive_reals_and_nan_below():
    x = np.array([0.3, 1.0, 7.5])
    np.testing.assert_allclose(special.loggamma(dualad.tensor(x)).numpy(), sp.gammaln(x))
    t = dualad.tensor([-0.5, 2.0], requires_grad=True)
    (g,) = autograd.grad(special.loggamma(t).sum(), t)
    assert np.isnan(g.numpy()[0]) and np.isclose(g.numpy()[1], sp.digamma(2.0))
    np.testing.assert_allclose(
        _nth(special.loggamma, 2)(dualad.tensor(x)).numpy(), sp.polygamma(1, x)
    )


COMPLEX = np.array([1.2 + 0.7j, -1.5 + 0.4j, 0.3 - 2.0j, 4.0 + 9.0j])


@pytest.mark.parametrize(
    "name, ref", [("gamma", sp.gamma), ("rgamma", sp.rgamma), ("loggamma", sp.loggamma)]
)
def test_complex_derivatives_are_holomorphic(name, ref):
    # forward mode gives f'(z) dz; reverse mode ct * conj(f'(z)) (PyTorch's convention)
    fn = getattr(special, name)
    h = 1e-6
    expected = (ref(COMPLEX + h) - ref(COMPLEX - h)) / (2 * h)
    z = dualad.tensor(COMPLEX)
    _, tangent = func.jvp(fn, (z,), (dualad.ones(4, dtype="complex128"),))
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-7)
    zr = dualad.tensor(COMPLEX, requires_grad=True)
    (g,) = autograd.grad(fn(zr), zr, grad_outputs=dualad.ones(4, dtype="complex128"))
    np.testing.assert_allclose(g.numpy(), np.conj(expected), rtol=1e-7)
    # second order: the complex digamma's own derivative, polygamma(1, z)
    second = (ref(COMPLEX + 1e-4) - 2 * ref(COMPLEX) + ref(COMPLEX - 1e-4)) / 1e-8
    _, t2 = func.jvp(
        lambda s: func.jvp(fn, (s,), (dualad.ones(4, dtype="complex128"),))[1],
        (z,),
        (dualad.ones(4, dtype="complex128"),),
    )
    np.testing.assert_allclose(t2.numpy(), second, rtol=1e-5)


def test_complex_polygamma_matches_scipy_on_the_real_axis_and_the_recurrence():
    x = np.array([0.3, 1.5, -2.5, 7.0, -30.3, 100.0])
    for n in (1, 2, 3, 6):
        got = _complex_polygamma(n, dualad.tensor(x.astype(complex))).numpy()
        np.testing.assert_allclose(got.real, sp.polygamma(n, x), rtol=1e-13)
        # psi^(n)(z + 1) = psi^(n)(z) + (-1)**n n! / z**(n + 1), off the axis
        z = COMPLEX
        a = _complex_polygamma(n, dualad.tensor(z + 1)).numpy()
        b = _complex_polygamma(n, dualad.tensor(z)).numpy()
        np.testing.assert_allclose(a, b + (-1) ** n * sp.factorial(n) / z ** (n + 1), rtol=1e-12)


def test_gamma_singular_points():
    # poles: scipy's values; the derivatives there are nan (documented), not finite numbers
    x = dualad.tensor([0.0, -1.0, -2.0], requires_grad=True)
    np.testing.assert_array_equal(special.gamma(x).detach().numpy(), sp.gamma([0.0, -1.0, -2.0]))
    (g,) = autograd.grad(special.gamma(x).sum(), x)
    assert not np.isfinite(g.numpy()).any()
    # rgamma is 0 there, its derivative nan (0 times digamma's pole), never a wrong finite value
    (g,) = autograd.grad(special.rgamma(x).sum(), x)
    np.testing.assert_array_equal(special.rgamma(x).detach().numpy(), [0.0, 0.0, 0.0])
    assert np.isnan(g.numpy()).all()


def test_gammasgn_has_zero_derivatives_and_scipys_values():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 3.0])
    t = dualad.tensor(x, requires_grad=True)
    np.testing.assert_array_equal(special.gammasgn(t).detach().numpy(), sp.gammasgn(x))
    (g,) = autograd.grad(special.gammasgn(t).sum(), t)
    np.testing.assert_array_equal(g.numpy(), np.zeros(5))
    assert special.gammasgn(t).requires_grad


def test_binom_hessian_matches_finite_differences():
    n, k = 4.3, 1.7
    hess = func.hessian(special.binom, argnums=(0, 1))(dualad.tensor(n), dualad.tensor(k))
    h = 1e-4
    f = sp.binom
    dnn = (f(n + h, k) - 2 * f(n, k) + f(n - h, k)) / h**2
    dnk = (f(n + h, k + h) - f(n + h, k - h) - f(n - h, k + h) + f(n - h, k - h)) / (4 * h * h)
    dkk = (f(n, k + h) - 2 * f(n, k) + f(n, k - h)) / h**2
    np.testing.assert_allclose(float(hess[0][0]), dnn, rtol=1e-5)
    np.testing.assert_allclose(float(hess[0][1]), dnk, rtol=1e-5)
    np.testing.assert_allclose(float(hess[1][1]), dkk, rtol=1e-5)


def test_poch_and_beta_second_derivatives():
    z, m = 1.7, 0.8
    zt, mt = dualad.tensor(z), dualad.tensor(m)
    hess = func.hessian(lambda a, b: special.poch(a, b), argnums=(0, 1))(zt, mt)
    h = 1e-4

    def f(a, b):
        return sp.poch(a, b)

    dzz = (f(z + h, m) - 2 * f(z, m) + f(z - h, m)) / h**2
    dzm = (f(z + h, m + h) - f(z + h, m - h) - f(z - h, m + h) + f(z - h, m - h)) / (4 * h * h)
    np.testing.assert_allclose(float(hess[0][0]), dzz, rtol=1e-5)
    np.testing.assert_allclose(float(hess[0][1]), dzm, rtol=1e-5)
    hess = func.hessian(lambda a, b: special.beta(a, b), argnums=(0, 1))(zt, mt)
    dab = (
        sp.beta(z + h, m + h)
        - sp.beta(z + h, m - h)
        - sp.beta(z - h, m + h)
        + sp.beta(z - h, m - h)
    ) / (4 * h * h)
    np.testing.assert_allclose(float(hess[1][0]), dab, rtol=1e-5)


@pytest.mark.parametrize("a, b", [(2.5, 1.5), (0.7, 3.0), (1.0, 1.0), (3.0, 0.6)])
def test_betainc_derivatives_of_every_order_match_finite_differences(a, b):
    x = np.array([0.15, 0.5, 0.8])

    def f(t):
        return sp.betainc(a, b, t)

    def fn(t):
        return special.betainc(a, b, t)

    t = dualad.tensor(x)
    np.testing.assert_allclose(_nth(fn, 2)(t).numpy(), _fd2(f, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_nth(fn, 3)(t).numpy(), _fd3(f, x), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize(
    "a, b, expected",
    [(2.0, 3.0, [0.0, 0.0]), (1.0, 3.0, [3.0, 0.0]), (0.5, 1.0, [np.inf, 0.5])],
)
def test_betainc_derivative_at_the_ends_is_the_one_sided_limit(a, b, expected):
    x = dualad.tensor([0.0, 1.0], requires_grad=True)
    (g,) = autograd.grad(special.betainc(a, b, x).sum(), x)
    np.testing.assert_allclose(g.numpy(), expected)


def test_betainc_second_derivative_at_zero_is_the_limit():
    # d2/dx2 of I_x(2, 3) = 12 x (1-x)**2 is 12 at 0; of I_x(1, 1) = x, 0 everywhere
    x = dualad.tensor([0.0])
    assert float(_nth(lambda t: special.betainc(2.0, 3.0, t), 2)(x)[0]) == pytest.approx(12.0)
    assert float(_nth(lambda t: special.betainc(1.0, 1.0, t), 2)(x)[0]) == 0.0
    assert float(_nth(lambda t: special.betainc(2.0, 1.0, t), 3)(x)[0]) == 0.0


@pytest.mark.parametrize(
    "name, inverse, args",
    [
        ("betaincinv", sp.betainc, (2.5, 1.5)),
        ("gammaincinv", sp.gammainc, (2.5,)),
        ("gammainccinv", sp.gammaincc, (2.5,)),
    ],
)
def test_inverses_derivatives_invert_the_forward_functions(name, inverse, args):
    y = np.array([0.1, 0.5, 0.9])
    fn = getattr(special, name)
    x = getattr(sp, name)(*args, y)
    h = 1e-6
    forward = (inverse(*args, x + h) - inverse(*args, x - h)) / (2 * h)
    g = _nth(lambda t: fn(*args, t), 1)(dualad.tensor(y)).numpy()
    np.testing.assert_allclose(g, 1 / forward, rtol=1e-6)
    g2 = _nth(lambda t: fn(*args, t), 2)(dualad.tensor(y)).numpy()
    np.testing.assert_allclose(g2, _fd2(lambda t: getattr(sp, name)(*args, t), y), rtol=1e-4)


def test_inverse_derivatives_at_the_ends_are_infinite():
    y = dualad.tensor([0.0, 1.0], requires_grad=True)
    (g,) = autograd.grad(special.betaincinv(2.0, 3.0, y).sum(), y)
    np.testing.assert_array_equal(g.numpy(), [np.inf, np.inf])
    (g,) = autograd.grad(special.gammaincinv(2.0, y).sum(), y)
    np.testing.assert_array_equal(g.numpy(), [np.inf, np.inf])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_equal_scipys(dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 0.9, 6).astype(dtype)
    a = rng.uniform(0.5, 3.0, 6).astype(dtype)
    cases = [
        (special.gamma, sp.gamma, (a,)),
        (special.rgamma, sp.rgamma, (-a,)),
        (special.loggamma, sp.loggamma, (a,)),
        (special.gammasgn, sp.gammasgn, (-a,)),
        (special.poch, sp.poch, (a, x)),
        (special.beta, sp.beta, (a, x)),
        (special.binom, sp.binom, (a + 2, x)),
        (special.betainc, sp.betainc, (a, a[::-1].copy(), x)),
        (special.betaincc, sp.betaincc, (a, a[::-1].copy(), x)),
        (special.betaincinv, sp.betaincinv, (a, a[::-1].copy(), x)),
        (special.gammaincinv, sp.gammaincinv, (a, x)),
        (special.gammainccinv, sp.gammainccinv, (a, x)),
    ]
    for fn, ref, args in cases:
        out = fn(*(dualad.tensor(v) for v in args)).numpy()
        assert out.dtype == np.dtype(dtype), fn.__name__
        expected = ref(*(v.astype(np.float64) for v in args)).astype(dtype)
        np.testing.assert_allclose(out, expected, rtol=2e-6 if dtype == "float32" else 1e-14)


PARAMETER_CASES = [
    ("betainc", "a", lambda s: special.betainc(s, 2.0, dualad.tensor([0.3, 0.6]))),
    ("betainc", "b", lambda s: special.betainc(2.0, s, dualad.tensor([0.3, 0.6]))),
    ("betaincc", "a", lambda s: special.betaincc(s, 2.0, dualad.tensor([0.3, 0.6]))),
    ("betaincinv", "b", lambda s: special.betaincinv(2.0, s, dualad.tensor([0.3, 0.6]))),
    ("gammaincinv", "a", lambda s: special.gammaincinv(s, dualad.tensor([0.3, 0.6]))),
    ("gammainccinv", "a", lambda s: special.gammainccinv(s, dualad.tensor([0.3, 0.6]))),
]


@pytest.mark.parametrize("name, argument, fn", PARAMETER_CASES)
def test_tracked_shape_parameters_raise(name, argument, fn):
    match = f"dualad.special.{name}.*respect to {argument}"
    s = dualad.tensor([1.5, 2.5], requires_grad=True)
    with pytest.raises(NotImplementedError, match=match):
        autograd.grad(fn(s).sum(), s)
    with pytest.raises(NotImplementedError, match=match):
        func.jacrev(fn)(dualad.tensor([1.5, 2.5]))
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([1.5, 2.5]), dualad.ones(2))
        with pytest.raises(NotImplementedError, match=match):
            fn(dual)


def test_a_constant_shape_parameter_is_fine_beside_a_tracked_x():
    a = dualad.tensor([1.5, 2.0], requires_grad=True)
    x = dualad.tensor([0.3, 0.6], requires_grad=True)
    (g,) = autograd.grad(special.betainc(a, 2.0, x).sum(), x)
    density = np.exp(
        (np.array([0.5, 1.0])) * np.log([0.3, 0.6]) + np.log1p(-np.array([0.3, 0.6]))
    ) / sp.beta([1.5, 2.0], 2.0)
    np.testing.assert_allclose(g.numpy(), density)


@pytest.mark.parametrize("name", ["gammasgn", "poch", "beta", "betainc", "gammaincinv"])
def test_complex_input_is_rejected_where_scipy_has_no_complex_version(name):
    fn = getattr(special, name)
    count = {"gammasgn": 1, "poch": 2, "beta": 2, "gammaincinv": 2, "betainc": 3}[name]
    args = [dualad.tensor([0.5 + 0.1j])] + [0.5] * (count - 1)
    with pytest.raises(TypeError, match=f"dualad.special.{name}: not supported for complex"):
        fn(*args)
