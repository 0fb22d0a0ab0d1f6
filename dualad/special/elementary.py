"""scipy.special's elementary functions in ``dualad.special``: log_expit, exprel, powm1, cosm1,
exp10, sindg, cosdg, tandg, cotdg, boxcox, boxcox1p, inv_boxcox, inv_boxcox1p, huber,
pseudo_huber, owens_t.

Each is one op of ``dualad.ops`` (``elementary_special``), real arguments only (as scipy's),
differentiable in every argument. Where a formula has a removable singularity (exprel at 0,
the Box-Cox transforms at ``lmbda = 0``) the derivatives of every order are the limits there.
"""

from __future__ import annotations

from ..ops.elementary_special import (
    _boxcox,
    _boxcox1p,
    _cosdg,
    _cosm1,
    _cotdg,
    _exp10,
    _exprel,
    _huber,
    _inv_boxcox,
    _inv_boxcox1p,
    _log_expit,
    _owens_t,
    _powm1,
    _pseudo_huber,
    _sindg,
    _spence,
    _tandg,
    _wrightomega,
)

__all__ = [
    "boxcox",
    "boxcox1p",
    "cosdg",
    "cosm1",
    "cotdg",
    "exp10",
    "exprel",
    "huber",
    "inv_boxcox",
    "inv_boxcox1p",
    "log_expit",
    "owens_t",
    "powm1",
    "pseudo_huber",
    "sindg",
    "tandg",
    "spence",
    "wrightomega",
]


def log_expit(x):
    """``log(expit(x)) = -log1p(exp(-x))``, accurate for large ``|x|``; its derivative is
    ``expit(-x)`` (1 for very negative ``x``, 0 for large ``x``).

    >>> import dualad
    >>> from dualad.special import log_expit
    >>> x = dualad.tensor([-40.0, 0.0], requires_grad=True)
    >>> log_expit(x)
    tensor([-40.        ,  -0.69314718], grad_fn=<LogExpitBackward0>)
    >>> dualad.autograd.grad(log_expit(x).sum(), x)
    (tensor([1. , 0.5]),)
    """
    return _log_expit(x)


def exprel(x):
    """``(exp(x) - 1) / x``, 1 at ``x = 0`` (the limit). Its derivative ``exprel(x) -
    phi_2(x)`` (``phi_2(x) = (exp(x) - 1 - x) / x**2``) is 1/2 at 0, and every higher order
    is the limit there too (the phi functions' chain ``phi_k' = phi_k - k phi_(k+1)``).
    Overflows to inf for ``x`` above about 709.

    >>> import dualad
    >>> from dualad.special import exprel
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> exprel(x)
    tensor([1.        , 1.71828183], grad_fn=<ExprelBackward0>)
    >>> dualad.autograd.grad(exprel(x).sum(), x)
    (tensor([0.5, 1. ]),)
    """
    return _exprel(x)


def powm1(x, y):
    """``x**y - 1``, accurate for ``y`` near 0 or ``x`` near 1. Partials ``y x**(y-1)`` and
    ``x**y log(x)`` (nan for ``x < 0``; at ``x = 0`` the first is inf for ``0 < y < 1`` and the
    second nan, 0 times log(0)).

    >>> import dualad
    >>> from dualad.special import powm1
    >>> y = dualad.tensor(1e-10, requires_grad=True)
    >>> powm1(2.0, y)
    tensor(6.93147181e-11, grad_fn=<Powm1Backward0>)
    >>> dualad.autograd.grad(powm1(2.0, y), y)
    (tensor(0.69314718),)
    """
    return _powm1(x, y)


def cosm1(x):
    """``cos(x) - 1``, accurate for small ``x``; derivative ``-sin(x)``.

    >>> import dualad
    >>> from dualad.special import cosm1
    >>> cosm1(dualad.tensor([1e-4, 1.0]))
    tensor([-5.00000000e-09, -4.59697694e-01])
    """
    return _cosm1(x)


def exp10(x):
    """``10**x``; derivative ``10**x log(10)``.

    >>> import dualad
    >>> from dualad.special import exp10
    >>> exp10(dualad.tensor([-1.0, 2.0]))
    tensor([  0.1, 100. ])
    """
    return _exp10(x)


