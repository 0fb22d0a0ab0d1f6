"""Products and contractions: matmul, mm, bmm, dot, vdot, inner, outer, tensordot, kron, trace
and einsum (through opt_einsum with cached contraction paths).

Forward values against NumPy, VJPs against central finite differences (every argument, real and
complex), grad-of-grad, JVP rules against finite differences, batching rules against a loop,
the einsum path cache, and the error messages.
"""

from __future__ import annotations

import numpy as np
import opt_einsum
import pytest

import dualad
from dualad._dispatch import REGISTRY
from dualad.ops import einsums as einsum_module
from dualad.testing._numeric import numerical_jvp, numerical_vjp, random_like
from dualad.testing.opdb import linalg as linalg_db

INFOS = {info.name: info for info in linalg_db.OPS}


def _np(t) -> np.ndarray:
    return np.asarray(t.detach()._data)


def _tensor(array, requires_grad=False):
    return dualad.tensor(np.asarray(array), requires_grad=requires_grad)


def _cases(dtypes):
    out = []
    for info in linalg_db.OPS:
        for dtype in dtypes:
            for k, sample in enumerate(info.sample_inputs(dtype)):
                out.append(pytest.param(info, sample, id=f"{info.name}-{dtype}-{k}-{sample.note}"))
    return out


def _call(info, sample, arrays, requires_grad):
    """Run ``info.fn`` with the sample's differentiable arrays replaced by ``arrays``."""
    args, kwargs, leaves = sample.with_leaves(arrays).tensors(requires_grad=requires_grad)
    return info.fn(*args, **kwargs), leaves


def _function(info, sample):
    def f(*arrays):
        with dualad.no_grad():
            out, _ = _call(info, sample, arrays, False)
        return _np(out)

    return f


# ---------------------------------------------------------------------------------------------
# forward values and first/second-order gradients, from the op database entries


