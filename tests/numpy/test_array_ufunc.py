"""Derivatives through NumPy's ufuncs on tensors (``Tensor.__array_ufunc__``) and through
``dualad.numpy``'s ufuncs: reverse and forward mode against finite differences (``check_grads``,
to second order), vmap against a loop, ``func.grad``/``jacfwd``/dual levels against the dualad
ops, NumPy arrays on the left of operators, and the protocol's dispatch rules (foreign array
types, ufuncs without a dualad version, the lean path agreeing with the general one)."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad import func, fwd
from dualad.autograd import gradcheck
from dualad.numpy.protocol_ufuncs import UFUNCS
from dualad.testing import assert_close, check_grads

RNG = np.random.default_rng(1)
DIFFERENTIABLE = sorted({u.__name__ for u in UFUNCS.values() if u.differentiable})


def _args(name: str, rng=RNG):
    """float64 inputs of ufunc ``name`` clear of its singular points and jumps."""
    if name == "arccosh":
        return (rng.uniform(1.2, 3.0, (2, 3)),)
    if name in ("matmul", "matvec", "vecmat", "vecdot"):
        shapes = {
            "matmul": ((2, 3), (3, 2)),
            "matvec": ((2, 3), (3,)),
            "vecmat": ((3,), (3, 2)),
            "vecdot": ((2, 3), (3,)),
        }[name]
        return tuple(rng.standard_normal(s) for s in shapes)
    if getattr(np, name).nin == 1:
        return (rng.uniform(0.2, 0.8, (2, 3)),)
    if name == "ldexp":  # an integer exponent (not differentiable)
        return rng.uniform(0.2, 0.8, (2, 3)), rng.integers(-3, 4, (3,)).astype("int32")
    # the second argument in (1.1, 1.9): a / b is never an integer (remainder, fmod, divmod)
    return rng.uniform(0.2, 0.8, (2, 3)), rng.uniform(1.1, 1.9, (3,))


def _tensors(args):
    return tuple(dualad.tensor(a) for a in args)


@pytest.mark.parametrize("route", ["protocol", "dualad.numpy"])
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_derivatives_match_finite_differences(name, route):
    fn = getattr(np, name) if route == "protocol" else getattr(dnp, name)
    check_grads(fn, _tensors(_args(name)), modes=("fwd", "rev"), order=2)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_eager_autograd_matches_finite_differences(name):
    # tensors that require grad, no level active: the protocol's lean path (the op's fast
    # caller), which check_grads (run under func transforms) does not reach
    for fn in (getattr(np, name), getattr(dnp, name)):
        leaves = tuple(dualad.tensor(a, requires_grad=a.dtype.kind == "f") for a in _args(name))

        def first_floating(*xs, fn=fn):
            out = fn(*xs)
            outs = out if isinstance(out, tuple) else (out,)
            return tuple(o for o in outs if o.dtype.kind == "f")

        assert gradcheck(first_floating, leaves)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_vmap_matches_a_loop(name):
    args = _args(name)
    fn = getattr(np, name)
    batch = dualad.tensor(np.stack([args[0], 1.1 * args[0], 0.9 * args[0]]))
    rest = _tensors(args[1:])
    got = dualad.vmap(lambda v: fn(v, *rest))(batch)
    expected = [fn(batch[i], *rest) for i in range(3)]
    if isinstance(got, tuple):
        for k, part in enumerate(got):
            assert_close(part, dualad.stack([e[k] for e in expected]))
    else:
        assert_close(got, dualad.stack(expected))


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_func_grad_matches_eager_autograd(name):
    args = _args(name)
    fn = getattr(np, name)

    def loss(*xs):
        out = fn(*xs)
        outs = out if isinstance(out, tuple) else (out,)
        return sum((o * o).sum() for o in outs if o.dtype.kind == "f")

    argnums = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    got = func.grad(loss, argnums=argnums)(*_tensors(args))
    leaves = tuple(dualad.tensor(a, requires_grad=a.dtype.kind == "f") for a in args)
    expected = dualad.autograd.grad(loss(*leaves), [leaves[i] for i in argnums], allow_unused=True)
    for g, e in zip(got, expected, strict=True):
        assert_close(g, dualad.zeros_like(g) if e is None else e)


def test_modf_frexp_ldexp_derivatives():
    x = dualad.tensor([2.25, -3.5, 0.75], requires_grad=True)
    frac, whole = np.modf(x)
    assert_close(dualad.autograd.grad(frac.sum(), x)[0], np.ones(3))  # the fractional part: 1
    assert_close(dualad.autograd.grad(whole.sum(), x)[0], np.zeros(3))  # the integral part: 0
    mantissa, exponent = np.frexp(x)
    assert exponent.dtype == np.frexp(x.detach().numpy())[1].dtype and not exponent.requires_grad
    assert_close(dualad.autograd.grad(mantissa.sum(), x)[0], 2.0 ** -exponent.numpy())
    y = np.ldexp(x, np.array([1, -2, 3], dtype="int32"))
    assert_close(dualad.autograd.grad(y.sum(), x)[0], np.array([2.0, 0.25, 8.0]))
    with pytest.raises(TypeError):  # NumPy's gcd is for integers
        np.gcd(x, 1.0)
    assert not np.nextafter(x, 0.0).requires_grad and not np.spacing(x).requires_grad


def test_exact_derivatives_under_every_transform():
    x = dualad.tensor([0.5, 1.5, -0.25])
    a = x.numpy()
    assert_close(func.grad(lambda v: (np.exp(v) * v).sum())(x), np.exp(a) * (1 + a))
    assert_close(func.jacfwd(np.sin)(x), np.diag(np.cos(a)))
    assert_close(func.jacrev(np.tanh)(x), np.diag(1 - np.tanh(a) ** 2))
    assert_close(func.hessian(lambda v: np.sin(v).sum())(x), np.diag(-np.sin(a)))
    _, tangent = func.jvp(lambda v: np.log1p(np.square(v)), (x,), (dualad.ones_like(x),))
    assert_close(tangent, 2 * a / (1 + a * a))
    with fwd.dual_level():
        d = fwd.make_dual(x, dualad.ones_like(x))
        assert_close(fwd.unpack_dual(np.hypot(d, 2.0)).tangent, a / np.hypot(a, 2.0))
    # vmap of grad, grad of vmap
    batch = dualad.stack([x, 2 * x])
    per_row = dualad.vmap(func.grad(lambda v: np.cos(v).sum()))(batch)
    assert_close(per_row, -np.sin(batch.numpy()))


def test_piecewise_constant_and_nondifferentiable_ufuncs():
    x = dualad.tensor([0.4, 1.6], requires_grad=True)
    for fn in (np.floor, np.ceil, np.rint, np.sign, np.trunc):
        y = fn(x)
        assert y.requires_grad
        assert_close(dualad.autograd.grad(y.sum(), x)[0], np.zeros(2))
    for fn in (np.isfinite, np.signbit, lambda v: np.less(v, 1.0), lambda v: np.floor_divide(v, 1)):
        assert not fn(x).requires_grad
    q, r = np.divmod(x, 0.5)
    assert not q.requires_grad and r.requires_grad


@pytest.mark.parametrize(
    "op",
    [
        operator.add,
        operator.sub,
        operator.mul,
        operator.truediv,
        operator.pow,
        operator.mod,
        np.add,
        np.multiply,
        np.arctan2,
    ],
)
def test_ndarray_on_the_left(op):
    a = np.array([1.5, 2.5, 0.5])
    x = dualad.tensor([0.4, 0.7, 1.2], requires_grad=True)
    y = op(a, x)
    assert isinstance(y, dualad.Tensor) and y.requires_grad
    check_grads(lambda v: op(a, v), (x.detach(),), order=1)
    assert_close(y, op(a, x.detach().numpy()))
    # and inside a transform
    assert_close(
        func.grad(lambda v: op(a, v).sum())(x.detach()),
        dualad.autograd.grad(y.sum(), x)[0],
    )


def test_ndarray_matmul_and_comparisons_on_the_left():
    m = RNG.standard_normal((2, 3))
    x = dualad.tensor(RNG.standard_normal(3), requires_grad=True)
    y = m @ x
    assert isinstance(y, dualad.Tensor)
    assert_close(dualad.autograd.grad(y.sum(), x)[0], m.sum(0))
    less = np.zeros(3) < x
    assert isinstance(less, dualad.Tensor) and not less.requires_grad
    assert less.tolist() == (x.detach().numpy() > 0).tolist()


class Foreign:
    """Another array type with the ufunc protocol: NumPy must ask it after us."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("foreign", ufunc.__name__, method)


