"""Op database entries of the distances, margin and likelihood losses, rms_norm, attention and
interpolate of ``dualad.nn.functional``, with NumPy references written here from PyTorch's formulas.

Samples keep clear of the hinges (``margin - d`` away from 0) and of ``eps`` clamps; the
targets of the margin losses (+-1) are constant arrays.
"""

from __future__ import annotations

import math

import numpy as np

import dualad.nn.functional as F

from . import OpInfo, SampleInput, uniform

PIECEWISE = {"twice_differentiable": False}


def _reduce(losses, reduction, dtype):
    if reduction == "none":
        return np.asarray(losses).astype(dtype)
    return np.asarray(losses.sum() if reduction == "sum" else losses.mean(), dtype)


def _signs(rng, shape):
    return rng.choice([-1.0, 1.0], shape)


def np_cosine_similarity(a, b, dim=1):
    na = np.sqrt((a * a).sum(axis=dim, keepdims=True))
    nb = np.sqrt((b * b).sum(axis=dim, keepdims=True))
    return ((a / na) * (b / nb)).sum(axis=dim)


def np_pairwise_distance(a, b, p=2.0):
    return (np.abs(a - b + 1e-6) ** p).sum(axis=-1) ** (1 / p)


def np_margin_ranking(a, b, y, margin=0.0, reduction="mean"):
    return _reduce(np.maximum(-y * (a - b) + margin, 0), reduction, a.dtype)


def np_soft_margin(x, y, reduction="mean"):
    return _reduce(np.log1p(np.exp(-y * x)), reduction, x.dtype)


def np_multilabel_soft_margin(x, y, reduction="mean"):
    p = 1 / (1 + np.exp(-x))
    losses = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(axis=-1)
    return _reduce(losses, reduction, x.dtype)


def np_cosine_embedding(a, b, y, margin=0.0, reduction="mean"):
    cos = (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))
    losses = np.where(y == 1, 1 - cos, np.maximum(cos - margin, 0))
    return _reduce(losses, reduction, a.dtype)


def np_triplet(a, p, n, margin=1.0, reduction="mean"):
    d_pos, d_neg = np_pairwise_distance(a, p), np_pairwise_distance(a, n)
    return _reduce(np.maximum(margin + d_pos - d_neg, 0), reduction, a.dtype)


def np_gaussian_nll(x, t, var, full=False, reduction="mean"):
    if var.shape != x.shape:
        var = var[..., None]
    losses = 0.5 * (np.log(var) + (x - t) ** 2 / var) + (0.5 * math.log(2 * math.pi) if full else 0)
    return _reduce(losses, reduction, x.dtype)


def np_poisson_nll(x, t, log_input=True, reduction="mean"):
    losses = np.exp(x) - t * x if log_input else x - t * np.log(x + 1e-8)
    return _reduce(losses, reduction, x.dtype)


def distance_samples(rng, dtype):
    a, b = uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype)
    return [
        SampleInput((a, b), diff=(0, 1), note="(3, 4)"),
        SampleInput((a, b[:1]), {"dim": 1}, diff=(0, 1), note="broadcast"),
    ]


def pairwise_samples(rng, dtype):
    a, b = uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype)
    return [
        SampleInput((a, b), diff=(0, 1), note="p=2"),
        SampleInput((a, b), {"p": 3.0}, diff=(0, 1), note="p=3"),
    ]


def _hinged(rng, dtype, margin):
    """(a, b, y) whose hinge argument ``margin - y (a - b)`` keeps 0.2 away from 0."""
    while True:
        a, b = uniform(rng, (5,), dtype), uniform(rng, (5,), dtype)
        y = _signs(rng, (5,)).astype(dtype)
        if np.all(np.abs(margin - y * (a - b)) > 0.2):
            return a, b, y


def ranking_samples(rng, dtype):
    out = []
    for reduction in ("mean", "none"):
        a, b, y = _hinged(rng, dtype, 0.3)
        kwargs = {"margin": 0.3, "reduction": reduction}
        out.append(SampleInput((a, b, y), kwargs, diff=(0, 1), note=reduction))
    return out


def soft_margin_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -4.0, 4.0)
    y = _signs(rng, (3, 4)).astype(dtype)
    return [SampleInput((x, y)), SampleInput((x, y), {"reduction": "sum"}, note="sum")]


def multilabel_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -4.0, 4.0)
    y = (rng.uniform(size=(3, 4)) > 0.5).astype(dtype)
    return [SampleInput((x, y)), SampleInput((x, y), {"reduction": "none"}, note="none")]


def cosine_embedding_samples(rng, dtype):
    out = []
    while len(out) < 2:
        a, b = uniform(rng, (4, 3), dtype), uniform(rng, (4, 3), dtype)
        y = _signs(rng, (4,)).astype(dtype)
        if np.all(np.abs(np_cosine_similarity(a, b) - 0.1) > 0.1):
            out.append(SampleInput((a, b, y), {"margin": 0.1}, diff=(0, 1)))
    return out


