"""Dtypes: NumPy dtype objects, default dtype, torch-style promotion in arithmetic."""

import numpy as np
import pytest

import dualad
from dualad import _dtypes


@pytest.mark.parametrize(
    "name, expected",
    [
        ("float16", np.float16),
        ("float32", np.float32),
        ("float64", np.float64),
        ("complex64", np.complex64),
        ("complex128", np.complex128),
        ("int8", np.int8),
        ("int16", np.int16),
        ("int32", np.int32),
        ("int64", np.int64),
        ("uint8", np.uint8),
        ("bool", np.bool_),
        ("half", np.float16),
        ("double", np.float64),
        ("cfloat", np.complex64),
        ("cdouble", np.complex128),
        ("long", np.int64),
    ],
)
def test_dtypes_are_numpy_dtypes(name, expected):
    dtype = getattr(dualad, name)
    assert isinstance(dtype, np.dtype)
    assert dtype == np.dtype(expected)
    assert np.zeros(1, dtype=dtype).dtype == dtype
    assert dualad.zeros(1, dtype=dtype).dtype == dtype


def test_torch_short_names():
    assert _dtypes.int == np.int32 and _dtypes.short == np.int16 and _dtypes.long == np.int64
    assert _dtypes.float == np.float32 and _dtypes.double == np.float64


def test_default_dtype_roundtrip(float32_default):
    assert dualad.get_default_dtype() == dualad.float32
    assert _dtypes.default_complex_dtype() == dualad.complex64
    dualad.set_default_dtype(np.float64)
    assert dualad.get_default_dtype() == dualad.float64
    assert _dtypes.default_complex_dtype() == dualad.complex128
    dualad.set_default_dtype("float32")
    assert dualad.get_default_dtype() == dualad.float32


@pytest.mark.parametrize("bad", [dualad.int64, dualad.complex128, dualad.bool, None])
def test_set_default_dtype_rejects_non_floating(bad):
    with pytest.raises(TypeError, match="only floating-point types"):
        dualad.set_default_dtype(bad)
    assert dualad.get_default_dtype() == dualad.float64


def test_to_dtype():
    assert _dtypes.to_dtype(None) is None
    assert _dtypes.to_dtype(dualad.float32) is dualad.float32
    assert _dtypes.to_dtype(np.float32) == np.float32
    assert _dtypes.to_dtype("complex64") == np.complex64
    assert _dtypes.to_dtype(float) == np.float64
    assert _dtypes.to_dtype(complex) == np.complex128
    assert _dtypes.to_dtype(int) == np.int64
    assert _dtypes.to_dtype(bool) == np.bool_
    with pytest.raises(TypeError, match="not a dtype"):
        _dtypes.to_dtype("nonsense")
    with pytest.raises(TypeError, match="cannot hold dtype"):
        _dtypes.to_dtype(object)
    with pytest.raises(TypeError, match="cannot hold dtype"):
        _dtypes.to_dtype(np.dtype("datetime64[s]"))


def test_is_differentiable_and_real_complex_dtype():
    assert all(
        _dtypes.is_differentiable(np.dtype(d))
        for d in ("float16", "float32", "float64", "complex64", "complex128")
    )
    assert not any(_dtypes.is_differentiable(np.dtype(d)) for d in ("int32", "int64", "bool"))
    assert _dtypes.real_dtype(dualad.complex64) == dualad.float32
    assert _dtypes.real_dtype(dualad.complex128) == dualad.float64
    assert _dtypes.real_dtype(dualad.float32) == dualad.float32
    assert _dtypes.real_dtype(dualad.int64) == dualad.int64
    assert _dtypes.complex_dtype(dualad.float32) == dualad.complex64
    assert _dtypes.complex_dtype(dualad.float64) == dualad.complex128
    assert _dtypes.complex_dtype(dualad.complex64) == dualad.complex64


