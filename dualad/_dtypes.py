"""Dtypes: NumPy dtype objects, the default float dtype, and what may require grad."""

from __future__ import annotations

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

half, float, double = float16, float32, float64
cfloat, cdouble = complex64, complex128
int, long = int32, int64

# kinds whose tensors may require grad
DIFFERENTIABLE_KINDS = frozenset("fc")

_default = [float64]
_COMPLEX_OF = {float16: complex64, float32: complex64, float64: complex128}


def get_default_dtype() -> np.dtype:
    """The dtype Python floats become (float64 unless changed).

    >>> get_default_dtype()
    dtype('float64')
    """
    return _default[0]


def set_default_dtype(dtype) -> None:
    """Set the dtype of tensors made from Python floats (float32 or float64)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"dualad.set_default_dtype: only floating dtypes are allowed, got {dtype}")
    _default[0] = dtype


def default_complex_dtype() -> np.dtype:
    return _COMPLEX_OF.get(_default[0], complex128)


def is_differentiable(dtype: np.dtype) -> bool:
    return dtype.kind in DIFFERENTIABLE_KINDS


def to_dtype(dtype) -> np.dtype | None:
    """Normalise a user's dtype argument (None stays None)."""
    if dtype is None:
        return None
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dualad: {dtype!r} is not a dtype") from None


def real_dtype(dtype: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128, unchanged otherwise."""
    if dtype.kind == "c":
        return np.dtype(dtype.char.lower()) if dtype.char in "FD" else float64
    return dtype
