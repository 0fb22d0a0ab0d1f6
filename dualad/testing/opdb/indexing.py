"""Op database entries for gather/scatter-style indexing, masks and index assignment.

Index arrays are integer NumPy arrays in ``args`` (they become constant tensors). Samples for
ops that *write* (scatter, index_put) use distinct target positions: with repeated targets the
surviving write is unspecified and the gradient w.r.t. the written values is not a derivative.
"""

from __future__ import annotations

import numpy as np

import dualad
from dualad.ops.mutation import index_put

from . import ALL_DIFF, OpInfo, SampleInput, entry, uniform


def _along_key(index, dim):
    return tuple(
        index if d == dim else np.arange(n).reshape([n if k == d else 1 for k in range(index.ndim)])
        for d, n in enumerate(index.shape)
    )


def _gather_ref(x, dim, index):
    return x[_along_key(index, dim % x.ndim)]


def _block(src, shape):
    return src[tuple(slice(0, n) for n in shape)]


def _scatter_ref(x, dim, index, src):
    out = x.copy()
    src = src if np.isscalar(src) else _block(src, index.shape)
    out[_along_key(index, dim % x.ndim)] = src
    return out


def _scatter_add_ref(x, dim, index, src):
    out = x.copy()
    np.add.at(out, _along_key(index, dim % x.ndim), _block(src, index.shape))
    return out


def _index_add_ref(x, dim, index, source, alpha=1):
    out = x.copy()
    np.add.at(out, (slice(None),) * (dim % x.ndim) + (index,), alpha * source)
    return out


def _gather_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [
        SampleInput((x, 1, np.array([[0, 0, 3], [1, 2, 1], [3, 3, 3]])), note="dim1-dup"),
        SampleInput((x, 0, np.array([[2, 0, 1, 2], [0, 0, 0, 1]])), note="dim0"),
        SampleInput((x, -1, np.array([[1], [2]])), note="smaller-index"),
        SampleInput((uniform(rng, (2, 3, 2), dtype), 1, np.array([[[2, 0]], [[1, 1]]]))),
        SampleInput((uniform(rng, (4,), dtype), 0, np.array([3, -1, 0])), note="negative"),
    ]


def _scatter_samples(rng, dtype):
    return [
        SampleInput(
            (
                uniform(rng, (3, 4), dtype),
                1,
                np.array([[0, 3], [2, 1], [1, 0]]),
                uniform(rng, (3, 2), dtype),
            ),
            diff=(0, 3),
            note="src",
        ),
        SampleInput(
            (uniform(rng, (3, 4), dtype), 0, np.array([[2, 0, 1, 1]]), uniform(rng, (2, 5), dtype)),
            diff=(0, 3),
            note="larger-src",
        ),
        SampleInput(
            (uniform(rng, (3, 4), dtype), -1, np.array([[1], [3], [0]]), 2.5),
            note="scalar",
        ),
    ]


def _scatter_add_samples(rng, dtype):
    return [
        SampleInput(
            (
                uniform(rng, (3, 4), dtype),
                1,
                np.array([[0, 0, 3], [2, 1, 2], [1, 1, 1]]),
                uniform(rng, (3, 3), dtype),
            ),
            diff=(0, 3),
            note="duplicates",
        ),
        SampleInput(
            (uniform(rng, (4,), dtype), 0, np.array([1, 1]), uniform(rng, (3,), dtype)),
            diff=(0, 3),
            note="larger-src",
        ),
    ]


def _index_select_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [
        SampleInput((x, 0, np.array([2, 0, 2]))),
        SampleInput((x, -1, np.array([3, 1]))),
        SampleInput((x, 1, np.array(2)), note="0d-index"),
    ]


