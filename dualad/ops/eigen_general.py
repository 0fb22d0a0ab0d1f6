"""The eigendecomposition of general square matrices: ``eig`` (eigenvalues and eigenvectors)
and ``eigvals``, complex results for real input (PyTorch's convention; ``dualad.numpy`` casts
back to real where NumPy does).

``A V = V diag(L)``, each column of ``V`` of unit norm (LAPACK's normalisation). With
``dP = V^{-1} dA V`` and ``E[i, j] = L[j] - L[i]``: ``dL = diag(dP)``, ``dV = V C`` with
``C = dP / E`` off the diagonal and ``Re C_ii = -Re (V^H V C)_ii`` (the columns keep unit
norm; their phase is free). The VJP is PyTorch's ``linalg_eig_backward``:
``gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / conj(E)) V^H``, its real part
for real ``A``. ``V^{-1}`` is applied through the QR decomposition of ``V`` (``qr.py``), so every
order composes.

Singular points: a loss that depends on the phase of an eigenvector gets NaN; repeated
eigenvalues mask the ``1 / E`` terms like ``eigh`` (0 for losses that do not depend on a basis
of the repeated eigenspace, inf otherwise); defective matrices (``V`` singular) have no
derivative: where ``V`` is numerically singular (its QR factor's diagonal spans more than
``1 / sqrt(eps)``) the derivatives are NaN, even for a loss such as the sum of the eigenvalues
(the trace) whose derivative exists: the rule cannot tell, and a finite number there would be
rounding noise.
"""

from __future__ import annotations

import numpy as np

from .._dispatch import apply
from .._tensor import Tensor
from ._spectral import (
    call,
    eigen_quotient,
    floating_array,
    is_small,
    linalg_op,
    mH,
    nan_where,
    real_dtype,
)
from .comparison import le, logical_not
from .complex_parts import abs, imag, real
from .diagonals import diag_embed, diagonal
from .extrema import amax, amin
from .linalg import matmul
from .qr import qr, triangular_right_solve


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _eig_impl(xp, a):
    a = floating_array(xp, a)
    w, v = xp.linalg.eig(a)
    dtype = _complex_dtype(a.dtype)
    return w.astype(dtype, copy=False), v.astype(dtype, copy=False)


def _diag(x):
    return diagonal(x, 0, -2, -1)


def _defective(R):
    """Where the eigenvector matrix ``V = Q R`` is numerically singular (the smallest diagonal
    entry of ``R`` below ``sqrt(eps)`` times the largest): a defective or nearly defective
    matrix, whose eigenvalues have no derivative (they move like ``sqrt`` of a perturbation)
    or one that ``V^{-1}`` cannot give accurately. NaN there, never a finite wrong number: a
    defective matrix's eigenvectors come out (nearly) parallel, and solving with them gives
    large finite numbers that look like an answer. A constant mask (no derivative)."""
    d = abs(_diag(R.detach()))
    tol = float(np.sqrt(np.finfo(real_dtype(R.dtype)).eps))
    bad = le(amin(d, dim=-1), amax(d, dim=-1) * tol)
    return bad.unsqueeze(-1).unsqueeze(-1)


def _inverse_times(V, M):
    """``V^{-1} M`` through ``V = Q R``: ``R^{-1} Q^H M`` (NaN where ``V`` is singular)."""
    Q, R = qr(V)
    out = mH(triangular_right_solve(mH(matmul(mH(Q), M)), mH(R), lower=True))
    return out + nan_where(_defective(R), out)


def _inverse_h_times(V, M):
    """``V^{-H} M`` through ``V = Q R``: ``Q R^{-H} M`` (NaN where ``V`` is singular)."""
    Q, R = qr(V)
    out = matmul(Q, mH(triangular_right_solve(mH(M), R)))
    return out + nan_where(_defective(R), out)


def eig_backward(A, L, V, gL, gV):
    """The gradient of a loss of ``(L, V) = eig(A)`` (see the module docstring)."""
    inner = diag_embed(gL)
    if gV is not None:
        X = matmul(mH(V), gV)
        re = real(_diag(X))
        Y = X - matmul(mH(V), V) * re.unsqueeze(-2)
        inner = inner + eigen_quotient(Y, L, X, conjugate=True)
        # the phase of each eigenvector is free: a loss that depends on it is ill-defined
        im = imag(_diag(X))
        inner = inner + diag_embed(nan_where(logical_not(is_small(im, X)), im))
    grad = _inverse_h_times(V, matmul(inner, mH(V)))
    return grad if A.dtype.kind == "c" else real(grad)


def _eig_vjp(cts, outs, args, params, needs):
    L, V = outs
    return (eig_backward(args[0], L, V, cts[0], cts[1]),)


def _eig_jvp(tangents, outs, args, params):
    L, V = outs
    dA = tangents[0]
    if dA.dtype.kind != "c":
        dA = dA + 0j
    dP = _inverse_times(V, matmul(dA, V))
    C = eigen_quotient(dP, L, dP)
    norm_fix = -real(_diag(matmul(matmul(mH(V), V), C)))
    C = C + diag_embed(norm_fix)
    return _diag(dP), matmul(V, C)


eig_op = linalg_op("linalg_eig", _eig_impl, _eig_vjp, _eig_jvp, save_out=True, nout=2)


def eig(a) -> tuple[Tensor, Tensor]:
    """``(eigenvalues, eigenvectors)`` (complex) of the square matrices ``a`` (..., n, n)."""
    return call(eig_op, "eig", a, square=True)


def _eigvals_impl(xp, a):
    a = floating_array(xp, a)
    return xp.linalg.eigvals(a).astype(_complex_dtype(a.dtype), copy=False)


def _eigvals_vjp(cts, outs, args, params, needs):
    L, V = apply(eig_op, args[0])
    return (eig_backward(args[0], L, V, cts[0], None),)


def _eigvals_jvp(tangents, outs, args, params):
    _, V = apply(eig_op, args[0])
    dA = tangents[0]
    return _diag(_inverse_times(V, matmul(dA if dA.dtype.kind == "c" else dA + 0j, V)))


eigvals_op = linalg_op("linalg_eigvals", _eigvals_impl, _eigvals_vjp, _eigvals_jvp)


def eigvals(a) -> Tensor:
    """The eigenvalues (complex) of the square matrices ``a`` (..., n, n)."""
    return call(eigvals_op, "eigvals", a, square=True)
