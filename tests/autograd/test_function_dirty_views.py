"""A custom Function that marks its input dirty, with a view of that input (or its base) made
before the call and read after it, under nested transforms.

The composition fuzz found ``jacrev(jacfwd(f))`` silently 0 there: the grad level rebuilt the
views of the dirtied tensor while the dual level above it was suspended (it is running the
Function one level down), and the rebuilt views lost their tangents at that dual level, so
everything read through them was a constant to jacfwd. Every transform and composition order
is checked here against analytic Hessians.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.func as F
from dualad import autograd, fwd
from dualad.autograd import Function


class ScaleInplaceNoJvp(Function):
    """``x *= 1.5`` in place, marked dirty, without jvp: forward mode derives the tangent from
    backward."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(1.5)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 1.5


class ScaleInplace(ScaleInplaceNoJvp):
    """The same with a jvp that scales the tangent in place, as it must."""

    @staticmethod
    def jvp(ctx, t):
        t.mul_(1.5)
        return t


class ScaleInplaceVmap(ScaleInplace):
    """ScaleInplace with a generated vmap rule (for per-example Hessians)."""

    generate_vmap_rule = True


class ScaleInplaceNoJvpVmap(ScaleInplaceNoJvp):
    generate_vmap_rule = True


FUNCTIONS = [ScaleInplace, ScaleInplaceNoJvp]


def matmul_of_view(S):
    """The fuzz's program, reduced: ``v @ v`` with v a view of r made before r is scaled in
    place: 2.25 * sum(a**2), Hessian 4.5 I."""

    def f(a):
        r = a * 1
        v = r.reshape(-1)
        S.apply(r)
        return v @ v

    return f


def slice_and_base(S):
    """A slice view of ``r = a * a`` and r itself read after r is scaled in place:
    1.5 * sum(a[0]**3) + 2.25 * sum(a**4)."""

    def f(a):
        r = a * a
        v = r[0]
        S.apply(r)
        return (v * a[0]).sum() + (r * r).sum()

    return f


def slice_and_base_hessian(x):
    mask = np.zeros_like(x)
    mask[0] = 1.0
    return np.diag((9.0 * x * mask + 27.0 * x**2).reshape(-1))


CASES = {
    "matmul_of_view": (matmul_of_view, lambda x: 4.5 * np.eye(x.size)),
    "slice_and_base": (slice_and_base, slice_and_base_hessian),
}


def two_input(S):
    """``g(a, b)``: v a view of r = a * b, read after r is scaled in place:
    2.25 * sum(a**2 * b**2)."""

    def g(a, b):
        r = a * b
        v = r.reshape(-1)
        S.apply(r)
        return v @ v

    return g


def two_input_blocks(a, b):
    """The Hessian blocks of ``two_input`` as (2, 2, n, n)."""
    a, b = a.reshape(-1), b.reshape(-1)
    return np.array(
        [
            [np.diag(4.5 * b**2), np.diag(9.0 * a * b)],
            [np.diag(9.0 * a * b), np.diag(4.5 * a**2)],
        ]
    )


X0 = np.array([[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]])


def _np(t):
    return t.detach().numpy() if isinstance(t, dualad.Tensor) else np.asarray(t)


def check(actual, expected):
    np.testing.assert_allclose(_np(actual), expected, rtol=1e-10, atol=1e-10)