@pytest.mark.parametrize("info, sample", _cases(("float64", "complex128", "float32")))
def test_forward_matches_numpy(info, sample):
    out, _ = _call(info, sample, sample.leaves(), False)
    expected = np.asarray(info.ref(*sample.args, **sample.kwargs))
    assert out.dtype == expected.dtype
    tol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(_np(out), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("info, sample", _cases(("float64", "complex128", "float32")))
def test_vjp_matches_finite_differences(info, sample):
    rng = np.random.default_rng(0)
    arrays = sample.leaves()
    out, leaves = _call(info, sample, arrays, True)
    cotangent = random_like(rng, _np(out))
    grads = dualad.autograd.grad(out, leaves, grad_outputs=_tensor(cotangent))
    wide = sample.upcast()
    expected = numerical_vjp(
        _function(info, wide),
        wide.leaves(),
        range(len(arrays)),
        cotangent.astype(np.result_type(cotangent, np.float64)),
    )
    for leaf, grad, fd in zip(leaves, grads, expected):
        assert grad.shape == leaf.shape and grad.dtype == leaf.dtype
        tol = 2e-3 if leaf.dtype in (np.float32, np.complex64) else 1e-6
        np.testing.assert_allclose(_np(grad), fd, rtol=tol, atol=tol)


@pytest.mark.parametrize("info, sample", _cases(("float64", "complex128")))
def test_grad_of_grad_matches_finite_differences(info, sample):
    """d/d(inputs, cotangent) of <v, VJP(inputs, cotangent)> against finite differences."""
    rng = np.random.default_rng(1)
    arrays = sample.leaves()
    out, leaves = _call(info, sample, arrays, True)
    cotangent = random_like(rng, _np(out))
    ct = _tensor(cotangent, requires_grad=True)
    grads = dualad.autograd.grad(out, leaves, grad_outputs=ct, create_graph=True)
    directions = [random_like(rng, a) for a in arrays]
    second = dualad.autograd.grad(
        list(grads), [*leaves, ct], [_tensor(d) for d in directions], allow_unused=True
    )

    def first_order(*values):
        inner, cot = values[:-1], values[-1]
        y, inner_leaves = _call(info, sample, inner, True)
        return [_np(g) for g in dualad.autograd.grad(y, inner_leaves, grad_outputs=_tensor(cot))]

    expected = numerical_vjp(first_order, [*arrays, cotangent], range(len(arrays) + 1), directions)
    for got, fd, like in zip(second, expected, [*arrays, cotangent]):
        got = np.zeros_like(like) if got is None else _np(got)
        np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# JVP rules (called directly: the adjoint identity and finite differences)

JVP_OPS = ("matmul", "mm", "bmm", "dot", "vdot", "trace", "einsum")


def _op_params(info, sample, tensors):
    if info.name == "einsum":
        equation, *operands = tensors
        if isinstance(operands[0], list):
            operands = operands[0]
        explicit = einsum_module._parse(equation, tuple(o.ndim for o in operands))
        return REGISTRY["einsum"], tuple(operands), {"equation": explicit}
    return REGISTRY[info.name], tuple(tensors), {}


@pytest.mark.parametrize(
    "info, sample",
    [p for p in _cases(("float64", "complex128")) if p.values[0].name in JVP_OPS],
)
def test_jvp_rule_matches_finite_differences(info, sample):
    rng = np.random.default_rng(2)
    arrays = sample.leaves()
    args, kwargs, _ = sample.tensors(requires_grad=False)
    op, operands, params = _op_params(info, sample, args)
    out = info.fn(*args, **kwargs)
    tangents = [random_like(rng, a) for a in arrays]
    # tangent of every operand at once, then of each one alone (the others None)
    for chosen in [None, *range(len(arrays))]:
        given = [
            _tensor(t) if chosen is None or k == chosen else None for k, t in enumerate(tangents)
        ]
        tangent_out = op.jvp(tuple(given), (out,), operands, params)
        fd_tangents = [None if g is None else t for g, t in zip(given, tangents)]
        (expected,) = numerical_jvp(_function(info, sample), arrays, fd_tangents)
        assert tuple(tangent_out.shape) == tuple(out.shape)
        np.testing.assert_allclose(_np(tangent_out), expected, rtol=1e-6, atol=1e-7)
    # adjoint identity: Re<ct, J t> == Re<J^T ct, t>
    cotangent = random_like(rng, _np(out))
    with_grad, grad_leaves = _call(info, sample, arrays, True)
    grads = dualad.autograd.grad(with_grad, grad_leaves, grad_outputs=_tensor(cotangent))
    jt = op.jvp(tuple(_tensor(t) for t in tangents), (out,), operands, params)
    lhs = np.real(np.vdot(cotangent, _np(jt)))
    rhs = sum(np.real(np.vdot(_np(g), t)) for g, t in zip(grads, tangents))
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# batching rules (called directly) against a loop over the batch


def _check_batch(name, arrays, bdims, params=None, fn=None):
    op = REGISTRY[name]
    params = params or {}
    tensors = tuple(_tensor(a) for a in arrays)
    out, out_bdim = op.batch(op, tensors, bdims, params)
    size = next(a.shape[b] for a, b in zip(arrays, bdims) if b is not None)
    expected = []
    for i in range(size):
        sliced = [
            _tensor(np.take(a, i, axis=b)) if b is not None else _tensor(a)
            for a, b in zip(arrays, bdims)
        ]
        expected.append(_np(fn(*sliced) if fn else einsum_module.contract(**params)))
    np.testing.assert_allclose(np.moveaxis(_np(out), out_bdim, 0), np.stack(expected), rtol=1e-12)


MATMUL_BATCH = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)),
    ((3,), (2, 3, 2)),
    ((2, 1, 2, 3), (3, 3, 2)),
]


@pytest.mark.parametrize("shapes", MATMUL_BATCH, ids=str)
@pytest.mark.parametrize("bdims", [(0, None), (None, 0), (0, 0), (1, 0)], ids=str)
def test_matmul_batch_rule(shapes, bdims):
    rng = np.random.default_rng(3)
    arrays = []
    for shape, bdim in zip(shapes, bdims):
        a = rng.standard_normal((4, *shape))
        if bdim is not None:
            bdim = min(bdim, len(shape))
            arrays.append(np.moveaxis(a, 0, bdim))
        else:
            arrays.append(a[0])
    bdims = tuple(None if b is None else min(b, len(s)) for b, s in zip(bdims, shapes))
    _check_batch("matmul", arrays, bdims, fn=dualad.matmul)


