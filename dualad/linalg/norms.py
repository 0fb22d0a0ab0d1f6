"""``dualad.linalg``'s norms: ``vector_norm``, ``matrix_norm`` and ``norm`` (PyTorch's
``torch.linalg`` signatures, NumPy's ``axis``/``keepdims`` spellings accepted too).

Singular points: the 2-norm of a zero vector has gradient 0 (PyTorch's subgradient); the
Frobenius norm likewise. Matrix norms through singular values: ``'nuc'`` (their sum) has exact
gradients at repeated singular values (``svdvals``'s rules); at a rank-deficient matrix
(``|s|`` has a kink at 0) it gives the subgradient of least norm, ``U1 V1^H`` over the non-zero
singular values; ``2`` (the largest) and ``-2`` (the smallest) are not
differentiable where that value is repeated: the gradient given there is the mean over the tied
singular vector pairs (``amax``'s tie rule), a subgradient, not a derivative.
"""

from __future__ import annotations

import numpy as np

from .._creation import eye
from ..ops import abs as _abs
from ..ops import amax, amin, movedim, reshape, sum, unsqueeze, where
from ..ops._dims import normalize_dim, pick_dim, pick_keepdim
from ..ops._reducing import _as_tensor, _floating_input
from ..ops.norms import vector_norm as _vector_norm
from .products import LinalgShapeError
from .solvers import inv, matrix_rank
from .spectral import svdvals

__all__ = ["norm", "vector_norm", "matrix_norm", "cond"]

