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

import scipy.special as sp

import dualad.special as special

from . import FLOATING, OpInfo, SampleInput, uniform
from ._elementwise_samples import BROADCAST_PAIRS, unary_samples
from .special import _constant_first, _ref


def _orders(low, high, v_low, v_high, extra=None):
    """``(v, x)`` calls differentiable in x: broadcast pairs of order and argument tensors, one
    number order, and ``extra=(low, high)`` one larger sample of x."""

    def samples(rng, dtype):
        out = []
        for sv, sx in BROADCAST_PAIRS:
            v = uniform(rng, sv, dtype, v_low, v_high)
            x = uniform(rng, sx, dtype, low, high)
            out.append(SampleInput((v, x), diff=(1,), note=f"{sv} with {sx}"))
        x = uniform(rng, (2, 3), dtype, low, high)
        out.append(SampleInput(((v_low + v_high) / 2, x), diff=(1,), note="number order"))
        if extra is not None:
            x = uniform(rng, (4, 5), dtype, *extra)
            v = uniform(rng, (5,), dtype, v_low, v_high)
            out.append(SampleInput((v, x), diff=(1,), note="large x"))
        return out

    return samples


def _entry(name, samples, *, fn=None, ref=None, ops=None, **options):
    fn = getattr(special, name) if fn is None else fn
    ref = _ref(getattr(sp, name)) if ref is None else ref
    return OpInfo(name, fn, samples, ops=ops or (name,), ref=ref, dtypes=FLOATING, **options)


def _of_order(name, v, samples):
    """``special.<name>(v, x)`` for one Python order ``v``."""
    return _entry(
        f"{name}_{v}",
        samples,
        fn=lambda x: getattr(special, name)(v, x),
        ref=_ref(lambda x: getattr(sp, name)(v, x)),
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
    # integer orders of J and I below 0 too (ive: clear of its kink at 0, the series at -60)
    _of_order("jv", 3, unary_samples(-6.0, 6.0)),
    _of_order("iv", 2, unary_samples(-3.0, 3.0)),
    _of_order("ive", 2, unary_samples(-3.0, 3.0, avoid=(0.0,), extra=((4, 5), -120.0, 120.0))),
]
