"""The Gamma and Beta functions of ``dualad.special`` beyond ``gammaln``: gamma, loggamma,
rgamma, gammasgn, poch, beta, betainc, betaincc, betaincinv, gammaincinv, gammainccinv.

Each is one op of ``dualad.ops`` (no top-level ``dualad.gamma``: NumPy users read that name as
a distribution), with scipy's name and signature. Shape parameters without a closed-form
derivative (betainc's ``a`` and ``b``, gammaincinv's ``a``) raise ``NotImplementedError`` when a
tracked one's derivative is needed; as constants they are fine.
"""

from __future__ import annotations

from ..ops.incomplete_beta import (
    _betainc,
    _betaincc,
    _betaincinv,
    _gammainccinv,
    _gammaincinv,
)
from ..ops.special_gamma import _beta, _binom, _gamma, _gammasgn, _loggamma, _poch, _rgamma

__all__ = [
    "beta",
    "betainc",
    "betaincc",
    "betaincinv",
    "gamma",
    "gammaincinv",
    "gammainccinv",
    "gammasgn",
    "loggamma",
    "poch",
    "rgamma",
    "binom",
]


def gamma(z):
    """The Gamma function of real or complex ``z``. Poles at 0, -1, -2, ... (scipy: inf at 0,
    nan at the negative integers; its derivative is nan there); overflows to inf beyond about
    171.6. The derivative ``gamma(z) digamma(z)`` is holomorphic for complex ``z`` (PyTorch's
    conjugate convention in reverse mode), every order exact.

    >>> import dualad
    >>> from dualad.special import gamma
    >>> x = dualad.tensor([0.5, 4.0], requires_grad=True)
    >>> gamma(x)
    tensor([1.77245385, 6.        ], grad_fn=<GammaBackward0>)
    >>> dualad.autograd.grad(gamma(x).sum(), x)
    (tensor([-3.48023091,  7.53670601]),)
    """
    return _gamma(z)


def loggamma(z):
    """The principal branch of ``log Gamma(z)`` (scipy's ``loggamma``): for complex ``z``
    analytic off the negative real axis (the branch cut, where the imaginary part jumps by a
    multiple of 2 pi); for real ``z`` it equals ``gammaln`` for ``z > 0`` and is nan for
    ``z < 0`` (and so is its derivative); inf at 0. The derivative is ``digamma(z)``.

    >>> import dualad
    >>> from dualad.special import loggamma
    >>> loggamma(dualad.tensor([1.0 + 1.0j]))
    tensor([-0.6509232-0.30164032j])
    """
    return _loggamma(z)


def rgamma(z):
    """``1 / Gamma(z)`` of real or complex ``z``, an entire function: 0 at 0, -1, -2, ...
    The derivative ``-rgamma(z) digamma(z)`` is nan at those points (0 times the pole of
    digamma; the true value there is ``(-1)**n n!`` at ``-n``) and exact elsewhere.

    >>> import dualad
    >>> from dualad.special import rgamma
    >>> rgamma(dualad.tensor([0.0, 3.0]))
    tensor([0. , 0.5])
    """
    return _rgamma(z)


def gammasgn(x):
    """The sign of ``Gamma(x)`` of real ``x`` (1 or -1; scipy gives nan at the negative
    integers, 1 at +0 and -1 at -0). Piecewise constant: its derivative is 0 (as ``sign``).

    >>> import dualad
    >>> from dualad.special import gammasgn
    >>> gammasgn(dualad.tensor([-1.5, -0.5, 2.0]))
    tensor([ 1., -1.,  1.])
    """
    return _gammasgn(x)


def poch(z, m):
    """Pochhammer's symbol ``(z)_m = Gamma(z + m) / Gamma(z)`` of real ``z`` and ``m`` (scipy:
    a finite product for integer ``m`` even where ``z`` is a pole). Differentiable in both:
    ``poch (digamma(z + m) - digamma(z))`` and ``poch digamma(z + m)`` (nan where ``z`` or
    ``z + m`` is a pole).

    >>> import dualad
    >>> from dualad.special import poch
    >>> m = dualad.tensor(2.0, requires_grad=True)
    >>> poch(3.0, m)
    tensor(12., grad_fn=<PochBackward0>)
    >>> dualad.autograd.grad(poch(3.0, m), m)
    (tensor(18.07341202),)
    """
    return _poch(z, m)


