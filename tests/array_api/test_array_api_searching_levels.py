"""dualad.array_api's sorting, searching and set functions under the transforms: ``argsort``,
``sort``, ``searchsorted``, ``isin`` and the ``unique_*`` functions under ``vmap`` (against a
Python loop over the examples and against NumPy / a stable Python sort), nested ``vmap``, and
inside ``func.grad``, ``func.jvp`` and ``backward`` (``sort``'s derivative against analytic
values and finite differences; the index outputs untracked and equal to the eager ones).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad
import dualad.array_api as xp
from dualad import func
from dualad.testing import check_grads
from dualad.vmap import PerformanceWarning

# ties (within and across rows), so that stability is tested
TIES = dualad.tensor(
    [
        [[3.0, 1.0, 3.0, 2.0], [1.0, 1.0, 0.0, 5.0], [2.0, 2.0, 2.0, 2.0]],
        [[0.0, 4.0, 4.0, 1.0], [5.0, -1.0, 5.0, -1.0], [1.0, 2.0, 3.0, 4.0]],
    ]
)


def _stable_order(row, descending):
    # Python's sort is stable: an independent reference for both orders with ties
    return sorted(range(len(row)), key=lambda i: -row[i] if descending else row[i])


def _loop(f, *args, in_dims=0):
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    size = next(a.shape[0] for a, d in zip(args, dims) if d is not None)
    outs = [f(*(a if d is None else a[i] for a, d in zip(args, dims))) for i in range(size)]
    if isinstance(outs[0], tuple):
        return tuple(xp.stack(parts) for parts in zip(*outs))
    return xp.stack(outs)


def _same(got, expected):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g.numpy(), e.numpy())
        assert not g.requires_grad or e.requires_grad


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [-1, 0])
def test_argsort_and_sort_under_vmap_match_a_loop_and_a_stable_sort(descending, axis):
    def f(x):
        return xp.argsort(x, axis=axis, descending=descending), xp.sort(
            x, axis=axis, descending=descending
        )

    out = dualad.vmap(f)(TIES)
    _same(out, _loop(f, TIES))
    index = out[0].numpy()
    for b, example in enumerate(TIES.numpy()):
        lanes = example if axis == -1 else example.T
        got = index[b] if axis == -1 else index[b].T
        for lane, row in zip(got, lanes):
            assert lane.tolist() == _stable_order(row.tolist(), descending)
    assert out[0].dtype == xp.int64


@pytest.mark.parametrize("descending", [False, True])
def test_argsort_under_nested_vmap_and_vmap_over_the_sorted_axis(descending):
    def f(x):
        return xp.argsort(x, descending=descending)

    _same(dualad.vmap(dualad.vmap(f))(TIES), xp.argsort(TIES, descending=descending))
    # the batch dim is the last one: every example is a column of the eager array
    _same(dualad.vmap(f, in_dims=2)(TIES), _loop(f, xp.permute_dims(TIES, (2, 0, 1))))


def _check_batchings(f, reference, args):
    """``vmap(f)`` with each ``in_dims`` of ``args`` (in_dims -> the arguments with their batch
    dims) against a loop and against NumPy's ``reference`` per example."""
    for in_dims in args:
        out = dualad.vmap(f, in_dims=in_dims)(*[a for a, _ in args[in_dims]])
        _same(out, _loop(f, *[a for a, _ in args[in_dims]], in_dims=in_dims))
        for i in range(out.shape[0]):
            parts = [a.numpy() if d is None else a.numpy()[i] for a, d in args[in_dims]]
            assert out[i].tolist() == reference(*parts).tolist()


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_under_vmap_matches_a_loop_and_numpy(side):
    tables = xp.sort(TIES[:, 0, :])
    queries = dualad.tensor([[3.0, 0.5, 2.0], [4.0, -1.0, 1.0]])
    args = {
        (0, 0): [(tables, 0), (queries, 0)],  # a table per example
        (None, 0): [(tables[0], None), (queries, 0)],  # one table, batched queries
        (0, None): [(tables, 0), (queries[0], None)],  # batched tables, one set of queries
    }

    def f(a, v):
        return xp.searchsorted(a, v, side=side)

    _check_batchings(f, lambda a, v: np.searchsorted(a, v, side=side), args)
    twice = dualad.vmap(dualad.vmap(f))
    _same(twice(xp.sort(TIES), TIES), _loop(lambda a, v: _loop(f, a, v), xp.sort(TIES), TIES))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_with_a_batched_sorter(side):
    tables = TIES[:, 0, :]  # unsorted, with ties
    sorters = dualad.vmap(xp.argsort)(tables)
    queries = dualad.tensor([[3.0, 0.0], [4.0, 1.0]])

    def f(a, v, s):
        return xp.searchsorted(a, v, side=side, sorter=s)

    out = dualad.vmap(f)(tables, queries, sorters)
    _same(out, _loop(f, tables, queries, sorters))
    for i in range(2):
        a, v, s = tables.numpy()[i], queries.numpy()[i], sorters.numpy()[i]
        assert out[i].tolist() == np.searchsorted(a, v, side=side, sorter=s).tolist()


