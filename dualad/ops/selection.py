"""Order-based selections along one dim, PyTorch's: ``topk`` (the k largest or smallest
values and their indices), ``kthvalue`` (the k-th smallest), ``median``/``nanmedian`` (the
lower middle value), ``cummax``/``cummin`` (running extrema and where they were reached) and
``msort``.

Each returns ``(values, indices)``; the values' gradient goes to the element each value was
taken from (a scatter-add of the cotangent at the indices: repeated indices of a running
extremum accumulate), their tangent is the input's tangent gathered at the indices, and the
indices are not differentiable. Complex inputs are rejected (not ordered). Ties: ``topk`` and
``kthvalue`` take equal values in input order; ``cummax``/``cummin`` point at the LAST
position where the running extremum was reached (PyTorch's choice). NaN counts as larger than
every number (``topk`` largest picks NaNs first) and propagates through running extrema, as in
PyTorch.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from .._dispatch import OpDef, apply1, register
from .._opdef import SELECT
from .._tensor import Tensor
from . import _xp_compat
from ._dims import normalize_dim
from ._exports import Exports
from ._reducing import _as_tensor, _check_ordered, _dim_batch
from .base import reshape, unsqueeze
from .gather_scatter import _zeros, gather, scatter_add

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

# NamedTuple's call form: fields typed Tensor for type checkers, the class keeps its name
topk_result = NamedTuple("topk", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014
kthvalue_result = NamedTuple("kthvalue", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014
cummax_result = NamedTuple("cummax", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014
cummin_result = NamedTuple("cummin", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014


def _picked_vjp(cts, outs, args, params, needs):
    """The cotangent of values taken at ``outs[1]`` along ``dim``, added back there."""
    dim, ct, index = params["dim"], cts[0], outs[1]
    if not params.get("keepdim", True):
        ct, index = unsqueeze(ct, dim), unsqueeze(index, dim)
    return (scatter_add(_zeros(args[0].shape, ct), dim, index, ct),)


def _picked_jvp(tangents, outs, args, params):
    dim, index = params["dim"], outs[1]
    if params.get("keepdim", True):
        return gather(tangents[0], dim, index), None
    picked = gather(tangents[0], dim, unsqueeze(index, dim))
    return reshape(picked, tuple(outs[0].shape)), None


def _picking_op(name, impl, node_name):
    # (save_args: the VJP needs only x's shape, but saving the input keeps the rule simple)
    return register(
        OpDef(
            name,
            impl,
            vjp=_picked_vjp,
            jvp=_picked_jvp,
            batch=_dim_batch,
            save_out=True,
            nout=2,
            nondiff_outputs=(1,),
            node_name=node_name,
            sparsity=SELECT,
        )
    )


def _prepared(x, dim, name):
    """``x`` as a tensor of at least one dim (a 0-d tensor as one element) and ``dim``."""
    x = _as_tensor(x)
    _check_ordered(x, name)
    if x.ndim == 0:  # torch: dim 0 or -1 of a 0-d tensor is its only element
        normalize_dim(dim, 0, op=name)
        return reshape(x, (1,)), 0, True
    return x, normalize_dim(int(dim), x.ndim, op=name), False


# ---------------------------------------------------------------------------------------------
# topk and kthvalue


def _order(xp, x, dim, largest):
    """Indices sorting ``x`` along ``dim``: ascending, or descending (NaN first); ties in
    input order either way (the descending order sorts the reversed input, then reverses)."""
    if not largest:
        return xp.argsort(x, axis=dim, kind="stable")
    backwards = xp.argsort(xp.flip(x, axis=dim), axis=dim, kind="stable")
    return x.shape[dim] - 1 - xp.flip(backwards, axis=dim)


def _topk_impl(xp, x, *, k, dim, largest):
    index = xp.take(_order(xp, x, dim, largest), xp.arange(k), axis=dim)
    return xp.take_along_axis(x, index, axis=dim), index.astype(xp.int64, copy=False)


_topk_op = _picking_op("topk", _topk_impl, "TopkBackward0")


@public.method
def topk(x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The ``k`` largest (``largest=False``: smallest) values of ``x`` along ``dim`` and their
    indices, a named tuple ``(values, indices)``, in descending (ascending) order; ``sorted``
    is accepted for PyTorch's signature (the values are always sorted). The gradient of each
    value goes to the element it was taken from; the indices are not differentiable.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 4.0, 2.0, 3.0], requires_grad=True)
    >>> dualad.topk(x, 2)
    topk(values=tensor([4., 3.], grad_fn=<TopkBackward0>), indices=tensor([1, 3]))
    >>> dualad.topk(x, 2).values.sum().backward()
    >>> x.grad
    tensor([0., 1., 0., 1.])
    """
    x, dim, scalar = _prepared(x, dim, "topk")
    k = int(k)
    if not 0 <= k <= x.shape[dim]:
        raise RuntimeError(
            f"dualad.topk: k ({k}) is out of range for dimension {dim} of size {x.shape[dim]} "
            f"(input shape {tuple(x.shape)})"
        )
    values, index = apply1(_topk_op, x, {"k": k, "dim": dim, "largest": bool(largest)})
    if scalar and k == 1:  # (torch: a 0-d result for a 0-d input)
        values, index = reshape(values, ()), reshape(index, ())
    return topk_result(values, index)


