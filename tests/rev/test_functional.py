"""``dualad.autograd.functional``: values vs analytic formulas and finite differences, result
structure, vectorize/strategy agreement, create_graph, strict mode and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.autograd
from dualad.autograd import functional as F

RNG = np.random.default_rng(1234)


def _t(array, requires_grad=False):
    return dualad.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def _np(t):
    return t.detach().numpy()


def _fd_jacobian(func, arrays, eps=1e-6):
    """J[i][j] of shape out_i.shape + in_j.shape by central differences (NumPy in, NumPy out)."""

    def evaluate(values):
        out = func(*[_t(v) for v in values])
        outs = out if isinstance(out, tuple) else (out,)
        return [_np(o) for o in outs]

    base = evaluate(arrays)
    jac = [[np.zeros(o.shape + a.shape) for a in arrays] for o in base]
    for j, a in enumerate(arrays):
        for idx in np.ndindex(a.shape):
            plus = [v.copy() for v in arrays]
            minus = [v.copy() for v in arrays]
            plus[j][idx] += eps
            minus[j][idx] -= eps
            for i, (p, m) in enumerate(zip(evaluate(plus), evaluate(minus))):
                jac[i][j][(..., *idx)] = (p - m) / (2 * eps)
    return jac


def f_two_in_two_out(x, y):
    return (x * y.sum()).sin(), (x.exp() @ y.reshape(3, 2)).tanh()


def f_scalar(x, y):
    return (x.sin() * (x @ y.reshape(3, 2)).sum()).sum() + (y**3).sum()


X = RNG.uniform(-1, 1, 3)
Y = RNG.uniform(-1, 1, (2, 3))


# ---------------------------------------------------------------------------------------------
# jacobian


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"vectorize": True},
        {"vectorize": True, "strategy": "forward-mode"},
    ],
    ids=["loop", "vectorized", "forward"],
)
def test_jacobian_values_and_structure(kwargs):
    expected = _fd_jacobian(f_two_in_two_out, [X, Y])
    jac = F.jacobian(f_two_in_two_out, (_t(X), _t(Y)), **kwargs)
    assert isinstance(jac, tuple) and len(jac) == 2
    for i in range(2):
        assert isinstance(jac[i], tuple) and len(jac[i]) == 2
        for j in range(2):
            assert jac[i][j].shape == expected[i][j].shape
            assert not jac[i][j].requires_grad
            np.testing.assert_allclose(_np(jac[i][j]), expected[i][j], rtol=1e-6, atol=1e-8)

    # single input, tuple output -> tuple over outputs
    jac = F.jacobian(lambda x: f_two_in_two_out(x, _t(Y)), _t(X), **kwargs)
    assert isinstance(jac, tuple) and len(jac) == 2
    np.testing.assert_allclose(_np(jac[1]), expected[1][0], rtol=1e-6, atol=1e-8)
    # tuple input, single output -> tuple over inputs
    jac = F.jacobian(lambda x, y: f_two_in_two_out(x, y)[1], (_t(X), _t(Y)), **kwargs)
    assert isinstance(jac, tuple) and len(jac) == 2
    np.testing.assert_allclose(_np(jac[1]), expected[1][1], rtol=1e-6, atol=1e-8)
    # single input, single output -> a Tensor
    jac = F.jacobian(lambda x: f_two_in_two_out(x, _t(Y))[0], _t(X), **kwargs)
    assert isinstance(jac, dualad.Tensor)
    np.testing.assert_allclose(_np(jac), expected[0][0], rtol=1e-6, atol=1e-8)


def test_jacobian_analytic_and_modes_agree():
    a = RNG.standard_normal((4, 3))
    x = _t(RNG.standard_normal(3))
    for kwargs in ({}, {"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"}):
        jac = F.jacobian(lambda v: _t(a) @ v, x, **kwargs)
        np.testing.assert_allclose(_np(jac), a, rtol=1e-14)
    # scalar in, scalar out
    jac = F.jacobian(lambda v: v**2, _t(3.0))
    assert jac.shape == () and float(jac) == 6.0


def test_jacobian_independent_output_gives_zeros():
    x = _t(X)

    def g(x, y):
        return x * 2

    for kwargs in ({}, {"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"}):
        jac = F.jacobian(g, (x, _t(Y)), **kwargs)
        np.testing.assert_array_equal(_np(jac[1]), np.zeros((3, 2, 3)))
        np.testing.assert_array_equal(_np(jac[0]), 2 * np.eye(3))
        # an output that does not depend on the inputs at all
        jac = F.jacobian(lambda x: _t([1.0, 2.0]), x, **kwargs)
        np.testing.assert_array_equal(_np(jac), np.zeros((2, 3)))


def test_jacobian_create_graph_is_differentiable():
    x = _t(X, requires_grad=True)
    for kwargs in ({}, {"vectorize": True}):
        jac = F.jacobian(lambda v: v**3, x, create_graph=True, **kwargs)
        assert jac.requires_grad
        np.testing.assert_allclose(_np(jac), np.diag(3 * X**2), rtol=1e-12)
        (second,) = dualad.autograd.grad(jac.sum(), x)
        np.testing.assert_allclose(_np(second), 6 * X, rtol=1e-12)
    # without create_graph the result is detached even for inputs requiring grad
    jac = F.jacobian(lambda v: v**3, x)
    assert not jac.requires_grad
    assert x.grad is None


def test_jacobian_strict():
    x, y = _t(X), _t(Y)
    with pytest.raises(
        RuntimeError,
        match=r"Output 0 of the user-provided function is independent of input 1\. This is not "
        "allowed in strict mode.",
    ):
        F.jacobian(lambda x, y: x * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "):
        F.jacobian(lambda x: _t([1.0]), x, strict=True)
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorize=True` are not supported"):
        F.jacobian(lambda x: x * 2, x, strict=True, vectorize=True)
    with pytest.raises(RuntimeError, match='`strict=True` and `strategy="forward-mode"`'):
        F.jacobian(lambda x: x * 2, x, strict=True, vectorize=True, strategy="forward-mode")
    # a linear function with create_graph: its jacobian does not depend on the input
    with pytest.raises(
        RuntimeError, match=r"independent of input 0\. This is not allowed in strict"
    ):
        F.jacobian(lambda x: x * 2, x, strict=True, create_graph=True)
    jac = F.jacobian(lambda x, y: x * y.sum(), (x, y), strict=True)
    np.testing.assert_allclose(_np(jac[0]), np.eye(3) * Y.sum(), rtol=1e-14)


def test_jacobian_bad_arguments():
    x = _t(X)
    with pytest.raises(ValueError, match='Expected strategy to be either "forward-mode"'):
        F.jacobian(lambda v: v, x, strategy="sideways")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda v: v, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and `strategy="):
        F.jacobian(lambda v: v, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor"):
        F.jacobian(lambda v: v, X)
    with pytest.raises(TypeError, match="value at index 1 has type"):
        F.jacobian(lambda v, w: v, (x, 2.0))
    with pytest.raises(TypeError, match="outputs of the user-provided function given to jacobian"):
        F.jacobian(lambda v: 3.0, x)


# ---------------------------------------------------------------------------------------------
# hessian


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"vectorize": True},
        {"vectorize": True, "outer_jacobian_strategy": "forward-mode"},
    ],
    ids=["loop", "vectorized", "fwd-over-rev"],
)
def test_hessian_values_and_structure(kwargs):
    def gradient(x, y):
        gx, gy = dualad.autograd.grad(
            f_scalar(x.requires_grad_(), y.requires_grad_()), (x, y), create_graph=False
        )
        return gx, gy

    expected = _fd_jacobian(gradient, [X, Y])
    hess = F.hessian(f_scalar, (_t(X), _t(Y)), **kwargs)
    for i in range(2):
        for j in range(2):
            assert hess[i][j].shape == expected[i][j].shape
            np.testing.assert_allclose(_np(hess[i][j]), expected[i][j], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_np(hess[0][1]), np.moveaxis(_np(hess[1][0]), -1, 0), rtol=1e-12)
    # single input -> a Tensor of shape in.shape + in.shape
    hess = F.hessian(lambda v: (v**3).sum(), _t(X), **kwargs)
    assert isinstance(hess, dualad.Tensor)
    np.testing.assert_allclose(_np(hess), np.diag(6 * X), rtol=1e-12)


def test_hessian_create_graph_strict_and_errors():
    x = _t(X, requires_grad=True)
    hess = F.hessian(lambda v: (v**4).sum(), x, create_graph=True)
    assert hess.requires_grad
    (third,) = dualad.autograd.grad(hess.sum(), x)
    np.testing.assert_allclose(_np(third), 24 * X, rtol=1e-12)
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        F.hessian(lambda v: (v.sum(), v.sum()), _t(X))
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hessian(lambda v: v * 2, _t(X))
    with pytest.raises(ValueError, match="Expected strategy"):
        F.hessian(lambda v: v.sum(), _t(X), outer_jacobian_strategy="bad")
    # a linear function: zero Hessian, an error in strict mode
    np.testing.assert_array_equal(_np(F.hessian(lambda v: v.sum() * 2, _t(X))), np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="strict mode"):
        F.hessian(lambda v: v.sum() * 2, _t(X), strict=True)


# ---------------------------------------------------------------------------------------------
# vjp, jvp, vhp, hvp


def test_vjp():
    x, y = _t(X), _t(Y)
    v = (_t(RNG.standard_normal(3)), _t(RNG.standard_normal(2)))
    outputs, result = F.vjp(f_two_in_two_out, (x, y), v)
    expected = _fd_jacobian(f_two_in_two_out, [X, Y])
    for j in range(2):
        want = sum(np.tensordot(_np(v[i]), expected[i][j], axes=v[i].ndim) for i in range(2))
        np.testing.assert_allclose(_np(result[j]), want, rtol=1e-6, atol=1e-8)
    assert isinstance(outputs, tuple) and len(outputs) == 2
    np.testing.assert_allclose(_np(outputs[0]), _np(f_two_in_two_out(x, y)[0]))
    # single input and output, v=None for a single-element output
    _, g = F.vjp(lambda v: (v**2).sum(), x)
    assert isinstance(g, dualad.Tensor)
    np.testing.assert_allclose(_np(g), 2 * X)
    # independent input: zeros, error in strict mode
    _, (_, gy) = F.vjp(lambda a, b: a.sum(), (x, y))
    np.testing.assert_array_equal(_np(gy), np.zeros((2, 3)))
    with pytest.raises(
        RuntimeError, match=r"independent of input 1\. This is not allowed in strict"
    ):
        F.vjp(lambda a, b: a.sum(), (x, y), strict=True)


def test_jvp_and_v_errors():
    x, y = _t(X), _t(Y)
    v = (_t(RNG.standard_normal(3)), _t(RNG.standard_normal((2, 3))))
    _, result = F.jvp(f_two_in_two_out, (x, y), v)
    expected = _fd_jacobian(f_two_in_two_out, [X, Y])
    for i in range(2):
        want = sum(np.tensordot(expected[i][j], _np(v[j]), axes=v[j].ndim) for j in range(2))
        np.testing.assert_allclose(_np(result[i]), want, rtol=1e-6, atol=1e-8)
    # jvp agrees with vjp through the adjoint identity
    u = _t(RNG.standard_normal(3))
    _, jv = F.jvp(lambda a: a.sin() * a.sum(), x, v[0])
    _, uj = F.vjp(lambda a: a.sin() * a.sum(), x, u)
    np.testing.assert_allclose(float((jv * u).sum()), float((uj * v[0]).sum()), rtol=1e-12)
    # v=None only for a single-element input
    _, d = F.jvp(lambda a: a**3, _t([2.0]))
    np.testing.assert_allclose(_np(d), [12.0])
    with pytest.raises(RuntimeError, match="v can only be None if the input"):
        F.jvp(lambda a: a**3, x)
    with pytest.raises(RuntimeError, match="v can only be None if the output"):
        F.vjp(lambda a: a**3, x)
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1"):
        F.jvp(f_two_in_two_out, (x, y), (v[0],))
    with pytest.raises(RuntimeError, match=r"Entry 1 in v has invalid size: should be \(2, 3\)"):
        F.jvp(f_two_in_two_out, (x, y), (v[0], _t(np.ones(6))))
    with pytest.raises(RuntimeError, match="v has invalid size"):
        F.vjp(lambda a: a * 2, x, _t(np.ones(4)))
    with pytest.raises(TypeError, match="The v given to vjp must be either a Tensor"):
        F.vjp(lambda a: a * 2, x, np.ones(3))
    # strict: an output independent of an input's tangent
    with pytest.raises(RuntimeError, match="double backward trick"):
        F.jvp(
            lambda a, b: (a * b.sum(), dualad.ones(2, requires_grad=True)), (x, y), v, strict=True
        )
    _, (_, t1) = F.jvp(lambda a, b: (a * 2, _t([1.0, 2.0])), (x, y), v)
    np.testing.assert_array_equal(_np(t1), np.zeros(2))


def test_vhp_hvp():
    x, y = _t(X), _t(Y)
    v = (_t(RNG.standard_normal(3)), _t(RNG.standard_normal((2, 3))))
    hess = F.hessian(f_scalar, (x, y))
    for fn in (F.vhp, F.hvp):
        value, result = fn(f_scalar, (x, y), v)
        np.testing.assert_allclose(_np(value), _np(f_scalar(x, y)))
        assert value.shape == ()
        for i in range(2):
            want = sum(np.tensordot(_np(hess[i][j]), _np(v[j]), axes=v[j].ndim) for j in range(2))
            np.testing.assert_allclose(_np(result[i]), want, rtol=1e-10, atol=1e-12)
    # single input -> a Tensor; v=None only for a single-element input
    for fn in (F.vhp, F.hvp):
        _, r = fn(lambda a: (a**3).sum(), _t([2.0]))
        np.testing.assert_allclose(_np(r), [12.0])
        with pytest.raises(RuntimeError, match="v can only be None"):
            fn(lambda a: (a**3).sum(), x)
        with pytest.raises(RuntimeError, match="should contain a single element"):
            fn(lambda a: a**3, x, x)
        with pytest.raises(RuntimeError, match="strict mode"):
            fn(lambda a: a.sum(), x, x, strict=True)
        _, zero = fn(lambda a: a.sum(), x, x)
        np.testing.assert_array_equal(_np(zero), np.zeros(3))


def test_vector_products_create_graph():
    x = _t(X, requires_grad=True)
    v = _t(RNG.standard_normal(3))
    for fn in (F.vhp, F.hvp):
        _, r = fn(lambda a: (a**4).sum(), x, v, create_graph=True)
        assert r.requires_grad  # r = 12 x^2 v
        (g,) = dualad.autograd.grad(r.sum(), x)
        np.testing.assert_allclose(_np(g), 24 * X * _np(v), rtol=1e-12)
    out, r = F.vjp(lambda a: a**3, x, v, create_graph=True)
    assert out.requires_grad and r.requires_grad  # r = 3 x^2 v
    (g,) = dualad.autograd.grad(r.sum(), x)
    np.testing.assert_allclose(_np(g), 6 * X * _np(v), rtol=1e-12)
    out, r = F.jvp(lambda a: a**3, x, v, create_graph=True)
    (g,) = dualad.autograd.grad(r.sum(), x)
    np.testing.assert_allclose(_np(g), 6 * X * _np(v), rtol=1e-12)
    out, r = F.jvp(lambda a: a**3, x, v)
    assert not out.requires_grad and not r.requires_grad
    assert x.grad is None


def test_import_path():
    import dualad.autograd.functional as functional

    assert dualad.autograd.functional is functional
    assert set(functional.__all__) == {"jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"}
