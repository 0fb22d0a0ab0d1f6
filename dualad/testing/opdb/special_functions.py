"""Op database entries for the Bessel family and related functions of ``dualad.special``
(``dualad/ops``: bessel_cylinder, bessel_modified, airy, and the modules after them).

References are ``scipy.special`` in float64, returned in the promoted dtype (``special._ref``).
Samples stay inside each function's real domain (``x > 0`` for Y and K and for non-integer
orders), away from poles and kinks (0 for ive), so that central differences are accurate;
one larger sample per scaled function crosses into the asymptotic series of its derivative.
Orders have no derivative: they are constants of the samples (``special._constant_first``);
that a tracked order raises is tested in tests/special.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sp

import dualad
import dualad.special as special

from . import ALL_DIFF, FLOATING, OpInfo, SampleInput, uniform
from ._elementwise_samples import binary_samples, unary_samples
from .special import _constant_first, _order_samples, _ref


def _orders(low, high, v_low, v_high, extra=None):
    """``(v, x)`` calls differentiable in x (``special._order_samples``), and with
    ``extra=(low, high)`` one larger sample of x."""
    base = _order_samples(low, high, v_low, v_high)

    def samples(rng, dtype):
        out = base(rng, dtype)
        if extra is not None:
            x = uniform(rng, (4, 5), dtype, *extra)
            v = uniform(rng, (5,), dtype, v_low, v_high)
            out.append(SampleInput((v, x), diff=(1,), note="large x"))
        return out

    return samples


def _entry(name, samples, *, fn=None, ref=None, ops=None, dtypes=FLOATING, **options):
    fn = getattr(special, name) if fn is None else fn
    ref = _ref(getattr(sp, name)) if ref is None else ref
    return OpInfo(name, fn, samples, ops=ops or (name,), ref=ref, dtypes=dtypes, **options)


def _complex_ref(function):
    """``function`` of scipy.special in float64 or complex128, in the input's dtype."""

    def ref(x):
        wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
        return np.asarray(function(wide)).astype(x.dtype)

    return ref


def _item(name, index, op, samples, **options):
    """Output ``index`` of the tuple-valued ``special.<name>`` (the op ``op``)."""
    return _entry(
        op,
        samples,
        fn=lambda x: getattr(special, name)(x)[index],
        ref=_complex_ref(lambda x: getattr(sp, name)(x)[index]),
        ops=(op,),
        **options,
    )


def _complex_order_samples(rng, dtype):
    """``(v, z)`` with real orders and complex ``z`` in the right half-plane (clear of the
    branch cut on the negative real axis), differentiable in z."""
    real = np.finfo(dtype).dtype
    out = []
    for sv, sz in (((2, 3), (2, 3)), ((3,), (2, 3)), ((), (2, 2))):
        v = uniform(rng, sv, real, -2.5, 2.5)
        z = (uniform(rng, sz, real, 0.4, 3.0) + 1j * uniform(rng, sz, real, -1.5, 1.5)).astype(
            dtype
        )
        out.append(SampleInput((v, z), diff=(1,), note=f"{sv} with {sz}"))
    z = (uniform(rng, (2, 3), real, 0.4, 3.0) + 1j * uniform(rng, (2, 3), real, -1.5, 1.5)).astype(
        dtype
    )
    out.append(SampleInput((1.0, z), diff=(1,), note="number order"))
    return out


def _complex_order_ref(function):
    def ref(v, z):
        dtype = np.result_type(v, z)
        return np.asarray(function(np.asarray(v, np.float64), z.astype(np.complex128))).astype(
            dtype
        )

    return ref


def _jacobi_samples(rng, dtype):
    """``(u, m)`` with ``0 <= m < 1`` a constant (no derivative), broadcast or a number."""
    out = []
    for su, sm in (((2, 3), (2, 3)), ((2, 3), (3,)), ((), (2, 2))):
        u, m = uniform(rng, su, dtype, -3.0, 3.0), uniform(rng, sm, dtype, 0.0, 0.95)
        out.append(SampleInput((u, m), diff=(0,), note=f"{su} with {sm}"))
    out.append(SampleInput((uniform(rng, (2, 3), dtype, -3.0, 3.0), 0.4), note="number m"))
    return out


