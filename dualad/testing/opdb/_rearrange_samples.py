"""Op database entries of the compositions pixel_shuffle, pixel_unshuffle, channel_shuffle,
lp_pool1d/2d/3d and local_response_norm, with NumPy references written here element by
element from PyTorch's definitions. lp_pool samples are positive (no sign changes in the
windows' sums, a real ``** (1/p)``).
"""

from __future__ import annotations

import math

import numpy as np

import dualad.nn.functional as F

from . import ALL_DIFF, FLOATING, OpInfo, SampleInput, uniform


def ref_pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    out = np.zeros((*lead, c // (r * r), h * r, w * r), x.dtype)
    for ch, i, j in np.ndindex(c // (r * r), h * r, w * r):
        out[..., ch, i, j] = x[..., ch * r * r + (i % r) * r + j % r, i // r, j // r]
    return out


def ref_pixel_unshuffle(x, r):
    *lead, c, h, w = x.shape
    out = np.zeros((*lead, c * r * r, h // r, w // r), x.dtype)
    for ch, i, j in np.ndindex(c * r * r, h // r, w // r):
        base, offset = divmod(ch, r * r)
        out[..., ch, i, j] = x[..., base, i * r + offset // r, j * r + offset % r]
    return out


def ref_channel_shuffle(x, groups):
    c = x.shape[1]
    out = np.empty_like(x)
    for g in range(groups):
        for i in range(c // groups):
            out[:, i * groups + g] = x[:, g * (c // groups) + i]
    return out


def ref_local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0):
    c = x.shape[1]
    out = np.empty_like(x)
    for ch in range(c):
        lo, hi = ch - size // 2, ch + (size - 1) // 2
        total = sum(x[:, j] ** 2 for j in range(max(lo, 0), min(hi, c - 1) + 1))
        out[:, ch] = x[:, ch] / (k + alpha * total / size) ** beta
    return out


def _ref_lp_pool(nd):
    def ref(x, p, kernel_size, stride=None, ceil_mode=False):
        kernel = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
        stride = kernel if stride is None else stride
        stride = (stride,) * nd if isinstance(stride, int) else tuple(stride)
        sizes = x.shape[x.ndim - nd :]
        outs = []
        for s, k, st in zip(sizes, kernel, stride):
            o = (s - k + (st - 1 if ceil_mode else 0)) // st + 1
            outs.append(o - 1 if ceil_mode and (o - 1) * st >= s else o)
        out = np.zeros(x.shape[: x.ndim - nd] + tuple(outs), x.dtype)
        for pos in np.ndindex(*outs):
            box = tuple(
                slice(i * st, min(i * st + k, s)) for i, st, k, s in zip(pos, stride, kernel, sizes)
            )
            # PyTorch averages over the window clipped to the input, then multiplies by the
            # full kernel size
            window = x[(Ellipsis, *box)] ** p
            count = math.prod(b.stop - b.start for b in box)
            mean = window.sum(axis=tuple(range(-nd, 0))) / count
            out[(Ellipsis, *pos)] = (mean * math.prod(kernel)) ** (1 / p)
        return out

    return ref


def _samples(cases, low=-2.0, high=2.0):
    def samples(rng, dtype):
        return [
            SampleInput((uniform(rng, shape, dtype, low, high), *args), dict(kwargs))
            for shape, args, kwargs in cases
        ]

    return samples


_RESHAPES = ("reshape", "permute")


def rearrange_entries() -> list[OpInfo]:
    """The entries of the shuffles, lp pooling and local response normalisation."""
    lp_cases = {
        1: [((2, 3, 7), (2, 2), {}), ((3, 8), (3, 3), {"stride": 2, "ceil_mode": True})],
        2: [((1, 2, 5, 4), (2, (2, 3)), {"stride": 1}), ((2, 4, 4), (1.5, 2), {})],
        3: [((1, 2, 3, 4, 4), (2, 2), {})],
    }
    return [
        OpInfo(
            "pixel_shuffle",
            F.pixel_shuffle,
            _samples(
                [((2, 8, 2, 3), (2,), {}), ((9, 1, 2), (3,), {}), ((2, 1, 4, 2, 2), (2,), {})]
            ),
            ops=_RESHAPES,
            dtypes=ALL_DIFF,
            ref=ref_pixel_shuffle,
        ),
        OpInfo(
            "pixel_unshuffle",
            F.pixel_unshuffle,
            _samples([((2, 3, 4, 6), (2,), {}), ((1, 6, 3), (3,), {})]),
            ops=_RESHAPES,
            dtypes=ALL_DIFF,
            ref=ref_pixel_unshuffle,
        ),
        OpInfo(
            "channel_shuffle",
            F.channel_shuffle,
            _samples([((2, 6, 3), (3,), {}), ((1, 4, 2, 2), (2,), {})]),
            ops=_RESHAPES,
            dtypes=ALL_DIFF,
            ref=ref_channel_shuffle,
        ),
        OpInfo(
            "local_response_norm",
            F.local_response_norm,
            _samples(
                [
                    ((2, 5, 3), (3,), {}),
                    ((1, 4, 2, 3), (2,), {"alpha": 0.5, "beta": 0.6, "k": 2.0}),
                    ((2, 3, 2, 1, 2), (4,), {"alpha": 0.2}),
                ]
            ),
            ops=("avg_pool", "pow_scalar_exponent"),
            dtypes=FLOATING,
            ref=ref_local_response_norm,
        ),
        *(
            OpInfo(
                f"lp_pool{nd}d",
                getattr(F, f"lp_pool{nd}d"),
                _samples(lp_cases[nd], 0.2, 2.0),
                ops=("avg_pool", "pow_scalar_exponent"),
                dtypes=FLOATING,
                ref=_ref_lp_pool(nd),
            )
            for nd in (1, 2, 3)
        ),
    ]
