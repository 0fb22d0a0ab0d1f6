"""register_multi_grad_hook in "all" and "any" mode, also from several threads (spec HOOK-16,
THR-4), ported from PyTorch's test_multi_grad_*_hooks (nn.Module and custom Functions replaced
by plain dualad ops and a node pre-hook that raises)."""

from __future__ import annotations

import threading
from functools import partial

import numpy as np
import pytest

import dualad
from dualad.autograd.graph import register_multi_grad_hook


def value(t):
    return t.detach().numpy()


def run_in_threads(fn, args=(), num_threads=5):
    errors = []

    def target():
        try:
            fn(*args)
        except BaseException as error:  # re-raised below
            errors.append(error)

    threads = [threading.Thread(target=target) for _ in range(num_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def four_tensors():
    """t1..t4 requiring grad, each the output of a different kind of node (the seed uses a C++
    node, a custom Function, UndefinedGrad and a C++ custom op)."""
    t1, t2, t3, t4 = (dualad.rand(2, requires_grad=True) for _ in range(4))
    return t1.mul(2), t2.clone(), t3 * 1.0, t4.exp()


def failing_once(t):
    """``t`` passed through a node whose backward raises the first time it runs."""
    out = t.view_as(t)
    calls = [0]
    lock = threading.Lock()

    def prehook(grad_outputs):
        with lock:
            calls[0] += 1
            first = calls[0] == 1
        if first:
            raise RuntimeError("error message")

    out.grad_fn.register_prehook(prehook)
    return out


def test_multi_grad_all_hooks():
    t1, t2, t3, t4 = four_tensors()
    res = [None] * 4
    count = [0]

    def hook(grads):
        nonlocal res
        count[0] += 1
        res = [g is not None for g in grads]

    handle = register_multi_grad_hook((t1, t2, t3, t4), hook)
    out = t2 * t3

    out.sum().backward(inputs=(t2, t3), retain_graph=True)
    assert count[0] == 1
    assert res == [False, True, True, False]

    out.sum().backward(inputs=(t1, t4), retain_graph=True)
    assert count[0] == 1

    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    assert count[0] == 2
    assert res == [False, False, True, False]

    out = failing_once(t2) * t3
    with pytest.raises(RuntimeError, match="error message"):
        out.sum().backward(inputs=(t2, t3), retain_graph=True)
    assert count[0] == 2

    handle.remove()
    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    assert count[0] == 2


def test_multi_grad_all_hooks_gets_the_gradients_after_all_are_known():
    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    b = dualad.tensor([3.0], requires_grad=True)
    x = a * 2
    y = b.exp()
    order = []
    received = []
    x.register_hook(lambda g: order.append("x"))
    y.register_hook(lambda g: order.append("y"))
    register_multi_grad_hook((x, y), lambda grads: order.append("multi") or received.append(grads))
    (x.sum() * y.sum()).backward()
    assert order[-1] == "multi" and sorted(order[:2]) == ["x", "y"]
    gx, gy = received[0]
    np.testing.assert_allclose(value(gx), np.exp([3.0, 3.0]))
    np.testing.assert_allclose(value(gy), [6.0])
    np.testing.assert_allclose(value(a.grad), 2 * np.exp([3.0, 3.0]))


def test_multi_grad_all_hooks_with_grad_and_leaves():
    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    b = dualad.tensor([3.0], requires_grad=True)
    c = dualad.tensor([4.0], requires_grad=True)
    received = []
    register_multi_grad_hook((a, b, c), lambda grads: received.append(grads))
    out = (a * b).sum()
    ga, gb = dualad.autograd.grad(out, (a, b))
    assert len(received) == 1
    got_a, got_b, got_c = received[0]
    np.testing.assert_allclose(value(got_a), value(ga))
    np.testing.assert_allclose(value(got_b), value(gb))
    assert got_c is None
    assert a.grad is None  # grad() does not accumulate


def test_multi_grad_all_hook_called_when_an_expected_gradient_is_none():
    # an output of a multi-output node that executes but gets no gradient: its hook sees None
    x = dualad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    first, second = x.chunk(2)
    other = dualad.tensor([1.0], requires_grad=True) * 2
    received = []
    register_multi_grad_hook((second, other), lambda grads: received.append(grads))
    (first.sum() * 3).backward()
    assert len(received) == 1
    _, g_other = received[0]
    assert g_other is None


def test_multi_grad_any_hooks():
    hook_id = 0
    any_hook_handles = []
    hook_order = []

    def hook(hook_id, *unused):
        hook_order.append(hook_id)

    rng = np.random.default_rng(0)
    weights = [dualad.tensor(rng.standard_normal((3, 3)), requires_grad=True) for _ in range(2)]

    def multi_output_module(x, w):
        nonlocal hook_id
        z = x @ w
        out = dualad.sin(z), dualad.cos(z)
        z.register_hook(partial(hook, hook_id))
        hook_id += 1
        any_hook_handles.append(register_multi_grad_hook(out, partial(hook, hook_id), mode="any"))
        hook_id += 1
        return out

    def model(x):
        y = multi_output_module(x, weights[0])
        z = y[0] + y[1]
        return multi_output_module(z, weights[1])

    inp = dualad.randn(2, 3)
    out = model(inp)
    (out[0] + out[1]).sum().backward()
    # any hooks (ids 1 and 3) ran once each, before the regular hooks of earlier nodes
    assert len(any_hook_handles) == 2
    assert hook_order == [3, 2, 1, 0]

    hook_id = 0
    hook_order.clear()
    any_hook_handles.clear()
    out = model(inp)
    for handle in any_hook_handles:
        handle.remove()
    (out[0] + out[1]).sum().backward()
    assert hook_order == [2, 0]


def test_multi_grad_any_hook_gets_the_first_gradient():
    a = dualad.tensor([1.0], requires_grad=True)
    b = dualad.tensor([2.0], requires_grad=True)
    x = a * 5
    y = b * 7  # created later: its node runs first
    received = []
    register_multi_grad_hook((x, y), lambda g: received.append(value(g)), mode="any")
    (x * 2 + y * 3).sum().backward()
    assert len(received) == 1
    np.testing.assert_allclose(received[0], [3.0])


def test_multi_grad_hooks_invalid_mode():
    t1 = dualad.rand(2, requires_grad=True)
    t2 = dualad.rand(2, requires_grad=True)
    regex = r"Expects mode to be one of \('all', 'any'\) but got foo"
    with pytest.raises(ValueError, match=regex):
        register_multi_grad_hook((t1, t2), lambda _: None, mode="foo")


def test_multi_grad_hook_handle_as_context_manager():
    a = dualad.tensor([1.0], requires_grad=True)
    calls = []
    with register_multi_grad_hook((a,), lambda grads: calls.append(1)):
        (a * 2).sum().backward()
    (a * 2).sum().backward()
    assert calls == [1]


# ------------------------------------------------------------------------- threads


def test_multi_grad_all_hooks_threads():
    t1, t2, t3, t4 = (dualad.rand(2, requires_grad=True) for _ in range(4))
    res = None
    count = [0]
    hook_lock = threading.Lock()
    mismatches = []

    def hook(grads):
        nonlocal res
        with hook_lock:
            count[0] += 1
            grad_is_none = [g is not None for g in grads]
            if res is None:
                res = grad_is_none
            elif res != grad_is_none:
                mismatches.append(grad_is_none)

    register_multi_grad_hook((t1, t2, t3, t4), hook)
    out = (t2 * t3).sum()

    def backward_retain_graph(out, t2, t3):
        out.backward(inputs=(t2, t3), retain_graph=True)

    run_in_threads(backward_retain_graph, (out, t2, t3), num_threads=5)
    assert count[0] == 5
    assert res == [False, True, True, False]
    assert not mismatches

    # one thread's backward fails before the hook's gradients are known: 4 calls
    res = None
    count = [0]
    err_count = [0]
    err_lock = threading.Lock()
    out = (failing_once(t2) * t3).sum()

    def backward_counting_errors(out, t2, t3):
        try:
            out.backward(inputs=(t2, t3), retain_graph=True)
        except RuntimeError:
            with err_lock:
                err_count[0] += 1

    run_in_threads(backward_counting_errors, (out, t2, t3), num_threads=5)
    assert count[0] == 4
    assert err_count[0] == 1
    assert res == [False, True, True, False]


def test_multi_grad_any_hooks_threads():
    t1, t2, t3, t4 = (dualad.rand(2, requires_grad=True) for _ in range(4))
    count = [0]
    hook_lock = threading.Lock()

    def hook(grad):
        with hook_lock:
            count[0] += 1

    register_multi_grad_hook((t1, t2, t3, t4), hook, mode="any")
    out = (t2 * t3).sum()

    def backward_retain_graph(out, t2, t3):
        out.backward(inputs=(t2, t3), retain_graph=True)

    run_in_threads(backward_retain_graph, (out, t2, t3), num_threads=5)
    assert count[0] == 5

    # the hook runs before the failing node (it fires on the first gradient): 5 calls
    count = [0]
    err_count = [0]
    err_lock = threading.Lock()
    t2_failing = failing_once(t2)
    out = (t2_failing * t3).sum()
    t2_failing.register_hook(lambda g: None)

    def backward_counting_errors(out, t2, t3):
        try:
            out.backward(inputs=(t2, t3), retain_graph=True)
        except RuntimeError:
            with err_lock:
                err_count[0] += 1

    run_in_threads(backward_counting_errors, (out, t2, t3), num_threads=5)
    assert count[0] == 5
    assert err_count[0] == 1


# ------------------------------------------------------------------------- seeds' Function forms


def test_multi_grad_all_hooks_function_nodes():
    t1, t2, t3, t4 = (dualad.rand(2, requires_grad=True) for _ in range(4))

    class Foo(dualad.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g_out):
            return g_out

    t1 = t1.mul(2)
    t2 = Foo.apply(t2)
    t3 = t3 * 1.0
    t4 = Foo.apply(t4)
    res = [None] * 4
    count = [0]

    def hook(grads):
        nonlocal res
        count[0] += 1
        res = [g is not None for g in grads]

    handle = register_multi_grad_hook((t1, t2, t3, t4), hook)
    out = t2 * t3
    out.sum().backward(inputs=(t2, t3), retain_graph=True)
    assert count[0] == 1
    assert res == [False, True, True, False]
    out.sum().backward(inputs=(t1, t4), retain_graph=True)
    assert count[0] == 1
    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    assert count[0] == 2
    assert res == [False, False, True, False]

    class Func(dualad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g_out):
            raise RuntimeError("error message")

    out = Func.apply(t2) * t3
    with pytest.raises(RuntimeError, match="error message"):
        out.sum().backward(inputs=(t2, t3), retain_graph=True)
    assert count[0] == 2
    handle.remove()
    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    assert count[0] == 2


@pytest.mark.parametrize("mode, calls", [("all", 4), ("any", 5)])
def test_multi_grad_hooks_threads_with_a_failing_function(mode, calls):
    # seed TestMultithreadAutograd: one of five threads fails inside a Function's backward
    t1, t2, t3, t4 = (dualad.rand(2, requires_grad=True) for _ in range(4))
    count = [0]
    hook_lock = threading.Lock()

    def hook(grads):
        with hook_lock:
            count[0] += 1

    register_multi_grad_hook((t1, t2, t3, t4), hook, mode=mode)
    bw_count = [0]
    bw_lock = threading.Lock()

    class Func(dualad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g_out):
            with bw_lock:
                bw_count[0] += 1
                first = bw_count[0] == 1
            if first:
                raise RuntimeError("error message")
            return g_out

    out = (Func.apply(t2) * t3).sum()
    err_count = [0]
    err_lock = threading.Lock()

    def backward_retain_graph(out, t2, t3):
        try:
            out.backward(inputs=(t2, t3), retain_graph=True)
        except RuntimeError:
            with err_lock:
                err_count[0] += 1

    run_in_threads(backward_retain_graph, (out, t2, t3), num_threads=5)
    assert err_count[0] == 1
    # "any": t3's gradient (a leaf: accumulated first) fires it before the Function fails
    assert count[0] == calls