def triplet_samples(rng, dtype):
    out = []
    while len(out) < 2:
        a, p, n = (uniform(rng, (4, 3), dtype) for _ in range(3))
        gap = 1.0 + np_pairwise_distance(a, p) - np_pairwise_distance(a, n)
        if np.all(np.abs(gap) > 0.2):
            out.append(SampleInput((a, p, n), diff=(0, 1, 2)))
    return out


def gaussian_samples(rng, dtype):
    # positive inputs: the tests that pass one tensor in every slot use it as the variance too
    x, t = uniform(rng, (3, 4), dtype, 0.5, 2.0), uniform(rng, (3, 4), dtype)
    var = uniform(rng, (3, 4), dtype, 0.5, 2.0)
    homo = uniform(rng, (3,), dtype, 0.5, 2.0)
    return [
        SampleInput((x, t, var), diff=(0, 1, 2), note="heteroscedastic"),
        SampleInput((x, t, homo), {"full": True, "reduction": "sum"}, diff=(0, 1, 2), note="homo"),
    ]


def poisson_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -1.0, 1.5)
    rates = uniform(rng, (3, 4), dtype, 0.5, 3.0)
    t = rng.integers(0, 5, (3, 4)).astype(dtype)
    return [
        SampleInput((x, t), diff=(0,), note="log rates"),
        SampleInput((rates, t), {"log_input": False, "reduction": "none"}, diff=(0,), note="rates"),
    ]


def np_rms_norm(x, shape, weight=None, eps=None):
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    eps = np.finfo(x.dtype).eps if eps is None else eps
    out = x / np.sqrt((x * x).mean(axis=dims, keepdims=True) + eps)
    return out if weight is None else out * weight


def rms_norm_samples(rng, dtype):
    x = uniform(rng, (3, 4, 5), dtype)
    w = uniform(rng, (4, 5), dtype)
    return [
        SampleInput((x, (5,)), note="over 5"),
        SampleInput((x, (4, 5), w), {"eps": 1e-3}, diff=(0, 2), note="affine over (4, 5)"),
    ]


