"""Derivatives through dualad.array_api: programs written against the standard
(``xp = array_namespace(x)``: a softmax, a layer norm, a least-squares loss, ...) and each
differentiable function, checked against central finite differences in reverse and forward
mode up to second order (``dualad.testing.check_grads``: ``func.vjp``/``func.jvp`` levels),
under ``func.grad``, eagerly (``backward``), and under ``vmap`` against a Python loop.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from array_api_compat import array_namespace

import dualad
import dualad.array_api as xp
from dualad import func
from dualad.testing import check_grads

rng = np.random.default_rng(0)


def softmax(x):
    xp = array_namespace(x)
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def layer_norm(x, gamma, beta):
    xp = array_namespace(x, gamma, beta)
    mean = xp.mean(x, axis=-1, keepdims=True)
    var = xp.var(x, axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(var + 1e-5) * gamma + beta


def least_squares(w, a, b):
    xp = array_namespace(w, a, b)
    residual = xp.matmul(a, w) - b
    return xp.sum(residual**2) / 2 + 0.1 * xp.linalg.vector_norm(w) ** 2


def cross_entropy(logits, labels):
    xp = array_namespace(logits)
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)
    log_p = shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))
    picked = xp.take_along_axis(log_p, xp.expand_dims(labels, axis=-1), axis=-1)
    return -xp.mean(picked)


def trimmed_mean(x):
    xp = array_namespace(x)
    s = xp.sort(x, axis=-1)
    return xp.mean(s[..., 1:-1], axis=-1)


def geometry(p, q):
    xp = array_namespace(p, q)
    n = xp.linalg.cross(p, q)
    return xp.linalg.vecdot(n, n) + xp.linalg.matrix_norm(xp.linalg.outer(p[0], q[0]), ord=1)


def _r(*shape):
    return dualad.tensor(rng.uniform(-1.0, 1.0, shape))


def _distinct(*shape):
    # no ties and no zeros, in value and in absolute value: sort, max and the norms built of
    # |x| and max have a second derivative there
    n = math.prod(shape)
    values = np.linspace(0.2, 1.0, n) * np.where(np.arange(n) % 2, -1.0, 1.0)
    return dualad.tensor(rng.permutation(values).reshape(shape))


PROGRAMS = {
    "softmax": (softmax, (_distinct(3, 4),)),
    "layer_norm": (layer_norm, (_r(3, 4), _r(4), _r(4))),
    "least_squares": (least_squares, (_r(3), _r(5, 3), _r(5))),
    "cross_entropy": (lambda z: cross_entropy(z, dualad.tensor([0, 2, 1])), (_distinct(3, 4),)),
    "trimmed_mean": (trimmed_mean, (_distinct(2, 5),)),
    "geometry": (geometry, (_r(2, 3), _r(2, 3))),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_derivatives_match_finite_differences(name):
    f, args = PROGRAMS[name]
    check_grads(f, args, order=2)


@pytest.mark.parametrize("name", ["softmax", "layer_norm", "least_squares", "geometry"])
def test_programs_under_func_grad_and_backward_agree(name):
    f, args = PROGRAMS[name]

    def loss(*a):
        return xp.sum(f(*a) ** 2)

    by_func = func.grad(loss, argnums=tuple(range(len(args))))(*args)
    leaves = [a.detach().requires_grad_() for a in args]
    loss(*leaves).backward()
    for g, leaf in zip(by_func, leaves):
        np.testing.assert_allclose(g.numpy(), leaf.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "layer_norm", "least_squares", "geometry"])
def test_programs_under_vmap_match_a_loop(name):
    f, args = PROGRAMS[name]
    batched = [xp.stack([a * (1 + 0.1 * i) for i in range(3)]) for a in args]
    out = dualad.vmap(f)(*batched)
    for i in range(3):
        expected = f(*[b[i] for b in batched])
        np.testing.assert_allclose(out[i].numpy(), expected.numpy(), rtol=1e-12)
    # and the per-example gradient (grad of vmap's inner function)
    per_example = dualad.vmap(func.grad(lambda *a: xp.sum(f(*a))))(*batched)
    for i in range(3):
        g = func.grad(lambda *a: xp.sum(f(*a)))(*[b[i] for b in batched])
        np.testing.assert_allclose(per_example[i].numpy(), g.numpy(), rtol=1e-12)


# each differentiable function of the namespace on one float64 sample (positions: the args)
FUNCTIONS = {
    "acos": (xp.acos, (_r(3) * 0.9,)),
    "atan2": (xp.atan2, (_r(2, 3), _r(3) + 2)),
    "hypot": (xp.hypot, (_r(3), _r(3))),
    "logaddexp": (xp.logaddexp, (_r(3), _r(3))),
    "pow": (xp.pow, (_r(3) + 2, _r(3))),
    "sign_complex": (xp.sign, (_r(3) + 1j * _r(3),)),
    "real_imag_conj": (lambda z: xp.real(z) * xp.imag(xp.conj(z)), (_r(3) + 1j * _r(3),)),
    "clip": (lambda x: xp.clip(x, min=-0.5, max=0.5), (dualad.tensor([-0.9, 0.1, 0.3, 0.8]),)),
    "clip_array_bounds": (
        xp.clip,
        (
            dualad.tensor([-0.9, 0.1, 0.3, 0.8]),
            dualad.tensor([-0.5, 0.2, -0.5, -0.5]),
            dualad.tensor([0.5, 0.5, 0.25, 0.5]),
        ),
    ),
    "where": (lambda x, y: xp.where(x > 0, x, y), (_distinct(4), _r(4))),
    "std_var": (lambda x: xp.std(x, axis=0, correction=1) + xp.var(x, axis=(0, 1)), (_r(3, 2),)),
    "prod": (lambda x: xp.prod(x, axis=1, keepdims=True), (_r(2, 3),)),
    "cumulative_sum": (lambda x: xp.cumulative_sum(x, axis=1, include_initial=True), (_r(2, 3),)),
    "cumulative_prod": (lambda x: xp.cumulative_prod(x, axis=0), (_r(3, 2),)),
    "max_min": (lambda x: xp.max(x, axis=0) - xp.min(x, axis=1), (_distinct(3, 3),)),
    "diff": (lambda x: xp.diff(x, axis=0, n=2, prepend=x[:1]), (_r(4, 2),)),
    "manipulation": (
        lambda x: xp.concat(
            [xp.flip(x, axis=0), xp.roll(x, 1), xp.permute_dims(x, (1, 0))], axis=None
        ),
        (_r(2, 3),),
    ),
    "stack_unstack": (lambda x: xp.stack(xp.unstack(x, axis=1)[::-1], axis=0), (_r(2, 3),)),
    "repeat_tile": (lambda x: xp.tile(xp.repeat(x, 2, axis=0), (2, 1)), (_r(2, 2),)),
    "broadcast_squeeze": (
        lambda x: xp.squeeze(xp.broadcast_arrays(x, xp.zeros((2, 1, 3)))[0], axis=1),
        (_r(3),),
    ),
    "take": (lambda x: xp.take(x, xp.asarray([2, 0, 2]), axis=1), (_r(2, 3),)),
    "meshgrid": (lambda a, b: xp.meshgrid(a, b)[0] * xp.meshgrid(a, b)[1], (_r(3), _r(2))),
    "linspace": (lambda a, b: xp.linspace(a, b, 4, endpoint=False), (_r(), _r())),
    "tril_triu": (lambda x: xp.tril(x, k=-1) + 2 * xp.triu(x, k=1), (_r(3, 3),)),
    # distinct values: finite differences would split duplicates into more outputs
    "unique_values": (xp.unique_values, (dualad.tensor([0.5, -1.0, 0.25, 2.0]),)),
    "astype_complex": (lambda x: xp.astype(x, xp.complex128) * 1j, (_r(3),)),
    "tensordot": (lambda a, b: xp.tensordot(a, b, axes=((1,), (0,))), (_r(2, 3), _r(3, 2))),
    "vecdot_complex": (xp.vecdot, (_r(2, 3) + 1j * _r(2, 3), _r(3) - 1j * _r(3))),
    "trace_diagonal": (
        lambda x: xp.linalg.trace(x, offset=1) + xp.linalg.diagonal(x)[..., 0],
        (_r(2, 3, 3),),
    ),
    "matrix_norms": (
        lambda x: xp.stack([xp.linalg.matrix_norm(x, ord=o) for o in ("fro", 1, -1, math.inf)]),
        (_distinct(3, 3),),
    ),
    "vector_norms": (
        lambda x: xp.stack([xp.linalg.vector_norm(x, ord=o) for o in (1, 2, 3, math.inf)]),
        (_distinct(4),),
    ),
    "matrix_power": (lambda x: xp.linalg.matrix_power(x, 3), (_r(2, 2),)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_derivatives_match_finite_differences(name):
    f, args = FUNCTIONS[name]
    check_grads(f, args, order=2)


VMAPPABLE = sorted(set(FUNCTIONS) - {"unique_values", "linspace", "meshgrid"})


@pytest.mark.parametrize("name", VMAPPABLE)
def test_functions_under_vmap_match_a_loop(name):
    f, args = FUNCTIONS[name]
    batched = [xp.stack([a + 0.01 * i for i in range(2)]) for a in args]
    out = dualad.vmap(f)(*batched)
    for i in range(2):
        expected = f(*[b[i] for b in batched])
        np.testing.assert_allclose(out[i].numpy(), expected.numpy(), rtol=1e-12, atol=1e-15)


def test_unique_values_sends_the_gradient_to_each_first_occurrence():
    x = dualad.tensor([0.5, -1.0, 0.5, 2.0, -1.0], requires_grad=True)
    values, _, inverse, counts = xp.unique_all(x)
    xp.sum(values * xp.asarray([1.0, 2.0, 3.0])).backward()
    assert x.grad.tolist() == [2.0, 1.0, 0.0, 3.0, 0.0]
    assert inverse.tolist() == [1, 0, 1, 2, 0] and counts.tolist() == [2, 2, 1]


def test_sort_and_argsort_inside_func_transforms():
    x = dualad.tensor([3.0, 1.0, 2.0])
    weights = xp.asarray([1.0, 2.0, 3.0])
    g = func.grad(lambda v: xp.sum(xp.sort(v) * weights))(x)
    assert g.tolist() == [3.0, 1.0, 2.0]
    _, tangent = func.jvp(lambda v: xp.sort(v, descending=True), (x,), (weights,))
    assert tangent.tolist() == [1.0, 3.0, 2.0]


def test_value_functions_refuse_levels_they_cannot_follow():
    x = _distinct(2, 3)
    with pytest.raises(dualad.TrackedConversionError, match="grad"):
        func.grad(lambda r: xp.sum(xp.nextafter(r, 2.0)))(x)
    with pytest.raises(dualad.TrackedConversionError, match="tangent at dual level"):
        func.jvp(lambda r: xp.nextafter(r, 2.0), (x,), (x,))
    with pytest.raises(dualad.TrackedConversionError, match="no derivative of nextafter"):
        xp.nextafter(x.detach().requires_grad_(), 2.0)


def test_index_results_are_untracked():
    x = _distinct(5).requires_grad_()
    for out in (xp.argsort(x), xp.argmax(x), xp.searchsorted(xp.sort(x), x)):
        assert not out.requires_grad and out.dtype == xp.int64
    values, indices, _, counts = xp.unique_all(x)
    assert values.requires_grad and not (indices.requires_grad or counts.requires_grad)


def test_the_namespace_is_found_for_level_tensors():
    seen = []

    def f(x):
        seen.append(array_namespace(x))
        return xp.sum(x)

    func.grad(f)(_r(3))
    dualad.vmap(f)(_r(2, 3))
    func.jvp(f, (_r(3),), (_r(3),))
    assert seen == [xp, xp, xp]


def test_bit_shifts_under_vmap_match_a_loop_and_numpy():
    x = dualad.tensor([[1, 2, 3], [-4, 5, 64]], dtype=dualad.int8)
    for f, ref in (
        (xp.bitwise_left_shift, np.left_shift),
        (xp.bitwise_right_shift, np.right_shift),
    ):
        out = dualad.vmap(lambda r, f=f: f(r, 1))(x)
        assert out.dtype == xp.int8
        assert out.tolist() == [f(r, 1).tolist() for r in x] == ref(x.numpy(), 1).tolist()
        both = dualad.vmap(f)(x, xp.abs(x) % 3)
        assert both.tolist() == ref(x.numpy(), np.abs(x.numpy()) % 3).tolist()
