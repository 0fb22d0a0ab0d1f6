"""Op database entries of the neural-network primitives of ``dualad.nn.functional``: unfold and
fold, adaptive average and max pooling, max_unpool (the registry ops ``unfold``, ``fold``,
``adaptive_avg_pool``, ``adaptive_avg_pool_backward``, ``adaptive_max_pool``, ``max_unpool``).

The references are loops over output positions written here from PyTorch's definitions (not the
ops' vectorised formulations). Max pooling samples have distinct values (no ties: one piece for
central differences); unpooling samples include repeated indices (the last write wins).
"""

from __future__ import annotations

import math

import numpy as np

import dualad
import dualad.nn.functional as F
from dualad.ops.adaptive_pooling import adaptive_avg_pool_backward
from dualad.ops.unpooling import max_unpool_writers

from . import ALL_DIFF, FLOATING, OpInfo, SampleInput, uniform
from ._grid_samples import grid_entries
from ._rearrange_samples import rearrange_entries
from .convolution import distinct

# ---------------------------------------------------------------------------------------------
# references


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def ref_unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """``cols[n, (c, ki, kj), l] = xpad[n, c, oi * si + ki * di, oj * sj + kj * dj]``."""
    (kh, kw), (dh, dw) = _pair(kernel_size), _pair(dilation)
    (ph, pw), (sh, sw) = _pair(padding), _pair(stride)
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    xpad = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (xpad.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xpad.shape[3] - dw * (kw - 1) - 1) // sw + 1
    n, c = x.shape[:2]
    cols = np.zeros((n, c * kh * kw, oh * ow), x.dtype)
    for ch in range(c):
        for ki in range(kh):
            for kj in range(kw):
                for oi in range(oh):
                    for oj in range(ow):
                        row = (ch * kh + ki) * kw + kj
                        cols[:, row, oi * ow + oj] = xpad[
                            :, ch, oi * sh + ki * dh, oj * sw + kj * dw
                        ]
    return cols[0] if unbatched else cols


