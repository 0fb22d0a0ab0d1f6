"""Op database entries of the losses and layers of ``dualad.nn.functional`` (composites of
ops), with NumPy references written here from the formulas, independently of the code checked.

Samples keep clear of the kinks: ``|input - target|`` away from 0 (l1) and from ``delta``/
``beta`` (huber, smooth_l1); probabilities inside (0, 1); norms away from ``eps``. Integer
targets and indices are constant arrays (the vmap checks batch them too: per-example losses).
"""

from __future__ import annotations

import numpy as np

import dualad.nn.functional as F

from . import OpInfo, SampleInput, uniform

PIECEWISE = {"twice_differentiable": False}


def _targets(rng, shape, classes, ignore=False):
    t = rng.integers(0, classes, size=shape)
    if ignore and t.size > 1:
        t.reshape(-1)[1] = -100
    return t


def _class_dim(x):
    return 0 if x.ndim == 1 else 1


# ---------------------------------------------------------------------------------------------
# NumPy references


def np_log_softmax(x, dim):
    z = x - x.max(axis=dim, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=dim, keepdims=True))


def np_nll(logp, target, weight=None, ignore_index=-100, reduction="mean"):
    dim = _class_dim(logp)
    moved = np.moveaxis(logp, dim, -1)
    classes = moved.shape[-1]
    w_all = np.ones(classes, logp.dtype) if weight is None else weight
    ignored = target == ignore_index
    safe = np.where(ignored, 0, target)
    picked = np.take_along_axis(moved, safe[..., None], -1)[..., 0]
    w = np.where(ignored, 0.0, w_all[safe])
    losses = np.where(ignored, 0.0, -picked * w)
    if reduction == "none":
        return losses.astype(logp.dtype)
    if reduction == "sum":
        return np.asarray(losses.sum(), logp.dtype)
    return np.asarray(losses.sum() / w.sum(), logp.dtype)


def np_cross_entropy(
    x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0
):
    dim = _class_dim(x)
    logp = np_log_softmax(x, dim)
    classes = x.shape[dim]
    wshape = [1] * x.ndim
    wshape[dim] = classes
    w_b = 1.0 if weight is None else weight.reshape(wshape)
    if target.shape == x.shape:  # class probabilities
        t = target * (1 - label_smoothing) + label_smoothing / classes
        per = -(logp * t * w_b).sum(axis=dim)
        if reduction == "none":
            return per
        total = per.sum()
        return np.asarray(total if reduction == "sum" else total / (x.size // classes), x.dtype)
    nll = np_nll(logp, target, weight, ignore_index, reduction)
    if not label_smoothing:
        return nll
    ignored = target == ignore_index
    smooth = np.where(ignored, 0.0, -(logp * w_b).sum(axis=dim))
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / (~ignored).sum()
        else:
            smooth = (
                smooth.sum() / np.where(ignored, 0.0, weight[np.where(ignored, 0, target)]).sum()
            )
    return ((1 - label_smoothing) * nll + smooth * (label_smoothing / classes)).astype(x.dtype)


def _reduced(losses, reduction, dtype):
    if reduction == "none":
        return losses.astype(dtype)
    return np.asarray(losses.sum() if reduction == "sum" else losses.mean(), dtype)


def np_huber(x, t, reduction="mean", delta=1.0):
    d = np.abs(x - t)
    return _reduced(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction, x.dtype)


def np_bce(x, y, weight=None, reduction="mean"):
    losses = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log(1 - x), -100))
    return _reduced(losses * (1.0 if weight is None else weight), reduction, x.dtype)


def np_bce_logits(x, y, weight=None, reduction="mean", pos_weight=None):
    p = 1 / (1 + np.exp(-x))
    pw = 1.0 if pos_weight is None else pos_weight
    losses = -(pw * y * np.log(p) + (1 - y) * np.log(1 - p))
    return _reduced(losses * (1.0 if weight is None else weight), reduction, x.dtype)


def np_kl_div(x, t, reduction="mean", log_target=False):
    losses = np.exp(t) * (t - x) if log_target else t * (np.log(t) - x)
    if reduction == "batchmean":
        return np.asarray(losses.sum() / x.shape[0], x.dtype)
    return _reduced(losses, reduction, x.dtype)


