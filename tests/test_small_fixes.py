"""Regression tests for issue 11, item 5: smaller wrong or broken values.

a. ops given only Python scalars return 0-d arrays of the right dtype;
b. a tangent has its primal's dtype, a gradient its input's;
c. one promotion rule (NumPy 2's, Python scalars weak) for promote_types, result_type and ops;
d. with a float32 default dtype, float results of no floating tensor are float32;
e. vmap(jacfwd(f)) of in-place ops on a clone (and its views);
f. atan2 has zero derivatives at the origin;
g. piecewise-constant ops have zero derivatives instead of cutting the graph;
h. empty Jacobians for empty inputs or outputs;
i. NumPy's exceptions keep their class.
"""

from __future__ import annotations

import inspect
import itertools
import math

import numpy as np
import pytest

import dualad
from dualad import func, fwd
from dualad._dispatch import REGISTRY, OpDef, apply
from dualad.autograd import functional as F
from dualad.testing.opdb import all_ops

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


# ---------------------------------------------------------------------------------------------
# a. Python scalars alone


def _outcome(fn, *args, **kwargs):
    try:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    except Exception as exc:  # the class is compared below
        return exc


def _assert_same_result(got, expected, what):
    if isinstance(expected, Exception):
        assert isinstance(got, type(expected)), f"{what}: {got!r} instead of {expected!r}"
        return
    assert not isinstance(got, Exception), f"{what}: raised {got!r}"
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), what
        for g, e in zip(got, expected):
            _assert_same_result(g, e, what)
        return
    assert isinstance(got._data, np.ndarray) and got._data.ndim == 0, f"{what}: {got._data!r}"
    assert got.dtype == expected.dtype, f"{what}: {got.dtype} instead of {expected.dtype}"
    np.testing.assert_array_equal(got._data, expected._data, err_msg=what)
    repr(got)  # used to fail: 'float' object has no attribute 'get'


def test_issue_reproducers_scalar_only_ops():
    assert repr(dualad.negative(2.0)) == "tensor(-2.)"
    assert repr(dualad.square(3)) == "tensor(9)"
    assert repr(dualad.reciprocal(2.0)) == "tensor(0.5)"
    for out, dtype, value in [
        (dualad.add(2, 3), "int64", 5),
        (dualad.mul(2, 3.5), "float64", 7.0),
        (dualad.div(2, 4), "float64", 0.5),
        (dualad.add(True, True), "bool", True),
        (dualad.mul(1j, 2), "complex128", 2j),
        (dualad.sin(0.0), "float64", 0.0),
    ]:
        assert isinstance(out._data, np.ndarray) and out._data.ndim == 0
        assert out.dtype == np.dtype(dtype) and out.item() == value


SCALARS = [2.0, 3, True, 1.5 + 0.5j]


def _fast_callers():
    for name, op in sorted(REGISTRY.items()):
        if op.fast is not None:
            yield name, op.fast, len(inspect.signature(op.fast).parameters)


@pytest.mark.parametrize("name, caller, arity", list(_fast_callers()), ids=lambda v: str(v))
def test_every_registry_op_of_python_scalars_is_its_op_of_a_0d_tensor(name, caller, arity):
    """Each op with a public caller: Python scalars alone compute as the first one as a 0-d
    tensor (``tensor(value)``), the others weak scalars with it."""
    for values in itertools.product(SCALARS, repeat=arity):
        expected = _outcome(caller, dualad.tensor(values[0]), *values[1:])
        got = _outcome(caller, *values)
        _assert_same_result(got, expected, f"{name}{values}")


# the ops modules of shape functions (ops/shape.py before it was split by subject)
SHAPE_MODULES = ("base", "views", "slicing", "joining", "reordering", "diagonals")


