"""PyTorch's and JAX's figures for ``benchmarks/spectral_floor.py``: the backward pass of
``eigh`` and ``svd`` against their forward call, at n = 512 (CPU, float64).

Run with the interpreter that has the peers installed (it imports only torch, jax and numpy)::

    /root/.venvs/ad-peers/bin/python benchmarks/spectral_floor_peers.py [--quick] [--n N]

Each library's backward is timed alone (PyTorch: ``backward`` on a retained graph; JAX: the
``vjp`` function applied, jitted) and with its forward, against its own forward call.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np


def best(fn, repeat: int) -> float:
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def data(n: int):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n))
    return (a + a.T) / 2, np.random.default_rng(2).standard_normal((n, n))


def torch_figures(n: int, repeat: int) -> None:
    import torch

    torch.set_default_dtype(torch.float64)
    h, g = data(n)
    w = torch.linspace(1.0, 2.0, n)
    c = torch.from_numpy(np.random.default_rng(1).standard_normal((n, n)))
    for name, decompose, loss in (
        ("eigh", torch.linalg.eigh, lambda out: (out[0] * w).sum() + (out[1] * c).sum()),
        (
            "svd",
            lambda x: torch.linalg.svd(x, full_matrices=False),
            lambda out: (out[1] * w).sum() + (out[0] * c).sum() + (out[2] * c).sum(),
        ),
    ):
        _torch_case(name, decompose, loss, torch.from_numpy(h if name == "eigh" else g), repeat)


def _torch_case(name, decompose, loss, a, repeat) -> None:
    forward = best(lambda: decompose(a), repeat)
    out = loss(decompose(a.clone().requires_grad_(True)))
    backward = best(lambda: out.backward(retain_graph=True), repeat)

    def both():
        loss(decompose(a.clone().requires_grad_(True))).backward()

    report("torch", name, forward, backward, best(both, repeat))


def jax_figures(n: int, repeat: int) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    h, g = data(n)
    w = jnp.linspace(1.0, 2.0, n)
    c = jnp.asarray(np.random.default_rng(1).standard_normal((n, n)))
    for name, decompose, loss in (
        ("eigh", jnp.linalg.eigh, lambda out: (out[0] * w).sum() + (out[1] * c).sum()),
        (
            "svd",
            lambda x: jnp.linalg.svd(x, full_matrices=False),
            lambda out: (out[1] * w).sum() + (out[0] * c).sum() + (out[2] * c).sum(),
        ),
    ):
        _jax_case(jax, name, decompose, loss, jnp.asarray(h if name == "eigh" else g), repeat)


def _jax_case(jax, name, decompose, loss, a, repeat) -> None:
    fwd = jax.jit(decompose)
    fwd(a)[0].block_until_ready()
    forward = best(lambda: fwd(a)[0].block_until_ready(), repeat)
    _, pullback = jax.vjp(lambda x: loss(decompose(x)), a)
    pull = jax.jit(pullback)
    pull(1.0)[0].block_until_ready()
    backward = best(lambda: pull(1.0)[0].block_until_ready(), repeat)
    grad = jax.jit(jax.grad(lambda x: loss(decompose(x))))
    grad(a).block_until_ready()
    report("jax", name, forward, backward, best(lambda: grad(a).block_until_ready(), repeat))


def report(lib, name, forward, backward, both) -> None:
    print(
        f"{lib:5s} {name:5s} forward {forward * 1e3:8.2f} ms | backward {backward * 1e3:8.2f} ms "
        f"({backward / forward:4.2f}x) | fwd+bwd {both * 1e3:8.2f} ms ({both / forward:4.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None)
    args = parser.parse_args()
    n = args.n or (128 if args.quick else 512)
    repeat = 3 if args.quick else 7
    print(f"n = {n}, best of {repeat}")
    torch_figures(n, repeat)
    jax_figures(n, repeat)


if __name__ == "__main__":
    main()
