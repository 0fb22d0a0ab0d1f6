"""One tensor passed in several argument slots: each slot gets its own derivative.

As in JAX and torch.func, every argument slot (and every pytree leaf) is an independent input,
whether or not the caller passes the same tensor object in several of them; a slot that is not
differentiated is a constant. (Regression: ``mul``'s VJP took ``a is b`` of the values under the
grad level's wrappers for ``x * x`` and gave ``2 x`` to the first slot and nothing to the second:
``grad(lambda a, b: a * b, argnums=(0, 1))(x, x)`` was ``(10, 0)`` at 5.)
"""

import numpy as np
import pytest

import dualad
import dualad.autograd.functional as AF
from dualad import func


def mul(a, b):
    return a * b


def cubic(a, b):
    return a * a * b


def value(t):
    return np.asarray(t.detach().numpy())


def assert_values(got, expected):
    """``got`` (nested tuples/dicts of tensors) equals ``expected`` (the same of numbers)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys()
        for k in expected:
            assert_values(got[k], expected[k])
    elif isinstance(expected, tuple):  # (a list is one array of numbers)
        assert isinstance(got, tuple) and len(got) == len(expected), got
        for g, e in zip(got, expected):
            assert_values(g, e)
    else:
        np.testing.assert_allclose(value(got), expected, rtol=1e-12, atol=1e-12)


X = 5.0


@pytest.fixture
def x():
    return dualad.tensor(X)


def test_grad_issue_reproducer(x):
    assert_values(func.grad(mul, argnums=(0, 1))(x, x), (X, X))
    assert_values(func.grad_and_value(mul, argnums=(0, 1))(x, x), ((X, X), X * X))


@pytest.mark.parametrize("argnums, expected", [(0, X), (1, X), ((0,), (X,)), ((1,), (X,))])
def test_undifferentiated_slot_is_a_constant(x, argnums, expected):
    # d(a*b)/da at a = b = x is b (the other slot is a constant), never 2x
    assert_values(func.grad(mul, argnums=argnums)(x, x), expected)
    assert_values(func.jacrev(mul, argnums=argnums)(x, x), expected)
    assert_values(func.jacfwd(mul, argnums=argnums)(x, x), expected)


def test_vjp_and_jacobians(x):
    _, vjp_fn = func.vjp(mul, x, x)
    assert_values(vjp_fn(dualad.tensor(1.0)), (X, X))
    assert_values(vjp_fn(dualad.tensor(3.0)), (3 * X, 3 * X))
    assert_values(func.jacrev(mul, argnums=(0, 1))(x, x), (X, X))
    assert_values(func.jacfwd(mul, argnums=(0, 1))(x, x), (X, X))
    assert_values(func.hessian(mul, argnums=(0, 1))(x, x), ((0.0, 1.0), (1.0, 0.0)))
    # a*a*b: H = [[2b, 2a], [2a, 0]]
    assert_values(func.hessian(cubic, argnums=(0, 1))(x, x), ((2 * X, 2 * X), (2 * X, 0.0)))


def test_vectors_and_sum():
    v = dualad.tensor([1.0, 2.0, 3.0])
    expected = np.array([1.0, 2.0, 3.0])
    f = lambda a, b: (a * b).sum()
    assert_values(func.grad(f, argnums=(0, 1))(v, v), (expected, expected))
    assert_values(func.jacrev(lambda a, b: a * b, argnums=(0, 1))(v, v), (np.diag(expected),) * 2)
    assert_values(func.jacfwd(lambda a, b: a * b, argnums=(0, 1))(v, v), (np.diag(expected),) * 2)


def test_jvp_linearize_hvp(x):
    one, zero = dualad.tensor(1.0), dualad.tensor(0.0)
    assert_values(func.jvp(mul, (x, x), (one, zero)), (X * X, X))
    assert_values(func.jvp(mul, (x, x), (zero, one)), (X * X, X))
    assert_values(func.jvp(mul, (x, x), (one, one)), (X * X, 2 * X))
    _, jvp_fn = func.linearize(mul, x, x)
    assert_values(jvp_fn(one, zero), X)
    assert_values(jvp_fn(zero, one), X)
    assert_values(jvp_fn(one, one), 2 * X)
    assert_values(func.hvp(cubic, (x, x), (one, zero)), (X**3, (2 * X, 2 * X)))
    assert_values(func.hvp(cubic, (x, x), (zero, one)), (X**3, (2 * X, 0.0)))


def test_pytree_leaves(x):
    # one tensor twice inside one argument's pytree
    assert_values(func.grad(lambda d: d["a"] * d["b"])({"a": x, "b": x}), {"a": X, "b": X})
    assert_values(func.grad(lambda t: t[0] * t[1])((x, x)), (X, X))
    _, vjp_fn = func.vjp(lambda d: d["a"] * d["b"], {"a": x, "b": x})
    assert_values(vjp_fn(dualad.tensor(1.0)), ({"a": X, "b": X},))
    # in one slot and inside another slot's pytree: a * t0 * t1 = x^3, each partial x^2
    f = lambda a, t: a * t[0] * t[1]
    assert_values(func.grad(f, argnums=(0, 1))(x, (x, x)), (X * X, (X * X, X * X)))
    assert_values(func.jacrev(f, argnums=(0, 1))(x, (x, x)), (X * X, (X * X, X * X)))
    assert_values(func.jacfwd(f, argnums=(0, 1))(x, (x, x)), (X * X, (X * X, X * X)))
    # the pytree slot differentiated, the plain slot a constant (and the other way round)
    assert_values(func.grad(f, argnums=1)(x, (x, x)), (X * X, X * X))
    assert_values(func.grad(f, argnums=0)(x, (x, x)), X * X)


def test_vmap_of_grad():
    v = dualad.tensor([1.0, 2.0, 3.0])
    g = func.grad(lambda a, b: a * b, argnums=(0, 1))
    assert_values(func.vmap(g)(v, v), ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
    # the same tensor batched in one slot, unbatched (a constant vector) in the other
    g = func.grad(lambda a, b: a * b[0] * b[2], argnums=(0, 1))
    per_example = func.vmap(g, in_dims=(0, None))(v, v)
    assert_values(per_example, ([3.0, 3.0, 3.0], [[3.0, 0, 1.0], [6.0, 0, 2.0], [9.0, 0, 3.0]]))
    g = func.grad(lambda a, b: a * b[0] * b[2], argnums=0)
    assert_values(func.vmap(g, in_dims=(0, None))(v, v), [3.0, 3.0, 3.0])


def test_grad_of_grad(x):
    # d/da [d(a*b)/db at (a, a)] = d/da a = 1
    assert_values(func.grad(lambda a: func.grad(mul, argnums=1)(a, a))(x), 1.0)
    # d/da [d(c*c*d)/dc] = d/da (2 c d) with c = a, d = b: (2b, 2a)
    inner = lambda a, b: func.grad(cubic, argnums=(0, 1))(a, b)[0]
    assert_values(func.grad(inner, argnums=(0, 1))(x, x), (2 * X, 2 * X))
    # the inner grad of x * x (one slot) and of a * b with a = b
    assert_values(func.grad(func.grad(lambda a: a * a))(x), 2.0)
    assert_values(func.grad(lambda a: func.grad(mul)(a, a))(x), 1.0)


def test_forward_over_reverse_and_reverse_over_forward(x):
    one, zero = dualad.tensor(1.0), dualad.tensor(0.0)
    # H of a^2 b at a = b = x: [[2b, 2a], [2a, 0]]
    _, hv = func.jvp(func.grad(cubic, argnums=(0, 1)), (x, x), (one, zero))
    assert_values(hv, (2 * X, 2 * X))
    directional = lambda a, b: func.jvp(cubic, (a, b), (one, zero))[1]
    assert_values(func.grad(directional, argnums=(0, 1))(x, x), (2 * X, 2 * X))
    twice = func.jacrev(func.jacfwd(cubic, argnums=(0, 1)), argnums=(0, 1))
    assert_values(twice(x, x), ((2 * X, 2 * X), (2 * X, 0.0)))
    v = dualad.tensor([1.0, 2.0])
    expected = ([1.0, 2.0], [1.0, 2.0])
    assert_values(func.vmap(func.jacrev(mul, argnums=(0, 1)))(v, v), expected)
    assert_values(func.vmap(func.jacfwd(mul, argnums=(0, 1)))(v, v), expected)


def test_autograd_functional(x):
    one, zero = dualad.tensor(1.0), dualad.tensor(0.0)
    assert_values(AF.jacobian(mul, (x, x)), (X, X))
    assert_values(AF.hessian(mul, (x, x)), ((0.0, 1.0), (1.0, 0.0)))
    assert_values(AF.vjp(mul, (x, x), one), (X * X, (X, X)))
    assert_values(AF.jvp(mul, (x, x), (one, zero)), (X * X, X))
    assert_values(AF.hvp(cubic, (x, x), (one, zero)), (X**3, (2 * X, 2 * X)))
    assert_values(AF.vhp(cubic, (x, x), (one, zero)), (X**3, (2 * X, 2 * X)))
    assert_values(AF.jacobian(mul, (x, x), create_graph=True), (X, X))


def test_eager_x_times_x_and_repeated_inputs():
    # x * x in one graph: one input, both uses summed
    x = dualad.tensor(3.0, requires_grad=True)
    (x * x).backward()
    assert_values(x.grad, 6.0)
    (g,) = dualad.autograd.grad(x * x, x, create_graph=True)
    assert_values(g, 6.0)
    assert_values(dualad.autograd.grad(g, x)[0], 2.0)
    # an input list naming one tensor twice asks for its whole gradient twice (PyTorch)
    assert_values(dualad.autograd.grad(x * x, (x, x)), (6.0, 6.0))
    assert_values(dualad.autograd.grad(x * 2, [x, x]), (2.0, 2.0))
    y = dualad.tensor(2.0, requires_grad=True)
    assert_values(dualad.autograd.grad(x * y * x, (x, y, x)), (12.0, 9.0, 12.0))
    # backward(inputs=...) naming one leaf twice accumulates its gradient once
    (x * 3).backward(inputs=[x, x])
    assert_values(x.grad, 6.0 + 3.0)


def test_complex_values():
    z = dualad.tensor(1.0 + 2.0j)
    _, vjp_fn = func.vjp(mul, z, z)
    # each slot: ct * conj(other) = conj(z)
    assert_values(vjp_fn(dualad.tensor(1.0 + 0.0j)), (1.0 - 2.0j, 1.0 - 2.0j))
    w = dualad.tensor(1.0 + 2.0j, requires_grad=True)
    (g,) = dualad.autograd.grad((w * w).abs(), w)
    # |w^2| = |w|^2, whose gradient (PyTorch's convention for a real loss) is 2 w
    assert_values(g, 2 * (1.0 + 2.0j))


@pytest.mark.parametrize("transform", [func.grad, func.grad_and_value, func.jacrev, func.jacfwd])
@pytest.mark.parametrize("argnums", [(0, 0), (1, -1), (0, 1, 0)])
def test_duplicate_argnums_refused(x, transform, argnums):
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        transform(lambda a, b: a * b, argnums=argnums)(x, x)


def test_duplicate_argnums_names_the_wrapped_positions(x):
    with pytest.raises(RuntimeError, match=r"got \(1, 1\)"):
        func.grad(mul, argnums=(1, -1))(x, x)
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        func.hessian(mul, argnums=(0, 0))(x, x)


def test_inplace_on_one_slot_leaves_the_other_and_the_caller_alone():
    # grad levels rebind in-place results (nothing is written into the value below): the other
    # slot keeps x's value and the caller's tensor is unchanged
    x = dualad.tensor([5.0])

    def f(a, b):
        a.mul_(2)
        return (a * b).sum()

    assert_values(func.grad(f, argnums=(0, 1))(x, x), ([2 * X], [2 * X]))
    assert_values(func.jacrev(lambda a, b: a.mul_(2) * b, argnums=(0, 1))(x, x), ([[10.0]],) * 2)
    _, vjp_fn = func.vjp(lambda a, b: a.mul_(2) * b, x, x)
    assert_values(vjp_fn(dualad.ones(1)), ([2 * X], [2 * X]))
    assert_values(x, [X])


class SquareTimes(dualad.autograd.Function):
    """a^2 b, with a backward of its own (on the saved inputs)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * 2 * a * b, g * a * a


