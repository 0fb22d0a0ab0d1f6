"""Shared pieces of the spectral rules (``eigen.py``, ``svd.py``): input checks, the conjugate
transpose, and the masks that keep the rules honest at repeated eigen/singular values.

The derivative of eigenvectors has the terms ``1 / (l_j - l_i)``. Where ``l_i == l_j``
(numerically: within ``_tolerance``) those terms are **masked**: a term whose numerator
(the part of the cotangent, or of the tangent, that rotates the repeated eigenspace) is zero
contributes 0, the limit of every loss that does not depend on the basis chosen inside the
eigenspace (eigenvalues, spectral projectors onto the whole eigenspace, matrix functions);
a term whose numerator is not zero contributes ``inf`` (the loss depends on an eigenvector
basis that the matrix does not define): never a finite wrong number.
"""

from __future__ import annotations

import numpy as np

from .._creation import eye, full
from .._dispatch import OpDef, apply, register
from ._batching import batched_front
from ._helpers import conj
from ._reducing import _as_tensor
from .arithmetic import div
from .casts import astype
from .comparison import le, logical_and, logical_not, logical_or, where
from .complex_parts import abs
from .extrema import amax
from .linalg import matmul
from .views import matrix_transpose


def mH(x):
    """The conjugate transpose of the last two dims."""
    return conj(matrix_transpose(x)) if x.dtype.kind == "c" else matrix_transpose(x)


def real_dtype(dtype) -> np.dtype:
    return np.empty(0, dtype).real.dtype


def check_matrix(op: str, x, *, square: bool) -> None:
    """NumPy's errors: ``LinAlgError`` for fewer than 2 dims or a non-square matrix."""
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise np.linalg.LinAlgError(
            f"dualad.linalg.{op}: {len(shape)}-dimensional array given (shape {shape}). Array "
            "must be at least two-dimensional"
        )
    if square and shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError(
            f"dualad.linalg.{op}: Last 2 dimensions of the array must be square (shape {shape})"
        )


def floating_array(xp, a):
    """NumPy's promotion of a linalg input: integers and bools become float64."""
    if a.dtype.kind in "biu":
        return a.astype(xp.float64)
    if a.dtype == np.float16:
        raise TypeError("array type float16 is unsupported in linalg")
    return a


def _tolerance(values):
    """The gap under which two of the real ``values`` (..., n) count as equal: a few ulps of
    the largest magnitude (..., 1, 1)."""
    n = values.shape[-1]
    eps = float(np.finfo(real_dtype(values.dtype)).eps)
    scale = amax(abs(values), dim=-1, keepdim=True)
    return (scale * (8.0 * max(n, 1) * eps)).unsqueeze(-1)


def _eye_like(values):
    n = values.shape[-1]
    return eye(n, dtype=bool, device=values.device)


def degenerate_pairs(values):
    """``(..., n, n)`` bool: ``i != j`` with ``values[i] == values[j]`` up to rounding."""
    gaps = abs(values.unsqueeze(-1) - values.unsqueeze(-2))
    return logical_and(le(gaps, _tolerance(values)), logical_not(_eye_like(values)))


def same_block(values):
    """``(..., n, n)`` bool: ``i`` and ``j`` belong to the same group of equal values (the
    diagonal included)."""
    gaps = abs(values.unsqueeze(-1) - values.unsqueeze(-2))
    return le(gaps, _tolerance(values))


def block_mean(g, values):
    """``g`` (..., n) averaged over each group of equal ``values``: the gradient of a function
    of the eigenvalues that is not symmetric in a repeated eigenvalue (``l[0]`` at ``A = I``)
    does not exist; the mean is the subgradient that does not depend on the eigenvector basis
    (``amax``'s convention for ties). A symmetric function has equal entries there already."""
    block = astype(same_block(values), g.dtype)
    weights = block / block.sum(-1, keepdim=True)
    return matmul(weights, g.unsqueeze(-1)).squeeze(-1)


