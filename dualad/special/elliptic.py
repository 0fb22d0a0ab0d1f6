"""Elliptic integrals and Jacobi's elliptic functions with scipy's names and signatures:
``ellipk ellipkm1 ellipe ellipkinc ellipeinc ellipj`` (the ops of ``dualad/ops/elliptic.py``;
parameter ``m = k**2``). Real arguments only."""

from __future__ import annotations

from ..ops.elliptic import (
    _cn,
    _dn,
    _ellipe,
    _ellipeinc,
    _ellipk,
    _ellipkinc,
    _ellipkm1,
    _ph,
    _sn,
)

__all__ = ["ellipe", "ellipeinc", "ellipj", "ellipk", "ellipkinc", "ellipkm1"]


def ellipk(m):
    """The complete elliptic integral of the first kind ``K(m)``; derivative ``(E - (1-m) K) /
    (2 m (1-m))`` (pi/8 at 0, from the series in m near 0). ``K(1) = inf`` with every derivative
    +inf; nan for m > 1.

    >>> import dualad
    >>> from dualad.special import ellipk
    >>> m = dualad.tensor([0.0, 0.5, 1.0], requires_grad=True)
    >>> ellipk(m)
    tensor([1.57079633, 1.85407468,        inf], grad_fn=<EllipkBackward0>)
    >>> dualad.autograd.grad(ellipk(m).sum(), m)
    (tensor([0.39269908, 0.84721308,        inf]),)
    """
    return _ellipk(m)


def ellipkm1(p):
    """``K(1 - p)``, accurate for small ``p``; ``ellipkm1(0) = inf`` with derivative -inf.

    >>> import dualad
    >>> from dualad.special import ellipkm1
    >>> p = dualad.tensor([1e-10, 0.5], requires_grad=True)
    >>> dualad.autograd.grad(ellipkm1(p).sum(), p)
    (tensor([-4.99999958e+09, -8.47213085e-01]),)
    """
    return _ellipkm1(p)


def ellipe(m):
    """The complete elliptic integral of the second kind ``E(m)``; derivative ``(E - K) / (2m)``
    (-pi/8 at 0, from the series). ``E(1) = 1`` with derivative -inf (higher ones nan there);
    nan for m > 1.

    >>> import dualad
    >>> from dualad.special import ellipe
    >>> m = dualad.tensor([0.0, 0.5, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(ellipe(m).sum(), m)
    (tensor([-0.39269908, -0.5034308 ,        -inf]),)
    """
    return _ellipe(m)


def ellipkinc(phi, m):
    """The incomplete elliptic integral of the first kind ``F(phi | m)``, differentiable in
    ``phi`` (``1/sqrt(1 - m sin(phi)**2)``) and ``m`` (a series near m = 0; nan at m = 1).

    >>> import dualad
    >>> from dualad.special import ellipkinc
    >>> phi = dualad.tensor([0.5, 1.0], requires_grad=True)
    >>> m = dualad.tensor([0.0, 0.3], requires_grad=True)
    >>> dualad.autograd.grad(ellipkinc(phi, m).sum(), (phi, m))
    (tensor([1.        , 1.12681656]), tensor([0.01981613, 0.17112487]))
    """
    return _ellipkinc(phi, m)


def ellipeinc(phi, m):
    """The incomplete elliptic integral of the second kind ``E(phi | m)``, differentiable in
    ``phi`` (``sqrt(1 - m sin(phi)**2)``) and ``m`` (``(E - F) / (2m)``, a series near m = 0;
    nan at m = 1).

    >>> import dualad
    >>> from dualad.special import ellipeinc
    >>> phi = dualad.tensor([0.5, 1.0], requires_grad=True)
    >>> m = dualad.tensor([0.0, 0.3], requires_grad=True)
    >>> dualad.autograd.grad(ellipeinc(phi, m).sum(), (phi, m))
    (tensor([1.       , 0.8874559]), tensor([-0.01981613, -0.14692797]))
    """
    return _ellipeinc(phi, m)


def ellipj(u, m):
    """Jacobi's elliptic functions ``(sn, cn, dn, ph)`` of ``u`` with parameter ``0 <= m <=
    1`` (nan outside, as scipy), differentiable in ``u`` (``sn' = cn dn``, ``cn' = -sn dn``,
    ``dn' = -m sn cn``, ``ph' = dn``); ``m`` has no derivative: a tracked ``m`` raises
    NotImplementedError when its derivative is asked for.

    >>> import dualad
    >>> from dualad.special import ellipj
    >>> u = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> sn, cn, dn, ph = ellipj(u, 0.5)
    >>> sn
    tensor([0.        , 0.80300182], grad_fn=<EllipjSnBackward0>)
    >>> dualad.autograd.grad(sn.sum(), u)
    (tensor([1.        , 0.49058467]),)
    """
    return _sn(u, m), _cn(u, m), _dn(u, m), _ph(u, m)
