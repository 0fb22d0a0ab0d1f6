"""Splitting into views (unbind, split, chunk, tensor_split) and joining (stack, cat and the
``*stack`` family, atleast_nd).
"""

from __future__ import annotations

import itertools

from .._creation import zeros_like
from .._dispatch import OpDef, apply, as_arg, dispatch, register
from .._opdef import GATHER
from .._tensor import Tensor
from ._batching import batched_front
from ._dims import normalize_dim, pick_dim
from ._exports import Exports
from .base import move_bdim_to_front, reshape
from .slicing import _slice_key, getitem

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# splitting into views (multi-output view ops) and joining


def _multi_output_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    outs = apply(op, x, **dict(params, dim=params["dim"] + 1))
    return outs, (0,) * len(outs)


def _pieces_op(name, impl, vjp, jvp, node_name=None):
    """Register an op whose outputs are views of the pieces of ``x`` along ``params["dim"]``
    (unbind, split): any number of them, batched by moving the batch dim in front."""
    views = {
        "save_args": False,
        "view": True,
        "nout": -1,
        "node_name": node_name,
        "sparsity": GATHER,
    }
    return register(OpDef(name, impl, vjp=vjp, jvp=jvp, batch=_multi_output_batch, **views))


def _unbind_impl(xp, x, *, dim):
    # the trailing Ellipsis keeps 0-d results views (x[i] of a 1-d array is a NumPy scalar copy)
    return tuple(x[(slice(None),) * dim + (i, Ellipsis)] for i in range(x.shape[dim]))


# unbind and split are declared alike (impl, VJP, the op from ``_pieces_op``) as every op is: an
# op's definitions side by side, each in a few lines; the shared part is ``_pieces_op``
def _unbind_vjp(cts, outs, args, params, needs):
    return (stack(list(cts), params["dim"]),)


_unbind_op = _pieces_op(
    "unbind",
    _unbind_impl,
    _unbind_vjp,
    lambda tangents, outs, args, params: unbind(tangents[0], params["dim"]),
)


@public.method
def unbind(x, dim: int = 0):
    """The slices of ``x`` along ``dim`` as a tuple of views.

    >>> import dualad
    >>> [t.tolist() for t in dualad.tensor([[1, 2], [3, 4]]).unbind(1)]
    [[1, 3], [2, 4]]
    """
    if x.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = normalize_dim(dim, x.ndim, op="unbind")
    if x.shape[dim] == 0:
        return ()
    return dispatch(_unbind_op, (x,), {"dim": dim})


def _split_impl(xp, x, *, sizes, dim):
    lead = (slice(None),) * dim
    out = []
    start = 0
    for size in sizes:
        out.append(x[(*lead, slice(start, start + size))])
        start += size
    return tuple(out)


def _split_vjp(cts, outs, args, params, needs):
    return (cat(list(cts), params["dim"]),)


_split_op = _pieces_op(
    "split",
    _split_impl,
    _split_vjp,
    lambda tangents, outs, args, params: _split_sizes(tangents[0], **params),
    node_name="SplitWithSizesBackward0",
)


def _split_sizes(x, *, sizes, dim):
    if not sizes:
        return ()
    return dispatch(_split_op, (x,), {"sizes": tuple(sizes), "dim": dim})


