"""Cost of NumPy's ufunc protocol on tensors: ``np.sin(t)`` against ``dualad.sin(t)`` and
``np.add(t, t)`` against ``t + t`` on small arrays (shape (8,)), for an untracked tensor and
one that requires grad (issue 13's target: the protocol at most 1.3x the dualad call).

Run: ``python benchmarks/numpy_protocol.py`` (``--number N`` calls per timing, best of
``--repeat``). Prints microseconds per call and the ratio protocol / dualad.
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


def best_us(fn, number: int, repeat: int) -> float:
    """The best of ``repeat`` timings of ``number`` calls, in microseconds per call."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    print(f"{'case':<34}{'protocol us':>12}{'dualad us':>11}{'ratio':>8}")
    for label, requires_grad in (("untracked", False), ("requires_grad", True)):
        t = dualad.tensor(np.linspace(0.1, 0.8, 8), requires_grad=requires_grad)
        for name, protocol, direct in _pairs(t, np.ones(8)):
            p = best_us(protocol, options.number, options.repeat)
            d = best_us(direct, options.number, options.repeat)
            print(f"{name + ' (' + label + ')':<34}{p:>12.3f}{d:>11.3f}{p / d:>8.2f}")


def _pairs(t, a):
    """(case, the NumPy-protocol call, the direct dualad call) for tensor ``t``, array ``a``
    (a function of its own, so each lambda closes over this call's ``t`` and ``a``)."""
    return (
        ("np.sin(t) / dualad.sin(t)", lambda: np.sin(t), lambda: dualad.sin(t)),
        ("np.add(t, t) / t + t", lambda: np.add(t, t), lambda: t + t),
        ("ndarray + t / t + ndarray", lambda: a + t, lambda: t + a),
    )


if __name__ == "__main__":
    main()