_INF = float("inf")
_MATRIX_ORDS = ("fro", "nuc", _INF, -_INF, 1, -1, 2, -2)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None, axis=None, keepdims=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements by default, flattened).

    ``ord``: any number, ``inf``, ``-inf``, 0 (the count of non-zeros). Real for complex
    input. Singular point: the gradient and tangent of the 2-norm at 0 are 0 (PyTorch's
    subgradient, not NaN), and so is its second derivative there (PyTorch's convention too).

    >>> import dualad
    >>> x = dualad.tensor([0.0, 0.0], requires_grad=True)
    >>> dualad.autograd.grad(dualad.linalg.vector_norm(x), x)[0]
    tensor([0., 0.])
    >>> dualad.linalg.vector_norm(dualad.tensor([3.0, -4.0]), ord=1)
    tensor(7.)
    """
    return _vector_norm(x, ord, pick_dim(dim, axis), pick_keepdim(keepdim, keepdims), dtype=dtype)


def _matrix_dims(dim, ndim: int) -> tuple[int, int]:
    try:
        row, col = dim
    except (TypeError, ValueError):
        raise RuntimeError(
            f"dualad.linalg.matrix_norm: dim must be a 2-tuple of ints, got {dim!r}"
        ) from None
    row = normalize_dim(int(row), ndim, op="matrix_norm")
    col = normalize_dim(int(col), ndim, op="matrix_norm")
    if row == col:
        raise RuntimeError(f"dualad.linalg.matrix_norm: dims must be different, got {dim!r}")
    return row, col


def _keep(r, x, row, col, keepdim):
    if not keepdim:
        return r
    shape = list(x.shape)
    shape[row] = shape[col] = 1
    return reshape(r, tuple(shape))


def matrix_norm(
    A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None, axis=None, keepdims=None
):
    """The matrix ``ord``-norm of ``A`` over the two dims ``dim`` (the last two by default).

    ``ord``: ``'fro'``, ``'nuc'`` (sum of singular values), ``inf``/``-inf`` (max/min row
    sum of ``|A|``), 1/-1 (max/min column sum), 2/-2 (largest/smallest singular value). See
    the module docstring for the points where they are not differentiable.

    >>> import dualad
    >>> a = dualad.tensor([[3.0, 0.0], [0.0, -4.0]], requires_grad=True)
    >>> dualad.linalg.matrix_norm(a, ord="nuc")
    tensor(7., grad_fn=<SumBackward0>)
    >>> dualad.autograd.grad(dualad.linalg.matrix_norm(a, ord=2), a)[0]
    tensor([[ 0.,  0.],
            [ 0., -1.]])
    """
    message = "dualad.linalg.matrix_norm: Expected a floating point or complex tensor. Got "
    A = _floating_input(A, dtype, message)
    dim = pick_dim(dim, axis)
    keepdim = pick_keepdim(keepdim, keepdims)
    if A.ndim < 2:  # (NumPy's ValueError, PyTorch's RuntimeError)
        raise LinalgShapeError(
            f"dualad.linalg.matrix_norm: The input tensor A must have at least 2 dimensions "
            f"(shape {tuple(A.shape)})"
        )
    row, col = _matrix_dims(dim, A.ndim)
    if isinstance(ord, str):
        if ord == "fro":
            return _vector_norm(A, 2, (row, col), keepdim)
        if ord != "nuc":
            raise RuntimeError(f"dualad.linalg.matrix_norm: Order {ord} not supported.")
        return _keep(sum(svdvals(movedim(A, (row, col), (-2, -1))), -1), A, row, col, keepdim)
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"dualad.linalg.matrix_norm: Order {ord} not supported.")
    reduce = amax if ord > 0 else amin
    if abs(ord) == 2:
        s = svdvals(movedim(A, (row, col), (-2, -1)))
        return _keep(reduce(s, -1), A, row, col, keepdim)
    # 1: the largest column sum (sum over the rows); inf: the largest row sum
    summed, other = (row, col) if abs(ord) == 1 else (col, row)
    r = reduce(sum(_abs(A), summed, keepdim=True), other, keepdim=True)
    if keepdim:
        return r
    return reshape(r, tuple(size for i, size in enumerate(A.shape) if i not in (row, col)))


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None, axis=None, keepdims=None):
    """``torch.linalg.norm``: a vector norm when ``dim`` is an int (or ``A`` is 1-D), a matrix
    norm when ``dim`` is a 2-tuple (or ``A`` is 2-D and ``ord`` is given); with neither
    ``dim`` nor ``ord``, the 2-norm of the flattened ``A``.

    Singular points: at ``A = 0`` the 2-norm and the Frobenius norm have gradient and tangent 0
    (PyTorch's subgradient, not NaN) and second derivative 0 (the derivative of that
    convention, PyTorch's); the matrix norms through singular values as ``matrix_norm`` says.

    >>> import dualad
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dualad.linalg.norm(a)
    tensor(5.47722558)
    >>> dualad.linalg.norm(a, ord=1)
    tensor(6.)
    """
    A = _as_tensor(A)
    dim = pick_dim(dim, axis)
    keepdim = pick_keepdim(keepdim, keepdims)
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.ndim not in (1, 2):
            raise RuntimeError(
                f"dualad.linalg.norm: If dim is not specified but ord is, the input must be 1D "
                f"or 2D. Got {A.ndim}D."
            )
        dim = tuple(range(A.ndim))
    dim = tuple(dim)
    if len(dim) == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"dualad.linalg.norm: Order {ord} not supported for vectors.")
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    raise RuntimeError(
        f"dualad.linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dim}"
    )


def cond(A, p=None):
    """The condition number of square matrices (``torch.linalg.cond``, ``numpy.linalg.cond``):
    ``s_max / s_min`` for ``p`` None or 2 (``s_min / s_max`` for -2; any shape, from the
    singular values), else ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` for ``'fro'``,
    ``'nuc'``, ``inf``, ``-inf``, 1, -1.

    A singular matrix has condition number inf (as NumPy), with gradient 0 there: the
    derivative does not exist, and the inverse of such a matrix is never formed (the singular
    matrices of a stack are swapped for the identity before ``inv``, then their result for inf:
    the "double where", so the other matrices' gradients stay finite).

    >>> import dualad
    >>> a = dualad.tensor([[2.0, 0.0], [0.0, 0.5]], requires_grad=True)
    >>> dualad.linalg.cond(a)
    tensor(4., grad_fn=<DivBackward0>)
    >>> dualad.linalg.cond(a, p=1)
    tensor(4., grad_fn=<WhereBackward0>)
    >>> dualad.linalg.cond(dualad.tensor([[1.0, 2.0], [2.0, 4.0]]), p="fro")
    tensor(inf)
    """
    A = _as_tensor(A)
    if A.ndim < 2:
        raise np.linalg.LinAlgError(
            f"dualad.linalg.cond: {A.ndim}-dimensional array given. Array must be at least "
            f"two-dimensional"
        )
    if A.shape[-1] == 0 or A.shape[-2] == 0:  # (NumPy's error)
        raise np.linalg.LinAlgError(
            f"dualad.linalg.cond: cond is not defined on empty arrays (shape {tuple(A.shape)})"
        )
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(A)
        big, small = amax(s, -1), amin(s, -1)
        return big / small if p != -2 else small / big
    if p not in _MATRIX_ORDS:
        raise ValueError(f"dualad.linalg.cond: invalid norm order {p!r} for matrices")
    if A.shape[-1] != A.shape[-2]:
        raise np.linalg.LinAlgError(
            f"dualad.linalg.cond: last 2 dimensions of the array must be square for p={p!r}, "
            f"got shape {tuple(A.shape)}"
        )
    n = A.shape[-1]
    singular = matrix_rank(A.detach()) < n
    safe = where(unsqueeze(unsqueeze(singular, -1), -1), eye(n, dtype=A.dtype), A)
    value = matrix_norm(safe, p) * matrix_norm(inv(safe), p)
    return where(singular, _INF, value)
