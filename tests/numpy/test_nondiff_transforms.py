"""The non-differentiable functions of ``dualad.numpy`` on tensors of every level: untracked
results for requires-grad and dual inputs, ``vmap`` equal to a Python loop over the examples
(batched where the per-example work is, at any batch dim, nested), and ``func.grad``/``jvp``
running through code that uses them; plus the derivatives that some results do carry
(weighted ``bincount``, data-drawn ``histogram`` edges, ``round``'s zeros)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad import func, fwd
from dualad._errors import TrackedConversionError
from dualad.vmap import PerformanceWarning

RNG = np.random.default_rng(7)


def _grid(shape):
    return np.round(RNG.uniform(-2, 2, shape) * 2) / 2


def _stacked(results):
    if isinstance(results[0], tuple):
        return tuple(_stacked([r[k] for r in results]) for k in range(len(results[0])))
    return np.stack([r.detach().numpy() for r in results])


def _same(got, ref, what):
    if isinstance(ref, tuple):
        for g, r in zip(got, ref):
            _same(g, r, what)
        return
    array = got.detach().numpy()
    assert array.dtype == ref.dtype and array.shape == ref.shape, f"{what}: {array.shape}"
    np.testing.assert_array_equal(array, ref, err_msg=what)


# (name, function of the batched arguments, their per-example shapes, in_dims variants)
VMAP_CASES = [
    ("argsort", lambda x: dnp.argsort(x, axis=0), [(3, 4)]),
    ("argsort flat", lambda x: dnp.argsort(x, axis=None, stable=True), [(3, 4)]),
    ("argpartition", lambda x: dnp.argpartition(x, 2, axis=-1), [(3, 5)]),
    ("lexsort", lambda a, b: dnp.lexsort((a, b)), [(6,), (6,)]),
    ("searchsorted", lambda a, v: dnp.searchsorted(dnp_sort(a), v, side="right"), [(6,), (2, 3)]),
    ("digitize", lambda x, b: dnp.digitize(x, dnp_sort(b)), [(2, 3), (4,)]),
    ("isin", lambda x, t: dnp.isin(x, t), [(2, 3), (4,)]),
    ("isclose", lambda a, b: dnp.isclose(a, b, atol=0.6), [(2, 3), (3,)]),
    ("argmax", lambda x: dnp.argmax(x, axis=1, keepdims=True), [(3, 4)]),
    ("count_nonzero", lambda x: dnp.count_nonzero(x, axis=(0,)), [(3, 4)]),
    ("histogram", lambda x: dnp.histogram(x, bins=3), [(8,)]),
    ("histogram range", lambda x: dnp.histogram(x, 4, range=(-1, 1), density=True), [(8,)]),
    ("histogram edges", lambda x, e: dnp.histogram(x, bins=dnp_sort(e))[0], [(8,), (4,)]),
    ("histogram weights", lambda x, w: dnp.histogram(x, 3, weights=w), [(8,), (8,)]),
    ("histogramdd", lambda s: _flat(dnp.histogramdd(s, bins=(2, 3))), [(6, 2)]),
    ("histogram2d", lambda x, y: dnp.histogram2d(x, y, bins=3, density=True), [(5,), (5,)]),
    ("iscomplex", lambda x: dnp.iscomplex(x), [(3,)]),
    ("isposinf", lambda x: _positive_infinities(x), [(4,)]),
    ("round", lambda x: dnp.round(x * 1.37, 1), [(3,)]),
]


def _flat(result):
    counts, edges = result
    return (counts, *edges)


def _positive_infinities(x):
    with np.errstate(divide="ignore"):  # 1 / 0: the infinities to find
        return dnp.isposinf(1 / x)


def dnp_sort(x):
    """A sorted copy through the sorting indices (the sort itself is not this module's)."""
    return dualad.take(x, dnp.argsort(x))


def _examples(shapes, size):
    return [[_grid(shape) for shape in shapes] for _ in range(size)]


def _loop(fn, examples):
    return _stacked([fn(*[dualad.tensor(a) for a in example]) for example in examples])


@pytest.mark.parametrize("name, fn, shapes", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
@pytest.mark.parametrize("dim", [0, -1])
def test_vmap_matches_a_loop(name, fn, shapes, dim):
    examples = _examples(shapes, 4)
    expected = _loop(fn, examples)
    for batched in range(len(shapes)):  # each argument batched alone, then all of them
        dims = [None] * len(shapes)
        dims[batched] = dim
        inputs = [
            dualad.tensor(np.moveaxis(np.stack([e[i] for e in examples]), 0, dim))
            if d is not None
            else dualad.tensor(examples[0][i])
            for i, d in enumerate(dims)
        ]
        alone = [
            [e[i] if dims[i] is not None else examples[0][i] for i in range(len(shapes))]
            for e in examples
        ]
        got = dualad.vmap(fn, in_dims=tuple(dims))(*inputs)
        _same(got, _loop(fn, alone), f"{name} in_dims={dims}")
    inputs = [
        dualad.tensor(np.moveaxis(np.stack([e[i] for e in examples]), 0, dim))
        for i in range(len(shapes))
    ]
    _same(dualad.vmap(fn, in_dims=dim)(*inputs), expected, f"{name} all batched")


@pytest.mark.parametrize("name, fn, shapes", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_nested_vmap_matches_a_loop(name, fn, shapes):
    outer = [_examples(shapes, 3) for _ in range(2)]
    per_outer = [_loop(fn, inner) for inner in outer]
    if isinstance(per_outer[0], tuple):
        expected = tuple(np.stack([p[k] for p in per_outer]) for k in range(len(per_outer[0])))
    else:
        expected = np.stack(per_outer)
    inputs = [
        dualad.tensor(np.stack([np.stack([e[i] for e in inner]) for inner in outer]))
        for i in range(len(shapes))
    ]
    _same(dualad.vmap(dualad.vmap(fn))(*inputs), expected, f"{name} nested")


def test_data_dependent_sizes_run_per_example_under_vmap():
    x = dualad.tensor([[1.0, 2.0, 1.0], [3.0, 3.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        values, counts = dualad.vmap(lambda r: dnp.unique(r, return_counts=True))(x)
        _same(values, np.array([[1.0, 2.0], [0.0, 3.0]]), "unique")
        _same(counts, np.array([[2, 1], [1, 2]]), "unique counts")
        _same(dualad.vmap(dnp.union1d)(x, x), np.array([[1.0, 2.0], [0.0, 3.0]]), "union1d")
        counts = dualad.vmap(lambda r: dnp.bincount(r, minlength=4))(
            dualad.tensor([[0, 1], [3, 3]])
        )
        _same(counts, np.array([[1, 1, 0, 0], [0, 0, 0, 2]]), "bincount")
        with pytest.raises(RuntimeError, match="different shapes"):
            dualad.vmap(dnp.unique)(dualad.tensor([[1.0, 1.0], [1.0, 2.0]]))


@pytest.mark.parametrize("name", ["allclose", "array_equal", "array_equiv"])
def test_python_bools_of_batched_tensors_raise_clearly(name):
    with pytest.raises(
        TrackedConversionError, match=f"dualad.numpy.{name} returns one Python bool"
    ):
        dualad.vmap(lambda x: getattr(dnp, name)(x, x))(dualad.tensor([[1.0, 2.0]]))


# ---------------------------------------------------------------------------------------------
# tracked inputs: untracked results; grad and jvp run through code that uses them

NONDIFF_CALLS = [
    lambda x: dnp.argsort(x),
    lambda x: dnp.argpartition(x, 1),
    lambda x: dnp.lexsort((x, x)),
    lambda x: dnp.searchsorted(dualad.tensor([-1.0, 0.0, 1.0]), x),
    lambda x: dnp.digitize(x, dualad.tensor([-1.0, 0.0, 1.0])),
    lambda x: dnp.isclose(x, 0.5),
    lambda x: dnp.isin(x, x),
    lambda x: dnp.argmax(x),
    lambda x: dnp.count_nonzero(x, axis=0),
    lambda x: dnp.unique(x, return_counts=True)[1],
    lambda x: dnp.histogram(x, 3, range=(-2, 2))[0],
    lambda x: dnp.isposinf(x),
]


@pytest.mark.parametrize("call", NONDIFF_CALLS)
def test_results_of_tracked_inputs_are_untracked(call):
    x = dualad.tensor([0.5, -1.5, 2.0, 0.5], requires_grad=True)
    assert not call(x).requires_grad
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([0.5, -1.5, 2.0, 0.5]), dualad.ones(4))
        assert fwd.unpack_dual(call(dual)).tangent is None


def test_grad_and_jvp_run_through_sorting_indices():
    """sum(w * x[argsort(x)]): the indices are constants, the gradient is w put back in
    x's order."""
    x = dualad.tensor([0.3, -1.0, 2.0, 0.7])
    w = dualad.tensor([1.0, 2.0, 3.0, 4.0])

    def f(x):
        order = dnp.argsort(x)
        ranks = dnp.searchsorted(dualad.take(x, order), x)
        assert not dnp.allclose(ranks, 0)  # a Python bool inside func.grad
        return (w * dualad.take(x, order)).sum()

    expected = np.empty(4)
    expected[np.argsort(x.numpy())] = w.numpy()
    np.testing.assert_allclose(func.grad(f)(x).numpy(), expected)
    _, tangent = func.jvp(f, (x,), (dualad.ones(4),))
    np.testing.assert_allclose(tangent.numpy(), w.numpy().sum())


def test_weighted_bincount_is_differentiable_in_the_weights():
    x = dualad.tensor([0, 2, 2, 1])
    jac = func.jacrev(lambda w: dnp.bincount(x, weights=w))(dualad.tensor([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(jac.numpy(), np.eye(3)[x.numpy()].T)
    _, tangent = func.jvp(lambda w: dnp.bincount(x, w), (dualad.ones(4),), (dualad.ones(4),))
    np.testing.assert_array_equal(tangent.numpy(), [1.0, 1.0, 2.0])


def test_weighted_histogram_is_differentiable_in_the_weights():
    x = dualad.tensor([0.0, 1.0, 2.0, 3.0, 9.0])
    jac = func.jacrev(lambda w: dnp.histogram(x, 2, range=(0, 3), weights=w)[0])(dualad.ones(5))
    np.testing.assert_array_equal(jac.numpy(), [[1, 1, 0, 0, 0], [0, 0, 1, 1, 0]])
    _, tangent = func.jvp(lambda w: dnp.histogram(x, 3, weights=w)[0], (dualad.ones(5),), (x,))
    np.testing.assert_array_equal(tangent.numpy(), [3.0, 3.0, 9.0])  # edges 0, 3, 6, 9


def test_histogram_edges_drawn_from_the_data_move_with_its_min_and_max():
    a = dualad.tensor([0.0, 3.0, 1.0, 2.5])
    n = 3
    jac = func.jacrev(lambda a: dnp.histogram(a, bins=n)[1])(a).numpy()
    k = np.arange(n + 1) / n
    expected = np.zeros((n + 1, 4))
    expected[:, 0], expected[:, 1] = 1 - k, k  # a[0] is the minimum, a[1] the maximum
    np.testing.assert_allclose(jac, expected, atol=1e-12)
    _, tangent = func.jvp(lambda a: dnp.histogram_bin_edges(a, n), (a,), (dualad.ones(4),))
    np.testing.assert_allclose(tangent.numpy(), np.ones(n + 1))
    # a given range or given edges do not depend on the data
    fixed = dnp.histogram(dualad.tensor([0.0, 3.0], requires_grad=True), 2, range=(0, 3))[1]
    assert not fixed.requires_grad


def test_histogramdd_edges_drawn_from_the_data_are_differentiable():
    sample = dualad.tensor([[0.0, 1.0], [2.0, -1.0], [1.0, 3.0]])
    jac = func.jacrev(lambda s: dnp.histogramdd(s, bins=2)[1][1])(sample).numpy()
    expected = np.zeros((3, 3, 2))  # dim 1: min -1 (row 1), max 3 (row 2)
    expected[:, 1, 1], expected[:, 2, 1] = [1.0, 0.5, 0.0], [0.0, 0.5, 1.0]
    np.testing.assert_allclose(jac, expected, atol=1e-12)


def test_round_and_fix_have_zero_derivatives():
    x = dualad.tensor([0.26, -1.74, 2.5])
    np.testing.assert_array_equal(func.grad(lambda x: dnp.round(x, 1).sum())(x).numpy(), 0.0)
    np.testing.assert_array_equal(func.grad(lambda x: dnp.fix(x).sum())(x).numpy(), 0.0)
    assert dnp.around(dualad.tensor([1.25], requires_grad=True), 1).requires_grad
