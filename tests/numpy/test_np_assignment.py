"""NumPy's functions that write into their first argument (``dualad/numpy/assignment.py``):
the tensor written into equals NumPy's array after the same call, and the derivative flows
from the values written and from the entries kept (gradcheck in both modes, func.grad, vmap
against a loop), called through ``dualad.numpy`` and through NumPy's protocol."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad import func

RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 4))
SQUARE = RNG.normal(size=(3, 3))

# (function, base array, arguments after it (float arrays are differentiable), keywords)
CASES = [
    ("copyto", A, (RNG.normal(size=4),), {}),
    ("copyto", A, (RNG.normal(size=(3, 4)),), {"where": A > 0}),
    ("put", A, ([0, 5, -1], RNG.normal(size=2)), {}),
    ("put", A, ([0, 15], RNG.normal(size=1)), {"mode": "wrap"}),
    ("putmask", A, (A > 0, RNG.normal(size=3)), {}),
    ("place", A, (A > 0, RNG.normal(size=3)), {}),
    ("put_along_axis", A, (np.array([[0], [2], [1]]), RNG.normal(size=(3, 1)), 1), {}),
    ("put_along_axis", A, (np.array([[0, 1, 2, 0]]), RNG.normal(size=(1, 4)), 0), {}),
    ("fill_diagonal", SQUARE, (RNG.normal(size=2),), {}),
    ("fill_diagonal", np.zeros((7, 3)), (RNG.normal(size=2),), {"wrap": True}),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(CASES)]


def written(module, name, base, args, kwargs):
    """A fresh copy of ``base`` with ``module.name`` applied to it (NumPy returns None)."""
    target = base * 1.0 if isinstance(base, dualad.Tensor) else base.copy()
    assert getattr(module, name)(target, *args, **kwargs) is None
    return target


def value_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]


def as_function(module, name, args, kwargs):
    """The written tensor as a function of the base and the float arguments."""
    positions = value_positions(args)

    def f(base, *values):
        full = list(args)
        for i, v in zip(positions, values):
            full[i] = v
        return written(module, name, base, full, kwargs)

    return f


def inputs(base, args):
    values = [dualad.tensor(args[i], requires_grad=True) for i in value_positions(args)]
    return (dualad.tensor(base, requires_grad=True), *values)


@pytest.mark.parametrize("module", [dnp, np], ids=["dualad.numpy", "numpy"])
@pytest.mark.parametrize(("name", "base", "args", "kwargs"), CASES, ids=IDS)
def test_written_values_match_numpy(module, name, base, args, kwargs):
    expected = written(np, name, base, args, kwargs)
    tensors = [dualad.tensor(a) if i in value_positions(args) else a for i, a in enumerate(args)]
    got = written(module, name, dualad.tensor(base), tensors, kwargs)
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("module", [dnp, np], ids=["dualad.numpy", "numpy"])
@pytest.mark.parametrize(("name", "base", "args", "kwargs"), CASES, ids=IDS)
def test_derivatives(module, name, base, args, kwargs):
    f = as_function(module, name, args, kwargs)
    xs = inputs(base, args)
    assert dualad.autograd.gradcheck(f, xs, check_forward_ad=True)
    w = dualad.tensor(RNG.normal(size=base.shape))
    eager = dualad.autograd.grad(dnp.sum(f(*xs) * w), xs)
    argnums = tuple(range(len(xs)))
    grads = func.grad(lambda *ys: dnp.sum(f(*ys) * w), argnums=argnums)(*(x.detach() for x in xs))
    for g, e in zip(grads, eager):
        np.testing.assert_allclose(g.numpy(), e.numpy(), atol=1e-12)


@pytest.mark.parametrize(("name", "base", "args", "kwargs"), CASES, ids=IDS)
def test_vmap_matches_a_loop(name, base, args, kwargs):
    f = as_function(dnp, name, args, kwargs)
    values = [dualad.tensor(args[i]) for i in value_positions(args)]
    batch = np.stack([base, base * 2 + 1])
    batched = dualad.vmap(lambda b: f(b, *values))(dualad.tensor(batch))
    looped = dnp.stack([f(dualad.tensor(b), *values) for b in batch])
    np.testing.assert_allclose(batched.numpy(), looped.numpy())


def test_the_destination_must_be_a_tensor_that_can_be_written():
    v = dualad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="must be a dualad Tensor"):
        dnp.put(np.zeros(3), [0, 1], v)
    with pytest.raises(TypeError, match="must be a dualad Tensor"):
        np.copyto(np.zeros(2), v)  # (NumPy sends it here: v is a tensor)
    leaf = dualad.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        dnp.copyto(leaf, v)
    with pytest.raises(IndexError):
        dnp.put(dualad.zeros(3), [5], 1.0)
    with pytest.raises(ValueError, match="equal length"):
        dnp.fill_diagonal(dualad.zeros((2, 3, 2)), 1.0)
