"""``python -m dualad``: a gradient and a Jacobian of a small function beside finite differences."""

from __future__ import annotations

import numpy as np

import dualad


def f(x):
    """f: R^3 -> R^2, f(x) = (sum(sin(x) * x**2), prod-like tanh mix)."""
    return dualad.stack([(dualad.sin(x) * x**2).sum(), dualad.tanh(x[0] * x[1] + x[2])])


def loss(x):
    return (dualad.exp(-x) * dualad.cos(3 * x)).sum()


def central_difference(fn, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.asarray(fn(dualad.tensor(x)).detach().numpy())
    jac = np.zeros(out.shape + x.shape)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        plus = fn(dualad.tensor(x + step)).detach().numpy()
        minus = fn(dualad.tensor(x - step)).detach().numpy()
        jac[..., i] = (plus - minus) / (2 * eps)
    return jac


def jacobian_by_rows(fn, x0: np.ndarray) -> np.ndarray:
    x = dualad.tensor(x0, requires_grad=True)
    y = fn(x)
    rows = []
    for i in range(y.shape[0]):
        seed = dualad.zeros(y.shape)
        seed[i] = 1.0
        (row,) = dualad.autograd.grad(y, x, seed, retain_graph=True)
        rows.append(row.numpy())
    return np.stack(rows)


def main() -> None:
    np.set_printoptions(precision=6, suppress=True)
    x0 = np.array([0.3, -1.2, 0.8])

    x = dualad.tensor(x0, requires_grad=True)
    value = loss(x)
    value.backward()
    assert x.grad is not None  # (a leaf that requires grad has one after backward)
    print("loss(x) = sum(exp(-x) * cos(3x)) at x =", x0)
    print("  value               :", value.item())
    print("  gradient (backward) :", x.grad.numpy())
    print("  central differences :", central_difference(loss, x0))

    jac = jacobian_by_rows(f, x0)
    print("\nf(x) = [sum(sin(x) * x^2), tanh(x0*x1 + x2)]")
    print("  Jacobian (reverse mode, one row per output):\n", jac)
    print("  central differences:\n", central_difference(f, x0))
    ok = np.allclose(x.grad.numpy(), central_difference(loss, x0), atol=1e-6) and np.allclose(
        jac, central_difference(f, x0), atol=1e-6
    )
    print("\nagree with finite differences:", ok)


if __name__ == "__main__":
    main()
