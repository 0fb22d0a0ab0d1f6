"""``dualad.tracing.staging``: a jitted call with inputs that require grad records one node whose
backward is a jitted VJP; gradients of every order equal eager's; what does not fit runs
eagerly."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import autograd, func


def f(x, y):
    return (dualad.sin(x) * y).sum() + (x * x * y).sum()


def two(x, y):
    return dualad.tanh(x @ y), dualad.exp(x).sum(0) * 2.0


def _tensors(seed, *shapes, requires_grad=(True, True)):
    r = np.random.default_rng(seed)
    return [
        dualad.tensor(r.standard_normal(s), requires_grad=g) for s, g in zip(shapes, requires_grad)
    ]


def _same(a, b) -> None:
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("requires_grad", [(True, True), (True, False), (False, True)])
def test_gradients_and_second_order_equal_eager(requires_grad):
    jitted = dualad.jit(f)
    for seed in range(3):
        x, y = _tensors(seed, (4,), (4,), requires_grad=requires_grad)
        wrt = [t for t in (x, y) if t.requires_grad]
        out, expected = jitted(x, y), f(x, y)
        assert out.grad_fn.name() == "JitBackward"
        _same(out, expected)
        got = autograd.grad(out, wrt, create_graph=True)
        want = autograd.grad(expected, wrt, create_graph=True)
        for a, b in zip(got, want):
            _same(a, b)
            assert a.grad_fn.name() == "JitBackward"  # the backward was staged too
        if requires_grad[0]:  # (f is linear in y: eagerly, y's gradient has no graph)
            second = autograd.grad(sum(g.sum() for g in got), wrt)
            for a, b in zip(second, autograd.grad(sum(g.sum() for g in want), wrt)):
                _same(a, b)
    assert jitted.cache_info().eager_calls == 0


def test_third_order_through_staged_backwards():
    jitted = dualad.jit(lambda x: (dualad.sin(x) * dualad.exp(x)).sum())
    x = dualad.tensor([0.3, -0.7], requires_grad=True)
    (g1,) = autograd.grad(jitted(x), x, create_graph=True)
    (g2,) = autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = autograd.grad(g2.sum(), x)
    e = x.detach()
    # d3/dx3 (sin x e^x) = 2 e^x (cos x - sin x)
    expected = 2 * dualad.exp(e) * (dualad.cos(e) - dualad.sin(e))
    assert np.allclose(g3.numpy(), expected.numpy(), rtol=1e-13, atol=0)


def test_several_outputs_and_unused_ones():
    jitted = dualad.jit(two)
    x, y = _tensors(1, (3, 4), (4, 2))
    a, b = jitted(x, y)
    ea, eb = two(x, y)
    _same(a, ea)
    _same(b, eb)
    for loss, expected in ((a.sum() + (b * b).sum(), ea.sum() + (eb * eb).sum()), (a.sum(), None)):
        got = autograd.grad(loss, (x, y), retain_graph=True)
        want = autograd.grad(ea.sum() if expected is None else expected, (x, y), retain_graph=True)
        for g, w in zip(got, want):
            _same(g, w)


def test_backward_accumulates_into_leaves():
    jitted = dualad.jit(f)
    x, y = _tensors(2, (5,), (5,))
    jitted(x, y).backward()
    jitted(x, y).backward()
    ex, ey = (t.detach().requires_grad_() for t in (x, y))
    f(ex, ey).backward()
    f(ex, ey).backward()
    _same(x.grad, ex.grad)
    _same(y.grad, ey.grad)


def _writes(x):
    y = x * 1.0
    y.mul_(2.0)
    return y.sum()


def _random(x):
    return (x * dualad.rand(3)).sum()


@pytest.mark.parametrize(
    "fn, make",
    [
        (_writes, lambda: dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)),
        (_random, lambda: dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)),
        (lambda x: x.argmax(), lambda: dualad.tensor([1.0, 3.0, 2.0], requires_grad=True)),
    ],
    ids=["writes", "random", "integer-output"],
)
def test_what_does_not_fit_runs_eagerly(fn, make):
    jitted = dualad.jit(fn)
    x = make()
    out = jitted(x)
    assert out.grad_fn is None or out.grad_fn.name() != "JitBackward"
    if out.dtype.kind == "f":
        out.backward()
        assert x.grad is not None
    assert jitted.cache_info().eager_calls == 1


def test_random_gradient_is_the_draws_own():
    # eager (not staged): the backward must use the values the forward drew
    jitted = dualad.jit(lambda x: (x * x * dualad.rand(4)).sum())
    x = dualad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    for _ in range(3):
        x.grad = None
        dualad.manual_seed(7)
        out = jitted(x)
        follows = dualad.rand(2)
        out.backward()
        dualad.manual_seed(7)
        draws = dualad.rand(4)
        _same(x.grad, 2 * x.detach() * draws)
        _same(out, (x * x * draws).sum())
        _same(follows, dualad.rand(2))  # the generator advanced as by one eager call


def test_grad_of_jit_under_func_transforms_still_agrees():
    jitted = dualad.jit(f)
    x, y = _tensors(3, (4,), (4,), requires_grad=(False, False))
    _same(func.grad(jitted)(x, y), func.grad(f)(x, y))
    hess = func.hessian(lambda x: jitted(x, y))(x)
    _same(hess, func.hessian(lambda x: f(x, y))(x))
    batch = dualad.tensor(np.random.default_rng(4).standard_normal((3, 4)))
    _same(
        dualad.vmap(jitted, in_dims=(0, None))(batch, y),
        dualad.vmap(f, in_dims=(0, None))(batch, y),
    )
    _, t = func.jvp(lambda x: jitted(x, y), (x,), (dualad.ones_like(x),))
    _, e = func.jvp(lambda x: f(x, y), (x,), (dualad.ones_like(x),))
    _same(t, e)
