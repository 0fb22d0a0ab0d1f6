"""Reductions and scans: sum, mean, prod, var/std, amax/amin, max/min, argmax/argmin,
logsumexp, norm, cumsum/cumprod, all/any/count_nonzero, nansum/nanmean, and ``sum_to`` (the one
place broadcast cotangents are reduced).

Static parameters are normalised once in the public functions: ``dims`` is a sorted tuple of
non-negative ints (``dim`` for single-dim ops), ``keepdim`` a bool. Rules never see ``None``.
Gradients follow PyTorch's conventions: ties in amax/amin and full max/min share the gradient
evenly, ``max(x, dim)`` sends it to the selected index only, ``prod``/``cumprod`` are exact when
inputs contain zeros (no division by the input), and the 2-norm has gradient 0 at 0.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from .._dispatch import OpDef, apply, apply1, register
from .._state import GRAD
from .._tensor import Tensor
from ._batching import move_bdim_to_front
from ._dims import normalize_dim, normalize_dims, pick_dim, pick_keepdim
from ._helpers import linear
from .shape import expand_to, reshape

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "logsumexp",
    "max",
    "mean",
    "min",
    "nanmean",
    "nansum",
    "norm",
    "prod",
    "std",
    "std_mean",
    "sum",
    "sum_to",
    "var",
    "var_mean",
]


def _keepdim_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def expand_reduced(ct, x_shape, dims, keepdim):
    """Broadcast a reduction's cotangent back to the input's shape."""
    if not keepdim and dims and len(dims) < len(x_shape):
        # a partial reduction: put the reduced dims back as 1s (a full one broadcasts as is)
        ct = reshape(ct, _keepdim_shape(x_shape, dims))
    return expand_to(ct, x_shape)


def _reduction_batch(op, args, bdims, params):
    """Batch rule for reductions over ``dims``: move the batch dim first, shift dims by one."""
    x = move_bdim_to_front(args[0], bdims[0])
    params = dict(params, dims=tuple(d + 1 for d in params["dims"]))
    return apply(op, x, **params), 0


_sum_op = linear(
    "sum",
    # the method: NumPy's np.sum wrapper costs twice the reduction on small arrays
    lambda xp, x, *, dims, keepdim: x.sum(axis=dims, keepdims=keepdim),
    lambda ct, x, *, dims, keepdim: expand_reduced(ct, x.shape, dims, keepdim),
    batch=_reduction_batch,
)


def sum(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
    """Sum over ``dim`` (all dims by default).

    >>> import dualad
    >>> dualad.sum(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
    tensor([4., 6.])
    """
    if not isinstance(x, Tensor):
        from .._creation import as_tensor

        x = as_tensor(x)
    dims = normalize_dims(pick_dim(dim, axis), x.ndim, op="sum")
    if dtype is not None:
        from .elementwise import astype

        x = astype(x, dtype)
    elif x.dtype.kind in "biu":
        from .elementwise import astype

        x = astype(x, "int64")
    return apply1(_sum_op, x, {"dims": dims, "keepdim": pick_keepdim(keepdim, keepdims)})


def _numel(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


_mean_op = linear(
    "mean",
    lambda xp, x, *, dims, keepdim: xp.mean(x, axis=dims, keepdims=keepdim),
    lambda ct, x, *, dims, keepdim: (
        expand_reduced(ct, x.shape, dims, keepdim) / _numel(x.shape, dims)
    ),
    batch=_reduction_batch,
)


def mean(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
    """Mean over ``dim`` (all dims by default); floating and complex tensors only."""
    if not isinstance(x, Tensor):
        from .._creation import as_tensor

        x = as_tensor(x)
    if dtype is not None:
        from .elementwise import astype

        x = astype(x, dtype)
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {x.dtype}"
        )
    dims = normalize_dims(pick_dim(dim, axis), x.ndim, op="mean")
    return apply1(_mean_op, x, {"dims": dims, "keepdim": pick_keepdim(keepdim, keepdims)})


def sum_to(x, shape: tuple):
    """Sum ``x`` down to ``shape`` (the inverse of broadcasting ``shape`` to ``x.shape``).

    >>> import dualad
    >>> sum_to(dualad.ones(2, 3), (1, 3))
    tensor([[2., 2., 2.]])
    """
    shape = tuple(shape)
    xshape = tuple(x.shape)
    if xshape == shape:
        return x
    lead = len(xshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"dualad.sum_to: cannot sum shape {xshape} to {shape}")
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and xshape[lead + i] != 1:
            dims.append(lead + i)
        elif s != xshape[lead + i]:
            raise RuntimeError(f"dualad.sum_to: cannot sum shape {xshape} to {shape}")
    out = apply1(_sum_op, x, {"dims": tuple(dims), "keepdim": True}) if dims else x
    if lead:
        out = reshape(out, shape)
    return out


# ---------------------------------------------------------------------------------------------
# shared helpers

_INF = float("inf")


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    from .._creation import as_tensor

    return as_tensor(x)


def _keep(t, x_shape, dims, keepdim):
    """A reduced tensor with its reduced dims kept as size 1, so it broadcasts against x."""
    if keepdim or not dims:
        return t

    return reshape(t, _keepdim_shape(x_shape, dims))


def _fresh(t):
    """A copy of an input's tangent returned as an output's: the output is not a view of the
    input, so an in-place op on the output (which updates its tangent in place) must not change
    the input's tangent."""
    from .elementwise import clone

    return clone(t)


def _sum(x, dims, keepdim):
    """Sum over normalised ``dims`` (rules use this: no re-normalisation, no dtype promotion)."""
    return apply1(_sum_op, x, {"dims": dims, "keepdim": keepdim})


def _constant(t):
    """A value with no derivative (masks, signs) cut from the graph, so that arithmetic on it
    never sends gradients into an op without a VJP."""
    return t.detach() if type(t) is Tensor and t._rg else t


def _count(mask, dims, keepdim, dtype):
    """How many entries of a boolean ``mask`` are true along ``dims``, as ``dtype``."""
    from .elementwise import astype

    return _sum(astype(_constant(mask), dtype), dims, keepdim)


def _dim_batch(op, args, bdims, params):
    """Batch rule for ops along one ``dim`` (scans, max/min with dim): shift it past the batch."""
    x = move_bdim_to_front(args[0], bdims[0])
    out = apply(op, x, **dict(params, dim=params["dim"] + 1))
    if isinstance(out, tuple):
        return out, (0,) * len(out)
    return out, 0


def _promote_integral(x, dtype):
    """Sum-like ops: an explicit ``dtype`` casts first; bool/int inputs accumulate in int64."""
    from .elementwise import astype

    if dtype is not None:
        return astype(x, dtype)
    if x.dtype.kind in "biu" and x.dtype != np.int64:
        return astype(x, "int64")
    return x


def _to_floating(x, dtype=None):
    """Ops defined on real numbers only through floats: integers become the default float."""
    from .._dtypes import get_default_dtype
    from .elementwise import astype

    if dtype is not None:
        return astype(x, dtype)
    if x.dtype.kind in "biu":
        return astype(x, get_default_dtype())
    return x


def _check_ordered(x, name):
    if x.dtype.kind == "c":
        raise RuntimeError(
            f"dualad.{name}: {name}() does not support complex input (got a tensor of dtype "
            f"{x.dtype} and shape {tuple(x.shape)}); complex numbers are not ordered"
        )


def _check_nonempty(x, dims, name):
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(
                f"dualad.{name}: {name}(): Expected reduction dim {d} to have non-zero size "
                f"(input shape {tuple(x.shape)})."
            )


def _reduce_params(x, dim, axis, keepdim, keepdims, name):
    return {
        "dims": normalize_dims(pick_dim(dim, axis), x.ndim, op=name),
        "keepdim": pick_keepdim(keepdim, keepdims),
    }


# ---------------------------------------------------------------------------------------------
# cumsum (linear: the transpose of a scan is the scan in the other direction)


def _cumsum_impl(xp, x, *, dim, reverse):
    if reverse:
        return xp.flip(xp.cumsum(xp.flip(x, axis=dim), axis=dim), axis=dim)
    return xp.cumsum(x, axis=dim)


_cumsum_op = linear(
    "cumsum",
    _cumsum_impl,
    lambda ct, x, *, dim, reverse: _cumsum(ct, dim, not reverse),
    batch=_dim_batch,
)


def _cumsum(x, dim, reverse=False):
    """Inclusive scan along ``dim`` (from the end when ``reverse``); bool counts as int64."""
    if x.dtype.kind == "b":
        from .elementwise import astype

        x = astype(x, "int64")
    return apply1(_cumsum_op, x, {"dim": dim, "reverse": reverse})


def _scan(op, x, dim, name):

    if dim is None:  # NumPy: scan the flattened tensor
        x = reshape(x, (x.numel(),))
        dim = 0
    if x.ndim == 0:  # torch: a 0-d tensor is its own scan (dim must be 0 or -1)
        normalize_dim(dim, 0, op=name)
        return reshape(apply1(op, reshape(x, (1,)), {"dim": 0, "reverse": False}), ())
    return apply1(op, x, {"dim": normalize_dim(dim, x.ndim, op=name), "reverse": False})


def cumsum(x, dim=None, *, axis=None, dtype=None):
    """Cumulative sum along ``dim`` (NumPy: the flattened tensor when no dim is given).

    Integer and bool inputs accumulate in int64, like PyTorch.

    >>> import dualad
    >>> dualad.cumsum(dualad.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([1., 3., 6.])
    """
    x = _promote_integral(_as_tensor(x), dtype)
    return _scan(_cumsum_op, x, pick_dim(dim, axis), "cumsum")


# ---------------------------------------------------------------------------------------------
# shift_fill: the building block of exclusive scans (prod's zero-safe gradient)


def _shift_impl(xp, x, *, dim, reverse, fill):
    out = xp.empty_like(x)
    if x.shape[dim] == 0:
        return out
    lead = (slice(None),) * dim
    if reverse:
        out[(*lead, slice(None, -1))] = x[(*lead, slice(1, None))]
        out[(*lead, -1)] = fill
    else:
        out[(*lead, slice(1, None))] = x[(*lead, slice(None, -1))]
        out[(*lead, 0)] = fill
    return out


_shift_op = register(
    OpDef(
        "shift_fill",
        _shift_impl,
        # out[i] = x[i - 1]: the transpose moves cotangents one step back; the fill gets none
        vjp=lambda cts, outs, args, params, needs: (
            _shift(cts[0], params["dim"], not params["reverse"], 0),
        ),
        jvp=lambda tangents, outs, args, params: _shift(
            tangents[0], params["dim"], params["reverse"], 0
        ),
        batch=_dim_batch,
        save_args=False,
    )
)


def _shift(x, dim, reverse, fill):
    """``x`` moved one step along ``dim`` (towards its end, or its start when ``reverse``); the
    slot left free holds ``fill``."""
    return apply1(_shift_op, x, {"dim": dim, "reverse": reverse, "fill": fill})


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
    from .elementwise import eq, logical_and

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
    from .elementwise import logical_not, logical_or, where

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
    from .elementwise import logical_or, where

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
    from .elementwise import conj

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
    )
)


