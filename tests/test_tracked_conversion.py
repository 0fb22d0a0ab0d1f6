"""Values tracked by a level never leave dualad silently (issue 11, item 1).

A NumPy array or Python number made from a value that ``func.grad``/``vjp``/``jacrev``/
``hessian``, a dual level (``jvp``/``jacfwd``) or ``vmap`` tracks would be a constant to that
level: the derivative would be silently wrong. Such conversions raise
``dualad.TrackedConversionError`` naming the level, what was attempted and the fix; factories
given tracked values stay differentiable or raise. NumPy operands on the left of an operator
defer to the tensor's reflected operator, so they differentiate.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import dualad
from dualad import TrackedConversionError, func, fwd
from dualad.testing import assert_close


def t(values, **kwargs):
    return dualad.tensor(values, **kwargs)


X = [0.5, 1.5]


def grad_of(f, x):
    return func.grad(lambda v: f(v).sum())(x)


def dual_tangent(f, x, v=None):
    """The tangent of ``f(x)`` at a dual level, with tangent ``v`` (ones by default)."""
    with fwd.dual_level():
        d = fwd.make_dual(x, dualad.ones_like(x) if v is None else v)
        return fwd.unpack_dual(f(d)).tangent


# ---------------------------------------------------------------------------------------------
# the exception class


def test_error_class_is_runtime_and_type_error():
    assert issubclass(TrackedConversionError, RuntimeError)
    assert issubclass(TrackedConversionError, TypeError)
    assert dualad.TrackedConversionError is TrackedConversionError


# ---------------------------------------------------------------------------------------------
# NumPy functions on tracked values: the issue's reproducers


def f_exp(x):
    return np.exp(x) * x


# (transform, expected level name in the message)
TRANSFORMS = {
    "grad": (lambda f, x: func.grad(lambda v: f(v).sum())(x), r"dualad\.func\.grad"),
    "grad_and_value": (
        lambda f, x: func.grad_and_value(lambda v: f(v).sum())(x),
        r"dualad\.func\.grad_and_value",
    ),
    "vjp": (lambda f, x: func.vjp(f, x), r"dualad\.func\.vjp"),
    "jacrev": (lambda f, x: func.jacrev(f)(x), r"dualad\.func\.jacrev"),
    "jacfwd": (lambda f, x: func.jacfwd(f)(x), r"dualad\.func\.jacfwd"),
    "jvp": (lambda f, x: func.jvp(f, (x,), (dualad.ones_like(x),)), r"dualad\.func\.jvp"),
    "hessian": (lambda f, x: func.hessian(lambda v: f(v).sum())(x), r"dualad\.func\.hessian"),
    "hvp": (
        lambda f, x: func.hvp(lambda v: f(v).sum(), (x,), (dualad.ones_like(x),)),
        r"dualad\.func\.hvp",
    ),
    "linearize": (lambda f, x: func.linearize(f, x), r"dualad\.func\.linearize"),
    "dual_level": (lambda f, x: dual_tangent(f, x), r"dualad\.fwd\.dual_level"),
    "vmap": (lambda f, x: dualad.vmap(f)(dualad.stack([x, x])), r"dualad\.vmap"),
    # nested: the innermost level that tracks the value is named
    "vmap(grad)": (
        lambda f, x: dualad.vmap(func.grad(lambda v: f(v).sum()))(dualad.stack([x, x])),
        r"dualad\.func\.grad",
    ),
    "grad(vmap)": (
        lambda f, x: func.grad(lambda v: dualad.vmap(f)(dualad.stack([v, v])).sum())(x),
        r"dualad\.vmap",
    ),
    "grad(grad)": (
        lambda f, x: func.grad(lambda v: func.grad(lambda w: f(w).sum())(v).sum())(x),
        r"dualad\.func\.grad",
    ),
    "jacfwd(jacrev)": (
        lambda f, x: func.jacfwd(func.jacrev(f))(x),
        r"dualad\.func\.jacrev",
    ),
    "grad(jvp)": (
        lambda f, x: func.grad(lambda v: func.jvp(f, (v,), (dualad.ones_like(v),))[1].sum())(x),
        r"dualad\.func\.jvp",
    ),
}


def f_exp_dualad(x):
    return dualad.exp(x) * x


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_numpy_ufunc_on_tracked_value_keeps_the_derivative(transform):
    # the issue's bug: func.grad(lambda x: (np.exp(x) * x).sum()) returned exp(x), not
    # exp(x)(1 + x); then it raised; now NumPy's ufunc protocol runs dualad.exp
    run, _ = TRANSFORMS[transform]
    expected = run(f_exp_dualad, t(X))
    got = run(f_exp, t(X))
    leaves = list(zip(_leaves(got), _leaves(expected), strict=True))
    assert leaves
    for g, e in leaves:
        assert_close(g, e)


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value] if isinstance(value, dualad.Tensor) else []


def test_numpy_ufunc_fix_gives_the_right_derivative():
    x = t(X)
    expected = np.exp(np.array(X)) * (1 + np.array(X))
    assert_close(func.grad(lambda v: (dualad.exp(v) * v).sum())(x), expected)


CONVERSIONS = {
    "np.asarray": (lambda v: np.asarray(v), r"np\.asarray"),
    "np.array": (lambda v: np.array(v), r"np\.array"),
    "numpy": (lambda v: v.numpy(), r"\.numpy\(\)"),
    "item": (lambda v: v[0].item(), r"\.item\(\)"),
    "tolist": (lambda v: v.tolist(), r"\.tolist\(\)"),
    "float": (lambda v: float(v[0]), r"float\(\)"),
    "int": (lambda v: int(v[0]), r"int\(\)"),
    "complex": (lambda v: complex(v[0]), r"complex\(\)"),
    "Tensor(list)": (lambda v: dualad.Tensor([v[0], v[1]]), r"NumPy array"),
}


@pytest.mark.parametrize("kind", list(CONVERSIONS))
@pytest.mark.parametrize(
    "transform", ["grad", "vjp", "jacrev", "jacfwd", "jvp", "dual_level", "vmap", "vmap(grad)"]
)
def test_every_conversion_of_a_tracked_value_raises(transform, kind):
    convert, attempted = CONVERSIONS[kind]
    run, level = TRANSFORMS[transform]

    def f(v):
        convert(v)
        return v * v

    with pytest.raises(TrackedConversionError, match=level) as info:
        run(f, t(X))
    assert info.match(attempted)


def test_messages_name_the_fix():
    with pytest.raises(TrackedConversionError) as info:
        func.grad(lambda v: v.sum() * float(v[0]))(t(X))
    message = str(info.value)
    assert message.startswith("dualad.func.grad: float() of a tensor that dualad.func.grad")
    assert "float(x.detach())" in message
    with pytest.raises(TrackedConversionError) as info:
        func.grad(lambda v: v.sum() * v[0].item())(t(X))
    assert "x.detach().item()" in str(info.value)
    with pytest.raises(TrackedConversionError) as info:
        dual_tangent(lambda v: v * v.tolist()[0], t(X))
    message = str(info.value)
    assert "tangent at dual level" in message and "x.detach().tolist()" in message
    with pytest.raises(TrackedConversionError, match=r"the level of dualad\.func\.jacfwd"):
        func.jacfwd(lambda v: v * float(v[0]))(t(X))


def test_the_issue_reproducers():
    x = t(X)
    # np.asarray inside func.grad gave a constant (derivative lost)
    with pytest.raises(TrackedConversionError, match=r"dualad\.func\.grad"):
        func.grad(lambda v: dualad.as_tensor(np.asarray(v)).sum() + v.sum())(x)
    # float(), .item(), .tolist(), .numpy() gave numbers
    for use in (float, lambda v: v.item(), lambda v: v.tolist()[0], lambda v: v.numpy()[0]):
        with pytest.raises(TrackedConversionError):
            func.grad(lambda v, use=use: v.sum() * use(v[0:1].sum()))(x)


# ---------------------------------------------------------------------------------------------
# what still converts


def test_detached_values_convert_inside_transforms():
    x = t(X)

    def f(v):
        c = float(v[0].detach())
        a = np.asarray(v.detach())
        return (v * c).sum() + float(a.sum()) + v.detach().numpy()[1] + v.detach()[1].item()

    # the constants contribute no derivative: d/dv sum(v * v0) with v0 constant is v0
    assert_close(func.grad(f)(x), t([0.5, 0.5]))
    assert_close(dual_tangent(lambda v: v * float(v.detach()[0]), x), t([0.5, 0.5]))
    # vmap: detach() keeps the batch, so there is still no single value
    with pytest.raises(TrackedConversionError, match=r"dualad\.vmap"):
        dualad.vmap(lambda v: float(v.detach()))(x)


def test_untracked_tensors_convert():
    a = np.array([1.0, 2.0])
    plain = dualad.as_tensor(a)
    out = np.asarray(plain)
    assert out is a  # zero-copy on cpu
    assert np.shares_memory(plain.numpy(), a)
    assert float(dualad.tensor(2.5)) == 2.5
    assert int(dualad.tensor(3)) == 3
    assert complex(dualad.tensor(1 + 2j)) == 1 + 2j
    assert dualad.tensor([1.0, 2.0]).tolist() == [1.0, 2.0]
    assert_close(np.exp(plain), np.exp(a))
    # constants inside a transform (not derived from its inputs) convert too
    seen = []

    def f(v):
        seen.append(float(dualad.tensor(4.0) * 2))
        return v.sum()

    func.grad(f)(t(X))
    assert seen == [8.0]


def test_eager_requires_grad_keeps_pytorch_rules():
    x = t([1.5, 2.0], requires_grad=True)
    loss = (x * x).sum()
    # PyTorch allows these on tensors that require grad (``loss.item()``)
    assert loss.item() == 6.25
    assert float(loss) == 6.25
    assert int(loss) == 6
    assert x.tolist() == [1.5, 2.0]
    assert bool(loss > 0)
    # numpy() and __array__ refuse (ATTR-15), now with the shared error class
    with pytest.raises(
        TrackedConversionError,
        match=r"Can't call numpy\(\) on Tensor that requires grad\. "
        r"Use tensor\.detach\(\)\.numpy\(\) instead\.",
    ):
        x.numpy()
    with pytest.raises(TrackedConversionError, match="requires grad"):
        np.asarray(x)
    # NumPy's ufuncs run dualad ops (Tensor.__array_ufunc__): the graph is kept
    assert_close(dualad.autograd.grad(np.exp(x).sum(), x)[0], np.exp([1.5, 2.0]))
    with pytest.raises(RuntimeError):  # still a RuntimeError, as in PyTorch
        x.numpy()
    assert_close(x.numpy(force=True), np.array([1.5, 2.0]))
    with dualad.no_grad():
        assert_close(np.asarray(x), np.array([1.5, 2.0]))
    assert_close(np.asarray(x.detach()), np.array([1.5, 2.0]))


def test_no_grad_inside_grad_makes_values_constants():
    # func.grad records only while grad mode is on: under no_grad its values are constants to
    # it, exactly as eager tensors that require grad may be converted under no_grad
    def f(v):
        with dualad.no_grad():
            c = float(v[0])
        return (v * c).sum()

    assert_close(func.grad(f)(t(X)), t([0.5, 0.5]))
    # dual levels and vmap do not depend on grad mode
    with pytest.raises(TrackedConversionError, match="dual level"), dualad.no_grad():
        dual_tangent(lambda v: v * float(v[0]), t(X))


def test_dual_tensors_outside_func_transforms():
    x = t(X)
    with fwd.dual_level():
        d = fwd.make_dual(x, t([1.0, 0.0]))
        for convert in (
            lambda: float(d[0]),
            lambda: d[1].item(),
            d.tolist,
            d.numpy,
            lambda: np.asarray(d),
            lambda: complex(d[0]),
            lambda: int(d[0]),
        ):
            with pytest.raises(TrackedConversionError, match=r"dualad\.fwd\.dual_level"):
                convert()
        # the primal has no tangent: it converts (PyTorch's unpack_dual(...).primal)
        primal = fwd.unpack_dual(d).primal
        assert primal.tolist() == X
        assert_close(np.asarray(primal), np.array(X))
        # a tensor without a tangent at the level converts
        assert float(x[0]) == 0.5
        # a view of a dual tensor carries its tangent
        view = d[1:]
        with pytest.raises(TrackedConversionError):
            view.item()
    # after the level exits the tangent is gone: d converts again
    assert d.tolist() == X
    assert_close(np.asarray(d), np.array(X))


def test_dual_tensor_that_requires_grad_refuses_item():
    x = t(X, requires_grad=True)
    with fwd.dual_level():
        d = fwd.make_dual(x, dualad.ones(2))
        with pytest.raises(TrackedConversionError, match="dual level"):
            d.sum().item()
    assert (x * 2).sum().item() == 4.0


def test_escaped_grad_tensor_converts_after_its_level():
    kept = []

    def f(v):
        kept.append(v * 2)
        return v.sum()

    func.grad(f)(t(X))
    # the level has exited: nothing tracks the value any more
    assert kept[0].tolist() == [1.0, 3.0]
    assert_close(np.asarray(kept[0]), np.array([1.0, 3.0]))


# ---------------------------------------------------------------------------------------------
# __bool__ and __index__: control flow and indices stay legal in define-by-run code


def test_control_flow_on_tracked_values_keeps_exact_derivatives():
    def f(v):
        total = v.sum()
        if total > 0:  # Python control flow on a tracked value: PyTorch semantics
            return (v * v).sum()
        return v.sum()

    x = t(X)
    assert_close(func.grad(f)(x), 2 * x)
    assert_close(func.grad(f)(-x), t([1.0, 1.0]))
    assert_close(func.jacrev(lambda v: v * v if bool(v[0] > 0) else v)(x), dualad.diag(2 * x))
    assert_close(dual_tangent(lambda v: v * v if v[0] > 0 else v, x), 2 * x)
    # bool of the tracked value itself (not a comparison) works too
    assert_close(func.grad(lambda v: v.sum() if v[0] else -v.sum())(x), t([1.0, 1.0]))


def test_bool_under_vmap_raises():
    with pytest.raises(TrackedConversionError, match=r"dualad\.vmap: bool\(\)"):
        dualad.vmap(lambda v: v if v > 0 else -v)(t(X))


def test_integer_values_index_inside_transforms():
    # integer tensors carry no derivative: int() and indexing by them stay legal
    def f(v):
        i = v.argmax()
        return v[int(i)] * 3 + v[i] + v[dualad.tensor(0)]

    assert_close(func.grad(f)(t(X)), t([1.0, 4.0]))
    assert_close(dual_tangent(f, t(X)), t(5.0))


# ---------------------------------------------------------------------------------------------
# NumPy operands on the left: the tensor's reflected operator, differentiable


BINARY = {
    "add": (operator.add, lambda a, x: np.ones_like(x)),
    "sub": (operator.sub, lambda a, x: -np.ones_like(x)),
    "mul": (operator.mul, lambda a, x: a),
    "truediv": (operator.truediv, lambda a, x: -a / x**2),
    "pow": (operator.pow, lambda a, x: a**x * np.log(a)),
    "mod": (operator.mod, lambda a, x: -np.floor(a / x)),
}


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize(
    "left",
    [np.array([2.0, 3.0]), np.float64(2.5), np.float32(2.5), np.array(4.0)],
    ids=["array", "float64", "float32", "0-d"],
)
def test_numpy_left_operands_defer_to_the_tensor(name, left):
    op, derivative = BINARY[name]
    x = t(X)
    xs = np.array(X)
    expected = derivative(np.asarray(left, dtype=np.float64), xs) * np.ones_like(xs)
    # func.grad, jacrev (its diagonal), jacfwd, a dual level, vmap(grad), eager backward
    assert_close(func.grad(lambda v: op(left, v).sum())(x), expected, rtol=1e-6, atol=1e-12)
    assert_close(
        dualad.diagonal(func.jacrev(lambda v: op(left, v))(x)), expected, rtol=1e-6, atol=1e-12
    )
    assert_close(
        dualad.diagonal(func.jacfwd(lambda v: op(left, v))(x)), expected, rtol=1e-6, atol=1e-12
    )
    assert_close(dual_tangent(lambda v: op(left, v), x), expected, rtol=1e-6, atol=1e-12)
    per_example = dualad.vmap(func.grad(lambda v: op(left, v).sum()))(dualad.stack([x, x]))
    assert_close(per_example[1], expected, rtol=1e-6, atol=1e-12)
    xr = t(X, requires_grad=True)
    result = op(left, xr)
    assert type(result) is dualad.Tensor  # never a silent ndarray
    result.sum().backward()
    assert_close(xr.grad, expected, rtol=1e-6, atol=1e-12)


def test_numpy_right_operands_of_pow():
    # x ** array under a level: the array reaches the rules as a tensor
    a = np.array([2.0, 3.0])
    x = t(X)
    expected = a * np.array(X) ** (a - 1)
    assert_close(func.grad(lambda v: (v**a).sum())(x), expected)
    assert_close(func.grad(lambda v: dualad.pow(v, [2.0, 3.0]).sum())(x), expected)
    assert_close(dual_tangent(lambda v: v**a, x), expected)


def test_numpy_matmul_and_comparison_on_the_left():
    x = t(X)
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert_close(func.jacrev(lambda v: a @ v)(x), a)
    assert_close(func.jacfwd(lambda v: a @ v)(x), a)
    mask = func.grad(lambda v: ((np.ones(2) < v) * v).sum())(x)
    assert_close(mask, t([0.0, 1.0]))


def test_inplace_numpy_operand_refuses_a_tracked_tensor():
    # ndarray.__iadd__ is np.add(a, x, out=(a,)) (Tensor.__array_ufunc__): an array cannot hold
    # a tracked result, so it is a TypeError that says to write ``a = a + x``; untracked writes
    def f(v):
        a = np.ones(2)
        a += v
        return (a * a).sum()

    with pytest.raises(TypeError, match=r"out= is a NumPy array.*a = a \+ x"):
        func.grad(f)(t(X))
    a = np.ones(2)
    a += t(X)
    assert type(a) is np.ndarray
    assert_close(a, np.array([1.5, 2.5]))

    def g(v):
        a = np.ones(2)
        a = a + v
        return (a * a).sum()

    assert_close(func.grad(g)(t(X)), 2 * (1 + t(X)))


def test_numpy_functions_that_call_methods_differentiate():
    # (they raised before NumPy's __array_function__ protocol sent them to dualad.numpy)
    x = t(X)
    uses = {
        "dot": (lambda v: np.dot(v, v), 2 * x),
        "where": (lambda v: np.where(v > 0, v, 0), t([1.0, 1.0])),
        "stack": (lambda v: np.stack([v, v]), t([2.0, 2.0])),
    }
    for use, expected in uses.values():
        assert_close(func.grad(lambda v, use=use: use(v).sum())(x), expected)


# ---------------------------------------------------------------------------------------------
# factories given tracked values


def f_list(v):
    return dualad.tensor([v[0], 2 * v[1]])


def test_tensor_of_tracked_scalars_is_differentiable():
    # today's bug: gradient 0
    x = t(X)
    assert_close(grad_of(f_list, x), t([1.0, 2.0]))
    jac = t([[1.0, 0.0], [0.0, 2.0]])
    assert_close(func.jacrev(f_list)(x), jac)
    assert_close(func.jacfwd(f_list)(x), jac)
    assert_close(dual_tangent(f_list, x), t([1.0, 2.0]))
    assert_close(func.hessian(lambda v: (f_list(v) ** 2).sum())(x), t([[2.0, 0.0], [0.0, 8.0]]))
    batch = t([[1.0, 2.0], [3.0, 4.0]])
    assert_close(dualad.vmap(f_list)(batch), t([[1.0, 4.0], [3.0, 8.0]]))
    assert_close(dualad.vmap(func.grad(lambda v: f_list(v).sum()))(batch), t([[1, 2], [1, 2.0]]))
    xr = t(X, requires_grad=True)
    with fwd.dual_level():
        d = fwd.make_dual(xr, t([1.0, 1.0]))
        out = f_list(d)
        assert_close(fwd.unpack_dual(out).tangent, t([1.0, 2.0]))


def test_tensor_of_nested_sequences_with_numbers():
    x = t(X)

    def f(v):
        return dualad.tensor([[v[0], 1.0], (2, v[1] * v[0])])

    out = f(x)
    assert_close(out, t([[0.5, 1.0], [2.0, 0.75]]))
    jac = func.jacrev(f)(x)
    expected = np.zeros((2, 2, 2))
    expected[0, 0, 0] = 1.0
    expected[1, 1] = [1.5, 0.5]
    assert_close(jac, expected)
    assert_close(func.jacfwd(f)(x), expected)
    assert_close(dualad.vmap(f)(dualad.stack([x, 2 * x]))[1], t([[1.0, 1.0], [2.0, 3.0]]))


def test_tensor_of_tracked_values_dtype_and_device():
    x32 = t(X, dtype=dualad.float32)

    def check(v):
        # dtype inferred as for plain values (Python numbers are weak): float32 stays float32
        plain = dualad.tensor([v[0].detach(), 1.0]).dtype
        assert dualad.tensor([v[0], 1.0]).dtype == plain == dualad.float32
        assert dualad.tensor([v[0], v[1]]).dtype == dualad.float32
        assert dualad.tensor([v[0], 1]).dtype == dualad.float32
        assert dualad.tensor([v[0], v[1]], dtype=dualad.float64).dtype == dualad.float64
        assert dualad.tensor([v[0], v[1]], device="cpu").device.type == "cpu"
        return dualad.tensor([v[0], 3.0], dtype=dualad.float64).sum()

    assert_close(func.grad(check)(x32), t([1.0, 0.0], dtype=dualad.float32))


def test_tensor_of_tracked_values_mixes_eager_and_plain_leaves():
    # an untracked tensor that requires grad in the list is detached, as tensor() detaches it
    w = t(3.0, requires_grad=True)

    def f(v):
        out = dualad.tensor([v[0], w, np.float64(2.0), np.array(4.0)])
        assert not out.requires_grad or out._value is not None
        return (out * out).sum()

    assert_close(func.grad(f)(t(X)), t([1.0, 0.0]))
    assert w.grad is None


def test_tensor_of_ragged_tracked_values_raises():
    with pytest.raises(ValueError, match="ragged"):
        func.grad(lambda v: dualad.tensor([v, v[0]]).sum())(t(X))
    with pytest.raises(ValueError, match="ragged"):
        func.grad(lambda v: dualad.tensor([[v[0]], []]).sum())(t(X))


def test_tensor_of_one_tracked_tensor_is_a_differentiable_copy():
    x = t(X)

    def f(v):
        copy = dualad.tensor(v)
        copy.mul_(3)  # a copy: in-place on it leaves v alone
        return (copy * v).sum()

    assert_close(func.grad(f)(x), 6 * x)
    assert_close(dual_tangent(lambda v: dualad.tensor(v, dtype=dualad.float32), x), t([1, 1.0]))
    assert_close(dualad.vmap(lambda v: dualad.tensor(v) * 2)(x), 2 * x)
    # eager: copied and detached, as in PyTorch
    xr = t(X, requires_grad=True)
    copy = dualad.tensor(xr)
    assert not copy.requires_grad and copy.is_leaf


def test_eager_lists_of_tensors_detach_as_in_pytorch():
    xr = t(X, requires_grad=True)
    out = dualad.tensor([xr[0], 2 * xr[1]])
    assert not out.requires_grad
    assert_close(out, t([0.5, 3.0]))


def test_as_tensor_of_tracked_values():
    x = t(X)
    assert_close(grad_of(lambda v: dualad.as_tensor([v[1], v[0] * 3]), x), t([3.0, 1.0]))
    assert_close(grad_of(lambda v: dualad.as_tensor(v, dtype=dualad.float32) * 2, x), t([2.0, 2.0]))


def test_linspace_with_tracked_endpoints():
    # today's bug: gradient 0
    s = t(2.0)
    ramp = np.linspace(0.0, 1.0, 5)
    assert_close(func.grad(lambda v: dualad.linspace(0.0, v, 5).sum())(s), t(ramp.sum()))
    assert_close(func.grad(lambda v: dualad.linspace(v, 1.0, 5).sum())(s), t((1 - ramp).sum()))
    assert_close(func.jacrev(lambda v: dualad.linspace(0.0, v, 5))(s), ramp)
    assert_close(func.jacfwd(lambda v: dualad.linspace(v, 2 * v, 5))(s), 1 + ramp)
    assert_close(dual_tangent(lambda v: dualad.linspace(-1.0, v, 5), s), ramp)
    assert_close(func.hessian(lambda v: dualad.linspace(v, 3.0, 4).sum())(s), t(0.0))
    # the values are NumPy's, exactly
    for start, end, steps in ((0.0, 2.0, 5), (0.1, 0.7, 7), (-3.0, 1e-3, 11), (1.0, 1.0, 3)):
        seen = []

        def f(v, start=start, steps=steps, seen=seen):
            out = dualad.linspace(start, v, steps)
            seen.append(out.detach().numpy())
            return out.sum()

        func.grad(f)(t(end))
        np.testing.assert_array_equal(seen[0], np.linspace(start, end, steps))
    # vmap over the endpoint: one linspace per example
    ends = t([1.0, 2.0, 4.0])
    out = dualad.vmap(lambda v: dualad.linspace(0.0, v, 3))(ends)
    np.testing.assert_array_equal(out.numpy(), np.linspace(0.0, ends.numpy(), 3, axis=1))


def test_linspace_with_tracked_endpoints_edge_cases():
    s = t(2.0)
    assert_close(func.grad(lambda v: dualad.linspace(v, 5.0, 1).sum())(s), t(1.0))
    assert_close(func.grad(lambda v: dualad.linspace(v, 5.0, 0).sum() + v)(s), t(1.0))
    assert dualad.vmap(lambda v: dualad.linspace(v, 5.0, 0))(t([1.0, 2.0])).shape == (2, 0)
    s32 = t(2.0, dtype=dualad.float32)

    def f(v):
        assert dualad.linspace(0.0, v, 3).dtype == dualad.get_default_dtype()
        out = dualad.linspace(0.0, v, 3, dtype=dualad.float32)
        assert out.dtype == dualad.float32
        return out.sum()

    assert_close(func.grad(f)(s32), t(1.5, dtype=dualad.float32))
    # float32 endpoints: the values of linspace with the endpoint detached (computed in float64
    # as for the Python number it becomes), exactly
    s32 = t(0.1, dtype=dualad.float32)
    seen = []

    def g(v):
        seen.append(dualad.linspace(0.3, v, 7).detach())
        return seen[-1].sum()

    func.grad(g)(s32)
    np.testing.assert_array_equal(seen[0].numpy(), dualad.linspace(0.3, s32, 7).numpy())
    # complex endpoints
    z = t(1.0 + 1.0j)
    out = dual_tangent(lambda v: dualad.linspace(0.0, v, 3), z, t(1.0 + 0.0j))
    assert_close(out, t([0.0, 0.5, 1.0], dtype=dualad.complex128))
    with pytest.raises(RuntimeError, match="expected a number"):
        func.grad(lambda v: dualad.linspace(0.0, v, 3).sum())(t(X))


def test_full_and_full_like_with_tracked_fill_values():
    s = t(2.0)
    assert_close(func.grad(lambda v: dualad.full((2, 3), v).sum())(s), t(6.0))
    assert_close(func.grad(lambda v: (dualad.full((2,), v) * t([1.0, 5.0])).sum())(s), t(6.0))
    assert_close(dual_tangent(lambda v: dualad.full((3,), v), s), t([1.0, 1.0, 1.0]))
    assert_close(func.jacfwd(lambda v: dualad.full((2,), v * v))(s), t([4.0, 4.0]))
    out = dualad.vmap(lambda v: dualad.full((2,), v))(t([1.0, 3.0]))
    assert_close(out, t([[1.0, 1.0], [3.0, 3.0]]))
    x = t(X)
    assert_close(func.grad(lambda v: dualad.full_like(v, v[1]).sum())(x), t([0.0, 2.0]))
    assert_close(
        func.grad(lambda v: dualad.full_like(dualad.zeros(3), v[0] * 2).sum())(x), t([6.0, 0.0])
    )

    def writable(v):
        out = dualad.full((2,), v)
        out[0] = 0.0  # memory of its own, not a broadcast view
        return out.sum()

    assert_close(func.grad(writable)(s), t(1.0))
    with pytest.raises(RuntimeError, match="expected a number"):
        func.grad(lambda v: dualad.full((2,), v).sum())(x)


def test_arange_with_tracked_bounds_raises():
    s = t(3.0)
    for make in (
        lambda v: dualad.arange(v),
        lambda v: dualad.arange(v, 5.0),
        lambda v: dualad.arange(0.0, 5.0, v),
    ):
        with pytest.raises(TrackedConversionError, match=r"dualad\.arange: .*dualad\.func\.grad"):
            func.grad(lambda v, make=make: make(v).sum())(s)
        with pytest.raises(TrackedConversionError, match=r"dualad\.vmap"):
            dualad.vmap(make)(t([3.0, 4.0]))
    # detached bounds are numbers
    assert_close(func.grad(lambda v: (dualad.arange(v.detach()) * v).sum())(s), t(3.0))


def test_randint_with_tracked_bounds_uses_their_values():
    s = t(5.0)

    def f(v):
        draws = dualad.randint(0, v, (10,))
        assert bool(((draws >= 0) & (draws < 5)).all())
        return v * 2

    assert_close(func.grad(f)(s), t(2.0))


def test_factory_sizes_given_as_float_tensors_raise_type_error():
    with pytest.raises(TypeError, match="must be a tuple of ints"):
        func.grad(lambda v: dualad.zeros(v).sum() + v.sum())(t([2.0]))
    assert dualad.zeros(t([2, 3])).shape == (2, 3)


def test_force_numpy_is_an_explicit_detach():
    x = t(X)
    assert_close(func.grad(lambda v: v.sum() * v.numpy(force=True)[0])(x), t([0.5, 0.5]))
    with fwd.dual_level():
        d = fwd.make_dual(x, dualad.ones(2))
        assert_close(d.numpy(force=True), np.array(X))
    with pytest.raises(TrackedConversionError, match=r"dualad\.vmap"):
        dualad.vmap(lambda v: v.numpy(force=True))(x)


class NumpySquare(dualad.autograd.Function):
    """A Function whose backward is NumPy code and that has no jvp."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return dualad.tensor(2 * x.numpy() * grad_output.numpy())


