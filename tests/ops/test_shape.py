"""Shape ops and ``x[key]`` indexing: values, derivatives, views, setitem, batching rules, errors.

The op database entries of ``dualad.testing.opdb.shape`` are checked here in every claimed dtype:
forward values against NumPy, the VJP against central differences, the JVP (forward mode)
against central differences, and second order: every shape op is linear, so the VJP is linear
in the cotangent and differentiating it w.r.t. the cotangent must give back the JVP
(the transpose of the transpose is the op). The registry-wide test (tests/ops/test_registry.py)
runs its own checks on the same entries.
"""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import (
    assert_values_close,
    family_cases,
    forward_tangents,
    function_of_leaves,
)

import dualad
from dualad import fwd
from dualad._dispatch import REGISTRY
from dualad.testing._numeric import (
    as_numpy,
    flatten_outputs,
    numerical_jvp,
    numerical_vjp,
    random_like,
    sample_function,
)
from dualad.testing.opdb import shape as shape_db

# ---------------------------------------------------------------------------------------------
# helpers


def check_forward(info, sample):
    expected = [np.asarray(e) for e in flatten_outputs(info.ref(*sample.args, **sample.kwargs))]
    args, kwargs, _ = sample.tensors(requires_grad=False)
    actual = flatten_outputs(info.fn(*args, **kwargs))
    assert len(actual) == len(expected)
    tol = 1e-6 if np.dtype(actual[0].dtype).itemsize <= 8 else 1e-12
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype, f"{info.name}: dtype {a.dtype} != {e.dtype}"
        assert_values_close(a, e, rtol=tol, atol=tol, what=info.name)


def check_vjp(info, sample, rng):
    args, kwargs, leaves = sample.tensors(requires_grad=True)
    outputs = [o for o in flatten_outputs(info.fn(*args, **kwargs)) if o.requires_grad]
    cts = [random_like(rng, as_numpy(o)) for o in outputs]
    grads = dualad.autograd.grad(
        outputs, leaves, [dualad.tensor(c) for c in cts], allow_unused=True
    )
    arrays = sample.leaves()
    expected = numerical_vjp(sample_function(info.fn, sample), arrays, range(len(arrays)), cts)
    for leaf, g, e in zip(leaves, grads, expected):
        g = np.zeros(leaf.shape, leaf.dtype) if g is None else as_numpy(g)
        assert g.dtype == leaf.dtype
        assert_values_close(g, e, rtol=1e-6, atol=1e-8, what=f"{info.name} vjp")


def check_jvp(info, sample, rng):
    actual, expected, outputs = forward_tangents(info, sample, rng)
    for a, e, o in zip(actual, expected, outputs):
        a = np.zeros(o.shape, o.dtype) if a is None else as_numpy(a)
        assert_values_close(a, e, rtol=1e-6, atol=1e-8, what=f"{info.name} jvp")


def check_vjp_of_vjp(info, sample, rng):
    """d/d(ct) <vjp(ct), v> = J v: the double transpose of a linear op is the op."""
    args, kwargs, leaves = sample.tensors(requires_grad=True)
    outputs = [o for o in flatten_outputs(info.fn(*args, **kwargs)) if o.requires_grad]
    cts = [dualad.tensor(random_like(rng, as_numpy(o)), requires_grad=True) for o in outputs]
    grads = dualad.autograd.grad(outputs, leaves, cts, create_graph=True, allow_unused=True)
    directions = [random_like(rng, as_numpy(leaf)) for leaf in leaves]
    used = [(g, dualad.tensor(v)) for g, v in zip(grads, directions) if g is not None]
    second = dualad.autograd.grad(
        [g for g, _ in used], cts, [v for _, v in used], allow_unused=True
    )
    expected = numerical_jvp(function_of_leaves(info, sample), sample.leaves(), directions)
    for s, e, o in zip(second, expected, outputs):
        s = np.zeros(o.shape, o.dtype) if s is None else as_numpy(s)
        assert_values_close(s, e, rtol=1e-6, atol=1e-8, what=f"{info.name} vjp of vjp")


DIFF_INFOS = [info for info in shape_db.OPS if info.differentiable]


@pytest.mark.parametrize(
    "info, dtype, sample",
    family_cases(
        [i for i in shape_db.OPS if i.ref is not None], ("float32", "float64", "complex64")
    ),
)
def test_forward_matches_numpy(info, dtype, sample):
    check_forward(info, sample)


@pytest.mark.parametrize("info, dtype, sample", family_cases(DIFF_INFOS, ("float64", "complex128")))
def test_vjp_matches_finite_differences(info, dtype, sample):
    check_vjp(info, sample, np.random.default_rng(0))


@pytest.mark.parametrize("info, dtype, sample", family_cases(DIFF_INFOS, ("float64", "complex128")))
def test_jvp_matches_finite_differences(info, dtype, sample):
    check_jvp(info, sample, np.random.default_rng(1))


@pytest.mark.parametrize("info, dtype, sample", family_cases(DIFF_INFOS, ("float64", "complex128")))
def test_grad_of_grad_is_the_op(info, dtype, sample):
    check_vjp_of_vjp(info, sample, np.random.default_rng(2))


