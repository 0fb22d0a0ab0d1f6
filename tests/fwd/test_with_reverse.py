"""Forward mode composed with reverse mode, in both orders (Hessian-vector products)."""

import numpy as np

import dualad
from dualad import fwd

X0 = np.array([0.3, 0.7, -0.4])
V0 = np.array([1.0, -2.0, 0.5])


def hessian_f(x):
    return np.diag(2 * np.cos(x) - x * np.sin(x))


def g(x):
    return (dualad.sin(x) * x).sum()


def test_reverse_over_forward_gives_hvp():
    x = dualad.tensor(X0, requires_grad=True)
    with fwd.dual_level():
        dual = fwd.make_dual(x, dualad.tensor(V0))
        jv = fwd.unpack_dual(g(dual)).tangent
    (hv,) = dualad.autograd.grad(jv, x)
    np.testing.assert_allclose(hv.numpy(), hessian_f(X0) @ V0, rtol=1e-12)


def test_forward_over_reverse_gives_hvp():
    with fwd.dual_level():
        x = fwd.make_dual(dualad.tensor(X0, requires_grad=True), dualad.tensor(V0))
        (grad,) = dualad.autograd.grad(g(x), x)
        primal, tangent = fwd.unpack_dual(grad)
    np.testing.assert_allclose(primal.numpy(), np.sin(X0) + X0 * np.cos(X0), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), hessian_f(X0) @ V0, rtol=1e-12)


def test_backward_inside_level_gives_dual_grad():
    leaf = dualad.tensor(X0, requires_grad=True)
    with fwd.dual_level():
        x = fwd.make_dual(leaf, dualad.tensor(V0))
        g(x).backward()
        tangent = fwd.unpack_dual(leaf.grad).tangent
    np.testing.assert_allclose(leaf.grad.detach().numpy(), np.sin(X0) + X0 * np.cos(X0))
    np.testing.assert_allclose(tangent.numpy(), hessian_f(X0) @ V0, rtol=1e-12)


def test_make_dual_and_unpack_dual_are_differentiable():
    foo = dualad.rand(3, requires_grad=True)
    bar = dualad.rand(3, requires_grad=True)
    with fwd.dual_level():
        dual = fwd.make_dual(foo, bar)
        primal, tangent = fwd.unpack_dual(dual)
        grads = dualad.autograd.grad(primal.sum(), (foo, bar), allow_unused=True)
        np.testing.assert_array_equal(grads[0].numpy(), np.ones(3))
        assert grads[1] is None
        grads = dualad.autograd.grad(tangent.sum(), (foo, bar), allow_unused=True)
        assert grads[0] is None
        np.testing.assert_array_equal(grads[1].numpy(), np.ones(3))


def test_tangent_that_requires_grad_is_recorded():
    a = dualad.rand(3, requires_grad=True)
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.rand(3), a)
        out = dualad.exp(dual)
        tangent = fwd.unpack_dual(out).tangent
        assert tangent.requires_grad
        (grad,) = dualad.autograd.grad(tangent.sum(), a)
        # (the gradient carries a tangent at the live level: its values are read detached)
        primal = fwd.unpack_dual(dual).primal.numpy()
        np.testing.assert_allclose(grad.detach().numpy(), np.exp(primal))


def test_forward_over_reverse_through_inplace_ops_saving_their_input():
    # x.sin_() saves x before the write; its snapshot shared x's tangent object, which the
    # write then updates in place (to cos(x) v), so the tangent of the backward's cos(x) came
    # out as -sin(x) cos(x) v instead of -sin(x) v (torch 2.13 gives the latter)
    cases = [
        (lambda r, x: r.sin_(), lambda x, v: -np.sin(x) * v),
        (lambda r, x: r.mul_(x), lambda x, v: 2 * v),
        (lambda r, x: r[1:].sin_(), lambda x, v: np.r_[0.0, -np.sin(x[1:]) * v[1:]]),
    ]
    for body, hv in cases:
        with fwd.dual_level():
            x = fwd.make_dual(dualad.tensor(X0), dualad.tensor(V0)).requires_grad_()
            r = x * 1
            body(r, x)
            (gx,) = dualad.autograd.grad(r.sum(), x)
            tangent = fwd.unpack_dual(gx).tangent
        np.testing.assert_allclose(tangent.numpy(), hv(X0, V0), rtol=1e-12)
    # a view that has no tangent yet (its base got one after the view was made) reads its
    # base's before the write
    with fwd.dual_level():
        x = fwd.make_dual(dualad.tensor(X0), dualad.tensor(V0)).requires_grad_()
        base = dualad.zeros(3)
        view = base[1:]
        base.copy_(x)
        view.sin_()
        (gx,) = dualad.autograd.grad(base.sum(), x)
        tangent = fwd.unpack_dual(gx).tangent
    np.testing.assert_allclose(tangent.numpy(), np.r_[0.0, -np.sin(X0[1:]) * V0[1:]], rtol=1e-12)