def np_layer_norm(x, shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    out = (x - mu) / np.sqrt(var + eps)
    out = out * (1.0 if weight is None else weight) + (0.0 if bias is None else bias)
    return out.astype(x.dtype)


def np_normalize(x, p=2.0, dim=1, eps=1e-12):
    n = (np.abs(x) ** p).sum(axis=dim, keepdims=True) ** (1 / p)
    return (x / np.maximum(n, eps)).astype(x.dtype)


def np_pad(x, pad, mode="constant", value=0.0):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    modes = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}
    crop = tuple(slice(max(-b, 0), x.shape[i] - max(-a, 0)) for i, (b, a) in enumerate(widths))
    x = x[crop]
    widths = [(max(b, 0), max(a, 0)) for b, a in widths]
    if mode == "constant":
        return np.pad(x, widths, constant_values=value)
    return np.pad(x, widths, mode=modes[mode])


# ---------------------------------------------------------------------------------------------
# samples


def cross_entropy_samples(rng, dtype):
    out = []
    for shape, kwargs, ignore in [
        ((3, 4), {}, False),
        ((3, 4), {"reduction": "sum"}, True),
        ((3, 4), {"reduction": "none"}, True),
        ((4,), {}, False),
        ((2, 3, 2), {}, True),
        ((3, 4), {"label_smoothing": 0.2}, True),
        ((2, 3, 2), {"label_smoothing": 0.1, "reduction": "none"}, False),
    ]:
        x = uniform(rng, shape, dtype, -3.0, 3.0)
        dim = _class_dim(x)
        t_shape = shape[:dim] + shape[dim + 1 :]
        t = _targets(rng, t_shape, shape[dim], ignore)
        out.append(SampleInput((x, t), kwargs, note=f"{shape} {kwargs} ignore={ignore}"))
    weight = rng.uniform(0.5, 2.0, 4).astype(dtype)
    for kwargs in [{}, {"label_smoothing": 0.3}, {"reduction": "none"}]:
        x = uniform(rng, (3, 4), dtype, -3.0, 3.0)
        t = _targets(rng, (3,), 4, True)
        out.append(SampleInput((x, t), {"weight": weight, **kwargs}, note=f"weight {kwargs}"))
    for kwargs in [{}, {"label_smoothing": 0.2, "reduction": "sum"}, {"weight": weight}]:
        x = uniform(rng, (3, 4), dtype, -3.0, 3.0)
        p = rng.dirichlet(np.ones(4), size=3).astype(dtype)
        out.append(SampleInput((x, p), kwargs, diff=(0, 1), note=f"probabilities {kwargs}"))
    return out


def nll_samples(rng, dtype):
    out = []
    weight = rng.uniform(0.5, 2.0, 3).astype(dtype)
    for shape, kwargs in [
        ((4, 3), {}),
        ((4, 3), {"weight": weight}),
        ((4, 3), {"weight": weight, "reduction": "none"}),
        ((3,), {"reduction": "sum"}),
        ((2, 3, 2, 2), {"weight": weight}),
    ]:
        x = uniform(rng, shape, dtype, -3.0, -0.1)
        dim = _class_dim(x)
        t = _targets(rng, shape[:dim] + shape[dim + 1 :], 3, ignore=True)
        out.append(SampleInput((x, t), kwargs, note=f"{shape} {sorted(kwargs)}"))
    return out


def _apart(rng, shape, dtype, avoid, margin=0.15, low=-3.0, high=3.0):
    """(input, target) whose differences keep ``margin`` away from each of ``avoid``."""
    t = uniform(rng, shape, dtype, low, high)
    d = rng.uniform(low, high, shape)
    for point in avoid:
        for sign in (1, -1):
            close = np.abs(d - sign * point) < margin
            d = np.where(close, d + 2 * margin, d)
    return np.asarray(t + d).astype(dtype), t


def regression_samples(avoid, extra=({},)):
    def samples(rng, dtype):
        out = []
        for shape in [(), (4,), (2, 3)]:
            for kwargs in extra:
                x, t = _apart(rng, shape, dtype, avoid)
                out.append(SampleInput((x, t), dict(kwargs), diff=(0, 1), note=f"{shape}"))
        for reduction in ("sum", "none"):
            x, t = _apart(rng, (2, 3), dtype, avoid)
            out.append(SampleInput((x, t), {"reduction": reduction}, diff=(0, 1), note=reduction))
        return out

    return samples


