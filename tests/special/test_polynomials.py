"""dualad.special's orthogonal polynomials: derivatives of every order against NumPy's exact
polynomial derivatives (numpy.polynomial), complex x, the static degree and parameters.
"""

from __future__ import annotations

import numpy as np
import numpy.polynomial as P
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd, func, fwd


def _nth(fn, order):
    g = fn
    for _ in range(order):
        g = (lambda h: func.grad(lambda s: h(s).sum()))(g)
    return g


def _chebyc(n):
    # 2 T_n(x / 2)
    t = P.Polynomial(P.chebyshev.cheb2poly([0] * n + [1]))
    return 2 * t(P.Polynomial([0, 0.5]))


REFERENCES = {
    "eval_chebyt": lambda n: P.Polynomial(P.chebyshev.cheb2poly([0] * n + [1])),
    "eval_legendre": lambda n: P.Polynomial(P.legendre.leg2poly([0] * n + [1])),
    "eval_laguerre": lambda n: P.Polynomial(P.laguerre.lag2poly([0] * n + [1])),
    "eval_hermite": lambda n: P.Polynomial(P.hermite.herm2poly([0] * n + [1])),
    "eval_hermitenorm": lambda n: P.Polynomial(P.hermite_e.herme2poly([0] * n + [1])),
    "eval_sh_legendre": lambda n: P.Polynomial(P.legendre.leg2poly([0] * n + [1]))(
        P.Polynomial([-1, 2])
    ),
    "eval_chebyc": _chebyc,
    "eval_sh_chebyt": lambda n: P.Polynomial(P.chebyshev.cheb2poly([0] * n + [1]))(
        P.Polynomial([-1, 2])
    ),
    "eval_sh_chebyu": lambda n: (
        P.Polynomial(P.chebyshev.cheb2poly([0] * (n + 1) + [1])).deriv() / (n + 1)
    )(P.Polynomial([-1, 2])),
    "eval_chebys": lambda n: (
        P.Polynomial(P.chebyshev.cheb2poly([0] * (n + 1) + [1])).deriv()(P.Polynomial([0, 0.5]))
        / (n + 1)
    ),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("n", [1, 4, 7])
def test_every_order_equals_the_exact_polynomial_derivative(name, n):
    poly = REFERENCES[name](n)
    x = np.array([-0.8, 0.1, 0.6, 1.3])
    fn = getattr(special, name)
    np.testing.assert_allclose(fn(n, dualad.tensor(x)).numpy(), poly(x), rtol=1e-12, atol=1e-12)
    for order in range(1, n + 2):
        got = _nth(lambda t, fn=fn: fn(n, t), order)(dualad.tensor(x)).numpy()
        expected = poly.deriv(order)(x)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-9, err_msg=f"order {order}")


@pytest.mark.parametrize(
    "name, params, identity",
    [
        # d/dx C_n^(a) = 2a C_(n-1)^(a+1); L_n^(a)' = -L_(n-1)^(a+1); Jacobi
        ("eval_gegenbauer", (0.8,), lambda n, x: 1.6 * sp.eval_gegenbauer(n - 1, 1.8, x)),
        ("eval_genlaguerre", (0.7,), lambda n, x: -sp.eval_genlaguerre(n - 1, 1.7, x)),
        # G_n^(p,q)' = n G_(n-1)^(p+2,q+1)
        ("eval_sh_jacobi", (2.5, 1.3), lambda n, x: n * sp.eval_sh_jacobi(n - 1, 4.5, 2.3, x)),
        (
            "eval_jacobi",
            (0.5, -0.3),
            lambda n, x: (n + 1.2) / 2 * sp.eval_jacobi(n - 1, 1.5, 0.7, x),
        ),
    ],
)
def test_parametrised_families_against_finite_differences(name, params, identity):
    fn = getattr(special, name)
    x = np.array([-0.7, 0.2, 0.9])
    n = 5
    got = _nth(lambda t: fn(n, *params, t), 1)(dualad.tensor(x)).numpy()
    np.testing.assert_allclose(got, identity(n, x), rtol=1e-12)
    h = 1e-4

    def ref(t):
        return getattr(sp, name)(n, *params, t)

    second = (ref(x + h) - 2 * ref(x) + ref(x - h)) / h**2
    got = _nth(lambda t: fn(n, *params, t), 2)(dualad.tensor(x)).numpy()
    np.testing.assert_allclose(got, second, rtol=1e-6, atol=1e-6)


def test_complex_x_is_holomorphic():
    z = np.array([0.3 + 0.4j, -1.2 + 0.7j])
    poly = REFERENCES["eval_legendre"](5)
    t = dualad.tensor(z)
    ones = dualad.ones(2, dtype="complex128")
    out, tangent = func.jvp(lambda s: special.eval_legendre(5, s), (t,), (ones,))
    np.testing.assert_allclose(out.numpy(), poly(z), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), poly.deriv()(z), rtol=1e-12)
    tr = dualad.tensor(z, requires_grad=True)
    (g,) = autograd.grad(special.eval_legendre(5, tr), tr, grad_outputs=ones)
    np.testing.assert_allclose(g.numpy(), np.conj(poly.deriv()(z)), rtol=1e-12)


def test_hermite_rejects_complex_as_scipy():
    with pytest.raises(TypeError, match="eval_hermite: not supported for complex"):
        special.eval_hermite(3, dualad.tensor([0.5 + 0.1j]))


def test_the_degree_is_a_static_integer():
    x = dualad.tensor([0.3])
    with pytest.raises(ValueError, match="eval_chebyt: n must be an integer >= 0"):
        special.eval_chebyt(2.5, x)
    with pytest.raises(ValueError, match="eval_chebyt: n must be an integer >= 0"):
        special.eval_chebyt(-1, x)
    with pytest.raises(NotImplementedError, match="eval_chebyt: n is an integer order"):
        special.eval_chebyt(dualad.tensor(3.0, requires_grad=True), x)
    # a one-element tensor without a derivative is fine
    np.testing.assert_allclose(
        special.eval_chebyt(dualad.tensor(3), x).numpy(), sp.eval_chebyt(3, [0.3])
    )


def test_a_tracked_parameter_raises():
    x = dualad.tensor([0.3])
    with pytest.raises(NotImplementedError, match="eval_gegenbauer: alpha is a static parameter"):
        special.eval_gegenbauer(3, dualad.tensor(0.8, requires_grad=True), x)
    with fwd.dual_level():
        alpha = fwd.make_dual(dualad.tensor(0.5), dualad.tensor(1.0))
        with pytest.raises(NotImplementedError, match="eval_jacobi: alpha is a static parameter"):
            special.eval_jacobi(3, alpha, 0.2, x)
    with pytest.raises(TypeError, match="eval_genlaguerre: alpha must be a real number"):
        special.eval_genlaguerre(3, "a", x)


def test_genlaguerre_outside_its_domain_is_nan_with_a_nan_derivative():
    x = dualad.tensor([0.3], requires_grad=True)
    y = special.eval_genlaguerre(3, -1.5, x)
    (g,) = autograd.grad(y.sum(), x)
    assert np.isnan(y.detach().numpy()[0]) and np.isnan(g.numpy()[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_dtypes_equal_scipys(dtype):
    x = np.linspace(-1.2, 1.2, 7).astype(dtype)
    for name in REFERENCES:
        out = getattr(special, name)(4, dualad.tensor(x)).numpy()
        assert out.dtype == np.dtype(dtype)
        expected = getattr(sp, name)(4, x.astype(np.float64)).astype(dtype)
        np.testing.assert_allclose(out, expected, rtol=2e-6 if dtype == "float32" else 1e-14)
