"""Graph inspection and lifetime, ported from PyTorch's test_autograd.py.

Spec: spec/reverse.md §4 (GRAPH-*), §12 (ENG-2, ENG-8). Each test names the seed test it ports.
"""

import gc
import weakref
from functools import partial

import numpy as np
import pytest

import dualad
from dualad.autograd import graph


def value(t):
    return t.detach().numpy()


def assert_equal(actual, expected):
    actual = value(actual) if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    expected = value(expected) if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    np.testing.assert_allclose(actual, expected)


def test_next_functions():
    x = dualad.randn(5, 5, requires_grad=True)
    y = dualad.randn(5, 5, requires_grad=True)

    a = x + y
    assert a.grad_fn is not None
    next_functions = a.grad_fn.next_functions
    assert len(next_functions) == 2
    assert next_functions[0][0].name() == "AccumulateGrad"
    assert next_functions[0][1] == 0
    assert next_functions[1][0].name() == "AccumulateGrad"
    assert next_functions[1][1] == 0
    assert next_functions[0][0].variable is x
    assert next_functions[1][0].variable is y

    b = a + 5
    next_functions = b.grad_fn.next_functions
    assert len(next_functions) == 2
    assert next_functions[0][0] is a.grad_fn
    assert next_functions[1][0] is None


def test_next_functions_non_requiring_input_and_output_nr():
    x = dualad.randn(4, 2, requires_grad=True)
    c = dualad.randn(2, 2)
    a, b = x.chunk(2)
    assert (a.output_nr, b.output_nr) == (0, 1)
    assert a.grad_fn is b.grad_fn
    out = b * c
    assert out.grad_fn.next_functions == ((a.grad_fn, 1), (None, 0))


def test_node_names():
    x = dualad.randn(3, requires_grad=True)
    assert (x * 2).grad_fn.name() == "MulBackward0"
    assert (x**2).grad_fn.name() == "PowBackward0"
    assert dualad.sin(x).grad_fn.name() == "SinBackward0"
    assert x.clone().grad_fn.name() == "CloneBackward0"
    assert dualad.exp(x).grad_fn.name() == "ExpBackward0"
    assert x.sum().grad_fn.name() == "SumBackward0"
    node = (x * 2).grad_fn
    assert type(node).__name__ == node.name()
    acc = node.next_functions[0][0]
    assert acc.name() == "AccumulateGrad"
    assert type(acc).__name__ == "AccumulateGrad"


def test_nodes_are_graph_nodes():
    # test_autograd_node_isinstance (built-in parts)
    x = dualad.randn(3, requires_grad=True)
    y = x * 2
    assert isinstance(y.grad_fn, graph.Node)
    assert isinstance(y.grad_fn.next_functions[0][0], graph.Node)


def test_accumulate_grad_node_is_cached_per_leaf():
    x = dualad.randn(3, requires_grad=True)
    acc1 = x.clone().grad_fn.next_functions[0][0]
    acc2 = (x * 2).grad_fn.next_functions[0][0]
    acc3 = x.view_as(x).grad_fn.next_functions[0][0] if hasattr(x, "view_as") else acc2
    assert acc1 is acc2 is acc3
    assert graph.get_gradient_edge(x).node is acc1
    other = dualad.randn(3, requires_grad=True)
    assert (other * 2).grad_fn.next_functions[0][0] is not acc1