def test_foreign_array_types_get_notimplemented():
    x = dualad.tensor([1.0, 2.0])
    assert np.add(x, Foreign()) == ("foreign", "add", "__call__")
    assert np.multiply.outer(x, Foreign()) == ("foreign", "multiply", "outer")
    assert np.sin(x, out=(Foreign(),)) == ("foreign", "sin", "__call__")
    assert x.__array_ufunc__(np.add, "__call__", x, Foreign()) is NotImplemented


def test_ufunc_without_dualad_version_raises():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"numpy\.isnat has no dualad version.*differentiable"):
        np.isnat(x)
    missing = [u for u in (getattr(np, n) for n in dir(np)) if isinstance(u, np.ufunc)]
    missing = [u for u in missing if u not in UFUNCS]
    for u in missing:  # each names itself
        args = (x,) * u.nin
        with pytest.raises(TypeError, match=rf"numpy\.{u.__name__} has no dualad version"):
            u(*args)


@pytest.mark.parametrize(
    "make",
    [
        lambda: dualad.tensor([0.5, 1.5, 2.5])[1:],  # a view
        lambda: dualad.tensor([1, 2, 3], dtype="int8"),  # not floating
        lambda: dualad.tensor([0.5, 1.5], dtype="float32"),
        lambda: dualad.tensor([0.5 + 1j, 1.5]),
    ],
)
def test_lean_and_general_paths_agree(make):
    x = make()
    for name in ("sin", "exp", "negative", "square", "add", "multiply", "less", "maximum"):
        np_ufunc, ours = getattr(np, name), getattr(dnp, name)
        args = (x,) if np_ufunc.nin == 1 else (x, x)
        ref = np_ufunc(*(a.numpy() for a in args))
        if name == "maximum" and x.dtype.kind == "c":
            # dualad's maximum is real only; the lean path (untracked) gives NumPy's value
            assert_close(np_ufunc(*args), ref)
            with pytest.raises(TypeError, match="complex"):
                ours(*args)
            continue
        for got in (np_ufunc(*args), ours(*args), np_ufunc(*args, out=None)):
            assert got.dtype == ref.dtype
            assert_close(got, ref)
        # under a level the general path runs: same dtypes
        if x.dtype.kind not in "c":
            seen = []

            def loss(v, f=np_ufunc, a=args, seen=seen):
                seen.append(f(*a))
                return v.sum()

            func.grad(loss)(dualad.ones(1))
            assert seen[0].dtype == ref.dtype


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (out-of-domain values: dtypes only)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_tracked_low_precision_keeps_numpys_dtypes(dtype):
    a = np.linspace(1.3, 1.7, 4).astype(dtype)
    for np_ufunc, ours in UFUNCS.items():
        if not ours.differentiable or np_ufunc.signature:
            continue
        args = [dualad.tensor(a, requires_grad=True)]
        if np_ufunc.nin == 2:
            args.append(dualad.tensor([1, 2, 3, 4]) if np_ufunc is np.ldexp else args[0] + 1)
        got = np_ufunc(*args)
        ref = np_ufunc(*(x.detach().numpy() for x in args))
        for g, r in zip(*((v if isinstance(v, tuple) else (v,)) for v in (got, ref)), strict=True):
            assert g.dtype == r.dtype, np_ufunc.__name__


