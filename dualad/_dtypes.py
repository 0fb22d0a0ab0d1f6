"""Dtypes: NumPy dtype objects, the default float dtype, promotion, and what may require grad.

dualad's dtypes ARE NumPy dtypes (``dualad.float32 is np.dtype("float32")``), so arrays, tensors
and user code can pass them back and forth. The torch-style short names follow PyTorch:
``dualad.float`` is float32, ``dualad.double`` float64, ``dualad.int`` int32, ``dualad.long``
int64. Python floats become the default dtype (float64 unless ``set_default_dtype`` changed it),
Python complex numbers its complex counterpart.
"""

from __future__ import annotations

import builtins

import numpy as np

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
bool_ = np.dtype("bool")

# torch spellings; they shadow builtins in this module only, so use ``builtins.X`` below.
half, float, double = float16, float32, float64
cfloat, cdouble = complex64, complex128
short, int, long = int16, int32, int64

# kinds whose tensors may require grad
DIFFERENTIABLE_KINDS = frozenset("fc")
# kinds a tensor may hold (bool, signed and unsigned ints, floats, complex)
TENSOR_KINDS = frozenset("biufc")

_default = [float64]
_COMPLEX_OF = {float16: complex64, float32: complex64, float64: complex128}
# bool < integer < floating < complex: the order torch's promotion compares first
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def get_default_dtype() -> np.dtype:
    """The dtype Python floats become (float64 unless changed).

    >>> get_default_dtype()
    dtype('float64')
    """
    return _default[0]


def set_default_dtype(dtype) -> None:
    """Set the dtype of tensors made from Python floats (float16, float32 or float64).

    Python complex numbers then become the matching complex dtype (complex64 for float32).

    >>> import dualad
    >>> dualad.set_default_dtype(dualad.float32)
    >>> dualad.tensor([1.5]).dtype, dualad.tensor(1j).dtype
    (dtype('float32'), dtype('complex64'))
    >>> dualad.set_default_dtype(dualad.float64)
    """
    dtype = to_dtype(dtype)
    if dtype is None or dtype.kind != "f":
        raise TypeError(
            f"dualad.set_default_dtype: only floating-point types are supported as the default "
            f"type, got {dtype}"
        )
    _default[0] = dtype


def default_complex_dtype() -> np.dtype:
    """The dtype Python complex numbers become (complex128, complex64 for a float32 default)."""
    return _COMPLEX_OF.get(_default[0], complex128)


def is_differentiable(dtype: np.dtype) -> bool:
    """True for floating and complex dtypes (the ones whose tensors may require grad)."""
    return dtype.kind in DIFFERENTIABLE_KINDS


def to_dtype(dtype) -> np.dtype | None:
    """Normalise a user's dtype argument (None stays None).

    Accepts NumPy dtypes, scalar types (``np.float32``), strings (``"float32"``) and the Python
    types ``float`` (float64), ``complex`` (complex128), ``int`` (int64) and ``bool``, as PyTorch
    does. Dtypes a tensor cannot hold (strings, objects, datetimes) raise TypeError.

    >>> to_dtype("float32"), to_dtype(builtins.bool)
    (dtype('float32'), dtype('bool'))
    """
    if dtype is None:
        return None
    if isinstance(dtype, np.dtype):
        if dtype.kind in TENSOR_KINDS:
            return dtype
    elif dtype is builtins.int:
        return int64  # NumPy's default int is platform-dependent in NumPy < 2 (Windows)
    try:
        result = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dualad: {dtype!r} is not a dtype") from None
    if result.kind not in TENSOR_KINDS:
        raise TypeError(f"dualad: tensors cannot hold dtype {result} (from {dtype!r})")
    return result


def real_dtype(dtype: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128, unchanged otherwise.

    >>> real_dtype(complex64), real_dtype(float16)
    (dtype('float32'), dtype('float16'))
    """
    if dtype.kind == "c":
        return float32 if dtype == complex64 else float64
    return dtype


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """complex64 for float16/float32, complex128 for float64, unchanged for complex dtypes."""
    if dtype.kind == "c":
        return dtype
    return _COMPLEX_OF.get(dtype, complex128)


def promote_types(a, b) -> np.dtype:
    """The dtype of an elementwise op between tensors of dtypes ``a`` and ``b`` (PyTorch's rule).

    The higher category (bool < integer < floating < complex) wins; within a category the wider
    type wins. Unlike NumPy, an integer never widens a float: int64 with float32 is float32.
    A complex with a wider float gives the complex of that width.

    >>> promote_types(int64, float32), promote_types(float32, float64)
    (dtype('float32'), dtype('float64'))
    >>> promote_types(complex64, float64)
    dtype('complex128')
    """
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    category_a, category_b = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if category_a == category_b:
        return np.promote_types(a, b)
    if category_a < category_b:
        a, b = b, a  # a is now of the higher category
    if a.kind == "c" and b.kind == "f":
        return np.promote_types(a, complex_dtype(b))
    return a


def result_type(*dtypes) -> np.dtype:
    """``promote_types`` folded over several dtypes.

    >>> result_type(bool_, int32, float16)
    dtype('float16')
    """
    if not dtypes:
        raise TypeError("dualad.result_type: needs at least one dtype")
    result = np.dtype(dtypes[0])
    for dtype in dtypes[1:]:
        result = promote_types(result, dtype)
    return result
