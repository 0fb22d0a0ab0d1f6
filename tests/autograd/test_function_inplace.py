"""Custom ``autograd.Function`` with in-place forwards (``ctx.mark_dirty``), returned inputs,
duplicates and views (spec/reverse.md FN-10, FN-11, FN-19, FN-24).

Each test names the PyTorch test (test/test_autograd.py) it was ported from.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad.autograd import Function
from dualad.testing import gradcheck, gradgradcheck

F64 = dualad.float64


def assert_equal(actual, expected, rtol=1e-7, atol=1e-7):
    a = actual.detach().numpy() if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    e = expected.detach().numpy() if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def randn(*shape, requires_grad=False, seed=0):
    rng = np.random.default_rng(seed)
    return dualad.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


class DoubleInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x, x

    @staticmethod
    def backward(ctx, grad1, grad2):
        return grad1 * 2 + grad2 * 2


def test_return_duplicate():
    # test_return_duplicate (FN-11)
    class DoubleDuplicate(Function):
        @staticmethod
        def forward(ctx, x):
            output = x * 2
            return output, output

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def fn(x):
        a, b = DoubleDuplicate.apply(x)
        assert a is b
        return a + b

    x = randn(5, 5, requires_grad=True)
    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x])


def test_return_duplicate_inplace():
    # test_return_duplicate_inplace (FN-11, FN-19)
    def inplace_fn(x):
        a, b = DoubleInplace.apply(x.clone())
        assert a is b
        return a + b

    x = randn(5, 5, requires_grad=True)
    assert gradcheck(inplace_fn, [x])
    assert gradgradcheck(inplace_fn, [x])
    # a leaf that requires grad cannot be modified in place
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad has been used in an in-place operation",
    ):
        DoubleInplace.apply(x)
    # a Function that modifies a view in place must return a single output
    with pytest.raises(RuntimeError, match="your Function cannot return more than one Tensor"):
        DoubleInplace.apply(x.clone()[0])


def test_return_leaf_inplace():
    # test_return_leaf_inplace (FN-19)
    class Inplace(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.mark_dirty(a)
            return a.add_(b), b + 2

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a, grad_a + grad_b

    x = randn(5, 5)
    y = randn(5, 5, requires_grad=True, seed=1)
    version = x._version
    q, _p = Inplace.apply(x, y)
    assert q is x
    assert q.grad_fn.__class__ is Inplace._backward_cls
    assert q.requires_grad  # the dirty input did not require grad; the other input does
    assert x._version > version
    q.sum().backward()
    assert_equal(y.grad, np.ones((5, 5)))


def test_mark_dirty_rebases_history_of_a_non_leaf():
    # FN-19: the dirty input keeps its identity and its grad_fn becomes the Function's node
    class MulInplace(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.mark_dirty(x)
            ctx.k = k
            return x.mul_(k)

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    x = a * 3
    old = x.grad_fn
    y = MulInplace.apply(x, 5.0)
    assert y is x
    assert type(x.grad_fn).__name__ == "MulInplaceBackward"
    assert x.grad_fn.next_functions[0][0] is old
    x.sum().backward()
    assert_equal(a.grad, [15.0, 15.0])
    assert_equal(x, [15.0, 30.0])


def test_mark_dirty_with_opaque_kernel_bumps_the_version():
    # forward writes through the raw array (an opaque kernel): mark_dirty still bumps the
    # version, so a node that saved the tensor before detects the change
    class NumpyDouble(Function):
        @staticmethod
        def forward(ctx, x):
            data = x.detach().numpy()
            data *= 2  # no version bump by itself
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    x = a.clone()
    saved = x * x  # MulBackward0 saved x
    NumpyDouble.apply(x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.sum().backward()
    a.grad = None
    x = a.clone()
    NumpyDouble.apply(x).sum().backward()
    assert_equal(a.grad, [2.0, 2.0])


def test_mark_dirty_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(3)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="mark_dirty can only accept variables, but argument 0"):
        Bad.apply(dualad.ones(1))


def test_inplace_on_view_python():
    # test_inplace_on_view_python (FN-19 through CopySlices)
    a = randn(4, 4, requires_grad=True)
    b = randn(2, 2, requires_grad=True, seed=1)

    class PyAdd(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.add_(y)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    def func(root, b):
        x = root.clone()
        PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        PyAdd.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        return x

    out = func(a, b)
    expected = a.detach().numpy().copy()
    expected[1:3, 2:4] += b.detach().numpy()
    expected[1:3, 0:2] += b.detach().numpy()
    assert_equal(out, expected)
    out.sum().backward()
    assert_equal(a.grad, np.ones((4, 4)))
    assert_equal(b.grad, np.full((2, 2), 2.0))
    assert gradcheck(func, [a, b], raise_exception=True)
    go = randn(4, 4, requires_grad=True, seed=2)
    assert gradgradcheck(func, (a, b), (go,))


def test_inplace_on_view_undefined_grad_output():
    # test_inplace_on_view_undefined_grad_output
    a = dualad.tensor([1.0], requires_grad=True)
    c = a.clone()
    v = c[:]
    b = dualad.tensor(1.0, requires_grad=True)

    class InplaceFunc(Function):
        @staticmethod
        def forward(ctx, x, other):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, None

    out = InplaceFunc.apply(v, b)
    out.backward()
    assert b.grad is None
    assert a.grad.item() == 2


def test_custom_function_local_inplace():
    # test_custom_function_local_inplace
    class MyFn(Function):
        @staticmethod
        def forward(ctx, inp, inplace):
            view = inp.clone()[:3]
            if inplace:
                view += 2
            return view

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    base = dualad.rand(10, requires_grad=True)
    foo = MyFn.apply(base, False)
    assert foo.grad_fn.__class__.__name__ == "MyFnBackward"
    foo = MyFn.apply(base, True)
    assert foo.grad_fn.__class__.__name__ == "MyFnBackward"
    assert_equal(foo, base[:3] + 2)


def test_custom_function_return_view_in_nograd():
    # test_custom_function_return_view_in_nograd (FN-24)
    class Alias(Function):
        @staticmethod
        def forward(ctx, x):
            return x[:]

        @staticmethod
        def backward(ctx, gx):
            return gx

    inp = dualad.rand(2, requires_grad=True)
    with dualad.no_grad():
        output = Alias.apply(inp)
    with dualad.no_grad():
        expected_output = inp[:]
    assert output.requires_grad == expected_output.requires_grad
    with pytest.raises(
        RuntimeError, match="A view was created in no_grad mode and is being modified inplace"
    ):
        output.zero_()


def test_inplace_not_requires_grad():
    # test_inplace_not_requires_grad (FN-24)
    class MyFn(Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.view_as(inp)

        @staticmethod
        def backward(ctx, grad):
            return grad

    a = dualad.rand(1, 2)
    b = dualad.rand(1, requires_grad=True)
    view_a = MyFn.apply(a)
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        view_a += b

    a = dualad.rand(1, 2)
    b = dualad.rand(1, requires_grad=True)
    view_a = MyFn.apply(a)
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        view_a.copy_(b)

    a = dualad.rand(1, 2)
    b = dualad.rand(1, requires_grad=True)
    view_a = a.unbind()[0]
    with pytest.raises(
        RuntimeError, match=r"This view is the output of a function that returns multiple views\."
    ):
        view_a.copy_(b)

    a = dualad.rand(1, 2)
    b = dualad.rand(1, requires_grad=True)
    a.select(1, 0).copy_(b)


def test_autograd_multiple_views_python():
    # test_autograd_multiple_views_python (FN-24)
    bw_called = [0]

    class ComplexView(Function):
        @staticmethod
        def forward(ctx, a, idx):
            res = a.narrow(0, idx, 1)
            res = a.select(0, idx)
            ctx.save_for_backward(a)
            ctx.idx = idx
            return res

        @staticmethod
        def backward(ctx, grad):
            bw_called[0] += 1
            (a,) = ctx.saved_tensors
            res = dualad.zeros_like(a)
            res.select(0, ctx.idx).copy_(grad)
            return res, None

    a = dualad.ones(2, requires_grad=True)
    idx = 1
    out = ComplexView.apply(a.clone(), idx)
    out.sum().backward()
    assert bw_called[0] == 1
    assert_equal(a.grad, [0.0, 1.0])

    out = ComplexView.apply(a.clone(), idx)
    with pytest.raises(
        RuntimeError,
        match="Output 0 of ComplexViewBackward is a view and is being modified inplace",
    ):
        out += 1


def test_returned_input_is_an_alias_that_refuses_inplace():
    # FN-10 with FN-24: an input returned as-is comes back as an alias (a view of it)
    class Id(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = dualad.ones(2, requires_grad=True).clone()
    y = Id.apply(x)
    assert y is not x
    assert y._base is x
    with pytest.raises(RuntimeError, match="or because an input was returned as-is"):
        y.mul_(2)
    # under no_grad nothing is recorded: the plain alias of a tensor that does not require grad
    z = dualad.ones(2)
    with dualad.no_grad():
        w = Id.apply(z)
    assert w is not z and not w.requires_grad
    assert np.shares_memory(w.numpy(), z.numpy())


class _ScaleDirty(Function):
    """Doubles its input in place; no jvp (forward mode derives it from the backward)."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def _dirty_view_program(a):
    b = a * 1.0
    v = b[:2]
    w = b[1:]  # a sibling view of v's base sees the change too
    _ScaleDirty.apply(v)
    return (b * b).sum() + (w * v[1]).sum()