def _index_add_samples(rng, dtype):
    return [
        SampleInput(
            (uniform(rng, (3, 4), dtype), 0, np.array([2, 0, 2]), uniform(rng, (3, 4), dtype)),
            diff=(0, 3),
        ),
        SampleInput(
            (uniform(rng, (3, 4), dtype), 1, np.array([3, 3]), uniform(rng, (3, 2), dtype)),
            {"alpha": 2.0},
            diff=(0, 3),
            note="alpha",
        ),
    ]


def _masked_fill_samples(rng, dtype):
    mask = np.array([[True, False, True], [False, False, True]])
    return [
        SampleInput((uniform(rng, (2, 3), dtype), mask, 1.5), note="scalar"),
        SampleInput(
            (uniform(rng, (2, 3), dtype), mask, uniform(rng, (), dtype)),
            diff=(0, 2),
            note="0d-tensor",
        ),
        SampleInput((uniform(rng, (2, 3), dtype), mask[0], -1.0), note="broadcast-mask"),
        SampleInput(
            (uniform(rng, (3,), dtype), mask, uniform(rng, (), dtype)),
            diff=(0, 2),
            note="mask-broadcasts-x",
        ),
    ]


def _masked_fill_ref(x, mask, value):
    return np.where(mask, value, x).astype(x.dtype)


def _take_along_dim_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (3, 4), dtype), np.array([[0, 3], [1, 1], [2, 0]]), 1)),
        SampleInput((uniform(rng, (3, 4), dtype), np.array([[0, 2, 2, 1]]), 0), note="bcast"),
        SampleInput((uniform(rng, (3, 1), dtype), np.array([[0], [0]]), 0), note="bcast-x"),
        SampleInput((uniform(rng, (3, 4), dtype), np.array([11, 0, 5])), note="flat"),
    ]


def _take_along_dim_ref(x, indices, dim=None):
    if dim is None:
        return np.take_along_axis(x.reshape(-1), indices.reshape(-1), 0)
    shape = list(
        np.broadcast_shapes(
            (*x.shape[:dim], 1, *x.shape[dim + 1 :]),
            (*indices.shape[:dim], 1, *indices.shape[dim + 1 :]),
        )
    )
    x_shape, i_shape = list(shape), list(shape)
    x_shape[dim] = x.shape[dim]
    i_shape[dim] = indices.shape[dim]
    return np.take_along_axis(np.broadcast_to(x, x_shape), np.broadcast_to(indices, i_shape), dim)


def _index_put_samples(rng, dtype):
    return [
        SampleInput(
            (uniform(rng, (3, 4), dtype), uniform(rng, (2, 4), dtype), ([0, 2],)), diff=(0, 1)
        ),
        SampleInput(
            (uniform(rng, (3, 4), dtype), uniform(rng, (4,), dtype), ([2, 1],)),
            diff=(0, 1),
            note="broadcast-value",
        ),
        SampleInput(
            (uniform(rng, (3, 4), dtype), uniform(rng, (3, 2), dtype), (slice(None), [1, 3])),
            diff=(0, 1),
            note="slice-and-array",
        ),
        SampleInput(
            (
                uniform(rng, (2, 3), dtype),
                uniform(rng, (), dtype),
                (np.array([[True, False, True], [False, True, False]]),),
            ),
            diff=(0, 1),
            note="mask",
        ),
        SampleInput(
            (uniform(rng, (3, 4), dtype), uniform(rng, (2,), dtype), (1, slice(1, 3))),
            diff=(0, 1),
            note="basic",
        ),
    ]


def _index_put_ref(x, value, key):
    out = x.copy()
    out[tuple(np.asarray(k) if isinstance(k, list) else k for k in key)] = value
    return out


# Keys with index TENSORS (dualad/ops/tensor_index.py): a sample is ``(x, template, *indices)``
# (``(x, value, template, *indices)`` for writes) with ``INDEX`` in the template where each
# index goes. Every index is an argument of its own, so vmap batches each one (a different
# selection per example, every NumPy placement rule of the index dims), and the composition
# tests differentiate through ops whose index is a saved tensor argument.
INDEX = "<index>"


