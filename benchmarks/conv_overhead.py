"""conv2d and max_pool2d: dualad's forward and forward+backward against a hand-written NumPy
forward (the floor: im2col through ``sliding_window_view`` and one batched ``matmul``) and, when it
is importable, PyTorch's (CPU).

Run: ``python benchmarks/conv_overhead.py [--dtype float32] [--repeat 20]``; for the PyTorch
columns run it with an interpreter that has torch (``/root/.venvs/ad-peers/bin/python`` here,
with ``PYTHONPATH`` at the repository). The case is issue 14's: N=32, C=16, 32x32, 3x3 kernel,
32 output channels, padding 1 (and a 2x2 max pool of its output). Times are the best of
``--repeat`` rounds after a warm-up, in milliseconds, the cases taking turns within each round
(the best, and turns: the least disturbed by other load on a shared machine). Set
``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS`` to compare at one thread.
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


def best_ms(cases: dict, repeat: int) -> dict:
    """The best time of each case in milliseconds, the cases run in turn ``repeat`` times (so
    that a burst of other load on a shared machine touches all of them alike)."""
    for fn in cases.values():
        fn()  # warm-up
    best = dict.fromkeys(cases, float("inf"))
    for _ in range(repeat):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], 1e3 * (time.perf_counter() - start))
    return best


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
    ref = numpy_conv2d(x, w, 1)
    dx, dw = dualad.tensor(x), dualad.tensor(w)
    got = F.conv2d(dx, dw, padding=1).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-3 if args.dtype == "float32" else 1e-10, atol=1e-3)
    gx = dualad.tensor(x, requires_grad=True)
    gw = dualad.tensor(w, requires_grad=True)
    y = dualad.tensor(got)
    gy = dualad.tensor(got, requires_grad=True)

    def dualad_step():
        F.conv2d(gx, gw, padding=1).sum().backward()
        gx.grad = gw.grad = None

    def dualad_pool_step():
        F.max_pool2d(gy, 2).sum().backward()
        gy.grad = None

    cases = {
        "numpy forward (im2col + matmul)": lambda: numpy_conv2d(x, w, 1),
        "dualad conv2d forward": lambda: F.conv2d(dx, dw, padding=1),
        "dualad conv2d forward+backward": dualad_step,
        "dualad max_pool2d(2) forward": lambda: F.max_pool2d(y, 2),
        "dualad max_pool2d(2) forward+backward": dualad_pool_step,
    }
    if torch is not None:
        tx, tw, ty = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(got)
        px, pw = tx.clone().requires_grad_(True), tw.clone().requires_grad_(True)
        py = ty.clone().requires_grad_(True)

        def torch_forward():
            with torch.no_grad():
                torch.nn.functional.conv2d(tx, tw, padding=1)

        def torch_step():
            torch.nn.functional.conv2d(px, pw, padding=1).sum().backward()
            px.grad = pw.grad = None

        def torch_pool_forward():
            with torch.no_grad():
                torch.nn.functional.max_pool2d(ty, 2)

        def torch_pool_step():
            torch.nn.functional.max_pool2d(py, 2).sum().backward()
            py.grad = None

        cases["torch conv2d forward"] = torch_forward
        cases["torch conv2d forward+backward"] = torch_step
        cases["torch max_pool2d(2) forward"] = torch_pool_forward
        cases["torch max_pool2d(2) forward+backward"] = torch_pool_step
    rows = list(best_ms(cases, args.repeat).items())

    floor = rows[0][1]
    threads = f", torch threads {torch.get_num_threads()}" if torch is not None else ""
    print(f"conv2d N=32 C=16 32x32 k=3 C_out=32 padding=1, {args.dtype}{threads}")
    for name, ms in rows:
        print(f"  {name:<40} {ms:8.2f} ms  ({ms / floor:5.2f}x the NumPy forward)")


if __name__ == "__main__":
    main()
