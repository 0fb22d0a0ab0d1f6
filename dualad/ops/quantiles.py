"""PyTorch's ``quantile`` and ``nanquantile``, made of the ``sort`` op (its gradient goes back
through the sorting permutation) and a gather: each quantile's gradient goes to the one or two
sorted elements it interpolates.

As in PyTorch: ``q`` (a number or a 1-D tensor, in [0, 1]) picks the rank ``q (n - 1)`` of
the ``n`` values of a slice (those that are not NaN for ``nanquantile``); ``interpolation``
is ``linear`` (the default), ``lower``, ``higher``, ``nearest`` (half to even) or
``midpoint``. A slice holding NaN gives NaN in ``quantile``; a slice of NaNs only gives NaN in
``nanquantile``. ``q`` fixes the result's structure, so it is a plain value: a ``q`` that
carries a derivative raises.
"""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor
from .._tensor import Tensor
from ._dims import normalize_dim
from ._exports import Exports
from ._reducing import _as_tensor, _check_ordered
from .base import movedim, reshape
from .casts import astype
from .comparison import ge, isnan, logical_not, where
from .gather_scatter import take_along_dim
from .minmax import maximum, minimum
from .order_statistics import sort
from .reductions import sum as _sum_all
from .rounding import ceil, floor, round

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

_PICK = {"lower": floor, "higher": ceil, "nearest": round}


def _plain_q(q, name):
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"dualad.{name}: q must be a scalar or 1D tensor")
        q = q.numpy()  # (raises TrackedConversionError where q carries a derivative)
    qs = np.asarray(q, dtype=np.float64)
    if qs.ndim > 1:
        raise RuntimeError(f"dualad.{name}: q must be a scalar or 1D tensor")
    if not ((qs >= 0) & (qs <= 1)).all():
        raise RuntimeError(f"dualad.{name}: q values must be in the range [0, 1]")
    return qs


def _lerp(a, b, t):
    """``a + (b - a) t`` from the nearer end (exact at t = 0 and 1), as PyTorch's lerp."""
    diff = b - a
    return where(ge(t, 0.5), b - diff * (1 - t), a + diff * t)


def _quantile(x, q, dim, keepdim, interpolation, skipnan, name):
    x = _as_tensor(x)
    _check_ordered(x, name)
    if x.dtype.kind != "f":
        raise RuntimeError(f"dualad.{name}: input must be a floating-point tensor (got {x.dtype})")
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise RuntimeError(
            f"dualad.{name}: interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest (got {interpolation!r})"
        )
    qs = _plain_q(q, name)
    if dim is None:
        kept_shape = (1,) * x.ndim
        x, dim = reshape(x, (x.numel(),)), 0
    else:
        dim = normalize_dim(dim, x.ndim, op=name) if x.ndim else 0
        x = reshape(x, (1,)) if x.ndim == 0 else x
        kept_shape = tuple(1 if d == dim else n for d, n in enumerate(x.shape))
    if x.shape[dim] == 0:
        raise IndexError(f"dualad.{name}: input tensor is empty along dimension {dim}")
    s = movedim(sort(x, dim).values, dim, -1)  # (NaNs last)
    lead = tuple(s.shape[:-1])
    n = s.shape[-1]
    valid = _sum_all(logical_not(isnan(s)), -1, True)
    # the ranks in the input's dtype, as PyTorch computes them
    qt = astype(reshape(as_tensor(qs, device=s.device), (1,) * len(lead) + (qs.size,)), s.dtype)
    if skipnan:
        rank = qt * maximum(astype(valid, s.dtype) - 1, 0)
    else:  # a NaN anywhere: the rank of the last (NaN) value
        rank = where(valid < n, n - 1, qt * (n - 1))

    def at(position):
        index = astype(minimum(maximum(position, 0), n - 1), np.int64)
        return take_along_dim(s, index, -1)

    if interpolation in _PICK:
        out = at(_PICK[interpolation](rank))
    else:
        below = floor(rank)
        weight = 0.5 if interpolation == "midpoint" else rank - below
        out = _lerp(at(below), at(ceil(rank)), weight)
    if skipnan:
        out = where(valid == 0, np.nan, out)
    out = movedim(out, -1, 0)  # (the quantiles first, as PyTorch orders them)
    if keepdim:
        out = reshape(out, (qs.size, *kept_shape))
    else:
        out = reshape(out, (qs.size, *lead))
    return reshape(out, tuple(out.shape[1:])) if qs.ndim == 0 else out


@public.method
def quantile(x, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """PyTorch's ``quantile``: the ``q``-th quantiles of ``x`` along ``dim`` (all elements
    when None); for a 1-D ``q`` the quantiles come first in the result. NaN where a slice holds
    NaN. The gradient goes to the one or two sorted elements each quantile interpolates.

    >>> import dualad
    >>> x = dualad.tensor([[3.0, 1.0, 2.0, 4.0]], requires_grad=True)
    >>> dualad.quantile(x, 0.4, dim=1)
    tensor([2.2], grad_fn=<ViewBackward0>)
    >>> dualad.quantile(x, 0.4, dim=1).sum().backward()
    >>> x.grad
    tensor([[0.2, 0. , 0.8, 0. ]])
    """
    return _quantile(x, q, dim, keepdim, interpolation, False, "quantile")


@public.method
def nanquantile(x, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """PyTorch's ``nanquantile``: ``quantile`` of the values that are not NaN (NaN for a slice
    of NaNs only); NaN entries get no gradient.

    >>> import dualad
    >>> dualad.nanquantile(dualad.tensor([1.0, float("nan"), 0.0, 2.0]), 0.5)
    tensor(1.)
    """
    return _quantile(x, q, dim, keepdim, interpolation, True, "nanquantile")
