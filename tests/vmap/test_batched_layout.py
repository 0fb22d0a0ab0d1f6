"""Gradient layouts that a replayed view relies on: after an in-place op on a view of a base
(``y.view(-1).add_(c)``), the base's backward (CopySlices) replays the view ops on the base's
gradient. That gradient arrives in whatever layout the later op's backward made: transposed
(``y.mT``), or, under vmap, strided inside each example (the backward of ``y[:, idx]`` put the
batch dim between an example's rows). ``view(-1)`` then raised "view size is not compatible"
where the forward's view of the base worked; eagerly, under ``is_grads_batched``, ``vmap`` of a
VJP and a checkpoint's recomputation. Found by the composition fuzz test (checkpoint route).

Every result is checked against an explicit gradient or a loop of unbatched backward passes.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.func as F
from dualad import fwd
from dualad.ops.mutation import index_put

RNG = np.random.default_rng(17)
X0 = RNG.standard_normal((3, 4))
IDX = np.array([-1, 0])  # (two columns: the gradient of y[:, IDX] has two nonzero columns)


def t(array, **kwargs):
    return dualad.tensor(np.asarray(array, dtype=np.float64), **kwargs)


def write_then_columns(x):
    """The fuzz program's core: an in-place write through a flat view, then a column index."""
    y = x * 1
    y.view(-1).add_(0.3)
    return y[:, dualad.tensor(IDX)]


def write_then_transpose(x):
    y = x * 1
    y.view(-1).add_(0.3)
    return y.mT


def columns_grad(g):
    """The gradient of ``write_then_columns`` for the cotangent ``g`` (shape (3, 2))."""
    out = np.zeros((3, 4))
    np.add.at(out, (slice(None), IDX), g)
    return out


def loop_grads(fn, cotangents):
    """One unbatched ``autograd.grad`` per cotangent: the oracle of the batched routes."""
    rows = []
    for g in cotangents:
        x = t(X0, requires_grad=True)
        (gx,) = dualad.autograd.grad(fn(x), x, t(g))
        rows.append(gx.numpy())
    return np.stack(rows)


# ---------------------------------------------------------------------------------------------
# the reproducer (is_grads_batched) and its checkpointed form


def test_grads_batched_write_through_view_then_columns():
    G = RNG.standard_normal((3, 3, 2))
    x = t(X0, requires_grad=True)
    (gx,) = dualad.autograd.grad(write_then_columns(x), x, t(G), is_grads_batched=True)
    np.testing.assert_allclose(gx.numpy(), np.stack([columns_grad(g) for g in G]))


@pytest.mark.parametrize("nested", [False, True])
def test_grads_batched_through_checkpoint_recompute(nested):
    """The fuzz test's failing program: checkpointed as one segment (or nested in a second)."""

    def program(x):
        dualad.abs(x + 0.3)
        y = x * 1
        y.view(-1).add_(0.3)
        dualad.abs(y + 0.3)
        cols = y[:, dualad.tensor(np.array([-1]))]
        return dualad.cat([x.reshape(-1), cols.reshape(-1)])

    def fn(x):
        if nested:
            return dualad.checkpoint(
                lambda z: dualad.checkpoint(program, z, use_reentrant=False) * 1.0,
                x,
                use_reentrant=False,
            )
        return dualad.checkpoint(program, x, use_reentrant=False)

    G = RNG.standard_normal((3, 15))
    x = t(X0, requires_grad=True)
    (gx,) = dualad.autograd.grad(fn(x), x, t(G), is_grads_batched=True)
    np.testing.assert_allclose(gx.numpy(), loop_grads(fn, G))
    np.testing.assert_allclose(gx.numpy(), loop_grads(program, G))


def test_vmap_of_vjp_write_through_view_then_columns():
    G = RNG.standard_normal((5, 3, 2))
    _, vjp = F.vjp(write_then_columns, t(X0))
    (gx,) = F.vmap(vjp)(t(G))
    np.testing.assert_allclose(gx.numpy(), np.stack([columns_grad(g) for g in G]))


def test_vmap_of_grad_write_through_view_then_columns():
    U = RNG.standard_normal((3, 2))
    X = RNG.standard_normal((4, 3, 4))
    got = F.vmap(F.grad(lambda x: (write_then_columns(x) * t(U)).sum()))(t(X))
    np.testing.assert_allclose(got.numpy(), np.stack([columns_grad(U)] * 4))


