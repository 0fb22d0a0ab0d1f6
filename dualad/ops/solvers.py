"""Linear solves and inverses: ``linalg_solve``, ``linalg_inv`` (ops), and the solves made of
them or of triangular solves: ``linalg_lu_solve``, ``cholesky_solve``, ``linalg_tensorsolve``,
``linalg_tensorinv``, ``matrix_power``.

The ops take the LU factors of ``A`` as extra, non-differentiable arguments (``factor_constant``
computes them from A's value once): the forward solves with them, and so do the rules, which
are written with the op itself and ``A`` (so every order composes and each one reuses the one
factorisation): for ``X = A^{-1} B``, ``gB = A^{-H} ct`` (the same factors, transposed solve)
and ``gA = -gB X^H``; ``dX = A^{-1} (dB - dA X)``. The inverse ``Y`` has ``gA = -Y^H ct Y^H`` and
``dY = -Y dA Y``, computed from the LU factors by LAPACK's getri.

Singular points: an exactly singular matrix raises ``numpy.linalg.LinAlgError`` naming the op
and the shape (as NumPy). Near-singular matrices solve with LAPACK's accuracy (no check).
"""

from __future__ import annotations

import math

import numpy as np

from .._creation import eye
from .._dispatch import OpDef, apply, register
from .._tensor import Tensor
from ._exports import Exports
from ._helpers import clone
from ._lapack import (
    LinAlgError,
    check_singular,
    check_square,
    linalg_dtype,
    lu_inverse,
    lu_solve,
    singular_mask,
    stack_batch,
)
from .base import broadcast_to, reshape
from .casts import astype
from .factorizations import (
    factor_constant,
    lu_permutation,
    permute_rows,
    unpack_lu,
    zero_derivative,
)
from .linalg import matmul
from .triangular import _check_rows, _solve, mH, vector_as_column

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def promote_pair(op: str, a, b) -> tuple[Tensor, Tensor]:
    """Two tensors in the dtype linalg computes in (NumPy's promotion; ints to float)."""
    for name, x in (("A", a), ("B", b)):
        if not isinstance(x, Tensor):
            raise TypeError(f"dualad.linalg.{op}: {name} must be a tensor, got {type(x).__name__}")
    dtype = linalg_dtype(op, a.dtype, b.dtype)
    return (
        a if a.dtype == dtype else astype(a, dtype),
        b if b.dtype == dtype else astype(b, dtype),
    )


# ---------------------------------------------------------------------------------------------
# solve


def _solve_impl(xp, a, b, lu, piv, *, adjoint):
    check_singular(xp, lu, "solve", a.shape)
    dtype = np.result_type(lu.dtype, b.dtype)
    return lu_solve(xp, lu.astype(dtype, copy=False), piv, b.astype(dtype, copy=False), adjoint)


def solve_factored(a, b, lu, piv, adjoint: bool = False):
    """``A^{-1} B`` (``A^{-H} B`` with ``adjoint``) using the LU factors of A's value."""
    return apply(_solve_op, a, b, lu, piv, adjoint=adjoint)


def _solve_vjp(cts, outs, args, params, needs):
    a, _, lu, piv = args
    x = outs[0]
    adjoint = params["adjoint"]
    g_b = solve_factored(a, cts[0], lu, piv, not adjoint)
    g_a = None
    if needs[0]:
        g_a = -matmul(x, mH(g_b)) if adjoint else -matmul(g_b, mH(x))
    return g_a, (g_b if needs[1] else None), None, None


def _solve_jvp(tangents, outs, args, params):
    a, _, lu, piv = args
    t_a, t_b = tangents[:2]
    adjoint = params["adjoint"]
    rhs = t_b
    if t_a is not None:
        moved = matmul(mH(t_a) if adjoint else t_a, outs[0])
        rhs = -moved if rhs is None else rhs - moved
    return solve_factored(a, rhs, lu, piv, adjoint)


_solve_op = register(
    OpDef(
        "linalg_solve",
        _solve_impl,
        vjp=_solve_vjp,
        jvp=_solve_jvp,
        batch=stack_batch(2, 2, 2, 1),
        save_out=True,
        save_mask=lambda needs: (True, False, True, True),
    )
)


