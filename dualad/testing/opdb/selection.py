"""Op database entries of the order-based selections and running scans (``topk``,
``kthvalue``, ``cummax``, ``cummin``, ``msort``, ``logcumsumexp``: ``dualad/ops/selection.py``
and ``scans.py``), the pairwise distances (``cdist``: ``distances.py``) and NumPy's 1-D
convolution (``convolve_full``: ``convolve.py``).

The selections' samples are shuffled grids (0.3 apart), so no finite-difference step swaps
two values; references are written with NumPy (ties in input order, as the ops take them).
"""

from __future__ import annotations

import numpy as np

import dualad
import dualad.numpy as dnp

from . import ALL_DIFF, OpInfo, SampleInput, uniform


def _grid(rng, shape, dtype):
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.3 - 0.15 * n).reshape(shape).astype(dtype)


def _topk_samples(rng, dtype):
    return [
        SampleInput((_grid(rng, (6,), dtype), 3)),
        SampleInput((_grid(rng, (3, 5), dtype), 2), {"dim": 0}, note="dim 0"),
        SampleInput((_grid(rng, (2, 3, 4), dtype), 2), {"largest": False}, note="smallest"),
        SampleInput((_grid(rng, (), dtype), 1), note="0-d"),
    ]


def _numpy_topk(x, k, dim=-1, largest=True, sorted=True):
    if np.ndim(x) == 0:
        return x.copy(), np.asarray(0)
    order = np.argsort(-x if largest else x, axis=dim, kind="stable")
    index = np.take(order, np.arange(k), axis=dim)
    return np.take_along_axis(x, index, axis=dim), index


def _kthvalue_samples(rng, dtype):
    return [
        SampleInput((_grid(rng, (5,), dtype), 2)),
        SampleInput((_grid(rng, (3, 4), dtype), 3), {"dim": 0, "keepdim": True}, note="keep"),
        SampleInput((_grid(rng, (2, 3, 4), dtype), 1), {"dim": 1}, note="dim 1"),
    ]


def _numpy_kthvalue(x, k, dim=-1, keepdim=False):
    index = np.take(np.argsort(x, axis=dim, kind="stable"), [k - 1], axis=dim)
    values = np.take_along_axis(x, index, axis=dim)
    if keepdim:
        return values, index
    return values.squeeze(dim), index.squeeze(dim)


def _median_samples(rng, dtype):
    return [
        SampleInput((_grid(rng, (5,), dtype),)),
        SampleInput((_grid(rng, (3, 4), dtype), 1), note="even"),
        SampleInput((_grid(rng, (2, 3, 5), dtype), 0, True), note="keepdim"),
    ]


def _numpy_median(x, dim=None, keepdim=False):
    if dim is None:
        return np.sort(x, axis=None)[(x.size - 1) // 2]
    return _numpy_kthvalue(x, (x.shape[dim] + 1) // 2, dim, keepdim)


def _with_nan(rng, shape, dtype):
    x = _grid(rng, shape, dtype)
    x.reshape(-1)[::3] = np.nan
    return x


def _nanmedian_samples(rng, dtype):
    return [
        SampleInput((_with_nan(rng, (7,), dtype),)),
        SampleInput((_with_nan(rng, (3, 5), dtype), 1), note="dim 1"),
        SampleInput((_with_nan(rng, (2, 3, 4), dtype), 2, True), note="keepdim"),
    ]


def _numpy_nanmedian(x, dim=None, keepdim=False):
    def lower(v):
        v = np.sort(v[~np.isnan(v)])
        return v[(v.size - 1) // 2] if v.size else np.nan

    if dim is None:
        return np.asarray(lower(x.ravel()), x.dtype)
    values = np.apply_along_axis(lower, dim, x).astype(x.dtype)
    index = np.argmax(x == np.expand_dims(values, dim), axis=dim)  # (distinct values)
    if keepdim:
        return np.expand_dims(values, dim), np.expand_dims(index, dim)
    return values, index


def _quantile_samples(nan):
    def samples(rng, dtype):
        make = _with_nan if nan else _grid
        return [
            SampleInput((make(rng, (7,), dtype), 0.3)),
            SampleInput((make(rng, (3, 5), dtype), [0.1, 0.5, 0.9]), {"dim": 1}, note="q vector"),
            SampleInput(
                (make(rng, (2, 3, 4), dtype), 0.7),
                {"dim": 2, "keepdim": True, "interpolation": "midpoint"},
                note="midpoint",
            ),
            SampleInput(
                (make(rng, (3, 4), dtype), [0.2, 0.8]),
                {"dim": -1, "interpolation": "nearest"},
                note="nearest",
            ),
        ]

    return samples


def _numpy_quantile(nan):
    def ref(x, q, dim=None, keepdim=False, interpolation="linear"):
        fn = np.nanquantile if nan else np.quantile
        with np.errstate(all="ignore"):
            return np.asarray(fn(x, q, axis=dim, keepdims=keepdim, method=interpolation), x.dtype)

    return ref


def _running_samples(rng, dtype):
    return [
        SampleInput((_grid(rng, (6,), dtype), 0)),
        SampleInput((_grid(rng, (3, 5), dtype), 1), note="dim 1"),
        SampleInput((_grid(rng, (2, 3, 4), dtype), -3), note="dim -3"),
    ]


def _numpy_running(ufunc):
    def ref(x, dim):
        values = ufunc.accumulate(x, axis=dim)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        positions = np.arange(x.shape[dim]).reshape(shape)
        index = np.maximum.accumulate(np.where(x == values, positions, 0), axis=dim)
        return values, index

    return ref


def _logcumsumexp_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (5,), dtype, -3.0, 3.0), 0)),
        SampleInput((uniform(rng, (3, 4), dtype, -3.0, 3.0), 1), note="dim 1"),
        SampleInput((uniform(rng, (2, 3, 4), dtype, -30.0, 30.0), 0), note="wide range"),
        SampleInput((uniform(rng, (), dtype), 0), note="0-d"),
    ]


