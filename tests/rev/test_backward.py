"""backward() / autograd.grad() semantics, ported from PyTorch's test_autograd.py (TestAutograd).

Spec: spec/reverse.md §3 (BWD-*), §12 (ENG-3), §21. Each test names the seed test it ports.
"""

import warnings

import numpy as np
import pytest

import dualad
from dualad.autograd import backward, grad


def value(t):
    return t.detach().numpy()


def assert_equal(actual, expected, **kw):
    actual = value(actual) if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    expected = value(expected) if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    np.testing.assert_allclose(actual, expected, rtol=kw.get("rtol", 1e-7), atol=kw.get("atol", 0))


# ------------------------------------------------------------------------- basic backward


def test_backward():
    v = dualad.randn(5, 5, requires_grad=True)
    x = dualad.randn(5, 5, requires_grad=True)
    y = (dualad.rand(5, 5) + 0.1).requires_grad_(True)
    z = dualad.randn(5, 5, requires_grad=True)
    grad_output = dualad.randn(5, 5)

    v.backward(grad_output)
    assert_equal(v.grad, grad_output)

    a = x + (y * z) + 4 * z**2 * x / y
    a.backward(grad_output)
    with dualad.no_grad():
        x_grad = 4 * z.pow(2) / y + 1
        y_grad = z - 4 * x * z.pow(2) / y.pow(2)
        z_grad = 8 * x * z / y + y
        assert_equal(x.grad, x_grad * grad_output)
        assert_equal(y.grad, y_grad * grad_output)
        assert_equal(z.grad, z_grad * grad_output)


def test_multi_backward():
    x = dualad.randn(5, 5, requires_grad=True)
    y = dualad.randn(5, 5, requires_grad=True)
    q = dualad.randn(5, 5, requires_grad=True)
    a = dualad.randn(5, 5, requires_grad=True)
    b = dualad.randn(5, 5, requires_grad=True)

    q2 = q * 2
    z = x + y + q2
    c = a * b + q2
    grad_z = dualad.randn(5, 5)
    grad_c = dualad.randn(5, 5)
    backward([z, c], [grad_z, grad_c])

    assert_equal(x.grad, grad_z)
    assert_equal(y.grad, grad_z)
    assert_equal(a.grad, value(grad_c) * value(b))
    assert_equal(b.grad, value(grad_c) * value(a))
    assert_equal(q.grad, (value(grad_c) + value(grad_z)) * 2)


def test_multi_backward_no_grad():
    x = dualad.randn(5, 5, requires_grad=True)
    y = dualad.randn(5, 5, requires_grad=False)
    z = x + y
    q = y * 2
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        backward([z, q], [dualad.ones(5, 5), dualad.ones(5, 5)])


def test_backward_with_inputs():
    x = dualad.randn(2, 2, dtype=dualad.float64, requires_grad=True)
    y = dualad.randn(2, 2, dtype=dualad.float64, requires_grad=True)

    def fn():
        return x**2 + y * x + y**2

    gradient = dualad.ones(2, 2)
    x_grad_expected = 2 * value(x) + value(y)
    y_grad_expected = value(x) + 2 * value(y)

    @dualad.no_grad()
    def reset_grad():
        x.grad.zero_()
        y.grad.zero_()

    backward(fn(), gradient, inputs=[x, y])
    assert_equal(x.grad, x_grad_expected)
    assert_equal(y.grad, y_grad_expected)

    reset_grad()
    backward(fn(), gradient, inputs=[x])
    assert_equal(x.grad, x_grad_expected)
    assert_equal(y.grad, np.zeros((2, 2)))

    reset_grad()
    backward(fn(), gradient, inputs=[y])
    assert_equal(y.grad, y_grad_expected)
    assert_equal(x.grad, np.zeros((2, 2)))

    reset_grad()
    backward(fn(), gradient, inputs=y)
    assert_equal(y.grad, y_grad_expected)
    assert_equal(x.grad, np.zeros((2, 2)))

    reset_grad()
    with pytest.raises(RuntimeError, match="cannot be empty"):
        backward(fn(), gradient, inputs=[])


def test_backward_with_nonleaf_inputs():
    x = dualad.randn(2, 2, dtype=dualad.float64, requires_grad=True)
    x_nonleaf = x * 1
    y = dualad.randn(2, 2, dtype=dualad.float64, requires_grad=True)
    z = dualad.randn(2, 2, dtype=dualad.float64, requires_grad=True)

    out = x_nonleaf**2 + y * x_nonleaf + y**2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out.backward(
            dualad.ones(2, 2, dtype=dualad.float64), create_graph=True, inputs=[x, y, x_nonleaf]
        )
    assert_equal(y.grad, value(x) + 2 * value(y))
    assert_equal(x.grad, 2 * value(x) + value(y))
    assert_equal(x_nonleaf.grad, 2 * value(x_nonleaf) + value(y))
    # create_graph: the grads are differentiable
    assert x.grad.requires_grad and x_nonleaf.grad.requires_grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out.backward(dualad.ones(2, 2, dtype=dualad.float64), create_graph=True, inputs=[z])
    assert z.grad is None


