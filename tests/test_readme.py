"""The README's Python examples run and compute what their comments say."""

import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_examples_run_and_are_right():
    blocks = python_blocks()
    assert blocks, "the README should show Python examples"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(namespace["x"].grad.numpy(), np.cos(x) * x**2 + 2 * x * np.sin(x))
    np.testing.assert_allclose(namespace["h"].numpy(), 6 * x)
    np.testing.assert_allclose(namespace["jv"].numpy(), 1 - np.tanh([0.1, 0.2]) ** 2)
    np.testing.assert_allclose(namespace["d2"].item(), -np.sin(0.3))
    np.testing.assert_allclose(namespace["tangent"].item(), 2 * np.exp(1.0))
    assert tuple(namespace["norms"].shape) == (5,)
    assert tuple(namespace["out"].shape) == (5, 2)
    # the Jacobians-at-scale block
    grid = np.linspace(0.0, 1.0, 10_000)
    J = namespace["J"]
    assert J.shape == (9998, 10000) and J.nnz == 3 * 9998
    np.testing.assert_allclose(J.diagonal(0), np.ones(9998))
    np.testing.assert_allclose(J.diagonal(1), -2 + 0.3 * grid[1:-1] ** 2)
    np.testing.assert_allclose(J.diagonal(2), np.ones(9998))
    assert namespace["stencil"].pattern.shape == (9998, 10000)
    x = np.ones(300)
    expected = np.diag((1 - np.tanh(x) ** 2) * x.sum()) + np.tanh(x)[:, None]
    np.testing.assert_allclose(namespace["bounded"], expected, rtol=1e-12)
    y = np.ones(200)
    expected = np.diag(np.cos(y) * y.sum()) + np.sin(y)[:, None]
    np.testing.assert_allclose(namespace["on_workers"], expected, rtol=1e-12)
    # the linear algebra / FFT / nn block
    S = np.array([[2.0, 0.5], [0.5, 1.0]])
    r = np.array([1.0, -1.0])
    Si = np.linalg.inv(S)
    np.testing.assert_allclose(
        namespace["gS"].numpy(), 0.5 * (Si - Si @ np.outer(r, r) @ Si), rtol=1e-12
    )
    # (the spectrum of ones is 8 at frequency 0 alone: d|X0|^2/dx = 2 * 8 for every sample)
    np.testing.assert_allclose(namespace["spectrum"].numpy(), np.full(8, 16.0), atol=1e-12)
    np.testing.assert_allclose(namespace["singular"].numpy(), [[4.0, -2.0], [-2.0, 1.0]])
    logits = np.random.default_rng(1).normal(size=(4, 3))
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    np.testing.assert_allclose(namespace["ce"].item(), -logp[range(4), [0, 2, 1, 0]].mean())
    # the "Extending and debugging" block
    np.testing.assert_allclose(namespace["v"].grad.numpy(), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(namespace["w"].grad.numpy(), [20.0, 40.0])
    u = np.array([0.1, 0.2, 0.3])
    inner = np.sin(u) * u
    expected = np.exp(np.tanh(inner)) * (1 - np.tanh(inner) ** 2) * (np.cos(u) * u + np.sin(u))
    np.testing.assert_allclose(namespace["u"].grad.numpy(), expected)
    assert namespace["anomaly"].startswith("Function 'SqrtBackward0' returned nan values")
