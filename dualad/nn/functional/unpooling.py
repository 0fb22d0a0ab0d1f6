"""``max_unpool1d/2d/3d``: the partial inverse of max pooling, with PyTorch's signatures,
default output size and argument errors.

The values go back to the positions that ``max_pool*d(..., return_indices=True)`` returned
(flat indices in each spatial plane), zeros elsewhere; the op is ``dualad/ops/unpooling.py``
(linear in the values; the indices are not differentiable; where an index repeats, the last
value in row-major order is written and only it gets a gradient).
"""

from __future__ import annotations

import numpy as np

from ..._creation import as_tensor
from ...ops import astype
from ...ops.unpooling import max_unpool
from ._arguments import expand_ints

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _ints(value, nd, name, op):
    values = expand_ints(value, nd)
    if values is None:
        raise RuntimeError(f"{op}: {name} must be an int or a tuple of {nd} ints, got {value!r}")
    return values


def _output_size(nd, x, kernel, stride, padding, output_size):
    """PyTorch's default size ``(in - 1) * stride - 2 * padding + kernel``, or ``output_size``
    (its last ``nd`` entries), strictly within ``stride`` of the default."""
    default = tuple(
        (s - 1) * st - 2 * p + k
        for s, k, st, p in zip(x.shape[x.ndim - nd :], kernel, stride, padding)
    )
    if output_size is None:
        return default
    size = tuple(output_size)
    if len(size) == nd + 2:
        size = size[2:]
    if len(size) != nd:
        raise ValueError(
            f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
            f"has a length of '{len(size)}'"
        )
    for d, (o, s, st) in enumerate(zip(size, default, stride)):
        if not s - st < o < s + st:
            raise ValueError(
                f'invalid output_size "{tuple(output_size)}" (dim {d} must be between '
                f"{s - st} and {s + st})"
            )
    return tuple(int(o) for o in size)


def _unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    op = f"max_unpool{nd}d"
    x, indices = as_tensor(input), as_tensor(indices)
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"dualad.nn.functional.{op}: input of dtype {x.dtype} is not supported (cast "
            "integers with .float())"
        )
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to {op} should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
            f"{x.ndim} dimensions."
        )
    if indices.dtype.kind not in "iu":
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype}")
    if tuple(indices.shape) != tuple(x.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(x.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    kernel = _ints(kernel_size, nd, "kernel_size", op)
    stride = kernel if stride is None else _ints(stride, nd, "stride", op)
    padding = _ints(padding, nd, "padding", op)
    size = _output_size(nd, x, kernel, stride, padding, output_size)
    if any(s <= 0 for s in size):
        raise RuntimeError(f"{op}: the output size {size} must be positive")
    if indices.dtype != np.int64:
        indices = astype(indices, np.int64)
    return max_unpool(x, indices, size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The values of ``(N, C, L)`` or ``(C, L)`` written at ``indices`` (from
    ``max_pool1d(..., return_indices=True)``) into zeros of length ``(L - 1) * stride - 2 *
    padding + kernel_size`` or ``output_size`` (``torch.nn.functional.max_unpool1d``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([[[1.0, 3.0, 2.0, 0.0]]])
    >>> values, indices = F.max_pool1d(x, 2, return_indices=True)
    >>> F.max_unpool1d(values, indices, 2)
    tensor([[[0., 3., 2., 0.]]])
    """
    return _unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """``max_unpool1d`` for ``(N, C, H, W)`` or ``(C, H, W)``; indices are flat positions in the
    output's ``H * W`` plane.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.arange(16.0).reshape(1, 4, 4)
    >>> values, indices = F.max_pool2d(x, 2, return_indices=True)
    >>> F.max_unpool2d(values, indices, 2)
    tensor([[[ 0.,  0.,  0.,  0.],
             [ 0.,  5.,  0.,  7.],
             [ 0.,  0.,  0.,  0.],
             [ 0., 13.,  0., 15.]]])
    """
    return _unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """``max_unpool1d`` for ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.arange(8.0).reshape(1, 2, 2, 2)
    >>> values, indices = F.max_pool3d(x, 2, return_indices=True)
    >>> F.max_unpool3d(values, indices, 2).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _unpool(3, input, indices, kernel_size, stride, padding, output_size)
