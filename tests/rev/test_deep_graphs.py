"""Deep graphs build, run backward and are freed without RecursionError or a crash.

Ports test_free_deep_graph / test_free_deep_graph_complicated (spec/reverse.md ENG-1, ENG-8),
plus a 1,000,000-op chain. CPython frees long chains of objects through its "trashcan" (deferred
deallocation), so dropping the last reference to a deep graph does not overflow the C stack; these
tests keep that true for dualad's Tensor/Node layout. Garbage collection is disabled while the
graphs live, which also proves that they hold no reference cycles (they are freed by reference
counting alone).
"""

import gc
import sys
import weakref

import numpy as np
import pytest

import dualad
from dualad.autograd import grad


class gc_disabled:
    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


def _chain(x, depth, step):
    y = x
    for _ in range(depth):
        y = step(y)
    return y


def test_free_deep_graph():
    def scope():
        depth = 150_000
        x = dualad.randn(1, requires_grad=True)
        y = x.clone()
        for _ in range(depth):
            y = y + y * 0.000001
        return weakref.ref(y.grad_fn)

    with gc_disabled():
        ref = scope()
        assert ref() is None


def test_free_deep_graph_complicated():
    # The seed's skip branch never fires (prev_tensors has at most one element), so this is a deep
    # chain of in-place updates of a non-leaf; a real skip connection is tested below.
    def scope():
        depth = 100_000
        x = dualad.randn(1, requires_grad=True)
        y = x.clone()
        prev_values = [None, None]
        for _ in range(depth):
            prev_values.append(y)
            prev_values.pop(0)
            y += y * 0.000001
        return weakref.ref(y.grad_fn)

    with gc_disabled():
        ref = scope()
        assert ref() is None


def test_deep_graph_with_skip_connections_backward():
    depth = 50_000
    x = dualad.tensor([1.0], requires_grad=True)
    with gc_disabled():
        y = x.clone()
        older = y
        for i in range(depth):
            new = y * 1.00001 + older * 1e-7 if i % 2 else y * 1.00001
            older, y = y, new
        ref = weakref.ref(y.grad_fn)
        y.backward()
        assert np.isfinite(x.grad.item()) and x.grad.item() > 1.0
        del y, older, new
        assert ref() is None


def test_deep_chain_backward_value():
    depth = 150_000
    x = dualad.tensor(1.0, requires_grad=True)
    with gc_disabled():
        y = _chain(x, depth, lambda t: t * 1.0000001)
        ref = weakref.ref(y.grad_fn)
        y.backward(retain_graph=True)
        np.testing.assert_allclose(x.grad.item(), 1.0000001**depth, rtol=1e-9)
        (g,) = grad(y, x)
        np.testing.assert_allclose(g.item(), 1.0000001**depth, rtol=1e-9)
        del y
        assert ref() is None


def test_deep_chain_with_saved_tensors_backward_and_free():
    depth = 150_000
    x = dualad.tensor([1.0], requires_grad=True)
    with gc_disabled():
        y = _chain(x, depth, lambda t: t + t * 1e-6)
        ref = weakref.ref(y.grad_fn)
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), [(1 + 1e-6) ** depth], rtol=1e-9)
        with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
            y.backward()
        del y
        assert ref() is None


def test_deep_chain_create_graph():
    depth = 20_000
    x = dualad.tensor(0.5, requires_grad=True)
    with gc_disabled():
        y = _chain(x, depth, lambda t: t * 1.00001)
        y = y * y
        (g,) = grad(y, x, create_graph=True)
        (h,) = grad(g, x)
        c = 1.00001**depth
        np.testing.assert_allclose(g.item(), 2 * c * c * 0.5, rtol=1e-9)
        np.testing.assert_allclose(h.item(), 2 * c * c, rtol=1e-9)
        g_ref = weakref.ref(g.grad_fn)
        del g, y
        assert g_ref() is None


def test_deep_graph_with_inputs_restriction():
    depth = 100_000
    x = dualad.tensor([2.0], requires_grad=True)
    with gc_disabled():
        mid = _chain(x, depth, lambda t: t * 1.0)
        y = _chain(mid, depth, lambda t: t * 1.0) * 3
        (g,) = grad(y, mid, retain_graph=True)
        np.testing.assert_allclose(g.numpy(), [3.0])
        y.backward(inputs=[x])
        np.testing.assert_allclose(x.grad.numpy(), [3.0])


def test_deep_graph_no_recursion_limit_needed():
    # the engine never recurses: it works with a tiny recursion limit
    depth = 20_000
    x = dualad.tensor(1.0, requires_grad=True)
    y = _chain(x, depth, lambda t: t * 1.0)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        y.backward()
    finally:
        sys.setrecursionlimit(limit)
    assert x.grad.item() == 1.0


def test_million_op_chain_builds_runs_and_frees():
    depth = 1_000_000
    x = dualad.tensor(1.0, requires_grad=True)
    with gc_disabled():
        y = x
        for _ in range(depth):
            y = y * 1.0000001
        node_ref = weakref.ref(y.grad_fn)
        first = weakref.ref(y.grad_fn)
        y.backward()
        np.testing.assert_allclose(x.grad.item(), 1.0000001**depth, rtol=1e-7)
        del y
        assert node_ref() is None and first() is None


def test_million_op_chain_freed_without_backward():
    depth = 1_000_000
    x = dualad.tensor(1.0, requires_grad=True)
    with gc_disabled():
        y = x
        for _ in range(depth):
            y = y * 1.0000001
        ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None