def second_order_routes(f):
    """Hessians of scalar ``f`` (flattened to (n, n)) by every composition of transforms."""
    n = X0.size
    x = dualad.tensor(X0)
    yield "jacrev(jacfwd)", lambda: F.jacrev(F.jacfwd(f))(x).reshape(n, n)
    yield "jacfwd(jacrev)", lambda: F.jacfwd(F.jacrev(f))(x).reshape(n, n)
    yield "jacfwd(jacfwd)", lambda: F.jacfwd(F.jacfwd(f))(x).reshape(n, n)
    yield "jacrev(jacrev)", lambda: F.jacrev(F.jacrev(f))(x).reshape(n, n)
    yield "hessian", lambda: F.hessian(f)(x).reshape(n, n)
    yield "jacrev(grad)", lambda: F.jacrev(F.grad(f))(x).reshape(n, n)
    yield "jacfwd(grad)", lambda: F.jacfwd(F.grad(f))(x).reshape(n, n)

    def hvp_columns(hvp):
        cols = []
        for i in range(n):
            e = np.zeros(n)
            e[i] = 1.0
            cols.append(_np(hvp(dualad.tensor(e.reshape(X0.shape)))).reshape(-1))
        return np.stack(cols, axis=1)

    # forward over reverse: jvp of grad
    yield "jvp(grad)", lambda: hvp_columns(lambda e: F.jvp(F.grad(f), (x,), (e,))[1])

    # reverse over forward: grad of the directional derivative
    def grad_of_jvp(e):
        return F.grad(lambda a: F.jvp(f, (a,), (e,))[1])(x)

    yield "grad(jvp)", lambda: hvp_columns(grad_of_jvp)

    def eager_double_backward():
        a = dualad.tensor(X0, requires_grad=True)
        (g,) = autograd.grad(f(a), a, create_graph=True)
        g = g.reshape(-1)
        rows = [_np(autograd.grad(g[i], a, retain_graph=True)[0]).reshape(-1) for i in range(n)]
        return np.stack(rows)

    yield "eager double backward", eager_double_backward

    def eager_reverse_over_forward(e):
        a = dualad.tensor(X0, requires_grad=True)
        with fwd.dual_level():
            t = fwd.unpack_dual(f(fwd.make_dual(a, e))).tangent
        return autograd.grad(t, a)[0]

    yield "eager reverse over forward", lambda: hvp_columns(eager_reverse_over_forward)

    def eager_forward_over_reverse(e):
        with fwd.dual_level():
            a = fwd.make_dual(dualad.tensor(X0, requires_grad=True), e)
            (g,) = autograd.grad(f(a), a)
            return fwd.unpack_dual(g).tangent

    yield "eager forward over reverse", lambda: hvp_columns(eager_forward_over_reverse)


ROUTES = [name for name, _ in second_order_routes(lambda a: a.sum())]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("S", FUNCTIONS, ids=lambda S: S.__name__)
def test_hessian_through_view_of_dirtied_tensor(S, case, route):
    make, hessian = CASES[case]
    compute = dict(second_order_routes(make(S)))[route]
    check(compute(), hessian(X0))


@pytest.mark.parametrize("S", FUNCTIONS, ids=lambda S: S.__name__)
def test_first_derivative_inside_grad_level(S):
    """The jacfwd inside the grad level (what jacrev then differentiates) sees the view's
    tangent: the gradient 4.5 * a, not 0."""
    f = matmul_of_view(S)
    x = dualad.tensor(X0)
    out, vjp_fn = F.vjp(F.jacfwd(f), x)
    check(out, 4.5 * X0)
    check(vjp_fn(dualad.ones_like(out))[0], np.full(X0.shape, 4.5))


@pytest.mark.parametrize("S", FUNCTIONS, ids=lambda S: S.__name__)
def test_dirty_view_reaches_base_tangent(S):
    """The Function on a view of r, r read after (its tangent rebuilt from the view's): the
    Hessian of 2.25 * sum(a**4), 27 * diag(a**2), by every route."""

    def f(a):
        r = a * a
        v = r.reshape(-1)
        S.apply(v)
        return (r * r).sum()

    for name, compute in second_order_routes(f):
        np.testing.assert_allclose(
            _np(compute()), np.diag(27.0 * X0.reshape(-1) ** 2), rtol=1e-10, err_msg=name
        )


