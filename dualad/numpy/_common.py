"""What the ``dualad.numpy`` functions share: turning arguments into tensors, NumPy's axis rules
(``AxisError`` for a bad axis, tuples, negatives), ``out=`` into a tensor, and the checks of
NumPy arguments that dualad does not support (``order=``, ``casting=``).

Invariants: no input is ever mutated (``out=`` writes only into the ``out`` tensor the caller
gave); Python scalars stay Python scalars where an op takes them, so NEP 50 promotion holds
(``float32 tensor + 1.0`` stays float32).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _dtypes, ops
from .._creation import as_tensor
from .._tensor import _PYTHON_SCALARS, Tensor
from ..ops import astype

__all__: list[str] = []

# NumPy's "no value" default: lets a function tell "not given" from any value (``initial``).
_NoValue = np._NoValue


def tensor_of(x) -> Tensor:
    """``x`` as a tensor: tensors as they are (any level), nested lists holding tensors
    stacked with dualad ops (so their derivatives flow: ``as_tensor`` would detach an eager
    tensor that requires grad), anything else through ``as_tensor`` (NumPy arrays shared,
    lists and scalars converted with NumPy's dtypes)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)) and _holds_tensor(x):
        items = [tensor_of(item) for item in x]
        dtype = np.result_type(*(t.dtype for t in items))
        return ops.stack([cast(t, dtype) for t in items], 0)
    return as_tensor(x)


def _holds_tensor(data) -> bool:
    if isinstance(data, Tensor):
        return True
    return isinstance(data, (list, tuple)) and any(_holds_tensor(d) for d in data)


def operand(x):
    """``x`` for an op that takes Python scalars: a Python number stays one (weak, NEP 50),
    anything else becomes a tensor."""
    if type(x) in _PYTHON_SCALARS:
        return x
    return tensor_of(x)


def axes_of(axis, ndim: int):
    """``axis`` (None, an int or a tuple, negatives allowed) as a sorted tuple of
    non-negative axes, or None for all axes; NumPy's ``AxisError`` when out of range."""
    if axis is None:
        return None
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


def axis_of(axis, ndim: int) -> int:
    """One ``axis`` as a non-negative int (NumPy's ``AxisError`` when out of range)."""
    return normalize_axis_index(_int_axis(axis), ndim)


def _int_axis(axis) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
    return int(axis)


def promoted_pair(a, b):
    """``a`` and ``b`` as tensors of their common dtype (NumPy's promotion)."""
    x, y = tensor_of(a), tensor_of(b)
    dtype = np.result_type(x.dtype, y.dtype)
    return cast(x, dtype), cast(y, dtype)


def cast(x: Tensor, dtype) -> Tensor:
    """``x`` as ``dtype`` (the same tensor when it already has it)."""
    if dtype is None:
        return x
    dtype = np.dtype(dtype)
    return x if x.dtype == dtype else astype(x, dtype)


def floating(x: Tensor) -> Tensor:
    """``x`` for a computation NumPy does in floating point (``mean``, ``std``): bool and
    integer tensors become float64, floating and complex tensors stay as they are."""
    if x.dtype.kind in "biu":
        return astype(x, _dtypes.float64)
    return x


def finish(result: Tensor, out, name: str):
    """``result``, or written into the tensor ``out`` and ``out`` returned (NumPy's ``out=``).
    An ndarray ``out`` cannot hold a derivative, so it is a TypeError."""
    if out is None:
        return result
    if isinstance(out, tuple) and len(out) == 1:  # the ufunc spelling ``out=(t,)``
        out = out[0]
    if not isinstance(out, Tensor):
        raise TypeError(
            f"dualad.numpy.{name}: out= must be a dualad Tensor (got {type(out).__name__}); a "
            "NumPy array cannot hold the derivative. Drop out= and use the returned tensor."
        )
    if not np.can_cast(result.dtype, out.dtype, casting="same_kind"):
        raise TypeError(
            f"dualad.numpy.{name}: cannot write the {result.dtype} result into out= of dtype "
            f"{out.dtype} with casting rule 'same_kind' (NumPy's rule for out=)"
        )
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(
            f"dualad.numpy.{name}: out= has shape {tuple(out.shape)}, the result has shape "
            f"{tuple(result.shape)}"
        )
    out.copy_(cast(result, out.dtype))  # recorded in place, like any Tensor.copy_
    return out


def check_order(order, name: str, allowed=("C", "K", "A", None)) -> None:
    """Refuse memory layouts other than ``allowed`` (tensors are laid out by dualad)."""
    if order not in allowed:
        raise ValueError(
            f"dualad.numpy.{name}: order={order!r} is not supported (use one of "
            f"{', '.join(repr(o) for o in allowed)})"
        )


def check_casting(casting, name: str) -> None:
    """Only NumPy's default ``casting='same_kind'`` is supported."""
    if casting != "same_kind":
        raise ValueError(
            f"dualad.numpy.{name}: casting={casting!r} is not supported (only 'same_kind', "
            "NumPy's default)"
        )


def check_subok(subok, name: str) -> None:
    if subok:
        raise ValueError(f"dualad.numpy.{name}: subok=True is not supported (results are tensors)")
