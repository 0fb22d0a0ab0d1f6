"""prod and cumprod, whose gradients are exact when inputs contain zeros (no division by the
input): each one's rule uses the other (exclusive products from both ends).
"""

from __future__ import annotations

import builtins

from .._dispatch import OpDef, apply1, register
from .._state import GRAD
from .._tensor import Tensor
from ._dims import pick_dim
from ._exports import Exports
from ._helpers import conj
from ._reducing import (
    _as_tensor,
    _dim_batch,
    _fresh,
    _keep,
    _numel,
    _promote_integral,
    _reduce_params,
    _sum,
)
from .base import _reduction_batch, inverse_permutation, permute, reshape
from .comparison import eq, logical_and, logical_not, logical_or, where
from .scans import _cumsum, _scan, _shift

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _exclusive_cumprod(x, dim, reverse):
    """``out[i] = prod(x[j] for j before i)`` in scan order (1 for the first slot)."""
    return _cumprod(_shift(x, dim, reverse, 1), dim, reverse)


# ---------------------------------------------------------------------------------------------
# cumprod


def _cumprod_impl(xp, x, *, dim, reverse):
    if reverse:
        return xp.flip(xp.cumprod(xp.flip(x, axis=dim), axis=dim), axis=dim)
    return xp.cumprod(x, axis=dim)


def _zero_structure(x, dim, reverse):
    """Masks along the scan: ``before`` (no zero up to and including this slot) and ``first``
    (the first zero). Computed from the data, so rules stay branch-free (vmap-friendly)."""
    zero = eq(x, 0)
    seen = _cumsum(zero, dim, reverse)
    return eq(seen, 0), logical_and(zero, eq(seen, 1))


def _higher_order_needed(*values) -> bool:
    """Whether a rule's result may be differentiated again (create_graph, nested transforms).

    Some rules then add terms that are zero in value but not in derivative (cumprod at zeros).
    """
    if GRAD.levels:  # inside a transform of this thread
        return True
    return GRAD.enabled and builtins.any(isinstance(v, Tensor) and v._rg for v in values)


def _cumprod_gradient(ct, x, y, dim, reverse, exact):
    # grad_i = sum_{k >= i} ct_k * prod_{j <= k, j != i} x_j, without dividing by a zero:
    # - before the first zero z: (reverse scan of ct * y)_i / x_i  (x_i != 0 there);
    # - at z: prod_{j < z} x_j * sum_{k >= z} ct_k * prod_{z < j <= k} x_j;
    # - after z: 0, as every product holds x_z. For higher order (``exact``) it is written as
    #   x_z * (the same gradient with x_z := 1): zero in value, with the right x_z-derivative.
    before, first = _zero_structure(x, dim, reverse)
    x_before = where(before, x, 1)
    grad = where(before, _cumsum(ct * y, dim, not reverse) / x_before, 0)
    after = where(logical_or(before, first), 1, x)
    tail = _sum(where(before, 0, ct * _cumprod(after, dim, reverse)), (dim,), True)
    head = _prod(x_before, (dim,), True)
    grad = grad + where(first, head * tail, 0)
    if exact:
        x_one = where(first, 1, x)
        x_zero = _sum(where(first, x, 0), (dim,), True)
        inner = _cumprod_gradient(ct, x_one, _cumprod(x_one, dim, reverse), dim, reverse, False)
        grad = grad + where(logical_not(logical_or(before, first)), x_zero * inner, 0)
    return grad


def _cumprod_tangent(t, x, y, dim, reverse, exact):
    # dy_k = sum_{i <= k} t_i prod_{j <= k, j != i} x_j: before the first zero z it is
    # y_k * cumsum(t / x)_k; from z on only i = z survives in value:
    # t_z * prod_{j < z} x_j * prod_{z < j <= k} x_j (+ x_z * (the rest with x_z := 1)).
    before, first = _zero_structure(x, dim, reverse)
    x_before = where(before, x, 1)
    head_part = y * _cumsum(where(before, t / x_before, 0), dim, reverse)
    after = where(logical_or(before, first), 1, x)
    t_first = _sum(where(first, t, 0), (dim,), True)
    tail_part = t_first * _prod(x_before, (dim,), True) * _cumprod(after, dim, reverse)
    if exact:
        x_one = where(first, 1, x)
        x_zero = _sum(where(first, x, 0), (dim,), True)
        y_one = _cumprod(x_one, dim, reverse)
        rest = _cumprod_tangent(where(first, 0, t), x_one, y_one, dim, reverse, False)
        tail_part = tail_part + x_zero * rest
    return where(before, head_part, tail_part)


