"""What the tables of ``test_np_functions.py`` and ``test_nondiff.py`` do not check for
``partition``, ``piecewise``, ``trim_zeros``, ``real_if_close`` and the index builders:
NumPy's own functions answering on tensors, the index builders' results used as indices (and
differentiated through), ``trim_zeros``'s derivatives (its shape depends on the values, so
finite differences do not apply) and its refusal under ``vmap``, and NumPy's exception classes.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad import func
from dualad._errors import TrackedConversionError

RNG = np.random.default_rng(2026)
M = RNG.normal(size=(4, 4))


def test_numpys_functions_answer_on_tensors():
    t = dualad.tensor(M, requires_grad=True)
    for got, ref in [
        (np.tril_indices_from(t, -1), np.tril_indices_from(M, -1)),
        (np.triu_indices_from(t), np.triu_indices_from(M)),
        (np.diag_indices_from(t), np.diag_indices_from(M)),
        (np.ix_(dualad.tensor([0, 2]), dualad.tensor([1, 3])), np.ix_([0, 2], [1, 3])),
    ]:
        for g, r in zip(got, ref):
            assert isinstance(g, dualad.Tensor) and not g.requires_grad
            assert g.dtype == r.dtype and g.shape == r.shape
            np.testing.assert_array_equal(g.numpy(), r)
    part = np.partition(t, 2, axis=0)
    assert isinstance(part, dualad.Tensor) and part.requires_grad
    np.testing.assert_array_equal(part.detach().numpy(), np.partition(M, 2, axis=0))
    assert np.einsum_path("ij,jk->ik", t, t) == np.einsum_path("ij,jk->ik", M, M)


def test_mask_indices_takes_dualads_mask_functions():
    for k in (-1, 0, 2):
        got = dnp.mask_indices(4, dnp.triu, k)
        ref = np.mask_indices(4, np.triu, k)
        for g, r in zip(got, ref):
            assert g.dtype == r.dtype
            np.testing.assert_array_equal(g.numpy(), r)


def test_index_builders_index_differentiably():
    x = dualad.tensor(M, requires_grad=True)
    rows, cols = dnp.tril_indices_from(x)
    (x[rows, cols] ** 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * np.tril(M))
    grad = func.grad(lambda t: t[dnp.ix_([0, 3], [1, 2])].sum())(dualad.tensor(M))
    expected = np.zeros((4, 4))
    expected[np.ix_([0, 3], [1, 2])] = 1.0
    np.testing.assert_array_equal(grad.numpy(), expected)
    # the *_from functions read per-example shapes under vmap
    batched = dualad.vmap(lambda t: t[dnp.diag_indices_from(t)].sum())(
        dualad.tensor(M[None] * [[[1.0]], [[2.0]]])
    )
    np.testing.assert_allclose(batched.numpy(), [np.trace(M), 2 * np.trace(M)])


def test_ix_refuses_tracked_indices():
    with pytest.raises(TypeError, match="plain values"):
        dnp.ix_(dualad.tensor([0.0, 1.0], requires_grad=True))


def test_trim_zeros_differentiates_in_the_kept_values():
    values = np.array([0.0, 0.0, 1.5, 0.0, -2.0, 3.0, 0.0])
    kept = np.array([0, 0, 1, 1, 1, 1, 0], dtype=float)
    weights = np.arange(1.0, 5.0)
    loss = lambda t: (dnp.trim_zeros(t) * dualad.tensor(weights)).sum()
    x = dualad.tensor(values, requires_grad=True)
    loss(x).backward()
    expected = np.zeros(7)
    expected[2:6] = weights
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    np.testing.assert_array_equal(func.grad(loss)(dualad.tensor(values)).numpy(), expected)
    out, tangent = func.jvp(dnp.trim_zeros, (dualad.tensor(values),), (dualad.tensor(kept * 7),))
    np.testing.assert_array_equal(out.numpy(), np.trim_zeros(values))
    np.testing.assert_array_equal(tangent.numpy(), [7.0, 7.0, 7.0, 7.0])
    # 2-D, front only along the last axis
    x2 = dualad.tensor(np.pad(M, 1)[1:], requires_grad=True)
    dnp.trim_zeros(x2, "f", axis=1).sum().backward()
    np.testing.assert_array_equal(x2.grad.numpy()[:, 1:], 1.0)
    np.testing.assert_array_equal(x2.grad.numpy()[:, 0], 0.0)


def test_trim_zeros_refuses_vmap():
    with pytest.raises(ValueError, match="vmap"):
        dualad.vmap(dnp.trim_zeros)(dualad.tensor([[0.0, 1.0], [1.0, 0.0]]))


def test_piecewise_with_a_guarded_branch_has_finite_derivatives():
    x = dualad.tensor([-1.0, 0.0, 4.0], requires_grad=True)
    # (sqrt's derivative is not finite at 0 and below, where its condition does not hold)
    y = dnp.piecewise(x, [x > 0], [lambda v: dnp.sqrt(dnp.where(v > 0, v, 1.0)), 0.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 0.25])
    assert dnp.allclose(
        y, np.piecewise(np.array([-1.0, 0.0, 4.0]), [[False, False, True]], [np.sqrt, 0.0])
    )


def test_piecewise_keeps_numpys_dtype_and_last_condition_rule():
    x = np.arange(-3, 4)
    conds = [x < 1, x > -2]
    funcs = [lambda v: v * 2.7, lambda v: v - 0.5]
    got = dnp.piecewise(dualad.tensor(x), [dualad.tensor(c) for c in conds], funcs)
    ref = np.piecewise(x, conds, funcs)
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got.numpy(), ref)
    assert dnp.piecewise(dualad.tensor(2.0), True, [lambda v: v + 1]).item() == 3.0


def test_real_if_close_under_vmap_is_a_clear_error():
    z = dualad.tensor(np.array([[1 + 1e-17j], [1 + 1j]]))
    with pytest.raises(TrackedConversionError, match="vmap"):
        dualad.vmap(dnp.real_if_close)(z)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m.diag_indices_from(m.zeros(3)), ValueError),
        (lambda m: m.diag_indices_from(m.zeros((2, 3))), ValueError),
        (lambda m: m.tril_indices_from(m.zeros((2, 2, 2))), ValueError),
        (lambda m: m.triu_indices_from(m.zeros(2)), ValueError),
        (lambda m: m.partition(m.arange(3.0), 5), ValueError),
        (lambda m: m.partition(m.arange(3.0), 1, kind="quick"), ValueError),
        (lambda m: m.partition(m.asarray(3.0), 0), np.exceptions.AxisError),
        (lambda m: m.partition(m.arange(3.0), 0, axis=2), np.exceptions.AxisError),
        (lambda m: m.trim_zeros(m.arange(3.0), trim="x"), ValueError),
        (lambda m: m.trim_zeros(m.arange(3.0), axis=1), np.exceptions.AxisError),
        (lambda m: m.piecewise(m.arange(3.0), [m.arange(3) > 0], [1, 2, 3]), ValueError),
        (lambda m: m.piecewise(m.zeros((2, 3)), [m.ones(3) > 0], [1.0]), IndexError),
        (lambda m: m.ix_(m.zeros((2, 2), dtype=int)), ValueError),
    ],
)
def test_bad_input_raises_numpys_exception_class(call, error):
    with pytest.raises(error):
        call(np)
    with pytest.raises(error):
        call(dnp)


def test_polydiv_trims_numpys_way_and_refuses_vmap():
    u, v = np.array([1.0, -3.0, 3.0, -1.0]), np.array([1.0, -1.0])  # (x - 1)^3 / (x - 1)
    for got, ref in zip(dnp.polydiv(dualad.tensor(u), dualad.tensor(v)), np.polydiv(u, v)):
        assert got.shape == ref.shape
        np.testing.assert_array_equal(got.numpy(), ref)
    with pytest.raises(TrackedConversionError, match="vmap"):
        dualad.vmap(lambda a: dnp.polydiv(a, dualad.tensor(v))[1])(dualad.tensor(np.stack([u, u])))


def test_piecewise_with_conditions_of_the_batched_input_under_vmap():
    funcs = [lambda v: -v, lambda v: v * v, 0.5]
    f = lambda t: dnp.piecewise(t, [t < 0, t > 1], funcs)
    x = np.array([[-1.0, 0.5, 2.0], [3.0, -2.0, 0.0]])
    ref = np.stack([np.piecewise(row, [row < 0, row > 1], funcs) for row in x])
    np.testing.assert_array_equal(dualad.vmap(f)(dualad.tensor(x)).numpy(), ref)
    jac = func.vmap(func.jacrev(f))(dualad.tensor(x))
    np.testing.assert_array_equal(jac.numpy()[1], np.diag([6.0, -1.0, 0.0]))


def test_asarray_casts_to_a_dtype_as_numpy():
    """``copy=None`` (the default) copies where the dtype asks for it; ``copy=False`` refuses
    that copy with NumPy's ValueError (asarray of a list with a dtype used to raise it)."""
    for data in ([1, 2, 3], np.array([1.0, 2.0]), dualad.tensor([1.0, 2.0])):
        ours = dnp.asarray(data, dtype=np.float32)
        theirs = np.asarray(np.asarray(data), dtype=np.float32)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours.numpy(), theirs)
    assert dnp.asanyarray([1, 2], dtype=np.float64).dtype == np.float64
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    assert dnp.asarray(x) is x and dnp.asarray(x, dtype=np.float64) is x
    (grad,) = dualad.autograd.grad(dnp.asarray(x, dtype=np.float32).sum(), x)
    np.testing.assert_array_equal(grad.numpy(), [1.0, 1.0])
    with pytest.raises(ValueError, match="avoid copy"):
        dnp.asarray(x, dtype=np.float32, copy=False)
    with pytest.raises(ValueError, match="avoid copy"):
        np.asarray(np.array([1.0, 2.0]), dtype=np.float32, copy=False)  # (NumPy's behaviour)
