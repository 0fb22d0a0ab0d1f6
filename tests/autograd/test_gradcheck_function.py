"""Seed gradcheck tests written with custom ``Function``s, ported to PyTorch's API as is.

``tests/autograd/test_gradcheck.py`` ports the same tests with registry ``OpDef``s, which exist
today. These versions use ``dualad.autograd.Function`` (staticmethod ``forward``/``backward``
(alias ``vjp``)/``jvp``, ``ctx.set_materialize_grads``), as the seeds do.

``test_gradcheck_undefined_grad`` (both versions) relies on the engine running a node whose
incoming gradients are all undefined, passing ``None`` to its tensor hooks and to a custom
Function that does not materialize grads (PyTorch's behaviour).
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import autograd, fwd
from dualad.autograd.gradcheck import GradcheckError, get_analytical_jacobian
from dualad.testing import gradcheck, gradgradcheck

F64 = dualad.float64
FAST = [True, False]
Function = autograd.Function


def rand(*shape, requires_grad=True, seed=0):
    values = np.random.default_rng(seed).random(shape)
    return dualad.tensor(values, dtype=F64, requires_grad=requires_grad)


# ---------------------------------------------------------------------------------------------
# check_undefined_grad


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_undefined_grad(fast_mode):
    def fn(x):
        def hook(g):
            if g is None:
                raise RuntimeError("x is undefined")

        y = x.clone()
        y.register_hook(hook)
        return y

    x = dualad.ones(1, dtype=F64, requires_grad=True)
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support"):
        with pytest.raises(
            RuntimeError, match="Expected backward function to handle undefined output grads"
        ):
            gradcheck(fn, (x,), fast_mode=fast_mode)
        assert not gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_undefined_grad_custom_function(fast_mode):
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            if g is None:
                raise RuntimeError("x is undefined")
            return g

    x = dualad.ones(1, dtype=F64, requires_grad=True)
    kwargs = {"fast_mode": fast_mode, "check_batched_grad": False}
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support"):
        with pytest.raises(
            RuntimeError, match="Expected backward function to handle undefined output grads"
        ):
            gradcheck(F.apply, (x,), **kwargs)
        assert not gradcheck(F.apply, (x,), raise_exception=False, **kwargs)


def _two_outputs(backward):
    class TwoOut(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return backward(g1, g2)

    return TwoOut


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_undefined_grad_two_outputs(fast_mode):
    # all output gradients undefined, then each one in turn: a backward that handles a missing
    # gradient passes; one that refuses when all are missing fails the check
    def careful(g1, g2):
        total = None
        for g, k in ((g1, 2), (g2, 3)):
            if g is not None:
                total = k * g if total is None else total + k * g
        return total

    def refuses_all_missing(g1, g2):
        if g1 is None and g2 is None:
            raise RuntimeError("nothing to differentiate")
        return careful(g1, g2)

    x = rand(3)
    kwargs = {"fast_mode": fast_mode, "check_batched_grad": False}
    assert gradcheck(_two_outputs(careful).apply, (x,), **kwargs)
    with (
        pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support"),
        pytest.raises(
            RuntimeError, match="Expected backward function to handle undefined output grads"
        ),
    ):
        gradcheck(_two_outputs(refuses_all_missing).apply, (x,), **kwargs)
    assert gradcheck(
        _two_outputs(refuses_all_missing).apply, (x,), check_undefined_grad=False, **kwargs
    )


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_undefined_grad_nonzero_result(fast_mode):
    # a backward that makes up a gradient from nothing fails the check
    class MadeUp(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return dualad.ones(1, dtype=F64) if g is None else 2 * g

    x = dualad.ones(1, dtype=F64, requires_grad=True)
    kwargs = {"fast_mode": fast_mode, "check_batched_grad": False}
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support"):
        with pytest.raises(
            RuntimeError,
            match="Expected all input grads to be undefined or zero when all output grads are",
        ):
            gradcheck(MadeUp.apply, (x,), **kwargs)
        assert not gradcheck(MadeUp.apply, (x,), raise_exception=False, **kwargs)


def test_gradcheck_undefined_grad_materialized_zeros_pass():
    # the default (materialized zeros) handles undefined gradients by construction
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return 2 * x * g1 + 3 * g2

    assert gradcheck(Square.apply, (rand(4),), check_batched_grad=False)


# ---------------------------------------------------------------------------------------------
# nondeterminism


def _non_det_func():
    class NonDetFunc(Function):
        @staticmethod
        def forward(ctx, x, jitter=0.0):
            ctx._jitter = jitter
            return x

        @staticmethod
        def backward(ctx, grad_out):
            noise = 1 + dualad.rand_like(grad_out) * ctx._jitter
            return NonDetFunc.apply(grad_out, ctx._jitter) * noise, None

    return NonDetFunc


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_nondeterministic(fast_mode):
    NonDetFunc = _non_det_func()
    inp = dualad.randn(5, 5, dtype=F64, requires_grad=True)
    kwargs = {"check_batched_grad": False, "fast_mode": fast_mode}
    assert gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, **kwargs)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, **kwargs)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, **kwargs)
    assert gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, nondet_tol=1e-5, **kwargs)
    assert gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, nondet_tol=1e-5, **kwargs)
    assert gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, nondet_tol=1e-5, **kwargs)


def test_gradcheck_get_analytical_jacobian_not_reentrant():
    NonDetFunc = _non_det_func()
    a = rand(2, 2)
    outputs = NonDetFunc.apply(a, 1e-6)
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` was part of PyTorch's"):
        _, reentrant, _, _ = get_analytical_jacobian((a,), outputs)
    assert not reentrant
    with (
        pytest.raises(ValueError, match=r"Expected grad_out to be 1\.0"),
        pytest.warns(FutureWarning),
    ):
        get_analytical_jacobian((a,), outputs, grad_out=2.0)


# ---------------------------------------------------------------------------------------------
# forward mode


def test_gradcheck_forward_ad_runs_with_no_requires_grad():
    seen = []

    class UserFn(Function):
        @staticmethod
        def forward(ctx, x, y):
            if fwd._current_level >= 0:
                seen.append((x.requires_grad, y.requires_grad))
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, y_t

    common = {"check_forward_ad": True, "check_backward_ad": False, "check_batched_grad": False}
    x, y = rand(2), rand(2, seed=1)
    for undefined, batched in [(False, False), (True, False), (True, True)]:
        assert gradcheck(
            UserFn.apply,
            (x, y),
            check_undefined_grad=undefined,
            check_batched_forward_grad=batched,
            **common,
        )
    y = rand(2, requires_grad=False, seed=1)
    assert gradcheck(
        UserFn.apply, (x, y), check_undefined_grad=True, check_batched_forward_grad=True, **common
    )
    assert seen and not any(a or b for a, b in seen)


def test_gradcheck_forward_ad_respects_requires_grad():
    jvp_count = [0]

    class UserFn(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            jvp_count[0] += 1
            return x_t, y_t

    common = {"check_forward_ad": True, "check_backward_ad": False, "check_batched_grad": False}
    x, y = rand(1), rand(1, seed=1)
    for undefined, batched, expected in [(False, False, 2), (True, False, 6), (True, True, 12)]:
        jvp_count[0] = 0
        gradcheck(
            UserFn.apply,
            (x, y),
            check_undefined_grad=undefined,
            check_batched_forward_grad=batched,
            **common,
        )
        assert jvp_count[0] == expected
    jvp_count[0] = 0
    y = rand(1, requires_grad=False, seed=1)
    gradcheck(
        UserFn.apply, (x, y), check_undefined_grad=True, check_batched_forward_grad=True, **common
    )
    assert jvp_count[0] == 5  # 1 + 1 + 3


@pytest.mark.parametrize("fast_mode", FAST)
def test_gradcheck_check_forward_or_backward_only(fast_mode):
    class UserFn(Function):
        @staticmethod
        def forward(ctx, foo, fwd_bad, bwd_bad):
            ctx.fwd_bad = fwd_bad
            ctx.bwd_bad = bwd_bad
            return foo * 2

        @staticmethod
        def vjp(ctx, g_out):
            if ctx.bwd_bad:
                raise RuntimeError("FAIL BWD")
            return 2 * g_out, None, None

        @staticmethod
        def jvp(ctx, g_in, _1, _2):
            if ctx.fwd_bad:
                raise RuntimeError("FAIL FWD")
            return 2 * g_in

    for check_forward_ad in (True, False):
        for check_backward_ad in (True, False):
            for fwd_bad in (True, False):
                for bwd_bad in (True, False):
                    x = rand(2)

                    kwargs = {
                        "check_forward_ad": check_forward_ad,
                        "check_backward_ad": check_backward_ad,
                        "check_undefined_grad": check_backward_ad,
                        "check_batched_grad": check_backward_ad,
                        "fast_mode": fast_mode,
                    }

                    def run(args=(x, fwd_bad, bwd_bad), kwargs=kwargs):
                        return gradcheck(UserFn.apply, args, **kwargs)

                    if not check_forward_ad and not check_backward_ad:
                        with pytest.raises(AssertionError, match="Expected at least one of"):
                            run()
                        continue
                    fwd_should_fail = fwd_bad and check_forward_ad
                    bwd_should_fail = bwd_bad and check_backward_ad
                    if not fwd_should_fail and not bwd_should_fail:
                        assert run()
                        continue
                    message = "FAIL BWD" if bwd_should_fail else "FAIL FWD"
                    with pytest.raises(RuntimeError, match=message) as info:
                        run()
                    assert not isinstance(info.value, GradcheckError)


def test_gradcheck_forward_ad_batched_grad_random_jvp():
    class Fn(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo * 2

        @staticmethod
        def vjp(ctx, g_out):
            return g_out * 2

        @staticmethod
        def jvp(ctx, g_in):
            dualad.randn_like(g_in)
            return g_in * 2

    x = rand(2)
    msg = "vmap: We do not yet support calling random operations inside of vmap"
    with pytest.raises(RuntimeError, match=msg):
        gradcheck(Fn.apply, (x,), check_forward_ad=True, check_batched_forward_grad=True)
