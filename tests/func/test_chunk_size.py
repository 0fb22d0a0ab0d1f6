"""``chunk_size`` of jacrev / jacfwd / vmap: the same result, a bounded peak memory (measured
with tracemalloc, which sees NumPy's array allocations; benchmarks/chunk_memory.py prints the
figures for larger problems)."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import dualad
from dualad.func import jacfwd, jacrev, vmap

RNG = np.random.default_rng(3)
HIDDEN = 2048  # the wide batched intermediate value: (batch, HIDDEN) float64 per op


def peak_mib(fn):
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / 2**20, result


def weights(rows, cols):
    return dualad.tensor(RNG.standard_normal((rows, cols)) / np.sqrt(cols))


def mlp(n_in, n_out):
    w1, w2 = weights(HIDDEN, n_in), weights(n_out, HIDDEN)
    return lambda x: w2 @ dualad.tanh(w1 @ x)


def cases():
    f = mlp(8, 128)  # jacrev: a batch of 128 cotangents
    x = dualad.tensor(RNG.standard_normal(8))
    yield "jacrev", lambda chunk: jacrev(f, chunk_size=chunk)(x)
    g = mlp(128, 8)  # jacfwd: a batch of 128 tangents
    y = dualad.tensor(RNG.standard_normal(128))
    yield "jacfwd", lambda chunk: jacfwd(g, chunk_size=chunk)(y)
    h = mlp(8, 4)
    xs = dualad.tensor(RNG.standard_normal((128, 8)))
    yield "vmap", lambda chunk: vmap(h, chunk_size=chunk)(xs)
    a = weights(1024, 4)  # many outputs: the 1024 x 1024 basis itself is 8 MiB
    z = dualad.tensor(RNG.standard_normal(4))
    yield "jacrev-tall", lambda chunk: jacrev(lambda v: dualad.tanh(a @ v), chunk_size=chunk)(z)


@pytest.mark.parametrize("name, run", list(cases()), ids=[c[0] for c in cases()])
def test_chunking_bounds_peak_memory_and_keeps_the_result(name, run):
    whole_mib, whole = peak_mib(lambda: run(None))
    chunked_mib, chunked = peak_mib(lambda: run(16))
    np.testing.assert_allclose(chunked.numpy(), whole.numpy(), rtol=1e-12, atol=1e-13)
    # 128 rows in chunks of 16: the batched intermediates shrink 8x; allow the fixed costs
    # (weights are allocated outside, the result and its concatenation inside) a wide margin
    assert chunked_mib < 0.5 * whole_mib, (name, whole_mib, chunked_mib)


def test_chunk_sizes_that_do_not_divide_the_batch_and_pytrees():
    def f(x, y):
        return {"a": dualad.sin(x) * y.sum(), "b": (x[:, None] * y).sum(0)}

    x, y = dualad.tensor(RNG.standard_normal(5)), dualad.tensor(RNG.standard_normal(3))
    for transform in (jacrev, jacfwd):
        whole = transform(f, argnums=(0, 1))(x, y)
        for chunk in (1, 2, 3, 7, 100):
            parts = transform(f, argnums=(0, 1), chunk_size=chunk)(x, y)
            for key in ("a", "b"):
                for k in range(2):
                    np.testing.assert_allclose(
                        parts[key][k].numpy(), whole[key][k].numpy(), rtol=1e-13, atol=1e-14
                    )


def test_jacfwd_chunks_with_aux_and_same_randomness():
    x = dualad.tensor(RNG.standard_normal(6))

    def f(v):
        noise = dualad.randn(6)
        return v * noise, noise

    jac, noise = jacfwd(f, has_aux=True, randomness="same", chunk_size=4)(x)
    np.testing.assert_allclose(jac.numpy(), np.diag(noise.numpy()), rtol=0, atol=0)
    jac, aux = jacfwd(lambda v: (v**2, v.sum()), has_aux=True, chunk_size=4)(x)
    np.testing.assert_allclose(jac.numpy(), np.diag(2 * x.numpy()))
    np.testing.assert_allclose(aux.numpy(), x.numpy().sum())


@pytest.mark.parametrize("transform", [jacrev, jacfwd])
@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_chunk_size(transform, bad):
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        transform(dualad.sin, chunk_size=bad)
