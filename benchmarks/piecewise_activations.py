"""Forward + backward of the piecewise activations of ``dualad.nn.functional`` as one op each
(``dualad/ops/piecewise_activations.py``) against the compositions of ``where`` and arithmetic
they replaced (written out below, as they were), interleaved in one process.

Run: ``python benchmarks/piecewise_activations.py [--repeats N]``. For each function and shape
((8,) and (1000,)) it prints the best time of ``y = f(x); y.sum().backward()`` over N rounds
(each round times a batch of calls), for the composition and the op, and their ratio
(composition / op: above 1 means the op is faster). Ratios, not absolute times: the machine
may be shared.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dualad
import dualad.nn.functional as F
from dualad import ops


def old_hardsigmoid(x):
    inside = (x > -3) & (x < 3)
    return ops.where(inside, x / 6 + 0.5, ops.astype(x >= 3, x.dtype))


def old_hardswish(x):
    inside = ops.where((x > -3) & (x < 3), x, 0.0)
    middle = inside * (inside + 3) / 6
    return ops.where(x <= -3, 0.0, ops.where(x >= 3, x, middle))


def old_hardshrink(x, lambd=0.5):
    return ops.where(ops.abs(x) > lambd, x, 0.0)


def old_softshrink(x, lambd=0.5):
    shrunk = ops.where(x > 0, x - lambd, x + lambd)
    return ops.where(ops.abs(x) > lambd, shrunk, 0.0)


def old_threshold(x, threshold=0.2, value=-1.0):
    return ops.where(x > threshold, x, value)


SLOPE = dualad.tensor(0.25)


def old_prelu(x):
    return ops.where(x > 0, x, SLOPE * x)


def old_glu(x, dim=-1):
    size = x.shape[dim]
    return ops.narrow(x, dim, 0, size // 2) * ops.sigmoid(ops.narrow(x, dim, size // 2, size // 2))


PAIRS = {
    "hardsigmoid": (old_hardsigmoid, F.hardsigmoid),
    "hardswish": (old_hardswish, F.hardswish),
    "hardshrink": (old_hardshrink, F.hardshrink),
    "softshrink": (old_softshrink, F.softshrink),
    "threshold": (old_threshold, lambda x: F.threshold(x, 0.2, -1.0)),
    "prelu": (old_prelu, lambda x: ops.prelu(x, SLOPE)),  # both without F.prelu's checks
    "glu": (old_glu, F.glu),
}


def _time(f, x, calls):
    start = time.perf_counter()
    for _ in range(calls):
        f(x).sum().backward()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'function':<12} {'shape':>8} {'composition':>12} {'op':>10} {'ratio':>6}")
    for name, (old, new) in PAIRS.items():
        for n in (8, 1000):
            x = dualad.tensor(rng.uniform(-5, 5, n), requires_grad=True)
            y_old, y_new = old(x), new(x)
            assert np.allclose(y_old.detach().numpy(), y_new.detach().numpy())
            calls = 200 if n == 8 else 50
            best_old = best_new = float("inf")
            for _ in range(args.repeats):  # interleaved: both see the same machine load
                best_old = min(best_old, _time(old, x, calls))
                best_new = min(best_new, _time(new, x, calls))
            print(
                f"{name:<12} {f'({n},)':>8} {best_old * 1e6:>10.1f}us {best_new * 1e6:>8.1f}us "
                f"{best_old / best_new:>6.2f}"
            )


if __name__ == "__main__":
    main()
