"""Hermitian eigendecompositions: ``eigh`` (eigenvalues and eigenvectors), ``eigvalsh``
(eigenvalues alone) and ``eigvalsh_grad``, the gradient of ``eigvalsh`` as an op of its own so
that its derivative (second order) stays exact at repeated eigenvalues.

Conventions (PyTorch's): the input is Hermitian and only its ``UPLO`` triangle is read; the
gradient returned is the Hermitian matrix ``V (diag(gL) + skew(V^H gV) / E) V^H`` with
``E[i, j] = L[j] - L[i]`` (the derivative along Hermitian perturbations), and the JVPs take
the Hermitian part of the tangent (their adjoint). Eigenvectors are defined up to a sign (a
phase for complex input): a loss that depends on that phase gets NaN. ``eigh``'s eigenvalue
tangent is ``diag(V^H dA V)``: exact for functions symmetric in a repeated eigenvalue (the
eigenvector tangents there are inf unless the tangent leaves the eigenspace alone);
``eigvalsh``'s is exact for every function (see below).

Singular points (see ``_spectral.py``): at repeated eigenvalues the eigenvector terms
``1 / (l_j - l_i)`` are masked: 0 when the loss does not depend on the basis of the repeated
eigenspace (eigenvalue losses, projectors onto the whole eigenspace, matrix functions), inf
when it does. The gradient of a function of the eigenvalues that is not symmetric in a repeated
eigenvalue (``l[0]`` at ``A = I``) does not exist: the rules give the block mean (``amax``'s
tie convention). ``eigvalsh``'s gradient is ``eigvalsh_grad``; ``eigvalsh``'s JVP and
``eigvalsh_grad``'s JVP work in the basis that diagonalises the tangent on each repeated
eigenspace (``block_rotation``, degenerate perturbation theory), so forward-over-reverse
(``jvp`` of ``grad``, ``func.hessian``) of ``sum(f(eigvalsh(A)))`` is exact at ``A = I``;
reverse-over-reverse cannot choose that basis and gives NaN there instead.
"""

from __future__ import annotations

import numpy as np

from .._creation import eye
from .._dispatch import apply
from .._tensor import Tensor
from ._reducing import _as_tensor
from ._spectral import (
    block_mean,
    call,
    check_matrix,
    degenerate_pairs,
    eigen_quotient,
    floating_array,
    gaps,
    is_small,
    linalg_op,
    mH,
    nan_where,
    real_dtype,
    same_block,
)
from .casts import astype
from .comparison import logical_and, logical_not, where
from .complex_parts import abs, imag, real
from .diagonals import diag_embed, diagonal
from .extrema import amax
from .joining import cat
from .linalg import matmul
from .scans import cumsum

# ---------------------------------------------------------------------------------------------
# shared


def _diag(x):
    return diagonal(x, 0, -2, -1)


def _hermitian_part(x):
    """``(x + x^H) / 2``: eigh reads a Hermitian matrix, so its derivatives are those of the
    Hermitian part of the tangent (the adjoints of the Hermitian gradients of the VJPs)."""
    return (x + mH(x)) * 0.5


def _sandwich(V, M):
    """``V M V^H``."""
    return matmul(matmul(V, M), mH(V))


def _check_uplo(op, UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"dualad.linalg.{op}: UPLO argument must be 'L' or 'U', got {UPLO!r}")


def _eigh_arrays(xp, a, UPLO):
    a = floating_array(xp, a)
    return xp.linalg.eigh(a, UPLO=UPLO)


# ---------------------------------------------------------------------------------------------
# eigh


def _eigh_impl(xp, a, *, UPLO):
    w, v = _eigh_arrays(xp, a, UPLO)
    return w, v


def _phase_check(VhgV):
    """Complex eigenvectors carry a free phase each: a loss invariant to it has a real diagonal
    of ``V^H gV``; NaN on the diagonal where it is not (the loss is ill-defined)."""
    im = imag(_diag(VhgV))
    return diag_embed(nan_where(logical_not(is_small(im, VhgV)), im))


