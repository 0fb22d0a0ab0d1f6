"""Factorisations: LU with partial pivoting (``linalg_lu_factor``: packed factors and pivots,
``linalg_lu``: P, L, U) and Cholesky (``linalg_cholesky``, its gradient
``linalg_cholesky_grad``).

Rules (square, nonsingular matrices; every one is made of triangular solves and products, so
all orders compose):

- LU, ``A = P L U``: with ``F = L^{-1} P^T dA U^{-1}``, ``dL = L tril(F, -1)`` and
  ``dU = triu(F) U``; the VJP is ``gA = P L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}``.
  At a singular matrix (a zero on U's diagonal) the rules raise ``LinAlgError``.
- Cholesky, ``A = L L^H``: a function of the Hermitian matrix (only the lower triangle is read,
  as LAPACK's potrf): ``dL = L Phi(L^{-1} sym(dA) L^{-H})`` with ``Phi`` the strictly lower part
  plus half the diagonal, and the VJP its adjoint, a Hermitian gradient (PyTorch's convention),
  computed by the op ``linalg_cholesky_grad`` (BLAS/LAPACK in its impl, its own rules in
  dualad ops, so every order composes).

The pivots are LAPACK's 0-based row interchanges (int32) inside the ops; the public
``lu_factor`` gives PyTorch's 1-based ones.
"""

from __future__ import annotations

from collections import namedtuple

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


def _permutation_impl(xp, piv):
    """``(perm, inverse)``: ``P^T A = A[perm]`` for the row interchanges ``piv``."""
    n = piv.shape[-1]
    perm = xp.broadcast_to(xp.arange(n, dtype=xp.int64), piv.shape).copy()
    swap = piv.astype(xp.int64)
    for i in range(n):
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


def lu_permutation(pivots: Tensor):
    """``(perm, inverse)`` of LAPACK's 0-based row interchanges: ``P^T A = A[perm]``."""
    return apply(_permutation_op, pivots)


# ---------------------------------------------------------------------------------------------
# LU


def _lu_factor_impl(xp, a):
    return lu_factor(xp, a)


def unpack_lu(lu):
    """``(L, U)`` of packed LU factors (L with its unit diagonal)."""
    return tril(lu, -1) + _identity_like(lu), triu(lu)


def _lu_factor_vjp(cts, outs, args, params, needs):
    lu, piv = outs
    g = cts[0]
    lower, upper = unpack_lu(lu)
    inner = tril(matmul(mH(lower), tril(g, -1)), -1) + triu(matmul(triu(g), mH(upper)))
    left = _solve(mH(lower), inner, True, True)  # L^{-H} (...)
    right = mH(_solve(upper, mH(left), True, False))  # (...) U^{-H}
    return (permute_rows(right, lu_permutation(piv)[1]),)


def _lu_factor_jvp(tangents, outs, args, params):
    lu, piv = outs
    lower, upper = unpack_lu(lu)
    permuted = permute_rows(tangents[0], lu_permutation(piv)[0])  # P^T dA
    f = _solve(lower, permuted, False, True)  # L^{-1} P^T dA
    f = mH(_solve(mH(upper), mH(f), False, False))  # (...) U^{-1}
    return matmul(lower, tril(f, -1)) + matmul(triu(f), upper), None


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
    """``(LU, piv)`` of a square stack (0-based int32 pivots), differentiable in LU."""
    return apply(_lu_factor_op, A)


def factor_constant(A: Tensor):
    """The LU factors of ``A``'s value (not tracked): the factorisation the rules of solve,
    inv and slogdet reuse."""
    return apply(_lu_factor_op, A.detach())


@public.function
def linalg_lu_factor(A, *, pivot: bool = True):
    """PyTorch's ``torch.linalg.lu_factor``: ``(LU, pivots)`` of square matrices, L (unit
    diagonal) below and U on and above the diagonal of ``LU``, 1-based int32 ``pivots``
    (``dualad.linalg.lu_factor`` is the public spelling).

    Differentiable in ``LU`` (see the module docstring for the rules); a singular matrix
    factors, but its derivative raises ``LinAlgError``.

    >>> import dualad
    >>> dualad.linalg_lu_factor(dualad.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots
    tensor([2, 2], dtype=int32)
    """
    A = as_linalg_input("lu_factor", A)
    if not pivot:
        raise NotImplementedError("dualad.linalg.lu_factor: pivot=False is not supported on CPU")
    check_square("lu_factor", A.shape)
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
LUFactor = namedtuple("linalg_lu_factor", ("LU", "pivots"))
LUResult = namedtuple("linalg_lu", ("P", "L", "U"))


@public.function
def linalg_lu(A, *, pivot: bool = True):
    """PyTorch's ``torch.linalg.lu``: ``(P, L, U)`` with ``A = P L U`` for square and wide
    (m < n) matrices (SciPy's ``scipy.linalg.lu`` order too), differentiable in ``L`` and
    ``U``. A wide ``A = [A1 | A2]`` factors as LAPACK factors it: partial pivoting picks its
    pivots in the first m columns, so ``P, L, U1`` are ``A1``'s and ``U2 = L^{-1} P^T A2``
    (a composition of differentiable ops). Tall matrices (m > n) raise
    ``NotImplementedError``.

    >>> import dualad
    >>> P, L, U = dualad.linalg_lu(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> P @ L @ U
    tensor([[1., 2.],
            [3., 4.]])
    """
    A = as_linalg_input("lu", A)
    if not pivot:
        raise NotImplementedError("dualad.linalg.lu: pivot=False is not supported on CPU")
    if A.ndim < 2:
        check_square("lu", A.shape)  # (its error for fewer than two dims)
    m, n = A.shape[-2], A.shape[-1]
    if m > n:
        raise NotImplementedError(
            f"dualad.linalg.lu: tall matrices (m > n, shape {tuple(A.shape)}) are not supported; "
            "square and wide ones are (factor A^H, or use qr for a tall least-squares problem)"
        )
    if m < n:
        P, lower, upper = linalg_lu(A[..., :m])
        rest = _solve(lower, matmul(mH(P), A[..., m:]), False, True)  # L^{-1} P^T A2
        return LUResult(P, lower, cat([upper, rest], -1))
    lu, piv = lu_factor_raw(A)
    lower, upper = unpack_lu(lu)
    # P = I[inverse]: rows of the identity, one permutation per matrix; a constant, with a
    # zero derivative (a tangent and gradient of zeros, as every float output has)
    p = permute_rows(_identity_like(lu), lu_permutation(piv)[1])
    return LUResult(zero_derivative(p, lu), lower, upper)


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
