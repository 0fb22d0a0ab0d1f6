"""Least squares and ranks: ``linalg_pinv`` (the pseudo-inverse), ``linalg_lstsq`` (NumPy's
``(solution, residuals, rank, singular_values)``) and ``linalg_matrix_rank`` (not
differentiable).

pinv's rules are the constant-rank formula in terms of the pseudo-inverse ``P`` itself
(Golub and Pereyra): ``dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P``, exact where
the rank (the number of singular values above the cutoff) does not change nearby; the VJP is
its adjoint. lstsq's solution ``X = A^+ B`` uses the same formula, and is differentiable only
for a matrix of full rank: at a rank-deficient one the solution jumps under perturbations that
raise its rank, so its derivative raises ``LinAlgError`` instead of giving a number.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from .._creation import _is_tracked, eye
from .._dispatch import OpDef, apply, register
from .._tensor import Tensor
from ._exports import Exports
from ._helpers import conj
from ._lapack import LinAlgError, batch_shape, stack_batch
from ._reducing import _sum
from .base import reshape
from .complex_parts import real
from .factorizations import as_linalg_input
from .linalg import matmul
from .solvers import promote_pair
from .svd import svdvals
from .triangular import mH, vector_as_column

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

# NamedTuple's call form: fields typed Tensor for type checkers, the class keeps its name
lstsq_result = NamedTuple(  # noqa: UP014
    "lstsq",
    [("solution", Tensor), ("residuals", Tensor), ("rank", Tensor), ("singular_values", Tensor)],
)


def _cutoff(xp, s, atol, rtol, shape):
    """The singular values counted as zero are those <= max(atol, rtol * s_max)."""
    if rtol is None:
        rtol = 0.0 if atol else max(shape[-2:]) * np.finfo(s.dtype).eps
    smax = xp.max(s, axis=-1, keepdims=True) if s.shape[-1] else xp.zeros((*s.shape[:-1], 1))
    return xp.maximum(atol or 0.0, rtol * smax)


def _singular_values(xp, a, hermitian):
    if hermitian:
        w, v = xp.linalg.eigh(a)
        return v, xp.abs(w), w, xp.conj(xp.swapaxes(v, -1, -2))
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    return u, s, s, vh


def _pinv_impl(xp, a, *, atol, rtol, hermitian, full_rank):
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return xp.zeros((*a.shape[:-2], n, m), dtype=a.dtype)
    u, s, values, vh = _singular_values(xp, a, hermitian)
    large = s > _cutoff(xp, s, atol, rtol, a.shape)
    if full_rank and not bool(xp.all(large)):
        raise LinAlgError(
            f"dualad.linalg.{full_rank}: the matrix of shape {tuple(a.shape)} is rank deficient "
            f"(rank {int(xp.min(xp.sum(large, axis=-1)))} < {min(m, n)}): the least-squares "
            "solution has no derivative there (it jumps when the rank changes)"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        inverse = xp.where(large, 1 / xp.where(large, values, 1), 0).astype(a.dtype)
    v = xp.conj(xp.swapaxes(vh, -1, -2))
    return (v * inverse[..., None, :]) @ xp.conj(xp.swapaxes(u, -1, -2))


def _complement(left, right):
    """``I - left @ right``."""
    product = matmul(left, right)
    return eye(product.shape[-1], dtype=product.dtype, device=product.device) - product


def _pinv_vjp(cts, outs, args, params, needs):
    a, p, ct = args[0], outs[0], cts[0]
    p_h = mH(p)
    grad = -matmul(matmul(p_h, ct), p_h)
    grad = grad + matmul(matmul(_complement(a, p), mH(ct)), matmul(p, p_h))
    return (grad + matmul(matmul(p_h, p), matmul(mH(ct), _complement(p, a))),)


def _pinv_jvp(tangents, outs, args, params):
    a, p, t = args[0], outs[0], tangents[0]
    p_h, t_h = mH(p), mH(t)
    out = -matmul(matmul(p, t), p)
    out = out + matmul(matmul(p, p_h), matmul(t_h, _complement(a, p)))
    return out + matmul(matmul(_complement(p, a), t_h), matmul(p_h, p))


_pinv_op = register(
    OpDef(
        "linalg_pinv",
        _pinv_impl,
        vjp=_pinv_vjp,
        jvp=_pinv_jvp,
        batch=stack_batch(2),
        save_out=True,
    )
)


def pinv_op(a, *, atol=None, rtol=None, hermitian=False, full_rank=None):
    params = {"atol": atol, "rtol": rtol, "hermitian": hermitian, "full_rank": full_rank}
    return apply(_pinv_op, a, **params)


@public.function
def linalg_pinv(A, *, atol=None, rtol=None, hermitian: bool = False):
    """The Moore-Penrose pseudo-inverse (PyTorch's ``torch.linalg.pinv``; ``dualad.linalg.pinv``
    also takes NumPy's ``rcond``): singular values at or below ``max(atol, rtol * s_max)``
    count as zero (default ``rtol``: ``max(m, n) * eps``). ``hermitian``: from ``eigh``.

    The derivative is the constant-rank formula: exact where the rank does not change nearby
    (full rank, or a rank kept by the cutoff), the one-sided limit of a rank change otherwise.

    >>> import dualad
    >>> dualad.linalg_pinv(dualad.tensor([[1.0, 0.0], [0.0, 0.0]]))
    tensor([[1., 0.],
            [0., 0.]])
    """
    A = as_linalg_input("pinv", A)
    if A.ndim < 2:
        raise LinAlgError(
            f"dualad.linalg.pinv: expected a matrix or a stack of them, got shape {A.shape}"
        )
    return pinv_op(A, atol=atol, rtol=rtol, hermitian=bool(hermitian))


@public.method
def pinverse(A, rcond: float = 1e-15, hermitian: bool = False):
    """PyTorch's ``torch.pinverse``: ``pinv`` with ``rtol=rcond``.

    >>> import dualad
    >>> dualad.pinverse(dualad.tensor([[2.0]]))
    tensor([[0.5]])
    """
    return linalg_pinv(A, rtol=rcond, hermitian=hermitian)


# ---------------------------------------------------------------------------------------------
# lstsq


def _lstsq_impl(xp, a, b, *, rcond):
    m, n = a.shape[-2:]
    batch = batch_shape("lstsq", a.shape, b.shape)
    dtype = np.result_type(a.dtype, b.dtype)
    a = xp.broadcast_to(a, (*batch, m, n)).astype(dtype)
    b = xp.broadcast_to(b, batch + b.shape[-2:]).astype(dtype)
    k = b.shape[-1]
    real = np.empty(0, dtype).real.dtype
    x = xp.empty((*batch, n, k), dtype)
    residuals = xp.empty((*batch, k), real)
    rank = xp.empty(batch, xp.int32)  # (NumPy's dtype of the rank)
    sv = xp.empty((*batch, min(m, n)), real)
    for index in np.ndindex(*batch):
        x[index], res, rank[index], sv[index] = xp.linalg.lstsq(a[index], b[index], rcond=rcond)
        if res.shape[0]:
            residuals[index] = res
    if not (m > n and bool(xp.all(rank == n))):  # NumPy: residuals only at full column rank
        residuals = xp.empty((*batch, 0), real)
    return x, residuals, rank, sv


def _lstsq_pinv(a, params):
    return pinv_op(a, rtol=params["rcond"], full_rank="lstsq")


def _lstsq_vjp(cts, outs, args, params, needs):
    a, b = args
    x, ct = outs[0], cts[0]
    p = _lstsq_pinv(a, params)
    p_h = mH(p)
    g_b = matmul(p_h, ct)
    g_a = None
    if needs[0]:
        g_a = -matmul(g_b, mH(x))
        if a.shape[-2] >= a.shape[-1]:  # full column rank: the residual term
            g_a = g_a + matmul(b - matmul(a, x), mH(matmul(p, g_b)))
        else:  # full row rank: the null-space term
            g_a = g_a + matmul(matmul(p_h, x), matmul(mH(ct), _complement(p, a)))
    return g_a, (g_b if needs[1] else None)


def _lstsq_jvp(tangents, outs, args, params):
    a, b = args
    x = outs[0]
    t_a, t_b = tangents
    p = _lstsq_pinv(a, params)
    out = None if t_b is None else matmul(p, t_b)
    if t_a is not None:
        term = -matmul(p, matmul(t_a, x))
        if a.shape[-2] >= a.shape[-1]:
            term = term + matmul(matmul(p, mH(p)), matmul(mH(t_a), b - matmul(a, x)))
        else:
            term = term + matmul(_complement(p, a), matmul(mH(t_a), matmul(mH(p), x)))
        out = term if out is None else out + term
    return out, None, None, None


_lstsq_op = register(
    OpDef(
        "linalg_lstsq",
        _lstsq_impl,
        vjp=_lstsq_vjp,
        jvp=_lstsq_jvp,
        batch=stack_batch(2, 2),
        save_out=True,
        nout=4,
        nondiff_outputs=(1, 2, 3),
    )
)


@public.function
def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution ``X`` minimising ``||A X - B||`` (minimum norm), as NumPy's
    ``lstsq`` (LAPACK's gelsd): a named tuple ``(solution, residuals, rank, singular_values)``,
    batched over leading dims (``dualad.linalg.lstsq`` is the public spelling). ``B`` is a
    vector when 1-D. Singular values ``<= rcond * s_max`` count as zero (default
    ``eps * max(m, n)``).

    The solution is differentiable for ``A`` of full rank (the constant-rank formula); at a
    rank-deficient ``A`` its derivative raises ``LinAlgError``. ``residuals`` (empty unless
    ``m > n`` and the rank is full: ``sum |B - A X|^2`` over the rows) and ``singular_values``
    differentiate too: when ``A`` or ``B`` carries a derivative they are recomputed in dualad
    ops (``svdvals(A)``); ``rank`` is an integer.

    >>> import dualad
    >>> a = dualad.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> dualad.linalg_lstsq(a, dualad.tensor([1.0, 1.0, 2.0])).solution
    tensor([1., 1.])
    """
    A, B = promote_pair("lstsq", A, B)
    if A.ndim < 2:
        raise LinAlgError(f"dualad.linalg.lstsq: A must be a matrix, got shape {A.shape}")
    if driver not in (None, "gelsd"):
        raise ValueError(f"dualad.linalg.lstsq: driver {driver!r} is not supported (gelsd)")
    vector = B.ndim == 1
    if vector:
        B = vector_as_column(B)
    if B.shape[-2] != A.shape[-2]:
        raise LinAlgError(
            f"dualad.linalg.lstsq: incompatible dimensions: A is {tuple(A.shape)} and B is "
            f"{tuple(B.shape)} (their rows must match)"
        )
    batch_shape("lstsq", A.shape, B.shape)
    if rcond is None:
        rcond = float(np.finfo(A.dtype).eps) * max(A.shape[-2:])
    x, residuals, rank, sv = apply(_lstsq_op, A, B, rcond=float(rcond))
    if _tracked(A) or _tracked(B):
        # LAPACK's residuals and singular values are the op's outputs without a derivative:
        # where one is wanted they are recomputed in dualad ops (never a silent zero)
        if residuals.shape[-1]:  # (NumPy's: only at full column rank with more rows)
            r = B - matmul(A, x)
            residuals = _sum(
                real(r * conj(r)) if r.dtype.kind == "c" else r * r, (r.ndim - 2,), False
            )
        if _tracked(A):
            sv = svdvals(A)
    if vector:  # (NumPy keeps residuals of shape (1,) for a vector b)
        x = reshape(x, tuple(x.shape[:-1]))
    return lstsq_result(x, residuals, rank, sv)


def _tracked(t) -> bool:
    """Whether ``t`` carries a derivative: requires grad, or an active level tracks it."""
    return t.requires_grad or _is_tracked(t)


# ---------------------------------------------------------------------------------------------
# matrix_rank


def _matrix_rank_impl(xp, a, *, atol, rtol, hermitian):
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return xp.zeros(a.shape[:-2], dtype=xp.int64)
    _, s, _, _ = _singular_values(xp, a, hermitian)
    return xp.sum(s > _cutoff(xp, s, atol, rtol, a.shape), axis=-1).astype(xp.int64)


_matrix_rank_op = register(
    OpDef("linalg_matrix_rank", _matrix_rank_impl, batch=stack_batch(2), differentiable=False)
)


@public.function
def linalg_matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False):
    """The number of singular values above ``max(atol, rtol * s_max)`` (default ``rtol``:
    ``max(m, n) * eps``), per matrix of a stack; int64, not differentiable (an untracked
    result). ``dualad.linalg.matrix_rank`` also takes NumPy's ``tol``.

    >>> import dualad
    >>> dualad.linalg_matrix_rank(dualad.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    A = as_linalg_input("matrix_rank", A)
    if A.ndim < 2:
        raise LinAlgError(f"dualad.linalg.matrix_rank: expected a matrix, got shape {A.shape}")
    return apply(_matrix_rank_op, A, atol=atol, rtol=rtol, hermitian=bool(hermitian))
