"""cumsum, logcumsumexp, diff (the inverse of a scan) and shift_fill (the building block of
exclusive scans)."""

from __future__ import annotations

import math

from .._dispatch import OpDef, apply1, register
from .._opdef import SCAN
from . import _xp_compat
from ._dims import normalize_dim, pick_dim
from ._exports import Exports
from ._reducing import _as_tensor, _check_ordered, _dim_batch, _promote_integral, _to_floating
from .arithmetic import neg
from .base import linear, reshape
from .casts import astype
from .comparison import gt, isfinite, logical_and, ne, where
from .exp_log import exp, log
from .joining import cat

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


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
    sparsity=SCAN,
)


def _cumsum(x, dim, reverse=False):
    """Inclusive scan along ``dim`` (from the end when ``reverse``); bool counts as int64."""
    if x.dtype.kind == "b":
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


@public.inplace
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


# ---------------------------------------------------------------------------------------------
# logcumsumexp: a scan of logaddexp; its rules are signed sums of exponentials, computed in log
# space with the scan itself (so they never overflow, and compose to any order)


def _logcumsumexp_impl(xp, x, *, dim, reverse):
    if reverse:
        return xp.flip(_logcumsumexp_impl(xp, xp.flip(x, axis=dim), dim=dim, reverse=False), dim)
    return _xp_compat.accumulate(xp, "logaddexp", x, dim)


def _signed_scan(v, z, shift, dim, reverse):
    """``exp(shift_i) * sum_j v_j exp(z_j)`` over the scan to ``i``, in log space: the positive
    and negative parts of ``v`` are scanned apart. Terms with a non-finite ``z`` count as 0 (a
    slice of -inf inputs: DESIGN 8's gradient 0), and so do outputs with no term."""
    total = 0
    for sign in (1, -1):
        part = v * sign
        keep = logical_and(gt(part, 0), isfinite(z))
        logs = where(keep, log(where(keep, part, 1)) + where(keep, z, 0), -math.inf)
        scanned = _logcumsumexp(logs, dim, reverse)
        some = logical_and(gt(scanned, -math.inf), isfinite(shift))
        term = where(some, exp(where(some, scanned, 0) + where(some, shift, 0)), 0)
        total = total + term * sign
    return total


def _logcumsumexp_vjp(cts, outs, args, params, needs):
    # grad_j = sum_{i after j} ct_i exp(x_j - y_i)
    dim, reverse = params["dim"], params["reverse"]
    return (_signed_scan(cts[0], neg(outs[0]), args[0], dim, not reverse),)


def _logcumsumexp_jvp(tangents, outs, args, params):
    # dy_i = sum_{j before i} t_j exp(x_j - y_i)
    dim, reverse = params["dim"], params["reverse"]
    return _signed_scan(tangents[0], args[0], neg(outs[0]), dim, reverse)


_logcumsumexp_op = register(
    OpDef(
        "logcumsumexp",
        _logcumsumexp_impl,
        vjp=_logcumsumexp_vjp,
        jvp=_logcumsumexp_jvp,
        batch=_dim_batch,
        save_out=True,
        sparsity=("scan", "nonlinear"),
    )
)


def _logcumsumexp(x, dim, reverse):
    return apply1(_logcumsumexp_op, x, {"dim": dim, "reverse": reverse})


@public.method
def logcumsumexp(x, dim: int):
    """``log(cumsum(exp(x)))`` along ``dim``, computed as a running ``logaddexp`` (no overflow).
    Real inputs (integers become the default float). Singular points: a prefix of -inf inputs
    gives -inf with gradient 0 there (DESIGN 8, as ``logsumexp``); +inf gives +inf and NaN
    derivatives.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 1000.0, 0.0], requires_grad=True)
    >>> dualad.logcumsumexp(x, 0)
    tensor([   0., 1000., 1000.], grad_fn=<LogcumsumexpBackward0>)
    >>> dualad.logcumsumexp(x, 0).sum().backward()
    >>> x.grad
    tensor([1., 2., 0.])
    """
    x = _to_floating(_as_tensor(x))
    _check_ordered(x, "logcumsumexp")
    return _scan(_logcumsumexp_op, x, dim, "logcumsumexp")


# ---------------------------------------------------------------------------------------------
# diff: the n-th forward differences (slices and a subtraction: linear, every rule follows)


@public.method
def diff(x, n: int = 1, dim: int = -1, prepend=None, append=None):
    """The ``n``-th forward differences along ``dim`` (PyTorch's ``diff``), with ``prepend``
    and ``append`` joined to ``x`` first; ``!=`` of neighbours for booleans.

    >>> import dualad
    >>> dualad.diff(dualad.tensor([1.0, 4.0, 9.0, 16.0]))
    tensor([3., 5., 7.])
    >>> dualad.diff(dualad.tensor([1.0, 4.0, 9.0]), n=2, prepend=dualad.tensor([0.0]))
    tensor([2., 2.])
    """
    x = _as_tensor(x)
    if x.ndim == 0:
        raise RuntimeError("dualad.diff: diff expects a tensor of at least one dimension")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"dualad.diff: order must be non-negative (got {n})")
    dim = normalize_dim(dim, x.ndim, op="diff")
    parts = [_as_tensor(p) for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = cat(parts, dim)
    lead = (slice(None),) * dim
    for _ in range(n):
        later, earlier = x[(*lead, slice(1, None))], x[(*lead, slice(None, -1))]
        x = ne(later, earlier) if x.dtype.kind == "b" else later - earlier
    return x
