"""A custom Function given an output of ``unbind``/``split``/``chunk`` (or a view of one), its
result kept alive, then the base written in place.

Eager mode (PyTorch's rule): the write is fine; USING the Function's view afterwards with grad
mode on raises "Output 0 of <Name>Backward is a view and its base or another view of its base
has been modified inplace. This view was created inside a custom Function ..." (replaying the
view would drop the Function's backward); its values are the base's new ones. func.grad /
func.vjp / jacrev used to raise when the base was WRITTEN ("cannot rebuild that view"), as the
view steps of a multi-output view's alias were thought unknown: they must behave as eager mode.
Forward mode (jvp, jacfwd) never raises this error (PyTorch's check is on the reverse graph).
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import fwd
from dualad.autograd import Function
from dualad.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

RNG = np.random.default_rng(11)
X0 = RNG.standard_normal((3, 4))
W = np.arange(12.0).reshape(3, 4) / 7


def t(a):
    return dualad.tensor(np.asarray(a, dtype=np.float64))


class Identity(Function):
    """The issue's Function: returns its input as-is (no vmap rule)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, tangent):
        return tangent


class BatchableIdentity(Function):
    """Returns its input as-is; vmap through the generated rule."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, tangent):
        return tangent


class Tail(Function):
    """Returns the view ``x[1:]`` of its input."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x[1:]

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.shape = inputs[0].shape

    @staticmethod
    def backward(ctx, g):
        out = dualad.zeros(ctx.shape, dtype=g.dtype)
        out[1:] = g
        return out

    @staticmethod
    def jvp(ctx, tangent):
        return tangent[1:]


FUNCTIONS = [Identity, BatchableIdentity, Tail]

VIEWS = {
    "unbind": lambda y: y.unbind(0)[1],
    "split": lambda y: y.split(2)[0],
    "chunk": lambda y: y.chunk(2, 1)[1],
    "unbind_of_a_view": lambda y: y[1:].unbind(1)[2],
    "a_view_of_split": lambda y: y.split(2)[0][1],
    # (single-output views, which always worked: the same rules hold)
    "index": lambda y: y[1],
    "slice": lambda y: y[:2],
}


def program(view, fn, use: bool):
    def f(x):
        y = x * 1
        z = fn.apply(view(y))  # kept alive
        y.add_(0.3)
        out = (y * t(W)).sum()
        if use:
            out = out + (z * z).sum()
        return out

    return f


def eager_grad(f, x0=X0):
    x = dualad.tensor(x0, requires_grad=True)
    f(x).backward()
    return x.grad.numpy()


def eager_jvp(f, x0, t0):
    with fwd.dual_level():
        out = f(fwd.make_dual(t(x0), t(t0)))
        return out.detach().numpy(), fwd.unpack_dual(out).tangent.numpy()


def custom_view_error(fn) -> str:
    return (
        rf"Output 0 of {fn.__name__}Backward is a view and its base or another view of its "
        r"base has been modified inplace\. This view was created inside a custom Function"
    )


