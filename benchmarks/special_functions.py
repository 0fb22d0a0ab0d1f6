"""Gradients of dualad.special against the scipy.special calls they are made of.

For each function: the scipy forward call alone, dualad's forward, and dualad's forward plus
backward (``autograd.grad`` of the sum). The backward of a function whose derivative is another
special function costs about one more such call (gammaln -> digamma, i0 -> i1); one whose
derivative reuses the saved output (erfcx, ndtri, log_ndtr, i0e) costs a few elementwise ops.
With PyTorch importable (the peers' environment), ``torch.special``'s forward + backward too.

Run: ``python benchmarks/special_functions.py`` (``--quick`` for a smoke run, ``--n`` to size).
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np
import scipy.special as sp

import dualad
import dualad.special as special

try:  # optional: only to put PyTorch's figure beside ours
    import torch
except ImportError:
    torch = None

# name -> (dualad function, scipy reference, torch function or None, input range)
CASES = {
    "gammaln": (special.gammaln, sp.gammaln, "lgamma", (0.5, 20.0)),
    "digamma": (special.digamma, sp.psi, "digamma", (0.5, 20.0)),
    "i0": (special.i0, sp.i0, "i0", (-5.0, 5.0)),
    "i1": (special.i1, sp.i1, "special.i1", (-5.0, 5.0)),
    "i0e": (special.i0e, sp.i0e, "special.i0e", (-5.0, 5.0)),
    "erfcx": (special.erfcx, sp.erfcx, "special.erfcx", (-3.0, 30.0)),
    "ndtri": (special.ndtri, sp.ndtri, "special.ndtri", (0.01, 0.99)),
    "log_ndtr": (special.log_ndtr, sp.log_ndtr, "special.log_ndtr", (-30.0, 5.0)),
    "entr": (special.entr, sp.entr, "special.entr", (0.1, 3.0)),
}


def best(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def _torch_fn(path: str):
    fn = torch
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, repeat = (10_000, 1) if args.quick else (args.n, 5)
    rng = np.random.default_rng(0)
    header = f"{'function':10} {'scipy fwd':>10} {'dualad fwd':>11} {'fwd+bwd':>9} {'bwd/fwd':>8}"
    print(f"n = {n}, float64, best of {repeat} (ms)" + ("" if torch is None else "; torch"))
    print(header + ("" if torch is None else f" {'torch f+b':>10}"))
    for name, (fn, ref, torch_name, (low, high)) in CASES.items():
        x = rng.uniform(low, high, n)
        t_ref = best(lambda x=x, ref=ref: ref(x), 1, repeat)
        xt = dualad.tensor(x)
        t_fwd = best(lambda xt=xt, fn=fn: fn(xt), 1, repeat)
        xg = dualad.tensor(x, requires_grad=True)

        def both(xg=xg, fn=fn):
            return dualad.autograd.grad(fn(xg).sum(), xg)

        t_both = best(both, 1, repeat)
        line = f"{name:10} {t_ref * 1e3:10.2f} {t_fwd * 1e3:11.2f} {t_both * 1e3:9.2f}"
        line += f" {(t_both - t_fwd) / t_ref:8.2f}"
        if torch is not None:
            tfn = _torch_fn(torch_name)
            xtorch = torch.tensor(x, requires_grad=True)

            def torch_both(xtorch=xtorch, tfn=tfn):
                return torch.autograd.grad(tfn(xtorch).sum(), xtorch)

            line += f" {best(torch_both, 1, repeat) * 1e3:10.2f}"
        print(line)


if __name__ == "__main__":
    main()
