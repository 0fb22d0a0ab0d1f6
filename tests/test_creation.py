"""Creating tensors: tensor/as_tensor/from_numpy, dtype inference, factories, random numbers."""

import numpy as np
import pytest

import dualad
from dualad import _creation

INT_GRAD_ERROR = "only Tensors of floating point and complex dtype can require gradients"


def assert_tensor(t, expected, dtype=None):
    assert isinstance(t, dualad.Tensor)
    expected = np.asarray(expected)
    assert t.shape == expected.shape
    if dtype is not None:
        assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), expected)


# ---------------------------------------------------------------------------------------------
# tensor / as_tensor / from_numpy: copies and shared memory


def test_tensor_copies_numpy_array():
    a = np.array([1.0, 2.0, 3.0])
    t = dualad.tensor(a)
    a[0] = 100.0
    assert_tensor(t, [1.0, 2.0, 3.0], dualad.float64)
    assert not np.shares_memory(t.numpy(), a)


def test_tensor_copies_tensor_and_detaches():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    y = dualad.tensor(x)
    assert not y.requires_grad and y.is_leaf
    assert not np.shares_memory(y.numpy(), x.detach().numpy())
    y.numpy()[0] = 5.0
    assert x.detach().numpy()[0] == 1.0


def test_tensor_copies_array_subclass_and_arraylike():
    base = np.arange(4.0)
    t = dualad.tensor(base.view(np.matrix))
    base[0] = 9.0
    assert type(t.numpy()) is np.ndarray
    np.testing.assert_array_equal(t.numpy(), [[0.0, 1.0, 2.0, 3.0]])
    buffer = np.arange(3.0)
    t = dualad.tensor(memoryview(buffer))
    buffer[0] = 9.0
    assert_tensor(t, [0.0, 1.0, 2.0], dualad.float64)


def test_as_tensor_shares_memory_with_matching_array():
    a = np.array([1.0, 2.0])
    t = dualad.as_tensor(a)
    a[1] = 7.0
    assert_tensor(t, [1.0, 7.0])
    t.numpy()[0] = -1.0
    assert a[0] == -1.0


def test_as_tensor_converts_when_dtype_differs():
    a = np.array([1.5, 2.5])
    t = dualad.as_tensor(a, dtype=dualad.float32)
    assert t.dtype == dualad.float32
    a[0] = 100.0
    np.testing.assert_array_equal(t.numpy(), np.array([1.5, 2.5], np.float32))


def test_as_tensor_returns_tensor_itself_and_keeps_graph_on_cast():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    assert dualad.as_tensor(x) is x
    y = dualad.as_tensor(x, dtype=dualad.float32)
    assert y.dtype == dualad.float32 and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert x.grad.dtype == dualad.float64


def test_as_tensor_of_lists_and_scalars():
    assert_tensor(dualad.as_tensor([1.0, 2.0]), [1.0, 2.0], dualad.float64)
    assert_tensor(dualad.as_tensor(3), 3, dualad.int64)


def test_from_numpy_shares_memory_both_ways():
    a = np.zeros((2, 2), dtype=np.float32)
    t = dualad.from_numpy(a)
    assert t.dtype == dualad.float32
    a[0, 0] = 3.0
    assert t[0, 0].item() == 3.0
    t.numpy()[1, 1] = 4.0
    assert a[1, 1] == 4.0
    assert np.shares_memory(t.numpy(), a)


def test_from_numpy_keeps_int_dtype_and_0d():
    t = dualad.from_numpy(np.array(5, dtype=np.int32))
    assert t.shape == () and t.dtype == dualad.int32 and t.item() == 5


def test_from_numpy_rejects_non_arrays_and_object_arrays():
    with pytest.raises(TypeError, match=r"expected np\.ndarray"):
        dualad.from_numpy([1.0, 2.0])
    with pytest.raises(TypeError, match=r"can't convert np\.ndarray of type object"):
        dualad.from_numpy(np.array([object()]))


def test_tensor_from_numpy_keeps_array_dtype_even_with_float32_default(float32_default):
    assert dualad.tensor(np.array([1.0])).dtype == dualad.float64
    assert dualad.tensor(np.array([1], dtype=np.int32)).dtype == dualad.int32


# ---------------------------------------------------------------------------------------------
# dtype inference


