"""The standard normal distribution: ndtr (its CDF), ndtri (the inverse CDF), log_ndtr (the log
of the CDF, accurate in the far left tail).

Values come from ``scipy.special`` (``cupyx.scipy.special`` on CuPy), in the input's dtype;
real inputs only. The derivatives are written in dualad ops from the density
``exp(-x**2/2) / sqrt(2 pi)``; that of log_ndtr, the ratio of the density to the CDF, as
``sqrt(2/pi) / erfcx(-x/sqrt(2))`` for x < 0: finite and accurate for very negative x, where
the density and the CDF both underflow.
"""

from __future__ import annotations

import math as _math

from ._exports import Exports
from ._helpers import unary
from .comparison import where
from .exp_log import exp
from .special import _special_impl, erfcx

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

_LOG_SQRT_2PI = 0.5 * _math.log(2 * _math.pi)
_SQRT_2PI = _math.sqrt(2 * _math.pi)
_ONE_OVER_SQRT_2PI = 1 / _SQRT_2PI
_SQRT_2_OVER_PI = _math.sqrt(2 / _math.pi)
_ONE_OVER_SQRT_2 = 1 / _math.sqrt(2)


def _log_pdf(x):
    return (x * x) * -0.5 - _LOG_SQRT_2PI


def _log_ndtr_deriv(x, y):
    # pdf(x) / ndtr(x): for x < 0, where both underflow, sqrt(2/pi) / erfcx(-x / sqrt(2))
    # exactly (ndtr(x) = erfcx(-x/sqrt 2) exp(-x**2/2) / 2), accurate for every x (no
    # difference of two numbers of size x**2/2, which exp(log_pdf - log_ndtr) would take);
    # for x >= 0, exp(log_pdf(x) - log_ndtr(x)). (Double where: each branch sees safe x only.)
    left = x < 0
    tail = _SQRT_2_OVER_PI / erfcx(where(left, x, 0.0) * -_ONE_OVER_SQRT_2)
    body = exp(_log_pdf(where(left, 0.0, x)) - where(left, 0.0, y))
    return where(left, tail, body)


ndtr = public.inplace(
    unary(
        "ndtr",
        _special_impl("ndtr"),
        lambda x, y: exp((x * x) * -0.5) * _ONE_OVER_SQRT_2PI,
        doc="""The standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``; its derivative is the
    density ``exp(-x**2 / 2) / sqrt(2 pi)``.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.ndtr(x)
    tensor([0.5       , 0.84134475], grad_fn=<NdtrBackward0>)
    >>> dualad.autograd.grad(dualad.ndtr(x).sum(), x)
    (tensor([0.39894228, 0.24197072]),)
    """,
    )
)
ndtri = public.inplace(
    unary(
        "ndtri",
        _special_impl("ndtri"),
        lambda x, y: exp((y * y) * 0.5) * _SQRT_2PI,
        uses="y",
        doc="""The inverse of ``ndtr`` on [0, 1]: -inf at 0 and inf at 1 (the derivative
    ``sqrt(2 pi) exp(ndtri(p)**2 / 2)`` is inf there), nan outside.

    >>> import dualad
    >>> p = dualad.tensor([0.5, 0.975], requires_grad=True)
    >>> dualad.ndtri(p)
    tensor([0.        , 1.95996398], grad_fn=<NdtriBackward0>)
    >>> dualad.autograd.grad(dualad.ndtri(p).sum(), p)
    (tensor([ 2.50662827, 17.11008308]),)
    """,
    )
)
log_ndtr = public.inplace(
    unary(
        "log_ndtr",
        _special_impl("log_ndtr"),
        _log_ndtr_deriv,
        uses="xy",
        doc="""``log(ndtr(x))``, accurate for very negative x (``log_ndtr(-40)`` is about
    -804.6 where ``ndtr`` underflows). The derivative ``pdf(x) / ndtr(x)``, about ``-x`` for
    very negative x and 0 for large x, is ``sqrt(2/pi) / erfcx(-x/sqrt(2))`` for x < 0 (accurate
    however negative x is) and ``exp(log_pdf(x) - log_ndtr(x))`` for x >= 0.

    >>> import dualad
    >>> x = dualad.tensor([-40.0, 0.0], requires_grad=True)
    >>> dualad.log_ndtr(x)
    tensor([-8.04608442e+02, -6.93147181e-01], grad_fn=<LogNdtrBackward0>)
    >>> dualad.autograd.grad(dualad.log_ndtr(x).sum(), x)
    (tensor([40.02496885,  0.79788456]),)
    """,
    )
)
