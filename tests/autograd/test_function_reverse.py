"""Custom ``autograd.Function`` in reverse mode: seed ports (spec/reverse.md section 7 FN, with
GRAPH-3/4/6/7, HOOK-4/5, MODE-6/7 and the section 22 error texts).

Each test names the PyTorch test (test/test_autograd.py) it was ported from.
"""

from __future__ import annotations

import gc
import random
import weakref

import numpy as np
import pytest

import dualad
from dualad import autograd
from dualad.autograd import Function, once_differentiable
from dualad.autograd.graph import Node
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


# ---------------------------------------------------------------------------------------------
# FN-1, FN-5, FN-20: forward/backward, ctx attributes, once_differentiable


def _function_test(cls):
    x = randn(5, 5, requires_grad=True, seed=1)
    y = randn(5, 5, requires_grad=True, seed=2)
    result = cls.apply(x, 2, y)
    go = dualad.ones((), requires_grad=True)
    result.sum().backward(go, create_graph=True)
    assert_equal(x.grad, y + dualad.ones(5, 5))
    assert_equal(y.grad, x + dualad.ones(5, 5) * 2)
    return x, y


def test_function():
    # test_function
    seen = {}

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, tensor1, pyscalar, tensor2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(tensor1, tensor2)
            return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

        @staticmethod
        def backward(ctx, grad_output):
            var1, var2 = ctx.saved_tensors
            seen["types"] = (type(var1), type(var2), type(grad_output))
            return (
                grad_output + grad_output * var2,
                None,
                grad_output * ctx.pyscalar + grad_output * var1,
            )

    with pytest.warns(UserWarning, match="create_graph=True"):
        x, y = _function_test(MyFunction)
    assert seen["types"] == (dualad.Tensor,) * 3
    # create_graph: the gradients have history through the custom backward
    assert x.grad.grad_fn is not None
    assert y.grad.grad_fn is not None
    (gy,) = autograd.grad(x.grad.sum(), y)  # d/dy sum(go * (1 + y)) = go = 1
    assert_equal(gy, np.ones((5, 5)))


def test_once_differentiable():
    # test_once_differentiable
    grad_modes = []

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, tensor1, pyscalar, tensor2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(tensor1, tensor2)
            return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            grad_modes.append(dualad.is_grad_enabled())
            t1, t2 = ctx.saved_tensors
            return (
                grad_output + grad_output * t2,
                None,
                grad_output * ctx.pyscalar + grad_output * t1,
            )

    with pytest.warns(UserWarning, match="create_graph=True"):
        x, _y = _function_test(MyFunction)
    assert grad_modes == [False]
    # PyTorch: CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))
    error = _find_node(x.grad.grad_fn, "Error")
    assert error is not None
    assert [n is None for n, _ in error.next_functions] == [False, True, False]
    assert error.next_functions[0][0].name() == "AccumulateGrad"
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        x.grad.sum().backward()


def _find_node(node, name):
    stack = [node]
    seen = set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if n.name() == name:
            return n
        stack.extend(child for child, _ in n.next_functions)
    return None


def test_once_differentiable_without_create_graph_returns_plain_grads():
    # FN-20: grad mode off at call time (no create_graph) -> plain gradients
    class Scale(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            return g * 3

    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    (gx,) = autograd.grad(Scale.apply(x).sum(), x)
    assert_equal(gx, [3.0, 3.0])
    assert not gx.requires_grad
    # create_graph but the incoming gradient does not require grad: plain as well (verified
    # against PyTorch)
    (gx,) = autograd.grad(Scale.apply(x).sum(), x, create_graph=True)
    assert not gx.requires_grad


def test_once_differentiable_backward_may_use_numpy():
    # the point of once_differentiable: opaque array code in backward
    class NumpyTanh(Function):
        @staticmethod
        def forward(ctx, x):
            out = dualad.tensor(np.tanh(x.numpy()))
            ctx.save_for_backward(out)
            return out

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return dualad.tensor(g.numpy() * (1 - out.numpy() ** 2))

    x = randn(4, requires_grad=True)
    NumpyTanh.apply(x).sum().backward()
    assert_equal(x.grad, 1 - np.tanh(x.detach().numpy()) ** 2)
    assert gradcheck(NumpyTanh.apply, (randn(3, requires_grad=True),), check_batched_grad=False)


def test_custom_function_exception():
    # test_custom_function_exception (FN-16)
    class SimulateBackwardError(Function):
        @staticmethod
        def forward(ctx, input):
            return input.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, input):
            raise Exception("Simulate error on backward pass")

    t1 = dualad.rand(3, 3, requires_grad=True)
    t2 = dualad.rand(3, 3, requires_grad=True)
    tmp = (t1 + t2) * (t1 + t2)
    t3 = SimulateBackwardError.apply(tmp)
    with pytest.raises(Exception, match="Simulate error on backward pass"):
        t3.sum().backward()


def test_preserve_backtrace():
    # test_preserve_backtrace (FN-16)
    import traceback

    class Foo(Function):
        @staticmethod
        def forward(ctx, input):
            return input

        @staticmethod
        def backward(ctx, *grad):
            raise ValueError("something")

    t = dualad.rand(10, requires_grad=True)
    try:
        Foo.apply(t).sum().backward()
    except ValueError as exc:
        assert 'raise ValueError("something")' in "".join(traceback.format_tb(exc.__traceback__))
    else:
        pytest.fail("backward did not raise")


# ---------------------------------------------------------------------------------------------
# FN-10, FN-12, FN-13, FN-14, FN-18, FN-17: outputs, gradients, materialisation


@pytest.mark.parametrize("shape", [(1,), ()])
def test_function_returns_input(shape):
    # test_function_returns_input (FN-10)
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    v = dualad.ones(shape, requires_grad=True)
    out = MyFunction.apply(v)
    assert out is not v  # a fresh alias whose grad_fn is the Function's node
    assert type(out.grad_fn).__name__ == "MyFunctionBackward"
    out.backward()
    assert_equal(v.grad, np.full(shape, 2.0))
    with dualad.no_grad():
        v.grad.zero_()
    MyFunction.apply(v.clone()).backward()
    assert_equal(v.grad, np.full(shape, 2.0))


def test_function_returns_undefined_tensor():
    # test_function_returns_undefined_tensor (FN-12)
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return None

    x = dualad.ones(1, requires_grad=True)
    MyFunction.apply(x).backward()
    assert x.grad is None
    MyFunction.apply(x**2).backward()
    assert x.grad is None
    MyFunction.apply(x).sum().backward()
    assert x.grad is None
    assert autograd.grad(MyFunction.apply(x), x, allow_unused=True)[0] is None


def test_backward_returns_none_for_tensor_input():
    # seed 002 test_backward_returns_none_for_tensor_input
    class Foo(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y)
            return x.clone() * y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y, None

    x = dualad.tensor(2.0, requires_grad=True)
    y = dualad.tensor(3.0, requires_grad=True)
    result = Foo.apply(x, y)
    result.sum().backward()
    assert_equal(result, 6.0)
    assert_equal(x.grad, 3.0)
    assert y.grad is None


def _undefined_grad(t):
    """PyTorch's torch._C._functions.UndefinedGrad: passes t through; its backward sends an
    undefined (None) gradient to t."""

    class UndefinedGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    out = UndefinedGrad.apply(t)
    return out


def test_materialize_grads():
    # test_materialize_grads (FN-18): a Function whose output gets an undefined gradient still
    # runs its backward, with zeros
    seen = []

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            seen.append(grad)
            return grad

    x = dualad.ones(1, requires_grad=True)
    _undefined_grad(MyFunction.apply(x)).backward()
    assert len(seen) == 1
    assert_equal(seen[0], np.zeros(1))
    assert_equal(x.grad, np.zeros(1))
    # a direct call with an undefined gradient materializes it the same way
    assert_equal(MyFunction.apply(x).grad_fn(None), np.zeros(1))
    assert_equal(seen[-1], np.zeros(1))
    # and a two-output Function whose first output gets no gradient
    TwoOut = _two_outputs(materialize=True, seen=seen)
    _a, b = TwoOut.apply(x)
    b.sum().backward()
    assert_equal(seen[-1][0], np.zeros(1))