@pytest.mark.parametrize(
    "data, dtype",
    [
        (1.5, np.float64),
        (3, np.int64),
        (True, np.bool_),
        (1 + 2j, np.complex128),
        ([1.0, 2.0], np.float64),
        ([1, 2], np.int64),
        ([True, False], np.bool_),
        ([1j, 2], np.complex128),
        ([1, 2.5], np.float64),
        ([True, 2], np.int64),
        ([[1, 2], [3, 4]], np.int64),
        ((1, 2.0), np.float64),
        ([], np.float64),
        ([[], []], np.float64),
        (np.float32(1.5), np.float32),
        (np.int32(3), np.int32),
        (np.float64(1.5), np.float64),
        ([np.float32(1.0), np.float32(2.0)], np.float32),
        ([1, np.float32(2.0)], np.float32),  # torch: int64 with float32 promotes to float32
        ([np.int32(1), np.int32(2)], np.int32),
    ],
)
def test_dtype_inference(data, dtype):
    t = dualad.tensor(data)
    assert t.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(t.numpy(), np.asarray(data, dtype=dtype))


def test_float32_default_dtype_changes_python_floats_and_complex(float32_default):
    assert dualad.get_default_dtype() == dualad.float32
    assert dualad.tensor(1.5).dtype == dualad.float32
    assert dualad.tensor([1.0, 2.0]).dtype == dualad.float32
    assert dualad.tensor([1, 2.5]).dtype == dualad.float32
    assert dualad.tensor([]).dtype == dualad.float32
    assert dualad.tensor(1j).dtype == dualad.complex64
    assert dualad.tensor([1.0, 2j]).dtype == dualad.complex64
    assert dualad.tensor([1, 2]).dtype == dualad.int64
    assert dualad.tensor(np.float64(1.5)).dtype == dualad.float64  # NumPy scalars keep theirs
    assert dualad.zeros(2).dtype == dualad.float32
    assert dualad.ones(2).dtype == dualad.float32
    assert dualad.eye(2).dtype == dualad.float32
    assert dualad.rand(2).dtype == dualad.float32
    assert dualad.randn(2).dtype == dualad.float32
    assert dualad.full((2,), 1.5).dtype == dualad.float32
    assert dualad.arange(0.0, 1.0, 0.5).dtype == dualad.float32
    assert dualad.linspace(0, 1, 3).dtype == dualad.float32
    assert dualad.linspace(0, 1j, 3).dtype == dualad.complex64
    np.testing.assert_array_equal(dualad.tensor([0.1]).numpy(), np.array([0.1], np.float32))


def test_explicit_dtype_wins():
    assert_tensor(dualad.tensor([1.7, -2.2], dtype=dualad.int64), [1, -2], dualad.int64)
    assert dualad.tensor([1, 2], dtype=dualad.float32).dtype == dualad.float32
    assert dualad.tensor([1, 2], dtype="float16").dtype == dualad.float16
    assert dualad.tensor([1, 2], dtype=np.complex64).dtype == dualad.complex64
    assert dualad.tensor([1], dtype=float).dtype == dualad.float64
    assert dualad.tensor([1.0], dtype=int).dtype == dualad.int64
    assert dualad.tensor([1.0], dtype=bool).dtype == dualad.bool


def test_nested_lists_of_tensors():
    rows = [dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, 4.0])]
    assert_tensor(dualad.tensor(rows), [[1.0, 2.0], [3.0, 4.0]], dualad.float64)
    scalars = [dualad.tensor(1.0), dualad.tensor(2.0), 3.0]
    assert_tensor(dualad.tensor(scalars), [1.0, 2.0, 3.0], dualad.float64)
    f32 = [dualad.tensor([1.0], dtype=dualad.float32), dualad.tensor([2.0], dtype=dualad.float32)]
    assert dualad.tensor(f32).dtype == dualad.float32
    ints = [[dualad.tensor(1), 2], [3, dualad.tensor(4)]]
    assert_tensor(dualad.tensor(ints), [[1, 2], [3, 4]], dualad.int64)


def test_list_of_tensors_that_require_grad_gives_detached_copy():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    t = dualad.tensor([x, x * 2])
    assert not t.requires_grad and t.grad_fn is None
    assert_tensor(t, [[1.0, 2.0], [2.0, 4.0]])