def weighted_regression_samples(avoid):
    def samples(rng, dtype):
        out = []
        for reduction in ("mean", "sum", "none"):
            x, t = _apart(rng, (2, 3), dtype, avoid)
            w = rng.uniform(0.5, 2.0, (2, 3)).astype(dtype)
            kwargs = {"reduction": reduction, "weight": w}
            out.append(SampleInput((x, t), kwargs, diff=(0, 1), note=f"weighted {reduction}"))
        return out

    return samples


def bce_samples(rng, dtype):
    out = []
    for shape, kwargs in [
        ((4,), {}),
        ((2, 3), {"reduction": "sum"}),
        ((2, 3), {"reduction": "none"}),
    ]:
        x = uniform(rng, shape, dtype, 0.05, 0.95)
        y = uniform(rng, shape, dtype, 0.0, 1.0)
        out.append(SampleInput((x, y), kwargs, diff=(0, 1), note=f"{shape} {kwargs}"))
    x, y = uniform(rng, (2, 3), dtype, 0.05, 0.95), uniform(rng, (2, 3), dtype, 0.0, 1.0)
    w = rng.uniform(0.5, 2.0, (3,)).astype(dtype)
    out.append(SampleInput((x, y), {"weight": w}, diff=(0, 1), note="weight"))
    return out


def bce_logits_samples(rng, dtype):
    out = []
    for shape, kwargs in [
        ((4,), {}),
        ((2, 3), {"reduction": "sum"}),
        ((2, 3), {"reduction": "none"}),
    ]:
        x = uniform(rng, shape, dtype, -4.0, 4.0)
        y = uniform(rng, shape, dtype, 0.0, 1.0)
        out.append(SampleInput((x, y), kwargs, diff=(0, 1), note=f"{shape} {kwargs}"))
    x, y = uniform(rng, (2, 3), dtype, -4.0, 4.0), uniform(rng, (2, 3), dtype, 0.0, 1.0)
    w = rng.uniform(0.5, 2.0, (2, 3)).astype(dtype)
    pw = rng.uniform(0.5, 3.0, (3,)).astype(dtype)
    kwargs = {"weight": w, "pos_weight": pw}
    out.append(SampleInput((x, y), kwargs, diff=(0, 1), note="weight, pos_weight"))
    return out


def kl_samples(rng, dtype):
    out = []
    for kwargs in [{"reduction": "batchmean"}, {"reduction": "sum"}, {"reduction": "none"}]:
        x = uniform(rng, (3, 4), dtype, -3.0, 0.0)
        t = uniform(rng, (3, 4), dtype, 0.1, 1.0)
        out.append(SampleInput((x, t), kwargs, diff=(0, 1), note=str(kwargs)))
    x, t = uniform(rng, (3, 4), dtype, -3.0, 0.0), uniform(rng, (3, 4), dtype, -3.0, 0.0)
    kwargs = {"reduction": "batchmean", "log_target": True}
    out.append(SampleInput((x, t), kwargs, diff=(0, 1), note="log_target"))
    return out


def linear_samples(rng, dtype):
    out = []
    for x_shape, w_shape, bias in [
        ((3,), (2, 3), True),
        ((4, 3), (2, 3), False),
        ((2, 4, 3), (3,), False),
    ]:
        x, w = uniform(rng, x_shape, dtype), uniform(rng, w_shape, dtype)
        if bias:
            b = uniform(rng, w_shape[:1], dtype)
            out.append(SampleInput((x, w, b), diff=(0, 1, 2), note=f"{x_shape} bias"))
        else:
            out.append(SampleInput((x, w), diff=(0, 1), note=f"{x_shape} {w_shape}"))
    return out


def bilinear_samples(rng, dtype):
    x1, x2 = uniform(rng, (4, 3), dtype), uniform(rng, (4, 2), dtype)
    w, b = uniform(rng, (5, 3, 2), dtype), uniform(rng, (5,), dtype)
    return [
        SampleInput((x1, x2, w, b), diff=(0, 1, 2, 3), note="batched, bias"),
        SampleInput((x1[0], x2[0], w), diff=(0, 1, 2), note="unbatched"),
    ]


def layer_norm_samples(rng, dtype):
    out = []
    x = uniform(rng, (3, 4), dtype)
    out.append(SampleInput((x, (4,)), note="(3, 4) over 4"))
    x = uniform(rng, (2, 3, 4), dtype)
    w, b = uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype)
    out.append(SampleInput((x, (3, 4), w, b), diff=(0, 2, 3), note="affine over (3, 4)"))
    return out