def test_ndarray_and_tensor_mixes():
    a = np.array([1.5, 2.5])
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    for left, right in ((a, x), (x, a), (a, x.detach()), (np.array([1, 2]), x)):
        got = np.multiply(left, right)
        assert isinstance(got, dualad.Tensor)
        assert got.requires_grad == (left is x or right is x)
        plain = [v.detach().numpy() if isinstance(v, dualad.Tensor) else v for v in (left, right)]
        ref = np.multiply(*plain)
        assert got.dtype == ref.dtype
        assert_close(got, ref)


def test_gufunc_keywords():
    a, b = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((3, 4, 5))
    axes = [(1, 2), (1, 2), (2, 0)]
    got = np.matmul(dualad.tensor(a), dualad.tensor(b), axes=axes)
    assert_close(got, np.matmul(a, b, axes=axes))
    check_grads(lambda x, y: dnp.matmul(x, y, axes=axes), _tensors((a, b)), order=1)
    u, v = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    assert_close(np.vecdot(dualad.tensor(u), dualad.tensor(v), axis=0), np.vecdot(u, v, axis=0))
    check_grads(lambda x, y: dnp.vecdot(x, y, axis=0), (dualad.tensor(u), dualad.tensor(v)))
    with pytest.raises(ValueError, match="core dimensions do not match"):
        dnp.vecdot(dualad.tensor(u), dualad.tensor(v[:, :1]))
    with pytest.raises(TypeError, match="keepdims"):
        dnp.vecdot(dualad.tensor(u), dualad.tensor(v), keepdims=True)


def test_inputs_are_never_mutated():
    a = np.array([0.5, 1.5])
    x = dualad.tensor([0.25, 0.75], requires_grad=True)
    before = (a.copy(), x.detach().numpy().copy())
    np.add(a, x)
    np.multiply(x, a, where=np.array([True, False]))
    np.add.reduce(x)
    np.subtract.accumulate(x)
    np.multiply.outer(a, x)
    _ = a + x
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(x.detach().numpy(), before[1])