def test_tensor_requires_grad():
    t = dualad.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    t = dualad.tensor(1.0, dtype=dualad.complex64, requires_grad=True)
    assert t.requires_grad
    with pytest.raises(RuntimeError, match=INT_GRAD_ERROR):
        dualad.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match=INT_GRAD_ERROR):
        dualad.tensor([True], requires_grad=True)


@pytest.mark.parametrize(
    "data, error, match",
    [
        ([[1, 2], [3]], ValueError, "ragged"),
        ("abc", TypeError, "cannot make a tensor from str"),
        (None, TypeError, "cannot make a tensor"),
        ([1, "a"], TypeError, "cannot make a tensor"),
        ({"a": 1}, TypeError, "cannot make a tensor"),
    ],
)
def test_tensor_bad_data(data, error, match):
    with pytest.raises(error, match=match):
        dualad.tensor(data)


def test_tensor_bad_dtype():
    with pytest.raises(TypeError, match="not a dtype"):
        dualad.tensor([1.0], dtype="nonsense")
    with pytest.raises(TypeError, match="cannot hold dtype"):
        dualad.tensor([1.0], dtype="U3")


# ---------------------------------------------------------------------------------------------
# factories


@pytest.mark.parametrize(
    "factory, value", [(dualad.zeros, 0.0), (dualad.ones, 1.0), (dualad.empty, None)]
)
def test_fill_factories_sizes(factory, value):
    for args, kwargs in [
        ((2, 3), {}),
        (((2, 3),), {}),
        (([2, 3],), {}),
        ((), {"size": (2, 3)}),
        ((np.int64(2), 3), {}),
        ((dualad.tensor([2, 3]),), {}),
    ]:
        t = factory(*args, **kwargs)
        assert t.shape == (2, 3) and t.dtype == dualad.float64 and not t.requires_grad
        if value is not None:
            np.testing.assert_array_equal(t.numpy(), np.full((2, 3), value))
    assert factory(4).shape == (4,)
    assert factory(()).shape == ()
    assert factory(0, 3).shape == (0, 3)


@pytest.mark.parametrize("factory", [dualad.zeros, dualad.ones, dualad.empty, dualad.rand])
def test_factory_keywords(factory):
    t = factory(2, dtype=dualad.float32, device="cpu", requires_grad=True)
    assert t.dtype == dualad.float32 and t.device == "cpu"
    assert t.requires_grad and t.is_leaf
    t = factory(2, dtype=dualad.complex128, requires_grad=True)
    assert t.dtype == dualad.complex128 and t.requires_grad


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: dualad.zeros(2, dtype=dualad.int64, **kw),
        lambda **kw: dualad.ones(2, dtype=dualad.int32, **kw),
        lambda **kw: dualad.empty(2, dtype=dualad.bool, **kw),
        lambda **kw: dualad.full((2,), 3, **kw),
        lambda **kw: dualad.arange(3, **kw),
        lambda **kw: dualad.eye(2, dtype=dualad.int64, **kw),
        lambda **kw: dualad.randint(0, 3, (2,), **kw),
        lambda **kw: dualad.zeros_like(dualad.tensor([1, 2]), **kw),
        lambda **kw: dualad.ones_like(dualad.tensor([1, 2]), **kw),
        lambda **kw: dualad.full_like(dualad.tensor([1, 2]), 5, **kw),
        lambda **kw: dualad.empty_like(dualad.tensor([1, 2]), **kw),
    ],
)
def test_requires_grad_on_integer_dtype_raises(make):
    assert not make().requires_grad
    with pytest.raises(RuntimeError, match=INT_GRAD_ERROR):
        make(requires_grad=True)


def test_bad_sizes():
    with pytest.raises(TypeError, match="must be a tuple of ints, but found element of type float"):
        dualad.zeros(2.0)
    with pytest.raises(TypeError, match="at pos 1"):
        dualad.ones((2, 2.5))
    with pytest.raises(TypeError, match="both positionally and as size="):
        dualad.zeros(2, size=(2,))
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        dualad.zeros(-1, 2)
    with pytest.raises(TypeError, match="must be a tuple of ints"):
        dualad.rand("2")


