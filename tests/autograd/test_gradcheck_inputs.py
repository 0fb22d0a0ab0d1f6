"""gradcheck beyond the seed tests: nested inputs and outputs, ``masked``, bad input, the dtype
checks, the undefined-tangent check, the "backward multiplied by grad_output" check and devices.

Custom ops (``OpDef``) stand in for functions with deliberately wrong rules; each is removed
from the registry after its test.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import autograd
from dualad._dispatch import REGISTRY, OpDef, apply1, dispatch, register
from dualad.autograd.gradcheck import GradcheckError

F64 = dualad.float64
FAST = [True, False]
ALL_CHECKS = {
    "check_forward_ad": True,
    "check_batched_grad": True,
    "check_batched_forward_grad": True,
}


def rand(*shape, seed=0, dtype=F64):
    values = np.random.default_rng(seed).uniform(0.5, 1.5, shape)
    return dualad.tensor(values, dtype=dtype, requires_grad=True)


@pytest.fixture
def custom_ops():
    names = []

    def make(op):
        names.append(op.name)
        return register(op)

    yield make
    for name in names:
        REGISTRY.pop(name, None)


def _same_bdim(op, args, bdims, params):
    return dispatch(op, args, params), bdims[0]


# ---------------------------------------------------------------------------------------------
# nested inputs and outputs


@pytest.mark.parametrize("fast_mode", FAST)
def test_tensors_inside_lists_tuples_and_dicts_are_differentiated(fast_mode):
    a, b, c = rand(3), rand(3, seed=1), rand(2, 3, seed=2)

    def fn(pair, mats, power):
        x, y = pair
        return (dualad.stack([x, y]) * mats["m"]) ** power

    inputs = ((a, b), {"m": c}, 2)
    assert autograd.gradcheck(fn, inputs, fast_mode=fast_mode, **ALL_CHECKS)
    assert autograd.gradgradcheck(fn, inputs, fast_mode=fast_mode, check_fwd_over_rev=True)
    # the function sees the containers it was given, and nothing was perturbed for good
    assert isinstance(inputs[0], tuple) and isinstance(inputs[1], dict)
    np.testing.assert_array_equal(a.detach().numpy(), rand(3).detach().numpy())


@pytest.mark.parametrize("fast_mode", FAST)
def test_nested_inputs_are_numbered_in_flattened_order(fast_mode):
    a, b, c = rand(2), rand(2, seed=1), rand(2, seed=2)

    def fn(x, rest):
        y, z = rest
        return x * y.detach() * z  # the gradient for y (input 1) is missing

    with pytest.raises(
        GradcheckError, match="Jacobian mismatch for output 0 with respect to input 1,"
    ):
        autograd.gradcheck(fn, (a, [b, c]), fast_mode=fast_mode)
    # a nested tensor that does not require grad is a constant, not an input
    b.requires_grad_(False)
    assert autograd.gradcheck(fn, (a, [b, c]), fast_mode=fast_mode)


def test_nested_outputs_are_flattened():
    a, b = rand(3), rand(3, seed=1)

    def fn(x, y):
        return [x * y, (dualad.sin(x), {"t": dualad.tanh(y)})]

    assert autograd.gradcheck(fn, (a, b), **ALL_CHECKS)

    def wrong(x, y):
        return [x * y, (x * y.detach(),)]

    with pytest.raises(GradcheckError, match="for output 1 with respect to input 1"):
        autograd.gradcheck(wrong, (a, b))


def test_only_nested_inputs_require_grad():
    a = rand(4)
    assert autograd.gradcheck(lambda xs: xs[0].exp(), ([a],), fast_mode=True)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        autograd.gradcheck(lambda xs: xs[0].exp(), ([a.detach()],))


# ---------------------------------------------------------------------------------------------
# masked


@pytest.fixture
def sloppy_op(custom_ops):
    """``2 x`` whose VJP (itself this op, so also at second order) adds 1e-9: the Jacobians
    are right to ``atol``, but a zero grad_output gives a gradient that is not exactly zero."""

    def vjp(cts, outs, args, params, needs):
        return (apply1(op, cts[0], {}) + 1e-9,)

    op = custom_ops(
        OpDef(
            "gradcheck_test_sloppy",
            lambda xp, x: x * 2,
            vjp=vjp,
            jvp=lambda tangents, outs, args, params: tangents[0] * 2,
            batch=_same_bdim,
            save_args=False,
        )
    )
    return op


@pytest.mark.parametrize("fast_mode", FAST)
def test_masked_relaxes_only_the_zero_grad_output_check(fast_mode, sloppy_op):
    x = rand(3)

    def fn(a):
        return apply1(sloppy_op, a, {})

    common = {"fast_mode": fast_mode, "check_undefined_grad": False}
    for masked in (None, False):
        with pytest.raises(GradcheckError, match=r"^backward not multiplied by grad_output$"):
            autograd.gradcheck(fn, (x,), masked=masked, **common)
        assert not autograd.gradcheck(fn, (x,), masked=masked, raise_exception=False, **common)
    assert autograd.gradcheck(fn, (x,), masked=True, **common)
    # masked does not hide a wrong Jacobian
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect"):
        autograd.gradcheck(lambda a: fn(a) * a.detach(), (x,), masked=True, **common)


def test_masked_reaches_gradgradcheck(sloppy_op):
    x = rand(3)

    def fn(a):
        return apply1(sloppy_op, a * a, {})

    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        autograd.gradgradcheck(fn, (x,), check_undefined_grad=False)
    assert autograd.gradgradcheck(fn, (x,), masked=True, check_undefined_grad=False)


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("fast_mode", FAST)
def test_integer_and_non_tensor_inputs_pass_through(fast_mode):
    x = rand(3)
    index = dualad.tensor(np.array([2, 0]))
    seen = []

    def fn(a, idx, scale, name):
        seen.append((idx.dtype, scale, name))
        return a[idx] * scale

    assert autograd.gradcheck(fn, (x, index, 3.0, "tag"), fast_mode=fast_mode, **ALL_CHECKS)
    assert all(s == (dualad.int64, 3.0, "tag") for s in seen)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        autograd.gradcheck(lambda i: i * 2, (index,), fast_mode=fast_mode)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        autograd.gradcheck(lambda i, s: i * s, (np.ones(3), 2.0), fast_mode=fast_mode)


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point and complex dtype can require grad"):
        dualad.tensor(np.array([1, 2])).requires_grad_()


def test_empty_inputs_are_not_overlapping():
    # a (2, 0) array has zero strides in NumPy, without any overlap (split into an empty piece)
    x = dualad.tensor(np.zeros((2, 0)), requires_grad=True)
    assert x.detach().numpy().strides == (0, 0)
    y = rand(2, 3)
    assert autograd.gradcheck(lambda a, b: (a.sum(1) + b.sum(1), a * 2), (x, y), **ALL_CHECKS)
    assert autograd.gradgradcheck(
        lambda a: dualad.split(a, [1, 0, 2], 1), (y,), check_fwd_over_rev=True
    )


@pytest.mark.parametrize("fast_mode", FAST)
def test_inputs_are_left_as_they_were(fast_mode):
    x = rand(2, 3)
    before = x.detach().numpy().copy()
    version = x._version
    autograd.gradcheck(dualad.exp, (x,), fast_mode=fast_mode, **ALL_CHECKS)
    autograd.gradgradcheck(dualad.exp, (x,), fast_mode=fast_mode)
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == version and x.grad is None and x.requires_grad


def test_non_contiguous_and_read_only_inputs():
    base = rand(3, 4)
    x = base.detach().transpose(0, 1).requires_grad_()  # a strided view
    assert autograd.gradcheck(dualad.tanh, (x,), **ALL_CHECKS)
    data = np.random.default_rng(0).random((3, 2))
    data.flags.writeable = False
    y = dualad.tensor(data, requires_grad=True)
    y._data = data  # a read-only buffer: gradcheck perturbs a private copy
    assert autograd.gradcheck(dualad.sin, (y,), fast_mode=False)
    assert y._data is data


# ---------------------------------------------------------------------------------------------
# dtype checks


def test_check_grad_dtypes(custom_ops):
    # a VJP that returns float32: the engine casts gradients to their input's dtype (like
    # PyTorch's validate_outputs), so the reverse dtype check passes
    op = custom_ops(
        OpDef(
            "gradcheck_test_f32_vjp",
            lambda xp, x: x * 2,
            vjp=lambda cts, outs, args, params, needs: ((cts[0] * 2).to(dualad.float32),),
            jvp=lambda tangents, outs, args, params: tangents[0] * 2,
            batch=_same_bdim,
            save_args=False,
        )
    )
    x = rand(2)
    assert autograd.gradcheck(lambda a: apply1(op, a, {}), (x,), check_grad_dtypes=True)

    # a JVP that returns a complex tangent for a real output
    op2 = custom_ops(
        OpDef(
            "gradcheck_test_complex_tangent",
            lambda xp, x: x * 2,
            vjp=lambda cts, outs, args, params, needs: (cts[0] * 2,),
            jvp=lambda tangents, outs, args, params: tangents[0] * 2 + 0j,
            batch=_same_bdim,
            save_args=False,
        )
    )
    for fast_mode in FAST:
        kwargs = {"check_forward_ad": True, "fast_mode": fast_mode}
        assert autograd.gradcheck(lambda a: apply1(op2, a, {}), (x,), **kwargs)
        with pytest.raises(GradcheckError, match=r"^Forward AD gradient has dtype mismatch\.$"):
            autograd.gradcheck(lambda a: apply1(op2, a, {}), (x,), check_grad_dtypes=True, **kwargs)


# ---------------------------------------------------------------------------------------------
# undefined tangents


def test_undefined_tangent_must_act_like_a_zero_tangent(custom_ops):
    # JVP of x * y that treats a missing tangent of x as ones instead of zeros: every Jacobian
    # (all tangents given) is right, only the undefined-tangent check sees it
    def jvp(tangents, outs, args, params):
        tx, ty = tangents
        tx = dualad.ones_like(args[0]) if tx is None else tx
        return tx * args[1] + (0 if ty is None else ty * args[0])

    op = custom_ops(
        OpDef(
            "gradcheck_test_bad_undefined_tangent",
            lambda xp, x, y: x * y,
            vjp=lambda cts, outs, args, params, needs: (cts[0] * args[1], cts[0] * args[0]),
            jvp=jvp,
            batch=_same_bdim,
        )
    )
    x, y = rand(2), rand(2, seed=1)

    def fn(a, b):
        return dispatch(op, (a, b), {})

    for fast_mode in FAST:
        kwargs = {"check_forward_ad": True, "fast_mode": fast_mode}
        assert autograd.gradcheck(fn, (x, y), check_undefined_grad=False, **kwargs)
        with pytest.raises(
            GradcheckError,
            match=r"^Mismatch in tangent values for output with index: 0 when input: .* has an "
            r"undefined tangent value",
        ):
            autograd.gradcheck(fn, (x, y), **kwargs)


# ---------------------------------------------------------------------------------------------
# gradgradcheck's default grad_outputs


@pytest.mark.parametrize("dtype", [F64, dualad.complex128])
@pytest.mark.parametrize("non_contiguous", [False, True])
def test_default_grad_outputs_follow_the_global_seed(custom_ops, dtype, non_contiguous):
    seen = []

    def vjp(cts, outs, args, params, needs):
        seen.append(cts[0])
        return (cts[0] * 2,)

    op = custom_ops(
        OpDef(
            "gradcheck_test_seen_cotangent",
            lambda xp, x: x * 2,
            vjp=vjp,
            jvp=lambda tangents, outs, args, params: tangents[0] * 2,
            batch=_same_bdim,
            save_args=False,
        )
    )
    x = rand(2, 3, dtype=dtype)

    def first_cotangent(seed):
        seen.clear()
        dualad.manual_seed(seed)
        autograd.gradgradcheck(
            lambda a: apply1(op, a, {}),
            (x,),
            gen_non_contig_grad_outputs=non_contiguous,
            check_undefined_grad=False,
        )
        return seen[0]

    go = first_cotangent(7)
    values = go.detach().numpy()
    assert go.dtype == dtype and tuple(go.shape) == (2, 3) and go.requires_grad
    assert go.detach().numpy().flags.c_contiguous != non_contiguous
    for part in (values.real, values.imag) if dtype == dualad.complex128 else (values,):
        assert np.all((part >= -1) & (part < 1)) and np.ptp(part) > 0.1
    np.testing.assert_array_equal(first_cotangent(7).detach().numpy(), values)
    assert not np.array_equal(first_cotangent(8).detach().numpy(), values)
    # a 0-d output gets a 0-d grad_output
    seen.clear()
    assert autograd.gradgradcheck(lambda a: apply1(op, a.sum(), {}), (x,))
    assert seen[0].dim() == 0 and seen[0].dtype == dtype


# ---------------------------------------------------------------------------------------------
# devices (seed test_gradcheck_input_output_different_device; needs CuPy and a GPU)


@pytest.mark.gpu
def test_gradcheck_input_output_different_device():
    x = dualad.ones((1,), dtype=F64, device="cuda", requires_grad=True)
    assert autograd.gradcheck(lambda a: a.to("cpu"), (x,), fast_mode=True, check_batched_grad=True)
    x = dualad.ones((1,), dtype=F64, device="cpu", requires_grad=True)
    assert autograd.gradcheck(lambda a: a.to("cuda"), (x,), fast_mode=True, check_batched_grad=True)


@pytest.mark.gpu
def test_gradcheck_on_the_gpu():
    # seed test_gradcheck_default_device_placement_context: every tensor on the GPU
    x = dualad.randn(3, dtype=F64, device="cuda", requires_grad=True)
    assert autograd.gradcheck(lambda a: a**2.0, x, fast_mode=True, check_batched_grad=True)
    assert autograd.gradcheck(dualad.sin, (x,), **ALL_CHECKS)
    assert autograd.gradgradcheck(dualad.tanh, (x,), check_fwd_over_rev=True)