def test_custom_function_saved_inputs_of_repeated_slots(x):
    # the Function's saved a and b are lifted to their own slots (they were matched to the
    # arguments by identity, so both went to the last slot): double backward per slot
    assert_values(func.grad(SquareTimes.apply, argnums=(0, 1))(x, x), (2 * X * X, X * X))
    assert_values(func.hessian(SquareTimes.apply, argnums=(0, 1))(x, x), cubic_hessian())
    twice = func.jacrev(func.jacrev(SquareTimes.apply, argnums=(0, 1)), argnums=(0, 1))
    assert_values(twice(x, x), cubic_hessian())
    for argnums, row in ((0, (2 * X, 2 * X)), (1, (2 * X, 0.0))):
        inner = lambda a, b, n=argnums: func.grad(SquareTimes.apply, argnums=n)(a, b)
        assert_values(func.grad(inner, argnums=(0, 1))(x, x), row)
    # one slot a constant (the plain tensor), the other tracked: its value is the same tensor
    assert_values(func.grad(lambda a: func.grad(SquareTimes.apply, argnums=1)(x, a))(x), 0.0)
    assert_values(func.grad(lambda a: func.grad(SquareTimes.apply, argnums=0)(a, x))(x), 2 * X)
    # eager: one tensor in both slots is one input (both uses summed)
    y = dualad.tensor(X, requires_grad=True)
    (g,) = dualad.autograd.grad(SquareTimes.apply(y, y), y, create_graph=True)
    assert_values(g, 3 * X * X)
    assert_values(dualad.autograd.grad(g, y)[0], 6 * X)


