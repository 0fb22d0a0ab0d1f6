"""``embedding_bag``: sums, means or maxima of bags of embedding rows, with PyTorch's signature,
bag layout (``offsets``, ``include_last_offset``, 2-D inputs), ``padding_idx`` and errors.

A composition of ops (the derivative in ``weight`` and ``per_sample_weights`` is exact, at every
order and under every transform of them): the looked-up rows (``index_select``) are added into
their bags (``index_add``), divided by the bag sizes for ``mean``, or laid out as ``(bags,
longest bag, dim)`` with ``-inf`` padding for ``max`` (the gradient goes to each bag's first
maximum, as PyTorch's). The bag layout is read from ``input`` and ``offsets``, so they must be
concrete integer tensors (not values of a transform).
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ..._creation import as_tensor, zeros
from ..._tensor import Tensor
from .layers import _check_indices, _renorm_rows, _tensor

__all__ = ["embedding_bag"]


def _concrete(t, name):
    if type(t) is not Tensor:
        raise ValueError(
            f"dualad.nn.functional.embedding_bag: '{name}' must be a concrete tensor (the bag "
            "layout is read from it), not a value of a transform"
        )
    return np.asarray(t.tolist(), dtype=np.int64).reshape(tuple(t.shape))


def _layout(input, offsets, include_last_offset):
    """``(flat indices, bag of each, number of bags)`` with PyTorch's checks."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets).__name__}"
            )
        idx = _concrete(input, "input")
        bags, length = idx.shape
        return idx.reshape(-1), np.repeat(np.arange(bags), length), bags
    if input.ndim != 1:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    offsets = _tensor(offsets)
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    _check_indices("embedding_bag", "offsets", offsets)
    idx, starts = _concrete(input, "input"), _concrete(offsets, "offsets").astype(np.int64)
    if starts.size and starts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {starts[0]}"
        )
    if starts.size and starts[-1] > idx.size:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {idx.size} but got "
            f"offsets[-1] of {starts[-1]}"
        )
    if np.any(np.diff(starts) < 0):
        raise RuntimeError(
            f"dualad.nn.functional.embedding_bag: offsets must be non-decreasing, got "
            f"{starts.tolist()}"
        )
    ends = np.append(starts[1:], idx.size)
    bags = starts.size
    if include_last_offset:
        bags = max(starts.size - 1, 0)
        starts, ends = starts[:bags], ends[:bags]
    bag_of = np.full(idx.size, -1)
    for b, (lo, hi) in enumerate(zip(starts, ends)):
        bag_of[lo:hi] = b
    return idx, bag_of, bags


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights=None,
    include_last_offset: bool = False,
    padding_idx=None,
):
    """Reduce bags of rows of ``weight`` ``(num_embeddings, dim)`` without building the
    ``(len(input), dim)`` lookup's graph by hand (``torch.nn.functional.embedding_bag``):
    ``(bags, dim)``.

    ``input`` 1-D with ``offsets`` (each bag's start; ``include_last_offset``: the last offset
    ends the last bag) or 2-D ``(bags, length)`` without; ``mode`` ``"sum"``, ``"mean"`` or
    ``"max"`` (an empty bag gives 0); ``per_sample_weights`` (``mode="sum"`` only) scales each
    looked-up row; entries equal to ``padding_idx`` are left out of their bag (not counted by
    the mean). ``max_norm`` renormalises the rows looked up in place first (as
    ``embedding``); ``scale_grad_by_freq`` and ``sparse`` change only PyTorch's backward pass
    and are refused.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> w = dualad.arange(10.0).reshape(5, 2)
    >>> F.embedding_bag(dualad.tensor([1, 2, 4, 4, 3]), w, dualad.tensor([0, 2, 2]), mode="sum")
    tensor([[ 6.,  8.],
            [ 0.,  0.],
            [22., 25.]])
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    input, weight = _tensor(input), _tensor(weight)
    _check_indices("embedding_bag", "indices", input)
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if sparse or scale_grad_by_freq:
        which = "sparse=True" if sparse else "scale_grad_by_freq=True"
        raise ValueError(
            f"dualad.nn.functional.embedding_bag: {which} is not supported (it changes only "
            "PyTorch's backward pass, so it would not be the derivative of the bags)"
        )
    if per_sample_weights is not None:
        per_sample_weights = _tensor(per_sample_weights)
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}')."
            )
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is "
                f"not None, then it must have the same shape as the input ({tuple(input.shape)})"
            )
    idx, bag_of, bags = _layout(input, offsets, include_last_offset)
    rows = weight.shape[0]
    bad = idx[(idx < 0) | (idx >= rows)]
    if bad.size:
        position = int(np.flatnonzero((idx < 0) | (idx >= rows))[0])
        raise IndexError(
            f"Index {position} of input takes value {int(bad[0])} which is not in the valid "
            f"range [0, {rows})"
        )
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    keep = bag_of >= 0
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise ValueError(
                f"dualad.nn.functional.embedding_bag: padding_idx must be within "
                f"num_embeddings (got {padding_idx} for {rows} embeddings)"
            )
        keep &= idx != padding_idx % rows
    positions = np.flatnonzero(keep)
    device = weight.device
    looked_up = ops.index_select(weight, 0, as_tensor(idx[positions], device=device))
    members = bag_of[positions]
    dim = weight.shape[1]
    if per_sample_weights is not None:
        scale = ops.index_select(
            ops.reshape(per_sample_weights, (-1,)), 0, as_tensor(positions, device=device)
        )
        looked_up = looked_up * ops.unsqueeze(scale, 1)
    if mode == "max":
        return _bag_max(looked_up, members, bags, dim, weight)
    empty = zeros((bags, dim), dtype=looked_up.dtype, device=device)
    out = ops.index_add(empty, 0, as_tensor(members, device=device), looked_up)
    if mode == "mean":
        counts = np.maximum(np.bincount(members, minlength=bags), 1)[:, None]
        out = out / as_tensor(counts.astype(out.dtype), device=device)
    return out


def _bag_max(looked_up, members, bags, dim, weight):
    """Each bag's elementwise maximum (0 for an empty bag): the rows laid out as ``(bags,
    longest, dim)``, ``-inf`` where a bag is shorter."""
    device = weight.device
    counts = np.bincount(members, minlength=bags)
    longest = max(int(counts.max()) if bags else 0, 1)
    rank = np.arange(members.size) - np.searchsorted(members, members)  # place in its bag
    slots = np.zeros((bags, longest), np.int64)
    filled = np.zeros((bags, longest), bool)
    slots[members, rank] = np.arange(members.size)
    filled[members, rank] = True
    if members.size == 0:
        return zeros((bags, dim), dtype=weight.dtype, device=device)
    laid = ops.index_select(looked_up, 0, as_tensor(slots.reshape(-1), device=device))
    laid = ops.reshape(laid, (bags, longest, dim))
    mask = as_tensor(filled[:, :, None], device=device)
    values = ops.max(ops.where(mask, laid, float("-inf")), 1)[0]
    return ops.where(as_tensor((counts > 0)[:, None], device=device), values, 0.0)