@pytest.mark.parametrize("invert", [False, True])
def test_isin_under_vmap_matches_a_loop_and_numpy(invert):
    tests = dualad.tensor([[1.0, 5.0], [2.0, 4.0]])
    args = {
        (0, 0): [(TIES, 0), (tests, 0)],
        (0, None): [(TIES, 0), (tests[0], None)],
        (None, 0): [(TIES[0], None), (tests, 0)],
    }

    def f(e, t):
        return xp.isin(e, t, invert=invert)

    _check_batchings(f, lambda e, t: np.isin(e, t, invert=invert), args)
    _same(dualad.vmap(dualad.vmap(f))(TIES, TIES), _loop(lambda e, t: _loop(f, e, t), TIES, TIES))


# examples with the same number of unique values: their results stack
SAME_SIZES = dualad.tensor([[[2.0, 1.0], [2.0, 3.0]], [[0.0, 0.0], [-1.0, 4.0]]])
UNIQUE = {
    "unique_all": xp.unique_all,
    "unique_counts": xp.unique_counts,
    "unique_inverse": xp.unique_inverse,
    "unique_values": xp.unique_values,
}


@pytest.mark.parametrize("name", sorted(UNIQUE))
def test_unique_under_vmap_runs_per_example_and_matches_a_loop(name):
    f = UNIQUE[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        out = dualad.vmap(f)(SAME_SIZES)
    _same(
        tuple(out) if isinstance(out, tuple) else out, _loop(lambda x: _as_tuple(f(x)), SAME_SIZES)
    )
    if name == "unique_all":
        for i, example in enumerate(SAME_SIZES.numpy()):
            ref = np.unique_all(example)
            for got, want in zip(out, ref):
                assert got[i].tolist() == want.tolist() and got[i].dtype == want.dtype


def _as_tuple(out):
    return tuple(out) if isinstance(out, tuple) else out


def test_unique_under_vmap_with_different_sizes_says_so():
    x = dualad.tensor([[1.0, 1.0], [1.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        with pytest.raises(RuntimeError, match="different shapes"):
            dualad.vmap(lambda r: xp.unique_counts(r).counts)(x)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_derivatives_match_finite_differences_under_vmap(descending):
    x = dualad.tensor([[0.3, -0.7, 0.9, 0.1], [0.5, 0.2, -0.4, -0.8]])

    def f(v):
        return xp.sort(v, descending=descending) ** 2

    check_grads(f, (x[0],), order=2)
    check_grads(dualad.vmap(f), (x,), order=2)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_gradient_follows_ties_in_stable_order(descending):
    # with ties, each output position's derivative goes to the input its stable order names
    x = dualad.tensor([2.0, 1.0, 2.0, 1.0])
    w = xp.asarray([1.0, 10.0, 100.0, 1000.0])
    order = _stable_order(x.tolist(), descending)
    expected = [0.0] * 4
    for position, source in enumerate(order):
        expected[source] = w.tolist()[position]

    def loss(v):
        return xp.sum(xp.sort(v, descending=descending) * w)

    assert func.grad(loss)(x).tolist() == expected
    batched = xp.stack([x, xp.flip(x)])
    per_example = dualad.vmap(func.grad(loss))(batched)
    _same(per_example, _loop(func.grad(loss), batched))
    _, tangent = func.jvp(lambda v: xp.sort(v, descending=descending), (x,), (w,))
    assert tangent.tolist() == [w.tolist()[i] for i in order]
    eager = x.detach().requires_grad_()
    loss(eager).backward()
    assert eager.grad.tolist() == expected


def test_index_functions_inside_func_grad_and_dual_levels_equal_the_eager_ones():
    x = dualad.tensor([0.5, -1.0, 0.5, 2.0, -1.0])
    table = dualad.tensor([-1.0, 0.0, 1.0])
    eager = (
        xp.argsort(x, descending=True),
        xp.searchsorted(table, x, side="right"),
        xp.isin(x, table),
        *xp.unique_all(x)[1:],
    )
    seen = []

    def f(v):
        outs = (
            xp.argsort(v, descending=True),
            xp.searchsorted(table, v, side="right"),
            xp.isin(v, table),
            *xp.unique_all(v)[1:],
        )
        seen.append(outs)
        # the top two elements, the found slots as weights, the members, the counts
        top = xp.sum(xp.take(v, outs[0][:2]))
        slots = xp.sum(v * xp.astype(outs[1], v.dtype))
        members = xp.sum(xp.where(outs[2], v, 0.0))
        values, _, _, counts = xp.unique_all(v)
        return top + slots + members + xp.sum(values * xp.astype(counts, v.dtype))

    g = func.grad(f)(x)
    func.jvp(f, (x,), (xp.ones_like(x),))
    for outs in seen:
        for got, want in zip(outs, eager):
            assert not got.requires_grad
            _same(got, want)
    # top two: 2.0 (index 3), then the first 0.5 (index 0); slots [2, 1, 2, 3, 1]; members:
    # the -1s; counts at the first occurrences: 0.5 -> 2, -1 -> 2, 2 -> 1
    assert g.tolist() == [1 + 2 + 0 + 2, 0 + 1 + 1 + 2, 0 + 2, 1 + 3 + 0 + 1, 0 + 1 + 1]
