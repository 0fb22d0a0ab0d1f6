"""Property tests (hypothesis): the sorting, searching, set and counting functions of
``dualad.numpy`` equal NumPy's on arbitrary small arrays with ties, NaNs and infinities, for
every axis; and under ``vmap`` equal the per-example results. Budgets follow the hypothesis
profile."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dualad
import dualad.numpy as dnp

VALUES = st.sampled_from([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0, np.inf, -np.inf, np.nan])
ARRAYS = hnp.arrays(
    st.sampled_from([np.float64, np.float32]),
    hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
    elements=VALUES,
)


def _same(got, ref):
    array = got.numpy()
    assert array.dtype == ref.dtype and array.shape == ref.shape
    np.testing.assert_array_equal(array, ref)


@given(ARRAYS, st.data())
def test_argsort_and_counting_along_any_axis(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1) | st.none())
    t = dualad.tensor(a, requires_grad=True)
    _same(dnp.argsort(t, axis=axis, stable=True), np.argsort(a, axis=axis, stable=True))
    _same(dnp.count_nonzero(t, axis=axis), np.asarray(np.count_nonzero(a, axis=axis)))
    if axis is not None and a.shape[axis] > 0:
        b = dualad.tensor(a[None].repeat(2, 0))
        got = dualad.vmap(lambda r: dnp.argsort(r, axis=axis, kind="stable"))(b)
        _same(got, np.stack([np.argsort(a, axis=axis, kind="stable")] * 2))


@given(ARRAYS, ARRAYS, st.sampled_from(["left", "right"]))
def test_searchsorted_digitize_and_isin(table, v, side):
    table = np.sort(table.reshape(-1)).astype(np.float64)
    tv = dualad.tensor(v)
    _same(dnp.searchsorted(dualad.tensor(table), tv, side=side), np.searchsorted(table, v, side))
    finite = table[np.isfinite(table)]
    _same(dnp.digitize(tv, dualad.tensor(finite)), np.digitize(v, finite))
    _same(dnp.isin(tv, dualad.tensor(table)), np.isin(v, table))


@given(ARRAYS, st.booleans())
def test_unique_with_every_output(a, equal_nan):
    got = dnp.unique(dualad.tensor(a), True, True, True, equal_nan=equal_nan)
    for g, r in zip(got, np.unique(a, True, True, True, equal_nan=equal_nan)):
        _same(g, r)


@given(ARRAYS, st.integers(1, 5))
def test_histogram_of_finite_data(a, bins):
    a = a[np.isfinite(a)]
    counts, edges = dnp.histogram(dualad.tensor(a, requires_grad=True), bins)
    ref_counts, ref_edges = np.histogram(a, bins)
    _same(counts, ref_counts)
    _same(edges.detach(), ref_edges)
