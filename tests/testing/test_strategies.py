"""``dualad.testing.strategies`` draws what it promises; ``dualad.testing.check_grads`` passes
correct derivatives and names the mode, order and difference of wrong ones."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualad
from dualad._dispatch import REGISTRY, OpDef, apply, register
from dualad.testing import check_grads
from dualad.testing import strategies as ds
from dualad.testing._numeric import as_numpy, sample_to_tensors
from dualad.testing.opdb import OpInfo

# at least 20 examples; the dev profile (DUALAD_HYPOTHESIS_PROFILE=dev) asks for more
FEW = settings(deadline=None, max_examples=max(20, settings.default.max_examples))


# ---------------------------------------------------------------------------------------------
# shapes, arrays, tensors


@FEW
@given(st.data())
def test_shapes_stay_in_range(data):
    min_dims = data.draw(st.integers(0, 2))
    max_dims = data.draw(st.integers(min_dims, 4))
    min_side = data.draw(st.integers(0, 2))
    max_side = data.draw(st.integers(max(min_side, 1), 5))
    shape = data.draw(ds.shapes(min_dims, max_dims, min_side, max_side))
    assert isinstance(shape, tuple)
    assert min_dims <= len(shape) <= max_dims
    assert all(min_side <= s <= max_side for s in shape)


@FEW
@given(ds.shapes())
def test_shapes_defaults(shape):
    assert 0 <= len(shape) <= 3 and all(1 <= s <= 4 for s in shape)


@FEW
@given(st.data())
def test_broadcastable_shapes_broadcast(data):
    shape = data.draw(ds.shapes())
    other = data.draw(ds.broadcastable_shapes(shape, max_dims=4))
    assert len(other) <= 4
    broadcast = np.broadcast_shapes(shape, other)
    x = dualad.ones(*shape) if shape else dualad.tensor(1.0)
    y = dualad.ones(*other) if other else dualad.tensor(1.0)
    assert tuple((x + y).shape) == broadcast


@FEW
@given(st.data(), st.sampled_from(["float64", "float32", "complex128", "int64", "bool"]))
def test_arrays_dtype_shape_and_bounds(data, dtype):
    shape = data.draw(ds.shapes(max_dims=2))
    a = data.draw(ds.arrays(dtype, shape, low=-1.5, high=0.5))
    assert isinstance(a, np.ndarray) and a.dtype == np.dtype(dtype) and a.shape == shape
    assert np.all(np.isfinite(a))
    if a.dtype.kind in "fiu":
        assert np.all((a >= -1.5) & (a <= 0.5))
    elif a.dtype.kind == "c":
        for part in (a.real, a.imag):
            assert np.all((part >= -1.5) & (part <= 0.5))


@FEW
@given(ds.arrays(shape=ds.shapes(min_dims=2, max_dims=2, max_side=2)))
def test_arrays_shape_strategy(a):
    assert a.dtype == np.float64 and a.ndim == 2 and max(a.shape) <= 2


@FEW
@given(st.data(), st.sampled_from(["float64", "float32", "complex64"]), st.booleans())
def test_tensors(data, dtype, requires_grad):
    t = data.draw(ds.tensors(dtype, (2, 3), requires_grad=requires_grad))
    assert isinstance(t, dualad.Tensor)
    assert tuple(t.shape) == (2, 3) and as_numpy(t).dtype == np.dtype(dtype)
    assert t.requires_grad is requires_grad
    assert t.grad_fn is None


# ---------------------------------------------------------------------------------------------
# ops and programs


@FEW
@given(ds.ops())
def test_ops_draw_differentiable_opinfos(info):
    assert isinstance(info, OpInfo) and info.differentiable


@FEW
@given(ds.ops(differentiable=None, unary=True))
def test_ops_unary_run_on_their_samples(info):
    for sample in info.sample_inputs(info.dtypes[0] if info.dtypes else "float64"):
        assert len(sample.args) == 1 and not sample.kwargs
        args, kwargs, _ = sample_to_tensors(sample)
        info.fn(*args, **kwargs)


def test_ops_filters():
    unary = ds.op_infos(unary=True)
    others = ds.op_infos(unary=False)
    names = {info.name for info in unary}
    assert "sin" in names and "add" not in names
    assert not names & {info.name for info in others}
    nondiff = ds.op_infos(differentiable=False)
    assert nondiff and not any(info.differentiable for info in nondiff)


@FEW
@given(ds.programs(), ds.arrays(shape=ds.shapes(max_dims=2, max_side=3), low=-5, high=5))
def test_programs_are_defined_and_differentiable(program, x):
    assert 1 <= len(program.steps) <= 4
    assert program.description.count("(") == len(program.steps)
    out = program(dualad.tensor(x))
    assert tuple(out.shape) == x.shape and np.all(np.isfinite(as_numpy(out)))
    check_grads(program, (x,), order=2)


@FEW
@given(ds.programs(min_ops=2, max_ops=2, unary_ops=["sin", "log"], binary_ops=[]))
def test_programs_restricted(program):
    assert len(program.steps) == 2
    assert all(name in ("sin", "log") and other is None for name, other in program.steps)


def test_programs_unknown_op():
    with pytest.raises(ValueError, match="no known domain"):
        ds.programs(unary_ops=["sin", "add"])


def test_strategies_import_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    monkeypatch.delitem(sys.modules, "dualad.testing.strategies")
    with pytest.raises(ImportError, match=r"'test' extra"):
        importlib.import_module("dualad.testing.strategies")
    monkeypatch.undo()
    importlib.import_module("dualad.testing.strategies")


# ---------------------------------------------------------------------------------------------
# check_grads


def test_check_grads_passes_on_correct_functions():
    x = np.array([0.3, -0.7, 1.1])
    y = np.array([[0.5], [1.5]])
    check_grads(lambda a: dualad.sin(a) * a, (x,))
    check_grads(lambda a, b: (dualad.exp(a) * b, a / b), (x, y), order=3)
    check_grads(lambda a: dualad.tanh(a).sum(), (dualad.tensor(x),), modes=("rev",))
    check_grads(lambda a: a * a * 1j, (x + 0.5j,))  # complex input


def test_check_grads_skips_non_array_arguments():
    x = np.array([0.3, 0.9])
    check_grads(lambda a, k, n: a**n * k, (x, 2.0, 3))
    with pytest.raises(ValueError, match="no floating"):
        check_grads(lambda n: n, (3,))
    with pytest.raises(ValueError, match="unknown mode"):
        check_grads(dualad.sin, (x,), modes=("backward",))


def _throwaway(name, vjp, jvp):
    def impl(xp, x):
        return x * x * x

    op = register(OpDef(name, impl, vjp=vjp, jvp=jvp, batch=None))
    return op, lambda x: apply(op, x)


@pytest.fixture
def cube_ops():
    """``x**3`` with a wrong VJP, and with a VJP right at first order only."""
    names = ("_test_cube_wrong_vjp", "_test_cube_wrong_second")
    try:
        _, wrong = _throwaway(
            names[0],
            vjp=lambda cts, outs, args, params, needs: (cts[0] * 2 * args[0] * args[0],),
            jvp=lambda tangents, outs, args, params: tangents[0] * 3 * args[0] * args[0],
        )
        _, first_only = _throwaway(
            names[1],
            vjp=lambda cts, outs, args, params, needs: (cts[0] * 3 * args[0] * args[0].detach(),),
            jvp=lambda tangents, outs, args, params: tangents[0] * 3 * args[0] * args[0],
        )
        yield wrong, first_only
    finally:
        for name in names:
            REGISTRY.pop(name, None)


def test_check_grads_names_mode_order_and_difference(cube_ops):
    wrong, first_only = cube_ops
    x = np.array([0.5, -1.0, 1.5])
    with pytest.raises(AssertionError, match=r"mode 'rev', order 1 \(VJP\).*max difference"):
        check_grads(wrong, (x,))
    check_grads(wrong, (x,), modes=("fwd",))  # its JVP is right
    # right at first order; the second derivative through the detached factor is wrong
    check_grads(first_only, (x,), order=1)
    with pytest.raises(AssertionError, match=r"mode 'rev', order 2 \(grad-of-grad\)"):
        check_grads(first_only, (x,), order=2)
    with pytest.raises(AssertionError, match=r"order 2 \((grad-of-grad|jvp-of-grad)\)"):
        check_grads(first_only, (x,), modes=("rev", "fwd"), order=2)


def test_check_grads_message_has_the_max_difference(cube_ops):
    wrong, _ = cube_ops
    x = np.array([2.0])  # 3 x^2 = 12 vs 2 x^2 = 8: difference 4 times |cotangent|
    with pytest.raises(AssertionError) as info:
        check_grads(wrong, (x,), order=1, modes=("rev",))
    message = str(info.value)
    assert "max difference" in message and "gradient of input 0" in message


def test_check_grads_jvp_of_jvp_catches_a_wrong_second_forward_derivative():
    name = "_test_cube_wrong_fwd_second"
    try:
        _, op = _throwaway(
            name,
            vjp=lambda cts, outs, args, params, needs: (cts[0] * 3 * args[0] * args[0],),
            jvp=lambda tangents, outs, args, params: tangents[0] * 3 * args[0] * args[0].detach(),
        )
        x = np.array([0.5, 1.5])
        check_grads(op, (x,), modes=("fwd",), order=1)
        with pytest.raises(AssertionError, match=r"mode 'fwd', order 2 \(jvp-of-jvp\)"):
            check_grads(op, (x,), modes=("fwd",), order=2)
    finally:
        REGISTRY.pop(name, None)
