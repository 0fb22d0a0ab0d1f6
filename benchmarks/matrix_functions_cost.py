"""What the derivatives of scipy.linalg's matrix functions and equations cost (issue 14):
each rule against its own forward call, at one size.

Run: ``python benchmarks/matrix_functions_cost.py`` (``--n N``, ``--repeat R``). Interleaved,
best of ``R``: ``forward`` is dualad's call (SciPy's value underneath), ``vjp`` the pullback
alone (recorded beforehand), ``jvp`` forward and tangent together. Expectations from the
rules: the block-matrix rules (``f`` of ``[[A, E], [0, A]]``) cost ``f`` on a matrix twice
the size, about 8 times the forward's flops; ``sqrtm`` and ``polar`` solve one Sylvester
equation with one Schur factorisation (about the forward); the equations solve one more
equation with the same coefficients (about the forward). Set ``OPENBLAS_NUM_THREADS=1`` on a
shared machine.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import dualad
from dualad import func, linalg


def interleaved(first, second, repeat: int) -> tuple[float, float]:
    times = ([], [])
    for _ in range(repeat):
        for fn, out in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return min(times[0]), min(times[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    n, repeat = args.n, args.repeat
    rng = np.random.default_rng(0)
    near_identity = np.eye(n) + 0.3 * rng.standard_normal((n, n)) / np.sqrt(n)
    signs = 2 * np.diag(np.sign(rng.standard_normal(n)))
    g = dualad.tensor(rng.standard_normal((n, n)))
    unary = {
        "logm": (linalg.logm, near_identity),
        "sqrtm": (linalg.sqrtm, near_identity),
        "fractional_matrix_power(0.3)": (
            lambda x: linalg.fractional_matrix_power(x, 0.3),
            near_identity,
        ),
        "signm": (linalg.signm, rng.standard_normal((n, n)) / np.sqrt(n) + signs),
        "cosm": (linalg.cosm, near_identity),
        "tanhm": (linalg.tanhm, near_identity),
        "expm": (linalg.expm, near_identity),
        "polar (U only)": (lambda x: linalg.polar(x)[0], near_identity),
    }
    print(f"n = {n}, best of {repeat}: rule time / forward time")
    for name, (fn, value) in unary.items():
        x = dualad.tensor(value)
        _, pullback = func.vjp(fn, x)
        forward, vjp = interleaved(lambda f=fn, x=x: f(x), lambda p=pullback: p(g), repeat)
        _, jvp = interleaved(lambda: None, lambda f=fn, x=x: func.jvp(f, (x,), (g,)), repeat)
        print(
            f"{name:30s} forward {forward * 1e3:8.2f} ms  vjp {vjp / forward:5.2f}x  "
            f"forward+jvp {jvp / forward:5.2f}x"
        )
    a = dualad.tensor(2 * np.eye(n) + 0.3 * rng.standard_normal((n, n)) / np.sqrt(n))
    equations = {
        "solve_sylvester(a, a^T, q)": lambda a, q: linalg.solve_sylvester(a, a.mT, q),
        "solve_continuous_lyapunov": linalg.solve_continuous_lyapunov,
        "solve_discrete_lyapunov": lambda a, q: linalg.solve_discrete_lyapunov(0.2 * a, q),
    }
    for name, fn in equations.items():
        _, pullback = func.vjp(fn, a, g)
        forward, vjp = interleaved(lambda fn=fn: fn(a, g), lambda p=pullback: p(g), repeat)
        print(f"{name:30s} forward {forward * 1e3:8.2f} ms  vjp (a and q) {vjp / forward:5.2f}x")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main()
