"""Hypergeometric and Struve functions with scipy's names and signatures: ``hyp0f1 hyp1f1
hyp2f1 hyperu struve modstruve`` (the ops of ``dualad/ops/hypergeometric.py``), differentiable
in their last argument. The parameters are static real numbers (scipy also broadcasts arrays of
them; here one value per call): a tracked tensor raises NotImplementedError. Real arguments
only."""

from __future__ import annotations

from ..ops.hypergeometric import (
    _hyp0f1_op,
    _hyp1f1_op,
    _hyp2f1_op,
    _hyperu_op,
    _modstruve_op,
    _struve_op,
    hyp,
    static_real,
)

__all__ = ["hyp0f1", "hyp1f1", "hyp2f1", "hyperu", "modstruve", "struve"]


def hyp0f1(v, z):
    """The confluent hypergeometric limit function ``0F1(; v; z)``; derivative ``0F1(; v+1;
    z) / v``.

    >>> import dualad
    >>> from dualad.special import hyp0f1
    >>> z = dualad.tensor([-1.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(hyp0f1(1.5, z).sum(), z)
    (tensor([0.43539777, 0.97438274]),)
    """
    return hyp(_hyp0f1_op, z, b=static_real("special.hyp0f1", "v", v))


def hyp1f1(a, b, x):
    """Kummer's function ``1F1(a; b; x)``; derivative ``a/b 1F1(a+1; b+1; x)``.

    >>> import dualad
    >>> from dualad.special import hyp1f1
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(hyp1f1(0.5, 1.5, x).sum(), x)
    (tensor([0.33333333, 0.62781504]),)
    """
    name = "special.hyp1f1"
    return hyp(_hyp1f1_op, x, a=static_real(name, "a", a), b=static_real(name, "b", b))


def hyp2f1(a, b, c, z):
    """Gauss's hypergeometric function ``2F1(a, b; c; z)`` for real ``z <= 1`` (inf at 1 where
    ``c - a - b <= 0``, nan beyond); derivative ``ab/c 2F1(a+1, b+1; c+1; z)``.

    >>> import dualad
    >>> from dualad.special import hyp2f1
    >>> z = dualad.tensor([-0.5, 0.5], requires_grad=True)
    >>> hyp2f1(1.0, 1.0, 2.0, z)
    tensor([0.81093022, 1.38629436], grad_fn=<Hyp2f1Backward0>)
    """
    name = "special.hyp2f1"
    a, b, c = (static_real(name, arg, value) for arg, value in (("a", a), ("b", b), ("c", c)))
    return hyp(_hyp2f1_op, z, a=a, b=b, c=c)


def hyperu(a, b, x):
    """Tricomi's confluent hypergeometric function ``U(a, b, x)`` for ``x > 0`` (inf at 0 for
    ``b >= 1``, nan below); derivative ``-a U(a+1, b+1, x)``.

    >>> import dualad
    >>> from dualad.special import hyperu
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dualad.autograd.grad(hyperu(0.5, 1.5, x).sum(), x)
    (tensor([-0.5      , -0.1767767]),)
    """
    name = "special.hyperu"
    return hyp(_hyperu_op, x, a=static_real(name, "a", a), b=static_real(name, "b", b))


def struve(v, x):
    """The Struve function ``H_v(x)`` of static real order ``v`` (nan for ``x < 0`` unless ``v``
    is an integer); derivative ``(H_{v-1} - H_{v+1})/2 + (x/2)**v / (2 sqrt(pi) Gamma(v +
    3/2))``.

    >>> import dualad
    >>> from dualad.special import struve
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> dualad.autograd.grad(struve(0, x).sum(), x)
    (tensor([0.63661977, 0.43816244]),)
    """
    return hyp(_struve_op, x, v=static_real("special.struve", "v", v))


def modstruve(v, x):
    """The modified Struve function ``L_v(x)`` of static real order ``v``; derivative
    ``(L_{v-1} + L_{v+1})/2 + (x/2)**v / (2 sqrt(pi) Gamma(v + 3/2))``.

    >>> import dualad
    >>> from dualad.special import modstruve
    >>> modstruve(1, dualad.tensor([0.0, 1.0]))
    tensor([0.        , 0.22676438])
    """
    return hyp(_modstruve_op, x, v=static_real("special.modstruve", "v", v))