def cubic_hessian():
    # a^2 b: [[2b, 2a], [2a, 0]]
    return ((2 * X, 2 * X), (2 * X, 0.0))


@pytest.mark.parametrize("transform", ["jvp", "jacfwd", "linearize", "jacrev", "vjp", "grad"])
def test_in_place_on_an_argument_leaves_the_callers_tensor_alone(transform):
    # forward-mode transforms made their duals as views of the caller's tensor: f's in-place op
    # wrote into it (x became 10) and into the other slot holding it (jacfwd gave (20, 10))
    x = dualad.tensor([5.0])
    f = lambda a, b: (a.mul_(2) * b).sum()
    if transform == "jvp":
        _, tangent = func.jvp(f, (x, x), (dualad.ones(1), dualad.zeros(1)))
        assert tangent.item() == 10.0
    elif transform == "linearize":
        _, jvp_fn = func.linearize(lambda a: a.mul_(2).sum(), x)
        assert jvp_fn(dualad.ones(1)).item() == 2.0
    elif transform == "vjp":
        _, pullback = func.vjp(f, x, x)
        assert [g.item() for g in pullback(dualad.tensor(1.0))] == [10.0, 10.0]
    else:
        jac = {"jacfwd": func.jacfwd, "jacrev": func.jacrev, "grad": func.grad}[transform]
        assert [g.item() for g in jac(f, argnums=(0, 1))(x, x)] == [10.0, 10.0]
    assert x.item() == 5.0
