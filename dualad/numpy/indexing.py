"""NumPy's selection functions over tensors: ``take take_along_axis where clip choose select
compress extract diag diagonal diagflat trace tril triu delete insert resize``.

They differentiate in the values selected from (``a``, ``x``/``y``, ``choices``, the clip
bounds); indices, conditions and masks are integers or booleans and have no derivative, and a
selection whose shape depends on their values (``compress``, ``extract``, one-argument
``where``) needs them as plain values (not batched by vmap).

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
>>> dnp.trace(dnp.where(x > 0, x, 0.0) * x).backward()
>>> x.grad
tensor([[2., 0.],
        [0., 8.]])
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor, zeros
from .._tensor import Tensor
from ._common import _NoValue, axis_of, finish, operand, tensor_of

__all__ = [
    "take",
    "take_along_axis",
    "where",
    "clip",
    "choose",
    "select",
    "compress",
    "extract",
    "diag",
    "diagonal",
    "diagflat",
    "trace",
    "tril",
    "triu",
    "delete",
    "insert",
    "resize",
]


def _index_tensor(indices, x, length, mode, name):
    """Integer ``indices`` into an axis of ``length`` after NumPy's ``mode``."""
    idx = tensor_of(indices)
    if idx.dtype.kind not in "iub":
        raise IndexError(f"dualad.numpy.{name}: indices must be integers (got {idx.dtype})")
    if mode == "wrap":
        return idx % length
    if mode == "clip":
        return ops.clip(idx, 0, length - 1)
    if mode != "raise":
        raise ValueError(f"dualad.numpy.{name}: mode must be 'raise', 'wrap' or 'clip'")
    return idx


def take(a, indices, axis=None, out=None, mode="raise"):
    """``numpy.take``: the elements at ``indices`` along ``axis`` (of the flattened input when
    None); ``mode`` 'raise', 'wrap' or 'clip'.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.take(x, [2, 0])
    tensor([3., 1.], grad_fn=<IndexBackward0>)
    """
    x = tensor_of(a)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    axis = axis_of(axis, x.ndim)
    idx = _index_tensor(indices, x, x.shape[axis], mode, "take")
    return finish(ops.take(x, idx, axis=axis), out, "take")


def take_along_axis(arr, indices, axis=-1):
    """``numpy.take_along_axis``: ``arr`` picked at ``indices`` (of the same number of axes,
    broadcast against ``arr``) along ``axis`` (of the flattened input when None).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.take_along_axis(a, dualad.tensor([[1], [0]]), axis=1)
    tensor([[2.],
            [3.]], grad_fn=<GatherBackward0>)
    """
    x, idx = tensor_of(arr), tensor_of(indices)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        x, axis = ops.reshape(x, (-1,)), 0
    if idx.ndim != x.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if idx.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    return ops.take_along_dim(x, idx, axis_of(axis, x.ndim))


def _condition(condition):
    c = tensor_of(condition)
    return c if c.dtype.kind == "b" else c != 0


def where(condition, x=_NoValue, y=_NoValue, /):
    """``numpy.where``: ``x`` where ``condition`` holds, else ``y`` (broadcast; NEP 50 for
    Python scalars). With the condition alone: the indices where it holds (untracked).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.where(x > 1.5, x, 0.0)
    tensor([0., 2., 3.], grad_fn=<WhereBackward0>)
    """
    if x is _NoValue and y is _NoValue:
        return ops.nonzero(_condition(condition), as_tuple=True)
    if x is _NoValue or y is _NoValue:
        raise ValueError("either both or neither of x and y should be given")
    return ops.where(_condition(condition), operand(x), operand(y))


