"""Factorisations: LU with partial pivoting (``linalg_lu_factor``: packed factors and pivots,
``linalg_lu``: P, L, U) and Cholesky (``linalg_cholesky``, its gradient
``linalg_cholesky_grad``).

Rules (nonsingular leading blocks; every one is made of triangular solves and products, so
all orders compose):

- LU, ``A = P L U`` of an m x n matrix, k = min(m, n): L is m x k unit lower trapezoidal, U is
  k x n upper trapezoidal; ``L1``, ``U1`` are their leading k x k blocks, ``L2`` the last m - k
  rows of L (tall), ``U2`` the last n - k columns of U (wide), and ``dB = P^T dA`` in the same
  blocks. Differentiating ``P^T A = L U`` (P is piecewise constant) block by block, with
  ``G = L1^{-1} dB11 U1^{-1}``: ``dL1 = L1 tril(G, -1)``, ``dU1 = triu(G) U1``,
  ``dL2 = dB21 U1^{-1} - L2 triu(G)``, ``dU2 = L1^{-1} dB12 - tril(G, -1) U2``. The VJP is the
  adjoint: with ``gG = tril(L1^H gL1 - gU2 U2^H, -1) + triu(gU1 U1^H - L2^H gL2)``,
  ``gB11 = L1^{-H} gG U1^{-H}``, ``gB21 = gL2 U1^{-H}``, ``gB12 = L1^{-H} gU2``, ``gA = P gB``
  (square: ``gA = P L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}``). Where U1 is singular
  (a zero pivot: A, or its leading block, is rank deficient) the rules raise ``LinAlgError``.
- Cholesky, ``A = L L^H``: a function of the Hermitian matrix (only the lower triangle is read,
  as LAPACK's potrf): ``dL = L Phi(L^{-1} sym(dA) L^{-H})`` with ``Phi`` the strictly lower part
  plus half the diagonal, and the VJP its adjoint, a Hermitian gradient (PyTorch's convention),
  computed by the op ``linalg_cholesky_grad`` (BLAS/LAPACK in its impl, its own rules in
  dualad ops, so every order composes).

The pivots are LAPACK's 0-based row interchanges (int32) inside the ops; the public
``lu_factor`` gives PyTorch's 1-based ones.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._creation import eye, ones_like
from .._dispatch import OpDef, apply, register
from .._tensor import Tensor
from ._exports import Exports
from ._lapack import (
    check_square,
    cholesky_backward,
    cholesky_lower,
    linalg_dtype,
    lu_factor,
    stack_batch,
)
from .base import broadcast_to, unsqueeze
from .casts import astype
from .comparison import where
from .complex_parts import real
from .diagonals import tril, triu
from .gather_scatter import take_along_dim
from .joining import cat
from .linalg import matmul
from .triangular import _solve, mH

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def as_linalg_input(op: str, a) -> Tensor:
    """``a`` as a tensor of the dtype linalg computes in (ints promote to the default float)."""
    if not isinstance(a, Tensor):
        raise TypeError(f"dualad.linalg.{op}: expected a tensor, got {type(a).__name__}")
    dtype = linalg_dtype(op, a.dtype)
    return a if a.dtype == dtype else astype(a, dtype)


def _identity_like(x):
    return eye(x.shape[-1], dtype=x.dtype, device=x.device)


def zero_derivative(value, like):
    """``value`` (a constant of ``like``'s shape) tracked like ``like`` with a zero derivative
    (PyTorch's results of this kind require grad; their gradient is 0)."""
    return where(ones_like(like, dtype=bool), value, like)


def permute_rows(x, index):
    """``x`` with its rows (dim -2) taken in the order ``index`` (a stack of permutations)."""
    batch = tuple(np.broadcast_shapes(tuple(x.shape[:-2]), tuple(index.shape[:-1])))
    if tuple(x.shape[:-2]) != batch:
        x = broadcast_to(x, batch + tuple(x.shape[-2:]))
    rows = unsqueeze(index, -1)
    return take_along_dim(x, broadcast_to(rows, batch + tuple(rows.shape[-2:])), -2)


# ---------------------------------------------------------------------------------------------
# the permutation of LAPACK's pivots (not differentiable)


def _permutation_impl(xp, piv, *, rows):
    """``(perm, inverse)``: ``P^T A = A[perm]`` for the row interchanges ``piv`` of a matrix of
    ``rows`` rows (one interchange per column factored: ``min(m, n)`` of them)."""
    perm = xp.broadcast_to(xp.arange(rows, dtype=xp.int64), (*piv.shape[:-1], rows)).copy()
    swap = piv.astype(xp.int64)
    for i in range(piv.shape[-1]):
        j = swap[..., i : i + 1]
        here = perm[..., i : i + 1].copy()
        there = xp.take_along_axis(perm, j, axis=-1)
        perm[..., i : i + 1] = there
        xp.put_along_axis(perm, j, here, axis=-1)
    inverse = xp.argsort(perm, axis=-1).astype(xp.int64)
    return perm, inverse


_permutation_op = register(
    OpDef(
        "linalg_lu_permutation",
        _permutation_impl,
        batch=stack_batch(1),
        differentiable=False,
        nout=2,
    )
)


def lu_permutation(pivots: Tensor, rows: int | None = None):
    """``(perm, inverse)`` of LAPACK's 0-based row interchanges: ``P^T A = A[perm]`` (``rows``:
    A's number of rows, by default the number of pivots: a square A)."""
    return apply(_permutation_op, pivots, rows=pivots.shape[-1] if rows is None else rows)


# ---------------------------------------------------------------------------------------------
# LU


def _lu_factor_impl(xp, a):
    return lu_factor(xp, a)


def unpack_lu(lu):
    """``(L, U)`` of packed m x n LU factors: L (m x k, its unit diagonal added) and U
    (k x n), k = min(m, n)."""
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    lower = tril(lu[..., :, :k], -1) + eye(m, k, dtype=lu.dtype, device=lu.device)
    return lower, triu(lu[..., :k, :])


def _right_solve(x, upper):
    """``x U^{-1}`` for an upper triangular ``U``."""
    return mH(_solve(mH(upper), mH(x), False, False))


def _right_solve_h(x, upper):
    """``x U^{-H}`` for an upper triangular ``U``."""
    return mH(_solve(upper, mH(x), True, False))


def _lu_factor_vjp(cts, outs, args, params, needs):
    lu, piv = outs
    g = cts[0]
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    lower, upper = unpack_lu(lu)
    l1, u1 = lower[..., :k, :], upper[..., :, :k]
    g1 = g[..., :k, :k]
    low = matmul(mH(l1), tril(g1, -1))  # L1^H gL1
    up = matmul(triu(g1), mH(u1))  # gU1 U1^H
    if m > n:  # gL2 = g's last rows
        up = up - matmul(mH(lower[..., k:, :]), g[..., k:, :])
    if n > m:  # gU2 = g's last columns
        low = low - matmul(g[..., :, k:], mH(upper[..., :, k:]))
    inner = tril(low, -1) + triu(up)  # gG
    if m > n:  # gB = [L1^{-H} gG; gL2] U1^{-H}
        left = cat([_solve(mH(l1), inner, True, True), g[..., k:, :]], -2)
        grad = _right_solve_h(left, u1)
    else:  # gB = L1^{-H} [gG U1^{-H}, gU2]
        right = _right_solve_h(inner, u1)
        grad = _solve(mH(l1), cat([right, g[..., :, k:]], -1) if n > m else right, True, True)
    return (permute_rows(grad, lu_permutation(piv, m)[1]),)


def _lu_factor_jvp(tangents, outs, args, params):
    lu, piv = outs
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    lower, upper = unpack_lu(lu)
    l1, u1 = lower[..., :k, :], upper[..., :, :k]
    permuted = permute_rows(tangents[0], lu_permutation(piv, m)[0])  # dB = P^T dA
    if m > n:  # Y = dB U1^{-1}: G = L1^{-1} Y1, dL2 = Y2 - L2 triu(G)
        y = _right_solve(permuted, u1)
        f = _solve(l1, y[..., :k, :], False, True)
        below = y[..., k:, :] - matmul(lower[..., k:, :], triu(f))
    else:  # Z = L1^{-1} dB: G = Z1 U1^{-1}, dU2 = Z2 - tril(G, -1) U2
        z = _solve(l1, permuted, False, True)
        f = _right_solve(z[..., :, :k], u1)
        if n > m:
            beside = z[..., :, k:] - matmul(tril(f, -1), upper[..., :, k:])
    top = matmul(l1, tril(f, -1)) + matmul(triu(f), u1)  # dL1 + dU1, packed
    if m > n:
        return cat([top, below], -2), None
    return (cat([top, beside], -1) if n > m else top), None


_lu_factor_op = register(
    OpDef(
        "linalg_lu_factor",
        _lu_factor_impl,
        vjp=_lu_factor_vjp,
        jvp=_lu_factor_jvp,
        batch=stack_batch(2),
        save_args=False,
        save_out=True,
        nout=2,
        nondiff_outputs=(1,),
    )
)


def lu_factor_raw(A: Tensor):
    """``(LU, piv)`` of a stack of m x n matrices (``min(m, n)`` 0-based int32 pivots),
    differentiable in LU."""
    return apply(_lu_factor_op, A)


def factor_constant(A: Tensor):
    """The LU factors of ``A``'s value (not tracked): the factorisation the rules of solve,
    inv and slogdet reuse."""
    return apply(_lu_factor_op, A.detach())


def _check_matrix(op: str, A) -> None:
    if A.ndim < 2:
        check_square(op, A.shape)  # (its error for fewer than two dims)


@public.function
def linalg_lu_factor(A, *, pivot: bool = True):
    """PyTorch's ``torch.linalg.lu_factor``: ``(LU, pivots)`` of m x n matrices (square, tall
    or wide), L (unit diagonal) below and U on and above the diagonal of ``LU``, ``min(m, n)``
    1-based int32 ``pivots`` (``dualad.linalg.lu_factor`` is the public spelling; SciPy's
    ``scipy.linalg.lu_factor`` gives the same factors, 0-based pivots).

    Differentiable in ``LU`` (see the module docstring for the rules); a matrix whose leading
    ``min(m, n)`` columns (or rows) are rank deficient factors, but its derivative raises
    ``LinAlgError`` (the factors are not differentiable there).

    >>> import dualad
    >>> dualad.linalg_lu_factor(dualad.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots
    tensor([2, 2], dtype=int32)
    >>> dualad.linalg_lu_factor(dualad.tensor([[1.0], [4.0], [2.0]])).LU
    tensor([[4.  ],
            [0.25],
            [0.5 ]])
    """
    A = as_linalg_input("lu_factor", A)
    if not pivot:
        raise NotImplementedError("dualad.linalg.lu_factor: pivot=False is not supported on CPU")
    _check_matrix("lu_factor", A)
    lu, piv = lu_factor_raw(A)
    return LUFactor(lu, apply(_one_based_op, piv))


def _one_based_impl(xp, piv):
    return piv + 1


_one_based_op = register(
    OpDef(
        "linalg_pivots_one_based",
        _one_based_impl,
        batch=stack_batch(1),
        differentiable=False,
    )
)


# PyTorch's named results (torch.return_types.linalg_lu_factor, linalg_lu)
# NamedTuple's call form: fields typed Tensor for type checkers, the class keeps its name
LUFactor = NamedTuple("linalg_lu_factor", [("LU", Tensor), ("pivots", Tensor)])  # noqa: UP014
LUResult = NamedTuple("linalg_lu", [("P", Tensor), ("L", Tensor), ("U", Tensor)])  # noqa: UP014


@public.function
def linalg_lu(A, *, pivot: bool = True):
    """PyTorch's ``torch.linalg.lu``: ``(P, L, U)`` with ``A = P L U`` for m x n matrices
    (square, tall or wide; SciPy's ``scipy.linalg.lu`` order too): ``P`` m x m, ``L`` m x k
    unit lower trapezoidal, ``U`` k x n upper trapezoidal, k = min(m, n). Differentiable in
    ``L`` and ``U`` (``P`` is piecewise constant: a zero derivative) through the rules of
    ``linalg_lu_factor`` (module docstring), at every order.

    Singular points: where the leading k x k block of ``P^T A`` is singular (A rank deficient;
    for a wide A, its first m columns) the factors exist but are not differentiable:
    differentiating raises ``LinAlgError``.

    >>> import dualad
    >>> P, L, U = dualad.linalg_lu(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> P @ L @ U
    tensor([[1., 2.],
            [3., 4.]])
    >>> P, L, U = dualad.linalg_lu(dualad.tensor([[1.0], [4.0], [2.0]]))
    >>> L, U
    (tensor([[1.  ],
            [0.25],
            [0.5 ]]), tensor([[4.]]))
    """
    A = as_linalg_input("lu", A)
    if not pivot:
        raise NotImplementedError("dualad.linalg.lu: pivot=False is not supported on CPU")
    _check_matrix("lu", A)
    lu, piv = lu_factor_raw(A)
    lower, upper = unpack_lu(lu)
    # P = I[inverse]: rows of the identity, one permutation per matrix; a constant, with a
    # zero derivative (a tangent and gradient of zeros, as every float output has)
    m = A.shape[-2]
    identity = eye(m, dtype=lu.dtype, device=lu.device)
    p = permute_rows(identity, lu_permutation(piv, m)[1])
    # (tracked through LU's first column, broadcast: P is m x m, LU m x n)
    p = zero_derivative(p, lu[..., :, :1]) if A.shape[-1] else p
    return LUResult(p, lower, upper)


# ---------------------------------------------------------------------------------------------
# Cholesky


def _cholesky_impl(xp, a):
    return cholesky_lower(xp, a)


def _half_diagonal(x):
    """The strictly lower triangle of ``x`` plus half its diagonal."""
    return tril(x, -1) + 0.5 * (x * _identity_like(x))


def _cholesky_vjp(cts, outs, args, params, needs):
    return (cholesky_grad(outs[0], cts[0]),)


def _cholesky_jvp(tangents, outs, args, params):
    lower = outs[0]
    t = tangents[0]
    sym = 0.5 * (t + mH(t))
    f = _solve(lower, sym, False, False)  # L^{-1} dA
    f = mH(_solve(lower, mH(f), False, False))  # (...) L^{-H}
    return matmul(lower, _half_diagonal(f))


_cholesky_op = register(
    OpDef(
        "linalg_cholesky",
        _cholesky_impl,
        vjp=_cholesky_vjp,
        jvp=_cholesky_jvp,
        batch=stack_batch(2),
        save_args=False,
        save_out=True,
    )
)


# ---------------------------------------------------------------------------------------------
# Cholesky's gradient: an op of its own (a LAPACK-level impl; rules in dualad ops)


def _hermitian(x):
    return 0.5 * (x + mH(x))


def _inverse_sandwich(lower, x):
    """``L^{-H} x L^{-1}`` by two triangular solves (only ``lower``'s lower triangle read)."""
    left = _solve(mH(lower), x, True, False)
    return mH(_solve(mH(lower), mH(left), True, False))


def _factor(x):
    """The factor ``linalg_cholesky_grad`` reads: ``x``'s lower triangle, its diagonal real."""
    if x.dtype.kind != "c":
        return tril(x)
    return tril(x, -1) + astype(real(x), x.dtype) * _identity_like(x)


def _cholesky_grad_impl(xp, lower, g):
    return cholesky_backward(xp, lower, g)


def _cholesky_grad_vjp(cts, outs, args, params, needs):
    # G = sym(L^{-H} Phi(L^H M) L^{-1}) (triangles of L and M): with C = sym(ct) and
    # W = Phi(L^{-1} C L^{-H}), gM = L W and gL = tril(M W^H - 2 G C L^{-H}) (with a real
    # diagonal: the op reads only the real part of L's)
    lower, g = _factor(args[0]), tril(args[1])
    c = _hermitian(cts[0])
    w = _half_diagonal(_solve(lower, mH(_solve(lower, c, False, False)), False, False))
    grad_g = matmul(lower, w) if needs[1] else None
    grad_lower = None
    if needs[0]:
        moved = mH(_solve(lower, matmul(c, outs[0]), False, False))  # G C L^{-H}
        grad_lower = _factor(matmul(g, mH(w)) - 2.0 * moved)
    return grad_lower, grad_g


def _cholesky_grad_jvp(tangents, outs, args, params):
    # dG = G(L, dM) + sym(L^{-H} (Phi(dL^H M) L^{-1} - 2 dL^H G)) (triangles of dL and M)
    d_lower, d_g = tangents
    total = None if d_g is None else cholesky_grad(args[0], d_g)
    if d_lower is not None:
        lower, d_lower = _factor(args[0]), _factor(d_lower)
        inner = _half_diagonal(matmul(mH(d_lower), tril(args[1])))
        inner = mH(_solve(mH(lower), mH(inner), True, False))  # Phi(dL^H M) L^{-1}
        inner = inner - 2.0 * matmul(mH(d_lower), outs[0])
        term = _hermitian(_solve(mH(lower), inner, True, False))
        total = term if total is None else total + term
    return total


_cholesky_grad_op = register(
    OpDef(
        "linalg_cholesky_grad",
        _cholesky_grad_impl,
        vjp=_cholesky_grad_vjp,
        jvp=_cholesky_grad_jvp,
        batch=stack_batch(2, 2),
        save_out=True,
    )
)


def cholesky_grad(L, G):
    """The gradient in ``A`` of a loss of ``L = cholesky(A)`` whose gradient in ``L`` is ``G``:
    the Hermitian ``0.5 L^{-H} (P + P^H) L^{-1}``, ``P = tril(L^H G, -1) + diag(L^H G) / 2``
    (only the lower triangles of ``L`` and ``G`` are read, and the real part of ``L``'s
    diagonal, as a Cholesky factor's is real). An op of its own so that the
    backward pass is one triangular product and two triangular solves in BLAS (see
    ``_lapack.cholesky_backward``); its own rules are written in dualad ops, so every order
    of derivative composes. A singular ``L`` (a zero on its diagonal, which no Cholesky
    factor has) raises ``LinAlgError`` in its rules and gives inf/NaN in its value.

    >>> import dualad
    >>> from dualad.ops.factorizations import cholesky_grad
    >>> cholesky_grad(dualad.tensor([[2.0, 0.0], [1.0, 2.0]]), dualad.eye(2))
    tensor([[ 0.3125, -0.125 ],
            [-0.125 ,  0.25  ]])
    """
    return apply(_cholesky_grad_op, L, G)


@public.function
def linalg_cholesky(A, *, upper: bool = False):
    """The Cholesky factor of Hermitian positive-definite matrices: lower ``L`` with
    ``A = L L^H`` (``upper=True``: ``U = L^H``, ``A = U^H U``); ``dualad.linalg.cholesky`` is
    the public spelling. Only the lower triangle of ``A`` is read; the gradient is Hermitian
    (PyTorch's convention). A matrix that is not positive definite raises ``LinAlgError``.

    >>> import dualad
    >>> dualad.linalg_cholesky(dualad.tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    A = as_linalg_input("cholesky", A)
    check_square("cholesky", A.shape)
    lower = apply(_cholesky_op, A)
    return mH(lower) if upper else lower
