"""Views of another shape or dim order: view, flatten, unflatten, squeeze, expand, transpose and
friends, and ``copy_in_order``.
"""

from __future__ import annotations

import numpy as np

from .._dispatch import dispatch
from ._dims import normalize_dim, normalize_dims, size_args
from ._exports import Exports
from ._helpers import clone
from .base import (
    _broadcast_op,
    _infer_shape,
    _same_shape_view,
    _view_op,
    broadcast_to,
    inverse_permutation,
    permute,
    reshape,
)
from .casts import astype

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


@public.method
def view(x, *shape):
    """``x`` with a new shape, always sharing memory (error when that is impossible).

    >>> import dualad
    >>> x = dualad.arange(6.0)
    >>> v = dualad.view(x, 2, 3)
    >>> v[0, 0] = 10.0
    >>> x  # the view shares memory with x
    tensor([10.,  1.,  2.,  3.,  4.,  5.])
    """
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        return astype(x, shape[0])  # view(dtype): a cast here (no bit reinterpretation)
    shape = _infer_shape(size_args(shape), x.numel(), "view")
    return dispatch(_view_op, (x,), {"shape": shape})


@public.method
def view_as(x, other):
    """``x`` viewed with the shape of ``other`` (always sharing memory, as ``Tensor.view_as``).

    >>> import dualad
    >>> dualad.view_as(dualad.arange(4.0), dualad.zeros(2, 2))
    tensor([[0., 1.],
            [2., 3.]])
    """
    return view(x, tuple(other.shape))


@public.method
def reshape_as(x, other):
    """``x`` reshaped to the shape of ``other`` (a view when possible, as ``Tensor.reshape_as``).

    >>> import dualad
    >>> dualad.reshape_as(dualad.arange(6.0), dualad.zeros(2, 3))
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """
    return reshape(x, tuple(other.shape))


@public.method
def flatten(x, start_dim: int = 0, end_dim: int = -1):
    """Merge dims ``start_dim..end_dim`` into one.

    >>> import dualad
    >>> dualad.flatten(dualad.zeros(2, 3, 4)).shape
    (24,)
    >>> dualad.flatten(dualad.zeros(2, 3, 4), start_dim=1).shape
    (2, 12)
    """
    if x.ndim == 0:
        return reshape(x, (1,))
    start = normalize_dim(start_dim, x.ndim, op="flatten")
    end = normalize_dim(end_dim, x.ndim, op="flatten")
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = x.shape
    merged = 1
    for s in shape[start : end + 1]:
        merged *= s
    return reshape(x, (*shape[:start], merged, *shape[end + 1 :]))


@public.method
def unflatten(x, dim: int, sizes):
    """Split dimension ``dim`` of ``x`` into ``sizes`` (one may be ``-1``), as ``torch.unflatten``.

    >>> import dualad
    >>> dualad.unflatten(dualad.zeros(2, 12), 1, (3, -1)).shape
    (2, 3, 4)
    """
    dim = normalize_dim(dim, x.ndim, op="unflatten")
    sizes = _infer_shape(tuple(sizes), x.shape[dim], "unflatten")
    return reshape(x, (*x.shape[:dim], *sizes, *x.shape[dim + 1 :]))


@public.method
def squeeze(x, dim=None):
    """Remove dimensions of size 1 (all of them, or those in ``dim`` that have size 1).

    >>> import dualad
    >>> dualad.squeeze(dualad.zeros(1, 2, 1)).shape
    (2,)
    >>> dualad.squeeze(dualad.zeros(1, 2, 1), dim=0).shape
    (2, 1)
    """
    if dim is None:
        dims = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        dims = [d for d in normalize_dims(dim, x.ndim, op="squeeze") if x.shape[d] == 1]
    return view(x, tuple(s for i, s in enumerate(x.shape) if i not in dims))


@public.method
def expand(x, *sizes):
    """torch's expand: ``-1`` keeps a dimension's size.

    >>> import dualad
    >>> x = dualad.tensor([[1.0], [2.0]], requires_grad=True)
    >>> dualad.expand(x, -1, 3)
    tensor([[1., 1., 1.],
            [2., 2., 2.]], grad_fn=<ExpandBackward0>)
    >>> dualad.autograd.grad(dualad.expand(x, 2, 3).sum(), x)
    (tensor([[3.],
            [3.]]),)
    """
    sizes = size_args(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({x.ndim})"
        )
    shape = tuple(
        (x.shape[i - lead] if s == -1 else s) if i >= lead else s for i, s in enumerate(sizes)
    )
    if shape == tuple(x.shape):
        return dispatch(_broadcast_op, (x,), {"shape": shape})  # torch: expand is always a view
    return broadcast_to(x, shape)


@public.method
def expand_as(x, other):
    """``x`` expanded to the shape of ``other`` (a view, as ``Tensor.expand_as``).

    >>> import dualad
    >>> dualad.expand_as(dualad.tensor([1.0, 2.0]), dualad.zeros(3, 2))
    tensor([[1., 2.],
            [1., 2.],
            [1., 2.]])
    """
    return expand(x, tuple(other.shape))


@public.function
def broadcast_tensors(*tensors):
    """The tensors broadcast to their common shape (read-only views, like
    ``torch.broadcast_tensors``).

    >>> import dualad
    >>> a, b = dualad.broadcast_tensors(dualad.tensor([1.0, 2.0]), dualad.tensor([[0.0], [1.0]]))
    >>> a
    tensor([[1., 2.],
            [1., 2.]])
    >>> b.shape
    (2, 2)
    """
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(broadcast_to(t, shape) for t in tensors)


@public.method
def transpose(x, dim0: int = 0, dim1: int = 1):
    """Swap two dimensions (a view).

    >>> import dualad
    >>> dualad.transpose(dualad.zeros(2, 3, 4), 0, 2).shape
    (4, 3, 2)
    """
    n = max(x.ndim, 1)
    dim0, dim1 = normalize_dim(dim0, n, op="transpose"), normalize_dim(dim1, n, op="transpose")
    if x.ndim < 2:
        return _same_shape_view(x)
    dims = list(range(x.ndim))
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return permute(x, tuple(dims))


swapaxes = public.method(transpose, "swapaxes")
swapdims = public.method(transpose, "swapdims")


@public.method
def t(x):
    """Transpose of a tensor with at most 2 dims.

    >>> import dualad
    >>> dualad.t(dualad.tensor([[1.0, 2.0, 3.0]]))
    tensor([[1.],
            [2.],
            [3.]])
    """
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return transpose(x, 0, 1) if x.ndim == 2 else _same_shape_view(x)


@public.function
def matrix_transpose(x):
    """Swap the last two dims (``x.mT``).

    >>> import dualad
    >>> dualad.matrix_transpose(dualad.zeros(5, 2, 3)).shape
    (5, 3, 2)
    """
    if x.ndim < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
        )
    return transpose(x, -2, -1)


def copy_in_order(x, order):
    """A copy of ``x`` (same shape and values, differentiable) whose memory holds its dims in
    ``order``, outermost first: C order for ``order == range(ndim)``. For code that must lay a
    result out as another tensor is laid out (a gradient as its base, a batched result batch
    first), so that later views of it behave as on that tensor.

    >>> import dualad
    >>> y = copy_in_order(dualad.ones(2, 3), (1, 0))
    >>> tuple(y.shape), y.mT.view(-1).shape    # y.mT is C order: it views as flat
    ((2, 3), (6,))
    """
    order = tuple(order)
    return permute(clone(permute(x, order)), inverse_permutation(order))
