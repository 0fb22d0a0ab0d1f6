"""The non-differentiable functions of ``dualad.numpy`` against NumPy itself: values, dtypes and
shapes over grids of arguments (axis variants, ``side=``, ``kind=``, the ``return_*`` flags,
NEP 50 scalars), Python values where NumPy gives them, NumPy's exception classes, and inputs
left unchanged. (Under the transforms: ``test_nondiff_transforms.py``.)"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad._tensor import Tensor

RNG = np.random.default_rng(13)


def _grid(shape, dtype="float64"):
    """Values on a grid of halves: ties and duplicates in every sample."""
    return (np.round(RNG.uniform(-2, 2, shape) * 2) / 2).astype(dtype)


def _tensor(value):
    """A tensor of ``value``; floating ones require grad (the results must still be untracked)."""
    if not isinstance(value, np.ndarray):
        return value
    t = dualad.tensor(value)
    if value.dtype.kind in "fc":
        t.requires_grad_(True)
    return t


def _convert(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_convert(v) for v in value)
    return _tensor(value)


def assert_same(got, ref, what=""):
    """``got`` (tensors, tuples, Python values) equals NumPy's ``ref``: values (NaNs equal),
    dtypes and shapes; untracked wherever it is a tensor."""
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref), f"{what}: {got!r} vs {ref!r}"
        for g, r in zip(got, ref):
            assert_same(g, r, what)
        return
    if isinstance(ref, (np.ndarray, np.generic)):
        assert isinstance(got, Tensor), f"{what}: {type(got).__name__} is not a Tensor"
        assert not got.requires_grad, f"{what}: the result requires grad"
        array = got.numpy()
        ref = np.asarray(ref)
        assert array.dtype == ref.dtype, f"{what}: dtype {array.dtype} != {ref.dtype}"
        assert array.shape == ref.shape, f"{what}: shape {array.shape} != {ref.shape}"
        np.testing.assert_array_equal(array, ref, err_msg=what)
        return
    assert type(got) is type(ref) and got == ref, f"{what}: {got!r} != {ref!r}"


A = _grid((3, 4))
B = _grid((2, 3, 4))
V = _grid((7,))
SORTED = np.sort(_grid((6,)))
INTS = RNG.integers(0, 6, (9,))
NANS = np.array([1.0, np.nan, 2.0, np.nan, 1.0])

CASES = [
    # sorting indices
    ("argsort", (V,), {}),
    ("argsort", (A,), {"axis": 0}),
    ("argsort", (B,), {"axis": -2, "kind": "stable"}),
    ("argsort", (B,), {"axis": None, "stable": True}),
    ("argsort", (A,), {"kind": "mergesort"}),
    ("argsort", (np.array(2.0),), {}),
    ("argsort", (INTS,), {"kind": "heapsort"}),
    ("argpartition", (RNG.permutation(8).astype(float), 3), {}),
    ("argpartition", (RNG.permutation(12).reshape(3, 4), (0, 2)), {"axis": 1}),
    ("argpartition", (RNG.permutation(12).reshape(3, 4), 1), {"axis": 0}),
    ("argpartition", (RNG.permutation(12).reshape(3, 4), -1), {"axis": None}),
    ("lexsort", ((V, _grid((7,))),), {}),
    ("lexsort", (np.stack([A[0], A[1]]),), {}),
    ("lexsort", ((A, _grid((3, 4))),), {"axis": 0}),
    # searching
    ("searchsorted", (SORTED, V), {}),
    ("searchsorted", (SORTED, A), {"side": "right"}),
    ("searchsorted", (SORTED, 0.5), {}),
    ("searchsorted", (V, V), {"sorter": np.argsort(V)}),
    ("searchsorted", (np.array([1, 2, 3]), 2.5), {}),
    ("digitize", (A, np.array([-1.0, 0.0, 1.0])), {}),
    ("digitize", (A, np.array([-1.0, 0.0, 1.0])), {"right": True}),
    ("digitize", (V, np.array([1.0, 0.0, -1.0])), {}),
    ("digitize", (0.25, np.array([0.0, 0.5])), {}),
    ("argmax", (A,), {}),
    ("argmax", (A,), {"axis": -1}),
    ("argmax", (B,), {"axis": 1, "keepdims": True}),
    ("argmin", (A,), {"axis": 0}),
    ("argmin", (A,), {"keepdims": True}),
    ("nanargmax", (NANS,), {}),
    ("nanargmax", (np.where(A > 1, np.nan, A),), {"axis": 1, "keepdims": True}),
    ("nanargmin", (np.where(A > 1, np.nan, A),), {"axis": -1}),
    ("nanargmin", (B,), {"keepdims": True}),
    ("unravel_index", (RNG.integers(0, 24, (2, 3)), (2, 3, 4)), {}),
    ("unravel_index", (RNG.integers(0, 12, (5,)), (3, 4)), {"order": "F"}),
    ("unravel_index", (7, (3, 4)), {}),
    ("ravel_multi_index", ((RNG.integers(0, 3, (2, 3)), RNG.integers(0, 4, (3,))), (3, 4)), {}),
    ("ravel_multi_index", ((RNG.integers(-9, 9, (4,)), 5), (3, 4)), {"mode": "wrap"}),
    ("ravel_multi_index", ((1, 3), (3, 4)), {"order": "F"}),
    ("packbits", (A > 0,), {}),
    ("packbits", (INTS.reshape(3, 3),), {"axis": 0, "bitorder": "little"}),
    ("unpackbits", (INTS.astype(np.uint8).reshape(3, 3),), {"axis": -1, "count": 5}),
    ("unpackbits", (INTS.astype(np.uint8),), {"count": -4}),
    ("nonzero", (A,), {}),
    ("flatnonzero", (A,), {}),
    ("argwhere", (B,), {}),
    ("argwhere", (np.array(0.0),), {}),
    ("count_nonzero", (A,), {"axis": 0}),
    ("count_nonzero", (B,), {"axis": (0, 2), "keepdims": True}),
    ("count_nonzero", (B,), {"axis": -1}),
    # sets
    ("unique", (B,), {}),
    ("unique", (B,), {"return_index": True, "return_inverse": True, "return_counts": True}),
    ("unique", (A,), {"return_inverse": True}),
    ("unique", (np.repeat(A[:2], 2, 0),), {"axis": 0, "return_counts": True}),
    ("unique", (np.repeat(A[:, :2], 2, 1),), {"axis": -1, "return_index": True}),
    ("unique", (NANS,), {}),
    ("unique", (NANS,), {"equal_nan": False, "return_counts": True}),
    ("unique", (INTS,), {"sorted": True}),
    ("unique_counts", (A,), {}),
    ("unique_inverse", (A,), {}),
    ("unique_all", (INTS,), {}),
    ("isin", (A, V), {}),
    ("isin", (A, V), {"invert": True}),
    ("isin", (INTS, np.array([1, 3])), {"kind": "table"}),
    ("isin", (INTS, np.array([1, 3])), {"kind": "sort", "assume_unique": False}),
    ("intersect1d", (A, V), {}),
    ("intersect1d", (np.unique(V), np.unique(A)), {"assume_unique": True, "return_indices": True}),
    ("union1d", (A, V), {}),
    ("setdiff1d", (A, V), {}),
    ("setdiff1d", (np.unique(A), np.unique(V)), {"assume_unique": True}),
    ("setxor1d", (A, V), {}),
    # counting
    ("bincount", (INTS,), {}),
    ("bincount", (INTS,), {"minlength": 10}),
    ("bincount", (INTS,), {"weights": _grid((9,))}),
    ("bincount", (INTS,), {"weights": _grid((9,), "float32"), "minlength": 8}),
    ("histogram", (A,), {}),
    ("histogram", (A,), {"bins": 3}),
    ("histogram", (A.astype("float32"),), {"bins": 4}),
    ("histogram", (INTS,), {"bins": 4}),
    ("histogram", (A,), {"bins": 4, "range": (-1, 3)}),
    ("histogram", (A,), {"bins": np.array([-2.0, 0.0, 0.5, 2.0])}),
    ("histogram", (A,), {"bins": [-2.0, 0.0, 2.0], "density": True}),
    ("histogram", (A,), {"bins": 5, "density": True}),
    ("histogram", (np.ones(4),), {"bins": 2}),
    # weighted: NumPy's bincount sums (float64, cast back) in the same order: exact
    ("histogram", (A,), {"bins": 3, "weights": _grid((3, 4))}),
    ("histogram", (A,), {"bins": 4, "range": (-1, 1), "weights": _grid((3, 4), "float32")}),
    ("histogram", (V,), {"weights": _grid((7,)) + 1j * _grid((7,)), "density": True}),
    ("histogram", (V,), {"bins": 2, "weights": INTS[:7]}),
    ("histogramdd", (A,), {}),
    ("histogramdd", (B.reshape(8, 3),), {"bins": (2, 3, 4)}),
    ("histogramdd", (A.astype("float32"),), {"bins": [2, [-1.0, 0.0, 2.0], 3, 2]}),
    ("histogramdd", ((V, _grid((7,))),), {"bins": 3, "range": [(-1, 1), None]}),
    ("histogramdd", (A,), {"bins": 2, "density": True}),
    ("histogramdd", (INTS,), {"bins": 3}),
    ("histogram2d", (V, _grid((7,))), {}),
    ("histogram2d", (V, _grid((7,))), {"bins": [2, 3], "range": [(-2, 2), (0, 0)]}),
    ("histogram2d", (V, _grid((7,))), {"bins": np.array([-1.0, 0.0, 1.0])}),
    ("histogram2d", (V, _grid((7,))), {"bins": 4, "density": True}),
    ("histogram_bin_edges", (A,), {"bins": 6}),
    ("histogram_bin_edges", (A,), {"bins": 3, "range": (0, 1)}),
    # predicates
    ("isclose", (A, A + 1e-9), {}),
    ("isclose", (A, A[0] + 1e-3), {"rtol": 1e-2}),
    ("isclose", (NANS, NANS), {"equal_nan": True}),
    ("isclose", (NANS, 1.0), {"atol": 0.5}),
    ("isclose", (A.astype("float32"), 0.5), {}),
    ("isclose", (INTS, 3), {}),
    ("allclose", (A, A + 1e-9), {}),
    ("allclose", (NANS, NANS), {}),
    ("allclose", (NANS, NANS), {"equal_nan": True}),
    ("array_equal", (A, A), {}),
    ("array_equal", (A, A[0]), {}),
    ("array_equal", (NANS, NANS), {"equal_nan": True}),
    ("array_equal", (NANS, NANS), {}),
    ("array_equiv", (A, A[:1].repeat(3, 0)), {}),
    ("array_equiv", (np.ones((2, 3)), np.ones(3)), {}),
    ("array_equiv", (A, V), {}),
    ("iscomplex", (np.array([1 + 1j, 2 + 0j]),), {}),
    ("iscomplex", (A,), {}),
    ("isreal", (np.array([1 + 1j, 2 + 0j]),), {}),
    ("isreal", (A,), {}),
    ("isposinf", (np.array([np.inf, -np.inf, 1.0, np.nan]),), {}),
    ("isneginf", (np.array([np.inf, -np.inf, 1.0, np.nan]),), {}),
    ("shape", (B,), {}),
    ("ndim", (B,), {}),
    ("size", (B,), {}),
    ("size", (B,), {"axis": 1}),
    ("iscomplexobj", (A,), {}),
    ("iscomplexobj", (A.astype(complex),), {}),
    ("isrealobj", (A,), {}),
    ("isscalar", (A,), {}),
    ("isscalar", (3.0,), {}),
    ("result_type", (A.astype("float32"), 1.0), {}),
    ("result_type", (INTS, A.astype("float32")), {}),
    ("can_cast", (A.astype("float32"), np.float64), {}),
    ("can_cast", (A, np.int32), {"casting": "same_kind"}),
    ("promote_types", (np.float32, np.int64), {}),
    ("issubdtype", (A.dtype, np.floating), {}),
    ("isdtype", (INTS.dtype, "integral"), {}),
    ("iterable", (A,), {}),
    ("iterable", (np.array(1.0),), {}),
    ("broadcast_shapes", ((2, 1), (3,)), {}),
    ("mintypecode", (["f", "d"],), {}),
    ("typename", ("d",), {}),
    ("binary_repr", (np.int64(-5),), {"width": 8}),
    ("base_repr", (255,), {"base": 16, "padding": 2}),
    ("isfortran", (A,), {}),
    ("min_scalar_type", (10,), {}),
    ("common_type", (INTS, A.astype("float32")), {}),
    # index builders (shapes in, NumPy's index arrays out)
    ("indices", ((2, 3),), {}),
    ("indices", ((2, 1, 3),), {"dtype": np.int8, "sparse": True}),
    ("indices", ((),), {}),
    ("ix_", (np.array([0, 2]), np.array([True, False, True, True])), {}),
    ("ix_", ([1, 0], np.array([], dtype=np.int32), [2]), {}),
    ("diag_indices", (3,), {}),
    ("diag_indices", (2,), {"ndim": 4}),
    ("diag_indices_from", (np.zeros((3, 3, 3)),), {}),
    ("tril_indices", (4,), {}),
    ("tril_indices", (3,), {"k": -1, "m": 5}),
    ("tril_indices_from", (A,), {"k": 1}),
    ("triu_indices", (4,), {"k": 2}),
    ("triu_indices", (3,), {"k": -1, "m": 2}),
    ("triu_indices_from", (A,), {"k": -2}),
    ("mask_indices", (4, np.triu), {"k": 1}),
    ("mask_indices", (3, np.tril), {}),
    ("einsum_path", ("ij,jk,kl->il", A, A.T, A), {}),
    ("einsum_path", ("ij,jk,kl->il", A, A.T, A), {"optimize": "optimal"}),
    ("einsum_path", (A, [0, 1], A.T, [1, 2], [0, 2]), {"optimize": True}),
    # rounding that is not a ufunc (piecewise constant: tested for values here)
    ("round", (A * 1.37,), {"decimals": 1}),
    ("round", (A.astype("float32") * 13,), {"decimals": -1}),
    ("round", (INTS * 7,), {"decimals": -1}),
    ("around", (A * 1.37,), {}),
    ("fix", (A * 1.37,), {}),
    ("fix", (INTS,), {}),
]

# functions whose results stay in the graph (zero derivatives, or derivatives of the weights
# and of data-drawn bin edges): compared by value, the tracking checked elsewhere
TRACKED = {
    "round",
    "around",
    "fix",
    "bincount",
    "histogram",
    "histogram_bin_edges",
    "histogramdd",
    "histogram2d",
}


def _case_id(case):
    name, _, kwargs = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items() if not hasattr(v, "shape"))


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_matches_numpy(case):
    name, args, kwargs = case
    snapshot = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    ref = getattr(np, name)(*args, **kwargs)
    got = getattr(dnp, name)(*_convert(args), **{k: _convert(v) for k, v in kwargs.items()})
    if name in TRACKED:
        got = _detached(got)
    if name.startswith("unique_"):  # NumPy's named tuples against ours
        ref, got = tuple(ref), tuple(got)
    if name == "histogramdd":  # (counts, [edges ...])
        ref, got = (ref[0], *ref[1]), (got[0], *got[1])
    if isinstance(ref, (np.dtype, type)):
        assert got == ref
    else:
        assert_same(got, ref, name)
    for before, after in zip(snapshot, args):  # NumPy's own run and ours leave inputs alone
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(before, after)


def _detached(value):
    if isinstance(value, (tuple, list)):
        return tuple(_detached(v) for v in value)
    return value.detach() if isinstance(value, Tensor) else value


def test_unique_values_is_the_set_of_values():
    got = dnp.unique_values(dualad.tensor(B, requires_grad=True))
    ref = np.unique_values(B)
    assert not got.requires_grad and got.dtype == ref.dtype
    np.testing.assert_array_equal(np.sort(got.numpy()), np.sort(ref))


def test_inputs_are_not_mutated():
    """Tensors given to every function keep their values (the impls sort copies)."""
    for name, args, kwargs in CASES:
        tensors = _convert(args)
        before = [t.detach().numpy().copy() for t in tensors if isinstance(t, Tensor)]
        getattr(dnp, name)(*tensors, **kwargs)
        after = [t.detach().numpy() for t in tensors if isinstance(t, Tensor)]
        for b, a in zip(before, after):
            np.testing.assert_array_equal(b, a, err_msg=name)


def test_finfo_iinfo_and_memory_queries():
    t = dualad.tensor(A.astype("float32"))
    assert dnp.finfo(t) == np.finfo(np.float32)
    assert dnp.iinfo(dualad.tensor(INTS)).max == np.iinfo(INTS.dtype).max
    assert dnp.may_share_memory(t, t[1:]) and dnp.shares_memory(t, t[0])
    assert not dnp.shares_memory(t, dualad.tensor(A))
    assert dnp.isfortran(t.T) == np.isfortran(A.T) is True  # a transposed view


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: dnp.argsort(dualad.tensor(A), axis=2), np.exceptions.AxisError),
        (lambda: dnp.argsort(dualad.tensor(A), kind="bogo"), ValueError),
        (lambda: dnp.argsort(dualad.tensor(A), kind="stable", stable=True), ValueError),
        (lambda: dnp.argsort(dualad.tensor(A), order="f"), ValueError),
        (lambda: dnp.count_nonzero(dualad.tensor(A), axis=(0, 0)), ValueError),
        (lambda: dnp.searchsorted(dualad.tensor(A), 1.0), ValueError),
        (lambda: dnp.searchsorted(dualad.tensor(V), 1.0, side="middle"), ValueError),
        (lambda: dnp.digitize(dualad.tensor(V), dualad.tensor([1.0, 0.0, 2.0])), ValueError),
        (lambda: dnp.argmax(dualad.tensor(A), out=dualad.tensor(0)), TypeError),
        (lambda: dnp.round(dualad.tensor(A), out=np.empty_like(A)), TypeError),
        (lambda: dnp.unique(dualad.tensor(A), axis=3), np.exceptions.AxisError),
        (lambda: dnp.isin(dualad.tensor(A), V, kind="hash"), ValueError),
        (lambda: dnp.bincount(dualad.tensor([0, -1])), ValueError),
        (lambda: dnp.bincount(dualad.tensor([0.5])), TypeError),
        (lambda: dnp.bincount(dualad.tensor([0, 1]), weights=[1.0]), ValueError),
        (lambda: dnp.histogram(dualad.tensor(A), weights=A[0]), ValueError),
        (lambda: dnp.histogram(dualad.tensor(A), bins="auto", weights=A), TypeError),
        (lambda: dnp.histogram(dualad.tensor(A), bins=0), ValueError),
        (lambda: dnp.histogram(dualad.tensor(A), range=(1, 0)), ValueError),
        (lambda: dnp.histogram(dualad.tensor(NANS)), ValueError),
        (lambda: dnp.histogramdd(dualad.tensor(NANS)), ValueError),
        (lambda: dnp.histogramdd(dualad.tensor(A), bins=[2, 3]), ValueError),
        (lambda: dnp.histogramdd(dualad.tensor(A), range=[(0, 1)]), ValueError),
        (lambda: dnp.histogramdd(dualad.tensor(A), bins=[0, 1, 1, 1]), ValueError),
        (lambda: dnp.histogramdd(dualad.tensor(A), weights=A[:, 0]), TypeError),
        (lambda: dnp.histogram(dualad.tensor(A, requires_grad=True), bins="auto"), TypeError),
        (lambda: dnp.isposinf(dualad.tensor([1j])), TypeError),
        (lambda: dnp.nonzero(dualad.tensor(1.0)), ValueError),
        (lambda: dnp.nanargmax(dualad.tensor([np.nan, np.nan])), ValueError),
        (lambda: dnp.unravel_index(dualad.tensor([12]), (3, 4)), ValueError),
        (lambda: dnp.ravel_multi_index((dualad.tensor([3]), 0), (3, 4)), ValueError),
        (lambda: dnp.lexsort([dualad.tensor(V), dualad.tensor(A)]), ValueError),
    ],
)
def test_bad_input_raises_numpys_exception_class(call, error):
    with pytest.raises(error):
        call()


def test_weighted_histogram_with_given_edges_is_numpys_up_to_rounding():
    """With given edges NumPy sums the weights as differences of a cumulative sum: the same
    sums, rounded differently."""
    weights = RNG.normal(size=(3, 4))
    edges = np.array([-2.0, -0.5, 0.0, 1.0, 2.0])
    got = dnp.histogram(dualad.tensor(A), edges, weights=dualad.tensor(weights))
    ref = np.histogram(A, edges, weights=weights)
    assert got[0].dtype == ref[0].dtype
    np.testing.assert_allclose(got[0].numpy(), ref[0], rtol=1e-12, atol=1e-12)


def test_estimated_bins_work_on_untracked_data():
    got = dnp.histogram(dualad.tensor(A), bins="auto")
    assert_same(got, np.histogram(A, bins="auto"))
