"""Op database entries for the special functions (``dualad/ops``: special, gamma_functions,
bessel, normal_distribution, entropies; ``dualad.special``'s ``logsumexp`` with weights,
composed of ops).

References are ``scipy.special``, computed in float64 and returned in the dtype the inputs
promote to (a Python scalar stays weak), as the ops do. Samples stay inside each function's
domain, away from its poles (the non-positive integers of the gamma family), kinks (0 for i0e
and i1e) and domain edges, so that central differences are accurate. Arguments without a
derivative (gammainc's ``a``, zeta's ``x``) are constants of the samples (not in ``diff``).
"""

from __future__ import annotations

import numpy as np
import scipy.special as sp

import dualad
import dualad.special
from dualad.ops import bessel as _bessel
from dualad.ops import gamma_functions as _gamma
from dualad.ops import trigonometric as _trig

from . import FLOATING, OpInfo, SampleInput, away_from, uniform
from ._elementwise_samples import BROADCAST_PAIRS, binary_samples, unary_samples


def _ref(function):
    """``function`` of scipy.special in float64, the result in the inputs' promoted dtype."""

    def ref(*args, **kwargs):
        dtype = np.result_type(*args)
        wide = [np.asarray(a, dtype=np.float64) for a in args]
        return np.asarray(function(*wide, **kwargs)).astype(dtype)

    return ref


def _order_samples(low, high, a_low, a_high):
    """``(a, x)`` pairs differentiable in ``x`` only (``a`` a constant tensor or a number)."""

    def samples(rng, dtype):
        out = []
        for sa, sx in BROADCAST_PAIRS:
            a = uniform(rng, sa, dtype, a_low, a_high)
            x = uniform(rng, sx, dtype, low, high)
            out.append(SampleInput((a, x), diff=(1,), note=f"{sa} with {sx}"))
        x = uniform(rng, (2, 3), dtype, low, high)
        out.append(SampleInput((float(a_low + a_high) / 2, x), diff=(1,), note="number order"))
        return out

    return samples


def _riemann_samples(rng, dtype):
    # the pole at 1 is avoided; the samples carry no derivative (the order has none)
    shapes = [(), (3,), (2, 3)]
    return [
        SampleInput((away_from(rng, s, dtype, (1.0,), 0.3, -3.0, 5.0),), diff=()) for s in shapes
    ]


def _weighted_logsumexp_samples(rng, dtype):
    out = []
    for shape, axis in (((4,), None), ((2, 3), 1), ((2, 3), (0, 1)), ((3, 2), 0)):
        a = uniform(rng, shape, dtype, -3.0, 3.0)
        b = uniform(rng, shape, dtype, 0.2, 2.0)
        out.append(SampleInput((a,), {"axis": axis, "b": b}, diff=(0, "b"), note=f"axis={axis}"))
    a = uniform(rng, (2, 3), dtype, -3.0, 3.0)
    b = uniform(rng, (3,), dtype, 0.2, 2.0)
    out.append(SampleInput((a,), {"axis": 1, "b": b, "keepdims": True}, diff=(0, "b")))
    return out


def _signed_logsumexp_samples(rng, dtype):
    # weights of both signs, the sum clear of 0: first weight large and positive
    out = []
    for shape in ((3,), (2, 3)):
        a = uniform(rng, shape, dtype, -1.0, 1.0)
        b = uniform(rng, shape, dtype, -0.3, 0.3)
        b.reshape(-1)[0] = 5.0 * (1 if rng.uniform() < 0.5 else -1)
        out.append(SampleInput((a,), {"b": b, "return_sign": True}, diff=(0, "b")))
    return out


def _scipy_logsumexp(a, **kwargs):
    dtype = np.result_type(a, *(v for v in kwargs.values() if isinstance(v, np.ndarray)))
    out = sp.logsumexp(np.asarray(a, np.float64), **kwargs)
    if isinstance(out, tuple):
        return tuple(np.asarray(o).astype(dtype) for o in out)
    return np.asarray(out).astype(dtype)


def _constant_first(function):
    """``function(a, x)`` with ``a`` detached: the entry's checks (vmap's included, which
    differentiate every floating argument) then treat the argument without a derivative as the
    constant it must be; that a tracked one raises is tested in tests/special."""

    def fn(a, x):
        return function(a.detach() if isinstance(a, dualad.Tensor) else a, x)

    return fn


def _special(name, samples, *, fn=None, ref=None, ops=None, **options):
    fn = getattr(dualad.special, name) if fn is None else fn
    ref = _ref(getattr(sp, name)) if ref is None else ref
    return OpInfo(name, fn, samples, ops=ops or (name,), ref=ref, dtypes=FLOATING, **options)


