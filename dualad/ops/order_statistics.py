"""Sorting: ``sort`` gives the sorted values and the permutation that sorts; the values'
gradient goes back through the permutation (to the element each value came from), so
``dualad.numpy``'s ``sort``, ``median``, ``quantile`` and ``percentile`` differentiate.

Ties are sorted stably (in input order; in reverse input order with ``descending=True``), and
NaNs last (first with ``descending``), as NumPy sorts. The permutation is not differentiable.
"""

from __future__ import annotations

from typing import NamedTuple

from .._dispatch import OpDef, apply1, register
from .._opdef import SELECT
from .._tensor import Tensor
from ._dims import normalize_dim
from ._exports import Exports
from ._reducing import _as_tensor, _dim_batch
from .base import reshape
from .gather_scatter import take_along_dim

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

# NamedTuple's call form: fields typed Tensor for type checkers, the class keeps its name
sort_result = NamedTuple("sort", [("values", Tensor), ("indices", Tensor)])  # noqa: UP014


def _sort_impl(xp, x, *, dim, descending):
    index = xp.argsort(x, axis=dim, kind="stable")
    if descending:
        index = xp.flip(index, axis=dim)
    return xp.take_along_axis(x, index, axis=dim), index.astype(xp.int64, copy=False)


def _inverse(index, dim):
    """The inverse permutation of ``index`` along ``dim`` (itself sorted: its permutation)."""
    return apply1(_sort_op, index, {"dim": dim, "descending": False})[1]


def _sort_vjp(cts, outs, args, params, needs):
    return (take_along_dim(cts[0], _inverse(outs[1], params["dim"]), params["dim"]),)


def _sort_jvp(tangents, outs, args, params):
    # the permutation output is not differentiable: its tangent is None (a symbolic zero)
    return (take_along_dim(tangents[0], outs[1], params["dim"]), None)


# (the same OpDef shape as extrema's max/min along a dim, on purpose: the output saved for the
# rules, a second output of indices that is not differentiable)
_sort_op = register(
    OpDef(
        "sort",
        _sort_impl,
        vjp=_sort_vjp,
        jvp=_sort_jvp,
        batch=_dim_batch,
        save_args=False,
        save_out=True,
        nout=2,
        nondiff_outputs=(1,),
        node_name="SortBackward0",
        sparsity=SELECT,
    )
)


@public.method
def sort(x, dim: int = -1, descending: bool = False):
    """The values of ``x`` sorted along ``dim`` and the indices they came from, a named tuple
    ``(values, indices)``; ties keep their input order. The gradient of each sorted value goes
    to the element it came from; the indices are not differentiable.

    >>> import dualad
    >>> x = dualad.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> dualad.sort(x)
    sort(values=tensor([1., 2., 3.], grad_fn=<SortBackward0>), indices=tensor([1, 2, 0]))
    >>> (dualad.sort(x).values * dualad.tensor([1.0, 10.0, 100.0])).sum().backward()
    >>> x.grad
    tensor([100.,   1.,  10.])
    """
    x = _as_tensor(x)
    if x.ndim == 0:  # torch: dim 0 or -1 of a 0-d tensor sorts the element itself
        normalize_dim(dim, 0, op="sort")
        values, index = apply1(_sort_op, reshape(x, (1,)), {"dim": 0, "descending": False})
        return sort_result(reshape(values, ()), reshape(index, ()))
    dim = normalize_dim(int(dim), x.ndim, op="sort")
    return sort_result(*apply1(_sort_op, x, {"dim": dim, "descending": bool(descending)}))
