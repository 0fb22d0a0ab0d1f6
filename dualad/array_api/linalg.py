"""The array API's ``linalg`` extension, whole: ``cholesky cross det diagonal eigh eigvalsh inv
matmul matrix_norm matrix_power matrix_rank matrix_transpose outer pinv qr slogdet solve svd
svdvals tensordot trace vecdot vector_norm``. The decompositions and solvers are
``dualad.linalg``'s (their derivatives and singular points are documented there), with the
standard's signatures and named results.

>>> import dualad, dualad.array_api as xp
>>> a = dualad.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
>>> xp.linalg.matrix_norm(a)
tensor(5., grad_fn=<LinalgVectorNormBackward0>)
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import linalg as _linalg
from .. import ops
from .._tensor import Tensor
from ._common import axis_tuple, tensor_arg
from ._statistical import sum as _sum


def matmul(x1, x2, /) -> Tensor:
    """The matrix product (1-d arguments as vectors, leading axes broadcast)."""
    a, b = tensor_arg("matmul", x1), tensor_arg("matmul", x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("dualad.array_api.matmul: arguments must be at least 1-d")
    return ops.matmul(a, b)


def matrix_transpose(x, /) -> Tensor:
    """``x`` with its last two axes swapped (``x`` at least 2-d)."""
    x = tensor_arg("matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError("dualad.array_api.matrix_transpose: x must be at least 2-d")
    return ops.matrix_transpose(x)


def tensordot(x1, x2, /, *, axes=2) -> Tensor:
    """The sum of products over ``axes`` (an int: the last of ``x1``, the first of ``x2``; or
    two sequences of axes)."""
    return ops.tensordot(tensor_arg("tensordot", x1), tensor_arg("tensordot", x2), axes=axes)


def vecdot(x1, x2, /, *, axis: int = -1) -> Tensor:
    """``sum(conj(x1) * x2)`` over ``axis`` (leading axes broadcast)."""
    a, b = tensor_arg("vecdot", x1), tensor_arg("vecdot", x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("dualad.array_api.vecdot: arguments must be at least 1-d")
    if axis >= 0:
        raise ValueError("dualad.array_api.vecdot: axis must be negative (counted from the end)")
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(
            f"dualad.array_api.vecdot: axis {axis} has lengths {a.shape[axis]} and {b.shape[axis]}"
        )
    if a.dtype.kind == "c":
        a = ops.conj(a)
    product = ops.mul(a, b)
    # the standard keeps the promoted dtype (dualad's sum would widen integers to int64)
    return ops.astype(ops.sum(product, axis=axis), product.dtype)


def outer(x1, x2, /) -> Tensor:
    """The outer product of two 1-d arrays."""
    a, b = tensor_arg("outer", x1), tensor_arg("outer", x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("dualad.array_api.outer: arguments must be 1-d")
    return ops.outer(a, b)


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """The ``offset``-th diagonals of the matrices in the last two axes."""
    x = tensor_arg("diagonal", x)
    if x.ndim < 2:
        raise ValueError("dualad.array_api.linalg.diagonal: x must be at least 2-d")
    return ops.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sums of the ``offset``-th diagonals of the matrices in the last two axes."""
    x = tensor_arg("trace", x)
    if x.ndim < 2:
        raise ValueError("dualad.array_api.linalg.trace: x must be at least 2-d")
    return _sum(ops.diagonal(x, offset, -2, -1), axis=-1, dtype=dtype)


