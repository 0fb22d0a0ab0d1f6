"""Reductions and scans: sum, mean, prod, var/std, amax/amin, max/min, argmax/argmin,
logsumexp, norm, cumsum/cumprod, all/any/count_nonzero, nansum/nanmean.

Forward values against NumPy; VJPs against central finite differences (float64, float32,
complex); grad-of-grad; JVP rules against finite differences; batching rules against a loop;
PyTorch's gradient conventions (ties, zeros in products, norm at 0, selected indices); named
tuple results; error messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import fwd
from dualad._dispatch import REGISTRY
from dualad.testing._numeric import numerical_jvp, numerical_vjp, random_like
from dualad.testing.opdb import reductions as reductions_db

INF = float("inf")
INFOS = {info.name: info for info in reductions_db.OPS}
DIFF_INFOS = [info for info in reductions_db.OPS if info.differentiable]


def _np(t) -> np.ndarray:
    return np.asarray(t.detach()._data)


def _tensor(array, requires_grad=False):
    return dualad.tensor(np.asarray(array), requires_grad=requires_grad)


def _outputs(out) -> list:
    """The tensor outputs of a call (named tuples and plain tuples flattened)."""
    return list(out) if isinstance(out, tuple) else [out]


def _differentiable_outputs(out) -> list:
    return [o for o in _outputs(out) if o.dtype.kind in "fc"]


def _cases(infos, dtypes, *, max_per_info=None):
    out = []
    for info in infos:
        for dtype in dtypes:
            if dtype not in info.dtypes:
                continue
            samples = info.sample_inputs(dtype)[:max_per_info]
            for k, sample in enumerate(samples):
                out.append(pytest.param(info, sample, id=f"{info.name}-{dtype}-{k}-{sample.note}"))
    return out


def _call(info, sample, array, requires_grad):
    args, kwargs, leaves = sample.with_leaves([array]).tensors(requires_grad=requires_grad)
    return info.fn(*args, **kwargs), leaves


def _function(info, sample):
    """The op as a NumPy function of its (single) differentiable input: float outputs only."""

    def f(array):
        with dualad.no_grad():
            out, _ = _call(info, sample, array, False)
        return [_np(o) for o in _differentiable_outputs(out)]

    return f


def _assert_close(actual, expected, rtol=1e-6, atol=1e-7, what=""):
    np.testing.assert_allclose(
        np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol, err_msg=what
    )


# ---------------------------------------------------------------------------------------------
# forward values against NumPy (every OpInfo entry, float64 and complex128 where claimed)


@pytest.mark.parametrize(
    "info, sample",
    _cases([i for i in reductions_db.OPS if i.ref], ("float64", "complex128", "float32")),
)
def test_forward_matches_numpy(info, sample):
    expected = info.ref(*sample.args, **sample.kwargs)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    args, kwargs, _ = sample.tensors(requires_grad=False)
    actual = _outputs(info.fn(*args, **kwargs))
    assert len(actual) == len(expected)
    tol = 1e-5 if sample.args[0].dtype in (np.float32, np.complex64) else 1e-12
    for a, e in zip(actual, expected):
        e = np.asarray(e)
        assert tuple(a.shape) == e.shape
        assert a.dtype == e.dtype, f"{a.dtype} != {e.dtype}"
        _assert_close(_np(a), e, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------------------------
# first order: VJP against finite differences


def _check_vjp(info, sample, rtol=1e-6, atol=1e-7):
    rng = np.random.default_rng(5)
    x = sample.leaves()[0]
    out, (leaf,) = _call(info, sample, x, True)
    outs = _differentiable_outputs(out)
    cts = [random_like(rng, _np(o)) for o in outs]
    grads = dualad.autograd.grad(outs, leaf, [_tensor(c) for c in cts])
    assert grads[0].shape == leaf.shape and grads[0].dtype == leaf.dtype
    x64 = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    (expected,) = numerical_vjp(
        _function(info, sample),
        [x64],
        (0,),
        [c.astype(x64.dtype if c.dtype.kind == "c" else np.float64) for c in cts],
    )
    _assert_close(_np(grads[0]), expected, rtol=rtol, atol=atol, what=info.name)


@pytest.mark.parametrize("info, sample", _cases(DIFF_INFOS, ("float64", "complex128")))
def test_vjp_matches_finite_differences(info, sample):
    _check_vjp(info, sample, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("info, sample", _cases(DIFF_INFOS, ("float32",), max_per_info=4))
def test_vjp_float32(info, sample):
    _check_vjp(info, sample, rtol=2e-3, atol=2e-3)


# ---------------------------------------------------------------------------------------------
# second order: grad of grad against finite differences of the gradient


def _first_order(info, sample):
    def g(array, ct):
        out, (leaf,) = _call(info, sample, array, True)
        outs = _differentiable_outputs(out)
        (grad,) = dualad.autograd.grad(outs, leaf, [_tensor(ct)])
        return _np(grad)

    return g


@pytest.mark.parametrize(
    "info, sample",
    _cases([i for i in DIFF_INFOS if i.twice_differentiable], ("float64", "complex128")),
)
def test_grad_of_grad_matches_finite_differences(info, sample):
    rng = np.random.default_rng(7)
    x = sample.leaves()[0]
    out, (leaf,) = _call(info, sample, x, True)
    outs = _differentiable_outputs(out)
    if len(outs) != 1:
        pytest.skip("several differentiable outputs (covered by the registry tests)")
    ct = random_like(rng, _np(outs[0]))
    ct_tensor = _tensor(ct, True)
    (grad,) = dualad.autograd.grad(outs, leaf, [ct_tensor], create_graph=True)
    direction = random_like(rng, x)
    second = dualad.autograd.grad(
        [grad], [leaf, ct_tensor], [_tensor(direction)], allow_unused=True
    )
    expected = numerical_vjp(_first_order(info, sample), [x, ct], (0, 1), [direction])
    for s, e, like in zip(second, expected, (x, ct)):
        actual = np.zeros_like(like) if s is None else _np(s)
        _assert_close(actual, e, rtol=1e-5, atol=1e-5, what=info.name)


# ---------------------------------------------------------------------------------------------
# JVP rules (called directly: the op, its params and outputs come from the recorded node)


def _node_of(out):
    return next(o for o in _outputs(out) if o.grad_fn is not None).grad_fn


@pytest.mark.parametrize("info, sample", _cases(DIFF_INFOS, ("float64", "complex128")))
def test_jvp_rule_matches_finite_differences(info, sample):
    rng = np.random.default_rng(11)
    x = sample.leaves()[0]
    out, (leaf,) = _call(info, sample, x, True)
    node = _node_of(out)
    source = node.next_functions[0][0]
    nodes = {id(o.grad_fn) for o in _outputs(out) if o.grad_fn is not None}
    if source is None or source.name() != "AccumulateGrad" or len(nodes) > 1:
        pytest.skip("composite or reshaped input: the recorded op is not the whole function")
    outs = tuple(o.detach() for o in _outputs(out))
    tangent = random_like(rng, x)
    arg = leaf.detach()
    result = node._op.jvp((_tensor(tangent),), outs, (arg,), node._params)
    result = result if isinstance(result, tuple) else (result,)
    expected = numerical_jvp(lambda a: _function(info, sample)(a), [x], [tangent])
    floats = [r for r in result if r is not None]
    assert len(floats) == len(expected)
    for r, e in zip(floats, expected):
        _assert_close(_np(r), e, rtol=1e-6, atol=1e-6, what=info.name)


def test_jvp_rules_of_scans_and_prod_with_zeros():
    rng = np.random.default_rng(3)
    x = np.array([[1.5, 0.0, -0.7, 2.0, 0.0], [0.3, 1.1, 0.0, -1.2, 0.9]])
    t = rng.uniform(-1, 1, x.shape)
    cases = [
        (dualad.cumprod, {"dim": 1}, lambda a: np.cumprod(a, axis=1)),
        (dualad.prod, {"dim": 1}, lambda a: np.prod(a, axis=1)),
        (dualad.prod, {}, np.prod),
        (dualad.cumsum, {"dim": 0}, lambda a: np.cumsum(a, axis=0)),
    ]
    for fn, kwargs, ref in cases:
        y = fn(_tensor(x, True), **kwargs)
        node = y.grad_fn
        tangent = node._op.jvp((_tensor(t),), (y.detach(),), (_tensor(x),), node._params)
        (expected,) = numerical_jvp(ref, [x], [t])
        _assert_close(_np(tangent), expected, rtol=1e-6, atol=1e-8, what=fn.__name__)


def test_jvp_of_max_with_dim_returns_no_tangent_for_indices():
    x = _tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], True)
    values, indices = dualad.max(x, dim=1)
    node = values.grad_fn
    t = _tensor(np.arange(6.0).reshape(2, 3))
    tangent_values, tangent_indices = node._op.jvp((t,), (values, indices), (x,), node._params)
    _assert_close(_np(tangent_values), [1.0, 3.0])
    assert tangent_indices is None


# ---------------------------------------------------------------------------------------------
# batching rules against a loop over examples


BATCH_CASES = [
    (dualad.sum, {"dim": 1}),
    (dualad.prod, {"dim": (0, 1)}),
    (dualad.var, {"dim": 0, "keepdim": True}),
    (dualad.std, {}),
    (dualad.amax, {"dim": -1}),
    (dualad.logsumexp, {"dim": 0}),
    (dualad.norm, {"p": 3, "dim": 1}),
    (dualad.cumsum, {"dim": 1}),
    (dualad.cumprod, {"dim": 0}),
    (lambda x, **k: dualad.max(x, 1, **k), {"keepdim": True}),
    (lambda x, **k: dualad.min(x, 0, **k), {}),
]


@pytest.mark.parametrize("bdim", [0, 1, 2])
@pytest.mark.parametrize("fn, kwargs", BATCH_CASES)
def test_batch_rule_matches_loop(fn, kwargs, bdim):
    rng = np.random.default_rng(1)
    examples = rng.uniform(0.5, 1.5, (4, 3, 5))
    batched = np.moveaxis(examples, 0, bdim)
    out = fn(_tensor(examples[0], True), **kwargs)
    node = _node_of(out)
    result, out_bdims = node._op.batch(node._op, (_tensor(batched),), (bdim,), node._params)
    results = result if isinstance(result, tuple) else (result,)
    out_bdims = out_bdims if isinstance(out_bdims, tuple) else (out_bdims,)
    for k, (r, b) in enumerate(zip(results, out_bdims)):
        expected = np.stack([_np(_outputs(fn(_tensor(e), **kwargs))[k]) for e in examples])
        _assert_close(np.moveaxis(_np(r), b, 0), expected)


@pytest.mark.parametrize("bdim", [0, 2])
@pytest.mark.parametrize(
    "name, params",
    [
        ("argmax", {"dim": None, "keepdim": False}),
        ("argmin", {"dim": None, "keepdim": True}),
        ("argmax", {"dim": 1, "keepdim": False}),
        ("all", {"dims": (0,), "keepdim": False}),
        ("any", {"dims": (0, 1), "keepdim": True}),
        ("count_nonzero", {"dims": (1,), "keepdim": False}),
    ],
)
def test_batch_rule_of_nondifferentiable_reductions(name, params, bdim):
    rng = np.random.default_rng(2)
    examples = rng.uniform(-1, 1, (4, 3, 5)).round()
    op = REGISTRY[name]
    batched = _tensor(np.moveaxis(examples, 0, bdim))
    result, out_bdim = op.batch(op, (batched,), (bdim,), params)
    expected = np.stack([_np(dualad._dispatch.apply(op, _tensor(e), **params)) for e in examples])
    np.testing.assert_array_equal(np.moveaxis(_np(result), out_bdim, 0), expected)


# ---------------------------------------------------------------------------------------------
# PyTorch's conventions


@pytest.mark.parametrize("fn", [dualad.max, dualad.min])
def test_ties_in_full_max_min_share_the_gradient(fn):
    # seed: test_min_max_median_backprops_to_all_values
    for values in ([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [float("nan")] * 3):
        x = dualad.tensor(values, requires_grad=True)
        fn(x).backward()
        assert float(_np(x.grad).sum()) == 1.0
        assert int((_np(x.grad) == 1 / 3).sum()) == 3


def test_ties_in_amax_amin_share_the_gradient_per_group():
    x = _tensor([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]], True)
    dualad.amax(x, dim=1).sum().backward()
    _assert_close(_np(x.grad), [[0.5, 0, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    y = _tensor([[3.0, 1.0], [1.0, 0.0]], True)
    dualad.amin(y, dim=(0, 1)).backward()
    _assert_close(_np(y.grad), [[0, 0], [0, 1.0]])
    z = _tensor([[1.0, 1.0], [0.0, 1.0]], True)
    dualad.amin(z, dim=0, keepdim=True).backward(_tensor([[2.0, 4.0]]))
    _assert_close(_np(z.grad), [[0, 2.0], [2.0, 2.0]])


def test_max_with_dim_sends_the_gradient_to_the_selected_index_only():
    x = _tensor([[1.0, 4.0, 4.0], [2.0, 2.0, 0.0]], True)
    values, indices = dualad.max(x, dim=1)
    np.testing.assert_array_equal(_np(indices), [1, 0])
    values.backward(_tensor([10.0, 20.0]))
    _assert_close(_np(x.grad), [[0, 10.0, 0], [20.0, 0, 0]])
    y = _tensor([[1.0, 4.0], [2.0, 0.0]], True)
    dualad.min(y, dim=0, keepdim=True).values.sum().backward()
    _assert_close(_np(y.grad), [[1.0, 0], [0, 1.0]])


def test_prod_gradient_with_zeros_is_exact():
    for values in ([2.0, 0.0, 3.0, -1.5], [0.0, 2.0, 0.0, 5.0], [0.0, 0.0, 0.0, 0.0]):
        x = _tensor(values, True)
        dualad.prod(x).backward()
        v = np.asarray(values)
        expected = [np.prod(np.delete(v, i)) for i in range(v.size)]
        _assert_close(_np(x.grad), expected)
        assert np.all(np.isfinite(_np(x.grad)))
    x = _tensor([[2.0, 0.0], [3.0, 4.0], [0.0, 0.0]], True)
    dualad.prod(x, dim=1).sum().backward()
    _assert_close(_np(x.grad), [[0.0, 2.0], [4.0, 3.0], [0.0, 0.0]])


def test_prod_hessian_at_zero_is_exact():
    v = np.array([1.5, 0.0, -2.0, 0.5])
    x = _tensor(v, True)
    (grad,) = dualad.autograd.grad(dualad.prod(x), x, create_graph=True)
    rows = [_np(dualad.autograd.grad(grad[i], x, retain_graph=True)[0]) for i in range(4)]
    expected = np.array(
        [[0.0 if i == j else np.prod(np.delete(v, [i, j])) for j in range(4)] for i in range(4)]
    )
    _assert_close(np.stack(rows), expected)


def test_cumprod_gradient_with_zeros_is_exact():
    v = np.array([2.0, 0.0, 3.0, 0.0, 4.0])
    x = _tensor(v, True)
    ct = np.array([1.0, -1.0, 0.5, 2.0, 1.5])
    dualad.cumprod(x, dim=0).backward(_tensor(ct))
    (expected,) = numerical_vjp(lambda a: np.cumprod(a), [v], (0,), ct)
    _assert_close(_np(x.grad), expected)
    assert np.all(np.isfinite(_np(x.grad)))


def test_norm_at_zero_has_zero_gradient():
    x = dualad.zeros(3, requires_grad=True)
    dualad.norm(x).backward()
    _assert_close(_np(x.grad), [0.0, 0.0, 0.0])
    y = dualad.zeros((2, 2), requires_grad=True)
    (grad,) = dualad.autograd.grad(y.norm(dim=1).sum(), y)
    _assert_close(_np(grad), np.zeros((2, 2)))
    z = _tensor([[0.0, 0.0], [3.0, 4.0]], True)
    z.norm(dim=1).sum().backward()
    _assert_close(_np(z.grad), [[0, 0], [0.6, 0.8]])


def test_std_of_constant_has_zero_gradient():
    x = _tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], True)
    dualad.std(x, dim=1).sum().backward()
    _assert_close(_np(x.grad), [[0, 0, 0], [-0.5, 0, 0.5]])


def test_norm_variants_match_numpy():
    x = np.array([[3.0, -4.0, 0.5], [1.0, 2.0, -2.0]])
    t = _tensor(x)
    _assert_close(_np(dualad.norm(t)), np.linalg.norm(x))
    _assert_close(_np(t.norm(p="fro")), np.linalg.norm(x, "fro"))
    _assert_close(_np(t.norm(p=1, dim=1)), np.linalg.norm(x, 1, axis=1))
    _assert_close(_np(t.norm(p=INF, dim=0)), np.linalg.norm(x, INF, axis=0))
    _assert_close(_np(t.norm(p=-INF, dim=1, keepdim=True)), np.min(np.abs(x), 1, keepdims=True))
    _assert_close(_np(t.norm(p=0)), 6.0)
    _assert_close(_np(t.norm(p=3, dim=-1)), np.sum(np.abs(x) ** 3, 1) ** (1 / 3))
    _assert_close(_np(t.norm(None)), np.linalg.norm(x))
    z = _tensor([3 + 4j, 1 - 1j])
    assert z.norm().dtype == np.float64
    _assert_close(_np(z.norm()), np.sqrt(27.0))


def test_norm_inf_ties_share_the_gradient():
    x = _tensor([3.0, -3.0, 1.0], True)
    dualad.norm(x, p=INF).backward()
    _assert_close(_np(x.grad), [0.5, -0.5, 0.0])


def test_logsumexp_is_stable_and_handles_infinities():
    x = _tensor([1000.0, 1000.0, -INF], True)
    y = dualad.logsumexp(x, dim=0)
    _assert_close(_np(y), 1000.0 + np.log(2.0))
    y.backward()
    _assert_close(_np(x.grad), [0.5, 0.5, 0.0])
    z = _tensor([[-INF, -INF], [0.0, -INF]], True)
    out = dualad.logsumexp(z, dim=1)
    assert _np(out)[0] == -INF and _np(out)[1] == 0.0
    out.sum().backward()
    _assert_close(_np(z.grad), [[0.0, 0.0], [1.0, 0.0]])
    assert _np(dualad.logsumexp(_tensor([INF, 1.0]))) == INF
    assert _np(dualad.logsumexp(dualad.zeros((0, 2)), dim=0)).tolist() == [-INF, -INF]


def test_logsumexp_of_complex_input():
    # PyTorch supports complex logsumexp (dualad raised "complex numbers are not ordered"): the
    # principal log, stable with a real shift (the largest real part); backward is the cotangent
    # times conj(softmax), the jvp sum(t * softmax) (numbers from torch 2.13)
    x0 = np.array([[0.3 + 0.2j, -0.5 + 0.7j], [0.1 - 0.4j, 0.9 + 0.2j]])
    x = _tensor(x0, True)
    y = dualad.logsumexp(x, dim=1)
    _assert_close(_np(y), np.log(np.exp(x0).sum(1)))
    _assert_close(_np(y), [0.6442037 + 0.3532858j, 1.2322686 + 0.0169952j], atol=1e-6)
    y.backward(_tensor([1 + 0.5j, -0.3 + 0.2j]))
    expected = [[0.6463630 + 0.4584585j, 0.3536370 + 0.0415415j], [-0.1145124 + 0.0197756j]]
    expected[1].append(-0.1854877 + 0.1802244j)
    _assert_close(_np(x.grad), expected, atol=1e-6)
    big = _tensor([1000.0 + 1.0j, 1000.0 - 0.5j])
    _assert_close(_np(dualad.logsumexp(big, dim=0)), 1000.0 + np.log(np.exp(1j) + np.exp(-0.5j)))
    with fwd.dual_level():
        d = fwd.make_dual(_tensor(x0), _tensor(np.full((2, 2), 0.5 - 0.2j)))
        t = fwd.unpack_dual(dualad.logsumexp(d, 1)).tangent
    _assert_close(_np(t), [0.5 - 0.2j, 0.5 - 0.2j])


def test_logsumexp_of_integers_is_floating():
    out = dualad.logsumexp(_tensor([1, 2, 3]), dim=0)
    assert out.dtype == np.float64
    _assert_close(_np(out), np.log(np.sum(np.exp([1.0, 2.0, 3.0]))))


def test_nansum_and_nanmean_ignore_nan_with_zero_gradient():
    x = _tensor([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0]], True)
    s = dualad.nansum(x, dim=1)
    _assert_close(_np(s), [4.0, 2.0])
    m = dualad.nanmean(x, dim=1)
    _assert_close(_np(m), [2.0, 2.0])
    (m.sum() + s.sum()).backward()
    _assert_close(_np(x.grad), [[1.5, 0, 1.5], [0, 0, 2.0]])


# ---------------------------------------------------------------------------------------------
# complex inputs (PyTorch's convention: grad = dL/dRe + i dL/dIm)


@pytest.mark.parametrize(
    "fn, kwargs",
    [
        (dualad.sum, {"dim": 0}),
        (dualad.mean, {}),
        (dualad.prod, {"dim": 1}),
        (dualad.cumsum, {"dim": 1}),
        (dualad.cumprod, {"dim": 0}),
        (dualad.var, {"dim": 1}),
        (dualad.norm, {"p": 1.5}),
    ],
)
def test_complex_vjp_real_and_imaginary_parts(fn, kwargs):
    rng = np.random.default_rng(4)
    z = rng.uniform(-1, 1, (3, 4)) + 1j * rng.uniform(-1, 1, (3, 4))
    x = _tensor(z, True)
    y = fn(x, **kwargs)
    ct = random_like(rng, _np(y))
    (grad,) = dualad.autograd.grad(y, x, _tensor(ct))

    def loss(re, im):
        with dualad.no_grad():
            out = _np(fn(_tensor(re + 1j * im), **kwargs))
        return float(np.real(np.sum(np.conj(ct) * out)))

    eps = 1e-6
    d_re = np.zeros(z.shape)
    d_im = np.zeros(z.shape)
    for i in np.ndindex(z.shape):
        e = np.zeros(z.shape)
        e[i] = eps
        d_re[i] = (loss(z.real + e, z.imag) - loss(z.real - e, z.imag)) / (2 * eps)
        d_im[i] = (loss(z.real, z.imag + e) - loss(z.real, z.imag - e)) / (2 * eps)
    _assert_close(_np(grad).real, d_re, atol=1e-7)
    _assert_close(_np(grad).imag, d_im, atol=1e-7)
    assert grad.dtype == np.complex128


def test_complex_prod_with_zero():
    x = _tensor([1 + 2j, 0j, 3 - 1j], True)
    dualad.prod(x).backward(_tensor(1.0 + 0j))
    _assert_close(_np(x.grad), np.conj([0, (1 + 2j) * (3 - 1j), 0]))


# ---------------------------------------------------------------------------------------------
# results: named tuples, dtypes, shapes, methods


def test_max_min_with_dim_return_named_tuples():
    x = _tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], True)
    result = dualad.max(x, dim=1)
    assert type(result).__name__ == "max" and result._fields == ("values", "indices")
    values, indices = result
    assert values is result.values and indices is result[1]
    _assert_close(_np(values), [5.0, 7.0])
    assert indices.dtype == np.int64 and not indices.requires_grad
    assert values.requires_grad and values.grad_fn.name() == "MaxBackward0"
    kept = x.min(dim=-1, keepdim=True)
    assert type(kept).__name__ == "min"
    assert tuple(kept.values.shape) == (2, 1) and tuple(kept.indices.shape) == (2, 1)
    np.testing.assert_array_equal(_np(kept.indices), [[0], [1]])
    assert repr(x.detach().max(dim=0)).startswith("max(values=tensor(")
    full = x.max()
    assert isinstance(full, dualad.Tensor) and full.grad_fn.name() == "MaxBackward1"
    scalar = dualad.max(_tensor(2.5), dim=0)
    assert tuple(scalar.values.shape) == () and int(_np(scalar.indices)) == 0
    _assert_close(_np(dualad.max(x, axis=(0, 1))), 7.0)  # a tuple of dims reduces like amax


def test_max_of_two_tensors_is_the_elementwise_maximum():
    if not hasattr(dualad, "maximum"):
        with pytest.raises(NotImplementedError, match="maximum"):
            dualad.max(_tensor([1.0]), _tensor([2.0]))
        return
    a, b = _tensor([1.0, 5.0]), _tensor([3.0, 2.0])
    _assert_close(_np(dualad.max(a, b)), [3.0, 5.0])
    _assert_close(_np(a.min(b)), [1.0, 2.0])


def test_tensor_methods():
    x = _tensor(np.arange(1.0, 7.0).reshape(2, 3))
    _assert_close(_np(x.sum(dim=1)), [6.0, 15.0])
    _assert_close(_np(x.sum(1, True)), [[6.0], [15.0]])
    _assert_close(_np(x.prod(axis=0)), [4.0, 10.0, 18.0])
    _assert_close(_np(x.max(dim=0).values), [4.0, 5.0, 6.0])
    _assert_close(_np(x.norm()), np.sqrt(91.0))
    _assert_close(_np(x.var(1)), [1.0, 1.0])
    _assert_close(_np(x.std(dim=1, correction=0)), np.std(_np(x), 1))
    _assert_close(_np(x.amin(-1)), [1.0, 4.0])
    _assert_close(_np(x.logsumexp(0)), np.log(np.exp(_np(x)).sum(0)))
    _assert_close(_np(x.cumprod(1)), np.cumprod(_np(x), 1))
    assert int(_np(x.argmax())) == 5 and int(_np(x.argmin())) == 0
    assert bool(_np(x.all())) and bool(_np((x - 1).any()))
    assert int(_np((x - 1).count_nonzero())) == 5
    y = x.clone()
    y.cumsum_(1)
    _assert_close(_np(y), np.cumsum(_np(x), 1))


def test_integer_and_bool_inputs():
    i = _tensor(np.array([[1, 2], [3, 4]], dtype=np.int32))
    assert dualad.sum(i).dtype == np.int64
    assert dualad.prod(i, dim=0).dtype == np.int64
    assert dualad.cumsum(i, dim=1).dtype == np.int64
    assert dualad.cumprod(i, dim=0).dtype == np.int64
    np.testing.assert_array_equal(_np(dualad.cumsum(_tensor([True, False, True]), 0)), [1, 1, 2])
    assert dualad.amax(i).dtype == np.int32
    assert dualad.argmax(i, dim=1).dtype == np.int64
    assert dualad.all(i).dtype == np.bool_
    assert dualad.count_nonzero(i, dim=0).dtype == np.int64
    assert dualad.max(i, dim=0).values.dtype == np.int32
    assert dualad.prod(i, dtype=np.float64).dtype == np.float64
    assert dualad.cumsum(_tensor([1.0, 2.0]), 0, dtype=np.float32).dtype == np.float32


def test_var_and_std_spellings():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (3, 4))
    x = _tensor(a)
    _assert_close(_np(dualad.var(x)), np.var(a, ddof=1))
    _assert_close(_np(dualad.var(x, 1)), np.var(a, 1, ddof=1))
    _assert_close(_np(dualad.var(x, False)), np.var(a))  # torch.var(input, unbiased)
    _assert_close(_np(dualad.var(x, 0, False, True)), np.var(a, 0, keepdims=True))
    _assert_close(_np(dualad.var(x, dim=1, unbiased=False)), np.var(a, 1))
    _assert_close(_np(dualad.var(x, dim=1, correction=2)), np.var(a, 1, ddof=2))
    _assert_close(_np(dualad.std(x, axis=0, ddof=0, keepdims=True)), np.std(a, 0, keepdims=True))
    v, m = dualad.var_mean(x, dim=1)
    _assert_close(_np(v), np.var(a, 1, ddof=1))
    _assert_close(_np(m), np.mean(a, 1))
    s, m = dualad.std_mean(x, 0, correction=0)
    _assert_close(_np(s), np.std(a, 0))
    _assert_close(_np(m), np.mean(a, 0))
    z = _tensor(a + 1j * a[::-1])
    assert dualad.var(z).dtype == np.float64


def test_scans_and_argmax_of_0d_and_flattened_tensors():
    s = _tensor(2.5, True)
    out = dualad.cumsum(s, dim=0)
    assert tuple(out.shape) == () and float(_np(out)) == 2.5
    out.backward()
    assert float(_np(s.grad)) == 1.0
    assert tuple(dualad.cumprod(s, -1).shape) == ()
    _assert_close(_np(dualad.cumsum(_tensor([[1.0, 2.0], [3.0, 4.0]]))), [1.0, 3.0, 6.0, 10.0])
    assert int(_np(dualad.argmax(_tensor(3.0)))) == 0
    assert tuple(dualad.argmax(_tensor(np.ones((2, 3))), keepdim=True).shape) == (1, 1)


def test_empty_reductions():
    e = dualad.zeros((0, 3))
    _assert_close(_np(dualad.sum(e, dim=0)), [0.0, 0.0, 0.0])
    _assert_close(_np(dualad.prod(e, dim=0)), [1.0, 1.0, 1.0])
    assert tuple(dualad.amax(e, dim=1).shape) == (0,)
    assert tuple(dualad.cumprod(e, dim=0).shape) == (0, 3)
    x = dualad.zeros((0, 3), requires_grad=True)
    dualad.prod(x, dim=0).sum().backward()
    assert tuple(x.grad.shape) == (0, 3)


def test_negative_and_tuple_dims_agree():
    rng = np.random.default_rng(9)
    x = _tensor(rng.uniform(0.5, 1.5, (2, 3, 4)))
    for fn in (dualad.sum, dualad.prod, dualad.amax, dualad.logsumexp, dualad.var):
        _assert_close(_np(fn(x, dim=(-1, 0))), _np(fn(x, dim=(2, 0))))
        _assert_close(_np(fn(x, dim=[0, 2], keepdim=True)), _np(fn(x, axis=(0, 2), keepdims=True)))


# ---------------------------------------------------------------------------------------------
# errors


def test_dim_out_of_range():
    x = _tensor(np.ones((2, 3)))
    for fn in (
        dualad.sum,
        dualad.prod,
        dualad.var,
        dualad.amax,
        dualad.logsumexp,
        dualad.norm,
        dualad.all,
        dualad.count_nonzero,
    ):
        with pytest.raises(
            IndexError,
            match=r"Dimension out of range \(expected to be in range "
            r"of \[-2, 1\], but got 3\)",
        ):
            fn(x, dim=3)
    for fn in (dualad.max, dualad.min, dualad.argmax, dualad.cumsum, dualad.cumprod):
        with pytest.raises(IndexError, match="Dimension out of range"):
            fn(x, -3)
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        dualad.cumsum(_tensor(1.0), 1)


def test_other_errors():
    x = _tensor(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match="appears multiple times"):
        dualad.prod(x, dim=(1, -1))
    with pytest.raises(TypeError, match="either dim= or axis="):
        dualad.amax(x, dim=0, axis=1)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero"):
        dualad.max(dualad.zeros((0, 2)), dim=0)
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 1"):
        dualad.amax(dualad.zeros((2, 0)), dim=1)
    with pytest.raises(RuntimeError, match="numel"):
        dualad.argmax(dualad.zeros(0))
    with pytest.raises(RuntimeError, match="does not support complex"):
        dualad.max(_tensor([1j, 2.0]))
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        dualad.var(_tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        dualad.norm(_tensor([1, 2]))
    with pytest.raises(ValueError, match="unknown norm type"):
        dualad.norm(x, p="bad")
    with pytest.raises(TypeError, match="only one of"):
        dualad.var(x, unbiased=True, correction=0)
    with pytest.raises(RuntimeError, match="nanmean"):
        dualad.nanmean(_tensor([1, 2]))
    with pytest.raises(TypeError, match="dim must be an int"):
        dualad.max(x, 1.5)
    if not hasattr(dualad, "linalg") or not hasattr(dualad.linalg, "matrix_norm"):
        with pytest.raises(NotImplementedError, match="matrix_norm"):
            dualad.norm(x, p="nuc")


def test_nondifferentiable_results_do_not_require_grad():
    x = _tensor([[1.0, 0.0, 3.0], [2.0, 5.0, 0.0]], True)
    for out in (
        dualad.argmax(x),
        dualad.argmin(x, dim=1),
        dualad.all(x, dim=0),
        dualad.any(x),
        dualad.count_nonzero(x, dim=1),
        dualad.max(x, dim=1).indices,
    ):
        assert not out.requires_grad and out.grad_fn is None


# ---------------------------------------------------------------------------------------------
# private building blocks


def test_shift_fill_vjp_and_values():
    from dualad.ops.scans import _shift

    a = np.arange(1.0, 7.0).reshape(2, 3)
    for dim, reverse in [(0, False), (1, False), (1, True), (0, True)]:
        x = _tensor(a, True)
        y = _shift(x, dim, reverse, 1.0)
        expected = np.roll(a, -1 if reverse else 1, axis=dim)
        index = [slice(None)] * 2
        index[dim] = -1 if reverse else 0
        expected[tuple(index)] = 1.0
        _assert_close(_np(y), expected)
        ct = np.arange(6.0).reshape(2, 3) + 1
        (grad,) = dualad.autograd.grad(y, x, _tensor(ct))

        def f(arr, dim=dim, reverse=reverse):
            with dualad.no_grad():
                return _np(_shift(_tensor(arr), dim, reverse, 1.0))

        (fd,) = numerical_vjp(f, [a], (0,), ct)
        _assert_close(_np(grad), fd)


def test_every_reduction_op_has_an_opinfo():
    names = {name for info in reductions_db.OPS for name in info.ops}
    ours = {
        "sum",
        "mean",
        "prod",
        "shift_fill",
        "cumsum",
        "cumprod",
        "var",
        "std",
        "amax",
        "amin",
        "max_all",
        "min_all",
        "max_dim",
        "min_dim",
        "index_mask",
        "argmax",
        "argmin",
        "logsumexp",
        "norm",
        "all",
        "any",
        "count_nonzero",
    }
    assert ours <= set(REGISTRY)
    assert ours <= names