def _fill(template: tuple, indices) -> tuple:
    it = iter(indices)
    return tuple(next(it) if isinstance(k, str) else k for k in template)


def _tensor_getitem(x, template, *indices):
    return x[_fill(template, indices)]


def _tensor_getitem_ref(x, template, *indices):
    return x[_fill(template, indices)]


def _tensor_getitem_samples(rng, dtype):
    def ints(high, *shape):
        return rng.integers(-high, high, size=shape)

    calls = [
        ((4, 3), (INDEX,), [ints(4, 3)], "one"),
        ((3, 4, 5), (slice(None), INDEX), [ints(4, 2, 2)], "after-slice"),
        ((3, 4, 5), (INDEX, slice(None), INDEX), [ints(3, 2), ints(5, 2)], "separated"),
        ((3, 4, 5), (1, slice(None), INDEX), [ints(5, 3)], "int-separated"),
        ((3, 4, 5), (slice(None), 2, INDEX), [ints(5, 2)], "int-adjacent"),
        ((3, 4), (None, INDEX), [ints(3, 2)], "newaxis"),
        ((3, 4, 5), (Ellipsis, INDEX), [ints(5, 2)], "ellipsis"),
        ((3, 4, 5), (INDEX, Ellipsis, INDEX), [ints(3, 2), ints(5, 2)], "ellipsis-between"),
        ((3, 4), (INDEX, INDEX), [ints(3, 2, 1), ints(4, 1, 3)], "broadcast"),
        ((3, 4, 5), (slice(1, 3), INDEX, np.array([0, 4])), [ints(4, 2)], "static-array"),
        ((3, 4), (INDEX,), [np.array(rng.integers(0, 3))], "0d"),
        ((2, 3), (INDEX,), [rng.uniform(size=(2, 3)) < 0.5], "mask"),
        ((2, 3, 2), (slice(None), INDEX), [ints(3, 2)], "mask-free-after-slice"),
    ]
    return [
        SampleInput((uniform(rng, shape, dtype), template, *indices), note=note)
        for shape, template, indices, note in calls
    ]


def _tensor_setitem(x, value, template, *indices):
    out = x.clone()
    out[_fill(template, indices)] = value
    return out


def _tensor_setitem_ref(x, value, template, *indices):
    out = x.copy()
    out[_fill(template, indices)] = value
    return out


def _tensor_setitem_samples(rng, dtype):
    # distinct targets: with repeated ones the surviving write (and its gradient) is unspecified
    def distinct(n, k):
        return rng.permutation(n)[:k]

    calls = [
        ((3, 4), (2, 4), (INDEX,), [distinct(3, 2)], "rows"),
        ((3, 4), (4,), (INDEX,), [distinct(3, 1)], "broadcast-value"),
        ((3, 4, 5), (3, 2), (slice(None), INDEX, 1), [distinct(4, 2)], "adjacent-int"),
        ((3, 4, 5), (), (INDEX, slice(None), INDEX), [distinct(3, 2), distinct(5, 2)], "separated"),
        ((3, 4), (2, 2), (INDEX, INDEX), [np.array([[0], [2]]), np.array([[1, 3]])], "broadcast"),
        ((2, 3), (), (INDEX,), [rng.uniform(size=(2, 3)) < 0.5], "mask"),
    ]
    return [
        SampleInput(
            (uniform(rng, shape, dtype), uniform(rng, vshape, dtype), template, *indices),
            diff=(0, 1),
            note=note,
        )
        for shape, vshape, template, indices, note in calls
    ]


def _index_put(x, value, key):
    return index_put(x, key, value)


def _setitem(x, value, key):
    out = x.clone()
    out[key] = value
    return out


def _fill_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (2, 3), dtype), 1.5), note="number"),
        SampleInput((uniform(rng, (2, 3), dtype), uniform(rng, (), dtype)), diff=(0, 1)),
    ]