def _jacobi(index, op):
    def fn(u, m):
        return special.ellipj(u, m.detach() if isinstance(m, dualad.Tensor) else m)[index]

    ref = _ref(lambda u, m: sp.ellipj(u, m)[index])
    return _entry(op, _jacobi_samples, fn=fn, ref=ref, ops=(op,))


def _spherical(kind, n, samples, derivative=False):
    name = f"spherical_{kind}"
    return _entry(
        f"{name}_{n}" + ("_derivative" if derivative else ""),
        samples,
        fn=lambda x: getattr(special, name)(n, x, derivative),
        ref=_ref(lambda x: getattr(sp, name)(n, x, derivative)),
        ops=(name,),
    )


def _of_order(name, v, samples):
    """``special.<name>(*v, x)`` for one Python order ``v`` (or a tuple of parameters)."""
    params = v if isinstance(v, tuple) else (v,)
    return _entry(
        f"{name}_" + "_".join(map(str, params)),
        samples,
        fn=lambda x: getattr(special, name)(*params, x),
        ref=_ref(lambda x: getattr(sp, name)(*params, x)),
        ops=(name,),
    )


OPS = [
    # cylinder Bessel functions of orders 0 and 1: Y and K only for x > 0
    _entry("j0", unary_samples(-6.0, 6.0)),
    _entry("j1", unary_samples(-6.0, 6.0)),
    _entry("y0", unary_samples(0.3, 6.0)),
    _entry("y1", unary_samples(0.3, 6.0)),
    _entry("k0", unary_samples(0.3, 4.0)),
    _entry("k1", unary_samples(0.3, 4.0)),
    # the scaled K: the large sample crosses 50 (60 for k1e), where the series takes over
    _entry("k0e", unary_samples(0.3, 4.0, extra=((4, 5), 30.0, 120.0))),
    _entry("k1e", unary_samples(0.3, 4.0, extra=((4, 5), 30.0, 120.0))),
    # real orders, x > 0 (non-integer orders are nan below 0)
    *(
        _entry(name, _orders(0.4, 5.0, -2.5, 2.5), fn=_constant_first(getattr(special, name)))
        for name in ("jv", "jve", "yv", "yve", "iv", "kv")
    ),
    *(
        _entry(
            name,
            _orders(0.3, 4.0, -1.5, 1.5, extra=(30.0, 120.0)),
            fn=_constant_first(getattr(special, name)),
        )
        for name in ("ive", "kve")
    ),
    # complex z (real orders): J, Y, I, K are holomorphic off the negative real axis
    *(
        _entry(
            f"{name}_complex",
            _complex_order_samples,
            fn=_constant_first(getattr(special, name)),
            ref=_complex_order_ref(getattr(sp, name)),
            ops=(name,),
            dtypes=("complex64", "complex128"),
        )
        for name in ("jv", "yv", "iv", "kv")
    ),
    # integer orders of J and I below 0 too (ive: clear of its kink at 0, the series at -60)
    _of_order("jv", 3, unary_samples(-6.0, 6.0)),
    _of_order("iv", 2, unary_samples(-3.0, 3.0)),
    _of_order("ive", 2, unary_samples(-3.0, 3.0, avoid=(0.0,), extra=((4, 5), -120.0, 120.0))),
    # Airy: entire, complex too
    *(
        _item(
            "airy", index, op, unary_samples(-4.0, 3.0, complex_range=(-1.5, 1.5)), dtypes=ALL_DIFF
        )
        for index, op in enumerate(("airy_ai", "airy_aip", "airy_bi", "airy_bip"))
    ),
    # spherical Bessel functions: y and k only for x > 0; j and i through 0 (smooth there)
    *(
        _spherical(kind, n, unary_samples(*domain))
        for kind, domain in (("jn", (-5.0, 5.0)), ("yn", (0.4, 5.0)), ("in", (-3.0, 3.0)))
        for n in (0, 1, 3)
    ),
    *(_spherical("kn", n, unary_samples(0.4, 4.0)) for n in (0, 1, 3)),
    _spherical("jn", 2, unary_samples(-5.0, 5.0), derivative=True),
    _spherical("yn", 2, unary_samples(0.4, 5.0), derivative=True),
    # exponential integrals: expi clear of its pole at 0; exp1 and expn for x > 0
    _entry("expi", unary_samples(-3.0, 3.0, avoid=(0.0,), margin=0.3)),
    _entry("exp1", unary_samples(0.2, 4.0)),
    *(_of_order("expn", n, unary_samples(0.2, 4.0)) for n in (0, 1, 3)),
    # sine/cosine integrals (Ci, Chi clear of their pole at 0)
    _item("sici", 0, "si", unary_samples(-6.0, 6.0)),
    _item("sici", 1, "ci", unary_samples(-6.0, 6.0, avoid=(0.0,), margin=0.3)),
    _item("shichi", 0, "shi", unary_samples(-3.0, 3.0)),
    _item("shichi", 1, "chi", unary_samples(-3.0, 3.0, avoid=(0.0,), margin=0.3)),
    # entire functions, complex too
    *(
        _item("fresnel", index, op, unary_samples(complex_range=(-1.5, 1.5)), dtypes=ALL_DIFF)
        for index, op in enumerate(("fresnel_s", "fresnel_c"))
    ),
    *(
        _entry(
            name,
            unary_samples(-2.0, 2.0, complex_range=(-1.2, 1.2)),
            ref=_complex_ref(getattr(sp, name)),
            dtypes=ALL_DIFF,
        )
        for name in ("dawsn", "erfi")
    ),
    # elliptic integrals: m < 1 (K, E: nan above, inf at 1), the large samples near m = 0, where
    # the rules are series in m
    *(
        _entry(name, unary_samples(-2.0, 0.9, extra=((4, 5), -0.09, 0.09)))
        for name in ("ellipk", "ellipe")
    ),
    _entry("ellipkm1", unary_samples(0.1, 3.0, extra=((4, 5), 0.92, 1.08))),
    *(
        _entry(
            name + suffix,
            samples,
            fn=getattr(special, name),
            ref=_ref(getattr(sp, name)),
            ops=(name,),
        )
        for name in ("ellipkinc", "ellipeinc")
        for suffix, samples in (
            ("", binary_samples(-3.0, 3.0, b_low=-1.0, b_high=0.9, scalar=0.3)),
            ("_near_m0", binary_samples(-3.0, 3.0, b_low=-0.08, b_high=0.08, scalar=0.05)),
        )
    ),
    *(
        _jacobi(index, op)
        for index, op in enumerate(("ellipj_sn", "ellipj_cn", "ellipj_dn", "ellipj_ph"))
    ),
    # hypergeometric functions of static parameters: 2F1 for z < 1, U for x > 0
    _of_order("hyp0f1", 1.5, unary_samples(-3.0, 3.0)),
    _of_order("hyp0f1", -0.4, unary_samples(-3.0, 3.0)),
    _of_order("hyp1f1", (0.7, 1.3), unary_samples(-2.0, 2.0)),
    _of_order("hyp1f1", (-1.5, 2.5), unary_samples(-2.0, 2.0)),
    _of_order("hyp2f1", (0.5, 1.2, 2.1), unary_samples(-2.0, 0.8)),
    _of_order("hyperu", (0.6, 1.4), unary_samples(0.3, 4.0)),
    # Struve functions: integer orders below 0 too, non-integer ones for x > 0 (the x**v term)
    _of_order("struve", 0, unary_samples(-5.0, 5.0)),
    _of_order("struve", 1.5, unary_samples(0.2, 5.0)),
    _of_order("struve", 2, unary_samples(-5.0, 5.0)),
    _of_order("modstruve", 1, unary_samples(-3.0, 3.0)),
    _of_order("modstruve", 0.5, unary_samples(0.2, 3.0)),
    # Kelvin functions: ber, bei and their derivatives through 0 (smooth; the series of
    # berp/x and beip/x below 1, the large sample beyond); ker, kei for x > 0
    *(
        _entry(name, unary_samples(-3.0, 3.0, extra=((4, 5), -8.0, 8.0)))
        for name in ("ber", "bei", "berp", "beip")
    ),
    *(_entry(name, unary_samples(0.3, 5.0)) for name in ("ker", "kei", "kerp", "keip")),
]
