"""Forward mode's compiled per-op rules (``tracing.tangents``, ``fwd.compiled.process_alone``).

Each test runs a computation twice per call site (a signature is compiled the second time it
is seen) and compares it with the general path (no compiler installed): the values and
tangents must be equal to the last bit, and every case the compiled path must not take
(requires grad, nested levels, views whose base changed, ...) must still be right.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import fwd
from dualad.func import grad, jvp
from dualad.fwd import compiled
from dualad.tracing.tangents import compile_rule


@pytest.fixture
def general_path():
    """Run the body without the compiler (the general path), restoring it afterwards."""
    compiled.install_rule_compiler(None)
    try:
        yield
    finally:
        compiled.install_rule_compiler(compile_rule)


def _compiled_for(dtype) -> int:
    """How many compiled rules take arrays of ``dtype``."""
    dtype = np.dtype(dtype)
    return sum(
        1
        for k, v in compiled._RULES.items()
        if not isinstance(v, int) and any(type(p) is compiled.Piece and p.dtype == dtype for p in k)
    )


def _chain(x):
    h = x
    for _ in range(3):
        h = dualad.sin(h * x) + x
        h = dualad.exp(dualad.tanh(h)) / x
        h = h * 0.7 + -0.2
    return h.sum()


def _both(fn):
    """``fn()`` on the general path, then three times with the compiler (seen, compiled,
    replayed); all four results."""
    compiled.install_rule_compiler(None)
    try:
        reference = fn()
    finally:
        compiled.install_rule_compiler(compile_rule)
    return reference, [fn() for _ in range(3)]


def _assert_same(a, b):
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
        return
    a = np.asarray(a.detach().numpy() if isinstance(a, dualad.Tensor) else a)
    b = np.asarray(b.detach().numpy() if isinstance(b, dualad.Tensor) else b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_chain_is_bit_for_bit_the_general_path(dtype):
    rng = np.random.default_rng(0)
    x = dualad.tensor(rng.uniform(0.5, 1.5, 8).astype(dtype))
    v = dualad.tensor(rng.standard_normal(8).astype(dtype))
    reference, results = _both(lambda: jvp(_chain, (x,), (v,)))
    for r in results:
        _assert_same(reference, r)
    assert _compiled_for(dtype) >= 8  # the compiled path ran (mul, sin, add, tanh, exp, div...)


def test_broadcasting_and_scalars():
    x = dualad.tensor(np.linspace(0.5, 1.5, 6).reshape(2, 3))
    col = dualad.tensor([[2.0], [3.0]])

    def f(a, b):
        return (a * b + 1 - a / b) * 2 + 3.5 - (-0.0) * a

    reference, results = _both(
        lambda: jvp(f, (x, col), (dualad.ones_like(x), dualad.tensor([[1.0], [-1.0]])))
    )
    for r in results:
        _assert_same(reference, r)
    # one argument without a tangent: its partial is not taken
    reference, results = _both(lambda: jvp(lambda a: f(a, col), (x,), (dualad.ones_like(x),)))
    for r in results:
        _assert_same(reference, r)


def test_integer_and_float_scalars_are_told_apart():
    x = dualad.tensor([1.0, 2.0], dtype="float32")
    for _ in range(3):
        _, t_int = jvp(lambda a: a * 2, (x,), (dualad.ones_like(x),))
        _, t_float = jvp(lambda a: a * 2.0, (x,), (dualad.ones_like(x),))
        assert t_int.dtype == t_float.dtype == np.float32
        np.testing.assert_array_equal(t_int.numpy(), [2.0, 2.0])


def test_negative_zero_scalar_is_its_own_signature():
    x = dualad.tensor([1.0, 2.0])
    for _ in range(3):
        _, t_pos = jvp(lambda a: a * 0.0, (x,), (dualad.ones_like(x),))
        _, t_neg = jvp(lambda a: a * -0.0, (x,), (dualad.ones_like(x),))
        assert not np.signbit(t_pos.numpy()).any()
        assert np.signbit(t_neg.numpy()).all()


def test_output_tangent_never_aliases_an_input_tangent():
    x = dualad.tensor([1.0, 2.0])
    t = dualad.tensor([3.0, 4.0])
    with fwd.dual_level():
        dual = fwd.make_dual(x, t)
        for _ in range(3):
            y = dual + 2.0  # d(x + c) = dx: the rule returns the input's tangent
            ty = fwd.unpack_dual(y).tangent
            ty.mul_(10.0)
            np.testing.assert_array_equal(fwd.unpack_dual(dual).tangent.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(t.numpy(), [3.0, 4.0])


def test_reverse_over_forward_and_forward_over_reverse():
    x = dualad.tensor([0.3, 0.9, 1.4])
    v = dualad.tensor([1.0, -2.0, 0.5])

    def directional(a):
        return jvp(_chain, (a,), (v,))[1]

    reference, results = _both(lambda: grad(directional)(x))
    for r in results:
        _assert_same(reference, r)
    reference, results = _both(lambda: jvp(grad(_chain), (x,), (v,)))
    for r in results:
        _assert_same(reference, r)


def test_nested_levels_give_second_derivatives():
    x = dualad.tensor([0.7])

    def second(a):
        return jvp(lambda b: jvp(dualad.sin, (b,), (dualad.ones_like(b),))[1], (a,), (a * 0 + 1,))

    for _ in range(3):
        _, d2 = second(x)
        np.testing.assert_allclose(d2.numpy(), -np.sin(0.7), rtol=1e-15)


def test_dual_that_requires_grad_is_recorded():
    x = dualad.tensor([0.5, 1.5], requires_grad=True)
    for _ in range(3):
        with fwd.dual_level():
            dual = fwd.make_dual(x * 1.0, dualad.tensor([1.0, 1.0]))
            y = dualad.sin(dual) * dual
            tangent = fwd.unpack_dual(y).tangent
        (g,) = dualad.autograd.grad(tangent.sum(), x)
        xs = np.array([0.5, 1.5])
        # d/dx of (cos(x) x + sin(x))
        np.testing.assert_allclose(g.numpy(), 2 * np.cos(xs) - xs * np.sin(xs), rtol=1e-12)


def test_view_of_a_dual_modified_in_place():
    for _ in range(3):
        with fwd.dual_level():
            base = fwd.make_dual(dualad.tensor([1.0, 2.0, 3.0]), dualad.tensor([1.0, 1.0, 1.0]))
            view = base[1:]
            out = dualad.exp(view)
            base.mul_(2.0)  # the view's flags and tangent must be brought up to date
            out2 = dualad.exp(view)
            np.testing.assert_allclose(fwd.unpack_dual(out).tangent.numpy(), np.exp([2.0, 3.0]))
            np.testing.assert_allclose(
                fwd.unpack_dual(out2).tangent.numpy(), 2 * np.exp([4.0, 6.0])
            )


def test_forward_grad_switched_off_leaves_no_tangent():
    for _ in range(3):
        with fwd.dual_level():
            dual = fwd.make_dual(dualad.tensor([1.0]), dualad.tensor([1.0]))
            with fwd._set_fwd_grad_enabled(False):
                y = dualad.sin(dual)
            assert fwd.unpack_dual(y).tangent is None


def test_impl_errors_keep_the_general_paths_message():
    x = dualad.tensor([1000.0])
    for _ in range(3):
        with np.errstate(over="raise"), pytest.raises(FloatingPointError, match=r"dualad\.exp"):
            jvp(dualad.exp, (x,), (dualad.ones_like(x),))


def test_tangents_are_removed_on_exit():
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([1.0]), dualad.tensor([1.0]))
        ys = [dualad.sin(dual) for _ in range(3)]
        assert all(fwd.unpack_dual(y).tangent is not None for y in ys)
    assert all(y._fw is None for y in ys)


def test_general_path_fixture_runs_uncompiled(general_path):
    x = dualad.tensor([0.25])
    before = dict(compiled._RULES)
    for _ in range(3):
        jvp(dualad.cos, (x,), (dualad.ones_like(x),))
    assert before == compiled._RULES


def test_view_whose_base_now_requires_grad_is_recorded():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        with fwd.dual_level():
            base = fwd.make_dual(dualad.zeros(3), dualad.ones(3))
            view = base[1:]
            dualad.exp(view)
            dualad.exp(view)  # (the signature is compiled by now)
            base[1:].add_(x)  # the base (and so the view) now requires grad
            out = dualad.exp(view)
            assert out.requires_grad
            tangent = fwd.unpack_dual(out).tangent.detach()
            np.testing.assert_allclose(tangent.numpy(), np.exp([1.0, 2.0]))
        (g,) = dualad.autograd.grad(out.sum(), x)
        np.testing.assert_allclose(g.numpy(), np.exp([1.0, 2.0]))


def test_default_dtype_is_part_of_the_signature():
    x = dualad.tensor(np.array([0.5, 1.5]))  # float64
    v = dualad.tensor(np.array([1.0, -1.0]))

    def f(a):
        return dualad.exp(a) * 2 + dualad.sin(a)

    reference, results = _both(lambda: jvp(f, (x,), (v,)))
    previous = dualad.get_default_dtype()
    dualad.set_default_dtype(dualad.float32)
    try:
        reference32, results32 = _both(lambda: jvp(f, (x,), (v,)))
    finally:
        dualad.set_default_dtype(previous)
    for r in results:
        _assert_same(reference, r)
    for r in results32:
        _assert_same(reference32, r)


def test_one_tensor_in_both_slots():
    x = dualad.tensor([0.5, -1.5])
    v = dualad.tensor([1.0, 2.0])

    def f(a):
        return a * a + (a * 2.0) * (a * 2.0) - a / a

    reference, results = _both(lambda: jvp(f, (x,), (v,)))
    for r in results:
        _assert_same(reference, r)
