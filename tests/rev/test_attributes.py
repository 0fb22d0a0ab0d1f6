"""Tensor autograd attributes, ported from PyTorch's test_autograd.py.

Spec: spec/reverse.md §2 (ATTR-*). Each test names the seed test it ports.
"""

import pickle
import warnings

import numpy as np
import pytest

import dualad


def value(t):
    return t.detach().numpy()


def assert_equal(actual, expected, rtol=1e-7):
    actual = value(actual) if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    expected = value(expected) if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol)


def test_tensor_grad_warnings():
    dummy = dualad.empty(1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        # accessing .grad on a leaf: no warning
        dummy.requires_grad_()
        _ = dummy.grad
        assert len(w) == 0
        # on a non-leaf: one warning
        dummy = dummy.clone()
        _ = dummy.grad
        assert len(w) == 1
        # on a non-leaf that retains grad: none
        dummy.retain_grad()
        _ = dummy.grad
        assert len(w) == 1


def test_requires_grad():
    x = dualad.randn(5, 5)
    y = dualad.randn(5, 5)
    z = dualad.randn(5, 5, requires_grad=True)
    a = x + y
    assert not a.requires_grad
    b = a + z
    assert b.requires_grad
    b.backward(dualad.ones(5, 5))
    assert_equal(z.grad, np.ones((5, 5)))
    assert x.grad is None and y.grad is None and a.grad is None


def test_requires_grad_stable_over_calls():
    # seed 000 test_requires_grad_outputs: relu of non-requiring inputs stays non-requiring
    a = dualad.randn(3)
    b = dualad.randn(3)
    c = dualad.randn(3, requires_grad=True)
    for _ in range(4):
        assert not (dualad.relu(a) + dualad.relu(b)).requires_grad
        assert dualad.relu(c).requires_grad


def test_requires_grad_():
    x = dualad.randn(5, 5)
    y = dualad.randn(5, 5, requires_grad=True)
    assert x is x.requires_grad_()
    assert x.requires_grad
    assert y is y.requires_grad_()
    assert y.requires_grad
    assert x is x.requires_grad_(True)
    assert x.requires_grad
    assert y is y.requires_grad_(True)
    assert y.requires_grad
    z = x * y
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        z.requires_grad_(False)
    assert z is z.requires_grad_()
    assert z.requires_grad
    assert z is z.requires_grad_(True)
    assert z.requires_grad
    assert x is x.requires_grad_(False)
    assert not x.requires_grad
    assert y is y.requires_grad_(False)
    assert not y.requires_grad


@pytest.mark.parametrize(
    "dtype",
    [
        dualad.float32,
        dualad.float64,
        dualad.complex128,
        dualad.int8,
        dualad.int16,
        dualad.int32,
        dualad.int64,
        dualad.bool_,
    ],
)
def test_set_requires_grad_only_for_floats(dtype):
    def f1():
        a = dualad.ones(1, dtype=dtype)
        a.requires_grad_()

    def f2():
        a = dualad.ones(1, dtype=dtype)
        a.requires_grad = True

    def f3():
        dualad.ones(1, dtype=dtype, requires_grad=True)

    a = dualad.ones(1, dtype=dtype)
    a.requires_grad = False  # always works
    a.requires_grad_(False)
    for f in [f1, f2, f3]:
        if np.dtype(dtype).kind in "fc":
            f()
        else:
            with pytest.raises(RuntimeError, match="floating point"):
                f()


def test_is_leaf_and_grad_fn():
    x = dualad.randn(3, requires_grad=True)
    assert x.is_leaf and x.grad_fn is None
    y = x * 2
    assert not y.is_leaf and y.grad_fn is not None
    with dualad.no_grad():
        w = x * 2
    assert w.is_leaf and w.grad_fn is None and not w.requires_grad
    plain = dualad.randn(3)
    assert plain.is_leaf and not plain.requires_grad
    assert (plain * 2).is_leaf
    d = y.detach()
    assert d.is_leaf and d.grad_fn is None and not d.requires_grad


def test_numpy_requires_grad():
    x = dualad.randn(2, 2, requires_grad=True)
    err = r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead."
    with pytest.raises(RuntimeError, match=err):
        x.numpy()
    with dualad.no_grad():
        x.numpy()
    x = dualad.randn(2, 2)
    x.numpy()
    with dualad.no_grad():
        x.numpy()


def test_grad_assignment():
    x = dualad.randn(5, 5)
    with pytest.raises(TypeError, match="expected to be a Tensor or None"):
        x.grad = 0
    with pytest.raises(RuntimeError):
        x.grad = dualad.randn(2, 2)
    with pytest.raises(RuntimeError):
        x.grad = dualad.zeros((5, 5), dtype=dualad.int64)
    with pytest.raises(RuntimeError):
        x.grad = x
    g = dualad.randn(5, 5)
    x.grad = g
    assert x.grad is g
    x.grad = None
    assert x.grad is None


def test_attribute_deletion():
    x = dualad.randn(5, 5, requires_grad=True)
    del x.grad
    assert x.grad is None
    with pytest.raises(RuntimeError):
        del x.data
    with pytest.raises(TypeError):
        x.data = None
    with pytest.raises(RuntimeError):
        del x.requires_grad
    with pytest.raises(RuntimeError):
        del x._grad_fn
    with pytest.raises(RuntimeError):
        del x._backward_hooks


def test_set_data_preserve_pyobj():
    a = dualad.randn(1, 2)
    b = dualad.randn(1, 2)
    b_id_saved = id(b)
    b.data = a
    assert b_id_saved == id(b)
    assert_equal(b, a)


def test_set_data_self_requires_grad():
    a = dualad.tensor(1.0, requires_grad=True)
    b = dualad.tensor(2.0)
    c = dualad.tensor(3, dtype=dualad.int64)
    a.data = b
    assert a.item() == 2.0 and a.requires_grad
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        a.data = c


def test_autograd_print_tensor():
    # (the custom-Function and no_grad-view parts need other issues)
    a = dualad.ones(1, requires_grad=True)
    a_clone = a.clone()
    assert repr(a) == "tensor([1.], requires_grad=True)"
    assert repr(a_clone) == "tensor([1.], grad_fn=<CloneBackward0>)"
    assert repr(a * 2) == "tensor([2.], grad_fn=<MulBackward0>)"
    assert repr(dualad.ones(1)) == "tensor([1.])"


@pytest.mark.parametrize("protocol", [0, 1, 2, pickle.HIGHEST_PROTOCOL])
def test_pickle(protocol):
    x = dualad.randn(10, 10, requires_grad=True)
    y = dualad.randn(10, 10, requires_grad=False)
    xc, yc = pickle.loads(pickle.dumps([x, y], protocol=protocol))
    for original, copy in ((x, xc), (y, yc)):
        assert_equal(copy, original)
        assert copy.requires_grad == original.requires_grad
        assert copy.is_leaf


def test_shape():
    x = dualad.randn(3, 4)
    assert len(x.shape) == 2
    assert x.shape[0] == 3
    assert x.shape[1] == 4


def test_dir():
    x = dualad.randn(10, 10)
    keys = dir(x)
    assert "shape" in keys
    for key in ("grad", "requires_grad", "grad_fn", "is_leaf", "backward", "retain_grad"):
        assert key in keys
    for key in keys:
        if key == "imag":  # a real tensor has no imaginary part (PyTorch raises too)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                getattr(x, key)
            except RuntimeError:
                pytest.fail(f"dir() lists {key!r} but getattr raises")


def test_calculate_shape_util():
    from dualad.autograd import _calculate_shape

    out = dualad.randn(10, 5, requires_grad=True)
    grad = dualad.randn(5, 10, requires_grad=True)
    out_shape, grad_shape = _calculate_shape(out, grad, False)
    assert out_shape == (10, 5)
    assert grad_shape == (5, 10)
    out_shape, grad_shape = _calculate_shape(out, dualad.randn(3, 10, 5), True)
    assert out_shape == (10, 5)
    assert grad_shape == (10, 5)


def test_retain_grad_requires_grad():
    with pytest.raises(
        RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"
    ):
        dualad.randn(2).retain_grad()


def test_retain_grad_create_graph_keeps_graph():
    x = dualad.randn(3, requires_grad=True)
    h = x * x
    h.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (h * 3).sum().backward(create_graph=True)
    assert_equal(h.grad, 3 * np.ones(3))
    assert_equal(x.grad, 6 * value(x))
    assert x.grad.requires_grad


def test_detach():
    x = dualad.randn(10, 10, requires_grad=True)
    y = x + 2
    y = y.detach()
    z = y * 4 + 2
    assert not y.requires_grad
    assert not z.requires_grad

    x = dualad.randn(10, 10, requires_grad=True)
    y = x * 2
    y = y.detach()
    assert not y.requires_grad
    assert y.grad_fn is None
    z = x + y
    z.sum().backward()
    assert_equal(x.grad, np.ones((10, 10)))

    x = dualad.randn(10, 10, requires_grad=True)
    y = dualad.randn(10, 10, requires_grad=True)
    a = x * 2
    (y + a).sum().backward(retain_graph=True)
    a.detach_()
    assert not a.requires_grad
    (y + a).sum().backward()  # this does not backprop to x
    assert_equal(x.grad, np.ones((10, 10)) * 2)
    assert_equal(y.grad, np.ones((10, 10)) * 2)

    view = x.narrow(0, 1, 4)
    with pytest.raises(RuntimeError, match="view"):
        view.detach_()


def test_detach_shares_data_and_version():
    x = dualad.randn(3, requires_grad=True)
    d = x.detach()
    assert np.shares_memory(value(d), value(x))
    assert d._version == x._version
    with dualad.no_grad():
        d.add_(1)
    assert d._version == x._version
