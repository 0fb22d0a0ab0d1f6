"""What the linear-algebra ops share: LAPACK calls on stacks of matrices, their errors, the
dtype rule of their public functions, and the batching rule of ops on stacks.

Impls call ``lapack(xp)``: ``scipy.linalg`` on NumPy arrays (its functions take stacks of
matrices and broadcast their batch dims), ``cupyx.scipy.linalg`` on CuPy arrays (one matrix at a
time: ``per_matrix`` loops over the batch). Errors keep NumPy's classes (``LinAlgError`` for a
singular or non-positive-definite matrix, ``TypeError`` for a dtype LAPACK has no routine for)
and name the public op and the shapes.

Invariant: impls never write into their inputs (every LAPACK call here copies or is told not to
overwrite).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from .. import _dtypes
from .._dispatch import dispatch
from .._tensor import Tensor
from ._batching import pad_after_batch
from .base import move_bdim_to_front

LinAlgError = np.linalg.LinAlgError


def lapack(xp):
    """The SciPy-like linalg module of the array module ``xp``."""
    if xp is np:
        return scipy.linalg
    import cupyx.scipy.linalg  # CuPy is optional: imported only when a CuPy array arrives

    return cupyx.scipy.linalg


def per_matrix(fn, batch: tuple, cores: tuple, *arrays):
    """``fn`` applied to each matrix of a stack (for backends whose routines take one matrix):
    ``arrays[i]`` has ``cores[i]`` core dims and is broadcast to the batch shape ``batch``;
    the results are stacked back."""
    if not batch:
        return fn(*arrays)
    xp = _module_of(arrays[0])
    spread = [
        xp.broadcast_to(a, batch + tuple(a.shape[a.ndim - c :])) for a, c in zip(arrays, cores)
    ]
    results = [fn(*(a[index] for a in spread)) for index in np.ndindex(*batch)]
    if isinstance(results[0], tuple):
        return tuple(xp.stack(r).reshape(batch + r[0].shape) for r in zip(*results))
    return xp.stack(results).reshape(batch + results[0].shape)


def _module_of(a):
    if isinstance(a, np.ndarray):
        return np
    import cupy  # only reached with CuPy arrays

    return cupy


# ---------------------------------------------------------------------------------------------
# LU factorisation (partial pivoting): the factorisation solve, inv, det and slogdet reuse


def lu_factor(xp, a):
    """``(lu, piv)`` of a stack of square matrices: L (unit, below the diagonal) and U packed
    in ``lu``, LAPACK's 0-based row interchanges in ``piv`` (int32). Exactly singular matrices
    factor too (a zero on U's diagonal); ``check_singular`` tells them apart."""
    if xp is np:
        with warnings.catch_warnings():  # a singular matrix is reported by the callers
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            lu, piv = scipy.linalg.lu_factor(a, check_finite=False)
        return lu, piv.astype(np.int32, copy=False)
    factor = lapack(xp).lu_factor
    lu, piv = per_matrix(lambda m: factor(m, check_finite=False), a.shape[:-2], (2,), a)
    return lu, piv.astype(xp.int32, copy=False)


def singular_mask(xp, lu):
    """Which matrices of the stack have an exactly zero pivot (are exactly singular)."""
    return xp.any(xp.diagonal(lu, 0, -2, -1) == 0, axis=-1)


def check_singular(xp, lu, op: str, shape) -> None:
    """NumPy's ``LinAlgError`` for a stack holding an exactly singular matrix."""
    bad = singular_mask(xp, lu)
    if bool(xp.any(bad)):
        where = "" if bad.ndim == 0 else f" (matrix {tuple(int(i) for i in np.argwhere(bad)[0])})"
        raise LinAlgError(
            f"dualad.linalg.{op}: Singular matrix: the matrix of shape {tuple(shape)}{where} "
            "has no inverse"
        )


def lu_solve(xp, lu, piv, b, adjoint: bool):
    """``A^{-1} b`` (``A^{-H} b`` with ``adjoint``) from A's LU factors; batch dims broadcast."""
    trans = 2 if adjoint else 0
    if xp is np:
        return scipy.linalg.lu_solve((lu, piv), b, trans=trans, check_finite=False)
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    return per_matrix(
        lambda m, p, r: lapack(xp).lu_solve((m, p), r, trans=trans, check_finite=False),
        tuple(batch),
        (2, 1, 2),
        lu,
        piv,
        b,
    )


def lu_inverse(xp, lu, piv):
    """``A^{-1}`` from A's LU factors: LAPACK's getri (4/3 n^3 flops, a third less than
    solving against the identity)."""
    if lu.shape[-1] == 0:  # the inverse of a 0 x 0 matrix is 0 x 0 (NumPy's; getri rejects it)
        return lu.copy()
    if xp is not np:
        eye = xp.eye(lu.shape[-1], dtype=lu.dtype)
        return lu_solve(xp, lu, piv, xp.broadcast_to(eye, lu.shape), False)
    getri, getri_lwork = scipy.linalg.get_lapack_funcs(("getri", "getri_lwork"), (lu,))
    n = lu.shape[-1]
    lwork, _ = getri_lwork(n) if n else (1, 0)
    lwork = max(int(np.real(lwork)), 1)

    def invert(m, p):
        inv, _info = getri(m, p, lwork=lwork, overwrite_lu=False)
        return inv

    if lu.ndim == 2:
        return invert(lu, piv)
    out = np.empty(lu.shape, lu.dtype)
    for index in np.ndindex(*lu.shape[:-2]):
        out[index] = invert(lu[index], piv[index])
    return out


def permutation_parity(xp, piv):
    """``+1``/``-1``: the sign of the permutation that LAPACK's row interchanges make."""
    n = piv.shape[-1]
    swaps = xp.sum(piv != xp.arange(n, dtype=piv.dtype), axis=-1)
    return 1 - 2 * (swaps % 2)


# ---------------------------------------------------------------------------------------------
# Cholesky's backward pass


def cholesky_lower(xp, a):
    """The lower Cholesky factors of a stack of Hermitian positive-definite matrices (their
    lower triangles read), or ``LinAlgError`` naming the shape.

    On NumPy arrays LAPACK's potrf runs on the Fortran-ordered view ``A^T`` of C-ordered A
    (upper factor of ``conj(A)``: ``U = L^T``, so ``L`` is ``U``'s C-ordered view): no
    transposed copies in or out, which ``numpy.linalg.cholesky`` makes."""
    if xp is not np or a.size == 0:
        try:
            return xp.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            _not_positive_definite(a.shape)
    potrf = scipy.linalg.get_lapack_funcs("potrf", (a,))
    a = np.ascontiguousarray(a)
    out = None if a.ndim == 2 else np.empty(a.shape, a.dtype)
    for index in np.ndindex(*a.shape[:-2]):
        upper, info = potrf(a[index].T, lower=0, clean=1)
        if info > 0:
            _not_positive_definite(a.shape)
        if out is None:
            return upper.T
        out[index] = upper.T
    return out


def _not_positive_definite(shape):
    raise LinAlgError(
        f"dualad.linalg.cholesky: Matrix is not positive definite: the matrix of shape "
        f"{tuple(shape)} has no Cholesky factor"
    ) from None


def cholesky_backward(xp, lower, g):
    """``0.5 L^{-H} (P + P^H) L^{-1}`` with ``P = tril(L^H g, -1) + diag(L^H g) / 2``: the
    (Hermitian) gradient of a loss of ``L = cholesky(A)`` whose gradient in ``L`` is ``g``.
    Only the lower triangles of ``L`` and ``g`` are read, and the real part of ``L``'s diagonal
    (a Cholesky factor's is real); batch dims broadcast.

    On NumPy arrays: one triangular product (BLAS trmm, ``n^3`` flops) and LAPACK's sygst/hegst
    (``n^3``: the congruence ``U^{-H} A U^{-1}`` of a Hermitian ``A``, half the two triangular
    solves it replaces), no inverse and two passes over memory besides. (Fewer flops would
    need products of triangles by triangles, which no BLAS routine computes.)"""
    dtype = np.result_type(lower.dtype, g.dtype)
    lower, g = lower.astype(dtype, copy=False), g.astype(dtype, copy=False)
    batch = tuple(np.broadcast_shapes(lower.shape[:-2], g.shape[:-2]))
    if xp is not np:
        return per_matrix(lambda m, r: _cholesky_backward_xp(xp, m, r), batch, (2, 2), lower, g)
    shape = batch + lower.shape[-2:]
    if not batch or 0 in shape:
        return _cholesky_backward_lapack(lower, g) if 0 not in shape else np.zeros(shape, dtype)
    out = np.empty(shape, dtype)
    lower, g = np.broadcast_to(lower, shape), np.broadcast_to(g, shape)
    for index in np.ndindex(*batch):
        out[index] = _cholesky_backward_lapack(lower[index], g[index])
    return out


def _cholesky_backward_lapack(lower, g):
    # sygst(itype=1, upper) computes U^{-H} A U^{-1}; the reversal J (J_ij = 1 where
    # i + j = n - 1) turns L into the upper triangular U = J L J, and
    # G = J U^{-H} (J H J) U^{-1} J / 2 with J H J = J (P + P^H) J: the upper triangle of
    # J X J = U^H (J g J) (X = L^H g) with a real diagonal is all sygst reads of it
    complex_ = lower.dtype.kind == "c"
    trmm, gemm = scipy.linalg.get_blas_funcs(("trmm", "gemm"), (lower,))
    congruence = scipy.linalg.get_lapack_funcs("hegst" if complex_ else "sygst", (lower,))
    u = np.array(lower[::-1, ::-1], order="F")  # a copy: its diagonal may be written
    if complex_:  # hegst reads the real part of the factor's diagonal: so does the product
        u[np.diag_indices_from(u)] = np.real(np.diagonal(u))
    x = _upper_product(trmm, gemm, u, g[::-1, ::-1])  # J X J / 2 (its upper triangle)
    if complex_:
        x[np.diag_indices_from(x)] = np.real(np.diagonal(x))
    r, _ = congruence(x, u, itype=1, lower=0, overwrite_a=1)  # J G J in its upper triangle
    half = np.tril(r[::-1, ::-1])  # G's lower triangle
    out = half + (np.conj(half.T) if complex_ else half.T)
    out[np.diag_indices_from(out)] = np.diagonal(half)
    return out


# below this size one trmm costs less than the blocks' copies and calls
_SPLIT_PRODUCT = 256


def _upper_product(trmm, gemm, u, m):
    """The upper triangle of ``U^H M / 2`` (U upper triangular; its lower triangle left
    unset): with ``U`` and ``M`` in 2x2 blocks, ``[U11^H M1; *, U12^H M12 + U22^H M22]``, the
    lower-left block (a quarter of the product) is never computed: 5 n^3 / 8 flops where one
    trmm takes n^3. (SciPy's BLAS throughout: mixing in NumPy's, another OpenBLAS with its own
    threads, makes the two libraries' threads fight for the cores.)"""
    n = u.shape[0]
    if n < _SPLIT_PRODUCT:
        return trmm(0.5, u, m, side=0, lower=0, trans_a=2)
    h = n // 2
    x = np.empty(u.shape, u.dtype, order="F")
    x[:h] = trmm(0.5, u[:h, :h], m[:h], side=0, lower=0, trans_a=2)
    corner = trmm(0.5, u[h:, h:], m[h:, h:], side=0, lower=0, trans_a=2)
    x[h:, h:] = gemm(0.5, u[:h, h:], m[:h, h:], 1.0, corner, trans_a=2, overwrite_c=1)
    return x


def _cholesky_backward_xp(xp, lower, g):
    """The same on one CuPy matrix, by its triangular solves (no BLAS trmm there)."""
    lower = xp.tril(lower, -1) + xp.diag(xp.real(xp.diagonal(lower))).astype(lower.dtype)
    x = xp.tril(xp.conj(lower).T @ xp.tril(g))
    p = xp.tril(x, -1) + 0.5 * xp.diag(xp.diagonal(x))
    solve = lapack(xp).solve_triangular
    left = solve(lower, p + xp.conj(p).T, lower=True, trans=2, check_finite=False)
    grad = xp.conj(solve(lower, xp.conj(left).T, lower=True, trans=2, check_finite=False)).T
    return 0.25 * (grad + xp.conj(grad).T)


# ---------------------------------------------------------------------------------------------
# checks and dtypes of the public functions


def check_square(op: str, *shapes) -> None:
    """``LinAlgError`` (NumPy's class) for an argument that is not a stack of square matrices."""
    for shape in shapes:
        shape = tuple(shape)
        if len(shape) < 2:
            raise LinAlgError(
                f"dualad.linalg.{op}: {len(shape)}-dimensional array given (shape {shape}). "
                "Array must be at least two-dimensional"
            )
        if shape[-1] != shape[-2]:
            raise LinAlgError(
                f"dualad.linalg.{op}: Last 2 dimensions of the array must be square, got shape "
                f"{shape}"
            )


def batch_shape(op: str, *shapes) -> tuple:
    """The broadcast batch shape of stacks of matrices, or a ValueError naming the shapes."""
    try:
        return tuple(np.broadcast_shapes(*(tuple(s[:-2]) for s in shapes)))
    except ValueError:
        raise ValueError(
            f"dualad.linalg.{op}: the batch dimensions of the shapes "
            f"{', '.join(str(tuple(s)) for s in shapes)} do not broadcast"
        ) from None


def linalg_dtype(op: str, *dtypes) -> np.dtype:
    """The dtype a linalg op computes in (NumPy's rule): integer and bool inputs promote to
    the default float dtype; float16 has no LAPACK routine (TypeError, as NumPy)."""
    dtype = np.result_type(*dtypes)
    if dtype.kind in "biu":
        return _dtypes.promote_types(dtype, _dtypes.get_default_dtype())
    if dtype.kind not in "fc" or dtype.itemsize < 4 or dtype in (np.longdouble, np.clongdouble):
        raise TypeError(f"dualad.linalg.{op}: array type {dtype} is unsupported in linalg")
    return dtype


# ---------------------------------------------------------------------------------------------
# batching: stacks of matrices


def stack_batch(*cores: int):
    """The batching rule of an op on stacks whose arguments have ``cores[i]`` core dims (2 for
    a matrix, 1 for a vector of pivots; the last entry counts for any further arguments) and
    broadcast batch dims: every batch dim goes to the front and batched arguments are padded
    to the same logical rank, so the op's own broadcasting lines the logical batch dims up.
    Outputs are batched at 0."""

    def batch(op, args, bdims, params):
        spec = [cores[min(i, len(cores) - 1)] for i in range(len(args))]
        rank = max(
            a.ndim - c - (b is not None)
            for a, b, c in zip(args, bdims, spec)
            if isinstance(a, Tensor)
        )
        moved = [
            pad_after_batch(move_bdim_to_front(a, b), rank + c) if b is not None else a
            for a, b, c in zip(args, bdims, spec)
        ]
        out = dispatch(op, tuple(moved), params)
        return out, ((0,) * len(out) if isinstance(out, tuple) else 0)

    return batch
