"""Per-op overhead and small-workload timings of dualad against raw NumPy.

Run: ``python benchmarks/overhead.py`` (add ``--quick`` for a smoke run). The workloads mirror
W1/W2/W7 of the side-by-side harness in ../shared/bench (which also times PyTorch, JAX, autograd
and MyGrad); this script needs only dualad and NumPy, so it runs anywhere.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

import dualad
from dualad.func import jvp

CYCLES = 25  # 8 ops per cycle -> 200 elementwise ops


def chain(x, sin, exp, tanh):
    h = x
    for _ in range(CYCLES):
        h = h * x
        h = sin(h)
        h = h + x
        h = tanh(h)
        h = exp(h)
        h = h / x
        h = h * 0.7
        h = h + -0.2
    return h


def best(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    number, repeat = (20, 3) if args.quick else (200, 7)
    ops = CYCLES * 8

    x0 = np.random.default_rng(1).uniform(0.5, 1.5, size=(8,))
    v0 = np.random.default_rng(2).standard_normal(8)
    x = dualad.tensor(x0, requires_grad=True)

    def fwd_bwd():
        x.grad = None
        chain(x, dualad.sin, dualad.exp, dualad.tanh).sum().backward()
        return x.grad

    def fwd_nograd():
        with dualad.no_grad():
            return chain(x, dualad.sin, dualad.exp, dualad.tanh).sum()

    def numpy_fwd():
        return chain(x0, np.sin, np.exp, np.tanh).sum()

    xv, vv = dualad.tensor(x0), dualad.tensor(v0)

    def jvp_chain():
        return jvp(lambda t: chain(t, dualad.sin, dualad.exp, dualad.tanh).sum(), (xv,), (vv,))

    print(f"{'workload':34s} {'us/op':>8s}")
    for name, fn in [
        ("W1 numpy forward", numpy_fwd),
        ("W1 forward, no_grad", fwd_nograd),
        ("W1 forward + backward", fwd_bwd),
        ("W7 jvp (forward mode)", jvp_chain),
    ]:
        print(f"{name:34s} {best(fn, number, repeat) / ops * 1e6:8.2f}")

    rng = np.random.default_rng(2)
    X = rng.standard_normal((512, 1024))
    W1 = rng.standard_normal((1024, 1024)) / 32
    W2 = rng.standard_normal((1024, 256)) / 32
    tX, tW1, tW2 = (
        dualad.tensor(X),
        dualad.tensor(W1, requires_grad=True),
        dualad.tensor(W2, requires_grad=True),
    )

    def mlp_numpy():
        y = np.tanh(X @ W1) @ W2
        return (y * y).sum()

    def mlp_fwd_bwd():
        tW1.grad = None
        tW2.grad = None
        y = dualad.tanh(tX @ tW1) @ tW2
        (y * y).sum().backward()

    base = best(mlp_numpy, 3, 3 if args.quick else 5)
    ours = best(mlp_fwd_bwd, 3, 3 if args.quick else 5)
    print(f"{'W2 numpy forward (ms)':34s} {base * 1e3:8.2f}")
    print(f"{'W2 forward + backward (ms)':34s} {ours * 1e3:8.2f}  ({ours / base:.2f}x numpy fwd)")


if __name__ == "__main__":
    main()