def ref_fold(cols, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of ``ref_unfold``, column entry by column entry."""
    (kh, kw), (dh, dw) = _pair(kernel_size), _pair(dilation)
    (ph, pw), (sh, sw) = _pair(padding), _pair(stride)
    (h, w) = _pair(output_size)
    unbatched = cols.ndim == 2
    cols = cols[None] if unbatched else cols
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    n, rows = cols.shape[:2]
    c = rows // (kh * kw)
    xpad = np.zeros((n, c, h + 2 * ph, w + 2 * pw), cols.dtype)
    for row in range(rows):
        ch, rest = divmod(row, kh * kw)
        ki, kj = divmod(rest, kw)
        for oi in range(oh):
            for oj in range(ow):
                xpad[:, ch, oi * sh + ki * dh, oj * sw + kj * dw] += cols[:, row, oi * ow + oj]
    out = xpad[:, :, ph : ph + h, pw : pw + w]
    return out[0] if unbatched else out


def _windows(sizes, output_size):
    """Every adaptive window: ``(output position, tuple of slices)`` (PyTorch's start/end)."""
    ranges = [
        [(math.floor(i * s / o), math.ceil((i + 1) * s / o)) for i in range(o)]
        for s, o in zip(sizes, output_size)
    ]
    for pos in np.ndindex(*output_size):
        yield pos, tuple(slice(*ranges[j][i]) for j, i in enumerate(pos))


def _output_size(x, output_size, nd):
    output_size = (output_size,) * nd if isinstance(output_size, int) else tuple(output_size)
    sizes = x.shape[x.ndim - nd :]
    return sizes, tuple(s if o is None else o for s, o in zip(sizes, output_size))


def _ref_adaptive(reduce):
    def ref(x, output_size, *, nd):
        sizes, output_size = _output_size(x, output_size, nd)
        out = np.zeros(x.shape[: x.ndim - nd] + output_size, x.dtype)
        for pos, box in _windows(sizes, output_size):
            out[(Ellipsis, *pos)] = reduce(x[(Ellipsis, *box)], axis=tuple(range(-nd, 0)))
        return out

    return ref


ref_adaptive_avg = _ref_adaptive(np.mean)
ref_adaptive_max = _ref_adaptive(np.max)


def ref_adaptive_avg_backward(ct, *, output_size, size):
    """Each cotangent entry spread evenly over its window."""
    nd = len(size)
    out = np.zeros(ct.shape[: ct.ndim - nd] + tuple(size), ct.dtype)
    for pos, box in _windows(size, output_size):
        count = math.prod(b.stop - b.start for b in box)
        out[(Ellipsis, *box)] += (ct[(Ellipsis, *pos)] / count)[(Ellipsis,) + (None,) * nd]
    return out


def ref_max_unpool(x, indices, kernel_size, stride=None, padding=0, output_size=None, *, nd):
    """Each value written at its flat index in row-major order (the last write wins)."""
    kernel = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    stride = kernel if stride is None else stride
    stride = (stride,) * nd if isinstance(stride, int) else tuple(stride)
    padding = (padding,) * nd if isinstance(padding, int) else tuple(padding)
    sizes = x.shape[x.ndim - nd :]
    default = [(s - 1) * st - 2 * p + k for s, st, p, k in zip(sizes, stride, padding, kernel)]
    size = default if output_size is None else list(output_size)[-nd:]
    lead = x.shape[: x.ndim - nd]
    planes = x.reshape(-1, math.prod(sizes))
    index = indices.reshape(planes.shape)
    out = np.zeros((planes.shape[0], math.prod(size)), x.dtype)
    for p in range(planes.shape[0]):
        for j in range(planes.shape[1]):
            out[p, index[p, j]] = planes[p, j]
    return out.reshape(lead + tuple(size))


# ---------------------------------------------------------------------------------------------
# samples

# (input shape, keyword arguments, note)
UNFOLD_CASES = [
    ((2, 3, 5, 4), {"kernel_size": 2}, "2x2"),
    (
        (1, 2, 6, 7),
        {"kernel_size": (3, 2), "dilation": (1, 2), "padding": (1, 0), "stride": (2, 1)},
        "dilation padding stride",
    ),
    ((2, 4, 4), {"kernel_size": 3, "padding": 1, "stride": 2}, "unbatched"),
]


def _unfold_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, shape, dtype),), dict(kwargs), note=note)
        for shape, kwargs, note in UNFOLD_CASES
    ]


def _fold_samples(rng, dtype):
    out = []
    for shape, kwargs, note in UNFOLD_CASES:
        cols_shape = ref_unfold(np.zeros(shape), **kwargs).shape
        size = shape[-2:]
        out.append(SampleInput((uniform(rng, cols_shape, dtype), size), dict(kwargs), note=note))
    return out


# (input shape, output_size, note) per spatial rank
ADAPTIVE_CASES = {
    1: [((2, 3, 7), 3, "overlapping"), ((3, 8), 4, "unbatched even"), ((1, 2, 5), 7, "grow")],
    2: [
        ((2, 2, 5, 7), (3, 4), "overlapping"),
        ((3, 6, 4), (None, 3), "unbatched None"),
        ((1, 1, 4, 4), 1, "global"),
    ],
    3: [((1, 2, 3, 5, 4), (2, 3, 2), "3d"), ((2, 4, 3, 3), 2, "unbatched")],
}


def _adaptive_samples(nd, make):
    def samples(rng, dtype):
        return [
            SampleInput((make(rng, shape, dtype), size), note=note)
            for shape, size, note in ADAPTIVE_CASES[nd]
        ]

    return samples


def _max_samples(nd):
    return _adaptive_samples(nd, distinct)


def _avg_backward_fn(ct, *, output_size, size):
    return adaptive_avg_pool_backward(ct, output_size, size)


