"""The spectral decompositions at the LAPACK floor (issue 14, item 8): the backward pass of
``eigh`` and ``svd`` against their forward LAPACK call, at n = 512.

Run: ``python benchmarks/spectral_floor.py`` (``--quick`` for n = 128, ``--n N`` to choose).
For each decomposition it times, best of several runs:

- ``forward``: NumPy's call alone (``numpy.linalg.eigh``, ``numpy.linalg.svd``);
- ``backward``: dualad's VJP alone (the graph recorded beforehand, ``backward`` through a
  loss of both outputs: the eigen/singular vector terms are all exercised);
- ``fwd+bwd``: dualad's forward with the graph and its backward, against the forward.

The goal is backward <= 1.5x forward. PyTorch's and JAX's figures for the same workloads come
from ``benchmarks/spectral_floor_peers.py`` (run it with the peers' interpreter).
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

import dualad


def best(fn, repeat: int) -> float:
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def _hermitian(n: int, rng) -> np.ndarray:
    a = rng.standard_normal((n, n))
    return (a + a.T) / 2


def eigh_case(n: int, repeat: int) -> dict:
    a = _hermitian(n, np.random.default_rng(0))
    w = dualad.tensor(np.linspace(1.0, 2.0, n))
    c = dualad.tensor(np.random.default_rng(1).standard_normal((n, n)))

    def loss():
        x = dualad.tensor(a, requires_grad=True)
        L, V = dualad.linalg.eigh(x)
        return (L * w).sum() + (V * c).sum()

    def backward():
        loss().backward()

    out = loss()
    forward = best(lambda: np.linalg.eigh(a), repeat)

    def backward_only():
        out.backward(retain_graph=True)

    return {
        "forward": forward,
        "backward": best(backward_only, repeat),
        "fwd+bwd": best(backward, repeat),
    }


def svd_case(n: int, repeat: int) -> dict:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n))
    w = dualad.tensor(np.linspace(1.0, 2.0, n))
    c = dualad.tensor(rng.standard_normal((n, n)))
    d = dualad.tensor(rng.standard_normal((n, n)))

    def loss():
        x = dualad.tensor(a, requires_grad=True)
        U, S, Vh = dualad.linalg.svd(x, full_matrices=False)
        return (S * w).sum() + (U * c).sum() + (Vh * d).sum()

    def backward():
        loss().backward()

    out = loss()
    forward = best(lambda: np.linalg.svd(a, full_matrices=False), repeat)

    def backward_only():
        out.backward(retain_graph=True)

    return {
        "forward": forward,
        "backward": best(backward_only, repeat),
        "fwd+bwd": best(backward, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None)
    args = parser.parse_args()
    n = args.n or (128 if args.quick else 512)
    repeat = 3 if args.quick else 7
    print(f"n = {n}, best of {repeat} (seconds; ratio to NumPy's forward call)")
    for name, case in (("eigh", eigh_case), ("svd", svd_case)):
        t = case(n, repeat)
        f = t["forward"]
        print(
            f"{name:5s} forward {f * 1e3:8.2f} ms | backward {t['backward'] * 1e3:8.2f} ms "
            f"({t['backward'] / f:4.2f}x) | fwd+bwd {t['fwd+bwd'] * 1e3:8.2f} ms "
            f"({t['fwd+bwd'] / f:4.2f}x)"
        )


if __name__ == "__main__":
    main()
