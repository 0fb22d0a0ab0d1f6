"""NumPy's index builders over tensors, not differentiable (integer results): ``indices ix_
diag_indices diag_indices_from tril_indices tril_indices_from triu_indices triu_indices_from
mask_indices``, and the contraction planner ``einsum_path``.

They depend on shapes (and for ``ix_``/``mask_indices`` on plain index values) only, so they
answer with NumPy's own functions and return its values as untracked tensors (tuples of them
where NumPy gives tuples); the ``*_from`` functions read only the shape of their argument, which
may be a tensor of any level. ``einsum_path`` returns NumPy's plan (Python values).

>>> import dualad, dualad.numpy as dnp
>>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> rows, cols = dnp.triu_indices_from(x)
>>> rows, cols
(tensor([0, 0, 1]), tensor([0, 1, 1]))
>>> x[rows, cols].sum().backward()
>>> x.grad
tensor([[1., 1.],
        [0., 1.]])
"""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor
from .._tensor import Tensor
from ._nondiff import arg, uses

__all__ = [
    "indices",
    "ix_",
    "diag_indices",
    "diag_indices_from",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "mask_indices",
    "einsum_path",
]


def _tensors(result):
    """NumPy's arrays (or a tuple of them) as untracked tensors."""
    if isinstance(result, tuple):
        return tuple(as_tensor(r) for r in result)
    return as_tensor(result)


def _values(value, name):
    """The plain NumPy values of an index argument: a tensor must be untracked and unbatched
    (an index built from it has no derivative and one shape for every example)."""
    if not isinstance(value, Tensor):
        return np.asarray(value)
    if value.requires_grad or type(value) is not Tensor:
        raise TypeError(
            f"dualad.numpy.{name}: its arguments are indices and must be plain values; got a "
            "tensor that carries a derivative or is transformed (grad/jvp/vmap): pass "
            "t.detach() or the indices outside the transform"
        )
    return value.numpy()


@uses(differentiable=False)
def indices(dimensions, dtype=int, sparse=False):
    """``numpy.indices``: the grid of indices of an array of shape ``dimensions`` (one
    ``(len(dimensions), *dimensions)`` tensor, or a tuple of broadcastable ones when ``sparse``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.indices((2, 2))
    tensor([[[0, 0],
             [1, 1]],
    <BLANKLINE>
            [[0, 1],
             [0, 1]]])
    """
    return _tensors(np.indices(tuple(dimensions), dtype=dtype, sparse=sparse))


@uses(differentiable=False)
def ix_(*args):
    """``numpy.ix_``: open-mesh index tensors from 1-D sequences (booleans as the positions
    where they hold), ``x[dnp.ix_(rows, cols)]`` picks the cross product.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.ix_([0, 1], [1])
    (tensor([[0],
            [1]]), tensor([[1]]))
    """
    return _tensors(np.ix_(*(_values(a, "ix_") for a in args)))


@uses(differentiable=False)
def diag_indices(n, ndim=2):
    """``numpy.diag_indices``: the indices of the main diagonal of an ``(n,) * ndim`` array.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.diag_indices(2)
    (tensor([0, 1]), tensor([0, 1]))
    """
    return _tensors(np.diag_indices(n, ndim))


@uses(differentiable=False)
def diag_indices_from(arr):
    """``numpy.diag_indices_from``: the main diagonal's indices of ``arr`` (every axis of the
    same length, at least two axes).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.diag_indices_from(a)
    (tensor([0, 1]), tensor([0, 1]))
    """
    shape = arg(arr).shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


@uses(differentiable=False)
def tril_indices(n, k=0, m=None):
    """``numpy.tril_indices``: the indices of the lower triangle (diagonal ``k`` and below)
    of an ``(n, m)`` array.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.tril_indices(2)
    (tensor([0, 1, 1]), tensor([0, 0, 1]))
    """
    return _tensors(np.tril_indices(n, k, m))


@uses(differentiable=False)
def triu_indices(n, k=0, m=None):
    """``numpy.triu_indices``: the indices of the upper triangle (diagonal ``k`` and above)
    of an ``(n, m)`` array.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.triu_indices(2)
    (tensor([0, 0, 1]), tensor([0, 1, 1]))
    """
    return _tensors(np.triu_indices(n, k, m))


def _matrix_shape(arr):
    shape = arg(arr).shape
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return shape


@uses(differentiable=False)
def tril_indices_from(arr, k=0):
    """``numpy.tril_indices_from``: ``tril_indices`` for the shape of the 2-D ``arr``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.tril_indices_from(a)
    (tensor([0, 1, 1]), tensor([0, 0, 1]))
    """
    n, m = _matrix_shape(arr)
    return tril_indices(n, k, m)


@uses(differentiable=False)
def triu_indices_from(arr, k=0):
    """``numpy.triu_indices_from``: ``triu_indices`` for the shape of the 2-D ``arr``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.triu_indices_from(a, k=1)
    (tensor([0]), tensor([1]))
    """
    n, m = _matrix_shape(arr)
    return triu_indices(n, k, m)


@uses(differentiable=False)
def mask_indices(n, mask_func, k=0):
    """``numpy.mask_indices``: the indices where ``mask_func(ones((n, n)), k)`` is nonzero
    (``mask_func`` such as ``dnp.triu``; NumPy's functions work too).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.mask_indices(2, dnp.triu)
    (tensor([0, 0, 1]), tensor([0, 1, 1]))
    """
    mask = mask_func(as_tensor(np.ones((n, n), dtype=int)), k)
    return _tensors(np.nonzero(_values(mask, "mask_indices") != 0))


def _shape_only(operand):
    """A stand-in of a tensor operand with its shape and dtype and no memory (einsum_path
    reads shapes only)."""
    if isinstance(operand, Tensor):
        return np.broadcast_to(np.zeros((), dtype=operand.dtype), tuple(operand.shape))
    return operand


@uses(differentiable=False)
def einsum_path(*operands, optimize="greedy", einsum_call=False):
    """``numpy.einsum_path``: NumPy's contraction order and its report for these operands'
    shapes (a ``(path, report)`` pair of Python values); pass the path to ``dnp.einsum``'s
    ``optimize=``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.einsum_path('ij,jk->ik', a, a)[0]
    ['einsum_path', (0, 1)]
    """
    return np.einsum_path(
        *(_shape_only(o) for o in operands), optimize=optimize, einsum_call=einsum_call
    )
