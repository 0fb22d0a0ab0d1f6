"""dual_level / make_dual / unpack_dual: spec/forward.md §1.1-1.4, with nesting (dualad's
deliberate extension)."""

import gc
import weakref

import numpy as np
import pytest

import dualad
from dualad import fwd


@pytest.fixture(autouse=True)
def no_leaked_levels():
    yield
    while fwd._current_level >= 0:
        fwd.exit_dual_level()


def test_level_numbers_and_current_level():
    assert fwd._current_level == -1
    with fwd.dual_level() as outer:
        assert outer == 0 and fwd._current_level == 0
        with fwd.dual_level() as inner:
            assert inner == outer + 1 and fwd._current_level == 1
        assert fwd._current_level == 0
    assert fwd._current_level == -1
    assert dualad.autograd.forward_ad is fwd


def test_enter_exit_functions():
    level = fwd.enter_dual_level()
    assert level == 0
    fwd.exit_dual_level(level=0)
    assert fwd._current_level == -1


def test_exit_errors():
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwd.exit_dual_level()
    outer = fwd.enter_dual_level()
    fwd.enter_dual_level()
    with pytest.raises(RuntimeError, match="not the last one that was created"):
        fwd.exit_dual_level(level=outer)
    fwd.exit_dual_level()
    fwd.exit_dual_level()


def test_dual_level_as_decorator():
    @fwd.dual_level()
    def inside():
        return fwd._current_level

    assert inside() == 0
    assert fwd._current_level == -1


def test_make_dual_requires_a_level():
    with pytest.raises(RuntimeError, match="no level exists"):
        fwd.make_dual(dualad.ones(2), dualad.ones(2))


@pytest.mark.parametrize(
    "primal_dtype, tangent_dtype, error",
    [
        ("int64", "int64", "Expected primal to be floating point or complex"),
        ("int64", "float64", "Expected primal to be floating point or complex"),
        ("float64", "int64", "Expected tangent to be floating point or complex"),
    ],
)
def test_make_dual_forbids_integral_dtypes(primal_dtype, tangent_dtype, error):
    with fwd.dual_level(), pytest.raises(ValueError, match=error):
        fwd.make_dual(dualad.ones(2, dtype=primal_dtype), dualad.ones(2, dtype=tangent_dtype))


def test_make_dual_size_check():
    primal, tangent = dualad.rand(2), dualad.rand(3)
    with fwd.dual_level():
        with pytest.raises(
            RuntimeError, match="Trying to set a forward gradient that has a different size"
        ):
            fwd.make_dual(primal, tangent)
        dual = fwd.make_dual(primal, tangent[1:])
        np.testing.assert_array_equal(fwd.unpack_dual(dual).tangent.numpy(), tangent[1:].numpy())


def test_tangent_that_is_dual_at_same_level_is_rejected():
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.rand(2), dualad.rand(2))
        with pytest.raises(RuntimeError, match="has a forward gradient at the same level"):
            fwd.make_dual(dualad.rand(2), dual)
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level"):
            fwd.make_dual(dual, dualad.rand(2))


def test_packing_unpacking_identities():
    foo, bar = dualad.rand(2), dualad.rand(2)
    with fwd.dual_level():
        baz = fwd.make_dual(foo, bar)
        primal, tangent = fwd.unpack_dual(baz)
        assert tangent is bar
        np.testing.assert_array_equal(primal.numpy(), foo.numpy())
        again = fwd.unpack_dual(baz)
        assert again.primal is not primal and again.tangent is bar
        assert np.shares_memory(primal.numpy(), foo.numpy())
        assert baz._version == foo._version
        foo_primal, foo_tangent = fwd.unpack_dual(foo)
        assert foo_tangent is None and foo_primal is not foo
        assert fwd.unpack_dual(primal).tangent is None
        assert fwd.unpack_dual(tangent).tangent is None
    assert fwd.unpack_dual(foo).primal is foo
    assert isinstance(fwd.unpack_dual(foo), fwd.UnpackedDualTensor)