def eigh_backward(L, V, gL, gV):
    """The gradient of a loss of ``(L, V) = eigh(A)``: ``V (diag(gL) + skew(V^H gV) / E) V^H``,
    the eigenvector terms masked at repeated eigenvalues."""
    inner = diag_embed(block_mean(gL, L))
    if gV is not None:
        VhgV = matmul(mH(V), gV)
        K = (VhgV - mH(VhgV)) * 0.5
        inner = eigen_quotient(K, L, VhgV) + inner
        if VhgV.dtype.kind == "c":
            inner = inner + _phase_check(VhgV)
    return _sandwich(V, inner)


def _eigh_vjp(cts, outs, args, params, needs):
    L, V = outs
    return (eigh_backward(L, V, cts[0], cts[1]),)


def _eigh_jvp(tangents, outs, args, params):
    L, V = outs
    dP = _hermitian_part(matmul(matmul(mH(V), tangents[0]), V))
    dL = real(_diag(dP)) if dP.dtype.kind == "c" else _diag(dP)
    omega = eigen_quotient(dP, L, dP)
    return dL, matmul(V, omega)


eigh_op = linalg_op(
    "linalg_eigh",
    _eigh_impl,
    _eigh_vjp,
    _eigh_jvp,
    save_args=False,
    save_out=True,
    nout=2,
)


def eigh(a, UPLO: str = "L") -> tuple[Tensor, Tensor]:
    """``(eigenvalues, eigenvectors)`` of the Hermitian matrices ``a`` (..., n, n), eigenvalues
    ascending (see the module docstring for the derivative's conventions)."""
    _check_uplo("eigh", UPLO)
    return call(eigh_op, "eigh", a, square=True, UPLO=UPLO)


# ---------------------------------------------------------------------------------------------
# eigvalsh and its gradient


def _eigvalsh_impl(xp, a, *, UPLO):
    return xp.linalg.eigvalsh(floating_array(xp, a), UPLO=UPLO)


def _eigvalsh_vjp(cts, outs, args, params, needs):
    return (apply(eigvalsh_grad_op, args[0], cts[0], UPLO=params["UPLO"]),)


def block_rotation(L, dP):
    """``(mu, R)``: the unitary ``R``, block diagonal on the groups of equal ``L`` (ascending),
    that diagonalises the Hermitian part of ``dP`` on each group, and ``mu = diag(R^H dP R)``,
    ascending inside each group: in the basis ``V R`` the tangent ``V^H dA V`` has no entry
    between equal eigenvalues (degenerate perturbation theory), and ``mu`` are the directional
    derivatives of the sorted eigenvalues. One ``eigh`` of the groups' blocks, shifted apart by
    multiples of three times their largest row sum so that no two groups mix."""
    herm = _hermitian_part(dP)
    if L.shape[-1] <= 1:
        d = _diag(herm)
        return (real(d) if d.dtype.kind == "c" else d), None
    block = where(same_block(L), herm, 0.0)
    dtype = real_dtype(herm.dtype)
    starts = astype(logical_not(diagonal(same_block(L), 1, -2, -1)), dtype)
    index = cat([starts[..., :1] * 0, cumsum(starts, -1)], -1)
    shift = amax(abs(block).sum(-1), dim=-1, keepdim=True) * 3.0
    mu, R = apply(eigh_op, block + diag_embed(index * shift), UPLO="L")
    return mu - index * shift, R


def _eigvalsh_jvp(tangents, outs, args, params):
    # the directional derivatives of the sorted eigenvalues: diag(V^H dA V), or at repeated
    # eigenvalues the eigenvalues of its block (exact for every function of the eigenvalues)
    L, V = apply(eigh_op, args[0], UPLO=params["UPLO"])
    return block_rotation(L, matmul(matmul(mH(V), tangents[0]), V))[0]


eigvalsh_op = linalg_op("linalg_eigvalsh", _eigvalsh_impl, _eigvalsh_vjp, _eigvalsh_jvp)


def eigvalsh(a, UPLO: str = "L") -> Tensor:
    """The eigenvalues (ascending) of the Hermitian matrices ``a`` (..., n, n)."""
    _check_uplo("eigvalsh", UPLO)
    return call(eigvalsh_op, "eigvalsh", a, square=True, UPLO=UPLO)


