"""scipy.special's distribution functions in ``dualad.special``: stdtr, stdtrit, chdtr, chdtrc,
chdtri, gdtr, gdtrc, fdtr, fdtrc, pdtr, pdtrc, bdtr, bdtrc, nbdtr, nbdtrc, ndtri_exp.

Each is one op of ``dualad.ops`` (``distributions``) with scipy's signature, real arguments
only, differentiable in its continuous variable (the density, or 1 / the density at the result
for an inverse; ``gdtr``/``gdtrc`` in the rate ``a`` too). Degrees of freedom, shapes and counts
raise ``NotImplementedError`` when tracked and their derivative is needed.
"""

from __future__ import annotations

from ..ops.distributions import (
    _bdtr,
    _bdtrc,
    _bdtri,
    _chdtr,
    _chdtrc,
    _chdtri,
    _fdtr,
    _fdtrc,
    _fdtri,
    _gdtr,
    _gdtrc,
    _gdtrix,
    _nbdtr,
    _nbdtrc,
    _nbdtri,
    _ndtri_exp,
    _pdtr,
    _pdtrc,
    _pdtri,
    _stdtr,
    _stdtrit,
)

__all__ = [
    "bdtr",
    "bdtrc",
    "chdtr",
    "chdtrc",
    "chdtri",
    "fdtr",
    "fdtrc",
    "gdtr",
    "gdtrc",
    "nbdtr",
    "nbdtrc",
    "ndtri_exp",
    "pdtr",
    "pdtrc",
    "stdtr",
    "stdtrit",
    "fdtri",
    "gdtrix",
    "pdtri",
    "bdtri",
    "nbdtri",
]


def stdtr(df, t):
    """Student's t CDF with ``df > 0`` degrees of freedom (``df = inf``: the normal CDF). The
    derivative in ``t`` is the density ``Gamma((df+1)/2) / (sqrt(df pi) Gamma(df/2)) (1 +
    t**2/df)**(-(df+1)/2)``; a tracked ``df`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import stdtr
    >>> t = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> stdtr(3.0, t)
    tensor([0.5       , 0.80449889], grad_fn=<StdtrBackward0>)
    >>> dualad.autograd.grad(stdtr(3.0, t).sum(), t)
    (tensor([0.3675526 , 0.20674834]),)
    """
    return _stdtr(df, t)


def stdtrit(df, p):
    """The inverse of ``stdtr`` in ``t`` (``0 <= p <= 1``; -inf and inf at the ends, where the
    derivative ``1 / density(t)`` is inf). A tracked ``df`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import stdtrit
    >>> p = dualad.tensor([0.5, 0.9], requires_grad=True)
    >>> dualad.autograd.grad(stdtrit(3.0, p).sum(), p)
    (tensor([2.72069905, 9.76049921]),)
    """
    return _stdtrit(df, p)


def chdtr(v, x):
    """The chi-square CDF ``gammainc(v/2, x/2)`` with ``v`` degrees of freedom, ``x >= 0``. The
    derivative in ``x`` is the density (at ``x = 0``: 0, 1/2 or inf as ``v`` is above, at or
    below 2, and every higher order its one-sided limit); a tracked ``v`` raises.

    >>> import dualad
    >>> from dualad.special import chdtr
    >>> x = dualad.tensor([1.0, 3.0], requires_grad=True)
    >>> chdtr(2.0, x)
    tensor([0.39346934, 0.77686984], grad_fn=<ChdtrBackward0>)
    >>> dualad.autograd.grad(chdtr(2.0, x).sum(), x)
    (tensor([0.30326533, 0.11156508]),)
    """
    return _chdtr(v, x)


def chdtrc(v, x):
    """The chi-square survival function ``1 - chdtr(v, x)``; the derivative in ``x`` is minus
    the density. A tracked ``v`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import chdtrc
    >>> chdtrc(2.0, dualad.tensor([1.0, 3.0]))
    tensor([0.60653066, 0.22313016])
    """
    return _chdtrc(v, x)


def chdtri(v, p):
    """The inverse of ``chdtrc`` (the upper tail!) in ``x``: ``chdtrc(v, chdtri(v, p)) == p``.
    The derivative in ``p`` is ``-1 / density(x)`` at the result (-inf at ``p = 0``). A tracked
    ``v`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import chdtri
    >>> p = dualad.tensor([0.5, 0.1], requires_grad=True)
    >>> chdtri(2.0, p)
    tensor([1.38629436, 4.60517019], grad_fn=<ChdtriBackward0>)
    >>> dualad.autograd.grad(chdtri(2.0, p).sum(), p)
    (tensor([ -4., -20.]),)
    """
    return _chdtri(v, p)


