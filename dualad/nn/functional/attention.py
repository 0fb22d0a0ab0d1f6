"""``torch.nn.functional.scaled_dot_product_attention`` as a composite of ops.

``softmax(q @ k.T * scale + bias) @ v`` with PyTorch's masks (boolean: True takes part; float:
added), causal masking, attention dropout (``dualad.rand``: vmap's randomness modes apply) and
grouped-query attention. A query whose keys are all masked gets output 0 and gradient 0, as in
PyTorch: ``softmax`` of an all ``-inf`` row is 0 with derivative 0 here.
"""

from __future__ import annotations

import math

from ... import ops
from ..._creation import ones
from .distances import _tensor
from .layers import dropout

__all__ = ["scaled_dot_product_attention"]


def _check(query, key, value, attn_mask, is_causal, enable_gqa):
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise ValueError(
            f"dualad.nn.functional.scaled_dot_product_attention: query, key and value need at "
            f"least 2 dims (..., L or S, E), got {tuple(query.shape)}, {tuple(key.shape)}, "
            f"{tuple(value.shape)}"
        )
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"dualad.nn.functional.scaled_dot_product_attention: query (..., L, E), key "
            f"(..., S, E) and value (..., S, Ev) do not fit: {tuple(query.shape)}, "
            f"{tuple(key.shape)}, {tuple(value.shape)}"
        )
    if is_causal and attn_mask is not None:
        raise ValueError(
            "dualad.nn.functional.scaled_dot_product_attention: _scaled_dot_product_attention: "
            "Explicit attn_mask should not be set when is_causal=True"
        )
    if enable_gqa and (query.ndim < 3 or query.shape[-3] % key.shape[-3]):
        raise ValueError(
            f"dualad.nn.functional.scaled_dot_product_attention: enable_gqa needs the query's "
            f"heads (dim -3) to be a multiple of the key's: {tuple(query.shape)} and "
            f"{tuple(key.shape)}"
        )


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale=None,
    enable_gqa: bool = False,
):
    """``softmax(query @ key.mT * scale + bias) @ value`` over the last two dims (``(..., L, E)``
    queries, ``(..., S, E)`` keys, ``(..., S, Ev)`` values), ``scale`` ``1 / sqrt(E)`` by default
    (``torch.nn.functional.scaled_dot_product_attention``).

    ``attn_mask``: boolean (True: the key takes part) or float (added to the scores),
    broadcast to ``(..., L, S)``; ``is_causal``: each query sees the keys up to its position;
    ``dropout_p``: dropout on the attention weights; ``enable_gqa``: key/value heads (dim -3)
    repeated to the query's. A fully masked query gives 0 (gradient 0).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> q = dualad.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> k = v = dualad.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> mask = dualad.tensor([[True, True], [False, False]])
    >>> F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    tensor([[0.66976155, 0.33023845],
            [0.        , 0.        ]])
    """
    query, key, value = _tensor(query), _tensor(key), _tensor(value)
    _check(query, key, value, attn_mask, is_causal, enable_gqa)
    length, source = query.shape[-2], key.shape[-2]
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa:
        repeats = query.shape[-3] // key.shape[-3]
        key = ops.repeat_interleave(key, repeats, -3)
        value = ops.repeat_interleave(value, repeats, -3)
    scores = ops.matmul(query, ops.transpose(key, -2, -1)) * scale
    if is_causal:
        attn_mask = ops.tril(ones(length, source, dtype="bool", device=query.device))
    if attn_mask is not None:
        attn_mask = _tensor(attn_mask)
        if attn_mask.dtype.kind == "b":
            scores = ops.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    weights = ops.softmax(scores, -1)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return ops.matmul(weights, value)
