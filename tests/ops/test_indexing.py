"""Gather/scatter-style ops, masks, index assignment: values, derivatives, in-place variants,
batching rules and errors.

The entries of ``dualad.testing.opdb.indexing`` are checked in every claimed dtype: forward
values against NumPy, VJP and JVP against central differences, and second order (all these ops
are linear in their differentiable inputs, so differentiating the VJP w.r.t. the cotangent must
give the JVP back).
"""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import (
    assert_values_close,
    family_cases,
    forward_tangents,
    function_of_leaves,
)

import dualad
from dualad._dispatch import REGISTRY
from dualad.testing._numeric import (
    as_numpy,
    flatten_outputs,
    numerical_jvp,
    numerical_vjp,
    random_like,
)
from dualad.testing.opdb import indexing as indexing_db

# ---------------------------------------------------------------------------------------------
# helpers


DIFF_INFOS = [info for info in indexing_db.OPS if info.differentiable]


@pytest.mark.parametrize(
    "info, dtype, sample",
    family_cases(indexing_db.OPS, ("float32", "float64", "complex64", "complex128")),
)
def test_forward_matches_numpy(info, dtype, sample):
    expected = [np.asarray(e) for e in flatten_outputs(info.ref(*sample.args, **sample.kwargs))]
    args, kwargs, _ = sample.tensors(requires_grad=False)
    actual = flatten_outputs(info.fn(*args, **kwargs))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype, f"{info.name}: dtype {a.dtype} != {e.dtype}"
        tol = 1e-5 if e.dtype in (np.float32, np.complex64) else 1e-12
        assert_values_close(a, e, rtol=tol, atol=tol, what=info.name)


@pytest.mark.parametrize("info, dtype, sample", family_cases(DIFF_INFOS, ("float64", "complex128")))
def test_vjp_matches_finite_differences(info, dtype, sample):
    rng = np.random.default_rng(0)
    args, kwargs, leaves = sample.tensors(requires_grad=True)
    outputs = [o for o in flatten_outputs(info.fn(*args, **kwargs)) if o.requires_grad]
    cts = [random_like(rng, as_numpy(o)) for o in outputs]
    grads = dualad.autograd.grad(outputs, leaves, [dualad.tensor(c) for c in cts])
    arrays = sample.leaves()
    expected = numerical_vjp(function_of_leaves(info, sample), arrays, range(len(arrays)), cts)
    for leaf, g, e in zip(leaves, grads, expected):
        assert g.dtype == leaf.dtype and g.shape == leaf.shape
        assert_values_close(g, e, rtol=1e-6, atol=1e-8, what=f"{info.name} vjp")


@pytest.mark.parametrize("info, dtype, sample", family_cases(DIFF_INFOS, ("float64", "complex128")))
def test_jvp_matches_finite_differences(info, dtype, sample):
    rng = np.random.default_rng(1)
    actual, expected, _ = forward_tangents(info, sample, rng)
    for a, e in zip(actual, expected):
        assert_values_close(a, e, rtol=1e-6, atol=1e-8, what=f"{info.name} jvp")


@pytest.mark.parametrize("info, dtype, sample", family_cases(DIFF_INFOS, ("float64", "complex128")))
def test_grad_of_grad_is_the_op(info, dtype, sample):
    rng = np.random.default_rng(2)
    args, kwargs, leaves = sample.tensors(requires_grad=True)
    outputs = [o for o in flatten_outputs(info.fn(*args, **kwargs)) if o.requires_grad]
    cts = [dualad.tensor(random_like(rng, as_numpy(o)), requires_grad=True) for o in outputs]
    grads = dualad.autograd.grad(outputs, leaves, cts, create_graph=True, allow_unused=True)
    directions = [random_like(rng, as_numpy(leaf)) for leaf in leaves]
    expected = numerical_jvp(function_of_leaves(info, sample), sample.leaves(), directions)
    # gradients that do not depend on the cotangent (fill_ with a number: zero) drop out
    used = [
        (g, dualad.tensor(v))
        for g, v in zip(grads, directions)
        if g is not None and g.requires_grad
    ]
    if not used:
        assert all(not np.any(e) for e in expected)
        return
    second = dualad.autograd.grad([g for g, _ in used], cts, [v for _, v in used])
    for s, e in zip(second, expected):
        assert_values_close(s, e, rtol=1e-6, atol=1e-8, what=f"{info.name} vjp of vjp")


