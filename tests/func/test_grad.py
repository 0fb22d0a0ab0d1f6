"""func.grad / grad_and_value / vjp as a grad level: values, errors, and compositions with
vmap, jvp and nested grads (DESIGN §1.3: per-example gradients of an unbatched weight)."""

import numpy as np
import pytest

import dualad
from dualad.func import grad, grad_and_value, jvp, vjp, vmap
from dualad.func.grad_level import GradTensor


def t(a):
    return dualad.tensor(np.asarray(a, dtype=np.float64))


def fd_grad(f, x: np.ndarray, eps=1e-6) -> np.ndarray:
    """Central finite differences of a scalar NumPy-in/float-out function."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def scalar(f):
    return lambda a: float(f(t(a)).item())


def loss(W, x):
    return dualad.tanh(W @ x).sum() + (W * W).sum() * 0.1


# ---------------------------------------------------------------------------------------------
# values


@pytest.mark.parametrize(
    "f, df",
    [
        (lambda x: (x**3).sum(), lambda x: 3 * x**2),
        (lambda x: dualad.sin(x).sum(), np.cos),
        (lambda x: (dualad.exp(x) * x).sum(), lambda x: np.exp(x) * (1 + x)),
        (lambda x: dualad.tanh(x).mean(), lambda x: (1 - np.tanh(x) ** 2) / x.size),
    ],
)
def test_grad_matches_analytic_and_fd(f, df, rng):
    x = rng.uniform(-1, 1, size=(3, 2))
    g = grad(f)(t(x))
    assert type(g) is dualad.Tensor
    np.testing.assert_allclose(g.numpy(), df(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g.numpy(), fd_grad(scalar(f), x), rtol=1e-6, atol=1e-8)


def test_grad_argnums_tuple_pytrees_and_unused_inputs(rng):
    a, b, c = rng.normal(size=3), rng.normal(size=3), rng.normal(size=2)

    def f(p, q, unused):
        return (p["u"] * q[0]).sum() + (p["v"] ** 2).sum()

    gp, gq = grad(f, argnums=(0, 1))({"u": t(a), "v": t(b)}, [t(b)], t(c))
    np.testing.assert_allclose(gp["u"].numpy(), b)
    np.testing.assert_allclose(gp["v"].numpy(), 2 * b)
    np.testing.assert_allclose(gq[0].numpy(), a)
    (g_unused,) = grad(f, argnums=(2,))({"u": t(a), "v": t(b)}, [t(b)], t(c))
    np.testing.assert_array_equal(g_unused.numpy(), np.zeros(2))
    # negative argnums, constant output
    np.testing.assert_array_equal(
        grad(lambda x, y: (x * 0).sum() + 1.0, argnums=-1)(t(a), t(a)).numpy(), np.zeros(3)
    )


def test_grad_and_value_and_has_aux(rng):
    x = rng.normal(size=4)
    g, v = grad_and_value(lambda x: (x**2).sum())(t(x))
    np.testing.assert_allclose(g.numpy(), 2 * x)
    np.testing.assert_allclose(v.item(), (x**2).sum())
    g, aux = grad(lambda x: ((x**2).sum(), {"y": x * 3}), has_aux=True)(t(x))
    np.testing.assert_allclose(g.numpy(), 2 * x)
    assert type(aux["y"]) is dualad.Tensor  # unwrapped: no GradTensor escapes
    np.testing.assert_allclose(aux["y"].numpy(), 3 * x)
    g, (v, aux) = grad_and_value(lambda x: ((x**2).sum(), x[0]), has_aux=True)(t(x))
    np.testing.assert_allclose(v.item(), (x**2).sum())
    assert type(aux) is dualad.Tensor and aux.item() == x[0]


def test_grad_float32_complex_and_integer_input():
    x32 = dualad.tensor([1.0, 2.0], dtype=dualad.float32)
    g = grad(lambda x: (x**2).sum())(x32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
    z = dualad.tensor([1 + 2j, 3 - 1j])
    gz = grad(lambda z: (z * z.conj()).real.sum())(z)  # |z|^2: conjugate Wirtinger 2z
    np.testing.assert_allclose(gz.numpy(), 2 * np.array([1 + 2j, 3 - 1j]))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        grad(lambda x: x.sum())(dualad.tensor([1, 2]))


def test_inplace_views_multi_output_and_control_flow(rng):
    x = rng.normal(size=3)

    def f(x):
        y = x * 1
        y.mul_(x)  # y = x^2
        y[0] = 5.0  # overwrite: no gradient through element 0
        a, b, c = y.unbind(0)
        return a + b + c * float(x[0] > -10)  # .item()-style control flow is allowed

    np.testing.assert_allclose(grad(f)(t(x)).numpy(), [0, 2 * x[1], 2 * x[2]])
    # multi-output op with integer outputs, views (getitem), detach
    g = grad(lambda x: dualad.max(x.reshape(1, 3), dim=1)[0].sum() + x[1:].sum())(
        t([1.0, 3.0, 2.0])
    )
    np.testing.assert_allclose(g.numpy(), [0, 2, 1])
    g = grad(lambda x: (x.detach() * x).sum())(t(x))
    np.testing.assert_allclose(g.numpy(), x)


def test_wrappers_inside_and_grad_mode():
    seen = []

    def f(x):
        seen.append((type(x), x.shape, x.dtype))
        return (x * x).sum()

    grad(f)(t([1.0, 2.0]))
    assert seen == [(GradTensor, (2,), np.float64)]
    # grad ignores an outer no_grad; an inner no_grad stops tracking
    with dualad.no_grad():
        np.testing.assert_allclose(grad(lambda x: (x**2).sum())(t([1.0, 2.0])).numpy(), [2, 4])

    def g(x):
        with dualad.no_grad():
            c = x * 2
        return (c * x).sum()

    np.testing.assert_allclose(grad(g)(t([1.0, 2.0])).numpy(), [2, 4])


def test_grad_of_tensor_requiring_grad_is_differentiable_by_autograd():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    g = grad(lambda x: (x**3).sum())(x)
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])
    with dualad.no_grad():
        assert not grad(lambda x: (x**3).sum())(x).requires_grad


def test_errors():
    x = t([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match=r"expected f\(\*args\) to return a scalar Tensor, got shape \(2,\)"
    ):
        grad(lambda x: x * 2)(x)
    with pytest.raises(RuntimeError, match="scalar Tensor, got float"):
        grad(lambda x: 1.0)(x)
    with pytest.raises(
        RuntimeError, match=r"output of function f should be a tuple: \(output, aux\)"
    ):
        grad(lambda x: x.sum(), has_aux=True)(x)
    with pytest.raises(RuntimeError, match=r"Got argnums=2, but only 2 positional inputs"):
        grad(lambda x, y: x.sum(), argnums=2)(x, x)
    with pytest.raises(RuntimeError, match="argnums elements must be unique"):
        grad(lambda x, y: x.sum(), argnums=(0, 0))(x, x)
    with pytest.raises(RuntimeError, match="argnums must be int or Tuple"):
        grad(lambda x: x.sum(), argnums=[0])(x)
    with pytest.raises(TypeError, match="Tensors, arrays or numbers"):
        grad(lambda x: x)("1.0")
    # the level is gone after an error inside f
    from dualad._state import ACTIVE, GRAD

    with pytest.raises(ZeroDivisionError):
        grad(lambda x: 1 / 0)(x)
    assert GRAD.levels == [] and ACTIVE == []


# ---------------------------------------------------------------------------------------------
# vjp


def test_vjp_multiple_primals_calls_and_pytree_outputs(rng):
    a, b = rng.normal(size=3), rng.normal(size=3)
    out, fn = vjp(lambda a, b: {"p": a * b, "s": (a**2).sum()}, t(a), t(b))
    np.testing.assert_allclose(out["p"].numpy(), a * b)
    ct = rng.normal(size=3)
    for _ in range(2):  # vjp_fn can run more than once
        ga, gb = fn({"p": t(ct), "s": t(2.0)})
        np.testing.assert_allclose(ga.numpy(), ct * b + 2 * 2 * a)
        np.testing.assert_allclose(gb.numpy(), ct * a)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        fn({"p": t([1.0]), "s": t(1.0)})
    with pytest.raises(RuntimeError, match="structure"):
        fn(t(ct))
    out, fn, aux = vjp(lambda a: (a * 2, a.sum()), t(a), has_aux=True)
    assert type(aux) is dualad.Tensor
    (g,) = fn(dualad.ones(3))
    np.testing.assert_allclose(g.numpy(), 2 * np.ones(3))


# ---------------------------------------------------------------------------------------------
# compositions


def test_per_example_gradients_of_unbatched_weight(rng):
    """DESIGN §1.3: vmap(grad(loss), in_dims=(None, 0)) gives one gradient per example."""
    W = t(rng.normal(size=(3, 4)))
    X = t(rng.normal(size=(5, 4)))
    per_example = vmap(grad(loss), in_dims=(None, 0))(W, X)
    assert per_example.shape == (5, 3, 4)
    loop = np.stack([grad(loss)(W, X[i]).numpy() for i in range(5)])
    np.testing.assert_allclose(per_example.numpy(), loop, rtol=1e-12, atol=1e-14)
    # and not the summed gradient
    summed = grad(lambda W: vmap(loss, in_dims=(None, 0))(W, X).sum())(W)
    np.testing.assert_allclose(summed.numpy(), loop.sum(0), rtol=1e-12)
    # gradients w.r.t. the batched argument, both batched, and in_dims=1
    gx = vmap(grad(loss, argnums=1), in_dims=(None, 0))(W, X)
    np.testing.assert_allclose(
        gx.numpy(), np.stack([grad(loss, 1)(W, X[i]).numpy() for i in range(5)])
    )
    Ws = t(rng.normal(size=(3, 4, 5)))
    both = vmap(grad(loss), in_dims=(2, 0))(Ws, X)
    np.testing.assert_allclose(
        both.numpy(), np.stack([grad(loss)(Ws[:, :, i], X[i]).numpy() for i in range(5)])
    )


def test_grad_of_vmap_and_grad_inside_vmap_inside_grad(rng):
    x = rng.uniform(-1, 1, size=4)
    g = grad(lambda x: vmap(dualad.sin)(x).sum())(t(x))
    np.testing.assert_allclose(g.numpy(), np.cos(x))
    # d/dx sum_i d/dy_i (y_i^3) at y = x -> 6x
    g = grad(lambda x: vmap(grad(lambda y: y**3))(x).sum())(t(x))
    np.testing.assert_allclose(g.numpy(), 6 * x)


def test_nested_grad_exact_higher_derivatives():
    x = t(2.0)
    assert grad(grad(grad(lambda x: x**4)))(x).item() == pytest.approx(48.0)
    assert grad(grad(dualad.sin))(x).item() == pytest.approx(-np.sin(2.0), rel=1e-14)
    assert grad(grad(dualad.exp))(x).item() == pytest.approx(np.exp(2.0), rel=1e-14)


def test_perturbation_confusion():
    x = t(3.0)
    # d/dx [x * d/dy (x*y)] = d/dx x^2 = 2x
    assert grad(lambda x: x * grad(lambda y: x * y)(x))(x).item() == pytest.approx(6.0)
    # Siskind & Pearlmutter: d/dx [x * (d/dy (x + y))|_{y=1}] = 1 (confusion would give 2)
    assert grad(lambda x: x * grad(lambda y: x + y)(t(1.0)))(x).item() == pytest.approx(1.0)
    # d/dx [d/dy (x*y^2)|_{y=x}] = d/dx 2x^2 = 4x, with y bound to x itself
    assert grad(lambda x: grad(lambda y: x * y * y)(x))(x).item() == pytest.approx(12.0)
    # the inner closure captures the outer value and both levels' inputs meet in one op
    assert grad(lambda x: grad(lambda y: dualad.sin(x * y))(x))(x).item() == pytest.approx(
        np.cos(9.0) - 2 * 9.0 * np.sin(9.0)
    )


def test_forward_over_reverse_and_reverse_over_forward(rng):
    x = rng.uniform(-1, 1, size=3)
    v = rng.normal(size=3)
    f = lambda x: (dualad.sin(x) * x).sum()
    hess = np.diag(2 * np.cos(x) - x * np.sin(x))
    g, hv = jvp(grad(f), (t(x),), (t(v),))
    np.testing.assert_allclose(g.numpy(), np.sin(x) + x * np.cos(x))
    np.testing.assert_allclose(hv.numpy(), hess @ v, rtol=1e-12)
    # grad of a function that calls jvp (reverse over forward): grad of <grad f, v> = H v
    rof = grad(lambda x: jvp(f, (x,), (t(v),))[1])(t(x))
    np.testing.assert_allclose(rof.numpy(), hess @ v, rtol=1e-12)
    # against FD of the gradient
    fd = (grad(f)(t(x + 1e-6 * v)).numpy() - grad(f)(t(x - 1e-6 * v)).numpy()) / 2e-6
    np.testing.assert_allclose(hv.numpy(), fd, rtol=1e-6, atol=1e-8)


def test_jvp_of_vjp_and_vjp_inside_grad(rng):
    x = rng.normal(size=3)
    _, tangent = jvp(lambda x: vjp(dualad.sin, x)[1](dualad.ones(3))[0], (t(x),), (dualad.ones(3),))
    np.testing.assert_allclose(tangent.numpy(), -np.sin(x))
    g = grad(lambda x: vjp(dualad.sin, x)[1](dualad.ones(3))[0].sum())(t(x))
    np.testing.assert_allclose(g.numpy(), -np.sin(x))


def test_modified_saved_value_is_detected():
    c = dualad.ones(3)

    def f(x):
        y = x * c
        c.add_(1.0)  # mul saved c: its gradient would be silently wrong
        return y.sum()

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        grad(f)(t([1.0, 2.0, 3.0]))


def test_inplace_on_views_reaches_the_base():
    # (more programs, vmap and forward-over-reverse: test_inplace_views.py)
    def f(x):
        y = x * 1
        v = y[:2]
        v.mul_(2.0)
        return y.sum()

    np.testing.assert_allclose(grad(f)(t([1.0, 2.0, 3.0])).numpy(), [2.0, 2.0, 1.0])

    def g(x):
        y = x * 1
        v = y[:2]
        y.mul_(2.0)
        return v.sum()

    np.testing.assert_allclose(grad(g)(t([1.0, 2.0, 3.0])).numpy(), [2.0, 2.0, 0.0])


def test_a_tensor_times_itself_in_every_mode(rng):
    # mul's rules treat x * x as one product doubled (exactly the two products' sum)
    x0 = rng.normal(size=3) + 1j * rng.normal(size=3)
    for x_np in (x0.real.copy(), x0):
        x = dualad.tensor(x_np, requires_grad=True)
        seen = []
        x.register_hook(lambda g, seen=seen: seen.append(g.numpy().copy()))
        ((x * x) * dualad.tensor(np.arange(1.0, 4.0))).real.sum().backward()
        expected = 2 * np.conj(x_np) * np.arange(1.0, 4.0)
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-15)
        assert len(seen) == 1
    x = t(x0.real)
    np.testing.assert_array_equal(grad(lambda v: (v * v).sum())(x).numpy(), 2 * x0.real)
    v = rng.normal(size=3)
    np.testing.assert_array_equal(jvp(lambda a: a * a, (x,), (t(v),))[1].numpy(), 2 * x0.real * v)
    per = vmap(grad(lambda a: (a * a).sum()))(t(rng.normal(size=(2, 3))))
    assert per.shape == (2, 3)


def test_vmap_of_grad_with_a_complex_divisor():
    # L(z) = Re(conj(u) f(z)), f(z) = z / (1 + z^2): the gradient is u conj(f'(z)) with
    # f'(z) = (1 - z^2) / (1 + z^2)^2. Under vmap the divisor is a BatchedTensor, which the
    # division's vjp took for a Python scalar and did not conjugate
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    u0 = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    u = dualad.tensor(u0)
    g = grad(lambda z: (z / (1.0 + z * z) * u.conj()).real.sum())
    expected = u0 * np.conj((1 - Z**2) / (1 + Z**2) ** 2)
    np.testing.assert_allclose(vmap(g)(dualad.tensor(Z)).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(g(dualad.tensor(Z[0])).numpy(), expected[0], rtol=1e-12)