def _cumprod(x, dim, reverse=False):
    return apply1(_cumprod_op, x, {"dim": dim, "reverse": reverse})


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
    from .shape import inverse_permutation, permute, reshape

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
    from .elementwise import conj

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


# ---------------------------------------------------------------------------------------------
# var, std


def _centered(x, dims):
    return x - apply1(_mean_op, x, {"dims": dims, "keepdim": True})


def _var_scale(shape, dims, correction):
    """d var / d x = scale * (x - mean); infinite when there are no degrees of freedom."""
    dof = _numel(shape, dims) - correction
    return 2.0 / dof if dof > 0 else _INF


def _var_vjp(cts, outs, args, params, needs):
    x = args[0]
    dims, keepdim, correction = params["dims"], params["keepdim"], params["correction"]
    ct = _keep(cts[0], x.shape, dims, keepdim)
    return (ct * _centered(x, dims) * _var_scale(x.shape, dims, correction),)


def _var_tangent(t, x, dims, keepdim, correction):
    # var is real: its tangent is Re(conj(x - mean) * t) summed (the mean's tangent drops out)
    from .elementwise import conj, real

    scale = _var_scale(x.shape, dims, correction)
    return _sum(real(conj(_centered(x, dims)) * t), dims, keepdim) * scale


def _var_jvp(tangents, outs, args, params):
    return _var_tangent(
        tangents[0], args[0], params["dims"], params["keepdim"], params["correction"]
    )


