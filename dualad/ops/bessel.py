"""Modified Bessel functions of the first kind: i0, i1 and their exponentially scaled versions
i0e, i1e (``exp(-|x|) I_n(x)``).

Values come from ``scipy.special`` (``cupyx.scipy.special`` on CuPy), in the input's dtype;
real inputs only. The derivatives use the recurrence ``I_n' = (I_{n-1} + I_{n+1}) / 2``
(``I_{-1} = I_1``), which is smooth at 0, so every order is right there too (``i1' = i0 - i1/x``
would need a limit at 0 whose own derivatives are wrong). The orders above 1 that the rules of
higher orders reach are the private ops ``bessel_in``/``bessel_ine`` (scipy's ``iv``/``ive``
with a static integer order). The scaled functions' derivatives beyond |x| = 50 come from the
asymptotic series, where the recurrence's terms cancel.
"""

from __future__ import annotations

import math as _math

import numpy as np
import scipy.special

from .._backend import unavailable_on_cuda
from .._dispatch import apply1
from ._exports import Exports
from ._helpers import _unary_with_params, unary
from ._promotion import _float_array, _reject_complex
from .arithmetic import sqrt
from .comparison import where
from .complex_parts import absolute
from .rounding import sign
from .special import _special_impl

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _order_impl(name, numpy_function, low_orders):
    """The impl of ``I_n`` (or its scaled version) of static order ``n`` >= 2."""

    def impl(xp, x, *, n):
        x = _float_array(x)
        _reject_complex(name, x)
        wide = x.astype(np.float64, copy=False)
        if xp is not np:
            # cupyx.scipy.special has no iv/ive (only derivatives of order two and more of
            # i1/i1e reach them)
            raise unavailable_on_cuda(name, "cupyx.scipy.special has no iv/ive")
        if n != 2:
            return np.asarray(numpy_function(n, wide), dtype=x.dtype)
        # order 2, which the first derivative of i1 needs: scipy's iv is ~10x slower than i0 and
        # i1, so away from 0 the recurrence I_2 = I_0 - 2 I_1 / x (it loses at most a factor 3
        # to cancellation for |x| >= 2); iv near 0, where the recurrence cancels
        order0, order1 = low_orders
        out = np.empty_like(wide)
        far = np.abs(wide) >= 2.0
        x_far = wide[far]
        out[far] = order0(x_far) - 2.0 * order1(x_far) / x_far
        out[~far] = numpy_function(2, wide[~far])
        return out.astype(x.dtype, copy=False)

    return impl


def _bessel_i(n: int, x):
    """``I_n(x)`` for a static integer n >= 0, as the op of that order."""
    if n == 0:
        return i0(x)
    if n == 1:
        return i1(x)
    return apply1(_bessel_in_op, x, {"n": n})


def _bessel_ie(n: int, x):
    """``exp(-|x|) I_n(x)`` for a static integer n >= 0, as the op of that order."""
    if n == 0:
        return i0e(x)
    if n == 1:
        return i1e(x)
    return apply1(_bessel_ine_op, x, {"n": n})


def _bessel_i_deriv(n: int, x):
    # I_n' = (I_{n-1} + I_{n+1}) / 2, with I_{-1} = I_1
    return (_bessel_i(abs(n - 1), x) + _bessel_i(n + 1, x)) * 0.5


def _bessel_ie_deriv(n: int, x, y):
    # (exp(-|x|) I_n)' = exp(-|x|) I_n' - sign(x) exp(-|x|) I_n; sign(0) = 0 at the kink. For
    # large |x| the two terms nearly cancel (their difference is about 1/(2|x|) of each, so
    # 2|x| ulp are lost: all of them by 1e15): beyond 50 (+ 10 n**2) the asymptotic series
    near = (_bessel_ie(abs(n - 1), x) + _bessel_ie(n + 1, x)) * 0.5 - sign(x) * y
    limit = _FAR + 10.0 * n * n  # (the series converges later for higher orders)
    far = absolute(x) > limit
    u = 1 / absolute(where(far, x, limit))  # (double where: the series never sees small x)
    coefficients = _far_series(n)
    series = coefficients[-1] * u
    for coefficient in reversed(coefficients[1:-1]):
        series = (series + coefficient) * u
    series = (series + coefficients[0]) * (u * sqrt(u))
    if n % 2 == 0:  # I_n has the parity of n, its derivative the other one
        series = series * sign(x)
    return where(far, series, near)


