"""NumPy's functions that write into their first argument: ``copyto put putmask place
put_along_axis fill_diagonal``. As in NumPy they change that tensor in place (and return
None); the tensor's new value is built with dualad ops and written with ``Tensor.copy_``, so
the derivative flows from the values written and from the entries kept, at every level. Like
any in-place op, writing into a leaf that requires grad raises; the destination must be a
tensor (an ndarray cannot hold a derivative).

>>> import dualad
>>> import dualad.numpy as dnp
>>> v = dualad.tensor([5.0, 6.0], requires_grad=True)
>>> a = dualad.zeros(2, 2)
>>> dnp.fill_diagonal(a, v)
>>> a
tensor([[5., 0.],
        [0., 6.]], grad_fn=<CopyBackwards>)
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor
from .._tensor import Tensor
from ._common import axis_of, cast, check_casting, tensor_of

__all__ = ["copyto", "put", "putmask", "place", "put_along_axis", "fill_diagonal"]


def _destination(a, name):
    if not isinstance(a, Tensor):
        raise TypeError(
            f"dualad.numpy.{name}: the array written into must be a dualad Tensor (got "
            f"{type(a).__name__}); a NumPy array cannot hold the derivative of the values"
        )
    return a


def _plain(value):
    """Positions and masks as NumPy arrays (they fix what is written where)."""
    if isinstance(value, Tensor):
        return value.numpy()  # (raises TrackedConversionError for a value a level tracks)
    return np.asarray(value)


def _write_flat(a, positions, values):
    """``a.flat[positions] = values`` (``values`` one per position; a repeated position keeps
    the last value, as NumPy's assignment), written into ``a`` in place."""
    n = a.numel()
    flat = ops.reshape(a, (-1,))
    order = np.arange(n)
    order[positions] = n + np.arange(len(positions))
    joined = ops.cat([flat, ops.reshape(cast(values, a.dtype), (-1,))], 0)
    new = ops.index_select(joined, 0, as_tensor(order, device=a.device))
    a.copy_(ops.reshape(new, tuple(a.shape)))


def _cyclic(values, count):
    """The first ``count`` values of ``values`` repeated cyclically (NumPy's rule)."""
    v = ops.reshape(tensor_of(values), (-1,))
    if v.shape[0] == 0:
        raise ValueError("cannot write from an empty array of values")
    return ops.index_select(v, 0, as_tensor(np.arange(count) % v.shape[0], device=v.device))


def copyto(dst, src, casting="same_kind", where=True):
    """``numpy.copyto``: ``src`` (broadcast) written into ``dst`` where ``where`` holds.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dst = dnp.zeros(3)
    >>> dnp.copyto(dst, x * 2)
    >>> dst
    tensor([2., 4., 6.], grad_fn=<CopyBackwards>)
    """
    a = _destination(dst, "copyto")
    check_casting(casting, "copyto")
    s = tensor_of(src)
    if not np.can_cast(s.dtype, a.dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast array data from {s.dtype} to {a.dtype} according to "
                        "the rule 'same_kind'")  # fmt: skip
    new = ops.broadcast_to(cast(s, a.dtype), tuple(a.shape))
    if where is not True:
        new = ops.where(tensor_of(where), new, ops.clone(a))  # (where saves its operands: not a)
    a.copy_(new)


def put(a, ind, v, mode="raise"):
    """``numpy.put``: ``a.flat[ind] = v`` (``v`` repeated cyclically); ``mode`` 'raise',
    'wrap' or 'clip' for indices out of range.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dnp.zeros(3)
    >>> dnp.put(a, [0, 2], [1.0, 2.0])
    >>> a
    tensor([1., 0., 2.])
    """
    t = _destination(a, "put")
    n = t.numel()
    idx = _plain(ind).astype(np.int64).ravel()
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif mode != "raise":
        raise ValueError("clipmode must be one of 'clip', 'raise', or 'wrap'")
    elif ((idx < -n) | (idx >= n)).any():
        raise IndexError(f"index out of range for array of size {n}")
    _write_flat(t, idx % n if n else idx, _cyclic(v, idx.size))


def putmask(a, mask, values):
    """``numpy.putmask``: ``a.flat[i] = values.flat[i % len(values)]`` where ``mask`` holds.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dnp.zeros(3)
    >>> dnp.putmask(a, dualad.tensor([True, False, True]), 7.0)
    >>> a
    tensor([7., 0., 7.])
    """
    t = _destination(a, "putmask")
    m = ops.broadcast_to(tensor_of(mask), tuple(t.shape))
    if m.dtype.kind != "b":
        raise TypeError("putmask: mask must be a boolean array")
    filled = ops.reshape(_cyclic(values, t.numel()), tuple(t.shape))
    t.copy_(ops.where(m, cast(filled, t.dtype), ops.clone(t)))  # (where saves its operands)


def place(arr, mask, vals):
    """``numpy.place``: the entries where ``mask`` holds get the values ``vals`` in order
    (repeated cyclically).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dnp.zeros(4)
    >>> dnp.place(a, dualad.tensor([True, False, True, False]), [1.0, 2.0])
    >>> a
    tensor([1., 0., 2., 0.])
    """
    t = _destination(arr, "place")
    m = _plain(mask).astype(bool).ravel()
    if m.size != t.numel():
        raise ValueError("place: mask and data must be the same size")
    positions = np.nonzero(m)[0]
    if positions.size:
        _write_flat(t, positions, _cyclic(vals, positions.size))


def put_along_axis(arr, indices, values, axis):
    """``numpy.put_along_axis``: ``values`` written at ``indices`` along ``axis`` (of the
    flattened array when None); the inverse of ``take_along_axis``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dnp.zeros((2, 2))
    >>> dnp.put_along_axis(a, dualad.tensor([[1], [0]]), 1.0, axis=1)
    >>> a
    tensor([[0., 1.],
            [1., 0.]])
    """
    t = _destination(arr, "put_along_axis")
    idx = _plain(indices).astype(np.int64)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        flat_shape, axis = (t.numel(),), 0
    else:
        flat_shape, axis = tuple(t.shape), axis_of(axis, t.ndim)
    if idx.ndim != len(flat_shape):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    length, ndim = flat_shape[axis], len(flat_shape)
    if ((idx < -length) | (idx >= length)).any():
        raise IndexError(f"index out of bounds for axis {axis} with size {length}")
    # NumPy's fancy index: ``indices`` on ``axis``, a broadcast arange on every other axis
    fancy = [
        np.where(idx < 0, idx + length, idx)
        if d == axis
        else np.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1))
        for d, n in enumerate(flat_shape)
    ]
    shape = np.broadcast_shapes(*(f.shape for f in fancy))
    fancy = tuple(np.broadcast_to(f, shape) for f in fancy)
    positions = np.ravel_multi_index(fancy, flat_shape).ravel()
    _write_flat(t, positions, ops.broadcast_to(tensor_of(values), shape))


def fill_diagonal(a, val, wrap=False):
    """``numpy.fill_diagonal``: the main diagonal of ``a`` (2-D, or all axes of one length)
    set to ``val`` (repeated cyclically); ``wrap`` continues below a tall matrix.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dnp.zeros((2, 2))
    >>> dnp.fill_diagonal(a, 5.0)
    >>> a
    tensor([[5., 0.],
            [0., 5.]])
    """
    t = _destination(a, "fill_diagonal")
    if t.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if t.ndim == 2:
        step = t.shape[1] + 1
        end = None if wrap else t.shape[1] * t.shape[1]
    else:
        if len(set(t.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step, end = 1 + int(np.cumprod(t.shape[:-1]).sum()), None
    positions = np.arange(t.numel())[:end:step]
    _write_flat(t, positions, _cyclic(val, positions.size))
