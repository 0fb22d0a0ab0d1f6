"""Op database entries for shape ops: reshaping, views, joining/splitting, flips, diagonals.

Shape ops are linear, so every entry claims float and complex dtypes; grad-of-grad is exact
(the second derivative is zero) and still exercises the transposes of the transposes.
"""

from __future__ import annotations

import numpy as np

import dualad

from . import ALL_DIFF, OpInfo, SampleInput, uniform


def _one(*calls):
    """Samples from ``(shape, args_after_x, kwargs)`` triples: x random, the rest static."""

    def samples(rng, dtype):
        return [
            SampleInput((uniform(rng, shape, dtype), *rest), dict(kwargs), note=note)
            for shape, rest, kwargs, note in calls
        ]

    return samples


def _c(shape, *rest, note="", **kwargs):
    return (shape, rest, kwargs, note)


def _many(*calls):
    """Samples for list-taking ops: ``(shapes, kwargs)`` -> one list argument."""

    def samples(rng, dtype):
        return [
            SampleInput(([uniform(rng, s, dtype) for s in shapes],), dict(kwargs), note=note)
            for shapes, kwargs, note in calls
        ]

    return samples


def _m(shapes, note="", **kwargs):
    return (shapes, kwargs, note)


def _diagonal_ref(x, offset=0, dim1=0, dim2=1):
    return np.diagonal(x, offset, dim1, dim2)


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.ndim + 1
    dim1, dim2 = dim1 % n, dim2 % n
    size = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])
    low, high = sorted((dim1, dim2))
    shape.insert(low, size)
    shape.insert(high, size)
    out = np.zeros(shape, x.dtype)
    view = np.diagonal(out, offset, dim1, dim2)
    view.flags.writeable = True
    view[...] = x
    return out


def _split_ref(x, split, dim=0):
    length = x.shape[dim]
    if isinstance(split, int):
        bounds = list(range(split, length, split))
    else:
        bounds = list(np.cumsum(split)[:-1])
    return tuple(np.split(x, bounds, axis=dim))


