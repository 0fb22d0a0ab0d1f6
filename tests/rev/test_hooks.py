"""Tensor hooks, node pre/post hooks, retain_grad and post-accumulate hooks.

Ported from PyTorch's test/test_autograd.py (spec/reverse.md section 5 HOOK and ATTR-7..9).
Tests that need a custom ``autograd.Function`` or ``register_multi_grad_hook`` live elsewhere.
"""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest

import dualad
from dualad import autograd


def assert_equal(actual, expected, **kw):
    a = actual.detach().numpy() if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    e = expected.detach().numpy() if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=kw.get("rtol", 1e-7), atol=kw.get("atol", 1e-7))


def _var_mean_or_skip():
    """torch.var_mean is ONE node with two outputs; these seeds need exactly that."""
    if not hasattr(dualad, "var_mean"):
        pytest.skip("var_mean is not in dualad yet")
    var, mean = dualad.var_mean(dualad.rand(3, 3, requires_grad=True), dim=0)
    if var.grad_fn is not mean.grad_fn:
        pytest.skip("dualad.var_mean is two nodes, not one two-output node like torch's")
    return lambda t: dualad.var_mean(t, dim=0)


def test_hooks():
    x = dualad.ones(5, 5, requires_grad=True)
    y = dualad.ones(5, 5) * 4
    y.requires_grad_(True)
    counter = [0]

    def bw_hook(inc, grad):
        assert isinstance(grad, dualad.Tensor)
        counter[0] += inc

    z = x**2 + x * 2 + x * y + y
    x.register_hook(lambda *args: bw_hook(0, *args))
    test = z.register_hook(lambda *args: bw_hook(1, *args))
    z.backward(dualad.ones(5, 5), retain_graph=True)
    assert counter[0] == 1

    test2 = z.register_hook(lambda *args: bw_hook(2, *args))
    z.backward(dualad.ones(5, 5), retain_graph=True)
    assert counter[0] == 4

    test2.remove()
    z.backward(dualad.ones(5, 5), retain_graph=True)
    assert counter[0] == 5

    def bw_hook_modify(grad):
        return grad.mul(2)

    test.remove()
    z.register_hook(bw_hook_modify)
    with dualad.no_grad():
        y.grad.zero_()
    z.backward(dualad.ones(5, 5), retain_graph=True)
    assert_equal(y.grad, (x + 1) * 2)

    y.register_hook(bw_hook_modify)
    with dualad.no_grad():
        y.grad.zero_()
    z.backward(dualad.ones(5, 5))
    assert_equal(y.grad, (x + 1) * 4)


def test_hook_remove_twice_is_noop():
    x = dualad.ones(3, requires_grad=True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    handle.remove()
    handle.remove()
    (x * 2).sum().backward()
    assert calls == []


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't"):
        dualad.ones(3).register_hook(lambda g: g)


def test_hook_with_no_name():
    class MyHookClass:
        def __call__(self, grad):
            return grad.clone()

    x = dualad.randn(5, requires_grad=True).clone()
    x.register_hook(MyHookClass())
    x.sum().backward()


def test_hook_replacing_grad_on_leaf_and_nonleaf():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: g + 1)
    y.sum().backward()
    assert_equal(x.grad, [31.0, 31.0])


def test_tensor_hooks_inplace():
    count1 = [0]
    count2 = [0]

    def fn1(grad):
        count1[0] += 1
        assert_equal(grad, [4.0])
        return grad * 2

    def fn2(grad):
        count2[0] += 1
        assert_equal(grad, [1.0])
        return grad * 2

    a = dualad.tensor([1.0], requires_grad=True)
    b = a.clone()
    b.register_hook(fn1)
    b.mul_(2)
    b.register_hook(fn2)
    b.sum().backward()
    assert count1[0] == 1
    assert count2[0] == 1
    assert_equal(a.grad, [8.0])

    count3 = [0]

    def fn3(grad):
        count3[0] += 1
        assert_equal(grad, [4.0])
        return grad * 2

    a = dualad.tensor([1.0], requires_grad=True)
    b = a.clone()
    b.register_hook(fn3)
    b.mul_(2)
    b.mul_(2)
    b.sum().backward()
    assert count1[0] == 1
    assert count3[0] == 1
    assert_equal(a.grad, [8.0])


def test_tensor_hooks_inplace_multiple_outputs():
    # (the custom-Function half of this seed test belongs with autograd.Function)
    fn = _var_mean_or_skip()
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
    out1, out2 = fn(b)
    out1.register_hook(fn0)
    out2.register_hook(fn1)
    # node refers to two hook dicts
    # out1 no longer no longer points to its old hook dict
    out1.mul_(2)
    # fn2 is registered to out1's new hook dict
    out1.register_hook(fn2)
    (out1 + out2 * 3).sum().backward()
    assert counts == [1, 1, 1]


