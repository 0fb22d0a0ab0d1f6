"""Kelvin functions with scipy's names: ``ber bei ker kei berp beip kerp keip`` (order 0; the
ops of ``dualad/ops/kelvin.py``), differentiable at every order (the second derivatives from
Kelvin's equation). Real arguments only; ``ker``, ``kei`` and their derivatives are nan below
0, as scipy's."""

from __future__ import annotations

from ..ops.kelvin import _bei, _beip, _ber, _berp, _kei, _keip, _ker, _kerp

__all__ = ["bei", "beip", "ber", "berp", "kei", "keip", "ker", "kerp"]


def ber(x):
    """Kelvin function ``ber(x) = Re J_0(x exp(3 pi i / 4))``, even; derivative ``berp``.

    >>> import dualad
    >>> from dualad.special import ber
    >>> ber(dualad.tensor([0.0, 2.0]))
    tensor([1.        , 0.75173418])
    """
    return _ber(x)


def bei(x):
    """Kelvin function ``bei(x) = Im J_0(x exp(3 pi i / 4))``, even; derivative ``beip``.

    >>> import dualad
    >>> from dualad.special import bei
    >>> x = dualad.tensor([0.0, 2.0], requires_grad=True)
    >>> dualad.autograd.grad(bei(x).sum(), x)
    (tensor([0.        , 0.91701361]),)
    """
    return _bei(x)


def ker(x):
    """Kelvin function ``ker(x)`` for ``x >= 0``: inf at 0 (derivative ``kerp(0) = -inf``).

    >>> import dualad
    >>> from dualad.special import ker
    >>> ker(dualad.tensor([0.0, 2.0]))
    tensor([        inf, -0.04166451])
    """
    return _ker(x)


def kei(x):
    """Kelvin function ``kei(x)`` for ``x >= 0``: ``-pi/4`` at 0, derivative ``keip`` (0 at 0,
    the second derivative +inf there).

    >>> import dualad
    >>> from dualad.special import kei
    >>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
    >>> dualad.autograd.grad(kei(x).sum(), x)
    (tensor([0.33320379, 0.21980791]),)
    """
    return _kei(x)


def berp(x):
    """The derivative of ``ber``; its own derivative is ``-berp(x)/x - bei(x)`` (0 at 0).

    >>> import dualad
    >>> from dualad.special import berp
    >>> x = dualad.tensor([0.0, 2.0], requires_grad=True)
    >>> dualad.autograd.grad(berp(x).sum(), x)
    (tensor([ 0.        , -0.72575806]),)
    """
    return _berp(x)


def beip(x):
    """The derivative of ``bei``; its own derivative is ``ber(x) - beip(x)/x`` (1/2 at 0).

    >>> import dualad
    >>> from dualad.special import beip
    >>> x = dualad.tensor([0.0, 2.0], requires_grad=True)
    >>> dualad.autograd.grad(beip(x).sum(), x)
    (tensor([0.5       , 0.29322738]),)
    """
    return _beip(x)


def kerp(x):
    """The derivative of ``ker``, for ``x >= 0`` (-inf at 0, where its derivative ``-kerp/x -
    kei`` is +inf).

    >>> import dualad
    >>> from dualad.special import kerp
    >>> kerp(dualad.tensor([0.0, 2.0]))
    tensor([       -inf, -0.10660097])
    """
    return _kerp(x)


def keip(x):
    """The derivative of ``kei``, for ``x >= 0`` (0 at 0, where its derivative ``ker -
    keip/x`` is +inf).

    >>> import dualad
    >>> from dualad.special import keip
    >>> x = dualad.tensor([0.0, 2.0], requires_grad=True)
    >>> dualad.autograd.grad(keip(x).sum(), x)
    (tensor([        inf, -0.15156847]),)
    """
    return _keip(x)
