"""The Tensor's Python surface: attributes, conversions, repr, pickling, operators' basics."""

import copy
import operator
import pickle
import warnings

import numpy as np
import pytest

import dualad

NUMPY_GRAD_ERROR = (
    r"Can't call numpy\(\) on Tensor that requires grad\. "
    r"Use tensor\.detach\(\)\.numpy\(\) instead\."
)


# ---------------------------------------------------------------------------------------------
# attributes


def test_array_attributes():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = dualad.tensor(a)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
    assert t.ndim == 3 and t.dim() == 3
    assert t.dtype == dualad.float64 and t.device == "cpu"
    assert t.numel() == 24 and t.nelement() == 24 and isinstance(t.numel(), int)
    assert t.element_size() == 8
    assert t.size() == (2, 3, 4)
    assert (t.size(0), t.size(1), t.size(-1), t.size(-3)) == (2, 3, 4, 2)
    assert t.is_floating_point() and not t.is_complex()
    assert dualad.tensor([1j]).is_complex()
    assert dualad.tensor(1.0).shape == () and dualad.tensor(1.0).numel() == 1


@pytest.mark.parametrize("dim", [3, -4])
def test_size_dim_out_of_range(dim):
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of"):
        dualad.zeros(2, 3, 4).size(dim)


def test_transposes():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = dualad.tensor(a)
    np.testing.assert_array_equal(t.T.numpy(), a.transpose(2, 1, 0))
    np.testing.assert_array_equal(t.mT.numpy(), a.swapaxes(-1, -2))
    m = dualad.tensor(a[0])
    np.testing.assert_array_equal(m.T.numpy(), a[0].T)
    np.testing.assert_array_equal(m.mT.numpy(), a[0].T)
    v = dualad.tensor([1.0, 2.0])
    assert v.T.shape == (2,)
    with pytest.raises(RuntimeError, match="mT"):
        _ = v.mT
    # they are views: writes show through
    t.T[0, 0, 0] = 100.0
    assert t[0, 0, 0].item() == 100.0


def test_transpose_is_differentiable():
    a = np.arange(6.0).reshape(2, 3)
    x = dualad.tensor(a, requires_grad=True)
    weights = dualad.tensor(np.arange(6.0).reshape(3, 2))
    (x.T * weights).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0).reshape(3, 2).T)


def test_autograd_attributes_of_leaf_and_result():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
    assert not x.retains_grad and x._version == 0 and x._base is None
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    assert y.grad_fn.name() == "MulBackward0"
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 1.0])
    plain = dualad.tensor([1.0])
    assert not plain.requires_grad and plain.is_leaf and plain.grad_fn is None


def test_non_leaf_grad_access_warns():
    x = dualad.tensor([1.0], requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor"):
        assert y.grad is None


def test_requires_grad_setter():
    x = dualad.tensor([1.0])
    x.requires_grad = True
    assert x.requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype"):
        dualad.tensor([1]).requires_grad_()
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        (x * 2).requires_grad_(False)


def test_version_and_base():
    x = dualad.zeros(4)
    view = x[1:3]
    assert view._base is x and x._base is None
    reshaped = x.reshape(2, 2)
    assert reshaped._base is x
    before = x._version
    view.add_(1.0)
    assert x._version == before + 1 == view._version
    np.testing.assert_array_equal(x.numpy(), [0.0, 1.0, 1.0, 0.0])


def test_data_attribute():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.numpy(), x.detach().numpy())
    d[0] = 10.0
    assert x.detach()[0].item() == 10.0
    x.data = dualad.tensor([5.0, 6.0])
    np.testing.assert_array_equal(x.detach().numpy(), [5.0, 6.0])
    assert x.requires_grad


# ---------------------------------------------------------------------------------------------
# item, tolist, numpy, np.asarray