@pytest.mark.parametrize(
    "name, shapes, fn",
    [
        ("mm", ((2, 3), (3, 4)), dualad.mm),
        ("bmm", ((2, 2, 3), (2, 3, 4)), dualad.bmm),
        ("dot", ((3,), (3,)), dualad.dot),
        ("vdot", ((3,), (3,)), dualad.vdot),
    ],
)
@pytest.mark.parametrize("bdims", [(0, None), (None, 1), (0, 0)], ids=str)
def test_product_batch_rules(name, shapes, fn, bdims):
    rng = np.random.default_rng(4)
    arrays = []
    for shape, bdim in zip(shapes, bdims):
        a = rng.standard_normal((3, *shape)) + 1j * rng.standard_normal((3, *shape))
        arrays.append(a[0] if bdim is None else np.moveaxis(a, 0, bdim))
    _check_batch(name, arrays, bdims, fn=fn)


def test_trace_batch_rule():
    x = np.random.default_rng(5).standard_normal((3, 4, 2))
    _check_batch("trace", [x], (1,), fn=dualad.trace)


@pytest.mark.parametrize(
    "equation, shapes, bdims",
    [
        ("ij,jk->ik", ((2, 3), (3, 4)), (0, None)),
        ("ij,jk->ik", ((2, 3), (3, 4)), (None, 2)),
        ("ii->i", ((3, 3),), (1,)),
        ("i,j->ij", ((3,), (2,)), (0, 0)),
    ],
)
def test_einsum_batch_rule(equation, shapes, bdims):
    rng = np.random.default_rng(6)
    arrays = []
    for shape, bdim in zip(shapes, bdims):
        a = rng.standard_normal((5, *shape))
        arrays.append(a[0] if bdim is None else np.moveaxis(a, 0, bdim))
    _check_batch(
        "einsum",
        arrays,
        bdims,
        {"equation": equation},
        fn=lambda *ops: dualad.einsum(equation, *ops),
    )


# ---------------------------------------------------------------------------------------------
# matmul: every case, complex convention, operators and methods