def _std_vjp(cts, outs, args, params, needs):
    # d std = d var / (2 std); 0 where std == 0 (PyTorch masks it the same way)
    from .elementwise import eq, where

    x = args[0]
    dims, keepdim, correction = params["dims"], params["keepdim"], params["correction"]
    out = _keep(outs[0], x.shape, dims, keepdim)
    zero = eq(out, 0)
    scale = 0.5 * _var_scale(x.shape, dims, correction)
    ct = _keep(cts[0], x.shape, dims, keepdim)
    return (where(zero, 0, ct * _centered(x, dims) * scale / where(zero, 1, out)),)


def _std_jvp(tangents, outs, args, params):
    from .elementwise import eq, where

    out = outs[0]
    zero = eq(out, 0)
    var_tangent = _var_tangent(
        tangents[0], args[0], params["dims"], params["keepdim"], params["correction"]
    )
    return where(zero, 0, var_tangent * 0.5 / where(zero, 1, out))


def _var_impl(xp, x, *, dims, correction, keepdim):
    return xp.var(x, axis=dims, ddof=correction, keepdims=keepdim)


def _std_impl(xp, x, *, dims, correction, keepdim):
    return xp.std(x, axis=dims, ddof=correction, keepdims=keepdim)


_var_op = register(OpDef("var", _var_impl, vjp=_var_vjp, jvp=_var_jvp, batch=_reduction_batch))
_std_op = register(
    OpDef("std", _std_impl, vjp=_std_vjp, jvp=_std_jvp, batch=_reduction_batch, save_out=True)
)


def _moment_params(x, dim, unbiased, keepdim, correction, axis, keepdims, ddof, name):
    if isinstance(dim, bool):  # torch.var(x, True): the old (input, unbiased) overload
        dim, unbiased = None, dim
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"dualad.{name}: std and var only support floating point and complex dtypes "
            f"(got {x.dtype})"
        )
    given = [v for v in (unbiased, correction, ddof) if v is not None]
    if len(given) > 1:
        raise TypeError(f"dualad.{name}: pass only one of unbiased=, correction= and ddof=")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    elif correction is None:
        correction = 1 if ddof is None else ddof
    params = _reduce_params(x, dim, axis, keepdim, keepdims, name)
    params["correction"] = correction
    return params


