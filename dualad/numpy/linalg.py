"""``dualad.numpy.linalg``: the functions of ``numpy.linalg`` that dualad differentiates today:
``norm vector_norm matrix_norm matmul multi_dot matrix_power outer trace diagonal
matrix_transpose vecdot cross tensordot``, and the solvers (the last section): ``solve inv det
slogdet cholesky lstsq pinv matrix_rank tensorsolve tensorinv``.

The decompositions (``svd eigh eigvalsh eig eigvals qr svdvals``, NumPy 2's named-tuple
results) are in ``linalg_decompositions``; the matrix norms through singular values (``ord=2``,
``-2``, ``'nuc'``) use them (``dualad.linalg`` has their derivative conventions). Functions that
are not here have no attribute, so ``np.linalg.f(t, ...)`` raises the protocol's TypeError
instead of converting the tensors and dropping the derivative.

>>> import dualad
>>> import dualad.numpy as dnp
>>> a = dualad.tensor([[3.0, 0.0], [0.0, 4.0]], requires_grad=True)
>>> dnp.linalg.norm(a)
tensor(5., grad_fn=<LinalgVectorNormBackward0>)
>>> dnp.linalg.norm(a, ord=1)
tensor(4., grad_fn=<AmaxBackward0>)
>>> dnp.linalg.matrix_power(a, 3)
tensor([[27.,  0.],
        [ 0., 64.]], grad_fn=<MmBackward0>)
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import ops
from ..linalg import norms as linalg_norms
from ..linalg import solvers as linalg_solvers
from ..linalg import spectral as linalg_spectral
from . import indexing, manipulation, products
from ._common import _NoValue, axes_of, axis_of, finish, floating, promoted_pair, tensor_of
from .linalg_decompositions import eig, eigh, eigvals, eigvalsh, qr, svd, svdvals

__all__ = [
    "norm",
    "vector_norm",
    "matrix_norm",
    "matmul",
    "multi_dot",
    "matrix_power",
    "outer",
    "trace",
    "diagonal",
    "matrix_transpose",
    "vecdot",
    "cross",
    "tensordot",
]

_SINGULAR_VALUE_ORDS = (2, -2, "nuc")


def _vector_norm(x, ord, axes, keepdims):
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    p = 2 if ord is None else ord
    return ops.norm(x, p=float(p), axis=axes, keepdims=keepdims)


def _matrix_norm(x, ord, row, col, keepdims):
    if ord in (None, "fro", "f"):
        return ops.norm(x, p=2.0, axis=(row, col), keepdims=keepdims)
    if ord in _SINGULAR_VALUE_ORDS:
        return _singular_value_norm(x, ord, row, col, keepdims)
    if ord in (1, -1):
        summed, other = row, col - 1 if col > row else col
    elif ord in (np.inf, -np.inf):
        summed, other = col, row - 1 if row > col else row
    else:
        raise ValueError("Invalid norm order for matrices.")
    reduce = ops.amax if ord > 0 else ops.amin
    r = reduce(ops.sum(ops.abs(x), axis=summed), axis=other)
    if keepdims:
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        r = ops.reshape(r, tuple(shape))
    return r


def norm(x, ord=None, axis=None, keepdims=False):
    """``numpy.linalg.norm``: vector norms (``ord`` None/2, any number, ``inf``, ``-inf``, 0)
    over one axis or the flattened input, matrix norms (``'fro'``, 1, -1, ``inf``, ``-inf``)
    over two axes.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.linalg.norm(x)
    tensor(3.74165739, grad_fn=<LinalgVectorNormBackward0>)
    """
    x = floating(tensor_of(x))
    if axis is None:
        if ord is None:
            r = ops.norm(x, p=2.0, axis=None, keepdims=keepdims)
            return ops.reshape(r, (1,) * x.ndim) if keepdims else r
        if x.ndim not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(x.ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    axes = tuple(axis_of(d, x.ndim) for d in axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, axes[0], axes[1], keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """``numpy.linalg.vector_norm``: the ``ord``-norm over ``axis`` (all axes by default, as
    one vector).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.vector_norm(a, axis=1)
    tensor([2.23606798, 5.        ], grad_fn=<LinalgVectorNormBackward0>)
    """
    x = floating(tensor_of(x))
    axes = axes_of(axis, x.ndim)
    r = _vector_norm(x, ord, axes, keepdims)
    if keepdims and axes is None:
        r = ops.reshape(r, (1,) * x.ndim)
    return r


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """``numpy.linalg.matrix_norm``: the ``ord``-norm of the matrices of the last two axes.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.matrix_norm(a)
    tensor(5.47722558, grad_fn=<LinalgVectorNormBackward0>)
    """
    x = floating(tensor_of(x))
    if x.ndim < 2:
        raise ValueError(
            f"{x.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    return _matrix_norm(x, ord, x.ndim - 2, x.ndim - 1, keepdims)


def matmul(x1, x2, /):
    """``numpy.linalg.matmul``: the matrix product (stacks of matrices broadcast).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.matmul(a, a)
    tensor([[ 7., 10.],
            [15., 22.]], grad_fn=<MmBackward0>)
    """
    a, b = promoted_pair(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    return ops.matmul(a, b)


def multi_dot(arrays, *, out=None):
    """``numpy.linalg.multi_dot``: the product of the matrices (the first may be a 1-D row,
    the last a 1-D column), multiplied left to right.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.multi_dot([a, a, [1.0, 0.0]])
    tensor([ 7., 15.], grad_fn=<MmBackward0>)
    """
    tensors = [tensor_of(a) for a in arrays]
    if len(tensors) < 2:
        raise ValueError("Expecting at least two arrays.")
    for t in tensors[1:-1]:
        if t.ndim != 2:
            raise ValueError(f"{t.ndim}-dimensional array given. Array must be two-dimensional")
    r = tensors[0]
    for t in tensors[1:]:
        r = products.dot(r, t)
    return finish(r, out, "linalg.multi_dot")


def matrix_power(a, n):
    """``numpy.linalg.matrix_power``: the ``n``-th power of square matrices for any integer
    ``n``, by repeated squaring (``n = 0``: the identity; ``n < 0``: powers of the inverse,
    ``LinAlgError`` for a singular matrix).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.matrix_power(a, 2)
    tensor([[ 7., 10.],
            [15., 22.]], grad_fn=<MmBackward0>)
    """
    x = tensor_of(a)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError("exponent must be an integer")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return ops.matrix_power(x, int(n))


def outer(x1, x2, /):
    """``numpy.linalg.outer``: ``x1[i] * x2[j]`` of two 1-D inputs.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.linalg.outer(x[:2], x)
    tensor([[1., 2., 3.],
            [2., 4., 6.]], grad_fn=<MulBackward0>)
    """
    a, b = tensor_of(x1), tensor_of(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            f"Input arrays must be one-dimensional, but they are {a.ndim=} and {b.ndim=}."
        )
    return products.outer(a, b)


def trace(x, /, *, offset=0, dtype=None):
    """``numpy.linalg.trace``: the sums of the diagonals of the last two axes.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.trace(a)
    tensor(5., grad_fn=<SumBackward0>)
    """
    return indexing.trace(x, offset, -2, -1, dtype)


def diagonal(x, /, *, offset=0):
    """``numpy.linalg.diagonal``: the diagonals of the last two axes.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.diagonal(a)
    tensor([1., 4.], grad_fn=<DiagonalBackward0>)
    """
    return indexing.diagonal(x, offset, -2, -1)


def matrix_transpose(x, /):
    """``numpy.linalg.matrix_transpose``: swaps the last two axes.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.matrix_transpose(a)
    tensor([[1., 3.],
            [2., 4.]], grad_fn=<PermuteBackward0>)
    """
    return manipulation.matrix_transpose(x)


def vecdot(x1, x2, /, *, axis=-1):
    """``numpy.linalg.vecdot``: ``sum(conj(x1) * x2)`` along ``axis`` (broadcast).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.linalg.vecdot(x, x)
    tensor(14., grad_fn=<SumBackward0>)
    """
    a, b = promoted_pair(x1, x2)
    shape = np.broadcast_shapes(a.shape, b.shape)
    d = axis_of(axis, len(shape))
    if a.dtype.kind == "c":
        a = ops.conj(a)
    return ops.sum(a * b, axis=d)


def cross(x1, x2, /, *, axis=-1):
    """``numpy.linalg.cross``: cross products of 3-vectors along ``axis``.

    >>> import dualad, dualad.numpy as dnp
    >>> u = dualad.tensor([1.0, 0.0, 0.0], requires_grad=True)
    >>> dnp.linalg.cross(u, [0.0, 1.0, 0.0])
    tensor([0., 0., 1.], grad_fn=<ViewBackward0>)
    """
    a, b = tensor_of(x1), tensor_of(x2)
    if a.shape[axis_of(axis, a.ndim)] != 3 or b.shape[axis_of(axis, b.ndim)] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
            f"{a.shape[axis]} and {b.shape[axis]} dimensional instead."
        )
    return products.cross(a, b, axis=axis)


def tensordot(x1, x2, /, *, axes=2):
    """``numpy.linalg.tensordot``: ``numpy.tensordot``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.tensordot(a, a, axes=1)
    tensor([[ 7., 10.],
            [15., 22.]], grad_fn=<EinsumBackward0>)
    """
    return products.tensordot(x1, x2, axes)


# ---------------------------------------------------------------------------------------------
# solvers, factorisations and determinants (NumPy's signatures over dualad.linalg's ops; the
# rules and singular points are documented on ``dualad.linalg``'s functions)

__all__ += [
    "solve",
    "inv",
    "det",
    "slogdet",
    "cholesky",
    "lstsq",
    "pinv",
    "matrix_rank",
    "tensorsolve",
    "tensorinv",
]

SlogdetResult = namedtuple("SlogdetResult", ("sign", "logabsdet"))


def solve(a, b):
    """``numpy.linalg.solve``: ``x`` with ``a @ x = b`` (``b`` a vector only when 1-D, as
    NumPy 2); a singular ``a`` raises ``LinAlgError``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.solve(a, [3.0, 7.0])
    tensor([1., 1.], grad_fn=<ViewBackward0>)
    """
    return ops.linalg_solve(tensor_of(a), tensor_of(b))


def inv(a):
    """``numpy.linalg.inv``: the inverse of square matrices (``LinAlgError`` when singular).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.inv(a)
    tensor([[-2. ,  1. ],
            [ 1.5, -0.5]], grad_fn=<LinalgInvBackward0>)
    """
    return ops.linalg_inv(tensor_of(a))


def det(a):
    """``numpy.linalg.det``: the determinant (its gradient is the transposed adjugate, finite
    at singular matrices).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.det(a)
    tensor(-2., grad_fn=<LinalgDetBackward0>)
    """
    return ops.det(tensor_of(a))


def slogdet(a):
    """``numpy.linalg.slogdet``: ``SlogdetResult(sign, logabsdet)``; ``(0, -inf)`` for a
    singular matrix, where the gradient of logabsdet is NaN.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> sign, logabsdet = dnp.linalg.slogdet(a)
    >>> sign
    tensor(-1., grad_fn=<LinalgSlogdetBackward0>)
    >>> logabsdet
    tensor(0.69314718, grad_fn=<LinalgSlogdetBackward0>)
    """
    return SlogdetResult(*ops.slogdet(tensor_of(a)))


def cholesky(a, /, *, upper=False):
    """``numpy.linalg.cholesky``: the lower (``upper=True``: upper) Cholesky factor;
    ``LinAlgError`` for a matrix that is not positive definite.

    >>> import dualad, dualad.numpy as dnp
    >>> s = dualad.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.cholesky(s)
    tensor([[1.41421356, 0.        ],
            [0.70710678, 1.58113883]], grad_fn=<LinalgCholeskyBackward0>)
    """
    return ops.linalg_cholesky(tensor_of(a), upper=upper)


def lstsq(a, b, rcond=None):
    """``numpy.linalg.lstsq``: ``(x, residuals, rank, s)`` (``rank`` a 0-d int tensor for one
    matrix), the solution differentiable at full rank.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> x, residuals, rank, sv = dnp.linalg.lstsq(a, [3.0, 7.0])
    >>> x
    tensor([1., 1.], grad_fn=<ViewBackward0>)
    >>> rank
    tensor(2, dtype=int32)
    """
    return tuple(linalg_solvers.lstsq(tensor_of(a), tensor_of(b), rcond))


def pinv(a, rcond=None, hermitian=False, *, rtol=_NoValue):
    """``numpy.linalg.pinv``: singular values ``<= rcond * s_max`` count as zero (NumPy's
    defaults: ``rcond=1e-15``, or ``max(m, n) * eps`` for ``rtol=None``).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.pinv(a)
    tensor([[-2. ,  1. ],
            [ 1.5, -0.5]], grad_fn=<LinalgPinvBackward0>)
    """
    x = tensor_of(a)
    if rcond is None:
        if rtol is _NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(x.shape[-2:]) * float(np.finfo(floating(x).dtype).eps)
        else:
            rcond = rtol
    elif rtol is not _NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    return ops.linalg_pinv(x, rtol=float(rcond), hermitian=hermitian)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """``numpy.linalg.matrix_rank``: the number of singular values above ``tol`` (absolute) or
    ``rtol * s_max``; a 1-D input has rank 1 unless it is all zeros (NumPy's rule).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.matrix_rank(a)
    tensor(2)
    """
    x = tensor_of(A)
    if x.ndim < 2:
        return int(bool(np.any(x.detach().numpy() != 0)))
    if tol is not None and rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    return ops.linalg_matrix_rank(x, atol=tol, rtol=rtol, hermitian=hermitian)


matrix_rank.differentiable = False


def tensorsolve(a, b, axes=None):
    """``numpy.linalg.tensorsolve``: ``x`` with ``tensordot(a, x, x.ndim) = b``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.tensorsolve(a, [3.0, 7.0])
    tensor([1., 1.], grad_fn=<ViewBackward0>)
    """
    return ops.linalg_tensorsolve(tensor_of(a), tensor_of(b), axes)


def tensorinv(a, ind=2):
    """``numpy.linalg.tensorinv``: the inverse of ``a`` as a matrix of its first ``ind`` dims by
    the rest.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.tensorinv(a, ind=1)
    tensor([[-2. ,  1. ],
            [ 1.5, -0.5]], grad_fn=<ViewBackward0>)
    """
    return ops.linalg_tensorinv(tensor_of(a), ind)


for _function, _ops in (
    (solve, ("linalg_solve", "linalg_lu_factor")),
    (inv, ("linalg_inv", "linalg_lu_factor")),
    (det, ("linalg_det", "linalg_det_grad")),
    (slogdet, ("linalg_slogdet",)),
    (cholesky, ("linalg_cholesky",)),
    (lstsq, ("linalg_lstsq", "linalg_pinv")),
    (pinv, ("linalg_pinv",)),
    (matrix_rank, ("linalg_matrix_rank",)),
):
    _function.ops = _ops


# ---------------------------------------------------------------------------------------------
# decompositions (in ``linalg_decompositions``) and the matrix norms through singular values

__all__ += ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "qr"]


def _singular_value_norm(x, ord, row, col, keepdims):
    s = linalg_spectral.svdvals(ops.movedim(x, (row, col), (-2, -1)))
    if ord == "nuc":
        r = ops.sum(s, -1)
    else:
        r = (ops.amax if ord > 0 else ops.amin)(s, -1)
    if keepdims:
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        r = ops.reshape(r, tuple(shape))
    return r


# ---------------------------------------------------------------------------------------------
# the condition number

__all__ += ["cond"]


def cond(x, p=None):
    """``numpy.linalg.cond``: ``s_max / s_min`` (``p`` None, 2, -2) or ``norm(x, p) *
    norm(inv(x), p)``; inf for a singular matrix (gradient 0 there: ``dualad.linalg.cond``).

    >>> import dualad, dualad.numpy as dnp
    >>> s = dualad.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.cond(s)
    tensor(2.61803399, grad_fn=<DivBackward0>)
    """
    return linalg_norms.cond(tensor_of(x), p)