def _chunk_ref(x, chunks, dim=0):
    return _split_ref(x, -(-x.shape[dim] // chunks), dim)


def _roll_ref(x, shifts, dims=None):
    return np.roll(x, shifts, axis=dims)


def _hstack_ref(arrays):
    return np.hstack(arrays)


# advanced keys hold lists so that they stay static (not converted to tensors)
GETITEM_KEYS = [
    ((2, 3, 4), (1,), "int"),
    ((2, 3, 4), (slice(None), slice(1, None, 2)), "slices"),
    ((2, 3, 4), (Ellipsis, None, -1), "ellipsis-none-negative"),
    ((2, 3, 4), ([1, 0, 1],), "int-list"),
    ((4, 3), ([1, 1, 3, 2, 1, 2],), "duplicates"),
    ((2, 3, 4), (slice(None), [2, -1], [0, 3]), "adjacent-advanced"),
    ((2, 3, 4), ([0, 1], slice(None), [1, 2]), "separated-advanced"),
    ((2, 3, 4), (1, slice(None), [1, 2, 2]), "int-and-array"),
    ((2, 3), ([[True, False, True], [False, True, True]],), "bool-mask"),
    ((2, 3, 4), (slice(None), [True, False, True]), "bool-mask-dim1"),
    ((3, 4), ([[0], [2]], [[1, 3]]), "broadcast-index"),
]


def _getitem_samples(rng, dtype):
    out = []
    for shape, key, note in GETITEM_KEYS:
        numpy_key = tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
        out.append(SampleInput((uniform(rng, shape, dtype), numpy_key), note=note))
    # an index tensor argument (a constant integer tensor) and a 0-d one
    out.append(SampleInput((uniform(rng, (4, 3), dtype), np.array([3, 0, 3])), note="index-tensor"))
    out.append(SampleInput((uniform(rng, (4, 3), dtype), np.array(2)), note="0d-index-tensor"))
    return out


def _getitem(x, key):
    return x[key]


def _getitem_ref(x, key):
    return np.asarray(x)[key]


def _stack_samples(rng, dtype):
    return [
        SampleInput(([uniform(rng, (2, 3), dtype) for _ in range(3)],), {"dim": d}, note=f"d{d}")
        for d in (0, 2, -1)
    ]


OPS = [
    OpInfo(
        "reshape",
        lambda x, shape: dualad.reshape(x, shape),
        _one(_c((2, 3), (3, 2)), _c((2, 3), (-1,)), _c((), (1, 1)), _c((2, 3, 1), (6,))),
        ops=("reshape", "view"),
        dtypes=ALL_DIFF,
        ref=lambda x, shape: np.reshape(x, shape),
    ),
    OpInfo(
        "reshape_noncontiguous",
        lambda x: dualad.reshape(dualad.transpose(x, 0, 1), (-1,)),
        _one(_c((2, 3))),
        ops=("reshape", "permute"),
        dtypes=ALL_DIFF,
        ref=lambda x: np.reshape(x.T, (-1,)),
    ),
    OpInfo(
        "view",
        lambda x, *shape: x.view(*shape),
        _one(_c((2, 3), 3, 2), _c((4,), 2, -1), _c((2, 3), 6)),
        dtypes=ALL_DIFF,
        ref=lambda x, *shape: np.reshape(x, shape),
    ),
    OpInfo(
        "flatten",
        dualad.flatten,
        _one(_c((2, 3, 4)), _c((2, 3, 4), 1), _c((2, 3, 4), 0, 1), _c(())),
        ops=("reshape",),
        dtypes=ALL_DIFF,
    ),
    OpInfo(
        "unflatten",
        dualad.unflatten,
        _one(_c((2, 6), 1, (3, 2)), _c((6,), 0, (-1, 3))),
        ops=("reshape",),
        dtypes=ALL_DIFF,
    ),
    OpInfo(
        "unsqueeze",
        dualad.unsqueeze,
        _one(_c((2, 3), 0), _c((2, 3), -1), _c((), 0)),
        ops=("view",),
        dtypes=ALL_DIFF,
        ref=lambda x, dim: np.expand_dims(x, dim),
    ),
    OpInfo(
        "squeeze",
        dualad.squeeze,
        _one(_c((1, 3, 1)), _c((1, 3, 1), 0), _c((1, 3, 1), (0, 2)), _c((2, 3), 1)),
        ops=("view",),
        dtypes=ALL_DIFF,
    ),
    OpInfo(
        "broadcast_to",
        dualad.broadcast_to,
        _one(_c((3,), (2, 3)), _c((2, 1), (2, 4)), _c((), (2, 2)), _c((1, 3), (2, 2, 3))),
        dtypes=ALL_DIFF,
        ref=np.broadcast_to,
    ),
    OpInfo(
        "expand",
        lambda x, *sizes: x.expand(*sizes),
        _one(_c((3, 1), 2, 3, 4), _c((3, 1), -1, 2), _c((2,), 2)),
        ops=("broadcast_to",),
        dtypes=ALL_DIFF,
    ),
    OpInfo(
        "permute",
        dualad.permute,
        _one(_c((2, 3, 4), (2, 0, 1)), _c((2, 3, 4), (-1, 1, 0)), _c((2, 3), (0, 1))),
        ops=("permute", "view"),
        dtypes=ALL_DIFF,
        ref=lambda x, dims: np.transpose(x, dims),
    ),
    OpInfo(
        "transpose",
        dualad.transpose,
        _one(_c((2, 3), 0, 1), _c((2, 3, 4), -1, 0), _c((3,), 0, 0)),
        ops=("permute", "view"),
        dtypes=ALL_DIFF,
        ref=lambda x, a, b: np.swapaxes(x, a, b),
    ),
    OpInfo(
        "movedim",
        dualad.movedim,
        _one(_c((2, 3, 4), 0, -1), _c((2, 3, 4), (0, 1), (2, 0))),
        ops=("permute",),
        dtypes=ALL_DIFF,
        ref=np.moveaxis,
    ),
    OpInfo(
        "t",
        dualad.t,
        _one(_c((2, 3)), _c((3,))),
        ops=("permute", "view"),
        dtypes=ALL_DIFF,
        ref=lambda x: x.T,
    ),
    OpInfo(
        "matrix_transpose",
        dualad.matrix_transpose,
        _one(_c((2, 3)), _c((4, 2, 3))),
        ops=("permute",),
        dtypes=ALL_DIFF,
        ref=lambda x: np.swapaxes(x, -1, -2),
    ),
    OpInfo(
        "getitem",
        _getitem,
        _getitem_samples,
        ops=("getitem", "index", "index_put_zeros"),
        dtypes=ALL_DIFF,
        ref=_getitem_ref,
    ),
    OpInfo(
        "select",
        dualad.select,
        _one(_c((2, 3), 0, 1), _c((2, 3, 4), -1, -2)),
        ops=("getitem",),
        dtypes=ALL_DIFF,
        ref=lambda x, dim, i: np.take(x, i, axis=dim),
    ),
    OpInfo(
        "narrow",
        dualad.narrow,
        _one(_c((4, 3), 0, 1, 2), _c((2, 5), -1, -3, 3)),
        ops=("getitem",),
        dtypes=ALL_DIFF,
    ),
    OpInfo(
        "unbind",
        dualad.unbind,
        _one(_c((3, 2)), _c((2, 3, 2), 1), _c((2, 3), -1)),
        dtypes=ALL_DIFF,
        ref=lambda x, dim=0: tuple(np.moveaxis(x, dim, 0)),
    ),
    OpInfo(
        "stack",
        dualad.stack,
        _stack_samples,
        dtypes=ALL_DIFF,
        ref=lambda arrays, dim: np.stack(arrays, dim),
    ),
    OpInfo(
        "cat",
        dualad.cat,
        _many(
            _m([(2, 3), (1, 3), (3, 3)], note="dim0"),
            _m([(2, 1), (2, 3)], dim=1, note="dim1"),
            _m([(2, 1, 2), (2, 3, 2)], dim=-2, note="neg"),
            _m([(3,)], note="single"),
        ),
        dtypes=ALL_DIFF,
        ref=lambda arrays, dim=0: np.concatenate(arrays, dim),
    ),
    *(
        OpInfo(
            name,
            getattr(dualad, name),
            _many(*samples),
            ops=("cat", "reshape"),
            dtypes=ALL_DIFF,
            ref=ref,
        )
        for name, samples, ref in (
            (
                "hstack",
                (_m([(2,), (3,)], note="1d"), _m([(2, 1), (2, 2)], note="2d"), _m([(), (2,)])),
                _hstack_ref,
            ),
            ("vstack", (_m([(3,), (3,)], note="1d"), _m([(1, 2), (2, 2)], note="2d")), np.vstack),
            (
                "dstack",
                (_m([(3,), (3,)], note="1d"), _m([(2, 2), (2, 2, 2)], note="2d-3d")),
                np.dstack,
            ),
            ("column_stack", (_m([(3,), (3, 2)]),), np.column_stack),
        )
    ),
    OpInfo(
        "split",
        dualad.split,
        _one(
            _c((5, 2), 2, note="int"),
            _c((2, 5), [1, 0, 4], 1, note="sizes"),
            _c((4, 3), 4, note="one-piece"),
            _c((2, 6), 3, -1, note="neg-dim"),
        ),
        dtypes=ALL_DIFF,
        ref=_split_ref,
    ),
    OpInfo(
        "chunk",
        dualad.chunk,
        _one(_c((5, 2), 3), _c((2, 6), 4, 1), _c((3,), 5)),
        ops=("split",),
        dtypes=ALL_DIFF,
        ref=_chunk_ref,
    ),
    OpInfo(
        "tensor_split",
        dualad.tensor_split,
        _one(_c((5, 2), 2), _c((5, 2), [1, 4]), _c((2, 5), [-2, 1], 1)),
        ops=("split", "getitem"),
        dtypes=ALL_DIFF,
        ref=lambda x, sections, dim=0: tuple(np.array_split(x, sections, axis=dim)),
    ),
    OpInfo(
        "flip",
        lambda x, *dims: x.flip(*dims),
        _one(_c((2, 3), 0), _c((2, 3, 2), 0, 2), _c((2, 3), (-1,)), _c((3,), ())),
        dtypes=ALL_DIFF,
        ref=lambda x, *dims: np.flip(x, dims[0] if len(dims) == 1 else dims),
    ),
    OpInfo(
        "roll",
        dualad.roll,
        _one(_c((5,), 2), _c((2, 3), -1), _c((2, 3), (1, 2), (0, 1)), _c((3, 4), 5, 1)),
        dtypes=ALL_DIFF,
        ref=_roll_ref,
    ),
    OpInfo(
        "tile",
        lambda x, reps: dualad.tile(x, reps),
        _one(_c((2, 3), (2, 1)), _c((3,), (2, 2)), _c((2, 2), (3,)), _c((), (2,))),
        ops=("tile", "reshape"),
        dtypes=ALL_DIFF,
        ref=np.tile,
    ),
    OpInfo(
        "repeat",
        lambda x, *sizes: x.repeat(*sizes),
        _one(_c((2, 3), 2, 1), _c((3,), 2, 2)),
        ops=("tile",),
        dtypes=ALL_DIFF,
    ),
    OpInfo(
        "repeat_interleave",
        dualad.repeat_interleave,
        _one(_c((2, 3), 2), _c((2, 3), 3, 1), _c((2, 3), 2, -2)),
        dtypes=ALL_DIFF,
        ref=lambda x, repeats, dim=None: np.repeat(x, repeats, axis=dim),
    ),
    OpInfo(
        "repeat_interleave_tensor",
        lambda x, repeats, dim: dualad.repeat_interleave(x, repeats, dim),
        lambda rng, dtype: [
            SampleInput((uniform(rng, (3, 2), dtype), np.array([2, 0, 1]), 0)),
            SampleInput((uniform(rng, (3, 2), dtype), np.array([1, 3]), -1)),
        ],
        ops=("repeat_interleave_index", "index_select"),
        dtypes=ALL_DIFF,
        ref=lambda x, repeats, dim: np.repeat(x, repeats, axis=dim),
    ),
    OpInfo(
        "repeat_interleave_index",
        lambda r: dualad.repeat_interleave(r),
        lambda rng, dtype: [SampleInput((np.array([2, 0, 3]),), diff=())],
        differentiable=False,
        ref=lambda r: np.repeat(np.arange(len(r)), r),
    ),
    OpInfo(
        "diagonal",
        dualad.diagonal,
        _one(_c((3, 3)), _c((3, 4), 1), _c((4, 3), -2), _c((2, 3, 4), 0, 2, 0), _c((3, 2), 5)),
        dtypes=ALL_DIFF,
        ref=_diagonal_ref,
    ),
    OpInfo(
        "diag_embed",
        dualad.diag_embed,
        _one(_c((3,)), _c((2, 3), 1), _c((2, 3), -1, 0, 2), _c((2, 2), 0, -1, -2)),
        dtypes=ALL_DIFF,
        ref=_diag_embed_ref,
    ),
    OpInfo(
        "diag",
        dualad.diag,
        _one(_c((3,)), _c((3,), -1), _c((3, 4)), _c((3, 4), 2)),
        ops=("diag_embed", "diagonal", "clone"),
        dtypes=ALL_DIFF,
        ref=np.diag,
    ),
    OpInfo(
        "tril",
        dualad.tril,
        _one(_c((3, 3)), _c((3, 4), 1), _c((2, 3, 3), -1)),
        dtypes=ALL_DIFF,
        ref=np.tril,
    ),
    OpInfo(
        "triu",
        dualad.triu,
        _one(_c((3, 3)), _c((4, 3), -1), _c((2, 3, 3), 1)),
        dtypes=ALL_DIFF,
        ref=np.triu,
    ),
    OpInfo(
        "atleast_2d",
        dualad.atleast_2d,
        _one(_c(()), _c((3,)), _c((2, 3))),
        ops=("reshape",),
        dtypes=ALL_DIFF,
        ref=np.atleast_2d,
    ),
]
