"""Index tensors under vmap: ``x[i]`` and ``x[i] = v`` with a batched integer index select
different elements in every example (vmap against a Python loop, every NumPy placement rule of
the index dims); a batched boolean mask raises the data-dependent-shape error."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dualad
from dualad.func import grad, jacfwd, jacrev, jvp
from dualad.ops.mutation import index_put

RNG = np.random.default_rng(11)
B = 3
IDX = "<index>"  # where an index tensor goes in a key template


def t(array, **kwargs):
    return dualad.tensor(np.asarray(array), **kwargs)


def fill(template, indices):
    it = iter(indices)
    return tuple(next(it) if isinstance(k, str) else k for k in template)


def batch(arrays: list, dim: int):
    return t(np.stack(arrays, axis=dim))


def ints(high, *shape):
    return RNG.integers(-high, high, size=shape)


# (x shape, key template, one index array per slot): every placement rule of NumPy's advanced
# indexing (index dims where the first index was when the advanced parts are consecutive, in
# front otherwise; ints count as advanced; None and Ellipsis separate)
KEYS = [
    ((5, 3), (IDX,), [(5, 4)]),
    ((5, 3), (IDX,), [(5,)]),
    ((5, 3), (IDX,), [(5, 2, 2)]),
    ((5, 3), (IDX,), [(5, None)]),  # a 0-d index
    ((3, 4, 5), (slice(None), IDX), [(4, 2)]),
    ((3, 4, 5), (IDX, slice(None), IDX), [(3, 2), (5, 2)]),
    ((3, 4, 5), (IDX, IDX), [(3, 2, 1), (4, 1, 3)]),
    ((3, 4, 5), (slice(None), IDX, IDX), [(4, 2), (5, 2)]),
    ((3, 4, 5), (1, slice(None), IDX), [(5, 2)]),
    ((3, 4, 5), (slice(None), 2, IDX), [(5, 2)]),
    ((3, 4, 5), (IDX, 0), [(3, 2)]),
    ((3, 4), (None, IDX), [(3, 2)]),
    ((3, 4), (slice(None), None, IDX), [(4, 2)]),
    ((3, 4, 5), (IDX, None, IDX), [(3, 2), (4, 2)]),
    ((3, 4, 5), (Ellipsis, IDX), [(5, 2)]),
    ((3, 4, 5), (IDX, Ellipsis), [(3, 2)]),
    ((3, 4, 5), (IDX, Ellipsis, IDX), [(3, 2), (5, 2)]),
    ((3, 4, 5), (slice(1, 3), IDX, np.array([0, 4])), [(4, 2)]),
    ((3, 4, 5), (np.array([[0], [2]]), IDX), [(4, 1, 3)]),
]


def _index_array(spec):
    high, *shape = spec
    if shape == [None]:
        return np.array(RNG.integers(0, high))
    return ints(high, *shape)


def _check_getitem(x_shape, template, specs, x_dim, index_dims):
    xs = [RNG.standard_normal(x_shape) for _ in range(B)]
    indices = [[_index_array(spec) for spec in specs] for _ in range(B)]
    args = [t(xs[0]) if x_dim is None else batch(xs, x_dim)]
    for k, d in enumerate(index_dims):
        args.append(t(indices[0][k]) if d is None else batch([ix[k] for ix in indices], d))

    def f(x, *idx):
        return x[fill(template, idx)]

    got = dualad.vmap(f, in_dims=(x_dim, *index_dims))(*args).numpy()
    expected = np.stack(
        [
            xs[0 if x_dim is None else b][
                fill(
                    template, [indices[0 if d is None else b][k] for k, d in enumerate(index_dims)]
                )
            ]
            for b in range(B)
        ]
    )
    assert got.shape == expected.shape, (template, x_dim, index_dims)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("x_shape, template, specs", KEYS, ids=[str(k[1]) for k in KEYS])
def test_getitem_with_batched_indices_matches_a_loop(x_shape, template, specs):
    ranks = [len(s) - 1 if s[1:] != (None,) else 0 for s in specs]
    for x_dim in (None, 0, -1, 1):
        choices = [(None, 0, -1, 1) if r >= 1 else (None, 0) for r in ranks]
        for index_dims in itertools.product(*choices):
            if x_dim is None and all(d is None for d in index_dims):
                continue
            _check_getitem(x_shape, template, specs, x_dim, index_dims)


def test_nested_vmap_with_indices_batched_at_each_level():
    x = RNG.standard_normal((2, 5, 4))  # outer batch 2
    index = RNG.integers(0, 5, size=(3, 2))  # inner batch 3
    out = dualad.vmap(dualad.vmap(lambda r, i: r[i], in_dims=(None, 0)), in_dims=(0, None))(
        t(x), t(index)
    )
    expected = np.stack([np.stack([x[o][index[j]] for j in range(3)]) for o in range(2)])
    np.testing.assert_array_equal(out.numpy(), expected)
    # both batched at both levels
    index2 = RNG.integers(-4, 4, size=(2, 3, 6))
    x2 = RNG.standard_normal((2, 3, 4))
    out = dualad.vmap(dualad.vmap(lambda r, i: r[i]))(t(x2), t(index2))
    expected = np.stack([np.stack([x2[o, j][index2[o, j]] for j in range(3)]) for o in range(2)])
    np.testing.assert_array_equal(out.numpy(), expected)


def test_take_with_batched_indices():
    x = RNG.standard_normal((B, 2, 3))
    index = RNG.integers(0, 6, size=(B, 4))
    out = dualad.vmap(dualad.take)(t(x), t(index))
    np.testing.assert_array_equal(
        out.numpy(), np.stack([np.take(x[b], index[b]) for b in range(B)])
    )


def _setitem(x, value, *indices, template):
    out = x.clone()
    out[fill(template, indices)] = value
    return out


def _index_put(x, value, *indices, template):
    # functional: an unbatched x takes the batched values (x[i] = v in place could not)
    return index_put(x, fill(template, indices), value)


SET_KEYS = [
    ((4, 3), (2, 3), (IDX,), [(4, 2)]),
    ((4, 3), (3,), (IDX,), [(4, 2)]),
    ((4, 3), (), (IDX,), [(4, 2)]),
    ((3, 4, 5), (3, 2), (slice(None), IDX, 1), [(4, 2)]),
    ((3, 4, 5), (2, 4), (IDX, slice(None), IDX), [(3, 2), (5, 2)]),
    ((3, 4, 5), (4,), (IDX, slice(None), IDX), [(3, 2), (5, 2)]),
    ((3, 4), (2, 2), (IDX, IDX), [(3, 2, 1), (4, 1, 2)]),
]


def _distinct(spec):
    high, *shape = spec
    count = int(np.prod(shape))
    return RNG.permutation(high)[:count].reshape(shape)


@pytest.mark.parametrize(
    "x_shape, v_shape, template, specs", SET_KEYS, ids=[str(k[2]) for k in SET_KEYS]
)
def test_setitem_with_batched_indices_matches_a_loop(x_shape, v_shape, template, specs):
    xs = [RNG.standard_normal(x_shape) for _ in range(B)]
    vs = [RNG.standard_normal(v_shape) for _ in range(B)]
    indices = [[_distinct(spec) for spec in specs] for _ in range(B)]
    for x_dim, v_dim, i_dim in itertools.product((None, 0, -1), (None, 0), (None, 0, -1)):
        if i_dim is None and x_dim is None and v_dim is None:
            continue
        args = [
            t(xs[0]) if x_dim is None else batch(xs, x_dim),
            t(vs[0]) if v_dim is None else batch(vs, v_dim),
        ]
        for k in range(len(specs)):
            args.append(t(indices[0][k]) if i_dim is None else batch([ix[k] for ix in indices], 0))

        write = _index_put if x_dim is None else _setitem

        def f(x, v, *idx, write=write):
            return write(x, v, *idx, template=template)

        in_dims = (x_dim, v_dim, *([None if i_dim is None else 0] * len(specs)))
        got = dualad.vmap(f, in_dims=in_dims)(*args).numpy()
        rows = []
        for b in range(B):
            out = xs[0 if x_dim is None else b].copy()
            key = fill(template, indices[0 if i_dim is None else b])
            out[key] = vs[0 if v_dim is None else b]
            rows.append(out)
        np.testing.assert_array_equal(got, np.stack(rows), err_msg=str((template, in_dims)))


def test_setitem_in_place_on_a_batched_input_writes_through():
    x = RNG.standard_normal((B, 5))
    index = np.stack([RNG.permutation(5)[:2] for _ in range(B)])
    batched_x = t(x)

    def write(r, i):
        r[i] = -1.0
        return r

    dualad.vmap(write)(batched_x, t(index))
    expected = x.copy()
    for b in range(B):
        expected[b, index[b]] = -1.0
    np.testing.assert_array_equal(batched_x.numpy(), expected)


def test_batched_index_into_an_unbatched_tensor_in_place_raises():
    x = t(np.zeros(5))
    with pytest.raises(RuntimeError, match=r"setitem/index_put_\(self, \*extra_args\) is not"):
        dualad.vmap(lambda i: x.__setitem__(i, 1.0) or x)(t([[0], [1]]))


@pytest.mark.parametrize(
    "use",
    [
        lambda x, m: x[:, m],
        lambda x, m: dualad.masked_select(x, m),
        lambda x, m: _setitem(x, 0.0, m, template=(slice(None), IDX)),
    ],
    ids=["getitem", "masked_select", "setitem"],
)
def test_batched_boolean_mask_raises(use):
    # (``x[mask] = v`` with a mask over x's leading dims is written as a ``where`` and batches:
    # test_vmap.py::test_setitem_with_a_batched_mask)
    x = t(RNG.standard_normal((B, 2, 4)))
    mask = t(RNG.uniform(size=(B, 4)) < 0.5)
    with pytest.raises(RuntimeError, match=r"dualad\.vmap: indexing with a batched boolean mask"):
        dualad.vmap(use)(x, mask)


def test_unbatched_mask_with_batched_values():
    x = RNG.standard_normal((B, 2, 4))
    mask = RNG.uniform(size=4) < 0.5
    mask[0] = True
    out = dualad.vmap(lambda r: r[:, t(mask)])(t(x))
    np.testing.assert_array_equal(out.numpy(), x[:, :, mask])


def test_per_example_gradients_of_an_embedding_lookup():
    table = RNG.standard_normal((6, 3))
    index = RNG.integers(0, 6, size=(B, 4))  # repeated rows accumulate

    def loss(w, i):
        return (dualad.tanh(w[i]) ** 2).sum()

    got = dualad.vmap(grad(loss), in_dims=(None, 0))(t(table), t(index))
    for b in range(B):
        w = t(table, requires_grad=True)
        loss(w, t(index[b])).backward()
        np.testing.assert_allclose(got[b].numpy(), w.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_jacobians_and_jvp_through_batched_indices():
    x = RNG.standard_normal((B, 5))
    index = RNG.integers(0, 5, size=(B, 3))
    v = RNG.standard_normal((B, 5))

    def f(r, i):
        return dualad.sin(r[i]) * r[i[::-1]]

    rev = dualad.vmap(jacrev(f))(t(x), t(index))
    fwd_ = dualad.vmap(jacfwd(f))(t(x), t(index))
    tangents = dualad.vmap(lambda r, i, u: jvp(lambda q: f(q, i), (r,), (u,))[1])(
        t(x), t(index), t(v)
    )
    for b in range(B):
        expected = jacrev(f)(t(x[b]), t(index[b])).numpy()
        np.testing.assert_allclose(rev[b].numpy(), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fwd_[b].numpy(), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tangents[b].numpy(), expected @ v[b], rtol=1e-12, atol=1e-12)


def test_grad_through_batched_setitem():
    x = RNG.standard_normal((B, 5))
    value = RNG.standard_normal((B, 2))
    index = np.stack([RNG.permutation(5)[:2] for _ in range(B)])

    def loss(r, v, i):
        out = r * 1.0
        out[i] = v * v
        return (out * dualad.arange(5.0)).sum()

    gx, gv = dualad.vmap(grad(loss, argnums=(0, 1)))(t(x), t(value), t(index))
    for b in range(B):
        weights = np.arange(5.0)
        expected_x = weights.copy()
        expected_x[index[b]] = 0.0
        np.testing.assert_allclose(gx[b].numpy(), expected_x, rtol=1e-12)
        np.testing.assert_allclose(gv[b].numpy(), 2 * value[b] * weights[index[b]], rtol=1e-12)


def test_index_tensor_is_saved_and_version_checked_inside_func_grad():
    x = t(RNG.standard_normal(4))
    index = t([0, 0, 2])

    def f(r):
        out = r[index].sum()
        index.add_(1)  # changes the saved index before the backward pass
        return out

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        grad(f)(x)
    index = t([0, 0, 2])
    np.testing.assert_allclose(grad(lambda r: r[index].sum())(x).numpy(), [2.0, 0.0, 1.0, 0.0])


def test_unbatched_mask_together_with_a_batched_index():
    x = RNG.standard_normal((B, 4, 5))
    mask = np.array([True, False, True, True])
    index = RNG.integers(0, 5, size=(B, 3))
    out = dualad.vmap(lambda r, i: r[t(mask), i])(t(x), t(index))
    np.testing.assert_array_equal(out.numpy(), np.stack([x[b][mask, index[b]] for b in range(B)]))

    def write(r, i):
        r = r * 1
        r[t(mask), i] = 0.0
        return r

    expected = x.copy()
    for b in range(B):
        expected[b][mask, index[b]] = 0.0
    np.testing.assert_array_equal(dualad.vmap(write)(t(x), t(index)).numpy(), expected)


@pytest.mark.parametrize(
    "case",
    [
        "x batched, x[i, :, j]",
        "x batched, x[[0, 2], :, [3, 1]]",
        "x and index batched, x[:, :, i]",
        "index batched, x[:, :, i]",
    ],
)
def test_advanced_index_result_is_contiguous_per_example(case):
    # an eager advanced-index result is C-contiguous, so a reshape of it is a view that sees
    # later in-place writes; under vmap the batch dim sat inside each example's memory (behind
    # NumPy's leading index dims, or in front of a later index block), so the reshape copied
    # (the write was lost) and view(-1) raised
    X = RNG.standard_normal((B, 3, 2, 4))
    IDXS = np.array([[0, 2], [1, 1], [2, 0]])
    if case == "x batched, x[i, :, j]":
        i, j = t([0, 2]), t([3, 1])
        index = lambda x, k: (i, slice(None), j)
        args, in_dims = (t(X), t(IDXS)), (0, 0)
    elif case == "x batched, x[[0, 2], :, [3, 1]]":  # (a constant key: the getitem op)
        index = lambda x, k: ([0, 2], slice(None), [3, 1])
        args, in_dims = (t(X), t(IDXS)), (0, 0)
    elif case == "x and index batched, x[:, :, i]":
        index = lambda x, k: (slice(None), slice(None), k)
        args, in_dims = (t(X), t(IDXS)), (0, 0)
    else:
        index = lambda x, k: (slice(None), slice(None), k)
        args, in_dims = (t(X[0]), t(IDXS)), (None, 0)

    def f(x, k):
        r = x[index(x, k)]
        r.reshape(-1).mul_(2.0)
        return r, r.view(-1)

    loop = [f(*(a[b] if d == 0 else a for a, d in zip(args, in_dims))) for b in range(B)]
    got = dualad.vmap(f, in_dims=in_dims)(*(a.clone() for a in args))
    for k in range(2):
        np.testing.assert_array_equal(got[k].numpy(), np.stack([o[k].numpy() for o in loop]))
