"""The piecewise activations as ops of their own (hardsigmoid, hardswish, hardshrink, softshrink,
threshold, glu): one graph node each, PyTorch's derivatives at the kinks in every mode (reverse,
forward, second order, vmap), in-place variants, dtypes and bad input.

The values at the kinks and first derivatives are also in ``test_activations.py``; the registry
tests check every sample of their op-database entries against finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.nn.functional as F
from dualad.func import grad, jvp, vmap

KINKS = np.array([-4.0, -3.0, -1.0, -0.5, 0.0, 0.2, 0.5, 3.0, 4.0])

# (function, first derivative at KINKS, second derivative at KINKS): PyTorch's numbers
CASES = {
    "hardsigmoid": (
        F.hardsigmoid,
        [0, 0, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 0, 0],
        [0.0] * 9,
    ),
    "hardswish": (
        F.hardswish,
        [0, 0, 1 / 6, 1 / 3, 0.5, 0.2 / 3 + 0.5, 2 / 3, 1, 1],
        [0, 0, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 0, 0],
    ),
    "hardshrink": (F.hardshrink, [1, 1, 1, 0, 0, 0, 0, 1, 1], [0.0] * 9),
    "softshrink": (F.softshrink, [1, 1, 1, 0, 0, 0, 0, 1, 1], [0.0] * 9),
    "threshold": (lambda x: F.threshold(x, 0.2, -1.0), [0, 0, 0, 0, 0, 0, 1, 1, 1], [0.0] * 9),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_derivatives_at_the_kinks_in_every_mode(name, dtype):
    f, first, second = CASES[name]
    x = dualad.tensor(KINKS.astype(dtype))
    g = vmap(grad(f))(x)
    assert g.dtype == x.dtype
    assert np.allclose(g.numpy(), first, atol=1e-6)
    _, tangent = jvp(f, (x,), (dualad.ones_like(x),))
    assert np.allclose(tangent.numpy(), first, atol=1e-6)
    assert np.allclose(vmap(grad(grad(f)))(x).numpy(), second, atol=1e-6)


@pytest.mark.parametrize(
    ("f", "node"),
    [
        (F.hardsigmoid, "HardsigmoidBackward0"),
        (F.hardswish, "HardswishBackward0"),
        (F.hardshrink, "HardshrinkBackward0"),
        (F.softshrink, "SoftshrinkBackward0"),
        (lambda x: F.threshold(x, 0.1, 2.0), "ThresholdBackward0"),
        (F.glu, "GluBackward0"),
        (lambda x: F.prelu(x, dualad.tensor([0.25])), "PreluBackward0"),
    ],
)
def test_each_is_one_graph_node(f, node):
    y = f(dualad.tensor([0.25, -1.0, 2.0, 3.5], requires_grad=True))
    assert type(y.grad_fn).__name__ == node


def test_inplace_variants_write_into_the_input_and_keep_the_graph():
    leaf = dualad.tensor([-4.0, -1.0, 1.0, 4.0], requires_grad=True)
    x = leaf * 1.0
    y = F.hardswish(x, inplace=True)
    assert y is x
    assert np.allclose(x.detach().numpy(), [0.0, -1 / 3, 2 / 3, 4.0])
    y.sum().backward()
    assert np.allclose(leaf.grad.numpy(), [0.0, 1 / 6, 5 / 6, 1.0])
    z = dualad.tensor([0.1, 0.5])
    F.threshold(z, 0.2, -1.0, inplace=True)
    assert np.array_equal(z.numpy(), [-1.0, 0.5])
    w = dualad.tensor([-4.0, 0.0])
    F.hardsigmoid(w, inplace=True)
    assert np.array_equal(w.numpy(), [0.0, 0.5])


def test_dtypes_follow_pytorch():
    ints = dualad.tensor([-4, 1, 4])
    assert F.hardswish(ints).dtype == dualad.get_default_dtype()
    assert F.threshold(ints, 0, -1).dtype == ints.dtype  # NumPy's promotion of x and value
    assert F.threshold(ints, 0, -1).tolist() == [-1, 1, 4]
    x32 = dualad.tensor([0.1, 2.0], dtype="float32")
    for f in (F.hardsigmoid, F.hardswish, F.hardshrink, F.softshrink, F.glu):
        assert f(x32).dtype == x32.dtype


def test_hardswish_and_glu_are_finite_at_extremes():
    x = dualad.tensor([-np.inf, np.inf], requires_grad=True)
    with np.errstate(all="raise"):
        (g,) = dualad.autograd.grad(F.hardswish(x).sum(), x)
    assert np.array_equal(g.numpy(), [0.0, 1.0])
    y = dualad.tensor([2.0, -3.0, 1000.0, -1000.0], requires_grad=True)
    with np.errstate(over="raise"):
        out = F.glu(y)
    assert np.allclose(out.detach().numpy(), [2.0, 0.0])


def test_glu_along_every_dim_matches_the_halves_and_batches():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 6, 2))
    for dim in (0, 1, -3, -2):
        a, b = np.split(x, 2, axis=dim)
        assert np.allclose(F.glu(dualad.tensor(x), dim).numpy(), a / (1 + np.exp(-b)))
    batched = vmap(lambda t: F.glu(t, 0), in_dims=2)(dualad.tensor(x))
    a, b = np.split(x, 2, axis=0)
    assert np.allclose(batched.numpy(), np.moveaxis(a / (1 + np.exp(-b)), 2, 0))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: F.glu(dualad.ones(3)), ValueError, "Halving dimension must be even"),
        (lambda: F.glu(dualad.ones(2, 4), 2), ValueError, "Halving dimension must be even"),
        (lambda: F.glu(dualad.ones(())), ValueError, "Halving dimension must be even"),
        (lambda: F.softshrink(dualad.ones(2), -1.0), ValueError, "lambda must be greater"),
        (lambda: F.hardshrink(dualad.ones(2), "a"), TypeError, "must be a real number"),
        (lambda: F.threshold(dualad.ones(2), 0.0, 1j), TypeError, "must be a real number"),
        (lambda: F.hardswish(dualad.ones(2, dtype="complex128")), TypeError, "complex"),
        (lambda: F.glu(dualad.ones(2, dtype="complex128")), TypeError, "complex"),
    ],
)
def test_bad_input_raises(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_threshold_in_place_function():
    leaf = dualad.tensor([0.1, 0.5], requires_grad=True)
    x = leaf * 1.0
    assert F.threshold_(x, 0.2, -1.0) is x
    assert np.array_equal(x.detach().numpy(), [-1.0, 0.5])
    x.sum().backward()
    assert np.array_equal(leaf.grad.numpy(), [0.0, 1.0])


def test_prelu_derivatives_at_zero_are_the_negative_sides():
    x = dualad.tensor([[-2.0, 0.0], [3.0, 0.0]], requires_grad=True)
    w = dualad.tensor([0.25, 0.5], requires_grad=True)
    gx, gw = dualad.autograd.grad(F.prelu(x, w).sum(), (x, w))
    assert np.array_equal(gx.numpy(), [[0.25, 0.5], [1.0, 0.5]])
    assert np.array_equal(gw.numpy(), [-2.0, 0.0])
    # the mixed second derivative d2/dx dw: 1 at and below 0
    hx = dualad.autograd.grad(
        dualad.autograd.grad(F.prelu(x, w).sum(), x, create_graph=True)[0].sum(), w
    )[0]
    assert np.array_equal(hx.numpy(), [1.0, 2.0])