def _scalar_samples():
    """Op database samples whose array arguments are all 0-d: called with Python numbers."""
    for info in all_ops():
        # public functions of values (shape functions take tensors, as in PyTorch; entries
        # calling methods have no scalar spelling)
        module = info.fn.__module__.rsplit(".", 1)[-1]
        if info.fn is not getattr(dualad, info.name, None) or module in SHAPE_MODULES:
            continue
        for dtype in ("float64", "complex128"):
            if dtype not in info.dtypes and not (dtype == "float64" and not info.differentiable):
                continue
            for sample in info.sample_inputs(dtype):
                if sample.kwargs and any(isinstance(v, np.ndarray) for v in sample.kwargs.values()):
                    continue
                arrays = [a for a in sample.args if isinstance(a, np.ndarray)]
                if arrays and all(a.ndim == 0 for a in arrays) and len(arrays) == len(sample.args):
                    yield pytest.param(info, sample, id=f"{info.name}-{dtype}")
                    break


@pytest.mark.parametrize("info, sample", list(_scalar_samples()))
def test_op_database_entries_of_python_scalars(info, sample):
    numbers = tuple(a.item() for a in sample.args)
    expected = _outcome(info.fn, dualad.tensor(numbers[0]), *numbers[1:], **sample.kwargs)
    got = _outcome(info.fn, *numbers, **sample.kwargs)
    _assert_same_result(got, expected, f"{info.name}{numbers}")


# ---------------------------------------------------------------------------------------------
# b. tangent and gradient dtypes


X32 = np.array([1.0, 2.0], np.float32)
INTS = np.array([1, 2])
F64 = np.array([0.5, 3.0])


@pytest.mark.parametrize(
    "name, fn",
    [
        ("add int", lambda d: d + dualad.tensor(INTS)),
        ("int sub", lambda d: dualad.tensor(INTS) - d),
        ("mul int", lambda d: d * dualad.tensor(INTS)),
        ("mul float64", lambda d: d * dualad.tensor(F64)),
        ("div int", lambda d: d / dualad.tensor(INTS)),
        ("int pow", lambda d: dualad.tensor(INTS) ** d),
        ("atan2 int", lambda d: dualad.atan2(d, dualad.tensor(INTS))),
        ("where float64", lambda d: dualad.where(dualad.tensor([True, False]), d, 1.0 * F64[0])),
        ("maximum float64", lambda d: dualad.maximum(d, dualad.tensor(F64))),
        ("times 1j", lambda d: d * 1j),
    ],
)
def test_tangent_has_the_primal_dtype(name, fn):
    x = dualad.tensor(X32)
    with fwd.dual_level():
        primal, tangent = fwd.unpack_dual(fn(fwd.make_dual(x, dualad.ones_like(x))))
        assert tangent.dtype == primal.dtype, name
    out, tangent = func.jvp(fn, (x,), (dualad.ones_like(x),))
    assert tangent.dtype == out.dtype, name
    # the values: d/dx of the float64 computation, in float64
    x64 = dualad.tensor(X32.astype(np.float64))
    _, expected = func.jvp(fn, (x64,), (dualad.ones_like(x64),))
    np.testing.assert_allclose(tangent.numpy(), expected.numpy(), rtol=1e-6)


def test_tangent_dtype_float32_dual_plus_int_tensor_issue_reproducer():
    x = dualad.tensor(X32)
    with fwd.dual_level():
        y = fwd.make_dual(x, dualad.ones_like(x)) + dualad.tensor(INTS)
        primal, tangent = fwd.unpack_dual(y)
    assert primal.dtype == tangent.dtype == np.float64
    np.testing.assert_array_equal(tangent.numpy(), [1.0, 1.0])


def test_jacfwd_and_vmap_of_jvp_tangent_dtypes():
    x = dualad.tensor(X32)
    assert func.jacfwd(lambda v: v * dualad.tensor(INTS))(x).dtype == np.float64
    tangents = func.vmap(lambda v: func.jvp(lambda u: u * dualad.tensor(INTS), (v,), (v,))[1])(
        dualad.ones(3, 2, dtype=dualad.float32)
    )
    assert tangents.dtype == np.float64


