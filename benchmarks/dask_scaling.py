"""Speed-up of ``dualad.dask.jacobian`` on a LocalCluster of 2 worker processes over 1.

Run: ``python benchmarks/dask_scaling.py`` (``--n``, ``--hidden``, ``--block-size``,
``--repeat``; ``--workers 1 2 4`` for more cluster sizes). The Jacobian is dense: ``x -> W2
tanh(W1 x)`` with ``n`` inputs and outputs, in reverse mode, one task per ``block-size`` rows
(each task: one forward pass and a vmap'd backward pass over its rows). The defaults give tasks
of a few hundred milliseconds, so that dask's own overhead (a millisecond per task) does not
count. Each cluster (one thread per worker process) computes the Jacobian once to warm up (the
workers import dualad and receive the weights), then ``--repeat`` times; the best time is
reported, with ``dualad.func.jacrev`` in this process (one core) as the reference. On a loaded
machine the ratios move: measure on an idle one with at least as many cores as workers.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import dualad
import dualad.dask
from dualad.func import jacrev


def problem(n: int, hidden: int):
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((hidden, n)) / np.sqrt(n)
    w2 = rng.standard_normal((n, hidden)) / np.sqrt(hidden)

    def f(x):
        return dualad.tensor(w2) @ dualad.tanh(dualad.tensor(w1) @ x)

    return f, rng.standard_normal(n)


def best_of(repeat: int, run) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    from distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--hidden", type=int, default=3000)
    parser.add_argument("--block-size", type=int, default=250)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    f, x = problem(args.n, args.hidden)
    print(
        f"dense Jacobian {args.n} x {args.n} (hidden {args.hidden}), mode rev, "
        f"{-(-args.n // args.block_size)} tasks of {args.block_size} rows; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"
    )
    single, reference = best_of(args.repeat, lambda: jacrev(f)(x))
    print(f"{'dualad.func.jacrev, this process':34s} {single:8.2f} s")
    times = {}
    for workers in args.workers:
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):

            def run(client=client):
                J = dualad.dask.jacobian(f, x, block_size=args.block_size, client=client)
                return J.compute()

            run()  # warm-up: imports and the weights on every worker
            seconds, result = best_of(args.repeat, run)
            np.testing.assert_allclose(result, reference, rtol=1e-10, atol=1e-12)
            times[workers] = seconds
            tasks = -(-args.n // args.block_size)
            per_task = seconds * workers / tasks
            speedup = times[args.workers[0]] / seconds
            print(
                f"{f'LocalCluster, {workers} worker(s)':34s} {seconds:8.2f} s   "
                f"{per_task * 1e3:6.0f} ms per task   x{speedup:.2f} over "
                f"{args.workers[0]} worker(s)"
            )


if __name__ == "__main__":
    main()
