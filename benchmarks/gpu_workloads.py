"""GPU timings: dualad on CuPy (eager and jit) beside CuPy by hand, PyTorch CUDA and JAX.

The CPU harness (shared/bench) measures small problems where dispatch dominates; on a GPU the
interesting sizes are the large ones, where kernels dominate. Workloads (float64 unless
``--float32``), each checked against a hand-derived CuPy reference before it is timed:

- W2: two-layer MLP loss ``sum((tanh(X W1) W2)**2)``, forward + backward, X of 512x1024,
  W1 1024x1024, W2 1024x256 (also run at B=8192);
- W3: the Jacobian of ``tanh(A x) + x**2`` at n=4096 by jacrev and jacfwd;
- W6: per-example gradients of a logistic loss, B=65536, d=64 (``vmap(grad(loss))``).

Each library is skipped with its reason when it is not importable or sees no GPU. Times are the
median of ``--repeat`` runs after warm-up, each ended by a device synchronisation.

    python benchmarks/gpu_workloads.py [--repeat 20] [--float32]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _timed(run, sync, repeat):
    """Median seconds of ``run()`` followed by ``sync(its result)``, after three warm-ups."""
    for _ in range(3):
        sync(run())
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        sync(run())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _problems(dtype):
    r = np.random.default_rng(0)
    mlp = {}
    for batch in (512, 8192):
        mlp[batch] = (
            r.standard_normal((batch, 1024)).astype(dtype),
            (r.standard_normal((1024, 1024)) / 32).astype(dtype),
            (r.standard_normal((1024, 256)) / 32).astype(dtype),
        )
    n = 4096
    jac = (
        (r.standard_normal((n, n)) / np.sqrt(n)).astype(dtype),
        r.standard_normal(n).astype(dtype),
    )
    B, d = 65536, 64
    pe = (
        (r.standard_normal(d) / 8).astype(dtype),
        r.standard_normal((B, d)).astype(dtype),
        np.where(r.uniform(size=B) < 0.5, -1.0, 1.0).astype(dtype),
    )
    return mlp, jac, pe


def _references(cp, mlp, jac, pe):
    refs = {}
    for batch, (X, W1, W2) in mlp.items():
        X, W1, W2 = map(cp.asarray, (X, W1, W2))
        T = cp.tanh(X @ W1)
        Y = T @ W2
        dY = 2 * Y
        dW2 = T.T @ dY
        dW1 = X.T @ ((dY @ W2.T) * (1 - T * T))
        refs[f"W2[B={batch}]"] = (float((Y * Y).sum()), dW1, dW2)
    A, x = map(cp.asarray, jac)
    refs["W3"] = (1 - cp.tanh(A @ x) ** 2)[:, None] * A + cp.diag(2 * x)
    w, X, y = map(cp.asarray, pe)
    m = -y * (X @ w)
    refs["W6"] = (-y / (1 + cp.exp(-m)))[:, None] * X
    return refs


def _check(name, got, want, cp, rtol):
    got = [cp.asarray(g) for g in (got if isinstance(got, (tuple, list)) else (got,))]
    want = want if isinstance(want, (tuple, list)) else (want,)
    for g, w in zip(got, want):
        w = cp.asarray(w)
        scale = float(cp.abs(w).max()) or 1.0
        err = float(cp.abs(g - w).max()) / scale
        if err > rtol:
            raise AssertionError(f"{name}: relative error {err:.2e} > {rtol}")


def bench_cupy_by_hand(cp, mlp, jac, pe, repeat, out):
    sync = lambda _: cp.cuda.Device().synchronize()
    for batch, arrays in mlp.items():
        X, W1, W2 = map(cp.asarray, arrays)

        def run(X=X, W1=W1, W2=W2):
            T = cp.tanh(X @ W1)
            Y = T @ W2
            dY = 2 * Y
            return (Y * Y).sum(), X.T @ ((dY @ W2.T) * (1 - T * T)), T.T @ dY

        out[("cupy by hand", f"W2[B={batch}]")] = _timed(run, sync, repeat)
    A, x = map(cp.asarray, jac)
    out[("cupy by hand", "W3")] = _timed(
        lambda: (1 - cp.tanh(A @ x) ** 2)[:, None] * A + cp.diag(2 * x), sync, repeat
    )
    w, X, y = map(cp.asarray, pe)
    out[("cupy by hand", "W6")] = _timed(
        lambda: (-y / (1 + cp.exp(y * (X @ w))))[:, None] * X, sync, repeat
    )


def bench_dualad(cp, mlp, jac, pe, refs, repeat, out, rtol):
    import dualad
    from dualad import func

    sync = lambda _: cp.cuda.Device().synchronize()
    dev = "cuda"

    def mlp_loss(W1, W2, X):
        Y = dualad.tanh(X @ W1) @ W2
        return (Y * Y).sum()

    grad_mlp = func.grad_and_value(mlp_loss, argnums=(0, 1))
    jit_grad_mlp = dualad.jit(grad_mlp)
    for batch, arrays in mlp.items():
        X, W1, W2 = (dualad.tensor(a, device=dev) for a in arrays)
        W1r = dualad.tensor(arrays[1], device=dev, requires_grad=True)
        W2r = dualad.tensor(arrays[2], device=dev, requires_grad=True)

        def tape(X=X, W1r=W1r, W2r=W2r):
            W1r.grad = W2r.grad = None
            loss = mlp_loss(W1r, W2r, X)
            loss.backward()
            return loss, W1r.grad, W2r.grad

        _, g1, g2 = tape()
        want = refs[f"W2[B={batch}]"][1:]
        _check(f"dualad W2[B={batch}]", (g1.data, g2.data), want, cp, rtol)
        out[("dualad .backward()", f"W2[B={batch}]")] = _timed(tape, sync, repeat)
        (g1, g2), _ = jit_grad_mlp(W1, W2, X)
        _check(
            f"dualad.jit W2[B={batch}]", (g1.data, g2.data), refs[f"W2[B={batch}]"][1:], cp, rtol
        )
        out[("dualad.jit(grad)", f"W2[B={batch}]")] = _timed(
            lambda W1=W1, W2=W2, X=X: jit_grad_mlp(W1, W2, X), sync, repeat
        )

    A, x = (dualad.tensor(a, device=dev) for a in jac)

    def f(x):
        return dualad.tanh(A @ x) + x**2

    for name, transform in (("jacrev", func.jacrev), ("jacfwd", func.jacfwd)):
        eager = transform(f)
        _check(f"dualad {name}", eager(x).data, refs["W3"], cp, rtol)
        out[(f"dualad {name}", "W3")] = _timed(lambda eager=eager: eager(x), sync, repeat)
        jitted = dualad.jit(transform(f))
        _check(f"dualad.jit {name}", jitted(x).data, refs["W3"], cp, rtol)
        out[(f"dualad.jit({name})", "W3")] = _timed(lambda j=jitted: j(x), sync, repeat)

    w, X, y = (dualad.tensor(a, device=dev) for a in pe)

    def loss1(w, xi, yi):
        return dualad.nn.functional.softplus(-yi * (xi @ w))

    per_example = func.vmap(func.grad(loss1), in_dims=(None, 0, 0))
    _check("dualad W6", per_example(w, X, y).data, refs["W6"], cp, rtol)
    out[("dualad vmap(grad)", "W6")] = _timed(lambda: per_example(w, X, y), sync, repeat)
    jitted = dualad.jit(per_example)
    _check("dualad.jit W6", jitted(w, X, y).data, refs["W6"], cp, rtol)
    out[("dualad.jit(vmap(grad))", "W6")] = _timed(lambda: jitted(w, X, y), sync, repeat)


def bench_torch(mlp, jac, pe, repeat, out):
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    sync = lambda _: torch.cuda.synchronize()
    dev = "cuda"
    for batch, arrays in mlp.items():
        X, W1, W2 = (torch.tensor(a, device=dev) for a in arrays)
        W1.requires_grad_()
        W2.requires_grad_()

        def run(X=X, W1=W1, W2=W2):
            W1.grad = W2.grad = None
            Y = torch.tanh(X @ W1) @ W2
            loss = (Y * Y).sum()
            loss.backward()
            return loss

        out[("torch CUDA eager", f"W2[B={batch}]")] = _timed(run, sync, repeat)
    A, x = (torch.tensor(a, device=dev) for a in jac)

    def f(x):
        return torch.tanh(A @ x) + x**2

    for name, transform in (("jacrev", torch.func.jacrev), ("jacfwd", torch.func.jacfwd)):
        j = transform(f)
        out[(f"torch.func.{name}", "W3")] = _timed(lambda j=j: j(x), sync, repeat)
    w, X, y = (torch.tensor(a, device=dev) for a in pe)

    def loss1(w, xi, yi):
        return torch.nn.functional.softplus(-yi * (xi @ w))

    pe_fn = torch.func.vmap(torch.func.grad(loss1), in_dims=(None, 0, 0))
    out[("torch.func vmap(grad)", "W6")] = _timed(lambda: pe_fn(w, X, y), sync, repeat)


def bench_jax(mlp, jac, pe, repeat, out, float64):
    import jax

    jax.config.update("jax_enable_x64", float64)
    import jax.numpy as jnp

    if jax.default_backend() != "gpu":
        raise RuntimeError(f"jax backend is {jax.default_backend()}")

    sync = jax.block_until_ready

    def loss(W1, W2, X):
        Y = jnp.tanh(X @ W1) @ W2
        return (Y * Y).sum()

    g = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    for batch, arrays in mlp.items():
        X, W1, W2 = (jnp.asarray(a) for a in arrays)
        out[("jax.jit", f"W2[B={batch}]")] = _timed(
            lambda W1=W1, W2=W2, X=X: g(W1, W2, X), sync, repeat
        )
    A, x = (jnp.asarray(a) for a in jac)
    for name, transform in (("jacrev", jax.jacrev), ("jacfwd", jax.jacfwd)):
        j = jax.jit(transform(lambda x: jnp.tanh(A @ x) + x**2))
        out[(f"jax.jit({name})", "W3")] = _timed(lambda j=j: j(x), sync, repeat)
    w, X, y = (jnp.asarray(a) for a in pe)
    pe_fn = jax.jit(
        jax.vmap(jax.grad(lambda w, xi, yi: jax.nn.softplus(-yi * (xi @ w))), in_axes=(None, 0, 0))
    )
    out[("jax.jit(vmap(grad))", "W6")] = _timed(lambda: pe_fn(w, X, y), sync, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--float32", action="store_true")
    args = parser.parse_args()
    dtype = np.float32 if args.float32 else np.float64
    rtol = 1e-3 if args.float32 else 1e-9
    import cupy as cp

    print(
        f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, dtype {dtype.__name__}"
    )
    mlp, jac, pe = _problems(dtype)
    refs = _references(cp, mlp, jac, pe)
    out: dict = {}
    runners = (
        ("cupy by hand", lambda: bench_cupy_by_hand(cp, mlp, jac, pe, args.repeat, out)),
        ("dualad", lambda: bench_dualad(cp, mlp, jac, pe, refs, args.repeat, out, rtol)),
        ("torch", lambda: bench_torch(mlp, jac, pe, args.repeat, out)),
        ("jax", lambda: bench_jax(mlp, jac, pe, args.repeat, out, not args.float32)),
    )
    for name, runner in runners:
        try:
            runner()
        except Exception as exc:  # report and go on: one library's failure is a result too
            print(f"{name}: skipped or failed: {type(exc).__name__}: {exc}")
    tasks = sorted({task for _, task in out})
    libs = list(dict.fromkeys(lib for lib, _ in out))
    floor = {task: out.get(("cupy by hand", task)) for task in tasks}
    print(f"\n{'library':28s}" + "".join(f"{t:>22s}" for t in tasks))
    for lib in libs:
        cells = []
        for task in tasks:
            t = out.get((lib, task))
            if t is None:
                cells.append(f"{'':>22s}")
            else:
                ratio = f" ({t / floor[task]:.2f}x)" if floor[task] else ""
                cells.append(f"{t * 1e3:>12.3f} ms{ratio:>8s}")
        print(f"{lib:28s}" + "".join(cells))


if __name__ == "__main__":
    main()
