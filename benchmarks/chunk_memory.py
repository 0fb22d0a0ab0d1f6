"""Peak memory of jacrev / jacfwd / vmap with and without ``chunk_size`` (tracemalloc), and
with ``chunk_size="auto"`` under a budget of a third of the unchunked peak.

Run: ``python benchmarks/chunk_memory.py`` (``--quick`` for smaller sizes). NumPy reports its
array allocations to tracemalloc, so the peak counts every array alive at once: the batched
intermediate values (batch x hidden), the basis of the Jacobian and the result. Chunking bounds
the first two by ``chunk_size`` rows; the result is the same size either way (plus one copy
while the chunks are concatenated).
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np

import dualad
from dualad.func import jacfwd, jacrev, vmap


def peak(fn):
    """``(peak MiB above the start, seconds, result)`` of one call of ``fn``."""
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top / 2**20, seconds, result


def mlp(w1, w2):
    """``x -> w2 @ tanh(w1 @ x)``: the hidden layer is the wide intermediate value."""
    return lambda x: w2 @ dualad.tanh(w1 @ x)


def workloads(scale: int):
    rng = np.random.default_rng(0)
    hidden = 8192 // scale

    def weights(rows, cols):
        return dualad.tensor(rng.standard_normal((rows, cols)) / np.sqrt(cols))

    n_in, n_out = 64 // scale, 256 // scale
    f = mlp(weights(hidden, n_in), weights(n_out, hidden))
    x = dualad.tensor(rng.standard_normal(n_in))
    yield (
        f"jacrev  mlp {n_in}->{hidden}->{n_out}",
        lambda chunk, budget=None: jacrev(f, chunk_size=chunk, max_memory=budget)(x),
    )
    n_in, n_out = 256 // scale, 64 // scale
    g = mlp(weights(hidden, n_in), weights(n_out, hidden))
    y = dualad.tensor(rng.standard_normal(n_in))
    yield (
        f"jacfwd  mlp {n_in}->{hidden}->{n_out}",
        lambda chunk, budget=None: jacfwd(g, chunk_size=chunk, max_memory=budget)(y),
    )
    batch = 256 // scale
    xs = dualad.tensor(rng.standard_normal((batch, 64 // scale)))
    h = mlp(weights(hidden, 64 // scale), weights(16, hidden))
    yield (
        f"vmap    mlp B={batch}, hidden {hidden}",
        lambda chunk, budget=None: vmap(h, chunk_size=chunk, max_memory=budget)(xs),
    )
    tall = 4096 // scale  # many outputs, few inputs: the (out x out) basis dominates
    a = weights(tall, 8)
    z = dualad.tensor(rng.standard_normal(8))
    yield (
        f"jacrev  tanh(A x), A {tall}x8",
        lambda chunk, budget=None: jacrev(
            lambda v: dualad.tanh(a @ v), chunk_size=chunk, max_memory=budget
        )(z),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="4x smaller problems")
    args = parser.parse_args()
    scale = 4 if args.quick else 1
    chunks = (None, 64 // scale, 16 // scale)
    print(f"{'workload':34s} {'chunk_size':>10s} {'peak MiB':>9s} {'x of None':>9s} {'ms':>8s}")
    for name, run in workloads(scale):
        reference = None
        for chunk in chunks:
            mib, seconds, out = peak(lambda run=run, chunk=chunk: run(chunk))
            if reference is None:
                reference = (mib, out.numpy())
                ratio = ""
            else:
                np.testing.assert_allclose(out.numpy(), reference[1], rtol=1e-12, atol=1e-12)
                ratio = f"{mib / reference[0]:9.3f}"
            print(f"{name:34s} {chunk!s:>10s} {mib:9.2f} {ratio:>9s} {seconds * 1e3:8.1f}")
        budget = int(reference[0] * 2**20 / 3)
        mib, seconds, out = peak(lambda run=run, budget=budget: run("auto", budget))
        np.testing.assert_allclose(out.numpy(), reference[1], rtol=1e-12, atol=1e-12)
        label = f"auto {budget / 2**20:.1f}M"
        ratio = f"{mib / reference[0]:9.3f}"
        print(f"{name:34s} {label:>10s} {mib:9.2f} {ratio:>9s} {seconds * 1e3:8.1f}")


if __name__ == "__main__":
    main()