@public.method
def split(x, split_size_or_sections, dim: int = 0):
    """Split ``x`` along ``dim`` into views: chunks of ``split_size`` (the last one may be
    smaller) when it is an int, or chunks of the given sizes when it is a list.

    >>> import dualad
    >>> [t.tolist() for t in dualad.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    >>> [t.tolist() for t in dualad.arange(5).split([1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, x.ndim, op="split")
    length = x.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(int(s) for s in split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != length:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {length} (input "
                f"tensor's size at dimension {dim}), but got split_sizes={list(sizes)}"
            )
    else:
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and length != 0):
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of "
                f"{length}"
                if size == 0
                else f"split expects split_size be non-negative, but got split_size={size}"
            )
        if length == 0:
            sizes = (0,)
        else:
            sizes = (size,) * (length // size) + ((length % size,) if length % size else ())
    return _split_sizes(x, sizes=sizes, dim=dim)


@public.method
def chunk(x, chunks: int, dim: int = 0):
    """Split ``x`` into ``chunks`` views of (almost) equal size along ``dim`` (torch.chunk: each
    has ``ceil(size / chunks)`` elements, so fewer chunks may come back).

    >>> import dualad
    >>> [t.tolist() for t in dualad.arange(5).chunk(3)]
    [[0, 1], [2, 3], [4]]
    """
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, x.ndim, op="chunk")
    length = x.shape[dim]
    if length == 0:
        return _split_sizes(x, sizes=(0,) * chunks, dim=dim)
    return split(x, -(-length // chunks), dim)


@public.method
def tensor_split(x, indices_or_sections, dim: int = 0):
    """NumPy's ``array_split``: ``sections`` nearly equal parts (the first ``size % sections``
    one larger), or the pieces between the given indices. Each piece is a view.

    >>> import dualad
    >>> [t.tolist() for t in dualad.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    >>> [t.tolist() for t in dualad.arange(5).tensor_split([1, 3])]
    [[0], [1, 2], [3, 4]]
    """
    if x.ndim == 0:
        raise RuntimeError("tensor_split expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, x.ndim, op="tensor_split")
    length = x.shape[dim]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0, *(int(i) for i in indices_or_sections), length]
        pieces = []
        for start, stop in itertools.pairwise(bounds):
            start = min(max(start + length if start < 0 else start, 0), length)
            stop = min(max(stop + length if stop < 0 else stop, 0), length)
            pieces.append(getitem(x, _slice_key(dim, slice(start, max(start, stop)))))
        return tuple(pieces)
    sections = int(indices_or_sections)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    small, extra = divmod(length, sections)
    sizes = (small + 1,) * extra + (small,) * (sections - extra)
    return _split_sizes(x, sizes=sizes, dim=dim)


def _stack_impl(xp, *arrays, dim):
    return xp.stack(arrays, axis=dim)


def _stack_vjp(cts, outs, args, params, needs):
    parts = unbind(cts[0], params["dim"])
    return tuple(p if need else None for p, need in zip(parts, needs))


def _fill_tangents(tangents, args):
    return [zeros_like(a) if t is None else t for a, t in zip(args, tangents)]


def _stack_jvp(tangents, outs, args, params):
    return stack(_fill_tangents(tangents, args), params["dim"])


def _join_batch(op, args, bdims, params):
    return apply(op, *batched_front(args, bdims), dim=params["dim"] + 1), 0


_stack_op = register(
    OpDef(
        "stack",
        _stack_impl,
        vjp=_stack_vjp,
        jvp=_stack_jvp,
        batch=_join_batch,
        save_args=False,
        sparsity=GATHER,
    )
)


def _as_tensors(tensors, op: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"dualad.{op}: expected a sequence of tensors, got a single Tensor")
    tensors = [as_arg(t) for t in tensors]
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


@public.function
def stack(tensors, dim: int = 0, *, axis=None):
    """Join tensors of one shape along a new dimension ``dim``.

    >>> import dualad
    >>> dualad.stack([dualad.tensor([1, 2]), dualad.tensor([3, 4])], dim=1)
    tensor([[1, 3],
            [2, 4]])
    """
    tensors = _as_tensors(tensors, "stack")
    dim = dim if axis is None else axis
    first = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    dim = normalize_dim(dim, len(first) + 1, op="stack")
    return dispatch(_stack_op, tuple(tensors), {"dim": dim})


def _cat_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    dim = params["dim"]
    grads = []
    start = 0
    for a, need in zip(args, needs):
        stop = start + a.shape[dim]
        grads.append(getitem(ct, _slice_key(dim, slice(start, stop))) if need else None)
        start = stop
    return tuple(grads)


def _cat_jvp(tangents, outs, args, params):
    return cat(_fill_tangents(tangents, args), params["dim"])


_cat_op = register(
    OpDef(
        "cat",
        lambda xp, *arrays, dim: xp.concatenate(arrays, axis=dim),
        vjp=_cat_vjp,
        jvp=_cat_jvp,
        batch=_join_batch,
        save_args=False,
        sparsity=GATHER,
    )
)


@public.function
def cat(tensors, dim: int | None = None, *, axis=None):
    """Join tensors along an existing dimension ``dim`` (their other sizes must match).

    ``concatenate``/``concat`` are the same op; dtypes promote as in NumPy.

    >>> import dualad
    >>> dualad.cat([dualad.zeros(1, 2), dualad.ones(2, 2)]).shape
    (3, 2)
    """
    tensors = _as_tensors(tensors, "cat")
    dim = pick_dim(dim, axis, default=0)
    # torch's legacy rule: 1-d empty tensors are skipped next to tensors of other ranks
    if any(t.ndim != 1 or t.shape[0] != 0 for t in tensors):
        kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
        if kept and any(t.ndim != 1 for t in kept):
            tensors = kept
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if t.ndim != first.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.ndim} and {t.ndim}"
            )
    dim = normalize_dim(dim, first.ndim, op="cat")
    for i, t in enumerate(tensors):
        for d in range(first.ndim):
            if d != dim and t.shape[d] != first.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{first.shape[d]} but got size {t.shape[d]} for tensor number {i} in the "
                    "list."
                )
    return dispatch(_cat_op, tuple(tensors), {"dim": dim})


concatenate = public.function(cat, "concatenate")
concat = public.function(cat, "concat")


@public.function
def atleast_1d(*tensors):
    """``x`` with at least one dimension (a view); several tensors give a tuple.

    >>> import dualad
    >>> dualad.atleast_1d(dualad.tensor(1.0))
    tensor([1.])
    >>> dualad.atleast_1d(dualad.tensor(1.0), dualad.tensor([2.0, 3.0]))
    (tensor([1.]), tensor([2., 3.]))
    """
    out = tuple(reshape(t, (1,)) if t.ndim == 0 else t for t in _unpack_varargs(tensors))
    return out[0] if len(out) == 1 else out


@public.function
def atleast_2d(*tensors):
    """``x`` with at least two dimensions: ``(n,)`` becomes ``(1, n)`` (a view).

    >>> import dualad
    >>> dualad.atleast_2d(dualad.tensor([1.0, 2.0]))
    tensor([[1., 2.]])
    """
    out = tuple(
        reshape(t, (1,) * (2 - t.ndim) + tuple(t.shape)) if t.ndim < 2 else t
        for t in _unpack_varargs(tensors)
    )
    return out[0] if len(out) == 1 else out


@public.function
def atleast_3d(*tensors):
    """``x`` with at least three dims: ``(n,)`` -> ``(1, n, 1)``, ``(m, n)`` -> ``(m, n, 1)``.

    >>> import dualad
    >>> dualad.atleast_3d(dualad.tensor([1.0, 2.0])).shape
    (1, 2, 1)
    >>> dualad.atleast_3d(dualad.zeros(2, 3)).shape
    (2, 3, 1)
    """
    shapes = {0: lambda s: (1, 1, 1), 1: lambda s: (1, s[0], 1), 2: lambda s: (*s, 1)}
    out = tuple(
        reshape(t, shapes[t.ndim](tuple(t.shape))) if t.ndim < 3 else t
        for t in _unpack_varargs(tensors)
    )
    return out[0] if len(out) == 1 else out


def _unpack_varargs(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return tuple(as_arg(t) for t in tensors)


@public.function
def hstack(tensors):
    """Concatenate column-wise: along dim 1, or dim 0 for 1-d tensors.

    >>> import dualad
    >>> dualad.hstack([dualad.tensor([1, 2]), dualad.tensor([3])])
    tensor([1, 2, 3])
    """
    tensors = [atleast_1d(t) for t in _as_tensors(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@public.function
def vstack(tensors):
    """Concatenate row-wise after making each tensor at least 2-d.

    >>> import dualad
    >>> dualad.vstack([dualad.tensor([1, 2]), dualad.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return cat([atleast_2d(t) for t in _as_tensors(tensors, "vstack")], 0)


row_stack = public.function(vstack, "row_stack")


@public.function
def dstack(tensors):
    """Concatenate depth-wise (dim 2) after making each tensor at least 3-d.

    >>> import dualad
    >>> dualad.dstack([dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, 4.0])]).shape
    (1, 2, 2)
    """
    return cat([atleast_3d(t) for t in _as_tensors(tensors, "dstack")], 2)


@public.function
def column_stack(tensors):
    """Stack 1-d tensors as columns (``(n,)`` -> ``(n, 1)``), then concatenate along dim 1.

    >>> import dualad
    >>> dualad.column_stack([dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, 4.0])])
    tensor([[1., 3.],
            [2., 4.]])
    """
    tensors = _as_tensors(tensors, "column_stack")
    return hstack([reshape(t, (-1, 1)) if t.ndim <= 1 else t for t in tensors])
