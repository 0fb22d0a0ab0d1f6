"""Peak memory of forward + backward through a deep chain, with and without checkpointing.

Run: ``python benchmarks/checkpoint_memory.py`` (``--batch 500 --width 200`` for a quick run).
The chain is ``h = tanh(h @ W_i)`` for ``--layers`` layers with float64 ``(batch, width)``
activations and ``(width, width)`` weights that require grad; the loss is ``h.sum()``. Memory is
what ``tracemalloc`` sees NumPy allocate, above what was allocated before (inputs and weights):
"held after forward" is what the graph keeps for backward, "peak" the maximum over forward +
backward (it includes the weights' gradients, allocated during backward). Gradients are checked
to agree between the modes. Checkpointing every layer saves nothing here: each layer saves only
its input, which the checkpoint keeps anyway; segments of several layers do save.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc

import numpy as np

# the checkout this script belongs to, not whichever dualad is installed
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dualad


def make_layer(weight):
    def layer(h):
        return dualad.tanh(h @ weight)

    return layer


def forward(mode: str, x, weights, segments: int):
    layers = [make_layer(w) for w in weights]
    if mode == "plain":
        h = x
        for layer in layers:
            h = layer(h)
        return h
    if mode == "checkpoint every layer":
        h = x
        for layer in layers:
            h = dualad.checkpoint(layer, h)
        return h
    if mode.startswith("checkpoint_sequential"):
        return dualad.checkpoint_sequential(layers, segments, x)
    raise ValueError(mode)


def measure(mode: str, x, weights, segments: int) -> tuple[float, float, float, list]:
    x.grad = None
    for w in weights:
        w.grad = None
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    loss = forward(mode, x, weights, segments).sum()
    held = tracemalloc.get_traced_memory()[0]
    loss.backward()
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    grads = [x.grad.numpy().copy(), weights[0].grad.numpy().copy(), weights[-1].grad.numpy().copy()]
    mib = 2**20
    return (held - baseline) / mib, (peak - baseline) / mib, elapsed, grads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=50)
    parser.add_argument("--width", type=int, default=500)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--segments", type=int, default=7)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    scale = 1.0 / np.sqrt(args.width)
    weights = [
        dualad.tensor(rng.standard_normal((args.width, args.width)) * scale, requires_grad=True)
        for _ in range(args.layers)
    ]
    x = dualad.tensor(rng.standard_normal((args.batch, args.width)), requires_grad=True)
    activation_mib = args.batch * args.width * 8 / 2**20
    weight_mib = args.width * args.width * 8 / 2**20
    print(
        f"{args.layers} layers of tanh(h @ W): activations {args.batch}x{args.width} float64 "
        f"({activation_mib:.1f} MiB each), weights {args.width}x{args.width} "
        f"({weight_mib:.1f} MiB each; their gradients alone take "
        f"{args.layers * weight_mib:.0f} MiB)"
    )
    modes = [
        "plain",
        "checkpoint every layer",
        f"checkpoint_sequential({args.segments} segments)",
    ]
    reference = None
    print(f"{'mode':40s} {'held after forward MiB':>24s} {'peak MiB':>10s} {'time s':>8s}")
    for mode in modes:
        held, peak, elapsed, grads = measure(mode, x, weights, args.segments)
        if reference is None:
            reference = grads
        else:
            for got, expected in zip(grads, reference):
                np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        print(f"{mode:40s} {held:24.1f} {peak:10.1f} {elapsed:8.2f}")


if __name__ == "__main__":
    main()