@pytest.mark.parametrize("info, dtype, sample", family_cases(DIFF_INFOS, ("float32",)))
def test_float32_gradients_keep_dtype(info, dtype, sample):
    args, kwargs, leaves = sample.tensors(requires_grad=True)
    outputs = [o for o in flatten_outputs(info.fn(*args, **kwargs)) if o.requires_grad]
    grads = dualad.autograd.grad(outputs, leaves, [dualad.ones_like(o) for o in outputs])
    assert all(g.dtype == np.float32 for g in grads)


def test_every_indexing_op_has_an_entry():
    covered = {name for info in indexing_db.OPS for name in info.ops}
    mine = {
        "gather", "scatter", "scatter_add", "index_select", "index_add", "masked_fill",
        "nonzero", "index_put", "fill", "copy_from",
    }  # fmt: skip
    assert mine <= set(REGISTRY)
    assert mine <= covered


# ---------------------------------------------------------------------------------------------
# specific semantics


def test_gather_duplicate_indices_accumulate_gradient():
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = x.gather(1, dualad.tensor([[0, 0, 0], [1, 0, 1]]))
    assert_values_close(out, [[1, 1, 1], [4, 3, 4.0]])
    assert out.grad_fn.name() == "GatherBackward0"
    out.sum().backward()
    assert_values_close(x.grad, [[3.0, 0.0], [1.0, 2.0]])


def test_gather_accepts_lists_and_ignores_sparse_grad():
    x = dualad.tensor([10.0, 20.0, 30.0])
    assert dualad.gather(x, 0, [2, 0], sparse_grad=True).tolist() == [30.0, 10.0]
    assert dualad.gather(dualad.tensor(5.0), 0, dualad.tensor(0)).tolist() == 5.0


def test_scatter_value_and_src():
    x = dualad.zeros(2, 4)
    index = dualad.tensor([[1, 3], [0, 0]])
    assert_values_close(x.scatter(1, index, 2.0), [[0, 2, 0, 2], [2, 0, 0, 0.0]])
    assert_values_close(x.scatter(1, index, value=-1), [[0, -1, 0, -1], [-1, 0, 0, 0.0]])
    src = dualad.tensor([[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]])  # only the (2, 2) block is read
    distinct = dualad.tensor([[1, 3], [0, 2]])
    assert_values_close(x.scatter(1, distinct, src), [[0, 1, 0, 2], [3, 0, 4, 0.0]])


def test_scatter_gradients():
    x = dualad.tensor(np.arange(8.0).reshape(2, 4), requires_grad=True)
    src = dualad.tensor([[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]], requires_grad=True)
    index = dualad.tensor([[1, 3], [0, 2]])
    ct = np.arange(1.0, 9.0).reshape(2, 4)
    out = x.scatter(1, index, src)
    gx, gsrc = dualad.autograd.grad(out, [x, src], dualad.tensor(ct))
    assert_values_close(gx, ct * np.array([[1, 0, 1, 0], [0, 1, 0, 1]]))
    assert_values_close(gsrc, [[2.0, 4.0, 0.0], [5.0, 7.0, 0.0]])


