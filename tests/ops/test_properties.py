"""Property-based tests (hypothesis) over the op registry.

- broadcasting binary elementwise ops: random broadcastable shape pairs (and tensor-scalar
  calls); output shape is the broadcast shape, each gradient has its input's shape (the engine
  reduces broadcast cotangents), VJP equals central finite differences;
- random chains of unary elementwise ops (each op's input mapped into its domain with smooth
  bounded maps): VJP and grad-of-grad against finite differences;
- reductions (sum, mean, and whichever of amax/amin/logsumexp/prod exist) over random dims with
  torch and NumPy spellings, keepdim or not: values against NumPy, VJP against finite
  differences;
- reshape/permute round trips: values against NumPy, the round trip is the identity, the VJP
  is the inverse reshape/permutation of the cotangent.

The domains and domain maps live in ``dualad.testing.strategies`` (shared with users' property
tests). Only ops that exist in ``dualad._dispatch.REGISTRY`` (and as ``dualad.<name>``) are drawn, so
the file grows with the registry. Budgets follow the hypothesis profile (``ci``: 15 examples).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dualad
from dualad._dispatch import REGISTRY
from dualad.testing._numeric import as_numpy, numerical_vjp, random_like
from dualad.testing.strategies import BINARY_DOMAINS, UNARY_DOMAINS, available, chain, shapes

SEEDS = st.integers(0, 2**32 - 1)
SMALL_SHAPES = shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)


def _vjp_and_fd(fn, arrays, rng, *, create_graph=False):
    """``(grads, fd_grads, output)`` of ``fn`` (tensors -> one tensor) at ``arrays``.

    The cotangent is random; gradients of unused inputs are zeros.
    """
    leaves = [dualad.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    cotangent = random_like(rng, as_numpy(out))
    grads = dualad.autograd.grad(
        out, leaves, dualad.tensor(cotangent), allow_unused=True, create_graph=create_graph
    )
    grads = [np.zeros_like(a) if g is None else as_numpy(g) for a, g in zip(arrays, grads)]

    def evaluate(*values):
        with dualad.no_grad():
            return as_numpy(fn(*(dualad.tensor(v) for v in values)))

    expected = numerical_vjp(evaluate, arrays, range(len(arrays)), cotangent)
    return grads, expected, out


def _close(actual, expected, what, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


# ---------------------------------------------------------------------------------------------
# binary elementwise ops with broadcasting

COMPLEX_BINARY = {"add", "sub", "mul", "div"}
BINARY_OPS = available(BINARY_DOMAINS)


@st.composite
def binary_cases(draw):
    name = draw(st.sampled_from(BINARY_OPS))
    shapes = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)
    )
    dtype = draw(
        st.sampled_from(["float64", "complex128"] if name in COMPLEX_BINARY else ["float64"])
    )
    scalar = draw(st.sampled_from([None, None, "a", "b"]))  # a Python scalar operand, sometimes
    return name, shapes.input_shapes, dtype, scalar, draw(SEEDS)


def _uniform(rng, shape, dtype, domain):
    low, high = domain
    values = rng.uniform(low, high, shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.uniform(low, high, shape)
    return np.asarray(values).astype(dtype)


@pytest.mark.skipif(not BINARY_OPS, reason="no binary elementwise ops registered")
@given(binary_cases())
def test_binary_broadcasting_vjp(case):
    name, (shape_a, shape_b), dtype, scalar, seed = case
    rng = np.random.default_rng(seed)
    op = getattr(dualad, name)
    domain_a, domain_b = BINARY_DOMAINS[name]
    a = _uniform(rng, shape_a, dtype, domain_a)
    b = _uniform(rng, shape_b, dtype, domain_b)
    what = f"{name}(a{shape_a}, b{shape_b}) {dtype} scalar={scalar}"
    if scalar == "a":
        a_value = a.reshape(-1)[0].item()
        fn, arrays = (lambda y: op(a_value, y)), [b]
        expected_shape = shape_b
    elif scalar == "b":
        b_value = b.reshape(-1)[0].item()
        fn, arrays = (lambda x: op(x, b_value)), [a]
        expected_shape = shape_a
    else:
        fn, arrays = op, [a, b]
        expected_shape = np.broadcast_shapes(shape_a, shape_b)
    grads, expected, out = _vjp_and_fd(fn, arrays, rng)
    assert tuple(out.shape) == tuple(expected_shape), f"{what}: output shape {out.shape}"
    for k, (array, grad, fd) in enumerate(zip(arrays, grads, expected)):
        assert grad.shape == array.shape, f"{what}: gradient {k} shape {grad.shape}"
        assert grad.dtype == array.dtype, f"{what}: gradient {k} dtype {grad.dtype}"
        _close(grad, fd, f"{what}: gradient {k}")


# ---------------------------------------------------------------------------------------------
# chains of unary elementwise ops


UNARY_OPS = available(UNARY_DOMAINS)


@pytest.mark.skipif(not UNARY_OPS or "rsqrt" not in REGISTRY, reason="no unary ops")
@given(st.lists(st.sampled_from(UNARY_OPS or ["-"]), min_size=1, max_size=4), SMALL_SHAPES, SEEDS)
def test_unary_chain_vjp_and_grad_of_grad(names, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, shape)
    fn = chain(names)
    what = f"chain {names} on shape {shape}"
    (grad,), (fd,), _ = _vjp_and_fd(fn, [x], rng)
    _close(grad, fd, f"{what}: gradient")

    # grad of grad: d/dx <v, VJP(x, ct)> (and d/dct) against differences of the VJP
    ct = rng.uniform(-1, 1, shape)
    direction = rng.uniform(-1, 1, shape)
    leaf = dualad.tensor(x, requires_grad=True)
    ct_leaf = dualad.tensor(ct, requires_grad=True)
    (first,) = dualad.autograd.grad(fn(leaf), leaf, ct_leaf, create_graph=True)
    second = dualad.autograd.grad(
        first, [leaf, ct_leaf], dualad.tensor(direction), allow_unused=True
    )

    def first_order(x_value, ct_value):
        x_leaf = dualad.tensor(x_value, requires_grad=True)
        (g,) = dualad.autograd.grad(fn(x_leaf), x_leaf, dualad.tensor(ct_value))
        return as_numpy(g)

    expected = numerical_vjp(first_order, [x, ct], (0, 1), direction)
    for k, (g, e) in enumerate(zip(second, expected)):
        actual = np.zeros(shape) if g is None else as_numpy(g)
        _close(actual, e, f"{what}: second-order gradient {('x', 'ct')[k]}", rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------------------------
# reductions over random dims


def _logsumexp_ref(x, axis, keepdims):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


# name -> (NumPy reference, whether the op takes a tuple of dims)
REDUCTIONS = {
    "sum": (np.sum, True),
    "mean": (np.mean, True),
    "amax": (np.max, True),
    "amin": (np.min, True),
    "logsumexp": (_logsumexp_ref, True),
    "prod": (np.prod, False),
}
REDUCTION_OPS = [n for n in REDUCTIONS if callable(getattr(dualad, n, None))]


@st.composite
def reduction_cases(draw):
    name = draw(st.sampled_from(REDUCTION_OPS))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3))
    ndim = len(shape)
    takes_tuple = REDUCTIONS[name][1]
    if ndim == 0:
        dims = None
    elif takes_tuple:
        chosen = draw(st.none() | st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
        # each dim spelled non-negative or negative; a single dim sometimes as a bare int
        dims = (
            None
            if chosen is None
            else tuple(d - ndim if draw(st.booleans()) else d for d in chosen)
        )
        if dims is not None and len(dims) == 1 and draw(st.booleans()):
            dims = dims[0]
    else:
        dims = draw(st.none() | st.integers(-ndim, ndim - 1))
    if name == "logsumexp" and dims is None:
        dims = tuple(range(ndim))  # torch's logsumexp requires dim
    keepdim = draw(st.booleans())
    numpy_spelling = draw(st.booleans())
    return name, shape, dims, keepdim, numpy_spelling, draw(SEEDS)


@pytest.mark.skipif(not REDUCTION_OPS, reason="no reductions registered")
@given(reduction_cases())
def test_reduction_over_random_dims(case):
    name, shape, dims, keepdim, numpy_spelling, seed = case
    rng = np.random.default_rng(seed)
    reference, _ = REDUCTIONS[name]
    op = getattr(dualad, name)
    # away from zero (prod) and from ties (amax/amin: distinct values)
    x = rng.permutation(np.linspace(0.5, 2.0, int(np.prod(shape)))).reshape(shape)
    x = x * rng.choice([-1.0, 1.0], shape) if name != "prod" else x
    if numpy_spelling:
        fn = lambda t: op(t, axis=dims, keepdims=keepdim)
    elif dims is None:
        fn = lambda t: op(t, keepdim=keepdim)
    else:
        fn = lambda t: op(t, dim=dims, keepdim=keepdim)
    what = f"{name}(shape {shape}, dims={dims}, keepdim={keepdim}, numpy={numpy_spelling})"
    expected = np.asarray(reference(x, axis=dims, keepdims=keepdim))
    grads, fds, out = _vjp_and_fd(fn, [x], rng)
    assert tuple(out.shape) == expected.shape, f"{what}: output shape {out.shape}"
    _close(as_numpy(out), expected, f"{what}: value", rtol=1e-10, atol=1e-12)
    assert grads[0].shape == x.shape, f"{what}: gradient shape {grads[0].shape}"
    _close(grads[0], fds[0], f"{what}: gradient")


# ---------------------------------------------------------------------------------------------
# reshape and permute round trips


@st.composite
def permutation_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3))
    permutation = draw(st.permutations(range(len(shape))))
    negative = draw(st.booleans())
    return shape, tuple(permutation), negative, draw(SEEDS)


@pytest.mark.skipif("permute" not in REGISTRY, reason="permute not registered")
@given(permutation_cases())
def test_permute_round_trip(case):
    shape, permutation, negative, seed = case
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, shape)
    inverse = tuple(int(i) for i in np.argsort(permutation))
    spelled = tuple(d - len(shape) for d in permutation) if negative else permutation
    leaf = dualad.tensor(x, requires_grad=True)
    y = dualad.permute(leaf, spelled)
    np.testing.assert_array_equal(as_numpy(y), np.transpose(x, permutation))
    back = dualad.permute(y, inverse)
    np.testing.assert_array_equal(as_numpy(back), x)
    ct = rng.uniform(-1, 1, y.shape)
    (grad,) = dualad.autograd.grad(y, leaf, dualad.tensor(ct))
    np.testing.assert_array_equal(as_numpy(grad), np.transpose(ct, inverse))
    # the round trip's VJP is the identity
    (grad,) = dualad.autograd.grad(
        dualad.permute(dualad.permute(leaf, spelled), inverse), leaf, dualad.tensor(x)
    )
    np.testing.assert_array_equal(as_numpy(grad), x)


def _factorizations(n: int) -> list[tuple]:
    """Shapes (up to 3 dims) with ``n`` elements."""
    shapes = [(n,)]
    for a in range(1, n + 1):
        if n % a == 0:
            shapes.append((a, n // a))
            for b in range(1, n // a + 1):
                if (n // a) % b == 0:
                    shapes.append((a, b, n // (a * b)))
    return shapes


@st.composite
def reshape_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3))
    n = int(np.prod(shape))
    target = draw(st.sampled_from(_factorizations(n)))
    if draw(st.booleans()):
        infer = draw(st.integers(0, len(target) - 1))  # spell one dim as -1
        target = tuple(-1 if i == infer else s for i, s in enumerate(target))
    return shape, target, draw(SEEDS)


@pytest.mark.skipif("reshape" not in REGISTRY, reason="reshape not registered")
@given(reshape_cases())
def test_reshape_round_trip(case):
    shape, target, seed = case
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, shape)
    leaf = dualad.tensor(x, requires_grad=True)
    y = dualad.reshape(leaf, target)
    np.testing.assert_array_equal(as_numpy(y), np.reshape(x, target))
    np.testing.assert_array_equal(as_numpy(dualad.reshape(y, shape)), x)
    ct = rng.uniform(-1, 1, y.shape)
    (grad,) = dualad.autograd.grad(y, leaf, dualad.tensor(ct))
    np.testing.assert_array_equal(as_numpy(grad), np.reshape(ct, shape))
    # reshape composed with an elementwise op and a permute, against finite differences
    if "permute" in REGISTRY and y.ndim > 1:
        order = tuple(reversed(range(y.ndim)))
        fn = lambda t: dualad.permute(dualad.reshape(t * t, target), order)
        grads, fds, _ = _vjp_and_fd(fn, [x], rng)
        _close(grads[0], fds[0], f"reshape {shape} -> {target} -> permute {order}")