def test_exit_clears_tangents_and_new_level_starts_clean():
    foo, bar, baz = dualad.rand(2), dualad.rand(2), dualad.rand(2)
    with fwd.dual_level():
        dual = fwd.make_dual(foo, bar)
        assert fwd.unpack_dual(dual).tangent is bar
    assert fwd.unpack_dual(dual).tangent is None
    with fwd.dual_level():
        assert fwd.unpack_dual(dual).tangent is None
        new = fwd.make_dual(foo, baz)
        assert fwd.unpack_dual(new).tangent is baz


def test_level_does_not_keep_tangents_alive():
    with fwd.dual_level():
        foo, tangent = dualad.rand(3), dualad.rand(3)
        ref = weakref.ref(tangent)
        dual = fwd.make_dual(foo, tangent)
        del tangent
        gc.collect()
        assert ref() is not None
        del dual
        gc.collect()
        assert ref() is None


def test_repr_shows_tangent():
    a = dualad.rand(2)
    with fwd.dual_level():
        b = fwd.make_dual(a, dualad.rand(2))
        primal, tangent = fwd.unpack_dual(b)
        assert "tangent=" in str(b)
        assert "tangent=" not in str(a)
        assert "tangent=" not in str(primal)
        assert "tangent=" not in str(tangent)


def test_no_grad_does_not_stop_tangents():
    foo, bar = dualad.rand(3), dualad.rand(3)
    with fwd.dual_level():
        dual = fwd.make_dual(foo, bar)
        with dualad.no_grad():
            out = dual * 3
        primal, tangent = fwd.unpack_dual(out)
        np.testing.assert_allclose(primal.numpy(), foo.numpy() * 3)
        np.testing.assert_allclose(tangent.numpy(), bar.numpy() * 3)
        assert not primal.requires_grad and not tangent.requires_grad


def test_detach_drops_tangent():
    foo, bar = dualad.rand(3), dualad.rand(3)
    with fwd.dual_level():
        dual = fwd.make_dual(foo, bar)
        out = dual.detach() * 2
        assert fwd.unpack_dual(out).tangent is None
        np.testing.assert_allclose(fwd.unpack_dual(out).primal.numpy(), foo.numpy() * 2)


def test_non_differentiable_ops_carry_no_tangent():
    foo, bar = dualad.rand(3), dualad.rand(3)
    with fwd.dual_level():
        dual = fwd.make_dual(foo, bar)
        mask = dual > 0.5
        assert mask.dtype == np.bool_
        assert fwd.unpack_dual(mask).tangent is None


def test_long_lived_level_does_not_accumulate_dead_references():
    from dualad._state import GRAD

    with fwd.dual_level():
        x = fwd.make_dual(dualad.rand(4), dualad.rand(4))
        for _ in range(5000):
            x = x * 1.0  # each step leaves the previous dual unreferenced
        assert len(GRAD.duals[-1].holders) < 2100
        assert fwd.unpack_dual(x).tangent is not None


def test_fwd_grad_enabled_switch():
    assert fwd._is_fwd_grad_enabled()
    try:
        fwd._set_fwd_grad_enabled(False)
        assert not fwd._is_fwd_grad_enabled()
        with fwd._set_fwd_grad_enabled(True):
            assert fwd._is_fwd_grad_enabled()
        assert not fwd._is_fwd_grad_enabled()
    finally:
        fwd._set_fwd_grad_enabled(True)
    assert fwd._is_fwd_grad_enabled()


def test_disabled_forward_grad_propagates_no_tangent():
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 1.0]))
        with fwd._set_fwd_grad_enabled(False):
            out = dualad.sin(dual)
        assert fwd.unpack_dual(out).tangent is None
        np.testing.assert_allclose(out.detach().numpy(), np.sin([1.0, 2.0]))
        assert fwd.unpack_dual(dualad.sin(dual)).tangent is not None
