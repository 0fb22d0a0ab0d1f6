"""Reductions: sum, mean, and ``sum_to`` (the one place broadcast cotangents are reduced)."""

from __future__ import annotations

from .._dispatch import apply, apply1
from .._tensor import Tensor
from ..vmap.rules import move_bdim_to_front
from ._dims import normalize_dims, pick_dim, pick_keepdim
from ._helpers import linear


def _keepdim_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def expand_reduced(ct, x_shape, dims, keepdim):
    """Broadcast a reduction's cotangent back to the input's shape."""
    from .shape import broadcast_to, reshape

    if not keepdim and dims:
        ct = reshape(ct, _keepdim_shape(x_shape, dims))
    return broadcast_to(ct, x_shape)


def _reduction_batch(op, args, bdims, params):
    """Batch rule for reductions over ``dims``: move the batch dim first, shift dims by one."""
    x = move_bdim_to_front(args[0], bdims[0])
    params = dict(params, dims=tuple(d + 1 for d in params["dims"]))
    return apply(op, x, **params), 0


_sum_op = linear(
    "sum",
    lambda xp, x, *, dims, keepdim: xp.sum(x, axis=dims, keepdims=keepdim),
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
    lambda ct, x, *, dims, keepdim: expand_reduced(ct, x.shape, dims, keepdim)
    / _numel(x.shape, dims),
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
        from .shape import reshape

        out = reshape(out, shape)
    return out


TENSOR_METHODS = ("sum", "mean")
