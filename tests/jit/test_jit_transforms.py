"""``dualad.jit`` of functions using every transform inside, and transforms applied outside.

Each case traces on one input and replays on another; both calls must equal eager to the last
bit, and the second must be a replay (a cache hit), not a trace or an eager fallback.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import func
from dualad._tree import flatten

RNG = np.random.default_rng(0)


def t(*shape):
    return dualad.tensor(RNG.standard_normal(shape))


def arrays(tree):
    return [np.asarray(x.detach()) if isinstance(x, dualad.Tensor) else x for x in flatten(tree)[0]]


def assert_same(a, b):
    xs, ys = arrays(a), arrays(b)
    assert len(xs) == len(ys)
    for x, y in zip(xs, ys):
        assert np.array_equal(x, y), (x, y)


def check(fn, make):
    """fn jitted: a trace and a replay, each equal to eager; the replay hits the cache."""
    jitted = dualad.jit(fn)
    first = make()
    assert_same(jitted(*first), fn(*first))
    second = make()
    assert_same(jitted(*second), fn(*second))
    info = jitted.cache_info()
    assert (info.hits, info.misses, info.eager_calls) == (1, 1, 0), info
    return jitted


def f3(A, x):
    return dualad.tanh(A @ x) + x**2


def g(A, x):
    return dualad.softplus(A @ x).sum() + 0.5 * (x * x).sum()


def test_plain_function():
    check(lambda x, y: dualad.sin(x) * y + dualad.exp(x).sum(), lambda: (t(4), t(4)))


def test_grad_and_value():
    def loss(W, X):
        return (dualad.tanh(X @ W) ** 2).sum()

    check(lambda W, X: func.grad_and_value(loss)(W, X), lambda: (t(3, 2), t(4, 3)))


@pytest.mark.parametrize("transform", [func.jacrev, func.jacfwd])
def test_jacobians(transform):
    check(transform(f3, argnums=1), lambda: (t(5, 5), t(5)))


def test_hessian():
    check(func.hessian(g, argnums=1), lambda: (t(5, 5), t(5)))


def test_vmap_of_grad_per_example():
    def loss(w, xi, yi):
        return dualad.softplus(-yi * (xi @ w))

    check(dualad.vmap(func.grad(loss), in_dims=(None, 0, 0)), lambda: (t(3), t(6, 3), t(6)))


def test_jvp_hvp_linearize():
    def h(x):
        return (dualad.sin(x) ** 3).sum()

    check(lambda x, v: func.jvp(h, (x,), (v,)), lambda: (t(4), t(4)))
    check(lambda x, v: func.hvp(h, (x,), (v,)), lambda: (t(4), t(4)))
    check(lambda x, v: func.linearize(dualad.sin, x)[1](v), lambda: (t(4), t(4)))


def test_dual_level_inside():
    def fn(x, v):
        with dualad.fwd.dual_level():
            d = dualad.fwd.make_dual(x, v)
            return dualad.fwd.unpack_dual(dualad.sin(d) * d).tangent

    check(fn, lambda: (t(3), t(3)))


def test_tape_inside():
    def fn(x):
        x = x.detach().requires_grad_()
        (dualad.sin(x) * x).sum().backward()
        return x.grad

    check(fn, lambda: (t(3),))


def test_create_graph_inside():
    def fn(x):
        x = x.detach().requires_grad_()
        (gx,) = dualad.autograd.grad((x**3).sum(), x, create_graph=True)
        (ggx,) = dualad.autograd.grad(gx.sum(), x)
        return gx, ggx

    check(fn, lambda: (t(3),))


class MulAddOne(dualad.autograd.Function):
    """``x * y + y`` with a hand-written backward and jvp (saved inputs, two of them)."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        return x * y + y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * y, grad * (x + 1)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        return tx * y + ty * (x + 1)


def test_custom_function():
    check(lambda x, y: MulAddOne.apply(x, y) + 1, lambda: (t(3), t(3)))
    check(func.grad(lambda x, y: MulAddOne.apply(x, y).sum(), (0, 1)), lambda: (t(3), t(3)))
    check(func.jacfwd(lambda x: MulAddOne.apply(x, x * 2)), lambda: (t(3),))


def test_transforms_outside_run_eagerly():
    jitted = dualad.jit(lambda x: (dualad.sin(x) ** 2).sum())
    x = t(3)
    assert_same(func.grad(jitted)(x), 2 * dualad.sin(x) * dualad.cos(x))
    batch = t(2, 3)
    assert_same(dualad.vmap(jitted)(batch), (dualad.sin(batch) ** 2).sum(1))
    _, tangent = func.jvp(jitted, (x,), (dualad.ones_like(x),))
    assert_same(tangent, (2 * dualad.sin(x) * dualad.cos(x)).sum())
    # an input that requires grad: staged (one node whose backward is a jitted program)
    leaf = x.detach().requires_grad_()
    out = jitted(leaf)
    assert out.grad_fn.name() == "JitBackward"
    out.backward()
    assert_same(leaf.grad, 2 * dualad.sin(x) * dualad.cos(x))
    assert jitted.cache_info().eager_calls == 2  # (grad and jvp; vmap replays jit(vmap))
    assert jitted.cache_info().misses == 1  # (the staged forward's trace)


def test_jit_inside_jit():
    inner = dualad.jit(lambda x: dualad.exp(x) * 2)
    check(lambda x: inner(x) + 1, lambda: (t(3),))


def test_inplace_ops_under_transforms_inside():
    def dual(x, v):
        with dualad.fwd.dual_level():
            d = dualad.fwd.make_dual(x, v)
            y = d.clone()
            view = y[0:2]
            view.mul_(d[1:3])  # the view's tangent is written into y's
            y[3] = view[0] * 2
            primal, tangent = dualad.fwd.unpack_dual(y)
            return primal, tangent

    def grad_of_inplace(x):
        def g(x):
            y = x.clone()
            y[1:].mul_(x[:-1])
            return (y * y).sum()

        return func.grad(g)(x)

    def vmap_of_inplace(batch):
        def g(row):
            y = row * 1
            y[0] = y[1] * 3
            y.add_(row)
            return y

        return dualad.vmap(g)(batch)

    check(dual, lambda: (t(4), t(4)))
    check(grad_of_inplace, lambda: (t(4),))
    check(vmap_of_inplace, lambda: (t(3, 4),))


def test_inplace_on_a_tensor_that_requires_grad_inside_raises():
    def fn(x):
        x = x.detach().requires_grad_()
        y = x * 1
        y.mul_(2)
        return y

    with pytest.raises(NotImplementedError, match=r"dualad\.jit: in-place op"):
        dualad.jit(fn)(t(2))