def beta(a, b):
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)`` of real ``a`` and ``b`` (poles
    where ``a`` or ``b`` is 0, -1, -2, ...). Partials ``beta (digamma(a) - digamma(a + b))``
    and ``beta (digamma(b) - digamma(a + b))``.

    >>> import dualad
    >>> from dualad.special import beta
    >>> a = dualad.tensor(2.0, requires_grad=True)
    >>> beta(a, 3.0)
    tensor(0.08333333, grad_fn=<BetaBackward0>)
    >>> dualad.autograd.grad(beta(a, 3.0), a)
    (tensor(-0.09027778),)
    """
    return _beta(a, b)


def betainc(a, b, x):
    """The regularised incomplete beta function ``I_x(a, b)`` for ``a, b > 0`` and
    ``0 <= x <= 1`` (nan outside). Differentiable in ``x``: the beta density
    ``x**(a-1) (1-x)**(b-1) / B(a, b)``, whose own derivatives are regular at every order
    (at ``x = 0`` and ``1`` their one-sided limits: 0, finite or inf as ``a`` (``b``) is above,
    at or below 1). Tracked ``a`` or ``b`` raise ``NotImplementedError`` (no closed form).

    >>> import dualad
    >>> from dualad.special import betainc
    >>> x = dualad.tensor([0.25, 0.5], requires_grad=True)
    >>> betainc(2.0, 3.0, x)
    tensor([0.26171875, 0.6875    ], grad_fn=<BetaincBackward0>)
    >>> dualad.autograd.grad(betainc(2.0, 3.0, x).sum(), x)
    (tensor([1.6875, 1.5   ]),)
    """
    return _betainc(a, b, x)


def betaincc(a, b, x):
    """The complement ``1 - I_x(a, b)`` of ``betainc``, accurate where ``betainc`` is close to
    1; its derivative in ``x`` is minus the beta density (same limits at 0 and 1). Tracked
    ``a`` or ``b`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import betaincc
    >>> betaincc(2.0, 3.0, dualad.tensor([0.25, 0.5]))
    tensor([0.73828125, 0.3125    ])
    """
    return _betaincc(a, b, x)


def betaincinv(a, b, y):
    """The inverse of ``betainc`` in ``x``: ``betainc(a, b, betaincinv(a, b, y)) == y`` for
    ``0 <= y <= 1``. The derivative in ``y`` is ``1 / density(a, b, x)`` at the result ``x``
    (inf at ``y = 0`` or ``1`` where the density vanishes there, i.e. ``a > 1`` or ``b > 1``).
    Tracked ``a`` or ``b`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import betaincinv
    >>> y = dualad.tensor(0.6875, requires_grad=True)
    >>> betaincinv(2.0, 3.0, y)
    tensor(0.5, grad_fn=<BetaincinvBackward0>)
    >>> dualad.autograd.grad(betaincinv(2.0, 3.0, y), y)
    (tensor(0.66666667),)
    """
    return _betaincinv(a, b, y)


def gammaincinv(a, y):
    """The inverse of ``gammainc`` in ``x``: ``gammainc(a, gammaincinv(a, y)) == y`` for
    ``0 <= y <= 1`` (``a > 0``). The derivative in ``y`` is ``1 / (x**(a-1) exp(-x) /
    Gamma(a))`` at the result ``x`` (inf at ``y = 1``, and at ``y = 0`` for ``a > 1``). A
    tracked ``a`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import gammaincinv
    >>> y = dualad.tensor(0.5, requires_grad=True)
    >>> gammaincinv(1.0, y)
    tensor(0.69314718, grad_fn=<GammaincinvBackward0>)
    >>> dualad.autograd.grad(gammaincinv(1.0, y), y)
    (tensor(2.),)
    """
    return _gammaincinv(a, y)


def gammainccinv(a, y):
    """The inverse of ``gammaincc`` in ``x``: ``gammaincc(a, gammainccinv(a, y)) == y``. The
    derivative in ``y`` is ``-1 / density(a, x)`` at the result ``x`` (-inf at ``y = 0``). A
    tracked ``a`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import gammainccinv
    >>> y = dualad.tensor(0.5, requires_grad=True)
    >>> dualad.autograd.grad(gammainccinv(1.0, y), y)
    (tensor(-2.),)
    """
    return _gammainccinv(a, y)


def binom(n, k):
    """The binomial coefficient ``Gamma(n + 1) / (Gamma(k + 1) Gamma(n - k + 1))`` of real ``n``
    and ``k`` (scipy's values: exact products for integer ``k``). Partials ``binom (digamma(n +
    1) - digamma(n - k + 1))`` and ``binom (digamma(n - k + 1) - digamma(k + 1))``: nan where one
    of the Gamma functions has a pole (e.g. a negative integer ``n``), where scipy's value is a
    limit.

    >>> import dualad
    >>> from dualad.special import binom
    >>> k = dualad.tensor([2.0, 2.5], requires_grad=True)
    >>> binom(5.0, k)
    tensor([10.        , 10.86497745], grad_fn=<BinomBackward0>)
    >>> dualad.autograd.grad(binom(5.0, k).sum(), k)
    (tensor([3.33333333, 0.        ]),)
    """
    return _binom(n, k)