def test_cotangent_reaching_an_input_has_its_dtype():
    """float32 leaf with a float64 constant: the gradient is float32, as in PyTorch."""
    c = dualad.tensor(F64)

    def loss(v):
        return (v * c + dualad.tensor(INTS)).sum()

    x = dualad.tensor(X32, requires_grad=True)
    loss(x).backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), F64)
    (g,) = dualad.autograd.grad(loss(x), x)
    assert g.dtype == np.float32
    x = dualad.tensor(X32)
    assert func.grad(loss)(x).dtype == np.float32
    assert func.vjp(lambda v: v * c, x)[1](dualad.ones(2))[0].dtype == np.float32
    assert func.jacrev(lambda v: v * c)(x).dtype == np.float32
    batch = dualad.ones(3, 2, dtype=dualad.float32)
    assert func.vmap(func.grad(loss))(batch).dtype == np.float32
    assert func.hessian(lambda v: (v * v * c).sum())(x).dtype == np.float32


# ---------------------------------------------------------------------------------------------
# c. one promotion rule


@pytest.mark.parametrize("a, b", list(itertools.product(DTYPES, DTYPES)))
def test_promote_types_is_numpy_table(a, b):
    assert dualad.promote_types(a, b) == np.promote_types(a, b)
    assert dualad._dtypes.result_type(np.dtype(a), np.dtype(b)) == np.promote_types(a, b)


def test_promote_types_issue_reproducer():
    assert dualad.promote_types(dualad.int64, dualad.float32) == np.float64
    out = dualad.tensor([1]) + dualad.tensor([1.0], dtype=dualad.float32)
    assert out.dtype == dualad.promote_types(dualad.int64, dualad.float32)


# ops whose result dtype is the promoted dtype (NumPy's); floating ops give the default dtype
# (float64 here) for two integer or bool arguments
PROMOTING = ["add", "sub", "mul", "maximum", "minimum", "fmax", "fmin", "where", "remainder"]
FLOATING = ["div", "atan2", "hypot", "logaddexp", "copysign", "xlogy"]
NUMPY_OF = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "remainder": np.remainder,
    "div": np.true_divide,
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "logaddexp": np.logaddexp,
    "copysign": np.copysign,
}


def _call(name, a, b):
    if name == "where":
        return dualad.where(dualad.tensor([True, False]), a, b)
    return getattr(dualad, name)(a, b)


def _numpy_dtype(name, a, b):
    if name == "where":
        return np.where(np.array([True, False]), a, b).dtype
    if name == "xlogy":
        return np.result_type(a, b, 1.0)  # x * log(y): floating, from both
    with np.errstate(all="ignore"):
        return NUMPY_OF[name](a, b).dtype


@pytest.mark.parametrize("name", PROMOTING + FLOATING)
def test_binary_ops_promote_like_promote_types_and_numpy(name):
    checked = 0
    for a, b in itertools.product(DTYPES, DTYPES):
        x, y = np.ones(2, a), np.full(2, 2, b)
        out = _outcome(_call, name, dualad.tensor(x), dualad.tensor(y))
        if isinstance(out, Exception):  # complex atan2, bool subtraction: refused
            continue
        promoted = expected = dualad.promote_types(a, b)
        if name in FLOATING and promoted.kind in "biu":
            expected = dualad.get_default_dtype()  # NumPy: float16 for bools, float64 for ints
        if not (a == b == "bool" and name == "remainder"):  # NumPy's bool loop gives int8
            assert out.dtype == expected, f"{name}({a}, {b}): {out.dtype}, expected {expected}"
        if promoted.kind in "fc" or name in PROMOTING:
            assert out.dtype == _numpy_dtype(name, x, y), f"{name}({a}, {b}) against NumPy"
        checked += 1
    assert checked > 40


@pytest.mark.parametrize("name", ["add", "mul", "maximum", "div", "atan2"])
@pytest.mark.parametrize("scalar", [2, 2.5, True, 1j])
def test_python_scalars_are_weak(name, scalar):
    for a in DTYPES:
        x = dualad.tensor(np.ones(2, a))
        out = _outcome(getattr(dualad, name), x, scalar)
        if isinstance(out, Exception):
            continue
        expected = dualad._dtypes.result_type(x, scalar)
        if name in ("div", "atan2") and expected.kind in "biu":
            expected = dualad.get_default_dtype()
        assert out.dtype == expected, f"{name}({a}, {scalar!r}): {out.dtype} vs {expected}"
        if name in ("add", "mul") and np.dtype(a).kind != "b":
            assert (
                out.dtype
                == getattr(np, {"add": "add", "mul": "multiply"}[name])(np.ones(2, a), scalar).dtype
            )


