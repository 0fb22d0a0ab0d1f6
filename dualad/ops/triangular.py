"""Triangular solves: ``linalg_solve_triangular`` (``X = A^{-1} B`` for triangular ``A``).

The rules solve with the (conjugate) transpose instead of inverting: the VJP is
``gB = A^{-H} ct`` (one more triangular solve) and ``gA = -tri(gB X^H)``, the JVP
``dX = A^{-1} (dB - tri(dA) X)``, where ``tri`` keeps the triangle the op reads (strictly
below/above the diagonal with ``unitriangular``: the diagonal is then taken as ones and gets no
gradient). Written with the op itself, so every order composes. Cholesky's and LU's rules are
made of it.
"""

from __future__ import annotations

import numpy as np

from .._dispatch import OpDef, apply, register
from .._tensor import Tensor
from ._exports import Exports
from ._helpers import conj
from ._lapack import LinAlgError, batch_shape, lapack, per_matrix, stack_batch
from .base import reshape
from .diagonals import tril, triu
from .linalg import matmul
from .views import matrix_transpose

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def mH(x):
    """The conjugate transpose of the last two dims."""
    return conj(matrix_transpose(x))


def triangle(x, upper: bool, strict: bool = False):
    """The upper or lower triangle of ``x`` (without the diagonal when ``strict``)."""
    if upper:
        return triu(x, 1 if strict else 0)
    return tril(x, -1 if strict else 0)


def _solve_triangular_impl(xp, a, b, *, upper, unitriangular):
    if not unitriangular:
        diagonal = xp.diagonal(a, 0, -2, -1)
        if bool(xp.any(diagonal == 0)):
            raise LinAlgError(
                f"dualad.linalg.solve_triangular: Singular matrix: the triangular matrix of "
                f"shape {tuple(a.shape)} has a zero on its diagonal"
            )
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    options = {"lower": not upper, "unit_diagonal": unitriangular, "check_finite": False}
    if xp is np:
        x = lapack(xp).solve_triangular(a, b, **options)
    else:
        batch = batch_shape("solve_triangular", a.shape, b.shape)
        solve = lapack(xp).solve_triangular
        x = per_matrix(lambda m, r: solve(m, r, **options), batch, (2, 2), a, b)
    return x.astype(dtype, copy=False)


def _solve(a, b, upper, unitriangular):
    return apply(_solve_triangular_op, a, b, upper=upper, unitriangular=unitriangular)


def _solve_triangular_vjp(cts, outs, args, params, needs):
    a = args[0]
    upper, unit = params["upper"], params["unitriangular"]
    g_b = _solve(mH(a), cts[0], not upper, unit)
    g_a = -triangle(matmul(g_b, mH(outs[0])), upper, unit) if needs[0] else None
    return g_a, (g_b if needs[1] else None)


def _solve_triangular_jvp(tangents, outs, args, params):
    a = args[0]
    t_a, t_b = tangents
    upper, unit = params["upper"], params["unitriangular"]
    rhs = t_b
    if t_a is not None:
        moved = matmul(triangle(t_a, upper, unit), outs[0])
        rhs = -moved if rhs is None else rhs - moved
    return _solve(a, rhs, upper, unit)


_solve_triangular_op = register(
    OpDef(
        "linalg_solve_triangular",
        _solve_triangular_impl,
        vjp=_solve_triangular_vjp,
        jvp=_solve_triangular_jvp,
        batch=stack_batch(2, 2),
        save_out=True,
        save_mask=lambda needs: (True, False),
    )
)


@public.function
def linalg_solve_triangular(A, B, *, upper: bool, left: bool = True, unitriangular=False):
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``) for triangular ``A``
    (PyTorch's ``torch.linalg.solve_triangular``); ``dualad.linalg.solve_triangular`` is the
    public spelling (SciPy's ``lower=`` too).

    Only the triangle named by ``upper`` is read (and, with ``unitriangular``, not the
    diagonal, taken as ones); the other entries get a zero gradient. A zero on the diagonal
    raises ``LinAlgError`` (the matrix is singular).

    >>> import dualad
    >>> a = dualad.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> dualad.linalg_solve_triangular(a, dualad.tensor([[3.0], [4.0]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    if not isinstance(A, Tensor) or not isinstance(B, Tensor):
        raise TypeError("dualad.linalg.solve_triangular: A and B must be tensors")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise LinAlgError(
            f"dualad.linalg.solve_triangular: A must be a stack of square matrices, got shape "
            f"{tuple(A.shape)}"
        )
    if B.ndim < 2:
        raise ValueError(
            f"dualad.linalg.solve_triangular: B must have at least 2 dimensions, got shape "
            f"{tuple(B.shape)}"
        )
    upper, unit = bool(upper), bool(unitriangular)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a_t, b_t = matrix_transpose(A), matrix_transpose(B)
        _check_rows("solve_triangular", A.shape, (*B.shape[:-2], B.shape[-1], B.shape[-2]))
        return matrix_transpose(_solve(a_t, b_t, not upper, unit))
    _check_rows("solve_triangular", A.shape, B.shape)
    return _solve(A, B, upper, unit)


def _check_rows(op: str, shape_a, shape_b) -> None:
    batch_shape(op, shape_a, shape_b)
    if shape_a[-1] != shape_b[-2]:
        raise ValueError(
            f"dualad.linalg.{op}: incompatible shapes: A is {tuple(shape_a)} and B is "
            f"{tuple(shape_b)} (A's columns must equal B's rows)"
        )


def vector_as_column(b: Tensor) -> Tensor:
    """A 1-D right-hand side as a one-column matrix (NumPy 2's rule: ``b`` is a vector only
    when it is 1-D)."""
    return reshape(b, (*b.shape, 1))