def test_backward_with_nonleaf_inputs_does_not_touch_other_leaves():
    x = dualad.randn(3, requires_grad=True)
    h = x * 2
    out = (h * h).sum()
    out.backward(inputs=[h], retain_graph=True)
    assert x.grad is None
    assert_equal(h.grad, 2 * value(h))
    assert h.retains_grad  # PyTorch: backward(inputs=[nonleaf]) calls retain_grad() on it
    out2 = (h * 3).sum()
    out2.backward()
    assert_equal(h.grad, 2 * value(h) + 3)
    assert_equal(x.grad, 6 * np.ones(3))


def test_hook_counts_with_grad_and_inputs():
    # seed test_hook_edge_case_when_called_with_grad (spec HOOK-12): a -> b = a*2 -> c = b*2
    counts = {"tensor": 0, "pre": 0, "post": 0}

    def tensor_hook(g):
        counts["tensor"] += 1

    def pre_hook(grad_outputs):
        counts["pre"] += 1

    def post_hook(grad_inputs, grad_outputs):
        counts["post"] += 1

    a = dualad.rand(2, 3, requires_grad=True)
    b = a * 2
    c = b * 2
    a.register_hook(tensor_hook)
    b.register_hook(tensor_hook)
    acc = b.grad_fn.next_functions[0][0]
    acc.register_prehook(pre_hook)
    acc.register_hook(post_hook)
    b.grad_fn.register_prehook(pre_hook)
    b.grad_fn.register_hook(post_hook)
    ones = dualad.ones_like(c)

    def reset():
        counts.update(tensor=0, pre=0, post=0)

    grad(c, inputs=(b,), retain_graph=True, grad_outputs=ones)
    assert counts == {"tensor": 1, "pre": 0, "post": 0}
    reset()
    grad(c, inputs=(a, b), retain_graph=True, grad_outputs=ones)
    assert counts == {"tensor": 2, "pre": 1, "post": 1}
    reset()
    c.backward(ones, retain_graph=True)
    assert counts == {"tensor": 2, "pre": 2, "post": 2}
    reset()
    c.backward(ones, retain_graph=True, inputs=(a, b))
    assert counts == {"tensor": 2, "pre": 2, "post": 2}


def test_grad_does_not_run_hooks_of_other_leaves():
    x = dualad.randn(3, requires_grad=True)
    y = dualad.randn(3, requires_grad=True)
    called = []
    y.register_hook(lambda g: called.append("y"))
    x.register_hook(lambda g: called.append("x"))
    (gx,) = grad((x * y).sum(), x)
    assert_equal(gx, y)
    assert called == ["x"]
    (x * y).sum().backward(inputs=[x])
    assert called == ["x", "x"]
    assert y.grad is None


def test_dependent_backward():
    x = dualad.randn(10, requires_grad=True)
    y = x**2
    z = y**3
    go_y = dualad.randn(10)
    go_z = dualad.randn(10)
    backward([y, z], [go_y, go_z])
    xd = value(x)
    assert_equal(x.grad, 2 * xd * value(go_y) + 6 * xd**5 * value(go_z), rtol=1e-10)


def test_duplicate_backward_root():
    a = dualad.randn(5, 5, requires_grad=True)
    b = dualad.randn(5, 5, requires_grad=True)
    x = a * b
    grad_output = dualad.randn_like(x)
    backward([x, x], [grad_output, grad_output])
    assert_equal(a.grad, value(b) * value(grad_output) * 2)
    assert_equal(b.grad, value(a) * value(grad_output) * 2)


def test_backward_no_grad():
    a = dualad.randn(5, 5, requires_grad=True)
    b = a + 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        backward([b], [None])


def test_sharded_grad():
    leaves = [dualad.zeros(5, 5, requires_grad=True) for _ in range(10)]
    intermediates = [leaf * i + leaf * leaf for i, leaf in enumerate(leaves)]
    loss = sum(v * i for i, v in enumerate(intermediates)).sum()

    def group(items, size):
        return (items[i : i + size] for i in range(0, len(items), size))

    d_intermediates = [d_i for batch in group(intermediates, 2) for d_i in grad(loss, batch)]
    backward(intermediates, d_intermediates)
    for i, leaf in enumerate(leaves):
        assert_equal(leaf.grad, i * i * (1 + value(leaf)))


