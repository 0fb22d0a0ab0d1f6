"""NumPy's shape functions over tensors (all linear, so all differentiable): ``reshape ravel
transpose permute_dims matrix_transpose moveaxis swapaxes squeeze expand_dims broadcast_to
broadcast_arrays flip fliplr flipud roll rot90 tile repeat atleast_1d atleast_2d atleast_3d
copy rollaxis unstack`` (joining and splitting: ``joining``).

NumPy's semantics where PyTorch's differ: ``squeeze`` of an axis whose length is not 1 raises,
``repeat``/``roll``/``flip`` without an axis work on the flattened array, ``tile``/``atleast_*``
follow NumPy's rules for the number of dimensions. Only ``order='C'`` (and ``'F'`` for
``reshape``/``ravel``) layouts.

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
>>> dnp.concatenate([x, dnp.flip(x)], axis=None)
tensor([1., 2., 3., 4., 5., 6., 6., 5., 4., 3., 2., 1.], grad_fn=<CatBackward0>)
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import ops
from .._creation import as_tensor
from ._common import (
    axes_of,
    axis_of,
    check_order,
    check_subok,
    tensor_of,
)

__all__ = [
    "reshape",
    "ravel",
    "transpose",
    "permute_dims",
    "matrix_transpose",
    "moveaxis",
    "swapaxes",
    "squeeze",
    "expand_dims",
    "broadcast_to",
    "broadcast_arrays",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "rot90",
    "tile",
    "repeat",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "copy",
    "rollaxis",
    "unstack",
]


def _shape_tuple(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(operator.index(s) for s in shape)


def reshape(a, /, shape, order="C", *, copy=None):
    """``numpy.reshape``: the same elements in ``shape`` (one entry may be -1).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.reshape(x, (3, 1))
    tensor([[1.],
            [2.],
            [3.]], grad_fn=<ViewBackward0>)
    """
    check_order(order, "reshape", ("C", "F", "A"))
    x = tensor_of(a)
    shape = _shape_tuple(shape)
    if order == "F":  # Fortran order: reverse the axes, reshape in C order, reverse back
        return ops.permute(ops.reshape(_reversed_axes(x), shape[::-1]), _reversing(len(shape)))
    r = ops.reshape(x, shape)
    return ops.clone(r) if copy else r


def _reversing(n: int) -> tuple:
    return tuple(range(n - 1, -1, -1))


def _reversed_axes(x):
    return ops.permute(x, _reversing(x.ndim))


def ravel(a, order="C"):
    """``numpy.ravel``: the elements as a 1-D tensor (C order, or F order).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.ravel(a)
    tensor([1., 2., 3., 4.], grad_fn=<ViewBackward0>)
    """
    return reshape(a, (-1,), order="F" if order == "F" else "C")


def transpose(a, axes=None):
    """``numpy.transpose``: the axes permuted (reversed by default).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.transpose(a)
    tensor([[1., 3.],
            [2., 4.]], grad_fn=<PermuteBackward0>)
    """
    x = tensor_of(a)
    if axes is None:
        return _reversed_axes(x)
    axes = tuple(axis_of(d, x.ndim) for d in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError("axes don't match array")
    return ops.permute(x, axes)


def permute_dims(a, axes=None):
    """``numpy.permute_dims``: ``transpose``'s Array API name.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.permute_dims(a)
    tensor([[1., 3.],
            [2., 4.]], grad_fn=<PermuteBackward0>)
    """
    return transpose(a, axes)


def matrix_transpose(x, /):
    """``numpy.matrix_transpose``: swaps the last two axes (of an at-least-2-D input).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.matrix_transpose(a)
    tensor([[1., 3.],
            [2., 4.]], grad_fn=<PermuteBackward0>)
    """
    x = tensor_of(x)
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return ops.swapaxes(x, -1, -2)


def moveaxis(a, source, destination):
    """``numpy.moveaxis``: axes ``source`` moved to ``destination``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.moveaxis(dnp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    x = tensor_of(a)
    src = _axis_list(source, x.ndim)
    dst = _axis_list(destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ops.permute(x, tuple(order))


def _axis_list(axes, ndim):
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    out = [axis_of(d, ndim) for d in axes]
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return out


def swapaxes(a, axis1, axis2):
    """``numpy.swapaxes``: axes ``axis1`` and ``axis2`` exchanged.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.swapaxes(a, 0, 1)
    tensor([[1., 3.],
            [2., 4.]], grad_fn=<PermuteBackward0>)
    """
    x = tensor_of(a)
    return ops.swapaxes(x, axis_of(axis1, x.ndim), axis_of(axis2, x.ndim))


def squeeze(a, axis=None):
    """``numpy.squeeze``: axes of length 1 removed (all of them, or those of ``axis``, which
    must have length 1).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.squeeze(dualad.tensor([[1.0], [2.0]], requires_grad=True))
    tensor([1., 2.], grad_fn=<ViewBackward0>)
    """
    x = tensor_of(a)
    if axis is None:
        return ops.reshape(x, tuple(s for s in x.shape if s != 1))
    axes = axes_of(axis, x.ndim)
    if any(x.shape[d] != 1 for d in axes):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return ops.reshape(x, tuple(s for d, s in enumerate(x.shape) if d not in axes))


def expand_dims(a, axis):
    """``numpy.expand_dims``: new axes of length 1 at the positions ``axis`` of the result.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.expand_dims(x, 0)
    tensor([[1., 2., 3.]], grad_fn=<ViewBackward0>)
    """
    x = tensor_of(a)
    axes = axes_of(axis, x.ndim + (1 if isinstance(axis, (int, np.integer)) else len(axis)))
    sizes = iter(x.shape)
    return ops.reshape(x, tuple(1 if d in axes else next(sizes) for d in range(x.ndim + len(axes))))


def broadcast_to(array, shape, subok=False):
    """``numpy.broadcast_to``: ``array`` broadcast to ``shape``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.broadcast_to(x, (2, 3))
    tensor([[1., 2., 3.],
            [1., 2., 3.]], grad_fn=<ExpandBackward0>)
    """
    check_subok(subok, "broadcast_to")
    return ops.broadcast_to(tensor_of(array), _shape_tuple(shape))


def broadcast_arrays(*args, subok=False):
    """``numpy.broadcast_arrays``: the arguments broadcast to their common shape (a tuple).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.broadcast_arrays(x, dualad.tensor([[0.0], [1.0]]))[1]
    tensor([[0., 0., 0.],
            [1., 1., 1.]])
    """
    check_subok(subok, "broadcast_arrays")
    tensors = [tensor_of(a) for a in args]
    shape = np.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(ops.broadcast_to(t, shape) for t in tensors)


def flip(m, axis=None):
    """``numpy.flip``: the order of the elements along ``axis`` (all axes when None)
    reversed.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.flip(x)
    tensor([3., 2., 1.], grad_fn=<FlipBackward0>)
    """
    x = tensor_of(m)
    axes = axes_of(axis, x.ndim)
    axes = tuple(range(x.ndim)) if axes is None else axes
    return ops.flip(x, axes) if axes else x


def fliplr(m):
    """``numpy.fliplr``: columns reversed (axis 1).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.fliplr(a)
    tensor([[2., 1.],
            [4., 3.]], grad_fn=<FlipBackward0>)
    """
    x = tensor_of(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(x, 1)


def flipud(m):
    """``numpy.flipud``: rows reversed (axis 0).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.flipud(a)
    tensor([[3., 4.],
            [1., 2.]], grad_fn=<FlipBackward0>)
    """
    x = tensor_of(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(x, 0)


def roll(a, shift, axis=None):
    """``numpy.roll``: elements shifted cyclically by ``shift`` along ``axis`` (along the
    flattened input when None).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.roll(x, 1)
    tensor([3., 1., 2.], grad_fn=<ViewBackward0>)
    """
    x = tensor_of(a)
    if axis is None:
        return ops.reshape(ops.roll(ops.reshape(x, (-1,)), _int_or_tuple(shift), 0), x.shape)
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    total = [0] * x.ndim
    for s, d in zip(shifts.ravel().tolist(), axes.ravel().tolist()):
        total[axis_of(d, x.ndim)] += s
    moved = tuple(d for d in range(x.ndim) if total[d])
    if not moved:
        return x
    return ops.roll(x, tuple(total[d] for d in moved), moved)


def _int_or_tuple(shift):
    return int(shift) if np.ndim(shift) == 0 else builtins.sum(int(s) for s in shift)


def rot90(m, k=1, axes=(0, 1)):
    """``numpy.rot90``: rotated by 90 degrees ``k`` times in the plane of ``axes``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.rot90(a)
    tensor([[2., 4.],
            [1., 3.]], grad_fn=<PermuteBackward0>)
    """
    x = tensor_of(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    a0, a1 = axis_of(axes[0], x.ndim), axis_of(axes[1], x.ndim)
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    if k == 1:
        return swapaxes(flip(x, a1), a0, a1)
    return flip(swapaxes(x, a0, a1), a1)


def tile(A, reps):
    """``numpy.tile``: ``A`` repeated ``reps`` times along each axis.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.tile(x, 2)
    tensor([1., 2., 3., 1., 2., 3.], grad_fn=<TileBackward0>)
    """
    x = tensor_of(A)
    reps = _shape_tuple(reps)
    if len(reps) < x.ndim:
        reps = (1,) * (x.ndim - len(reps)) + reps
    return ops.tile(x, reps)


def repeat(a, repeats, axis=None):
    """``numpy.repeat``: each element repeated ``repeats`` times along ``axis`` (of the
    flattened input when None).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.repeat(x, 2)
    tensor([1., 1., 2., 2., 3., 3.], grad_fn=<RepeatInterleaveBackward0>)
    """
    x = tensor_of(a)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    axis = axis_of(axis, x.ndim)
    if not isinstance(repeats, (int, np.integer)):
        repeats = as_tensor(np.asarray(repeats, dtype=np.int64).reshape(-1))
        if repeats.shape[0] == 1:
            repeats = int(repeats[0].item())
    return ops.repeat_interleave(x, repeats, dim=axis)


# the shapes that NumPy's atleast_{1,2,3}d give inputs of fewer axes
_AT_LEAST = {
    1: {0: lambda s: (1,)},
    2: {0: lambda s: (1, 1), 1: lambda s: (1, *s)},
    3: {0: lambda s: (1, 1, 1), 1: lambda s: (1, *s, 1), 2: lambda s: (*s, 1)},
}


def _atleast(n, arrays):
    out = []
    for a in arrays:
        x = tensor_of(a)
        if x.ndim < n:
            x = ops.reshape(x, _AT_LEAST[n][x.ndim](tuple(x.shape)))
        out.append(x)
    return out


def _one_or_tuple(tensors):
    return tensors[0] if len(tensors) == 1 else tuple(tensors)


def atleast_1d(*arys):
    """``numpy.atleast_1d``: 0-D inputs as shape ``(1,)``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.atleast_1d(dualad.tensor(2.0, requires_grad=True))
    tensor([2.], grad_fn=<ViewBackward0>)
    """
    return _one_or_tuple(_atleast(1, arys))


def atleast_2d(*arys):
    """``numpy.atleast_2d``: inputs made 2-D: ``(1, 1)``, ``(1, N)``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.atleast_2d(x)
    tensor([[1., 2., 3.]], grad_fn=<ViewBackward0>)
    """
    return _one_or_tuple(_atleast(2, arys))


def atleast_3d(*arys):
    """``numpy.atleast_3d``: inputs made 3-D: ``(1, 1, 1)``, ``(1, N, 1)``, ``(M, N, 1)``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.atleast_3d(x).shape
    (1, 3, 1)
    """
    return _one_or_tuple(_atleast(3, arys))


def copy(a, order="K", subok=False):
    """``numpy.copy``: a copy (differentiable: the gradient flows to ``a``).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.copy(x)
    tensor([1., 2., 3.], grad_fn=<CloneBackward0>)
    """
    check_order(order, "copy")
    check_subok(subok, "copy")
    return ops.clone(tensor_of(a))


def rollaxis(a, axis, start=0):
    """``numpy.rollaxis``: axis ``axis`` moved to just before position ``start``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.rollaxis(dnp.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    x = tensor_of(a)
    axis = axis_of(axis, x.ndim)
    if not -x.ndim <= start <= x.ndim:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-x.ndim} <= start < {x.ndim + 1}, but {start} was passed in"
        )
    start = start + x.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return x if axis == start else moveaxis(x, axis, start)


def unstack(x, /, *, axis=0):
    """``numpy.unstack``: the slices along ``axis``, a tuple of tensors.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.unstack(a)[1]
    tensor([3., 4.], grad_fn=<SliceBackward0>)
    """
    t = tensor_of(x)
    if t.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    moved = moveaxis(t, axis_of(axis, t.ndim), 0)
    return tuple(moved[i] for i in range(moved.shape[0]))
