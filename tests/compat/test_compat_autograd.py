"""``dualad.compat.autograd``: HIPS autograd's operators, checked against closed forms, against
``dualad.func`` (on real numbers the conventions agree) and, for complex numbers, against
autograd's convention (``grad(f)(z) = df/dx - i df/dy``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad
from dualad import func
from dualad.autograd import Function
from dualad.compat.autograd import (
    checkpoint,
    elementwise_grad,
    grad,
    grad_and_aux,
    hessian,
    hessian_tensor_product,
    hessian_vector_product,
    holomorphic_grad,
    jacobian,
    make_ggnvp,
    make_hvp,
    make_jvp,
    make_vjp,
    multigrad_dict,
    tensor_jacobian_product,
    value_and_grad,
    vector_jacobian_product,
)
from dualad.compat.autograd.test_util import check_grads

X = np.array([0.5, -1.0, 2.0])


def f(x):
    return (dualad.sin(x) * x).sum()


def f_vec(x):
    return dualad.sin(x) * x


def df(x):
    return np.sin(x) + x * np.cos(x)


def test_grad_argnum_kwargs_and_types():
    g = grad(f)(X)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, df(X))
    assert type(grad(lambda x: x**3)(2.0)) is np.float64 and grad(lambda x: x**3)(2.0) == 12.0

    def h(a, b, c, scale=1.0):
        return (a * b * c).sum() * scale

    a, b, c = np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])
    np.testing.assert_allclose(grad(h, 1)(a, b, c, scale=2.0), 2 * a * c)
    np.testing.assert_allclose(grad(h, -1)(a, b, c), a * b)
    ga, gc = grad(h, (0, 2))(a, b, c)
    np.testing.assert_allclose(ga, b * c)
    np.testing.assert_allclose(gc, a * b)
    assert isinstance(grad(h, [0, 2])(a, b, c), tuple)
    # pytrees: the gradient has the argument's structure
    params = {"w": np.array([1.0, 2.0]), "b": [0.5, 1.5]}
    g = grad(lambda p: (p["w"] ** 2).sum() + p["b"][0] * p["b"][1])(params)
    np.testing.assert_allclose(g["w"], [2.0, 4.0])
    assert g["b"] == [1.5, 0.5]
    assert grad(h).__name__ == "grad_of_h_wrt_argnum_0"
    # a Tensor argument keeps Tensors
    assert isinstance(grad(f)(dualad.tensor(X)), dualad.Tensor)
    # an output that does not depend on the input: zero derivatives, as in autograd
    np.testing.assert_array_equal(grad(lambda x: 1.0)(X), np.zeros(3))
    assert make_jvp(lambda x: 2.0)(1.0)(1.0) == (2.0, 0.0)


def test_grad_of_a_one_element_output_and_its_errors():
    # autograd checks the size, not the shape
    np.testing.assert_allclose(grad(lambda x: x[:1] * 3.0)(X), [3.0, 0.0, 0.0])
    for op in (grad, value_and_grad):
        with pytest.raises(TypeError, match="only applies to real scalar-output functions"):
            op(f_vec)(X)
    with pytest.raises(TypeError, match="argnum must be an int or a tuple"):
        grad(f, "0")
    with pytest.raises(IndexError, match="argnum 3 is out of range"):
        grad(f, 3)(X)
    with pytest.raises(TypeError, match="expected a function"):
        grad(3)
    with pytest.raises(RuntimeError, match="floating point or complex"):
        grad(lambda x: x * 2.0)(3)


def test_value_and_grad_and_grad_and_aux():
    value, g = value_and_grad(f)(X)
    assert type(value) is np.float64
    np.testing.assert_allclose(value, (np.sin(X) * X).sum())
    np.testing.assert_allclose(g, df(X))
    g, aux = grad_and_aux(lambda x: (f(x), {"y": x * 2.0}))(X)
    np.testing.assert_allclose(g, df(X))
    np.testing.assert_allclose(aux["y"], 2 * X)
    # (grad_and_aux does not require a scalar: it is the VJP of ones)
    g, aux = grad_and_aux(lambda x: [f_vec(x), 1])(X)
    np.testing.assert_allclose(g, df(X))
    assert aux == 1


def test_elementwise_grad_up_to_fourth_order():
    t = np.tanh(X)
    d1 = elementwise_grad(dualad.tanh)
    d2 = elementwise_grad(d1)
    d3 = elementwise_grad(d2)
    d4 = elementwise_grad(d3)
    np.testing.assert_allclose(d1(X), 1 - t**2)
    np.testing.assert_allclose(d2(X), -2 * t * (1 - t**2))
    np.testing.assert_allclose(d3(X), (1 - t**2) * (6 * t**2 - 2))
    np.testing.assert_allclose(d4(X), (1 - t**2) * (-24 * t**3 + 16 * t), rtol=1e-10)
    with pytest.raises(TypeError, match="only applies to real-output functions"):
        elementwise_grad(lambda x: x * 1j)(X)


def test_jacobian_and_hessian_shapes_and_values():
    x = np.arange(6.0).reshape(2, 3) / 5

    def g(x):
        return dualad.stack([dualad.sin(x).sum(0), (x**2).sum(0)])  # shape (2, 3)

    jac = jacobian(g)(x)
    assert jac.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(jac, func.jacrev(g)(dualad.tensor(x)).numpy())
    assert jacobian(f)(X).shape == (3,)
    assert jacobian(lambda x: x * x)(3.0) == 6.0
    assert jacobian(lambda x: x[:0])(X).shape == (0, 3)
    hess = hessian(lambda x: (x**3).sum())(x)
    assert hess.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(hess.reshape(6, 6), np.diag(6 * x.ravel()))
    with pytest.raises(TypeError, match="must be a scalar or an array, got tuple"):
        jacobian(lambda a, b: a * b, (0, 1))(X, X)


def test_products():
    v = np.array([1.0, -2.0, 0.5])
    hess = hessian(f)(X)
    hvp, gradient = make_hvp(f)(X)
    np.testing.assert_allclose(gradient, df(X))
    np.testing.assert_allclose(hvp(v), hess @ v)
    np.testing.assert_allclose(hvp(2 * v), 2 * hess @ v)  # called again
    assert hessian_vector_product is hessian_tensor_product
    np.testing.assert_allclose(hessian_tensor_product(f)(X, v), hess @ v)
    assert vector_jacobian_product is tensor_jacobian_product
    jac = jacobian(f_vec)(X)
    np.testing.assert_allclose(tensor_jacobian_product(f_vec)(X, v), v @ jac)

    def g(x):  # R^3 -> R^(2, 3)
        return dualad.stack([dualad.sin(x), x**2])

    w = np.array([0.5, 2.0])
    np.testing.assert_allclose(tensor_jacobian_product(g)(X, w), np.tensordot(w, jacobian(g)(X), 1))
    vjp, ans = make_vjp(f_vec)(X)
    np.testing.assert_allclose(ans, np.sin(X) * X)
    np.testing.assert_allclose(vjp(v), v @ jac)
    np.testing.assert_allclose(vjp(np.ones(3)), df(X))
    ans, tangent = make_jvp(f_vec)(X)(v)
    np.testing.assert_allclose(tangent, jac @ v)
    np.testing.assert_allclose(make_ggnvp(f_vec)(X)(v), jac.T @ jac @ v)
    weights = np.array([1.0, 2.0, 3.0])
    ggn = make_ggnvp(f_vec, lambda y: (weights * y**2).sum())(X)
    np.testing.assert_allclose(ggn(v), jac.T @ np.diag(2 * weights) @ jac @ v)


def test_multigrad_dict():
    grads = multigrad_dict(lambda a, b, c=2.0: a * b * c)(1.0, 3.0)
    assert list(grads) == ["a", "b", "c"]
    assert tuple(grads.values()) == (6.0, 2.0, 3.0)
    with pytest.raises(TypeError, match=r"\*args or \*\*kwargs"):
        multigrad_dict(lambda *a: a[0])


def test_checkpoint_keeps_values_and_recomputes_on_the_tape():
    calls = []

    def block(x):
        calls.append(1)
        return dualad.sin(dualad.exp(x))

    wrapped = checkpoint(block)
    out = wrapped(X)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, np.sin(np.exp(X)))
    expected = np.cos(np.exp(X)) * np.exp(X)
    np.testing.assert_allclose(grad(lambda x: wrapped(x).sum())(X), expected)
    x = dualad.tensor(X, requires_grad=True)
    calls.clear()
    wrapped(x).sum().backward()
    assert len(calls) == 2  # the forward and the recomputation
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_complex_convention_is_autograds():
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    # |z|^2 = x^2 + y^2: autograd's grad is df/dx - i df/dy = 2 conj(z); dualad.func's 2 z
    np.testing.assert_allclose(grad(lambda z: (abs(z) ** 2).sum())(z), 2 * np.conj(z))
    np.testing.assert_allclose(
        func.grad(lambda z: (abs(z) ** 2).sum())(z), 2 * z
    )  # (the documented contrast)
    # holomorphic: the complex derivative
    np.testing.assert_allclose(holomorphic_grad(lambda z: (z**3).sum())(z), 3 * z**2)
    np.testing.assert_allclose(grad(lambda z: (z**3).sum())(z), 3 * z**2)
    np.testing.assert_allclose(jacobian(lambda z: z**2)(z), np.diag(2 * z))
    np.testing.assert_allclose(elementwise_grad(lambda z: (z * z.conj()).real)(z), 2 * np.conj(z))
    vjp, _ = make_vjp(lambda z: z * (2.0 - 1.0j))(z)
    np.testing.assert_allclose(vjp(np.ones(2, dtype=complex)), np.full(2, 2.0 - 1.0j))
    with pytest.warns(UserWarning, match="Input to holomorphic_grad is not complex"):
        holomorphic_grad(lambda x: x * 2.0)(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        holomorphic_grad(lambda z: z * 2.0)(1.0 + 0.0j)


def test_check_grads_passes_and_catches_a_wrong_derivative():
    check_grads(f, modes=["fwd", "rev"], order=2)(X)
    check_grads(lambda a, b: (a * dualad.exp(b)).sum(), argnum=(0, 1), order=1)(X, X)
    check_grads(lambda p: (p["a"] * p["b"][0]).sum(), modes=["rev"])({"a": X, "b": [X * 2]})
    check_grads(lambda z: (abs(z) ** 2).sum(), order=2)(np.array([1.0 + 2.0j, 0.5j]))
    check_grads(lambda z: (z**3).sum())(np.array([1.0 + 2.0j]))

    class Square(Function):  # a deliberately wrong VJP and JVP (x instead of 2x)
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.x = x
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.x

    with pytest.raises(AssertionError, match=r"Derivative \(VJP\) check of .* failed"):
        check_grads(Square.apply, modes=["rev"], order=1)(X)
    with pytest.raises(AssertionError, match="Value mismatch"):
        check_grads(Square.apply, modes=["fwd"], order=1)(X)
    with pytest.raises(ValueError, match="modes are 'fwd' and 'rev'"):
        check_grads(f, modes=["both"])(X)


def test_composes_with_dualad_func():
    per_example = func.vmap(grad(lambda w, x: (dualad.tanh(w * x)).sum()), in_dims=(0, None))
    w = np.array([[0.5, 1.0], [2.0, -1.0]])
    x = dualad.tensor([1.0, 2.0])
    out = per_example(dualad.tensor(w), x)
    np.testing.assert_allclose(out.numpy(), (1 - np.tanh(w * x.numpy()) ** 2) * x.numpy())
    d3 = grad(grad(grad(dualad.tanh)))
    t = np.tanh(0.3)
    np.testing.assert_allclose(d3(0.3), (1 - t**2) * (6 * t**2 - 2))
