"""NumPy's counting functions: ``bincount``, ``histogram``, ``histogram_bin_edges``,
``histogramdd``, ``histogram2d``.

Counts are integers and carry no derivative. Two results do depend differentiably on the data,
and keep their derivative here: ``bincount``'s weighted sums (linear in ``weights``: made of
``index_add``), and the bin edges that ``histogram`` draws from the data's range (``bins`` an
int and no ``range``: the edges run from ``a.min()`` to ``a.max()``, so they move with them).
Estimated edges (``bins="auto"`` and the other strings) are given only for untracked data:
their derivative is not implemented, and a silent zero would be wrong. ``histogram``'s
``weights`` give the sums of the weights per bin, differentiable in them (``index_add``).

>>> import dualad, dualad.numpy as dnp
>>> dnp.bincount(dualad.tensor([0, 2, 2]))
tensor([1, 0, 2])
>>> counts, edges = dnp.histogram(dualad.tensor([0.0, 1.0, 1.5, 4.0]), bins=2)
>>> counts, edges
(tensor([3, 1]), tensor([0., 2., 4.]))
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import ops
from .._backend import allocate_on
from .._creation import _is_tracked, arange, as_tensor, zeros
from .._dispatch import REGISTRY, apply
from .._tensor import Tensor
from ..ops.counting import bincount_op, histogram_op, histogramdd_op
from ._nondiff import arg, uses
from .searching import searchsorted

__all__ = ["bincount", "histogram", "histogram2d", "histogram_bin_edges", "histogramdd"]


def _tracked(a) -> bool:
    """Whether ``a`` carries a derivative or a batch (of eager autograd or of any level)."""
    return a.requires_grad or _is_tracked(a)


@uses(bincount_op, REGISTRY["index_add"])
def bincount(x, /, weights=None, minlength=0):
    """The number of occurrences of each value of the non-negative int 1-d ``x``; with
    ``weights``, the sum of the weights of each value (float64, differentiable in them).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.bincount(dualad.tensor([0, 1, 1, 3]))
    tensor([1, 2, 0, 1])
    """
    x = arg(x)
    minlength = operator.index(minlength)
    counts = apply(bincount_op, x, minlength=minlength)  # (NumPy's own checks of x too)
    if weights is None:
        return counts
    weights = arg(weights)
    if tuple(weights.shape) != tuple(x.shape):
        raise ValueError("dualad.numpy.bincount: The weights and list don't have the same length.")
    if weights.dtype.kind == "c":
        raise TypeError(
            "dualad.numpy.bincount: Cannot cast array data from dtype('complex128') to "
            "dtype('float64') according to the rule 'safe' (complex weights)"
        )
    total = zeros(counts.shape[-1], dtype="float64", device=x.device)
    return ops.index_add(total, 0, x, weights.astype("float64"))


def _edges_from_range(a, n: int, dtype):
    """NumPy's equal-width edges over ``a``'s range (``histogram``'s ``_get_outer_edges`` and
    ``linspace``, step by step so the values are NumPy's), in dualad ops: differentiable in
    ``a.min()`` and ``a.max()``, and batched under vmap."""
    flat = ops.reshape(a, (-1,))
    lo = ops.amin(flat).astype(dtype)
    hi = ops.amax(flat).astype(dtype)
    same = ops.eq(lo, hi)  # an empty range widens to one around the value, as NumPy's
    lo, hi = ops.where(same, lo - 0.5, lo), ops.where(same, hi + 0.5, hi)
    step = (hi - lo) / n
    inner = arange(n, dtype=dtype, device=a.device) * step + lo
    return ops.cat([inner, ops.reshape(hi, (1,))])


def _counts_and_edges(a, bins, range, weights, name):
    a = arg(a)
    if weights is not None:
        if isinstance(bins, str):
            raise TypeError(
                f"dualad.numpy.{name}: Automated estimation of the number of bins is not "
                "supported for weighted data"
            )
        weights = arg(weights)
        if tuple(weights.shape) != tuple(a.shape):
            raise ValueError(f"dualad.numpy.{name}: weights should have the same shape as a.")
    if range is not None:
        lo, hi = range
        range = (float(lo), float(hi))
    if isinstance(bins, str):
        if _tracked(a):
            raise TypeError(
                f"dualad.numpy.{name}: bins={bins!r} estimates the edges from data that is "
                "tracked (requires grad, dual, batched or inside func.grad), and their "
                "derivative is not implemented; pass bins as an int or as the edges"
            )
        return apply(histogram_op, a, bins=bins, range=range)
    if isinstance(bins, (Tensor, list, tuple)) or getattr(bins, "ndim", 0):  # the edges
        edges = arg(bins)
        if edges.ndim != 1:
            raise ValueError(f"dualad.numpy.{name}: `bins` must be 1d, when an array")
        counts, _ = apply(histogram_op, a, edges, bins=None, range=range)
        if weights is not None:
            counts = _weighted_counts(a, edges, weights)
        return counts, edges  # the given edges themselves, with whatever they carry
    n = operator.index(bins)
    if n < 1:
        raise ValueError(f"dualad.numpy.{name}: `bins` must be positive, when an integer")
    counts, edges = apply(histogram_op, a, bins=n, range=range)
    if range is None and a.numel() > 0 and _tracked(a):
        edges = _edges_from_range(a, n, edges.dtype)
    if weights is not None:
        counts = _weighted_counts(a, edges, weights)
    return counts, edges


def _weighted_counts(a, edges, weights):
    """The sum of the weights of the values in each bin (``edges[k] <= a < edges[k + 1]``, the
    last bin closed; values outside dropped): NumPy's assignment, as a sum that is
    differentiable in the weights (``index_add``). Accumulated in float64 (complex128) and
    cast to the weights' dtype, as NumPy's ``bincount`` does."""
    n = edges.shape[0] - 1
    flat = ops.reshape(a, (-1,))
    index = searchsorted(edges, flat, side="right") - 1
    index = ops.where(ops.eq(flat, edges[-1]), n - 1, index)
    inside = ops.logical_and(ops.ge(index, 0), ops.lt(index, n))
    index = ops.where(inside, index, n)  # the values outside go to a slot dropped below
    wide = "complex128" if weights.dtype.kind == "c" else "float64"
    values = ops.reshape(weights, (-1,)).astype(wide)
    total = ops.index_add(zeros(n + 1, dtype=wide, device=a.device), 0, index, values)
    return total[:n].astype(weights.dtype)


# the edges drawn from the data's range, and the weighted counts, are made of these ops
_EDGE_OPS = tuple(
    REGISTRY[name]
    for name in ("amin", "amax", "where", "sub", "div", "mul", "add", "cat", "index_add")
)


@uses(histogram_op, *_EDGE_OPS)
def histogram(a, bins=10, range=None, density=None, weights=None):
    """The counts of ``a``'s values in ``bins`` (an int: equal widths over ``range``, by
    default ``a``'s; a 1-d array: the edges) and the edges, as NumPy's ``histogram``; with
    ``density=True`` the counts divided by their total and the bin widths (float64).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.histogram(dualad.tensor([0.5, 1.5, 1.7, 2.9]), bins=3, range=(0.0, 3.0))
    (tensor([1, 2, 1]), tensor([0., 1., 2., 3.]))
    """
    counts, edges = _counts_and_edges(a, bins, range, weights, "histogram")
    if density:
        widths = (edges[1:] - edges[:-1]).astype("float64")
        return counts / widths / counts.sum(), edges
    return counts, edges


@uses(histogram_op, *_EDGE_OPS)
def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges ``histogram`` would use for ``a``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.histogram_bin_edges(dualad.tensor([0.0, 1.0, 4.0]), bins=4)
    tensor([0., 1., 2., 3., 4.])
    """
    return _counts_and_edges(a, bins, range, weights, "histogram_bin_edges")[1]


def _ndim(value) -> int:
    """The rank of ``bins``: a tensor's own (no conversion), else NumPy's."""
    return value.ndim if isinstance(value, Tensor) else np.ndim(value)


def _outer_edges(column, bins, bounds, i):
    """The edges of one dimension of ``histogramdd`` (NumPy's rules and errors), and whether
    they are drawn from the data's range."""
    if _ndim(bins) != 0:
        edges = arg(bins)
        if edges.ndim != 1:
            raise ValueError(f"dualad.numpy.histogramdd: `bins[{i}]` must be a scalar or 1d array")
        if not isinstance(bins, Tensor):  # edges given as host data: on the sample's device
            edges = edges.to(column.device)
        return edges, False
    if bins < 1:
        raise ValueError(f"dualad.numpy.histogramdd: `bins[{i}]` must be positive, when an integer")
    n = operator.index(bins)
    dtype = column.dtype if column.dtype.kind in "fc" else np.dtype("float64")
    if bounds is None and column.numel() > 0:
        return _edges_from_range(column, n, dtype), True  # (the op checks they are finite)
    lo, hi = (0.0, 1.0) if bounds is None else (float(bounds[0]), float(bounds[1]))
    if lo > hi:
        raise ValueError("max must be larger than min in range parameter.")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"supplied range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    # (made on the sample's device: no host array copied over)
    return as_tensor(allocate_on(column.device, lambda xp: xp.linspace(lo, hi, n + 1))), False


@uses(histogramdd_op, *_EDGE_OPS)
def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """The counts (float64) of the ``(N, D)`` ``sample`` (or a sequence of ``D`` 1-d arrays) in
    the bins of each dimension, and the edges (a list), as NumPy's ``histogramdd``; ``bins`` and
    ``range`` per dimension or one for all. Edges drawn from the data's range are
    differentiable, as ``histogram``'s.

    >>> import dualad, dualad.numpy as dnp
    >>> points = dualad.tensor([[0.1, 0.2], [0.9, 0.4]])
    >>> dnp.histogramdd(points, bins=2, range=[[0, 1], [0, 1]])
    (tensor([[1., 0.],
            [1., 0.]]), [tensor([0. , 0.5, 1. ]), tensor([0. , 0.5, 1. ])])
    """
    if weights is not None:
        raise TypeError(
            "dualad.numpy.histogramdd: weights= is not supported (weighted counts are "
            "differentiable in the weights, and dualad.numpy does not give that yet)"
        )
    if isinstance(sample, (list, tuple)):
        sample = ops.stack([ops.reshape(arg(s), (-1,)) for s in sample], -1)
    sample = arg(sample)
    if sample.ndim < 2:
        sample = ops.reshape(sample, (-1, 1))
    dims = sample.shape[-1]
    per_dim = isinstance(bins, (list, tuple)) or getattr(bins, "ndim", 0) > 0
    if per_dim and len(bins) != dims:
        raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    if range is not None and len(range) != dims:
        raise ValueError("range argument must have one entry per dimension")
    columns = [sample[:, i] for i in builtins.range(dims)]
    edges, drawn = zip(
        *(
            _outer_edges(c, bins[i] if per_dim else bins, None if range is None else range[i], i)
            for i, c in enumerate(columns)
        )
    )
    counts = apply(histogramdd_op, sample, *edges, drawn=drawn)
    if density:
        total = counts.sum()
        for i, e in enumerate(edges):
            shape = [1] * dims
            shape[i] = e.shape[0] - 1
            counts = counts / ops.reshape(e[1:] - e[:-1], tuple(shape))
        counts = counts / total
    return counts, list(edges)


@uses(histogramdd_op, *_EDGE_OPS)
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """``histogramdd`` of the points ``(x, y)``: ``(counts, x_edges, y_edges)``.

    >>> import dualad, dualad.numpy as dnp
    >>> x, y = dualad.tensor([0.1, 0.9]), dualad.tensor([0.2, 0.4])
    >>> dnp.histogram2d(x, y, bins=2, range=[[0, 1], [0, 1]])
    (tensor([[1., 0.],
            [1., 0.]]), tensor([0. , 0.5, 1. ]), tensor([0. , 0.5, 1. ]))
    """
    per_axis = isinstance(bins, (list, tuple)) and len(bins) in (1, 2)
    if not per_axis and _ndim(bins) == 1:
        bins = [bins, bins]  # one array of edges for both
    counts, edges = histogramdd([x, y], bins, range, density, weights)
    return counts, edges[0], edges[1]