def _two_outputs(materialize: bool, seen: list):
    class TwoOut(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1, g2))
            if g1 is None:
                return g2
            return g1 + g2

    return TwoOut


def test_dont_materialize_grads():
    # test_dont_materialize_grads (FN-18): backward receives None for an undefined gradient
    seen = []

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x

        @staticmethod
        def backward(ctx, grad):
            seen.append(grad)
            return grad

    x = dualad.ones(1, requires_grad=True)
    _undefined_grad(MyFunction.apply(x)).backward()
    assert seen == [None]
    assert x.grad is None  # None in, None out
    assert MyFunction.apply(x).grad_fn(None) is None
    assert seen == [None, None]

    # with a defined gradient it is passed as it is
    out = MyFunction.apply(_undefined_grad(x))
    out.backward()
    assert_equal(seen[-1], np.ones(1))
    assert x.grad is None  # UndefinedGrad sends None on

    # seed 002 MaterializingGradFunction: one output of two gets a gradient
    seen.clear()
    TwoOut = _two_outputs(materialize=False, seen=seen)
    x = dualad.ones(2, requires_grad=True)
    _a, b = TwoOut.apply(x)
    b.sum().backward()
    assert seen[-1][0] is None
    assert_equal(seen[-1][1], np.ones(2))
    assert_equal(x.grad, np.ones(2))


def test_undefined_gradients_reach_functions_through_a_chain():
    # a Function upstream of a node that produced no gradient runs as well (PyTorch's engine
    # runs every node it reaches): zeros flow on from a materializing Function
    calls = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return 3 * x

        @staticmethod
        def backward(ctx, g):
            calls.append(g)
            return (None if g is None else 3 * g), None

    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    y = Scale.apply(x * 2, True)
    _undefined_grad(Scale.apply(y, False)).sum().backward()
    assert calls[0] is None  # the outer one does not materialize: its result is None
    assert_equal(calls[1], np.zeros(2))  # the inner one gets zeros, returns zeros
    assert_equal(x.grad, np.zeros(2))
    # op nodes between them stay skipped (their result would be undefined too)
    calls.clear()
    z = dualad.tensor([1.0, 2.0], requires_grad=True)
    _undefined_grad(Scale.apply((z * 2).sin(), False)).sum().backward()
    assert calls == [None]
    assert z.grad is None


def test_materializing_grad_function_values():
    # seed 002 test_materialize_grad: MaterializingGradFunction gives x.clone() twice
    class MaterializingGradFunction(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, grad_out1, grad_out2):
            return grad_out1, grad_out2

    x = randn(2, 2, requires_grad=True)
    a, b = MaterializingGradFunction.apply(x)
    assert_equal(a, x)
    assert_equal(b, x)


def test_set_materialize_non_diff_grads():
    # test_set_materialize_non_diff_grads (FN-17)
    seen = []

    class Func(Function):
        @staticmethod
        def forward(ctx, x):
            out0 = x.clone()
            out1 = x.clone()
            ctx.mark_non_differentiable(out1)
            ctx._materialize_non_diff_grads = False
            return out0, out1

        @staticmethod
        def backward(ctx, g0, g1):
            seen.append(g1)
            return g0

    a = dualad.tensor(1.0, requires_grad=True)
    out = Func.apply(a)[0]
    out.backward()
    assert seen == [None]
    assert_equal(a.grad, 1.0)


def test_mark_non_differentiable():
    # test_mark_non_differentiable (FN-17, FN-14 dtype cast)
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, input):
            output = input > 0
            ctx.mark_non_differentiable(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            return (grad_output * 0).to(dualad.float64)

    x = randn(5, 5, requires_grad=True).to(dualad.float32).detach().requires_grad_()
    mask = MyFunction.apply(x)
    assert not mask.requires_grad
    y = x.masked_fill(mask, 0)
    y.sum().backward()
    assert_equal(x.grad, (x.detach().numpy() <= 0).astype(np.float32))
    assert x.grad.dtype == np.float32


def test_mark_non_differentiable_mixed():
    # test_mark_non_differentiable_mixed
    checks = []

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, input):
            a = input + 1
            b = input + 2
            ctx.mark_non_differentiable(a)
            return a, b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            checks.append(bool((grad_a == 0).all()) and bool((grad_b == 1).all()))
            return grad_b

    x = randn(5, 5, requires_grad=True)
    a, b = MyFunction.apply(x)
    assert not a.requires_grad
    assert b.requires_grad
    b.sum().backward()
    assert checks == [True]
    assert_equal(x.grad, np.ones((5, 5)))


