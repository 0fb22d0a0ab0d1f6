"""dtype handling inside impls and at public boundaries (no ops here).

Bool and integer inputs of float math become the default float dtype (PyTorch's promotion);
Python scalars stay weak; NumPy scalars become Python scalars.
"""

from __future__ import annotations

import math as _math

import numpy as np

from .. import _dtypes

# ---------------------------------------------------------------------------------------------
# dtype helpers for impls


def _floating(x):
    """Bool and integer arrays as the default float dtype (PyTorch promotes them for float math;
    NumPy would pick float16 for int8 and ignore ``set_default_dtype``). Python scalars pass."""
    try:
        if x.dtype in _FLOAT_DTYPES:  # the common case first: one set lookup (hot path)
            return x
    except AttributeError:
        return x
    if x.dtype.kind in "biu":
        return x.astype(_dtypes.get_default_dtype())
    return x


_FLOAT_DTYPES = frozenset(np.dtype(c) for c in "efdgFDG")


def _floating_pair(a, b):
    """The operands of a floating-point binary op (atan2, hypot, ...): with a floating or
    complex array among them NumPy promotes as ``promote_types`` (int16 with float16 is
    float32); with none, integer and bool arrays become the default float dtype."""
    if getattr(a, "dtype", None) in _FLOAT_DTYPES or getattr(b, "dtype", None) in _FLOAT_DTYPES:
        return a, b
    return _floating(a), _floating(b)


def _float_array(x):
    """Like ``_floating`` but Python scalars become 0-d arrays too (for impls that read dtype)."""
    if type(x) in _PY_SCALARS:
        complex_ = type(x) is complex
        dtype = _dtypes.default_complex_dtype() if complex_ else _dtypes.get_default_dtype()
        return np.asarray(x, dtype=dtype)
    return _floating(x)


_PY_SCALARS = frozenset((float, int, bool, complex))


def _reject_complex(name: str, *values) -> None:
    """PyTorch refuses these ops on complex tensors (NumPy would order complex numbers)."""
    for v in values:
        if type(v) is complex or getattr(getattr(v, "dtype", None), "kind", "") == "c":
            raise TypeError(f"dualad.{name}: not supported for complex tensors")


def _scalar_log(value) -> float:
    """log of a real Python scalar with NumPy's conventions (-inf at 0, nan below)."""
    if value > 0:
        return _math.log(value)
    return float("-inf") if value == 0 else float("nan")


def _check_number(op: str, name: str, value) -> None:
    if type(value) not in _PY_SCALARS or type(value) is complex:
        raise TypeError(
            f"dualad.{op}: argument '{name}' must be a real number, got {type(value).__name__}"
        )


def _plain_scalar(value):
    """NumPy scalars as Python scalars: they then promote like Python numbers (NEP 50)."""
    return value.item() if isinstance(value, np.generic) else value


def _float_operands(xp, a, b):
    """Both operands as float arrays of the result dtype (Python scalars adopt the tensor's
    dtype, as NumPy 2 does for them in ufuncs)."""
    a, b = _floating_pair(a, b)
    # dtypes only (NEP 50 keeps Python scalars weak): NumPy never touches CuPy data here
    dtype = np.result_type(getattr(a, "dtype", a), getattr(b, "dtype", b))
    if dtype.kind in "biu":
        dtype = _dtypes.get_default_dtype()
    if type(a) in _PY_SCALARS or a.dtype != dtype:
        a = xp.asarray(a, dtype=dtype)
    if type(b) in _PY_SCALARS or b.dtype != dtype:
        b = xp.asarray(b, dtype=dtype)
    return a, b