def test_tensor_hooks_inplace_over_view():
    count = [0]

    def fn0(grad):
        pytest.fail("hook on the replaced view history must not run")

    def fn1(grad):
        pytest.fail("hook on the replaced view history must not run")

    def fn2(grad):
        count[0] += 1
        assert_equal(grad, [1.0])

    base = dualad.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.register_hook(fn0)
    view2.register_hook(fn1)
    view.mul_(2)
    # We need to explicitly trigger an update to view to update its grad_fn
    _ = view2.grad_fn
    view2.register_hook(fn2)
    (view + view2).sum().backward()
    assert count[0] == 1


def test_grad_fn_prehooks():
    def mul2(x):
        return x * 2

    a = dualad.tensor([1.0], requires_grad=True)
    b = mul2(a)
    post_counter = [0]
    pre_counter = [0]

    def posthook(grad_input, grad_output):
        assert pre_counter[0] == 3
        assert np.allclose(grad_output[0].numpy(), np.ones(1) * 8)
        assert np.allclose(grad_input[0].numpy(), np.ones(1) * 16)
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

    a = dualad.rand(3, 3, requires_grad=True)
    b = mul2(a)

    def prehook2(grad_output):
        pre_counter[0] += 1
        return None

    b.grad_fn.register_prehook(prehook2)
    b.sum().backward()
    assert pre_counter[0] == 4
    assert_equal(a.grad, np.ones((3, 3)) * 2)


def test_grad_fn_prehooks_multiple_outputs():
    # (the custom-Function half of this seed test belongs with autograd.Function)
    var_mean = _var_mean_or_skip()
    b = dualad.rand(3, 3, requires_grad=True)
    var, mean = var_mean(b)
    (var + mean).sum().backward()
    a = b.detach().requires_grad_()
    counter = [0]

    def prehook(grad_output):
        gvar, gmean = grad_output
        counter[0] += 1
        return (gvar * 2, gmean * 2)

    var, mean = var_mean(a)
    mean.grad_fn.register_prehook(prehook)
    (var + mean).sum().backward()
    assert counter[0] == 1
    assert_equal(a.grad, b.grad * 2)


def test_grad_fn_prehooks_multiple_outputs_of_one_node():
    # HOOK-5 with a one-node multi-output op dualad has (chunk), in the shape of the seed
    b = dualad.rand(4, 3, requires_grad=True)
    first, second = b.chunk(2)
    assert first.grad_fn is second.grad_fn
    (first * first + second).sum().backward()
    a = b.detach().requires_grad_()
    counter = [0]
    seen = []

    def prehook(grad_output):
        g_first, g_second = grad_output
        counter[0] += 1
        return (g_first * 2, g_second * 2)

    first, second = a.chunk(2)
    second.grad_fn.register_prehook(prehook)
    (first * first + second).sum().backward()
    assert counter[0] == 1
    assert_equal(a.grad, b.grad * 2)

    # an output that gets no gradient is None in grad_outputs; the hook may leave it so
    c = b.detach().requires_grad_()
    first, second = c.chunk(2)
    first.grad_fn.register_prehook(lambda grads: seen.append(grads) or (grads[0] * 3, None))
    first.sum().backward()
    assert seen[0][1] is None
    assert_equal(c.grad, np.concatenate([3 * np.ones((2, 3)), np.zeros((2, 3))]))


def test_grad_fn_prehooks_remove_hooks():
    def mul2(x):
        return x * 2

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
        # Remove hook that is already removed is OK
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


def test_prehook_ordering():
    log = []

    def hook1(g):
        log.append(1)
        return g * 3

    def hook2(gs):
        log.append(2)
        return tuple(g * 2 for g in gs)

    a = dualad.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(hook2)
    b.register_hook(hook1)
    b.grad_fn.register_prehook(hook2)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(hook1)
    acc.register_prehook(hook2)
    a.register_hook(hook1)

    b.sum().backward(retain_graph=True)
    assert log == [1, 2, 2, 1, 1, 2]

    # grad also runs hooks on accumulate grad nodes, even though
    # the accumulate grad nodes are not actually executed
    log = []
    autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
    assert log == [1, 2, 2, 1, 1]

    log = []
    b.sum().backward(inputs=(b,))
    assert log == [1, 2, 2]
    # retains_grad hooks would not observe modifications by all pre hooks
    # because they are executed after
    with warnings.catch_warnings():
        # torch's backward(inputs=[b]) also calls b.retain_grad(); dualad fills b.grad
        # without marking b, so reading it warns as for any non-leaf
        warnings.simplefilter("ignore", UserWarning)
        assert b.grad.item() == 3