def test_nested_vmap_of_vjp():
    G = RNG.standard_normal((2, 3, 3, 2))
    _, vjp = F.vjp(write_then_columns, t(X0))
    (gx,) = F.vmap(F.vmap(vjp))(t(G))
    expected = np.stack([np.stack([columns_grad(g) for g in row]) for row in G])
    np.testing.assert_allclose(gx.numpy(), expected)


# ---------------------------------------------------------------------------------------------
# a transposed gradient of the written base: eager too


def test_eager_backward_write_through_view_then_transpose():
    g = RNG.standard_normal((4, 3))
    x = t(X0, requires_grad=True)
    write_then_transpose(x).backward(t(g))
    np.testing.assert_allclose(x.grad.numpy(), g.T)


def test_grads_batched_write_through_view_then_transpose():
    G = RNG.standard_normal((3, 4, 3))
    x = t(X0, requires_grad=True)
    (gx,) = dualad.autograd.grad(write_then_transpose(x), x, t(G), is_grads_batched=True)
    np.testing.assert_allclose(gx.numpy(), G.transpose(0, 2, 1))


def test_double_backward_write_through_view_then_transpose():
    """``create_graph``: the copy of the gradient is differentiable (the identity's VJP)."""
    g = RNG.standard_normal((4, 3))
    w = RNG.standard_normal((3, 4))

    def fn(x):
        return write_then_transpose(x * x)

    x = t(X0, requires_grad=True)
    (gx,) = dualad.autograd.grad(fn(x), x, t(g), create_graph=True)
    (hx,) = dualad.autograd.grad((gx * t(w)).sum(), x)
    np.testing.assert_allclose(gx.detach().numpy(), 2 * X0 * g.T)
    np.testing.assert_allclose(hx.numpy(), 2 * w * g.T)


def test_forward_over_reverse_write_through_view_then_transpose():
    """jvp of the gradient: under a dual level the gradient's tangent is laid out too."""
    g = RNG.standard_normal((4, 3))
    v = RNG.standard_normal((3, 4))
    grad = F.grad(lambda x: (write_then_transpose(x * x) * t(g)).sum())
    _, tangent = F.jvp(grad, (t(X0),), (t(v),))
    np.testing.assert_allclose(tangent.numpy(), 2 * v * g.T)


# ---------------------------------------------------------------------------------------------
# the index backward under vmap: each example contiguous, as the eager result is


def test_vmap_index_backward_is_contiguous_per_example():
    """The VJP of ``x[:, idx]`` under vmap is zeros with the columns written; a view(-1) of it
    must work (eagerly the result is contiguous) and give each example's flat gradient."""
    G = RNG.standard_normal((5, 3, 2))
    _, vjp = F.vjp(lambda x: x[:, dualad.tensor(IDX)], t(X0))
    got = F.vmap(lambda g: vjp(g)[0].view(-1))(t(G))
    np.testing.assert_allclose(got.numpy(), np.stack([columns_grad(g).reshape(-1) for g in G]))


def test_vmap_index_backward_then_inplace_write_is_seen_by_view():
    """A view of the batched gradient shares its memory: a later in-place write through the
    view is seen by the gradient (a copying reshape would have missed it)."""
    G = RNG.standard_normal((5, 3, 2))
    _, vjp = F.vjp(lambda x: x[:, dualad.tensor(IDX)], t(X0))

    def fn(g):
        (gx,) = vjp(g)
        gx.view(-1).mul_(2.0)
        return gx

    got = F.vmap(fn)(t(G))
    np.testing.assert_allclose(got.numpy(), np.stack([2 * columns_grad(g) for g in G]))


def test_vmap_inplace_then_view_of_batched_input():
    """In-place op then view(-1) under plain vmap of a batch-first input (no backward)."""
    X = RNG.standard_normal((4, 3, 4))

    def fn(x):
        y = x * 1
        y.add_(0.3)
        return y.view(-1)

    got = F.vmap(fn)(t(X))
    np.testing.assert_allclose(got.numpy(), (X + 0.3).reshape(4, 12))


