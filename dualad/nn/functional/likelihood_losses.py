"""Negative log-likelihood losses of continuous and count data in ``torch.nn.functional``:
gaussian_nll_loss, poisson_nll_loss.

Composites of ops with exact derivatives. ``gaussian_nll_loss`` clamps the variance at ``eps``
inside the graph (the gradient through a clamped variance is 0: the derivative of the value
computed), where PyTorch clamps it outside (its gradient ignores the clamp); they differ only
where ``var < eps``.
"""

from __future__ import annotations

import math

from ... import ops
from ..._creation import full_like
from ..._tensor import Tensor
from .distances import _tensor
from .losses import _reduce, _reduction

__all__ = ["gaussian_nll_loss", "poisson_nll_loss"]


def _gaussian_var(input, var):
    """``var`` shaped to broadcast against ``input`` by PyTorch's rules (homoscedastic: one
    dim short, or one mismatched dim of size 1)."""
    if tuple(var.shape) == tuple(input.shape):
        return var
    if tuple(input.shape[:-1]) == tuple(var.shape):
        return ops.unsqueeze(var, -1)
    mismatched = [v for i, v in zip(input.shape, var.shape) if i != v]
    if input.ndim == var.ndim and sum(mismatched) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(
    input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean"
):
    """``0.5 (log(max(var, eps)) + (input - target)**2 / max(var, eps))`` (plus
    ``0.5 log(2 pi)`` with ``full``), reduced (``torch.nn.functional.gaussian_nll_loss``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.gaussian_nll_loss(dualad.tensor([1.0, 2.0]), dualad.tensor([0.0, 2.0]),
    ...                     dualad.tensor([1.0, 1.0]), reduction="none")
    tensor([0.5, 0. ])
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    input, target = _tensor(input), _tensor(target)
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = full_like(input, float(var))
    else:
        if type(var) is Tensor and bool(ops.any(var < 0)):
            raise ValueError("var has negative entry/entries")
        var = _gaussian_var(input, var)
    var = ops.clamp_min(var, eps)
    loss = 0.5 * (ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input,
    target,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
):
    """Poisson negative log-likelihood: ``exp(input) - target * input`` for log-rates
    (``log_input=True``), else ``input - target * log(input + eps)``; ``full`` adds Stirling's
    ``target log target - target + 0.5 log(2 pi target)`` where ``target > 1``
    (``torch.nn.functional.poisson_nll_loss``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.poisson_nll_loss(dualad.tensor([0.0, 1.0]), dualad.tensor([1.0, 2.0]),
    ...                    reduction="none")
    tensor([1.        , 0.71828183])
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _tensor(input), _tensor(target)
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        counted = target > 1
        # Stirling's term of a safe stand-in where it is not used (no log(0) * 0 there)
        t = ops.where(counted, target, 2.0)
        stirling = t * ops.log(t) - t + 0.5 * ops.log(2 * math.pi * t)
        loss = loss + ops.where(counted, stirling, 0.0)
    return _reduce(loss, reduction)
