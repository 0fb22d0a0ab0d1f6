"""``dualad.tracing.algebra``: products with identity/diagonal matrices and ones are rewritten
(row/column scalings, diagonal adds, aliases) and the replay stays equal to eager, to the bit
for finite values and NaN for NaN when an inf or NaN comes in (the unsimplified program runs)."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import func
from dualad.ops.trigonometric import tanh_backward


def f3(A, x):
    return dualad.tanh(A @ x) + x**2


def g(A, x):
    return dualad.softplus(A @ x).sum() + 0.5 * (x * x).sum()


def sig(A, x):
    return dualad.sigmoid(A @ x) * x


TRANSFORMS = {
    "jacrev": lambda: func.jacrev(f3, argnums=1),
    "jacfwd": lambda: func.jacfwd(f3, argnums=1),
    "jacrev-sigmoid": lambda: func.jacrev(sig, argnums=1),
    "hessian": lambda: func.hessian(g, argnums=1),
    "jacrev-both": lambda: func.jacrev(f3, argnums=(0, 1)),
}


def _problem(seed, n=7):
    r = np.random.default_rng(seed)
    return r.standard_normal((n, n)) / np.sqrt(n), r.standard_normal(n)


def _leaves(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree.numpy() if isinstance(tree, dualad.Tensor) else tree]


def _equal(got, expected) -> None:
    got, expected = _leaves(got), _leaves(expected)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


@pytest.fixture(autouse=True)
def _quiet():
    with np.errstate(all="ignore"):
        yield


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_jacobians_equal_eager_to_the_bit(name):
    fn = TRANSFORMS[name]()
    jitted = dualad.jit(fn)
    for seed in range(3):  # the trace, then replays
        A, x = _problem(seed)
        args = dualad.tensor(A), dualad.tensor(x)
        _equal(jitted(*args), fn(*args))
    assert jitted.cache_info().hits == 2


@pytest.mark.parametrize("name", ["jacrev", "jacfwd", "hessian"])
def test_the_identity_products_are_gone(name):
    A, x = _problem(0)
    source = dualad.jit(TRANSFORMS[name]()).source(dualad.tensor(A), dualad.tensor(x))
    assert "# scale" in source or "# add_diagonal" in source
    # jacrev: A @ x only; jacfwd: A @ x only; hessian: A @ x and the one product it needs
    assert source.count("# matmul") == (2 if name == "hessian" else 1)


@pytest.mark.parametrize("name", list(TRANSFORMS))
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan, 1e300])
@pytest.mark.parametrize("where", ["A", "x"])
def test_non_finite_values_spread_as_eagerly(name, bad, where):
    fn = TRANSFORMS[name]()
    jitted = dualad.jit(fn)
    A, x = _problem(1)
    jitted(dualad.tensor(A), dualad.tensor(x))  # traced on finite values
    if where == "A":
        A[2, 3] = bad
    else:
        x[4] = bad
    args = dualad.tensor(A), dualad.tensor(x)
    _equal(jitted(*args), fn(*args))
    assert jitted.cache_info().misses == 1  # a replay (of the unsimplified program)


@pytest.mark.parametrize("shape", [(5,), (1, 5), (5, 1), ()])
@pytest.mark.parametrize("side", ["left", "right"])
def test_diagonal_products_with_vectors_of_every_orientation(shape, side):
    eye = dualad.eye(5)
    r = np.random.default_rng(2)

    def fn(v, M, y):
        D = eye * v if side == "left" else v * eye
        D = tanh_backward(D, y).permute(1, 0)
        return D @ M, M @ D, D @ y.reshape(-1), D + M, M + D * 3.0

    jitted = dualad.jit(fn)
    for _ in range(3):
        args = [dualad.tensor(r.standard_normal(s)) for s in (shape, (5, 5), (5,))]
        _equal(jitted(*args), fn(*args))
    assert "# scale" in jitted.source(*args)


def test_a_returned_matrix_is_not_written_by_a_diagonal_add():
    eye = dualad.eye(4)

    def fn(A, v):
        B = A * 2.0
        return B, B + eye * v, A @ (eye * v)

    jitted = dualad.jit(fn)
    r = np.random.default_rng(3)
    for _ in range(3):
        A, v = dualad.tensor(r.standard_normal((4, 4))), dualad.tensor(r.standard_normal(4))
        before = A.numpy().copy()
        _equal(jitted(A, v), fn(A, v))
        assert np.array_equal(A.numpy(), before)
    source = jitted.source(A, v)
    assert "# add_diagonal\n" in source and "add_diagonal_inplace" not in source


def test_products_with_ones_are_dropped_but_outputs_stay_distinct():
    ones = dualad.ones(3)

    def fn(x):
        y = dualad.sin(x) * ones
        return y * 1, dualad.exp(y) * 1.0

    jitted = dualad.jit(fn)
    x = dualad.tensor([0.5, -1.0, 2.0])
    _equal(jitted(x), fn(x))
    a, b = jitted(dualad.tensor([1.0, 2.0, 3.0]))
    assert not np.shares_memory(a.numpy(), b.numpy())
    source = jitted.source(x)
    assert source.count("# mul") == 2  # the returned products stay, ``sin(x) * ones`` goes


def test_a_product_with_ones_seen_through_a_view_is_kept():
    ones = dualad.ones(2, 3)
    jitted = dualad.jit(lambda x: ((x * ones).T, (x * ones) @ ones.T))
    x = dualad.tensor(np.arange(6.0).reshape(2, 3))
    for _ in range(2):
        view, product = jitted(x)
        assert not np.shares_memory(view.numpy(), x.numpy())
        view.numpy()[...] = -1.0
        assert np.array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))
        _equal(product, (x * ones) @ ones.T)


def test_programs_that_write_in_place_are_left_alone():
    eye = dualad.eye(3)

    def fn(A, v):
        D = eye * v
        out = D @ A
        out.add_(1.0)
        return out

    jitted = dualad.jit(fn)
    r = np.random.default_rng(4)
    A, v = dualad.tensor(r.standard_normal((3, 3))), dualad.tensor(r.standard_normal(3))
    _equal(jitted(A, v), fn(A, v))
    assert "# scale" not in jitted.source(A, v)


def test_identity_products_read_as_laid_out_never_alias_what_is_returned():
    eye = dualad.eye(4)

    def fn(A, x):
        P = eye @ A.T  # (a transposed view: read as it is where only arithmetic follows)
        return P.T, tanh_backward(P, x) + eye * x, (eye @ A) * 2.0

    jitted = dualad.jit(fn)
    r = np.random.default_rng(5)
    for _ in range(3):
        A, x = dualad.tensor(r.standard_normal((4, 4))), dualad.tensor(r.standard_normal(4))
        before = A.numpy().copy()
        got = jitted(A, x)
        _equal(got, fn(A, x))
        for out in got:
            assert not np.shares_memory(out.numpy(), A.numpy())
            out.numpy()[...] = 0.0
        assert np.array_equal(A.numpy(), before)
    assert "# matmul" not in jitted.source(A, x)