def test_accumulate_grad_node_is_callable_and_accumulates():
    x = dualad.randn(3, requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    acc(dualad.ones(3))
    assert_equal(x.grad, np.ones(3))
    acc(dualad.ones(3))
    assert_equal(x.grad, 2 * np.ones(3))


def test_grad_fn_badcalls():
    error_regex = "expected .* arguments, got .* instead"
    x = dualad.ones(1, requires_grad=True)
    y = x**2
    with pytest.raises(TypeError, match=error_regex):
        y.grad_fn(x.detach(), x.detach())  # too many
    with pytest.raises(TypeError, match=error_regex):
        y.grad_fn()  # too few
    y.grad_fn(x.detach())  # works


def test_grad_fn_call_values():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    y = dualad.tensor([3.0, 4.0], requires_grad=True)
    node = (x * y).grad_fn
    gx, gy = node(dualad.ones(2))
    assert_equal(gx, [3.0, 4.0])
    assert_equal(gy, [1.0, 2.0])
    # one result per next_functions entry; a single edge gives a bare tensor
    g = x.sin().grad_fn(dualad.ones(2))
    assert_equal(g, np.cos([1.0, 2.0]))
    node2 = (x**2).grad_fn
    results = node2(dualad.ones(2))
    if len(node2.next_functions) == 1:
        results = (results,)
    assert_equal(results[0], [2.0, 4.0])
    # an undefined (None) gradient in gives undefined gradients out
    assert x.sin().grad_fn(None) is None
    assert node(None) == (None, None)
    # calling a node does not touch .grad
    assert x.grad is None and y.grad is None


def test_grad_fn_call_multi_output_node_with_none():
    # seed 000 test_undefined_tensor_lists: a missing output gradient counts as zero
    x = dualad.randn(4, 2, requires_grad=True)
    a, _ = x.chunk(2)
    g = a.grad_fn(dualad.ones(2, 2), None)
    assert_equal(g, np.concatenate([np.ones((2, 2)), np.zeros((2, 2))]))


def test_node_metadata():
    x = dualad.randn(3, requires_grad=True)
    y = x * 2
    assert y.grad_fn.metadata == {}
    y.grad_fn.metadata["key"] = "value"
    assert y.grad_fn.metadata["key"] == "value"
    assert (x * 3).grad_fn.metadata == {}


def test_set_sequence_nr():
    x = dualad.randn(10, dtype=dualad.float32, requires_grad=True)
    y = dualad.randn(10, dtype=dualad.float32, requires_grad=True)
    z = dualad.randn(10, dtype=dualad.float32, requires_grad=True)
    a = x + y
    b = y + z
    c = a + b
    assert a.grad_fn is not None and b.grad_fn is not None and c.grad_fn is not None

    a.grad_fn._set_sequence_nr(100)
    b.grad_fn._set_sequence_nr(99)
    c.grad_fn._set_sequence_nr(98)
    assert a.grad_fn._sequence_nr() == 100
    assert b.grad_fn._sequence_nr() == 99
    assert c.grad_fn._sequence_nr() == 98

    def log_grad_order(grad, name, order):
        order.append(name)
        return grad

    order = []
    a.register_hook(partial(log_grad_order, name="a", order=order))
    b.register_hook(partial(log_grad_order, name="b", order=order))
    c.register_hook(partial(log_grad_order, name="c", order=order))
    c.sum().backward()
    assert order == ["c", "a", "b"]
    assert_equal(x.grad, np.ones(10))
    assert_equal(y.grad, 2 * np.ones(10))
    assert_equal(z.grad, np.ones(10))


def test_default_order_is_reverse_creation():
    x = dualad.randn(3, requires_grad=True)
    a = x * 2
    b = x * 3
    order = []
    a.register_hook(lambda g: order.append("a"))
    b.register_hook(lambda g: order.append("b"))
    (a + b).sum().backward()
    assert order == ["b", "a"]
    assert a.grad_fn._sequence_nr() < b.grad_fn._sequence_nr()


# ------------------------------------------------------------------------- lifetime


class _GcDisabled:
    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()


def test_graph_freed_when_output_dies():
    with _GcDisabled():
        x = dualad.randn(3, requires_grad=True)
        y = (x * x).sin().exp() * x
        refs = [weakref.ref(y.grad_fn), weakref.ref(y.grad_fn.next_functions[0][0])]
        saved = weakref.ref(y.grad_fn.next_functions[0][0].next_functions[0][0])
        del y
        assert all(r() is None for r in refs)
        assert saved() is None


def test_variable_traverse():
    # a graph whose views sit in an unreferenced Python cycle survives a collection of that
    # cycle: backward through the output still reaches the leaf
    def get_out_and_unrefed_cycle():
        inp = dualad.randn(10, requires_grad=True)
        tmp = inp.reshape(10, 1)
        out = tmp.reshape(10)
        my_list = [tmp]
        my_list.append(my_list)
        return inp, out

    inp, out = get_out_and_unrefed_cycle()
    gc.collect()
    g = dualad.randn(10)
    out.backward(g)
    np.testing.assert_allclose(inp.grad.numpy(), g.numpy())


def test_graph_freed_after_backward_without_cycles():
    with _GcDisabled():
        x = dualad.randn(3, requires_grad=True)
        h = x * x
        h.retain_grad()
        out = (h.sin() * h).sum()
        node_ref = weakref.ref(out.grad_fn)
        h_ref = weakref.ref(h)
        out.backward()
        assert h.grad is not None
        del out, h
        assert node_ref() is None
        assert h_ref() is None


def test_graph_freed_with_hooks_and_create_graph():
    with _GcDisabled():
        x = dualad.randn(3, requires_grad=True)
        y = x * x
        y.register_hook(lambda g: g * 2)
        (g,) = dualad.autograd.grad(y.sum(), x, create_graph=True)
        node_ref = weakref.ref(y.grad_fn)
        g_ref = weakref.ref(g.grad_fn)
        del y
        assert node_ref() is None  # g's graph uses y's saved input x, not y's node
        del g
        assert g_ref() is None
        assert node_ref() is None


def test_leaf_accumulator_freed_with_graph():
    with _GcDisabled():
        x = dualad.randn(3, requires_grad=True)
        y = x * 2
        acc_ref = weakref.ref(y.grad_fn.next_functions[0][0])
        del y
        assert acc_ref() is None  # the leaf keeps only a weak reference to its AccumulateGrad
        x_ref = weakref.ref(x)
        y = x * 2
        del x
        assert x_ref() is not None  # the graph keeps the leaf alive
        del y
        assert x_ref() is None


def test_retain_grad_cycle():
    with _GcDisabled():
        x = dualad.ones(5, 5, requires_grad=True)

        def run_test():
            y = x * 2
            y.retain_grad()
            return y / 2, weakref.ref(y)

        z, ref = run_test()
        assert ref() is None
        z.sum().backward()
        assert_equal(x.grad, np.ones((5, 5)))


def test_saved_tensors_released_after_backward():
    with _GcDisabled():
        x = dualad.randn(3, requires_grad=True)
        a = x * 2
        b = a * a  # saves a
        a_ref = weakref.ref(a)
        del a
        assert a_ref() is not None
        b.sum().backward()
        assert a_ref() is None
        with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
            b.sum().backward()