def _kthvalue_impl(xp, x, *, k, dim, keepdim):
    index = xp.take(xp.argsort(x, axis=dim, kind="stable"), [k - 1], axis=dim)
    values = xp.take_along_axis(x, index, axis=dim)
    index = index.astype(xp.int64, copy=False)
    if not keepdim:
        return xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
    return values, index


_kthvalue_op = _picking_op("kthvalue", _kthvalue_impl, "KthvalueBackward0")


@public.method
def kthvalue(x, k: int, dim: int = -1, keepdim: bool = False):
    """The ``k``-th smallest value of ``x`` along ``dim`` (``k`` from 1) and its index, a
    named tuple ``(values, indices)``; the gradient goes to that element.

    >>> import dualad
    >>> x = dualad.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, 6.0]], requires_grad=True)
    >>> dualad.kthvalue(x, 2, dim=1)
    kthvalue(values=tensor([2., 4.], grad_fn=<KthvalueBackward0>), indices=tensor([2, 1]))
    """
    x, dim, scalar = _prepared(x, dim, "kthvalue")
    k = int(k)
    if not 1 <= k <= x.shape[dim]:
        raise RuntimeError(
            f"dualad.kthvalue: k ({k}) must be between 1 and the size {x.shape[dim]} of "
            f"dimension {dim} (input shape {tuple(x.shape)})"
        )
    keepdim = bool(keepdim) and not scalar
    values, index = apply1(_kthvalue_op, x, {"k": k, "dim": dim, "keepdim": keepdim})
    return kthvalue_result(values, index)


@public.method
def msort(x):
    """``x`` sorted along its first dim (``sort(x, 0).values``, PyTorch's ``msort``).

    >>> import dualad
    >>> dualad.msort(dualad.tensor([[2.0, 1.0], [0.5, 3.0]]))
    tensor([[0.5, 1. ],
            [2. , 3. ]])
    """
    x = _as_tensor(x)
    _check_ordered(x, "msort")
    return topk(x, x.shape[0], 0, largest=False).values if x.ndim else x


# ---------------------------------------------------------------------------------------------
# cummax and cummin


def _running_impl(largest):
    def impl(xp, x, *, dim):
        values = _xp_compat.accumulate(xp, "maximum" if largest else "minimum", x, dim)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        positions = xp.arange(x.shape[dim]).reshape(shape)
        reached = (x == values) | (xp.isnan(x) & xp.isnan(values))
        # the last position up to here where the running extremum was reached
        index = _xp_compat.accumulate(xp, "maximum", xp.where(reached, positions, 0), dim)
        return values, index.astype(xp.int64, copy=False)

    return impl


_cummax_op = _picking_op("cummax", _running_impl(True), "CummaxBackward0")
_cummin_op = _picking_op("cummin", _running_impl(False), "CumminBackward0")


def _running(op, x, dim, name, result):
    x, dim, scalar = _prepared(x, dim, name)
    values, index = apply1(op, x, {"dim": dim})
    if scalar:
        values, index = reshape(values, ()), reshape(index, ())
    return result(values, index)