def test_dirty_view_under_func_transforms_reaches_the_base():
    # b = [2 a0, 2 a1, a2]:  f = 4 a0^2 + 8 a1^2 + a2^2 + 2 a1 a2
    a = dualad.tensor([1.0, 2.0, 3.0])
    expected_grad = [8.0, 38.0, 10.0]
    expected_hessian = [[8.0, 0.0, 0.0], [0.0, 16.0, 2.0], [0.0, 2.0, 2.0]]
    leaf = a.clone().requires_grad_()
    _dirty_view_program(leaf).backward()
    np.testing.assert_allclose(leaf.grad.numpy(), expected_grad)
    np.testing.assert_allclose(dualad.func.grad(_dirty_view_program)(a).numpy(), expected_grad)
    np.testing.assert_allclose(dualad.func.jacrev(_dirty_view_program)(a).numpy(), expected_grad)
    for hessian in (
        dualad.func.hessian(_dirty_view_program),
        dualad.func.jacrev(dualad.func.jacrev(_dirty_view_program)),
    ):
        np.testing.assert_allclose(hessian(a).numpy(), expected_hessian)


def test_dirty_multi_output_view_under_func_grad_raises():
    def f(a):
        b = a * 1.0
        _ScaleDirty.apply(b.unbind()[0])
        return b.sum()

    with pytest.raises(RuntimeError, match="returns multiple views"):
        dualad.func.grad(f)(dualad.tensor([1.0, 2.0]))