def np_attention(q, k, v, attn_mask=None, is_causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if is_causal:
        attn_mask = np.tril(np.ones(scores.shape[-2:], dtype=bool))
    if attn_mask is not None:
        scores = (
            np.where(attn_mask, scores, -np.inf) if attn_mask.dtype == bool else scores + attn_mask
        )
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return ((e / e.sum(-1, keepdims=True)) @ v).astype(q.dtype)


def attention_samples(rng, dtype):
    q, k, v = (
        uniform(rng, (2, 3, 4), dtype),
        uniform(rng, (2, 5, 4), dtype),
        uniform(rng, (2, 5, 3), dtype),
    )
    mask = np.array([[1, 0, 1, 1, 0], [0, 0, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)
    bias = uniform(rng, (3, 5), dtype)
    return [
        SampleInput((q, k, v), diff=(0, 1, 2), note="plain"),
        SampleInput((q, k, v), {"attn_mask": mask}, diff=(0, 1, 2), note="boolean mask"),
        SampleInput(
            (q, k, v), {"attn_mask": bias, "scale": 0.7}, diff=(0, 1, 2), note="float mask"
        ),
        SampleInput((q, k[:, :3], v[:, :3]), {"is_causal": True}, diff=(0, 1, 2), note="causal"),
    ]


def np_pdist(x, p=2.0):
    i, j = np.triu_indices(x.shape[0], 1)
    return (np.abs(x[i] - x[j]) ** p).sum(-1) ** (1 / p)


def pdist_samples(rng, dtype):
    x = uniform(rng, (4, 3), dtype)
    return [SampleInput((x,), note="p=2"), SampleInput((x, 3.0), note="p=3")]


def np_multi_margin(x, t, p=1, margin=1.0, reduction="mean"):
    picked = np.take_along_axis(x, t[..., None], -1)
    hinge = np.maximum(margin - picked + x, 0) ** p
    hinge = np.where(np.arange(x.shape[-1]) == t[..., None], 0.0, hinge)
    return _reduce(hinge.sum(-1) / x.shape[-1], reduction, x.dtype)


def multi_margin_samples(rng, dtype):
    out = []
    for kwargs in ({}, {"p": 2, "margin": 0.5, "reduction": "none"}):
        while True:
            x = uniform(rng, (3, 4), dtype)
            t = rng.integers(0, 4, 3)
            gap = kwargs.get("margin", 1.0) - np.take_along_axis(x, t[:, None], 1) + x
            if np.all(np.abs(gap) > 0.15):
                break
        out.append(SampleInput((x, t), kwargs, note=str(kwargs)))
    return out


def np_hinge_embedding(x, y, margin=1.0, reduction="mean"):
    losses = np.where(y == 1, x, np.maximum(margin - x, 0))
    return _reduce(losses, reduction, x.dtype)


def hinge_embedding_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -2.0, 2.0)
    x = np.where(np.abs(x - 0.5) < 0.15, x + 0.3, x).astype(dtype)  # clear of the hinge
    y = _signs(rng, (3, 4)).astype(dtype)
    return [
        SampleInput((x, y), {"margin": 0.5}),
        SampleInput((x, y), {"margin": 0.5, "reduction": "sum"}),
    ]


def np_interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None):
    # separable, written from PyTorch's source-coordinate formulas
    out = x
    spatial = x.ndim - 2
    sizes = (size,) * spatial if isinstance(size, int) else size
    factors = (scale_factor,) * spatial if isinstance(scale_factor, (int, float)) else scale_factor
    for k in range(spatial):
        n = x.shape[2 + k]
        m = sizes[k] if sizes else int(np.floor(n * factors[k]))
        scale = n / m if sizes else 1 / factors[k]
        dst = np.arange(m)
        if mode == "nearest":
            out = np.take(out, np.minimum(np.floor(dst * scale), n - 1).astype(int), axis=2 + k)
            continue
        if align_corners:
            src = dst * ((n - 1) / (m - 1)) if m > 1 else 0 * dst
        else:
            src = np.maximum((dst + 0.5) * scale - 0.5, 0)
        i0 = np.minimum(np.floor(src).astype(int), n - 1)
        i1 = np.minimum(i0 + 1, n - 1)
        shape = [1] * x.ndim
        shape[2 + k] = m
        w = (src - i0).reshape(shape)
        out = np.take(out, i0, axis=2 + k) * (1 - w) + np.take(out, i1, axis=2 + k) * w
    return out.astype(x.dtype)


def interpolate_samples(rng, dtype):
    x1, x2 = uniform(rng, (2, 1, 5), dtype), uniform(rng, (1, 2, 3, 4), dtype)
    return [
        SampleInput((x1,), {"size": 8, "mode": "linear"}, note="linear"),
        SampleInput((x1,), {"scale_factor": 1.5}, note="nearest"),
        SampleInput((x2,), {"size": (5, 3), "mode": "bilinear"}, note="bilinear"),
        SampleInput(
            (x2,), {"size": (2, 7), "mode": "bilinear", "align_corners": True}, note="corners"
        ),
    ]


def more_loss_entries() -> list[OpInfo]:
    """The entries of distances.py, margin_losses.py, likelihood_losses.py, rms_norm and
    attention.py."""
    return [
        OpInfo("rms_norm", F.rms_norm, rms_norm_samples, ops=("rsqrt",), ref=np_rms_norm),
        OpInfo(
            "interpolate",
            F.interpolate,
            interpolate_samples,
            ops=("index_select",),
            ref=np_interpolate,
        ),
        OpInfo("pdist", F.pdist, pdist_samples, ops=("norm", "index_select"), ref=np_pdist),
        OpInfo(
            "scaled_dot_product_attention",
            F.scaled_dot_product_attention,
            attention_samples,
            ops=("softmax", "matmul"),
            ref=np_attention,
        ),
        OpInfo(
            "cosine_similarity",
            F.cosine_similarity,
            distance_samples,
            ops=("norm",),
            ref=np_cosine_similarity,
        ),
        OpInfo(
            "pairwise_distance",
            F.pairwise_distance,
            pairwise_samples,
            ops=("norm",),
            ref=np_pairwise_distance,
        ),
        OpInfo(
            "margin_ranking_loss",
            F.margin_ranking_loss,
            ranking_samples,
            ops=("clamp",),
            ref=np_margin_ranking,
            **PIECEWISE,
        ),
        OpInfo(
            "multi_margin_loss",
            F.multi_margin_loss,
            multi_margin_samples,
            ops=("gather", "clamp"),
            ref=np_multi_margin,
            **PIECEWISE,
        ),
        OpInfo(
            "hinge_embedding_loss",
            F.hinge_embedding_loss,
            hinge_embedding_samples,
            ops=("where", "clamp"),
            ref=np_hinge_embedding,
            **PIECEWISE,
        ),
        OpInfo(
            "soft_margin_loss",
            F.soft_margin_loss,
            soft_margin_samples,
            ops=("logsigmoid",),
            ref=np_soft_margin,
        ),
        OpInfo(
            "multilabel_soft_margin_loss",
            F.multilabel_soft_margin_loss,
            multilabel_samples,
            ops=("logsigmoid",),
            ref=np_multilabel_soft_margin,
        ),
        OpInfo(
            "cosine_embedding_loss",
            F.cosine_embedding_loss,
            cosine_embedding_samples,
            ops=("where",),
            ref=np_cosine_embedding,
            **PIECEWISE,
        ),
        OpInfo(
            "triplet_margin_loss",
            F.triplet_margin_loss,
            triplet_samples,
            ops=("norm", "clamp"),
            ref=np_triplet,
            **PIECEWISE,
        ),
        OpInfo(
            "gaussian_nll_loss",
            F.gaussian_nll_loss,
            gaussian_samples,
            ops=("log",),
            ref=np_gaussian_nll,
        ),
        OpInfo(
            "poisson_nll_loss",
            F.poisson_nll_loss,
            poisson_samples,
            ops=("exp", "log"),
            ref=np_poisson_nll,
        ),
    ]
