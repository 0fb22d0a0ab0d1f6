"""dualad.special: the namespace, values against scipy.special over wide ranges (float32 and
float64), dtypes, complex rejection, and the singular points each function documents.

Derivatives: test_special_derivatives.py; arguments without a derivative and integer orders:
test_special_arguments.py; logsumexp's b= and return_sign=: test_special_logsumexp.py. The op
database (dualad/testing/opdb/special.py) adds the registry checks (finite differences, second
order, forward mode, vmap) for every op.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dualad
import dualad.special as special
from dualad import autograd

# name -> range of values over which the function is checked against scipy (inside the domain,
# including its far regions: large arguments, tails)
UNARY_RANGES = {
    "erf": (-6.0, 6.0),
    "erfc": (-6.0, 27.0),
    "erfinv": (-0.999, 0.999),
    "erfcinv": (1e-6, 1.999),
    "erfcx": (-26.0, 1e4),
    "gammaln": (-5.5, 170.0),
    "digamma": (-5.5, 1e3),
    "i0": (-700.0, 700.0),
    "i0e": (-1e4, 1e4),
    "i1": (-700.0, 700.0),
    "i1e": (-1e4, 1e4),
    "ndtr": (-38.0, 9.0),
    "ndtri": (1e-12, 1.0 - 1e-12),
    "log_ndtr": (-1e3, 40.0),
    "entr": (0.0, 10.0),
}
BINARY_RANGES = {
    "gammainc": ((0.1, 50.0), (0.0, 80.0)),
    "gammaincc": ((0.1, 50.0), (0.0, 80.0)),
    "betaln": ((0.05, 200.0), (0.05, 200.0)),
    "rel_entr": ((0.0, 5.0), (0.01, 5.0)),
    "kl_div": ((0.0, 5.0), (0.01, 5.0)),
    "xlog1py": ((-3.0, 3.0), (-0.99, 5.0)),
    "xlogy": ((-3.0, 3.0), (0.01, 5.0)),
    "zeta": ((1.01, 30.0), (0.05, 10.0)),
}
REAL_ONLY = [
    *(name for name in UNARY_RANGES if name not in ("erf", "erfc", "erfinv")),
    "erf",
    "erfc",
    "erfinv",
]


def _values(rng, low, high, dtype, size=400):
    x = rng.uniform(low, high, size)
    if low < 0 < high:  # dense near 0 as well, where many functions change character
        x[: size // 4] = rng.uniform(-1.0, 1.0, size // 4)
    return x.astype(dtype)


def _tolerance(dtype):
    return 1e-12 if dtype == np.float64 else 2e-6


# ---------------------------------------------------------------------------------------------
# the namespace


def test_every_public_name_exists_and_is_documented():
    for name in special.__all__:
        fn = getattr(special, name)
        assert callable(fn), name
        assert fn.__doc__ and fn.__doc__.strip(), f"dualad.special.{name} has no docstring"


def test_existing_ops_are_re_exported_not_copied():
    for name in ("erf", "erfc", "erfinv", "expit", "logit", "xlogy", "sinc", "gammaln", "i0"):
        assert getattr(special, name) is getattr(dualad, name), name
    assert special.psi is special.digamma
    assert dualad.lgamma is dualad.gammaln
    assert dualad.mvlgamma is dualad.multigammaln
    assert dualad.igamma is dualad.gammainc and dualad.igammac is dualad.gammaincc


def test_softmax_is_scipys_over_every_axis_by_default():
    # (the op is nn's; this namespace gives scipy's axis convention: test_special_softmax.py)
    assert {"softmax", "log_softmax"} <= set(special.__all__)
    x = np.array([[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(special.softmax(dualad.tensor(x)).numpy(), sp.softmax(x))


def test_tensor_methods_follow_pytorch():
    x = dualad.tensor([0.5, 2.0])
    np.testing.assert_allclose(x.lgamma().numpy(), sp.gammaln([0.5, 2.0]))
    np.testing.assert_allclose(x.digamma().numpy(), sp.psi([0.5, 2.0]))
    np.testing.assert_allclose(x.i0().numpy(), np.i0([0.5, 2.0]))
    np.testing.assert_allclose(x.mvlgamma(1).numpy(), sp.multigammaln(np.array([0.5, 2.0]), 1))
    np.testing.assert_allclose(x.igamma(1.5).numpy(), sp.gammainc([0.5, 2.0], 1.5))
    y = dualad.tensor([0.5, 2.0])
    y.gammaln_()
    np.testing.assert_allclose(y.numpy(), sp.gammaln([0.5, 2.0]))


# ---------------------------------------------------------------------------------------------
# values against scipy.special


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY_RANGES))
def test_unary_values_match_scipy(name, dtype, rng):
    x = _values(rng, *UNARY_RANGES[name], dtype)
    out = getattr(special, name)(dualad.tensor(x))
    assert out.dtype == dtype
    expected = getattr(sp, name)(x.astype(np.float64)).astype(dtype)
    # (atol: dualad's erfc is accurate in the subnormal range, where scipy's flushes to 0)
    np.testing.assert_allclose(out.numpy(), expected, rtol=_tolerance(dtype), atol=1e-300)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(BINARY_RANGES))
def test_binary_values_match_scipy(name, dtype, rng):
    (a_low, a_high), (b_low, b_high) = BINARY_RANGES[name]
    a = _values(rng, a_low, a_high, dtype)
    b = _values(rng, b_low, b_high, dtype)
    a[:10] = 0.0 if a_low <= 0 else a[:10]  # the x == 0 cases of the entropies
    out = getattr(special, name)(dualad.tensor(a), dualad.tensor(b))
    assert out.dtype == dtype
    expected = getattr(sp, name)(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(out.numpy(), expected, rtol=_tolerance(dtype) * 10, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parametrised_values_match_scipy(dtype, rng):
    x = rng.uniform(0.2, 30.0, 200).astype(dtype)
    for n in range(5):
        out = special.polygamma(n, dualad.tensor(x))
        assert out.dtype == dtype  # scipy gives float64 for float32 input; dualad keeps it
        expected = sp.polygamma(n, x.astype(np.float64)).astype(dtype)
        np.testing.assert_allclose(out.numpy(), expected, rtol=_tolerance(dtype) * 10)
    for d in (1, 2, 5):
        a = rng.uniform(0.5 * d, 40.0, 100).astype(dtype)
        out = special.multigammaln(dualad.tensor(a), d)
        assert out.dtype == dtype
        expected = sp.multigammaln(a.astype(np.float64), d).astype(dtype)
        np.testing.assert_allclose(out.numpy(), expected, rtol=_tolerance(dtype) * 10)
    for order in (2, 5):
        from dualad.ops import bessel

        t = dualad.tensor(rng.uniform(-20.0, 20.0, 50).astype(dtype))
        np.testing.assert_allclose(
            bessel._bessel_i(order, t).numpy(),
            sp.iv(order, t.numpy().astype(np.float64)).astype(dtype),
            rtol=_tolerance(dtype),
        )


def test_riemann_zeta_matches_scipy_on_both_sides_of_the_pole(rng):
    x = np.concatenate([rng.uniform(-20.0, 0.9, 50), rng.uniform(1.1, 60.0, 50), [1.0]])
    np.testing.assert_allclose(special.zeta(dualad.tensor(x)).numpy(), sp.zeta(x), rtol=1e-12)


def test_i0_matches_numpy_i0(rng):
    x = np.concatenate([rng.uniform(-700.0, 700.0, 100), [0.0, -0.0, 1e-300]])
    np.testing.assert_allclose(special.i0(dualad.tensor(x)).numpy(), np.i0(x), rtol=1e-14)
    x32 = x.astype(np.float32)
    assert special.i0(dualad.tensor(x32)).dtype == np.i0(x32).dtype


def test_integer_input_gives_the_default_float_dtype():
    out = special.gammaln(dualad.tensor([1, 2, 3]))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), sp.gammaln([1, 2, 3]))
    np.testing.assert_allclose(
        special.gammainc(2, dualad.tensor([1, 2])).numpy(), sp.gammainc(2, [1.0, 2.0])
    )


def test_python_scalars_stay_weak_in_binary_functions():
    x = dualad.tensor(np.array([0.5, 1.5], dtype=np.float32))
    for fn in (special.gammainc, special.betaln, special.zeta, special.rel_entr, special.xlog1py):
        assert fn(2.5, x).dtype == np.float32, fn
        assert fn(x, 2.5).dtype == np.float32, fn


# ---------------------------------------------------------------------------------------------
# complex input is rejected (scipy's complex versions have derivatives these rules do not give)


@pytest.mark.parametrize("name", REAL_ONLY)
def test_complex_input_is_rejected(name):
    z = dualad.tensor([0.5 + 0.5j])
    with pytest.raises(TypeError, match=f"dualad.{name}.*complex"):
        getattr(special, name)(z)


@pytest.mark.parametrize("name", sorted(BINARY_RANGES))
def test_complex_input_is_rejected_by_binary_functions(name):
    z = dualad.tensor([1.5 + 0.5j])
    with pytest.raises(TypeError, match="complex"):
        getattr(special, name)(z, dualad.tensor([1.5]))
    with pytest.raises(TypeError, match="complex"):
        getattr(special, name)(dualad.tensor([1.5]), z)


def test_complex_input_is_rejected_by_parametrised_functions():
    z = dualad.tensor([2.5 + 0.5j])
    for call in (
        lambda: special.polygamma(2, z),
        lambda: special.multigammaln(z, 2),
        lambda: special.zeta(z),
    ):
        with pytest.raises(TypeError, match="complex"):
            call()


def test_complex_support_is_kept_where_it_exists():
    z = dualad.tensor([0.5 + 0.5j, -0.3 + 0.2j])
    np.testing.assert_allclose(special.expit(z).numpy(), 1 / (1 + np.exp(-z.numpy())))
    np.testing.assert_allclose(special.sinc(z).numpy(), np.sinc(z.numpy()))
    np.testing.assert_allclose(special.logsumexp(z).numpy(), sp.logsumexp(z.numpy()))


# ---------------------------------------------------------------------------------------------
# singular points and edge values (as the docstrings state them)


def _grad(fn, x):
    x = dualad.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return autograd.grad(fn(x).sum(), x)[0].numpy()


def test_erfinv_and_erfcinv_at_the_ends_of_their_domain():
    np.testing.assert_array_equal(
        special.erfinv(dualad.tensor([-1.0, 1.0])).numpy(), [-np.inf, np.inf]
    )
    np.testing.assert_array_equal(_grad(special.erfinv, [-1.0, 1.0]), [np.inf, np.inf])
    np.testing.assert_array_equal(
        special.erfcinv(dualad.tensor([0.0, 2.0])).numpy(), [np.inf, -np.inf]
    )
    np.testing.assert_array_equal(_grad(special.erfcinv, [0.0, 2.0]), [-np.inf, -np.inf])
    assert np.isnan(special.erfinv(dualad.tensor(1.5)).item())


def test_ndtri_at_0_and_1():
    np.testing.assert_array_equal(
        special.ndtri(dualad.tensor([0.0, 1.0])).numpy(), [-np.inf, np.inf]
    )
    np.testing.assert_array_equal(_grad(special.ndtri, [0.0, 1.0]), [np.inf, np.inf])


def test_logit_at_0_and_1():
    np.testing.assert_array_equal(
        special.logit(dualad.tensor([0.0, 1.0])).numpy(), [-np.inf, np.inf]
    )
    np.testing.assert_array_equal(_grad(special.logit, [0.0, 1.0]), [np.inf, np.inf])


def test_log_ndtr_far_in_the_left_tail():
    x = np.array([-40.0, -1e3, -1e8])
    np.testing.assert_allclose(
        special.log_ndtr(dualad.tensor(x)).numpy(), sp.log_ndtr(x), rtol=1e-14
    )
    # d/dx log Phi(x) = phi(x) / Phi(x) = -x / (1 - 1/x**2 + 3/x**4 - 15/x**6 + ...) there (the
    # series is exact to double precision beyond -40 with 6 terms); sqrt(2/pi)/erfcx(-x/sqrt 2)
    # keeps full precision (exp(log_pdf - log_ndtr) would lose eps x**2: all of it at -1e8)
    mills = -x / (1 - 1 / x**2 + 3 / x**4 - 15 / x**6 + 105 / x**8 - 945 / x**10)
    np.testing.assert_allclose(_grad(special.log_ndtr, x), mills, rtol=1e-14)
    # and the right tail: 0, not nan
    assert _grad(special.log_ndtr, [40.0])[0] == 0.0


def test_entr_at_0_and_below():
    out = special.entr(dualad.tensor([0.0, -1.0, 1.0]))
    np.testing.assert_array_equal(out.numpy(), [0.0, -np.inf, -0.0])
    g = _grad(special.entr, [0.0, -1.0, 1.0])
    assert g[0] == np.inf  # -(log x + 1): the one-sided limit at 0 is +inf
    assert np.isnan(g[1])
    assert g[2] == -1.0


def test_rel_entr_and_kl_div_at_x_0():
    y = dualad.tensor([0.5, 2.0], requires_grad=True)
    x = dualad.tensor([0.0, 0.0], requires_grad=True)
    np.testing.assert_array_equal(special.rel_entr(x, y).detach().numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(special.kl_div(x, y).detach().numpy(), [0.5, 2.0])
    with np.errstate(divide="ignore"):
        gx, gy = autograd.grad(special.rel_entr(x, y).sum(), (x, y))
    np.testing.assert_array_equal(gx.numpy(), [-np.inf, -np.inf])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0])
    with np.errstate(divide="ignore"):
        gx, gy = autograd.grad(special.kl_div(x, y).sum(), (x, y))
    np.testing.assert_array_equal(gx.numpy(), [-np.inf, -np.inf])
    np.testing.assert_array_equal(gy.numpy(), [1.0, 1.0])
    # outside the domain: inf (scipy), as for kl_div
    bad = special.rel_entr(dualad.tensor([1.0, -1.0]), dualad.tensor([-1.0, 1.0]))
    np.testing.assert_array_equal(bad.numpy(), [np.inf, np.inf])


def test_xlogy_and_xlog1py_at_x_0_follow_pytorch():
    # xlogy(0, y) = 0; d/dx = log(y) (0 where y <= 0), d/dy = x / y (0 for y != 0, nan at 0/0)
    x = dualad.tensor([0.0, 0.0, 0.0], requires_grad=True)
    y = dualad.tensor([2.0, 0.0, -1.0], requires_grad=True)
    np.testing.assert_array_equal(special.xlogy(x, y).detach().numpy(), [0.0, 0.0, 0.0])
    with np.errstate(invalid="ignore"):
        gx, gy = autograd.grad(special.xlogy(x, y).sum(), (x, y))
    np.testing.assert_allclose(gx.numpy(), [np.log(2.0), 0.0, 0.0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, np.nan, -0.0])
    # xlog1py(0, y) = 0; d/dx = log1p(y) (0 where y <= -1), d/dy = x / (1 + y)
    y = dualad.tensor([1.0, -1.0, -2.0], requires_grad=True)
    np.testing.assert_array_equal(special.xlog1py(x, y).detach().numpy(), [0.0, 0.0, 0.0])
    with np.errstate(invalid="ignore"):
        gx, gy = autograd.grad(special.xlog1py(x, y).sum(), (x, y))
    np.testing.assert_allclose(gx.numpy(), [np.log(2.0), 0.0, 0.0])
    np.testing.assert_array_equal(gy.numpy(), [0.0, np.nan, -0.0])
    assert np.isnan(special.xlog1py(dualad.tensor(0.0), dualad.tensor(np.nan)).item())


def test_gamma_family_at_its_poles():
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(
            special.gammaln(dualad.tensor([0.0, -1.0, -2.0])).numpy(), [np.inf] * 3
        )
        np.testing.assert_array_equal(
            special.digamma(dualad.tensor([0.0, -1.0])).numpy(), sp.psi([0.0, -1.0])
        )
        assert not np.isfinite(_grad(special.gammaln, [-1.0])).any()


def test_bessel_functions_at_0():
    np.testing.assert_array_equal(special.i0(dualad.tensor([0.0])).numpy(), [1.0])
    np.testing.assert_array_equal(_grad(special.i1, [0.0]), [0.5])
    np.testing.assert_array_equal(_grad(special.i0, [0.0]), [0.0])
    # the kink of exp(-|x|): the derivative of i0e is 0 at 0 (the mean of -1 and 1)
    np.testing.assert_array_equal(_grad(special.i0e, [0.0, 1e-9, -1e-9]).round(6), [0.0, -1.0, 1.0])
    np.testing.assert_array_equal(_grad(special.i1e, [0.0]), [0.5])


def test_gammainc_derivative_at_x_0_is_the_one_sided_limit():
    for a, expected in ((0.5, np.inf), (1.0, 1.0), (2.0, 0.0)):
        g = _grad(lambda x, a=a: special.gammainc(a, x), [0.0])
        assert g[0] == expected, (a, g)
        g = _grad(lambda x, a=a: special.gammaincc(a, x), [0.0])
        assert g[0] == -expected, (a, g)


def test_trigamma_matches_scipy_everywhere(rng):
    # polygamma(1, .) (digamma's derivative) has its own NumPy algorithm (recurrence, series,
    # reflection); scipy's goes through the Hurwitz zeta function
    x = np.concatenate(
        [
            rng.uniform(1e-6, 1.0, 300),
            rng.uniform(0.5, 30.0, 300),
            rng.uniform(12.0, 1e6, 100),
            10.0 ** rng.uniform(6.0, 300.0, 100),
            rng.uniform(-50.0, 0.0, 300),
            -(10.0 ** rng.uniform(3.0, 7.0, 20)) + 0.3,
        ]
    )
    np.testing.assert_allclose(
        special.polygamma(1, dualad.tensor(x)).numpy(), sp.polygamma(1, x), rtol=3e-15
    )
    edges = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(
            special.polygamma(1, dualad.tensor(edges)).numpy(), sp.polygamma(1, edges)
        )
