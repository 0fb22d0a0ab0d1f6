"""The array API's data types and the functions about them: the dtype objects (NumPy's),
``finfo``, ``iinfo``, ``can_cast``, ``result_type``, ``isdtype``, ``astype`` and
``__array_namespace_info__``.

Promotion is NumPy's (NEP 50: Python scalars are weak), which the standard's promotion table is a
part of; mixed-kind promotion (int with float) is what NumPy does (the standard leaves it to the
implementation).

>>> import dualad.array_api as xp
>>> xp.result_type(xp.int8, xp.uint8), xp.can_cast(xp.int64, xp.float32)
(dtype('int16'), False)
>>> xp.isdtype(xp.float32, "real floating"), xp.finfo(xp.float32).bits
(True, 32)
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _dtypes as _dd
from .._backend import Device, cuda_is_available
from .._tensor import Tensor
from ..ops import astype as _astype
from ..ops import to_device_op
from ._common import PYTHON_SCALARS, tensor_arg

bool = np.dtype("bool")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

_ALL = (
    bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float32, float64, complex64, complex128,
)  # fmt: skip
_NAMES = {dt.name: dt for dt in _ALL}
# the categories between which the standard's promotion table has no entry
_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 2}
# the standard's kinds (isdtype, __array_namespace_info__().dtypes(kind=...))
_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def _dtype(name: str, dtype) -> np.dtype:
    """A dtype argument: one of the standard's dtypes (TypeError naming the function else)."""
    result = dtype if isinstance(dtype, np.dtype) else None
    if result is None or result not in _ALL:
        raise TypeError(
            f"dualad.array_api.{name}: {dtype!r} is not a dtype of the array API standard "
            f"(use one of dualad.array_api's: {', '.join(_NAMES)})"
        )
    return result


def _dtype_of(name: str, x) -> np.dtype:
    if isinstance(x, np.dtype):
        return _dtype(name, x)
    if isinstance(x, Tensor):
        return x.dtype
    raise TypeError(f"dualad.array_api.{name}: expected an array or a dtype, got {x!r}")


def astype(x, dtype, /, *, copy: builtins.bool = True, device=None) -> Tensor:
    """``x`` cast to ``dtype`` (differentiable between floating and complex dtypes; a cast to
    an integer or bool dtype is not differentiable). ``copy=False`` returns ``x`` itself when
    nothing changes."""
    x = tensor_arg("astype", x)
    dtype = _dtype("astype", dtype)
    if dtype == x.dtype:
        out = _astype(x, dtype) if copy else x
    else:
        out = _astype(x, dtype)
    if device is not None and Device(device) != x.device:
        out = to_device_op(out, device=Device(device))
    return out


def can_cast(from_, to, /) -> builtins.bool:
    """Whether ``from_`` (a dtype or an array) casts to ``to`` under the standard's promotion
    table: within bool, within the integers, within the real and complex floating dtypes;
    never across those (NumPy's ``can_cast`` allows int to float)."""
    a, b = _dtype_of("can_cast", from_), _dtype("can_cast", to)
    if _CATEGORY[a.kind] != _CATEGORY[b.kind]:
        return False
    return np.promote_types(a, b) == b


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype of an elementwise function of ``arrays_and_dtypes`` (arrays, dtypes and
    Python scalars, which are weak)."""
    if not arrays_and_dtypes:
        raise ValueError("dualad.array_api.result_type: needs at least one array or dtype")
    strong = [a for a in arrays_and_dtypes if type(a) not in PYTHON_SCALARS]
    if not strong:
        raise ValueError(
            "dualad.array_api.result_type: needs at least one array or dtype (Python scalars "
            "alone have no array API dtype)"
        )
    for a in strong:
        _dtype_of("result_type", a)
    return _dd.result_type(*arrays_and_dtypes)


def isdtype(dtype, kind) -> builtins.bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of the standard's kind names
    (``"real floating"``, ``"integral"``, ...) or a tuple of them."""
    dtype = _dtype("isdtype", dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, np.dtype):
        return dtype == kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(
                f"dualad.array_api.isdtype: unknown kind {kind!r} (one of {', '.join(_KINDS)})"
            )
        return _KINDS[kind](dtype)
    raise TypeError(
        f"dualad.array_api.isdtype: kind must be a dtype, a kind name or a tuple, got {kind!r}"
    )


def finfo(type, /):
    """Machine limits of a floating dtype (NumPy's ``finfo``: bits, eps, max, min,
    smallest_normal, dtype)."""
    dtype = _dtype_of("finfo", type)
    if dtype.kind not in "fc":
        raise ValueError(f"dualad.array_api.finfo: {dtype} is not a floating dtype")
    return np.finfo(dtype)


def iinfo(type, /):
    """Machine limits of an integer dtype (NumPy's ``iinfo``: bits, max, min, dtype)."""
    dtype = _dtype_of("iinfo", type)
    if dtype.kind not in "iu":
        raise ValueError(f"dualad.array_api.iinfo: {dtype} is not an integer dtype")
    return np.iinfo(dtype)


class _Info:
    """What ``__array_namespace_info__()`` returns: the namespace's capabilities, devices and
    dtypes."""

    __module__ = "dualad.array_api"

    def capabilities(self) -> dict:
        # boolean indexing and nonzero give data-dependent shapes, which dualad computes
        # eagerly; no "max dimensions" limit beyond NumPy's
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Device:
        return Device("cpu")

    def devices(self) -> list:
        return [Device("cpu")] + ([Device("cuda")] if cuda_is_available() else [])

    def default_dtypes(self, *, device=None) -> dict:
        default = _dd.get_default_dtype()
        return {
            "real floating": default,
            "complex floating": _dd.complex_dtype(default),
            "integral": int64,
            "indexing": int64,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        if kind is None:
            return dict(_NAMES)
        return {name: d for name, d in _NAMES.items() if isdtype(d, kind)}


def __array_namespace_info__() -> _Info:
    """The namespace's inspection object (``capabilities``, ``default_device``,
    ``default_dtypes``, ``dtypes``, ``devices``)."""
    return _Info()


__all__ = [
    *_NAMES,
    "astype",
    "can_cast",
    "result_type",
    "isdtype",
    "finfo",
    "iinfo",
    "__array_namespace_info__",
]
