"""Determinants: ``det`` (with its derivative op ``linalg_det_grad``), ``slogdet`` and
``logdet``.

det's derivatives are polynomials in A, so they exist everywhere, singular matrices included.
They are computed in the frame of an SVD ``A = U S V^H``: since
``det(A + H) = c det(S + U^H H V)`` exactly (``c = det(U) det(V^H)``, U and V fixed), every
derivative of det at A is a derivative of det at the diagonal S, a sum of products of singular
values with some left out -- no division, so nothing breaks at singular matrices or at repeated
singular values (A = I). (Well-conditioned matrices take the cheaper, equal formulas through
``det(A) A^{-1}``.) ``linalg_det_grad(A)`` is the gradient (the transposed adjugate,
``conj(U) diag(prod_{l!=i} s_l) V^T c``) and ``linalg_det_grad(A, E)`` the gradient of the
directional derivative along E (the Hessian applied to E); each one's rules are the next one,
so grad-of-grad, jvp-of-grad and Hessians are exact at every matrix. The rules of the Hessian
(third derivatives) are dualad ops, so every further order composes: every derivative of det is
a polynomial of degree < n in a shift ``mu`` of ``A + mu I``, and the mean of a polynomial of
degree < K over the K-th roots of unity is its value at 0; so the third derivative at A is the
mean of the formula through the inverse (``det(B) B^{-1}``, its derivatives those of ``inv`` and
``slogdet``, exact at every order) over the K = n - 2 matrices ``B = A + r w^j I``,
``r = 2 ||A||_F``: each of them nonsingular with a condition number of at most 3, whatever A
is (singular, defective, repeated eigenvalues). It costs K inverses (O(n^4)); the mean cancels
terms up to ``(3 ||A||_F)^n``, so its relative accuracy is about ``3^n`` machine epsilons.

slogdet saves the LU factorisation it computes and its rules reuse it (``A^{-1}`` by LAPACK's
getri: no second factorisation). At a singular matrix ``logabsdet = -inf`` and its derivative
does not exist: the gradient is NaN (0 where the cotangent is 0, and the sign's gradient is 0).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.linalg

from .._creation import eye, tensor
from .._dispatch import OpDef, apply, register
from .._tensor import Tensor
from ._exports import Exports
from ._helpers import conj
from ._lapack import lu_factor, lu_inverse, permutation_parity, stack_batch
from .arithmetic import sqrt
from .base import reshape
from .casts import astype
from .comparison import eq, logical_and, where
from .complex_parts import imag, real
from .diagonals import diagonal
from .exp_log import exp, log
from .factorizations import as_linalg_input
from .linalg import matmul
from .reductions import mean
from .reductions import sum as _sum
from .solvers import check_square, inv_factored, linalg_inv
from .triangular import mH
from .views import matrix_transpose

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

# NamedTuple's call form: fields typed Tensor for type checkers, the class keeps its name
slogdet_result = NamedTuple("slogdet", [("sign", Tensor), ("logabsdet", Tensor)])  # noqa: UP014


def _matrix(x):
    """A batch of scalars as a batch of 1x1 matrices (to scale stacks of matrices)."""
    return reshape(x, (*x.shape, 1, 1))


# ---------------------------------------------------------------------------------------------
# products of singular values with one or two left out (no division: exact at zeros)


def _exclusive_products(xp, s):
    """``out[..., i] = prod_{l != i} s[..., l]`` from prefix and suffix products."""
    ones = xp.ones((*s.shape[:-1], 1), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([s[..., 1:], ones], axis=-1), -1), -1), -1)
    return before * after


def _pair_products(xp, s):
    """``out[..., i, j] = prod_{l not in {i, j}} s[..., l]`` off the diagonal, 0 on it."""
    n = s.shape[-1]
    rows = xp.broadcast_to(s[..., None, :], (*s.shape[:-1], n, n)).copy()
    eye = xp.eye(n, dtype=bool)
    rows[..., eye] = 1  # row i leaves s_i out, then the exclusive product leaves s_j out
    return xp.where(eye, 0, _exclusive_products(xp, rows))


def _det_grad_impl(xp, a, *directions):
    if xp is np:
        fast = _det_grad_by_lu(a, directions)
        if fast is not None:
            return fast
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        u, s, vh = xp.linalg.svd(a)
        c = xp.linalg.det(u) * xp.linalg.det(vh)
    c = xp.sign(c) if a.dtype.kind != "c" else c / xp.abs(c)
    s = s.astype(a.dtype)
    if not directions:  # conj(U) diag(prod_{l != i} s_l) conj(V^H), times c
        gamma_u = u * _exclusive_products(xp, s)[..., None, :]
        return (c[..., None, None] * xp.conj(gamma_u @ vh)).astype(a.dtype, copy=False)
    # the Hessian along E in the SVD frame: F = U^H E V, Gamma = diag(pi diag F) - pi * F^T
    f = xp.conj(xp.swapaxes(u, -1, -2)) @ directions[0] @ xp.conj(xp.swapaxes(vh, -1, -2))
    pi = _pair_products(xp, s)
    diagonal = xp.einsum("...ij,...j->...i", pi, xp.diagonal(f, 0, -2, -1))
    gamma = -pi * xp.swapaxes(f, -1, -2)
    idx = xp.arange(a.shape[-1])
    gamma[..., idx, idx] = diagonal
    out = c[..., None, None] * (xp.conj(u) @ gamma @ xp.conj(vh))
    return out.astype(a.dtype, copy=False)


# well-conditioned matrices take the cheaper formulas through the inverse (LU and getri:
# 2 n^3 flops against the SVD's ~20 n^3); the reciprocal condition estimate (LAPACK's gecon)
# keeps det(A) A^{-1} accurate to ~1e-10 relative where it is used
_RCOND_FAST = 1e-6


def _det_grad_by_lu(a, directions):
    """The gradient (or Hessian along E) from ``det(A) A^{-T}`` for a stack of well-conditioned
    matrices; None when one of them is not (the SVD frame handles it)."""
    n = a.shape[-1]
    if n == 0:
        return None
    lu, piv = lu_factor(np, a)
    gecon = scipy.linalg.get_lapack_funcs("gecon", (lu,))
    norms = np.abs(a).sum(axis=-2).max(axis=-1)  # 1-norms
    for index in np.ndindex(*a.shape[:-2]):
        rcond, info = gecon(lu[index], norms[index], norm="1")
        if info != 0 or not rcond > _RCOND_FAST:
            return None
    inverse = lu_inverse(np, lu, piv)
    det = np.prod(np.diagonal(lu, 0, -2, -1), axis=-1) * permutation_parity(np, piv)
    det = det[..., None, None]
    if not directions:
        return (det * np.swapaxes(inverse, -1, -2)).astype(a.dtype, copy=False)
    inv_e = inverse @ directions[0]
    trace = np.trace(inv_e, axis1=-2, axis2=-1)[..., None, None]
    out = det * (trace * inverse - inv_e @ inverse)  # D^2 det[E, H] = sum out^T * H
    return np.swapaxes(out, -1, -2).astype(a.dtype, copy=False)


def det_grad(a, *directions):
    """The gradient of det at ``a`` (no direction), or of its derivative along ``E``."""
    return apply(_det_grad_op, a, *directions)


def _trace(x):
    return _sum(diagonal(x, 0, -2, -1), -1)


def _third_at_regular(b, e, w):
    """``N`` with ``sum(N * H) = D^3 det(B)[E, W, H]`` for nonsingular ``B``: with
    ``X = B^{-1}``, ``det(B) (tr(XE) tr(XW) X - tr(XEXW) X - tr(XE) XWX - tr(XW) XEX
    + XEXWX + XWXEX)^T``, in ops (``inv`` and ``slogdet``) differentiable at every order."""
    x = linalg_inv(b)
    sign, logabs = slogdet(b)
    d = sign * exp(astype(logabs, sign.dtype))
    xe, xw = matmul(x, e), matmul(x, w)
    xex, xwx = matmul(xe, x), matmul(xw, x)
    te, tw = _trace(xe), _trace(xw)
    inner = _matrix(te * tw - _trace(matmul(xe, xw))) * x - _matrix(te) * xwx
    inner = inner - _matrix(tw) * xex + matmul(xe, xwx) + matmul(xw, xex)
    return matrix_transpose(_matrix(d) * inner)


def det_third(a, e, w):
    """``N`` with ``sum(N * H) = D^3 det(A)[E, W, H]`` at any ``A``: the mean of
    ``_third_at_regular`` over ``A + r w^j I`` (module docstring), in dualad ops."""
    n = a.shape[-1]
    if n < 3:  # det is a polynomial of degree n: its third derivative is 0
        return a * 0 + e * 0 + w * 0
    # (3^16 * 2.2e-16 ~ 1e-8 in double precision; 3^6 * 1.2e-7 ~ 1e-4 in single)
    single = a.dtype in (np.float32, np.complex64)
    largest = 6 if single else 16
    hint = "use float64 (up to 16x16)" if single else "differentiate slogdet instead"
    if n > largest:  # the mean cancels terms 3^n larger than the result: refuse, never guess
        raise NotImplementedError(
            f"dualad.linalg.det: third and higher derivatives of det are computed only for "
            f"matrices up to {largest}x{largest} in {a.dtype} (got {n}x{n}): their rounding "
            f"error grows like 3^n machine epsilons; {hint}"
        )
    k = n - 2  # the third derivative is a polynomial of degree n - 3 in the shift
    cdtype = np.result_type(a.dtype, np.complex64)
    # the shifts go on a new leading dim: first the three get the same number of batch dims
    rank = max(a.ndim, e.ndim, w.ndim)
    a, e, w = (reshape(x, (1,) * (rank - x.ndim) + tuple(x.shape)) for x in (a, e, w))
    plain = a.detach()
    radius = 2 * sqrt(_sum(real(plain * conj(plain)), (-2, -1)))
    radius = where(eq(radius, 0), 1.0, radius)  # (A = 0: any circle)
    roots = np.exp(2j * np.pi * np.arange(k) / k).reshape((k,) + (1,) * a.ndim)
    shifts = tensor(roots, dtype=cdtype, device=a.device) * astype(_matrix(radius), cdtype)
    b = astype(a, cdtype) + shifts * eye(n, dtype=cdtype, device=a.device)  # (k, ..., n, n)
    out = mean(_third_at_regular(b, astype(e, cdtype), astype(w, cdtype)), 0)
    return out if a.dtype.kind == "c" else astype(real(out), a.dtype)


def _det_grad_vjp(cts, outs, args, params, needs):
    # the derivative of det_grad along H is det_grad with H as one more direction, and the
    # form is symmetric in its directions: each VJP is det_grad applied to conj(ct); the third
    # derivative is det_third's (the Hessian's own rule)
    a, directions = args[0], args[1:]
    w = conj(cts[0])
    if not directions:
        return (conj(det_grad(a, w)),)
    g_a = conj(det_third(a, directions[0], w)) if needs[0] else None
    return g_a, (conj(det_grad(a, w)) if needs[1] else None)


def _det_grad_jvp(tangents, outs, args, params):
    a, directions = args[0], args[1:]
    total = None
    if tangents[0] is not None:
        total = det_third(a, directions[0], tangents[0]) if directions else det_grad(a, tangents[0])
    for t in tangents[1:]:
        if t is not None:
            term = det_grad(a, t)
            total = term if total is None else total + term
    return total


_det_grad_op = register(
    OpDef(
        "linalg_det_grad",
        _det_grad_impl,
        vjp=_det_grad_vjp,
        jvp=_det_grad_jvp,
        batch=stack_batch(2),
    )
)


# ---------------------------------------------------------------------------------------------
# det


def _det_vjp(cts, outs, args, params, needs):
    return (_matrix(cts[0]) * conj(det_grad(args[0])),)


def _det_jvp(tangents, outs, args, params):
    return _sum(det_grad(args[0]) * tangents[0], (-2, -1))


_det_op = register(
    OpDef(
        "linalg_det",
        lambda xp, a: xp.linalg.det(a),
        vjp=_det_vjp,
        jvp=_det_jvp,
        batch=stack_batch(2),
    )
)


@public.method
def det(A):
    """The determinant of square matrices (LAPACK's LU, as NumPy).

    Singular points: none -- det is a polynomial. Its gradient is the transposed adjugate
    (finite at singular matrices: ``grad det [[1, 2], [2, 4]] = [[4, -2], [-2, 1]]``), and its
    JVP, Hessian and jvp-of-grad are exact at singular matrices of any rank and at repeated
    eigenvalues (computed in an SVD frame, see the module docstring), and so are the
    derivatives of every higher order (from shifted, well-conditioned matrices: the module
    docstring).

    >>> import dualad
    >>> a = dualad.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    >>> dualad.autograd.grad(dualad.det(a), a)[0]
    tensor([[ 4., -2.],
            [-2.,  1.]])
    """
    A = as_linalg_input("det", A)
    check_square("det", A.shape)
    return apply(_det_op, A)


# ---------------------------------------------------------------------------------------------
# slogdet


def _slogdet_impl(xp, a):
    lu, piv = lu_factor(xp, a)
    d = xp.diagonal(lu, 0, -2, -1)
    magnitude = xp.abs(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        logabs = xp.sum(xp.log(magnitude), axis=-1)
        phases = xp.where(magnitude == 0, 0, d / xp.where(magnitude == 0, 1, magnitude))
    sign = xp.prod(phases, axis=-1) * permutation_parity(xp, piv).astype(a.dtype)
    sign = sign + 0  # (-0.0 -> 0.0: a singular matrix's sign is NumPy's +0)
    return sign.astype(a.dtype), logabs.astype(magnitude.dtype), lu, piv


def _slogdet_vjp(cts, outs, args, params, needs):
    sign, _, lu, piv = outs
    g_sign, g_log = cts[:2]
    coef = g_log
    if sign.dtype.kind == "c":  # d sign = i sign Im(tr(A^{-1} dA)); its VJP
        coef = g_log - 1j * imag(conj(g_sign) * sign)
    grad = _matrix(coef) * mH(inv_factored(args[0], lu, piv, singular="nan"))
    # at a singular matrix the derivative does not exist (NaN), but a zero cotangent asks for
    # nothing of it: 0 there (the sign's own derivative is 0)
    unused = _matrix(logical_and(eq(coef, 0), eq(sign, 0)))
    return (where(unused, 0, grad),)


def _slogdet_jvp(tangents, outs, args, params):
    sign, _, lu, piv = outs
    inverse = inv_factored(args[0], lu, piv, singular="nan")
    trace = _sum(matrix_transpose(inverse) * tangents[0], (-2, -1))  # tr(A^{-1} dA)
    if sign.dtype.kind == "c":
        return 1j * sign * astype(imag(trace), sign.dtype), real(trace), None, None
    return 0 * sign, trace, None, None


_slogdet_op = register(
    OpDef(
        "linalg_slogdet",
        _slogdet_impl,
        vjp=_slogdet_vjp,
        jvp=_slogdet_jvp,
        batch=stack_batch(2),
        save_out=True,
        save_mask=lambda needs: (True,),
        nout=4,
        nondiff_outputs=(2, 3),
    )
)


@public.method
def slogdet(A):
    """``(sign, logabsdet)`` of square matrices: ``det = sign * exp(logabsdet)`` without
    overflow (a named tuple, NumPy's and PyTorch's). ``sign`` is +-1 (complex: of modulus 1).

    Singular points: a singular matrix gives ``(0, -inf)`` (NumPy's values); the derivative of
    logabsdet does not exist there and the gradient is NaN (0 for a zero cotangent), the sign's
    gradient is 0. Elsewhere ``grad logabsdet = A^{-H}``, from the LU factors the forward saved.

    >>> import dualad
    >>> a = dualad.tensor([[2.0, 0.0], [0.0, -3.0]], requires_grad=True)
    >>> sign, logabsdet = dualad.slogdet(a)
    >>> sign, logabsdet.detach()
    (tensor(-1., grad_fn=<LinalgSlogdetBackward0>), tensor(1.79175947))
    >>> dualad.autograd.grad(dualad.slogdet(a).logabsdet, a)[0]
    tensor([[ 0.5       ,  0.        ],
            [ 0.        , -0.33333333]])
    """
    A = as_linalg_input("slogdet", A)
    check_square("slogdet", A.shape)
    sign, logabs, _, _ = apply(_slogdet_op, A)
    return slogdet_result(sign, logabs)


@public.method
def logdet(A):
    """``log(det(A))`` (PyTorch's ``torch.logdet``): NaN for a real matrix with a negative
    determinant, ``-inf`` for a singular one; from ``slogdet``.

    >>> import dualad
    >>> dualad.logdet(dualad.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.79175947)
    """
    sign, logabs = slogdet(A)
    if sign.dtype.kind == "c":
        return log(sign) + astype(logabs, sign.dtype)
    return log(sign) + logabs
