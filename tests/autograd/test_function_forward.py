"""Custom ``autograd.Function`` in forward mode: ``jvp``, ``save_for_forward``, ``mark_dirty``
with tangents, the view checks and their exact errors (spec/forward.md section 1.9, C1-C16).
(The gradcheck seed tests that count a Function's jvp calls are in test_gradcheck_function.py.)

Each test names the PyTorch test (test/test_autograd.py) it was ported from.
"""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

import dualad
from dualad import autograd, fwd
from dualad.autograd import Function
from dualad.testing import gradcheck

F64 = dualad.float64


def assert_equal(actual, expected, rtol=1e-7, atol=1e-7):
    a = actual.detach().numpy() if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    e = expected.detach().numpy() if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def rand(*shape, requires_grad=False, seed=0):
    rng = np.random.default_rng(seed)
    return dualad.tensor(rng.random(shape), dtype=F64, requires_grad=requires_grad)


class Cube(Function):
    """x**3 with backward and jvp written in dualad ops (so they are differentiable too)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x**2

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * 3 * x**2


# ---------------------------------------------------------------------------------------------
# C1, C3, C4: missing methods


def test_custom_function_error_jvp():
    # test_custom_function_error (BadJvp)
    class BadJvp(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

    inp = dualad.rand(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="must implement the jvp function"), fwd.dual_level():
        d = fwd.make_dual(inp, dualad.rand_like(inp))
        BadJvp.apply(d)
    with pytest.raises(NotImplementedError), fwd.dual_level():  # (a RuntimeError subclass)
        BadJvp.apply(fwd.make_dual(inp, dualad.rand_like(inp)))
    # without a tangent the Function needs no jvp
    with fwd.dual_level():
        assert_equal(BadJvp.apply(inp), inp)


# ---------------------------------------------------------------------------------------------
# tangents in and out


def test_jvp_values_and_nested_levels():
    x = rand(3, seed=1)
    t = rand(3, seed=2)
    with fwd.dual_level():
        out = Cube.apply(fwd.make_dual(x, t))
        primal, tangent = fwd.unpack_dual(out)
    assert_equal(primal, x**3)
    assert_equal(tangent, 3 * x**2 * t)
    # nested levels: the jvp is differentiated by the outer level (exact second order)
    with fwd.dual_level() as outer, fwd.dual_level() as inner:
        d = fwd.make_dual(fwd.make_dual(x, t, level=outer), t, level=inner)
        out = Cube.apply(d)
        tangent_inner = fwd.unpack_dual(out, level=inner).tangent
        second = fwd.unpack_dual(tangent_inner, level=outer).tangent
    assert_equal(second, 6 * x * t * t)


def test_forward_runs_without_tangents_and_jvp_without_tangents_of_tangents():
    # spec/forward.md 1.9: forward sees no tangents (forward grad off); jvp runs with the
    # level suspended (no tangents of tangents at that level)
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen["forward_tangent"] = fwd.unpack_dual(x).tangent
            seen["forward_fw_enabled"] = fwd._is_fwd_grad_enabled()
            seen["forward_grad_enabled"] = dualad.is_grad_enabled()
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            seen["jvp_tangent_of_tangent"] = fwd.unpack_dual(t).tangent
            return t * 2

    x = dualad.ones(2, requires_grad=True)
    with fwd.dual_level():
        d = fwd.make_dual(x, dualad.ones(2))
        out = Probe.apply(d)
        assert_equal(fwd.unpack_dual(out).tangent, [2.0, 2.0])
        assert fwd._is_fwd_grad_enabled()
    assert seen == {
        "forward_tangent": None,
        "forward_fw_enabled": False,
        "forward_grad_enabled": False,
        "jvp_tangent_of_tangent": None,
    }


def test_jvp_called_only_when_an_input_has_a_tangent_and_materializes_zeros():
    calls = []

    class Add(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def jvp(ctx, x_t, y_t):
            calls.append((x_t, y_t))
            return x_t + y_t

    x = dualad.ones(2)
    y = dualad.ones(2)
    with fwd.dual_level():
        Add.apply(x, y)
        assert calls == []
        Add.apply(fwd.make_dual(x, dualad.full((2,), 3.0)), y)
    x_t, y_t = calls[0]
    assert_equal(x_t, [3.0, 3.0])
    assert_equal(y_t, [0.0, 0.0])  # materialised: the input had no tangent


def test_set_materialize_grads_false_gives_none_tangents():
    # C16 applied to jvp: the same flag drives tangent materialisation
    calls = []

    class Add(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            return x + y

        @staticmethod
        def jvp(ctx, x_t, y_t):
            calls.append(y_t)
            return x_t

    with fwd.dual_level():
        out = Add.apply(fwd.make_dual(dualad.ones(2), dualad.ones(2)), dualad.ones(2))
        assert_equal(fwd.unpack_dual(out).tangent, [1.0, 1.0])
    assert calls == [None]


def test_custom_function_forward_mode_non_tensor_before_tensor_args():
    # test_custom_function_forward_mode_non_tensor_before_tensor_args (C6)
    seen = []

    class MyFn(Function):
        @staticmethod
        def forward(ctx, nt, x, nt2, y):
            return x * 2 + y * 3

        @staticmethod
        def jvp(ctx, nt, x_t, nt2, y_t):
            seen.append((nt, nt2))
            return x_t * 2 + y_t * 3

    x = dualad.tensor(1.0, dtype=F64)
    t = dualad.tensor(1.0, dtype=F64)
    y = dualad.tensor(1.0, dtype=F64)
    with fwd.dual_level():
        dual_x = fwd.make_dual(x, t)
        out = MyFn.apply(1, dual_x, 1, y)
        assert_equal(fwd.unpack_dual(out).tangent, 2.0)
    assert seen == [(None, None)]
    assert gradcheck(
        MyFn.apply,
        (1, x.requires_grad_(True), 1, y.requires_grad_(True)),
        check_forward_ad=True,
        check_backward_ad=False,
        check_batched_grad=False,
    )


def test_jvp_returned_count_and_non_differentiable_positions():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    with fwd.dual_level():
        d = fwd.make_dual(dualad.ones(2), dualad.ones(2))
        with pytest.raises(
            RuntimeError,
            match=r"^Function's jvp returned an invalid number of forward gradients \(expected 2 "
            r"but got 1\)$",
        ):
            Wrong.apply(d)


def test_custom_function_forward_mode_non_differentiable():
    # test_custom_function_forward_mode_non_differentiable (spec 1.9)
    class Func(Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            return x_tangent, None

    x = dualad.tensor(2.0)
    x_tangent = dualad.tensor(1.0)
    y = dualad.tensor(3.0)
    with fwd.dual_level():
        x_dual = fwd.make_dual(x, x_tangent)
        _, out2_dual = Func.apply(x_dual, y)
        assert fwd.unpack_dual(out2_dual).tangent is None

    y = dualad.tensor(3)  # an integer input gets None as tangent
    seen = []

    class IntInput(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            seen.append(y_tangent)
            return x_tangent, None

    with fwd.dual_level():
        x_dual = fwd.make_dual(x, x_tangent)
        _, out2_dual = IntInput.apply(x_dual, y)
        assert fwd.unpack_dual(out2_dual).tangent is None
    assert seen == [None]

    class FuncWrong(Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            return x_tangent, x_tangent.clone()

    with fwd.dual_level():
        x_dual = fwd.make_dual(x, x_tangent)
        with pytest.raises(
            RuntimeError,
            match=r"^Function's jvp returned a gradient at position 1, but  the corresponding "
            r"forward output is not a differentiable Tensor.You should return None at that "
            r"position instead.$",
        ):
            FuncWrong.apply(x_dual, dualad.tensor(3.0))

    class NonTensorOutput(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone(), object(), x.clone()

        @staticmethod
        def jvp(ctx, x_tangent):
            return x_tangent, None, x_tangent

    with fwd.dual_level():
        x_dual = fwd.make_dual(x, x_tangent)
        out_dual, _, out2_dual = NonTensorOutput.apply(x_dual)
        assert_equal(fwd.unpack_dual(out_dual).tangent, x_tangent)
        assert_equal(fwd.unpack_dual(out2_dual).tangent, x_tangent)
        # the same tangent object is not shared by the outputs (in-place safety)
        assert fwd.unpack_dual(out_dual).tangent is not fwd.unpack_dual(out2_dual).tangent


# ---------------------------------------------------------------------------------------------
# C10, C11, R1: save_for_forward and reverse over forward


def test_custom_function_save_for_forward():
    # test_custom_function_save_for_forward (C10, C11, R1)
    class Func(Function):
        @staticmethod
        def forward(ctx, x, y, z):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.z = z
            ctx.prod = x * y
            return z * ctx.prod

        @staticmethod
        def jvp(ctx, x_t, y_t, _):
            x_p, y_p = ctx.saved_tensors
            z = ctx.z
            return z * (y_p * x_t + x_p * y_t)

        @staticmethod
        def vjp(ctx, grad_out):
            x, y = ctx.saved_tensors
            z = ctx.z
            return z * grad_out * y, z * grad_out * x, None

    a = dualad.tensor(1.0, requires_grad=True, dtype=F64)
    t = dualad.tensor(1.0, dtype=F64)
    b = dualad.tensor(2.0, requires_grad=True, dtype=F64)
    c = 4
    with fwd.dual_level():
        a_dual = fwd.make_dual(a, t)
        out = Func.apply(a_dual, b, c)
        assert_equal(fwd.unpack_dual(out).tangent, 8.0)  # z * y * t
        out.backward()
    assert_equal(a.grad, 8.0)
    assert_equal(b.grad, 4.0)
    assert gradcheck(Func.apply, (a, b, c), check_forward_ad=True)

    lengths = []

    class OnlyBackward(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def jvp(ctx, x_t):
            lengths.append(("jvp", len(ctx.saved_tensors)))
            return x_t

        @staticmethod
        def vjp(ctx, grad_out):
            (_x,) = ctx.saved_tensors
            lengths.append(("vjp", len(ctx.saved_tensors)))
            return grad_out

    with fwd.dual_level():
        a_dual = fwd.make_dual(a, t)
        out = OnlyBackward.apply(a_dual)
        out.backward()
    assert lengths == [("jvp", 0), ("vjp", 1)]
    assert gradcheck(OnlyBackward.apply, (a,), check_forward_ad=True)


def test_save_for_forward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x, 2)
            return x * 1

        @staticmethod
        def jvp(ctx, t):
            return t

    with pytest.raises(TypeError, match="save_for_forward expects all arguments to be tensors"):
        Bad.apply(dualad.ones(1))


def test_forward_over_reverse_through_custom_backward():
    # R5: the backward (in dualad ops) carries tangents: hessian-vector product by forward over
    # reverse with the Function inside
    x = rand(3, requires_grad=True, seed=3)
    v = rand(3, seed=4)
    with fwd.dual_level():
        xd = fwd.make_dual(x, v)
        (g,) = autograd.grad(Cube.apply(xd).sum(), xd, create_graph=True)
        hvp = fwd.unpack_dual(g).tangent
    assert_equal(g.detach(), 3 * x.detach() ** 2)
    assert_equal(hvp, 6 * x.detach() * v)


# ---------------------------------------------------------------------------------------------
# C5, C7, C8, C9: gradcheck and the view / in-place checks


def test_custom_function_forward_mode_wrong_formula():
    # test_custom_function_forward_mode_wrong_formula (C5)
    class UserFn(Function):
        @staticmethod
        def forward(ctx, foo, should_fail):
            ctx.should_fail = should_fail
            return foo * 2

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            if ctx.should_fail:
                return 3 * gI
            return 2 * gI

    inp = rand(10, requires_grad=True)
    assert gradcheck(UserFn.apply, (inp, False), check_forward_ad=True)
    with pytest.raises(
        RuntimeError, match="Jacobian computed with forward mode mismatch for output 0"
    ):
        gradcheck(UserFn.apply, (inp, True), check_forward_ad=True)


def test_custom_function_forward_mode_view_checks():
    # test_custom_function_forward_mode_view_checks (C7)
    flag_to_error = {
        "ok": None,
        "not_a_view": "jvp is not returning a view",
        "not_a_view_of_inp": "jvp is not returning a view of the given",
        "not_a_view_of_inp_base": "jvp is not returning a view of the same base",
    }

    class ViewFn(Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.flag = flag
            ctx.size = foo.size()
            return foo.narrow(0, 0, 2)

        @staticmethod
        def vjp(ctx, gO):
            # (the seed's gO.new_zeros(size).narrow(0, 0, 2).copy_(gO), written so that it
            # batches: gradcheck's batched check vmaps this backward)
            rest = dualad.zeros((ctx.size[0] - 2, *ctx.size[1:]), dtype=gO.dtype)
            return dualad.cat([gO, rest], 0), None

        @staticmethod
        def jvp(ctx, gI, _):
            res = gI.narrow(0, 0, 2)
            if ctx.flag != "ok":
                res = res.clone()
            if ctx.flag in ["not_a_view_of_inp", "not_a_view_of_inp_base"]:
                res = res.view_as(res)
            return res

    inp = rand(4, 4, requires_grad=True)
    for flag, msg in flag_to_error.items():

        def test_fn(inp, flag=flag):
            if flag == "not_a_view_of_inp_base":
                inp = inp.view_as(inp)
            return ViewFn.apply(inp, flag)

        if msg is None:
            assert gradcheck(test_fn, inp, check_forward_ad=True)
        else:
            with pytest.raises(RuntimeError, match=msg):
                gradcheck(test_fn, inp, check_forward_ad=True)


@pytest.mark.parametrize("k", ["view_as", "self", "mul_by_2"])
def test_custom_function_forward_mode_forward_is_no_op(k):
    # test_custom_function_forward_mode_forward_is_no_op (C8)
    error_regex = r"A custom Function's forward is returning a view \(or an input as-is\)"
    fn = {
        "view_as": lambda x: x.view_as(x),
        "self": lambda x: x,
        "mul_by_2": lambda x: x * 2,
    }[k]

    class MyFn(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y, x

        @staticmethod
        def vjp(ctx, gO1, gO2):
            return gO1 + gO2, gO1

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t + y_t, fn(x_t)

    a = dualad.tensor(1.0, dtype=F64, requires_grad=True)
    t = dualad.tensor(1.0, dtype=F64)
    b = dualad.tensor(1.0, dtype=F64, requires_grad=True)
    c = dualad.tensor(1.0, dtype=F64)
    t2 = dualad.tensor(1.0, dtype=F64)
    d = dualad.tensor(1.0, dtype=F64)
    with fwd.dual_level():
        a_dual = fwd.make_dual(a, t)
        c_dual = fwd.make_dual(c, t2)
        if k == "view_as":
            _, out2 = MyFn.apply(a_dual, b)
            assert fwd.unpack_dual(out2).tangent._base is t
            _, out2 = MyFn.apply(c_dual, d)
            assert fwd.unpack_dual(out2).tangent._base is t2
        else:
            with pytest.raises(RuntimeError, match=error_regex):
                MyFn.apply(a_dual, b)
            with pytest.raises(RuntimeError, match=error_regex):
                MyFn.apply(c_dual, d)
    if k == "view_as":
        assert gradcheck(MyFn.apply, (a, c), check_forward_ad=True)
    else:
        with pytest.raises(RuntimeError, match=error_regex):
            gradcheck(MyFn.apply, (a, c), check_forward_ad=True)


def test_custom_function_forward_mode_inplace_checks():
    # test_custom_function_forward_mode_inplace_checks (C9)
    class InplaceFn(Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.mark_dirty(foo)
            ctx.flag = flag
            foo.mul_(2)
            return foo

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            if ctx.flag:
                return 2 * gI
            gI.mul_(2)
            return gI

    inp = rand(4, 4, requires_grad=True)

    def test_fn(inp, flag):
        inp = inp.clone()
        return InplaceFn.apply(inp, flag)

    assert gradcheck(test_fn, (inp, False), check_forward_ad=True)
    with pytest.raises(
        RuntimeError,
        match="inplace custom Function is not modifying the forward mode gradients inplace",
    ):
        gradcheck(test_fn, (inp, True), check_forward_ad=True)


def test_inplace_jvp_that_returns_another_object():
    # C9, the second upstream message: the tangent was modified but another object returned
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def jvp(ctx, t):
            t.mul_(2)
            return t.clone()

    with fwd.dual_level():
        d = fwd.make_dual(dualad.ones(2).clone(), dualad.ones(2))
        with pytest.raises(
            RuntimeError,
            match="An inplace custom Function is not returning the forward mode gradients as-is",
        ):
            Bad.apply(d)


def test_custom_function_mark_dirty_not_differentiable():
    # test_custom_function_mark_dirty_not_differentiable (C9, FN-19)
    def get_custom_fn(jvp_err):
        class InplaceMul(Function):
            @staticmethod
            def forward(ctx, x):
                result = x.mul_(2)
                ctx.mark_dirty(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                pass

            @staticmethod
            def jvp(ctx, x_t):
                if jvp_err:
                    return x_t
                return x_t.mul_(2)

        return InplaceMul

    for requires_grad, jvp_err in product([True, False], repeat=2):
        InplaceMul = get_custom_fn(jvp_err)
        z = dualad.tensor(1.0, requires_grad=requires_grad)
        x = z.clone()
        y = InplaceMul.apply(x)
        assert x is y
        assert_equal(x, z * 2)
        with fwd.dual_level():
            x_tangent = dualad.ones_like(x)
            x_dual = fwd.make_dual(x, x_tangent)
            if jvp_err:
                with pytest.raises(
                    RuntimeError,
                    match="jvp function must modify the corresponding gradient inplace",
                ):
                    InplaceMul.apply(x_dual)
            else:
                out_dual = InplaceMul.apply(x_dual)
                _, out_tangent = fwd.unpack_dual(out_dual)
                assert out_dual is x_dual
                assert out_tangent is x_tangent
                assert_equal(out_tangent, 2.0)


def test_inplace_input_without_tangent_gets_the_modified_zeros():
    # a dirty input that had no tangent: the materialised zeros, updated in place by jvp, become
    # its tangent
    class AddInplace(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            return x.add_(y)

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t.add_(y_t)

    x = dualad.ones(2)
    with fwd.dual_level():
        y = fwd.make_dual(dualad.ones(2), dualad.full((2,), 5.0))
        out = AddInplace.apply(x, y)
        assert out is x
        assert_equal(fwd.unpack_dual(out).tangent, [5.0, 5.0])
    assert_equal(x, [2.0, 2.0])
