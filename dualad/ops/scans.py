"""cumsum and shift_fill (the building block of exclusive scans)."""

from __future__ import annotations

from .._dispatch import OpDef, apply1, register
from ._dims import normalize_dim, pick_dim
from ._exports import Exports
from ._reducing import _as_tensor, _dim_batch, _promote_integral
from .base import linear, reshape
from .casts import astype

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