@public.function
def linalg_solve(A, B, *, left: bool = True):
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``) for square ``A``
    (``dualad.linalg.solve`` is the public spelling).

    NumPy 2's rule for ``B``: a vector (or a stack of them) only when ``B`` is 1-D, else a stack
    of ``(n, k)`` matrices; batch dims broadcast. One LU factorisation serves the forward and
    every derivative. A singular ``A`` raises ``LinAlgError``.

    >>> import dualad
    >>> dualad.linalg_solve(dualad.tensor([[2.0, 0.0], [0.0, 4.0]]), dualad.tensor([2.0, 2.0]))
    tensor([1. , 0.5])
    """
    A, B = promote_pair("solve", A, B)
    check_square("solve", A.shape)
    vector = B.ndim == 1
    if vector:
        B = vector_as_column(B) if left else reshape(B, (1, B.shape[0]))
    if B.ndim < 2:
        raise ValueError(f"dualad.linalg.solve: B of shape {tuple(B.shape)} is 0-dimensional")
    lu, piv = factor_constant(A)
    if left:
        _check_rows("solve", A.shape, B.shape)
        x = solve_factored(A, B, lu, piv)
    else:  # X A = B  <=>  A^H X^H = B^H
        _check_rows("solve", A.shape, (*B.shape[:-2], B.shape[-1], B.shape[-2]))
        x = mH(solve_factored(A, mH(B), lu, piv, True))
    return reshape(x, (*tuple(x.shape[:-2]), x.shape[-2] * x.shape[-1])) if vector else x


# ---------------------------------------------------------------------------------------------
# inverse


def _inv_impl(xp, a, lu, piv, *, singular):
    if singular == "raise":
        check_singular(xp, lu, "inv", a.shape)
        return lu_inverse(xp, lu, piv)
    bad = singular_mask(xp, lu)  # singular == "nan": NaN where the inverse does not exist
    if not bool(xp.any(bad)):
        return lu_inverse(xp, lu, piv)
    eye_ = xp.eye(lu.shape[-1], dtype=lu.dtype)
    out = lu_inverse(xp, xp.where(bad[..., None, None], eye_, lu), piv)
    return xp.where(bad[..., None, None], xp.asarray(np.nan, dtype=out.dtype), out)


def _inv_vjp(cts, outs, args, params, needs):
    y = mH(outs[0])
    return -matmul(matmul(y, cts[0]), y), None, None


def _inv_jvp(tangents, outs, args, params):
    y = outs[0]
    return -matmul(matmul(y, tangents[0]), y)


_inv_op = register(
    OpDef(
        "linalg_inv",
        _inv_impl,
        vjp=_inv_vjp,
        jvp=_inv_jvp,
        batch=stack_batch(2, 2, 1),
        save_args=False,
        save_out=True,
    )
)


def inv_factored(a, lu, piv, singular: str = "raise"):
    """``A^{-1}`` from A's LU factors; ``singular="nan"``: NaN for an exactly singular matrix
    (where a derivative that needs the inverse does not exist) instead of ``LinAlgError``."""
    return apply(_inv_op, a, lu, piv, singular=singular)


@public.function
def linalg_inv(A):
    """The inverse of square matrices (``dualad.linalg.inv`` is the public spelling): one LU
    factorisation and LAPACK's getri; ``gA = -Y^H ct Y^H``. A singular matrix raises
    ``LinAlgError`` (NumPy's class).

    >>> import dualad
    >>> dualad.linalg_inv(dualad.tensor([[2.0, 1.0], [1.0, 1.0]]))
    tensor([[ 1., -1.],
            [-1.,  2.]])
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"dualad.linalg.inv: expected a tensor, got {type(A).__name__}")
    dtype = linalg_dtype("inv", A.dtype)
    A = A if A.dtype == dtype else astype(A, dtype)
    check_square("inv", A.shape)
    return inv_factored(A, *factor_constant(A))


inverse = public.method(linalg_inv, "inverse")


# ---------------------------------------------------------------------------------------------
# solves made of triangular solves


def _factor_and_rhs(op: str, factor, B):
    """A square factor and a matrix right-hand side in linalg's dtype, checked."""
    factor, B = promote_pair(op, factor, B)
    check_square(op, factor.shape)
    if B.ndim < 2:
        raise ValueError(f"dualad.linalg.{op}: B must be a matrix, got shape {tuple(B.shape)}")
    return factor, B


@public.function
def linalg_lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False):
    """PyTorch's ``torch.linalg.lu_solve``: ``X`` with ``A X = B`` from ``lu_factor``'s
    ``(LU, pivots)`` (1-based pivots); ``adjoint``: ``A^H X = B``; ``left=False``: ``X A = B``.
    Differentiable in ``LU`` and ``B`` (two triangular solves and a row permutation).

    >>> import dualad
    >>> LU, piv = dualad.linalg_lu_factor(dualad.tensor([[2.0, 0.0], [0.0, 4.0]]))
    >>> dualad.linalg_lu_solve(LU, piv, dualad.tensor([[2.0], [2.0]]))
    tensor([[1. ],
            [0.5]])
    """
    LU, B = _factor_and_rhs("lu_solve", LU, B)
    if not left:  # X A = B <=> A^H X^H = B^H;  X A^H = B <=> A X^H = B^H
        return mH(linalg_lu_solve(LU, pivots, mH(B), left=True, adjoint=not adjoint))
    _check_rows("lu_solve", LU.shape, B.shape)
    lower, upper = unpack_lu(LU)
    perm, inverse_ = lu_permutation(pivots - 1)
    if adjoint:  # A^{-H} = P L^{-H} U^{-H}
        y = _solve(mH(upper), B, False, False)
        return permute_rows(_solve(mH(lower), y, True, True), inverse_)
    y = _solve(lower, permute_rows(B, perm), False, True)  # L^{-1} P^T B
    return _solve(upper, y, True, False)