def test_scatter_add_and_index_add_accumulate():
    x = dualad.zeros(3)
    src = dualad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    out = x.scatter_add(0, dualad.tensor([0, 2, 0, 0]), src)
    assert_values_close(out, [8.0, 0.0, 2.0])
    (out * dualad.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert_values_close(src.grad, [1.0, 100.0, 1.0, 1.0])
    y = dualad.ones(2, 3).index_add(1, dualad.tensor([2, 2]), dualad.ones(2, 2), alpha=0.5)
    assert_values_close(y, [[1, 1, 2], [1, 1, 2.0]])


def test_index_select_zero_d_and_gradient():
    x = dualad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    out = x.index_select(1, dualad.tensor(2))
    assert tuple(out.shape) == (2, 1)
    out = x.index_select(-1, dualad.tensor([2, 2, 0]))
    assert_values_close(out, [[2, 2, 0], [5, 5, 3.0]])
    out.sum().backward()
    assert_values_close(x.grad, [[1, 0, 2], [1, 0, 2.0]])


def test_take_along_dim_and_take():
    x = dualad.tensor([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    idx = dualad.tensor([[0], [1]])
    assert_values_close(dualad.take_along_dim(x, idx, dim=1), [[10.0], [40.0]])
    assert_values_close(x.take_along_dim(dualad.tensor([5, 0])), [50.0, 10.0])
    assert_values_close(x.take(dualad.tensor([[5], [-1]])), [[50.0], [50.0]])


def test_masked_fill_with_non_differentiable_mask_from_a_function():
    # seed: the mask comes from a computation on x and does not require grad
    x = dualad.tensor(np.random.default_rng(0).standard_normal((5, 5)), requires_grad=True)
    mask = x > 0
    assert not mask.requires_grad
    y = x.masked_fill(mask, 0)
    y.sum().backward()
    assert_values_close(x.grad, np.where(mask.numpy(), 0.0, 1.0))
    assert y.grad_fn.name() == "MaskedFillBackward0"


def test_masked_fill_zero_d_value_gets_gradient_and_dtype_is_kept():
    x = dualad.tensor([1.0, 2.0, 3.0], dtype=dualad.float32, requires_grad=True)
    value = dualad.tensor(5.0, requires_grad=True)  # float64: cast to x's dtype
    out = x.masked_fill(dualad.tensor([True, False, True]), value)
    assert out.dtype == np.float32
    assert_values_close(out, np.array([5.0, 2.0, 5.0], np.float32))
    out.sum().backward()
    assert_values_close(value.grad, 2.0)
    assert value.grad.dtype == np.float64
    assert_values_close(x.grad, np.array([0.0, 1.0, 0.0], np.float32))


def test_masked_select_and_nonzero():
    x = dualad.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)
    out = x.masked_select(x.detach() != 0)
    assert_values_close(out, [1.0, 2.0])
    out.sum().backward()
    assert_values_close(x.grad, [[1.0, 0.0], [0.0, 1.0]])
    nz = x.detach().nonzero()
    assert nz.dtype == np.int64 and nz.tolist() == [[0, 0], [1, 1]]
    rows, cols = dualad.nonzero(x.detach(), as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [0, 1]
    assert tuple(dualad.nonzero(dualad.tensor(3.0)).shape) == (1, 0)
    assert tuple(dualad.nonzero(dualad.tensor(0.0)).shape) == (0, 0)
    assert [t.tolist() for t in dualad.nonzero(dualad.tensor(3.0), as_tuple=True)] == [[0]]
    assert dualad.argwhere(dualad.tensor([0, 3, 0, 4])).tolist() == [[1], [3]]
    assert not x.nonzero().requires_grad


# ---------------------------------------------------------------------------------------------
# in-place variants


def test_inplace_variants_match_functional_and_track_gradients():
    base = np.random.default_rng(0).standard_normal((3, 4))
    index = dualad.tensor([[0, 1], [2, 3], [1, 1]])
    mask = dualad.tensor(base > 0)
    cases = {
        "masked_fill_": (lambda t: t.masked_fill_(mask, 2.0), lambda t: t.masked_fill(mask, 2.0)),
        "scatter_": (lambda t: t.scatter_(1, index, 0.5), lambda t: t.scatter(1, index, 0.5)),
        "scatter_add_": (
            lambda t: t.scatter_add_(1, index, dualad.ones(3, 2, dtype=dualad.float64)),
            lambda t: t.scatter_add(1, index, dualad.ones(3, 2, dtype=dualad.float64)),
        ),
        "index_add_": (
            lambda t: t.index_add_(0, dualad.tensor([2, 2]), dualad.ones(2, 4)),
            lambda t: t.index_add(0, dualad.tensor([2, 2]), dualad.ones(2, 4)),
        ),
        "tril_": (lambda t: t.tril_(-1), lambda t: t.tril(-1)),
        "triu_": (lambda t: t.triu_(), lambda t: t.triu()),
    }
    ct = np.random.default_rng(1).standard_normal((3, 4))
    for name, (inplace, functional) in cases.items():
        x = dualad.tensor(base, requires_grad=True)
        y = x * 1.0
        version = y._version
        result = inplace(y)
        assert result is y, name
        assert y._version == version + 1, name
        (grad_inplace,) = dualad.autograd.grad(y, x, dualad.tensor(ct))
        x2 = dualad.tensor(base, requires_grad=True)
        expected = functional(x2 * 1.0)
        (grad_functional,) = dualad.autograd.grad(expected, x2, dualad.tensor(ct))
        assert_values_close(y, expected.detach().numpy(), what=name)
        assert_values_close(grad_inplace, grad_functional.numpy(), what=name)


def test_inplace_masked_fill_on_a_view_updates_the_base_gradient():
    x = dualad.tensor(np.ones((2, 3)), requires_grad=True)
    y = x * 3.0
    y[1].masked_fill_(dualad.tensor([True, False, True]), 0.0)
    y.sum().backward()
    assert_values_close(x.grad, [[3.0, 3.0, 3.0], [0.0, 3.0, 0.0]])


def test_inplace_shape_mismatch_is_an_error():
    x = dualad.zeros(3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.masked_fill_(dualad.tensor([[True, False, True]] * 2), 1.0)


def test_gather_saves_its_input_like_torch():
    x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    out = y.gather(0, dualad.tensor([2, 0]))
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# ---------------------------------------------------------------------------------------------
# errors


def _m(*shape):
    return dualad.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape))


ERRORS = [
    (lambda: _m(2, 3).gather(1, dualad.tensor([0, 1])), RuntimeError, "same number of dim"),
    (lambda: _m(2, 3).gather(1, dualad.tensor([[0.0]])), RuntimeError, "Expected dtype int64"),
    (lambda: _m(2, 3).gather(0, dualad.tensor([[0, 1, 0, 1]])), RuntimeError, "Size does not"),
    (lambda: _m(2, 3).gather(1, dualad.tensor([[3]])), IndexError, "out of bounds"),
    (lambda: _m(2, 3).gather(2, dualad.tensor([[0]])), IndexError, "Dimension out of range"),
    (lambda: _m(2, 3).scatter(1, dualad.tensor([[0]])), TypeError, "exactly one of src"),
    (
        lambda: _m(2, 3).scatter(1, dualad.tensor([[0]]), dualad.tensor([[1]])),
        RuntimeError,
        "Expected self.dtype to be equal to src.dtype",
    ),
    (
        lambda: _m(2, 3).scatter(1, dualad.tensor([[0, 1]]), _m(1, 1)),
        RuntimeError,
        "smaller than src",
    ),
    (
        lambda: _m(2, 3).scatter(1, dualad.tensor([[0]]), 1.0, reduce="add"),
        NotImplementedError,
        "reduce=",
    ),
    (
        lambda: _m(2, 3).scatter_add(1, dualad.tensor([[0]]), dualad.ones(1, 1, dtype="float32")),
        RuntimeError,
        "Expected self.dtype",
    ),
    (lambda: _m(2, 3).index_select(0, dualad.tensor([[0]])), IndexError, "vector"),
    (lambda: _m(2, 3).index_select(0, dualad.tensor([5])), IndexError, "out of bounds"),
    (
        lambda: _m(2, 3).index_add(0, dualad.tensor([0]), _m(2, 3)),
        RuntimeError,
        "same slice shapes",
    ),
    (lambda: _m(3).masked_fill(dualad.tensor([1, 0, 1]), 0.0), RuntimeError, "boolean masks"),
    (
        lambda: _m(3).masked_fill(dualad.tensor([True] * 3), dualad.tensor([1.0])),
        RuntimeError,
        "0-dimensional value tensor",
    ),
    # NumPy's broadcasting error keeps its class (ValueError), with the op named
    (lambda: _m(3).masked_fill(dualad.tensor([True] * 2), 0.0), ValueError, "broadcast"),
    (
        lambda: dualad.take_along_dim(_m(2, 3), dualad.tensor([0]), 1),
        RuntimeError,
        "same number of dimensions",
    ),
    (
        lambda: dualad.take_along_dim(_m(2, 3), dualad.tensor([[0], [0], [0]]), 1),
        RuntimeError,
        "cannot be broadcast",
    ),
]


@pytest.mark.parametrize("fn, kind, message", ERRORS, ids=[f"{i}" for i in range(len(ERRORS))])
def test_errors(fn, kind, message):
    with pytest.raises(kind, match=message):
        fn()


def test_errors_name_the_op():
    with pytest.raises(IndexError, match=r"dualad\.gather"):
        _m(2, 3).gather(1, dualad.tensor([[3]]))


# ---------------------------------------------------------------------------------------------
# batching rules against a loop over the batch (called directly: vmap drives them later)


def _check_batch(name, arrays, bdims, params, size=3):
    op = REGISTRY[name]
    args = tuple(dualad.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays)
    out, out_bdim = op.batch(op, args, bdims, params)
    for i in range(size):
        single = [np.take(a, i, axis=b) if b is not None else a for a, b in zip(arrays, bdims)]
        expected = op.impl(np, *single, **params)
        assert_values_close(
            np.take(out.numpy(), i, axis=out_bdim), expected, what=f"{name} ex. {i}"
        )


RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5))  # batch 3 at dim 0, logical (4, 5)
IDX = RNG.integers(0, 4, (3, 2, 5))  # batched index for dim 0 of the logical x
J = RNG.integers(0, 5, (4, 2))  # unbatched index for dim 1