def test_full():
    assert_tensor(dualad.full((2, 3), 7), np.full((2, 3), 7), dualad.int64)
    assert_tensor(dualad.full((2,), 0.5), [0.5, 0.5], dualad.float64)
    assert_tensor(dualad.full((2,), True), [True, True], dualad.bool)
    assert_tensor(dualad.full((2,), 1j), [1j, 1j], dualad.complex128)
    assert_tensor(dualad.full(3, 2.0), [2.0, 2.0, 2.0])
    assert_tensor(dualad.full([1, 2], 2, dtype=dualad.float32), [[2.0, 2.0]], dualad.float32)
    assert_tensor(dualad.full((2,), dualad.tensor(4.0)), [4.0, 4.0], dualad.float64)
    assert_tensor(dualad.full((2,), np.float32(1.5)), [1.5, 1.5], dualad.float32)
    t = dualad.full((2,), 1.0, requires_grad=True)
    assert t.requires_grad


def test_eye():
    assert_tensor(dualad.eye(3), np.eye(3), dualad.float64)
    assert_tensor(dualad.eye(2, 3), np.eye(2, 3))
    assert_tensor(dualad.eye(3, 2, dtype=dualad.int32), np.eye(3, 2, dtype=np.int32), dualad.int32)
    assert dualad.eye(0).shape == (0, 0)
    with pytest.raises(TypeError, match="argument 'n' must be an int"):
        dualad.eye(2.0)
    with pytest.raises(RuntimeError, match="non-negative"):
        dualad.eye(-1)