def _numpy_logcumsumexp(x, dim):
    if np.ndim(x) == 0:
        return x.copy()
    return np.logaddexp.accumulate(x, axis=dim)


def _cdist_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (3, 2), dtype), uniform(rng, (4, 2), dtype)), diff=(0, 1)),
        SampleInput(
            (uniform(rng, (2, 3, 4), dtype), uniform(rng, (5, 4), dtype)), diff=(0, 1), note="bt"
        ),
        # more than 25 rows: the value from matrix products
        SampleInput(
            (uniform(rng, (27, 3), dtype), uniform(rng, (2, 3), dtype)), diff=(0, 1), note="mm"
        ),
    ]


def _numpy_cdist(p):
    def ref(x1, x2, p=p):
        difference = x1[..., :, None, :] - x2[..., None, :, :]
        return np.linalg.norm(difference, ord=p, axis=-1).astype(np.result_type(x1, x2))

    return ref


def _renorm_samples(rng, dtype):
    # slices of norm well above and well below maxnorm (1.0): never at the switch
    x = uniform(rng, (3, 4), dtype, 0.5, 1.5) * np.array([[2.0], [0.1], [-3.0]]).astype(dtype)
    return [
        SampleInput((x, 2, 0, 1.0)),
        SampleInput((x.T.copy(), 1.5, 1, 1.0), note="dim 1"),
        SampleInput((uniform(rng, (2, 3, 2), dtype, 1.0, 2.0), 1, -1, 1.5), note="3-d"),
    ]


def _numpy_renorm(x, p, dim, maxnorm):
    others = tuple(d for d in range(x.ndim) if d != dim % x.ndim)
    norm = np.sum(np.abs(x) ** p, axis=others, keepdims=True) ** (1 / p)
    return (x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1)).astype(x.dtype)


def _convolve_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (7,), dtype), uniform(rng, (3,), dtype)), diff=(0, 1)),
        SampleInput(
            (uniform(rng, (2,), dtype), uniform(rng, (5,), dtype)),
            {"mode": "same"},
            diff=(0, 1),
            note="same",
        ),
        SampleInput(
            (uniform(rng, (6,), dtype), uniform(rng, (4,), dtype)),
            {"mode": "valid"},
            diff=(0, 1),
            note="valid",
        ),
        SampleInput(
            (uniform(rng, (1,), dtype), uniform(rng, (1,), dtype)), diff=(0, 1), note="length 1"
        ),
    ]


OPS = [
    OpInfo("topk", dualad.topk, _topk_samples, twice_differentiable=True, ref=_numpy_topk),
    OpInfo("kthvalue", dualad.kthvalue, _kthvalue_samples, ref=_numpy_kthvalue),
    OpInfo("median", dualad.median, _median_samples, ops=("lower_median",), ref=_numpy_median),
    OpInfo(
        "nanmedian",
        dualad.nanmedian,
        _nanmedian_samples,
        ops=("lower_nanmedian",),
        ref=_numpy_nanmedian,
    ),
    OpInfo(
        "quantile",
        dualad.quantile,
        _quantile_samples(False),
        ops=("sort", "gather"),
        ref=_numpy_quantile(False),
    ),
    OpInfo(
        "nanquantile",
        dualad.nanquantile,
        _quantile_samples(True),
        ops=("sort", "gather"),
        ref=_numpy_quantile(True),
    ),
    OpInfo("cummax", dualad.cummax, _running_samples, ref=_numpy_running(np.maximum)),
    OpInfo("cummin", dualad.cummin, _running_samples, ref=_numpy_running(np.minimum)),
    OpInfo(
        "msort",
        dualad.msort,
        lambda rng, dtype: [SampleInput((_grid(rng, (4, 3), dtype),))],
        ops=("topk",),
        ref=lambda x: np.sort(x, axis=0),
    ),
    OpInfo("logcumsumexp", dualad.logcumsumexp, _logcumsumexp_samples, ref=_numpy_logcumsumexp),
    OpInfo("cdist", dualad.cdist, _cdist_samples, ops=("cdist_euclidean",), ref=_numpy_cdist(2)),
    OpInfo(
        "cdist_p",
        lambda x1, x2: dualad.cdist(x1, x2, p=1.5),
        _cdist_samples,
        ops=("norm", "sub"),
        ref=_numpy_cdist(1.5),
    ),
    OpInfo("renorm", dualad.renorm, _renorm_samples, ops=("norm", "mul"), ref=_numpy_renorm),
    OpInfo(
        "convolve",
        dnp.convolve,
        _convolve_samples,
        ops=("convolve_full",),
        dtypes=ALL_DIFF,
        ref=np.convolve,
    ),
    OpInfo(
        "correlate",
        dnp.correlate,
        _convolve_samples,
        ops=("convolve_full",),
        dtypes=ALL_DIFF,
        ref=np.correlate,
    ),
]