@pytest.mark.parametrize("sa, sb, note", linalg_db.MATMUL_SHAPES, ids=lambda v: str(v))
def test_matmul_vjp_closed_form_complex(sa, sb, note):
    """grad_a = ct @ b^H and grad_b = a^H @ ct (vectors promoted, batch dims summed)."""
    rng = np.random.default_rng(7)

    def rand(shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    a, b = rand(sa), rand(sb)
    ta, tb = _tensor(a, True), _tensor(b, True)
    out = ta @ tb
    ct = rand(out.shape)
    ga, gb = dualad.autograd.grad(out, (ta, tb), grad_outputs=_tensor(ct))
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    ct2 = ct
    if a.ndim == 1:
        ct2 = np.expand_dims(ct2, -2 if b.ndim > 1 else 0)
    if b.ndim == 1:
        ct2 = np.expand_dims(ct2, -1)
    full_a = ct2 @ np.conj(np.swapaxes(b2, -1, -2))
    full_b = np.conj(np.swapaxes(a2, -1, -2)) @ ct2

    def reduce(full, shape):
        full = full.reshape((*full.shape[: full.ndim - 2], -1)) if len(shape) == 1 else full
        lead = full.ndim - len(shape)
        full = full.sum(axis=tuple(range(lead)))
        axes = tuple(i for i, s in enumerate(shape) if s == 1 and full.shape[i] != 1)
        return full.sum(axis=axes, keepdims=True) if axes else full

    np.testing.assert_allclose(_np(ga), reduce(full_a, sa), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(gb), reduce(full_b, sb), rtol=1e-12, atol=1e-12)


def test_operator_methods_and_node_names():
    a = dualad.randn(2, 3, requires_grad=True)
    b = dualad.randn(3, 4, requires_grad=True)
    np.testing.assert_allclose(_np(a @ b), _np(a) @ _np(b))
    np.testing.assert_allclose(_np(a.mm(b)), _np(a) @ _np(b))
    np.testing.assert_allclose(_np(a.matmul(b)), _np(a) @ _np(b))
    assert (a @ b).grad_fn.name() == "MmBackward0"
    assert a.mm(b).grad_fn.name() == "MmBackward0"
    v = dualad.randn(3, requires_grad=True)
    assert v.dot(v).grad_fn.name() == "DotBackward0"
    assert v.vdot(v).grad_fn.name() == "VdotBackward0"
    assert dualad.randn(2, 2, 2).bmm(dualad.randn(2, 2, 2)).shape == (2, 2, 2)
    assert dualad.randn(3, 3, requires_grad=True).trace().grad_fn.name() == "TraceBackward0"
    assert dualad.einsum("ij->", a).grad_fn.name() == "EinsumBackward0"
    assert v.outer(v).shape == (3, 3)
    assert v.inner(v).shape == ()
    assert v.kron(v).shape == (9,)
    # NumPy arrays are accepted on either side
    np.testing.assert_allclose(_np(dualad.matmul(_np(a), b)), _np(a) @ _np(b))


def test_matmul_with_transposed_views_and_backward():
    base = dualad.randn(4, 3, requires_grad=True)
    x = base.mT  # a non-contiguous view
    y = dualad.randn(4, 2)
    (x @ y).sum().backward()
    np.testing.assert_allclose(_np(base.grad), _np(y).sum(1)[:, None] * np.ones((4, 3)))


def test_trace_gradient_is_identity_times_cotangent():
    x = dualad.randn(3, 4, requires_grad=True)
    (g,) = dualad.autograd.grad(dualad.trace(x), x, grad_outputs=dualad.tensor(2.5))
    np.testing.assert_allclose(_np(g), 2.5 * np.eye(3, 4))


def test_vdot_conjugates_first_argument():
    a = np.array([1 + 2j, 3 - 1j])
    b = np.array([2 - 1j, 1j])
    out = dualad.vdot(_tensor(a), _tensor(b))
    assert complex(_np(out)) == pytest.approx(np.sum(np.conj(a) * b))
    assert complex(_np(dualad.dot(_tensor(a), _tensor(b)))) == pytest.approx(np.sum(a * b))


# ---------------------------------------------------------------------------------------------
# einsum specifics


def test_einsum_equations_forward_and_vjp_sweep():
    """~20 equations: forward vs np.einsum, VJP vs finite differences for every operand."""
    rng = np.random.default_rng(8)
    for equation, shapes, note in linalg_db.EINSUM_CASES:
        arrays = [rng.standard_normal(s) for s in shapes]
        leaves = [_tensor(a, True) for a in arrays]
        out = dualad.einsum(equation, *leaves)
        np.testing.assert_allclose(_np(out), np.einsum(equation, *arrays), err_msg=note)
        ct = rng.standard_normal(out.shape)
        grads = dualad.autograd.grad(out, leaves, grad_outputs=_tensor(ct))
        fd = numerical_vjp(
            lambda *xs, eq=equation: np.einsum(eq, *xs), arrays, range(len(arrays)), ct
        )
        for g, e in zip(grads, fd):
            np.testing.assert_allclose(_np(g), e, rtol=1e-6, atol=1e-7, err_msg=note)


def test_einsum_spellings():
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    expected = a @ b
    ta, tb = _tensor(a), _tensor(b)
    np.testing.assert_allclose(_np(dualad.einsum("ij,jk->ik", [ta, tb])), expected)
    np.testing.assert_allclose(_np(dualad.einsum("i j , j k -> i k", ta, tb)), expected)
    np.testing.assert_allclose(_np(dualad.einsum(ta, [0, 1], tb, [1, 2], [0, 2])), expected)
    np.testing.assert_allclose(_np(dualad.einsum(ta, [0, 1], tb, [1, 2])), expected)
    np.testing.assert_allclose(_np(dualad.einsum("ij,jk", a, b)), expected)  # NumPy operands
    # implicit output: alphabetical (upper case first), ellipsis dims first
    x = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(_np(dualad.einsum("bAa", _tensor(x))), np.einsum("bAa", x))
    np.testing.assert_allclose(_np(dualad.einsum("...ji", _tensor(x))), np.einsum("...ji", x))
    # an ellipsis left out of an explicit output is summed (PyTorch)
    np.testing.assert_allclose(_np(dualad.einsum("...ij->ij", _tensor(x))), x.sum(0))


def test_einsum_result_is_not_a_view_of_its_operand():
    x = dualad.tensor(np.arange(9.0).reshape(3, 3))
    for equation in ("ij->ji", "ii->i", "ij->ij", "ij"):
        out = dualad.einsum(equation, x)
        out += 100.0
        np.testing.assert_allclose(_np(x), np.arange(9.0).reshape(3, 3))


def test_einsum_path_cache_is_used(monkeypatch):
    einsum_module.clear_einsum_caches()
    calls = []
    original = opt_einsum.contract_expression

    def counting(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(einsum_module.opt_einsum, "contract_expression", counting)
    rng = np.random.default_rng(10)
    a = _tensor(rng.standard_normal((2, 3)), True)
    b = _tensor(rng.standard_normal((3, 4)), True)
    c = _tensor(rng.standard_normal((4, 5)), True)
    dualad.einsum("ij,jk,kl->il", a, b, c)
    assert len(einsum_module._PATH_CACHE) == 1 and len(calls) == 1
    out = dualad.einsum("ij,jk,kl->il", a, b, c)
    assert len(einsum_module._PATH_CACHE) == 1 and len(calls) == 1  # second call: cache hit
    out.sum().backward()  # three VJP contractions, each a new (equation, shapes): three paths
    after_first_backward = len(calls)
    assert after_first_backward == 4 and len(einsum_module._PATH_CACHE) == 4
    dualad.einsum("ij,jk,kl->il", a, b, c).sum().backward()
    assert len(calls) == after_first_backward  # backward reuses its cached paths too
    # other shapes: a new path
    dualad.einsum("ij,jk,kl->il", a, b, _tensor(rng.standard_normal((4, 2))))
    assert len(calls) == after_first_backward + 1
    einsum_module.clear_einsum_caches()


def test_einsum_grad_of_grad_through_einsum_ops():
    """The backward of einsum records einsum nodes itself (differentiable again)."""
    a = dualad.randn(3, 3, requires_grad=True)
    b = dualad.randn(3, requires_grad=True)
    out = dualad.einsum("ii,i->", a, b)
    ga, gb = dualad.autograd.grad(out, (a, b), create_graph=True)
    assert ga.grad_fn is not None and gb.grad_fn.name() == "EinsumBackward0"
    np.testing.assert_allclose(_np(ga), np.diag(_np(b)))
    (h,) = dualad.autograd.grad(gb.sum(), a)
    np.testing.assert_allclose(_np(h), np.eye(3))


def test_float32_stays_float32():
    a = dualad.randn(2, 3, dtype=dualad.float32, requires_grad=True)
    b = dualad.randn(3, dtype=dualad.float32, requires_grad=True)
    for out in (a @ b, dualad.einsum("ij,j->i", a, b), dualad.inner(a, b)):
        assert out.dtype == np.float32
        ga, gb = dualad.autograd.grad(out.sum(), (a, b))
        assert ga.dtype == np.float32 and gb.dtype == np.float32


# ---------------------------------------------------------------------------------------------
# errors name the op and the shapes


@pytest.mark.parametrize(
    "call, pattern",
    [
        (
            lambda: dualad.matmul(dualad.ones(2, 3), dualad.ones(4, 5)),
            r"dualad\.matmul: mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)",
        ),
        (
            lambda: dualad.ones(2, 2, 3) @ dualad.ones(3, 3, 4),
            r"dualad\.matmul: shapes \(2, 2, 3\) and \(3, 3, 4\).*batch dimensions",
        ),
        (
            lambda: dualad.ones(3) @ dualad.ones(4),
            r"dualad\.matmul: inconsistent tensor size.*\[3\].*\[4\]",
        ),
        (
            lambda: dualad.matmul(dualad.ones(3), dualad.tensor(2.0)),
            r"both arguments to matmul need to be at least 1D, but they are 1D and 0D",
        ),
        (lambda: dualad.matmul(dualad.ones(3), 2.0), r"need to be at least 1D"),
        (
            lambda: dualad.mm(dualad.ones(3), dualad.ones(3, 3)),
            r"dualad\.mm: self must be a matrix.*\(3,\)",
        ),
        (
            lambda: dualad.mm(dualad.ones(2, 3), dualad.ones(2, 3)),
            r"dualad\.mm: mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)",
        ),
        (
            lambda: dualad.bmm(dualad.ones(2, 3), dualad.ones(2, 3, 3)),
            r"dualad\.bmm: batch1 must be a 3D tensor",
        ),
        (
            lambda: dualad.bmm(dualad.ones(2, 2, 3), dualad.ones(1, 3, 3)),
            r"dualad\.bmm: Expected size for first two dimensions of batch2 tensor to be: \[2, 3\]",
        ),
        (
            lambda: dualad.dot(dualad.ones(2, 2), dualad.ones(2)),
            r"dualad\.dot: 1D tensors expected, but got 2D and 1D",
        ),
        (
            lambda: dualad.vdot(dualad.ones(2), dualad.ones(3)),
            r"dualad\.vdot: inconsistent tensor size",
        ),
        (
            lambda: dualad.inner(dualad.ones(2, 3), dualad.ones(2)),
            r"dualad\.inner: .*last dimension must match.*\(2, 3\) and \(2,\)",
        ),
        (
            lambda: dualad.outer(dualad.ones(2, 3), dualad.ones(2)),
            r"dualad\.outer: Expected 1-D argument self, but got 2-D",
        ),
        (
            lambda: dualad.tensordot(dualad.ones(2, 3), dualad.ones(4, 2), dims=1),
            r"dualad\.tensordot: contracted dimensions need to match.*size 3 in dim 1.*size 4",
        ),
        (
            lambda: dualad.tensordot(dualad.ones(2, 3), dualad.ones(3, 2), dims=([0], [0, 1])),
            r"dualad\.tensordot: both dimension lists should have same length",
        ),
        (
            lambda: dualad.trace(dualad.ones(2, 2, 2)),
            r"dualad\.trace: expected a matrix, but got tensor with dim 3",
        ),
        (
            lambda: dualad.einsum("ij,jk->ik", dualad.ones(2, 3), dualad.ones(4, 5)),
            r"dualad\.einsum: .*subscript 'j' has size 3 for operand 0 but size 4 for operand 1",
        ),
        (
            lambda: dualad.einsum("ij,jk->ik", dualad.ones(2, 3)),
            r"dualad\.einsum: fewer operands were provided than specified",
        ),
        (
            lambda: dualad.einsum("ij->ik", dualad.ones(2, 3)),
            r"dualad\.einsum: output subscript 'k' does not appear",
        ),
        (
            lambda: dualad.einsum("ij->ii", dualad.ones(2, 3)),
            r"dualad\.einsum: output subscript 'i' appears more than once",
        ),
        (
            lambda: dualad.einsum("ijk->i", dualad.ones(2, 3)),
            r"dualad\.einsum: the number of subscripts in the equation \(3\) does not match the "
            r"number of dimensions \(2\) for operand 0",
        ),
        (
            lambda: dualad.einsum("ii->i", dualad.ones(2, 3)),
            r"dualad\.einsum: subscript 'i' is repeated for operand 0 but the sizes don't match",
        ),
        (lambda: dualad.einsum("i1->i", dualad.ones(2, 3)), r"dualad\.einsum: invalid subscript"),
        (lambda: dualad.einsum("ij"), r"dualad\.einsum: must provide at least one operand"),
    ],
)
def test_errors(call, pattern):
    with pytest.raises(RuntimeError, match=pattern):
        call()


def test_errors_with_grad_recording_too():
    a = dualad.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"dualad\.matmul: .*2x3 and 2x3"):
        a @ a
    with pytest.raises(RuntimeError, match=r"dualad\.einsum: .*size 3 for operand 0"):
        dualad.einsum("ij,jk", a, a)


# ---------------------------------------------------------------------------------------------
# CuPy (the same impls with xp = cupy; opt_einsum's cupy backend)


def _cuda_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda_available(), reason="needs CuPy and a CUDA GPU")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 3, 3))
    b = rng.standard_normal((3, 4))
    v = rng.standard_normal(3)

    def run(device):
        ta = dualad.tensor(a, device=device, requires_grad=True)
        tb = dualad.tensor(b, device=device, requires_grad=True)
        tv = dualad.tensor(v, device=device, requires_grad=True)
        loss = (
            (ta @ tb).sum()
            + dualad.einsum("bii,i->", ta, tv)
            + dualad.einsum("...ij,jk->...ik", ta, tb).sum()
            + dualad.trace(ta[0])
            + dualad.dot(tv, tv)
            + dualad.tensordot(ta, tb, dims=1).sum()
        )
        grads = dualad.autograd.grad(loss, (ta, tb, tv))
        return [np.asarray(t.detach().cpu()._data) for t in (loss, *grads)]

    for got, expected in zip(run("cuda"), run("cpu")):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
