"""Singular value decompositions: ``svd`` (``full_matrices``), ``svdvals`` and
``svdvals_grad``, the gradient of ``svdvals`` as an op of its own (exact second order at
repeated singular values in forward mode: its JVP works in the basis that diagonalises the
tangent's block of a repeated singular value, as ``svdvals``' JVP does).

``A = U diag(S) Vh`` with ``k = min(m, n)``. With ``P = U^H dA V`` (k x k) and
``F[i, j] = 1 / (s_j^2 - s_i^2)``: ``dS = Re diag(P)``, ``U^H dU = (P S + S P^H) * F``,
``V^H dV = (S P + P^H S) * F`` (plus ``(I - U U^H) dA V / S`` and ``(I - V V^H) dA^H U / S``
for the thin factors). The VJP is the adjoint (PyTorch's ``svd_backward``).

Singular points: repeated singular values mask the ``F`` terms (0 for losses that do not
depend on the basis of the repeated singular subspaces, inf otherwise, see ``_spectral.py``);
``1 / s`` at a zero singular value likewise. Complex singular vectors carry a joint phase: a
loss that depends on it gets NaN. ``full_matrices=True`` with ``m != n``: the extra columns of
``U`` (rows of ``Vh``) are any basis of a complement, so a loss that depends on them gets NaN
(their tangents are NaN); losses of the first ``k`` are exact. Functions of the singular values
are not differentiable at repeated ones unless symmetric in them (``s[0]`` at a repeated
largest value: the block mean is given, ``amax``'s tie rule), nor at zero singular values
(``s = |sigma|`` has a kink: the gradient given in them is 0, the subgradient of least norm,
as ``abs`` at 0).
"""

from __future__ import annotations

from .._creation import full
from .._dispatch import apply
from .._tensor import Tensor
from ._reducing import _as_tensor
from ._spectral import (
    call,
    check_matrix,
    degenerate_pairs,
    floating_array,
    gaps,
    honest_divide,
    is_small,
    linalg_op,
    masked_quotient,
    mH,
    nan_where,
    off_diagonal,
    singular_value_weights,
)
from .comparison import eq, logical_and, logical_not, where
from .complex_parts import abs, imag, real
from .diagonals import diag_embed, diagonal
from .eigen import block_rotation
from .extrema import amax
from .joining import cat
from .linalg import matmul
from .slicing import narrow

# ---------------------------------------------------------------------------------------------
# shared


def _diag(x):
    return diagonal(x, 0, -2, -1)


def _re(x):
    return real(x) if x.dtype.kind == "c" else x


def _row(s):
    return s.unsqueeze(-2)


def _col(s):
    return s.unsqueeze(-1)


def _zero(s):
    return eq(s, 0.0)


def _thin(U, V, S, dA, weights):
    """The tangent parts outside the spans of the thin factors:
    ``(I - U U^H) dA V diag(w/s) V^H``-like pieces, returned as ``(left, right)``:
    ``left = (I - U U^H) dA V / s`` (m x k), ``right = (I - V V^H) dA^H U / s`` (n x k), with
    ``w`` applied to the columns; None where the factor is square."""
    m, n, k = U.shape[-2], V.shape[-2], S.shape[-1]
    left = right = None
    if m > k:
        AV = matmul(dA, V)
        proj = AV - matmul(U, matmul(mH(U), AV))
        if weights is not None:
            proj = proj * _row(weights)
        left = honest_divide(proj, _row(S), _row(_zero(S)), proj)
    if n > k:
        AhU = matmul(mH(dA), U)
        proj = AhU - matmul(V, matmul(mH(V), AhU))
        if weights is not None:
            proj = proj * _row(weights)
        right = honest_divide(proj, _row(S), _row(_zero(S)), proj)
    return left, right


def _nan_like(x):
    """A constant NaN block shaped like ``x``: the tangent of columns that the math does not
    define (a constant, so that no derivative of it flows back: reverse over forward)."""
    return full(tuple(x.shape), float("nan"), dtype=x.dtype, device=x.device)