def normalize_samples(rng, dtype):
    out = [SampleInput((uniform(rng, (3, 4), dtype),), note="default p=2 dim=1")]
    x = uniform(rng, (3, 4), dtype, 0.2, 2.0) * rng.choice([-1.0, 1.0], (3, 4)).astype(dtype)
    out.append(SampleInput((x,), {"p": 1.0, "dim": 0}, note="p=1 dim=0"))
    out.append(SampleInput((uniform(rng, (2, 5), dtype),), {"p": 3.0, "dim": -1}, note="p=3"))
    return out


def embedding_samples(rng, dtype):
    # (padding_idx makes its row a constant on purpose: tests/nn/test_layers.py checks it)
    w = uniform(rng, (5, 3), dtype)
    idx = np.array([[0, 2, 4], [2, 2, 1]])
    return [
        SampleInput((idx, w), diff=(1,), note="(2, 3) lookups"),
        SampleInput((np.array(3), w), diff=(1,), note="0-d index"),
    ]


def pad_samples(rng, dtype):
    out = []
    for shape, pad, kwargs in [
        ((2, 3), (1, 2), {}),
        ((2, 3, 4), (1, 0, 2, -1), {"value": 1.5}),
        ((2, 4), (2, 3), {"mode": "reflect"}),
        ((1, 2, 3, 4), (1, 2, 2, 1), {"mode": "reflect"}),
        ((2, 3), (2, 4), {"mode": "replicate"}),
        ((2, 3, 3), (1, 2, 0, 3), {"mode": "replicate"}),
        ((2, 4), (3, 2), {"mode": "circular"}),
        ((1, 1, 2, 3, 2), (1, 1, 2, 0, 1, 1), {"mode": "circular"}),
    ]:
        out.append(SampleInput((uniform(rng, shape, dtype), pad), kwargs, note=f"{shape} {pad}"))
    return out


def _weighted_ref(losses, weight, reduction, dtype, by_weight_sum):
    if weight is None:
        return _reduced(losses, reduction, dtype)
    weighted = losses * weight
    if reduction == "mean" and by_weight_sum:
        return np.asarray(weighted.sum() / weight.sum(), dtype)
    return _reduced(weighted, reduction, dtype)


def np_mse(x, t, reduction="mean", weight=None):
    return _weighted_ref((x - t) ** 2, weight, reduction, x.dtype, True)


def np_l1(x, t, reduction="mean", weight=None):
    return _weighted_ref(np.abs(x - t), weight, reduction, x.dtype, True)


def np_huber_weighted(x, t, reduction="mean", weight=None):
    return _weighted_ref(np_huber(x, t, "none"), weight, reduction, x.dtype, False)


def np_smooth_l1(x, t, reduction="mean", beta=1.0):
    return np_huber(x, t, reduction, beta) / beta


def np_linear(x, w, b=None):
    return (x @ w.T if w.ndim == 2 else x @ w) + (0 if b is None else b)


def np_bilinear(a, b, w, bias=None):
    return np.einsum("...i,oij,...j->...o", a, w, b) + (0 if bias is None else bias)


def np_embedding(indices, weight):
    return weight[indices]


def np_batch_norm(x, running_mean=None, running_var=None, weight=None, bias=None, **kwargs):
    dims = (0, *range(2, x.ndim))
    return _np_affine(_np_standardize(x, dims), weight, bias)


def np_instance_norm(x, weight=None, bias=None):
    return _np_affine(_np_standardize(x, tuple(range(2, x.ndim))), weight, bias)


def np_group_norm(x, groups, weight=None, bias=None):
    g = _np_standardize(x.reshape(x.shape[0], groups, -1), (2,))
    return _np_affine(g.reshape(x.shape), weight, bias)


def _np_standardize(x, dims, eps=1e-5):
    m = x.mean(axis=dims, keepdims=True)
    return ((x - m) / np.sqrt(x.var(axis=dims, keepdims=True) + eps)).astype(x.dtype)