def clip(a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue, **kwargs):
    """``numpy.clip``: ``a`` limited to ``[a_min, a_max]`` (either may be None or a tensor;
    NumPy 2's ``min=``/``max=`` spellings too).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.clip(x, 1.5, 2.5)
    tensor([1.5, 2. , 2.5], grad_fn=<ClampBackward0>)
    """
    if kwargs:
        raise TypeError(
            f"dualad.numpy.clip: unsupported ufunc keywords {sorted(kwargs)} (only out=)"
        )
    if min is not _NoValue:
        if a_min is not _NoValue:
            raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` "
                             "are provided is forbidden.")  # fmt: skip
        a_min = min
    if max is not _NoValue:
        if a_max is not _NoValue:
            raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` "
                             "are provided is forbidden.")  # fmt: skip
        a_max = max
    lo = None if a_min is _NoValue or a_min is None else operand(a_min)
    hi = None if a_max is _NoValue or a_max is None else operand(a_max)
    x = tensor_of(a)
    # dualad's clip: a value on a bound gets the whole gradient (PyTorch's convention)
    r = ops.clone(x) if lo is None and hi is None else ops.clip(x, lo, hi)
    return finish(r, out, "clip")


def choose(a, choices, out=None, mode="raise"):
    """``numpy.choose``: element ``i`` of ``choices[a[i]]`` (all broadcast together).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.choose(dualad.tensor([1, 0, 1]), [x, -x])
    tensor([-1.,  2., -3.], grad_fn=<ViewBackward0>)
    """
    idx = tensor_of(a)
    cs = [tensor_of(c) for c in choices]
    n = len(cs)
    # (a level's wrapper has no values to check here)
    if mode == "raise" and type(idx) is Tensor and bool(ops.any((idx < 0) | (idx >= n))):
        raise ValueError("invalid entry in choice array")
    idx = _index_tensor(idx, None, n, mode, "choose")
    shape = np.broadcast_shapes(idx.shape, *(c.shape for c in cs))
    dtype = np.result_type(*(c.dtype for c in cs))
    stacked = ops.stack([ops.broadcast_to(ops.astype(c, dtype), shape) for c in cs], 0)
    picked = ops.take_along_dim(stacked, ops.unsqueeze(ops.broadcast_to(idx, shape), 0), 0)
    return finish(ops.squeeze(picked, 0), out, "choose")


def select(condlist, choicelist, default=0):
    """``numpy.select``: from the first choice whose condition holds, else ``default``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.select([x < 2, x > 2], [x, 10 * x], default=0.0)
    tensor([ 1.,  0., 30.], grad_fn=<WhereBackward0>)
    """
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not choicelist:
        raise ValueError("select with an empty condition list is not possible")
    choices = [tensor_of(c) for c in choicelist]
    dtype = np.result_type(*(c.dtype for c in choices), default)
    result = ops.astype(tensor_of(default), dtype)
    for cond, choice in zip(reversed(condlist), reversed(choices)):
        c = tensor_of(cond)
        if c.dtype.kind != "b":
            raise TypeError(f"invalid entry in condlist: should be boolean ndarray (got {c.dtype})")
        result = ops.where(c, ops.astype(choice, dtype), result)
    shape = np.broadcast_shapes(
        *(tensor_of(c).shape for c in condlist), *(c.shape for c in choices)
    )
    return ops.broadcast_to(result, shape)


def _positions(condition, name):
    """The indices where a plain boolean ``condition`` holds (an untracked int64 tensor)."""
    c = tensor_of(condition)
    if c.ndim != 1:
        raise ValueError(f"dualad.numpy.{name}: condition must be a 1-d array")
    return ops.reshape(ops.nonzero(_condition(c)), (-1,))


def compress(condition, a, axis=None, out=None):
    """``numpy.compress``: the slices along ``axis`` where ``condition`` holds (``condition``
    may be shorter than the axis).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.compress([True, False, True], x)
    tensor([1., 3.], grad_fn=<IndexSelectBackward0>)
    """
    x = tensor_of(a)
    if axis is None:
        x, axis = ops.reshape(x, (-1,)), 0
    axis = axis_of(axis, x.ndim)
    positions = _positions(condition, "compress")
    if positions.shape[0] and int(positions[-1].item()) >= x.shape[axis]:
        raise IndexError(
            f"index {int(positions[-1].item())} is out of bounds for axis {axis} with size "
            f"{x.shape[axis]}"
        )
    return finish(ops.index_select(x, axis, positions), out, "compress")


