"""Distances and similarities of ``torch.nn.functional``: cosine_similarity, pairwise_distance,
pdist.

Composites of ops with exact derivatives. Where PyTorch clamps a norm at ``eps`` outside the
graph (so its gradient ignores the clamp), these clamp inside it: the derivative is that of the
value computed (0 through a clamped norm). The two differ only for vectors of norm below
``eps`` (1e-8 by default).
"""

from __future__ import annotations

from ... import ops
from ..._backend import allocate_on
from ..._creation import as_tensor
from ..._tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def _tensor(x):
    return x if isinstance(x, Tensor) else as_tensor(x)


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps))`` along ``dim`` after broadcasting
    (``torch.nn.functional.cosine_similarity``): each input normalised first, so the result stays
    in [-1, 1].

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.cosine_similarity(dualad.tensor([[1.0, 0.0], [1.0, 1.0]]), dualad.tensor([[1.0, 1.0]]))
    tensor([0.70710678, 1.        ])
    """
    x1, x2 = ops.broadcast_tensors(_tensor(x1), _tensor(x2))
    n1 = ops.clamp_min(ops.norm(x1, 2, dim, keepdim=True), eps)
    n2 = ops.clamp_min(ops.norm(x2, 2, dim, keepdim=True), eps)
    return ops.sum((x1 / n1) * (x2 / n2), dim)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """``norm_p(x1 - x2 + eps)`` along the last dim (``torch.nn.functional.pairwise_distance``;
    ``eps`` keeps the norm away from its kink at 0).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.pairwise_distance(dualad.tensor([[0.0, 0.0]]), dualad.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    x1, x2 = _tensor(x1), _tensor(x2)
    return ops.norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


def pdist(input, p: float = 2.0):
    """The ``p``-norm distances between the rows of an ``(N, M)`` input, for each pair ``i < j``
    in row-major order (``N (N - 1) / 2`` of them; ``torch.nn.functional.pdist``). Two equal
    rows are at distance 0, where the norm's subgradient 0 is the gradient (PyTorch's too).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.pdist(dualad.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.        , 1.        , 4.24264069])
    """
    input = _tensor(input)
    if input.ndim != 2:
        raise ValueError(
            f"dualad.nn.functional.pdist: pdist only supports 2D tensors, got: {input.ndim}D"
        )
    if p < 0:
        raise ValueError("dualad.nn.functional.pdist: pdist only supports non-negative p values")
    # the pairs, made on the input's device (no host array copied to a GPU)
    rows, cols = allocate_on(input.device, lambda xp: xp.triu_indices(input.shape[0], 1))
    first = ops.index_select(input, 0, as_tensor(rows))
    second = ops.index_select(input, 0, as_tensor(cols))
    return ops.norm(first - second, p, 1)