@public.method
def cummax(x, dim: int):
    """The running maximum of ``x`` along ``dim`` and the index where it was reached (the
    last such index at ties), a named tuple ``(values, indices)``; each value's gradient goes
    to the element it copies (an element that stays the maximum collects several).

    >>> import dualad
    >>> x = dualad.tensor([1.0, 3.0, 2.0, 5.0], requires_grad=True)
    >>> dualad.cummax(x, 0)
    cummax(values=tensor([1., 3., 3., 5.], grad_fn=<CummaxBackward0>), indices=tensor([0, 1, 1, 3]))
    >>> dualad.cummax(x, 0).values.sum().backward()
    >>> x.grad
    tensor([1., 2., 0., 1.])
    """
    return _running(_cummax_op, x, dim, "cummax", cummax_result)


@public.method
def cummin(x, dim: int):
    """The running minimum of ``x`` along ``dim`` and where it was reached (see ``cummax``).

    >>> import dualad
    >>> dualad.cummin(dualad.tensor([2.0, 3.0, 1.0]), 0).values
    tensor([2., 2., 1.])
    """
    return _running(_cummin_op, x, dim, "cummin", cummin_result)


# ---------------------------------------------------------------------------------------------
# median (PyTorch's: the lower of the two middle values; NaN when the slice holds one)

median_result = NamedTuple("median", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014


def _median_impl(xp, x, *, dim, keepdim, skipnan=False):
    order = xp.argsort(x, axis=dim, kind="stable")  # (NaNs last)
    valid = xp.sum(~xp.isnan(x), axis=dim, keepdims=True)
    if skipnan:  # the lower middle of the values that are not NaN (the first NaN: all NaN)
        position = xp.maximum(valid - 1, 0) // 2
    else:  # the lower middle, or the first NaN where the slice holds one
        position = xp.where(valid < x.shape[dim], valid, (x.shape[dim] - 1) // 2)
    index = xp.take_along_axis(order, position, axis=dim)
    values = xp.take_along_axis(x, index, axis=dim)
    index = index.astype(xp.int64, copy=False)
    if not keepdim:
        return xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
    return values, index


# (not "median": that name would stand for dualad.numpy.median, NumPy's averaging one, in the
# coverage table)
_median_op = _picking_op("lower_median", _median_impl, "MedianBackward1")
_nanmedian_op = _picking_op(
    "lower_nanmedian", partial(_median_impl, skipnan=True), "NanmedianBackward1"
)
nanmedian_result = NamedTuple("nanmedian", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014


@public.method
def median(x, dim=None, keepdim: bool = False):
    """PyTorch's median: the lower of the two middle values (no averaging) along ``dim``, a
    named tuple ``(values, indices)``; over all elements (a 0-d tensor) when ``dim`` is None.
    A slice holding NaN gives NaN (at a NaN's index). The gradient goes to the chosen
    element. (NumPy's averaging median is ``dualad.numpy.median``.)

    >>> import dualad
    >>> x = dualad.tensor([[3.0, 1.0, 2.0, 4.0], [0.0, 5.0, 6.0, 1.0]])
    >>> dualad.median(x, 1)
    median(values=tensor([2., 1.]), indices=tensor([2, 3]))
    >>> dualad.median(x)
    tensor(2.)
    """
    return _lower_median(_median_op, x, dim, keepdim, "median", median_result)


@public.method
def nanmedian(x, dim=None, keepdim: bool = False):
    """PyTorch's ``nanmedian``: ``median`` of the values that are not NaN (NaN, at index 0 of
    the sorted slice, where all are NaN); the gradient goes to the chosen element, never to a
    NaN entry.

    >>> import dualad
    >>> dualad.nanmedian(dualad.tensor([[1.0, float("nan"), 0.0, 2.0]]), 1)
    nanmedian(values=tensor([1.]), indices=tensor([0]))
    """
    return _lower_median(_nanmedian_op, x, dim, keepdim, "nanmedian", nanmedian_result)


def _lower_median(op, x, dim, keepdim, name, result):
    if dim is None:
        x = _as_tensor(x)
        _check_ordered(x, name)
        if x.numel() == 0:
            raise RuntimeError(f"dualad.{name}: {name}() of an empty tensor is undefined")
        flat = reshape(x, (x.numel(),))
        return apply1(op, flat, {"dim": 0, "keepdim": False})[0]
    x, dim, scalar = _prepared(x, dim, name)
    if x.shape[dim] == 0:
        raise IndexError(f"dualad.{name}: dimension {dim} of shape {tuple(x.shape)} is empty")
    keepdim = bool(keepdim) and not scalar
    return result(*apply1(op, x, {"dim": dim, "keepdim": keepdim}))