def test_arange():
    assert_tensor(dualad.arange(4), [0, 1, 2, 3], dualad.int64)
    assert_tensor(dualad.arange(2, 5), [2, 3, 4], dualad.int64)
    assert_tensor(dualad.arange(5, 0, -2), [5, 3, 1], dualad.int64)
    assert_tensor(dualad.arange(0, 1, 0.25), [0.0, 0.25, 0.5, 0.75], dualad.float64)
    assert_tensor(dualad.arange(3.0), [0.0, 1.0, 2.0], dualad.float64)
    assert_tensor(dualad.arange(3, dtype=dualad.float32), [0.0, 1.0, 2.0], dualad.float32)
    assert_tensor(dualad.arange(dualad.tensor(3)), [0, 1, 2], dualad.int64)
    assert dualad.arange(0).shape == (0,)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        dualad.arange(0, 3, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        dualad.arange(0, 3, -1)


def test_linspace():
    assert_tensor(dualad.linspace(0, 1, 5), np.linspace(0, 1, 5), dualad.float64)
    assert_tensor(dualad.linspace(-1.0, 1.0, 1), [-1.0])
    assert dualad.linspace(0, 1, 0).shape == (0,)
    t = dualad.linspace(0, 2, 3, dtype=dualad.float32, requires_grad=True)
    assert t.dtype == dualad.float32 and t.requires_grad
    np.testing.assert_array_equal(t.detach().numpy(), [0.0, 1.0, 2.0])
    assert_tensor(dualad.linspace(0, 2j, 3), [0, 1j, 2j], dualad.complex128)


@pytest.mark.parametrize(
    "like, fill",
    [
        (dualad.zeros_like, 0),
        (dualad.ones_like, 1),
        (lambda t, **kw: dualad.full_like(t, 7, **kw), 7),
    ],
)
def test_like_factories(like, fill):
    src = dualad.tensor([[1.0, 2.0, 3.0]], dtype=dualad.float32, requires_grad=True)
    t = like(src)
    assert t.shape == (1, 3) and t.dtype == dualad.float32 and t.device == src.device
    assert not t.requires_grad  # never inherits requires_grad
    np.testing.assert_array_equal(t.numpy(), np.full((1, 3), fill, np.float32))
    t = like(src, dtype=dualad.int64)
    assert t.dtype == dualad.int64
    np.testing.assert_array_equal(t.numpy(), np.full((1, 3), fill))
    t = like(src, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    t = like(np.zeros(2, np.float32))  # array-likes are accepted
    assert t.shape == (2,) and t.dtype == dualad.float32


def test_empty_like_and_full_like_truncates_for_int():
    t = dualad.empty_like(dualad.zeros(2, 2, dtype=dualad.complex64))
    assert t.shape == (2, 2) and t.dtype == dualad.complex64
    assert_tensor(dualad.full_like(dualad.tensor([1, 2]), 2.7), [2, 2], dualad.int64)


# ---------------------------------------------------------------------------------------------
# random numbers


def test_manual_seed_reproducible():
    for make in (
        lambda: dualad.rand(3, 2),
        lambda: dualad.randn(4),
        lambda: dualad.randn(3, dtype=dualad.complex64),
        lambda: dualad.randint(0, 100, (5,)),
        lambda: dualad.rand_like(dualad.zeros(2, dtype=dualad.float32)),
        lambda: dualad.randn_like(dualad.zeros(3)),
    ):
        dualad.manual_seed(123)
        first, second = make().numpy(), make().numpy()
        dualad.manual_seed(123)
        again = make().numpy()
        np.testing.assert_array_equal(first, again)
        assert not np.array_equal(first, second)
        dualad.manual_seed(124)
        assert not np.array_equal(first, make().numpy())


def test_manual_seed_accepts_numpy_and_negative_ints_only():
    dualad.manual_seed(np.int64(3))
    dualad.manual_seed(-1)
    with pytest.raises(TypeError, match="seed must be an int"):
        dualad.manual_seed(1.5)


def test_rand_statistics_and_range():
    dualad.manual_seed(0)
    x = dualad.rand(20000).numpy()
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.005
    z = dualad.rand(20000, dtype=dualad.complex128).numpy()
    assert z.dtype == np.complex128
    assert z.real.min() >= 0 and z.real.max() < 1 and z.imag.min() >= 0 and z.imag.max() < 1
    assert abs(z.imag.mean() - 0.5) < 0.01


def test_randn_statistics():
    dualad.manual_seed(0)
    x = dualad.randn(20000).numpy()
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1.0) < 0.03
    z = dualad.randn(20000, dtype=dualad.complex128).numpy()
    assert abs(np.mean(np.abs(z) ** 2) - 1.0) < 0.05
    assert abs(z.real.var() - 0.5) < 0.03 and abs(z.imag.var() - 0.5) < 0.03
    h = dualad.randn(5, dtype=dualad.float16)
    assert h.dtype == dualad.float16


def test_random_dtypes_and_errors():
    assert dualad.rand(2, dtype=dualad.float32).dtype == dualad.float32
    assert dualad.rand(2, 2, dtype=dualad.complex64).dtype == dualad.complex64
    assert dualad.rand(size=(2, 2)).shape == (2, 2)
    with pytest.raises(RuntimeError, match="floating point or complex dtype"):
        dualad.rand(2, dtype=dualad.int64)
    with pytest.raises(RuntimeError, match="floating point or complex dtype"):
        dualad.randn_like(dualad.tensor([1, 2]))


def test_randint_forms():
    dualad.manual_seed(0)
    x = dualad.randint(3, 7, (1000,))
    assert x.dtype == dualad.int64 and x.shape == (1000,)
    values = x.numpy()
    assert values.min() == 3 and values.max() == 6
    y = dualad.randint(5, (2, 3))  # torch's randint(high, size)
    assert y.shape == (2, 3) and y.numpy().min() >= 0 and y.numpy().max() < 5
    assert dualad.randint(4).shape == ()
    z = dualad.randint(0, 3, (10,), dtype=dualad.float32)
    assert z.dtype == dualad.float32 and set(z.numpy().tolist()) <= {0.0, 1.0, 2.0}
    with pytest.raises(RuntimeError, match="'from' to be less than 'to'"):
        dualad.randint(5, 5, (2,))


def test_random_like_keeps_shape_dtype():
    src = dualad.zeros(3, 2, dtype=dualad.float32)
    for like in (dualad.rand_like, dualad.randn_like):
        t = like(src)
        assert t.shape == (3, 2) and t.dtype == dualad.float32
        t = like(src, dtype=dualad.float64, requires_grad=True)
        assert t.dtype == dualad.float64 and t.requires_grad


def test_random_tensors_are_differentiable_leaves():
    x = dualad.randn(3, requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_zeros_for_uses_device_of_first_tensor():
    t = _creation.zeros_for((2,), np.float32, [None, dualad.ones(1)])
    assert t.dtype == np.float32 and t.shape == (2,) and t.device == "cpu"
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.0])