OPS = [
    # error-function family (erf, erfc, erfinv: elementwise.py)
    _special("erfcinv", unary_samples(0.1, 1.9)),
    # erfcx: its derivative switches to an asymptotic series beyond 12 (the large sample)
    _special("erfcx", unary_samples(-2.0, 3.0, extra=((4, 5), -1.0, 30.0))),
    # gamma family: negative samples between the poles at 0, -1, -2
    _special("gammaln", unary_samples(-2.8, 4.0, avoid=(0.0, -1.0, -2.0), margin=0.25)),
    _special("digamma", unary_samples(-2.8, 4.0, avoid=(0.0, -1.0, -2.0), margin=0.25)),
    *(
        _special(
            f"polygamma_{n}",
            unary_samples(0.4, 4.0),
            fn=lambda x, n=n: dualad.special.polygamma(n, x),
            ref=_ref(lambda x, n=n: sp.polygamma(n, x)),
            ops=("polygamma",),
        )
        for n in (1, 2, 3)
    ),
    *(
        _special(
            f"multigammaln_{d}",
            unary_samples(0.5 * d + 0.2, 5.0),
            fn=lambda a, d=d: dualad.special.multigammaln(a, d),
            ref=_ref(lambda a, d=d: sp.multigammaln(a, d)),
            ops=("multigammaln",),
        )
        for d in (1, 3)
    ),
    *(
        _special(name, _order_samples(0.2, 4.0, 0.5, 3.0), fn=_constant_first(function))
        for name, function in (
            ("gammainc", dualad.special.gammainc),
            ("gammaincc", dualad.special.gammaincc),
        )
    ),
    # gammainc's derivative, an op whose own derivative is right at x = 0 at every order
    _special(
        "gamma_density",
        _order_samples(0.2, 4.0, 0.5, 3.0),
        fn=_constant_first(_gamma._gamma_density),
        ref=_ref(lambda a, x: np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))),
    ),
    _special("betaln", binary_samples(0.3, 3.0)),
    _special("zeta", _order_samples(0.3, 3.0, 1.5, 4.0), fn=_constant_first(dualad.special.zeta)),
    # Riemann's zeta has no derivative in its only argument (a tracked one raises): values and
    # vmap only, of a detached input
    _special(
        "riemann_zeta",
        _riemann_samples,
        fn=lambda x: dualad.special.zeta(x.detach()),
        ref=_ref(sp.zeta),
        differentiable=False,
    ),
    # Bessel functions: i0e and i1e have a kink at 0
    _special("i0", unary_samples(-3.0, 3.0)),
    _special("i1", unary_samples(-3.0, 3.0)),
    _special("i0e", unary_samples(-3.0, 3.0, avoid=(0.0,), margin=0.2)),
    _special("i1e", unary_samples(-3.0, 3.0, avoid=(0.0,), margin=0.2)),
    *(
        _special(
            f"{name}_{n}",
            unary_samples(-3.0, 3.0, avoid=(0.0,), margin=0.2),
            fn=lambda x, n=n, op=op: op(n, x),
            ref=_ref(lambda x, n=n, ref=ref: ref(n, x)),
            ops=(name,),
        )
        for name, op, ref in (
            ("bessel_in", _bessel._bessel_i, sp.iv),
            ("bessel_ine", _bessel._bessel_ie, sp.ive),
        )
        for n in (2, 3)
    ),
    # sinc's Taylor coefficients at 0 (the derivatives the rule of sinc takes there): constant in
    # x, and its rule is the next coefficient (not the derivative of the constant), so only k
    # whose next coefficient is 0 is checked against finite differences, at first order
    OpInfo(
        "sinc_taylor_2",
        lambda x: _trig._sinc_taylor(2, x),
        unary_samples(),
        ops=("sinc_taylor",),
        ref=lambda x: np.full(x.shape, -(np.pi**2) / 3, dtype=x.dtype),
        skips={"gradgrad": "the rule of the rule is the coefficient pi**4/5 by design"},
    ),
    # the standard normal distribution
    _special("ndtr", unary_samples(-3.0, 3.0)),
    _special("ndtri", unary_samples(0.05, 0.95)),
    _special("log_ndtr", unary_samples(-5.0, 3.0, extra=((4, 5), -40.0, -5.0))),
    # entropies: x > 0 (at 0 the derivatives are infinite)
    _special("entr", unary_samples(0.1, 2.0)),
    _special("rel_entr", binary_samples(0.1, 2.0)),
    _special("xlog1py", binary_samples(-2.0, 2.0, b_low=-0.8, b_high=2.0)),
    _special("kl_div", binary_samples(0.1, 2.0), ops=("special_kl_div",)),
    # logsumexp with weights (signs too): composed of exp, sum and log in dualad.special
    *(
        OpInfo(
            f"special.logsumexp_{name}",
            lambda a, **kwargs: dualad.special.logsumexp(a, **kwargs),
            samples,
            ops=("exp", "log"),
            ref=_scipy_logsumexp,
        )
        for name, samples in (
            ("b", _weighted_logsumexp_samples),
            ("sign", _signed_logsumexp_samples),
        )
    ),
]