def _avg_backward_samples(rng, dtype):
    cases = [
        ((2, 3), (3,), (7,)),
        ((1, 2, 3, 2), (3, 2), (5, 4)),
        ((2, 2, 3, 2), (2, 3, 2), (3, 5, 4)),
    ]
    return [
        SampleInput((uniform(rng, shape, dtype),), {"output_size": out, "size": size})
        for shape, out, size in cases
    ]


def _unpool_samples(nd):
    # (shape of the pooled values, keyword arguments, indices: "pool" from a max pooling of a
    # distinct-valued input (strictly inside the plane), "repeat" with repeated positions)
    cases = {
        1: [((2, 3, 4), {"kernel_size": 2}), ((3, 5), {"kernel_size": 2, "stride": 1})],
        2: [
            ((1, 2, 3, 2), {"kernel_size": 2}),
            ((2, 3, 3), {"kernel_size": 2, "stride": 1, "output_size": (4, 4)}),
        ],
        3: [((1, 2, 2, 2, 1), {"kernel_size": 2})],
    }[nd]

    def samples(rng, dtype):
        out = []
        for shape, kwargs in cases:
            values = uniform(rng, shape, dtype)
            sizes = ref_max_unpool(values, np.zeros(shape, np.int64), nd=nd, **kwargs).shape[-nd:]
            plane = math.prod(sizes)
            count = math.prod(shape[len(shape) - nd :])
            lead = shape[: len(shape) - nd]
            if kwargs.get("stride") == 1:  # overlapping windows: positions repeat
                flat = rng.integers(0, plane, (*lead, count))
                note = "repeated indices"
            else:
                flat = np.stack([rng.permutation(plane)[:count] for _ in range(math.prod(lead))])
                note = "distinct indices"
            indices = flat.reshape(shape).astype(np.int64)
            out.append(SampleInput((values, indices), dict(kwargs), note=note))
        return out

    return samples


def ref_writers(indices, *, size):
    """True at the last occurrence of each position within its plane."""
    nd = len(size)
    flat = indices.reshape(-1, math.prod(indices.shape[indices.ndim - nd :]))
    keep = np.zeros(flat.shape, bool)
    for p in range(flat.shape[0]):
        seen = set()
        for j in reversed(range(flat.shape[1])):
            keep[p, j] = flat[p, j] not in seen
            seen.add(flat[p, j])
    return keep.reshape(indices.shape)


def _writers_fn(indices, *, size):
    return max_unpool_writers(indices, size)


def _writers_samples(rng, dtype):
    return [
        SampleInput((rng.integers(0, 6, (2, 3, 5)),), {"size": (6,)}, diff=(), note="1d"),
        SampleInput((rng.integers(0, 4, (3, 2, 2)),), {"size": (2, 2)}, diff=(), note="2d"),
    ]


def _bag_fn(weight, per_sample_weights=None, *, indices, offsets=None, **kwargs):
    # the bag layout is static (concrete tuples): only weight and per_sample_weights vary
    indices = dualad.tensor(np.array(indices, np.int64))
    offsets = None if offsets is None else dualad.tensor(np.array(offsets, np.int64))
    return F.embedding_bag(
        indices, weight, offsets, per_sample_weights=per_sample_weights, **kwargs
    )


def ref_embedding_bag(weight, per_sample_weights=None, *, indices, offsets=None, **kwargs):
    """Each bag reduced row by row (PyTorch's layout, padding left out, empty bags 0)."""
    indices = np.array(indices)
    psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    if indices.ndim == 2:
        bounds = [(b * indices.shape[1], (b + 1) * indices.shape[1]) for b in range(len(indices))]
    else:
        ends = [*offsets[1:], indices.size]
        bounds = list(zip(offsets, ends))
        if kwargs.get("include_last_offset"):
            bounds = bounds[:-1]
    flat = indices.reshape(-1)
    out = np.zeros((len(bounds), weight.shape[1]), weight.dtype)
    for b, (lo, hi) in enumerate(bounds):
        members = [j for j in range(lo, hi) if flat[j] != kwargs.get("padding_idx")]
        rows = [weight[flat[j]] * (1 if psw is None else psw[j]) for j in members]
        if not rows:
            continue
        mode = kwargs.get("mode", "mean")
        out[b] = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0)
    return out


