"""The polar decomposition ``A = U P`` as an op: ``linalg_polar`` (``scipy.linalg.polar``).

``U`` (m, n) has orthonormal columns and ``P = (A^H A)^{1/2}`` (n, n) is Hermitian positive
semi-definite; ``side="left"`` (``A = P U``) is the right decomposition of ``A^H``, transposed.
Values are SciPy's (its SVD). Derivatives (for m >= n and full column rank, where ``P`` is
invertible) come from one Sylvester equation with ``P`` on both sides: ``P dP + dP P = dA^H A +
A^H dA`` and ``dU = (dA - U dP) P^{-1}``; the VJP solves the same equation for ``gU``'s and
``gP``'s contribution (``matrix_equations.sylvester``, one Schur factorisation of ``P``). The
rules are written in dualad ops, so every order composes.

Singular points: for rank-deficient ``A`` the factor ``U`` is not unique and the derivatives do
not exist: the Sylvester solve gives NaN and the solve with ``P`` raises ``LinAlgError``. Wide
matrices with ``side="right"`` (and tall ones with ``side="left"``) have a singular ``P``: their
values are returned, differentiating them raises ``ValueError``.
"""

from __future__ import annotations

import scipy.linalg

from .._dispatch import apply
from .._tensor import Tensor
from ._exports import Exports
from ._lapack import per_matrix
from ._reducing import _as_tensor
from ._spectral import check_matrix, floating_array, linalg_op, mH
from .linalg import matmul
from .matrix_equations import on_host, sylvester
from .solvers import linalg_solve

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _polar_impl(xp, a):
    a = floating_array(xp, a)

    def one(m):
        return scipy.linalg.polar(m, side="right")

    return on_host(xp, lambda m: per_matrix(one, m.shape[:-2], (2,), m), a, what="linalg.polar")


def _check_tall(a) -> None:
    m, n = a.shape[-2], a.shape[-1]
    if m < n:
        raise ValueError(
            f"dualad.linalg.polar: the derivative of the polar decomposition of a {m}x{n} matrix "
            "does not exist (P is singular): differentiate side='right' with m >= n, or "
            "side='left' with m <= n"
        )


def _right_divide(x, p):
    """``x P^{-1}`` for Hermitian ``P``."""
    return linalg_solve(p, x, left=False)


def _polar_vjp(cts, outs, args, params, needs):
    a = args[0]
    _check_tall(a)
    u, p = outs
    g_u, g_p = cts
    g_a = None
    if g_u is not None:
        g_a = _right_divide(g_u, p)
        shifted = -matmul(mH(u), g_a)
        g_p = shifted if g_p is None else g_p + shifted
    if g_p is not None:
        y = sylvester(p, p, g_p, "nan", same=True)
        term = matmul(a, y + mH(y))
        g_a = term if g_a is None else g_a + term
    return (g_a,)


def _polar_jvp(tangents, outs, args, params):
    a, d_a = args[0], tangents[0]
    _check_tall(a)
    u, p = outs
    m = matmul(mH(d_a), a)
    d_p = sylvester(p, p, m + mH(m), "nan", same=True)
    d_u = _right_divide(d_a - matmul(u, d_p), p)
    return d_u, d_p


_polar_op = linalg_op("linalg_polar", _polar_impl, _polar_vjp, _polar_jvp, save_out=True, nout=2)


@public.function
def linalg_polar(a, side: str = "right") -> tuple[Tensor, Tensor]:
    """``(U, P)`` with ``A = U P`` (``side="right"``) or ``A = P U`` (``side="left"``) for the
    matrices ``A`` (..., m, n): ``U`` with orthonormal columns (rows), ``P`` Hermitian positive
    semi-definite (``dualad.linalg.polar``: SciPy's values).

    Derivatives solve one Sylvester equation with ``P`` on both sides (see the module
    docstring); they need ``P`` invertible: full rank, and m >= n for ``"right"`` (m <= n for
    ``"left"``), else differentiating raises.

    >>> import dualad
    >>> u, p = dualad.linalg_polar(dualad.tensor([[0.0, 2.0], [-3.0, 0.0]]))
    >>> u
    tensor([[ 0.,  1.],
            [-1.,  0.]])
    >>> p
    tensor([[3., 0.],
            [0., 2.]])
    """
    if side not in ("right", "left"):
        raise ValueError(f"dualad.linalg.polar: side must be 'right' or 'left', got {side!r}")
    a = _as_tensor(a)
    check_matrix("polar", a, square=False)
    if side == "right":
        return apply(_polar_op, a)
    u, p = apply(_polar_op, mH(a))
    return mH(u), p