def test_result_type_and_tensor_of_mixed_lists():
    rt = dualad._dtypes.result_type
    assert rt(dualad.float32, 2.5) == np.float32
    assert rt(dualad.int8, 300) == np.int8  # weak: NumPy 2 then refuses the value
    assert rt(dualad.int64, 2.5) == np.float64
    assert rt(dualad.bool_, 2) == np.int64
    assert rt(dualad.float32, 1j) == np.complex64
    assert rt(dualad.int16, 1j) == np.complex128
    assert rt(1, 2.5) == np.float64 and rt(True, 1) == np.int64
    assert dualad.tensor([1, 2.5]).dtype == np.float64
    assert dualad.tensor([np.float32(1), 2.5]).dtype == np.float32
    assert dualad.tensor([True, 2]).dtype == np.int64
    assert dualad.tensor([1, 1j]).dtype == np.complex128


# ---------------------------------------------------------------------------------------------
# d. the default dtype for float results of no floating tensor


def test_float32_default_issue_reproducers(float32_default):
    i = dualad.tensor([1, 2])
    assert (i * 2.5).dtype == np.float32
    assert (i / i).dtype == np.float32
    np.testing.assert_allclose((i * 2.5).numpy(), [2.5, 5.0])
    np.testing.assert_allclose((i / dualad.tensor([2, 4])).numpy(), [0.5, 0.5])


