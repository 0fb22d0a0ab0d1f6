"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode), ported from PyTorch's
test_autograd.py (TestAutograd, TestAutogradInferenceMode).

Spec: spec/reverse.md §6 (MODE-*), §14 (INF-1). Each test names the seed test it ports.
"""

import threading
import warnings
from itertools import product

import numpy as np
import pytest

import dualad
from dualad.autograd import grad


def test_no_grad():
    x = dualad.ones(5, 5, requires_grad=True)
    y = dualad.ones(5, 5) * 4
    with dualad.no_grad():
        w = x + y

    def adder(x, y):
        return x + y

    adders = [dualad.no_grad()(adder), dualad.no_grad(adder)]
    for adder in adders:
        z = adder(x, y)
        assert not w.requires_grad
        with pytest.raises(RuntimeError, match="does not require grad"):
            w.backward(dualad.ones(5, 5))
        assert w.grad_fn is None
        assert not z.requires_grad
        with pytest.raises(RuntimeError, match="does not require grad"):
            z.backward(dualad.ones(5, 5))
        assert z.grad_fn is None

    with dualad.no_grad():
        assert not dualad.is_grad_enabled()
        w = adder(x, y)
        assert not dualad.is_grad_enabled()
    assert dualad.is_grad_enabled()


def test_no_grad_at_autograd_namespace():
    assert dualad.autograd.no_grad is dualad.no_grad
    assert dualad.autograd.is_grad_enabled is dualad.is_grad_enabled


def test_no_grad_restores_on_exception():
    with pytest.raises(ValueError), dualad.no_grad():
        raise ValueError
    assert dualad.is_grad_enabled()

    @dualad.no_grad()
    def fails():
        raise ValueError

    with pytest.raises(ValueError):
        fails()
    assert dualad.is_grad_enabled()


def test_enable_grad_decorator_no_paren():
    x = dualad.ones(1, requires_grad=True)

    @dualad.enable_grad
    def doubler(x):
        return x * 2

    with dualad.no_grad():
        z = doubler(x)
    assert z.requires_grad


def test_no_grad_decorator_no_paren_keeps_metadata():
    @dualad.no_grad
    def documented(x):
        """doc"""
        return x * 2

    assert documented.__name__ == "documented"
    assert documented.__doc__ == "doc"
    assert not documented(dualad.ones(1, requires_grad=True)).requires_grad


def test_set_grad_enabled():
    x = dualad.tensor([1.0], requires_grad=True)
    with dualad.set_grad_enabled(False):
        y = x * 2
    assert not y.requires_grad
    with dualad.set_grad_enabled(True):
        y = x * 2
    assert y.requires_grad
    with dualad.set_grad_enabled(False):
        dualad.set_grad_enabled(True)
        y = x * 2
    assert y.requires_grad
    assert dualad.is_grad_enabled()


def test_set_grad_enabled_as_function():
    try:
        dualad.set_grad_enabled(False)
        assert not dualad.is_grad_enabled()
        dualad.set_grad_enabled(True)
        assert dualad.is_grad_enabled()
    finally:
        dualad.set_grad_enabled(True)


@pytest.mark.parametrize("decorator", [True, False])
def test_set_grad_enabled_wraps(decorator):
    with dualad.enable_grad():
        assert dualad.is_grad_enabled()
        if decorator:

            @dualad.set_grad_enabled(False)
            def inner_func(x):
                return x.sin()

        else:

            def inner_func(x):
                return x.sin()

            obj = dualad.set_grad_enabled(False)
            assert not dualad.is_grad_enabled()
            inner_func = obj(inner_func)
            assert dualad.is_grad_enabled()

        assert dualad.is_grad_enabled()
        x = dualad.zeros(1, requires_grad=True)
        assert not inner_func(x).requires_grad
        assert dualad.is_grad_enabled()


def test_grad_mode_class_decoration():
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):

        @dualad.no_grad()
        class Foo:
            def __init__(self):
                assert not dualad.is_grad_enabled()

            def foo(self):
                assert dualad.is_grad_enabled()

        foo = Foo()
        foo.foo()

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")

        @dualad.no_grad()
        def foo():
            assert not dualad.is_grad_enabled()

        foo()

        class Foo2:
            @dualad.no_grad()
            def __init__(self):
                assert not dualad.is_grad_enabled()

            @dualad.no_grad()
            def foo(self):
                assert not dualad.is_grad_enabled()

        foo2 = Foo2()
        foo2.foo()
    assert len(w) == 0


def test_set_grad_generator_functions():
    @dualad.no_grad()
    def gen_no_grad():
        for i in range(10):
            assert not dualad.is_grad_enabled()
            yield i

    with dualad.enable_grad():
        for _ in gen_no_grad():
            assert dualad.is_grad_enabled()

    @dualad.enable_grad()
    def gen_enable_grad():
        for i in range(10):
            assert dualad.is_grad_enabled()
            yield i

    with dualad.no_grad():
        for _ in gen_enable_grad():
            assert not dualad.is_grad_enabled()


def test_set_grad_generator_functions_recursive():
    @dualad.enable_grad()
    def enable_grad_decorator_recursive(depth):
        assert dualad.is_grad_enabled()
        if depth > 0:
            no_grad_decorator_recursive(depth - 1)
            assert dualad.is_grad_enabled()

    @dualad.no_grad()
    def no_grad_decorator_recursive(depth):
        assert not dualad.is_grad_enabled()
        if depth > 0:
            enable_grad_decorator_recursive(depth - 1)
            assert not dualad.is_grad_enabled()

    def enable_grad_context_manager_recursive(depth):
        with dualad.enable_grad():
            assert dualad.is_grad_enabled()
            if depth > 0:
                no_grad_context_manager_recursive(depth - 1)
                assert dualad.is_grad_enabled()

    def no_grad_context_manager_recursive(depth):
        with dualad.no_grad():
            assert not dualad.is_grad_enabled()
            if depth > 0:
                enable_grad_context_manager_recursive(depth - 1)
                assert not dualad.is_grad_enabled()

    with dualad.enable_grad():
        assert dualad.is_grad_enabled()
        enable_grad_decorator_recursive(10)
        assert dualad.is_grad_enabled()
        enable_grad_context_manager_recursive(10)
        assert dualad.is_grad_enabled()

    with dualad.no_grad():
        assert not dualad.is_grad_enabled()
        enable_grad_decorator_recursive(10)
        assert not dualad.is_grad_enabled()
        enable_grad_context_manager_recursive(10)
        assert not dualad.is_grad_enabled()


def test_set_grad_coroutines():
    @dualad.no_grad()
    def coro_no_grad(n=10):
        assert not dualad.is_grad_enabled()
        for i in range(n):
            assert not dualad.is_grad_enabled()
            r = yield i
            assert not dualad.is_grad_enabled()
            assert i == r
        assert not dualad.is_grad_enabled()

    @dualad.enable_grad()
    def coro_enable_grad(n=10):
        assert dualad.is_grad_enabled()
        for i in range(n):
            assert dualad.is_grad_enabled()
            r = yield i
            assert dualad.is_grad_enabled()
            assert i == r
        assert dualad.is_grad_enabled()

    with dualad.enable_grad():
        assert dualad.is_grad_enabled()
        coro, r = coro_no_grad(), None
        try:
            while True:
                assert dualad.is_grad_enabled()
                r = coro.send(r)
                assert dualad.is_grad_enabled()
        except StopIteration:
            pass

    with dualad.no_grad():
        assert not dualad.is_grad_enabled()
        coro, r = coro_enable_grad(), None
        try:
            while True:
                assert not dualad.is_grad_enabled()
                r = coro.send(r)
                assert not dualad.is_grad_enabled()
        except StopIteration:
            pass


def test_set_grad_coroutines_return_value():
    @dualad.no_grad()
    def coro():
        yield 1
        return "done"

    def outer():
        result = yield from coro()
        return result

    gen = outer()
    assert next(gen) == 1
    with pytest.raises(StopIteration) as info:
        next(gen)
    assert info.value.value == "done"


# (mode decorating a coroutine, grad enabled inside it, the caller's opposite mode)
_COROUTINE_MODES = (
    (dualad.no_grad, False, dualad.enable_grad),
    (dualad.enable_grad, True, dualad.no_grad),
)


def test_set_grad_coroutines_benign_exceptions():
    class RecoverableException(Exception):
        pass

    for mode, enabled, caller_mode in _COROUTINE_MODES:

        @mode()
        def coro(n=10, enabled=enabled):
            has_raised = False
            for i in range(n):
                try:
                    assert dualad.is_grad_enabled() == enabled
                    yield (-i if has_raised else i)
                except RecoverableException:
                    assert dualad.is_grad_enabled() == enabled
                    has_raised = True

        with caller_mode():
            gen = coro()
            assert next(gen) == 0
            try:
                while True:
                    r = gen.throw(RecoverableException)
                    assert r < 0
            except StopIteration:
                pass


def test_set_grad_coroutines_critical_exceptions():
    class UnrecoverableException(Exception):
        pass

    class SecondaryException(Exception):
        pass

    for mode, enabled, caller_mode in _COROUTINE_MODES:

        @mode()
        def coro(n=10, enabled=enabled):
            for i in range(n):
                try:
                    assert dualad.is_grad_enabled() == enabled
                    yield i
                except UnrecoverableException:
                    assert dualad.is_grad_enabled() == enabled
                    raise SecondaryException from None

        with caller_mode():
            gen = coro()
            assert next(gen) == 0
            with pytest.raises(SecondaryException):
                gen.throw(UnrecoverableException)
            assert dualad.is_grad_enabled() == (not enabled)


def test_set_grad_coroutines_exit():
    for mode, enabled, caller_mode in _COROUTINE_MODES:

        @mode()
        def coro(state, enabled=enabled):
            for i in range(10):
                try:
                    assert dualad.is_grad_enabled() == enabled
                    yield i
                except GeneratorExit:
                    assert dualad.is_grad_enabled() == enabled
                    state.add("GeneratorExit")
                    raise

        state = set()
        with caller_mode():
            gen = coro(state)
            for _ in range(5):
                next(gen)
            gen.close()
        assert "GeneratorExit" in state


def test_grad_mode_is_thread_local():
    results = {}

    def worker():
        results["initial"] = dualad.is_grad_enabled()
        with dualad.no_grad():
            results["inside"] = dualad.is_grad_enabled()
            event_set.set()
            event_back.wait(5)

    event_set = threading.Event()
    event_back = threading.Event()
    with dualad.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        event_set.wait(5)
        assert not dualad.is_grad_enabled()
    # the worker is still inside its no_grad block: the main thread is not affected
    assert dualad.is_grad_enabled()
    x = dualad.ones(1, requires_grad=True)
    assert (x * 2).requires_grad
    event_back.set()
    thread.join()
    assert results == {"initial": True, "inside": False}


# ------------------------------------------------------------------------- backward and modes


def test_grad_mode_restored_reentrant():
    # The seed uses a custom Function whose backward calls autograd.grad under enable_grad; a
    # tensor hook (which runs inside the backward pass) does the same here.
    seen = []

    def hook(go):
        original = dualad.is_grad_enabled()
        with dualad.enable_grad():
            assert dualad.is_grad_enabled()
            foo = dualad.rand(*go.shape, requires_grad=True)
            (g,) = grad(foo**3, foo, grad_outputs=go)
            assert dualad.is_grad_enabled()
            np.testing.assert_allclose(
                g.numpy(), 3 * foo.detach().numpy() ** 2 * go.detach().numpy()
            )
        assert dualad.is_grad_enabled() == original
        seen.append(original)
        return None

    inp = dualad.rand(3, requires_grad=True)
    y = inp.clone()
    y.register_hook(hook)
    y.sum().backward()
    y = inp.clone()
    y.register_hook(hook)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.sum().backward(create_graph=True)
    assert seen == [False, True]
    assert dualad.is_grad_enabled()


def test_grad_mode_restored_after_failing_backward():
    x = dualad.randn(3, requires_grad=True)
    y = x * 2

    def hook(g):
        raise ValueError("boom")

    y.register_hook(hook)
    total = y.sum()
    with dualad.no_grad():  # the graph was built before; backward is allowed in no_grad
        with pytest.raises(ValueError, match="boom"):
            total.backward()
        assert not dualad.is_grad_enabled()
    assert dualad.is_grad_enabled()


def test_backward_inside_no_grad_works():
    x = dualad.randn(3, requires_grad=True)
    y = (x * x).sum()
    z = (x * 3).sum()
    with dualad.no_grad():
        y.backward()
        (g,) = grad(z, x)
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())
    np.testing.assert_allclose(g.numpy(), 3 * np.ones(3))


# ------------------------------------------------------------------------- inference mode


def test_inference_mode_context_manager():
    assert not dualad.is_inference_mode_enabled()
    with dualad.inference_mode():
        assert dualad.is_inference_mode_enabled()
        assert not dualad.is_grad_enabled()
        with dualad.inference_mode(False):
            assert not dualad.is_inference_mode_enabled()
        assert dualad.is_inference_mode_enabled()
    assert not dualad.is_inference_mode_enabled()
    assert dualad.is_grad_enabled()


def test_inference_mode_decorator():
    for mode, use_kwarg in product((True, False, None), (True, False)):
        expected_mode = True if mode is None else mode

        def func(x, expected_mode=expected_mode):
            assert dualad.is_inference_mode_enabled() == expected_mode
            return x * x

        if mode is None:
            if use_kwarg:
                decorated = dualad.inference_mode(mode=func)
            else:
                decorated = dualad.inference_mode(func)
        elif use_kwarg:
            decorated = dualad.inference_mode(mode=mode)(func)
        else:
            decorated = dualad.inference_mode(mode)(func)

        for requires_grad in (True, False):
            c = dualad.ones(1, 2, 3, requires_grad=requires_grad)
            d = decorated(c)
            assert d.requires_grad == (requires_grad and not expected_mode)
        assert not dualad.is_inference_mode_enabled()


def test_inference_mode_tensor_creation():
    with dualad.inference_mode():
        c = dualad.ones(1, 2, 3)
        assert not c.requires_grad
        tmp = dualad.ones(1, 2, 3, requires_grad=True)
        assert tmp.requires_grad  # the factory flag is kept
        tmp = dualad.ones(1, 2, 3).requires_grad_(False)
        assert not tmp.requires_grad


def test_inference_mode_generator():
    @dualad.inference_mode()
    def gen():
        for i in range(3):
            assert dualad.is_inference_mode_enabled()
            yield i

    assert list(gen()) == [0, 1, 2]
    assert not dualad.is_inference_mode_enabled()


def test_set_multithreading_enabled_as_context_manager_and_function():
    autograd = dualad.autograd
    with autograd.set_multithreading_enabled(False):
        assert not autograd.is_multithreading_enabled()
    assert autograd.is_multithreading_enabled()

    with autograd.set_multithreading_enabled(True):
        assert autograd.is_multithreading_enabled()
    assert autograd.is_multithreading_enabled()

    with autograd.set_multithreading_enabled(False):
        autograd.set_multithreading_enabled(True)
        assert autograd.is_multithreading_enabled()
    assert autograd.is_multithreading_enabled()

    autograd.set_multithreading_enabled(False)
    assert not autograd.is_multithreading_enabled()
    autograd.set_multithreading_enabled(True)
    assert autograd.is_multithreading_enabled()