def _phase_term(P, S, scale):
    """``i Im(P_ii) scale_i / s_i`` on the diagonal (complex only): the joint phase of the
    singular vectors, fixed so that ``V^H dV`` has a zero diagonal."""
    im = imag(_diag(P))
    return diag_embed(honest_divide(im * scale, S, _zero(S), P) * 1j)


# ---------------------------------------------------------------------------------------------
# svd


def _svd_impl(xp, a, *, full_matrices):
    return xp.linalg.svd(floating_array(xp, a), full_matrices=full_matrices)


def _split(U, Vh, S):
    k = S.shape[-1]
    U_k = U if U.shape[-1] == k else narrow(U, -1, 0, k)
    Vh_k = Vh if Vh.shape[-2] == k else narrow(Vh, -2, 0, k)
    return U_k, Vh_k


def svd_backward(U, S, Vh, gU, gS, gVh):
    """The gradient of a loss of ``(U, S, Vh) = svd(A)`` (see the module docstring)."""
    k = S.shape[-1]
    m, n = U.shape[-2], Vh.shape[-1]
    extra = None
    if gU is not None and gU.shape[-1] > k:  # full_matrices: the complement's basis
        tail = narrow(gU, -1, k, gU.shape[-1] - k)
        extra = amax(abs(tail), dim=(-2, -1), keepdim=True)
        gU = narrow(gU, -1, 0, k)
    if gVh is not None and gVh.shape[-2] > k:
        tail = amax(abs(narrow(gVh, -2, k, gVh.shape[-2] - k)), dim=(-2, -1), keepdim=True)
        extra = tail if extra is None else extra + tail
        gVh = narrow(gVh, -2, 0, k)
    U, Vh = _split(U, Vh, S)
    V = mH(Vh)
    inner = diag_embed(singular_value_weights(gS, S)) if gS is not None else None
    if gU is not None or gVh is not None:
        X = matmul(mH(U), gU) if gU is not None else None
        Y = matmul(Vh, mH(gVh)) if gVh is not None else None
        numerator = None
        if X is not None:
            numerator = (X - mH(X)) * _row(S)
        if Y is not None:
            term = _col(S) * (Y - mH(Y))
            numerator = term if numerator is None else numerator + term
        reference = abs(X) if Y is None else (abs(Y) if X is None else abs(X) + abs(Y))
        reference = reference * _col(amax(S, dim=-1, keepdim=True)) if k else reference
        rot = masked_quotient(numerator, gaps(S * S), degenerate_pairs(S), reference)
        inner = rot if inner is None else rot + inner
        if X is not None and X.dtype.kind == "c":
            inner = inner + _phase_term(X, S, 1.0)
            both = imag(_diag(X)) if Y is None else imag(_diag(X) + _diag(Y))
            inner = inner + diag_embed(nan_where(logical_not(is_small(both, reference)), both))
    grad = matmul(matmul(U, inner), Vh) if inner is not None else None
    if gU is not None and m > k:
        proj = gU - matmul(U, matmul(mH(U), gU))
        term = matmul(honest_divide(proj, _row(S), _row(_zero(S)), proj), Vh)
        grad = term if grad is None else grad + term
    if gVh is not None and n > k:
        gV = mH(gVh)
        proj = gV - matmul(V, matmul(Vh, gV))
        term = matmul(U, mH(honest_divide(proj, _row(S), _row(_zero(S)), proj)))
        grad = term if grad is None else grad + term
    if extra is not None:
        grad = grad + nan_where(logical_not(eq(extra, 0.0)), grad)
    return grad


def _svd_vjp(cts, outs, args, params, needs):
    U, S, Vh = outs
    return (svd_backward(U, S, Vh, cts[0], cts[1], cts[2]),)


