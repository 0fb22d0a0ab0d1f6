"""Op database entries of the non-differentiable functions of ``dualad.numpy`` (sorting
indices, searching, sets, counting, ``isclose``): their ops are in ``dualad/ops/searching.py``,
``sets.py``, ``counting.py`` and ``closeness.py``.

Each entry calls the ``dualad.numpy`` function and compares with NumPy's of the same name.
Samples hold repeated values (ties for the sorts, duplicates for the sets: values on a grid of
halves), so that the interesting cases are always exercised.
"""

from __future__ import annotations

import numpy as np

import dualad.numpy as dnp

from . import OpInfo, SampleInput, uniform


def _grid(rng, shape, dtype, low=-2.0, high=2.0):
    """Random values on a grid of halves in [low, high): many ties and duplicates."""
    return (np.round(uniform(rng, shape, "float64", low, high) * 2) / 2).astype(dtype)


def _argsort_samples(rng, dtype):
    return [
        SampleInput((_grid(rng, (5,), dtype),)),
        SampleInput((_grid(rng, (3, 4), dtype),), {"axis": 0, "kind": "stable"}, note="axis 0"),
        SampleInput((_grid(rng, (3, 4), dtype),), {"axis": None}, note="flattened"),
        SampleInput((_grid(rng, (2, 3, 4), dtype),), {"axis": -2, "stable": True}, note="stable"),
    ]


def _argpartition_samples(rng, dtype):
    # distinct values: with ties the order inside a partition is NumPy's choice
    def distinct(shape):
        return rng.permutation(int(np.prod(shape))).reshape(shape).astype(dtype)

    return [
        SampleInput((distinct((6,)), 2)),
        SampleInput((distinct((3, 5)), (1, 3)), {"axis": 1}, note="kth tuple"),
        SampleInput((distinct((3, 5)), -1), {"axis": None}, note="flattened"),
    ]


def _lexsort_samples(rng, dtype):
    return [
        SampleInput(([_grid(rng, (6,), dtype), _grid(rng, (6,), dtype)],)),
        SampleInput(
            ([_grid(rng, (3, 4), dtype), _grid(rng, (3, 4), dtype)],), {"axis": 0}, note="axis"
        ),
    ]


def _searchsorted_samples(rng, dtype):
    table = np.sort(_grid(rng, (7,), dtype))
    return [
        SampleInput((table, uniform(rng, (4,), dtype)), diff=(0, 1)),
        SampleInput((table, _grid(rng, (2, 3), dtype)), {"side": "right"}, (0, 1), "right"),
        SampleInput((table, _grid(rng, (), dtype)), {"side": "left"}, (0, 1), "0-d v"),
    ]


def _digitize_samples(rng, dtype):
    bins = np.sort(uniform(rng, (5,), dtype))
    return [
        SampleInput((_grid(rng, (2, 4), dtype), bins), diff=(0, 1)),
        SampleInput((_grid(rng, (6,), dtype), bins[::-1].copy()), {"right": True}, (0, 1), "down"),
    ]


def _nanarg_samples(rng, dtype):
    # a NaN in every row, never a row of NaNs (NumPy raises there)
    x = uniform(rng, (3, 4), dtype)
    x[np.arange(3), rng.integers(0, 4, 3)] = np.nan
    return [
        SampleInput((x,)),
        SampleInput((x,), {"axis": 1, "keepdims": True}, note="axis 1"),
        SampleInput((x.T.copy(),), {"axis": 0}, note="axis 0"),
    ]


def _unravel_samples(rng, dtype):
    return [
        SampleInput((rng.integers(0, 12, (2, 3)), (3, 4)), diff=()),
        SampleInput((rng.integers(0, 24, (5,)), (2, 3, 4)), {"order": "F"}, (), "F"),
    ]


def _ravel_samples(rng, dtype):
    return [
        # (diff=(0,): the index arrays in the tuple become tensors, int ones untracked)
        SampleInput(((rng.integers(0, 3, (2, 3)), rng.integers(0, 4, (3,))), (3, 4))),
        SampleInput(
            ((rng.integers(-4, 8, (5,)), rng.integers(0, 4, (5,))), (3, 4)),
            {"mode": ("wrap", "clip")},
            note="modes",
        ),
    ]


def _packbits_samples(rng, dtype):
    return [
        SampleInput((rng.integers(0, 2, (3, 10)).astype(bool),), diff=()),
        SampleInput((rng.integers(0, 3, (3, 10)),), {"axis": -1, "bitorder": "little"}, ()),
        SampleInput((rng.integers(0, 2, (10, 3)),), {"axis": 0}, (), "axis 0"),
    ]


def _unpackbits_samples(rng, dtype):
    def uint8(shape):
        return rng.integers(0, 256, shape).astype(np.uint8)

    return [
        SampleInput((uint8((2, 3)),), diff=()),
        SampleInput((uint8((2, 3)),), {"axis": 1, "count": 20}, (), "count"),
        SampleInput((uint8((4, 2)),), {"axis": 0, "count": -3, "bitorder": "little"}, ()),
    ]


