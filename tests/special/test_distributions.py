"""dualad.special's distribution functions: stdtr, stdtrit, chdtr, chdtrc, chdtri, gdtr, gdtrc,
fdtr, fdtrc, pdtr, pdtrc, bdtr, bdtrc, nbdtr, nbdtrc, ndtri_exp.

scipy's conventions checked numerically (gdtr's a is a rate; chdtri inverts the upper tail),
derivatives against finite differences of scipy at first and second order, the stated values at
the domain edges, tracked parameters raising, values in float32 and float64.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as stats

import dualad
import dualad.special as special
from dualad import autograd, func, fwd


def _nth(fn, order):
    g = fn
    for _ in range(order):
        g = (lambda h: func.grad(lambda s: h(s).sum()))(g)
    return g


# (name, the function of the differentiated variable, scipy's, points)
CASES = [
    ("stdtr", lambda t: special.stdtr(4.5, t), lambda t: sp.stdtr(4.5, t), [-2.0, 0.3, 1.7]),
    ("stdtr-inf", lambda t: special.stdtr(np.inf, t), sp.ndtr, [-2.0, 0.3, 1.7]),
    ("stdtrit", lambda p: special.stdtrit(4.5, p), lambda p: sp.stdtrit(4.5, p), [0.1, 0.6]),
    ("chdtr", lambda x: special.chdtr(3.5, x), lambda x: sp.chdtr(3.5, x), [0.4, 2.0, 5.0]),
    ("chdtrc", lambda x: special.chdtrc(3.5, x), lambda x: sp.chdtrc(3.5, x), [0.4, 2.0]),
    ("chdtri", lambda p: special.chdtri(3.5, p), lambda p: sp.chdtri(3.5, p), [0.2, 0.7]),
    ("gdtr-x", lambda x: special.gdtr(1.5, 2.5, x), lambda x: sp.gdtr(1.5, 2.5, x), [0.5, 2.0]),
    ("gdtr-a", lambda a: special.gdtr(a, 2.5, 1.2), lambda a: sp.gdtr(a, 2.5, 1.2), [0.5, 2.0]),
    ("gdtrc-a", lambda a: special.gdtrc(a, 2.5, 1.2), lambda a: sp.gdtrc(a, 2.5, 1.2), [0.7]),
    ("fdtr", lambda x: special.fdtr(3.0, 5.0, x), lambda x: sp.fdtr(3.0, 5.0, x), [0.3, 1.5]),
    ("fdtrc", lambda x: special.fdtrc(3.0, 5.0, x), lambda x: sp.fdtrc(3.0, 5.0, x), [0.3, 1.5]),
    ("pdtr", lambda m: special.pdtr(3, m), lambda m: sp.pdtr(3, m), [0.5, 2.0, 6.0]),
    ("pdtrc", lambda m: special.pdtrc(3, m), lambda m: sp.pdtrc(3, m), [0.5, 2.0, 6.0]),
    ("bdtr", lambda p: special.bdtr(2, 7, p), lambda p: sp.bdtr(2, 7, p), [0.2, 0.6]),
    ("bdtrc", lambda p: special.bdtrc(2, 7, p), lambda p: sp.bdtrc(2, 7, p), [0.2, 0.6]),
    ("nbdtr", lambda p: special.nbdtr(2, 7, p), lambda p: sp.nbdtr(2, 7, p), [0.2, 0.6]),
    ("nbdtrc", lambda p: special.nbdtrc(2, 7, p), lambda p: sp.nbdtrc(2, 7, p), [0.2, 0.6]),
    ("ndtri_exp", special.ndtri_exp, sp.ndtri_exp, [-30.0, -2.0, -0.1]),
    ("fdtri", lambda p: special.fdtri(3.0, 5.0, p), lambda p: sp.fdtri(3.0, 5.0, p), [0.2, 0.7]),
    ("gdtrix-p", lambda p: special.gdtrix(1.5, 2.5, p), lambda p: sp.gdtrix(1.5, 2.5, p), [0.3]),
    ("gdtrix-a", lambda a: special.gdtrix(a, 2.5, 0.4), lambda a: sp.gdtrix(a, 2.5, 0.4), [0.8]),
    ("pdtri", lambda y: special.pdtri(3, y), lambda y: sp.pdtri(3, y), [0.2, 0.7]),
    ("bdtri", lambda y: special.bdtri(2, 7, y), lambda y: sp.bdtri(2, 7, y), [0.2, 0.7]),
    ("nbdtri", lambda y: special.nbdtri(2, 7, y), lambda y: sp.nbdtri(2, 7, y), [0.2, 0.7]),
]


@pytest.mark.parametrize("name, fn, ref, points", CASES, ids=[c[0] for c in CASES])
def test_first_and_second_derivatives_match_finite_differences(name, fn, ref, points):
    x = np.array(points)
    h = 1e-6
    first = (ref(x + h) - ref(x - h)) / (2 * h)
    np.testing.assert_allclose(_nth(fn, 1)(dualad.tensor(x)).numpy(), first, rtol=1e-6)
    h = 1e-4
    second = (ref(x + h) - 2 * ref(x) + ref(x - h)) / h**2
    np.testing.assert_allclose(_nth(fn, 2)(dualad.tensor(x)).numpy(), second, rtol=2e-5, atol=1e-7)


def test_scipys_conventions_against_scipy_stats():
    # gdtr(a, b, x): a is the rate (scale 1/a); chdtri inverts the upper tail; pdtr's k floored
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(
        special.gdtr(2.0, 3.0, dualad.tensor(x)).numpy(), stats.gamma.cdf(x, 3.0, scale=0.5)
    )
    g = _nth(lambda t: special.gdtr(2.0, 3.0, t), 1)(dualad.tensor(x)).numpy()
    np.testing.assert_allclose(g, stats.gamma.pdf(x, 3.0, scale=0.5))
    p = dualad.tensor([0.2])
    assert float(special.chdtri(3.0, p)[0]) == pytest.approx(stats.chi2.isf(0.2, 3.0))
    g = _nth(lambda t: special.stdtr(4.0, t), 1)(dualad.tensor(x)).numpy()
    np.testing.assert_allclose(g, stats.t.pdf(x, 4.0))
    g = _nth(lambda t: special.fdtr(3.0, 5.0, t), 1)(dualad.tensor(x)).numpy()
    np.testing.assert_allclose(g, stats.f.pdf(x, 3.0, 5.0))
    g = _nth(lambda m: special.pdtr(2.7, m), 1)(dualad.tensor(x)).numpy()
    np.testing.assert_allclose(g, -stats.poisson.pmf(2, x))


def test_edges():
    # chdtr at x = 0: density 0, 1/2, inf for v above, at, below 2
    x = dualad.tensor([0.0, 0.0, 0.0], requires_grad=True)
    (g,) = autograd.grad(special.chdtr(dualad.tensor([3.0, 2.0, 1.0]), x).sum(), x)
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.5, np.inf])
    # inverses at the ends: infinite derivatives
    p = dualad.tensor([0.0, 1.0], requires_grad=True)
    (g,) = autograd.grad(special.stdtrit(3.0, p).sum(), p)
    np.testing.assert_array_equal(g.numpy(), [np.inf, np.inf])
    y = dualad.tensor([0.0], requires_grad=True)
    (g,) = autograd.grad(special.ndtri_exp(y).sum(), y)
    assert g.numpy()[0] == np.inf
    # very negative y: finite and about -1/x
    y = dualad.tensor([-1000.0], requires_grad=True)
    x = special.ndtri_exp(y)
    (g,) = autograd.grad(x.sum(), y)
    assert np.isfinite(g.numpy()[0]) and g.numpy()[0] == pytest.approx(-1 / x.item(), rel=1e-3)


PARAMETERS = [
    ("stdtr", "df", lambda s: special.stdtr(s, dualad.tensor([0.3, 0.6]))),
    ("chdtri", "v", lambda s: special.chdtri(s, dualad.tensor([0.3, 0.6]))),
    ("gdtr", "b", lambda s: special.gdtr(1.0, s, dualad.tensor([0.3, 0.6]))),
    ("fdtrc", "dfd", lambda s: special.fdtrc(2.0, s, dualad.tensor([0.3, 0.6]))),
    ("pdtr", "k", lambda s: special.pdtr(s, dualad.tensor([0.3, 0.6]))),
    ("bdtr", "n", lambda s: special.bdtr(1.0, s + 4, dualad.tensor([0.3, 0.6]))),
    ("nbdtrc", "k", lambda s: special.nbdtrc(s, 5.0, dualad.tensor([0.3, 0.6]))),
    ("gdtrix", "b", lambda s: special.gdtrix(1.0, s, dualad.tensor([0.3, 0.6]))),
    ("bdtri", "n", lambda s: special.bdtri(1.0, s + 4, dualad.tensor([0.3, 0.6]))),
    ("fdtri", "dfn", lambda s: special.fdtri(s, 3.0, dualad.tensor([0.3, 0.6]))),
]


@pytest.mark.parametrize("name, argument, fn", PARAMETERS)
def test_tracked_parameters_raise(name, argument, fn):
    match = f"dualad.special.{name}.*respect to {argument}"
    s = dualad.tensor([1.5, 2.5], requires_grad=True)
    with pytest.raises(NotImplementedError, match=match):
        autograd.grad(fn(s).sum(), s)
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([1.5, 2.5]), dualad.ones(2))
        with pytest.raises(NotImplementedError, match=match):
            fn(dual)


def test_counts_are_floored_as_scipy_and_nan_when_not_finite():
    p = dualad.tensor([0.3, 0.3, 0.3])
    out = special.bdtr(dualad.tensor([2.7, 2.0, 2.0]), dualad.tensor([7.9, np.inf, 7.0]), p)
    np.testing.assert_allclose(out.numpy()[[0, 2]], [sp.bdtr(2, 7, 0.3)] * 2)
    assert np.isnan(out.numpy()[1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_equal_scipys(dtype):
    rng = np.random.default_rng(2)
    u = rng.uniform(0.1, 0.9, 5).astype(dtype)
    d = rng.uniform(1.0, 5.0, 5).astype(dtype)
    cases = [(n, (d, u)) for n in ("stdtr", "stdtrit", "chdtr", "chdtrc", "chdtri")]
    cases += [(n, (np.floor(d), u)) for n in ("pdtr", "pdtrc", "pdtri")]
    cases += [(n, (d, d, u)) for n in ("gdtr", "gdtrc", "fdtr", "fdtrc", "fdtri", "gdtrix")]
    cases += [("ndtri_exp", (-d,))]
    for name, args in cases:
        out = getattr(special, name)(*(dualad.tensor(v) for v in args)).numpy()
        assert out.dtype == np.dtype(dtype), name
        expected = getattr(sp, name)(*(v.astype(np.float64) for v in args)).astype(dtype)
        np.testing.assert_allclose(out, expected, rtol=2e-6 if dtype == "float32" else 1e-15)
    k = np.floor(d).astype(np.int64)
    for name in ("bdtr", "bdtrc", "bdtri", "nbdtr", "nbdtrc", "nbdtri"):
        out = getattr(special, name)(dualad.tensor(k.astype(dtype)), 6, dualad.tensor(u)).numpy()
        assert out.dtype == np.dtype(dtype), name
        expected = getattr(sp, name)(k, 6, u.astype(np.float64)).astype(dtype)
        np.testing.assert_allclose(out, expected, rtol=2e-6 if dtype == "float32" else 1e-15)