@pytest.mark.parametrize("S", FUNCTIONS, ids=lambda S: S.__name__)
@pytest.mark.parametrize(
    "route",
    ["jacrev(jacfwd)", "jacfwd(jacrev)", "jacfwd(jacfwd)", "jacrev(jacrev)", "hessian"],
)
@pytest.mark.parametrize("repeated", [True, False], ids=["x, x", "x, y"])
def test_two_inputs_argnums(S, route, repeated):
    """The fuzz's setting: two inputs, argnums=(0, 1), one tensor passed in both slots (each
    slot its own derivative) or two tensors."""
    g = two_input(S)
    a0 = X0
    b0 = X0 if repeated else X0[::-1] * 0.5 + 0.25
    a, b = dualad.tensor(a0), dualad.tensor(b0)
    if repeated:
        b = a
    transform = {
        "jacrev(jacfwd)": lambda h: F.jacrev(F.jacfwd(h, argnums=(0, 1)), argnums=(0, 1)),
        "jacfwd(jacrev)": lambda h: F.jacfwd(F.jacrev(h, argnums=(0, 1)), argnums=(0, 1)),
        "jacfwd(jacfwd)": lambda h: F.jacfwd(F.jacfwd(h, argnums=(0, 1)), argnums=(0, 1)),
        "jacrev(jacrev)": lambda h: F.jacrev(F.jacrev(h, argnums=(0, 1)), argnums=(0, 1)),
        "hessian": lambda h: F.hessian(h, argnums=(0, 1)),
    }[route]
    H = transform(g)(a, b)
    n = X0.size
    got = np.array([[_np(H[i][j]).reshape(n, n) for j in range(2)] for i in range(2)])
    check(got, two_input_blocks(a0, b0))


@pytest.mark.parametrize("route", ["jacrev(jacfwd)", "grad(jvp)", "jacfwd(jacfwd)"])
def test_inplace_jvp_on_grad_tracked_tangent_is_seen(route):
    """No view at all: the tangent that the jvp scales in place is tracked by the outer grad
    level, which rebinds it to a new value (the version below stays): that is an in-place
    write, not PyTorch's "not modifying the forward mode gradients inplace" error. Hessian of
    2.25 * sum(a**4)."""

    def f(a):
        r = a * a
        ScaleInplace.apply(r)
        return (r * r).sum()

    compute = dict(second_order_routes(f))[route]
    check(compute(), np.diag(27.0 * X0.reshape(-1) ** 2))


class ScaleOutOfPlaceJvp(ScaleInplaceNoJvp):
    """Marks its input dirty but returns a new tangent: PyTorch's error, at every order."""

    @staticmethod
    def jvp(ctx, t):
        return t * 1.5

    generate_vmap_rule = True


@pytest.mark.parametrize("route", ["jacfwd", "jacrev(jacfwd)", "grad(jvp)", "vmap(jacrev(jacfwd))"])
def test_out_of_place_jvp_of_dirty_input_still_raises(route):
    """(A jvp that returns a new tangent for a dirty input must still be refused.)"""

    def f(a):
        r = a * a
        ScaleOutOfPlaceJvp.apply(r)
        return (r * r).sum()

    x = dualad.tensor(X0)
    run = {
        "jacfwd": lambda: F.jacfwd(f)(x),
        "jacrev(jacfwd)": lambda: F.jacrev(F.jacfwd(f))(x),
        "grad(jvp)": lambda: F.grad(lambda a: F.jvp(f, (a,), (dualad.ones_like(a),))[1])(x),
        "vmap(jacrev(jacfwd))": lambda: F.vmap(F.jacrev(F.jacfwd(f)))(dualad.stack([x, x])),
    }[route]
    with pytest.raises(RuntimeError, match="not modifying the forward mode gradients inplace"):
        run()


@pytest.mark.parametrize("S", [ScaleInplaceVmap, ScaleInplaceNoJvpVmap], ids=lambda S: S.__name__)
def test_per_example_hessians(S):
    """vmap over jacrev(jacfwd): each example's Hessian of slice_and_base."""
    f = slice_and_base(S)
    X = np.stack([X0, X0 * 0.5 - 0.25])
    H = F.vmap(F.jacrev(F.jacfwd(f)))(dualad.tensor(X))
    n = X0.size
    for k in range(2):
        check(_np(H[k]).reshape(n, n), slice_and_base_hessian(X[k]))
