"""Dtypes: NumPy dtype objects, the default float dtype, promotion, and what may require grad.

dualad's dtypes ARE NumPy dtypes (``dualad.float32 is np.dtype("float32")``), so arrays, tensors
and user code can pass them back and forth. The torch-style short names follow PyTorch:
``dualad.float`` is float32, ``dualad.double`` float64, ``dualad.int`` int32, ``dualad.long``
int64. Python floats become the default dtype (float64 unless ``set_default_dtype`` changed it),
Python complex numbers its complex counterpart.

Promotion is NumPy 2's (NEP 50), one rule for ``promote_types``, ``result_type``, ``tensor`` of
mixed lists and every op:

- tensors and arrays promote by NumPy's table: int64 with float32 is float64, int8 with float16
  float16, float32 with complex64 complex64, float64 with complex64 complex128;
- Python scalars are weak: they never widen a tensor of their kind or a higher one (float32
  tensor * 2.5 stays float32, int8 tensor + 1 stays int8), and only lift the kind: an integer or
  bool tensor with a Python float gives a float of the default dtype;
- where NumPy would make float64 (complex128) out of no floating or complex tensor at all (an
  integer tensor with a Python float, true division of integers, ``sqrt`` of an integer
  tensor), the result has the default dtype (its complex counterpart) instead, as in PyTorch:
  this only differs from NumPy after ``set_default_dtype``.
"""

from __future__ import annotations

import builtins

import numpy as np
from numpy.typing import DTypeLike

from ._state import ACTIVE

# what a ``dtype=`` argument takes: a NumPy dtype, a scalar type, a name, or None (the default)
DTypeArg = DTypeLike | None

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

_default: list[np.dtype] = [float64]
_DTYPE_TOKEN = object()  # in ``_state.ACTIVE`` while the default dtype is not float64
_COMPLEX_OF: dict[np.dtype, np.dtype] = {
    float16: complex64,
    float32: complex64,
    float64: complex128,
}
# bool < integer < floating < complex: the kinds a Python scalar may lift a tensor to
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def get_default_dtype() -> np.dtype:
    """The dtype Python floats become (float64 unless changed).

    >>> get_default_dtype()
    dtype('float64')
    """
    return _default[0]


def set_default_dtype(dtype: DTypeLike) -> None:
    """Set the dtype of tensors made from Python floats (float16, float32 or float64).

    Python complex numbers then become the matching complex dtype (complex64 for float32).

    >>> import dualad
    >>> dualad.set_default_dtype(dualad.float32)
    >>> dualad.tensor([1.5]).dtype, dualad.tensor(1j).dtype
    (dtype('float32'), dtype('complex64'))
    >>> dualad.set_default_dtype(dualad.float64)
    """
    new = to_dtype(dtype)
    if new is None or new.kind != "f":
        raise TypeError(
            f"dualad.set_default_dtype: only floating-point types are supported as the default "
            f"type, got {new}"
        )
    _default[0] = new
    # the ops' fast callers convert to the default dtype only on their careful path, which they
    # take while ``ACTIVE`` is non-empty: it holds a token while the default is not float64
    if new == float64:
        while _DTYPE_TOKEN in ACTIVE:
            ACTIVE.remove(_DTYPE_TOKEN)
    elif _DTYPE_TOKEN not in ACTIVE:
        ACTIVE.append(_DTYPE_TOKEN)


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


def promote_types(a: DTypeLike, b: DTypeLike) -> np.dtype:
    """The dtype of an elementwise op between tensors of dtypes ``a`` and ``b``: NumPy's table.

    The higher kind wins (bool < integer < floating < complex), widened so that it holds both:
    int64 with float32 is float64 (as the ops compute), int8 with float16 is float16, complex64
    with float64 is complex128.

    >>> promote_types(int64, float32), promote_types(float32, float64)
    (dtype('float64'), dtype('float64'))
    >>> promote_types(complex64, float64), promote_types(uint8, int8)
    (dtype('complex128'), dtype('int16'))
    """
    # (a None operand is NumPy's default, float64, as np.dtype(None) is; its stubs omit None)
    return np.promote_types(to_dtype(a), to_dtype(b))  # type: ignore[arg-type]


_PYTHON_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def result_type(*operands) -> np.dtype:
    """The dtype of an op over ``operands``: dtypes, tensors and arrays (promoted by
    ``promote_types``) and Python numbers (weak: they only lift the kind, see the module
    docstring). A floating or complex result with no floating or complex dtype among the
    non-Python operands has the default dtype (its complex counterpart).

    >>> result_type(bool_, int8, float16), result_type(int32, float16)
    (dtype('float16'), dtype('float64'))
    >>> result_type(float32, 2.5), result_type(int8, 1), result_type(int64, 2.5)
    (dtype('float32'), dtype('int8'), dtype('float64'))
    >>> result_type(1, 2.5), result_type(True, 1)
    (dtype('float64'), dtype('int64'))
    """
    if not operands:
        raise TypeError("dualad.result_type: needs at least one operand")
    strong = None
    weak_category = -1
    for operand in operands:
        if type(operand) in _PYTHON_SCALARS:
            weak_category = builtins.max(weak_category, _CATEGORY[_python_kind(operand)])
            continue
        dtype = getattr(operand, "dtype", None)
        dtype = to_dtype(operand) if dtype is None else np.dtype(dtype)
        strong = dtype if strong is None else np.promote_types(strong, dtype)  # type: ignore[arg-type]
    if strong is None:
        return (bool_, int64, _default[0], default_complex_dtype())[weak_category]
    category = _CATEGORY[strong.kind]
    if weak_category <= category:
        return strong
    if weak_category == 1:  # a bool tensor with a Python int
        return int64
    if weak_category == 2:  # an integer or bool tensor with a Python float
        return _default[0]
    # a Python complex: the complex of a floating tensor's width, else the default complex
    return complex_dtype(strong) if category == 2 else default_complex_dtype()


def _python_kind(value) -> str:
    kind = type(value)
    if kind is builtins.bool:
        return "b"
    if kind is builtins.int:
        return "i"
    return "f" if kind is builtins.float else "c"
