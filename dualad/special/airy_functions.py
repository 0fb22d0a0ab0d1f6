"""``dualad.special.airy``: scipy's ``airy(z) -> (Ai, Ai', Bi, Bi')``, differentiable (the four
ops of ``dualad/ops/airy.py``), for real and complex ``z``."""

from __future__ import annotations

from ..ops.airy import _airy_ai, _airy_aip, _airy_bi, _airy_bip

__all__ = ["airy"]


def airy(z):
    """The Airy functions and their derivatives, ``(Ai(z), Ai'(z), Bi(z), Bi'(z))`` as scipy
    returns them. Each output is differentiable at every order (``Ai'' = z Ai``, ``Bi'' = z
    Bi``), for real and complex ``z`` (PyTorch's conjugate convention for complex gradients).
    ``Bi`` grows like ``exp(2/3 z**1.5)``: it overflows beyond z ~ 104.

    >>> import dualad
    >>> from dualad.special import airy
    >>> z = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> ai, aip, bi, bip = airy(z)
    >>> ai
    tensor([0.35502805, 0.13529242], grad_fn=<AiryAiBackward0>)
    >>> dualad.autograd.grad(aip.sum(), z)
    (tensor([0.        , 0.13529242]),)
    """
    return _airy_ai(z), _airy_aip(z), _airy_bi(z), _airy_bip(z)