def var(
    x,
    dim=None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction=None,
    axis=None,
    keepdims=None,
    ddof=None,
):
    """Variance over ``dim`` with ``correction`` (default 1, Bessel's; ``unbiased=False`` or
    ``correction=0``/``ddof=0`` for the population variance). Complex input: real output.

    >>> import dualad
    >>> dualad.var(dualad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor(1.66666667)
    """
    x = _as_tensor(x)
    params = _moment_params(x, dim, unbiased, keepdim, correction, axis, keepdims, ddof, "var")
    return apply1(_var_op, x, params)


def std(
    x,
    dim=None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction=None,
    axis=None,
    keepdims=None,
    ddof=None,
):
    """Standard deviation over ``dim`` (see ``var`` for ``correction``); gradient 0 where it is 0.

    >>> import dualad
    >>> dualad.std(dualad.tensor([[1.0, 3.0], [2.0, 2.0]]), dim=1)
    tensor([1.41421356, 0.        ])
    """
    x = _as_tensor(x)
    params = _moment_params(x, dim, unbiased, keepdim, correction, axis, keepdims, ddof, "std")
    return apply1(_std_op, x, params)


def _with_mean(moment):
    """``moment_mean``: ``(moment(x, ...), mean(x, ...))`` for ``moment`` ``var`` or ``std``."""

    def moment_mean(
        x,
        dim=None,
        unbiased=None,
        keepdim=False,
        *,
        correction=None,
        axis=None,
        keepdims=None,
        ddof=None,
    ):
        value = moment(
            x,
            dim,
            unbiased,
            keepdim,
            correction=correction,
            axis=axis,
            keepdims=keepdims,
            ddof=ddof,
        )
        if isinstance(dim, bool):
            dim = None
        return value, mean(x, dim, keepdim, axis=axis, keepdims=keepdims)

    name = moment.__name__
    moment_mean.__name__ = moment_mean.__qualname__ = f"{name}_mean"
    moment_mean.__doc__ = f"``({name}(x, ...), mean(x, ...))`` over the same dims."
    return moment_mean


var_mean = _with_mean(var)
std_mean = _with_mean(std)


# ---------------------------------------------------------------------------------------------
# amax, amin and the full max/min: ties share the gradient evenly


def _ties(x, value):
    """Where ``x`` equals the reduced ``value`` (a NaN result is matched by NaN inputs)."""
    from .elementwise import eq, isnan, logical_and, logical_or

    return logical_or(eq(x, value), logical_and(isnan(x), isnan(value)))


def _extremum_vjp(cts, outs, args, params, needs):
    from .elementwise import where

    x = args[0]
    dims, keepdim = params["dims"], params["keepdim"]
    if not dims:
        return (cts[0],)
    ct = _keep(cts[0], x.shape, dims, keepdim)
    mask = _ties(x, _keep(outs[0], x.shape, dims, keepdim))
    return (where(mask, ct / _count(mask, dims, True, ct.dtype), 0),)


def _extremum_jvp(tangents, outs, args, params):
    from .elementwise import where

    x, t = args[0], tangents[0]
    dims, keepdim = params["dims"], params["keepdim"]
    if not dims:
        return _fresh(t)
    mask = _ties(x, _keep(outs[0], x.shape, dims, keepdim))
    return _sum(where(mask, t, 0), dims, keepdim) / _count(mask, dims, keepdim, t.dtype)


def _extremum_op(name, largest, node_name=None):
    def impl(xp, x, *, dims, keepdim):
        return (xp.max if largest else xp.min)(x, axis=dims, keepdims=keepdim)

    return register(
        OpDef(
            name,
            impl,
            vjp=_extremum_vjp,
            jvp=_extremum_jvp,
            batch=_reduction_batch,
            save_out=True,
            node_name=node_name,
        )
    )


_amax_op = _extremum_op("amax", True)
_amin_op = _extremum_op("amin", False)
_max_all_op = _extremum_op("max_all", True, "MaxBackward1")
_min_all_op = _extremum_op("min_all", False, "MinBackward1")


def _extremum(op, x, dim, axis, keepdim, keepdims, name):
    x = _as_tensor(x)
    _check_ordered(x, name)
    params = _reduce_params(x, dim, axis, keepdim, keepdims, name)
    _check_nonempty(x, params["dims"], name)
    return apply1(op, x, params)


def amax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Maximum over ``dim`` (all dims by default); tied maxima share the gradient evenly.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 3.0, 3.0], requires_grad=True)
    >>> dualad.amax(x).backward()
    >>> x.grad
    tensor([0. , 0.5, 0.5])
    """
    return _extremum(_amax_op, x, dim, axis, keepdim, keepdims, "amax")


def amin(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Minimum over ``dim`` (all dims by default); tied minima share the gradient evenly."""
    return _extremum(_amin_op, x, dim, axis, keepdim, keepdims, "amin")


# ---------------------------------------------------------------------------------------------
# max/min along one dim: (values, indices); the gradient goes to the selected index only