def gdtr(a, b, x):
    """The gamma CDF ``gammainc(b, a x)`` with rate ``a`` (not scale: scipy's convention) and
    shape ``b``. Differentiable in ``x`` (``a`` times the gamma density of ``a x``) and in ``a``
    (``x`` times it); a tracked shape ``b`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import gdtr
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> gdtr(2.0, 3.0, x)
    tensor([0.0803014 , 0.57680992], grad_fn=<GdtrBackward0>)
    >>> dualad.autograd.grad(gdtr(2.0, 3.0, x).sum(), x)
    (tensor([0.36787944, 0.44808362]),)
    """
    return _gdtr(a, b, x)


def gdtrc(a, b, x):
    """The gamma survival function ``gammaincc(b, a x)`` (rate ``a``, shape ``b``);
    differentiable in ``x`` and ``a`` (minus ``gdtr``'s partials). A tracked ``b`` raises.

    >>> import dualad
    >>> from dualad.special import gdtrc
    >>> gdtrc(2.0, 3.0, dualad.tensor([0.5, 1.5]))
    tensor([0.9196986 , 0.42319008])
    """
    return _gdtrc(a, b, x)


def fdtr(dfn, dfd, x):
    """The F distribution's CDF ``betainc(dfn/2, dfd/2, dfn x / (dfd + dfn x))``, ``x >= 0``.
    The derivative in ``x`` is the F density; tracked ``dfn`` or ``dfd`` raise
    ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import fdtr
    >>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
    >>> fdtr(3.0, 5.0, x)
    tensor([0.30154736, 0.76737608], grad_fn=<FdtrBackward0>)
    >>> dualad.autograd.grad(fdtr(3.0, 5.0, x).sum(), x)
    (tensor([0.58601479, 0.14289639]),)
    """
    return _fdtr(dfn, dfd, x)


def fdtrc(dfn, dfd, x):
    """The F distribution's survival function ``1 - fdtr``; its derivative in ``x`` is minus
    the density. Tracked ``dfn`` or ``dfd`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import fdtrc
    >>> fdtrc(3.0, 5.0, dualad.tensor([0.5, 2.0]))
    tensor([0.69845264, 0.23262392])
    """
    return _fdtrc(dfn, dfd, x)


def pdtr(k, m):
    """The Poisson CDF ``P(N <= k)`` of mean ``m >= 0``, ``gammaincc(floor(k) + 1, m)`` (``k``
    floored, as scipy). The derivative in ``m`` is ``-m**k exp(-m) / k!``; a tracked ``k``
    raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import pdtr
    >>> m = dualad.tensor([1.0, 3.0], requires_grad=True)
    >>> pdtr(2, m)
    tensor([0.9196986 , 0.42319008], grad_fn=<PdtrBackward0>)
    >>> dualad.autograd.grad(pdtr(2, m).sum(), m)
    (tensor([-0.18393972, -0.22404181]),)
    """
    return _pdtr(k, m)


def pdtrc(k, m):
    """The Poisson survival function ``P(N > k) = gammainc(floor(k) + 1, m)``; its derivative in
    ``m`` is ``m**k exp(-m) / k!``. A tracked ``k`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import pdtrc
    >>> pdtrc(2, dualad.tensor([1.0, 3.0]))
    tensor([0.0803014 , 0.57680992])
    """
    return _pdtrc(k, m)


def bdtr(k, n, p):
    """The binomial CDF ``P(N <= k)`` of ``n`` trials with success probability ``p``:
    ``betainc(n - k, k + 1, 1 - p)`` (``k`` and ``n`` floored, as scipy). Differentiable in
    ``p``; tracked ``k`` or ``n`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import bdtr
    >>> p = dualad.tensor([0.25, 0.5], requires_grad=True)
    >>> bdtr(2, 5, p)
    tensor([0.89648438, 0.5       ], grad_fn=<BdtrBackward0>)
    >>> dualad.autograd.grad(bdtr(2, 5, p).sum(), p)
    (tensor([-1.0546875, -1.875    ]),)
    """
    return _bdtr(k, n, p)


def bdtrc(k, n, p):
    """The binomial survival function ``P(N > k) = betainc(k + 1, n - k, p)``; differentiable
    in ``p``, tracked ``k`` or ``n`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import bdtrc
    >>> bdtrc(2, 5, dualad.tensor([0.25, 0.5]))
    tensor([0.10351562, 0.5       ])
    """
    return _bdtrc(k, n, p)