# NumPy 2's table (np.promote_types), the rule the ops follow; where it differs from PyTorch's
# (an integer widens a float to hold it) the ops compute NumPy's dtype
@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("float32", "float64", "float64"),
        ("float16", "float32", "float32"),
        ("int64", "float32", "float64"),
        ("int64", "float16", "float64"),
        ("int8", "float16", "float16"),
        ("int32", "int64", "int64"),
        ("uint8", "int8", "int16"),
        ("bool", "int32", "int32"),
        ("bool", "float32", "float32"),
        ("complex64", "float64", "complex128"),
        ("complex64", "float32", "complex64"),
        ("complex128", "float32", "complex128"),
        ("complex64", "int64", "complex128"),
        ("bool", "bool", "bool"),
    ],
)
def test_promote_types(a, b, expected):
    assert _dtypes.promote_types(a, b) == np.dtype(expected)
    assert _dtypes.promote_types(b, a) == np.dtype(expected)


def test_result_type():
    assert _dtypes.result_type("bool", "int8", "float16") == np.float16
    assert _dtypes.result_type("bool", "int32", "float16") == np.float64
    assert _dtypes.result_type("float32") == np.float32
    with pytest.raises(TypeError):
        _dtypes.result_type()


# ---------------------------------------------------------------------------------------------
# dtypes of arithmetic results


@pytest.mark.parametrize("scalar", [2, 2.5, True])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "pow"])
def test_float32_stays_float32_with_python_scalars(op, scalar):
    x = dualad.tensor([1.5, 2.0], dtype=dualad.float32)
    fn = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "truediv": lambda a, b: a / b,
        "pow": lambda a, b: a**b,
    }[op]
    for out, expected in [
        (fn(x, scalar), fn(x.numpy(), np.float32(scalar))),
        (fn(scalar, x), fn(np.float32(scalar), x.numpy())),
    ]:
        assert out.dtype == dualad.float32
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_float32_stays_float32_in_math_and_backward():
    x = dualad.tensor([0.5, 1.0], dtype=dualad.float32, requires_grad=True)
    y = (dualad.sin(x) * 3.0 + 1).exp().sum()
    assert y.dtype == dualad.float32
    y.backward()
    assert x.grad.dtype == dualad.float32
    x64 = x.detach().numpy().astype(np.float64)
    expected = np.exp(np.sin(x64) * 3 + 1) * 3 * np.cos(x64)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5)


def test_complex64_stays_complex64_with_python_scalars():
    z = dualad.tensor([1 + 1j], dtype=dualad.complex64)
    assert (z * 2.0).dtype == dualad.complex64
    assert (z + 1j).dtype == dualad.complex64
    assert (dualad.tensor([1.0], dtype=dualad.float32) * 1j).dtype == dualad.complex64


def test_float32_with_float64_promotes_to_float64():
    a = dualad.tensor([1.0, 2.0], dtype=dualad.float32, requires_grad=True)
    b = dualad.tensor([0.5, 0.25], requires_grad=True)
    out = a * b
    assert out.dtype == dualad.float64
    np.testing.assert_allclose(out.detach().numpy(), [0.5, 0.5])
    out.sum().backward()
    assert a.grad.dtype == dualad.float32 and b.grad.dtype == dualad.float64
    np.testing.assert_allclose(a.grad.numpy(), [0.5, 0.25])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 2.0])
    assert (dualad.tensor([1.0], dtype=dualad.float16) + dualad.tensor([1.0])).dtype == np.float64
    assert (
        dualad.tensor([1.0], dtype=dualad.complex64) + dualad.tensor([1.0])
    ).dtype == np.complex128


def test_int_tensor_with_float_scalar_gives_default_float():
    i = dualad.tensor([1, 2])
    out = i + 0.5
    assert out.dtype == dualad.float64
    np.testing.assert_array_equal(out.numpy(), [1.5, 2.5])
    assert (i * 2).dtype == dualad.int64
    assert (dualad.tensor([1, 2], dtype=dualad.int32) + 1).dtype == dualad.int32
    assert (i / 2).dtype == dualad.float64
    np.testing.assert_array_equal((i / 2).numpy(), [0.5, 1.0])
    assert (dualad.tensor([True]) + 1).dtype == dualad.int64


def test_int_tensor_with_float_scalar_under_float32_default(float32_default):
    assert (dualad.tensor([1, 2]) + 0.5).dtype == dualad.float32


def test_comparisons_give_bool():
    x = dualad.tensor([1.0, 2.0, 3.0], dtype=dualad.float32)
    for out in (x < 2, x <= 2, x > 2, x >= 2, x == 2, x != 2, x == x):
        assert out.dtype == dualad.bool
