"""The gradients of linalg ops next to the LAPACK calls they are made of (issue 14, item 8).

Run: ``python benchmarks/linalg_floor.py [--n 512] [--gauss-n 1000] [--repeat 20]``. Prints, for
each case, the best wall time of dualad's gradient (forward and backward), of the forward NumPy
call alone, and of a hand-written NumPy gradient, interleaved round by round (the three of a row
see the same load), with the ratios: ``grad/fwd``, ``bwd/fwd`` (``(grad - fwd) / fwd``, the
backward pass's share) and ``grad/hand``. The peers' figures come from
``benchmarks/linalg_floor_peers.py`` (PyTorch, JAX), run with their own interpreter. For a
before/after table run it twice, with ``PYTHONPATH`` at the two checkouts. On a machine busy
with other work, ``OPENBLAS_NUM_THREADS=1 ... --cpu-time`` times by CPU time instead.

The cases:

- ``slogdet``: ``grad logabsdet(A) = A^{-T}``; forward ``numpy.linalg.slogdet`` (getrf);
  the hand-written gradient is ``slogdet`` + ``inv`` (what the maths needs: the LU and the
  inverse, 2/3 n^3 + 4/3 n^3 flops, three times the forward's);
- ``solve``: ``grad sum(solve(A, b))`` in A and b (b a vector); forward ``numpy.linalg.solve``;
  by hand: ``lu_factor``, two ``lu_solve`` and an outer product;
- ``cholesky``: ``grad sum(G * cholesky(S))`` in S; forward ``numpy.linalg.cholesky``; by hand:
  the textbook formula ``sym(L^{-T} Phi(L^T G) L^{-1})`` with a general product and two
  ``solve_triangular`` (4 n^3 flops; dualad's rule, trmm and sygst, makes 2 n^3, against the
  factorisation's n^3 / 3);
- ``eigh``: ``grad sum(gw * w) + sum(gv * V)`` in S; forward ``numpy.linalg.eigh``; by hand:
  ``V (diag(gw) + skew(V^T gV) / E) V^T`` (three products); the goal is on the backward pass
  alone (``bwd/fwd``);
- ``gaussian``: ``0.5 r^T S^{-1} r + 0.5 logdet S`` (r = x - mu) through cholesky and a
  triangular solve, gradient in S and mu, at n = 1000; by hand: ``cho_factor`` and LAPACK's
  potri for ``S^{-1}``, ``gS = 0.5 (S^{-1} - a a^T)``, ``gmu = -a``.

The floors, in flops (real, n x n): a gradient costs its forward plus a backward pass, so
``grad/fwd >= 1 + backward / forward``. slogdet: forward getrf ``2 n^3 / 3``, the gradient
``A^{-T}`` needs the inverse from the LU (getri, ``4 n^3 / 3``): 3x the forward's flops;
below 1.5x only where getri runs faster per flop than getrf (several threads). solve with a
vector: the backward is one more getrs and an outer product, ``O(n^2)``: 1x. cholesky:
forward potrf ``n^3 / 3``; the backward ``L^{-H} Phi(L^H G) L^{-1}`` needs the lower triangle
of ``L^H G`` (``n^3 / 3`` at best, ``5 n^3 / 8`` here) and a Hermitian congruence (sygst,
``n^3``): 4x to 5x the forward's flops, and even reverse-mode through potrf's own loops costs
2x its flops, so 1.5x is below the floor. eigh: the forward (tridiagonalisation and
eigenvectors) is about ``9 n^3``, the backward three products (``6 n^3``). gaussian: by hand
potrf and potri (``n^3``); through cholesky's generic rule potrf and ``1.6 n^3``: 2x.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import scipy.linalg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from linalg_floor_peers import clock_of, eigh_cotangents, inputs, interleaved, parse_args

import dualad
from dualad import linalg


def cases(n: int, gauss_n: int):
    a, b, s, g, sg, x, mu = inputs(n, gauss_n)  # (the same inputs as the peers')

    def slogdet_grad():
        t = dualad.tensor(a, requires_grad=True)
        return dualad.autograd.grad(linalg.slogdet(t).logabsdet, t)

    def slogdet_by_hand():
        return np.linalg.slogdet(a)[1], np.linalg.inv(a).T

    def solve_grad():
        ta, tb = dualad.tensor(a, requires_grad=True), dualad.tensor(b, requires_grad=True)
        return dualad.autograd.grad(linalg.solve(ta, tb).sum(), (ta, tb))

    def solve_by_hand():
        lu = scipy.linalg.lu_factor(a, check_finite=False)
        x_ = scipy.linalg.lu_solve(lu, b, check_finite=False)
        g_b = scipy.linalg.lu_solve(lu, np.ones(n), trans=1, check_finite=False)
        return -np.outer(g_b, x_), g_b

    def cholesky_grad():
        t = dualad.tensor(s, requires_grad=True)
        return dualad.autograd.grad((linalg.cholesky(t) * dualad.tensor(g)).sum(), t)

    def cholesky_by_hand():
        lower = np.linalg.cholesky(s)
        inner = np.tril(lower.T @ g, -1) + 0.5 * np.diag(np.diag(lower.T @ g))
        left = scipy.linalg.solve_triangular(lower.T, inner, lower=False, check_finite=False)
        grad = scipy.linalg.solve_triangular(lower, left.T, lower=True, check_finite=False).T
        return 0.5 * (grad + grad.T)

    def gaussian_grad():
        ts, tmu = dualad.tensor(sg, requires_grad=True), dualad.tensor(mu, requires_grad=True)
        lower = linalg.cholesky(ts)
        z = linalg.solve_triangular(lower, dualad.tensor(x) - tmu, lower=True)
        loss = 0.5 * (z * z).sum() + dualad.log(dualad.diagonal(lower, 0, -2, -1)).sum()
        return dualad.autograd.grad(loss, (ts, tmu))

    def gaussian_by_hand():
        c, low = scipy.linalg.cho_factor(sg, lower=True, check_finite=False)
        alpha = scipy.linalg.cho_solve((c, low), x - mu, check_finite=False)
        inv, _ = scipy.linalg.lapack.dpotri(c, lower=True)
        inv = np.tril(inv) + np.tril(inv, -1).T
        return 0.5 * (inv - np.outer(alpha, alpha)), -alpha

    gw, gv = eigh_cotangents(n)

    def eigh_grad():
        t = dualad.tensor(s, requires_grad=True)
        w, v = linalg.eigh(t)
        loss = (w * dualad.tensor(gw)).sum() + (v * dualad.tensor(gv)).sum()
        return dualad.autograd.grad(loss, t)

    def eigh_by_hand():
        w, v = np.linalg.eigh(s)
        vg = v.T @ gv
        gaps = w[None, :] - w[:, None]
        np.fill_diagonal(gaps, np.inf)
        inner = 0.5 * (vg - vg.T) / gaps + np.diag(gw)
        return v @ inner @ v.T

    return [
        (f"slogdet n={n}", slogdet_grad, lambda: np.linalg.slogdet(a), slogdet_by_hand, 1.5),
        (f"solve n={n}", solve_grad, lambda: np.linalg.solve(a, b), solve_by_hand, 1.5),
        (f"cholesky n={n}", cholesky_grad, lambda: np.linalg.cholesky(s), cholesky_by_hand, 1.5),
        (f"eigh n={n}", eigh_grad, lambda: np.linalg.eigh(s), eigh_by_hand, "bwd"),
        (
            f"gaussian n={gauss_n}",
            gaussian_grad,
            lambda: np.linalg.cholesky(sg),
            gaussian_by_hand,
            None,
        ),
    ]


def main() -> None:
    args = parse_args(__doc__)
    header = (
        f"{'case':<18}{'dualad grad':>12}{'forward':>10}{'by hand':>10}"
        f"{'grad/fwd':>10}{'bwd/fwd':>9}{'grad/hand':>11}  goal"
    )
    print(header)
    print("-" * len(header))
    for name, grad, forward, by_hand, goal in cases(args.n, args.gauss_n):
        t_grad, t_fwd, t_hand = interleaved([grad, forward, by_hand], args.repeat, clock_of(args))
        if goal == "bwd":
            goal_text = "bwd/fwd <= 1.5"
        else:
            goal_text = f"grad/fwd <= {goal}" if goal else "grad/hand <= 2"
        print(
            f"{name:<18}{t_grad * 1e3:>10.1f}ms{t_fwd * 1e3:>8.1f}ms{t_hand * 1e3:>8.1f}ms"
            f"{t_grad / t_fwd:>10.2f}{(t_grad - t_fwd) / t_fwd:>9.2f}{t_grad / t_hand:>11.2f}"
            f"  {goal_text}"
        )


if __name__ == "__main__":
    main()