def _isclose_samples(rng, dtype):
    a = uniform(rng, (2, 3), dtype)
    b = a + np.asarray(rng.choice([0.0, 1e-9, 1e-3, np.nan], (2, 3)), dtype=dtype)
    return [
        SampleInput((a, b), diff=(0, 1)),
        SampleInput((a, b[0]), {"rtol": 1e-2, "equal_nan": True}, (0, 1), "broadcast"),
        SampleInput((a, 0.5), {"atol": 2.0}, note="scalar"),
    ]


def _unique_samples(rng, dtype):
    return [
        SampleInput((_grid(rng, (6,), dtype),)),
        SampleInput(
            (_grid(rng, (2, 3), dtype), True, True, True), note="every output (inverse 2-d)"
        ),
        SampleInput(
            (np.repeat(_grid(rng, (1, 3), dtype), 2, 0),),
            {"axis": 0, "return_inverse": True},
            note="rows",
        ),
        SampleInput((np.array([1.0, np.nan, np.nan], dtype),), {"equal_nan": False}, note="nan"),
    ]


def _unique_values_samples(rng, dtype):
    return [SampleInput((_grid(rng, (7,), dtype),))]


def _isin_samples(rng, dtype):
    return [
        SampleInput((_grid(rng, (2, 3), dtype), _grid(rng, (4,), dtype)), diff=(0, 1)),
        SampleInput(
            (_grid(rng, (5,), dtype), _grid(rng, (2, 2), dtype)), {"invert": True}, (0, 1), "not"
        ),
    ]


def _pair_samples(rng, dtype):
    return [
        SampleInput((_grid(rng, (6,), dtype), _grid(rng, (5,), dtype)), diff=(0, 1)),
        SampleInput((_grid(rng, (2, 3), dtype), _grid(rng, (4,), dtype)), diff=(0, 1), note="2-d"),
    ]


def _intersect1d_samples(rng, dtype):
    return [
        *_pair_samples(rng, dtype),
        SampleInput(
            (_grid(rng, (6,), dtype), _grid(rng, (5,), dtype)), {"return_indices": True}, (0, 1)
        ),
    ]


def _bincount_samples(rng, dtype):
    return [
        SampleInput((rng.integers(0, 5, (8,)),), diff=()),
        SampleInput((rng.integers(0, 3, (4,)),), {"minlength": 6}, diff=(), note="minlength"),
    ]


def _histogram_samples(rng, dtype):
    edges = np.sort(uniform(rng, (4,), dtype))
    return [
        SampleInput((uniform(rng, (12,), dtype),), {"bins": 4, "range": (-2.0, 2.0)}),
        SampleInput((uniform(rng, (3, 4), dtype), edges), note="edges"),
        SampleInput((uniform(rng, (9,), dtype), 3), {"range": (-1, 1), "density": True}),
    ]


def _nondiff(name, samples, ops=None, fn=None, ref=None) -> OpInfo:
    """An entry for ``dualad.numpy.<name>`` against ``numpy.<name>``."""
    return OpInfo(
        name,
        fn or getattr(dnp, name),
        samples,
        ops=ops or (name,),
        differentiable=False,
        ref=ref or getattr(np, name),
    )


def _histogramdd_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (10, 2), dtype),), {"bins": 3, "range": [(-2, 2), (-1, 1)]}),
        SampleInput((uniform(rng, (8, 3), dtype), [2, np.array([-1.0, 0.0, 1.0]), 4])),
        # (no density here: with edges from the data it is differentiable, tested elsewhere)
        SampleInput((uniform(rng, (9, 2), dtype), (2, 3)), note="per dim"),
    ]


def _histogramdd_counts(sample, bins=10, range=None, density=None):
    return dnp.histogramdd(sample, bins, range, density)[0]


def _histogram_counts(a, bins=10, range=None, density=None):
    return dnp.histogram(a, bins, range, density)[0]


OPS = [
    _nondiff("argsort", _argsort_samples),
    _nondiff("argpartition", _argpartition_samples),
    _nondiff("lexsort", _lexsort_samples),
    _nondiff("searchsorted", _searchsorted_samples),
    _nondiff("digitize", _digitize_samples),
    _nondiff("nanargmax", _nanarg_samples),
    _nondiff("nanargmin", _nanarg_samples),
    _nondiff("unravel_index", _unravel_samples),
    _nondiff("ravel_multi_index", _ravel_samples),
    _nondiff("packbits", _packbits_samples),
    _nondiff("unpackbits", _unpackbits_samples),
    _nondiff("isclose", _isclose_samples),
    _nondiff("unique", _unique_samples, ("unique", "unique_values")),
    _nondiff("unique_values", _unique_values_samples, ref=lambda x: np.sort(np.unique_values(x))),
    _nondiff("isin", _isin_samples),
    _nondiff("intersect1d", _intersect1d_samples),
    _nondiff("union1d", _pair_samples),
    _nondiff("setdiff1d", _pair_samples),
    _nondiff("setxor1d", _pair_samples),
    _nondiff("bincount", _bincount_samples),
    # the counts only: histogram's edges are differentiable where they come from the data
    _nondiff(
        "histogram",
        _histogram_samples,
        fn=_histogram_counts,
        ref=lambda a, bins=10, range=None, density=None: np.histogram(a, bins, range, density)[0],
    ),
    _nondiff(
        "histogramdd",
        _histogramdd_samples,
        fn=_histogramdd_counts,
        ref=lambda s, bins=10, range=None, density=None: np.histogramdd(s, bins, range, density)[0],
    ),
]
