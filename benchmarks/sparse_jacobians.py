"""Sparse Jacobians and Hessians (``dualad.func.sparse_jacobian`` / ``sparse_hessian``).

Run: ``python benchmarks/sparse_jacobians.py`` (``--quick``: n up to 10^5, no dense run).

For a 1-D stencil residual, a 2-D five-point stencil residual and a banded objective's Hessian
(chained Rosenbrock) at n = 10^4, 10^5, 10^6, and the Hessian of a 2-D Laplacian-type energy at
n = 10^5, it prints: the number of colours; the first call (detection by one traced evaluation,
colouring, the trace and compilation of the compressed evaluation, and its first run) with the
detection alone in brackets; a later call; one plain forward evaluation of the function and the
ratio of the two; the parts of a later call (the jitted compressed evaluation, the gather of
the nonzeros out of it, the CSR matrix; the seed matrix is made once per plan, so seeding costs
nothing after the first call); the minor page faults of a later call (fresh memory the kernel
maps: in a VM each costs about a microsecond, and they are most of a later call's time when
glibc's allocator hands its freed heap back between calls; that depends on the allocations
before, not on dualad, so two processes can measure different ratios); and the tracemalloc
peak of a later call per stored nonzero (memory O(nnz): the bytes per nonzero stay flat as n
grows). Then dense ``jacfwd``/``hessian`` (chunked, so that their intermediates fit) at n =
10^4 against the sparse call.

Times are the best of several repeats, interleaved with the forward evaluation they are
compared with (the ratio is what a loaded machine measures fairly). None of JAX, PyTorch or
HIPS autograd detects sparsity: there a user colours and decompresses by hand (or uses an add-on
such as sparsejac, given the pattern), so no peer column is printed.
"""

from __future__ import annotations

import argparse
import gc
import resource
import time
import tracemalloc

import numpy as np

import dualad
from dualad.func import hessian, jacfwd, sparse_hessian, sparse_jacobian
from dualad.tracing.sparsity import detect


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


def page_faults(fn, repeats: int) -> float:
    """Minor page faults per call of ``fn``."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(repeats):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / repeats


def case(name: str, transform, fn, n: int, repeats: int) -> dict:
    x = np.random.default_rng(0).random(n)
    xt = dualad.tensor(x)
    hessian = transform is sparse_hessian
    start = time.perf_counter()
    detect(fn, [xt], "benchmark", hessian=hessian)
    detection = time.perf_counter() - start
    derivative = transform(fn)
    start = time.perf_counter()
    result = derivative(x)
    first = time.perf_counter() - start
    (plan,) = derivative._plans.values()
    # the parts of a later call
    size = plan.pattern.shape[0] if plan.mode == "rows" else n
    seeds = dualad.tensor(plan.seed_matrix(size, xt.dtype, np))
    compressed = plan.evaluate(seeds, xt)._data
    data = plan.entries(compressed, np)
    later, forward, evaluate, gather, csr = interleaved(
        [
            lambda: derivative(x),
            lambda: fn(xt),
            lambda: plan.evaluate(seeds, xt),
            lambda: plan.entries(compressed, np),
            lambda: derivative._result(plan, data, [xt], np),
        ],
        repeats,
    )
    faults = page_faults(lambda: derivative(x), repeats)
    memory = peak_bytes(lambda: derivative(x))
    row = {
        "case": name,
        "n": n,
        "colours": plan.k,
        "nnz": result.nnz,
        "first_s": first,
        "detection_s": detection,
        "later_s": later,
        "forward_s": forward,
        "ratio": later / forward,
        "evaluate_s": evaluate,
        "gather_s": gather,
        "csr_s": csr,
        "faults": faults,
        "bytes_per_nnz": memory / result.nnz,
    }
    print(
        f"{name:<22} n={n:>8} k={plan.k:>2} nnz={result.nnz:>8}  first {first:6.2f} s "
        f"({detection:5.2f})  later {later * 1e3:8.2f} ms  forward {forward * 1e3:7.3f} ms  "
        f"ratio {later / forward:5.1f}x  [eval {evaluate * 1e3:7.2f}  gather "
        f"{gather * 1e3:6.2f}  csr {csr * 1e3:6.2f} ms]  faults {faults:7.0f}  "
        f"peak {memory / result.nnz:5.1f} B/nnz",
        flush=True,
    )
    return row


def dense_against_sparse(name: str, dense, sparse, x, repeats: int) -> None:
    """One dense call (chunked) against the best later sparse call, at the same point."""
    sparse(x)
    sparse_time = best(lambda: sparse(x), repeats)
    start = time.perf_counter()
    matrix = dense(x)
    dense_time = time.perf_counter() - start
    assert np.allclose(np.asarray(matrix), sparse(x).toarray())
    del matrix
    gc.collect()
    print(
        f"{name:<22} n={x.size}: dense {dense_time:7.2f} s, sparse {sparse_time * 1e3:7.2f} ms: "
        f"{dense_time / sparse_time:8.0f}x faster",
        flush=True,
    )


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
        if n == 10**5:
            side = 316
            energy = laplacian_energy(side)
            case("2-D Laplacian energy H", sparse_hessian, energy, side * side, options.repeats)

    if not options.quick:
        n = 10**4
        x = np.random.default_rng(2).random(n)
        dense_against_sparse(
            "1-D stencil jacfwd",
            jacfwd(stencil_1d, chunk_size=1000),
            sparse_jacobian(stencil_1d),
            x,
            options.repeats,
        )
        dense_against_sparse(
            "2-D stencil jacfwd",
            jacfwd(stencil_2d(100), chunk_size=1000),
            sparse_jacobian(stencil_2d(100)),
            x,
            options.repeats,
        )
        dense_against_sparse(
            "Rosenbrock hessian",
            hessian(rosenbrock, chunk_size=1000),
            sparse_hessian(rosenbrock),
            x,
            options.repeats,
        )


if __name__ == "__main__":
    main()
