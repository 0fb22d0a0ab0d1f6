"""Reentrant backward passes and final callbacks (spec ENG-4..7, HOOK-15).

The seeds drive reentrancy from custom Functions' backward; here hooks (which run inside the
backward pass exactly like a custom backward) call backward()/grad() on other graphs.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import dualad
from dualad import autograd
from dualad.autograd.graph import current_graph_task, queue_callback


def value(t):
    return t.detach().numpy()


def reentrant_chain(depth: int, calls: list):
    """A graph whose tensor hook runs backward on a new graph whose hook does the same, ``depth``
    levels deep (the shape of the seed's DeepReentrant)."""

    def make(level):
        x = dualad.tensor([1.0], requires_grad=True)
        y = x * 2
        if level < depth:

            def hook(grad):
                with dualad.enable_grad():
                    inner_x, inner_y = make(level + 1)
                    inner_y.sum().backward()
                    assert value(inner_x.grad).tolist() == [2.0]
                calls.append(level)

            y.register_hook(hook)
        return x, y

    return make(0)


@pytest.mark.parametrize("depth", [200, 2000])
def test_deep_reentrant(depth):
    calls = []
    x, y = reentrant_chain(depth, calls)
    y.sum().backward()
    assert calls == list(range(depth - 1, -1, -1))
    np.testing.assert_allclose(value(x.grad), [2.0])


def test_deep_reentrant_keeps_thread_state():
    # a pass handed to a fresh thread (deep stacks) still sees this thread's saved-tensor hooks,
    # and its errors come back here
    from dualad.autograd.graph import saved_tensors_hooks

    packs = []
    depth = 300
    calls = []

    def make(level):
        x = dualad.tensor([1.0], requires_grad=True)
        y = x * x
        if level < depth:

            def hook(grad):
                with dualad.enable_grad():
                    make(level + 1)[1].sum().backward()
                calls.append(level)

            y.register_hook(hook)
        elif level == depth:

            def fail(grad):
                raise KeyError("deepest")

            y.register_hook(fail)
        return x, y

    with saved_tensors_hooks(lambda t: packs.append(threading.get_ident()) or t, lambda t: t):
        _, y = make(0)
        with pytest.raises(KeyError, match="deepest"):
            y.sum().backward()
    assert calls == []
    # the nodes were recorded in the hooks' thread (threads inherit the hooks, not the reverse)
    assert len(packs) == 2 * (depth + 1) and len(set(packs)) > 1


def test_reentrant_priority():
    # the inner pass runs to completion before the outer one continues
    order = []

    def reentrant_leaf(start):
        x = dualad.tensor(start, requires_grad=True)
        y = x * 1.0

        def hook(grad):
            order.append("Reentrant")
            if start > 0:
                with dualad.enable_grad():
                    reentrant_leaf(start - 1).backward()

        y.register_hook(hook)
        return y

    a = dualad.tensor(6.0, requires_grad=True) * 1.0
    a.register_hook(lambda g: order.append("MyFunction"))
    b = reentrant_leaf(9.0)
    v = a * b
    v.backward()
    assert len(order) == 11
    assert order.count("Reentrant") == 10
    assert order[-1] == "MyFunction"


def test_reentrant_child_error():
    a = dualad.rand(3, 3, requires_grad=True)
    c = a * a
    b = dualad.rand(3, 3, requires_grad=True)
    e = b * b
    f = dualad.full(e.shape, float("nan"), dtype=e.dtype)
    f.requires_grad_()
    e.register_hook(lambda g: None)

    def reentrant(grad):
        with dualad.enable_grad():
            ((e * f) * 0).sum().backward()
            raise RuntimeError("Simulate error")

    d = (c * 1.0).sum()
    d.grad_fn.register_prehook(lambda grads: reentrant(grads[0]))
    with pytest.raises(RuntimeError, match="Simulate error"):
        d.backward()


def test_reentrant_grad_in_hook_sees_its_own_graph_task():
    ids = []
    x = dualad.tensor([1.0], requires_grad=True)
    y = x * 3

    def hook(grad):
        outer = current_graph_task()
        w = dualad.tensor([2.0], requires_grad=True)
        with dualad.enable_grad():
            inner_out = (w * w).sum()
        inner_out.grad_fn.register_prehook(lambda g: ids.append(current_graph_task().id))
        autograd.grad(inner_out, w)
        ids.append(outer.id)
        assert current_graph_task() is outer

    y.register_hook(hook)
    y.sum().backward()
    inner_id, outer_id = ids
    assert inner_id > outer_id
    assert current_graph_task() is None


# ------------------------------------------------------------------------- final callbacks


def test_callback_adds_callback():
    called = [0]

    def callback_final():
        called[0] += 1

    def callback_adds_callback():
        called[0] += 1
        queue_callback(callback_final)

    a = dualad.rand(3, 3, requires_grad=True)
    b = a * 1.0
    b.register_hook(lambda g: queue_callback(callback_adds_callback))
    b.sum().backward()
    assert called[0] == 2


def test_callback_runs_after_the_whole_pass():
    log = []
    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b * 3
    c.register_hook(lambda g: queue_callback(lambda: log.append(("callback", value(a.grad)))))
    b.register_hook(lambda g: log.append("b hook"))
    c.sum().backward()
    assert log[0] == "b hook"
    name, grad_then = log[1]
    assert name == "callback"
    np.testing.assert_allclose(grad_then, [6.0, 6.0])  # accumulated before the callback ran


def _reentrant_with_callbacks(install_callbacks_in_depths):
    counter = {"inner": 0, "outer": 0}

    def inc_inner_counter():
        counter["inner"] += 1

    def inc_outer_counter():
        counter["outer"] += 1

    def inner_hook(grad):
        if 1 in install_callbacks_in_depths:
            queue_callback(inc_inner_counter)

    def reentrant_hook(grad):
        if 0 in install_callbacks_in_depths:
            queue_callback(inc_outer_counter)
        tmp_inp = grad.detach().requires_grad_()
        with dualad.enable_grad():
            tmp = tmp_inp * 1.0
            tmp.register_hook(inner_hook)
            tmp_out = tmp.sum()
        tmp_out.backward()
        # the inner pass finished: its callback already ran, the outer one has not
        assert counter["inner"] == (1 if 1 in install_callbacks_in_depths else 0)
        assert counter["outer"] == 0

    t1 = dualad.rand(3, 3, requires_grad=True)
    t2 = t1 * 1.0
    t2.register_hook(reentrant_hook)
    autograd.backward([t2.sum()])
    return counter


def test_reentrant_with_callbacks_depth_0():
    assert _reentrant_with_callbacks([0]) == {"outer": 1, "inner": 0}


def test_reentrant_with_callbacks_depth_1():
    assert _reentrant_with_callbacks([1]) == {"outer": 0, "inner": 1}


def test_reentrant_with_callbacks_both_depths():
    assert _reentrant_with_callbacks([0, 1]) == {"outer": 1, "inner": 1}


def test_callback_propagates_errors():
    def callback():
        raise RuntimeError("blah")

    t = dualad.tensor([1.0, 2.0], requires_grad=True)
    t.register_hook(lambda *args: queue_callback(callback))
    loss = (t**2).sum()
    with pytest.raises(RuntimeError, match="blah"):
        loss.backward()


def test_queue_callback_outside_backward():
    with pytest.raises(RuntimeError, match="can only be installed during backward pass"):
        queue_callback(lambda: None)


def test_execution_engine_queue_callback():
    called = []
    t = dualad.tensor([1.0], requires_grad=True)
    t.register_hook(lambda g: autograd._execution_engine.queue_callback(lambda: called.append(1)))
    (t * 2).sum().backward()
    assert called == [1]
    assert autograd._execution_engine._current_graph_task_id() == -1


def test_callbacks_are_per_thread():
    # a callback queued by one thread's pass never runs at the end of another thread's pass
    results = {}
    barrier = threading.Barrier(2)

    def work(name):
        ran = []
        x = dualad.tensor([1.0], requires_grad=True)
        y = x * 2

        def hook(grad):
            queue_callback(lambda: ran.append(name))
            barrier.wait(timeout=10)

        y.register_hook(hook)
        y.sum().backward()
        results[name] = ran

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"a": ["a"], "b": ["b"]}


