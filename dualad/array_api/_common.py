"""Shared helpers of ``dualad.array_api``: argument conversion and the bridge to NumPy for the
few functions that have no derivative (argsort, searchsorted, unique's indices, bit shifts).

Differentiable functions are made of dualad ops only, so they record derivatives under every
level. A function without a derivative computes on the values of its arguments and returns an
untracked tensor (an index or a count, whose derivative is zero where it exists); where there is
no single value (an argument batched by ``vmap``), or the function has a derivative dualad lacks
(``nextafter`` of a tracked argument), it raises ``TrackedConversionError`` naming the level,
never a silently constant result.
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


def values(name: str, x, *, derivative_dropped_ok: bool = True):
    """The array behind ``x`` for a function dualad cannot differentiate.

    ``derivative_dropped_ok``: the result is an index, a count or a mask, whose derivative is
    zero where it exists (argsort, unique's counts), so ``x`` is read without its derivative
    (its primal value: inside ``func.grad`` and dual levels too). Otherwise (nextafter) a
    tracked ``x`` raises: its derivative exists and dualad has none. Under ``vmap`` there is no
    single value to read: TrackedConversionError.
    """
    if not isinstance(x, Tensor):
        return x if type(x) in PYTHON_SCALARS else np.asarray(x)
    try:
        if not derivative_dropped_ok:
            if GRAD.levels:
                x._refuse_if_tracked("array")
            if x.requires_grad:
                raise TrackedConversionError(
                    f"dualad.array_api.{name}: dualad has no derivative of {name}, and its "
                    "argument requires grad. Call .detach() on the argument if a constant "
                    "result is meant."
                )
        x = x.detach()
        if GRAD.levels:
            x._refuse_if_tracked("array")
    except TrackedConversionError as exc:
        raise TrackedConversionError(
            f"dualad.array_api.{name} computes on the values of its arguments (it has no "
            f"dualad op yet): {exc}"
        ) from None
    return x._data


def untracked(name: str, fn, *args, derivative_dropped_ok: bool = True, **kwargs) -> Tensor:
    """``fn(xp, *arrays, **kwargs)`` on the values of ``args``, as an untracked tensor."""
    arrays = [values(name, a, derivative_dropped_ok=derivative_dropped_ok) for a in args]
    xp = np
    for a in arrays:
        if not isinstance(a, (np.ndarray, *PYTHON_SCALARS)):
            xp = xp_of(a)
            break
    out = fn(xp, *arrays, **kwargs)
    return wrap(xp.asarray(out))
