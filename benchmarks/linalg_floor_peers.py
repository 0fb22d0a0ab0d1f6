"""``benchmarks/linalg_floor.py``'s cases through PyTorch and JAX, for the figures beside
dualad's (imports only torch, jax and numpy: run it with the peers' interpreter, e.g.
``/root/.venvs/ad-peers/bin/python benchmarks/linalg_floor_peers.py``).

Same inputs, same losses, float64, CPU; the best wall time of the gradient (forward and
backward) over ``--repeat`` rounds, interleaved with the forward NumPy call of the same row
(NumPy of this interpreter); JAX's functions are jitted (compiled once before timing),
PyTorch's run eagerly.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best(fn, repeat: int, clock=time.perf_counter) -> float:
    """The best time of ``fn`` over ``repeat`` runs (after one warm-up run)."""
    return interleaved([fn], repeat, clock)[0]


def interleaved(fns, repeat: int, clock=time.perf_counter) -> list[float]:
    """The best time of each of ``fns`` over ``repeat`` rounds, each round running every
    function once: on a loaded machine the functions of one row see the same load, so their
    ratios hold better than those of times taken one after another. ``clock`` is wall time,
    or ``time.process_time`` (the process's CPU time: on a machine shared with other work,
    and with one BLAS thread, what the work costs whatever else runs)."""
    for fn in fns:
        fn()
    times = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = clock()
            fn()
            times[i] = min(times[i], clock() - start)
    return times


def clock_of(args):
    """The clock ``--cpu-time`` asks for."""
    return time.process_time if args.cpu_time else time.perf_counter


def inputs(n: int, gauss_n: int):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)) + np.sqrt(n) * np.eye(n)
    b = rng.standard_normal(n)
    m = rng.standard_normal((n, n))
    s = m @ m.T / n + np.eye(n)
    g = rng.standard_normal((n, n))
    mg = rng.standard_normal((gauss_n, gauss_n))
    sg = mg @ mg.T / gauss_n + np.eye(gauss_n)
    x, mu = rng.standard_normal(gauss_n), rng.standard_normal(gauss_n)
    return a, b, s, g, sg, x, mu


def eigh_cotangents(n: int):
    """The cotangents of the eigh case: ``loss = sum(gw * w) + sum(gv * v)``."""
    rng = np.random.default_rng(1)
    return rng.standard_normal(n), rng.standard_normal((n, n))


def torch_cases(a, b, s, g, sg, x, mu):
    import torch

    torch.set_default_dtype(torch.float64)
    ta, tb, ts, tg = (torch.tensor(v) for v in (a, b, s, g))
    tsg, tx, tmu = (torch.tensor(v) for v in (sg, x, mu))

    def slogdet():
        t = ta.clone().requires_grad_()
        return torch.autograd.grad(torch.linalg.slogdet(t).logabsdet, t)

    def solve():
        t, u = ta.clone().requires_grad_(), tb.clone().requires_grad_()
        return torch.autograd.grad(torch.linalg.solve(t, u).sum(), (t, u))

    def cholesky():
        t = ts.clone().requires_grad_()
        return torch.autograd.grad((torch.linalg.cholesky(t) * tg).sum(), t)

    def gaussian():
        t, m_ = tsg.clone().requires_grad_(), tmu.clone().requires_grad_()
        lower = torch.linalg.cholesky(t)
        z = torch.linalg.solve_triangular(lower, (tx - m_)[:, None], upper=False)
        loss = 0.5 * (z * z).sum() + torch.log(torch.diagonal(lower)).sum()
        return torch.autograd.grad(loss, (t, m_))

    gw, gv = (torch.tensor(v) for v in eigh_cotangents(len(a)))

    def eigh():
        t = ts.clone().requires_grad_()
        w, v = torch.linalg.eigh(t)
        return torch.autograd.grad((w * gw).sum() + (v * gv).sum(), t)

    return {
        "slogdet": slogdet,
        "solve": solve,
        "cholesky": cholesky,
        "eigh": eigh,
        "gaussian": gaussian,
    }


def jax_cases(a, b, s, g, sg, x, mu):
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    ja, jb, js, jg, jsg, jx, jmu = (jnp.asarray(v) for v in (a, b, s, g, sg, x, mu))
    slogdet = jax.jit(jax.grad(lambda t: jnp.linalg.slogdet(t)[1]))
    solve = jax.jit(jax.grad(lambda t, u: jnp.linalg.solve(t, u).sum(), argnums=(0, 1)))
    cholesky = jax.jit(jax.grad(lambda t: (jnp.linalg.cholesky(t) * jg).sum()))

    def loss(t, m_):
        lower = jnp.linalg.cholesky(t)
        z = jsl.solve_triangular(lower, jx - m_, lower=True)
        return 0.5 * (z * z).sum() + jnp.log(jnp.diagonal(lower)).sum()

    gaussian = jax.jit(jax.grad(loss, argnums=(0, 1)))
    jgw, jgv = (jnp.asarray(v) for v in eigh_cotangents(len(a)))

    def eigh_loss(t):
        w, v = jnp.linalg.eigh(t)
        return (w * jgw).sum() + (v * jgv).sum()

    eigh = jax.jit(jax.grad(eigh_loss))

    def block(fn, *args):
        return lambda: jax.block_until_ready(fn(*args))

    return {
        "slogdet": block(slogdet, ja),
        "solve": block(solve, ja, jb),
        "cholesky": block(cholesky, js),
        "eigh": block(eigh, js),
        "gaussian": block(gaussian, jsg, jmu),
    }


def parse_args(doc: str) -> argparse.Namespace:
    """The sizes and repeats of both linalg_floor scripts."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--gauss-n", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by the process's CPU time (a loaded machine; set OPENBLAS_NUM_THREADS=1 "
        "and the peers' thread counts to 1 too, or CPU time counts waiting threads)",
    )
    return parser.parse_args()


def main() -> None:
    args = parse_args(__doc__)
    data = inputs(args.n, args.gauss_n)
    a, b, s, _, sg, _, _ = data
    forward = {
        "slogdet": lambda: np.linalg.slogdet(a),
        "solve": lambda: np.linalg.solve(a, b),
        "cholesky": lambda: np.linalg.cholesky(s),
        "eigh": lambda: np.linalg.eigh(s),
        "gaussian": lambda: np.linalg.cholesky(sg),
    }
    peers = {"torch": torch_cases(*data), "jax": jax_cases(*data)}
    header = f"{'case':<12}{'numpy fwd':>11}" + "".join(
        f"{name + ' grad':>13}{'/fwd':>7}" for name in peers
    )
    print(header)
    print("-" * len(header))
    for case, fwd in forward.items():
        fns = [fwd] + [cases[case] for cases in peers.values()]
        t_fwd, *times = interleaved(fns, args.repeat, clock_of(args))
        row = f"{case:<12}{t_fwd * 1e3:>9.1f}ms"
        for t in times:
            row += f"{t * 1e3:>11.1f}ms{t / t_fwd:>7.2f}"
        print(row)


if __name__ == "__main__":
    main()