def _copy_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (2, 3), dtype), uniform(rng, (2, 3), dtype)), diff=(0, 1)),
        SampleInput(
            (uniform(rng, (2, 3), dtype), uniform(rng, (3,), dtype)),
            diff=(0, 1),
            note="broadcast",
        ),
    ]


OPS = [
    entry("gather", _gather_samples, _gather_ref, "gather", "scatter_add"),
    entry("scatter", _scatter_samples, _scatter_ref, "scatter", "gather", "index_put_zeros"),
    entry(
        "scatter_add",
        _scatter_add_samples,
        _scatter_add_ref,
        *("scatter_add", "gather", "index_put_zeros"),
    ),
    entry(
        "index_select",
        _index_select_samples,
        lambda x, dim, index: np.take(x, np.atleast_1d(index), axis=dim),
        *("index_select", "index_add"),
    ),
    entry("index_add", _index_add_samples, _index_add_ref, "index_add", "index_select"),
    entry(
        "take_along_dim",
        _take_along_dim_samples,
        _take_along_dim_ref,
        *("gather", "broadcast_to", "reshape"),
    ),
    entry("masked_fill", _masked_fill_samples, _masked_fill_ref),
    OpInfo(
        "masked_select",
        dualad.masked_select,
        lambda rng, dtype: [
            SampleInput((uniform(rng, (2, 3), dtype), np.array([[True, False, True]]))),
            SampleInput((uniform(rng, (3,), dtype), np.array([[True, False, True]] * 2))),
        ],
        dtypes=ALL_DIFF,
        ref=lambda x, mask: np.broadcast_to(x, np.broadcast_shapes(x.shape, mask.shape))[
            np.broadcast_to(mask, np.broadcast_shapes(x.shape, mask.shape))
        ],
        ops=("index_tensors", "broadcast_to"),
    ),
    OpInfo(
        "take",
        dualad.take,
        lambda rng, dtype: [
            SampleInput((uniform(rng, (2, 3), dtype), np.array([[5, 0], [0, -1]]))),
            SampleInput((uniform(rng, (2, 3), dtype), np.array([2, 0]), 1), note="axis"),
        ],
        dtypes=ALL_DIFF,
        ref=lambda x, index, axis=None: np.take(x, index, axis=axis),
        ops=("index_tensors", "reshape"),
    ),
    OpInfo(
        "nonzero",
        dualad.nonzero,
        lambda rng, dtype: [
            SampleInput((np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], dtype),)),
            SampleInput((np.array([0.0, 0.0], dtype),), note="none"),
        ],
        differentiable=False,
        dtypes=ALL_DIFF,
        ref=lambda x: np.argwhere(x),
    ),
    entry("index_put", _index_put_samples, _index_put_ref, fn=_index_put),
    entry("setitem", _index_put_samples, _index_put_ref, "index_put", "clone", fn=_setitem),
    entry(
        "getitem_tensors",
        _tensor_getitem_samples,
        _tensor_getitem_ref,
        *("index_tensors", "index_accumulate"),
        fn=_tensor_getitem,
    ),
    entry(
        "setitem_tensors",
        _tensor_setitem_samples,
        _tensor_setitem_ref,
        *("index_put_tensors", "index_tensors", "clone"),
        fn=_tensor_setitem,
    ),
    # the other in-place writes of the mutation module, through their Tensor methods
    entry(
        "fill_",
        _fill_samples,
        lambda x, value: np.full_like(x, value),
        *("fill", "clone"),
        fn=lambda x, value: x.clone().fill_(value),
    ),
    entry(
        "copy_",
        _copy_samples,
        lambda x, src: np.broadcast_to(src, x.shape).astype(x.dtype),
        *("copy_from", "clone"),
        fn=lambda x, src: x.clone().copy_(src),
    ),
]
