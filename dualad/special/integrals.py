"""Special functions defined by integrals, with scipy's names and signatures: ``expi exp1 expn
sici shichi fresnel dawsn erfi`` (the ops of ``dualad/ops/integrals.py``; spence: ``elementary``).

Real arguments, and complex ones for ``fresnel``, ``dawsn`` and ``erfi`` (entire functions;
PyTorch's conjugate convention for complex gradients). ``sici``, ``shichi`` and ``fresnel``
return tuples of two differentiable outputs, as scipy.
"""

from __future__ import annotations

from ..ops.integrals import (
    _chi,
    _ci,
    _dawsn,
    _erfi,
    _exp1,
    _expi,
    _expn,
    _fresnel_c,
    _fresnel_s,
    _shi,
    _si,
)

__all__ = ["dawsn", "erfi", "exp1", "expi", "expn", "fresnel", "shichi", "sici"]


def expi(x):
    """The exponential integral ``Ei(x) = -PV int_{-x}^inf exp(-t)/t dt``; derivative
    ``exp(x)/x``. ``Ei(0) = -inf`` (derivative +inf at 0, the higher ones nan: the two sides
    differ there).

    >>> import dualad
    >>> from dualad.special import expi
    >>> x = dualad.tensor([-1.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(expi(x).sum(), x)
    (tensor([-0.36787944,  2.71828183]),)
    """
    return _expi(x)


def exp1(x):
    """``E_1(x) = int_1^inf exp(-x t)/t dt`` for ``x >= 0`` (inf at 0, nan below, as scipy's
    real version); derivative ``-exp(-x)/x`` (-inf at 0).

    >>> import dualad
    >>> from dualad.special import exp1
    >>> exp1(dualad.tensor([0.0, 1.0]))
    tensor([       inf, 0.21938393])
    """
    return _exp1(x)


def expn(n, x):
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t)/t**n dt`` for a
    static integer ``n >= 0`` (scipy also takes arrays of ``n``; a tracked tensor raises
    NotImplementedError) and ``x >= 0``; derivative ``-expn(n - 1, x)`` (``E_0 = exp(-x)/x``).
    ``E_n(0) = 1/(n - 1)`` for n >= 2, inf for n <= 1.

    >>> import dualad
    >>> from dualad.special import expn
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(expn(3, x).sum(), x)
    (tensor([-1.        , -0.14849551]),)
    """
    return _expn(n, x)


def sici(x):
    """The sine and cosine integrals ``(Si(x), Ci(x))``: ``Si' = sin(x)/x`` (1 at 0, every
    derivative exact there), ``Ci' = cos(x)/x``. ``Ci(0) = -inf`` (derivative +inf); for x < 0
    scipy's real ``Ci`` is ``Ci(|x|)``, the derivative then ``cos(x)/x`` too.

    >>> import dualad
    >>> from dualad.special import sici
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> si, ci = sici(x)
    >>> ci
    tensor([      -inf, 0.33740392], grad_fn=<CiBackward0>)
    >>> dualad.autograd.grad(si.sum(), x)
    (tensor([1.        , 0.84147098]),)
    """
    return _si(x), _ci(x)


def shichi(x):
    """The hyperbolic sine and cosine integrals ``(Shi(x), Chi(x))``: ``Shi' = sinh(x)/x`` (1
    at 0, every derivative exact there), ``Chi' = cosh(x)/x``; ``Chi(0) = -inf`` (derivative
    +inf), ``Chi(-x) = Chi(x)`` (scipy's real part).

    >>> import dualad
    >>> from dualad.special import shichi
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(shichi(x)[0].sum(), x)
    (tensor([1.        , 1.17520119]),)
    """
    return _shi(x), _chi(x)


def fresnel(z):
    """The Fresnel integrals ``(S(z), C(z))`` (scipy's order), ``S' = sin(pi z**2 / 2)``,
    ``C' = cos(pi z**2 / 2)``; real or complex ``z``.

    >>> import dualad
    >>> from dualad.special import fresnel
    >>> z = dualad.tensor([0.5, 1.0], requires_grad=True)
    >>> s, c = fresnel(z)
    >>> s
    tensor([0.06473243, 0.43825915], grad_fn=<FresnelSBackward0>)
    >>> dualad.autograd.grad(c.sum(), z)
    (tensor([9.23879533e-01, 6.12323400e-17]),)
    """
    return _fresnel_s(z), _fresnel_c(z)


def dawsn(x):
    """Dawson's integral ``exp(-x**2) int_0^x exp(t**2) dt``; derivative ``1 - 2 x dawsn(x)``;
    real or complex ``x``.

    >>> import dualad
    >>> from dualad.special import dawsn
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(dawsn(x).sum(), x)
    (tensor([ 1.        , -0.07615901]),)
    """
    return _dawsn(x)


def erfi(z):
    """The imaginary error function ``-i erf(i z)``; derivative ``2/sqrt(pi) exp(z**2)``; real
    or complex ``z``.

    >>> import dualad
    >>> from dualad.special import erfi
    >>> erfi(dualad.tensor([0.0, 1.0]))
    tensor([0.        , 1.65042576])
    """
    return _erfi(z)
