"""``dualad.tracing.buffers``: ufunc results written into dead temporaries (``out=``) only where
no other reader, view, input, constant or output can see the buffer; replays stay bit-equal."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import func
from dualad.ops._keys import IndexKey
from dualad.ops.slicing import index_put_zeros
from dualad.tracing import buffers


def _t(seed, *shape):
    return dualad.tensor(np.random.default_rng(seed).standard_normal(shape))


def _same(got, expected) -> None:
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for a, b in zip(got, expected):
        assert np.array_equal(a.numpy(), b.numpy(), equal_nan=True)


def _reused(source: str) -> int:
    return source.count(", out=s")


def test_a_chain_on_large_temporaries_writes_in_place_and_equals_eager():
    def fn(a, b):
        h = dualad.exp(dualad.tanh(a @ b) * 0.5) - 1.0
        return -(h / 3.0)

    jitted = dualad.jit(fn)
    for seed in range(3):
        a, b = _t(seed, 96, 96), _t(seed + 10, 96, 96)
        _same(jitted(a, b), fn(a, b))
    # every op after the product (the returned result lands in a dead temporary too)
    assert _reused(jitted.source(a, b)) == 6


def test_what_others_can_see_is_never_written():
    def fn(a, b):
        p = a @ b
        q = dualad.exp(p)  # p is read again below: not reused
        r = dualad.sin(p.T)  # a view of p: not a temporary of the shape's layout
        s = dualad.cos(a)  # an input: never written
        return q + r, p, s * 2.0

    jitted = dualad.jit(fn)
    a, b = _t(1, 96, 96), _t(2, 96, 96)
    before = a.numpy().copy(), b.numpy().copy()
    for _ in range(2):
        _same(jitted(a, b), fn(a, b))
    assert np.array_equal(a.numpy(), before[0]) and np.array_equal(b.numpy(), before[1])
    source = jitted.source(a, b)
    assert "out=s0" not in source and "out=s1" not in source
    assert _reused(source) == 2  # ``q + r`` into exp's result, ``s * 2.0`` into cos's


def test_small_arrays_keep_plain_calls():
    jitted = dualad.jit(lambda a, b: dualad.exp(a @ b) * 2.0)
    a = _t(3, 8, 8)
    assert _reused(jitted.source(a, a)) == 0


@pytest.fixture
def everywhere(monkeypatch):
    monkeypatch.setattr(buffers, "MIN_BYTES", 0)


@pytest.mark.usefixtures("everywhere")
@pytest.mark.parametrize(
    "transform",
    [
        lambda f: func.grad(f),
        lambda f: func.jacrev(lambda x: dualad.tanh(x) * dualad.exp(-x)),
        lambda f: func.hessian(f),
        lambda f: dualad.vmap(func.grad(f)),
    ],
    ids=["grad", "jacrev", "hessian", "vmap(grad)"],
)
def test_every_size_through_transforms_equals_eager(transform):
    def f(x):
        return (dualad.sin(x) * dualad.exp(x) / (1.0 + x * x)).sum()

    fn = transform(f)
    jitted = dualad.jit(fn)
    for seed in range(3):
        x = _t(seed, 3, 5) if "vmap" in repr(fn) else _t(seed, 5)
        _same(jitted(x), fn(x))
    assert _reused(jitted.source(x)) > 0


def test_sums_with_transposes_of_slicing_are_slice_additions():
    # the gradient of a stencil adds the zero-padded cotangents of its slices
    # (``index_put_zeros``): one of them is made, the others are added into it in place
    def energy(x):
        return ((x[1:] - x[:-1]) ** 2).sum() + (x[2:] * x[:-2]).sum()

    jitted = dualad.jit(func.grad(energy))
    for seed in range(2):
        x = _t(seed, 20_000)
        _same(jitted(x), func.grad(energy)(x))
    source = jitted.source(x)
    assert source.count("index_put_zeros") == 4  # one made, three fused ("# add (...)")
    assert source.count("+= ") == 3


def test_slice_additions_only_into_the_sums_own_layout():
    n = 20_000
    key = IndexKey((slice(1, None),))

    def broadcast(a, c):  # the zero-padded array is broadcast: not fused
        return dualad.exp(a) + index_put_zeros(dualad.sin(c), key, (n,))

    def same_layout(a, c):
        return index_put_zeros(dualad.sin(c), key, (n,)) + dualad.exp(a[0])

    a, c = _t(3, 3, n), _t(4, n - 1)
    for fn in (broadcast, same_layout):
        jitted = dualad.jit(fn)
        for _ in range(2):
            _same(jitted(a, c), fn(a, c))
    assert "+= " not in dualad.jit(broadcast).source(a, c)
    assert "+= " in dualad.jit(same_layout).source(a, c)