@pytest.mark.parametrize("info, dtype, sample", family_cases(DIFF_INFOS, ("float32",)))
def test_float32_gradients_keep_dtype(info, dtype, sample):
    args, kwargs, leaves = sample.tensors(requires_grad=True)
    outputs = [o for o in flatten_outputs(info.fn(*args, **kwargs)) if o.requires_grad]
    assert all(o.dtype == np.float32 for o in outputs)
    grads = dualad.autograd.grad(
        outputs, leaves, [dualad.ones_like(o) for o in outputs], allow_unused=True
    )
    assert all(g is None or g.dtype == np.float32 for g in grads)


def test_every_shape_op_has_an_entry():
    covered = {name for info in shape_db.OPS for name in info.ops}
    mine = {
        "reshape", "view", "broadcast_to", "permute", "getitem", "index", "index_put_zeros",
        "unbind", "stack", "split", "cat", "flip", "roll", "tile", "repeat_interleave",
        "repeat_interleave_index", "diagonal", "diag_embed", "tril", "triu",
    }  # fmt: skip
    assert mine <= set(REGISTRY)
    assert mine <= covered


# ---------------------------------------------------------------------------------------------
# views: memory, version counter, _base


def _x(*shape, requires_grad=False):
    return dualad.tensor(
        np.arange(np.prod(shape), dtype=np.float64).reshape(shape), requires_grad=requires_grad
    )