def _np_affine(out, weight, bias):
    shape = (-1,) + (1,) * (out.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def normalization_samples(kind):
    def samples(rng, dtype):
        x = uniform(rng, (3, 4, 5), dtype)
        w, b = uniform(rng, (4,), dtype, 0.5, 1.5), uniform(rng, (4,), dtype)
        if kind == "batch":
            return [
                SampleInput((x, None, None), {"training": True}, note="no affine"),
                SampleInput((x, None, None, w, b), {"training": True}, diff=(0, 3, 4)),
            ]
        if kind == "instance":
            return [
                SampleInput((x,)),
                SampleInput((x,), {"weight": w, "bias": b}, diff=(0, "weight", "bias")),
            ]
        return [SampleInput((x, 2)), SampleInput((x, 4, w, b), diff=(0, 2, 3), note="affine")]

    return samples


def loss_entries() -> list[OpInfo]:
    """The losses' entries (each names the registry ops its composite is made of)."""
    return [
        OpInfo(
            "cross_entropy",
            F.cross_entropy,
            cross_entropy_samples,
            ops=("log_softmax", "gather"),
            ref=np_cross_entropy,
        ),
        OpInfo("nll_loss", F.nll_loss, nll_samples, ops=("gather", "where"), ref=np_nll),
        OpInfo("mse_loss", F.mse_loss, regression_samples(()), ops=("mul", "mean"), ref=np_mse),
        OpInfo(
            "mse_loss_weighted",
            F.mse_loss,
            weighted_regression_samples(()),
            ops=("mul",),
            ref=np_mse,
        ),
        # l1 and huber are piecewise: |input - target| keeps clear of 0 and of delta / beta
        OpInfo(
            "l1_loss", F.l1_loss, regression_samples((0.0,)), ops=("abs",), ref=np_l1, **PIECEWISE
        ),
        OpInfo(
            "l1_loss_weighted",
            F.l1_loss,
            weighted_regression_samples((0.0,)),
            ops=("abs",),
            ref=np_l1,
            **PIECEWISE,
        ),
        OpInfo(
            "huber_loss",
            F.huber_loss,
            regression_samples((0.0, 1.5), ({"delta": 1.5},)),
            ops=("where",),
            ref=np_huber,
            **PIECEWISE,
        ),
        OpInfo(
            "huber_loss_weighted",
            F.huber_loss,
            weighted_regression_samples((0.0, 1.0)),
            ops=("where",),
            ref=np_huber_weighted,
            **PIECEWISE,
        ),
        OpInfo(
            "smooth_l1_loss",
            F.smooth_l1_loss,
            regression_samples((0.0, 0.5), ({"beta": 0.5},)),
            ops=("where",),
            ref=np_smooth_l1,
            **PIECEWISE,
        ),
        OpInfo(
            "binary_cross_entropy",
            F.binary_cross_entropy,
            bce_samples,
            ops=("log", "log1p"),
            ref=np_bce,
        ),
        OpInfo(
            "binary_cross_entropy_with_logits",
            F.binary_cross_entropy_with_logits,
            bce_logits_samples,
            ops=("logsigmoid",),
            ref=np_bce_logits,
        ),
        OpInfo("nn.kl_div", F.kl_div, kl_samples, ops=("xlogy", "exp"), ref=np_kl_div),
    ]


def layer_entries() -> list[OpInfo]:
    """The layers' entries (dropout is random: tests/nn/test_layers.py checks it)."""
    return [
        OpInfo("linear", F.linear, linear_samples, ops=("matmul",), ref=np_linear),
        OpInfo("bilinear", F.bilinear, bilinear_samples, ops=("einsum",), ref=np_bilinear),
        OpInfo(
            "layer_norm",
            F.layer_norm,
            layer_norm_samples,
            ops=("mean", "rsqrt"),
            ref=np_layer_norm,
        ),
        OpInfo(
            "normalize", F.normalize, normalize_samples, ops=("norm", "clamp"), ref=np_normalize
        ),
        OpInfo("embedding", F.embedding, embedding_samples, ops=("index",), ref=np_embedding),
        OpInfo(
            "batch_norm",
            F.batch_norm,
            normalization_samples("batch"),
            ops=("mean", "rsqrt"),
            ref=np_batch_norm,
        ),
        OpInfo(
            "instance_norm",
            F.instance_norm,
            normalization_samples("instance"),
            ops=("mean", "rsqrt"),
            ref=np_instance_norm,
        ),
        OpInfo(
            "group_norm",
            F.group_norm,
            normalization_samples("group"),
            ops=("mean", "rsqrt"),
            ref=np_group_norm,
        ),
        OpInfo("pad", F.pad, pad_samples, ops=("index_select", "cat"), ref=np_pad),
    ]