BATCH_CASES = [
    ("gather", (X, IDX), (0, 0), {"dim": 0}),
    ("gather", (np.moveaxis(X, 0, 2), J), (2, None), {"dim": 1}),
    ("gather", (X[0], np.moveaxis(IDX, 0, 1)), (None, 1), {"dim": 0}),
    ("scatter", (X, np.moveaxis(J[None].repeat(3, 0), 0, 2), 1.5), (0, 2, None), {"dim": 1}),
    ("scatter", (X[0], RNG.permutation(5)[None, None].repeat(4, 1).repeat(3, 0)[:, :, :2],
                 RNG.standard_normal((3, 4, 2))), (None, 0, 0), {"dim": 1}),
    ("scatter_add", (X, IDX, RNG.standard_normal((3, 2, 5))), (0, 0, 0), {"dim": 0}),
    ("scatter_add", (np.moveaxis(X, 0, 1), J, RNG.standard_normal((4, 3, 2))), (1, None, 1),
     {"dim": 1}),
    ("index_select", (np.moveaxis(X, 0, 2), np.array([3, 0, 3])), (2, None), {"dim": 0}),
    ("index_select", (X, RNG.integers(0, 5, (3, 4))), (0, 0), {"dim": 1}),
    ("index_select", (X[0], RNG.integers(0, 4, (2, 3))), (None, 1), {"dim": 0}),
    ("masked_fill", (X, RNG.random((4, 5)) > 0.5, 2.0), (0, None, None), {}),
    ("masked_fill", (X[0], RNG.random((3, 5)) > 0.5, RNG.standard_normal(3)), (None, 0, 0), {}),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, arrays, bdims, params",
    BATCH_CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(BATCH_CASES)],
)
def test_batch_rules_match_a_loop(name, arrays, bdims, params):
    _check_batch(name, arrays, bdims, params)


