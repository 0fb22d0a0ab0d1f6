"""``reduce``, ``accumulate``, ``outer``, ``reduceat`` and ``at`` of ``dualad.numpy``'s ufuncs
(directly and through NumPy's protocol: ``np.add.reduce(t)``) against NumPy: values, dtypes,
shapes, axes, keepdims, initial, where, dtype, out; derivatives by finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad.testing import assert_close, check_grads

RNG = np.random.default_rng(2)
A = RNG.uniform(0.5, 1.5, (3, 4))
# the reducers with a dualad reduction and some that take the general left fold
REDUCE = ["add", "multiply", "maximum", "minimum", "subtract", "divide", "hypot", "logaddexp",
          "fmax", "arctan2", "power"]  # fmt: skip
LOGICAL = ["logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]


def _left_fold(np_ufunc, a, axis, accumulate=False):
    """NumPy's documented reduce/accumulate (a left fold), one step a call: NumPy's own
    power/arctan2 reduce along a contiguous axis gives other values (they depend on the
    memory layout: np.power.reduce(np.asfortranarray(A), axis=1) is the fold)."""
    moved = np.moveaxis(a, axis, 0)
    steps = [moved[0]]
    for row in moved[1:]:
        steps.append(np_ufunc(steps[-1], row))
    return np.moveaxis(np.stack(steps), 0, axis) if accumulate else steps[-1]


NOT_REORDERABLE = ("power", "arctan2")


def _same(got, ref):
    ref = np.asarray(ref)
    assert isinstance(got, dualad.Tensor)
    assert got.dtype == ref.dtype and tuple(got.shape) == ref.shape
    tol = 1e-6 if ref.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("route", ["protocol", "dualad.numpy"])
@pytest.mark.parametrize("name", REDUCE)
def test_reduce_matches_numpy(name, route):
    np_ufunc = getattr(np, name)
    uf = np_ufunc if route == "protocol" else getattr(dnp, name)
    t = dualad.tensor(A)
    for axis in (0, 1, -1, None, (0, 1)):
        for keepdims in (False, True):
            try:
                ref = np_ufunc.reduce(A, axis=axis, keepdims=keepdims)
            except ValueError:  # not reorderable: several axes refused, by us too
                with pytest.raises(ValueError, match="reorderable"):
                    uf.reduce(t, axis=axis, keepdims=keepdims)
                continue
            if name in NOT_REORDERABLE:
                ref = _left_fold(np_ufunc, A, axis)
                ref = np.expand_dims(ref, axis) if keepdims else ref
            _same(uf.reduce(t, axis=axis, keepdims=keepdims), ref)
    _same(uf.reduce(t), np_ufunc.reduce(A))  # axis=0 by default


@pytest.mark.parametrize("name", REDUCE)
def test_reduce_derivatives(name):
    uf = getattr(np, name)
    check_grads(lambda v: uf.reduce(v, axis=1), (dualad.tensor(A),), order=2)
    check_grads(lambda v: uf.accumulate(v, axis=0), (dualad.tensor(A),), order=1)


def test_reduce_keywords():
    t = dualad.tensor(A)
    mask = np.array([True, False, True, True])
    _same(np.add.reduce(t, axis=1, initial=2.0), np.add.reduce(A, axis=1, initial=2.0))
    _same(
        np.add.reduce(t, axis=1, where=mask, initial=0.5),
        np.add.reduce(A, axis=1, where=mask, initial=0.5),
    )
    _same(
        np.maximum.reduce(t, axis=1, where=mask, initial=-1.0),
        np.maximum.reduce(A, axis=1, where=mask, initial=-1.0),
    )
    _same(
        np.multiply.reduce(t, axis=None, dtype="float32"),
        np.multiply.reduce(A, axis=None, dtype="float32"),
    )
    ints = np.arange(6, dtype="int32").reshape(2, 3)
    _same(np.add.reduce(dualad.tensor(ints)), np.add.reduce(ints))
    _same(np.add.reduce(dualad.tensor(ints), axis=()), np.add.reduce(ints, axis=()))
    _same(dnp.add.reduce(dualad.tensor(np.zeros((0, 3))), axis=0), np.zeros(3))
    _same(
        np.maximum.reduce(dualad.tensor(np.zeros((0, 3))), axis=0, initial=1.5),
        np.full(3, 1.5),
    )
    out = dualad.zeros(4)
    assert np.add.reduce(t, axis=0, out=out) is out
    _same(out, A.sum(0))
    # masked elements get no gradient
    x = dualad.tensor(A, requires_grad=True)
    (g,) = dualad.autograd.grad(np.add.reduce(x, axis=1, where=mask).sum(), x)
    assert_close(g, np.broadcast_to(mask, A.shape).astype(float))


@pytest.mark.parametrize("name", LOGICAL)
def test_logical_and_bitwise_reduce(name):
    np_ufunc = getattr(np, name)
    b = RNG.integers(0, 2, (3, 4)).astype(bool)
    for axis in (0, 1, None):
        _same(np_ufunc.reduce(dualad.tensor(b), axis=axis), np_ufunc.reduce(b, axis=axis))
    floats = np.array([[0.0, 1.0], [2.0, 0.0]])
    if name.startswith("logical"):
        _same(np_ufunc.reduce(dualad.tensor(floats)), np_ufunc.reduce(floats))


def test_reduce_errors_are_numpys():
    t = dualad.tensor(A)
    with pytest.raises(np.exceptions.AxisError):
        np.add.reduce(t, axis=2)
    with pytest.raises(ValueError, match="identity"):
        np.maximum.reduce(dualad.tensor(np.zeros((0, 2))))
    with pytest.raises(ValueError, match="only supported for binary functions"):
        dnp.sin.reduce(t)
    with pytest.raises(ValueError, match="returning a single value"):
        np.divmod.reduce(t)
    with pytest.raises(TypeError, match="where= needs a ufunc with an identity"):
        np.subtract.reduce(t, axis=1, where=np.array([True, False, True, True]), initial=1.0)
    for uf in (np.matmul, dnp.matmul):
        with pytest.raises(RuntimeError, match="Reduction not defined on ufunc with signature"):
            uf.reduce(t)
    with pytest.raises(TypeError, match="non-trivial signature"):
        dnp.matmul.outer(t, t)


@pytest.mark.parametrize("route", ["protocol", "dualad.numpy"])
@pytest.mark.parametrize("name", [*REDUCE, "logical_or"])
def test_accumulate_matches_numpy(name, route):
    np_ufunc = getattr(np, name)
    uf = np_ufunc if route == "protocol" else getattr(dnp, name)
    for axis in (0, 1, -1):
        ref = np_ufunc.accumulate(A, axis=axis)
        if name in NOT_REORDERABLE:
            ref = _left_fold(np_ufunc, A, axis, accumulate=True)
        _same(uf.accumulate(dualad.tensor(A), axis=axis), ref)
    ints = np.arange(1, 7, dtype="int8").reshape(2, 3)
    _same(uf.accumulate(dualad.tensor(ints), axis=1), np_ufunc.accumulate(ints, axis=1))
    try:
        ref = np_ufunc.accumulate(A, dtype="float32")
    except TypeError:  # (no float32 loop: logical_or)
        with pytest.raises(TypeError):
            uf.accumulate(dualad.tensor(A), dtype="float32")
        return
    _same(uf.accumulate(dualad.tensor(A), dtype="float32"), ref)


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "arctan2", "less", "power"])
def test_outer(name):
    np_ufunc = getattr(np, name)
    a, b = RNG.uniform(0.5, 1.5, (2, 3)), RNG.uniform(0.5, 1.5, (4,))
    _same(np_ufunc.outer(dualad.tensor(a), dualad.tensor(b)), np_ufunc.outer(a, b))
    _same(getattr(dnp, name).outer(a, dualad.tensor(b)), np_ufunc.outer(a, b))
    if name != "less":
        check_grads(np_ufunc.outer, (dualad.tensor(a), dualad.tensor(b)), order=2)
    with pytest.raises(ValueError, match="outer product only supported for binary"):
        np.sin.outer(dualad.tensor(a), dualad.tensor(b))


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "subtract"])
def test_reduceat(name):
    np_ufunc = getattr(np, name)
    x = RNG.uniform(0.5, 1.5, (8, 3))
    for indices in ([0, 4, 1, 5], [0, 3, 3, 7], [2]):
        for axis in (0, 1):
            idx = [i % x.shape[axis] for i in indices]
            ref = np_ufunc.reduceat(x, idx, axis=axis)
            _same(np_ufunc.reduceat(dualad.tensor(x), idx, axis=axis), ref)
    check_grads(lambda v: np_ufunc.reduceat(v, [0, 4, 1, 5]), (dualad.tensor(x),), order=1)
    with pytest.raises(IndexError):
        np_ufunc.reduceat(dualad.tensor(x), [0, 9])


def test_at_is_refused():
    t = dualad.tensor([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"add\.at: dualad has no differentiable version"):
        np.add.at(t, [0, 0], 1.0)
    a = np.zeros(3)
    with pytest.raises(TypeError, match=r"ufunc\.at"):
        np.add.at(a, [0, 0], t)
    np.testing.assert_array_equal(a, np.zeros(3))