VIEW_FNS = {
    "view": lambda x: x.view(4, 3),
    "reshape": lambda x: x.reshape(2, 6),
    "flatten": lambda x: x.flatten(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(0),
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "movedim": lambda x: x.movedim(0, 1),
    "expand": lambda x: x.unsqueeze(0).expand(2, 3, 4),
    "expand_same": lambda x: x.expand(3, 4),
    "select": lambda x: x.select(1, 2),
    "narrow": lambda x: x.narrow(0, 1, 2),
    "slice": lambda x: x[1:, ::2],
    "int_index": lambda x: x[0],
    "none_ellipsis": lambda x: x[None, ..., 1],
    "diagonal": lambda x: x.diagonal(1),
    "diagonal_negative": lambda x: x.diagonal(-1),
    "unbind": lambda x: x.unbind(1)[2],
    "split": lambda x: x.split(2)[1],
    "split_sizes": lambda x: x.split([1, 3], dim=1)[1],
    "chunk": lambda x: x.chunk(2, 1)[0],
    "tensor_split": lambda x: x.tensor_split([1], 0)[1],
    "view_of_view": lambda x: x[1:].t()[1],
    "t_1d": lambda x: x[0].t(),
}


@pytest.mark.parametrize("name", sorted(VIEW_FNS))
def test_views_share_memory_and_version_counter(name):
    x = _x(3, 4)
    view = VIEW_FNS[name](x)
    assert view._base is x
    assert np.shares_memory(view.numpy(), x.numpy())
    version = x._version
    x.add_(1.0)  # the view sees the new values and the shared version
    assert x._version == view._version == version + 1
    expected = VIEW_FNS[name](_x(3, 4) + 1.0)
    assert_values_close(view, expected.numpy())
    if name.startswith("expand"):
        return  # expanded views are read-only (several elements share memory)
    before = x.numpy().copy()
    view.mul_(0.0)  # and writes through a view land in the base
    assert view._version == x._version == version + 2
    assert not np.array_equal(x.numpy(), before) or not before.any()
    assert float(np.abs(view.numpy()).sum()) == 0.0


COPY_FNS = {
    "flip": lambda x: x.flip(0),
    "roll": lambda x: x.roll(1, 0),
    "tile": lambda x: x.tile(2),
    "repeat": lambda x: x.repeat(1, 1),
    "repeat_interleave": lambda x: x.repeat_interleave(1, 0),
    "cat": lambda x: dualad.cat([x]),
    "stack": lambda x: dualad.stack([x]),
    "diag": lambda x: dualad.diag(x[:3, :3]),
    "tril": lambda x: x.tril(),
    "triu": lambda x: x.triu(),
    "diag_embed": lambda x: x.diag_embed(),
    "advanced": lambda x: x[[0, 1]],
    "zero_d_index": lambda x: x[dualad.tensor(1)],
    "mask": lambda x: x[x > 2],
    "hstack": lambda x: dualad.hstack([x]),
}


@pytest.mark.parametrize("name", sorted(COPY_FNS))
def test_copies_do_not_alias(name):
    x = _x(3, 4)
    out = COPY_FNS[name](x)
    assert out._base is None
    assert not np.shares_memory(out.numpy(), x.numpy())


def test_diagonal_is_a_writable_view_under_autograd():
    x = _x(3, 3, requires_grad=True)
    y = x * 1.0
    d = y.diagonal()
    d.mul_(3.0)  # in place on the diagonal: y's history goes through CopySlices
    assert y.grad_fn.name() == "CopySlices"
    assert_values_close(y.detach().diagonal(), 3.0 * np.arange(9.0).reshape(3, 3).diagonal())
    y.sum().backward()
    expected = np.ones((3, 3))
    np.fill_diagonal(expected, 3.0)
    assert_values_close(x.grad, expected)


def test_inplace_on_diagonal_view_carries_tangents():
    x = _x(3, 3)
    with fwd.dual_level():
        y = fwd.make_dual(x, dualad.ones(3, 3)).clone()
        y.diagonal(1).mul_(2.0)
        tangent = fwd.unpack_dual(y).tangent
    expected = np.ones((3, 3))
    expected[[0, 1], [1, 2]] = 2.0
    assert_values_close(tangent, expected)


def test_diagonal_of_expanded_tensor_is_read_only():
    x = dualad.tensor([1.0, 2.0, 3.0]).expand(3, 3)
    with pytest.raises(RuntimeError, match="clone"):
        x.diagonal().add_(1.0)


def test_diagonal_inplace_no_grad_and_offsets():
    x = dualad.zeros(3, 4)
    with dualad.no_grad():
        x.diagonal(1).fill_(1.0)
        x.diagonal(-1).add_(2.0)
    expected = np.zeros((3, 4))
    expected[[0, 1, 2], [1, 2, 3]] = 1.0
    expected[[1, 2], [0, 1]] = 2.0
    assert_values_close(x, expected)


def test_diagonal_expanded_cotangent():
    # seed test_diagonal_expanded_v
    value = 0.37
    a = dualad.tensor(np.random.default_rng(0).random((10, 10)), requires_grad=True)
    (result,) = dualad.autograd.grad(a.diagonal(), a, dualad.tensor(value).expand(10))
    assert_values_close(result, np.eye(10) * value)


def test_select_and_slice_expanded_cotangents():
    rng = np.random.default_rng(0)
    a = dualad.tensor(rng.random((10, 10, 10)), requires_grad=True)
    v = rng.random(10)
    (result,) = dualad.autograd.grad(a[0], a, dualad.tensor(v).expand(10, 10))
    expected = np.zeros((10, 10, 10))
    expected[0] = v
    assert_values_close(result, expected)
    w = rng.random((10, 1))
    (result,) = dualad.autograd.grad(a[3:5], a, dualad.tensor(w).expand(2, 10, 10))
    expected = np.zeros((10, 10, 10))
    expected[3:5] = w
    assert_values_close(result, expected)


# ---------------------------------------------------------------------------------------------
# split / chunk / unbind (multi-output views)


def test_chunk_unused_outputs():
    # seed test_unused_output
    x = dualad.tensor(np.random.default_rng(0).standard_normal((10, 10)), requires_grad=True)
    outputs = x.chunk(5)
    (outputs[2] * 4 + 2).sum().backward()
    expected = np.zeros((10, 10))
    expected[4:6] = 4
    assert_values_close(x.grad, expected)
    x.grad = None
    grad_output = np.random.default_rng(1).standard_normal((2, 10))
    x.chunk(5)[0].backward(dualad.tensor(grad_output))
    expected = np.zeros((10, 10))
    expected[:2] = grad_output
    assert_values_close(x.grad, expected)


def test_grad_with_respect_to_chunks():
    # seed test_grad_nonleaf_many_outputs
    x = dualad.tensor(np.random.default_rng(0).standard_normal((4, 2)), requires_grad=True)
    a, b = x.chunk(2)
    calls = []
    x.register_hook(lambda *grads: calls.append(grads))
    go = np.random.default_rng(1).standard_normal((2, 2))
    grad_a, grad_b = dualad.autograd.grad(
        a + 2 * b, [a, b], grad_outputs=dualad.tensor(go), create_graph=True
    )
    assert_values_close(grad_a, go)
    assert_values_close(grad_b, 2 * go)
    assert not calls
    assert x.grad is None


def test_split_sizes_and_node_names():
    x = _x(5, 2, requires_grad=True)
    pieces = x.split(2)
    assert [tuple(p.shape) for p in pieces] == [(2, 2), (2, 2), (1, 2)]
    assert pieces[0].grad_fn.name() == "SplitWithSizesBackward0"
    assert pieces[0].grad_fn is pieces[2].grad_fn
    assert [p.shape[1] for p in x.split([0, 2], dim=1)] == [0, 2]
    assert [tuple(p.shape) for p in dualad.zeros(0, 3).split(2)] == [(0, 3)]
    assert [tuple(p.shape) for p in dualad.zeros(0).chunk(3)] == [(0,), (0,), (0,)]
    assert [p.shape[0] for p in _x(6).chunk(4)] == [2, 2, 2]  # torch: fewer chunks come back
    assert x.unbind(0)[0].grad_fn.name() == "UnbindBackward0"


def test_inplace_on_multi_output_view_with_grad_is_an_error():
    x = _x(4, 2, requires_grad=True)
    y = x * 2
    a, _ = y.split(2)
    with pytest.raises(RuntimeError, match="multiple views"):
        a.add_(1.0)
    with dualad.no_grad():  # without autograd the write simply goes through
        z = _x(4, 2)
        z.chunk(2)[1].zero_()
    assert_values_close(z[2:], np.zeros((2, 2)))


# ---------------------------------------------------------------------------------------------
# getitem: advanced indexing


def test_indexing_duplicates_accumulate():
    # seed test_indexing_duplicates
    y = dualad.tensor(np.arange(1.0, 17).reshape(4, 4), requires_grad=True)
    idx = [1, 1, 3, 2, 1, 2]
    y[dualad.tensor(idx)].sum().backward()
    expected = np.zeros((4, 4))
    for i in idx:
        expected[i] += 1
    assert_values_close(y.grad, expected)

    y = dualad.tensor(np.arange(1.0, 17).reshape(4, 4), requires_grad=True)
    y[[[1, 1, 3, 2, 1, 2], [0]]].sum().backward()  # a list of lists is a tuple (torch)
    expected = np.zeros((4, 4))
    for i in idx:
        expected[i, 0] += 1
    assert_values_close(y.grad, expected)

    y = dualad.tensor(np.arange(1.0, 17).reshape(4, 4), requires_grad=True)
    y[[[[1, 2], [0, 0]], [[0, 1], [1, 1]]]].sum().backward()
    expected = np.array([[0, 2, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0.0]])
    assert_values_close(y.grad, expected)

    y = dualad.tensor(np.arange(1.0, 65).reshape(4, 4, 4), requires_grad=True)
    y[[[1, 1, 1], slice(None), slice(None)]].sum().backward()
    expected = np.zeros((4, 4, 4))
    expected[1] = 3
    assert_values_close(y.grad, expected)


def test_list_index_rules():
    x = _x(4, 3)
    assert tuple(x[[1, 2]].shape) == (2, 3)  # ints only: one index array
    assert tuple(x[[[1, 2]]].shape) == (2, 3)  # a list holding a list: a tuple
    assert tuple(x[[[1, 2], [0, 2]]].shape) == (2,)
    assert tuple(x[[True, False, True, False]].shape) == (2, 3)
    assert tuple(x[[slice(None), 1]].shape) == (4,)
    assert tuple(x[[dualad.tensor([0, 3]), [1, 1]]].shape) == (2,)
    assert tuple(x[[]].shape) == (0, 3)


ADVANCED_KEYS = [
    (-1,),
    ([-1, 0, -4],),
    (slice(None), [2, -1]),
    ([0, 3], slice(1, None)),
    (Ellipsis, [0, 0]),
    (None, [1, 2], None),
    ([[0], [3]], [[2, 0, 1]]),
    (1, [0, 2]),
    ([True, False, True, True], slice(None, None, -1)),
]


@pytest.mark.parametrize("key", ADVANCED_KEYS, ids=repr)
def test_getitem_matches_numpy_and_gradient(key):
    base = np.random.default_rng(0).standard_normal((4, 3))
    x = dualad.tensor(base, requires_grad=True)
    numpy_key = tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
    out = x[key]
    expected = base[numpy_key]
    assert_values_close(out, expected)
    ct = np.random.default_rng(1).standard_normal(expected.shape)
    (grad,) = dualad.autograd.grad(out, x, dualad.tensor(ct))
    manual = np.zeros_like(base)
    np.add.at(manual, numpy_key, ct)
    assert_values_close(grad, manual)


def test_zero_dim_index_tensor():
    x = _x(4, 3, requires_grad=True)
    i = dualad.tensor(2)
    out = x[i]
    assert tuple(out.shape) == (3,)
    assert out.grad_fn.name() == "IndexBackward0"
    assert_values_close(out, np.arange(6.0, 9.0))
    out.sum().backward()
    expected = np.zeros((4, 3))
    expected[2] = 1
    assert_values_close(x.grad, expected)
    assert tuple(x[i, i].shape) == ()


def test_basic_and_advanced_node_names():
    x = _x(3, 3, requires_grad=True)
    assert x[1:].grad_fn.name() == "SliceBackward0"
    assert x[[0, 1]].grad_fn.name() == "IndexBackward0"


def test_index_backward_does_not_save_the_indexed_tensor():
    # seed test_index_backward_does_not_save_tensor
    a = dualad.tensor([1.0, 0, 0])
    b = dualad.zeros(3, requires_grad=True)
    tensor = b + 0
    tensor[a != 0] = tensor[a != 0]
    tensor.backward(dualad.zeros_like(tensor))


def test_getitem_index_errors():
    x = _x(3, 4)
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        x[dualad.tensor([0.0, 1.0])]
    with pytest.raises(IndexError):
        x[5]
    with pytest.raises(IndexError):
        x[[0, 7]]
    with pytest.raises(IndexError):
        x[1.5]
    with pytest.raises(IndexError):
        x[0, 0, 0]


def test_complex_getitem_gradient():
    z0 = np.array([1 + 2j, 3 - 1j, -0.5j])
    z = dualad.tensor(z0, requires_grad=True)
    out = dualad.real(z[[0, 0, 2]] * dualad.tensor([1.0, 2.0, 1j])).sum()
    out.backward()
    # d Re(sum(w * z_i)) / d z_i (torch convention: conj(w))
    assert_values_close(z.grad, np.array([3.0, 0.0, -1j]))


# ---------------------------------------------------------------------------------------------
# setitem (index_put through the in-place machinery)

SETITEM_INDICES = [
    ((5, 5), 1),
    ((5,), 1),
    ((1,), 0),
    ((10,), [[0, 4, 2]]),
    ((5, 5), [[0, 4], [2, 2]]),
    ((5, 5, 5), [slice(None), slice(None), [1, 3]]),
    ((5, 5, 5), [slice(None), [1, 3], slice(None)]),
    ((5, 5, 5), [[1, 3], slice(None), slice(None)]),
    ((5, 5, 5), [slice(None), [2, 4], [1, 3]]),
    ((5, 5, 5), [[1, 3], [2, 4], slice(None)]),
    ((5, 5), -1),
    ((5, 5), (slice(1, 3), [-1, 0])),
]


def _numpy_key(index):
    if isinstance(index, list) and any(isinstance(k, (list, slice)) for k in index):
        index = tuple(index)
    if isinstance(index, tuple):
        return tuple(np.asarray(k) if isinstance(k, list) else k for k in index)
    return index


@pytest.mark.parametrize("size, index", SETITEM_INDICES, ids=repr)
def test_setitem_scalar(size, index):
    # seed _test_setitem
    x = dualad.ones(*size, requires_grad=True)
    y = x + 2
    version = y._version
    y[index] = 2
    assert y._version != version
    y.backward(dualad.ones(*size))
    expected = np.ones(size)
    expected[_numpy_key(index)] = 0
    assert_values_close(x.grad, expected)
    values = np.full(size, 3.0)
    values[_numpy_key(index)] = 2
    assert_values_close(y, values)


@pytest.mark.parametrize(
    "size, index",
    [
        ((5, 5), 3),
        ((5, 5), [[0, 1], [1, 0]]),
        ((5,), 3),
        ((5,), "zero-d"),
        ((5,), [[0, 1, 2, 3]]),
        ((5, 5, 5), [slice(None), slice(None), [1, 3]]),
        ((5, 5, 5), [slice(None), [1, 3], slice(None)]),
        ((5, 5, 5), [[1, 3], slice(None), slice(None)]),
        ((5, 5, 5), [slice(None), [2, 4], [1, 3]]),
        ((5, 5, 5), [[1, 3], [2, 4], slice(None)]),
        ((5, 5, 5), "tensor-list-slice"),
    ],
    ids=repr,
)
def test_setitem_tensor_value(size, index):
    # seed _test_setitem_tensor: the value gets the gradient of the positions it wrote
    if index == "zero-d":
        index = dualad.tensor([3]).sum()
        numpy_key = 3
    elif index == "tensor-list-slice":
        index = [dualad.tensor([1, 3]), [2, 4], slice(None)]
        numpy_key = (np.array([1, 3]), np.array([2, 4]), slice(None))
    else:
        numpy_key = _numpy_key(index)
    x = dualad.ones(*size, requires_grad=True)
    y = x + 2
    version = y._version
    value = dualad.full(tuple(x[index].shape), 7.0, requires_grad=True)
    y[index] = value
    assert y._version != version
    y.backward(dualad.ones(*size))
    expected = np.ones(size)
    expected[numpy_key] = 0
    assert_values_close(x.grad, expected)
    assert_values_close(value.grad, np.ones(value.shape))


def test_setitem_value_broadcasts_and_gets_summed_gradient():
    x = dualad.tensor(np.random.default_rng(0).standard_normal(4), requires_grad=True)
    y = dualad.zeros(2, 3, 4)
    y[1] = x
    ct = np.random.default_rng(1).standard_normal((2, 3, 4))
    y.backward(dualad.tensor(ct))
    assert_values_close(x.grad, ct[1].sum(0))
    v = dualad.tensor(2.0, requires_grad=True)
    z = dualad.zeros(3, 3)
    z[[0, 2]] = v
    z.sum().backward()
    assert_values_close(v.grad, 6.0)


def test_setitem_overwritten_positions_get_zero_gradient_even_when_duplicated():
    b = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = dualad.zeros(3, dtype=dualad.float64)
    c[[1, 2]] = b[[1, 1]]
    c.backward(dualad.tensor([1.0, 1.0, 1.0]), retain_graph=True)
    assert_values_close(b.grad, [0.0, 2.0, 0.0])
    c.backward(dualad.tensor([1.0, 1.0, 1.0]))
    assert_values_close(b.grad, [0.0, 4.0, 0.0])


@pytest.mark.parametrize("with_value_grad", [False, True])
def test_setitem_bool_mask(with_value_grad):
    mask = np.random.default_rng(0).random((5, 5)) > 0.5
    x = dualad.ones(5, 5, requires_grad=True)
    y = x + 2
    if with_value_grad:
        value = dualad.full((int(mask.sum()),), 7.0, requires_grad=True)
    else:
        value = 7.0
    y[dualad.tensor(mask)] = value
    y.backward(dualad.ones(5, 5))
    assert_values_close(x.grad, np.where(mask, 0.0, 1.0))
    assert_values_close(y, np.where(mask, 7.0, 3.0))
    if with_value_grad:
        assert_values_close(value.grad, np.ones(int(mask.sum())))


def test_setitem_under_no_grad_records_nothing():
    x = dualad.ones(3, 3, requires_grad=True)
    y = x * 2
    with dualad.no_grad():
        z = dualad.zeros(3)
        z[[0, 2]] = dualad.tensor([1.0, 2.0])
        version = y._version
        y[0] = 5.0  # allowed: no gradient is tracked for this write
    assert y._version == version + 1
    assert not z.requires_grad and z.grad_fn is None
    assert_values_close(z, [1.0, 0.0, 2.0])
    y.sum().backward()
    assert_values_close(
        x.grad, np.full((3, 3), 2.0)
    )  # the untracked write does not change gradients


def test_setitem_on_a_leaf_under_no_grad():
    w = dualad.ones(3, requires_grad=True)
    with dualad.no_grad():
        w[0] = 5.0
        w[1:].mul_(2.0)
    assert w.is_leaf and w.grad_fn is None
    assert_values_close(w, [5.0, 2.0, 2.0])
    (w * w).sum().backward()
    assert_values_close(w.grad, [10.0, 4.0, 4.0])


def test_index_tensor_changed_after_indexing_is_detected():
    # as in torch: the index tensor is saved for backward, so changing it in place is an error
    # (never a gradient scattered to the new positions)
    x = _x(3, 2, requires_grad=True)
    index = dualad.tensor([0, 0])
    out = x[index]
    index[0] = 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    out = x[dualad.tensor([0, 0])]
    out.sum().backward()
    assert_values_close(x.grad, [[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]])


def test_setitem_on_leaf_requiring_grad_is_an_error():
    x = dualad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 2.0
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[1:][0] = 2.0


def test_setitem_through_a_view_of_a_non_leaf():
    x = dualad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x * 1.0
    row = y[1]
    v = dualad.tensor([10.0, 20.0], requires_grad=True)
    row[[0, 2]] = v
    assert y.grad_fn.name() == "CopySlices"
    (y * dualad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    assert_values_close(x.grad, [[1.0, 2.0, 3.0], [0.0, 5.0, 0.0]])
    assert_values_close(v.grad, [4.0, 6.0])


def test_setitem_complex():
    x = dualad.tensor(np.array([1 + 1j, 2 - 1j, 3j]), requires_grad=True)
    y = x * 1.0
    v = dualad.tensor(np.array(0.5 - 2j), requires_grad=True)
    y[[0, 2]] = v
    w = dualad.tensor(np.array([1j, 2.0, 1 - 1j]))
    dualad.real(y * w).sum().backward()
    assert_values_close(x.grad, np.array([0, 2.0, 0]))
    assert_values_close(v.grad, np.conj(w.numpy()[0] + w.numpy()[2]))


# ---------------------------------------------------------------------------------------------
# new ops: specific semantics


def test_cat_promotes_and_skips_legacy_empty():
    a = dualad.tensor([[1.0, 2.0]], dtype=dualad.float32)
    b = dualad.tensor([[3.0, 4.0]])
    out = dualad.cat([a, b, dualad.zeros(0)])
    assert out.dtype == np.float64 and tuple(out.shape) == (2, 2)
    assert dualad.concatenate([a, b], axis=1).shape == (1, 4)
    assert dualad.concat((a, b)).shape == (2, 2)


def test_cat_gradient_dtypes_follow_inputs():
    a = dualad.tensor([1.0, 2.0], dtype=dualad.float32, requires_grad=True)
    b = dualad.tensor([3.0], requires_grad=True)
    dualad.cat([a, b]).sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64


def test_hstack_vstack_dstack():
    a, b = dualad.tensor([1, 2]), dualad.tensor([3, 4])
    assert dualad.hstack([a, b]).tolist() == [1, 2, 3, 4]
    assert dualad.vstack([a, b]).tolist() == [[1, 2], [3, 4]]
    assert tuple(dualad.dstack([a, b]).shape) == (1, 2, 2)
    assert tuple(dualad.column_stack([a, b]).shape) == (2, 2)
    assert tuple(dualad.atleast_3d(dualad.tensor(1.0)).shape) == (1, 1, 1)
    assert [tuple(t.shape) for t in dualad.atleast_1d(dualad.tensor(1.0), a)] == [(1,), (2,)]


def test_flip_roll_tile_repeat_values():
    x = _x(2, 3)
    assert_values_close(x.flip(0, 1), np.arange(6.0).reshape(2, 3)[::-1, ::-1])
    assert_values_close(dualad.flip(x, (1,)), np.arange(6.0).reshape(2, 3)[:, ::-1])
    assert_values_close(dualad.flip(x, axis=None), np.flip(np.arange(6.0).reshape(2, 3)))
    assert_values_close(x.fliplr(), np.fliplr(np.arange(6.0).reshape(2, 3)))
    assert_values_close(x.flipud(), np.flipud(np.arange(6.0).reshape(2, 3)))
    assert_values_close(
        x.roll((1, -1), (0, 1)), np.roll(np.arange(6.0).reshape(2, 3), (1, -1), (0, 1))
    )
    assert_values_close(x.roll(1, 0).roll(1, 0), np.arange(6.0).reshape(2, 3))
    assert_values_close(x.tile(2, 1, 2), np.tile(np.arange(6.0).reshape(2, 3), (2, 1, 2)))
    assert_values_close(x.repeat(2, 1, 1), np.tile(np.arange(6.0).reshape(2, 3), (2, 1, 1)))
    assert_values_close(x.repeat_interleave(2), np.repeat(np.arange(6.0), 2))


def test_repeat_interleave_tensor_repeats():
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = x.repeat_interleave(dualad.tensor([1, 2]), dim=0)
    assert_values_close(out, [[1, 2], [3, 4], [3, 4.0]])
    out.sum().backward()
    assert_values_close(x.grad, [[1, 1], [2, 2.0]])
    assert_values_close(x.repeat_interleave(dualad.tensor(2)), np.repeat([1.0, 2, 3, 4], 2))
    assert dualad.repeat_interleave(dualad.tensor([2, 0, 1])).tolist() == [0, 0, 2]


def test_diag_and_diag_embed_values():
    v = dualad.tensor([1.0, 2.0])
    assert_values_close(dualad.diag(v, 1), np.diag([1.0, 2.0], 1))
    assert_values_close(dualad.diag(v, -2), np.diag([1.0, 2.0], -2))
    m = _x(3, 4)
    assert_values_close(m.diag(-1), np.diag(np.arange(12.0).reshape(3, 4), -1))
    batch = _x(2, 3)
    out = batch.diag_embed(offset=1, dim1=0, dim2=2)
    assert tuple(out.shape) == (4, 2, 4)
    assert_values_close(out.diagonal(1, 0, 2), batch.numpy())
    assert_values_close(
        m.diagonal(axis1=1, axis2=0), np.diagonal(np.arange(12.0).reshape(3, 4), 0, 1, 0)
    )


def test_tril_triu_with_batch_dims_and_k():
    x = _x(2, 3, 3)
    assert_values_close(x.tril(-1), np.tril(x.numpy(), -1))
    assert_values_close(dualad.triu(x, k=1), np.triu(x.numpy(), 1))


def test_tril_triu_inplace_with_grad():
    x = dualad.tensor(np.ones((3, 3)), requires_grad=True)
    y = x * 2
    y.tril_()
    y.sum().backward()
    assert_values_close(x.grad, 2 * np.tril(np.ones((3, 3))))
    z = dualad.ones(3, 3)
    assert z.triu_(1) is z
    assert_values_close(z, np.triu(np.ones((3, 3)), 1))


# ---------------------------------------------------------------------------------------------
# errors


ERRORS = [
    (lambda: dualad.cat([_x(2, 3), _x(2, 4)]), RuntimeError, "Sizes of tensors must match"),
    (lambda: dualad.cat([_x(2), _x(2, 1)]), RuntimeError, "same number of dimensions"),
    (lambda: dualad.cat([dualad.tensor(1.0)]), RuntimeError, "zero-dimensional"),
    (lambda: dualad.cat([]), RuntimeError, "non-empty"),
    (lambda: dualad.cat(_x(2)), TypeError, "sequence of tensors"),
    (lambda: dualad.cat([_x(2, 3)], dim=2), IndexError, "Dimension out of range"),
    (lambda: dualad.stack([_x(2), _x(3)]), RuntimeError, "equal size"),
    (lambda: _x(5).split([2, 2]), RuntimeError, "sum exactly to 5"),
    (lambda: _x(5).split(0), RuntimeError, "split_size can only be 0"),
    (lambda: _x(5).split(-1), RuntimeError, "non-negative"),
    (lambda: dualad.tensor(1.0).split(1), RuntimeError, "1-dimensional"),
    (lambda: _x(5).chunk(0), RuntimeError, "greater than 0"),
    (lambda: _x(3, 3).diagonal(0, 1, 1), RuntimeError, "cannot be identical"),
    (lambda: _x(3).diagonal(), RuntimeError, "at least 2 dimensions"),
    (lambda: _x(3, 3).diagonal(0, 0, 2), IndexError, "Dimension out of range"),
    (lambda: dualad.diag(_x(2, 2, 2)), RuntimeError, "1D or 2D"),
    (lambda: dualad.diag_embed(dualad.tensor(1.0)), RuntimeError, "at least 1 dimension"),
    (lambda: _x(3).tril(), RuntimeError, "at least 2 dimensions"),
    (lambda: _x(3).triu(), RuntimeError, "at least 2 dimensions"),
    (lambda: _x(3, 3).roll((1, 1), 0), RuntimeError, "shifts and dimensions must align"),
    (lambda: _x(3, 3).roll((1, 1)), RuntimeError, "single int"),
    (lambda: _x(3).tile(-1), RuntimeError, "negative dimension"),
    (lambda: _x(3, 3).repeat(2), RuntimeError, "can not be smaller"),
    (lambda: _x(3).repeat_interleave(-1), RuntimeError, "can not be negative"),
    (lambda: _x(3).repeat_interleave(dualad.tensor([1, 2])), RuntimeError, "same size"),
    (lambda: _x(3, 3).flip(0, 0), RuntimeError, "multiple times"),
    (lambda: _x(3, 3).flip(2), IndexError, "Dimension out of range"),
    (lambda: _x(3).fliplr(), RuntimeError, ">= 2-d"),
    (lambda: _x(3, 3).select(1, 3), IndexError, "out of range"),
    (lambda: dualad.tensor(1.0).select(0, 0), IndexError, "0-dim"),
    (lambda: _x(3, 3).narrow(0, 2, 2), IndexError, "exceeds dimension size"),
    (lambda: _x(3, 4).t().view(12), RuntimeError, "Use .reshape"),
    (lambda: _x(3, 4).reshape(5, -1), RuntimeError, "invalid for input of size 12"),
    (lambda: _x(3, 4).expand(2), RuntimeError, "must be greater or equal"),
    (lambda: _x(3, 4).broadcast_to((2, 4)), RuntimeError, "cannot be broadcast"),
    (lambda: _x(3, 4).permute(0, 0), RuntimeError, "duplicate dims"),
    (lambda: _x(3, 4).unsqueeze(3), IndexError, r"\[-3, 2\], but got 3"),
    (lambda: _x(2).mT, RuntimeError, "matrices"),
    (lambda: dualad.tensor(1.0).unbind(), IndexError, "no dimensions"),
]


@pytest.mark.parametrize("fn, kind, message", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors(fn, kind, message):
    with pytest.raises(kind, match=message):
        fn()


# ---------------------------------------------------------------------------------------------
# batching rules against a loop over the batch (called directly: vmap drives them later)


def _check_batch(name, arrays, bdims, params, size=3):
    op = REGISTRY[name]
    args = tuple(dualad.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays)
    out, out_bdim = op.batch(op, args, bdims, params)
    outs = out if isinstance(out, tuple) else (out,)
    out_bdims = out_bdim if isinstance(out_bdim, tuple) else (out_bdim,)
    for i in range(size):
        single = [np.take(a, i, axis=b) if b is not None else a for a, b in zip(arrays, bdims)]
        expected = op.impl(np, *single, **params)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for o, b, e in zip(outs, out_bdims, expected):
            assert_values_close(np.take(o.numpy(), i, axis=b), e, what=f"{name} example {i}")


def _key(*parts):
    from dualad.ops._keys import IndexKey, _normalize_key

    return IndexKey(_normalize_key(parts))


RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4, 5))  # batch of 3 (dim 0) with logical shape (4, 5)
A1 = np.moveaxis(A, 0, 1)  # the same batch at dim 1
A2 = np.moveaxis(A, 0, 2)

BATCH_CASES = [
    ("flip", (A1,), (1,), {"dims": (0,)}),
    ("roll", (A2,), (2,), {"shifts": (2,), "dims": None}),
    ("roll", (A,), (0,), {"shifts": (1, -1), "dims": (1, 0)}),
    ("tile", (A1,), (1,), {"reps": (2, 1)}),
    ("repeat_interleave", (A1,), (1,), {"repeats": 2, "dim": 1}),
    ("diagonal", (A2,), (2,), {"offset": 1, "dim1": 1, "dim2": 0}),
    ("diag_embed", (A1,), (1,), {"shape": (4, 6, 6), "offset": -1, "dim1": 1, "dim2": 2}),
    ("tril", (A2,), (2,), {"diagonal": 0}),
    ("triu", (A1,), (1,), {"diagonal": -1}),
    ("unbind", (A1,), (1,), {"dim": 1}),
    ("split", (A2,), (2,), {"sizes": (1, 3), "dim": 0}),
    ("stack", (A1, A[0]), (1, None), {"dim": 1}),
    ("cat", (A[0], A2), (None, 2), {"dim": 1}),
    ("getitem", (A1,), (1,), {"index": _key(slice(1, None), Ellipsis, None, -1)}),
    ("index", (A1,), (1,), {"index": _key([0, 2, 2])}),
    ("index", (A2,), (2,), {"index": _key(slice(None), [4, 0])}),
    ("index", (A,), (0,), {"index": _key([1, 0], [2, 2])}),
    ("index", (RNG.standard_normal((3, 2, 4, 5)),), (0,), {"index": _key([1, 0], slice(None), [2, 2])}),
    ("index", (RNG.standard_normal((2, 3, 4, 5)),), (1,), {"index": _key(1, slice(None), [2, 2, 0])}),
    ("index", (A2,), (2,), {"index": _key(np.array([[True, False, True, True, False]] * 4))}),
    ("index_put_zeros", (A1,), (1,), {"index": _key(slice(None), slice(0, 5)), "shape": (4, 7)}),
    ("index_put_zeros", (RNG.standard_normal((2, 3, 4)),), (1,), {"index": _key([1, 0], slice(None), [2, 2]), "shape": (3, 4, 3)}),
    ("index_put_zeros", (RNG.standard_normal((4, 2, 3)),), (2,), {"index": _key([1, 1, 0, 1]), "shape": (3, 2)}),
]  # fmt: skip


@pytest.mark.parametrize(
    "name, arrays, bdims, params", BATCH_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(BATCH_CASES)]
)  # fmt: skip
def test_batch_rules_match_a_loop(name, arrays, bdims, params):
    _check_batch(name, arrays, bdims, params)