def test_retains_grad_can_always_observe_tensor_prehook():
    def tensor_prehook(g):
        return g * 2

    a = dualad.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.register_hook(tensor_prehook)
    b.retain_grad()
    b.register_hook(tensor_prehook)
    b.clone().backward()
    assert b.grad.item() == 4

    a = dualad.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.retain_grad()
    b.register_hook(tensor_prehook)
    b.clone().backward()
    assert b.grad.item() == 2


def test_accumulate_grad_posthooks_can_observe_tensor_prehook():
    a = dualad.tensor(1.0, requires_grad=True)
    calls = []

    def tensor_prehook(g):
        return g * 2

    def posthook(gO, gI):
        calls.append("post")
        assert np.allclose(gI[0].numpy(), (a * 2).detach().numpy())
        assert len(gO) == 0

    def prehook(gI):
        calls.append("pre")
        assert np.allclose(gI[0].numpy(), (a * 2).detach().numpy())
        assert len(gI) == 1

    b = a.clone()
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(posthook)
    acc.register_prehook(prehook)
    a.register_hook(tensor_prehook)
    b.backward()
    assert calls == ["pre", "post"]


def test_accumulate_grad_posthooks_should_not_execute():
    def tensor_prehook(g):
        raise RuntimeError

    def posthook(gO, gI):
        raise RuntimeError

    a = dualad.tensor(1.0, requires_grad=True)
    a.register_hook(tensor_prehook)
    b = dualad.tensor(1.0, requires_grad=True)
    c = a.clone()
    acc = c.grad_fn.next_functions[0][0]
    acc.register_hook(posthook)
    out = a + b + c
    out.sum().backward(inputs=[b])
    assert b.grad.item() == 1


def test_hook_edge_case_when_called_with_grad():
    # grad executes the tensor hooks of the next node but not the grad_fn pre hooks or post hooks
    a = dualad.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    counts = {"tensor": 0, "pre": 0, "post": 0}

    def tensor_prehook(g):
        counts["tensor"] += 1

    def prehook(g):
        counts["pre"] += 1

    def posthook(gI, gO):
        counts["post"] += 1

    a.register_hook(tensor_prehook)
    b.register_hook(tensor_prehook)
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(posthook)
    acc.register_prehook(prehook)
    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_prehook(prehook)

    def check(tensor, pre, post):
        assert counts == {"tensor": tensor, "pre": pre, "post": post}
        counts.update(tensor=0, pre=0, post=0)

    autograd.grad(c, inputs=(b), retain_graph=True)
    check(1, 0, 0)
    autograd.grad(c, inputs=(a, b), retain_graph=True)
    check(2, 1, 1)
    c.backward(retain_graph=True)
    check(2, 2, 2)
    c.backward(inputs=(a, b), retain_graph=True)
    check(2, 2, 2)


def test_grad_nonleaf_register_hook():
    # This checks an edge case for register_hook: capture the grad of a non-leaf output of a
    # multi-output node while backpropagating through its siblings.
    x = dualad.randn(5, requires_grad=True)
    x_list = x.unbind()
    x0 = x_list[0]
    hook_results = [None]

    def hook(grad):
        hook_results[0] = grad

    x0.register_hook(hook)
    x_list[0].backward()
    assert_equal(hook_results[0], np.array(1.0))
    expected_grad = np.array([1.0, 0, 0, 0, 0])
    assert_equal(x.grad, expected_grad)
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert x_list[0].grad is None

    for i in range(1, 5, 1):
        x_list[i].backward()
        assert hook_results[0] is None
        expected_grad[i] = 1.0
        assert_equal(x.grad, expected_grad)
        with pytest.warns(UserWarning, match="not a leaf Tensor"):
            assert x_list[i].grad is None


def test_hooks_see_none_when_no_gradient_arrives():
    # PyTorch runs every node a backward reaches, even one that gets no gradient: its tensor
    # hooks (single-output nodes and leaves too) see None, and its result is undefined in turn
    from dualad.autograd.gradcheck_extra import _undefined_grad

    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(("x", g)))
    y = x.clone()
    y.register_hook(lambda g: seen.append(("y", g)))
    (g,) = autograd.grad(_undefined_grad(y).sum(), x, allow_unused=True)
    assert seen == [("y", None), ("x", None)]
    assert g is None
    _undefined_grad(y).sum().backward()
    assert seen[2:] == [("y", None), ("x", None)]
    assert x.grad is None

    # a hook that supplies a gradient makes the node run with it
    z = x * 3
    z.register_hook(lambda g: dualad.ones(2) if g is None else g)
    _undefined_grad(z).sum().backward()
    assert_equal(x.grad, [3.0, 3.0])


