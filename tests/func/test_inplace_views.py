"""In-place ops on views inside func.grad / func.vjp (a grad level): the base sees the write
and gets PyTorch's CopySlices gradient, every view of a changed base is rebuilt. Each program
is checked against the eager tape (``backward`` on a clone of the input) and finite
differences, and under vmap (per-example gradients) and forward-over-reverse."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad.func import grad, hessian, jacfwd, jvp, vjp, vmap

RNG = np.random.default_rng(5)


def t(a, **kwargs):
    return dualad.tensor(np.asarray(a, dtype=np.float64), **kwargs)


def view_then_write(x):
    y = x * 1
    v = y[1:]
    v.mul_(x[:-1])
    return (y * dualad.arange(1.0, 5.0)).sum() + (v**2).sum()


def write_base_then_use_view(x):
    y = dualad.sin(x)
    v = y[:2]
    y.mul_(x)
    return (v * v).sum() + y.sum()


def view_of_view(x):
    y = x.reshape(2, 2) * 1
    row = y[1]
    element = row[0:1]
    element.add_(x[0] ** 2)
    return (y**3).sum() + row.sum()


def transpose_and_diagonal(x):
    y = (x.reshape(2, 2) * 1).t()
    y.diagonal().mul_(dualad.tanh(x[:2]))
    return (y * t([[1.0, 2.0], [3.0, 4.0]])).sum()


def setitem_on_a_view(x):
    y = x * 2
    v = y[::2]
    v[1] = x[1] * x[3]
    v[0] = 0.0
    return (y**2).sum()


def two_views_of_one_base(x):
    y = x.exp() * 1  # (exp saves its output: eager mode would refuse writes into it)
    a = y[:3]
    b = y[2:]
    a.mul_(2.0)
    b.sub_(x[:2])
    return (a * b[0]).sum() + (y * y).sum()


def write_into_an_input_view(x):
    # the differentiated input itself (eager: a view of a leaf cannot be written; the result
    # must be that of the same program on a copy of x)
    x[1:3].mul_(x[0] * 1)  # (x[0] shares x's version counter: eager mode would refuse it)
    return (x**2).sum()


def reshape_view_and_unsqueeze(x):
    y = x * 1
    v = y.view(2, 2).unsqueeze(0)
    v[0, 1].add_(1.0)
    v.mul_(y.sum())
    return (y * dualad.cos(y)).sum()


PROGRAMS = [
    view_then_write,
    write_base_then_use_view,
    view_of_view,
    transpose_and_diagonal,
    setitem_on_a_view,
    two_views_of_one_base,
    write_into_an_input_view,
    reshape_view_and_unsqueeze,
]


def eager_grad(f, x0: np.ndarray) -> np.ndarray:
    x = t(x0, requires_grad=True)
    f(x * 1).backward()  # (a copy: a view of the leaf itself could not be written in place)
    return x.grad.numpy()


def value(f, x0: np.ndarray) -> float:
    return float(f(t(x0)).item())


@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_grad_matches_the_eager_tape_and_finite_differences(f):
    x0 = RNG.uniform(0.5, 1.5, size=4)
    got = grad(f)(t(x0)).numpy()
    np.testing.assert_allclose(got, eager_grad(f, x0), rtol=1e-12, atol=1e-12)
    eps = 1e-6
    fd = [(value(f, x0 + eps * e) - value(f, x0 - eps * e)) / (2 * eps) for e in np.eye(x0.size)]
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_the_callers_input_is_not_written(f):
    x0 = RNG.uniform(0.5, 1.5, size=4)
    x = t(x0)
    grad(f)(x)
    np.testing.assert_array_equal(x.numpy(), x0)


@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_per_example_gradients_and_forward_over_reverse(f):
    xs = RNG.uniform(0.5, 1.5, size=(3, 4))
    per_example = vmap(grad(f))(t(xs)).numpy()
    for b in range(3):
        np.testing.assert_allclose(per_example[b], eager_grad(f, xs[b]), rtol=1e-12, atol=1e-12)
    # Hessian by forward-over-reverse against the eager tape's double backward
    x0 = xs[0]
    h = hessian(f)(t(x0)).numpy()
    x = t(x0, requires_grad=True)
    (g,) = dualad.autograd.grad(f(x * 1), x, create_graph=True)
    rows = [dualad.autograd.grad(g[i], x, retain_graph=True)[0].numpy() for i in range(4)]
    np.testing.assert_allclose(h, np.stack(rows), rtol=1e-10, atol=1e-10)
    v = RNG.standard_normal(4)
    _, hv = jvp(grad(f), (t(x0),), (t(v),))
    np.testing.assert_allclose(hv.numpy(), h @ v, rtol=1e-10, atol=1e-10)


def test_vjp_with_an_in_place_view_write_and_jacfwd_agree():
    def f(x):
        y = x * 1
        y[1:].mul_(x[:-1])
        return y

    x0 = RNG.uniform(0.5, 1.5, size=4)
    out, vjp_fn = vjp(f, t(x0))
    expected_out = x0.copy()
    expected_out[1:] *= x0[:-1]
    np.testing.assert_allclose(out.numpy(), expected_out)
    jac = jacfwd(f)(t(x0)).numpy()
    for row in np.eye(4):
        np.testing.assert_allclose(vjp_fn(t(row))[0].numpy(), row @ jac, rtol=1e-12)


def test_views_see_later_writes_to_their_base_and_to_each_other():
    seen = {}

    def f(x):
        y = x * 1
        a = y[:2]
        b = y[1:]
        b.mul_(10.0)  # a[1] is y[1]: it must see the write
        seen["a"] = a.detach().numpy().copy()
        seen["y"] = y.detach().numpy().copy()
        return a.sum()

    g = grad(f)(t([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(seen["a"], [1.0, 20.0])
    np.testing.assert_allclose(seen["y"], [1.0, 20.0, 30.0])
    np.testing.assert_allclose(g.numpy(), [1.0, 10.0, 0.0])


def test_a_reshape_that_copies_is_not_a_view():
    def f(x):
        y = (x.reshape(2, 2) * 1).t()
        flat = y.reshape(4)  # not contiguous: a copy, as in eager mode
        flat.mul_(0.0)
        return (y * y).sum()

    x0 = RNG.standard_normal(4)
    np.testing.assert_allclose(grad(f)(t(x0)).numpy(), eager_grad(f, x0), rtol=1e-12)
    np.testing.assert_allclose(grad(f)(t(x0)).numpy(), 2 * x0, rtol=1e-12)


def test_write_under_no_grad_keeps_the_history():
    def f(x):
        y = x * x
        with dualad.no_grad():
            y[:1].mul_(3.0)
        return y.sum()

    x0 = np.array([1.0, 2.0])
    np.testing.assert_allclose(grad(f)(t(x0)).numpy(), eager_grad(f, x0))
    np.testing.assert_allclose(grad(f)(t(x0)).numpy(), 2 * x0)


def test_errors_for_views_that_cannot_be_written():
    def multi_output(x):
        y = x * 1
        a, _ = y.unbind(0)
        a.mul_(2.0)
        return y.sum()

    with pytest.raises(RuntimeError, match="Output 0 of UnbindBackward0 is a view and is being"):
        grad(multi_output)(t([[1.0, 2.0], [3.0, 4.0]]))

    def broadcast(x):
        y = (x * 1).broadcast_to((2, 2))
        y.mul_(2.0)
        return y.sum()

    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        grad(broadcast)(t([1.0, 2.0]))


def test_unbind_outputs_follow_a_write_to_their_base():
    # (torch refuses to use the outputs of a multi-output view op after their base changed in
    # place; at a grad level they are rebuilt from the new base like any view: FD agrees)
    def f(x):
        y = x * 1
        a, b = y.unbind(0)
        y.mul_(x)
        return (a * b).sum()

    x0 = RNG.standard_normal((2, 3))
    eps = 1e-6
    fd = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[i] = eps
        fd[i] = (value(f, x0 + e) - value(f, x0 - e)) / (2 * eps)
    np.testing.assert_allclose(grad(f)(t(x0)).numpy(), fd, rtol=1e-6, atol=1e-9)


def test_a_view_made_under_no_grad_sees_later_writes_to_its_base():
    # the view shows its base's memory: after y.add_ it holds the new values, at a grad level
    # as in eager mode; differentiating through it then raises PyTorch's error, whose rule
    # (a no_grad view of a base that requires grad, changed in place since) holds in both
    seen = {}

    def f(x):
        y = x * 1
        with dualad.no_grad():
            v = y[1:]
        y.add_(1.0)
        with dualad.no_grad():
            seen["v"] = (v * 1).numpy().copy()
        return (v * y[1:]).sum()

    message = (
        "A view was created in no_grad mode and its base or another view of its base has been "
        "modified inplace with grad mode enabled"
    )
    x0 = np.array([0.0, 1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=message):
        grad(f)(t(x0))
    np.testing.assert_allclose(seen["v"], [2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError, match=message):
        eager_grad(f, x0)

    def g(x):  # the same view used under no_grad only: a constant, no error
        y = x * 1
        with dualad.no_grad():
            v = y[1:]
        y.add_(1.0)
        with dualad.no_grad():
            c = v * 1
        return (c * y[1:]).sum()

    expected = [0.0, 2.0, 3.0, 4.0]  # d/dx <const v, x[1:] + 1> = v
    np.testing.assert_allclose(grad(g)(t(x0)).numpy(), expected)
    np.testing.assert_allclose(eager_grad(g, x0), expected)


def test_writing_a_view_made_under_no_grad_with_grad_mode_raises():
    def f(x):
        y = x * 1
        with dualad.no_grad():
            v = y[1:]
        v.mul_(x[1:])
        return y.sum()

    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being"):
        grad(f)(t([1.0, 2.0, 3.0]))


class _Tail(dualad.autograd.Function):
    """Returns the view ``x[1:]``; its backward is deliberately not the view's (it doubles)."""

    @staticmethod
    def forward(ctx, x):
        ctx.n = x.shape[0]
        return x[1:]

    @staticmethod
    def backward(ctx, g):
        out = dualad.zeros(ctx.n, dtype=g.dtype)
        out[1:] = 2 * g
        return out


