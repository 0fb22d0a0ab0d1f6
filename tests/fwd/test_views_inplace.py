"""Tangents through views and in-place ops (spec/forward.md §1.6, V1-V7)."""

import numpy as np
import pytest

import dualad
from dualad import fwd


@pytest.fixture(autouse=True)
def no_leaked_levels():
    yield
    while fwd._current_level >= 0:
        fwd.exit_dual_level()


def values(t):
    return np.asarray(t.detach().numpy())


def test_inplace_on_unpacked_primal_and_tangent_changes_only_that_part():
    of, ob = np.array([1.0, 2.0]), np.ones(2)
    foo, bar = dualad.tensor(of), dualad.tensor(ob)
    with fwd.dual_level():
        dual = fwd.make_dual(foo, bar)
        dual *= 2
        primal, tangent = fwd.unpack_dual(dual)
        primal *= 2  # V2: the dual's primal only
        np.testing.assert_array_equal(values(fwd.unpack_dual(dual).primal), of * 4)
        np.testing.assert_array_equal(values(fwd.unpack_dual(dual).tangent), ob * 2)
        tangent *= 2  # the dual's tangent only
        np.testing.assert_array_equal(values(fwd.unpack_dual(dual).primal), of * 4)
        np.testing.assert_array_equal(values(fwd.unpack_dual(dual).tangent), ob * 4)
        assert fwd.unpack_dual(primal).tangent is None


def test_setitem_with_dual_value_gives_zero_tangent_elsewhere():
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([5.0, 6.0]), dualad.tensor([3.0, 4.0]))
        baz = dualad.rand(2)
        baz[0] = dual[0]  # V5
        tangent = values(fwd.unpack_dual(baz).tangent)
        np.testing.assert_array_equal(tangent, [3.0, 0.0])
        np.testing.assert_array_equal(values(fwd.unpack_dual(baz).primal)[0], 5.0)


def test_view_of_dual_tangent_is_view_of_base_tangent():
    with fwd.dual_level():
        base_tangent = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
        dual = fwd.make_dual(dualad.zeros(2, 2), base_tangent)
        row = dual[1]
        np.testing.assert_array_equal(values(fwd.unpack_dual(row).tangent), [3.0, 4.0])
        row.add_(dualad.ones(2))  # adding a constant leaves the tangent unchanged
        np.testing.assert_array_equal(values(base_tangent), [[1.0, 2.0], [3.0, 4.0]])
        row.mul_(3)
        np.testing.assert_array_equal(
            values(fwd.unpack_dual(dual).tangent), [[1.0, 2.0], [9.0, 12.0]]
        )


def test_out_of_place_results_do_not_alias_input_tangents():
    with fwd.dual_level():
        x = fwd.make_dual(dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 1.0]))
        y = x + 1.0
        y.mul_(2.0)
        np.testing.assert_array_equal(values(fwd.unpack_dual(x).tangent), [1.0, 1.0])
        z = x + dualad.zeros((2, 2))
        z.mul_(2.0)
        np.testing.assert_array_equal(values(fwd.unpack_dual(z).tangent), np.full((2, 2), 2.0))


def test_views_made_before_their_base_gets_a_tangent_see_it():
    # the base acquires a tangent through an in-place op after the views were made: reading a
    # view's tangent gives that view of the base's tangent (PyTorch derives it on read), for
    # plain, reshaped and multi-output (unbind) views
    with fwd.dual_level():
        base = dualad.zeros(4)
        tail = base[1:]
        square = base.reshape(2, 2)
        first_row, second_row = base.reshape(2, 2).unbind(0)
        base.copy_(fwd.make_dual(dualad.ones(4), dualad.arange(4.0)))
        np.testing.assert_array_equal(values(fwd.unpack_dual(tail).tangent), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(values(fwd.unpack_dual(square).tangent), [[0, 1], [2, 3]])
        np.testing.assert_array_equal(values(fwd.unpack_dual(second_row).tangent), [2.0, 3.0])
        # ops on such a view carry the tangent
        np.testing.assert_array_equal(values(fwd.unpack_dual(tail * 2).tangent), [2.0, 4.0, 6.0])
        np.testing.assert_allclose(values(fwd.unpack_dual(first_row.exp()).tangent), [0, np.e])
        # and the derived tangent is a view of the base's: in-place on the view reaches the base
        second_row.mul_(3.0)
        np.testing.assert_array_equal(values(fwd.unpack_dual(base).tangent), [0, 1, 6, 9])
        np.testing.assert_array_equal(values(fwd.unpack_dual(tail).tangent), [1, 6, 9])
    assert fwd.unpack_dual(tail).tangent is None  # cleared with the level


def test_in_place_on_a_viewed_base_gives_exact_second_derivatives_at_nested_levels():
    # f(x) = sum(exp(x / 2) ** 2) = sum(exp(x)), computed through a view made before the base
    # is changed in place: the outer level's tangent of the view comes from the base's
    def f(x):
        r1 = x * 1
        r2 = r1.reshape(4)
        r1.mul_(0.5).exp_()
        return (r2 * r2).sum()

    x0 = np.array([0.1, 0.2, 0.3, 0.4])
    expected = np.exp(x0)
    with fwd.dual_level() as outer, fwd.dual_level() as inner:
        xa = fwd.make_dual(dualad.tensor(x0), dualad.ones(4), level=outer)
        xb = fwd.make_dual(xa, dualad.ones(4), level=inner)
        first = fwd.unpack_dual(f(xb), level=inner).tangent
        second = fwd.unpack_dual(first, level=outer).tangent
        np.testing.assert_allclose(values(first), expected.sum())
        np.testing.assert_allclose(values(second), expected.sum())
    hessian = dualad.func.jacfwd(dualad.func.jacfwd(f))(dualad.tensor(x0))
    np.testing.assert_allclose(values(hessian), np.diag(expected))


def test_unpacked_primal_and_its_views_never_take_the_duals_tangent():
    x = dualad.tensor([1.0, 2.0, 3.0])
    with fwd.dual_level():
        dual = fwd.make_dual(x, dualad.tensor([1.0, 1.0, 1.0]))
        primal = fwd.unpack_dual(dual).primal
        assert fwd.unpack_dual(primal).tangent is None
        assert fwd.unpack_dual(primal[1:]).tangent is None
        again = fwd.make_dual(primal, dualad.tensor([2.0, 2.0, 2.0]))  # allowed: no tangent
        np.testing.assert_array_equal(values(fwd.unpack_dual(again * 1).tangent), [2, 2, 2])