# ------------------------------------------------------------------ post-accumulate-grad hooks


def test_post_accumulate_grad_hook_on_non_leaf():
    def hook(tensor):
        tensor.sub_(1.0)

    leaf = dualad.rand(3, requires_grad=True)
    non_leaf = 2.0 * leaf
    with pytest.raises(
        RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"
    ):
        non_leaf.register_post_accumulate_grad_hook(hook)


def test_post_accumulate_grad_hook_multiple_hooks():
    def hook1(tensor):
        tensor.sub_(tensor.grad)

    def hook2(tensor):
        tensor.mul_(4.0)

    tensor = dualad.rand(3, requires_grad=True)
    tensor_ref = tensor.clone().detach()
    tensor.register_post_accumulate_grad_hook(hook1)
    tensor.register_post_accumulate_grad_hook(hook2)
    total = tensor.sum()
    total.backward()
    assert_equal(tensor, 4.0 * (tensor_ref - 1.0))


def test_post_accumulate_grad_hook_multiple_tensors():
    def hook(tensor):
        tensor.sub_(tensor.grad)

    tensor1 = dualad.rand(3, requires_grad=True)
    tensor1_ref = tensor1.clone().detach()
    tensor2 = dualad.rand(5, requires_grad=True)
    tensor2_ref = tensor2.clone().detach()
    tensor1.register_post_accumulate_grad_hook(hook)
    tensor2.register_post_accumulate_grad_hook(hook)
    tensor1.sum().backward()
    tensor2.sum().backward()
    assert_equal(tensor1, tensor1_ref - 1.0)
    assert_equal(tensor2, tensor2_ref - 1.0)


def test_post_accumulate_grad_hook_returns_not_None():
    def bad_hook(tensor):
        return tensor.grad

    tensor = dualad.rand(2, 3, requires_grad=True)
    tensor.register_post_accumulate_grad_hook(bad_hook)
    with pytest.raises(RuntimeError, match=r"hooks should return None\."):
        tensor.sum().backward()


def test_post_accumulate_grad_hook_e2e():
    # Optimizer-in-backward: a plain SGD step per parameter stands in for torch.optim.Adam on
    # an nn.Linear (dualad has neither); the reference runs the same steps after backward.
    rng = np.random.default_rng(0)
    w0, b0, inp = rng.standard_normal((2, 3)), rng.standard_normal(2), rng.standard_normal((2, 3))
    lr = 0.1

    def step(param):
        with dualad.no_grad():
            param.sub_(param.grad * lr)
        param.grad = None

    weight = dualad.tensor(w0, requires_grad=True)
    bias = dualad.tensor(b0, requires_grad=True)
    handles = [p.register_post_accumulate_grad_hook(step) for p in (weight, bias)]
    weight_ref = dualad.tensor(w0, requires_grad=True)
    bias_ref = dualad.tensor(b0, requires_grad=True)
    x = dualad.tensor(inp)

    def model(w, b):
        return (x @ w.T + b).sum()

    for _ in range(5):
        model(weight, bias).backward()
        model(weight_ref, bias_ref).backward()
        step(weight_ref)
        step(bias_ref)
    assert_equal(weight, weight_ref)
    assert_equal(bias, bias_ref)
    statics = [weight_ref.detach().clone(), bias_ref.detach().clone()]

    for h in handles:
        h.remove()
    for _ in range(5):
        model(weight, bias).backward()
        model(weight_ref, bias_ref).backward()
        step(weight_ref)
        step(bias_ref)
    for p_static, p_ref, p in zip(statics, (weight_ref, bias_ref), (weight, bias)):
        assert_equal(p, p_static)
        assert not np.allclose(p_ref.detach().numpy(), p.detach().numpy())


def test_post_accumulate_grad_hook_gets_cleaned_up():
    def fun_stuff_with_hook():
        thing_to_put_in_hook = dualad.rand(3)

        def hook(tensor):
            tensor.sub_(tensor.grad)
            tensor.add_(thing_to_put_in_hook)

        tensor = dualad.rand(3, requires_grad=True)
        tensor.register_post_accumulate_grad_hook(hook)
        tensor.sum().backward()
        ref = weakref.ref(thing_to_put_in_hook)
        gc.collect()
        return tensor, ref

    gc.disable()
    try:
        tensor, ref = fun_stuff_with_hook()
        assert ref() is not None  # thing_to_put_in_hook is kept alive by tensor
        del tensor
        gc.collect()
        assert ref() is None  # thing_to_put_in_hook is cleaned up
    finally:
        gc.enable()


