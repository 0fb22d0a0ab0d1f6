"""Helpers of the reduction modules (reductions, scans, products, moments, extrema, norms).

Static parameters are normalised once in the public functions: ``dims`` is a sorted tuple of
non-negative ints (``dim`` for single-dim ops), ``keepdim`` a bool. Rules never see ``None``.
"""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor
from .._dispatch import apply, apply1
from .._dtypes import get_default_dtype
from .._tensor import Tensor
from ._dims import normalize_dims, pick_dim, pick_keepdim
from ._helpers import clone
from .base import _keepdim_shape, _sum_op, move_bdim_to_front, reshape
from .casts import astype


def _numel(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


# ---------------------------------------------------------------------------------------------
# shared helpers

_INF = float("inf")


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    return as_tensor(x)


def _floating_input(x, dtype, message):
    """``x`` as a tensor, cast to ``dtype`` if given, which must be floating or complex (else a
    RuntimeError: ``message`` followed by the dtype): the input of mean, nanmean and the norms."""
    x = _as_tensor(x)
    if dtype is not None:
        x = astype(x, dtype)
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"{message}{x.dtype}")
    return x


def _keep(t, x_shape, dims, keepdim):
    """A reduced tensor with its reduced dims kept as size 1, so it broadcasts against x."""
    if keepdim or not dims:
        return t

    return reshape(t, _keepdim_shape(x_shape, dims))


def _fresh(t):
    """A copy of an input's tangent returned as an output's: the output is not a view of the
    input, so an in-place op on the output (which updates its tangent in place) must not change
    the input's tangent."""
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
    if dtype is not None:
        return astype(x, dtype)
    if x.dtype.kind in "biu" and x.dtype != np.int64:
        return astype(x, "int64")
    return x


def _to_floating(x, dtype=None):
    """Ops defined on real numbers only through floats: integers become the default float."""
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
