"""Array in, array out (``dualad/func/_arrays.py``): every transform takes NumPy arrays, NumPy
scalars, Python numbers, lists and pytrees of them where it takes tensors, and returns arrays
(0-d ones as NumPy scalars) when no argument is a Tensor; the values equal the Tensor path's."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import func
from dualad._tree import flatten


def f_scalar(x):
    return (dualad.sin(x) * x).sum()


def f_vec(x):
    return dualad.sin(x) * x


def _ct(x, kind):
    """A tangent/cotangent like ``x`` (a Tensor, array or number), of the same kind."""
    value = np.full(np.shape(_np(x)), 0.5, dtype=np.asarray(_np(x)).dtype)
    return _convert(value, kind)


def _np(x):
    return x.detach().numpy() if isinstance(x, dualad.Tensor) else x


def _convert(value: np.ndarray, kind: str):
    if kind == "tensor":
        return dualad.tensor(value)
    if kind == "ndarray":
        return np.array(value)
    if kind == "python":
        return float(value)
    if kind == "numpy scalar":
        return value.dtype.type(value)
    raise AssertionError(kind)


def _vjp_call(x, kind):
    out, vjp_fn = func.vjp(f_vec, x)
    return out, vjp_fn(_ct(out, kind))


def _linearize_call(x, kind):
    out, jvp_fn = func.linearize(f_vec, x)
    return out, jvp_fn(_ct(x, kind))


# transform name -> (x, kind) -> result
TRANSFORMS = {
    "grad": lambda x, kind: func.grad(f_scalar)(x),
    "grad_and_value": lambda x, kind: func.grad_and_value(f_scalar)(x),
    "grad has_aux": lambda x, kind: func.grad(
        lambda x: (f_scalar(x), {"y": f_vec(x), "n": 3}), has_aux=True
    )(x),
    "vjp": _vjp_call,
    "vjp has_aux": lambda x, kind: func.vjp(lambda x: (f_vec(x), x * 2), x, has_aux=True)[::2],
    "jvp": lambda x, kind: func.jvp(f_vec, (x,), (_ct(x, kind),)),
    "linearize": _linearize_call,
    "jacrev": lambda x, kind: func.jacrev(f_vec)(x),
    "jacfwd": lambda x, kind: func.jacfwd(f_vec)(x),
    "jacrev has_aux": lambda x, kind: func.jacrev(lambda x: (f_vec(x), x), has_aux=True)(x),
    "hessian": lambda x, kind: func.hessian(f_scalar)(x),
    "hvp": lambda x, kind: func.hvp(f_scalar, (x,), (_ct(x, kind),)),
    "hvp single": lambda x, kind: func.hvp(f_scalar, x, _ct(x, kind)),
    "vmap": lambda x, kind: dualad.vmap(f_scalar)(x),
    "func.vmap chunked": lambda x, kind: func.vmap(f_vec, chunk_size=2)(x),
    "vmap of grad": lambda x, kind: dualad.vmap(func.grad(f_scalar))(x),
}
SCALAR_OK = {name for name in TRANSFORMS if "vmap" not in name}

BASE = {
    "1-d": np.array([0.5, -1.0, 2.0]),
    "0-d": np.array(0.7),
    "float32": np.array([0.5, -1.0, 2.0], dtype=np.float32),
}


def _check_same(plain, reference):
    """``plain`` has the structure of ``reference`` with arrays for its Tensors (NumPy scalars
    for 0-d ones), of the same values, dtypes and shapes."""
    p_leaves, _ = flatten(plain)
    r_leaves, _ = flatten(reference)
    assert len(p_leaves) == len(r_leaves)
    if not isinstance(reference, dualad.Tensor):
        assert type(plain) is type(reference)
    for p, r in zip(p_leaves, r_leaves):
        if not isinstance(r, dualad.Tensor):
            assert p == r
            continue
        assert not isinstance(p, dualad.Tensor), type(p)
        expected = r.numpy()
        if expected.ndim == 0:
            assert isinstance(p, np.generic), type(p)
        else:
            assert type(p) is np.ndarray
            assert p.flags.writeable
        assert p.dtype == expected.dtype
        assert np.shape(p) == expected.shape
        np.testing.assert_allclose(p, expected, rtol=1e-6)


CASES = [
    (name, base, kind)
    for name in TRANSFORMS
    for base, kind in [
        ("1-d", "ndarray"),
        ("float32", "ndarray"),
        ("0-d", "ndarray"),
        ("0-d", "python"),
        ("0-d", "numpy scalar"),
        ("float32", "numpy scalar"),
    ]
    if (base == "1-d" or name in SCALAR_OK or kind == "ndarray")
    and not (base == "0-d" and "vmap" in name)
]


@pytest.mark.parametrize("name, base, kind", CASES)
def test_plain_inputs_give_arrays_equal_to_the_tensor_path(name, base, kind):
    value = BASE[base]
    if kind == "numpy scalar":
        value = value.reshape(-1)[0:1].reshape(())
    reference = TRANSFORMS[name](dualad.tensor(value), "tensor")
    x = _convert(value, kind)
    before = np.array(x, copy=True)
    plain = TRANSFORMS[name](x, kind)
    _check_same(plain, reference)
    np.testing.assert_array_equal(x, before)  # the input is never written


def test_python_float_is_float64_and_numpy_scalars_keep_their_dtype():
    assert type(func.grad(lambda x: x * x)(3.0)) is np.float64
    g = func.grad(lambda x: x * x)(np.float32(3.0))
    assert type(g) is np.float32 and g == 6.0
    assert func.grad(lambda x: x * x)(np.array(3.0)) == 6.0


def test_lists_are_pytrees_of_numbers():
    def f(xs):
        return xs[0] ** 2 + 3 * xs[1][0] * xs[1][1]

    plain = func.grad(f)([1.0, [2.0, 5.0]])
    reference = func.grad(f)([dualad.tensor(1.0), [dualad.tensor(2.0), dualad.tensor(5.0)]])
    _check_same(plain, reference)
    assert plain == [2.0, [15.0, 6.0]]
    out, tangent = func.jvp(lambda xs: xs[0] * xs[1], ([2.0, 3.0],), ([1.0, 0.0],))
    assert (out, tangent) == (6.0, 3.0) and type(tangent) is np.float64
    out, vjp_fn = func.vjp(lambda xs: [xs[0] * xs[1], xs[1]], [2.0, 3.0])
    assert out == [6.0, 3.0]
    assert vjp_fn([1.0, 1.0]) == ([3.0, 3.0],)


PYTREE = {"a": np.array([0.5, 1.5]), "b": (np.array([[1.0, 2.0]]), 0.25)}


def f_tree(p):
    return (dualad.sin(p["a"]) * p["b"][1]).sum() + (p["b"][0] ** 2).sum()


def _as_tensors(tree):
    leaves, rebuild = flatten(tree)
    return rebuild([dualad.tensor(leaf) for leaf in leaves])


@pytest.mark.parametrize(
    "call",
    [
        lambda p: func.grad(f_tree)(p),
        lambda p: func.grad_and_value(f_tree)(p),
        lambda p: func.jacrev(f_tree)(p),
        lambda p: func.jacfwd(f_tree)(p),
        lambda p: func.hessian(f_tree)(p),
        lambda p: func.jvp(f_tree, (p,), (p,)),
        lambda p: func.hvp(f_tree, (p,), (p,)),
        lambda p: (lambda out, fn: (out, fn(1.0)))(*func.vjp(f_tree, p)),
        lambda p: (lambda out, fn: (out, fn(p)))(*func.linearize(f_tree, p)),
        lambda p: dualad.vmap(lambda a, b: (a * b[1]).sum() + b[0].sum())(
            p["a"], (p["b"][0].T, np.array([1.0, 2.0]))
        ),
    ],
    ids=[
        "grad",
        "grad_and_value",
        "jacrev",
        "jacfwd",
        "hessian",
        "jvp",
        "hvp",
        "vjp",
        "linearize",
        "vmap",
    ],
)
def test_pytrees_of_arrays(call):
    reference = call(_as_tensors(PYTREE))
    _check_same(call(PYTREE), reference)


def test_a_tensor_argument_keeps_tensor_results_and_arrays_are_converted():
    x, y = dualad.tensor([1.0, 2.0]), np.array([3.0, 4.0])
    gx, gy = func.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(x, y)
    assert isinstance(gx, dualad.Tensor) and isinstance(gy, dualad.Tensor)
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])
    # a Tensor in a non-differentiated argument, or a keyword argument, counts too
    g = func.grad(lambda x, y: (x * y).sum())(y, x)
    assert isinstance(g, dualad.Tensor)
    g = func.grad(lambda x, *, w: (x * w).sum())(y, w=x)
    assert isinstance(g, dualad.Tensor)
    # tangents and cotangents
    out, tangent = func.jvp(dualad.sin, (x,), (np.ones(2),))
    assert isinstance(tangent, dualad.Tensor)
    np.testing.assert_allclose(tangent.numpy(), np.cos([1.0, 2.0]))
    out, tangent = func.jvp(dualad.sin, (np.zeros(2),), (dualad.ones(2),))
    assert isinstance(out, dualad.Tensor) and isinstance(tangent, dualad.Tensor)
    out, vjp_fn = func.vjp(dualad.sin, np.zeros(2))
    assert isinstance(vjp_fn(dualad.ones(2))[0], dualad.Tensor)
    assert type(vjp_fn(np.ones(2))[0]) is np.ndarray
    out, vjp_fn = func.vjp(dualad.sin, x)
    assert isinstance(vjp_fn(np.ones(2))[0], dualad.Tensor)
    assert isinstance(dualad.vmap(lambda a, b: a * b)(y, x), dualad.Tensor)
    assert isinstance(dualad.vmap(lambda a, b: a * b, in_dims=(0, None))(y, x), dualad.Tensor)
    assert isinstance(func.jacrev(lambda a, b: a * b)(y, x), dualad.Tensor)


def test_non_batched_and_non_differentiated_arguments_pass_unchanged():
    seen = []

    def f(x, n, data):
        seen.append((type(n), type(data)))
        return (x * n).sum() + (x * dualad.tensor(data)).sum()

    g = func.grad(f)(np.array([1.0, 2.0]), 3, np.array([1.0, 1.0]))
    np.testing.assert_allclose(g, [4.0, 4.0])
    assert seen == [(int, np.ndarray)]
    out = dualad.vmap(lambda x, n: x * n, in_dims=(0, None))(np.array([1.0, 2.0]), 3)
    np.testing.assert_allclose(out, [3.0, 6.0])


def test_results_do_not_alias_the_inputs_nor_what_closures_read():
    x = np.array([0.5, 1.0])
    out, vjp_fn = func.vjp(lambda a: a, x)
    assert not np.shares_memory(out, x)
    (g,) = vjp_fn(x)
    assert not np.shares_memory(g, x)
    g[:] = 7.0
    assert vjp_fn(x)[0].tolist() == [0.5, 1.0] and x.tolist() == [0.5, 1.0]
    # the graph of exp keeps its result: writing into the returned value changes nothing
    out, vjp_fn = func.vjp(dualad.exp, x)
    out *= 100.0
    np.testing.assert_allclose(vjp_fn(np.ones(2))[0], np.exp(x))
    out, jvp_fn = func.linearize(dualad.exp, x)
    out *= 100.0
    first = jvp_fn(np.ones(2))
    first *= 100.0
    np.testing.assert_allclose(jvp_fn(np.ones(2)), np.exp(x))
    y = dualad.vmap(lambda a: a)(x)
    assert not np.shares_memory(y, x)
    _, aux = func.grad(lambda a: (a.sum(), a), has_aux=True)(x)
    assert not np.shares_memory(aux, x)


def test_broadcast_results_are_writable_arrays():
    c = dualad.tensor([1.0, 2.0])
    out = dualad.vmap(lambda a: (a, c))(np.zeros(3))
    assert out[1].shape == (3, 2) and out[1].flags.writeable
    out[1][0, 0] = 5.0
    g = func.grad(lambda a: a.sum())(np.zeros((2, 3)))
    assert g.flags.writeable
    g += 1.0
    np.testing.assert_array_equal(g, np.full((2, 3), 2.0))


def test_results_that_an_outer_level_tracks_stay_tensors():
    def outer(y):
        # the inner call has plain arguments but its result depends on y
        inner = func.grad(lambda x: (x * y).sum())(np.ones(2))
        assert isinstance(inner, dualad.Tensor)
        return (inner * inner).sum()

    np.testing.assert_allclose(func.grad(outer)(np.array([1.0, 3.0])), [2.0, 6.0])
    w = dualad.tensor([1.0, 2.0], requires_grad=True)
    g = func.grad(lambda x: (x * w).sum())(np.ones(2))
    assert isinstance(g, dualad.Tensor) and g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 1.0])  # (g is w)


def test_integer_inputs_raise_as_integer_tensors_do():
    for value in (np.array([1, 2]), 3, np.int64(3), [1, 2]):
        with pytest.raises(RuntimeError, match="only Tensors of floating point or complex dtype"):
            func.grad(lambda a: dualad.tensor(1.0))(value)
    with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
        func.jvp(lambda a: a, (np.array([1, 2]),), (np.array([1.0, 2.0]),))
    with pytest.raises(ValueError, match="Expected tangent to be floating point or complex"):
        func.jvp(lambda a: a, (np.array([1.0, 2.0]),), (np.array([1, 2]),))
    # vmap batches integers (no derivative is asked)
    np.testing.assert_array_equal(dualad.vmap(lambda a: a * 2)(np.array([1, 2])), [2, 4])


def test_arrays_without_a_numeric_dtype_raise_type_error():
    for transform in (
        lambda: func.grad(lambda a: a.sum())(np.array(["a", "b"])),
        lambda: func.jvp(lambda a: a, (np.array(["a"]),), (np.array(["a"]),)),
        lambda: dualad.vmap(lambda a: a)(np.array([object(), object()])),
    ):
        with pytest.raises(TypeError, match=r"an argument of dtype (<U1|object) has no derivative"):
            transform()


def test_empty_and_scalar_edge_cases():
    g = func.grad(lambda a: a.sum())(np.zeros((0, 2)))
    assert type(g) is np.ndarray and g.shape == (0, 2)
    jac = func.jacrev(lambda a: a * 2)(np.zeros(0))
    assert type(jac) is np.ndarray and jac.shape == (0, 0)
    value, product = func.hvp(lambda a: a**3, 2.0, 1.0)
    assert (value, product) == (8.0, 12.0) and type(product) is np.float64