def _svd_jvp(tangents, outs, args, params):
    dA = tangents[0]
    U_full, S, Vh_full = outs
    U, Vh = _split(U_full, Vh_full, S)
    V = mH(Vh)
    P = matmul(matmul(mH(U), dA), V)
    dS = _re(_diag(P))
    squares = gaps(S * S)
    degenerate = degenerate_pairs(S)
    omega_u = masked_quotient(
        matmul(P, diag_embed(S)) + matmul(diag_embed(S), mH(P)), squares, degenerate, P
    )
    omega_v = masked_quotient(
        matmul(diag_embed(S), P) + matmul(mH(P), diag_embed(S)), squares, degenerate, P
    )
    if P.dtype.kind == "c":
        omega_u = omega_u + _phase_term(P, S, 1.0)
    dU = matmul(U, omega_u)
    dV = matmul(V, omega_v)
    left, right = _thin(U, V, S, dA, None)
    if left is not None:
        dU = dU + left
    if right is not None:
        dV = dV + right
    dVh = mH(dV)
    if U_full.shape[-1] > U.shape[-1]:  # the complement's basis has no defined tangent
        k, m = U.shape[-1], U_full.shape[-1]
        dU = cat([dU, _nan_like(narrow(U_full, -1, k, m - k))], -1)
    if Vh_full.shape[-2] > Vh.shape[-2]:
        k, n = Vh.shape[-2], Vh_full.shape[-2]
        dVh = cat([dVh, _nan_like(narrow(Vh_full, -2, k, n - k))], -2)
    return dU, dS, dVh


svd_op = linalg_op(
    "linalg_svd",
    _svd_impl,
    _svd_vjp,
    _svd_jvp,
    save_args=False,
    save_out=True,
    nout=3,
)