@public.method
def cholesky_solve(B, L, upper: bool = False):
    """PyTorch's ``torch.cholesky_solve``: ``X`` with ``A X = B`` for ``A = L L^H`` given its
    Cholesky factor (``upper=True``: ``A = U^H U``); two triangular solves, differentiable in
    ``B`` and the factor.

    >>> import dualad
    >>> L = dualad.tensor([[2.0, 0.0], [1.0, 2.0]])
    >>> dualad.cholesky_solve(dualad.tensor([[5.0], [3.0]]), L)
    tensor([[1.1875],
            [0.125 ]])
    """
    L, B = _factor_and_rhs("cholesky_solve", L, B)
    _check_rows("cholesky_solve", L.shape, B.shape)
    if upper:
        return _solve(L, _solve(mH(L), B, False, False), True, False)
    return _solve(mH(L), _solve(L, B, False, False), True, False)


# ---------------------------------------------------------------------------------------------
# tensor solves and powers


@public.function
def linalg_tensorsolve(A, B, dims=None):
    """NumPy's ``tensorsolve``: ``X`` with ``tensordot(A, X, X.ndim) == B``; ``dims`` (NumPy's
    ``axes``) are moved to the end of ``A`` first. A reshaped ``solve``.

    >>> import dualad
    >>> a = dualad.eye(6).reshape(6, 2, 3)
    >>> dualad.linalg_tensorsolve(a, dualad.ones(6)).shape
    (2, 3)
    """
    A, B = promote_pair("tensorsolve", A, B)
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        order = [d for d in range(A.ndim) if d not in dims] + list(dims)
        A = A.permute(*order)
    solution_shape = tuple(A.shape[B.ndim :])
    rows, cols = math.prod(A.shape[: B.ndim]), math.prod(solution_shape)
    if tuple(A.shape[: B.ndim]) != tuple(B.shape) or rows != cols:
        raise LinAlgError(
            f"dualad.linalg.tensorsolve: A of shape {tuple(A.shape)} and B of shape "
            f"{tuple(B.shape)}: the leading dims of A must be B's shape and their product must "
            "equal the product of the remaining dims (the solution's shape)"
        )
    x = linalg_solve(reshape(A, (rows, cols)), reshape(B, (rows,)))
    return reshape(x, solution_shape)


@public.function
def linalg_tensorinv(A, ind: int = 2):
    """NumPy's ``tensorinv``: the inverse of ``A`` seen as a matrix of its first ``ind`` dims
    by the rest, shaped ``A.shape[ind:] + A.shape[:ind]``. A reshaped ``inv``.

    >>> import dualad
    >>> dualad.linalg_tensorinv(dualad.eye(6).reshape(6, 2, 3), ind=1).shape
    (2, 3, 6)
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"dualad.linalg.tensorinv: expected a tensor, got {type(A).__name__}")
    if int(ind) <= 0:
        raise ValueError(f"dualad.linalg.tensorinv: ind must be a positive integer, got {ind}")
    front, back = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(front) != math.prod(back):
        raise LinAlgError(
            f"dualad.linalg.tensorinv: A of shape {tuple(A.shape)} with ind={ind}: the product "
            f"of the first {ind} dims must equal the product of the others"
        )
    inverse_ = linalg_inv(reshape(A, (math.prod(front), math.prod(back))))
    return reshape(inverse_, back + front)


@public.method
def matrix_power(A, n: int):
    """``A`` to the integer power ``n`` by repeated squaring: ``n = 0`` gives the identity
    (with A's batch shape), a negative ``n`` the power of the inverse (``LinAlgError`` for a
    singular matrix).

    >>> import dualad
    >>> dualad.matrix_power(dualad.tensor([[2.0, 1.0], [1.0, 1.0]]), -1)
    tensor([[ 1., -1.],
            [-1.,  2.]])
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"dualad.linalg.matrix_power: expected a tensor, got {type(A).__name__}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(
            f"dualad.linalg.matrix_power: the exponent must be an integer, got {type(n).__name__}"
        )
    check_square("matrix_power", A.shape)
    n = int(n)
    if n == 0:
        identity = eye(A.shape[-1], dtype=A.dtype, device=A.device)
        # PyTorch's result: the identity, tracked with a zero derivative (not a constant)
        return zero_derivative(broadcast_to(identity, tuple(A.shape)), A)
    if n < 0:
        A, n = linalg_inv(A), -n
    result, power = None, A
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result if result is not A else clone(A)