max_result = namedtuple("max", ("values", "indices"))
min_result = namedtuple("min", ("values", "indices"))


def _index_mask_impl(xp, index, *, dim, size, keepdim):
    if not keepdim:
        index = xp.expand_dims(index, dim)
    positions = xp.arange(size).reshape((size,) + (1,) * (index.ndim - dim - 1))
    return positions == index


_index_mask_op = register(
    OpDef("index_mask", _index_mask_impl, batch=_dim_batch, differentiable=False)
)


def _index_mask(index, dim, size, keepdim):
    """Boolean mask, true at ``index`` along ``dim`` (a one-hot scatter of indices)."""
    return apply1(_index_mask_op, index, {"dim": dim, "size": size, "keepdim": keepdim})


def _select_impl(largest):
    def impl(xp, x, *, dim, keepdim):
        pick = xp.argmax if largest else xp.argmin
        index = pick(x, axis=dim, keepdims=True)
        values = xp.take_along_axis(x, index, axis=dim)
        index = index.astype(xp.int64, copy=False)
        if not keepdim:
            return xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
        return values, index

    return impl


def _select_vjp(cts, outs, args, params, needs):
    from .elementwise import where

    shape = args[0].shape
    dim, keepdim = params["dim"], params["keepdim"]
    mask = _index_mask(outs[1], dim, shape[dim], keepdim)
    return (where(mask, _keep(cts[0], shape, (dim,), keepdim), 0),)


def _select_jvp(tangents, outs, args, params):
    # the indices output is not differentiable: its tangent is None (a symbolic zero)
    from .elementwise import where

    dim, keepdim = params["dim"], params["keepdim"]
    mask = _index_mask(outs[1], dim, args[0].shape[dim], keepdim)
    return (_sum(where(mask, tangents[0], 0), (dim,), keepdim), None)


def _select_op(name, largest, node_name):
    return register(
        OpDef(
            name,
            _select_impl(largest),
            vjp=_select_vjp,
            jvp=_select_jvp,
            batch=_dim_batch,
            save_args=False,
            save_out=True,
            nout=2,
            nondiff_outputs=(1,),
            node_name=node_name,
        )
    )


_max_dim_op = _select_op("max_dim", True, "MaxBackward0")
_min_dim_op = _select_op("min_dim", False, "MinBackward0")


def _select_extremum(op, x, dim, keepdim, name, result):

    x = _as_tensor(x)
    _check_ordered(x, name)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(
            f"dualad.{name}: dim must be an int, a tuple of ints or None (or a tensor for the "
            f"elementwise {name}imum), got {type(dim).__name__}"
        )
    dim = int(dim)
    if x.ndim == 0:  # torch: dim 0 or -1 of a 0-d tensor selects the element itself
        normalize_dim(dim, 0, op=name)
        return result(*apply1(op, reshape(x, (1,)), {"dim": 0, "keepdim": False}))
    dim = normalize_dim(dim, x.ndim, op=name)
    _check_nonempty(x, (dim,), name)
    return result(*apply1(op, x, {"dim": dim, "keepdim": keepdim}))


def _elementwise_extremum(name, a, b):
    from . import elementwise

    fn = getattr(elementwise, name, None)
    if fn is None:
        raise NotImplementedError(
            f"dualad.{'max' if name == 'maximum' else 'min'}(a, b) needs dualad.{name}, "
            "which is not available"
        )
    return fn(a, b)


def max(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, other=None):
    """Maximum, in PyTorch's three forms.

    - ``max(x)``: the largest value (tied maxima share the gradient evenly);
    - ``max(x, dim, keepdim=False)``: a named tuple ``(values, indices)`` (the gradient goes to
      the selected index only; indices are not differentiable);
    - ``max(a, b)`` with a tensor ``b``: the elementwise maximum (``dualad.maximum``).

    A tuple of dims (NumPy's ``axis=(0, 1)``) reduces like ``amax``.

    >>> import dualad
    >>> x = dualad.tensor([[1.0, 5.0], [4.0, 2.0]])
    >>> dualad.max(x)
    tensor(5.)
    >>> dualad.max(x, dim=1).indices
    tensor([1, 0])
    """
    if other is not None or isinstance(dim, (Tensor, np.ndarray)):
        return _elementwise_extremum("maximum", x, dim if other is None else other)
    dim = pick_dim(dim, axis)
    if dim is None:
        return _extremum(_max_all_op, x, None, None, keepdim, keepdims, "max")
    if isinstance(dim, (tuple, list)):
        return _extremum(_amax_op, x, dim, None, keepdim, keepdims, "max")
    keepdim = pick_keepdim(keepdim, keepdims)
    return _select_extremum(_max_dim_op, x, dim, keepdim, "max", max_result)


