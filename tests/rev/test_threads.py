"""Backward from several Python threads, ported from PyTorch's TestMultithreadAutograd.

Spec: spec/reverse.md §13 (THR-1..4), MODE-8.
"""

import threading

import numpy as np
import pytest

import dualad


def value(t):
    return t.detach().numpy()


class PropagatingThread(threading.Thread):
    """A thread whose exception is re-raised by join()."""

    def run(self):
        self.exception = None
        self.ret = None
        try:
            self.ret = self._target(*self._args, **self._kwargs)
        except BaseException as e:
            self.exception = e

    def join(self, timeout=None):
        super().join(timeout)
        if self.exception:
            raise self.exception from self.exception
        return self.ret


def run_in_threads(fn, args=(), num_threads=10, pass_idx=False):
    threads = []
    for idx in range(num_threads):
        t = PropagatingThread(target=fn, args=((idx, *args) if pass_idx else args))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


def test_multithreaded_exception_propagation():
    def fn():
        raise AssertionError("from a thread")

    with pytest.raises(AssertionError):
        run_in_threads(fn)


def test_simple_backward():
    def train_fn():
        x = dualad.ones(5, 5, requires_grad=True)
        y = (x + 3) * (x + 4) * 0.5
        y.sum().backward()
        np.testing.assert_allclose(value(x.grad), value(x) + 3.5)

    run_in_threads(train_fn)


def test_simple_backward_same_input():
    def train_fn_backward(x):
        y = (x + 3) * (x + 4) * 0.5
        y.sum().backward()

    x = dualad.ones(5, 5, requires_grad=True)
    run_in_threads(train_fn_backward, (x,))
    np.testing.assert_allclose(value(x.grad), 10 * (value(x) + 3.5))

    def train_fn_grad(x):
        y = (x + 3) * (x + 4) * 0.5
        grads = dualad.autograd.grad(y.sum(), x)
        assert len(grads) == 1
        np.testing.assert_allclose(value(grads[0]), value(x) + 3.5)

    run_in_threads(train_fn_grad, (x,))
    # grad() does not accumulate into .grad
    np.testing.assert_allclose(value(x.grad), 10 * (value(x) + 3.5))


def test_many_threads_accumulate_atomically():
    x = dualad.ones(64, requires_grad=True)

    def train_fn():
        for _ in range(20):
            (x * 2).sum().backward()

    run_in_threads(train_fn, num_threads=8)
    np.testing.assert_allclose(value(x.grad), 8 * 20 * 2 * np.ones(64))


def test_python_thread_in_middle():
    success_vs_raises = [0, 0]
    lock = threading.Lock()

    def train_fn_no_retain_graph(x):
        y = x + x**2
        try:
            y.sum().backward()
            with lock:
                success_vs_raises[0] += 1
        except RuntimeError as error:
            with lock:
                success_vs_raises[1] += 1
            assert "Specify retain_graph=True" in str(error)

    x_no_retain = dualad.ones(5, 5, requires_grad=True)
    y_no_retain = x_no_retain + x_no_retain**2
    run_in_threads(train_fn_no_retain_graph, (y_no_retain,), num_threads=5)
    assert success_vs_raises[0] >= 1
    assert sum(success_vs_raises) == 5

    def train_fn_retain_graph(x):
        y = x + x**2
        y.sum().backward(retain_graph=True)

    x_retain = dualad.ones(5, 5, requires_grad=True)
    y_retain = x_retain + x_retain**2
    run_in_threads(train_fn_retain_graph, (y_retain,), num_threads=5)
    xr = value(x_retain)
    np.testing.assert_allclose(value(x_retain.grad), 5 * (4 * xr**3 + 6 * xr**2 + 4 * xr + 1))


def test_grad_mode_not_inherited_by_threads():
    seen = []

    def fn():
        seen.append(dualad.is_grad_enabled())
        x = dualad.ones(2, requires_grad=True)
        seen.append((x * 2).requires_grad)

    with dualad.no_grad():
        run_in_threads(fn, num_threads=3)
    assert seen == [True, True] * 3


def test_create_graph_in_threads():
    def fn(idx):
        x = dualad.tensor([1.0 + idx, 2.0], requires_grad=True)
        (g,) = dualad.autograd.grad((x**3).sum(), x, create_graph=True)
        (h,) = dualad.autograd.grad(g.sum(), x)
        np.testing.assert_allclose(value(h), 6 * value(x))

    run_in_threads(fn, num_threads=6, pass_idx=True)