def test_dual_level_write_through_view_then_columns():
    """Forward mode of the same program (no replay on a gradient: the tangent follows the
    write and the index)."""
    v = RNG.standard_normal((3, 4))
    with fwd.dual_level():
        x = fwd.make_dual(t(X0), t(v))
        tangent = fwd.unpack_dual(write_then_columns(x)).tangent
    np.testing.assert_allclose(tangent.numpy(), v[:, IDX])


# ---------------------------------------------------------------------------------------------
# a base that is not C-contiguous: the gradient takes the base's own layout


def write_through_transposed_base(x):
    """``sin(x.mT)`` keeps x.mT's (Fortran) layout, so ``b.mT.view(-1)`` is a view of it."""
    b = dualad.sin(x.mT)
    b.mT.view(-1).mul_(2.0)
    return b


def test_eager_backward_write_through_view_of_fortran_base():
    g = RNG.standard_normal((4, 3))
    x = t(X0, requires_grad=True)
    write_through_transposed_base(x).backward(t(g))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(X0) * g.T)


def test_grads_batched_write_through_view_of_fortran_base():
    G = RNG.standard_normal((3, 4, 3))
    x = t(X0, requires_grad=True)
    (gx,) = dualad.autograd.grad(write_through_transposed_base(x), x, t(G), is_grads_batched=True)
    np.testing.assert_allclose(gx.numpy(), loop_grads(write_through_transposed_base, G))
    np.testing.assert_allclose(gx.numpy(), 2 * np.cos(X0) * G.transpose(0, 2, 1))


def test_vmap_of_vjp_write_through_view_of_fortran_base():
    G = RNG.standard_normal((5, 4, 3))
    _, vjp = F.vjp(write_through_transposed_base, t(X0))
    (gx,) = F.vmap(vjp)(t(G))
    np.testing.assert_allclose(gx.numpy(), 2 * np.cos(X0) * G.transpose(0, 2, 1))


def write_twice_through_transposed_base(x):
    """A second view of the base after the first write (func transforms rebind the base to a
    functional result: it must keep the base's layout for the second ``view(-1)``)."""
    b = dualad.sin(x.mT)
    b.mT.view(-1).mul_(2.0)
    b.mT.view(-1).add_(1.0)
    return b


@pytest.mark.parametrize("fn", [write_through_transposed_base, write_twice_through_transposed_base])
def test_func_transforms_write_through_view_of_fortran_base(fn):
    g = RNG.standard_normal((4, 3))
    J = np.zeros((4, 3, 3, 4))  # d b[i, j] / d x[k, l] = 2 cos(x[j, i]) when (k, l) = (j, i)
    for i in range(4):
        for j in range(3):
            J[i, j, j, i] = 2 * np.cos(X0[j, i])
    _, vjp = F.vjp(fn, t(X0))
    np.testing.assert_allclose(vjp(t(g))[0].numpy(), 2 * np.cos(X0) * g.T)
    got = F.grad(lambda x: (fn(x) * t(g)).sum())(t(X0))
    np.testing.assert_allclose(got.numpy(), 2 * np.cos(X0) * g.T)
    np.testing.assert_allclose(F.jacrev(fn)(t(X0)).numpy(), J)
    np.testing.assert_allclose(F.jacfwd(fn)(t(X0)).numpy(), J)
    X = RNG.standard_normal((2, 3, 4))
    batched = F.vmap(F.grad(lambda x: (fn(x) * t(g)).sum()))(t(X))
    np.testing.assert_allclose(batched.numpy(), 2 * np.cos(X) * g.T)


@pytest.mark.parametrize("dim", [None, 1])
def test_vmap_take_backward_is_contiguous_per_example(dim):
    """``take`` (of the flattened input, or along ``dim`` as ``x[:, idx]``): its VJP under vmap
    (zeros with the picked elements added) must be contiguous per example too."""
    index = np.array([[0, 5], [11, 5]]) if dim is None else np.array([3, 0, 3])
    G = RNG.standard_normal((4, *(index.shape if dim is None else (3, 3))))
    _, vjp = F.vjp(lambda x: dualad.take(x, dualad.tensor(index), dim), t(X0))
    got = F.vmap(lambda g: vjp(g)[0].view(-1))(t(G))
    expected = np.zeros((4, 3, 4))
    for b in range(4):  # (a repeated position accumulates)
        if dim is None:
            np.add.at(expected[b].reshape(-1), index, G[b])
        else:
            np.add.at(expected[b], (slice(None), index), G[b])
    np.testing.assert_allclose(got.numpy(), expected.reshape(4, 12))


