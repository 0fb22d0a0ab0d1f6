"""conv2d and max_pool2d: dualad's forward and forward+backward against a hand-written NumPy
forward (the floor: im2col through ``sliding_window_view`` and one batched ``matmul``) and, when it
is importable, PyTorch's (CPU).

Run: ``python benchmarks/conv_overhead.py [--dtype float32] [--repeat 20]``; for the PyTorch
columns run it with an interpreter that has torch (``/root/.venvs/ad-peers/bin/python`` here,
with ``PYTHONPATH`` at the repository). The case is issue 14's: N=32, C=16, 32x32, 3x3 kernel,
32 output channels, padding 1 (and a 2x2 max pool of its output). Times are the best of
``--repeat`` runs after a warm-up, in milliseconds (the best: the least disturbed by other
load on a shared machine).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dualad
import dualad.nn.functional as F

try:  # optional: only for the comparison columns
    import torch
except ImportError:  # pragma: no cover - depends on the interpreter
    torch = None


def median_ms(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def numpy_conv2d(x, w, padding: int):
    """The NumPy floor: one padded copy, one window view copied with the output positions
    innermost, one batched matmul (BLAS); the output needs no transpose."""
    n, c = x.shape[:2]
    cout, _, kh, kw = w.shape
    xpad = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    win = np.lib.stride_tricks.sliding_window_view(xpad, (kh, kw), axis=(2, 3))
    oh, ow = win.shape[2:4]
    cols = np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kh * kw, -1)
    return np.matmul(w.reshape(cout, -1), cols).reshape(n, cout, oh, ow)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 16, 32, 32)).astype(args.dtype)
    w = rng.standard_normal((32, 16, 3, 3)).astype(args.dtype)
    rows = []

    ref = numpy_conv2d(x, w, 1)
    rows.append(
        (
            "numpy forward (im2col + matmul)",
            median_ms(lambda: numpy_conv2d(x, w, 1), args.repeat),
        )
    )

    dx, dw = dualad.tensor(x), dualad.tensor(w)
    got = F.conv2d(dx, dw, padding=1).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-3 if args.dtype == "float32" else 1e-10, atol=1e-3)
    rows.append(
        ("dualad conv2d forward", median_ms(lambda: F.conv2d(dx, dw, padding=1), args.repeat))
    )

    gx = dualad.tensor(x, requires_grad=True)
    gw = dualad.tensor(w, requires_grad=True)

    def dualad_step():
        F.conv2d(gx, gw, padding=1).sum().backward()
        gx.grad = gw.grad = None

    rows.append(("dualad conv2d forward+backward", median_ms(dualad_step, args.repeat)))

    y = dualad.tensor(got)
    rows.append(
        ("dualad max_pool2d(2) forward", median_ms(lambda: F.max_pool2d(y, 2), args.repeat))
    )
    gy = dualad.tensor(got, requires_grad=True)

    def dualad_pool_step():
        F.max_pool2d(gy, 2).sum().backward()
        gy.grad = None

    rows.append(("dualad max_pool2d(2) forward+backward", median_ms(dualad_pool_step, args.repeat)))

    if torch is not None:
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        with torch.no_grad():
            rows.append(
                (
                    "torch conv2d forward",
                    median_ms(lambda: torch.nn.functional.conv2d(tx, tw, padding=1), args.repeat),
                )
            )
        px = tx.clone().requires_grad_(True)
        pw = tw.clone().requires_grad_(True)

        def torch_step():
            torch.nn.functional.conv2d(px, pw, padding=1).sum().backward()
            px.grad = pw.grad = None

        rows.append(("torch conv2d forward+backward", median_ms(torch_step, args.repeat)))
        ty = torch.from_numpy(got)
        with torch.no_grad():
            rows.append(
                (
                    "torch max_pool2d(2) forward",
                    median_ms(lambda: torch.nn.functional.max_pool2d(ty, 2), args.repeat),
                )
            )
        py = ty.clone().requires_grad_(True)

        def torch_pool_step():
            torch.nn.functional.max_pool2d(py, 2).sum().backward()
            py.grad = None

        rows.append(
            ("torch max_pool2d(2) forward+backward", median_ms(torch_pool_step, args.repeat))
        )

    floor = rows[0][1]
    threads = f", torch threads {torch.get_num_threads()}" if torch is not None else ""
    print(f"conv2d N=32 C=16 32x32 k=3 C_out=32 padding=1, {args.dtype}{threads}")
    for name, ms in rows:
        print(f"  {name:<40} {ms:8.2f} ms  ({ms / floor:5.2f}x the NumPy forward)")


if __name__ == "__main__":
    main()