def _cumprod_vjp(cts, outs, args, params, needs):
    # complex: conj of the derivative = the same formula on conj(x), conj(y)
    x = args[0]
    exact = _higher_order_needed(x)
    return (
        _cumprod_gradient(cts[0], conj(x), conj(outs[0]), params["dim"], params["reverse"], exact),
    )


def _cumprod_jvp(tangents, outs, args, params):
    x, t = args[0], tangents[0]
    exact = _higher_order_needed(x, t)
    return _cumprod_tangent(t, x, outs[0], params["dim"], params["reverse"], exact)


_cumprod_op = register(
    OpDef(
        "cumprod",
        _cumprod_impl,
        vjp=_cumprod_vjp,
        jvp=_cumprod_jvp,
        batch=_dim_batch,
        save_out=True,
        sparsity=("scan", "nonlinear"),
    )
)


def _cumprod(x, dim, reverse=False):
    return apply1(_cumprod_op, x, {"dim": dim, "reverse": reverse})


@public.inplace
def cumprod(x, dim=None, *, axis=None, dtype=None):
    """Cumulative product along ``dim``; its gradient is exact when ``x`` holds zeros.

    >>> import dualad
    >>> x = dualad.tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> dualad.cumprod(x, dim=0).sum().backward()
    >>> x.grad
    tensor([1., 8., 0.])
    """
    x = _promote_integral(_as_tensor(x), dtype)
    return _scan(_cumprod_op, x, pick_dim(dim, axis), "cumprod")


# ---------------------------------------------------------------------------------------------
# prod


def _others_product(x, dims):
    """For each element, the product of the other elements of its reduction group.

    Exclusive products from the left and from the right: exact with zeros, no division.
    """
    if len(dims) == 1:
        d = dims[0]
        return _exclusive_cumprod(x, d, False) * _exclusive_cumprod(x, d, True)
    kept = tuple(i for i in range(x.ndim) if i not in dims)
    order = kept + tuple(dims)
    moved = permute(x, order)
    last = len(kept)
    flat = reshape(moved, (*moved.shape[:last], _numel(x.shape, dims)))
    factors = _exclusive_cumprod(flat, last, False) * _exclusive_cumprod(flat, last, True)
    return permute(reshape(factors, tuple(moved.shape)), inverse_permutation(order))


def _prod_vjp(cts, outs, args, params, needs):
    x = args[0]
    dims = params["dims"]
    ct = _keep(cts[0], x.shape, dims, params["keepdim"])
    if not dims:
        return (ct,)
    return (ct * conj(_others_product(x, dims)),)


def _prod_jvp(tangents, outs, args, params):
    dims = params["dims"]
    if not dims:
        return _fresh(tangents[0])
    return _sum(tangents[0] * _others_product(args[0], dims), dims, params["keepdim"])


_prod_op = register(
    OpDef(
        "prod",
        lambda xp, x, *, dims, keepdim: xp.prod(x, axis=dims, keepdims=keepdim),
        vjp=_prod_vjp,
        jvp=_prod_jvp,
        batch=_reduction_batch,
    )
)


def _prod(x, dims, keepdim):
    return apply1(_prod_op, x, {"dims": dims, "keepdim": keepdim})


@public.method
def prod(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
    """Product over ``dim`` (all dims by default); the gradient is exact with zeros in ``x``.

    >>> import dualad
    >>> x = dualad.tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> dualad.prod(x).backward()
    >>> x.grad
    tensor([0., 6., 0.])
    """
    x = _promote_integral(_as_tensor(x), dtype)
    return apply1(_prod_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "prod"))