def test_mark_non_differentiable_none():
    # test_mark_non_differentiable_none: backward returning None into a built-in op
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, input):
            output = input.clone()
            ctx.mark_non_differentiable(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            return None

    x = randn(5, 5, requires_grad=True)
    r = MyFunction.apply(x * x)
    (r * x).sum().backward()
    assert_equal(x.grad, (x * x).detach())


@pytest.mark.parametrize("order", ["save_then_mark", "mark_then_save"])
def test_context_save_and_mark(order):
    # seed 002 ContextSaveAndMark / ContextMarkAndSave
    class Ctx(Function):
        @staticmethod
        def forward(ctx, x):
            with dualad.no_grad():
                if order == "save_then_mark":
                    ctx.save_for_backward(x)
                    ctx.mark_non_differentiable(x)
                else:
                    ctx.mark_non_differentiable(x)
                    ctx.save_for_backward(x)
                return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    x = dualad.rand(1)
    assert_equal(Ctx.apply(x), x)
    xr = dualad.rand(1, requires_grad=True)
    out = Ctx.apply(xr)
    assert not out.requires_grad
    assert out.grad_fn is None
    assert out is not xr  # a detached alias: the input keeps its own history
    assert xr.requires_grad


def test_dep_nograd():
    # test_dep_nograd
    class F1(Function):
        @staticmethod
        def forward(ctx, input):
            out = dualad.randn(*input.shape)
            ctx.mark_non_differentiable(out)
            return input, out

        @staticmethod
        def backward(ctx, grad_output, ignored):
            return grad_output

    class F2(Function):
        @staticmethod
        def forward(ctx, input, ignored):
            return input

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None

    x = dualad.randn(5, requires_grad=True)
    a, b = F1.apply(x)
    b = b + 1  # separate F1 from F2 by another op
    assert a.requires_grad
    assert not b.requires_grad
    c = F2.apply(a, b)
    c.backward(dualad.ones(c.shape))
    assert_equal(x.grad, np.ones(5))


def test_too_many_grads():
    # test_too_many_grads (FN-13): trailing Nones are tolerated
    class MyFn(Function):
        @staticmethod
        def forward(ctx, input):
            return input

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None, None

    x = randn(5, 5, requires_grad=True)
    y = MyFn.apply(x)
    y.sum().backward()
    assert_equal(x.grad, np.ones((5, 5)))


def test_wrong_number_of_gradients():
    # FN-13 and spec section 22: the count and non-tensor-position texts
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return (g,)

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class NonTensor(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = dualad.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"^function TooFewBackward returned an incorrect number of gradients "
        r"\(expected 2, got 1\)$",
    ):
        TooFew.apply(x, x).sum().backward()
    with pytest.raises(
        RuntimeError,
        match=r"^function TooManyBackward returned an incorrect number of gradients "
        r"\(expected 1, got 2\)$",
    ):
        TooMany.apply(x).sum().backward()
    with pytest.raises(
        RuntimeError,
        match=r"^function NonTensorBackward returned a gradient different than None at position "
        r"2, but the corresponding forward input was not a Variable$",
    ):
        NonTensor.apply(x, 3.0).sum().backward()


def test_invalid_gradients():
    # test_invalid_gradients (FN-14)
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return dualad.randn(10, dtype=dualad.float32)

    input = dualad.randn(5, 5, dtype=dualad.float32, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"^Function MyFunctionBackward returned an invalid gradient at index 0 - got \[10\] "
        r"but expected shape compatible with \[5, 5\]$",
    ):
        MyFunction.apply(input).sum().backward()


def test_gradient_broadcast_and_dtype_are_conformed():
    # FN-14: a broadcastable gradient is summed to the input's shape, and cast to its dtype
    class Broadcast(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return (g * dualad.ones(3, 2)).to(dualad.float32)

    x = dualad.ones(2, requires_grad=True)
    Broadcast.apply(x).backward()
    assert x.grad.dtype == np.float64
    assert_equal(x.grad, [3.0, 3.0])


def test_backward_returning_a_non_tensor_raises():
    # seed 002 CustomFuncStrideBwd pattern in eager: a tuple of ints as gradient is a type error
    class Stride(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo + foo

        @staticmethod
        def backward(ctx, grad_output):
            return "not a gradient"

    x = dualad.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="StrideBackward returned a gradient of type str"):
        Stride.apply(x).sum().backward()


# ---------------------------------------------------------------------------------------------
# FN-3, FN-15: legacy usage and missing methods


def test_legacy_function_deprecation_exception():
    # test_legacy_function_deprecation_exception
    class MyFunction(Function):
        def forward(self, x):
            return x

        def backward(self, grad_output):
            return grad_output

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = MyFunction()
    with pytest.raises(
        RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"
    ):
        f(dualad.randn(3, 4))


def test_naughty_autograd_function_attribute_access():
    # test_naughty_autograd_function_attribute_access (FN-3, FN-23)
    class Id(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad_x):
            return grad_x

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Id()
    assert isinstance(f, Id)
    x = dualad.zeros(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-static forward method is deprecated"):
        f(x)
    t = Id.apply(x)
    assert t.grad_fn.name() == "IdBackward"
    assert type(t.grad_fn) is Id._backward_cls
    # an instance's apply still works (seed 002 Module1: CustomFunc1().apply(foo))
    assert_equal(f.apply(x), x)
    with pytest.raises(RuntimeError, match="Attribute 'register_hook' is invalid"):
        f.register_hook(lambda x, y: None)
    with pytest.raises(RuntimeError, match="Attribute 'next_functions' is invalid"):
        f.next_functions  # noqa: B018
    with pytest.raises(RuntimeError, match="Attribute 'name' is invalid"):
        f.name()
    with pytest.raises(RuntimeError, match="Attribute '_register_hook_dict' is invalid"):
        f._register_hook_dict(t)


def test_custom_function_error():
    # test_custom_function_error (FN-15; the jvp part is in test_function_forward.py)
    class BadFw(Function):
        @staticmethod
        def backward(ctx, foo):
            return foo

    class BadBw(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

    class BadBw2(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

        @staticmethod
        def backward(ctx, foo):
            return foo

        @staticmethod
        def vjp(ctx, foo):
            return foo

    inp = dualad.rand(1, requires_grad=True)
    with pytest.raises(NotImplementedError, match="must implement the forward"):
        BadFw.apply(inp)
    with pytest.raises(RuntimeError, match="must implement either the backward"):
        BadBw.apply(inp).sum().backward()
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        BadBw2.apply(inp).sum().backward()


def test_vjp_is_an_alias_of_backward():
    class WithVjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def vjp(ctx, g):
            return g * 3

    x = dualad.ones(2, requires_grad=True)
    WithVjp.apply(x).sum().backward()
    assert_equal(x.grad, [3.0, 3.0])


def test_backward_replaced_after_first_use():
    # the resolved backward is cached per class; assigning a new one is seen
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = dualad.ones(1, requires_grad=True)
    F.apply(x).backward()
    F.backward = staticmethod(lambda ctx, g: g * 5)
    F.apply(x).backward()
    assert_equal(x.grad, [7.0])


# ---------------------------------------------------------------------------------------------
# FN-4, GRAPH-7: saved tensors


def test_save_none_for_backward():
    # test_save_none_for_backward
    seen = []

    class MyFn(Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(None, input, None)
            return input * input

        @staticmethod
        def backward(ctx, grad_output):
            n1, input, n2 = ctx.saved_tensors
            seen.append((n1, n2))
            return 2 * input * grad_output

    x = randn(5, 5, requires_grad=True)
    y = MyFn.apply(x)
    y.sum().backward()
    assert seen == [(None, None)]
    assert_equal(x.grad, 2 * x)


def test_custom_function_saved_tensors():
    # test_custom_function_saved_tensors (the _raw_saved_tensors / register_hooks parts belong
    # to saved-tensor hooks, SAVE-7)
    def get_fn(save):
        class MyFn(Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        return MyFn

    a = dualad.randn(5, requires_grad=True)
    y = get_fn(True).apply(a)
    saved = y.grad_fn.saved_tensors
    assert len(saved) == 2 and saved[0] is a and saved[1] is None
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn.saved_tensors  # noqa: B018
    y = get_fn(False).apply(a)
    assert y.grad_fn.saved_tensors == ()


def test_save_for_backward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(
        TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"
    ):
        Bad.apply(dualad.ones(1, requires_grad=True))


def test_repeated_save_for_backward_calls():
    # seed 002 test_repeated_save_for_backward_calls: the second call replaces the first
    class Foo(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x)
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, grad_out):
            x, y = ctx.saved_tensors
            return grad_out * x, grad_out * y

    x = randn(2, requires_grad=True, seed=3)
    y = randn(2, requires_grad=True, seed=4)
    out = Foo.apply(x, y)
    out.sum().backward()
    assert_equal(out, x * y)
    assert_equal(x.grad, x)
    assert_equal(y.grad, y)


def test_saved_output_is_rebuilt_with_the_node_and_output_nr():
    # test_save_output_nr (ATTR-18), GRAPH-7: a saved output unpacks with grad_fn = the node
    seen = []

    class MultiOutputFn(Function):
        @staticmethod
        def forward(ctx, x):
            return x[:5], x[5:]

        @staticmethod
        def backward(ctx, *grad):
            return dualad.cat(grad)

    class TestFn(Function):
        @staticmethod
        def forward(ctx, b):
            ctx.save_for_backward(b)
            return b * 2

        @staticmethod
        def backward(ctx, grad_b):
            (b,) = ctx.saved_tensors
            seen.append(b.output_nr)
            return grad_b * 2

    x = randn(10, requires_grad=True)
    _a, b = MultiOutputFn.apply(x)
    assert b.output_nr == 1
    TestFn.apply(b).sum().backward()
    assert seen == [1]
    assert_equal(x.grad, [0.0] * 5 + [2.0] * 5)

    class SaveOut(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            seen.append(out.grad_fn is node)
            return g * out

    x = randn(3, requires_grad=True)
    y = SaveOut.apply(x)
    node = y.grad_fn
    (saved,) = node.saved_tensors
    assert saved is not y and saved.grad_fn is node
    assert_equal(saved, y)
    y.sum().backward()
    assert seen[-1] is True
    assert_equal(x.grad, np.exp(x.detach().numpy()))


def test_saved_tensors_are_version_checked():
    # FN-4 / INPL-1: an input modified after it was saved
    class Mul(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    x = dualad.ones(3, requires_grad=True)
    y = dualad.ones(3)
    z = Mul.apply(x, y)
    y.add_(1)
    with pytest.raises(
        RuntimeError,
        match=r"modified by an inplace operation: \[dualad.Tensor \[3\], dtype=float64\], which "
        r"is input 1 of MulBackward, is at version 1; expected version 0 instead",
    ):
        z.sum().backward()

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    z = Exp.apply(x)
    z.mul_(2)
    with pytest.raises(RuntimeError, match="which is output 0 of ExpBackward"):
        z.sum().backward()


def test_saved_tensors_freed_after_backward():
    # BWD-10 for custom Functions: a second backward through a node that saved raises; one that
    # saved nothing can run again
    class Saves(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (_x,) = ctx.saved_tensors
            return g * 2

    class NoSave(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = dualad.ones(2, requires_grad=True)
    y = Saves.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.backward()
    y = Saves.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    z = NoSave.apply(x).sum()
    z.backward()
    z.backward()
    assert_equal(x.grad, [10.0, 10.0])  # 2 + 2 * 2 (Saves) + 2 * 2 (NoSave)


def test_naughty_autograd_function_stashing_ctx():
    # test_naughty_autograd_function_stashing_ctx
    saved_ctx = []

    class Id(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad_x):
            saved_ctx.append(ctx)
            return ctx.saved_tensors

    p = dualad.zeros(1, requires_grad=True)
    loss = Id.apply(p)
    loss.backward(retain_graph=True)
    # Deliberate difference: in PyTorch the ctx only points weakly at its node, so after
    # ``del loss`` the stashed ctx raises. In dualad the ctx IS the node (GRAPH-6): holding it
    # keeps the node and what it saved until a backward without retain_graph frees them.
    assert saved_ctx[0].saved_tensors[0] is p
    loss.backward()
    del loss
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        saved_ctx[0].saved_tensors  # noqa: B018


def test_saved_intermediates():
    # FN-28 (test_saved_tensor_hooks_custom_function_intermediates, without the hooks):
    # tensors that are neither inputs nor outputs can be saved and used
    class Func(Function):
        @staticmethod
        def forward(ctx, x):
            intermediate = x.exp()
            ctx.save_for_backward(intermediate.clone().detach_().requires_grad_(True))
            return x.exp()

        @staticmethod
        def backward(ctx, grad_out):
            (intermediate,) = ctx.saved_tensors
            return grad_out * intermediate

    a = dualad.tensor(1.0, requires_grad=True)
    out = Func.apply(a)
    out.backward()
    assert_equal(a.grad, np.e)


@pytest.mark.parametrize("fn", ["Double", "Double2"])
def test_custom_autograd_no_early_free(fn):
    # test_custom_autograd_no_early_free (BWD-11, SAVE-1)
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            y = x**2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, _ = ctx.saved_tensors
            return grad_output * 2 * x

    # the same, using forward's output in backward
    class Double2(Double):
        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output * 2 * y / x

    cls = {"Double": Double, "Double2": Double2}[fn]
    assert cls._backward_cls.__name__ == f"{fn}Backward"
    x = dualad.tensor(2.0, dtype=F64, requires_grad=True)
    assert gradcheck(cls.apply, x)
    assert gradgradcheck(cls.apply, x)
    y = cls.apply(x)
    (g,) = autograd.grad(y, x, create_graph=True)
    assert_equal(g, 4.0)
    (g,) = autograd.grad(y, x)
    assert_equal(g, 4.0)
    y = cls.apply(x)
    (g,) = autograd.grad(y, x, create_graph=True)
    (gg,) = autograd.grad(g, x)
    assert_equal(gg, 2.0)


def test_custom_autograd_repeated_grad_grad():
    # test_custom_autograd_repeated_grad_grad
    def mult1(x):
        return x.prod(dim=-1).prod(dim=-1)

    class Mult(Function):
        @staticmethod
        def forward(ctx, x):
            y = mult1(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return (grad_output * y)[:, None, None] / x

    def check_gradgrad_repeated(x, y):
        (gy,) = autograd.grad(y[0], x, create_graph=True)
        (ggy_1,) = autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        (gy,) = autograd.grad(y[0], x, create_graph=True)
        (ggy_2,) = autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        assert_equal(ggy_1[0, 0, 1], ggy_2[0, 0, 1])
        return ggy_1

    x = dualad.ones(2, 4, 4).requires_grad_()
    expected = check_gradgrad_repeated(x, mult1(x))
    got = check_gradgrad_repeated(x, Mult.apply(x))
    assert_equal(got, expected)


# ---------------------------------------------------------------------------------------------
# FN-6, FN-7, FN-8, FN-9, FN-21: arguments and the setup_context form


def test_needs_input_grad():
    # test_hook_none (its needs_input_grad part) and seed 002 test_needs_input_grad
    seen = []

    class NoneGradientFunction(Function):
        @staticmethod
        def forward(ctx, x, y):
            seen.append(ctx.needs_input_grad)
            return x.clone(), y.clone()

        @staticmethod
        def backward(ctx, grad_x, grad_y):
            seen.append(ctx.needs_input_grad)
            return grad_x, None

    was_called = []

    def hook(grad):
        assert grad is not None
        was_called.append(True)

    x = randn(5, 5, requires_grad=True)
    y = randn(5, 5)
    rx, ry = NoneGradientFunction.apply(x, y)
    rx.register_hook(hook)
    ry.register_hook(hook)
    sum(rx, ry).sum().backward()
    assert was_called == [True, True]
    assert seen == [(True, False), (True, False)]
    with dualad.no_grad():
        NoneGradientFunction.apply(x, y)
    assert seen[-1] == (False, False)

    class NeedsInputGradFunc(Function):
        @staticmethod
        def forward(ctx, foo):
            result = foo + foo
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            if ctx.needs_input_grad[0]:
                return grad_output * result.sin()
            return None

    x = randn(10, requires_grad=True)
    NeedsInputGradFunc.apply(x).sum().backward()
    assert x.grad.shape == x.shape
    assert_equal(x.grad, np.sin(2 * x.detach().numpy()))


def test_custom_function_non_tensor_inputs_outputs():
    # test_custom_function_non_tensor_inputs_outputs (FN-7, FN-8)
    seen = []

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            ctx.scale = scale
            ctx.save_for_backward(t1, t2, t3)
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            seen.append([g is None for g in grads])
            scale = ctx.scale
            var1, var2, var3 = ctx.saved_tensors
            return (
                grads[1] * scale + grads[4] * var2 * scale + grads[6],
                grads[1] * var3 * scale + grads[4] * var1 * scale,
                None,
                grads[1] * var2 * scale + grads[4] * scale,
            )

    t1 = dualad.rand(10, dtype=F64, requires_grad=True)
    t2 = dualad.rand(10, dtype=F64, requires_grad=True)
    t3 = dualad.rand(10, dtype=F64)
    scale = random.Random(0).randint(1, 10)
    res = MyFunction.apply(t1, t2, scale, t3)
    assert res[0] == scale
    assert_equal(res[1], (t1 + t2 * t3) * scale)
    assert res[2] is None
    assert res[3] is True
    assert_equal(res[4], (t1 * t2 + t3) * scale)
    assert res[5] == "bar"
    assert_equal(res[6], t1)
    autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
    assert len(seen[0]) == 7
    assert [seen[0][i] for i in (0, 2, 3, 5)] == [True] * 4
    assert t1.grad is not None and t2.grad is not None
    assert t3.grad is None
    t3n, t2n, t1n = t3.numpy(), t2.detach().numpy(), t1.detach().numpy()
    assert_equal(t1.grad, scale + t2n * scale + 1)
    assert_equal(t2.grad, t3n * scale + t1n * scale)

    def foo(t1, t2, t3):
        res = MyFunction.apply(t1, t2, scale, t3)
        return res[1], res[4], res[6]

    assert gradcheck(foo, (t1, t2, t3))


def test_custom_function_no_tensors():
    # test_custom_function_no_tensors (FN-9)
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @once_differentiable
        def backward(ctx, *args):
            return (args[0], args[1], None, args[2])

    rng = random.Random(1)
    t1, t2, t3 = rng.random(), rng.random(), rng.random()
    scale = rng.randint(0, 10)
    res = MyFunction.apply(t1, t2, scale, t3)
    assert res == (scale, (t1 + t2 * t3) * scale, None, True, (t1 * t2 + t3) * scale, "bar", t1)


def test_custom_function_setup_context_simple():
    # test_custom_function_setup_context_simple (FN-21)
    class MySquare(Function):
        @staticmethod
        def forward(x):
            return x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            return gO * 2 * x

    x = dualad.randn((), requires_grad=True)
    y = MySquare.apply(x)
    (gx,) = autograd.grad(y, x)
    assert_equal(gx, 2 * x)


def test_custom_function_setup_context_multi_output():
    # test_custom_function_setup_context_multi_output
    class MySquare(Function):
        @staticmethod
        def forward(x):
            two_x = x.item() * 2
            return x**2, two_x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (_x,) = inputs
            _, two_x = output
            ctx.two_x = two_x

        @staticmethod
        @once_differentiable
        def backward(ctx, gO, _):
            return gO * ctx.two_x

    x = dualad.randn((), requires_grad=True)
    y, _ = MySquare.apply(x)
    (gx,) = autograd.grad(y, x)
    assert_equal(gx, 2 * x)


def test_custom_function_setup_context_multi_input():
    # test_custom_function_setup_context_multi_input
    class MyReshape(Function):
        @staticmethod
        def forward(x, shape, scale_forward, scale_backward):
            return x.reshape(shape) * scale_forward

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, _shape, _scale_forward, scale_backward = inputs
            ctx.scale_backward = scale_backward
            ctx.x_shape = x.shape

        @staticmethod
        def backward(ctx, gO):
            return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

    class MyReshapeRef(Function):
        @staticmethod
        def forward(ctx, x, shape, scale_forward, scale_backward):
            ctx.scale_backward = scale_backward
            ctx.x_shape = x.shape
            return x.reshape(shape) * scale_forward

        @staticmethod
        def backward(ctx, gO):
            return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

    def test(x, shape, scale_forward, scale_backward):
        y = MyReshape.apply(x, shape, scale_forward, scale_backward).sum()
        (gx,) = autograd.grad(y, x)
        y_expected = MyReshapeRef.apply(x, shape, scale_forward, scale_backward).sum()
        (gx_expected,) = autograd.grad(y_expected, x)
        assert_equal(y_expected, y)
        assert_equal(gx_expected, gx)
        assert_equal(gx, np.full(x.shape, scale_backward))

    test(randn(24, requires_grad=True), (3, 8), 7, 11)
    test(randn(2, 3, 4, requires_grad=True), (6, 4), -1, 2)


@pytest.mark.parametrize("style", ["staticmethod", "classmethod"])
def test_setup_context_when_forward_has_default_args(style):
    # test_setup_context_when_forward_has_default_args (FN-2, FN-21)
    if style == "staticmethod":

        class PowFunction(Function):
            @staticmethod
            def forward(x, y=3):
                return dualad.pow(x, y)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y = inputs
                ctx.save_for_backward(x)
                ctx.y = y

            @staticmethod
            def backward(ctx, gO):
                (x,) = ctx.saved_tensors
                y = ctx.y
                return gO * y * dualad.pow(x, y - 1), None

    else:

        class PowFunction(Function):
            @classmethod
            def forward(cls, x, y=3):
                return dualad.pow(x, y)

            @classmethod
            def setup_context(cls, ctx, inputs, output):
                x, y = inputs
                ctx.save_for_backward(x)
                ctx.y = y

            @classmethod
            def backward(cls, ctx, gO):
                (x,) = ctx.saved_tensors
                y = ctx.y
                return gO * y * dualad.pow(x, y - 1), None

    x = dualad.tensor(2.0, requires_grad=True)
    y = dualad.tensor(2.0)
    y_expected = dualad.tensor(8.0)
    grad_expected = dualad.tensor(12.0)
    y1 = PowFunction.apply(x)
    (y1_grad,) = autograd.grad(y1, x)
    assert_equal(y1, y_expected)
    assert_equal(y1_grad, grad_expected)
    y2 = PowFunction.apply(x, y=y)  # keyword arguments are bound to forward's signature
    (y2_grad,) = autograd.grad(y2, x)
    assert_equal(y2, 4.0)
    assert_equal(y2_grad, 4.0)


def test_classmethod():
    # seed 002 test_classmethod (FN-2)
    class Shake(Function):
        @classmethod
        def forward(cls, ctx, foo):
            return foo + foo

        @classmethod
        def backward(cls, ctx, grad_output):
            return grad_output

    x = randn(4, 4, 4, 4, requires_grad=True)
    out = Shake.apply(x)
    assert_equal(out, 2 * x)
    out.sum().backward()
    assert_equal(x.grad, np.ones((4, 4, 4, 4)))


def test_default_values_and_keyword_arguments():
    # seed 002 test_default_values; keyword arguments of a ctx-style forward are bound too
    class Foo(Function):
        @staticmethod
        def forward(ctx, x, alpha=0.99):
            ctx.alpha = alpha
            return x * alpha

        @staticmethod
        def backward(ctx, grad_out):
            # one gradient per argument given (alpha counts when passed), trailing None allowed
            return grad_out * ctx.alpha, None

    assert_equal(Foo.apply(dualad.ones(2)), [0.99, 0.99])
    x = dualad.ones(2, requires_grad=True)
    Foo.apply(x).sum().backward()
    assert_equal(x.grad, [0.99, 0.99])
    x.grad = None
    Foo.apply(x, alpha=2.0).sum().backward()
    assert_equal(x.grad, [2.0, 2.0])


def test_enum_tuple_dataclass_and_list_arguments():
    # seed 002 test_enum_arg, test_tuple_arg, test_user_defined_object_as_input,
    # test_tensor_list_as_input, test_multiple_different_non_tensor_inputs (FN-7)
    from dataclasses import dataclass
    from enum import Enum

    class SomeEnum(Enum):
        A = 0
        B = 1

    class ByEnum(Function):
        @staticmethod
        def forward(ctx, x, e):
            return x.sin() if e is SomeEnum.A else x.cos()

        @staticmethod
        def backward(ctx, g):
            return g

    x = dualad.tensor([[1.0, 2, 3], [4, 5, 6]], requires_grad=True)
    assert_equal(ByEnum.apply(x, SomeEnum.A), x.sin())
    assert_equal(ByEnum.apply(x, SomeEnum.B), x.cos())

    class TupleArgFunc(Function):
        @staticmethod
        def forward(ctx, x, shape):
            ctx.save_for_backward(dualad.randn(*shape))
            return x + 1

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return result, None

    shape = (10, 10)
    x = dualad.randn(*shape, requires_grad=True)
    out = TupleArgFunc.apply(x, shape)
    out.sum().backward()
    assert_equal(out, x + 1)
    assert x.grad.shape == shape

    @dataclass
    class Weird:
        x: float
        b: dualad.Tensor
        c: dualad.Tensor

    class Foo(Function):
        @staticmethod
        def forward(ctx, x, weird, z):
            ctx.save_for_backward(weird.b, weird.c)
            return weird.b * weird.c * x.clone()

        @staticmethod
        def backward(ctx, grad):
            b, c = ctx.saved_tensors
            return grad * b * c, None, grad * 2

    x = dualad.tensor(2.0, requires_grad=True)
    weird = Weird(1.2, dualad.tensor(2.5, requires_grad=True), dualad.tensor(3.5))
    z = dualad.tensor(3.0, requires_grad=True)
    result = Foo.apply(x, weird, z)
    result.sum().backward()
    assert_equal(result, 2.5 * 3.5 * 2.0)
    assert_equal(x.grad, 2.5 * 3.5)
    assert_equal(z.grad, 2.0)
    assert weird.b.grad is None

    class ListArg(Function):
        @staticmethod
        def forward(ctx, x, tl):
            ctx.save_for_backward(tl[0], tl[1])
            return x.clone() * (tl[0] + tl[1])

        @staticmethod
        def backward(ctx, grad):
            tl0, tl1 = ctx.saved_tensors
            return grad * (tl0 + tl1), None

    x = dualad.tensor(2.0, requires_grad=True)
    tl = [dualad.tensor(3.0, requires_grad=True), dualad.tensor(4.0, requires_grad=True)]
    result = ListArg.apply(x, tl)
    result.sum().backward()
    assert_equal(result, 14.0)
    assert_equal(x.grad, 7.0)
    assert tl[0].grad is None and tl[1].grad is None

    class Mixed(Function):
        @staticmethod
        def forward(ctx, x, weird, z, tl):
            ctx.save_for_backward(weird.b, weird.c, tl[0], tl[1])
            return x.clone() * weird.b * weird.c * tl[0]

        @staticmethod
        def backward(ctx, grad):
            b, c, tl0, _ = ctx.saved_tensors
            return grad * b * c * tl0, None, grad * 2, None

    x = dualad.tensor(2.0, requires_grad=True)
    weird = Weird(
        1.2, dualad.tensor(2.5, requires_grad=True), dualad.tensor(3.5, requires_grad=True)
    )
    z = dualad.tensor(3.0, requires_grad=True)
    tl = [dualad.tensor(0.5, requires_grad=True), dualad.tensor(0.6, requires_grad=True)]
    result = Mixed.apply(x, weird, z, tl)
    result.sum().backward()
    assert_equal(x.grad, 2.5 * 3.5 * 0.5)
    assert_equal(z.grad, 2.0)
    for t in (weird.b, weird.c, tl[0], tl[1]):
        assert t.grad is None


def test_smuggled_ctx_attributes():
    # seed 002 test_smuggle_symint_issue_111031, test_smuggle_tensor_and_complex_structures
    # (FN-5)
    class Size(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x0 = x.size(0)
            return x * 2

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out * ctx.x0

    x = dualad.randn(2, requires_grad=True)
    Size.apply(x).sum().backward()
    assert_equal(x.grad, [2.0, 2.0])

    class Smuggle(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x0 = x
            ctx.x1 = [1, 2, 3]
            return x * 2

        @staticmethod
        def backward(ctx, grad_out):
            x0mul = grad_out * ctx.x0
            for i in ctx.x1:
                x0mul = (x0mul * i) + x0mul
            return x0mul

    x = randn(2, requires_grad=True)
    Smuggle.apply(x).sum().backward()
    assert_equal(x.grad, x * 24)


def test_custom_function_cycle():
    # test_custom_function_cycle: ctx.meta -> out -> node (ctx) is collected by gc
    class MyFn(Function):
        @staticmethod
        def forward(ctx, x, metadata):
            x = x.clone()
            ctx.meta = metadata
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            assert_equal(x, 3.14)
            assert_equal(ctx.meta["foo"], 3.14)
            return gO * x, None

    def get_refs(with_backward):
        a = dualad.tensor(3.14, requires_grad=True)
        metadata = {}
        out = MyFn.apply(a, metadata)
        metadata["foo"] = out
        if with_backward:
            out.sum().backward()
            assert_equal(a.grad, a)
        return weakref.ref(out)

    for with_backward in (False, True):
        gc.disable()
        try:
            ref = get_refs(with_backward)
            assert ref() is not None
        finally:
            gc.enable()
        gc.collect()
        assert ref() is None


# ---------------------------------------------------------------------------------------------
# GRAPH-3/4/6, HOOK-4/5, MODE-6/7


def test_autograd_node_isinstance():
    # test_autograd_node_isinstance: ctx IS the node
    seen = []

    class Func(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(isinstance(ctx, Node))
            return x

        @staticmethod
        def backward(ctx, x):
            seen.append(isinstance(ctx, Node))
            return x

    a = dualad.rand(3, 3, requires_grad=True)
    out = Func.apply(a)
    assert isinstance(out.grad_fn, Node)
    assert issubclass(type(out.grad_fn), Node)
    out.sum().backward()
    assert seen == [True, True]


def test_ctx_is_the_grad_fn():
    ctxs = []

    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            ctxs.append(ctx)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            ctxs.append(ctx)
            return g * 2

    x = dualad.ones(2, requires_grad=True)
    y = Keep.apply(x)
    y.sum().backward()
    assert ctxs[0] is y.grad_fn is ctxs[1]
    assert y.grad_fn.next_functions == ((x.grad_fn or _acc(x), 0),)


def _acc(t):
    return autograd.graph.get_gradient_edge(t).node


def test_next_functions_one_slot_per_tensor_argument():
    # GRAPH-1 for Functions: non-tensor arguments have no slot
    class F(Function):
        @staticmethod
        def forward(ctx, a, k, b, c):
            return a * k + b + c

        @staticmethod
        def backward(ctx, g):
            return g, None, g, g

    a = dualad.ones(2, requires_grad=True)
    b = dualad.ones(2)
    c = (a * 3).exp()
    y = F.apply(a, 2.0, b, c)
    edges = y.grad_fn.next_functions
    assert len(edges) == 3
    assert edges[0][0].name() == "AccumulateGrad"
    assert edges[1] == (None, 0)
    assert edges[2] == (c.grad_fn, 0)


def test_node_call_and_badcalls():
    # GRAPH-4 on a custom Function node
    class Mul2(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = dualad.ones(2, requires_grad=True)
    y = Mul2.apply(x)
    assert_equal(y.grad_fn(dualad.ones(2)), [2.0, 2.0])
    with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
        y.grad_fn(dualad.ones(2), dualad.ones(2))
    with pytest.raises(TypeError, match="expected 1 arguments, got 0 instead"):
        y.grad_fn()


def test_autograd_print_tensor():
    # ATTR-16: grad_fn=<FuncBackward>
    class Func(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    a = dualad.ones(1, requires_grad=True)
    assert repr(Func.apply(a)) == "tensor([1.], grad_fn=<FuncBackward>)"


def _get_mul2():
    class Mul2(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, gO):
            return gO * 2

    return Mul2.apply


def test_grad_fn_prehooks():
    # test_grad_fn_prehooks, custom-Function half (HOOK-4)
    mul2 = _get_mul2()
    a = dualad.tensor([1.0], requires_grad=True)
    b = mul2(a)
    post_counter = [0]
    pre_counter = [0]

    def posthook(grad_input, grad_output):
        assert pre_counter[0] == 3
        assert_equal(grad_output[0], np.ones(1) * 8)
        assert_equal(grad_input[0], np.ones(1) * 16)
        post_counter[0] += 1
        return grad_input

    def prehook(grad_output):
        pre_counter[0] += 1
        return (grad_output[0] * 2,)

    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(lambda x: None)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(lambda x: x)
    b.grad_fn.register_prehook(lambda x: None)
    b.sum().backward()
    assert post_counter[0] == 2
    assert pre_counter[0] == 3
    assert_equal(a.grad, [16.0])

    a = dualad.rand(3, 3, requires_grad=True)
    b = mul2(a)

    def prehook2(grad_output):
        pre_counter[0] += 1
        return None

    b.grad_fn.register_prehook(prehook2)
    b.sum().backward()
    assert pre_counter[0] == 4
    assert_equal(a.grad, np.ones((3, 3)) * 2)


def test_grad_fn_prehooks_remove_hooks():
    # test_grad_fn_prehooks_remove_hooks, custom-Function half (HOOK-6)
    mul2 = _get_mul2()
    a = dualad.rand(3, 3, requires_grad=True)
    b = mul2(a)
    counter = [0]

    def prehook(grad_output):
        counter[0] += 1
        return None

    handle = b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(prehook)
    handle.remove()
    b.sum().backward()
    assert_equal(a.grad, np.ones((3, 3)) * 2)
    assert counter[0] == 1

    a = dualad.rand(3, 3, requires_grad=True)
    b = mul2(a)
    counter = [0]

    def prehook1(grad_output):
        handle2.remove()
        handle3.remove()
        return None

    def prehook2(grad_output):
        counter[0] += 1
        return None

    b.grad_fn.register_prehook(prehook1)
    handle2 = b.grad_fn.register_prehook(prehook2)
    handle3 = b.grad_fn.register_prehook(prehook2)
    handle3.remove()
    b.sum().backward()
    assert_equal(a.grad, np.ones((3, 3)) * 2)
    assert counter[0] == 1


def test_grad_fn_prehooks_multiple_outputs():
    # test_grad_fn_prehooks_multiple_outputs, custom-Function half (HOOK-5)
    class DoubleMul2(Function):
        @staticmethod
        def forward(ctx, x, a, y):
            ctx.a = a
            return a * x * 2, a, a * y * 2

        @staticmethod
        def backward(ctx, g1, _a, g2):
            return ctx.a * g1 * 2, None, ctx.a * g2 * 2

    counter = [0]
    seen = []

    def prehook(grad_output):
        g1, ga, g2 = grad_output
        seen.append(ga)
        counter[0] += 1
        return (g1 * 2, None, g2 * 2)

    a = randn(3, 3, requires_grad=True, seed=5)
    b = randn(3, 3, requires_grad=True, seed=6)
    k = 3
    c, _, d = DoubleMul2.apply(a, k, b)
    c.grad_fn.register_prehook(prehook)
    (c + d).sum().backward()
    assert counter[0] == 1
    assert seen == [None]
    assert_equal(a.grad, np.ones((3, 3)) * 4 * k)
    assert_equal(b.grad, np.ones((3, 3)) * 4 * k)


def test_hooks_on_custom_function_outputs():
    # test_hooks (the custom Function part): tensor hooks on a Function's output
    class Identity(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a, a + b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a + grad_b, grad_b

    # test_return_leaf: the hook sees only q's gradient, not x's
    hook_called = []

    def hook(grad):
        hook_called.append(True)
        assert_equal(grad, np.ones((5, 5)))

    x = randn(5, 5, requires_grad=True)
    y = randn(5, 5, requires_grad=True)
    q, p = Identity.apply(x, y)
    q.register_hook(hook)
    (q + p + x).sum().backward()
    assert_equal(x.grad, np.ones((5, 5)) * 3)
    assert_equal(y.grad, np.ones((5, 5)))
    assert hook_called == [True]


def test_tensor_hooks_inplace_multiple_outputs():
    # test_tensor_hooks_inplace_multiple_outputs, custom-Function half (HOOK-2)
    class DoubleMul(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    counts = [0, 0, 0]

    def fn0(grad):
        counts[0] += 1
        assert_equal(grad, np.ones(out1.shape) * 2)

    def fn1(grad):
        counts[1] += 1
        assert_equal(grad, np.ones(out1.shape) * 3)

    def fn2(grad):
        counts[2] += 1
        assert_equal(grad, np.ones(out1.shape))

    b = dualad.rand(3, 3, requires_grad=True)
    out1, out2 = DoubleMul.apply(b)
    out1.register_hook(fn0)
    out2.register_hook(fn1)
    out1.mul_(2)
    out1.register_hook(fn2)
    (out1 + out2 * 3).sum().backward()
    assert counts == [1, 1, 1]
    assert_equal(b.grad, np.ones((3, 3)) * 13)


def test_retains_grad_inplace_multiple_outputs():
    # test_retains_grad_inplace_multiple_outputs, custom-Function half (ATTR-8)
    class DoubleMul(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    b = dualad.rand(3, 3, requires_grad=True)
    var, mean = DoubleMul.apply(b)
    var.retain_grad()
    mean.retain_grad()
    var.mul_(2)
    (var + mean).sum().backward()
    gvar = var.grad
    gmean = mean.grad
    a = b.detach().requires_grad_(True)
    var, mean = DoubleMul.apply(a)
    var.mul_(2)
    out = (var + mean).sum()
    gvar_expected, gmean_expected = autograd.grad(out, inputs=(var, mean))
    assert_equal(gvar, gvar_expected)
    assert_equal(gmean, gmean_expected)


def test_grad_unreachable_discovery():
    # test_grad_unreachable_discovery (BWD-8): a Function node off the path never runs
    class MyFunc(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            pytest.fail("This node should not be executed!")

    x = MyFunc.apply(dualad.randn(1, requires_grad=True) * 2)
    y = dualad.randn(1, requires_grad=True)
    (gy,) = autograd.grad(x, (y,), allow_unused=True)
    assert gy is None
    x = MyFunc.apply(dualad.randn(1, requires_grad=True) * 2)
    y = dualad.randn(1, requires_grad=True)
    z = dualad.randn(1, requires_grad=True)
    gy, gz = autograd.grad(x + z, (y, z), allow_unused=True)
    assert gy is None
    assert gz is not None


def test_no_grad_python_function():
    # test_no_grad_python_function (MODE-6)
    x = dualad.ones(5, 5, requires_grad=True)

    class MyOp(Function):
        @staticmethod
        def forward(self, x):
            return x + 1

        @staticmethod
        def backward(self, dy):
            return dy

    with dualad.no_grad():
        y = MyOp.apply(x)
    assert not y.requires_grad


def test_no_grad_input():
    # test_no_grad_input (MODE-6)
    class MyFunction(Function):
        @staticmethod
        def forward(self, x):
            return x

        @staticmethod
        def backward(self, grad_output):
            return grad_output

    x = dualad.randn(5, requires_grad=True)
    with dualad.no_grad():
        y = MyFunction.apply(x)
    assert x.requires_grad
    assert y.grad_fn is None


def test_forward_runs_without_grad_and_backward_with_create_graph():
    # MODE-7: forward always sees grad mode off; backward sees create_graph
    modes = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            modes.append(("forward", dualad.is_grad_enabled()))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            modes.append(("backward", dualad.is_grad_enabled()))
            return g * 2

    x = dualad.ones(1, requires_grad=True)
    autograd.grad(Probe.apply(x), x)
    autograd.grad(Probe.apply(x), x, create_graph=True)
    assert modes == [
        ("forward", False),
        ("backward", False),
        ("forward", False),
        ("backward", True),
    ]


def test_grad_mode_restored_reentrant():
    # test_grad_mode_restored_reentrant (MODE-7, FN-25)
    modes = []

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, go):
            original = dualad.is_grad_enabled()
            with dualad.enable_grad():
                inside = dualad.is_grad_enabled()
                foo = dualad.rand(*go.shape, requires_grad=True)
                (grad,) = autograd.grad(foo**3, foo, grad_outputs=go)
                after = dualad.is_grad_enabled()
            modes.append((original, inside, after, dualad.is_grad_enabled() == original))
            return grad

    inp = dualad.rand(3, requires_grad=True)
    MyFunction.apply(inp).sum().backward()
    with pytest.warns(UserWarning, match="create_graph=True"):
        MyFunction.apply(inp).sum().backward(create_graph=True)
    assert modes == [(False, True, True, True), (True, True, True, True)]


def test_simple_reentrant():
    # test_simple_reentrant (FN-25)
    y_data = randn(2, 2, seed=7)

    class Reenter(Function):
        @staticmethod
        def forward(ctx, x):
            with dualad.enable_grad():
                ctx.x = x.detach().requires_grad_()
                ctx.output_var = ctx.x * y_data
            return ctx.output_var.detach()

        @staticmethod
        def backward(ctx, grad_output):
            with dualad.enable_grad():
                ctx.output_var.sum().backward()
            return ctx.x.grad * grad_output

    x = randn(2, 2, requires_grad=True, seed=8)
    out = Reenter.apply(x)
    out.sum().backward()
    assert_equal(x.grad, y_data)


def test_reentrant_child_error():
    # test_reentrant_child_error (FN-25): the child's error reaches the caller
    a = dualad.rand(3, 3, requires_grad=True)
    c = a * a
    b = dualad.rand(3, 3, requires_grad=True)
    e = b * b

    class ErrorOnBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("Simulate error")

    f = ErrorOnBackward.apply(e)
    d = f.sum()

    class ReentrantFunc(Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, grad):
            with dualad.enable_grad():
                d.backward()
            return grad

    d2 = ReentrantFunc.apply(c)
    with pytest.raises(RuntimeError, match="Simulate error"):
        d2.sum().backward()


def test_reentrant_priority():
    # test_reentrant_priority (ENG-4)
    order = []

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            order.append("MyFunction")
            return x

    class Reentrant(Function):
        @staticmethod
        def forward(ctx, x):
            with dualad.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, x):
            order.append("Reentrant")
            if ctx.x < 0:
                return x
            with dualad.enable_grad():
                Reentrant.apply(ctx.x).backward()
            return x

    a = MyFunction.apply(dualad.tensor(6.0, requires_grad=True))
    b = Reentrant.apply(dualad.tensor(9.0, requires_grad=True))
    v = a * b
    v.backward()
    assert len(order) == 11
    assert order.count("Reentrant") == 10
    assert order[-1] == "MyFunction"


def test_no_grad_copy():
    # test_no_grad_copy (BWD-13): two leaves never share a .grad buffer
    class MyFunc(Function):
        static_grad = None

        @staticmethod
        def forward(ctx, inp1, inp2):
            return inp1 + inp2

        @staticmethod
        def backward(ctx, grad):
            MyFunc.static_grad = grad
            return grad, grad

    class NonContGradFunc(Function):
        @staticmethod
        def forward(ctx, inp1):
            ctx.size = inp1.shape
            return dualad.tensor([1.0])

        @staticmethod
        def backward(ctx, grad):
            return dualad.ones(1).expand(*ctx.size)

    a = dualad.randn(5, 6, requires_grad=True)
    b = dualad.randn(5, 6, requires_grad=True)
    NonContGradFunc.apply(MyFunc.apply(a, b)).backward()
    assert not np.shares_memory(a.grad.numpy(), MyFunc.static_grad.numpy())
    assert not np.shares_memory(b.grad.numpy(), MyFunc.static_grad.numpy())
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    assert_equal(a.grad, np.ones((5, 6)))


# 20,000 nodes are far past any recursion limit; 150,000 (the seed's depth) with --runslow
@pytest.mark.parametrize("depth", [20_000, pytest.param(150_000, marks=pytest.mark.slow)])
def test_free_deep_graph_pyfunction(depth):
    # test_free_deep_graph_pyfunction (ENG-1, FN-27): chained Function nodes build, backward
    # and free without RecursionError
    class MyOp(Function):
        @staticmethod
        def forward(ctx, tensor1, tensor2):
            return tensor1 + tensor2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, grad_output

    def scope(depth):
        x = dualad.randn(1, requires_grad=True)
        y = x.clone()
        with np.errstate(over="ignore"):  # y doubles each step (as in the seed)
            for _ in range(depth):
                y = MyOp.apply(y, y)
        return y

    y = scope(depth)
    del y  # freeing the deep graph

    class Half(Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1.0

        @staticmethod
        def backward(ctx, g):
            return g * 1.0

    x = dualad.ones(1, requires_grad=True)
    y = x
    for _ in range(depth):
        y = Half.apply(y)
    y.backward()
    assert_equal(x.grad, [1.0])
    del y


def test_gc_in_destructor():
    # test_gc_in_destructor: a collection triggered from a Function object's destructor
    class CollectOnDelete(Function):
        def forward(self, x):
            return x

        def backward(self, grad_output):
            return grad_output

        def __del__(self):
            gc.collect()

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        for _ in range(3):  # (the seed does 10; each full collection is slow in a big suite)
            CollectOnDelete().forward(dualad.randn(1, requires_grad=True)).backward()

    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    # and a graph of Function nodes freed while a collection runs
    outs = [Identity.apply(dualad.randn(1, requires_grad=True)) for _ in range(10)]
    outs.clear()
    gc.collect()


def test_nested_functions_and_deep_backward_values():
    # backward of a Function written in dualad ops is itself differentiable (create_graph):
    # third derivative of exp through three nested uses of a custom Exp
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    x = dualad.tensor(0.5, requires_grad=True)
    y = Exp.apply(Exp.apply(x))  # exp(exp(x))
    (g1,) = autograd.grad(y, x, create_graph=True)
    (g2,) = autograd.grad(g1, x, create_graph=True)
    (g3,) = autograd.grad(g2, x)
    e = np.exp(0.5)
    ee = np.exp(e)
    assert_equal(g1, ee * e)
    assert_equal(g2, ee * e * (e + 1))
    assert_equal(g3, ee * e * ((e + 1) ** 2 + e))


def test_deep_reentrant():
    # test_deep_reentrant (ENG-5): nested backward() calls from inside a Function's backward,
    # 2000 deep (the engine continues a deep reentrant pass on a fresh thread), then 200
    class DeepReentrant(Function):
        @staticmethod
        def forward(ctx, x):
            with dualad.enable_grad():
                ctx.x = x.detach().requires_grad_(True)
                ctx.x = ctx.x - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, x):
            if ctx.x < 0:
                return x
            with dualad.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return x

    v = dualad.tensor(2000.0, requires_grad=True)
    DeepReentrant.apply(v).sum().backward()
    assert_equal(v.grad, 1.0)
    v2 = dualad.tensor(200.0, requires_grad=True)
    DeepReentrant.apply(v2).sum().backward()
    assert_equal(v2.grad, 1.0)


@pytest.mark.parametrize("use_tensor_hook", [True, False])
def test_hook_closure_cycle(use_tensor_hook):
    # test_hook_closure_cycle (HOOK-17) with a custom Function: a hook whose closure refers to
    # the node keeps working across collections while the graph is alive
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    class Test:
        pass

    count = [0]

    def scope():
        a = dualad.tensor(1.0, requires_grad=True)
        b = Identity.apply(a)
        grad_fn_b = b.grad_fn
        obj = Test()

        def hook(*args):
            assert grad_fn_b is not None and obj is not None
            count[0] += 1

        if use_tensor_hook:
            b.register_hook(hook)
        else:
            b.grad_fn.register_hook(hook)
        c = b.clone()
        return c, weakref.ref(obj)

    gc.disable()
    try:
        out, ref = scope()
        out.backward(retain_graph=True)
        gc.collect()
        out.backward(retain_graph=True)
        assert count[0] == 2
        assert ref() is not None
        del out
        gc.collect()
        assert ref() is None  # the cycle node -> hook -> node dies with the graph
    finally:
        gc.enable()


# ---------------------------------------------------------------------------------------------
# seed 002 (test/dynamo/test_autograd_function.py) patterns, in eager mode


def test_seed002_module_patterns():
    # CustomFunc1 through Module1..4 (class apply, instance apply, stored apply), CustomFunc3 /
    # CustomFuncSaveForBwd (save_for_backward of an intermediate result)
    import math

    class CustomFunc1(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo + foo

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    class CustomFuncSaveForBwd(Function):
        @staticmethod
        def forward(ctx, foo):
            result = foo + foo
            result = result + foo
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * math.sqrt(result.numel())

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        instance_apply = CustomFunc1().apply
    stored = CustomFunc1.apply
    for requires_grad in (True, False):
        for fn in (CustomFunc1.apply, instance_apply, stored):
            out = fn(dualad.ones(2, 3, requires_grad=requires_grad))
            assert np.allclose(out.detach().numpy(), 2.0)
            assert out.requires_grad == requires_grad
    x = randn(10, requires_grad=True)
    out = CustomFuncSaveForBwd.apply(x)
    assert_equal(out, 3 * x)
    out.sum().backward()
    assert_equal(x.grad, np.full(10, math.sqrt(10)))


def test_seed002_linear_setup_context():
    # LinearFunction / test_linear_setup_context: setup_context + needs_input_grad gating, bias
    # None allowed
    calls = []

    class LinearFunction(Function):
        @staticmethod
        def forward(input, weight, bias):
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def setup_context(ctx, inputs, output):
            input, weight, bias = inputs
            ctx.save_for_backward(input, weight, bias)

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            calls.append(ctx.needs_input_grad)
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    input = randn(2, 2, requires_grad=True, seed=1)
    weight = randn(3, 2, requires_grad=True, seed=2)
    out = LinearFunction.apply(input, weight, None)
    assert_equal(out, input @ weight.T)
    out.sum().backward()
    assert calls == [(True, True, False)]
    assert_equal(input.grad, np.ones((2, 3)) @ weight.detach().numpy())
    assert_equal(weight.grad, np.ones((3, 2)) @ input.detach().numpy())
    bias = randn(3, seed=3)  # a bias that does not require grad
    assert gradcheck(lambda i, w: LinearFunction.apply(i, w, bias), (input, weight))
    assert calls[-1] == (True, True, False)


def test_seed002_function_with_bound_free_variable():
    # test_function_with_bound_free_variable
    class LowerBound(Function):
        @staticmethod
        def forward(ctx, inputs, bound):
            ctx.save_for_backward(inputs, dualad.ones(1) * bound)
            return inputs.clamp(min=bound)

        @staticmethod
        def backward(ctx, grad_output):
            inputs, bound = ctx.saved_tensors
            return (inputs >= bound) * grad_output, None

    gamma = dualad.rand(4, 8, requires_grad=True)
    x = dualad.rand(4, 8)
    out = x + LowerBound.apply(gamma, 0.5)
    assert_equal(out, x + np.maximum(gamma.detach().numpy(), 0.5))
    out.sum().backward()
    assert_equal(gamma.grad, (gamma.detach().numpy() >= 0.5).astype(float))


def test_custom_function_in_threads():
    # THR-1 with a custom Function: independent graphs in several threads
    import threading

    class Affine(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x + 3) * (x + 4) * 0.5

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x + 3.5)

    errors = []

    def work(seed):
        try:
            for _ in range(20):
                x = randn(5, requires_grad=True, seed=seed)
                Affine.apply(x).sum().backward()
                assert_equal(x.grad, x + 3.5)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
