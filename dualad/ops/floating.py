"""Floating-point representation: ldexp, frexp, frac (the fractional part of modf), nextafter,
spacing.

``ldexp(x, n) = x * 2**n`` is differentiable in ``x`` (derivative ``2**n``; ``n`` is an integer
exponent); ``frexp`` is ``(ldexp(x, -e), e)`` with the integer exponent ``e`` not differentiable,
so the mantissa's derivative is ``2**-e``; ``frac`` has derivative 1 (its jumps at the integers
aside). ``nextafter`` and ``spacing`` give the neighbouring floats: no derivative.
"""

from __future__ import annotations

from .._creation import ones_like
from . import _xp_compat
from ._exports import Exports
from ._helpers import binary, nondiff_binary, nondiff_unary, unary
from ._promotion import _floating, _reject_complex
from .arithmetic import neg

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _ldexp_impl(xp, x, n):
    _reject_complex("ldexp", x)
    return xp.ldexp(x, n)


ldexp = public.method(
    binary(
        "ldexp",
        _ldexp_impl,
        (lambda x, n, y: ldexp(ones_like(x), n), None),
        uses="ab",
        doc="""``x * 2**n`` for an integer exponent ``n`` (NumPy's ``ldexp``); differentiable in
    ``x`` (derivative ``2**n``), not in ``n``.

    >>> import dualad
    >>> x = dualad.tensor([0.75, 3.0], requires_grad=True)
    >>> dualad.ldexp(x, dualad.tensor([2, -1]))
    tensor([3. , 1.5], grad_fn=<LdexpBackward0>)
    """,
    )
)


def _frac_impl(xp, x):
    _reject_complex("frac", x)
    return xp.modf(_floating(x))[0]


frac = public.inplace(
    unary(
        "frac",
        _frac_impl,
        lambda x, y: 1,
        uses="",
        doc="""The fractional part ``x - trunc(x)``, with the sign of ``x`` (NumPy's
    ``modf(x)[0]``: 0 for infinite ``x``); derivative 1 between the integers, where it jumps.

    >>> import dualad
    >>> dualad.frac(dualad.tensor([2.25, -1.5]))
    tensor([ 0.25, -0.5 ])
    """,
    )
)

# the exponent of frexp (an integer: no derivative); frexp below is the public function
_frexp_exponent = nondiff_unary("frexp_exponent", lambda xp, x: xp.frexp(x)[1])


@public.method
def frexp(x):
    """The mantissa and the integer exponent of ``x`` (``x == mantissa * 2**exponent``, the
    mantissa in ``[0.5, 1)`` in magnitude), as NumPy's ``frexp``; the mantissa is differentiable
    (derivative ``2**-exponent``), the exponent is not.

    >>> import dualad
    >>> dualad.frexp(dualad.tensor([8.0, -0.75]))
    (tensor([ 0.5 , -0.75]), tensor([4, 0], dtype=int32))
    """
    exponent = _frexp_exponent(x)
    return ldexp(x, neg(exponent)), exponent


nextafter = public.method(
    nondiff_binary(
        "nextafter",
        lambda xp, a, b: xp.nextafter(a, b),
        doc="""The next float after ``a`` towards ``b`` (no derivative).

        >>> import dualad
        >>> dualad.nextafter(dualad.tensor([1.0]), dualad.tensor([2.0])) - 1.0
        tensor([2.22044605e-16])
        """,
    )
)


spacing = public.method(
    nondiff_unary(
        "spacing",
        lambda xp, x: _xp_compat.spacing(xp, x),
        doc="""The distance from ``x`` to the next float away from 0 (no derivative).

        >>> import dualad
        >>> dualad.spacing(dualad.tensor([1.0])) == 2.0 ** -52
        tensor([ True])
        """,
    )
)