def test_the_issue_reproducer():
    def f(x):
        y = x * 1
        z = Identity.apply(y.unbind(0)[0])  # noqa: F841 (alive, never used)
        y.add_(0.3)
        return y.sum()

    x0 = np.array([0.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(grad(f)(t(x0)).numpy(), [1.0, 1.0, 1.0, 1.0])
    out, pullback = vjp(f, t(x0))
    np.testing.assert_allclose(out.numpy(), 7.2)
    np.testing.assert_allclose(pullback(t(1.0))[0].numpy(), [1.0, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(eager_grad(f, x0), [1.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("view", VIEWS, ids=str)
def test_an_unused_stale_view_changes_nothing(view, fn):
    f = program(VIEWS[view], fn, use=False)
    expected = eager_grad(f)
    np.testing.assert_allclose(expected, W)  # (y.add_ adds a constant)
    np.testing.assert_allclose(grad(f)(t(X0)).numpy(), expected)
    _, pullback = vjp(f, t(X0))
    np.testing.assert_allclose(pullback(t(1.0))[0].numpy(), expected)
    np.testing.assert_allclose(jacrev(f)(t(X0)).numpy(), expected)
    np.testing.assert_allclose(jacfwd(f)(t(X0)).numpy(), expected)
    np.testing.assert_allclose(jacrev(jacrev(f))(t(X0)).numpy(), np.zeros((3, 4, 3, 4)))
    np.testing.assert_allclose(hessian(f)(t(X0)).numpy(), np.zeros((3, 4, 3, 4)))
    if fn is not Identity:  # (Identity has no vmap rule)
        got = vmap(grad(f))(t(np.stack([X0, 2 * X0]))).numpy()
        np.testing.assert_allclose(got, np.stack([expected, expected]))


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("view", VIEWS, ids=str)
def test_using_the_stale_view_raises_the_eager_error(view, fn):
    f = program(VIEWS[view], fn, use=True)
    message = custom_view_error(fn)
    with pytest.raises(RuntimeError, match=message):
        eager_grad(f)
    with pytest.raises(RuntimeError, match=message):
        grad(f)(t(X0))
    _, pullback = vjp(f, t(X0))
    with pytest.raises(RuntimeError, match=message):
        pullback(t(1.0))
    with pytest.raises(RuntimeError, match=message):
        jacrev(f)(t(X0))
    with pytest.raises(RuntimeError, match=message):
        jacrev(jacfwd(f))(t(X0))
    if fn is BatchableIdentity:  # (Tail under vmap(grad): test_a_view_that_cannot_be_rebuilt)
        with pytest.raises(RuntimeError, match=message):
            vmap(grad(f))(t(np.stack([X0, X0])))


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("view", VIEWS, ids=str)
@pytest.mark.parametrize("use", [False, True], ids=["unused", "used"])
def test_forward_mode_and_vmap_give_the_eager_values(view, fn, use):
    # forward mode has no such error: the view's tangent follows its base's, as eager
    f = program(VIEWS[view], fn, use)
    t0 = RNG.standard_normal((3, 4))
    value, tangent = eager_jvp(f, X0, t0)
    out, tan = jvp(f, (t(X0),), (t(t0),))
    np.testing.assert_allclose(out.numpy(), value)
    np.testing.assert_allclose(tan.numpy(), tangent)
    eps = 1e-6
    fd = (f(t(X0 + eps * t0)).numpy() - f(t(X0 - eps * t0)).numpy()) / (2 * eps)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)
    jac = jacfwd(f)(t(X0)).numpy()
    np.testing.assert_allclose((jac * t0).sum(), tangent)
    if fn is not Identity:
        got = vmap(f)(t(np.stack([X0, -X0]))).numpy()
        np.testing.assert_allclose(got, [value, f(t(-X0)).numpy()])


@pytest.mark.parametrize("view", ["unbind", "split", "unbind_of_a_view"])
def test_the_stale_view_holds_the_new_values_of_its_base(view):
    seen = {}

    def f(x):
        y = x * 1
        z = Tail.apply(VIEWS[view](y))
        y.mul_(x)
        with dualad.no_grad():
            seen["z"] = (z * 1).numpy().copy()  # (no_grad: reading it is no error)
        return y.sum()

    expected = 2 * X0
    np.testing.assert_allclose(grad(f)(t(X0)).numpy(), expected)
    at_grad_level = seen.pop("z")
    np.testing.assert_allclose(eager_grad(f), expected)
    np.testing.assert_allclose(at_grad_level, seen["z"])
    np.testing.assert_allclose(at_grad_level, VIEWS[view](t(X0 * X0)).numpy()[1:])


@pytest.mark.parametrize("view", ["unbind", "split", "a_view_of_split"])
def test_writing_a_function_view_of_a_multi_output_view_raises_the_functions_error(view):
    # the Function made it last, so its error wins over the multi-output view's (eager and
    # PyTorch): the grad level used to name UnbindBackward0 / SplitWithSizesBackward0
    def f(x):
        y = x * 1
        z = Tail.apply(VIEWS[view](y))
        z.mul_(2.0)
        return y.sum()

    message = r"Output 0 of TailBackward is a view and is being modified inplace\. This view was"
    with pytest.raises(RuntimeError, match=message):
        eager_grad(f)
    with pytest.raises(RuntimeError, match=message):
        grad(f)(t(X0))

    def g(x):  # a multi-output view of the Function's view: the multi-output error wins
        y = x * 1
        z = Tail.apply(y).unbind(0)[0]
        z.mul_(2.0)
        return y.sum()

    with pytest.raises(RuntimeError, match="Output 0 of UnbindBackward0 is a view and is being"):
        grad(g)(t(X0))


def test_a_view_that_cannot_be_rebuilt_raises_only_when_used():
    # under vmap(grad) the Function's view relation is one of batched values, which the grad
    # level does not know how to replay: the write is fine, a use raises (it used to raise at
    # the write, although eager mode runs the program)
    X = t(np.stack([X0, -X0]))

    def unused(x):
        y = x * 1
        z = Tail.apply(y.unbind(0)[1])
        y.add_(0.3)
        assert z.shape == (3,) and z.dtype == np.float64  # (still readable)
        return y.sum()

    np.testing.assert_allclose(vmap(grad(unused))(X).numpy(), np.ones((2, 3, 4)))
    np.testing.assert_allclose(eager_grad(unused), np.ones((3, 4)))

    def used(x):
        y = x * 1
        z = Tail.apply(y[1])
        y.add_(0.3)
        with dualad.no_grad():
            c = (z * 1).sum()
        return c + y.sum()

    with pytest.raises(RuntimeError, match=r"cannot rebuild that view.*Clone the output"):
        vmap(grad(used))(X)
    with pytest.raises(RuntimeError, match="cannot rebuild that view"):
        vmap(jacrev(lambda x: used(x) * 1))(X)
    expected = eager_grad(used)  # (eager: z is a constant under no_grad)
    np.testing.assert_allclose(expected, np.ones((3, 4)))
    np.testing.assert_allclose(grad(used)(t(X0)).numpy(), expected)  # (known there)

    def returned(x):
        y = x * 1
        z = Tail.apply(y[1])
        y.add_(0.3)
        return z

    with pytest.raises(RuntimeError, match="cannot rebuild that view"):
        vmap(jacrev(returned))(X)


class FirstRow(Function):
    """Returns ``x.unbind(0)[0]``: a multi-output view made inside the Function."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.unbind(0)[0]

    @staticmethod
    def backward(ctx, g):
        out = dualad.zeros(ctx.shape, dtype=g.dtype)
        out[0] = g
        return out


def test_a_function_that_returns_an_unbind_output():
    # the Function's view (PyTorch: its creation meta replaces the unbind's): writing it raises
    # the Function's error, the base written leaves it rebuildable, using it then raises
    def write_it(x):
        y = x * 1
        FirstRow.apply(y).mul_(2.0)
        return y.sum()

    message = r"Output 0 of FirstRowBackward is a view and is being modified inplace\. This view"
    with pytest.raises(RuntimeError, match=message):
        eager_grad(write_it)
    with pytest.raises(RuntimeError, match=message):
        grad(write_it)(t(X0))

    def write_base(use):
        def f(x):
            y = x * 1
            z = FirstRow.apply(y)
            y.mul_(x)
            return y.sum() + ((z * z).sum() if use else 0.0)

        return f

    expected = 2 * X0
    np.testing.assert_allclose(eager_grad(write_base(False)), expected)
    np.testing.assert_allclose(grad(write_base(False))(t(X0)).numpy(), expected)
    np.testing.assert_allclose(jacrev(write_base(False))(t(X0)).numpy(), expected)
    for run in (eager_grad, lambda f: grad(f)(t(X0)), lambda f: jacrev(f)(t(X0))):
        with pytest.raises(RuntimeError, match=custom_view_error(FirstRow)):
            run(write_base(True))


def test_an_inner_grad_level_does_not_take_unknown_steps_for_known_ones():
    # vmap(jacrev(jacrev)): the outer grad level runs the Function on batched values and marks
    # the view's steps unknown; the inner level took the marker alone for its steps, and after
    # the write rebuilt the view as its whole base: z read in no_grad had shape (4,), not (3,)
    def f(x):
        y = x * 1
        z = Tail.apply(y[1])
        y.add_(0.3)
        with dualad.no_grad():
            c = (z * 1).sum()
        return (y * y).sum() + c

    X = t(np.stack([X0, -X0]))
    with pytest.raises(RuntimeError, match="cannot rebuild that view"):
        vmap(jacrev(jacrev(f)))(X)
    expected = 2 * np.eye(12).reshape(3, 4, 3, 4)
    np.testing.assert_allclose(jacrev(jacrev(f))(t(X0)).numpy(), expected)

    def unused(x):
        y = x * 1
        z = Tail.apply(y[1])  # noqa: F841
        y.add_(0.3)
        return (y * y).sum()

    got = vmap(jacrev(jacrev(unused)))(X).numpy()
    np.testing.assert_allclose(got, np.stack([expected, expected]))
