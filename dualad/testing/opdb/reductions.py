"""Op database entries for reductions and scans.

Samples cover full reductions, single and multiple (negative) dims with and without ``keepdim``.
Inputs are continuous random values, so the maxima/minima are unique (ties are tested in
``tests/ops/test_reductions.py``); products and scans also get samples with exact zeros, where
their gradients must stay exact.
"""

from __future__ import annotations

import numpy as np

import dualad

from . import OpInfo, SampleInput, away_from, entry, uniform

INF = float("inf")

# (shape, kwargs) of the dim-reduction samples
REDUCE_CASES = [
    ((), {}),
    ((5,), {}),
    ((3, 4), {}),
    ((3, 4), {"dim": 1}),
    ((3, 4), {"dim": -2, "keepdim": True}),
    ((2, 3, 4), {"dim": (0, 2)}),
    ((2, 3, 4), {"dim": (-1, 1), "keepdim": True}),
]
# (shape, dim) of the scan samples
SCAN_CASES = [((), 0), ((5,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1)]


def _note(kwargs: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in kwargs.items())


def _values(rng, shape, dtype, low, high, signed):
    """Uniform magnitudes in [low, high), with random signs when ``signed``."""
    x = uniform(rng, shape, dtype, low, high)
    if signed:
        x = (x * rng.choice([-1.0, 1.0], size=shape)).astype(dtype)
    return np.asarray(x)


def reduce_samples(cases=REDUCE_CASES, low=-2.0, high=2.0, signed=False, extra=None, skip_0d=False):
    """One sample per (shape, kwargs) case; ``extra`` adds op-specific kwargs to every case."""

    def samples(rng, dtype):
        out = []
        for shape, kwargs in cases:
            if skip_0d and shape == ():
                continue
            for more in extra or ({},):
                x = _values(rng, shape, dtype, low, high, signed)
                call = {**kwargs, **more}
                out.append(SampleInput((x,), call, note=_note(call)))
        return out

    return samples


def _with_zeros(x: np.ndarray, rng, count: int) -> np.ndarray:
    x = x.copy()
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, size=count, replace=False)] = 0
    return x


def product_samples(zero_cases):
    """Reduction samples of moderate magnitude plus samples holding one or two exact zeros."""
    base = reduce_samples(low=0.5, high=1.5, signed=True)

    def samples(rng, dtype):
        out = base(rng, dtype)
        for shape, kwargs, zeros in zero_cases:
            x = _with_zeros(_values(rng, shape, dtype, 0.5, 1.5, True), rng, zeros)
            out.append(SampleInput((x,), dict(kwargs), note=f"{zeros} zeros " + _note(kwargs)))
        return out

    return samples


PROD_ZERO_CASES = [
    ((5,), {}, 1),
    ((5,), {}, 2),
    ((3, 4), {"dim": 1}, 2),
    ((2, 3, 4), {"dim": (0, 2)}, 3),
]


def scan_samples(low=-2.0, high=2.0, signed=False, zeros=()):
    def samples(rng, dtype):
        out = []
        for shape, dim in SCAN_CASES:
            x = _values(rng, shape, dtype, low, high, signed)
            out.append(SampleInput((x,), {"dim": dim}, note=f"dim={dim}"))
        for shape, dim, count in zeros:
            x = _with_zeros(_values(rng, shape, dtype, low, high, signed), rng, count)
            out.append(SampleInput((x,), {"dim": dim}, note=f"{count} zeros dim={dim}"))
        return out

    return samples


CUMPROD_ZERO_CASES = [((6,), 0, 1), ((6,), -1, 2), ((3, 5), 1, 3), ((4, 3), 0, 2)]


def with_nans(rng, dtype):
    out = []
    for shape, kwargs in REDUCE_CASES[1:]:
        x = uniform(rng, shape, dtype)
        x.reshape(-1)[rng.choice(x.size, size=2, replace=False)] = np.nan
        out.append(SampleInput((x,), dict(kwargs), note="nan " + _note(kwargs)))
    return out