def test_a_custom_function_view_sees_writes_to_its_base():
    # at a grad level the Function's output used to keep the old values of its base
    seen = {}

    def f(x):
        y = x * 1
        v = _Tail.apply(y)
        with dualad.no_grad():
            y.add_(dualad.sin(x))  # not recorded: v keeps the Function's backward
        seen["v"] = v.detach().numpy().copy()
        return (v * v).sum()

    x0 = np.array([0.5, 1.0, 2.0])
    g = grad(f)(t(x0)).numpy()
    v = x0[1:] + np.sin(x0[1:])
    np.testing.assert_allclose(seen["v"], v)
    np.testing.assert_allclose(g, np.concatenate([[0.0], 2 * (2 * v)]))


def test_a_custom_function_view_after_a_recorded_write_to_its_base_raises():
    # rebuilding its history from the base would drop the Function's (doubling) backward
    def f(x):
        y = x * 1
        v = _Tail.apply(y)
        y.mul_(x)
        return (v * v).sum()

    with pytest.raises(RuntimeError, match="Output 0 of _TailBackward is a view and its base"):
        grad(f)(t([0.5, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Output 0 of _TailBackward is a view and its base"):
        eager_grad(f, np.array([0.5, 1.0, 2.0]))

    def g(x):
        y = x * 1
        v = _Tail.apply(y)
        v.mul_(2.0)
        return y.sum()

    with pytest.raises(RuntimeError, match="Output 0 of _TailBackward is a view and is being"):
        grad(g)(t([0.5, 1.0, 2.0]))


def test_a_tensor_written_by_a_broadcast_copy_or_setitem_can_still_be_viewed():
    # the functional copy_/setitem/fill_ a grad level rebinds to keep the written tensor's
    # layout: copy_ of a broadcast (or transposed) source gave a strided value, and a view of
    # the base made before the write (replayed on the new value) or after it raised
    # "view size is not compatible" where the eager program works
    x0 = RNG.standard_normal((3, 4))
    w = np.arange(12.0)

    def before(x):
        y = x * 1
        flat = y.view(-1)
        y.copy_(x.amax(0))
        return (flat * t(w)).sum()

    def after(x):
        y = x * 1
        y.copy_(x[0] * 2)
        return (y.view(-1) * t(w)).sum()

    def transposed(x):
        y = x * 1
        y.copy_(x.mT.mT * 3)  # (a transposed source)
        y.T[0] = x[:, 0] * 0.5  # (setitem through a transposed view)
        return (y.view(-1) * t(w)).sum()

    expected_before = np.zeros((3, 4))
    expected_before[np.argmax(x0, 0), np.arange(4)] = w.reshape(3, 4).sum(0)
    expected_after = np.zeros((3, 4))
    expected_after[0] = 2 * w.reshape(3, 4).sum(0)
    expected_transposed = 3 * w.reshape(3, 4)
    expected_transposed[:, 0] = 0.5 * w.reshape(3, 4)[:, 0]
    for f, expected in [
        (before, expected_before),
        (after, expected_after),
        (transposed, expected_transposed),
    ]:
        np.testing.assert_allclose(grad(f)(t(x0)).numpy(), expected)
        np.testing.assert_allclose(eager_grad(f, x0), expected)
        np.testing.assert_allclose(vmap(grad(f))(t(np.stack([x0, x0]))).numpy()[1], expected)


def test_a_setitem_on_columns_under_vmap_of_grad_keeps_each_examples_layout():
    # the batching rule puts the batch dim next to the indexed dim; the functional setitem
    # copied in that order, so each example's value was strided and view(-1) raised
    w = np.arange(12.0)

    def f(x):
        y = x * 1
        y[:, dualad.tensor(np.array([-1]))] = 0.0
        return (y.view(-1) * t(w)).sum()

    expected = w.reshape(3, 4).copy()
    expected[:, -1] = 0.0
    X = RNG.standard_normal((2, 3, 4))
    got = vmap(grad(f))(t(X)).numpy()
    np.testing.assert_allclose(got, np.stack([expected, expected]))
