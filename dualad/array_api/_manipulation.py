"""The array API's manipulation and indexing functions: ``broadcast_arrays``,
``broadcast_shapes``, ``broadcast_to``, ``concat``, ``expand_dims``, ``flip``, ``moveaxis``,
``permute_dims``, ``repeat``, ``reshape``, ``roll``, ``squeeze``, ``stack``, ``tile``,
``unstack``, ``take``, ``take_along_axis``; all differentiable (each is a dualad view or
gather op).

>>> import dualad, dualad.array_api as xp
>>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> y = xp.concat([xp.flip(x, axis=0), x], axis=None)
>>> y.shape
(8,)
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import ops
from .._tensor import Tensor
from ._common import axis_tuple, tensor_arg


def _tensors(name: str, arrays) -> list:
    arrays = [tensor_arg(name, a) for a in arrays]
    if not arrays:
        raise ValueError(f"dualad.array_api.{name}: needs at least one array")
    return arrays


def broadcast_shapes(*shapes) -> tuple:
    """The shape that ``shapes`` broadcast to (ValueError where they do not)."""
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_arrays(*arrays) -> list:
    """``arrays`` broadcast to their common shape (views)."""
    arrays = [tensor_arg("broadcast_arrays", a) for a in arrays]
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [ops.broadcast_to(a, shape) for a in arrays]


def broadcast_to(x, /, shape) -> Tensor:
    """``x`` broadcast to ``shape``."""
    x = tensor_arg("broadcast_to", x)
    np.broadcast_shapes(x.shape, tuple(shape))  # ValueError with NumPy's wording
    return ops.broadcast_to(x, tuple(shape))


def concat(arrays, /, *, axis=0) -> Tensor:
    """``arrays`` joined along ``axis`` (None: flattened first)."""
    arrays = _tensors("concat", arrays)
    if axis is None:
        arrays = [ops.reshape(a, (-1,)) for a in arrays]
        axis = 0
    return ops.concat(arrays, axis=axis)


def stack(arrays, /, *, axis: int = 0) -> Tensor:
    """``arrays`` (of one shape) joined along a new ``axis``."""
    return ops.stack(_tensors("stack", arrays), axis=axis)


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices of ``x`` along ``axis``."""
    x = tensor_arg("unstack", x)
    (axis,) = axis_tuple(axis, x.ndim)
    return tuple(ops.unbind(x, axis))


def expand_dims(x, /, axis: int = 0) -> Tensor:
    """``x`` with a new axis of length 1 at ``axis`` (in the result's axes)."""
    x = tensor_arg("expand_dims", x)
    (axis,) = axis_tuple(axis, x.ndim + 1)
    return ops.unsqueeze(x, axis)


def squeeze(x, /, axis) -> Tensor:
    """``x`` without the length-1 axes ``axis`` (an int or tuple; ValueError for an axis
    whose length is not 1)."""
    x = tensor_arg("squeeze", x)
    axes = axis_tuple(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(
                f"dualad.array_api.squeeze: cannot squeeze axis {a} of length {x.shape[a]}"
            )
    shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    return ops.reshape(x, shape)


def flip(x, /, *, axis=None) -> Tensor:
    """``x`` reversed along ``axis`` (None: all axes)."""
    x = tensor_arg("flip", x)
    axes = axis_tuple(axis, x.ndim)
    return ops.flip(x, *axes) if axes else ops.clone(x)


def moveaxis(x, source, destination, /) -> Tensor:
    """``x`` with the axes ``source`` moved to ``destination``."""
    return ops.moveaxis(tensor_arg("moveaxis", x), source, destination)


def permute_dims(x, /, axes) -> Tensor:
    """``x`` with its axes permuted to ``axes``."""
    x = tensor_arg("permute_dims", x)
    axes = tuple(axes)
    if sorted(axis_tuple(axes, x.ndim)) != list(range(x.ndim)):
        raise ValueError(f"dualad.array_api.permute_dims: {axes} is not a permutation of the axes")
    return ops.permute(x, *axes)


def reshape(x, /, shape, *, copy=None) -> Tensor:
    """``x`` in ``shape`` (one ``-1`` allowed). ``copy=True`` copies; ``copy=False`` raises
    ValueError where a view is impossible (dualad copies then)."""
    x = tensor_arg("reshape", x)
    shape = _check_shape(x.numel(), tuple(shape))
    out = ops.reshape(x, shape)
    if copy:
        return ops.clone(out)
    if copy is False and type(x) is Tensor and x.ndim > 1 and x.numel() and not _viewable(x):
        raise ValueError("dualad.array_api.reshape: copy=False, but the reshape needs a copy")
    return out


def _check_shape(size: int, shape: tuple) -> tuple:
    # NumPy's rules and its ValueError (dualad's reshape raises PyTorch's RuntimeError)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    known = math.prod(n for n in shape if n != -1)
    if len(unknown) > 1 or builtins.any(n < -1 for n in shape):
        raise ValueError(f"dualad.array_api.reshape: invalid shape {shape}")
    if (unknown and (known == 0 or size % known)) or (not unknown and known != size):
        raise ValueError(
            f"dualad.array_api.reshape: cannot reshape an array of size {size} into shape {shape}"
        )
    return shape


def _viewable(x) -> builtins.bool:
    # an eager tensor: dualad's reshape is a view exactly when NumPy's is
    return x._data.flags.c_contiguous


def roll(x, /, shift, *, axis=None) -> Tensor:
    """``x`` shifted by ``shift`` along ``axis`` (None: flattened and restored)."""
    x = tensor_arg("roll", x)
    if axis is None:
        return ops.reshape(ops.roll(ops.reshape(x, (-1,)), shift, 0), x.shape)
    return ops.roll(x, shift, axis)


def repeat(x, repeats, /, *, axis=None) -> Tensor:
    """Each element of ``x`` repeated ``repeats`` times along ``axis`` (None: flattened)."""
    x = tensor_arg("repeat", x)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    if isinstance(repeats, Tensor):
        repeats = repeats.detach()
    return ops.repeat_interleave(x, repeats, axis)


def tile(x, repetitions, /) -> Tensor:
    """``x`` repeated ``repetitions[i]`` times along each axis."""
    x = tensor_arg("tile", x)
    reps = tuple(repetitions)
    if len(reps) < x.ndim:
        reps = (1,) * (x.ndim - len(reps)) + reps
    return ops.tile(x, *reps)


def take(x, indices, /, *, axis=None) -> Tensor:
    """The elements of ``x`` at the integer ``indices`` along ``axis`` (None: ``x`` 1-d)."""
    x = tensor_arg("take", x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError("dualad.array_api.take: axis is required for a multi-dimensional x")
        axis = 0
    return ops.take(x, tensor_arg("take", indices), axis)


def take_along_axis(x, indices, /, *, axis: int = -1) -> Tensor:
    """The elements of ``x`` at ``indices`` (of ``x``'s rank) along ``axis``."""
    x = tensor_arg("take_along_axis", x)
    return ops.take_along_dim(x, tensor_arg("take_along_axis", indices), axis)


__all__ = [
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "moveaxis",
    "permute_dims",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "tile",
    "unstack",
    "take",
    "take_along_axis",
]