def min(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, other=None):
    """Minimum, in PyTorch's three forms (see ``max``).

    >>> import dualad
    >>> dualad.min(dualad.tensor([[1.0, 5.0], [4.0, 2.0]]), dim=0)
    min(values=tensor([1., 2.]), indices=tensor([0, 1]))
    """
    if other is not None or isinstance(dim, (Tensor, np.ndarray)):
        return _elementwise_extremum("minimum", x, dim if other is None else other)
    dim = pick_dim(dim, axis)
    if dim is None:
        return _extremum(_min_all_op, x, None, None, keepdim, keepdims, "min")
    if isinstance(dim, (tuple, list)):
        return _extremum(_amin_op, x, dim, None, keepdim, keepdims, "min")
    keepdim = pick_keepdim(keepdim, keepdims)
    return _select_extremum(_min_dim_op, x, dim, keepdim, "min", min_result)


# ---------------------------------------------------------------------------------------------
# argmax, argmin (not differentiable)


def _arg_impl(largest):
    def impl(xp, x, *, dim, keepdim):
        pick = xp.argmax if largest else xp.argmin
        return xp.asarray(pick(x, axis=dim, keepdims=keepdim)).astype(xp.int64, copy=False)

    return impl


def _arg_batch(op, args, bdims, params):

    x = move_bdim_to_front(args[0], bdims[0])
    if params["dim"] is not None:
        return apply(op, x, dim=params["dim"] + 1, keepdim=params["keepdim"]), 0
    batch, logical_ndim = x.shape[0], x.ndim - 1
    out = apply(op, reshape(x, (batch, _numel(x.shape, range(1, x.ndim)))), dim=1, keepdim=False)
    if params["keepdim"]:
        out = reshape(out, (batch,) + (1,) * logical_ndim)
    return out, 0


_argmax_op = register(OpDef("argmax", _arg_impl(True), batch=_arg_batch, differentiable=False))
_argmin_op = register(OpDef("argmin", _arg_impl(False), batch=_arg_batch, differentiable=False))


def _arg_extremum(op, x, dim, axis, keepdim, keepdims, name):

    x = _as_tensor(x)
    _check_ordered(x, name)
    dim = pick_dim(dim, axis)
    keepdim = pick_keepdim(keepdim, keepdims)
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError(
                f"dualad.{name}: {name}(): Expected reduction dim to be specified for "
                "input.numel() == 0."
            )
        if x.ndim == 0:
            return reshape(apply1(op, reshape(x, (1,)), {"dim": 0, "keepdim": False}), ())
        return apply1(op, x, {"dim": None, "keepdim": keepdim})
    if x.ndim == 0:
        normalize_dim(dim, 0, op=name)
        return reshape(apply1(op, reshape(x, (1,)), {"dim": 0, "keepdim": False}), ())
    dim = normalize_dim(dim, x.ndim, op=name)
    _check_nonempty(x, (dim,), name)
    return apply1(op, x, {"dim": dim, "keepdim": keepdim})