# exp(-x) I_n(x) ~ (2 pi x)**-1/2 sum_k (-1)**k a_k(n) x**-k for large x > 0, with
# a_k(n) = prod_{j<=k} (4 n**2 - (2j - 1)**2) / (k! 8**k): its derivative's coefficients of
# x**(-k - 3/2). Twelve terms are exact to double precision beyond _FAR + 10 n**2 (the first
# term left out is below 4e-16 of the first).
_FAR = 50.0


def _far_series(n: int) -> list:
    out, a = [], 1.0
    for k in range(12):
        if k:
            a *= (4 * n * n - (2 * k - 1) ** 2) / (k * 8)
        out.append((-1) ** (k + 1) * a * (k + 0.5) / _math.sqrt(2 * _math.pi))
    return out


_bessel_in_op = _unary_with_params(
    "bessel_in",
    _order_impl("bessel_in", scipy.special.iv, (scipy.special.i0, scipy.special.i1)),
    lambda x, y, *, n: _bessel_i_deriv(n, x),
)
_bessel_ine_op = _unary_with_params(
    "bessel_ine",
    _order_impl("bessel_ine", scipy.special.ive, (scipy.special.i0e, scipy.special.i1e)),
    lambda x, y, *, n: _bessel_ie_deriv(n, x, y),
    uses="xy",
)


i0 = public.inplace(
    unary(
        "i0",
        _special_impl("i0"),
        lambda x, y: i1(x),
        doc="""Modified Bessel function of the first kind of order 0 (even; overflows for
    |x| > ~713). Its derivative is ``i1(x)``.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.i0(x)
    tensor([1.        , 1.26606588], grad_fn=<I0Backward0>)
    >>> dualad.autograd.grad(dualad.i0(x).sum(), x)
    (tensor([0.       , 0.5651591]),)
    """,
    )
)
i1 = public.inplace(
    unary(
        "i1",
        _special_impl("i1"),
        lambda x, y: _bessel_i_deriv(1, x),
        doc="""Modified Bessel function of the first kind of order 1 (odd). Its derivative
    ``(i0(x) + I_2(x)) / 2`` equals ``i0(x) - i1(x)/x``, and 1/2 at 0.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.i1(x)
    tensor([0.       , 0.5651591], grad_fn=<I1Backward0>)
    >>> dualad.autograd.grad(dualad.i1(x).sum(), x)
    (tensor([0.5       , 0.70090677]),)
    """,
    )
)
i0e = public.inplace(
    unary(
        "i0e",
        _special_impl("i0e"),
        lambda x, y: _bessel_ie_deriv(0, x, y),
        uses="xy",
        doc="""``exp(-|x|) i0(x)``, finite for every x. Its derivative ``i1e(x) - sign(x)
    i0e(x)`` (the asymptotic series beyond |x| = 50, where that difference cancels) jumps at 0
    (from 1 to -1, the kink of ``exp(-|x|)``); there it is 0 (the mean of the one-sided
    derivatives, as ``abs`` gives 0 at 0).

    >>> import dualad
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.i0e(x)
    tensor([1.        , 0.46575961], grad_fn=<I0eBackward0>)
    >>> dualad.autograd.grad(dualad.i0e(x).sum(), x)
    (tensor([ 0.        , -0.25784919]),)
    """,
    )
)
i1e = public.inplace(
    unary(
        "i1e",
        _special_impl("i1e"),
        lambda x, y: _bessel_ie_deriv(1, x, y),
        uses="xy",
        doc="""``exp(-|x|) i1(x)``, finite for every x. Its derivative ``(i0e(x) + I_2e(x)) / 2 -
    sign(x) i1e(x)`` is 1/2 at 0; the second derivative jumps there (from 1 to -1) and is 0 at 0.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.i1e(x)
    tensor([0.        , 0.20791042], grad_fn=<I1eBackward0>)
    >>> dualad.autograd.grad(dualad.i1e(x).sum(), x)
    (tensor([0.5       , 0.04993878]),)
    """,
    )
)