def nbdtr(k, n, p):
    """The negative binomial CDF: the probability of at most ``k`` failures before the ``n``-th
    success, ``betainc(n, k + 1, p)`` (``k`` and ``n`` floored). Differentiable in ``p``;
    tracked ``k`` or ``n`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import nbdtr
    >>> p = dualad.tensor([0.25, 0.5], requires_grad=True)
    >>> dualad.autograd.grad(nbdtr(2, 5, p).sum(), p)
    (tensor([0.23071289, 1.640625  ]),)
    """
    return _nbdtr(k, n, p)


def nbdtrc(k, n, p):
    """The negative binomial survival function ``1 - nbdtr(k, n, p)``; differentiable in
    ``p``, tracked ``k`` or ``n`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import nbdtrc
    >>> nbdtrc(2, 5, dualad.tensor([0.25, 0.5]))
    tensor([0.98712158, 0.7734375 ])
    """
    return _nbdtrc(k, n, p)


def ndtri_exp(y):
    """``ndtri(exp(y))`` for ``y <= 0``, accurate for very negative ``y`` (inf at 0, nan above).
    The derivative ``exp(y) / pdf(x)`` at the result ``x`` is computed as ``sqrt(pi/2)
    erfcx(-x/sqrt(2))``: about ``-1/x`` for very negative ``y``, inf at ``y = 0``.

    >>> import dualad
    >>> from dualad.special import ndtri_exp
    >>> y = dualad.tensor([-100.0, -0.5], requires_grad=True)
    >>> ndtri_exp(y)
    tensor([-13.88847603,   0.27028802], grad_fn=<NdtriExpBackward0>)
    >>> dualad.autograd.grad(ndtri_exp(y).sum(), y)
    (tensor([0.07163452, 1.57690859]),)
    """
    return _ndtri_exp(y)


def fdtri(dfn, dfd, p):
    """The inverse of ``fdtr`` in ``x``; the derivative in ``p`` is ``1 / density(x)`` at the
    result (inf at ``p = 1``). Tracked ``dfn`` or ``dfd`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import fdtri
    >>> p = dualad.tensor([0.25, 0.75], requires_grad=True)
    >>> fdtri(3.0, 5.0, p)
    tensor([0.41502458, 1.88426785], grad_fn=<FdtriBackward0>)
    >>> dualad.autograd.grad(fdtri(3.0, 5.0, p).sum(), p)
    (tensor([1.5960128 , 6.34172422]),)
    """
    return _fdtri(dfn, dfd, p)


def gdtrix(a, b, p):
    """The inverse of ``gdtr`` in ``x`` (rate ``a``, shape ``b``): ``gammaincinv(b, p) / a``.
    Differentiable in ``p`` (``1 / (a density(a x))`` at the result) and in ``a``
    (``-x / a``); a tracked ``b`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import gdtrix
    >>> p = dualad.tensor([0.25, 0.75], requires_grad=True)
    >>> dualad.autograd.grad(gdtrix(2.0, 3.0, p).sum(), p)
    (tensor([1.88547749, 3.28055833]),)
    """
    return _gdtrix(a, b, p)


def pdtri(k, y):
    """The inverse of ``pdtr`` in the mean ``m`` (``k`` floored); its derivative in ``y`` is
    ``-k! / (m**k exp(-m))`` at the result. A tracked ``k`` raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import pdtri
    >>> y = dualad.tensor([0.25, 0.75], requires_grad=True)
    >>> pdtri(2, y)
    tensor([3.92040206, 1.72729942], grad_fn=<PdtriBackward0>)
    >>> dualad.autograd.grad(pdtri(2, y).sum(), y)
    (tensor([-6.56111666, -3.77095498]),)
    """
    return _pdtri(k, y)


def bdtri(k, n, y):
    """The inverse of ``bdtr`` in ``p`` (``n`` floored); its derivative in ``y`` is 1 / bdtr's
    derivative in ``p`` at the result. Tracked ``k`` or ``n`` raise ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import bdtri
    >>> y = dualad.tensor([0.25, 0.75], requires_grad=True)
    >>> dualad.autograd.grad(bdtri(2, 5, y).sum(), y)
    (tensor([-0.62879687, -0.62879687]),)
    """
    return _bdtri(k, n, y)


def nbdtri(k, n, y):
    """The inverse of ``nbdtr`` in ``p`` (``k`` and ``n`` floored); its derivative in ``y`` is
    1 / nbdtr's derivative in ``p`` at the result. Tracked ``k`` or ``n`` raise
    ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import nbdtri
    >>> y = dualad.tensor([0.25, 0.75], requires_grad=True)
    >>> nbdtri(2, 5, y)
    tensor([0.51390301, 0.74692602], grad_fn=<NbdtriBackward0>)
    """
    return _nbdtri(k, n, y)