def argmax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Index of the maximum along ``dim`` (of the flattened tensor by default); int64.

    >>> import dualad
    >>> dualad.argmax(dualad.tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
    tensor([1, 0])
    """
    return _arg_extremum(_argmax_op, x, dim, axis, keepdim, keepdims, "argmax")


def argmin(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Index of the minimum along ``dim`` (of the flattened tensor by default); int64."""
    return _arg_extremum(_argmin_op, x, dim, axis, keepdim, keepdims, "argmin")


# ---------------------------------------------------------------------------------------------
# logsumexp


def _logsumexp_impl(xp, x, *, dims, keepdim):
    with np.errstate(divide="ignore"):  # log(0) = -inf for all -inf (or empty) groups
        if builtins.any(x.shape[d] == 0 for d in dims):
            return xp.log(xp.sum(xp.exp(x), axis=dims, keepdims=keepdim))
        # (complex x: a real shift, the largest real part, leaves the principal log's argument)
        shift = xp.max(x.real if x.dtype.kind == "c" else x, axis=dims, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, 0)
        out = xp.log(xp.sum(xp.exp(x - shift), axis=dims, keepdims=True)) + shift
    return out if keepdim else xp.squeeze(out, axis=dims)


def _softmax_weights(x, out, dims, keepdim):
    """exp(x - logsumexp(x)); an all -inf group gets weights 0 instead of NaN."""
    from .elementwise import eq, exp, where

    out = _keep(out, x.shape, dims, keepdim)
    if x.dtype.kind == "c":
        return exp(x - out)
    return exp(x - where(eq(out, -_INF), 0, out))


def _logsumexp_vjp(cts, outs, args, params, needs):
    x = args[0]
    dims, keepdim = params["dims"], params["keepdim"]
    weights = _softmax_weights(x, outs[0], dims, keepdim)
    if x.dtype.kind == "c":  # holomorphic: the cotangent times the conjugate derivative
        weights = weights.conj()
    return (_keep(cts[0], x.shape, dims, keepdim) * weights,)


def _logsumexp_jvp(tangents, outs, args, params):
    dims, keepdim = params["dims"], params["keepdim"]
    weights = _softmax_weights(args[0], outs[0], dims, keepdim)
    return _sum(tangents[0] * weights, dims, keepdim)


_logsumexp_op = register(
    OpDef(
        "logsumexp",
        _logsumexp_impl,
        vjp=_logsumexp_vjp,
        jvp=_logsumexp_jvp,
        batch=_reduction_batch,
        save_out=True,
    )
)


def logsumexp(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """``log(sum(exp(x)))`` over ``dim`` (all dims by default), computed stably.

    >>> import dualad
    >>> dualad.logsumexp(dualad.tensor([1000.0, 1000.0]), dim=0)
    tensor(1000.69314718)
    """
    x = _to_floating(_as_tensor(x))
    return apply1(_logsumexp_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "logsumexp"))


# ---------------------------------------------------------------------------------------------
# vector norms


def _norm_impl(xp, x, *, ord, dims, keepdim):
    a = xp.abs(x)
    if ord == 2:
        return xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
    if ord == _INF:
        return xp.max(a, axis=dims, keepdims=keepdim)
    if ord == -_INF:
        return xp.min(a, axis=dims, keepdims=keepdim)
    if ord == 0:
        return xp.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    if ord == 1:
        return xp.sum(a, axis=dims, keepdims=keepdim)
    return xp.sum(a**ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)


def _magnitude(x):
    """|x|, differentiable to any order away from 0 (also for complex x)."""
    from .elementwise import abs, conj, real, sqrt

    if x.dtype.kind == "c":
        return sqrt(real(x * conj(x)))
    return abs(x)


def _sign(x):
    """x / |x| (0 at 0): a constant for real x, differentiable for complex x."""
    from .elementwise import eq, sgn, where

    if x.dtype.kind == "c":
        zero = eq(x, 0)
        return where(zero, 0, x / where(zero, 1, _magnitude(x)))
    return _constant(sgn(x))


def _norm_unit_gradient(x, out, order, dims):
    """The gradient of the norm for a unit cotangent, shaped like ``x`` (PyTorch's complex
    convention: ``x / |x|`` where the real case has ``sign(x)``); ``out`` has its reduced dims
    kept. None for ord 0 (zero gradient)."""
    from .elementwise import abs, eq, isnan, logical_or, pow, where

    if order == 0:
        return None
    if order == 1:
        return _sign(x)
    if order in (_INF, -_INF):  # like amax(|x|): ties (and NaNs) share the gradient
        magnitude = abs(x)  # bitwise the impl's |x|, so that the maxima are found
        mask = logical_or(eq(magnitude, out), isnan(magnitude))
        return where(mask, _sign(x) / _count(mask, dims, True, out.dtype), 0)
    magnitude = _magnitude(x)
    zero = eq(out, 0)
    if order == 2:  # x / |x|_2, and 0 at 0 (PyTorch's subgradient)
        return where(zero, 0, x / where(zero, 1, out))
    if order < 1:  # |x|^(p-1) blows up at x = 0: that element gets 0, like PyTorch
        x_zero = eq(x, 0)
        scaled = where(x_zero, 0, _sign(x) * pow(where(x_zero, 1, magnitude), order - 1))
        return scaled * pow(out, 1 - order)
    scaled = _sign(x) * pow(magnitude, order - 1)
    return where(zero, 0, scaled / pow(where(zero, 1, out), order - 1))


def _norm_vjp(cts, outs, args, params, needs):
    x = args[0]
    dims, keepdim = params["dims"], params["keepdim"]
    ct = _keep(cts[0], x.shape, dims, keepdim)
    unit = _norm_unit_gradient(x, _keep(outs[0], x.shape, dims, keepdim), params["ord"], dims)
    if unit is None:
        return (expand_reduced(ct * 0, x.shape, dims, True),)
    return (ct * unit,)


def _norm_jvp(tangents, outs, args, params):
    # the norm is real: tangent = Re(conj(gradient) * t), summed
    from .elementwise import conj, real

    x = args[0]
    dims, keepdim = params["dims"], params["keepdim"]
    unit = _norm_unit_gradient(x, _keep(outs[0], x.shape, dims, keepdim), params["ord"], dims)
    if unit is None:
        return outs[0] * 0
    return _sum(real(conj(unit) * tangents[0]), dims, keepdim)


_norm_op = register(
    OpDef(
        "norm",
        _norm_impl,
        vjp=_norm_vjp,
        jvp=_norm_jvp,
        batch=_reduction_batch,
        save_out=True,
        node_name="LinalgVectorNormBackward0",
    )
)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None):
    """The vector ``ord``-norm over ``dim`` (all dims by default, as one flat vector).

    ``ord``: any float, ``inf``, ``-inf`` or 0 (the number of non-zeros). Real output for
    complex input. The gradient of the 2-norm at 0 is 0 (PyTorch's subgradient).
    """
    from .elementwise import astype

    x = _as_tensor(x)
    if dtype is not None:
        x = astype(x, dtype)
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            "dualad.linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {x.dtype}"
        )
    dims = normalize_dims(dim, x.ndim, op="norm")
    order = float(ord)
    if order in (_INF, -_INF) and x.numel() == 0:
        raise RuntimeError(
            "dualad.linalg.vector_norm: cannot compute the inf norm on an empty tensor because "
            "the operation does not have an identity"
        )
    return apply1(_norm_op, x, {"ord": order, "dims": dims, "keepdim": bool(keepdim)})


