"""What ``dualad.numpy`` functions and NumPy's ``__array_function__`` protocol cost on small
arrays, against the dualad op or method they end in.

Run: ``python benchmarks/numpy_functions_dispatch.py`` (``--number`` calls per timing). Each
line is the best of 7 timings, in microseconds per call, and the ratio to the first call of its
group (the target of issue 13: ``dualad.numpy.sum(t)`` at most 1.2x ``t.sum()``). NumPy's
protocol adds NumPy's own dispatch (its ``_ArrayFunctionDispatcher`` gathering the argument
types) to the ``dualad.numpy`` function it calls.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit

import numpy as np

# the checkout this script belongs to, not whichever dualad is installed
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dualad
import dualad.numpy as dnp


def groups(t, m):
    return {
        "sum": [
            ("t.sum()", lambda: t.sum()),
            ("dualad.numpy.sum(t)", lambda: dnp.sum(t)),
            ("numpy.sum(t)", lambda: np.sum(t)),
            ("numpy.sum(ndarray)", lambda: np.sum(m)),
        ],
        "mean over an axis": [
            ("t.mean(axis=0)", lambda: t.mean(axis=0)),
            ("dualad.numpy.mean(t, axis=0)", lambda: dnp.mean(t, axis=0)),
            ("numpy.mean(t, axis=0)", lambda: np.mean(t, axis=0)),
        ],
        "reshape": [
            ("t.reshape(5, 2)", lambda: t.reshape(5, 2)),
            ("dualad.numpy.reshape(t, (5, 2))", lambda: dnp.reshape(t, (5, 2))),
            ("numpy.reshape(t, (5, 2))", lambda: np.reshape(t, (5, 2))),
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000)
    args = parser.parse_args()
    m = np.ones((2, 5)).ravel()
    t = dualad.tensor(m)
    for name, calls in groups(t, m).items():
        print(name)
        base = None
        for label, fn in calls:
            best = min(timeit.repeat(fn, number=args.number, repeat=7)) / args.number * 1e6
            base = base or best
            print(f"  {label:34s} {best:7.2f} us  {best / base:5.2f}x")


if __name__ == "__main__":
    main()