def cross(x1, x2, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``axis`` (leading axes broadcast)."""
    a, b = tensor_arg("cross", x1), tensor_arg("cross", x2)
    if axis >= 0:
        raise ValueError("dualad.array_api.cross: axis must be negative (counted from the end)")
    if a.ndim < -axis or b.ndim < -axis or a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError("dualad.array_api.cross: both arguments need length 3 along axis")
    return _linalg.cross(a, b, dim=axis)


def matrix_power(x, n, /) -> Tensor:
    """``x`` (square matrices in the last two axes) to the integer power ``n`` (the identity for
    0, powers of the inverse for negative ``n``)."""
    x = tensor_arg("matrix_power", x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("dualad.array_api.matrix_power: x must be square matrices (..., M, M)")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"dualad.array_api.matrix_power: n must be an int, not {type(n).__name__}")
    return _linalg.matrix_power(x, n)


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """The ``ord``-norm of the vectors over ``axis`` (None: all of ``x``); ``ord`` any real
    number or ``inf``/``-inf``. Real result; the gradient at 0 is 0 for ``ord=2``."""
    x = tensor_arg("vector_norm", x)
    axes = axis_tuple(axis, x.ndim)
    if not axes:
        return ops.abs(x)
    if x.numel() == 0 and ord in (math.inf, -math.inf):
        # dualad's norm refuses every empty x for inf norms; only an empty reduction has no
        # identity (and raises in amax/amin)
        if ord > 0 and builtins.any(x.shape[a] == 0 for a in axes):
            # NumPy's convention: the largest |x| of no elements is 0 (the smallest: an error)
            return ops.sum(ops.abs(x), axis=axes, keepdims=keepdims)
        pick = ops.amax if ord > 0 else ops.amin
        return pick(ops.abs(x), axis=axes, keepdims=keepdims)
    return ops.norm(x, ord, axes, keepdims)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> Tensor:
    """The norm of the matrices in the last two axes: ``"fro"``, 1, -1 (largest/smallest
    column sum of ``|x|``), inf, -inf (row sums), 2, -2 and ``"nuc"`` (from the singular
    values)."""
    x = tensor_arg("matrix_norm", x)
    if x.ndim < 2:
        raise ValueError("dualad.array_api.matrix_norm: x must be at least 2-d")
    if ord == "fro":
        return ops.norm(x, 2, (-2, -1), keepdims)
    if ord in (1, -1, math.inf, -math.inf):
        summed_axis = -2 if abs(ord) == 1 else -1
        sums = ops.sum(ops.abs(x), axis=summed_axis, keepdims=True)
        pick = ops.amax if ord > 0 else ops.amin
        out = pick(sums, axis=-1 if abs(ord) == 1 else -2, keepdims=True)
        return out if keepdims else ops.reshape(out, x.shape[:-2])
    if ord in (2, -2, "nuc"):
        return _linalg.matrix_norm(x, ord, keepdim=keepdims)
    raise ValueError(f"dualad.array_api.matrix_norm: invalid ord {ord!r}")


# ---------------------------------------------------------------------------------------------
# decompositions and solvers (dualad.linalg's, the standard's signatures)


def _square(name, x):
    x = tensor_arg(name, x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"dualad.array_api.{name}: x must be square matrices (..., M, M)")
    return x


def cholesky(x, /, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of Hermitian positive-definite matrices (lower, or upper)."""
    return _linalg.cholesky(_square("cholesky", x), upper=upper)


def det(x, /) -> Tensor:
    """The determinant (the adjugate as gradient at singular matrices)."""
    return _linalg.det(_square("det", x))


def eigh(x, /):
    """``(eigenvalues, eigenvectors)`` of Hermitian matrices, eigenvalues ascending."""
    return _linalg.eigh(_square("eigh", x))


def eigvalsh(x, /) -> Tensor:
    """The eigenvalues (ascending) of Hermitian matrices."""
    return _linalg.eigvalsh(_square("eigvalsh", x))


def inv(x, /) -> Tensor:
    """The inverse of square matrices (LinAlgError when singular)."""
    return _linalg.inv(_square("inv", x))


def matrix_rank(x, /, *, rtol=None) -> Tensor:
    """The number of singular values above ``rtol * s_max`` (default ``max(M, N) * eps``)."""
    x = tensor_arg("matrix_rank", x)
    if x.ndim < 2:
        raise ValueError("dualad.array_api.matrix_rank: x must be at least 2-d")
    return _linalg.matrix_rank(x, rtol=rtol)


def pinv(x, /, *, rtol=None) -> Tensor:
    """The pseudo-inverse (singular values below ``rtol * s_max`` count as 0)."""
    x = tensor_arg("pinv", x)
    if x.ndim < 2:
        raise ValueError("dualad.array_api.pinv: x must be at least 2-d")
    if rtol is None:
        rtol = max(x.shape[-2:]) * float(np.finfo(x.dtype).eps)
    return _linalg.pinv(x, rtol=rtol)


def qr(x, /, *, mode: str = "reduced"):
    """``(Q, R)`` for ``mode`` ``"reduced"`` or ``"complete"``."""
    x = tensor_arg("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"dualad.array_api.qr: mode must be 'reduced' or 'complete', not {mode!r}")
    return _linalg.qr(x, mode)


def slogdet(x, /):
    """``(sign, logabsdet)``: ``(0, -inf)`` for a singular matrix."""
    return _linalg.slogdet(_square("slogdet", x))


def solve(x1, x2, /) -> Tensor:
    """``x`` with ``x1 @ x = x2`` (``x2`` a vector only when 1-d)."""
    return _linalg.solve(tensor_arg("solve", x1), tensor_arg("solve", x2))


def svd(x, /, *, full_matrices: bool = True):
    """``(U, S, Vh)`` with ``x = U diag(S) Vh``."""
    return _linalg.svd(tensor_arg("svd", x), full_matrices=full_matrices)


def svdvals(x, /) -> Tensor:
    """The singular values, descending."""
    return _linalg.svdvals(tensor_arg("svdvals", x))


__all__ = [
    "cholesky",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "matrix_rank",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "cross",
    "diagonal",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_transpose",
    "outer",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]