def norm(x, p="fro", dim=None, keepdim: bool = False, dtype=None, *, axis=None, keepdims=None):
    """``torch.norm``: the vector ``p``-norm over ``dim`` (all elements by default).

    ``p``: ``"fro"`` or 2 (default), 1, ``inf``, ``-inf``, 0, any other number; ``"nuc"`` goes to
    ``dualad.linalg.matrix_norm``. Numeric ``p`` is always a vector norm over ``dim``.

    >>> import dualad
    >>> dualad.norm(dualad.tensor([3.0, -4.0]))
    tensor(5.)
    >>> dualad.norm(dualad.tensor([3.0, -4.0]), p=1)
    tensor(7.)
    """
    dim = pick_dim(dim, axis)
    keepdim = pick_keepdim(keepdim, keepdims)
    if p is None:
        p = 2.0
    if isinstance(p, str):
        if p == "fro":
            p = 2.0
        elif p == "nuc":
            import importlib

            try:
                matrix_norm = importlib.import_module("dualad.linalg").matrix_norm
            except (ImportError, AttributeError):
                matrix_norm = None
            if matrix_norm is None:
                raise NotImplementedError("dualad.norm(p='nuc') needs dualad.linalg.matrix_norm")
            x = _as_tensor(x)
            return matrix_norm(x, "nuc", dim=(-2, -1) if dim is None else dim, keepdim=keepdim)
        else:
            raise ValueError(f"dualad.norm: unknown norm type {p!r} (use 'fro', 'nuc' or a number)")
    return vector_norm(x, p, dim, keepdim, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# all, any, count_nonzero (not differentiable)


def _nondiff_reduction(name, impl):
    return register(OpDef(name, impl, batch=_reduction_batch, differentiable=False))


_all_op = _nondiff_reduction(
    "all", lambda xp, x, *, dims, keepdim: xp.all(x, axis=dims, keepdims=keepdim)
)
_any_op = _nondiff_reduction(
    "any", lambda xp, x, *, dims, keepdim: xp.any(x, axis=dims, keepdims=keepdim)
)
_count_nonzero_op = _nondiff_reduction(
    "count_nonzero",
    lambda xp, x, *, dims, keepdim: xp.sum(x != 0, axis=dims, keepdims=keepdim, dtype=xp.int64),
)


def all(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Whether every element along ``dim`` is non-zero (bool tensor).

    >>> import dualad
    >>> dualad.all(dualad.tensor([[1.0, 0.0], [2.0, 3.0]]), dim=1)
    tensor([False,  True])
    """
    x = _as_tensor(x)
    return apply1(_all_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "all"))


def any(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Whether some element along ``dim`` is non-zero (bool tensor)."""
    x = _as_tensor(x)
    return apply1(_any_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "any"))


def count_nonzero(x, dim=None, *, keepdim: bool = False, axis=None, keepdims=None):
    """The number of non-zero elements along ``dim`` (int64).

    >>> import dualad
    >>> dualad.count_nonzero(dualad.tensor([[1.0, 0.0], [2.0, 3.0]]), dim=0)
    tensor([2, 1])
    """
    x = _as_tensor(x)
    return apply1(
        _count_nonzero_op, x, _reduce_params(x, dim, axis, keepdim, keepdims, "count_nonzero")
    )


# ---------------------------------------------------------------------------------------------
# NaN-ignoring sum and mean (composites: their gradients come from where and sum)


def nansum(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
    """Sum treating NaN as 0 (NaN entries get gradient 0).

    >>> import dualad
    >>> dualad.nansum(dualad.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    from .elementwise import isnan, where

    x = _as_tensor(x)
    if x.dtype.kind in "fc":
        x = where(isnan(x), 0, x)
    return sum(x, dim, keepdim, axis=axis, keepdims=keepdims, dtype=dtype)


def nanmean(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None, dtype=None):
    """Mean of the non-NaN elements along ``dim``.

    >>> import dualad
    >>> dualad.nanmean(dualad.tensor([1.0, float("nan"), 2.0]))
    tensor(1.5)
    """
    from .._dtypes import real_dtype
    from .elementwise import astype, isnan, logical_not, where

    x = _as_tensor(x)
    if dtype is not None:
        x = astype(x, dtype)
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {x.dtype}"
        )
    present = logical_not(isnan(x))
    total = sum(where(present, x, 0), dim, keepdim, axis=axis, keepdims=keepdims)
    count = sum(present, dim, keepdim, axis=axis, keepdims=keepdims)
    return total / astype(count, real_dtype(x.dtype))


TENSOR_METHODS = (
    "sum",
    "mean",
    "prod",
    "var",
    "std",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "logsumexp",
    "norm",
    "cumsum",
    "cumprod",
    "all",
    "any",
    "count_nonzero",
    "nansum",
    "nanmean",
)
INPLACE_METHODS = ("cumsum", "cumprod")