# ------------------------------------------------------------------------- misc engine


def test_warning_in_backward():
    a = dualad.zeros((), requires_grad=True)
    b = a * 2

    def hook(grad):
        warnings.warn("Warn from backward", UserWarning, stacklevel=1)

    b.register_hook(hook)
    with pytest.warns(UserWarning, match="Warn from backward"):
        b.backward()


def test_hook_closure_cycle():
    # hook -> closure -> grad_fn_b -> hook: the graph still works after gc, and the objects the
    # closure holds live exactly as long as the graph does
    import gc
    import weakref

    class Test:
        pass

    count = [0]

    def scope():
        a = dualad.tensor(1.0, requires_grad=True)
        b = a.clone()
        grad_fn_b = b.grad_fn
        obj = Test()

        def hook(*args):
            grad_fn_b  # noqa: B018  (the closure holds the node: a cycle through its hooks)
            obj  # noqa: B018
            count[0] += 1

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
        assert ref() is None
    finally:
        gc.enable()


# ------------------------------------------------------------------------- seeds' Function forms


def test_callback_adds_callback_function():
    called = [0]

    def callback_final():
        called[0] += 1

    def callback_adds_callback():
        called[0] += 1
        autograd._execution_engine.queue_callback(callback_final)

    class MyFunc(autograd.Function):
        @staticmethod
        def forward(ctx, input):
            return input

        @staticmethod
        @autograd.once_differentiable
        def backward(ctx, grad):
            autograd._execution_engine.queue_callback(callback_adds_callback)
            return grad

    a = dualad.rand(3, 3, requires_grad=True)
    b = MyFunc.apply(a)
    b.sum().backward()
    assert called[0] == 2


@pytest.mark.parametrize(
    "depths, expected",
    [
        ([0], {"outer": 1, "inner": 0}),
        ([1], {"outer": 0, "inner": 1}),
        ([0, 1], {"outer": 1, "inner": 1}),
    ],
)
def test_reentrant_with_callbacks_function(depths, expected):
    counter = {"inner": 0, "outer": 0}

    def inc_inner_counter():
        counter["inner"] += 1

    def inc_outer_counter():
        counter["outer"] += 1

    class MyFunc(autograd.Function):
        @staticmethod
        def forward(ctx, input):
            return input

        @staticmethod
        @autograd.once_differentiable
        def backward(ctx, input):
            if 1 in depths:
                queue_callback(inc_inner_counter)
            return input

    class MyReentrantFunc(autograd.Function):
        @staticmethod
        def forward(ctx, input):
            return input

        @staticmethod
        @autograd.once_differentiable
        def backward(ctx, input):
            if 0 in depths:
                queue_callback(inc_outer_counter)
            tmp_inp = input.detach().requires_grad_()
            with dualad.enable_grad():
                tmp_out = (MyFunc.apply(tmp_inp)).sum()
            tmp_out.backward()
            return input

    t1 = dualad.rand(3, 3, requires_grad=True)
    t2 = MyReentrantFunc.apply(t1)
    t3 = t2.sum()
    autograd.backward([t3])
    assert counter == expected
