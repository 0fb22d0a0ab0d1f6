"""Margin and embedding losses of ``torch.nn.functional``: margin_ranking_loss,
hinge_embedding_loss, soft_margin_loss, multi_margin_loss, multilabel_soft_margin_loss,
cosine_embedding_loss, triplet_margin_loss.

Composites of ops with exact derivatives away from their hinges; at a hinge (``clamp_min(., 0)``
exactly at 0) the gradient passes, as PyTorch's ``clamp_min`` does. Reductions and the
deprecated ``size_average``/``reduce`` as in ``losses``.
"""

from __future__ import annotations

from ... import ops
from ..._creation import arange
from .distances import _tensor, pairwise_distance
from .losses import _reduce, _reduction

__all__ = [
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_soft_margin_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
]


def margin_ranking_loss(
    input1, input2, target, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"
):
    """``max(0, -target (input1 - input2) + margin)``, reduced; ``target`` holds 1 or -1.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.margin_ranking_loss(dualad.tensor([1.0, 2.0]), dualad.tensor([2.0, 1.0]),
    ...                       dualad.tensor([1.0, 1.0]), margin=0.5, reduction="none")
    tensor([1.5, 0. ])
    """
    reduction = _reduction(reduction, size_average, reduce)
    input1, input2, target = _tensor(input1), _tensor(input2), _tensor(target)
    if not input1.ndim == input2.ndim == target.ndim:
        raise ValueError(
            f"dualad.nn.functional.margin_ranking_loss: margin_ranking_loss : All input tensors "
            f"should have same dimension but got sizes: input1: {tuple(input1.shape)}, input2: "
            f"{tuple(input2.shape)}, target: {tuple(target.shape)} "
        )
    return _reduce(ops.clamp_min(-target * (input1 - input2) + margin, 0.0), reduction)


def hinge_embedding_loss(
    input, target, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"
):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``
    (``torch.nn.functional.hinge_embedding_loss``), reduced.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.hinge_embedding_loss(dualad.tensor([0.3, 0.3]), dualad.tensor([1.0, -1.0]),
    ...                        reduction="none")
    tensor([0.3, 0.7])
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _tensor(input), _tensor(target)
    hinge = ops.where(target != 1, ops.clamp_min(margin - input, 0.0), 0.0)
    return _reduce(hinge + ops.where(target != -1, input, 0.0), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``, reduced, computed as ``-logsigmoid(target * input)``
    (finite for every finite input).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.soft_margin_loss(dualad.tensor([1000.0, -1000.0]), dualad.tensor([-1.0, -1.0]),
    ...                    reduction="none")
    tensor([1000.,    0.])
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _tensor(input), _tensor(target)
    return _reduce(0.0 - ops.logsigmoid(target * input), reduction)  # (+0, not -0)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """Binary cross entropy of ``sigmoid(input)`` per class, weighted, averaged over the classes
    (the last dim), then reduced over the examples
    (``torch.nn.functional.multilabel_soft_margin_loss``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.multilabel_soft_margin_loss(dualad.tensor([[0.0, 0.0]]), dualad.tensor([[1.0, 0.0]]))
    tensor(0.69314718)
    """
    reduction = _reduction(reduction, size_average, reduce)
    input, target = _tensor(input), _tensor(target)
    loss = -(target * ops.logsigmoid(input) + (1 - target) * ops.logsigmoid(-input))
    if weight is not None:
        loss = loss * _tensor(weight)
    classes = input.shape[-1] if input.ndim else 1
    return _reduce(ops.sum(loss, -1) / classes if input.ndim else loss, reduction)


def cosine_embedding_loss(
    input1, input2, target, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"
):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``, the cosine along the last dim with PyTorch's 1e-12 in each squared norm
    (``torch.nn.functional.cosine_embedding_loss``), reduced.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> a, b = dualad.tensor([[1.0, 0.0], [1.0, 0.0]]), dualad.tensor([[1.0, 1.0], [1.0, 1.0]])
    >>> F.cosine_embedding_loss(a, b, dualad.tensor([1, -1]), reduction="none")
    tensor([0.29289322, 0.70710678])
    """
    reduction = _reduction(reduction, size_average, reduce)
    input1, input2, target = _tensor(input1), _tensor(input2), _tensor(target)
    if input1.ndim not in (1, 2) or tuple(input1.shape) != tuple(input2.shape):
        raise ValueError(
            f"dualad.nn.functional.cosine_embedding_loss: expected 1D or 2D inputs of one shape, "
            f"got {tuple(input1.shape)} and {tuple(input2.shape)}"
        )
    dim = input1.ndim - 1
    dot = ops.sum(input1 * input2, dim)
    square1 = ops.sum(input1 * input1, dim) + 1e-12
    square2 = ops.sum(input2 * input2, dim) + 1e-12
    cos = dot / ops.sqrt(square1 * square2)
    positive = ops.where(target == 1, 1 - cos, 0.0)
    negative = ops.where(target == -1, ops.clamp_min(cos - margin, 0.0), 0.0)
    return _reduce(positive + negative, reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` the
    ``pairwise_distance`` (``swap``: the smaller of the negative's distances to anchor and
    positive), reduced (``torch.nn.functional.triplet_margin_loss``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.triplet_margin_loss(dualad.tensor([[0.0, 0.0]]), dualad.tensor([[0.0, 1.0]]),
    ...                       dualad.tensor([[3.0, 0.0]]), margin=2.5, eps=0.0)
    tensor(0.5)
    """
    reduction = _reduction(reduction, size_average, reduce)
    anchor, positive, negative = _tensor(anchor), _tensor(positive), _tensor(negative)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(
            f"dualad.nn.functional.triplet_margin_loss: The anchor, positive, and negative "
            f"tensors are expected to have the same number of dimensions, but got: anchor "
            f"{anchor.ndim}D, positive {positive.ndim}D, and negative {negative.ndim}D inputs"
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(ops.clamp_min(margin + d_pos - d_neg, 0.0), reduction)


def multi_margin_loss(
    input,
    target,
    p: int = 1,
    margin: float = 1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
):
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` per example
    (times ``weight[y]``), classes along the last dim of ``(N, C)`` or ``(C,)`` inputs
    (``torch.nn.functional.multi_margin_loss``), reduced.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.multi_margin_loss(dualad.tensor([0.5, 1.0, -1.0]), dualad.tensor(1))
    tensor(0.16666667)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("dualad.nn.functional.multi_margin_loss: only p == 1 and p == 2 supported")
    input, target = _tensor(input), _tensor(target)
    if input.ndim not in (1, 2) or tuple(target.shape) != tuple(input.shape[:-1]):
        raise ValueError(
            f"dualad.nn.functional.multi_margin_loss: expected input (N, C) or (C,) and target "
            f"(N,) or (), got {tuple(input.shape)} and {tuple(target.shape)}"
        )
    if target.dtype.kind not in "iu":
        raise TypeError(
            f"dualad.nn.functional.multi_margin_loss: expected an integer (class index) target, "
            f"got dtype {target.dtype}"
        )
    classes = input.shape[-1]
    index = ops.unsqueeze(target, -1)
    picked = ops.take_along_dim(input, index, -1)
    hinge = ops.clamp_min(margin - picked + input, 0.0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * ops.unsqueeze(_tensor(weight)[target], -1)
    # the target's own term (margin**p) is not part of the sum
    own = ops.eq(arange(classes, device=input.device), index)
    return _reduce(ops.sum(ops.where(own, 0.0, hinge), -1) / classes, reduction)
