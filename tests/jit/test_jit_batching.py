"""``dualad.tracing.batching``: ``vmap(jit(f))`` replays ``jit(vmap(f))`` per tuple of batch
dims, equal to eager vmap; nested levels, other randomness modes and keyword calls stay eager."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import autograd, func


def f(x, w):
    return dualad.tanh(x @ w).sum() + (x * x).sum()


def pair(x, w):
    return x * w.sum(), {"s": dualad.sin(x)}


def _t(seed, *shape, requires_grad=False):
    r = np.random.default_rng(seed)
    return dualad.tensor(r.standard_normal(shape), requires_grad=requires_grad)


def _same(a, b) -> None:
    assert np.array_equal(np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()))


@pytest.mark.parametrize(
    "in_dims, shapes",
    [((0, None), ((5, 3), (3, 2))), ((1, None), ((3, 5), (3, 2))), ((0, 0), ((5, 3), (5, 3, 2)))],
)
def test_vmap_of_jit_equals_eager_vmap(in_dims, shapes):
    jitted = dualad.jit(f)
    for seed in range(3):
        args = [_t(seed + i, *s) for i, s in enumerate(shapes)]
        _same(dualad.vmap(jitted, in_dims=in_dims)(*args), dualad.vmap(f, in_dims=in_dims)(*args))
    assert list(jitted._vmapped) == [in_dims]
    inner = jitted._vmapped[in_dims].cache_info()
    assert (inner.misses, inner.hits, jitted.cache_info().eager_calls) == (1, 2, 0)


def test_pytree_outputs_come_back_batched():
    jitted = dualad.jit(pair)
    x, w = _t(1, 4, 3), _t(2, 3)
    got = dualad.vmap(jitted, in_dims=(0, None))(x, w)
    want = dualad.vmap(pair, in_dims=(0, None))(x, w)
    _same(got[0], want[0])
    _same(got[1]["s"], want[1]["s"])


def test_vmap_of_jit_under_the_tape_is_staged_and_differentiable():
    jitted = dualad.jit(f)
    x, w = _t(3, 4, 3, requires_grad=True), _t(4, 3, 2, requires_grad=True)
    out = dualad.vmap(jitted, in_dims=(0, None))(x, w).sum()
    ex, ew = (t.detach().requires_grad_() for t in (x, w))
    expected = dualad.vmap(f, in_dims=(0, None))(ex, ew).sum()
    _same(out, expected)
    for g, e in zip(autograd.grad(out, (x, w)), autograd.grad(expected, (ex, ew))):
        assert np.allclose(g.numpy(), e.numpy(), rtol=1e-14, atol=1e-14)


def test_what_does_not_fit_runs_eagerly():
    jitted = dualad.jit(f)
    x, w = _t(5, 2, 4, 3), _t(6, 3, 2)
    nested = dualad.vmap(dualad.vmap(jitted, in_dims=(0, None)), in_dims=(0, None))
    _same(nested(x, w), dualad.vmap(dualad.vmap(f, in_dims=(0, None)), in_dims=(0, None))(x, w))
    same = dualad.vmap(jitted, in_dims=(0, None), randomness="same")
    _same(same(x[0], w), dualad.vmap(f, in_dims=(0, None))(x[0], w))
    inside = func.grad(lambda w: dualad.vmap(jitted, in_dims=(0, None))(x[0], w).sum())
    _same(inside(w), func.grad(lambda w: dualad.vmap(f, in_dims=(0, None))(x[0], w).sum())(w))
    assert jitted.cache_info().eager_calls == 3  # (one call each)
    assert not jitted._vmapped