def singular_value_weights(g, values):
    """``block_mean(g, values)``, and 0 at zero singular ``values``: ``s = |sigma|`` has a kink
    there, and 0 is its subgradient of least norm (``abs``'s at 0; for the nuclear norm it gives
    ``U1 V1^H`` over the non-zero singular values)."""
    zero = le(values, _tolerance(values).squeeze(-1))
    return where(zero, 0.0, block_mean(g, values))


def _infinity(like):
    return full((), float("inf"), dtype=real_dtype(like.dtype), device=like.device)


def is_small(x, reference, dims=(-2, -1)):
    """``|x| <= tol`` with ``tol`` a few ulps of the largest entry of ``reference`` (..., n, n):
    the part of a cotangent or tangent that a basis-invariant loss leaves at rounding level."""
    n = reference.shape[-1]
    eps = float(np.finfo(real_dtype(reference.dtype)).eps)
    scale = amax(abs(reference), dim=dims)  # the batch dims: trailing dims added for x's
    for _ in range(x.ndim - scale.ndim):
        scale = scale.unsqueeze(-1)
    return le(abs(x), scale * (64.0 * max(n, 1) * eps))


def honest_divide(numerator, denominator, singular, reference, dims=(-2, -1)):
    """``numerator / denominator`` where not ``singular``; where ``singular`` (a zero
    denominator) 0 if the numerator is negligible (relative to ``reference``), else ``inf``."""
    safe = where(singular, 1.0, denominator)  # (the double where: no inf in the unused branch)
    quotient = where(singular, 0.0, div(numerator, safe))
    blown = logical_and(singular, logical_not(is_small(numerator, reference, dims)))
    return where(blown, _infinity(numerator), quotient)


def off_diagonal(values):
    """``(..., n, n)`` bool: True off the diagonal."""
    return logical_not(_eye_like(values))


def gaps(values):
    """``E[..., i, j] = values[j] - values[i]``: the denominators of the eigenvector terms."""
    return values.unsqueeze(-2) - values.unsqueeze(-1)


def eigen_quotient(numerator, values, reference, *, conjugate=False):
    """``numerator / E`` (``/ conj(E)`` with ``conjugate``) with ``E = gaps(values)``, masked
    as ``masked_quotient`` masks it where two ``values`` are equal: the coupling term of the
    eigenvector derivatives that ``eigh``, ``eig`` and ``svd`` share."""
    denominator = conj(gaps(values)) if conjugate else gaps(values)
    return masked_quotient(numerator, denominator, degenerate_pairs(values), reference)


def masked_quotient(numerator, denominator, degenerate, reference):
    """``numerator / denominator`` off the diagonal, 0 on it; where ``degenerate`` (the
    denominator is a difference of equal values) 0 if the numerator is negligible (relative to
    ``reference``), else ``inf``."""
    n = denominator.shape[-1]
    on_diagonal = eye(n, dtype=bool, device=denominator.device)
    quotient = honest_divide(numerator, denominator, logical_or(degenerate, on_diagonal), reference)
    return where(on_diagonal, 0.0, quotient)


def nan_where(mask, like):
    """NaN where ``mask``, 0 elsewhere (the real dtype of ``like``)."""
    nan = full((), float("nan"), dtype=real_dtype(like.dtype), device=like.device)
    return where(mask, nan, 0.0)


def front_batch(op, args, bdims, params):
    """Linalg ops batch over leading dims: the batch dim goes first."""
    out = apply(op, *batched_front(args, bdims), **params)
    return out, ((0,) * len(out) if isinstance(out, tuple) else 0)


def linalg_op(name: str, impl, vjp, jvp, **options) -> OpDef:
    """Register a linalg op: its rules, batched over the leading dims (``front_batch``)."""
    return register(OpDef(name, impl, vjp=vjp, jvp=jvp, batch=front_batch, **options))


def call(op: OpDef, name: str, a, *, square: bool, **params):
    """``op`` on the matrices ``a`` after NumPy's checks (``check_matrix``)."""
    a = _as_tensor(a)
    check_matrix(name, a, square=square)
    return apply(op, a, **params)
