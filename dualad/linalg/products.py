"""``dualad.linalg``'s products and contractions, with PyTorch's and NumPy's spellings:
matmul, multi_dot, cross, vecdot, outer, trace, diagonal, tensordot, matrix_transpose.

They are made of existing ops (matmul, einsum contractions, products, diagonal views), so every
derivative, forward rule and batching rule is theirs; NumPy's versions in
``dualad.numpy.linalg`` do the argument checks.

>>> import dualad
>>> dualad.linalg.vecdot(dualad.tensor([[1.0, 2.0]]), dualad.tensor([3.0, 4.0]), dim=-1)
tensor([11.])
"""

from __future__ import annotations

from .. import ops
from ..numpy import linalg as _numpy_linalg

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


def _dim(dim, axis, default=-1):
    if dim is not None and axis is not None and dim != axis:
        raise TypeError("dualad.linalg: dim= and axis= name the same argument; give one")
    return default if dim is None and axis is None else (axis if dim is None else dim)


def matmul(input, other):
    """The matrix product of stacks of matrices (``torch.linalg.matmul``,
    ``numpy.linalg.matmul``); 1-D operands are vectors.

    >>> import dualad
    >>> dualad.linalg.matmul(dualad.eye(2), dualad.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    return _numpy_linalg.matmul(input, other)


def multi_dot(tensors, *, out=None):
    """The product of a sequence of matrices (the first may be a 1-D row, the last a 1-D
    column): ``torch.linalg.multi_dot`` and ``numpy.linalg.multi_dot``.

    >>> import dualad
    >>> dualad.linalg.multi_dot([dualad.eye(2), 2 * dualad.eye(2), dualad.tensor([1.0, 1.0])])
    tensor([2., 2.])
    """
    return _numpy_linalg.multi_dot(tensors, out=out)


def cross(input, other, *, dim=None, axis=None):
    """Cross products of 3-vectors along ``dim`` (NumPy's ``axis``; default -1), broadcast
    over the other dims (``torch.linalg.cross``, ``numpy.linalg.cross``).

    >>> import dualad
    >>> dualad.linalg.cross(dualad.tensor([1.0, 0.0, 0.0]), dualad.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    return _numpy_linalg.cross(input, other, axis=_dim(dim, axis))


def vecdot(x, y, *, dim=None, axis=None):
    """``sum(conj(x) * y)`` along ``dim`` (NumPy's ``axis``; default -1), broadcast
    (``torch.linalg.vecdot``, ``numpy.linalg.vecdot``).

    >>> import dualad
    >>> dualad.linalg.vecdot(dualad.tensor([1j, 1.0]), dualad.tensor([1j, 2.0]))
    tensor(3.+0.j)
    """
    return _numpy_linalg.vecdot(x, y, axis=_dim(dim, axis))


def outer(input, vec2):
    """The outer product of two 1-D tensors (``torch.outer``, ``numpy.linalg.outer``).

    >>> import dualad
    >>> dualad.linalg.outer(dualad.tensor([1.0, 2.0]), dualad.tensor([3.0]))
    tensor([[3.],
            [6.]])
    """
    return _numpy_linalg.outer(input, vec2)


def trace(x, *, offset: int = 0, dtype=None):
    """The sums of the diagonals of the last two dims, batched (``numpy.linalg.trace``;
    ``torch.trace`` for a matrix).

    >>> import dualad
    >>> dualad.linalg.trace(dualad.ones(2, 3, 3))
    tensor([3., 3.])
    """
    return _numpy_linalg.trace(x, offset=offset, dtype=dtype)


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """The diagonals of the matrices of a stack (``torch.linalg.diagonal``,
    ``numpy.linalg.diagonal``), as views.

    >>> import dualad
    >>> dualad.linalg.diagonal(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 4.])
    """
    return ops.diagonal(A, offset, dim1, dim2)


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
    return ops.matrix_transpose(x)
