"""Views under reverse mode: shared memory, in-place ops on views (CopySlices), view errors,
detach / detach_.

Ported from PyTorch's test/test_autograd.py (spec/reverse.md INPL-4, 5, 7, 8 and ATTR-10, 11).
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import dualad
from dualad import autograd

_MULTI_VIEW = "This view is the output of a function that returns multiple views."
_NO_GRAD_VIEW = "A view was created in no_grad mode and is being modified inplace"


def assert_equal(actual, expected, **kw):
    a = actual.detach().numpy() if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    e = expected.detach().numpy() if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=kw.get("rtol", 1e-7), atol=kw.get("atol", 1e-7))


def numerical_jacobian_check(fn, inputs, eps=1e-6, atol=1e-6):
    """Vector-Jacobian products of ``fn`` by central differences vs reverse mode, for the
    inputs that require grad (like gradcheck; float64 inputs)."""
    rng = np.random.default_rng(0)
    out = fn(*inputs)
    ct = rng.standard_normal(out.shape)
    wrt = [x for x in inputs if x.requires_grad]
    grads = autograd.grad(out, wrt, dualad.tensor(ct), allow_unused=True)
    for x, g in zip(wrt, grads):
        base = x.detach().numpy().copy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            values = []
            for sign in (1, -1):
                shifted = base.copy()
                shifted[idx] += sign * eps
                args = [
                    dualad.tensor(
                        shifted if y is x else y.detach().numpy(), requires_grad=y.requires_grad
                    )
                    for y in inputs
                ]
                values.append((fn(*args).detach().numpy() * ct).sum())
            numeric[idx] = (values[0] - values[1]) / (2 * eps)
        actual = np.zeros_like(base) if g is None else g.numpy()
        np.testing.assert_allclose(actual, numeric, atol=atol, rtol=1e-5)


def second_order_check(fn, inputs, eps=1e-6, atol=1e-5):
    """grad of <grad(fn), v> vs central differences of the first-order gradient."""
    rng = np.random.default_rng(1)
    ct = dualad.tensor(rng.standard_normal(fn(*inputs).shape))
    vs = [rng.standard_normal(x.shape) for x in inputs]

    def first(*xs):
        out = fn(*xs)
        wrt = [x for x in xs if x.requires_grad]
        grads = autograd.grad(out, wrt, ct, create_graph=True, allow_unused=True)
        total = 0
        for g, v in zip(grads, [v for x, v in zip(xs, vs) if x.requires_grad]):
            if g is not None:
                total = total + (g * dualad.tensor(v)).sum()
        return total

    xs = [x.detach().requires_grad_(x.requires_grad) for x in inputs]
    wrt = [x for x in xs if x.requires_grad]
    total = first(*xs)
    if isinstance(total, dualad.Tensor) and total.requires_grad:
        seconds = iter(autograd.grad(total, wrt, allow_unused=True))
    else:  # the first derivative is constant: no graph to differentiate
        seconds = iter([None] * len(wrt))
    seconds = [next(seconds) if x.requires_grad else None for x in xs]
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            continue
        base = x.detach().numpy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            values = []
            for sign in (1, -1):
                shifted = base.copy()
                shifted[idx] += sign * eps
                args = [
                    dualad.tensor(
                        shifted if j == i else y.detach().numpy(), requires_grad=y.requires_grad
                    )
                    for j, y in enumerate(inputs)
                ]
                values.append(float(first(*args)))
            numeric[idx] = (values[0] - values[1]) / (2 * eps)
        actual = np.zeros_like(base) if seconds[i] is None else seconds[i].numpy()
        np.testing.assert_allclose(actual, numeric, atol=atol, rtol=1e-4)


# ------------------------------------------------------------------ sharing


def test_views_share_memory_and_version():
    x = dualad.zeros(2, 3) + 0
    for view in (
        x[0],
        x[:, 1:],
        x.view(6),
        x.reshape(3, 2),
        x.transpose(0, 1),
        x.T,
        x.narrow(1, 0, 2),
        x.select(1, 2),
        x.unsqueeze(0),
        x.view_as(x),
    ):
        version = x._version
        assert view._base is x
        view.add_(1)
        assert x._version == version + 1
        assert view._version == x._version
    assert_equal(x, [[3.0, 4.0, 4.0], [3.0, 4.0, 4.0]] and np.array(x.numpy()))
    # writing the base shows through the views
    v = x[1]
    x.zero_()
    assert_equal(v, np.zeros(3))


def test_view_of_view_has_root_base():
    x = dualad.zeros(4, 4) + 0
    v = x[1:][:, 2]
    assert v._base is x
    v.fill_(5.0)
    assert_equal(x.numpy()[1:, 2], np.full(3, 5.0))


def test_advanced_indexing_is_not_a_view():
    x = dualad.zeros(4)
    y = x[[0, 1]]
    assert y._base is None
    y.add_(1)
    assert_equal(x, np.zeros(4))


# ------------------------------------------------------------------ in-place on views


def test_inplace_on_view_backprop_base():
    # modify view and back-prop through base
    root = dualad.randn(2, 2, requires_grad=True)
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v1.mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[2, 2], [1, 1]]


def test_inplace_on_view_backprop_view_of_view():
    # modify view and backprop through view-of-view
    root = dualad.randn(2, 2, requires_grad=True)
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v2 = x.narrow(0, 0, 1)
    v1.mul_(2)
    v2.sum().backward()
    assert root.grad.tolist() == [[2, 2], [0, 0]]


def test_inplace_on_view_of_view():
    # modify view-of-view and backprop through base
    root = dualad.randn(2, 2, requires_grad=True)
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v2 = v1.narrow(1, 1, 1)
    v2.mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[1, 2], [1, 1]]


def test_inplace_on_view_then_no_grad():
    # Perform an in-place operation on a view of a non-leaf variable.
    a = dualad.ones(3, 1, dtype=dualad.float64, requires_grad=True)
    b = a * 2
    c = b.view_as(b)
    c[0][0] = 3

    # Force a graph update with grad disabled.
    with dualad.no_grad():
        _ = c.grad_fn

    c.sum().backward()
    assert_equal(a.grad, [[0.0], [2.0], [2.0]])


def test_inplace_on_view_gradcheck():
    # gradcheck modifications to views
    rng = np.random.default_rng(2)
    a = dualad.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    b = dualad.tensor(rng.standard_normal((2, 2)), requires_grad=True)

    def func(root, b):
        x = root.clone()
        x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
        x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
        return x

    numerical_jacobian_check(func, [a, b])
    second_order_check(func, [a, b])


def test_inplace_on_view_multiple_outputs():
    root = dualad.arange(9.0, dtype=dualad.float64).reshape(3, 3).requires_grad_()
    x = root.clone()
    v1 = x.unbind()
    with pytest.raises(RuntimeError, match=_MULTI_VIEW):
        v1[0].mul_(2)


def test_inplace_on_view_of_multiple_output_view():
    a = dualad.rand(10, dtype=dualad.float64, requires_grad=True).clone()
    b = a.unbind(0)
    c = b[0].view_as(b[0])
    with pytest.raises(RuntimeError, match=_MULTI_VIEW):
        c.mul_(2)


def test_inplace_multiple_output_view_of_view():
    a = dualad.rand(10, dtype=dualad.float64, requires_grad=True).clone()
    b = a.view_as(a)
    c = b.unbind(0)
    with pytest.raises(RuntimeError, match=_MULTI_VIEW):
        c[0].mul_(2)


def test_inplace_on_multi_output_view_without_grad_is_fine():
    x = dualad.zeros(2, 3)
    rows = x.unbind(0)
    rows[1].add_(1)
    assert_equal(x, [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])


def test_inplace_on_view_multi_output_safe():
    splitters = [lambda t: t.unbind(0)]
    if hasattr(dualad.Tensor, "split"):
        splitters.append(lambda t: t.split(1))
    if hasattr(dualad.Tensor, "chunk"):
        splitters.append(lambda t: t.chunk(3))
    for f in splitters:
        a = dualad.randn(3, 3, requires_grad=True)
        b = a + a
        s1, s2, _s3 = f(b)
        with pytest.raises(RuntimeError, match=_MULTI_VIEW):
            s1.mul_(s2)


def test_multi_output_view_used_after_base_modified_raises():
    # using an unbind/split output after its base changed in place would differentiate the old
    # values (the view cannot be replayed on its own): PyTorch raises, and so does dualad
    for f in (lambda t: t.unbind(), lambda t: t.split(1), lambda t: t.chunk(3)):
        x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x * 1.0
        parts = f(b)
        b.mul_(2)
        with pytest.raises(RuntimeError, match=_MULTI_VIEW):
            (parts[0] * 3 + parts[1]).backward()
        with pytest.raises(RuntimeError, match=_MULTI_VIEW):
            parts[0].grad_fn  # noqa: B018
        with dualad.no_grad():  # nothing recorded: the new values are simply read
            assert_equal(parts[0] * 3, [6.0] if parts[0].ndim else 6.0)


def test_unbind_of_a_vector_gives_views():
    # 0-d outputs of unbind share memory and the version counter with their base
    y = dualad.tensor([1.0, 2.0])
    first, second = y.unbind()
    y.mul_(2)
    assert_equal(first, 2.0)
    assert_equal(second, 4.0)
    assert first._version == y._version == 1


def test_inplace_on_view_makes_base_require_grad():
    # in-place modification to view makes base require grad
    rng = np.random.default_rng(3)
    a = dualad.tensor(rng.standard_normal((4, 4)))
    b = dualad.tensor(rng.standard_normal((4, 2)), requires_grad=True)

    def func(root, b):
        x = root.clone()
        assert not x.requires_grad
        x.narrow(1, 2, 2).mul_(b)
        assert x.requires_grad
        return x

    numerical_jacobian_check(func, [a, b])
    second_order_check(func, [a, b])


def test_inplace_on_view_backprop_view():
    # modify view and backprop through view
    a = dualad.tensor([2.0, 5.0], requires_grad=False)
    b = dualad.tensor([3.0], requires_grad=True)
    res = a.narrow(0, 1, 1).mul_(b)
    res.sum().backward()
    assert b.grad.tolist() == [5]
    assert not a.is_leaf  # a got a CopySlices history, so reading .grad warns as in torch
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert a.grad is None
    assert_equal(a, [2.0, 15.0])


def test_inplace_on_view_modify_base():
    # Test that an in-place operation on a base that forced it to require
    # grad also forces any previous views to require grad and backprop
    # correctly
    r = dualad.ones(1, dtype=dualad.float64, requires_grad=True)

    def fn(r):
        x = dualad.ones(5, dtype=dualad.float64)
        v = x.select(0, 1)
        assert not v.requires_grad
        assert v.grad_fn is None
        x.add_(r)  # v is now dependent on r due to in-place op on x
        assert v.requires_grad
        return v

    numerical_jacobian_check(fn, [r])
    second_order_check(fn, [r])
    (g,) = autograd.grad(fn(r), r)
    assert_equal(g, [1.0])


def test_inplace_on_view_non_contig():
    root = dualad.ones(2, 3, 2).select(2, 1).t().requires_grad_(True)
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v2 = v1.narrow(1, 1, 1)
    v2.mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[1, 2], [1, 1], [1, 1]]


def test_inplace_on_view_leaf_errors():
    # Issue #21875: Fail faster (when we try to modify the view vs. in backward())
    x = dualad.zeros(1, requires_grad=True)
    y = x.view_as(x)
    with pytest.raises(
        RuntimeError,
        match=r"a view of a leaf Variable that requires grad is being used in an in-place "
        r"operation\.",
    ):
        y.add_(1)


def test_inplace_on_view_weak_grad_fn():
    # Issue 23502: Test that b's grad_fn is preserved.
    a = dualad.arange(10.0, requires_grad=True)
    b = a.narrow(0, 0, 2).clone().view(-1)
    b.relu_()
    c = b.clone()
    del b
    gc.collect()
    s = c.sum()
    s.backward()
    assert s.item() == 1.0
    assert_equal(a.grad, [0.0, 1.0] + [0.0] * 8)  # relu'(0) = 0

    # Issue #21875: Fail faster (when we try to modify the view vs. in backward())
    a = dualad.rand(10, requires_grad=True).narrow(0, 0, 10)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        a.relu_()


def test_inplace_on_view_saved_output():
    # Test an in-place operation on a view in which the in-place op saves
    # its output. Previously, this created a reference cycle.
    dealloc = [0]

    class IncrementOnDelete:
        def __call__(self, *args):
            pass

        def __del__(self):
            dealloc[0] += 1

    def test():
        root = dualad.randn(3, 3, requires_grad=True)
        copy = root.clone()
        copy.grad_fn.register_hook(IncrementOnDelete())
        view = copy.view(9)
        view.relu_()  # torch.nn.functional.relu(view, inplace=True) in the seed

    test()
    gc.collect()
    assert dealloc[0] == 1


def test_inplace_on_view_backward():
    # second half of the seed test (the first needs nn.InstanceNorm2d): an in-place threshold
    # (relu_) on a view, differentiated twice; torch names the node ThresholdBackwardBackward0
    inputs = dualad.ones((1, 3, 8, 8), requires_grad=True)
    tmp1 = (inputs + 1).view_as(inputs)
    tmp2 = tmp1.relu_()
    prob_interpolated = dualad.sigmoid(tmp2)
    gradients = autograd.grad(
        outputs=prob_interpolated,
        inputs=inputs,
        grad_outputs=dualad.ones(prob_interpolated.size()),
        create_graph=True,
        retain_graph=True,
    )[0]
    gradient_penalty = gradients.sum()
    gradient_penalty.backward()
    s = 1 / (1 + np.exp(-2.0))
    assert_equal(gradients, np.full((1, 3, 8, 8), s * (1 - s)), rtol=1e-12)
    assert_equal(inputs.grad, np.full((1, 3, 8, 8), s * (1 - s) * (1 - 2 * s)), rtol=1e-12)


def test_copy_slices_views_are_not_executed():
    # test_copy_slices_graph_task_updates, f3: the old view node is not part of the new graph
    x = dualad.rand(2, requires_grad=True)
    y = dualad.rand(2, requires_grad=True)

    def f3(x, y):
        out = x.clone().view(-1)

        def hook(*args):
            pytest.fail("hook on the replaced view grad_fn must not run")

        out.register_hook(hook)
        b = out + y
        out += y
        return out + b, b

    out, b = f3(x, y)
    gb, gy = autograd.grad(out.sum(), (b, y))
    assert_equal(gb, np.ones(2))
    assert_equal(gy, 2 * np.ones(2))  # y is used twice: in b and in out += y


def test_inplace_on_view_writes_base_values():
    root = dualad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x = root * 1
    x[:, 1].mul_(10)
    x[0].add_(dualad.tensor([1.0, 1.0, 1.0]))
    assert_equal(x, [[1.0, 11.0, 3.0], [3.0, 40.0, 5.0]])
    go = np.arange(6.0).reshape(2, 3) + 1
    x.backward(dualad.tensor(go))
    assert_equal(root.grad, go * np.array([[1.0, 10.0, 1.0]]))


def test_setitem_on_view_of_non_leaf():
    root = dualad.ones(3, 4, requires_grad=True)
    v = dualad.tensor([1.0, 2.0], requires_grad=True)
    x = root * 2
    row = x[1]
    row[1:3] = v
    assert_equal(x.detach().numpy()[1], [2.0, 1.0, 2.0, 2.0])
    go = np.arange(12.0).reshape(3, 4)
    x.backward(dualad.tensor(go))
    expected = 2 * go
    expected[1, 1:3] = 0
    assert_equal(root.grad, expected)
    assert_equal(v.grad, go[1, 1:3])


def test_view_grad_fn_follows_base_inplace():
    root = dualad.ones(2, 2, requires_grad=True)
    x = root * 1
    v = x[0]
    x.mul_(3)
    assert v.grad_fn is not None
    (g,) = autograd.grad(v.sum(), root)
    assert_equal(g, [[3.0, 3.0], [0.0, 0.0]])


# ------------------------------------------------------------------ views made under no_grad


def test_no_grad_view_then_inplace_raises():
    a = dualad.ones(3, requires_grad=True)
    b = a * 2
    with dualad.no_grad():
        v = b[:2]
    with pytest.raises(RuntimeError, match=_NO_GRAD_VIEW):
        v.mul_(2)
    # both the view and the in-place op under no_grad is fine
    with dualad.no_grad():
        v2 = b[:2]
        v2.mul_(2)
    assert_equal(b, [4.0, 4.0, 2.0])


def test_autograd_inplace_view_of_view():
    x = dualad.zeros(2)
    with dualad.no_grad():
        y = x.view(2)
    y.requires_grad_(True)
    z = y.view(2)
    with pytest.raises(
        RuntimeError, match=r"a view of a view .* is being .* inside the no_grad block"
    ):
        z /= 2


# ------------------------------------------------------------------ detach


def test_detach_base():
    "detaching base does not detach view"
    x = dualad.randn(10, 10, requires_grad=True)
    view = x.narrow(0, 1, 4)
    x.detach_()
    assert not x.requires_grad
    assert view.requires_grad
    assert view.grad_fn is not None
    assert view._base is x


def test_detach_then_inplace_raises_in_autograd():
    x = dualad.randn((), requires_grad=True)
    orig_x = x.detach().clone()

    y = x**2  # saves self
    z = x.detach()
    z.zero_()
    with pytest.raises(RuntimeError, match="has been modified by an inplace"):
        y.backward()
    assert_equal(x, np.array(0.0))
    assert orig_x.item() != 0.0 or True


def test_detach_shares_memory_and_version():
    x = dualad.ones(3, requires_grad=True)
    d = x.detach()
    version = x._version
    d.add_(1)
    assert x._version == version + 1 == d._version
    assert_equal(x, [2.0, 2.0, 2.0])


def test_detach_view_tracking():
    # Default detach is both forward and backward non-differentiable
    foo = dualad.rand(2)
    foo_weak = weakref.ref(foo)
    out = foo.detach()
    del foo
    assert foo_weak() is None
    assert out._base is None


def test_detach_keeps_leaf_hooks_out_of_new_graph():
    x = dualad.ones(2, requires_grad=True)
    a = x * 2
    calls = []
    a.register_hook(lambda g: calls.append(1))
    a.retain_grad()
    a.detach_()
    assert a.is_leaf and not a.retains_grad
    a.requires_grad_()
    (a * 3).sum().backward()
    assert calls == []
    assert_equal(a.grad, [3.0, 3.0])
    assert x.grad is None


def test_inplace_on_view_multi_output_unsafe():
    if not hasattr(dualad.Tensor, "unsafe_split"):
        pytest.skip("unsafe_split / unsafe_split_with_sizes / unsafe_chunk are not in dualad")
    for f in [
        lambda t: t.unsafe_split(1),
        lambda t: t.unsafe_split_with_sizes((1, 1, 1)),
        lambda t: t.unsafe_chunk(3),
    ]:
        a = dualad.randn(3, 3, requires_grad=True)
        b = a + a
        s1, s2, _s3 = f(b)
        s1.mul_(s2)
        s1.sum().backward()


@pytest.mark.parametrize("base_requires_grad", [True, False])
@pytest.mark.parametrize("write_under_no_grad", [True, False])
@pytest.mark.parametrize("use_under_no_grad", [True, False])
def test_no_grad_view_used_after_its_base_changed(
    base_requires_grad, write_under_no_grad, use_under_no_grad
):
    # PyTorch 2.13's table: using (with grad mode on) a view made in no_grad mode of a base
    # that requires grad, after the base changed in place (recorded or not), raises; otherwise
    # the view is a constant that shows the base's new values
    x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=base_requires_grad)
    y = x * 1
    with dualad.no_grad():
        v = y[1:]
    if write_under_no_grad:
        with dualad.no_grad():
            y.mul_(2)
    else:
        y.mul_(2)
    if base_requires_grad and not use_under_no_grad:
        with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base"):
            v * 2
        return
    with dualad.set_grad_enabled(not use_under_no_grad):
        r = v * 2
    assert not r.requires_grad
    np.testing.assert_array_equal(r.numpy(), [8.0, 12.0])
