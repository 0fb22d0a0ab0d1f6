"""QR decomposition: ``qr`` (modes ``'reduced'``, ``'complete'``, ``'r'``), and
``triangular_right_solve`` (``B R^{-1}``, on ``solve_triangular``), the solve its rules are
written with.

``A = Q R`` with ``Q`` of orthonormal columns and ``R`` upper triangular with a real diagonal
(LAPACK's Householder QR: the diagonal may be negative). For ``m >= n`` (the reduced and square
cases), with ``M = Q^H dA R^{-1}`` and ``Omega = tril(M, -1) - tril(M, -1)^H + i Im diag(M)``:
``dR = (M - Omega) R`` and ``dQ = dA R^{-1} - Q (M - Omega)``; the VJP is the adjoint,
``gA = (gQ + Q phi(gR R^H - Q^H gQ)) R^{-H}`` with ``phi(G) = triu(G, 1) + tril(G^H, -1) +
Re diag(G)`` (PyTorch's ``linalg_qr_backward``). A wide ``A = [X | Y]`` (``m < n``, ``X``
square) has ``Q, U = qr(X)`` and ``R = [U | V]`` with ``V = Q^H Y``: the square rules on
``X``, with ``dV = dQ^H Y + Q^H dY`` forward and, backward, ``gY = Q gV`` and ``Y gV^H``
added to ``gQ`` (every mode: for ``m < n`` the complete ``Q`` is the reduced one).

Not differentiable (a clear error when a derivative is asked for): ``mode='complete'`` with
``m > n`` (the last ``m - n`` columns of ``Q`` are any basis of a complement). Rank-deficient
leading columns (a zero on ``R``'s diagonal): the derivative does not exist; the solve with
``R`` raises ``LinAlgError``.
"""

from __future__ import annotations

from .._creation import zeros_like
from .._dispatch import apply
from .._tensor import Tensor
from ._reducing import _as_tensor
from ._spectral import call, floating_array, linalg_op, mH
from .complex_parts import real
from .diagonals import diag_embed, diagonal, tril, triu
from .joining import cat
from .linalg import matmul
from .triangular import linalg_solve_triangular
from .views import matrix_transpose

# ---------------------------------------------------------------------------------------------
# B R^{-1} for triangular R


def triangular_right_solve(b, r, lower: bool = False) -> Tensor:
    """``b R^{-1}`` for the triangular matrices ``R`` (upper, or lower with ``lower=True``;
    the other triangle of ``r`` is not read): the solve ``qr``'s rules need, as
    ``solve_triangular``'s ``R^T X^T = b^T`` (its rules and its singular-diagonal error)."""
    b, r = _as_tensor(b), _as_tensor(r)
    solved = linalg_solve_triangular(matrix_transpose(r), matrix_transpose(b), upper=bool(lower))
    return matrix_transpose(solved)


# ---------------------------------------------------------------------------------------------
# qr


def _qr_impl(xp, a, *, mode):
    a = floating_array(xp, a)
    if mode == "r":
        return xp.linalg.qr(a, mode="r")
    return tuple(xp.linalg.qr(a, mode=mode))


def _check_differentiable(shape, mode):
    m, n = shape[-2], shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(
            f"dualad.linalg.qr: mode='complete' of a tall matrix (shape {tuple(shape)}) is not "
            "differentiable: the last m - n columns of Q are any basis of a complement. Use "
            "mode='reduced'"
        )


def _skew_part(M):
    """``Omega = tril(M, -1) - tril(M, -1)^H + i Im diag(M)``: ``Q^H dQ``."""
    lower = tril(M, -1)
    omega = lower - mH(lower)
    if M.dtype.kind == "c":
        d = diagonal(M, 0, -2, -1)
        omega = omega + diag_embed(d - real(d))
    return omega


def _qr_jvp(tangents, outs, args, params):
    _check_differentiable(args[0].shape, params["mode"])
    A, dA = args[0], tangents[0]
    if params["mode"] == "r":
        Q, R = apply(qr_op, A, mode="reduced")
    else:
        Q, R = outs
    m, n = A.shape[-2], A.shape[-1]
    if m < n:  # the square rule on X = A[..., :m]; V = Q^H Y follows Q and Y
        dQ, dU = _square_jvp(Q, R[..., :m], dA[..., :m])
        dV = matmul(mH(dQ), A[..., m:]) + matmul(mH(Q), dA[..., m:])
        dR = cat([dU, dV], -1)
    else:
        dQ, dR = _square_jvp(Q, R, dA)
    return dR if params["mode"] == "r" else (dQ, dR)


def _square_jvp(Q, R, dA):
    """``(dQ, dR)`` for ``A = Q R`` with ``R`` square (``m >= n``)."""
    AR = triangular_right_solve(dA, R)  # dA R^{-1}
    N = matmul(mH(Q), AR)
    N = N - _skew_part(N)  # M - Omega: upper triangular
    return AR - matmul(Q, N), matmul(N, R)


def _qr_vjp(cts, outs, args, params, needs):
    _check_differentiable(args[0].shape, params["mode"])
    A = args[0]
    if params["mode"] == "r":
        Q, R = apply(qr_op, A, mode="reduced")
        gQ, gR = None, cts[0]
    else:
        (Q, R), (gQ, gR) = outs, cts
    m, n = A.shape[-2], A.shape[-1]
    if m < n:  # R = [U | V], V = Q^H Y: gY = Q gV, and gQ gains Y gV^H
        gV = gR[..., m:] if gR is not None else None
        if gV is not None:
            extra = matmul(A[..., m:], mH(gV))
            gQ = extra if gQ is None else gQ + extra
        gU = gR[..., :m] if gR is not None else None
        gX = _square_vjp(Q, R[..., :m], gQ, gU)
        gY = matmul(Q, gV) if gV is not None else zeros_like(A[..., m:])
        return (cat([gX, gY], -1),)
    return (_square_vjp(Q, R, gQ, gR),)


def _square_vjp(Q, R, gQ, gR):
    """``gA`` for ``A = Q R`` with ``R`` square (``m >= n``); ``gQ``/``gR`` may be None."""
    if gR is None:
        G = -matmul(mH(Q), gQ)
    else:
        G = matmul(gR, mH(R))
        if gQ is not None:
            G = G - matmul(mH(Q), gQ)
    d = diagonal(G, 0, -2, -1)
    phi = triu(G, 1) + tril(mH(G), -1) + diag_embed(real(d) if d.dtype.kind == "c" else d)
    total = matmul(Q, phi)
    if gQ is not None:
        total = total + gQ
    return triangular_right_solve(total, mH(R), lower=True)


qr_op = linalg_op("linalg_qr", _qr_impl, _qr_vjp, _qr_jvp, save_out=True, nout=2)


def qr(a, mode: str = "reduced"):
    """``(Q, R)`` of the matrices ``a`` (..., m, n); ``R`` alone for ``mode='r'``."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(
            f"dualad.linalg.qr: qr received unrecognized mode '{mode}' but expected one of "
            "'reduced' (default), 'r', or 'complete'"
        )
    if mode == "r":
        return call(qr_r_op, "qr", a, square=False, mode="r")
    return call(qr_op, "qr", a, square=False, mode=mode)


qr_r_op = linalg_op(
    "linalg_qr_r",
    _qr_impl,
    _qr_vjp,
    _qr_jvp,
    node_name="LinalgQrBackward0",
)