def test_post_accumulate_grad_hook_ordering():
    tensor = dualad.rand(3, requires_grad=True)

    def pre_hook(grad):
        return grad.sub(2.0)

    def acc_grad_node_pre_hook(grad_out):
        return (grad_out[0].div(5.0),)

    def post_acc_grad_hook(tensor):
        tensor.grad.add_(0.5)

    def acc_grad_node_post_hook(grad_in, grad_out):
        tensor.grad = grad_out[0].mul(10)

    acc_grad = tensor.view_as(tensor).grad_fn.next_functions[0][0]
    tensor.register_hook(pre_hook)
    acc_grad.register_prehook(acc_grad_node_pre_hook)
    tensor.register_post_accumulate_grad_hook(post_acc_grad_hook)
    acc_grad.register_hook(acc_grad_node_post_hook)
    tensor.sum().backward()

    # the hooks run in order
    #   1. tensor prehook (1 - 2 = -1)
    #   2. acc_grad prehook (-1 / 5 = -0.2)
    #   3. tensor post acc_grad hook (-0.2 + 0.5 = 0.3)
    #   4. acc_grad posthook (0.3 * 10 = 3): grad_out[0] is the accumulated .grad
    assert_equal(tensor.grad, [3.0, 3.0, 3.0])


# ------------------------------------------------------------------ retain_grad


def test_retain_grad():
    input = dualad.rand(1, 3, requires_grad=True)
    h1 = input * 3
    out = (h1 * h1).sum()

    # It should be possible to call retain_grad() multiple times
    h1.retain_grad()
    h1.retain_grad()
    assert h1.retains_grad

    # Gradient should be accumulated
    out.backward(retain_graph=True)
    assert_equal(h1.grad, h1 * 2)
    out.backward(retain_graph=True)
    assert_equal(h1.grad, h1 * 4)

    with dualad.no_grad():
        input.grad.zero_()
    # It should be a no-op for leaves
    input.retain_grad()
    input.retain_grad()
    assert not input.retains_grad
    out.backward()
    assert_equal(input.grad, input * 18)


def test_retain_grad_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad"):
        dualad.ones(2).retain_grad()


def test_retain_grad_inplace():
    a = dualad.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    assert_equal(a.grad, [1.0])

    a = dualad.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    # Inplace multiple times is OK
    a.mul_(2)
    a.mul_(2)
    a.sum().backward()
    assert_equal(a.grad, [1.0])

    # When in-place over view is done, the retains_grad hooks should be
    # moved from base's original grad_fn to the copyslices node.
    x = dualad.tensor([1.0], requires_grad=True).clone()
    x.retain_grad()
    x_view = x[:]
    x_view *= 2
    x *= 2
    x.sum().backward()
    # The grad is 1, not 4, because we are computing grad wrt the latest
    # version of x.
    assert_equal(x.grad, [1.0])

    # If the base did not originally require grad, there should be no hook
    # to move. Make sure this case runs without error.
    x = dualad.zeros(4)
    y = x.view(2, 2)
    y.add_(dualad.randn(2, 2, requires_grad=True))


def test_retains_grad_inplace_multiple_outputs():
    # (the custom-Function half of this seed test belongs with autograd.Function)
    fn = _var_mean_or_skip()
    b = dualad.rand(3, 3, requires_grad=True)
    var, mean = fn(b)
    var.retain_grad()
    mean.retain_grad()
    # node has two retains_grad hooks
    var.mul_(2)
    # the retain_grad hook multi-output node refers should now be a nullptr
    (var + mean).sum().backward()
    gvar = var.grad
    gmean = mean.grad

    a = b.detach().requires_grad_(True)
    var, mean = fn(a)
    var.mul_(2)
    out = (var + mean).sum()
    gvar_expected, gmean_expected = autograd.grad(out, inputs=(var, mean))
    assert_equal(gvar, gvar_expected)
    assert_equal(gmean, gmean_expected)


def test_retain_grad_inplace_over_view():
    base = dualad.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.retain_grad()
    view2.retain_grad()
    view.mul_(2)
    (view + view2).sum().backward()

    # The old grad_fn, slice, wouldn't be part of the graph during backward
    # so if the retains grad were not properly updated to the new grad_fn,
    # the grad would still be None
    assert_equal(view.grad, view2.grad)
    assert_equal(view.grad, [1.0])
