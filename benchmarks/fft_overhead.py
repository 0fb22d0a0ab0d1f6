"""What the gradient of a spectral loss costs next to the forward ``numpy.fft`` call.

Run: ``python benchmarks/fft_overhead.py [--repeat N]``. The loss matches a power spectrum,
``L = sum_k w_k (|rfft(x)_k|^2 - P_k)^2``, at n = 2**16 (one signal) and batched (64, 1024)
(the transform along the last axis). Printed, best of N (default 20) in milliseconds:

- ``numpy rfft``: the forward transform alone (the floor of one transform);
- ``numpy loss+grad by hand``: the loss and its gradient written in NumPy (rfft, elementwise,
  irfft: two transforms), the floor of any AD system;
- ``dualad backward``: the loss recorded on the tape and ``backward()``;
- ``dualad func.grad``: the same through ``dualad.func.grad``;
- ``dualad vmap(grad)``: per-signal gradients of the batch (the batched case only);
- ``rfft VJP alone``: ``autograd.grad(rfft(x), x, ct)`` (rfft then its adjoint: one transform
  each way, the Hermitian weights) next to NumPy's ``rfft`` + ``irfft`` by hand;
- ``torch`` / ``jax``: the same loss and gradient when they are importable (the peers' venv),
  CPU, for comparison.

The ratios are to the hand-written NumPy gradient.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dualad
from dualad import func


def best_ms(fn, repeat: int) -> float:
    fn()  # warm-up (plans, caches)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def numpy_loss_and_grad(x, weights, target):
    n = x.shape[-1]
    spectrum = np.fft.rfft(x)
    residual = spectrum.real**2 + spectrum.imag**2 - target
    loss = np.sum(weights * residual**2)
    # dL/dRe X + i dL/dIm X, then rfft's adjoint: irfft without its 1/n, the middle bins halved
    g = 4 * weights * residual * spectrum
    half = np.full(n // 2 + 1, 0.5)
    half[0] = 1.0
    if n % 2 == 0:
        half[-1] = 1.0
    return loss, np.fft.irfft(g * half, n, norm="forward")


def dualad_loss(x, weights, target):
    spectrum = dualad.fft.rfft(x)
    return (weights * (spectrum.abs() ** 2 - target) ** 2).sum()


def peers(shape, data, weights, target, repeat):
    rows = []
    try:
        import torch  # the peers' venv only (optional)
    except ImportError:
        torch = None
    if torch is not None:
        tw, tt = torch.tensor(weights), torch.tensor(target)

        def torch_grad():
            x = torch.tensor(data, requires_grad=True)
            loss = (tw * (torch.fft.rfft(x).abs() ** 2 - tt) ** 2).sum()
            loss.backward()
            return x.grad

        rows.append(("torch backward", best_ms(torch_grad, repeat)))
    try:
        import jax  # (optional)
        import jax.numpy as jnp
    except ImportError:
        jax = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        jw, jt = jnp.asarray(weights), jnp.asarray(target)
        grad = jax.jit(jax.grad(lambda x: jnp.sum(jw * (jnp.abs(jnp.fft.rfft(x)) ** 2 - jt) ** 2)))
        jx = jnp.asarray(data)
        rows.append(("jax jit(grad)", best_ms(lambda: grad(jx).block_until_ready(), repeat)))
    return rows


def run(shape, repeat: int) -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(size=shape)
    bins = shape[-1] // 2 + 1
    weights = np.exp(-np.arange(bins) / bins)
    target = np.abs(np.fft.rfft(rng.normal(size=shape))) ** 2
    w, p = dualad.tensor(weights), dualad.tensor(target)

    expected = numpy_loss_and_grad(data, weights, target)[1]
    x = dualad.as_tensor(data).requires_grad_()
    dualad_loss(x, w, p).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-9, atol=1e-6)

    def backward():
        x = dualad.as_tensor(data).requires_grad_()
        dualad_loss(x, w, p).backward()
        return x.grad

    grad_fn = func.grad(lambda x: dualad_loss(x, w, p))
    t = dualad.tensor(data)
    rows = [
        ("numpy rfft", best_ms(lambda: np.fft.rfft(data), repeat)),
        (
            "numpy loss+grad by hand",
            best_ms(lambda: numpy_loss_and_grad(data, weights, target), repeat),
        ),
        ("dualad backward", best_ms(backward, repeat)),
        ("dualad func.grad", best_ms(lambda: grad_fn(t), repeat)),
    ]
    ct = dualad.tensor(np.fft.rfft(rng.normal(size=shape)))
    halves = np.full(bins, 0.5)
    halves[0] = 1.0
    halves[-1] = 1.0 if shape[-1] % 2 == 0 else 0.5
    ct_np = ct.numpy()

    def numpy_vjp():
        np.fft.rfft(data)
        return np.fft.irfft(ct_np * halves, shape[-1], norm="forward")

    def dualad_vjp():
        x = dualad.as_tensor(data).requires_grad_()
        return dualad.autograd.grad(dualad.fft.rfft(x), x, ct)

    rows += [
        ("numpy rfft + adjoint", best_ms(numpy_vjp, repeat)),
        ("dualad rfft VJP alone", best_ms(dualad_vjp, repeat)),
    ]
    if len(shape) > 1:
        per_signal = dualad.vmap(func.grad(dualad_loss), in_dims=(0, None, 0))
        rows.append(("dualad vmap(grad)", best_ms(lambda: per_signal(t, w, p), repeat)))
    rows += peers(shape, data, weights, target, repeat)
    floor = rows[1][1]
    print(f"\nshape {shape} (float64)")
    for name, ms in rows:
        print(f"  {name:26s} {ms:9.3f} ms   {ms / floor:5.2f}x the hand-written gradient")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    for shape in ((2**16,), (64, 1024)):
        run(shape, args.repeat)


if __name__ == "__main__":
    main()
