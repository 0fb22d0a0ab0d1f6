"""Eager per-op cost of dualad's W1 (fwd+bwd) and W7 (jvp) chains as ratios to NumPy by hand.

Run: ``python benchmarks/eager_ratios.py`` (``--rounds N``). Every workload is timed in the same
process, interleaved (one short batch of each per round), and the best batch of all rounds is
kept, so a loaded machine shifts all of them alike and the ratios hold (batches of one call by
default: shorter than a time slice, so the best batch ran unpreempted). The baselines are the
chains written by hand in NumPy: the forward with its reverse pass (saving what it reads), and
the forward with its tangent pass. When PyTorch or HIPS autograd are importable (the peers'
environment of ../shared/bench), their W1 and W7 are timed in the same rounds too, for the
issue's targets (W1 <= 0.5x torch eager, W7 <= 0.25x autograd).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from overhead import CYCLES, chain  # (this folder: the script's own path comes first)

import dualad
from dualad.func import jvp

OPS = CYCLES * 8


def numpy_fwd_bwd(x):
    """The chain's sum and its gradient, by hand: the forward saves what the reverse reads."""
    saved = []
    h = x
    for _ in range(CYCLES):
        p = h * x
        s = np.sin(p)
        a = s + x
        t = np.tanh(a)
        e = np.exp(t)
        d = e / x
        saved.append((h, p, t, e, d))
        h = d * 0.7 + -0.2
    total = h.sum()
    g = np.ones_like(x)
    gx = np.zeros_like(x)
    for h, p, t, e, d in reversed(saved):
        g = g * 0.7
        gx -= g * d / x
        g = g / x * e
        g = g * (1 - t * t)
        gx += g
        g = g * np.cos(p)
        gx += g * h
        g = g * x
    return total, gx + g


def numpy_jvp(x, v):
    """The chain's sum and its derivative along ``v``, by hand (a tangent beside each value)."""
    h, dh = x, v
    for _ in range(CYCLES):
        h, dh = h * x, dh * x + h * v
        c = np.cos(h)
        h = np.sin(h)
        dh = dh * c
        h, dh = h + x, dh + v
        h = np.tanh(h)
        dh = dh * (1 - h * h)
        h = np.exp(h)
        dh = dh * h
        h, dh = h / x, (dh - h / x * v) / x
        h, dh = h * 0.7, dh * 0.7
        h = h + -0.2
    return h.sum(), dh.sum()


def workloads() -> dict:
    x0 = np.random.default_rng(1).uniform(0.5, 1.5, size=(8,))
    v0 = np.random.default_rng(2).standard_normal(8)
    x = dualad.tensor(x0, requires_grad=True)
    xv, vv = dualad.tensor(x0), dualad.tensor(v0)

    def w1():
        x.grad = None
        chain(x, dualad.sin, dualad.exp, dualad.tanh).sum().backward()
        return x.grad

    def f(t):
        return chain(t, dualad.sin, dualad.exp, dualad.tanh).sum()

    def w7():
        return jvp(f, (xv,), (vv,))

    found = {
        "W1 numpy by hand": lambda: numpy_fwd_bwd(x0),
        "W1 dualad": w1,
        "W7 numpy by hand": lambda: numpy_jvp(x0, v0),
        "W7 dualad": w7,
    }
    # the results must agree before anything is timed
    _, grad = numpy_fwd_bwd(x0)
    np.testing.assert_allclose(w1().numpy(), grad, rtol=1e-10)
    primal, tangent = w7()
    np.testing.assert_allclose([primal.item(), tangent.item()], numpy_jvp(x0, v0), rtol=1e-10)
    try:
        import torch  # (optional: the peers' environment)

        torch.set_num_threads(1)
        xt = torch.tensor(x0, requires_grad=True)

        def w1_torch():
            xt.grad = None
            chain(xt, torch.sin, torch.exp, torch.tanh).sum().backward()
            return xt.grad

        found["W1 torch eager"] = w1_torch
    except ImportError:
        pass
    try:
        import autograd  # (optional: the peers' environment)
        import autograd.numpy as anp

        def g(t):
            return chain(t, anp.sin, anp.exp, anp.tanh).sum()

        found["W7 autograd"] = lambda: autograd.make_jvp(g)(x0)(v0)
    except ImportError:
        pass
    return found


def measure(found: dict, rounds: int, number: int) -> dict:
    best = dict.fromkeys(found, float("inf"))
    for fn in found.values():  # warm-up (compiled passes are made on the second sight)
        for _ in range(3):
            fn()
    for _ in range(rounds):
        for name, fn in found.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--number", type=int, default=1)
    args = parser.parse_args()
    best = measure(workloads(), args.rounds, args.number)
    print(f"{'workload':20s} {'us/op':>7s} {'x by hand':>10s}")
    for name, seconds in best.items():
        base = best[name[:2] + " numpy by hand"]
        print(f"{name:20s} {seconds / OPS * 1e6:7.3f} {seconds / base:10.2f}")
    if "W1 torch eager" in best:
        print(f"W1 dualad / torch eager: {best['W1 dualad'] / best['W1 torch eager']:.2f}")
    if "W7 autograd" in best:
        print(f"W7 dualad / autograd:    {best['W7 dualad'] / best['W7 autograd']:.2f}")


if __name__ == "__main__":
    main()