def svd(a, full_matrices: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, Vh)`` of the matrices ``a`` (..., m, n) (see the module docstring)."""
    return call(svd_op, "svd", a, square=False, full_matrices=bool(full_matrices))


# ---------------------------------------------------------------------------------------------
# svdvals and its gradient


def _svdvals_impl(xp, a):
    return xp.linalg.svd(floating_array(xp, a), compute_uv=False)


def _svdvals_vjp(cts, outs, args, params, needs):
    return (apply(svdvals_grad_op, args[0], cts[0]),)


def _svdvals_jvp(tangents, outs, args, params):
    # the directional derivatives of the sorted singular values: Re diag(U^H dA V), or at a
    # repeated (non-zero) singular value the eigenvalues of the Hermitian part of its block,
    # descending (exact for every function of the singular values)
    U, S, Vh = apply(svd_op, args[0], full_matrices=False)
    return -block_rotation(S, -matmul(matmul(mH(U), tangents[0]), mH(Vh)))[0]


svdvals_op = linalg_op("linalg_svdvals", _svdvals_impl, _svdvals_vjp, _svdvals_jvp)


def svdvals(a) -> Tensor:
    """The singular values (descending) of the matrices ``a`` (..., m, n)."""
    return call(svdvals_op, "svdvals", a, square=False)


def _svdvals_grad_impl(xp, a, g):
    u, s, vh = xp.linalg.svd(floating_array(xp, a), full_matrices=False)
    if s.size:
        g = _block_mean_array(xp, g.astype(s.dtype, copy=False), s)
    return (u * g[..., None, :]) @ vh


def _block_mean_array(xp, g, s):
    k = s.shape[-1]
    eps = float(xp.finfo(s.dtype).eps)
    tol = xp.max(xp.abs(s), axis=-1, keepdims=True)[..., None] * (8.0 * max(k, 1) * eps)
    block = (xp.abs(s[..., :, None] - s[..., None, :]) <= tol).astype(g.dtype)
    mean = (block @ g[..., None])[..., 0] / block.sum(-1)
    return xp.where(s <= tol[..., 0], 0, mean)  # (see singular_value_weights)


def _coefficients(S, g, Q):
    """``a[i, j] = (s_j Q_ij + g_i) / (s_i + s_j)`` and ``b[i, j] = (s_i Q_ij - g_i) / (s_i +
    s_j)``: ``U^H dG V = a * P + b * P^H`` off the diagonal for ``G = U diag(g) V^H``, with
    ``Q`` the divided differences of ``g`` (a form that stays finite at repeated values)."""
    total = _col(S) + _row(S)
    zero = eq(total, 0.0)
    a_num = _row(S) * Q + _col(g)
    b_num = _col(S) * Q - _col(g)
    return (honest_divide(a_num, total, zero, a_num), honest_divide(b_num, total, zero, b_num))


def _svdvals_grad_vjp(cts, outs, args, params, needs):
    A, gS = args
    U, S, Vh = apply(svd_op, A, full_matrices=False)
    V = mH(Vh)
    C = matmul(matmul(mH(U), cts[0]), V)
    g = singular_value_weights(gS, S)
    grad_A = grad_g = None
    if needs[1]:
        grad_g = singular_value_weights(_re(_diag(C)), S)
    if needs[0]:
        degenerate = degenerate_pairs(S)
        herm = (C + mH(C)) * 0.5
        Q = _divided(g, S, degenerate) + nan_where(
            logical_and(degenerate, logical_not(is_small(herm, C))), C
        )
        a, b = _coefficients(S, g, Q)
        Z = where(off_diagonal(S), a * C + mH(b) * mH(C), 0.0)
        if C.dtype.kind == "c":
            Z = Z + _phase_term(C, S, g)
        grad_A = matmul(matmul(U, Z), Vh)
        left, right = _thin_adjoint(U, V, S, cts[0], g)
        for term in (left, right):
            if term is not None:
                grad_A = grad_A + term
    return grad_A, grad_g


def _thin_adjoint(U, V, S, ct, g):
    m, n, k = U.shape[-2], V.shape[-2], S.shape[-1]
    left = right = None
    w = honest_divide(g, S, _zero(S), g, dims=-1)
    if m > k:
        proj = ct - matmul(U, matmul(mH(U), ct))
        left = matmul(matmul(proj, V) * _row(w), mH(V))
    if n > k:
        proj = ct - matmul(matmul(ct, V), mH(V))
        right = matmul(U * _row(w), matmul(mH(U), proj))
    return left, right


def _divided(g, S, degenerate):
    """``(g_j - g_i) / (s_j - s_i)`` where the values differ, else 0."""
    regular = logical_and(logical_not(degenerate), off_diagonal(S))
    return where(regular, gaps(g) / where(regular, gaps(S), 1.0), 0.0)


def _svdvals_grad_jvp(tangents, outs, args, params):
    A, gS = args
    dA, dg = tangents
    U, S, Vh = apply(svd_op, A, full_matrices=False)
    V = mH(Vh)
    inner = None if dg is None else diag_embed(dg)
    grad = None
    if dA is not None:
        P = matmul(matmul(mH(U), dA), V)
        # in the basis (U R, V R) of block_rotation the Hermitian part of P has no entry
        # between equal singular values, where the divided differences Q of g have a limit
        # (the spectral function's second derivative) that this op cannot see; dg is in that
        # basis too (svdvals' JVP gives it)
        _, R = block_rotation(S, -P)
        if R is not None:
            U, V = matmul(U, R), matmul(V, R)
            Vh = mH(V)
            P = matmul(matmul(mH(R), P), R)
        g = singular_value_weights(gS, S)
        degenerate = degenerate_pairs(S)
        herm = (P + mH(P)) * 0.5
        Q = _divided(g, S, degenerate) + nan_where(
            logical_and(degenerate, logical_not(is_small(herm, P))), P
        )
        a, b = _coefficients(S, g, Q)
        term = where(off_diagonal(S), a * P + b * mH(P), 0.0)
        if P.dtype.kind == "c":
            term = term + _phase_term(P, S, g)
        inner = term if inner is None else term + inner
        left, right = _thin(U, V, S, dA, g)
        if left is not None:
            grad = matmul(left, Vh)
        if right is not None:
            term = matmul(U, mH(right))
            grad = term if grad is None else grad + term
    out = matmul(matmul(U, inner), Vh)
    return out if grad is None else out + grad


svdvals_grad_op = linalg_op(
    "linalg_svdvals_grad",
    _svdvals_grad_impl,
    _svdvals_grad_vjp,
    _svdvals_grad_jvp,
)


def svdvals_grad(a, g) -> Tensor:
    """``U diag(g) Vh`` for the reduced SVD of ``a``: the gradient of ``svdvals`` for the
    cotangent ``g`` (an op of its own: its derivative is exact at repeated singular values)."""
    a = _as_tensor(a)
    check_matrix("svdvals", a, square=False)
    return apply(svdvals_grad_op, a, _as_tensor(g))