@pytest.mark.parametrize(
    "what, fn, dtype",
    [
        ("2.5 * int", lambda i, f: 2.5 * i, "float32"),
        ("int / 2", lambda i, f: i / 2, "float32"),
        ("int ** 0.5", lambda i, f: i**0.5, "float32"),
        ("int * 1j", lambda i, f: i * 1j, "complex64"),
        ("sqrt(int)", lambda i, f: dualad.sqrt(i), "float32"),
        ("exp(int)", lambda i, f: dualad.exp(i), "float32"),
        ("atan2(int, int)", lambda i, f: dualad.atan2(i, i), "float32"),
        ("hypot(int, int)", lambda i, f: dualad.hypot(i, i), "float32"),
        ("true_divide", lambda i, f: dualad.true_divide(i, i), "float32"),
        ("int + int", lambda i, f: i + i, "int64"),
        ("int // int", lambda i, f: i // i, "int64"),
        ("float64 * 2.5", lambda i, f: f * 2.5, "float64"),
        ("int * float64", lambda i, f: i * f, "float64"),
        ("int / float64", lambda i, f: i / f, "float64"),
        ("int to float64", lambda i, f: i.to(dualad.float64), "float64"),
        ("scalars alone", lambda i, f: dualad.add(2, 2.5), "float32"),
        ("linspace", lambda i, f: dualad.linspace(0, 1, 3), "float32"),
        ("arange of floats", lambda i, f: dualad.arange(0, 1, 0.5), "float32"),
        ("tensor([1, 2.5])", lambda i, f: dualad.tensor([1, 2.5]), "float32"),
    ],
)
def test_float32_default_dtype_sweep(float32_default, what, fn, dtype):
    out = fn(dualad.tensor([1, 4]), dualad.tensor([1.0, 4.0], dtype=dualad.float64))
    assert out.dtype == np.dtype(dtype), what


def test_float32_default_under_transforms(float32_default):
    i = dualad.tensor([[1, 2], [3, 4]])
    assert dualad.vmap(lambda r: r / 2)(i).dtype == np.float32
    x = dualad.tensor([1.0, 2.0])  # float32 now

    def f(v):
        return (v * (dualad.tensor([1, 2]) / 3)).sum()

    assert func.grad(f)(x).dtype == np.float32
    np.testing.assert_allclose(func.grad(f)(x).numpy(), [1 / 3, 2 / 3], rtol=1e-6)


def test_mean_of_ints_still_refused(float32_default):
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        dualad.mean(dualad.tensor([1, 2]))


# ---------------------------------------------------------------------------------------------
# e. vmap(jacfwd(f)) with in-place ops on a clone


def _clone_mul_setitem(x):
    y = x.clone()
    y.mul_(2)
    y[0] = x[1] * 3
    return y.sin()


def _setitem_slice(x):
    y = x.clone()
    y[1:3] = x[:2] ** 2
    return y


def _inplace_through_view(x):
    y = x.clone()
    y.view(2, 2).mul_(x[0])
    return y


def _inplace_on_row(x):
    y = x.clone()
    y[0].mul_(x[1])
    return y


def _unary_inplace_chain(x):
    y = x.clone()
    y.sin_()
    y.exp_()
    return y


def _two_views(x):
    y = x.clone()
    a, b = y[:2], y[2:]
    a.mul_(x[:2])
    b.add_(x[2:] * x[0])
    return y.sin()


def _view_of_view(x):
    y = x.clone()
    a = y.view(2, 2)
    a[1].mul_(x[0])
    a.t().add_(x[:2].reshape(1, 2))
    return y * a.reshape(-1)


def _masked_fill(x):
    y = x.clone()
    y.masked_fill_(x > 1, 2.0)
    return y * x


def _add_then_div(x):
    y = x.clone()
    y.add_(x.sum())
    y.div_(x)
    return y


IN_PLACE_PROGRAMS = [
    _clone_mul_setitem,
    _setitem_slice,
    _inplace_through_view,
    _inplace_on_row,
    _unary_inplace_chain,
    _two_views,
    _view_of_view,
    _masked_fill,
    _add_then_div,
]


def _finite_difference_jacobian(f, x, eps=1e-6):
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = eps
        columns.append(
            (f(dualad.tensor(x + e)).numpy() - f(dualad.tensor(x - e)).numpy()) / 2 / eps
        )
    return np.stack(columns, -1)


@pytest.mark.parametrize("f", IN_PLACE_PROGRAMS, ids=lambda f: f.__name__)
def test_vmap_of_jacfwd_with_inplace_ops_on_a_clone(f):
    xs = np.random.default_rng(5).uniform(0.5, 1.5, (3, 4))
    forward = func.vmap(func.jacfwd(f))(dualad.tensor(xs)).numpy()
    reverse = func.vmap(func.jacrev(f))(dualad.tensor(xs)).numpy()
    expected = np.stack([_finite_difference_jacobian(f, row) for row in xs])
    np.testing.assert_allclose(forward, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(reverse, expected, rtol=1e-6, atol=1e-7)
    hessians = func.vmap(func.hessian(lambda v: f(v).sum()))(dualad.tensor(xs)).numpy()
    one_by_one = [func.hessian(lambda v: f(v).sum())(dualad.tensor(row)).numpy() for row in xs]
    np.testing.assert_allclose(hessians, np.stack(one_by_one), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# f. atan2 at the origin


def test_atan2_gradient_at_origin_is_zero():
    zero = dualad.tensor(0.0)
    ga, gb = func.grad(dualad.atan2, argnums=(0, 1))(zero, zero)
    assert ga.item() == 0.0 and gb.item() == 0.0
    ja, jb = func.jacfwd(dualad.atan2, argnums=(0, 1))(zero, zero)
    assert ja.item() == 0.0 and jb.item() == 0.0
    a = dualad.tensor(0.0, dtype=dualad.float32, requires_grad=True)
    b = dualad.tensor(0.0, dtype=dualad.float32, requires_grad=True)
    dualad.atan2(a, b).backward()
    assert a.grad.item() == 0.0 and b.grad.item() == 0.0
    with fwd.dual_level():
        out = dualad.atan2(fwd.make_dual(zero, dualad.tensor(1.0)), zero)
        assert fwd.unpack_dual(out).tangent.item() == 0.0


def test_atan2_higher_orders_and_batches_at_origin():
    def f(v):
        return dualad.atan2(v[0], v[1])

    for hessian in (func.hessian(f), func.jacrev(func.jacrev(f)), func.jacrev(func.jacfwd(f))):
        np.testing.assert_array_equal(hessian(dualad.zeros(2)).numpy(), np.zeros((2, 2)))
    a = dualad.tensor([0.0, 1.0, 0.0])
    b = dualad.tensor([0.0, 2.0, -3.0])
    ga, gb = func.vmap(func.grad(dualad.atan2, argnums=(0, 1)))(a, b)
    # elsewhere: d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
    np.testing.assert_allclose(ga.numpy(), [0.0, 2 / 5, -1 / 3])
    np.testing.assert_allclose(gb.numpy(), [0.0, -1 / 5, 0.0])
    h = func.hessian(f)(dualad.tensor([1.0, 2.0])).numpy()
    # d2/da2 = -2ab / r^4, d2/dadb = (a^2 - b^2) / r^4, d2/db2 = 2ab / r^4 at (1, 2), r^2 = 5
    np.testing.assert_allclose(h, np.array([[-4.0, -3.0], [-3.0, 4.0]]) / 25)


# ---------------------------------------------------------------------------------------------
# g. piecewise-constant ops


PIECEWISE = {
    "floor": dualad.floor,
    "ceil": dualad.ceil,
    "trunc": dualad.trunc,
    "round": dualad.round,
    "round decimals": lambda v: dualad.round(v, decimals=1),
    "sign": dualad.sign,
    "sgn": dualad.sgn,
    "heaviside": lambda v: dualad.heaviside(v, dualad.tensor(0.5)),
}
POINTS = np.array([0.3, -1.7, 2.2, 0.0, 1.0])  # includes jumps: the derivative there is 0 too


@pytest.mark.parametrize("name", list(PIECEWISE))
def test_piecewise_constant_ops_have_zero_derivatives(name):
    f = PIECEWISE[name]
    x = dualad.tensor(POINTS, requires_grad=True)
    y = f(x)
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()  # used to raise "element 0 of tensors does not require grad"
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(5))
    x = dualad.tensor(POINTS)
    zeros, square = np.zeros(5), np.zeros((5, 5))
    np.testing.assert_array_equal(func.grad(lambda v: f(v).sum())(x).numpy(), zeros)
    np.testing.assert_array_equal(func.jacrev(f)(x).numpy(), square)
    np.testing.assert_array_equal(func.jacfwd(f)(x).numpy(), square)
    np.testing.assert_array_equal(func.hessian(lambda v: f(v).sum())(x).numpy(), square)
    np.testing.assert_array_equal(func.vmap(func.grad(f))(x).numpy(), zeros)
    _, tangent = func.jvp(f, (x,), (dualad.ones(5),))
    np.testing.assert_array_equal(tangent.numpy(), zeros)
    # a product with a smooth function: only the smooth factor's derivative remains
    np.testing.assert_allclose(
        func.grad(lambda v: (f(v) * v).sum())(x).numpy(), f(x).numpy(), rtol=0, atol=0
    )


def test_piecewise_constant_values_at_the_jumps():
    x = dualad.tensor([0.5, 1.5, 2.5, -0.5, -2.0], requires_grad=True)
    np.testing.assert_array_equal(dualad.round(x).detach().numpy(), [0.0, 2.0, 2.0, -0.0, -2.0])
    np.testing.assert_array_equal(dualad.floor(x).detach().numpy(), [0.0, 1.0, 2.0, -1.0, -2.0])
    np.testing.assert_array_equal(dualad.ceil(x).detach().numpy(), [1.0, 2.0, 3.0, -0.0, -2.0])
    np.testing.assert_array_equal(dualad.sign(x).detach().numpy(), [1.0, 1.0, 1.0, -1.0, -1.0])
    assert dualad.sign(dualad.tensor(-2)).dtype == np.int64  # integers: no gradient question


def test_inplace_piecewise_constant_ops_keep_the_graph():
    x = dualad.tensor([0.3, 1.7], requires_grad=True)
    y = x * 2
    y.floor_()
    (y * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 3.0])  # floor(2x), its derivative 0


def test_heaviside_derivative_in_values_where_x_is_zero():
    x = dualad.tensor([-1.0, 0.0, 2.0, 0.0])
    values = dualad.tensor([0.25, 0.5, 0.75, 1.0])
    gx, gv = func.grad(
        lambda a, b: (dualad.heaviside(a, b) * dualad.arange(1.0, 5.0)).sum(), argnums=(0, 1)
    )(x, values)
    np.testing.assert_array_equal(gx.numpy(), np.zeros(4))
    np.testing.assert_array_equal(gv.numpy(), [0.0, 2.0, 0.0, 4.0])
    jac = func.jacfwd(dualad.heaviside, argnums=1)(x, values).numpy()
    np.testing.assert_array_equal(jac, np.diag([0.0, 1.0, 0.0, 1.0]))
    # a scalar ``values`` collects the cotangents of every zero of x
    g = func.grad(lambda v: dualad.heaviside(x, v).sum())(dualad.tensor(0.5))
    assert g.item() == 2.0


def test_sgn_of_complex_is_differentiable():
    """sgn(z) = z / |z| is not piecewise constant for complex z: its derivative against finite
    differences of the real and imaginary parts, and 0 at 0."""
    z0 = np.array([1.0 + 2.0j, -0.5 + 0.1j, 3.0 - 1.0j])
    weights = np.array([0.3 - 0.2j, 1.0 + 0.5j, -0.7 + 0.0j])

    def loss(re, im):
        z = dualad.complex(re, im) if hasattr(dualad, "complex") else re + 1j * im
        return dualad.real(dualad.sgn(z) * dualad.tensor(weights)).sum()

    re, im = dualad.tensor(z0.real), dualad.tensor(z0.imag)
    g_re, g_im = func.grad(loss, argnums=(0, 1))(re, im)
    eps = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = eps
        fd_re = (loss(dualad.tensor(z0.real + e), im) - loss(dualad.tensor(z0.real - e), im)).item()
        fd_im = (loss(re, dualad.tensor(z0.imag + e)) - loss(re, dualad.tensor(z0.imag - e))).item()
        assert math.isclose(g_re[k].item(), fd_re / 2 / eps, rel_tol=1e-6, abs_tol=1e-9)
        assert math.isclose(g_im[k].item(), fd_im / 2 / eps, rel_tol=1e-6, abs_tol=1e-9)
    z = dualad.tensor([0j, 1 + 1j], requires_grad=True)
    dualad.real(dualad.sgn(z)).sum().backward()
    assert z.grad[0].item() == 0
    # forward mode agrees with reverse mode: Re<g, J t> = Re<J^T g, t>
    t = dualad.tensor([0.4 - 0.3j, 0.2 + 0.9j, -1.0 + 0.5j])
    _, jt = func.jvp(dualad.sgn, (dualad.tensor(z0),), (t,))
    (vjp,) = func.vjp(dualad.sgn, dualad.tensor(z0))[1](dualad.tensor(weights))
    lhs = np.real(np.vdot(weights, jt.numpy()))
    rhs = np.real(np.vdot(vjp.numpy(), t.numpy()))
    assert math.isclose(lhs, rhs, rel_tol=1e-12)


def test_floor_divide_and_remainder_follow_pytorch():
    """floor_divide has no derivative in PyTorch (its output does not require grad here);
    remainder(a, b) = a - floor(a / b) * b has gradient 1 in a and -floor(a / b) in b."""
    a = dualad.tensor([5.5, -3.2], requires_grad=True)
    b = dualad.tensor([2.0, 1.5], requires_grad=True)
    assert not dualad.floor_divide(a, b).requires_grad
    ga, gb = dualad.autograd.grad(dualad.remainder(a, b).sum(), (a, b))
    np.testing.assert_array_equal(ga.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(gb.numpy(), [-2.0, 3.0])
    assert not dualad.eq(a, b).requires_grad


def test_piecewise_constant_ops_are_in_the_op_database():
    differentiable = {info.name for info in all_ops() if info.differentiable}
    for name in ("floor", "ceil", "trunc", "round", "sign", "sgn", "heaviside"):
        assert name in differentiable
        assert REGISTRY[name].differentiable


# ---------------------------------------------------------------------------------------------
# h. empty Jacobians


@pytest.mark.parametrize("jacobian", [func.jacfwd, func.jacrev], ids=["jacfwd", "jacrev"])
def test_empty_jacobians(jacobian):
    empty = dualad.zeros(0)
    x = dualad.tensor([1.0, 2.0])
    assert tuple(jacobian(lambda v: v * 2)(empty).shape) == (0, 0)
    assert tuple(jacobian(lambda v: v.sum())(empty).shape) == (0,)
    assert tuple(jacobian(lambda v: (v * 2)[:0])(x).shape) == (0, 2)
    assert tuple(jacobian(lambda v: v.sum() * dualad.ones(2, 3))(dualad.zeros(2, 0)).shape) == (
        2,
        3,
        2,
        0,
    )
    j_x, j_e = jacobian(lambda a, e: a * (e.sum() + 1), argnums=(0, 1))(x, empty)
    np.testing.assert_array_equal(j_x.numpy(), np.eye(2))
    assert tuple(j_e.shape) == (2, 0)
    out, aux = jacobian(lambda v: (v * 2, v.sum()), has_aux=True)(empty)
    assert tuple(out.shape) == (0, 0) and aux.item() == 0.0


def test_empty_hessians_and_functional_jacobians():
    empty = dualad.zeros(0)
    assert tuple(func.hessian(lambda v: (v**2).sum())(empty).shape) == (0, 0)
    assert tuple(func.hessian(lambda v: (v**2).sum())(dualad.zeros(0, 2)).shape) == (0, 2, 0, 2)
    x = dualad.tensor([1.0, 2.0])
    for strategy in ("forward-mode", "reverse-mode"):
        assert tuple(
            F.jacobian(lambda v: v * 2, empty, vectorize=True, strategy=strategy).shape
        ) == (
            0,
            0,
        )
        j = F.jacobian(lambda v: v[:0], x, vectorize=True, strategy=strategy)
        assert tuple(j.shape) == (0, 2)
        pair = F.jacobian(lambda a, e: a * 2, (x, empty), vectorize=True, strategy=strategy)
        assert tuple(pair[0].shape) == (2, 2) and tuple(pair[1].shape) == (2, 0)
    assert tuple(F.jacobian(lambda v: v * 2, empty).shape) == (0, 0)
    assert tuple(F.hessian(lambda v: v.sum(), empty).shape) == (0, 0)
    h = F.hessian(lambda v: v.sum(), empty, vectorize=True, outer_jacobian_strategy="forward-mode")
    assert tuple(h.shape) == (0, 0)


# ---------------------------------------------------------------------------------------------
# i. NumPy's exception classes


def test_floating_point_error_keeps_its_class():
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError, match=r"dualad\.div: .*divide by zero") as info:
            dualad.tensor([1.0]) / dualad.tensor([0.0])
        assert isinstance(info.value.__cause__, FloatingPointError)
        with pytest.raises(FloatingPointError, match=r"dualad\.log"):
            dualad.log(dualad.tensor([0.0]))
        with pytest.raises(FloatingPointError):
            dualad.exp(dualad.tensor([1000.0]))


def _raising_op(exc):
    def impl(xp, x):
        raise exc

    return OpDef("raising_op", impl, differentiable=False)  # not registered: a local op


def test_linalg_error_keeps_its_class():
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix") as info:
        apply(_raising_op(np.linalg.LinAlgError("Singular matrix")), dualad.ones(2, 2))
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)
    assert "dualad.raising_op" in str(info.value) and "shape=(2, 2)" in str(info.value)


def test_exception_that_cannot_take_one_message_gets_a_note():
    original = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    with pytest.raises(UnicodeDecodeError) as info:
        apply(_raising_op(original), dualad.ones(2))
    assert info.value is original
    if hasattr(original, "add_note"):  # Python 3.11+
        assert any("dualad.raising_op" in note for note in original.__notes__)


def test_value_and_overflow_errors_keep_their_class():
    with pytest.raises(ValueError, match="broadcast"):
        dualad.tensor([1.0, 2.0]) + dualad.tensor([1.0, 2.0, 3.0])
    with pytest.raises(OverflowError):
        dualad.tensor([1], dtype=dualad.int8) + 300  # NumPy 2: out of bounds for int8
