"""Sparse Jacobians and Hessians (``dualad.func.sparse_jacobian`` / ``sparse_hessian``).

Run: ``python benchmarks/sparse_jacobians.py`` (``--quick``: n up to 10^5, no dense run).

For a 1-D stencil residual, a 2-D five-point stencil residual and a banded objective's Hessian
(chained Rosenbrock) at n = 10^4, 10^5, 10^6 it prints: the number of colours, the first call
(detection by one traced evaluation, colouring, one compressed evaluation), a later call
(compressed evaluation and decompression only), one plain forward evaluation of the function,
their ratio, and the tracemalloc peak of a later call per stored nonzero (memory O(nnz): the
bytes per nonzero stay flat as n grows). Then dense ``jacfwd`` (chunked, so that its
intermediates fit) at n = 10^4 against the sparse call, and the sparse Hessian of a 2-D
Laplacian-type energy at n = 10^5.

Times are the best of several repeats, interleaved with the forward evaluation they are
compared with (the ratio is what a loaded machine measures fairly). None of JAX, PyTorch or
HIPS autograd detects sparsity: there a user colours and decompresses by hand (or uses an add-on
such as sparsejac, given the pattern), so no peer column is printed.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np

import dualad
from dualad.func import jacfwd, sparse_hessian, sparse_jacobian


def stencil_1d(x):
    """``-u'' + u^3`` on a line: a tridiagonal Jacobian."""
    return x[2:] - 2 * x[1:-1] + x[:-2] - x[1:-1] ** 3


def stencil_2d(side: int):
    def residual(x):
        u = x.reshape(side, side)
        inner = u[1:-1, 1:-1]
        return (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * inner - inner**3
        ).reshape(-1)

    return residual


def rosenbrock(x):
    """The chained Rosenbrock function: a tridiagonal Hessian."""
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def laplacian_energy(side: int):
    def energy(x):
        u = x.reshape(side, side)
        return (
            ((u[1:] - u[:-1]) ** 2).sum() + ((u[:, 1:] - u[:, :-1]) ** 2).sum() + (u**4).sum() / 4
        )

    return energy


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def interleaved(fns: list, repeats: int) -> list:
    """Best-of-``repeats`` times of each of ``fns``, their calls interleaved."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for t, fn in zip(times, fns):
            start = time.perf_counter()
            fn()
            t.append(time.perf_counter() - start)
    return [min(t) for t in times]


def peak_bytes(fn) -> int:
    gc.collect()
    tracemalloc.start()
    fn()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def case(name: str, transform, fn, n: int, repeats: int) -> dict:
    x = np.random.default_rng(0).random(n)
    derivative = transform(fn)
    start = time.perf_counter()
    result = derivative(x)
    first = time.perf_counter() - start
    (plan,) = derivative._plans.values()
    xt = dualad.tensor(x)
    later, forward = interleaved([lambda: derivative(x), lambda: fn(xt)], repeats)
    memory = peak_bytes(lambda: derivative(x))
    row = {
        "case": name,
        "n": n,
        "colours": plan.k,
        "nnz": result.nnz,
        "first_s": first,
        "later_s": later,
        "forward_s": forward,
        "ratio": later / forward,
        "bytes_per_nnz": memory / result.nnz,
    }
    print(
        f"{name:<22} n={n:>8} colours={plan.k:>2} nnz={result.nnz:>8}  first {first:8.3f} s  "
        f"later {later * 1e3:9.2f} ms  forward {forward * 1e3:8.3f} ms  "
        f"ratio {later / forward:6.1f}x"
        f"  peak {memory / result.nnz:6.1f} B/nnz",
        flush=True,
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n up to 10^5, no dense jacfwd")
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    sizes = (10**4, 10**5) if options.quick else (10**4, 10**5, 10**6)
    for n in sizes:
        side = round(n**0.5)
        case("1-D stencil", sparse_jacobian, stencil_1d, n, options.repeats)
        case("2-D stencil", sparse_jacobian, stencil_2d(side), side * side, options.repeats)
        case("banded (Rosenbrock) H", sparse_hessian, rosenbrock, n, options.repeats)

    side = 316
    n = side * side
    energy = laplacian_energy(side)
    x = np.random.default_rng(1).random(n)
    h = sparse_hessian(energy)
    start = time.perf_counter()
    H = h(x)
    first = time.perf_counter() - start
    later = best(lambda: h(x), options.repeats)
    (plan,) = h._plans.values()
    print(
        f"2-D Laplacian energy Hessian n={n}: colours {plan.k}, nnz {H.nnz}, first call "
        f"{first:.2f} s, later calls {later:.3f} s"
    )

    if not options.quick:
        n = 10**4
        x = np.random.default_rng(2).random(n)
        sparse = sparse_jacobian(stencil_1d)
        sparse(x)
        sparse_time = best(lambda: sparse(x), options.repeats)
        dense = jacfwd(stencil_1d, chunk_size=1000)
        start = time.perf_counter()
        J = dense(x)
        dense_time = time.perf_counter() - start
        assert np.allclose(np.asarray(J), sparse(x).toarray())
        del J
        print(
            f"1-D stencil n={n}: dense jacfwd (chunk_size=1000) {dense_time:.2f} s, sparse "
            f"{sparse_time * 1e3:.2f} ms: {dense_time / sparse_time:.0f}x faster"
        )


if __name__ == "__main__":
    main()