def test_an_advanced_index_result_is_contiguous_so_its_reshape_sees_later_writes():
    # NumPy lays x[:, idx] out index dims first (and under vmap x[idx] batch dim inside); the
    # reshape then copied, and an in-place write to the indexed result did not reach it;
    # PyTorch's result is contiguous, its reshape a view (view(-1) works too)
    x0 = np.arange(12.0).reshape(3, 4)

    def f(x):
        r = x[:, dualad.tensor(np.array([0, 2]))]
        flat = r.reshape(-1)
        r.add_(0.5)
        return flat * 1, r.view(-1) * 1

    expected = x0[:, [0, 2]].reshape(-1) + 0.5
    for got in f(dualad.tensor(x0)):
        np.testing.assert_array_equal(got.numpy(), expected)

    def g(x):
        r = x[dualad.tensor(np.array([-2, -1]))]
        flat = r.reshape(8)
        r.add_(0.5)
        return flat

    X = np.stack([x0, -x0])
    got = dualad.func.vmap(g)(dualad.tensor(X)).numpy()
    np.testing.assert_array_equal(got, X[:, 1:].reshape(2, 8) + 0.5)
    x = dualad.tensor(x0, requires_grad=True)
    g(x * 1).backward(dualad.arange(8.0))
    expected = np.zeros((3, 4))
    expected[1:] = np.arange(8.0).reshape(2, 4)
    np.testing.assert_array_equal(x.grad.numpy(), expected)
