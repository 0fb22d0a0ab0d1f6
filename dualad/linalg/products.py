"""``dualad.linalg``'s products and contractions, with PyTorch's and NumPy's spellings:
matmul, multi_dot, cross, vecdot, outer, trace, diagonal, tensordot, matrix_transpose.

They are made of existing ops (matmul, einsum contractions, products, diagonal views), so every
derivative, forward rule and batching rule is theirs. ``dualad.numpy.linalg`` (a facade above
this one) adds NumPy's own argument rules where they differ.

>>> import dualad
>>> dualad.linalg.vecdot(dualad.tensor([[1.0, 2.0]]), dualad.tensor([3.0, 4.0]), dim=-1)
tensor([11.])
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor

__all__ = [
    "matmul",
    "multi_dot",
    "cross",
    "vecdot",
    "outer",
    "trace",
    "diagonal",
    "tensordot",
    "matrix_transpose",
]


class LinalgShapeError(ValueError, RuntimeError):
    """Arguments of shapes the op does not take: NumPy raises ValueError there, PyTorch
    RuntimeError; this error is both."""


def _matrices(op: str, x):
    """``x`` as a tensor, or LinalgShapeError naming the op and the shape for fewer than 2
    dims."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise LinalgShapeError(
            f"dualad.linalg.{op}: expected a matrix or a stack of matrices (at least 2 dims), "
            f"got shape {tuple(x.shape)}"
        )
    return x


def _broadcast(op: str, a, b) -> tuple:
    try:
        return tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        raise LinalgShapeError(
            f"dualad.linalg.{op}: the shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast"
        ) from None


def _dim(dim, axis, default=-1):
    if dim is not None and axis is not None and dim != axis:
        raise TypeError("dualad.linalg: dim= and axis= name the same argument; give one")
    return default if dim is None and axis is None else (axis if dim is None else dim)


def _pair(a, b):
    """``a`` and ``b`` as tensors of their common dtype (NumPy's promotion)."""
    x, y = as_tensor(a), as_tensor(b)
    dtype = np.result_type(x.dtype, y.dtype)
    return (
        x if x.dtype == dtype else ops.astype(x, dtype),
        y if y.dtype == dtype else ops.astype(y, dtype),
    )


def matmul(input, other):
    """The matrix product of stacks of matrices (``torch.linalg.matmul``,
    ``numpy.linalg.matmul``); 1-D operands are vectors.

    >>> import dualad
    >>> dualad.linalg.matmul(dualad.eye(2), dualad.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    a, b = _pair(input, other)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("dualad.linalg.matmul: both arguments need at least one dimension")
    return ops.matmul(a, b)


def multi_dot(tensors, *, out=None):
    """The product of a sequence of matrices (the first may be a 1-D row, the last a 1-D
    column): ``torch.linalg.multi_dot`` and ``numpy.linalg.multi_dot``.

    >>> import dualad
    >>> dualad.linalg.multi_dot([dualad.eye(2), 2 * dualad.eye(2), dualad.tensor([1.0, 1.0])])
    tensor([2., 2.])
    """
    tensors = [as_tensor(t) for t in tensors]
    if len(tensors) < 2:
        raise ValueError("dualad.linalg.multi_dot: expecting at least two tensors")
    for t in tensors[1:-1]:
        if t.ndim != 2:
            raise ValueError(
                f"dualad.linalg.multi_dot: the inner tensors must be 2-D, got {t.ndim}-D"
            )
    if tensors[0].ndim not in (1, 2) or tensors[-1].ndim not in (1, 2):
        raise ValueError("dualad.linalg.multi_dot: the first and last tensors must be 1-D or 2-D")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    if out is None:
        return result
    return out.copy_(result)


def cross(input, other, *, dim=None, axis=None):
    """Cross products of 3-vectors along ``dim`` (NumPy's ``axis``; default -1), broadcast
    over the other dims (``torch.linalg.cross``, ``numpy.linalg.cross``).

    >>> import dualad
    >>> dualad.linalg.cross(dualad.tensor([1.0, 0.0, 0.0]), dualad.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    a, b = _pair(input, other)
    shape = _broadcast("cross", a, b)  # (PyTorch broadcasts first)
    a, b = ops.broadcast_to(a, shape), ops.broadcast_to(b, shape)
    d = _dim(dim, axis)
    if not -len(shape) <= d < len(shape):
        raise IndexError(f"dualad.linalg.cross: dim {d} out of range for shape {shape}")
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise ValueError(
            f"dualad.linalg.cross: inputs dimension {d} must have length 3. "
            f"Got {a.shape[d]} and {b.shape[d]}"
        )
    a0, a1, a2 = ops.unbind(a, d)
    b0, b1, b2 = ops.unbind(b, d)
    return ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def vecdot(x, y, *, dim=None, axis=None):
    """``sum(conj(x) * y)`` along ``dim`` (NumPy's ``axis``; default -1), broadcast
    (``torch.linalg.vecdot``, ``numpy.linalg.vecdot``).

    >>> import dualad
    >>> dualad.linalg.vecdot(dualad.tensor([1j, 1.0]), dualad.tensor([1j, 2.0]))
    tensor(3.+0.j)
    """
    a, b = _pair(x, y)
    _broadcast("vecdot", a, b)
    if a.dtype.kind == "c":
        a = ops.conj(a)
    return ops.sum(a * b, _dim(dim, axis))


def outer(input, vec2):
    """The outer product of two 1-D tensors (``torch.outer``, ``numpy.linalg.outer``).

    >>> import dualad
    >>> dualad.linalg.outer(dualad.tensor([1.0, 2.0]), dualad.tensor([3.0]))
    tensor([[3.],
            [6.]])
    """
    a, b = as_tensor(input), as_tensor(vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            f"dualad.linalg.outer: both inputs must be 1-D, got {a.ndim}-D and {b.ndim}-D"
        )
    return ops.outer(a, b)


def trace(x, *, offset: int = 0, dtype=None):
    """The sums of the diagonals of the last two dims, batched (``numpy.linalg.trace``;
    ``torch.trace`` for a matrix).

    >>> import dualad
    >>> dualad.linalg.trace(dualad.ones(2, 3, 3))
    tensor([3., 3.])
    """
    return ops.sum(ops.diagonal(_matrices("trace", x), offset, -2, -1), -1, dtype=dtype)


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """The diagonals of the matrices of a stack (``torch.linalg.diagonal``,
    ``numpy.linalg.diagonal``), as views.

    >>> import dualad
    >>> dualad.linalg.diagonal(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 4.])
    """
    return ops.diagonal(_matrices("diagonal", A), offset, dim1, dim2)


def tensordot(a, b, dims=2, *, axes=None):
    """Contraction over ``dims`` (NumPy's ``axes``): ``torch.tensordot``,
    ``numpy.linalg.tensordot``.

    >>> import dualad
    >>> dualad.linalg.tensordot(dualad.ones(2, 3), dualad.ones(3, 4), axes=1).shape
    (2, 4)
    """
    return ops.tensordot(a, b, dims if axes is None else axes)


def matrix_transpose(x):
    """The last two dims swapped (``numpy.linalg.matrix_transpose``; ``Tensor.mT``).

    >>> import dualad
    >>> dualad.linalg.matrix_transpose(dualad.ones(2, 3)).shape
    (3, 2)
    """
    return ops.matrix_transpose(_matrices("matrix_transpose", x))
