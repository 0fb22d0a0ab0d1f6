"""Nested dual levels give exact higher derivatives; no perturbation confusion."""

import numpy as np
import pytest

import dualad
from dualad import fwd


def nested_derivatives(f, x0, order):
    """d^k/dx^k f(x) along direction 1 for k = 1..order using ``order`` nested levels."""
    levels = [fwd.enter_dual_level() for _ in range(order)]
    try:
        x = dualad.tensor(x0)
        for level in levels:
            x = fwd.make_dual(x, dualad.ones_like(x), level=level)
        value = f(x)
        results = []
        # peel the innermost level first: each unpack gives the next derivative's carrier
        current = value
        for level in reversed(levels):
            current = fwd.unpack_dual(current, level=level).tangent
            rest = current
            for outer in levels[: levels.index(level)]:
                rest = fwd.unpack_dual(rest, level=outer).primal
            results.append(rest.detach().numpy().copy())
        return results
    finally:
        for _ in levels:
            fwd.exit_dual_level()


X = np.array([0.3, 0.9, 1.4])


@pytest.mark.parametrize(
    "f, derivatives",
    [
        (dualad.sin, [np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)]),
        (dualad.exp, [np.exp, np.exp, np.exp]),
        (
            dualad.tanh,
            [
                lambda x: 1 - np.tanh(x) ** 2,
                lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
                lambda x: (
                    -2 * (1 - np.tanh(x) ** 2) ** 2 + 4 * np.tanh(x) ** 2 * (1 - np.tanh(x) ** 2)
                ),
            ],
        ),
        (
            lambda x: x**3.5,
            [lambda x: 3.5 * x**2.5, lambda x: 8.75 * x**1.5, lambda x: 13.125 * x**0.5],
        ),
        (
            lambda x: dualad.sin(dualad.exp(x)),
            [
                lambda x: np.cos(np.exp(x)) * np.exp(x),
                lambda x: -np.sin(np.exp(x)) * np.exp(2 * x) + np.cos(np.exp(x)) * np.exp(x),
                lambda x: (
                    -np.cos(np.exp(x)) * np.exp(3 * x)
                    - 3 * np.sin(np.exp(x)) * np.exp(2 * x)
                    + np.cos(np.exp(x)) * np.exp(x)
                ),
            ],
        ),
    ],
    ids=["sin", "exp", "tanh", "pow", "sin_exp"],
)
def test_first_three_derivatives(f, derivatives):
    got = nested_derivatives(f, X, 3)
    for k, (value, expected) in enumerate(zip(got, derivatives), start=1):
        np.testing.assert_allclose(value, expected(X), rtol=1e-10, atol=1e-12, err_msg=f"order {k}")


def test_second_derivative_through_matmul():
    # f(x) = sum(tanh(A x)): directional second derivative v^T H v with H = A^T diag(f'') A
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 3))
    x0, v = rng.standard_normal(3), rng.standard_normal(3)
    with fwd.dual_level() as a, fwd.dual_level() as b:
        x = fwd.make_dual(
            fwd.make_dual(dualad.tensor(x0), dualad.tensor(v), level=a), dualad.tensor(v), level=b
        )
        y = dualad.tanh(dualad.tensor(A) @ x).sum()
        second = fwd.unpack_dual(fwd.unpack_dual(y, level=b).tangent, level=a).tangent.item()
    t = np.tanh(A @ x0)
    expected = v @ A.T @ np.diag(-2 * t * (1 - t**2)) @ A @ v
    np.testing.assert_allclose(second, expected, rtol=1e-10)


def test_perturbation_confusion():
    # d/dx [ x * (d/dy (x + y) at y=1) ] at x=1 is 1; confusing the levels gives 2
    with fwd.dual_level() as outer:
        x = fwd.make_dual(dualad.tensor(1.0), dualad.tensor(1.0), level=outer)
        with fwd.dual_level() as inner:
            y = fwd.make_dual(dualad.tensor(1.0), dualad.tensor(1.0), level=inner)
            inner_derivative = fwd.unpack_dual(x + y, level=inner).tangent
        result = fwd.unpack_dual(x * inner_derivative, level=outer).tangent
    assert result.item() == 1.0


def test_make_dual_at_inner_level_keeps_outer_tangent():
    with fwd.dual_level() as outer, fwd.dual_level() as inner:
        x = fwd.make_dual(dualad.tensor([2.0]), dualad.tensor([1.0]), level=outer)
        z = fwd.make_dual(x, dualad.tensor([5.0]), level=inner)
        y = z * z
        assert fwd.unpack_dual(y, level=outer).tangent.detach().item() == pytest.approx(4.0)
        # the inner tangent still carries an outer tangent (a mixed partial): its number is
        # read detached (.item() of a value with a live tangent raises)
        inner_tangent = fwd.unpack_dual(y, level=inner).tangent
        assert inner_tangent.detach().item() == pytest.approx(20.0)