def test_dirty_function_under_jacfwd():
    # the forward's own in-place write runs with the dual level suspended: it must not zero the
    # (batched) tangent that the derived jvp then updates
    a = dualad.tensor([1.0, 2.0, 3.0])
    jacobian = dualad.func.jacfwd(lambda t: _ScaleDirty.apply(t * 1.0))(a)
    np.testing.assert_allclose(jacobian.numpy(), 2 * np.eye(3))


class _TailDoubled(Function):
    @staticmethod
    def forward(ctx, x):
        return x[1:]

    @staticmethod
    def backward(ctx, g):
        out = dualad.zeros(3, dtype=g.dtype)
        out[1:] = 2 * g
        return out


@pytest.mark.parametrize("recorded", [True, False])
def test_custom_function_view_used_after_its_base_changed_raises(recorded):
    # PyTorch's handle_view_on_rebase (indirect): replaying the view on the changed base would
    # replace the Function's backward (here deliberately not the view's: it doubles); this
    # used to differentiate through the replayed slice silently (gradient 1 instead of 2)
    x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v = _TailDoubled.apply(y)
    if recorded:
        y.add_(1.0)
    else:
        with dualad.no_grad():
            y.add_(1.0)
    with dualad.no_grad():
        assert_equal(v * 1, [3.0, 4.0])  # the values are the base's
    with pytest.raises(
        RuntimeError,
        match=r"Output 0 of _TailDoubledBackward is a view and its base or another view of its "
        r"base has been modified inplace\. This view was created inside a custom Function",
    ):
        dualad.cos(v)
    # without the write the Function's backward is used
    x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    _TailDoubled.apply(x * 1).sum().backward()
    assert_equal(x.grad, [0.0, 2.0, 2.0])


def test_dirty_function_on_a_saved_output_under_func_grad_raises():
    # exp saves its output; the Function doubles it in place one level below the grad level.
    # The grad level used to run exp's backward on the doubled value (a gradient of 2 e^a for
    # e^a); it must refuse, as the eager tape does
    def saved(a):
        return _ScaleDirty.apply(dualad.exp(a)).sum()

    a = dualad.tensor([0.5, 1.0])
    for transform in (dualad.func.grad, dualad.func.jacrev):
        with pytest.raises(RuntimeError, match="which is output 0 of ExpBackward0"):
            transform(saved)(a)
    leaf = a.clone().requires_grad_()
    with pytest.raises(RuntimeError, match="which is output 0 of ExpBackward0"):
        saved(leaf).backward()

    def not_saved(a):  # sin saves its input, not its output: nothing to refuse
        return _ScaleDirty.apply(dualad.sin(a)).sum()

    np.testing.assert_allclose(dualad.func.grad(not_saved)(a).numpy(), 2 * np.cos([0.5, 1.0]))