def sindg(x):
    """The sine of ``x`` degrees (exact at multiples of 30 and 90 degrees); derivative
    ``pi/180 cosdg(x)``.

    >>> import dualad
    >>> from dualad.special import sindg
    >>> sindg(dualad.tensor([30.0, 90.0]))
    tensor([0.5, 1. ])
    """
    return _sindg(x)


def cosdg(x):
    """The cosine of ``x`` degrees; derivative ``-pi/180 sindg(x)``.

    >>> import dualad
    >>> from dualad.special import cosdg
    >>> cosdg(dualad.tensor([60.0, 180.0]))
    tensor([ 0.5, -1. ])
    """
    return _cosdg(x)


def tandg(x):
    """The tangent of ``x`` degrees: inf at 90 + 180 k (scipy's value; the derivative
    ``pi/180 (1 + tandg(x)**2)`` is inf there too).

    >>> import dualad
    >>> from dualad.special import tandg
    >>> x = dualad.tensor([45.0, 0.0], requires_grad=True)
    >>> dualad.autograd.grad(tandg(x).sum(), x)
    (tensor([0.03490659, 0.01745329]),)
    """
    return _tandg(x)


def cotdg(x):
    """The cotangent of ``x`` degrees: inf at multiples of 180 (and the derivative
    ``-pi/180 (1 + cotdg(x)**2)`` -inf there).

    >>> import dualad
    >>> from dualad.special import cotdg
    >>> cotdg(dualad.tensor([45.0, 90.0]))
    tensor([1., 0.])
    """
    return _cotdg(x)