def extract(condition, arr):
    """``numpy.extract``: the elements of ``arr`` where ``condition`` holds (both flattened).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.extract(x > 1.5, x)
    tensor([2., 3.], grad_fn=<IndexSelectBackward0>)
    """
    return compress(ops.reshape(tensor_of(condition), (-1,)), ops.reshape(tensor_of(arr), (-1,)))


def diag(v, k=0):
    """``numpy.diag``: the ``k``-th diagonal of a 2-D input, or a 2-D tensor with a 1-D input on
    its ``k``-th diagonal.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.diag(x[:2])
    tensor([[1., 0.],
            [0., 2.]], grad_fn=<DiagEmbedBackward0>)
    """
    x = tensor_of(v)
    if x.ndim not in (1, 2):
        raise ValueError("Input must be 1- or 2-d.")
    return ops.diag(x, k)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``numpy.diagonal``: the diagonal of the ``axis1``/``axis2`` planes, as the last axis.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.diagonal(a)
    tensor([1., 4.], grad_fn=<DiagonalBackward0>)
    """
    x = tensor_of(a)
    d1, d2 = axis_of(axis1, x.ndim), axis_of(axis2, x.ndim)
    if d1 == d2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return ops.diagonal(x, offset, d1, d2)


def diagflat(v, k=0):
    """``numpy.diagflat``: the flattened input on the ``k``-th diagonal of a 2-D tensor.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.diagflat(a[0])
    tensor([[1., 0.],
            [0., 2.]], grad_fn=<DiagEmbedBackward0>)
    """
    return ops.diag(ops.reshape(tensor_of(v), (-1,)), k)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """``numpy.trace``: the sums along diagonals (of the ``axis1``/``axis2`` planes).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.trace(a)
    tensor(5., grad_fn=<SumBackward0>)
    """
    d = diagonal(a, offset, axis1, axis2)
    return finish(ops.sum(d, axis=-1, dtype=dtype), out, "trace")


def _triangle(m, k, lower):
    x = tensor_of(m)
    rows, cols = x.shape[-2:] if x.ndim >= 2 else (x.shape[-1], x.shape[-1])
    mask = np.tri(rows, cols, k if lower else k - 1, dtype=bool)
    mask = as_tensor(mask if lower else ~mask, device=x.device)
    return ops.where(mask, x, 0)


def tril(m, k=0):
    """``numpy.tril``: the elements on and below the ``k``-th diagonal (others 0).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.tril(a)
    tensor([[1., 0.],
            [3., 4.]], grad_fn=<WhereBackward0>)
    """
    return _triangle(m, k, True)


def triu(m, k=0):
    """``numpy.triu``: the elements on and above the ``k``-th diagonal (others 0).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.triu(a)
    tensor([[1., 2.],
            [0., 4.]], grad_fn=<WhereBackward0>)
    """
    return _triangle(m, k, False)


def _plain_indices(obj):
    """Index arguments (``delete``/``insert``'s ``obj``) as a NumPy array: they fix the
    result's shape, so they must be plain values (a tracked tensor raises while converting)."""
    if isinstance(obj, slice):
        return obj
    return np.asarray(obj.detach() if isinstance(obj, Tensor) and not obj.requires_grad else obj)


def _flat_axis(x, axis):
    if axis is None:
        return ops.reshape(x, (-1,)), 0
    return x, axis_of(axis, x.ndim)


def delete(arr, obj, axis=None):
    """``numpy.delete``: ``arr`` without the entries ``obj`` (int, ints, slice or boolean
    mask) along ``axis`` (of the flattened input when None).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.delete(x, 1)
    tensor([1., 3.], grad_fn=<IndexSelectBackward0>)
    """
    x, axis = _flat_axis(tensor_of(arr), axis)
    n = x.shape[axis]
    obj = _plain_indices(obj)
    keep = np.ones(n, dtype=bool)
    if isinstance(obj, slice):
        keep[obj] = False
    elif obj.dtype == bool:
        if obj.shape != (n,):
            raise ValueError(
                f"boolean array argument obj to delete must be one dimensional and match the "
                f"axis length of {n}"
            )
        keep = ~obj
    else:
        if obj.dtype.kind not in "iu" and obj.size:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        idx = obj.astype(np.int64).ravel()
        if ((idx < -n) | (idx >= n)).any():
            raise IndexError(f"index out of bounds for axis {axis} with size {n}")
        keep[idx] = False
    positions = as_tensor(np.nonzero(keep)[0], device=x.device)
    return ops.index_select(x, axis, positions)


def insert(arr, obj, values, axis=None):
    """``numpy.insert``: ``values`` inserted before the indices ``obj`` along ``axis`` (of the
    flattened input when None); differentiable in ``arr`` and ``values``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.insert(x, 1, 9.0)
    tensor([1., 9., 2., 3.], grad_fn=<IndexSelectBackward0>)
    """
    x, axis = _flat_axis(tensor_of(arr), axis)
    n = x.shape[axis]
    obj = _plain_indices(obj)
    indices = np.arange(n)[obj] if isinstance(obj, slice) else obj
    if indices.dtype == bool:
        raise TypeError("dualad.numpy.insert: boolean obj is not supported (give indices)")
    v = tensor_of(values)
    v = v if v.dtype == x.dtype else ops.astype(v, x.dtype)
    if indices.ndim == 0 and not isinstance(obj, slice):
        index = int(indices)
        if not -n <= index <= n:
            raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
        index = index + n if index < 0 else index
        if v.ndim < x.ndim:  # NumPy: values as ``ndmin=arr.ndim``, their first axis to ``axis``
            v = ops.reshape(v, (1,) * (x.ndim - v.ndim) + tuple(v.shape))
        v = ops.moveaxis(v, 0, axis)
        shape = list(x.shape)
        shape[axis] = v.shape[axis]
        v = ops.broadcast_to(v, tuple(shape))
        positions = index + np.arange(shape[axis])
    else:
        indices = indices.astype(np.int64).ravel()
        if ((indices < -n) | (indices > n)).any():
            raise IndexError(f"index out of bounds for axis {axis} with size {n}")
        indices = np.where(indices < 0, indices + n, indices)
        shape = list(x.shape)
        shape[axis] = indices.size
        v = ops.broadcast_to(v, tuple(shape))
        positions = indices.copy()
        positions[np.argsort(indices, kind="mergesort")] += np.arange(indices.size)
    total = n + len(positions)
    order = np.empty(total, dtype=np.int64)  # result entry -> entry of cat([arr, values])
    old = np.ones(total, dtype=bool)
    old[positions] = False
    order[old] = np.arange(n)
    order[positions] = n + np.arange(len(positions))
    joined = ops.cat([x, v], axis)
    return ops.index_select(joined, axis, as_tensor(order, device=x.device))


def resize(a, new_shape):
    """``numpy.resize``: the flattened input repeated cyclically to fill ``new_shape``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.resize(x, (2, 2))
    tensor([[1., 2.],
            [3., 1.]], grad_fn=<ViewBackward0>)
    """
    x = ops.reshape(tensor_of(a), (-1,))
    shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return ops.reshape(x[:0], shape)
    if x.shape[0] == 0:  # NumPy fills with zeros
        return zeros(shape, dtype=x.dtype, device=x.device)
    positions = as_tensor(np.arange(size) % x.shape[0], device=x.device)
    return ops.reshape(ops.index_select(x, 0, positions), shape)