def with_zero_entries(rng, dtype):
    out = []
    for shape, kwargs in REDUCE_CASES:
        x = uniform(rng, shape, dtype)
        if x.size > 1:
            x = _with_zeros(x, rng, x.size // 3)
        out.append(SampleInput((x,), dict(kwargs), note=_note(kwargs)))
    x = np.zeros((3, 4), dtype)
    x[1, 2] = 1
    out.append(SampleInput((x,), {"dim": 0}, note="mostly zeros"))
    return out


def select_samples(rng, dtype):
    """max/min in their three call forms: full, one dim (values, indices), a tuple of dims."""
    out = [SampleInput((uniform(rng, shape, dtype),)) for shape in [(), (5,), (3, 4)]]
    for shape, dim, keepdim in [
        ((3, 4), 1, False),
        ((3, 4), -2, True),
        ((2, 3, 4), 0, False),
        ((), 0, False),
        ((5,), -1, True),
    ]:
        out.append(SampleInput((uniform(rng, shape, dtype), dim, keepdim), note=f"dim={dim}"))
    out.append(SampleInput((uniform(rng, (2, 3, 4), dtype),), {"dim": (0, 2)}, note="dims"))
    return out


def sort_samples(rng, dtype):
    """sort along a dim; the values are a shuffled grid (0.3 apart), so no two are close
    enough for a finite-difference step to swap them."""
    out = []
    for shape, args in [
        ((), ()),
        ((5,), ()),
        ((3, 4), (0,)),
        ((3, 4), (1, True)),
        ((2, 3, 4), (-2,)),
    ]:
        n = int(np.prod(shape))
        x = (rng.permutation(n) * 0.3 - 0.15 * n).reshape(shape).astype(dtype)
        out.append(SampleInput((x, *args), note=f"args={args}"))
    return out


def arg_samples(rng, dtype):
    out = []
    for shape, kwargs in [
        ((), {}),
        ((5,), {}),
        ((3, 4), {}),
        ((3, 4), {"keepdim": True}),
        ((3, 4), {"dim": 1}),
        ((2, 3, 4), {"dim": -2, "keepdim": True}),
    ]:
        out.append(SampleInput((uniform(rng, shape, dtype),), dict(kwargs), note=_note(kwargs)))
    return out


def norm_samples(rng, dtype):
    cases = [
        ((5,), {}),
        ((3, 4), {"dim": 1}),
        ((2, 3, 4), {"p": "fro", "dim": (0, 2)}),
        ((3, 4), {"p": 2, "dim": -1, "keepdim": True}),
        ((3, 4), {"p": 1}),
        ((3, 4), {"p": 1, "dim": 0}),
        ((3, 4), {"p": INF, "dim": 1}),
        ((5,), {"p": -INF}),
        ((3, 4), {"p": 3, "dim": 0}),
        ((5,), {"p": 1.5}),
        ((3, 4), {"p": 0.5, "dim": 1}),
        ((3, 4), {"p": -1.5}),
        ((3, 4), {"p": 0, "dim": 1}),
        ((), {}),
    ]
    out = []
    for shape, kwargs in cases:
        x = away_from(rng, shape, dtype, (0.0,), 0.3)
        out.append(SampleInput((x,), dict(kwargs), note=_note(kwargs)))
    return out


# ---------------------------------------------------------------------------------------------
# NumPy references (torch-style keywords mapped onto NumPy's)


def _axis(x, dim):
    if dim is None or np.ndim(x) == 0:
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def numpy_reduction(fn):
    def ref(x, dim=None, keepdim=False):
        return np.asarray(fn(x, axis=_axis(x, dim), keepdims=keepdim))

    return ref


def _correction(unbiased=None, correction=None):
    if unbiased is not None:
        return 1 if unbiased else 0
    return 1 if correction is None else correction


def numpy_moment(fn):
    def ref(x, dim=None, keepdim=False, *, unbiased=None, correction=None):
        ddof = _correction(unbiased, correction)
        return np.asarray(fn(x, axis=_axis(x, dim), ddof=ddof, keepdims=keepdim))

    return ref


def numpy_moment_mean(fn):
    def ref(x, dim=None, keepdim=False, *, unbiased=None, correction=None):
        moment = numpy_moment(fn)(x, dim, keepdim, unbiased=unbiased, correction=correction)
        return moment, np.asarray(np.mean(x, axis=_axis(x, dim), keepdims=keepdim))

    return ref


def numpy_select(largest):
    pick, arg = (np.max, np.argmax) if largest else (np.min, np.argmin)

    def ref(x, dim=None, keepdim=False):
        if dim is None or isinstance(dim, tuple):
            return np.asarray(pick(x, axis=_axis(x, dim), keepdims=keepdim))
        if np.ndim(x) == 0:
            return x.copy(), np.asarray(0)
        return pick(x, axis=dim, keepdims=keepdim), arg(x, axis=dim, keepdims=keepdim)

    return ref


def numpy_sort(x, dim=-1, descending=False):
    if np.ndim(x) == 0:
        return x.copy(), np.asarray(0)
    index = np.argsort(x, axis=dim, kind="stable")
    if descending:
        index = np.flip(index, axis=dim)
    return np.take_along_axis(x, index, axis=dim), index


def numpy_arg(fn):
    def ref(x, dim=None, keepdim=False):
        return np.asarray(fn(x, axis=_axis(x, dim), keepdims=keepdim))

    return ref


def numpy_logsumexp(x, dim=None, keepdim=False):
    axis = _axis(x, dim)
    shift = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdim else np.squeeze(out, axis=axis)


def numpy_norm(x, p="fro", dim=None, keepdim=False):
    # (the cases of ops/norms.py's _norm_impl, written again on purpose: a reference must
    # not share the code it checks)
    p = 2.0 if p == "fro" else float(p)
    axis = _axis(x, dim)
    a = np.abs(x)
    if p == INF:
        return np.max(a, axis=axis, keepdims=keepdim)
    if p == -INF:
        return np.min(a, axis=axis, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(a.dtype)
    return np.asarray(np.sum(a**p, axis=axis, keepdims=keepdim) ** (1 / p)).astype(a.dtype)


def numpy_scan(fn):
    def ref(x, dim):
        return x.copy() if np.ndim(x) == 0 else fn(x, axis=dim)

    return ref


def numpy_count_nonzero(x, dim=None, keepdim=False):
    return np.asarray(np.count_nonzero(x, axis=_axis(x, dim), keepdims=keepdim)).astype(np.int64)


def _max(x, *args, **kwargs):
    return dualad.max(x, *args, **kwargs)


def _min(x, *args, **kwargs):
    return dualad.min(x, *args, **kwargs)


OPS = [
    entry("sum", reduce_samples(), numpy_reduction(np.sum)),
    entry("mean", reduce_samples(), numpy_reduction(np.mean)),
    entry("prod", product_samples(PROD_ZERO_CASES), numpy_reduction(np.prod), "prod", "shift_fill"),
    entry(
        "var",
        reduce_samples(skip_0d=True, extra=({}, {"correction": 0}, {"unbiased": True})),
        numpy_moment(np.var),
    ),
    entry(
        "std",
        reduce_samples(skip_0d=True, extra=({}, {"unbiased": False})),
        numpy_moment(np.std),
    ),
    *(
        entry(
            f"{moment}_mean",
            reduce_samples(skip_0d=True),
            numpy_moment_mean(getattr(np, moment)),
            *(moment, "mean"),
        )
        for moment in ("var", "std")
    ),
    *(
        OpInfo(
            name,
            getattr(dualad, name),
            reduce_samples(),
            twice_differentiable=False,
            ref=numpy_reduction(np_fn),
        )
        for name, np_fn in (("amax", np.max), ("amin", np.min))
    ),
    *(
        OpInfo(
            name,
            fn,
            select_samples,
            ops=(f"{name}_all", f"{name}_dim", "index_mask", f"a{name}"),
            twice_differentiable=False,
            ref=numpy_select(largest),
        )
        for name, fn, largest in (("max", _max, True), ("min", _min, False))
    ),
    OpInfo("sort", dualad.sort, sort_samples, ref=numpy_sort),
    OpInfo("argmax", dualad.argmax, arg_samples, differentiable=False, ref=numpy_arg(np.argmax)),
    OpInfo("argmin", dualad.argmin, arg_samples, differentiable=False, ref=numpy_arg(np.argmin)),
    OpInfo("logsumexp", dualad.logsumexp, reduce_samples(low=-3.0, high=3.0), ref=numpy_logsumexp),
    entry("norm", norm_samples, numpy_norm),
    entry("cumsum", scan_samples(), numpy_scan(np.cumsum)),
    entry(
        "cumprod",
        scan_samples(0.5, 1.5, signed=True, zeros=CUMPROD_ZERO_CASES),
        numpy_scan(np.cumprod),
    ),
    OpInfo("all", dualad.all, with_zero_entries, differentiable=False, ref=numpy_reduction(np.all)),
    OpInfo("any", dualad.any, with_zero_entries, differentiable=False, ref=numpy_reduction(np.any)),
    OpInfo(
        "count_nonzero",
        dualad.count_nonzero,
        with_zero_entries,
        differentiable=False,
        ref=numpy_count_nonzero,
    ),
    entry("nansum", with_nans, numpy_reduction(np.nansum), "sum", "where"),
    entry("nanmean", with_nans, numpy_reduction(np.nanmean), "sum", "where"),
]
