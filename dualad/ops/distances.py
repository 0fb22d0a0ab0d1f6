"""Pairwise distances and norm limits, PyTorch's: ``cdist``, the p-norm distance between every
row of ``x1`` and every row of ``x2``, batched over leading dims; ``renorm``, slices scaled
down to a maximum norm.

The Euclidean case (p = 2) is one op whose rules are matrix products (no ``P x R x M`` tensor
of differences is made for the derivative): with ``W = ct / d`` (0 where ``d == 0``),
``grad x1 = rowsum(W) x1 - W x2`` and ``grad x2 = colsum(W) x2 - W^T x1``. Its value is computed
from the differences, or from ``|a|^2 + |b|^2 - 2 a.b`` (matrix products, PyTorch's
``use_mm_for_euclid_dist_if_necessary``) when there are more than 25 rows on either side.
Other ``p`` are the vector norm of the differences.

Singular point: where two rows coincide (distance 0) the gradient is 0, the subgradient
PyTorch returns (``norm`` at 0, DESIGN 8).
"""

from __future__ import annotations

from .._dispatch import OpDef, dispatch, register
from ._batching import leading_batch
from ._dims import normalize_dim
from ._exports import Exports
from ._reducing import _as_tensor, _sum
from .base import broadcast_to, unsqueeze
from .comparison import eq, gt, where
from .linalg import matmul
from .norms import vector_norm
from .views import matrix_transpose as mT

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

_MM_ROWS = 25  # more rows than this on either side: the value by matrix products (PyTorch's)


def _euclidean_impl(xp, x1, x2):
    if x1.shape[-2] > _MM_ROWS or x2.shape[-2] > _MM_ROWS:
        square1 = xp.sum(x1 * x1, axis=-1)[..., :, None]
        square2 = xp.sum(x2 * x2, axis=-1)[..., None, :]
        d2 = square1 + square2 - 2 * (x1 @ xp.swapaxes(x2, -1, -2))
        return xp.sqrt(xp.maximum(d2, 0))
    difference = x1[..., :, None, :] - x2[..., None, :, :]
    return xp.sqrt(xp.sum(difference * difference, axis=-1))


def _weights(ct, d):
    """``ct / d``, 0 where ``d == 0`` (the subgradient at coincident rows)."""
    zero = eq(d, 0)
    return where(zero, 0, ct / where(zero, 1, d))


def _euclidean_vjp(cts, outs, args, params, needs):
    x1, x2 = args
    w = _weights(cts[0], outs[0])
    last = w.ndim - 1  # (dims counted from the front: batching rules shift them)
    g1 = _sum(w, (last,), True) * x1 - matmul(w, x2) if needs[0] else None
    g2 = mT(_sum(w, (last - 1,), True)) * x2 - matmul(mT(w), x1) if needs[1] else None
    return g1, g2


def _euclidean_jvp(tangents, outs, args, params):
    # d_ij' = (x1_i - x2_j) . (t1_i - t2_j) / d_ij
    x1, x2 = args
    t1, t2 = tangents
    last = x1.ndim - 1  # (dims counted from the front: batching rules shift them)
    total = 0
    if t1 is not None:
        total = total + _sum(x1 * t1, (last,), True) - matmul(t1, mT(x2))
    if t2 is not None:
        total = total + mT(_sum(x2 * t2, (last,), True)) - matmul(x1, mT(t2))
    return _weights(total, outs[0])


_euclidean_op = register(
    OpDef(
        "cdist_euclidean",
        _euclidean_impl,
        vjp=_euclidean_vjp,
        jvp=_euclidean_jvp,
        batch=leading_batch,
        save_out=True,
        node_name="CdistBackward0",
    )
)


@public.function
def cdist(x1, x2, p: float = 2.0, compute_mode=None):
    """The ``p``-norm distances between the rows of ``x1`` (``..., P, M``) and of ``x2``
    (``..., R, M``): a ``..., P, R`` tensor (leading dims broadcast). ``p`` is any positive
    number or ``inf``; the gradient at a zero distance is 0 (the subgradient). ``compute_mode``
    is accepted for PyTorch's signature (p = 2 uses matrix products for more than 25 rows).

    >>> import dualad
    >>> a = dualad.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    >>> d = dualad.cdist(a, dualad.tensor([[0.0, 0.0]]))
    >>> d
    tensor([[0.],
            [5.]], grad_fn=<CdistBackward0>)
    >>> d.sum().backward()
    >>> a.grad
    tensor([[0. , 0. ],
            [0.6, 0.8]])
    """
    x1, x2 = _as_tensor(x1), _as_tensor(x2)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"dualad.cdist: x1 and x2 must be at least 2-D with the same number of columns "
            f"(got shapes {tuple(x1.shape)} and {tuple(x2.shape)})"
        )
    if x1.dtype.kind not in "f" or x2.dtype.kind not in "f":
        raise RuntimeError(
            f"dualad.cdist: only floating-point inputs are supported (got {x1.dtype} and "
            f"{x2.dtype})"
        )
    p = float(p)
    if not p > 0:
        raise RuntimeError(f"dualad.cdist: p must be positive (got {p}); p = 0 counts, it has "
                           "no derivative")  # fmt: skip
    if p == 2.0:
        lead = _broadcast_lead(x1, x2)
        return dispatch(_euclidean_op, (_lead(x1, lead), _lead(x2, lead)), {})
    difference = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    return vector_norm(difference, p, dim=-1)


def _broadcast_lead(x1, x2):
    n = max(x1.ndim, x2.ndim) - 2
    a = (1,) * (n - x1.ndim + 2) + tuple(x1.shape[:-2])
    b = (1,) * (n - x2.ndim + 2) + tuple(x2.shape[:-2])
    lead = []
    for i, j in zip(a, b):
        if i != j and 1 not in (i, j):
            raise RuntimeError(f"dualad.cdist: batch dims {a} and {b} do not broadcast")
        lead.append(max(i, j))
    return tuple(lead)


def _lead(x, lead):
    return x if tuple(x.shape[:-2]) == lead else broadcast_to(x, lead + tuple(x.shape[-2:]))


@public.method
def renorm(x, p: float, dim: int, maxnorm: float):
    """``x`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to
    norm ``maxnorm`` (PyTorch's ``renorm``: the scale is ``maxnorm / (norm + 1e-7)``); the
    derivative goes through the norm too. Slices at most ``maxnorm`` pass unchanged.

    >>> import dualad
    >>> dualad.renorm(dualad.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.59999999, 0.79999998],
            [0.3       , 0.4       ]])
    """
    x = _as_tensor(x)
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"dualad.renorm: expected a floating-point tensor (got {x.dtype})")
    if not float(p) > 0 or float(maxnorm) < 0:
        raise RuntimeError(f"dualad.renorm: needs p > 0 and maxnorm >= 0 (got {p}, {maxnorm})")
    if x.ndim < 2:
        raise RuntimeError(f"dualad.renorm: needs at least 2 dims (got shape {tuple(x.shape)})")
    dim = normalize_dim(dim, x.ndim, op="renorm")
    others = tuple(d for d in range(x.ndim) if d != dim)
    norm = vector_norm(x, float(p), dim=others, keepdim=True)
    above = gt(norm, maxnorm)
    return x * where(above, maxnorm / (where(above, norm, 1) + 1e-7), 1)