def boxcox(x, lmbda):
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log(x)`` at ``lmbda = 0``), for
    ``x >= 0`` (nan below; at ``x = 0``, ``-1/lmbda`` or -inf). Differentiable in both:
    ``x**(lmbda - 1)`` and ``L**2 exprel'(lmbda L)`` with ``L = log(x)``, which is
    ``log(x)**2 / 2`` at ``lmbda = 0``: every order is regular at ``lmbda = 0``.

    >>> import dualad
    >>> from dualad.special import boxcox
    >>> lmbda = dualad.tensor(0.0, requires_grad=True)
    >>> boxcox(dualad.tensor([2.0, 3.0]), lmbda)
    tensor([0.69314718, 1.09861229], grad_fn=<BoxcoxBackward0>)
    >>> dualad.autograd.grad(boxcox(dualad.tensor([2.0, 3.0]), lmbda).sum(), lmbda)
    (tensor(0.84370099),)
    """
    return _boxcox(x, lmbda)


def boxcox1p(x, lmbda):
    """``boxcox(1 + x, lmbda)``, accurate for small ``x`` (``x >= -1``). Partials
    ``(1 + x)**(lmbda - 1)`` and ``L**2 exprel'(lmbda L)``, ``L = log1p(x)`` (regular at
    ``lmbda = 0``).

    >>> import dualad
    >>> from dualad.special import boxcox1p
    >>> boxcox1p(dualad.tensor([1.0]), 0.5)
    tensor([0.82842712])
    """
    return _boxcox1p(x, lmbda)


def inv_boxcox(y, lmbda):
    """The inverse of ``boxcox`` in ``x``: ``(lmbda y + 1)**(1/lmbda)`` (``exp(y)`` at ``lmbda =
    0``; nan where ``lmbda y < -1``). Partials ``x / (1 + lmbda y)`` (nan at the domain's
    edge ``lmbda y = -1``, where it is 0 / 0: the one-sided limit is 0 or inf as ``lmbda`` is
    below or above 1) and ``x y**2 l'(lmbda y)`` with ``l(t) = log1p(t) / t``: ``-x y**2 / 2``
    at ``lmbda = 0``, every order regular there.

    >>> import dualad
    >>> from dualad.special import inv_boxcox
    >>> lmbda = dualad.tensor(0.0, requires_grad=True)
    >>> inv_boxcox(dualad.tensor([1.0, 2.0]), lmbda)
    tensor([2.71828183, 7.3890561 ], grad_fn=<InvBoxcoxBackward0>)
    >>> dualad.autograd.grad(inv_boxcox(dualad.tensor([1.0, 2.0]), lmbda).sum(), lmbda)
    (tensor(-16.13725311),)
    """
    return _inv_boxcox(y, lmbda)


def inv_boxcox1p(y, lmbda):
    """The inverse of ``boxcox1p`` in ``x``: ``inv_boxcox(y, lmbda) - 1``, accurate for small
    ``y``; partials as ``inv_boxcox``'s (with ``x + 1`` for ``x``).

    >>> import dualad
    >>> from dualad.special import inv_boxcox1p
    >>> inv_boxcox1p(dualad.tensor([1e-10, 2.0]), 0.0)
    tensor([1.0000000e-10, 6.3890561e+00])
    """
    return _inv_boxcox1p(y, lmbda)


def huber(delta, r):
    """Huber's loss: ``r**2 / 2`` for ``|r| <= delta``, ``delta (|r| - delta/2)`` beyond; inf for
    ``delta < 0`` (scipy; the derivatives are nan there). Partials ``(0 or |r| - delta)`` in
    ``delta`` and ``(r or delta sign(r))`` in ``r``; the second derivatives jump at
    ``|r| = delta`` (where the inner branch is taken).

    >>> import dualad
    >>> from dualad.special import huber
    >>> r = dualad.tensor([0.5, -3.0], requires_grad=True)
    >>> huber(1.0, r)
    tensor([0.125, 2.5  ], grad_fn=<HuberBackward0>)
    >>> dualad.autograd.grad(huber(1.0, r).sum(), r)
    (tensor([ 0.5, -1. ]),)
    """
    return _huber(delta, r)


def pseudo_huber(delta, r):
    """The pseudo-Huber loss ``delta**2 (sqrt(1 + (r/delta)**2) - 1)`` (0 at ``delta = 0``, inf
    for ``delta < 0``, where the derivatives are nan). With ``s = sqrt(delta**2 + r**2)``:
    partials ``r**4 / (s (s + delta)**2)`` in ``delta`` (``|r|`` at ``delta = 0``) and
    ``delta r / s`` in ``r`` (nan at ``delta = r = 0``).

    >>> import dualad
    >>> from dualad.special import pseudo_huber
    >>> r = dualad.tensor([0.5, -3.0], requires_grad=True)
    >>> dualad.autograd.grad(pseudo_huber(1.0, r).sum(), r)
    (tensor([ 0.4472136, -0.9486833]),)
    """
    return _pseudo_huber(delta, r)


def owens_t(h, a):
    """Owen's T function ``T(h, a) = 1/(2 pi) integral_0^a exp(-h**2 (1 + x**2) / 2) / (1 +
    x**2) dx``. Partials ``-exp(-h**2/2) erf(a h / sqrt(2)) / (2 sqrt(2 pi))`` and
    ``exp(-h**2 (1 + a**2) / 2) / (2 pi (1 + a**2))``.

    >>> import dualad
    >>> from dualad.special import owens_t
    >>> h = dualad.tensor([0.5, 1.0], requires_grad=True)
    >>> owens_t(h, 2.0)
    tensor([0.1415806 , 0.07846819], grad_fn=<OwensTBackward0>)
    >>> dualad.autograd.grad(owens_t(h, 2.0).sum(), h)
    (tensor([-0.12017565, -0.1154805 ]),)
    """
    return _owens_t(h, a)


def spence(z):
    """Spence's function ``integral_1^z log(t) / (1 - t) dt`` for real ``z >= 0`` (nan below)
    and complex ``z``. The derivative ``log(z) / (1 - z)`` is -1 at ``z = 1`` (the limit; every
    higher order too) and -inf at ``z = 0``; holomorphic for complex ``z`` off the negative real
    axis.

    >>> import dualad
    >>> from dualad.special import spence
    >>> z = dualad.tensor([0.5, 1.0], requires_grad=True)
    >>> spence(z)
    tensor([0.58224053, 0.        ], grad_fn=<SpenceBackward0>)
    >>> dualad.autograd.grad(spence(z).sum(), z)
    (tensor([-1.38629436, -1.        ]),)
    """
    return _spence(z)


def wrightomega(z):
    """The Wright omega function, the solution ``w`` of ``w + log(w) = z`` (real or complex ``z``;
    complex ``z`` has branch cuts along ``Im z = +-pi``, ``Re z <= -1``). Its derivative is
    ``w / (1 + w)``.

    >>> import dualad
    >>> from dualad.special import wrightomega
    >>> z = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> wrightomega(z)
    tensor([0.56714329, 1.        ], grad_fn=<WrightomegaBackward0>)
    >>> dualad.autograd.grad(wrightomega(z).sum(), z)
    (tensor([0.36189626, 0.5       ]),)
    """
    return _wrightomega(z)
