"""Op database entries of ``grid_sample`` (and its transpose) and ``affine_grid``, with NumPy
references written here one output point at a time from PyTorch's definitions.

Samples put every source coordinate a fraction 0.2 to 0.8 (bilinear) or 0.1 to 0.35 / 0.65 to
0.9 (nearest) away from the pixel grid, so central differences never cross a kink of the
weights, a jump of the nearest neighbour, a clamped border or a reflection point; some lie
outside ``[-1, 1]`` (the padding).
"""

from __future__ import annotations

import math

import numpy as np

import dualad.nn.functional as F
from dualad.ops.grid_sampling import grid_sample_transpose

from . import FLOATING, OpInfo, SampleInput, uniform

# ---------------------------------------------------------------------------------------------
# references


def _source(g, size, padding_mode, align_corners):
    """The pixel coordinate of normalised ``g`` (a float), padding applied."""
    ix = (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2
    if padding_mode == "reflection":
        low, high = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        span = high - low
        if span <= 0:
            return 0.0
        d = abs(ix - low)
        flips, extra = divmod(d, span)
        ix = low + extra if flips % 2 == 0 else high - extra
    if padding_mode in ("border", "reflection"):
        ix = min(max(ix, 0.0), size - 1.0)
    return ix


def _read(x, n, c, iy, ix):
    h, w = x.shape[2:]
    return x[n, c, iy, ix] if 0 <= iy < h and 0 <= ix < w else 0.0


def ref_grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    n_, c_, h, w = x.shape
    out = np.zeros((n_, c_, *grid.shape[1:3]), x.dtype)
    for n in range(n_):
        for i, j in np.ndindex(*grid.shape[1:3]):
            ix = _source(grid[n, i, j, 0], w, padding_mode, bool(align_corners))
            iy = _source(grid[n, i, j, 1], h, padding_mode, bool(align_corners))
            for c in range(c_):
                if mode == "nearest":
                    out[n, c, i, j] = _read(x, n, c, int(np.rint(iy)), int(np.rint(ix)))
                    continue
                x0, y0 = math.floor(ix), math.floor(iy)
                fx, fy = ix - x0, iy - y0
                out[n, c, i, j] = (
                    _read(x, n, c, y0, x0) * (1 - fx) * (1 - fy)
                    + _read(x, n, c, y0, x0 + 1) * fx * (1 - fy)
                    + _read(x, n, c, y0 + 1, x0) * (1 - fx) * fy
                    + _read(x, n, c, y0 + 1, x0 + 1) * fx * fy
                )
    return out


def ref_grid_sample_transpose(ct, grid, *, size, order=(0, 0), **params):
    """The transpose of ``ref_grid_sample`` (order 0), column by column of its matrix."""
    n_, c_ = ct.shape[:2]
    out = np.zeros((n_, c_, *size), ct.dtype)
    for k in range(math.prod(size)):
        e = np.zeros((n_, c_, *size))
        e.reshape(n_, c_, -1)[:, :, k] = 1.0
        sampled = ref_grid_sample(e, grid, **params)
        out.reshape(n_, c_, -1)[:, :, k] = (sampled * ct).sum(axis=(2, 3))
    return out


def ref_affine_grid(theta, size, align_corners=None):
    nd = len(size) - 2
    spatial = size[2:]
    out = np.zeros((size[0], *spatial, nd), theta.dtype)
    for pos in np.ndindex(*spatial):
        coords = []
        for p, n in zip(pos, spatial):  # the normalised centre of pixel p of n
            if n == 1:
                coords.append(0.0)
            elif align_corners:
                coords.append(-1 + 2 * p / (n - 1))
            else:
                coords.append((2 * p + 1) / n - 1)
        point = np.array([*coords[::-1], 1.0])
        out[(slice(None), *pos)] = theta @ point
    return out


# ---------------------------------------------------------------------------------------------
# samples


def _normalised(ix, size, align_corners):
    return ix / (size - 1) * 2 - 1 if align_corners else (2 * ix + 1) / size - 1


def _grid(rng, shape, size, mode, align_corners, dtype):
    """``(N, Ho, Wo, 2)`` whose pixel coordinates keep clear of the kinks (see the docstring)."""
    h, w = size
    out = np.empty(shape)
    for axis, n in ((0, w), (1, h)):
        whole = rng.integers(-2, n + 1, shape[:3])
        if mode == "nearest":
            frac = rng.uniform(0.1, 0.35, shape[:3]) + 0.55 * rng.integers(0, 2, shape[:3])
        else:
            frac = rng.uniform(0.2, 0.8, shape[:3])
        out[..., axis] = _normalised(whole + frac, n, align_corners)
    return out.astype(dtype)


# (input shape, grid's (Ho, Wo), mode, padding_mode, align_corners)
GRID_CASES = [
    ((2, 3, 4, 5), (3, 2), "bilinear", "zeros", False),
    ((1, 2, 5, 4), (2, 3), "bilinear", "border", True),
    ((1, 2, 4, 4), (3, 3), "bilinear", "reflection", False),
    ((2, 1, 3, 5), (2, 2), "bilinear", "reflection", True),
    ((1, 2, 4, 5), (3, 2), "nearest", "zeros", True),
    ((2, 2, 3, 4), (2, 3), "nearest", "reflection", False),
]


def _params(mode, padding_mode, align_corners):
    return {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}


def _grid_samples(rng, dtype):
    out = []
    for shape, (ho, wo), *options in GRID_CASES:
        grid = _grid(rng, (shape[0], ho, wo, 2), shape[2:], options[0], options[2], dtype)
        out.append(
            SampleInput(
                (uniform(rng, shape, dtype), grid),
                _params(*options),
                diff=(0, 1),
                note=" ".join(map(str, options)),
            )
        )
    return out


def _transpose_fn(ct, grid, *, size, **params):
    return grid_sample_transpose(ct, grid, params, size)


def _transpose_samples(rng, dtype):
    out = []
    for shape, (ho, wo), *options in GRID_CASES[::2]:
        grid = _grid(rng, (shape[0], ho, wo, 2), shape[2:], options[0], options[2], dtype)
        ct = uniform(rng, (*shape[:2], ho, wo), dtype)
        kwargs = dict(_params(*options), size=shape[2:])
        out.append(SampleInput((ct, grid), kwargs, diff=(0, 1), note=" ".join(map(str, options))))
    return out


def _affine_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (2, 2, 3), dtype), (2, 3, 4, 5)), {"align_corners": False}),
        SampleInput((uniform(rng, (1, 2, 3), dtype), (1, 1, 1, 3)), {"align_corners": True}),
        SampleInput((uniform(rng, (2, 3, 4), dtype), (2, 1, 2, 3, 2)), {"align_corners": True}),
    ]


def grid_entries() -> list[OpInfo]:
    """The entries of grid_sample, its transpose and affine_grid."""
    return [
        OpInfo(
            "grid_sample",
            F.grid_sample,
            _grid_samples,
            dtypes=FLOATING,
            ref=ref_grid_sample,
            twice_differentiable=True,
        ),
        OpInfo(
            "grid_sample_transpose",
            _transpose_fn,
            _transpose_samples,
            dtypes=FLOATING,
            ref=ref_grid_sample_transpose,
        ),
        OpInfo(
            "affine_grid",
            F.affine_grid,
            _affine_samples,
            ops=("matmul",),
            dtypes=FLOATING,
            ref=ref_affine_grid,
        ),
    ]