def test_function_with_numpy_backward_under_forward_mode():
    # forward mode derives the jvp from the backward, which NumPy code cannot give: PyTorch's
    # error (not the conversion's, whose level the user never entered)
    x = t(X)
    with pytest.raises(RuntimeError, match="must implement the jvp function") as info:
        dual_tangent(NumpySquare.apply, x)
    assert isinstance(info.value.__cause__, TrackedConversionError)
    # reverse mode runs the backward on plain values once the level has exited
    assert_close(func.grad(lambda v: NumpySquare.apply(v).sum())(x), 2 * x)
    xr = t(X, requires_grad=True)
    NumpySquare.apply(xr).sum().backward()
    assert_close(xr.grad, 2 * x)


def test_view_made_before_its_base_got_a_tangent_refuses():
    base = t([1.0, 2.0, 3.0])
    view = base[1:]
    with fwd.dual_level():
        base.copy_(fwd.make_dual(t([4.0, 5.0, 6.0]), dualad.ones(3)))
        # the view's tangent comes from its base's (PyTorch's view semantics): it is tracked
        with pytest.raises(TrackedConversionError, match="dual level"):
            view.tolist()
        assert_close(fwd.unpack_dual(view).tangent, t([1.0, 1.0]))
    assert view.tolist() == [5.0, 6.0]


@pytest.mark.skipif(not dualad.cuda_is_available(), reason="needs CuPy and a CUDA GPU")
def test_tracked_values_on_cuda():
    x = t(X, device="cuda")

    def f(v):
        stacked = dualad.tensor([v[0], 2 * v[1], 3.0])  # on the tracked values' device
        assert stacked.device.type == "cuda"
        filled = dualad.full((2,), v[0])
        assert filled.device.type == "cuda"  # (tracked values stay on their device)
        ramp = dualad.linspace(0.0, v[1], 3)
        assert ramp.device.type == "cuda"
        return stacked.sum() + filled.sum() + ramp.sum()

    assert_close(func.grad(f)(x).cpu(), t([3.0, 3.5]))
    with pytest.raises(TrackedConversionError):
        func.grad(lambda v: v.sum() * float(v[0]))(x)
    plain = dualad.ones(2, device="cuda")
    assert_close(np.asarray(plain), np.ones(2))  # untracked: copied to the host
