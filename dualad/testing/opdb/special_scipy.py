"""Op database entries for the scipy.special functions that only ``dualad.special`` exports
(``dualad/ops``: special_gamma, incomplete_beta, elementary_special, distributions,
orthogonal_polynomials).

References are ``scipy.special`` in float64 (complex128 for complex samples), returned in the
samples' promoted dtype. Samples stay inside each function's domain and clear of its poles
(the non-positive integers of the gamma family) and of loggamma's branch cut (the negative
real axis). Shape parameters without a derivative (betainc's a and b, gammaincinv's a) are
constants of the samples (detached, not in ``diff``); that a tracked one raises is tested in
tests/special.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sp

import dualad
import dualad.special
import dualad.special as _sps
from dualad.ops import elementary_special as _elementary
from dualad.ops import incomplete_beta as _beta_ops
from dualad.ops import special_gamma as _gamma_ops

from . import ALL_DIFF, FLOATING, OpInfo, SampleInput, uniform
from ._elementwise_samples import BROADCAST_PAIRS, binary_samples, unary_samples

COMPLEX = ("complex64", "complex128")


def scipy_ref(function):
    """``function`` of scipy.special in float64 or complex128, the result in the samples'
    promoted dtype (a Python scalar stays weak)."""

    def ref(*args, **kwargs):
        dtype = np.result_type(*args)
        wide_dtype = np.complex128 if dtype.kind == "c" else np.float64
        wide = [np.asarray(a, dtype=wide_dtype) for a in args]
        with np.errstate(all="ignore"):
            return np.asarray(function(*wide, **kwargs)).astype(dtype)

    return ref


def constants_first(function, count):
    """``function(*args)`` with its first ``count`` arguments detached: the entry's checks
    (vmap's included, which differentiate every floating argument) then treat the parameters
    without a derivative as the constants they must be."""

    def fn(*args):
        fixed = [a.detach() if isinstance(a, dualad.Tensor) else a for a in args[:count]]
        return function(*fixed, *args[count:])

    return fn


def parameter_samples(count, low, high, p_low, p_high):
    """``count`` constant parameters in [p_low, p_high) and a differentiable last argument in
    [low, high), broadcasting against each other; and a call with number parameters."""

    def samples(rng, dtype):
        out = []
        for sp_, sx in BROADCAST_PAIRS:
            params = [uniform(rng, sp_, dtype, p_low, p_high) for _ in range(count)]
            x = uniform(rng, sx, dtype, low, high)
            out.append(SampleInput((*params, x), diff=(count,), note=f"{sp_} with {sx}"))
        x = uniform(rng, (2, 3), dtype, low, high)
        numbers = [p_low + (p_high - p_low) * (i + 1) / (count + 1) for i in range(count)]
        out.append(SampleInput((*numbers, x), diff=(count,), note="number parameters"))
        return out

    return samples


_SCIPY = object()  # (the default reference: scipy.special's function of the entry's name)


def entry(name, samples, *, fn=None, ref=_SCIPY, ops=None, dtypes=FLOATING, **options):
    """``dualad.special.<name>`` (or ``fn``) checked against ``scipy.special.<name>`` (or
    ``ref``; None: no reference)."""
    fn = getattr(dualad.special, name) if fn is None else fn
    ref = scipy_ref(getattr(sp, name)) if ref is _SCIPY else ref
    return OpInfo(name, fn, samples, ops=ops or (name,), ref=ref, dtypes=dtypes, **options)


_POLES = (0.0, -1.0, -2.0)
# complex samples: both parts in [0.3, 2.5): clear of the poles and of the branch cut
_RIGHT_HALF = (0.3, 2.5)


def _beta_density_ref(a, b, x):
    return np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - sp.betaln(a, b))


def _upper_half_samples(rng, dtype):
    out = []
    for shape in ((), (3,), (2, 3)):
        z = rng.uniform(-3.0, -0.5, shape) + 1j * rng.uniform(0.4, 1.0, shape)
        out.append(SampleInput((np.asarray(z).astype(dtype),)))
    return out


def _phi_ref(x, k):
    """phi_k(x) = (exp(x) - sum_{j<k} x**j / j!) / x**k, from its Taylor series near 0."""
    series = sum(x**j / sp.factorial(j + k) for j in range(25))
    with np.errstate(all="ignore"):
        direct = (np.exp(x) - sum(x**j / sp.factorial(j) for j in range(k))) / x**k
    return np.where(np.abs(x) < 1, series, direct)


def _lmbda_samples(low, high):
    """Box-Cox samples: x in [low, high), lmbda in [-0.8, 0.8) and exactly 0 (the removable
    singularity of the formulas, where the rules take the limits)."""
    pairs = binary_samples(low, high, b_low=-0.8, b_high=0.8, scalar=0.5)

    def samples(rng, dtype):
        out = pairs(rng, dtype)
        x = uniform(rng, (2, 3), dtype, low, high)
        out.append(SampleInput((x, np.zeros(3, dtype)), diff=(0, 1), note="lmbda = 0"))
        return out

    return samples


def _ranged_samples(ranges, diff, numbers):
    """Three-argument samples: each argument drawn from its ``(low, high)`` of ``ranges`` (the
    first two of one shape, the last broadcasting against it), differentiable at ``diff``; and
    a call with the numbers ``numbers`` as the first two."""

    def samples(rng, dtype):
        out = []
        for sp_, sx in BROADCAST_PAIRS:
            shapes = (sp_, sp_, sx)
            args = [uniform(rng, s, dtype, lo, hi) for s, (lo, hi) in zip(shapes, ranges)]
            out.append(SampleInput(tuple(args), diff=diff, note=f"{sp_} with {sx}"))
        x = uniform(rng, (2, 3), dtype, *ranges[2])
        out.append(SampleInput((*numbers, x), diff=(2,), note="number parameters"))
        return out

    return samples


# gdtr(a, b, x): the rate a and x differentiable, the shape b a constant
_rate_samples = _ranged_samples(((0.5, 2.0), (1.0, 3.0), (0.2, 3.0)), (0, 2), (1.5, 2.0))
# gdtrix(a, b, p): likewise, p a probability
_probability_rate_samples = _ranged_samples(
    ((0.5, 2.0), (1.0, 3.0), (0.1, 0.9)), (0, 2), (1.5, 2.0)
)
# (k, n, p): counts k in [0, 3) and n in [5, 9) (floored by the functions), p in (0, 1)
_count_samples = _ranged_samples(((0.0, 3.0), (5.0, 9.0), (0.1, 0.9)), (2,), (2, 6))


def _constant_shape(function):
    def fn(a, b, x):
        return function(a, b.detach() if isinstance(b, dualad.Tensor) else b, x)

    return fn


def _floored_first(function):
    """scipy's Poisson function with its count floored to an integer (its float loop warns)."""
    return lambda k, m: function(np.floor(k).astype(np.int64), m)


def _integer_counts(function, both):
    """scipy's function with its counts floored to integers (its float loop warns)."""

    def ref(k, n, p):
        k = np.floor(k).astype(np.int64) if both else np.floor(k)
        return function(k, np.floor(n).astype(np.int64), p)

    return ref


_POLYNOMIALS = (
    ("eval_chebyt", (), -1.5, 1.5),
    ("eval_chebyu", (), -1.5, 1.5),
    ("eval_chebyc", (), -2.5, 2.5),
    ("eval_chebys", (), -2.5, 2.5),
    ("eval_legendre", (), -1.5, 1.5),
    ("eval_sh_legendre", (), -0.3, 1.3),
    ("eval_laguerre", (), -1.0, 5.0),
    ("eval_genlaguerre", (0.7,), -1.0, 5.0),
    ("eval_hermite", (), -2.0, 2.0),
    ("eval_hermitenorm", (), -2.0, 2.0),
    ("eval_gegenbauer", (0.8,), -1.5, 1.5),
    ("eval_jacobi", (0.5, -0.3), -1.5, 1.5),
    ("eval_sh_chebyt", (), -0.2, 1.2),
    ("eval_sh_chebyu", (), -0.2, 1.2),
    ("eval_sh_jacobi", (2.5, 1.3), -0.2, 1.2),
)


def _polynomial_ref(name, n, params, x):
    """scipy's polynomial (its complex loop takes a float degree)."""
    return getattr(sp, name)(float(n) if x.dtype.kind == "c" else n, *params, x)


def _huber_samples(rng, dtype):
    # |r| at least 0.2 from delta (the kinks of the second derivative)
    out = []
    for shape_d, shape_r in BROADCAST_PAIRS:
        delta = uniform(rng, shape_d, dtype, 0.5, 1.5)
        r = uniform(rng, shape_r, dtype, -3.0, 3.0)
        while np.any(np.abs(np.abs(r) - delta) < 0.2):
            r = uniform(rng, shape_r, dtype, -3.0, 3.0)
        out.append(SampleInput((delta, r), diff=(0, 1), note=f"{shape_d} with {shape_r}"))
    return out


OPS = [
    # the gamma function and its relatives, real (negative too, between the poles) and complex
    entry(
        "gamma",
        unary_samples(-2.8, 4.0, avoid=_POLES, margin=0.25, complex_range=_RIGHT_HALF),
        dtypes=ALL_DIFF,
    ),
    entry("loggamma", unary_samples(0.3, 4.0, complex_range=_RIGHT_HALF), dtypes=ALL_DIFF),
    # loggamma away from the right half plane: in the upper half plane over negative real parts
    entry(
        "loggamma_upper",
        _upper_half_samples,
        fn=dualad.special.loggamma,
        ref=scipy_ref(sp.loggamma),
        ops=("loggamma",),
        dtypes=COMPLEX,
    ),
    entry(
        "rgamma",
        unary_samples(-2.8, 4.0, avoid=_POLES, margin=0.25, complex_range=_RIGHT_HALF),
        dtypes=ALL_DIFF,
    ),
    entry("gammasgn", unary_samples(-2.8, 4.0, avoid=_POLES, margin=0.25)),
    # digamma and polygamma of complex arguments: the derivatives of the complex gamma family
    entry(
        "complex_digamma",
        unary_samples(complex_range=(-2.5, 2.5), avoid=_POLES, margin=0.3),
        fn=_gamma_ops._complex_digamma,
        ref=scipy_ref(sp.psi),
        dtypes=COMPLEX,
    ),
    *(
        entry(
            f"complex_polygamma_{n}",
            unary_samples(complex_range=(-2.5, 2.5), avoid=_POLES, margin=0.3),
            fn=lambda z, n=n: _gamma_ops._complex_polygamma(n, z),
            ref=None,
            ops=("complex_polygamma",),
            dtypes=COMPLEX,
        )
        for n in (1, 2)
    ),
    entry("poch", binary_samples(0.5, 3.0, b_low=-0.4, b_high=2.0)),
    entry("beta", binary_samples(0.3, 3.0)),
    entry("binom", binary_samples(2.0, 5.0, b_low=0.2, b_high=1.8)),
    # the incomplete beta function and the inverses: in x (or y) only
    *(
        entry(name, parameter_samples(2, 0.1, 0.9, 0.6, 3.0), fn=constants_first(fn, 2))
        for name, fn in (
            ("betainc", dualad.special.betainc),
            ("betaincc", dualad.special.betaincc),
            ("betaincinv", dualad.special.betaincinv),
        )
    ),
    entry(
        "beta_density",
        parameter_samples(2, 0.1, 0.9, 0.6, 3.0),
        fn=constants_first(_beta_ops._beta_density, 2),
        ref=scipy_ref(_beta_density_ref),
    ),
    *(
        entry(name, parameter_samples(1, 0.1, 0.9, 0.6, 3.0), fn=constants_first(fn, 1))
        for name, fn in (
            ("gammaincinv", dualad.special.gammaincinv),
            ("gammainccinv", dualad.special.gammainccinv),
        )
    ),
    # elementary functions: samples clear of the poles of tandg (90 + 180 k) and cotdg (180 k),
    # of huber's kinks |r| = delta, and inside the Box-Cox domains
    entry("log_expit", unary_samples(-4.0, 4.0, extra=((4, 5), -40.0, 40.0))),
    entry("exprel", unary_samples(-3.0, 3.0, extra=((4, 5), -0.5, 0.5))),
    *(
        entry(
            f"exprel_phi_{k}",
            unary_samples(-3.0, 3.0, extra=((4, 5), -0.5, 0.5)),
            fn=lambda x, k=k: _elementary._phi(k, x),
            ref=scipy_ref(lambda x, k=k: _phi_ref(x, k)),
            ops=("exprel_phi",),
        )
        for k in (2, 3)
    ),
    entry("powm1", binary_samples(0.3, 3.0, b_low=-2.0, b_high=2.0)),
    entry("cosm1", unary_samples(-4.0, 4.0)),
    entry("exp10", unary_samples(-2.0, 2.0)),
    entry("sindg", unary_samples(-400.0, 400.0)),
    entry("cosdg", unary_samples(-400.0, 400.0)),
    entry("tandg", unary_samples(-80.0, 80.0)),
    entry("cotdg", unary_samples(10.0, 170.0)),
    # lmbda around 0 (the removable singularity of the formulas) and beyond
    entry("boxcox", _lmbda_samples(0.3, 3.0)),
    entry("boxcox1p", _lmbda_samples(-0.6, 2.0)),
    entry("inv_boxcox", _lmbda_samples(-0.6, 0.9)),
    entry("inv_boxcox1p", _lmbda_samples(-0.6, 0.9)),
    *(
        entry(
            f"log1p_ratio_{k}",
            unary_samples(-0.8, 2.0, complex_range=(-0.3, 0.6), extra=((4, 5), -0.4, 0.4)),
            fn=lambda t, k=k: _elementary._log1p_ratio(k, t),
            ref=None,
            ops=("log1p_ratio",),
            dtypes=ALL_DIFF,
        )
        for k in (0, 1, 2)
    ),
    entry("huber", _huber_samples),
    entry("pseudo_huber", binary_samples(0.3, 2.0, b_low=-3.0, b_high=3.0)),
    entry("owens_t", binary_samples(-2.0, 2.0)),
    entry("spence", unary_samples(0.2, 3.0, complex_range=(0.3, 2.0)), dtypes=ALL_DIFF),
    entry("wrightomega", unary_samples(-3.0, 3.0, complex_range=(-1.0, 1.0)), dtypes=ALL_DIFF),
    # distribution functions: in the continuous variable (gdtr and gdtrc in the rate a too)
    entry("stdtr", parameter_samples(1, -3.0, 3.0, 1.5, 6.0), fn=constants_first(_sps.stdtr, 1)),
    entry("stdtrit", parameter_samples(1, 0.1, 0.9, 1.5, 6.0), fn=constants_first(_sps.stdtrit, 1)),
    *(
        entry(
            name,
            parameter_samples(1, low, high, 1.0, 5.0),
            fn=constants_first(fn, 1),
            ref=scipy_ref(
                _floored_first(getattr(sp, name)) if name[0] == "p" else getattr(sp, name)
            ),
        )
        for name, fn, low, high in (
            ("chdtr", _sps.chdtr, 0.2, 4.0),
            ("chdtrc", _sps.chdtrc, 0.2, 4.0),
            ("chdtri", _sps.chdtri, 0.1, 0.9),
            ("pdtri", _sps.pdtri, 0.1, 0.9),
            ("pdtr", _sps.pdtr, 0.2, 4.0),
            ("pdtrc", _sps.pdtrc, 0.2, 4.0),
        )
    ),
    *(
        entry(name, _rate_samples, fn=_constant_shape(fn))
        for name, fn in (("gdtr", _sps.gdtr), ("gdtrc", _sps.gdtrc))
    ),
    *(
        entry(name, parameter_samples(2, 0.2, 3.0, 1.5, 6.0), fn=constants_first(fn, 2))
        for name, fn in (("fdtr", _sps.fdtr), ("fdtrc", _sps.fdtrc))
    ),
    entry("fdtri", parameter_samples(2, 0.1, 0.9, 1.5, 6.0), fn=constants_first(_sps.fdtri, 2)),
    entry("gdtrix", _probability_rate_samples, fn=_constant_shape(_sps.gdtrix)),
    *(
        entry(
            name,
            _count_samples,
            fn=constants_first(getattr(_sps, name), 2),
            ref=scipy_ref(_integer_counts(getattr(sp, name), name.startswith("nb"))),
        )
        for name in ("bdtr", "bdtrc", "bdtri", "nbdtr", "nbdtrc", "nbdtri")
    ),
    entry("ndtri_exp", unary_samples(-5.0, -0.1, extra=((4, 5), -100.0, -5.0))),
    # orthogonal polynomials: degrees 0 (derivative 0), 2 and 5; complex x where scipy has it
    *(
        entry(
            f"{name}_{n}",
            unary_samples(low, high, complex_range=(-1.2, 1.2)),
            fn=lambda x, name=name, n=n, params=params: getattr(_sps, name)(n, *params, x),
            ref=scipy_ref(
                lambda x, name=name, n=n, params=params: _polynomial_ref(name, n, params, x)
            ),
            ops=(name,),
            dtypes=FLOATING if "hermite" in name else ALL_DIFF,
        )
        for name, params, low, high in _POLYNOMIALS
        for n in (0, 2, 5)
    ),
]