def test_backward_copy():
    # A gradient buffer feeding several consumers must not be corrupted by in-place summation.
    x = dualad.ones(5, 5, requires_grad=True)
    y = dualad.ones(5, 5, requires_grad=True)
    a = x + 2
    b = y + 2
    c = x + 2
    add1 = a + b
    add2 = add1 + c
    for _ in range(4):
        a = a * 2
        b = b * 2
        c = c * 2
    branch = a + b + c
    out = add2 + branch
    out.backward(dualad.ones(5, 5))
    assert_equal(x.grad, np.ones((5, 5)) * 34)
    assert_equal(y.grad, np.ones((5, 5)) * 17)


def test_isolated_node():
    x = dualad.randn(5, 5, requires_grad=True)
    y = dualad.randn(5, 5, requires_grad=True)
    a = x + y
    if hasattr(dualad, "argmax"):
        indices = dualad.argmax(a, 1, keepdim=True)
    else:
        indices = dualad.tensor(np.argmax(value(a), axis=1)[:, None])
    b = indices.tile((1, 5)).double() if hasattr(indices, "tile") else indices.double()
    assert not b.requires_grad
    o = (b + a).sum()
    o.backward()
    assert_equal(x.grad, np.ones((5, 5)))


# ------------------------------------------------------------------------- retain_graph


def _saving_graph():
    b = dualad.randn(3, requires_grad=True, dtype=dualad.float64)
    c = dualad.zeros(3, dtype=dualad.float64)
    c[[1, 2]] = b[[1, 1]]
    return b, c


