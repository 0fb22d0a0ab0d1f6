"""Shared helpers of ``dualad.array_api``: argument conversion and the bridge to NumPy for
``nextafter``, whose derivative dualad lacks.

Every other function is made of dualad ops only, so it records derivatives (or, for indices,
counts and masks, returns untracked tensors) under every level. ``nextafter`` computes on the
values of its arguments; where they carry a derivative (require grad, or are tracked by
``func.grad`` or a dual level) or have no single value (batched by ``vmap``), it raises
``TrackedConversionError`` naming the level, never a silently constant result.
"""

from __future__ import annotations

import builtins

import numpy as np

from .._backend import xp_of
from .._creation import as_tensor
from .._errors import TrackedConversionError
from .._state import GRAD
from .._tensor import Tensor, wrap

PYTHON_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def tensor_arg(name: str, x) -> Tensor:
    """``x`` as a tensor: tensors as they are, arrays and Python data converted."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"dualad.array_api.{name}: expected an array, got {type(x).__name__}")
    return as_tensor(x)


def operand(x):
    """An elementwise operand: tensors and Python scalars as they are (NEP 50 weak scalars),
    anything else (arrays, lists) converted to a tensor."""
    if isinstance(x, Tensor) or type(x) in PYTHON_SCALARS:
        return x
    return tensor_arg("elementwise function", x)


def axis_tuple(axis, ndim: int):
    """``axis`` (None, an int or a tuple) as a tuple of non-negative axes (None: all)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
    # NumPy's AxisError (a ValueError and an IndexError) for an axis out of range or repeated
    return tuple(np.lib.array_utils.normalize_axis_tuple(axes, ndim))


def values(name: str, x):
    """The array behind ``x`` for a function whose derivative dualad lacks (``nextafter``):
    an ``x`` that requires grad or is tracked by a level (``func.grad``, a dual level, or
    ``vmap``, where there is no single value to read) raises ``TrackedConversionError``."""
    if not isinstance(x, Tensor):
        return x if type(x) in PYTHON_SCALARS else np.asarray(x)
    try:
        if GRAD.levels:
            x._refuse_if_tracked("array")
        if x.requires_grad:
            raise TrackedConversionError(
                f"dualad.array_api.{name}: dualad has no derivative of {name}, and its "
                "argument requires grad. Call .detach() on the argument if a constant "
                "result is meant."
            )
    except TrackedConversionError as exc:
        raise TrackedConversionError(
            f"dualad.array_api.{name} computes on the values of its arguments (it has no "
            f"dualad op with a derivative): {exc}"
        ) from None
    return x._data


def untracked(name: str, fn, *args, **kwargs) -> Tensor:
    """``fn(xp, *arrays, **kwargs)`` on the values of ``args``, as an untracked tensor."""
    arrays = [values(name, a) for a in args]
    xp = np
    for a in arrays:
        if not isinstance(a, (np.ndarray, *PYTHON_SCALARS)):
            xp = xp_of(a)
            break
    out = fn(xp, *arrays, **kwargs)
    return wrap(xp.asarray(out))