# ---------------------------------------------------------------------------------------------
# elementwise results with the batch inside each example (in_dims=1): NumPy's order K kept the
# input's memory order, so every example of x * 1 was strided where eager x * 1 is contiguous


def reshape_then_write(x):
    y = x * 1
    r = y.reshape(-1)  # (a view of y eagerly: it sees the write below)
    y.add_(1.0)
    return r


@pytest.mark.parametrize("in_dims", [0, 1, 2])
def test_vmap_reshape_of_elementwise_result_sees_later_write(in_dims):
    X = RNG.standard_normal((3, 4, 5))
    examples = [np.take(X, b, axis=in_dims) for b in range(X.shape[in_dims])]
    got = F.vmap(reshape_then_write, in_dims=in_dims)(t(X))
    expected = np.stack([reshape_then_write(t(e)).numpy() for e in examples])
    np.testing.assert_allclose(got.numpy(), expected)


@pytest.mark.parametrize(
    "fn", [write_then_columns, write_then_transpose, write_through_transposed_base]
)
def test_grad_of_vmap_in_dims_1_write_through_view(fn):
    """Backward through a vmap (the tape records the batched ops) of an input batched along
    dim 1: the forward's view(-1) of ``x * 1`` raised; the gradient matches a loop."""
    X = RNG.standard_normal((3, 5, 4))
    x = t(X, requires_grad=True)
    out = F.vmap(fn, in_dims=1)(x)
    G = RNG.standard_normal(tuple(out.shape))
    out.backward(t(G))
    rows = []
    for b in range(5):
        xb = t(X[:, b], requires_grad=True)
        fn(xb).backward(t(G[b]))
        rows.append(xb.grad.numpy())
    np.testing.assert_allclose(x.grad.numpy(), np.stack(rows, axis=1))


def test_vmap_binary_with_batch_inside_both_arguments():
    X = RNG.standard_normal((3, 5, 4))
    Y = RNG.standard_normal((3, 4, 5))
    got = F.vmap(lambda a, b: (a * b).view(-1), in_dims=(1, 2))(t(X), t(Y))
    expected = np.stack([(X[:, k] * Y[:, :, k]).reshape(-1) for k in range(5)])
    np.testing.assert_allclose(got.numpy(), expected)


@pytest.mark.parametrize(
    "op",
    [
        dualad.tril,
        lambda x: dualad.triu(x, 1),
        lambda x: x @ x,
        lambda x: index_put(x, (slice(None), 1), 1.5),
        lambda x: dualad.where(x > 0, x, 0.5 * x),
    ],
    ids=["tril", "triu", "matmul", "index_put", "where"],
)
@pytest.mark.parametrize("in_dims", [1, 2])
def test_vmap_batch_inside_examples_non_elementwise(op, in_dims):
    """Any non-view op, not only elementwise ones: with the batch inside each example of the
    input, the result's examples are laid out as eager ones (tril's copy kept the input's
    memory order: the reshape copied and missed the write, a silently wrong value)."""

    def fn(x):
        y = op(x)
        r = y.reshape(-1)
        y.add_(1.0)
        return r, y.view(-1) * 1

    X = RNG.standard_normal((3, 3, 3))
    got = F.vmap(fn, in_dims=in_dims)(t(X))
    examples = [np.take(X, b, axis=in_dims) for b in range(3)]
    for k in range(2):
        expected = np.stack([fn(t(e))[k].numpy() for e in examples])
        np.testing.assert_allclose(got[k].numpy(), expected)


def test_vmap_view_op_result_still_shares_memory():
    """View ops keep the layout they get (a copy would lose the memory they share): a write
    through a transpose of a batch-inside input reaches the input's examples."""
    X = RNG.standard_normal((3, 4, 4))

    def fn(x):
        y = x * 1
        y.mT.mul_(2.0)
        return y

    got = F.vmap(fn, in_dims=1)(t(X))
    np.testing.assert_allclose(got.numpy(), 2 * X.transpose(1, 0, 2))