def test_backward_twice_with_saved_values():
    b = dualad.randn(3, requires_grad=True, dtype=dualad.float64)
    c = b * b  # mul saves its inputs
    c.backward(dualad.tensor([1.0, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        c.backward(dualad.tensor([1.0, 1.0, 1.0]))


def test_backward_twice_with_saved_values_setitem():
    b, c = _saving_graph()
    c.backward(dualad.tensor([1.0, 1.0, 1.0]))
    assert_equal(b.grad, [0.0, 2.0, 0.0])
    try:
        c.backward(dualad.tensor([1.0, 1.0, 1.0]))
    except RuntimeError as error:  # dualad's indexing may save nothing: then the 2nd pass works
        assert "Specify retain_graph=True" in str(error)


def test_backward_twice_retained_graph_with_saved_values():
    b, c = _saving_graph()
    c.backward(dualad.tensor([1.0, 1.0, 1.0]), retain_graph=True)
    c.backward(dualad.tensor([1.0, 1.0, 1.0]))
    assert_equal(b.grad, [0.0, 4.0, 0.0])

    b = dualad.randn(3, requires_grad=True)
    c = b * b
    c.backward(dualad.ones(3), retain_graph=True)
    c.backward(dualad.ones(3))
    assert_equal(b.grad, 4 * value(b))


def test_backward_twice_without_saved_values():
    b = dualad.randn(3, requires_grad=True, dtype=dualad.float64)
    c = b + 1
    c.backward(dualad.tensor([1.0, 1.0, 1.0]))
    c.backward(dualad.tensor([1.0, 1.0, 1.0]))
    assert_equal(b.grad, [2.0, 2.0, 2.0])


def test_backward_twice_retained_graph_without_saved_values():
    b = dualad.randn(3, requires_grad=True)
    c = b + 1
    c.backward(dualad.ones(3), retain_graph=True)
    c.backward(dualad.ones(3))
    assert_equal(b.grad, [2.0, 2.0, 2.0])


def test_grad_twice_frees_saved_values():
    x = dualad.randn(3, requires_grad=True)
    y = (x.sin() * x).sum()
    grad(y, x)
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        grad(y, x)
    y = (x.sin() * x).sum()
    (g1,) = grad(y, x, retain_graph=True)
    (g2,) = grad(y, x)
    assert_equal(g1, g2)


def test_retain_graph_defaults_to_create_graph():
    x = dualad.randn(3, requires_grad=True)
    y = (x * x).sum()
    grad(y, x, create_graph=True)
    grad(y, x)  # the first call retained the graph
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        grad(y, x)


def test_partial_free_keeps_unexecuted_nodes():
    # grad() w.r.t. an intermediate does not run (so does not free) nodes below it.
    x = dualad.randn(3, requires_grad=True)
    h = x * x
    out = (h * 3).sum()
    (gh,) = grad(out, h)
    assert_equal(gh, 3 * np.ones(3))
    (gx,) = grad(h.sum(), x)
    assert_equal(gx, 2 * value(x))


# ------------------------------------------------------------------------- accumulation


def test_accumulate_grad():
    grad_output = dualad.ones(5, 5)

    def compute_grad(create_graph):
        x = dualad.randn(5, 5, requires_grad=True)
        y = x + 2
        y.backward(grad_output, retain_graph=True)
        x_grad = x.grad
        x_grad_clone = x.grad.clone()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y.backward(grad_output, create_graph=create_graph)
        return x, x_grad, x_grad_clone

    # create_graph=False: accumulate in place (the old reference sees the new value)
    x, x_grad, x_grad_clone = compute_grad(create_graph=False)
    assert_equal(x_grad, value(x_grad_clone) * 2)
    assert x.grad is x_grad

    # create_graph=True: out of place (the old reference is unchanged, .grad is a new object)
    x, x_grad, x_grad_clone = compute_grad(create_graph=True)
    assert_equal(x_grad, x_grad_clone)
    assert x.grad is not x_grad
    assert_equal(x.grad, value(x_grad_clone) * 2)


@pytest.mark.parametrize("create_graph", [False, True])
def test_accumulate_grad_tensor_reference(create_graph):
    params = dualad.tensor([1.5, 1.5]).requires_grad_()
    params.grad = dualad.tensor([1.5, 1.5])
    grad_saved = params.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        params.backward(dualad.tensor([1.5, 1.5]), create_graph=create_graph)
    assert (id(grad_saved) == id(params.grad)) == (not create_graph)
    assert_equal(params.grad, [3.0, 3.0])


def test_accumulate_grad_create_graph_grads_are_differentiable():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x**3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.grad_fn is not None
    (h,) = grad(g.sum(), x)
    assert_equal(h, 6 * value(x))


def test_accumulate_grad_with_zero_numel_grad():
    a = dualad.rand(4, 0, requires_grad=True)
    b = dualad.rand(4, 1, requires_grad=True)
    c = a + b
    assert c.shape == (4, 0)
    c.sum().backward()
    assert_equal(b.grad, np.zeros((4, 1)))
    assert_equal(a.grad, np.zeros((4, 0)))
    assert a.grad.shape == (4, 0)


def test_type_conversion_backward():
    # grad dtype always equals the leaf's (seed: _test_type_conversion_backward)
    f = dualad.randn(5, 5, dtype=dualad.float32, requires_grad=True)
    f.double().sum().backward()
    assert f.grad.dtype == dualad.float32
    assert_equal(f.grad, np.ones((5, 5)))
    d = dualad.randn(5, 5, dtype=dualad.float64, requires_grad=True)
    (d.float() * 2).sum().backward()
    assert d.grad.dtype == dualad.float64
    assert_equal(d.grad, 2 * np.ones((5, 5)))


def test_input_buffer_accum():
    # user-given grad_tensors are never mutated
    leaf = dualad.rand(2, 2, requires_grad=True)
    out2 = leaf[[0, 0]]
    out1 = leaf.clone()
    grad_out1_original = dualad.rand_like(out1)
    grad_out1 = grad_out1_original.clone()
    grad_out2 = dualad.rand_like(out2)
    backward((out1, out2), (grad_out1, grad_out2))
    assert_equal(grad_out1, grad_out1_original)
    g2 = value(grad_out2)
    assert_equal(leaf.grad, value(grad_out1) + np.stack([g2[0] + g2[1], np.zeros(2)]))


def test_first_grad_does_not_alias_grad_tensor():
    v = dualad.randn(3, requires_grad=True)
    go = dualad.ones(3)
    v.backward(go)
    assert_equal(v.grad, np.ones(3))
    v.backward(go)  # in-place accumulation into v.grad must not change go
    assert_equal(go, np.ones(3))
    assert_equal(v.grad, 2 * np.ones(3))
    assert not np.shares_memory(value(v.grad), value(go))

    # nor when the first gradient arrives unchanged from the root (v + 0 passes it through)
    w = dualad.randn(3, requires_grad=True)
    (w + 0).backward(go)
    assert not np.shares_memory(value(w.grad), value(go))
    w.grad += 1
    assert_equal(go, np.ones(3))


def test_no_grad_copy():
    # (no-aliasing part) the same gradient buffer reaching two leaves: their .grads are distinct
    a = dualad.randn(5, 6, requires_grad=True)
    b = dualad.randn(5, 6, requires_grad=True)
    (a + b).sum().backward()
    assert not np.shares_memory(value(a.grad), value(b.grad))
    a.grad += 1
    assert_equal(b.grad, np.ones((5, 6)))

    # the gradient of a broadcast (stride-0 expand) input is materialised, not a view
    c = dualad.randn(1, 6, requires_grad=True)
    (c.expand(5, 6) * 1).sum().backward()
    assert_equal(c.grad, 5 * np.ones((1, 6)))
    c.grad += 1
    assert_equal(c.grad, 6 * np.ones((1, 6)))

    # a single leaf used twice: grads are summed, not aliased to the cotangent
    x = dualad.randn(3, requires_grad=True)
    go = dualad.ones(3)
    (x + x).backward(go)
    assert_equal(x.grad, 2 * np.ones(3))
    assert_equal(go, np.ones(3))


def test_grad_never_writes_dot_grad():
    x = dualad.randn(3, requires_grad=True)
    y = dualad.randn(3, requires_grad=True)
    for _ in range(3):
        grad((x * y).sum(), [x, y])
    assert x.grad is None and y.grad is None


# ------------------------------------------------------------------------- higher order


def test_hessian_vector():
    x = dualad.randn(2, 2, requires_grad=True)
    y = dualad.randn(2, 2, requires_grad=True)
    z = x**2 + y * x + y**2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z.backward(dualad.ones(2, 2), create_graph=True)
    with dualad.no_grad():
        x_grad = 2 * x + y
        y_grad = x + 2 * y
    assert_equal(x.grad, x_grad)
    assert_equal(y.grad, y_grad)

    grad_sum = 2 * x.grad + y.grad
    grad_sum.backward(dualad.ones(2, 2))
    assert_equal(x.grad, value(x_grad) + 5)
    assert_equal(y.grad, value(y_grad) + 4)


def test_grad():
    x = dualad.randn(2, 2, requires_grad=True)
    y = dualad.randn(2, 2, requires_grad=True)
    z = x**2 + y * x + y**2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z.backward(dualad.ones(2, 2), create_graph=True)
    x_grad = 2 * value(x) + value(y)
    y_grad = value(x) + 2 * value(y)
    assert_equal(x.grad, x_grad)
    assert_equal(y.grad, y_grad)

    grad_sum = 2 * x.grad + y.grad
    x_hv = grad(outputs=[grad_sum], grad_outputs=[dualad.ones(2, 2)], inputs=[x], create_graph=True)
    assert_equal(x_hv[0], np.ones((2, 2)) * 5)
    assert_equal(x.grad, x_grad)
    assert_equal(y.grad, y_grad)

    grad_out = dualad.ones(2)
    with pytest.raises(RuntimeError) as info:
        grad(outputs=[grad_sum], grad_outputs=[grad_out], inputs=[x], create_graph=True)
    assert str(info.value) == (
        "Mismatch in shape: grad_output[0] has a shape of "
        + str(grad_out.shape)
        + " and output[0] has a shape of "
        + str(grad_sum.shape)
        + "."
    )


def test_grad_nonleaf():
    x_init = dualad.randn(2, 2, requires_grad=True)
    x = x_init
    y = dualad.randn(2, 2, requires_grad=True)
    grad_output = dualad.ones(2, 2)

    def fn(x):
        return x**2 + y * x + y**2

    for _ in range(5):
        (grad_x,) = grad(fn(x), x, grad_outputs=grad_output, create_graph=True)
        assert y.grad is None
        assert x_init.grad is None
        assert_equal(grad_x, 2 * value(x) + value(y))
        x = x + 0.05 * grad_x

    val_init = fn(x_init).sum()
    val_final = fn(x).sum()
    assert val_final.item() > val_init.item()

    x.backward(grad_output)
    assert y.grad is not None
    assert x_init.grad is not None


def test_grad_nonleaf_many_outputs():
    x = dualad.randn(4, 2, requires_grad=True)
    a, b = x.chunk(2)
    hook_called = [False]

    def hook(*grads):
        hook_called[0] = True

    x.register_hook(hook)
    go = dualad.randn(2, 2)
    grad_a, grad_b = grad((a + 2 * b), [a, b], grad_outputs=go, create_graph=True)
    assert_equal(grad_a, go)
    assert_equal(grad_b, value(go) * 2)
    assert not hook_called[0]
    assert x.grad is None


def _derivatives(f, x, order):
    results = []
    out = f(x).sum()
    for _ in range(order):
        (out,) = grad(out, x, create_graph=True)
        results.append(value(out))
        out = out.sum()
    return results


@pytest.mark.parametrize("k", [3, 4, 5])
def test_higher_order_power(k):
    x0 = np.array([0.5, 1.5, -2.0])
    x = dualad.tensor(x0, requires_grad=True)
    d1, d2, d3, d4 = _derivatives(lambda t: t**k, x, 4)
    assert_equal(d1, k * x0 ** (k - 1), rtol=1e-12)
    assert_equal(d2, k * (k - 1) * x0 ** (k - 2), rtol=1e-12)
    assert_equal(d3, k * (k - 1) * (k - 2) * x0 ** (k - 3), rtol=1e-12)
    assert_equal(d4, k * (k - 1) * (k - 2) * (k - 3) * x0 ** (k - 4), rtol=1e-12, atol=1e-12)


def test_higher_order_sin():
    x0 = np.array([0.3, 1.1, -2.0])
    x = dualad.tensor(x0, requires_grad=True)
    d1, d2, d3, d4 = _derivatives(dualad.sin, x, 4)
    assert_equal(d1, np.cos(x0), rtol=1e-12)
    assert_equal(d2, -np.sin(x0), rtol=1e-12)
    assert_equal(d3, -np.cos(x0), rtol=1e-12)
    assert_equal(d4, np.sin(x0), rtol=1e-12)


def test_higher_order_mixed_product():
    # d^3/dx^3 of x^2 * sin(x) vs the analytic formula, through backward(create_graph=True)
    x0 = np.array([0.7, -1.3])
    x = dualad.tensor(x0, requires_grad=True)
    (d1,) = grad((x * x * dualad.sin(x)).sum(), x, create_graph=True)
    (d2,) = grad(d1.sum(), x, create_graph=True)
    (d3,) = grad(d2.sum(), x)
    expected = -(x0**2) * np.cos(x0) - 6 * x0 * np.sin(x0) + 6 * np.cos(x0)
    assert_equal(d3, expected, rtol=1e-12)
    assert not d3.requires_grad


def test_grad_materialize_grads():
    x = dualad.tensor(0.5, requires_grad=True)
    a = dualad.tensor(1.0, requires_grad=True)
    y = x * a
    dydx = grad(y, x, create_graph=True)
    d2ydx2_none = grad(dydx, x, create_graph=True, allow_unused=True)
    d2ydx2 = grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
    d3ydx3 = grad(d2ydx2, x, materialize_grads=True)
    assert d2ydx2_none[0] is None
    assert d2ydx2[0].item() == 0
    assert d3ydx3[0].item() == 0
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when"):
        grad(y, x, allow_unused=False, materialize_grads=True)


def test_grad_materialize_grads_shape_and_dtype():
    x = dualad.randn(2, 3, dtype=dualad.float32, requires_grad=True)
    z = dualad.randn(4, requires_grad=True)
    gx, gz = grad((x * 2).sum(), (x, z), materialize_grads=True)
    assert_equal(gx, 2 * np.ones((2, 3)))
    assert gz.shape == (4,) and gz.dtype == dualad.float64
    assert_equal(gz, np.zeros(4))
    assert not gz.requires_grad  # materialised zeros require grad iff create_graph (PyTorch 2.x)
    _, gz = grad((x * 2).sum(), (x, z), materialize_grads=True, create_graph=True)
    assert gz.requires_grad


# ------------------------------------------------------------------------- reachability


def test_grad_unreachable():
    x = dualad.ones(1, requires_grad=True)
    y = dualad.ones(1, requires_grad=True)
    # make sure x and y have grad accumulators allocated
    z = x * 2
    w = y * 2  # noqa: F841

    grad_x, grad_y = grad(x * 2, [x, y], allow_unused=True)
    assert_equal(grad_x, value(x) * 2)
    assert grad_y is None

    # z has not even an AccumulateGrad node
    z = dualad.ones(1, requires_grad=True)
    grad_x, grad_z = grad(x * 2, [x, z], allow_unused=True)
    assert_equal(grad_x, value(x) * 2)
    assert grad_z is None

    with pytest.raises(RuntimeError, match="Set allow_unused=True"):
        grad(x * 2, [x, y], allow_unused=False)


def _never_run(grad_outputs):
    pytest.fail("This node should not be executed!")


def test_grad_unreachable_discovery():
    # nodes that are not on a path to a requested input must not execute (a node prehook stands
    # in for the seed's custom Function whose backward fails)
    x = dualad.randn(1, requires_grad=True) * 2
    x = x.clone()
    x.grad_fn.register_prehook(_never_run)
    y = dualad.randn(1, requires_grad=True)
    (gy,) = grad(x, (y,), allow_unused=True)
    assert gy is None

    x = (dualad.randn(1, requires_grad=True) * 2).clone()
    x.grad_fn.register_prehook(_never_run)
    y = dualad.randn(1, requires_grad=True)
    z = dualad.randn(1, requires_grad=True)
    gy, gz = grad(x + z, (y, z), allow_unused=True)
    assert gy is None
    assert gz is not None

    x = (dualad.randn(1, requires_grad=True) * 2).clone()
    x.grad_fn.register_prehook(_never_run)
    y = dualad.randn(1, requires_grad=True)
    backward(x, inputs=(y,))
    assert y.grad is None


def test_grad_stops_at_requested_inputs():
    # nodes below a requested non-leaf input do not run
    x = dualad.randn(3, requires_grad=True)
    h = x * 2
    h.grad_fn.register_prehook(_never_run)
    out = (h.sin() * 3).sum()
    (gh,) = grad(out, h)
    assert_equal(gh, 3 * np.cos(value(h)))


def test_backward_unreachable_input_leaves_grad_none():
    x = dualad.randn(3, requires_grad=True)
    y = dualad.randn(3, requires_grad=True)
    (x * 2).sum().backward(inputs=[y])
    assert y.grad is None and x.grad is None


def test_grad_same_input_twice():
    x = dualad.randn(3, requires_grad=True)
    gx1, gx2 = grad((x * x).sum(), [x, x])
    assert_equal(gx1, 2 * value(x))
    assert_equal(gx2, 2 * value(x))


def test_grad_of_output_wrt_itself():
    x = dualad.randn(3, requires_grad=True)
    y = x * 2
    (gy,) = grad(y, y, dualad.ones(3))
    assert_equal(gy, np.ones(3))
    (gx,) = grad(x, x, dualad.full((3,), 2.0))
    assert_equal(gx, 2 * np.ones(3))


# ------------------------------------------------------------------------- arguments


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_implicit_seed_for_single_element_outputs(shape):
    x = (
        dualad.randn(*shape, requires_grad=True)
        if shape
        else dualad.tensor(1.5, requires_grad=True)
    )
    (x * 3).backward()
    assert_equal(x.grad, 3 * np.ones(shape))
    (g,) = grad(x * 3, x)
    assert_equal(g, 3 * np.ones(shape))


def test_grad_outputs_forms():
    x = dualad.randn(3, requires_grad=True)
    go = dualad.randn(3)
    expected = 2 * value(go)
    assert_equal(grad(x * 2, x, go)[0], expected)
    assert_equal(grad(x * 2, x, [go])[0], expected)
    assert_equal(grad([x * 2], [x], (go,))[0], expected)
    assert_equal(grad(x * 2, x, grad_outputs=value(go))[0], expected)  # a NumPy array


def test_grad_outputs_none_entries():
    x = dualad.randn(3, requires_grad=True)
    a = (x * 2).sum()
    b = x * 3
    (g,) = grad([a, b], x, [None, dualad.ones(3)])
    assert_equal(g, 5 * np.ones(3))


def test_grad_with_create_graph_returns_differentiable_results():
    x = dualad.randn(3, requires_grad=True)
    (g,) = grad((x**3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    (g2,) = grad((x**3).sum(), x)
    assert not g2.requires_grad and g2.grad_fn is None


def test_gradient_edge_inputs():
    from dualad.autograd.graph import get_gradient_edge

    x = dualad.randn(3, requires_grad=True)
    h = x * 2
    out = (h * h).sum()
    gh_edge, gx_edge = grad(out, (get_gradient_edge(h), get_gradient_edge(x)), retain_graph=True)
    gh, gx = grad(out, (h, x))
    assert_equal(gh_edge, gh)
    assert_equal(gx_edge, gx)
    assert_equal(gx, 8 * value(x))


def test_backward_create_graph_warns():
    b = dualad.randn(3, requires_grad=True, dtype=dualad.float64)
    c = b * b
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        c.backward(dualad.ones_like(c), create_graph=True)
    b.grad = None
    assert any("Using backward() with create_graph=True" in str(w.message) for w in ws)

    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        grad(c, b, dualad.ones_like(c), create_graph=True)
    assert not any("Using backward() with create_graph=True" in str(w.message) for w in ws)


def test_backward_runs_with_grad_mode_create_graph():
    seen = []
    x = dualad.randn(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: seen.append(dualad.is_grad_enabled()))
    y.sum().backward(retain_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.sum().backward(create_graph=True)
    total = y.sum()
    with dualad.no_grad():
        grad(total, x, create_graph=True)
    assert seen == [False, True, True]
    assert dualad.is_grad_enabled()


# ------------------------------------------------------------------------- reentrant backward


def test_reentrant_with_leaf_variable_hook():
    handle = None
    param = dualad.rand(10, requires_grad=True)

    def add_gradient_penalty_to_grad(grad):
        handle.remove()
        old_param_grad = grad
        param.grad = None
        with dualad.enable_grad():
            g = grad.detach().requires_grad_()
            new_param = param.detach().requires_grad_()
            out = ((g * 2) + new_param).sum()
            out.backward()
        res = g.grad + grad
        param.grad = old_param_grad
        return res

    handle = param.register_hook(add_gradient_penalty_to_grad)
    tmp = param * param
    loss = tmp.sum()
    loss.backward()
    # the hook left param.grad = grad (2 p); AccumulateGrad then adds res = 2 + 2 p into it
    assert_equal(param.grad, 4 * value(param) + 2)


def test_reentrant_with_non_leaf_variable_hook():
    handle = None
    param = dualad.rand(10, requires_grad=True)

    def manual_increase_gradient(grad):
        handle.remove()
        with dualad.enable_grad():
            g = grad.detach().requires_grad_()
            out = ((g * 2) + 5).sum()
            out.backward()
        res = g.grad + grad
        return res

    tmp = param * param
    handle = tmp.register_hook(manual_increase_gradient)
    loss = tmp.sum()
    loss.backward()
    assert_equal(param.grad, 6 * value(param))


def test_reentrant_grad_inside_backward_completes_first():
    # the inner pass runs to completion before the outer continues (spec ENG-4)
    order = []
    x = dualad.tensor([2.0], requires_grad=True)
    a = x * 3
    b = x * 5

    def hook(g):
        order.append("outer-b")
        w = dualad.tensor([1.0], requires_grad=True)
        with dualad.enable_grad():  # hooks run with grad mode = create_graph (off here)
            inner = (w * 4).clone()
            inner.register_hook(lambda gi: order.append("inner"))
            total = inner.sum()
        (gw,) = grad(total, w)
        assert_equal(gw, [4.0])
        order.append("inner-done")

    b.register_hook(hook)
    a.register_hook(lambda g: order.append("outer-a"))
    (a + b).sum().backward()
    assert order == ["outer-b", "inner", "inner-done", "outer-a"]
    assert_equal(x.grad, [8.0])


def test_nested_reentrant_depth():
    # ENG-5 (T2): reentrant backward nested 100 deep through tensor hooks
    depth = 100
    calls = []

    def make(level):
        x = dualad.tensor([1.0], requires_grad=True)
        y = x * 2
        if level < depth:

            def hook(g):
                with dualad.enable_grad():
                    make(level + 1)[1].sum().backward()
                calls.append(level)

            y.register_hook(hook)
        return x, y

    x, y = make(0)
    y.sum().backward()
    assert calls == list(range(depth - 1, -1, -1))
    assert_equal(x.grad, [2.0])


# ------------------------------------------------------------------------- GradientEdge inputs


def test_grad_to_node():
    from dualad.autograd.graph import get_gradient_edge

    def check_matches(out, inp):
        ref = grad(out.sum(), inp)
        edge = get_gradient_edge(inp)
        new = grad(out.sum(), edge)
        assert len(ref) == len(new) == 1
        assert_equal(new[0], ref[0])

    x = dualad.rand(2, requires_grad=True)
    out = x.clone()
    check_matches(out, x)

    x = x.clone()
    out = x.clone()
    check_matches(out, x)

    x = x.chunk(2)[1]  # an output of a multi-output node (the seed uses var_mean(x)[1])
    out = x.clone()
    check_matches(out, x)


def test_grad_to_node_inplace():
    from dualad.autograd.graph import get_gradient_edge

    x = dualad.rand(2, requires_grad=True).clone()
    x_edge = get_gradient_edge(x)
    x *= 2
    g_old, g_new = grad(x.sum(), (x_edge, x))
    assert_equal(g_old, 2 * np.ones(2))
    assert_equal(g_new, np.ones(2))


def test_grad_to_node_multi():
    from dualad.autograd.graph import GradientEdge

    x = dualad.rand(2, requires_grad=True).clone()
    y = dualad.rand(2, requires_grad=True).clone()
    out = x + y
    ref = grad(out.sum(), (x, y), retain_graph=True)
    inp_edges = (GradientEdge(x.grad_fn, x.output_nr), GradientEdge(y.grad_fn, y.output_nr))
    new = grad(out.sum(), inp_edges)
    for r, n in zip(ref, new):
        assert_equal(n, r)


def test_grad_to_node_materialize():
    from dualad.autograd.graph import GradientEdge

    x = dualad.rand(2, requires_grad=True).clone()
    edge_x = GradientEdge(x.grad_fn, x.output_nr)
    y = dualad.rand(2, requires_grad=True).clone()
    edge_y = GradientEdge(y.grad_fn, y.output_nr)
    out = x.clone()

    gx, gy = grad(out.sum(), (edge_x, y), allow_unused=True, materialize_grads=True)
    assert_equal(gx, np.ones(2))
    assert_equal(gy, np.zeros(2))
    grad(out.sum(), (x, y), allow_unused=True, materialize_grads=True)
    gx, gy = grad(out.sum(), (x, edge_y), allow_unused=True)
    assert gy is None
    with pytest.raises(
        RuntimeError,
        match="materialize_grads cannot be used when the given input is a GradientEdge",
    ):
        grad(out.sum(), (x, edge_y), allow_unused=True, materialize_grads=True)


def test_backward_to_node():
    from dualad.autograd.graph import GradientEdge

    leaf_x = dualad.rand(2, requires_grad=True)
    x = leaf_x.clone()
    edge_x = GradientEdge(x.grad_fn, x.output_nr)
    y = dualad.rand(2, requires_grad=True).clone()
    edge_y = GradientEdge(y.grad_fn, y.output_nr)
    out = x.clone()

    backward(out.sum(), inputs=(edge_x, y))
    backward(out.sum(), inputs=(x, y))
    backward(out.sum(), inputs=(x, edge_y))
    backward(out.sum(), inputs=(edge_x, edge_y))
    # x retains its grad from the 2nd call on (a non-leaf input calls retain_grad()), and its node
    # runs in the 2nd, 3rd and 4th calls
    assert_equal(x.grad, 3 * np.ones(2))
    assert leaf_x.grad is None  # nothing asked for the leaf's gradient


@pytest.mark.parametrize("create_graph", [False, True])
def test_retained_grad_never_aliases_grad_tensor(create_graph):
    x = dualad.randn(3, requires_grad=True)
    h = x * 2
    h.retain_grad()
    go = dualad.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h.backward(go, create_graph=create_graph)
    assert h.grad is not go
    with dualad.no_grad():
        h.grad.zero_()
    assert_equal(go, np.ones(3))
