"""gradcheck / gradgradcheck: seed ports (spec/forward.md §5.3) and op-database checks.

``gradcheck``/``gradgradcheck`` below are the test-suite wrappers (fast mode and batched grad
on by default), as in the seed tests; ``autograd.gradcheck`` is the public one.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import dualad
from dualad import autograd, fwd
from dualad._dispatch import REGISTRY, OpDef, apply1, dispatch, register
from dualad.autograd.gradcheck import (
    GradcheckError,
    get_analytical_jacobian,
    get_numerical_jacobian,
)
from dualad.testing import assert_close, gradcheck, gradgradcheck

F64 = dualad.float64
C128 = dualad.complex128
FAST = [True, False]


def rand(*shape, dtype=F64, requires_grad=True, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.random(shape)
    if dtype == C128:
        values = values + 1j * rng.random(shape)
    return dualad.tensor(values, dtype=dtype, requires_grad=requires_grad)


def ones(*shape, dtype=F64):
    return dualad.ones(shape, dtype=dtype, requires_grad=True)


# ---------------------------------------------------------------------------------------------
# custom ops registered for one test (removed from REGISTRY afterwards)


@pytest.fixture
def custom_ops():
    names = []

    def make(op):
        names.append(op.name)
        return register(op)

    yield make
    for name in names:
        REGISTRY.pop(name, None)


def _identity_batch(op, args, bdims, params):
    return dispatch(op, args, params), bdims[0]


# ---------------------------------------------------------------------------------------------
# basics


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_single_input(fast_mode):
    def f(inp):
        return inp.mul(5)

    x = rand(10)
    assert gradcheck(f, x, fast_mode=fast_mode)
    assert gradgradcheck(f, x, fast_mode=fast_mode)


def test_unrelated_inputs():
    def f(x, y):
        return x * x

    x, y = rand(2, 2), rand(2, 2, seed=1)
    assert gradcheck(f, (x, y))
    assert gradgradcheck(f, (x, y))


@pytest.mark.parametrize("fn,nargs", [(dualad.sin, 1), (dualad.add, 2)])
def test_out_of_place_basic_forward_batched(fn, nargs):
    args = tuple(rand(4, 4, seed=i) for i in range(nargs))
    assert autograd.gradcheck(
        fn,
        args,
        check_forward_ad=True,
        check_batched_grad=True,
        check_batched_forward_grad=True,
    )


@pytest.mark.parametrize("fast_mode", FAST)
@pytest.mark.parametrize("masked", [True, False])
def test_gradcheck_input(fast_mode, masked):
    # seed: sum of a sparse tensor, for each sparse layout; dualad tensors are dense (every
    # element specified), so masked or not the check is the same
    x = rand(2, 2)
    assert gradcheck(dualad.sum, x, masked=masked, check_batched_grad=False, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_dense_and_sparse_inputs(fast_mode):
    # seed: x * y.to_dense() with y sparse; the dense analogue
    a, b = rand(2, 2), rand(2, 2, seed=1)
    assert gradcheck(
        lambda x, y: x * y, (a, b), masked=True, check_batched_grad=False, fast_mode=fast_mode
    )


def test_inputs_as_list_and_non_tensor_args_pass_through():
    x = rand(3)
    assert gradcheck(lambda a: a * 2, [x])
    assert gradcheck(lambda a, k, flag: a**k if flag else a, (x, 3, True))


# ---------------------------------------------------------------------------------------------
# argument assertions and input validation (always raised, whatever raise_exception says)


def test_gradcheck_option_assertions():
    x = rand(2)
    with pytest.raises(AssertionError, match="Expected at least one of"):
        gradcheck(dualad.sin, x, check_forward_ad=False, check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires check_backward_ad"):
        gradcheck(dualad.sin, x, check_forward_ad=True, check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_batched_forward_grad=True requires"):
        autograd.gradcheck(dualad.sin, x, check_batched_forward_grad=True)
    with pytest.raises(AssertionError, match="check_fwd_over_rev or check_rev_over_rev"):
        gradgradcheck(dualad.sin, x, check_rev_over_rev=False, check_fwd_over_rev=False)
    with pytest.raises(AssertionError, match="check_undefined_grad=True requires check_rev_over"):
        gradgradcheck(dualad.sin, x, check_rev_over_rev=False, check_fwd_over_rev=True)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires check_rev_over"):
        gradgradcheck(
            dualad.sin,
            x,
            check_rev_over_rev=False,
            check_fwd_over_rev=True,
            check_undefined_grad=False,
        )


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_validates_inputs(fast_mode):
    x = dualad.tensor(np.random.default_rng(0).random(10))
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a, (x,), raise_exception=False, fast_mode=fast_mode)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a, (3.0,), fast_mode=fast_mode)

    x = dualad.ones(1, dtype=dualad.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        assert gradcheck(lambda a: a, (x,), atol=1e-1, fast_mode=fast_mode)

    x = dualad.ones(1, dtype=F64, requires_grad=True).expand((2, 2))
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda a: a, (x,), raise_exception=False, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_check_no_differentiable_outputs(fast_mode):
    x = dualad.ones((1,), requires_grad=True)
    with pytest.raises(RuntimeError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda a: dualad.tensor([a.detach().numpy()]), x, fast_mode=fast_mode)
    assert not gradcheck(
        lambda a: dualad.tensor([a.detach().numpy()]),
        x,
        raise_exception=False,
        fast_mode=fast_mode,
    )
    assert gradcheck(lambda a: (), (x,), fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_output_shape_or_dtype_depend_on_values(fast_mode):
    a = dualad.ones(1, dtype=F64, requires_grad=True)

    def fn(x):
        if bool(dualad.all(x >= 1)):
            return dualad.cat([x, x])
        return x

    with pytest.raises(AssertionError, match="return outputs with the same shape when inputs"):
        gradcheck(fn, (a,), raise_exception=False, fast_mode=fast_mode)

    def fn2(x):
        if bool(dualad.all(x >= 1)):
            return x.to(dualad.float32)
        return x

    with pytest.raises(AssertionError, match="return outputs with the same dtype when inputs"):
        gradcheck(fn2, (a,), raise_exception=False, fast_mode=fast_mode)


# ---------------------------------------------------------------------------------------------
# mismatches and messages


def _hooked_clone(x):
    y = x.clone()
    y.register_hook(lambda g: g + 1e-2)
    return y


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_jacobian_mismatch(fast_mode):
    x = ones(2, 2)
    with pytest.raises(
        RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"
    ):
        gradcheck(_hooked_clone, (x,), fast_mode=fast_mode)
    assert not gradcheck(_hooked_clone, (x,), raise_exception=False, fast_mode=fast_mode)

    x_c = ones(2, 2, dtype=C128)
    imag_msg = "While considering the imaginary part of complex outputs only"
    with pytest.raises(RuntimeError, match=imag_msg):
        gradcheck(_hooked_clone, (x_c,), fast_mode=False)
    assert not gradcheck(_hooked_clone, (x_c,), raise_exception=False, fast_mode=False)

    def fn2(x):  # R -> C
        y = x + 1j * x
        y.register_hook(lambda g: g + 1e-2)
        return y

    with pytest.raises(RuntimeError, match=imag_msg):
        gradcheck(fn2, (x,), fast_mode=False)
    assert not gradcheck(fn2, (x,), raise_exception=False, fast_mode=False)

    def fn3(x):  # C -> R
        y = dualad.real(x)
        y.register_hook(lambda g: g + 1e-2)
        return y

    with pytest.raises(
        RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"
    ):
        gradcheck(fn3, (x_c,), fast_mode=False)
    assert not gradcheck(fn3, (x_c,), raise_exception=False, fast_mode=False)


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_custom_error(fast_mode):
    x = ones(2, 2)
    with pytest.raises(
        GradcheckError, match="Jacobian mismatch for output 0 with respect to input"
    ):
        gradcheck(_hooked_clone, (x,), fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input"):
        gradcheck(_hooked_clone, (x,), fast_mode=fast_mode)
    assert not gradcheck(_hooked_clone, (x,), raise_exception=False, fast_mode=fast_mode)

    def fn2(x):
        raise RuntimeError("Not a GradcheckError!")

    with pytest.raises(RuntimeError, match="Not a GradcheckError!"):
        gradcheck(fn2, (x,), fast_mode=fast_mode, raise_exception=False)


def test_fast_mode_failure_reports_slow_mode_jacobians():
    x = ones(2, 2)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_hooked_clone, (x,), fast_mode=True)
    text = str(info.value)
    assert "recompute numerical and analytical jacobians in slow mode" in text
    assert "The max per-element difference (slow mode) is: 0.01" in text


def test_wrong_vjp_is_caught(custom_ops):
    op = custom_ops(
        OpDef(
            "gradcheck_test_bad_square",
            lambda xp, x: x * x,
            vjp=lambda cts, outs, args, params, needs: (cts[0] * args[0] * 2.2,),
            jvp=lambda tangents, outs, args, params: tangents[0] * args[0] * 2,
            batch=_identity_batch,
        )
    )
    x = rand(5)
    for fast_mode in FAST:
        with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect"):
            autograd.gradcheck(lambda a: apply1(op, a, {}), (x,), fast_mode=fast_mode)
        # the forward rule is right
        assert autograd.gradcheck(
            lambda a: apply1(op, a, {}),
            (x,),
            fast_mode=fast_mode,
            check_forward_ad=True,
            check_backward_ad=False,
            check_undefined_grad=False,
        )
    assert "gradcheck_test_bad_square" in REGISTRY


def test_wrong_jvp_is_caught(custom_ops):
    op = custom_ops(
        OpDef(
            "gradcheck_test_bad_jvp",
            lambda xp, x: x * x,
            vjp=lambda cts, outs, args, params, needs: (cts[0] * args[0] * 2,),
            jvp=lambda tangents, outs, args, params: tangents[0] * args[0] * 3,
            batch=_identity_batch,
        )
    )
    x = rand(4)
    for fast_mode in FAST:
        assert autograd.gradcheck(lambda a: apply1(op, a, {}), (x,), fast_mode=fast_mode)
        with pytest.raises(
            GradcheckError,
            match="Jacobian computed with forward mode mismatch for output 0 with respect to "
            "input 0",
        ):
            autograd.gradcheck(
                lambda a: apply1(op, a, {}), (x,), fast_mode=fast_mode, check_forward_ad=True
            )


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_nondeterministic(fast_mode, custom_ops):
    rng = np.random.default_rng(0)

    def nondet_vjp(cts, outs, args, params, needs):
        jitter = params["jitter"]
        noise = dualad.tensor(1 + rng.random(cts[0].shape) * jitter)
        return (apply1(op, cts[0], {"jitter": jitter}) * noise,)

    op = custom_ops(
        OpDef(
            "gradcheck_test_nondet",
            lambda xp, x, jitter: x.copy(),
            vjp=nondet_vjp,
            jvp=lambda tangents, outs, args, params: tangents[0],
            batch=_identity_batch,
            save_args=False,
        )
    )
    inp = rand(5)
    kwargs = {"fast_mode": fast_mode, "check_batched_grad": False}
    assert gradcheck(lambda x: apply1(op, x, {"jitter": 0.0}), inp, **kwargs)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradcheck(lambda x: apply1(op, x, {"jitter": 1e-6}), inp, **kwargs)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradgradcheck(lambda x: apply1(op, x, {"jitter": 1e-12}), inp, **kwargs)
    assert gradcheck(lambda x: apply1(op, x, {"jitter": 0.0}), inp, nondet_tol=1e-5, **kwargs)
    assert gradcheck(lambda x: apply1(op, x, {"jitter": 1e-6}), inp, nondet_tol=1e-5, **kwargs)
    assert gradgradcheck(lambda x: apply1(op, x, {"jitter": 1e-12}), inp, nondet_tol=1e-5, **kwargs)


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_check_batched_grad(fast_mode, custom_ops):
    # seed: to_dense of a sparse input has no batching rule; the dense analogue is a VJP that is
    # not vmap-compatible: it reads the cotangent's values as a Python number
    def bad_vjp(cts, outs, args, params, needs):
        return (cts[0] * float(np.sum(np.asarray(cts[0].detach()._data))),)

    op = custom_ops(
        OpDef(
            "gradcheck_test_unbatchable",
            lambda xp, x: x.copy(),
            vjp=bad_vjp,
            jvp=lambda tangents, outs, args, params: tangents[0],
            batch=_identity_batch,
            save_args=False,
        )
    )
    x = rand(3)
    # the Jacobian is wrong too (for grad_outputs that do not sum to 1): only the batched
    # check is of interest here
    kwargs = {"check_batched_grad": True, "fast_mode": fast_mode, "atol": 1e9, "rtol": 1e9}
    msg = "gradcheck or gradgradcheck failed while testing batched gradient"
    with pytest.raises(RuntimeError, match=msg) as info:
        gradcheck(lambda a: apply1(op, a, {}), (x,), **kwargs)
    assert isinstance(info.value, GradcheckError)
    assert not gradcheck(lambda a: apply1(op, a, {}), (x,), raise_exception=False, **kwargs)


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_complex_non_complex_outputs(fast_mode):
    def fn(x, y):
        z = x + 1j * y
        return z, x + 1

    a = ones(2, 2)
    b = ones(2, 2)
    assert autograd.gradcheck(fn, (a, b), fast_mode=fast_mode)

    def fn2(z):
        return z, dualad.real(z)

    c = ones(2, 2, dtype=C128)
    assert autograd.gradcheck(fn2, (c,), fast_mode=fast_mode)


# ---------------------------------------------------------------------------------------------
# forward mode


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_forward_ad(fast_mode):
    def fn(x, y):
        return x + y, y

    def bad_fn(x, y):
        if fwd._current_level >= 0:
            y_p, y_d = fwd.unpack_dual(y)
            y = fwd.make_dual(y_p, y_d * 1.1)
        return x + y, y

    err = "Jacobian computed with forward mode mismatch for output 0 with respect to input 1"
    for x_dtype, y_dtype in [(F64, F64), (C128, F64), (C128, C128)]:
        x = rand(2, dtype=x_dtype)
        y = rand(2, dtype=y_dtype, seed=3)
        assert gradcheck(fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)
        with pytest.raises(RuntimeError, match=err):
            gradcheck(bad_fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)

    def basic_mul(x):
        return x * 1j

    assert gradcheck(basic_mul, rand(3), check_forward_ad=True, fast_mode=fast_mode)


def test_complex_inputs_forward_message():
    def bad_fn(x):
        if fwd._current_level >= 0:
            p, t = fwd.unpack_dual(x)
            x = fwd.make_dual(p, t * 1.1)
        return x * 2

    z = rand(2, dtype=C128)
    with pytest.raises(
        GradcheckError,
        match="While considering the imaginary part of complex inputs only, Jacobian computed "
        "with forward mode mismatch",
    ):
        autograd.gradcheck(
            bad_fn, (z,), check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False
        )


def test_gradcheck_forward_ad_runs_with_no_requires_grad():
    seen = []

    def fn(x, y):
        if fwd._current_level >= 0:
            seen.append((x.requires_grad, y.requires_grad))
        return x.clone(), y.clone()

    common = {"check_forward_ad": True, "check_backward_ad": False, "check_batched_grad": False}
    x, y = rand(2), rand(2, seed=1)
    for undefined, batched in [(False, False), (True, False), (True, True)]:
        assert gradcheck(
            fn, (x, y), check_undefined_grad=undefined, check_batched_forward_grad=batched, **common
        )
    y = rand(2, requires_grad=False, seed=1)
    assert gradcheck(
        fn, (x, y), check_undefined_grad=True, check_batched_forward_grad=True, **common
    )
    assert seen and not any(a or b for a, b in seen)


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_forward_ad_batched_grad(fast_mode, custom_ops):
    x = rand(2)
    only_forward = {
        "check_forward_ad": True,
        "check_backward_ad": False,
        "check_batched_grad": False,
        "check_undefined_grad": False,
        "check_batched_forward_grad": True,
        "fast_mode": fast_mode,
    }

    def fn1(a, b: int):
        return a.clone(), a + b

    assert gradcheck(fn1, (x, 1), **only_forward)

    def fn2(a, c):  # c requires grad but is unused: its outputs' tangents are zeros
        return a.clone()

    assert gradcheck(fn2, (x, x.clone()), **only_forward)

    # a JVP rule that draws random numbers cannot run under vmap
    def random_jvp(tangents, outs, args, params):
        dualad.randn_like(tangents[0])
        return tangents[0] * 2

    op = custom_ops(
        OpDef(
            "gradcheck_test_random_jvp",
            lambda xp, x: x * 2,
            vjp=lambda cts, outs, args, params, needs: (cts[0] * 2,),
            jvp=random_jvp,
            batch=_identity_batch,
            save_args=False,
        )
    )
    msg = "vmap: We do not yet support calling random operations inside of vmap"
    with pytest.raises(RuntimeError, match=msg) as info:
        gradcheck(
            lambda a: apply1(op, a, {}),
            (x,),
            check_forward_ad=True,
            check_batched_forward_grad=True,
            fast_mode=fast_mode,
        )
    assert isinstance(info.value, GradcheckError)
    assert "While computing batched gradients, got: " in str(info.value)


def test_gradcheck_forward_ad_respects_requires_grad(custom_ops):
    calls = [0]

    def jvp(tangents, outs, args, params):
        calls[0] += 1
        return tuple(tangents)

    op = custom_ops(
        OpDef(
            "gradcheck_test_counting",
            lambda xp, x, y: (x.copy(), y.copy()),
            vjp=lambda cts, outs, args, params, needs: tuple(cts),
            jvp=jvp,
            batch=lambda op, args, bdims, params: (
                dispatch(op, args, params) if bdims[0] == bdims[1] else None,
                (bdims[0], bdims[1]),
            ),
            nout=2,
            save_args=False,
        )
    )

    def fn(x, y):
        return dispatch(op, (x, y), {})

    x, y = rand(1), rand(1, seed=1)
    common = {"check_forward_ad": True, "check_backward_ad": False, "check_batched_grad": False}
    gradcheck(fn, (x, y), check_undefined_grad=False, **common)
    assert calls[0] == 2
    calls[0] = 0
    gradcheck(fn, (x, y), **common)
    assert calls[0] == 6
    calls[0] = 0
    gradcheck(fn, (x, y), check_batched_forward_grad=True, **common)
    assert calls[0] == 12
    calls[0] = 0
    y.requires_grad_(False)
    gradcheck(fn, (x, y), check_batched_forward_grad=True, **common)
    assert calls[0] == 5


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_check_forward_or_backward_only(fast_mode, custom_ops):
    def vjp(cts, outs, args, params, needs):
        if params["bwd_bad"]:
            raise RuntimeError("FAIL BWD")
        return (cts[0] * 2,)

    def jvp(tangents, outs, args, params):
        if params["fwd_bad"]:
            raise RuntimeError("FAIL FWD")
        return tangents[0] * 2

    op = custom_ops(
        OpDef(
            "gradcheck_test_userfn",
            lambda xp, x, fwd_bad, bwd_bad: x * 2,
            vjp=vjp,
            jvp=jvp,
            batch=_identity_batch,
            save_args=False,
        )
    )
    x = rand(2)
    for fwd_bad in (True, False):
        for bwd_bad in (True, False):
            for cf in (True, False):
                for cb in (True, False):

                    def fn(a, fwd_bad=fwd_bad, bwd_bad=bwd_bad):
                        return apply1(op, a, {"fwd_bad": fwd_bad, "bwd_bad": bwd_bad})

                    kwargs = {
                        "check_forward_ad": cf,
                        "check_backward_ad": cb,
                        "check_undefined_grad": cb,
                        "check_batched_grad": cb,
                        "fast_mode": fast_mode,
                    }
                    if not cf and not cb:
                        with pytest.raises(AssertionError, match="Expected at least one of"):
                            gradcheck(fn, (x,), **kwargs)
                        continue
                    should_fail = (fwd_bad and cf) or (bwd_bad and cb)
                    if should_fail:
                        msg = "FAIL BWD" if (bwd_bad and cb) else "FAIL FWD"
                        with pytest.raises(RuntimeError, match=msg) as info:
                            gradcheck(fn, (x,), **kwargs)
                        assert not isinstance(info.value, GradcheckError)
                    else:
                        assert gradcheck(fn, (x,), **kwargs)


# ---------------------------------------------------------------------------------------------
# gradgradcheck


def test_gradgradcheck_explicit_grad_outputs_and_fwd_over_rev():
    x = rand(3)
    go = dualad.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    assert gradgradcheck(dualad.tanh, (x,), (go,), atol=1e-4)
    # a grad_output that does not require grad is a constant
    assert gradgradcheck(dualad.exp, (x,), [dualad.tensor(np.ones(3))])
    assert autograd.gradgradcheck(dualad.sin, (x,), check_fwd_over_rev=True)
    assert autograd.gradgradcheck(
        dualad.sin, (x,), gen_non_contig_grad_outputs=True, fast_mode=True
    )


def test_gradgradcheck_detects_wrong_second_derivative(custom_ops):
    # first derivative right, but its VJP (the second derivative) is not: the rule uses a
    # detached value, so create_graph sees a constant
    op = custom_ops(
        OpDef(
            "gradcheck_test_cube",
            lambda xp, x: x * x * x,
            vjp=lambda cts, outs, args, params, needs: (cts[0] * 3 * args[0].detach() ** 2,),
            jvp=lambda tangents, outs, args, params: tangents[0] * 3 * args[0] ** 2,
            batch=_identity_batch,
        )
    )
    x = rand(3)
    assert autograd.gradcheck(lambda a: apply1(op, a, {}), (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect"):
        autograd.gradgradcheck(lambda a: apply1(op, a, {}), (x,))


# ---------------------------------------------------------------------------------------------
# deprecated helpers


def test_gradcheck_get_numerical_jacobian():
    def fn(inputs):
        x, y = inputs
        return 2 * x + y, x + 2 * y

    a, b = rand(2, 2), rand(2, 2, seed=1)
    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` was part of PyTorch's"):
        jacobian = get_numerical_jacobian(fn, (a, b), target=a, eps=1e-6)
    assert_close(jacobian[0], 2 * np.eye(4), rtol=1e-6, atol=1e-6)
    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` was part of PyTorch's"):
        jacobian = get_numerical_jacobian(fn, (a, b), eps=1e-6)
    assert_close(jacobian[0], 2 * np.eye(4), rtol=1e-6, atol=1e-6)
    assert_close(jacobian[1], np.eye(4), rtol=1e-6, atol=1e-6)
    with (
        pytest.raises(ValueError, match=r"Expected grad_out to be 1\.0"),
        pytest.warns(FutureWarning),
    ):
        get_numerical_jacobian(fn, (a, b), eps=1e-6, grad_out=2.0)


def test_gradcheck_get_analytical_jacobian(custom_ops):
    def fn(x, y):
        return 2 * x + y, x + 2 * y

    a, b = rand(2, 2), rand(2, 2, seed=1)
    outputs = fn(a, b)
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` was part of PyTorch's"):
        jacobians, reentrant, sizes_ok, types_ok = get_analytical_jacobian((a, b), outputs[0])
    assert_close(jacobians[0], 2 * np.eye(4))
    assert_close(jacobians[1], np.eye(4))
    assert reentrant and sizes_ok and types_ok

    rng = np.random.default_rng(0)
    op = custom_ops(
        OpDef(
            "gradcheck_test_jitter",
            lambda xp, x: x.copy(),
            vjp=lambda cts, outs, args, params, needs: (
                cts[0] * dualad.tensor(1 + rng.random(cts[0].shape) * 1e-6),
            ),
            jvp=lambda tangents, outs, args, params: tangents[0],
            batch=_identity_batch,
            save_args=False,
        )
    )
    out = apply1(op, a, {})
    with pytest.warns(FutureWarning):
        jacobians, reentrant, _, _ = get_analytical_jacobian((a,), out)
    assert not reentrant
    with (
        pytest.raises(ValueError, match=r"Expected grad_out to be 1\.0"),
        pytest.warns(FutureWarning),
    ):
        get_analytical_jacobian((a,), out, grad_out=2.0)


def test_deprecated_jacobian_helpers_reject_complex_outputs():
    a = rand(2)
    msg = "Expected output to be non-complex. get_{} no longer supports functions that return "
    with (
        pytest.raises(ValueError, match=msg.format("numerical_jacobian") + "complex outputs"),
        pytest.warns(FutureWarning),
    ):
        get_numerical_jacobian(lambda inputs: inputs[0] * 1j, (a,))
    with (
        pytest.raises(ValueError, match=msg.format("analytical_jacobian") + "complex outputs"),
        pytest.warns(FutureWarning),
    ):
        get_analytical_jacobian((a,), a * 1j)
    # shapes: (input.numel(), output.numel())
    b = rand(3, seed=1)
    with pytest.warns(FutureWarning):
        (jacobian,) = get_numerical_jacobian(lambda inputs: inputs[0].sum() * 2, (b,), eps=1e-6)
    assert tuple(jacobian.shape) == (3, 1)
    assert_close(jacobian, np.full((3, 1), 2.0), rtol=1e-6, atol=1e-6)
    with pytest.warns(FutureWarning):
        jacobians, *_ = get_analytical_jacobian((a, b), dualad.outer(a, b))
    assert [tuple(j.shape) for j in jacobians] == [(2, 6), (3, 6)]
    expected = np.kron(np.eye(2), b.detach().numpy()[None, :])  # d(a_i b_j)/da_k
    assert_close(jacobians[0], expected)


# ---------------------------------------------------------------------------------------------
# speed


def test_fast_mode_is_much_faster_than_slow_mode():
    # issue 5: at least 10x on a 100-element input (measured ~30x on the project machine)
    x = rand(100)

    def fn(a):
        return dualad.tanh(a) * 2 + dualad.sin(a)

    def timed(fast_mode, repeat):
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            assert autograd.gradcheck(fn, (x,), fast_mode=fast_mode)
            best = min(best, time.perf_counter() - start)
        return best

    slow = timed(False, 2)
    fast = timed(True, 5)
    ratio = slow / fast
    print(
        f"gradcheck on 100 elements: slow {slow * 1e3:.1f} ms, fast {fast * 1e3:.2f} ms, "
        f"ratio {ratio:.0f}x"
    )
    assert ratio >= 10


def test_batched_grad_check_runs_the_vjp_rule_once_on_a_batch(custom_ops):
    """check_batched_grad vmaps the backward pass: the VJP rule runs once on batched
    cotangents (plus twice for the unbatched reference), not once per batch element."""
    cotangent_types = []

    def vjp(cts, outs, args, params, needs):
        cotangent_types.append(type(cts[0]).__name__)
        return (cts[0] * 2,)

    op = custom_ops(
        OpDef(
            "gradcheck_test_counted_vjp",
            lambda xp, x: x * 2,
            vjp=vjp,
            jvp=lambda tangents, outs, args, params: tangents[0] * 2,
            batch=_identity_batch,
            save_args=False,
        )
    )
    x = rand(3)

    def counted(**kwargs):
        cotangent_types.clear()
        assert autograd.gradcheck(
            lambda a: apply1(op, a, {}), (x,), check_undefined_grad=False, **kwargs
        )
        return list(cotangent_types)

    unbatched = counted(check_batched_grad=False)
    batched = counted(check_batched_grad=True)
    assert len(batched) == len(unbatched) + 3
    assert batched.count("BatchedTensor") == 1 and "BatchedTensor" not in unbatched


# ---------------------------------------------------------------------------------------------
# dualad.testing


def test_testing_wrappers_defaults(monkeypatch):
    import dualad.testing as testing

    seen = {}

    def fake(fn, inputs, *args, **kwargs):
        seen.update(kwargs)
        return True

    monkeypatch.setattr(testing, "_gradcheck", fake)
    monkeypatch.setattr(testing, "_gradgradcheck", fake)
    testing.gradcheck(None, ())
    assert seen["fast_mode"] is True and seen["check_batched_grad"] is True
    testing.gradcheck(None, (), fast_mode=None, check_batched_grad=None)
    assert seen["fast_mode"] is True and seen["check_batched_grad"] is True
    testing.gradgradcheck(None, (), fast_mode=False, check_batched_grad=False)
    assert seen["fast_mode"] is False and seen["check_batched_grad"] is False


def test_assert_close():
    assert_close(dualad.tensor([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    assert_close(1.0, 1.0)
    assert_close(np.float32(1.0), 1.0 + 1e-6)
    assert_close(dualad.tensor([1, 2]), [1, 2])
    with pytest.raises(AssertionError, match=r"Greatest absolute difference: 0\.5"):
        assert_close([1.0, 2.0], [1.0, 2.5])
    with pytest.raises(AssertionError, match=r"Greatest relative difference: 0\.2"):
        assert_close([1.0, 2.0], [1.0, 2.5])
    with pytest.raises(AssertionError, match="shape"):
        assert_close([1.0, 2.0], [1.0])
    with pytest.raises(AssertionError):
        assert_close(dualad.tensor([1, 2]), [1, 3])
    assert_close([1.0, 2.0], [1.0, 2.1], rtol=0.1, atol=0.0)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        assert_close(1.0, 1.0, rtol=1e-3)
    with pytest.raises(AssertionError):
        assert_close(float("nan"), float("nan"))
    assert_close(float("nan"), float("nan"), equal_nan=True)
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(np.float32(1.0), 1.0, check_dtype=True)
    assert_close(1 + 1j, 1 + 1j + 1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close([1.0, 0.0], [1.0, 0.0])
