"""In-place ops, index assignment and copy_ under reverse mode.

Ported from PyTorch's test/test_autograd.py (spec/reverse.md section 8 INPL-1..6, 9..11).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dualad
from dualad import autograd

_VERSION_MESSAGE = (
    "one of the variables needed for gradient computation has been modified by an inplace operation"
)


def assert_equal(actual, expected, **kw):
    a = actual.detach().numpy() if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    e = expected.detach().numpy() if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=kw.get("rtol", 1e-7), atol=kw.get("atol", 1e-7))


def test_inplace():
    x = dualad.ones(5, 5, requires_grad=True)
    y = dualad.tensor(np.ones((5, 5)) * 4, requires_grad=True)

    z = x * y
    q = z + y
    w = z * y
    z.add_(2)
    # Add doesn't need its inputs to do backward, so it shouldn't raise
    q.backward(dualad.ones(5, 5), retain_graph=True)
    # Mul saves both inputs in forward, so it should raise
    with pytest.raises(RuntimeError, match=_VERSION_MESSAGE):
        w.backward(dualad.ones(5, 5))

    z = x * y
    q = z * y
    r = z + y
    w = z.add_(y)
    # w is a the last expression, so this should succeed
    w.backward(dualad.ones(5, 5), retain_graph=True)
    # r doesn't use the modified value in backward, so it should succeed
    r.backward(dualad.ones(5, 5), retain_graph=True)
    # q uses dirty z, so it should raise
    with pytest.raises(RuntimeError, match=_VERSION_MESSAGE):
        q.backward(dualad.ones(5, 5))

    with dualad.no_grad():
        x.grad.zero_()
    m = x / 2
    z = m + y / 8
    q = z * y
    r = z + y
    prev_version = z._version
    w = z.exp_()
    assert z._version != prev_version
    r.backward(dualad.ones(5, 5), retain_graph=True)
    assert_equal(x.grad, np.ones((5, 5)) / 2)
    w.backward(dualad.ones(5, 5), retain_graph=True)
    assert_equal(x.grad, np.full((5, 5), (1 + math.e) / 2))
    with pytest.raises(RuntimeError, match=_VERSION_MESSAGE):
        q.backward(dualad.ones(5, 5))

    leaf = dualad.ones(5, 5, requires_grad=True)
    x = leaf.clone()
    x.add_(10)
    assert_equal(x, np.ones((5, 5)) * 11)
    # x should be still usable
    y = x + 2
    y.backward(dualad.ones(5, 5))
    assert_equal(leaf.grad, np.ones((5, 5)))
    z = x * y
    x.add_(2)
    with pytest.raises(RuntimeError, match=_VERSION_MESSAGE):
        z.backward(dualad.ones(5, 5))


def test_inplace_returns_self_and_keeps_identity():
    a = dualad.ones(3) + 0
    assert a.add_(1) is a
    assert a.mul_(2) is a
    assert_equal(a, [4.0, 4.0, 4.0])


def test_version_error_full_text():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a * a
    a.add_(1)
    with pytest.raises(RuntimeError) as info:
        b.backward(dualad.ones(2))
    text = str(info.value)
    assert text.startswith(_VERSION_MESSAGE)
    assert "which is input 0 of MulBackward0, is at version 1; expected version 0 instead." in text
    assert "Hint: enable anomaly detection" in text


def test_requires_grad_inplace():
    a = dualad.randn(5, 5)
    b = dualad.randn(5, 5, requires_grad=True)
    a += b
    assert a.requires_grad

    # non-leaf
    a = dualad.randn(5, 5) + 0
    b = dualad.randn(5, 5, requires_grad=True)
    a += b
    assert a.requires_grad


def test_requires_grad_inplace_gradient():
    a = dualad.randn(3)
    b = dualad.randn(3, requires_grad=True)
    a *= b
    assert not a.is_leaf
    a2 = a.detach().clone()
    (a * 1).sum().backward()
    # d(a0 * b)/db = a0 = a / b
    assert_equal(b.grad, a2 / b.detach(), rtol=1e-12)


def test_no_requires_grad_inplace():
    # basic case, should be able to modify inplace while requires_grad is False
    a = dualad.randn(2, 3)
    a.add_(5)
    a.requires_grad = True
    a.sum().backward()
    assert_equal(a.grad, np.ones((2, 3)))

    # same but with a view
    a = dualad.randn(2, 3)
    b = a[:]
    b.add_(5)
    a.requires_grad = True
    a.sum().backward()
    assert_equal(a.grad, np.ones((2, 3)))

    # should fail if requires_grad = True when we modify inplace
    a = dualad.randn(2, 3)
    b = a[:]
    a.requires_grad = True
    with pytest.raises(
        RuntimeError,
        match=r"a leaf Variable that requires grad is being used in an in-place operation\.",
    ):
        a.add_(5)
    with pytest.raises(
        RuntimeError,
        match="a view of a leaf Variable that requires grad is being used in an in-place",
    ):
        b.add_(5)


def test_inplace_on_leaf_allowed_under_no_grad():
    a = dualad.ones(3, requires_grad=True)
    version = a._version
    with dualad.no_grad():
        a.mul_(2)
    assert a._version == version + 1
    assert a.is_leaf and a.requires_grad
    a.sum().backward()
    assert_equal(a.grad, np.ones(3))


def test_leaf_assignment():
    x = dualad.randn(5, 5)
    y = dualad.randn(5, requires_grad=True)
    z = dualad.randn(5, requires_grad=True)

    x[0] = y
    x[1] = 2 * z
    assert x.requires_grad
    assert x.grad_fn is not None
    x.sum().backward()
    assert_equal(y.grad, np.ones(5))
    assert_equal(z.grad, np.ones(5) * 2)


def test_no_grad_assignment():
    x = dualad.randn(5, 5, requires_grad=True)
    y = dualad.randn(5)
    with dualad.no_grad():
        x[0] = y
    assert x.requires_grad
    assert x.grad_fn is None
    assert_equal(x[0], y)


def test_no_grad_modifies_version():
    x = dualad.randn(5, requires_grad=True)
    y = dualad.randn(5, requires_grad=True)
    z = (x * y).sum()
    with dualad.no_grad():
        x *= 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


# ------------------------------------------------------------------ index assignment


def _as_torch_like_index(index):
    """The seed writes ``Variable(LongTensor)`` indices; dualad takes its own integer tensors."""
    if isinstance(index, list):
        return [_as_torch_like_index(i) for i in index]
    return index


def _numpy_key(index):
    if isinstance(index, dualad.Tensor):
        return index.numpy()
    if isinstance(index, list):
        # torch treats a list containing slices or sequences as a tuple of indices
        if any(isinstance(i, (slice, list, dualad.Tensor)) for i in index):
            return tuple(_numpy_key(i) for i in index)
        return np.asarray(index)
    return index


def _test_setitem(size, index):
    x = dualad.ones(*size, requires_grad=True)
    y = x + 2
    y_version = y._version
    y[index] = 2
    assert y._version != y_version
    assert_equal(y[index], np.full(y[index].shape, 2.0))
    y.backward(dualad.ones(*size))
    expected_grad = np.ones(size)
    expected_grad[_numpy_key(index)] = 0
    assert_equal(x.grad, expected_grad)


def _test_setitem_tensor(size, index):
    x = dualad.ones(*size, requires_grad=True)
    y = x + 2
    y_version = y._version
    value = dualad.full(tuple(x[index].shape), 7.0)
    value.requires_grad = True
    y[index] = value
    assert y._version != y_version
    y.backward(dualad.ones(*size))
    expected_grad_input = np.ones(size)
    expected_grad_input[_numpy_key(index)] = 0
    assert_equal(x.grad, expected_grad_input)
    assert_equal(value.grad, np.ones(value.shape))

    # case when x broadcasts to as y[1]
    x = dualad.randn(4, requires_grad=True)
    y = dualad.zeros(2, 3, 4)
    y[1] = x
    go = np.random.default_rng(0).standard_normal((2, 3, 4))
    y.backward(dualad.tensor(go))
    assert x.size() == x.grad.size()
    assert_equal(x.grad, go[1].sum(0))


LONG = dualad.int64

SETITEM_CASES = [
    ((5, 5), 1),
    ((5,), 1),
    ((1,), 0),
    ((10,), [[0, 4, 2]]),
    ((5, 5), [[0, 4], [2, 2]]),
    ((5, 5, 5), [slice(None), slice(None), [1, 3]]),
    ((5, 5, 5), [slice(None), [1, 3], slice(None)]),
    ((5, 5, 5), [[1, 3], slice(None), slice(None)]),
    ((5, 5, 5), [slice(None), [2, 4], [1, 3]]),
    ((5, 5, 5), [[1, 3], [2, 4], slice(None)]),
    ((5, 5), (slice(1, 3), 2)),
    ((5, 5), (Ellipsis, slice(None, None, 2))),
]

SETITEM_TENSOR_CASES = [
    ((5, 5), 3),
    ((5, 5), [[0, 1], [1, 0]]),
    ((5,), 3),
    ((5,), "sum_of_long_tensor"),
    ((5,), [[0, 1, 2, 3]]),
    ((5, 5, 5), [slice(None), slice(None), [1, 3]]),
    ((5, 5, 5), [slice(None), [1, 3], slice(None)]),
    ((5, 5, 5), [[1, 3], slice(None), slice(None)]),
    ((5, 5, 5), [slice(None), [2, 4], [1, 3]]),
    ((5, 5, 5), [[1, 3], [2, 4], slice(None)]),
    ((5, 5, 5), "long_tensor_list_slice_mix"),
]


def _to_key(index):
    # dualad follows NumPy: a Python list of index parts is written as a tuple
    if isinstance(index, list) and any(isinstance(i, (slice, list, dualad.Tensor)) for i in index):
        return tuple(index)
    return index


@pytest.mark.parametrize("size,index", SETITEM_CASES)
def test_setitem(size, index):
    _test_setitem(size, _to_key(index))


@pytest.mark.parametrize("size,index", SETITEM_TENSOR_CASES)
def test_setitem_tensor(size, index):
    if index == "sum_of_long_tensor":
        index = dualad.tensor([3], dtype=LONG).sum()
    elif index == "long_tensor_list_slice_mix":
        index = (dualad.tensor([1, 3], dtype=LONG), [2, 4], slice(None))
    _test_setitem_tensor(size, _to_key(index))


def test_setitem_mask():
    mask = dualad.tensor(np.random.default_rng(3).random((5, 5)) > 0.5)
    _test_setitem((5, 5), mask)
    _test_setitem((5,), mask[0])
    _test_setitem((1,), mask[0, 0:1])
    _test_setitem_tensor((5, 5), mask)
    _test_setitem_tensor((5,), mask[0])


def test_setitem_value_broadcast_sums_grad():
    x = dualad.zeros(3, 4) + 0
    v = dualad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    x[1:] = v
    go = np.arange(12.0).reshape(3, 4)
    x.backward(dualad.tensor(go))
    assert_equal(v.grad, go[1:].sum(0))


def test_setitem_scalar_value_tensor_grad():
    x = dualad.ones(4, requires_grad=True)
    y = x * 1
    s = dualad.tensor(3.0, requires_grad=True)
    y[[0, 2]] = s
    y.backward(dualad.tensor([1.0, 2.0, 3.0, 4.0]))
    assert_equal(s.grad, np.array(4.0))
    assert_equal(x.grad, [0.0, 2.0, 0.0, 4.0])


def test_index_backward_does_not_save_tensor():
    # Example from https://github.com/pytorch/pytorch/issues/24853.
    # if `index(tensor, indices)` saves `tensor` for backwards pass, the version check
    # would trip
    a = dualad.tensor([1.0, 0, 0])
    b = dualad.zeros(3, requires_grad=True)
    tensor = b + 0
    tensor[a != 0] = tensor[a != 0]
    tensor.backward(dualad.zeros_like(tensor))


def test_indexing_duplicates():
    x = dualad.arange(1.0, 17).view(4, 4)
    y = dualad.tensor(x.numpy(), requires_grad=True)

    idx = dualad.tensor([1, 1, 3, 2, 1, 2], dtype=LONG)
    y[idx].sum().backward()
    expected_grad = np.zeros((4, 4))
    for i in idx.tolist():
        expected_grad[i] += 1
    assert_equal(y.grad, expected_grad)

    # with advanced indexing
    y = dualad.tensor(x.numpy(), requires_grad=True)
    idx = ([1, 1, 3, 2, 1, 2], [0])
    y[idx].sum().backward()
    expected_grad = np.zeros((4, 4))
    for i in idx[0]:
        for j in idx[1]:
            expected_grad[i][j] += 1
    assert_equal(y.grad, expected_grad)

    y = dualad.tensor(x.numpy(), requires_grad=True)
    idx = ([[1, 2], [0, 0]], [[0, 1], [1, 1]])
    y[idx].sum().backward()
    expected_grad = np.array(
        [
            [0.0, 2.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
        ]
    )
    assert_equal(y.grad, expected_grad)

    x = dualad.arange(1.0, 65).view(4, 4, 4)
    y = dualad.tensor(x.numpy(), requires_grad=True)
    idx = ([1, 1, 1], slice(None), slice(None))
    y[idx].sum().backward()
    expected_grad = np.zeros((4, 4, 4))
    expected_grad[1] = 3
    assert_equal(y.grad, expected_grad)


def test_select_expanded_v():
    v_expanded = dualad.rand(10).expand(10, 10)
    a = dualad.rand(10, 10, 10, requires_grad=True)
    (result,) = autograd.grad(a[0], a, v_expanded)
    expected = np.zeros((10, 10, 10))
    expected[0] = v_expanded.numpy()
    assert_equal(result, expected)


def test_slice_expanded_v():
    v_expanded = dualad.rand(10, 1).expand(2, 10, 10)
    a = dualad.rand(10, 10, 10, requires_grad=True)
    (result,) = autograd.grad(a[3:5], a, v_expanded)
    expected = np.zeros((10, 10, 10))
    expected[3:5] = v_expanded.numpy()
    assert_equal(result, expected)


def test_diagonal_expanded_v():
    value = dualad.rand(())
    v_expanded = value.expand(10)
    a = dualad.rand(10, 10, dtype=dualad.float64, requires_grad=True)
    (result,) = autograd.grad(a.diagonal(), a, v_expanded)
    assert_equal(result, np.eye(10) * value.item())


def test_unused_output():
    x = dualad.randn(10, 10, requires_grad=True)
    outputs = x.chunk(5)
    o = outputs[2]
    o = o * 4 + 2
    o.sum().backward()
    expected_grad = np.zeros((10, 10))
    expected_grad[4:6] = 4
    assert_equal(x.grad, expected_grad)

    with dualad.no_grad():
        x.grad.zero_()
    grad_output = np.random.default_rng(0).standard_normal((2, 10))
    outputs = x.chunk(5)
    outputs[0].backward(dualad.tensor(grad_output))
    expected_grad = np.zeros((10, 10))
    expected_grad[:2] = grad_output
    assert_equal(x.grad, expected_grad)


def test_unused_output_unbind():
    # test_unused_output's pattern with unbind (a multi-output view op that exists today)
    x = dualad.randn(5, 3, requires_grad=True)
    outputs = x.unbind()
    o = outputs[2] * 4 + 2
    o.sum().backward()
    expected_grad = np.zeros((5, 3))
    expected_grad[2] = 4
    assert_equal(x.grad, expected_grad)


# ------------------------------------------------------------------ copy_, detach_ + copy_


def test_copy_():
    x = dualad.randn(10, requires_grad=True)
    for dt in (dualad.float16, dualad.float32, dualad.float64):
        y = dualad.empty(10, dtype=dt)
        y.copy_(x)
        assert y.requires_grad
        assert y.dtype == dt
        z = x.to(dualad.float16)
        assert z.requires_grad


def test_copy_gradient_values():
    x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = dualad.zeros(2, 3, dtype=dualad.float32)
    y.copy_(x)  # broadcasts
    assert_equal(y, np.array([[1.0, 2.0, 3.0]] * 2, dtype=np.float32))
    (y * dualad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=dualad.float32)).sum().backward()
    assert x.grad.dtype == dualad.float64
    assert_equal(x.grad, [5.0, 7.0, 9.0])


def test_copy_overwrites_history():
    a = dualad.ones(3, requires_grad=True)
    b = dualad.ones(3, requires_grad=True)
    y = a * 2
    y.copy_(b)
    y.sum().backward()
    assert_equal(a.grad, np.zeros(3))  # torch: copy_'s self gradient is zeros_like(grad)
    assert_equal(b.grad, np.ones(3))


def test_no_unnecessary_save():
    # If we kept x in the derivative Function of x * 2 we would
    # get an error in the backward that would complain that we've
    # modified x, which was needed for gradient computation.
    # Since we should elide unnecessary saves, this test should pass.
    mu = dualad.ones(1, requires_grad=True)
    x = dualad.empty(1)
    loss = 0
    for i in range(3):
        x.detach_()
        x.copy_(mu + i)
        ft = dualad.tensor([float(i)])
        multiplied = x * ft
        s = multiplied.sum()
        loss += s
    loss.backward()
    assert_equal(mu.grad, [3.0])


def test_fill_and_zero_inplace():
    a = dualad.ones(3, requires_grad=True)
    y = a * 3
    y.fill_(2.0)
    assert_equal(y, [2.0, 2.0, 2.0])
    y.sum().backward()
    assert_equal(a.grad, np.zeros(3))
    (g,) = autograd.grad((a * 3).fill_(1.0).sum(), a)  # zeros, not "unused" (as in torch)
    assert_equal(g, np.zeros(3))

    a = dualad.ones(3, requires_grad=True)
    v = dualad.tensor(5.0, requires_grad=True)
    y = a * 3
    y.fill_(v)
    y.sum().backward()
    assert_equal(v.grad, np.array(3.0))

    a = dualad.ones(3, requires_grad=True)
    y = a * 3
    version = y._version
    y.zero_()
    assert y._version == version + 1
    assert_equal(y, np.zeros(3))


def test_saved_variable_saved_original_inplace_detach():
    # Detaching a tensor that is saved input raises
    a = dualad.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="Trying to use a saved tensor that has been detached"):
        b.backward()

    # Detaching a tensor that is saved as output is OK
    a = dualad.tensor(1.0, requires_grad=True).clone()
    b = a.exp()
    a.detach_()
    b.backward()


def test_inplace_unary_values_and_grads():
    rng = np.random.default_rng(5)
    x0 = rng.uniform(0.5, 1.5, size=4)
    for name in ("exp", "sin", "cos", "tanh", "log", "sqrt", "neg", "reciprocal", "square"):
        leaf = dualad.tensor(x0, requires_grad=True)
        ref = getattr(dualad, name)(leaf)
        ref.sum().backward()
        expected_grad = leaf.grad.numpy().copy()
        leaf.grad = None
        y = leaf * 1
        out = getattr(y, name + "_")()
        assert out is y
        assert_equal(y, ref.detach(), rtol=1e-12)
        y.sum().backward()
        assert_equal(leaf.grad, expected_grad, rtol=1e-12)


def test_inplace_binary_with_broadcast_operand():
    a = dualad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * 1
    y.mul_(b)
    y.sub_(b)
    y.div_(2.0)
    go = np.arange(6.0).reshape(2, 3) + 1
    y.backward(dualad.tensor(go))
    assert_equal(a.grad, go * np.array([1.0, 2.0, 3.0]) / 2)
    assert_equal(b.grad, (go * (np.arange(6.0).reshape(2, 3) - 1) / 2).sum(0))


def test_inplace_shape_mismatch_raises():
    y = dualad.ones(3) + 0
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        y.add_(dualad.ones(2, 3))


# ------------------------------------------------------------------ forward-mode tangents


def test_inplace_updates_tangents():
    from dualad import fwd

    with fwd.dual_level():
        # in-place on a dual mutates the user's tangent object, the primal gets no tangent (V1)
        foo, bar = dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, 4.0])
        dual = fwd.make_dual(foo, bar)
        dual *= 2
        assert fwd.unpack_dual(foo).tangent is None
        assert_equal(bar, [6.0, 8.0])
        assert_equal(fwd.unpack_dual(dual).tangent, [6.0, 8.0])

        # through a view: the base's tangent region changes (V3)
        foo, bar = dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 1.0])
        dual = fwd.make_dual(foo, bar)
        view = dual.narrow(0, 0, 1)
        view *= 2
        assert_equal(fwd.unpack_dual(dual).tangent, [2.0, 1.0])
        assert_equal(fwd.unpack_dual(view).tangent, [2.0])

        # a plain tensor acquires a tangent through += and setitem; detach() aliases do not
        # give their source one (V6)
        y = dualad.zeros(2)
        y += dual
        assert_equal(fwd.unpack_dual(y).tangent, [2.0, 1.0])
        z = dualad.zeros(3)
        z[1:] = dual
        assert_equal(fwd.unpack_dual(z).tangent, [0.0, 2.0, 1.0])
        baz = dualad.rand(2)
        alias = baz.detach()
        alias += dual
        assert fwd.unpack_dual(baz).tangent is None

        # in-place into a transposed view of a plain base gives the base a tangent whose
        # transpose is the view's (V7)
        base = dualad.zeros(2, 2)
        view = base.t()
        d2 = fwd.make_dual(dualad.ones(2, 2), dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
        view.copy_(d2)
        assert_equal(fwd.unpack_dual(base).tangent, [[1.0, 3.0], [2.0, 4.0]])
        view *= 2
        primal, tangent = fwd.unpack_dual(base)
        assert_equal(primal, np.full((2, 2), 2.0))
        assert_equal(tangent, [[2.0, 6.0], [4.0, 8.0]])

        # zero_ zeroes the tangent
        dual.zero_()
        assert_equal(fwd.unpack_dual(dual).tangent, [0.0, 0.0])
