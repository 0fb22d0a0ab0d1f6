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
