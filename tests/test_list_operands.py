"""A list or tuple operand holding tensors with derivatives is differentiated, not made a constant.

``x * [a, 2 * a]`` used to convert the list with its values only: zero gradients under
``func.grad``, no graph on the tape. Every level must see the tensors inside the list.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import func
from dualad.fwd import dual_level, make_dual, unpack_dual

T = dualad.tensor([1.0, 2.0])


def program(x):
    # the same tensor at the top level and inside the list, plus a number in the list
    return (x * [x, 2 * x] + dualad.sin((x, 1.5))).sum()


def expected_grad(x):
    return 6 * x + np.cos(x)


@pytest.mark.parametrize("x0", [0.3, -1.2])
def test_reverse_mode_tape(x0):
    x = dualad.tensor(x0, requires_grad=True)
    program(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected_grad(x0))


@pytest.mark.parametrize("x0", [0.3, -1.2])
def test_func_grad_and_jvp(x0):
    x = dualad.tensor(x0)
    np.testing.assert_allclose(func.grad(program)(x).numpy(), expected_grad(x0))
    _, tangent = func.jvp(program, (x,), (dualad.tensor(1.0),))
    np.testing.assert_allclose(tangent.numpy(), expected_grad(x0))


def test_dual_level():
    with dual_level():
        x = make_dual(dualad.tensor(0.7), dualad.tensor(1.0))
        _, tangent = unpack_dual(program(x))
    np.testing.assert_allclose(tangent.numpy(), expected_grad(0.7))


def test_vmap_and_vmap_of_grad():
    xs = dualad.tensor([0.3, -1.2, 2.0])
    np.testing.assert_allclose(
        dualad.vmap(program)(xs).numpy(),
        [program(dualad.tensor(v)).item() for v in [0.3, -1.2, 2.0]],
    )
    np.testing.assert_allclose(
        dualad.vmap(func.grad(program))(xs).numpy(), expected_grad(np.array([0.3, -1.2, 2.0]))
    )


def test_second_order():
    x = dualad.tensor(0.4)
    np.testing.assert_allclose(func.grad(func.grad(program))(x).numpy(), 6 - np.sin(0.4))


def test_tensor_on_the_list_side_only():
    # the list holds the only tensor carrying a derivative: T is a constant
    a = dualad.tensor(3.0, requires_grad=True)
    (T * [a, 2 * a]).sum().backward()
    assert a.grad.item() == 5.0


def test_plain_lists_stay_constants_with_their_dtype():
    out = dualad.add(dualad.tensor([1, 2], dtype=dualad.int64), [3, 4])
    assert out.dtype == np.int64 and not out.requires_grad
    assert (T * [3.0, 4.0]).tolist() == [3.0, 8.0]