def _block_mean_array(xp, g, w):
    n = w.shape[-1]
    eps = np.finfo(w.dtype).eps
    tol = xp.max(xp.abs(w), axis=-1, keepdims=True)[..., None] * (8.0 * max(n, 1) * eps)
    block = (xp.abs(w[..., :, None] - w[..., None, :]) <= tol).astype(g.dtype)
    return (block @ g[..., None])[..., 0] / block.sum(-1)


def _eigvalsh_grad_impl(xp, a, g, *, UPLO):
    w, v = _eigh_arrays(xp, a, UPLO)
    if w.size:
        g = _block_mean_array(xp, g.astype(w.dtype, copy=False), w)
    return (v * g[..., None, :]) @ xp.conj(xp.swapaxes(v, -1, -2))


def _divided_differences(g, L, degenerate):
    """``(g[j] - g[i]) / (L[j] - L[i])`` off the diagonal where the values differ, else 0."""
    n = L.shape[-1]
    regular = logical_and(logical_not(degenerate), logical_not(eye(n, dtype=bool, device=L.device)))
    return where(regular, gaps(g) / where(regular, gaps(L), 1.0), 0.0)


def _eigvalsh_grad_vjp(cts, outs, args, params, needs):
    # G = V diag(g) V^H: dG = V (dP * Gamma + diag(dg)) V^H, Gamma the divided differences of g
    A, gL = args
    L, V = apply(eigh_op, A, UPLO=params["UPLO"])
    ct = matmul(matmul(mH(V), cts[0]), V)
    grad_A = grad_g = None
    if needs[1]:
        d = _diag(ct)
        grad_g = block_mean(real(d) if d.dtype.kind == "c" else d, L)
    if needs[0]:
        g = block_mean(gL, L)
        herm = (ct + mH(ct)) * 0.5
        degenerate = degenerate_pairs(L)
        gamma = _divided_differences(g, L, degenerate)
        # in a repeated eigenvalue the term is the spectral function's second derivative,
        # which reverse mode cannot see: NaN unless the cotangent leaves it out
        bad = logical_and(degenerate, logical_not(is_small(herm, herm)))
        grad_A = _sandwich(V, herm * gamma + nan_where(bad, herm))
    return grad_A, grad_g


def _eigvalsh_grad_jvp(tangents, outs, args, params):
    # G = V diag(g) V^H: dG = W (T * Gamma + diag(dg)) W^H in the basis W = V R of
    # block_rotation, where T = W^H dA W has no entry between equal eigenvalues (there the
    # divided differences Gamma of g have a limit, the second derivative of the spectral
    # function, that this op cannot see); dg is in that basis too (eigvalsh's JVP gives it)
    A, gL = args
    dA, dg = tangents
    L, V = apply(eigh_op, A, UPLO=params["UPLO"])
    inner = None if dg is None else diag_embed(dg)
    if dA is not None:
        dP = _hermitian_part(matmul(matmul(mH(V), dA), V))
        _, R = block_rotation(L, dP)
        if R is not None:
            V = matmul(V, R)
            dP = matmul(matmul(mH(R), dP), R)
        degenerate = degenerate_pairs(L)
        gamma = _divided_differences(block_mean(gL, L), L, degenerate)
        stuck = logical_and(degenerate, logical_not(is_small(dP, dP)))
        term = dP * gamma + nan_where(stuck, dP)
        inner = term if inner is None else term + inner
    return _sandwich(V, inner)


eigvalsh_grad_op = linalg_op(
    "linalg_eigvalsh_grad",
    _eigvalsh_grad_impl,
    _eigvalsh_grad_vjp,
    _eigvalsh_grad_jvp,
)


def eigvalsh_grad(a, g, UPLO: str = "L") -> Tensor:
    """``V diag(g) V^H`` for ``(L, V) = eigh(a)``: the gradient of ``eigvalsh`` for the
    cotangent ``g`` (an op of its own: its derivative is exact at repeated eigenvalues)."""
    a = _as_tensor(a)
    check_matrix("eigvalsh", a, square=True)
    return apply(eigvalsh_grad_op, a, _as_tensor(g), UPLO=UPLO)
