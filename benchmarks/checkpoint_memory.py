"""Memory of forward + backward through 50-layer chains, with and without checkpointing.

Run: ``python benchmarks/checkpoint_memory.py`` (``--quick`` for small sizes; ``--chain`` to run
one chain). Three chains, ``--layers`` layers each, float64, loss ``h.sum()``:

- ``matmul``: ``h = tanh(h @ W_i)`` with ``(batch, width)`` activations and ``(width, width)``
  weights that require grad. Each layer saves only its input (matmul) and its output (tanh),
  which is the next layer's input: checkpointing every layer saves nothing here (a checkpoint
  keeps its input anyway); segments of several layers do save.
- ``elementwise``: ``h = sin(h) * tanh(h) + 0.5 * h`` on ``--numel`` elements. Each layer
  keeps two intermediates besides its input (tanh's result, and sin(h) for the product), so
  checkpointing every layer keeps one activation per layer instead of three.
- ``mlp``: a residual MLP block ``z = h @ W1 + b1; a = z * sigmoid(z); h = h + tanh(a @ W2)``
  with a hidden width four times the width: the block keeps z, sigmoid(z), a (hidden-wide) and
  tanh's result besides its input.

Memory is what ``tracemalloc`` sees NumPy allocate, above what was allocated before (inputs and
weights): "held after forward" is what the graph keeps for backward, "peak" the maximum over
forward + backward (it includes the weights' gradients, allocated during backward). Gradients
are checked to agree between the modes. Times are rough (tracemalloc slows allocation).
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

MIB = 2**20


# ---------------------------------------------------------------------------------------------
# the chains: (layers, inputs that get gradients, a one-line description)


def matmul_chain(rng, layers: int, batch: int, width: int):
    scale = 1.0 / np.sqrt(width)
    weights = [
        dualad.tensor(rng.standard_normal((width, width)) * scale, requires_grad=True)
        for _ in range(layers)
    ]
    x = dualad.tensor(rng.standard_normal((batch, width)), requires_grad=True)

    def make(weight):
        return lambda h: dualad.tanh(h @ weight)

    description = (
        f"{layers} layers of tanh(h @ W): activations {batch}x{width} "
        f"({batch * width * 8 / MIB:.1f} MiB each), weights {width}x{width} "
        f"({width * width * 8 / MIB:.1f} MiB each)"
    )
    return [make(w) for w in weights], [x, weights[0], weights[-1]], description


def elementwise_layer(h):
    return dualad.sin(h) * dualad.tanh(h) + 0.5 * h


def elementwise_chain(rng, layers: int, numel: int):
    x = dualad.tensor(rng.standard_normal(numel), requires_grad=True)
    description = (
        f"{layers} layers of sin(h) * tanh(h) + 0.5 * h on {numel} elements "
        f"({numel * 8 / MIB:.1f} MiB per activation)"
    )
    return [elementwise_layer] * layers, [x], description


def mlp_chain(rng, layers: int, batch: int, width: int):
    hidden = 4 * width
    params = []
    for _ in range(layers):
        w1 = dualad.tensor(
            rng.standard_normal((width, hidden)) / np.sqrt(width), requires_grad=True
        )
        b1 = dualad.tensor(np.zeros(hidden), requires_grad=True)
        w2 = dualad.tensor(
            rng.standard_normal((hidden, width)) / np.sqrt(hidden), requires_grad=True
        )
        params.append((w1, b1, w2))
    x = dualad.tensor(rng.standard_normal((batch, width)), requires_grad=True)

    def make(w1, b1, w2):
        def block(h):
            z = h @ w1 + b1
            a = z * dualad.sigmoid(z)
            return h + dualad.tanh(a @ w2)

        return block

    description = (
        f"{layers} residual MLP blocks: activations {batch}x{width} "
        f"({batch * width * 8 / MIB:.1f} MiB), hidden {batch}x{hidden} "
        f"({batch * hidden * 8 / MIB:.1f} MiB)"
    )
    return [make(*p) for p in params], [x, params[0][0], params[-1][2]], description


# ---------------------------------------------------------------------------------------------
# measuring


def forward(mode: str, layers: list, x, segments: int):
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


def measure(mode: str, layers: list, watched: list, segments: int):
    """``(held MiB, peak MiB, seconds, gradients of watched)`` for one forward + backward."""
    for t in watched:
        t.grad = None
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    loss = forward(mode, layers, watched[0], segments).sum()
    held = tracemalloc.get_traced_memory()[0]
    loss.backward()
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    grads = [t.grad.numpy().copy() for t in watched]
    return (held - baseline) / MIB, (peak - baseline) / MIB, elapsed, grads


def run_chain(layers: list, watched: list, description: str, segments: int) -> None:
    print(description)
    modes = ["plain", "checkpoint every layer", f"checkpoint_sequential({segments} segments)"]
    measure("plain", layers, watched, segments)  # warm-up: the timings below compare fairly
    reference = None
    print(f"  {'mode':38s} {'held after forward MiB':>24s} {'peak MiB':>10s} {'time s':>8s}")
    for mode in modes:
        held, peak, elapsed, grads = measure(mode, layers, watched, segments)
        if reference is None:
            reference = grads
        else:
            for got, expected in zip(grads, reference):
                np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        print(f"  {mode:38s} {held:24.1f} {peak:10.1f} {elapsed:8.2f}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chain", choices=("all", "matmul", "elementwise", "mlp"), default="all")
    parser.add_argument("--layers", type=int, default=50)
    parser.add_argument("--segments", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    args = parser.parse_args()

    quick = args.quick
    rng = np.random.default_rng(0)
    chains = {
        "matmul": lambda: matmul_chain(
            rng, args.layers, 500 if quick else 2000, 200 if quick else 500
        ),
        "elementwise": lambda: elementwise_chain(rng, args.layers, 100_000 if quick else 1_000_000),
        "mlp": lambda: mlp_chain(rng, args.layers, 128 if quick else 512, 64 if quick else 128),
    }
    for name, make in chains.items():
        if args.chain in ("all", name):
            run_chain(*make(), args.segments)


if __name__ == "__main__":
    main()