def _bag_samples(rng, dtype):
    weight = distinct(rng, (6, 3), dtype)  # distinct values: no ties for max
    flat, offsets = (1, 2, 4, 4, 3, 0, 5), (0, 2, 2, 5)
    return [
        SampleInput((weight,), {"indices": flat, "offsets": offsets, "mode": m}, diff=(0,))
        for m in ("sum", "mean", "max")
    ] + [
        SampleInput(
            (weight, uniform(rng, (7,), dtype)),
            {"indices": flat, "offsets": (*offsets, 7), "mode": "sum", "include_last_offset": True},
            diff=(0, 1),
            note="per_sample_weights",
        ),
        SampleInput(
            (weight,),
            {"indices": ((1, 4, 2), (4, 4, 0)), "mode": "max", "padding_idx": 4},
            diff=(0,),
            note="2-D input, padding_idx",
        ),
        SampleInput(
            (weight,),
            {"indices": flat, "offsets": (0, 3), "mode": "mean", "padding_idx": 4},
            diff=(0,),
            note="mean without padding",
        ),
    ]


def _area_fn(x, size):
    return F.interpolate(x, size=size, mode="area")


def _area_ref(x, size):
    return ref_adaptive_avg(x, size, nd=x.ndim - 2)


def _area_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (2, 3, 7), dtype), 3), note="1d shrink"),
        SampleInput((uniform(rng, (1, 2, 4, 5), dtype), (6, 2)), note="2d"),
    ]


def _with_nd(ref, nd):
    def bound(*args, **kwargs):
        return ref(*args, nd=nd, **kwargs)

    return bound


OPS = [
    OpInfo("unfold", F.unfold, _unfold_samples, dtypes=ALL_DIFF, ref=ref_unfold),
    OpInfo("fold", F.fold, _fold_samples, dtypes=ALL_DIFF, ref=ref_fold),
    *(
        OpInfo(
            f"adaptive_avg_pool{nd}d",
            getattr(F, f"adaptive_avg_pool{nd}d"),
            _adaptive_samples(nd, uniform),
            ops=("adaptive_avg_pool",),
            dtypes=ALL_DIFF,
            ref=_with_nd(ref_adaptive_avg, nd),
        )
        for nd in (1, 2, 3)
    ),
    OpInfo(
        "adaptive_avg_pool_backward",
        _avg_backward_fn,
        _avg_backward_samples,
        dtypes=ALL_DIFF,
        ref=ref_adaptive_avg_backward,
    ),
    *(
        OpInfo(
            f"{name}{nd}d",
            getattr(F, f"{name}{nd}d"),
            samples(nd),
            ops=(op,),
            dtypes=dtypes,
            ref=_with_nd(ref, nd),
        )
        for name, op, samples, dtypes, ref in (
            ("adaptive_max_pool", "adaptive_max_pool", _max_samples, FLOATING, ref_adaptive_max),
            ("max_unpool", "max_unpool", _unpool_samples, ALL_DIFF, ref_max_unpool),
        )
        for nd in (1, 2, 3)
    ),
    OpInfo(
        "max_unpool_writers",
        _writers_fn,
        _writers_samples,
        differentiable=False,
        ref=ref_writers,
    ),
    OpInfo(
        "interpolate_area",
        _area_fn,
        _area_samples,
        ops=("adaptive_avg_pool",),
        dtypes=ALL_DIFF,
        ref=_area_ref,
    ),
    *grid_entries(),
    *rearrange_entries(),
    OpInfo(
        "embedding_bag",
        _bag_fn,
        _bag_samples,
        ops=("index_select", "index_add"),
        ref=ref_embedding_bag,
        twice_differentiable=False,
    ),
]