def test_item_and_tolist():
    assert dualad.tensor([3.5]).item() == 3.5
    assert isinstance(dualad.tensor([[2]]).item(), int)
    assert dualad.tensor(True).item() is True
    assert dualad.tensor(1 + 2j).item() == 1 + 2j
    assert dualad.tensor(2.0, requires_grad=True).item() == 2.0
    with pytest.raises(
        RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"
    ):
        dualad.tensor([1.0, 2.0]).item()
    assert dualad.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert dualad.tensor(1.5).tolist() == 1.5
    values = dualad.tensor([1.0, 2.0], requires_grad=True).tolist()
    assert values == [1.0, 2.0] and isinstance(values[0], float)


def test_numpy_shares_memory_and_refuses_requires_grad():
    t = dualad.tensor([1.0, 2.0])
    a = t.numpy()
    assert type(a) is np.ndarray
    a[0] = 9.0
    assert t[0].item() == 9.0
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=NUMPY_GRAD_ERROR):
        x.numpy()
    with pytest.raises(RuntimeError, match=NUMPY_GRAD_ERROR):
        (x * 2).numpy()
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0])
    with dualad.no_grad():
        np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(x.numpy(force=True), [1.0, 2.0])


def test_np_asarray():
    t = dualad.tensor([1.0, 2.0])
    a = np.asarray(t)
    assert type(a) is np.ndarray and np.shares_memory(a, t.numpy())
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float32), np.array([1, 2], np.float32))
    copied = np.array(t)
    assert not np.shares_memory(copied, t.numpy())
    np.testing.assert_array_equal(copied, [1.0, 2.0])
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(x)
    with dualad.no_grad():
        assert np.shares_memory(np.asarray(x), x.detach().numpy())


# ---------------------------------------------------------------------------------------------
# Python protocol


def test_len_and_iteration():
    t = dualad.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, dualad.Tensor) for r in rows)
    np.testing.assert_array_equal(rows[2].numpy(), [5.0, 6.0])
    assert [v.item() for v in dualad.tensor([7, 8])] == [7, 8]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(dualad.tensor(1.0))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(dualad.tensor(1.0))
    assert list(dualad.zeros(0, 2)) == []


def test_iteration_is_differentiable():
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    total = None
    for i, row in enumerate(x):
        term = (row * (i + 1)).sum()
        total = term if total is None else total + term
    total.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 1.0], [2.0, 2.0]])


def test_bool():
    assert bool(dualad.tensor([1.0])) is True
    assert bool(dualad.tensor(0.0)) is False
    assert bool(dualad.tensor([[True]]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value"):
        bool(dualad.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values"):
        bool(dualad.zeros(0))
    x = dualad.tensor([1.0, 2.0])
    assert (x > 1).any() and not (x > 5).any()
    if x[0] < x[1]:
        pass
    else:
        pytest.fail("tensor comparison in an if statement")


def test_float_int_complex_index():
    assert float(dualad.tensor([2.5])) == 2.5
    assert float(dualad.tensor(3)) == 3.0
    assert int(dualad.tensor([2.7])) == 2 and int(dualad.tensor(-2.7)) == -2
    assert complex(dualad.tensor(1 + 2j)) == 1 + 2j
    assert float(dualad.tensor(1.5, requires_grad=True) * 2) == 3.0
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        float(dualad.tensor([1.0, 2.0]))
    items = list(range(10))
    assert items[dualad.tensor(3)] == 3
    assert items[dualad.tensor([2]) : dualad.tensor(5)] == [2, 3, 4]
    assert operator.index(dualad.tensor(4, dtype=dualad.int32)) == 4
    assert hex(dualad.tensor(255)) == "0xff"
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        items[dualad.tensor(1.0)]
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        operator.index(dualad.tensor([1, 2]))


def test_hash_is_identity():
    a = dualad.tensor([1.0, 2.0])
    b = dualad.tensor([1.0, 2.0])
    assert hash(a) == hash(a) and hash(a) != hash(b)
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b"
    assert a in {a} and b not in {a}
    x = dualad.tensor([1.0], requires_grad=True)
    grads = {x: 0}
    grads[x] += 1
    assert grads[x] == 1


def test_comparison_operators_return_bool_tensors():
    x = dualad.tensor([1.0, 2.0, 3.0])
    y = dualad.tensor([3.0, 2.0, 1.0])
    np_x, np_y = x.numpy(), y.numpy()
    cases = [
        (x < y, np_x < np_y),
        (x <= y, np_x <= np_y),
        (x > y, np_x > np_y),
        (x >= y, np_x >= np_y),
        (x == y, np_x == np_y),
        (x != y, np_x != np_y),
        (x > 1.5, np_x > 1.5),
        (2 < x, 2 < np_x),  # noqa: SIM300 (the reflected operator is the point)
        (x == 2, np_x == 2),
        (dualad.tensor([1, 2]) == dualad.tensor([1.0, 3.0]), np.array([True, False])),
    ]
    for out, expected in cases:
        assert isinstance(out, dualad.Tensor) and out.dtype == dualad.bool
        np.testing.assert_array_equal(out.numpy(), expected)


def test_comparisons_of_grad_tensors_do_not_require_grad():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    assert not (x > 1.5).requires_grad
    assert not (x == x).requires_grad
    assert not dualad.isnan(x).requires_grad


def test_clone_and_detach():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn is not None and c.grad_fn.name() == "CloneBackward0"
    assert not np.shares_memory(c.detach().numpy(), x.detach().numpy())
    (c * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert np.shares_memory(d.numpy(), x.detach().numpy())
    d.add_(1.0)  # shares the version counter with x
    assert x._version == d._version == 1
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 3.0])
    plain = dualad.tensor([1, 2])
    copy_ = plain.clone()
    copy_[0] = 5
    assert plain.tolist() == [1, 2] and copy_.tolist() == [5, 2]


# ---------------------------------------------------------------------------------------------
# conversions between dtypes and devices


def test_to_dtype_methods():
    x = dualad.tensor([1.5, -2.5])
    for method, dtype in [
        ("float", dualad.float32),
        ("double", dualad.float64),
        ("half", dualad.float16),
        ("long", dualad.int64),
        ("int", dualad.int32),
        ("bool", dualad.bool),
        ("cfloat", dualad.complex64),
        ("cdouble", dualad.complex128),
    ]:
        out = getattr(x, method)()
        assert out.dtype == dtype, method
        np.testing.assert_array_equal(out.numpy(), x.numpy().astype(dtype))
    assert x.double() is x  # no copy when nothing changes, as in PyTorch
    assert x.to(dualad.float64) is x
    copied = x.to(dualad.float64, copy=True)
    assert copied is not x and not np.shares_memory(copied.numpy(), x.numpy())


def test_to_forms():
    x = dualad.tensor([1.0, 2.0])
    assert x.to(dualad.float32).dtype == dualad.float32
    assert x.to(dtype=dualad.float32).dtype == dualad.float32
    assert x.to("cpu", dualad.float32).dtype == dualad.float32
    assert x.to(device="cpu", dtype=np.float16).dtype == dualad.float16
    assert x.to(dualad.zeros(1, dtype=dualad.int32)).dtype == dualad.int32
    assert x.to(dualad.Device("cpu")) is x


def test_to_is_differentiable():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    y = x.to(dualad.float32)
    assert y.grad_fn is not None and y.dtype == dualad.float32
    (y * y).sum().backward()
    assert x.grad.dtype == dualad.float64
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    z = dualad.tensor([1.0, 2.0], requires_grad=True)
    assert not z.long().requires_grad  # integer results leave the graph


# ---------------------------------------------------------------------------------------------
# repr


@pytest.mark.parametrize(
    "make, text",
    [
        (lambda: dualad.tensor([1.0, 2.0]), "tensor([1., 2.])"),
        (lambda: dualad.tensor([1.0], requires_grad=True), "tensor([1.], requires_grad=True)"),
        (
            lambda: dualad.tensor([1.0], requires_grad=True) * 2,
            "tensor([2.], grad_fn=<MulBackward0>)",
        ),
        (
            lambda: dualad.tensor([1.0, 2.0], dtype=dualad.float32),
            "tensor([1., 2.], dtype=float32)",
        ),
        (lambda: dualad.tensor(1.5), "tensor(1.5)"),
        (lambda: dualad.tensor(1.5, dtype=dualad.float32), "tensor(1.5, dtype=float32)"),
        (lambda: dualad.tensor([1, 2]), "tensor([1, 2])"),
        (lambda: dualad.tensor([1, 2], dtype=dualad.int32), "tensor([1, 2], dtype=int32)"),
        (lambda: dualad.tensor([True, False]), "tensor([ True, False])"),
        (lambda: dualad.tensor([1 + 2j]), "tensor([1.+2.j])"),
        (lambda: dualad.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
        (lambda: dualad.zeros(0), "tensor([])"),
        (lambda: dualad.zeros(0, 3), "tensor([], size=(0, 3))"),
        (
            lambda: dualad.tensor([1.0], dtype=dualad.float32, requires_grad=True),
            "tensor([1.], dtype=float32, requires_grad=True)",
        ),
    ],
)
def test_repr(make, text):
    assert repr(make()) == text
    assert str(make()) == text


def test_repr_with_float32_default(float32_default):
    assert repr(dualad.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(dualad.tensor([1.0], dtype=dualad.float64)) == "tensor([1.], dtype=float64)"
    assert repr(dualad.tensor([1j])) == "tensor([0.+1.j])"


def test_repr_of_large_tensor_is_summarised():
    text = repr(dualad.arange(10000))
    assert text.startswith("tensor([   0,    1,    2, ...") and len(text) < 100


# ---------------------------------------------------------------------------------------------
# pickling and copying


@pytest.mark.parametrize(
    "make",
    [
        lambda: dualad.tensor([1.0, 2.0], requires_grad=True),
        lambda: dualad.tensor([[1.0, 2.0]], dtype=dualad.float32),
        lambda: dualad.tensor([1, 2, 3]),
        lambda: dualad.tensor(2.5 - 1j),
        lambda: dualad.zeros(0, 2),
    ],
)
def test_pickle_round_trip(make):
    t = make()
    loaded = pickle.loads(pickle.dumps(t))
    assert isinstance(loaded, dualad.Tensor) and loaded is not t
    assert loaded.dtype == t.dtype and loaded.shape == t.shape
    assert loaded.requires_grad == t.requires_grad and loaded.is_leaf
    np.testing.assert_array_equal(loaded.detach().numpy(), t.detach().numpy())
    assert not np.shares_memory(loaded.detach().numpy(), t.detach().numpy())


def test_pickled_leaf_is_trainable():
    x = pickle.loads(pickle.dumps(dualad.tensor([1.0, 3.0], requires_grad=True)))
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 6.0])


def test_pickle_of_result_gives_leaf():
    y = dualad.tensor([1.0], requires_grad=True) * 2
    loaded = pickle.loads(pickle.dumps(y))
    assert loaded.is_leaf and loaded.requires_grad and loaded.grad_fn is None
    assert loaded.item() == 2.0


def test_deepcopy_of_leaf():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    clone = copy.deepcopy(x)
    assert clone is not x and clone.requires_grad and clone.is_leaf
    np.testing.assert_array_equal(clone.detach().numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(clone.grad.numpy(), [3.0, 3.0])
    clone.detach()[0] = 10.0
    clone.grad.zero_()
    assert x.detach()[0].item() == 1.0 and x.grad[0].item() == 3.0
    # shared references stay shared inside one deepcopy
    pair = copy.deepcopy([x, x])
    assert pair[0] is pair[1]
    plain = copy.deepcopy(dualad.tensor([1, 2]))
    assert plain.tolist() == [1, 2] and not plain.requires_grad


def test_deepcopy_of_non_leaf_raises():
    y = dualad.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(y)


def test_no_warnings_from_basic_api():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = dualad.tensor([1.0, 2.0], requires_grad=True)
        repr(t), t.shape, t.dtype, t.device, t.is_leaf, t.grad, len(t), t.size(0)
