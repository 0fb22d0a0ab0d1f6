"""Nested dual levels unpacked in every order give the same (symmetric) derivatives.

Regression: with ``x1 = make_dual(x, 1, level=outer)`` and, inside ``inner``,
``y = sin(make_dual(x1, 1, level=inner))``, ``unpack_dual(unpack_dual(y, level=outer).tangent,
level=inner).tangent`` was None (the outer tangent is computed with the inner level suspended,
so the mixed term lived only in the inner tangent), and ``unpack_dual(y, level=outer).primal``
had lost its inner tangent.
"""

import itertools
import math

import numpy as np
import pytest

import dualad
from dualad import fwd

U = fwd.unpack_dual
X0 = 0.7


def enter(n):
    return [fwd.enter_dual_level() for _ in range(n)]


def leave(levels):
    for _ in levels:
        fwd.exit_dual_level()


def peel(y, levels, order, kinds):
    """Unpack ``y`` at ``levels[i]`` for i in ``order``, keeping the tangent ('t') or the primal
    ('p') each time; None as soon as a tangent is missing (a zero)."""
    current = y
    for i, kind in zip(order, kinds):
        primal, tangent = U(current, level=levels[i])
        current = tangent if kind == "t" else primal
        if current is None:
            return None
    return current


def check_every_order(y, levels, expected):
    """``expected(taken)`` (``taken``: the set of positions unpacked as tangents) is the value
    every unpacking order must give; after all levels are unpacked nothing is left."""
    n = len(levels)
    for order in itertools.permutations(range(n)):
        for kinds in itertools.product("tp", repeat=n):
            taken = frozenset(i for i, k in zip(order, kinds) if k == "t")
            got = peel(y, levels, order, kinds)
            want = np.asarray(expected(taken), dtype=float)
            where = f"order {order}, kinds {kinds}"
            if got is None:
                assert np.all(want == 0), f"{where}: missing tangent, expected {want}"
                continue
            np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)
            for level in levels:
                assert U(got, level=level).tangent is None, where


DERIVATIVES = {
    "sin": lambda x, k: [np.sin, np.cos, lambda v: -np.sin(v), lambda v: -np.cos(v)][k](x),
    "exp": lambda x, k: np.exp(x),
    "cube": lambda x, k: [x**3, 3 * x**2, 6 * x, 6.0 + 0 * x][k],
}
FUNCS = {"sin": dualad.sin, "exp": dualad.exp, "cube": lambda x: x * x * x}


def test_issue_reproducer():
    x = dualad.tensor(X0)
    with fwd.dual_level() as outer:
        x1 = fwd.make_dual(x, dualad.tensor(1.0), level=outer)
        with fwd.dual_level() as inner:
            y = dualad.sin(fwd.make_dual(x1, dualad.tensor(1.0), level=inner))
            a = U(U(y, level=outer).tangent, level=inner).tangent
            b = U(U(y, level=inner).tangent, level=outer).tangent
            assert a.item() == pytest.approx(-math.sin(X0), abs=1e-15)
            assert b.item() == pytest.approx(-math.sin(X0), abs=1e-15)
            # the outer primal keeps the inner perturbation (and only it)
            primal = U(y, level=outer).primal
            assert U(primal, level=inner).tangent.item() == pytest.approx(math.cos(X0))
            assert U(primal, level=outer).tangent is None
            assert U(U(primal, level=inner).tangent, level=outer).tangent is None
            assert U(U(primal, level=inner).primal, level=outer).tangent is None


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("n", [2, 3])
def test_every_make_order_and_unpack_order(name, n):
    """make_dual at the levels in every order (inner of outer, outer of inner: the primal of
    the outer make_dual then carries the inner tangent), unpacked in every order."""
    x = np.array([0.3, X0, -1.2])
    for make_order in itertools.permutations(range(n)):
        levels = enter(n)
        try:
            d = dualad.tensor(x)
            for i in make_order:
                d = fwd.make_dual(d, dualad.ones(3), level=levels[i])
            y = FUNCS[name](d)
            check_every_order(y, levels, lambda taken: DERIVATIVES[name](x, len(taken)))
        finally:
            leave(levels)


def test_product_of_independent_variables_two_levels():
    a0, b0 = 0.4, -1.3
    levels = enter(2)
    try:
        a = fwd.make_dual(dualad.tensor(a0), dualad.tensor(1.0), level=levels[0])
        b = fwd.make_dual(dualad.tensor(b0), dualad.tensor(1.0), level=levels[1])
        y = a * b * dualad.sin(a)
        table = {
            frozenset(): a0 * b0 * math.sin(a0),
            frozenset({0}): b0 * (math.sin(a0) + a0 * math.cos(a0)),
            frozenset({1}): a0 * math.sin(a0),
            frozenset({0, 1}): math.sin(a0) + a0 * math.cos(a0),
        }
        check_every_order(y, levels, table.__getitem__)
    finally:
        leave(levels)


def test_product_of_independent_variables_three_levels():
    a0, b0, c0 = 0.4, -1.3, 2.1
    e = math.exp(a0 * b0)
    table = {
        frozenset(): e * c0,
        frozenset({0}): b0 * e * c0,
        frozenset({1}): a0 * e * c0,
        frozenset({2}): e,
        frozenset({0, 1}): e * (1 + a0 * b0) * c0,
        frozenset({0, 2}): b0 * e,
        frozenset({1, 2}): a0 * e,
        frozenset({0, 1, 2}): e * (1 + a0 * b0),
    }
    # each variable made dual inside a different level; also the last one entered first
    for owners in [(0, 1, 2), (2, 0, 1), (1, 2, 0)]:
        levels = enter(3)
        try:
            a = fwd.make_dual(dualad.tensor(a0), dualad.tensor(1.0), level=levels[owners[0]])
            b = fwd.make_dual(dualad.tensor(b0), dualad.tensor(1.0), level=levels[owners[1]])
            c = fwd.make_dual(dualad.tensor(c0), dualad.tensor(1.0), level=levels[owners[2]])
            y = dualad.exp(a * b) * c
            relabel = {owners[k]: k for k in range(3)}
            check_every_order(y, levels, lambda t, r=relabel: table[frozenset(r[i] for i in t)])
        finally:
            leave(levels)


def h_derivatives(x, k):
    """d^k/dx^k of x * sin(x^2)."""
    s, c = np.sin(x**2), np.cos(x**2)
    return [
        x * s,
        s + 2 * x**2 * c,
        6 * x * c - 4 * x**3 * s,
        6 * c - 24 * x**2 * s - 8 * x**4 * c,
    ][k]


@pytest.mark.parametrize("n", [2, 3])
def test_views_and_inplace_ops_in_between(n):
    x = np.array([0.5, -0.8, 1.1, 0.2])
    levels = enter(n)
    try:
        d = dualad.tensor(x)
        for level in levels:
            d = fwd.make_dual(d, dualad.ones(4), level=level)
        y = d.clone()
        y.mul_(d)  # x^2
        tail = y[1:]  # a view, changed in place: its base changes too
        tail.sin_()
        z = (y.reshape(2, 2).t() * d.reshape(2, 2).t()).t().reshape(4)
        # z = [x^3, x sin(x^2), ...]
        expected = lambda t: np.concatenate(
            [[[x**3, 3 * x**2, 6 * x, 6.0 + 0 * x][len(t)][0]], h_derivatives(x, len(t))[1:]]
        )
        check_every_order(z, levels, expected)
        check_every_order(y, levels, lambda t: _y_derivatives(x, len(t)))
    finally:
        leave(levels)


def _y_derivatives(x, k):
    """d^k of [x0^2, sin(x1^2), ...]."""
    s, c = np.sin(x**2), np.cos(x**2)
    sin_sq = [s, 2 * x * c, 2 * c - 4 * x**2 * s, -12 * x * s - 8 * x**3 * c][k]
    return np.concatenate([[[x**2, 2 * x, 2.0 + 0 * x, 0 * x][k][0]], sin_sq[1:]])


def test_inplace_gives_an_outer_only_tensor_an_inner_tangent():
    a0, b0 = 0.9, -0.6
    with fwd.dual_level() as outer:
        a = fwd.make_dual(dualad.tensor(a0), dualad.tensor(1.0), level=outer)
        with fwd.dual_level() as inner:
            b = fwd.make_dual(dualad.tensor(b0), dualad.tensor(1.0), level=inner)
            y = a.clone()
            y.mul_(b)
            y.sin_()
            ab = a0 * b0
            table = {
                frozenset(): math.sin(ab),
                frozenset({0}): b0 * math.cos(ab),
                frozenset({1}): a0 * math.cos(ab),
                frozenset({0, 1}): math.cos(ab) - ab * math.sin(ab),
            }
            check_every_order(y, [outer, inner], table.__getitem__)


def test_view_made_before_its_base_got_an_inner_tangent():
    # v's inner tangent is derived from its base's when read (the base got it in place)
    a0, b0 = np.array([0.9, 0.3, -0.4]), -0.6
    with fwd.dual_level() as outer:
        a = fwd.make_dual(dualad.tensor(a0), dualad.ones(3), level=outer)
        with fwd.dual_level() as inner:
            b = fwd.make_dual(dualad.tensor(b0), dualad.tensor(1.0), level=inner)
            y = a.clone()
            v = y[0:2]
            y.mul_(b)
            v.exp_()
            ab = a0 * b0
            e = np.exp(ab)
            # y = [exp(a0 b), exp(a1 b), a2 b]
            table = {
                frozenset(): np.where([1, 1, 0], e, ab),
                frozenset({0}): np.where([1, 1, 0], b0 * e, b0),
                frozenset({1}): np.where([1, 1, 0], a0 * e, a0),
                frozenset({0, 1}): np.where([1, 1, 0], e * (1 + ab), 1.0),
            }
            check_every_order(y, [outer, inner], table.__getitem__)
            check_every_order(v, [outer, inner], lambda t: table[t][:2])


def test_outer_unpacked_inside_the_inner_level_and_after_it():
    x = dualad.tensor(X0)
    with fwd.dual_level() as outer:
        x1 = fwd.make_dual(x, dualad.tensor(2.0), level=outer)
        with fwd.dual_level() as inner:
            y = dualad.exp(fwd.make_dual(x1, dualad.tensor(3.0), level=inner))
            held = U(y, level=outer).tangent
            assert held.detach().item() == pytest.approx(2 * math.exp(X0))
            assert U(held, level=inner).tangent.detach().item() == pytest.approx(6 * math.exp(X0))
        # after the inner level exited: its tangents are gone, the outer one is unchanged
        assert U(held, level=outer).tangent is None
        assert held.item() == pytest.approx(2 * math.exp(X0))
        after = U(y, level=outer)
        assert after.tangent.item() == pytest.approx(2 * math.exp(X0))
        assert after.tangent._fw is None
        # (a level entered later is another level: it sees nothing of the old inner one)
        with fwd.dual_level() as again:
            assert U(after.tangent, level=again).tangent is None
            assert U(y, level=again).tangent is None


def test_nested_func_jvp_reading_the_outer_tangent():
    # d/dx of [d/dx sin(x)] read inside an inner func.jvp: -sin(x)
    x = dualad.tensor(X0)
    with fwd.dual_level() as outer:
        x1 = fwd.make_dual(x, dualad.tensor(1.0), level=outer)

        def first_derivative(z):
            return U(dualad.sin(z), level=outer).tangent

        value, tangent = dualad.func.jvp(first_derivative, (x1,), (dualad.tensor(1.0),))
        assert U(value, level=outer).primal.item() == pytest.approx(math.cos(X0))
        assert U(tangent, level=outer).primal.item() == pytest.approx(-math.sin(X0))


@pytest.mark.parametrize("outer_first", [True, False])
def test_reverse_over_nested_forward(outer_first):
    x = dualad.tensor([0.3, X0], requires_grad=True)
    with fwd.dual_level() as outer:
        x1 = fwd.make_dual(x, dualad.ones(2), level=outer)
        with fwd.dual_level() as inner:
            y = dualad.sin(fwd.make_dual(x1, dualad.ones(2), level=inner))
            first, second = (outer, inner) if outer_first else (inner, outer)
            mixed = U(U(y, level=first).tangent, level=second).tangent
            (g,) = dualad.autograd.grad(mixed.sum(), x)
    np.testing.assert_allclose(g.numpy(), -np.cos([0.3, X0]), rtol=1e-12)


def test_three_levels_reverse_over_forward():
    x = dualad.tensor(X0, requires_grad=True)
    levels = enter(3)
    try:
        d = x
        for level in levels:
            d = fwd.make_dual(d, dualad.tensor(1.0), level=level)
        y = dualad.sin(d)
        for order in itertools.permutations(range(3)):
            third = peel(y, levels, order, "ttt")
            assert third.item() == pytest.approx(-math.cos(X0))
            (g,) = dualad.autograd.grad(third, x, retain_graph=True)
            assert g.detach().item() == pytest.approx(math.sin(X0))
    finally:
        leave(levels)


def test_make_dual_refuses_a_tangent_with_an_inner_tangent():
    x = dualad.tensor(1.5)
    with fwd.dual_level() as outer:
        with fwd.dual_level() as inner:
            t = fwd.make_dual(dualad.tensor(2.0), dualad.tensor(3.0), level=inner)
            with pytest.raises(RuntimeError, match="has itself a tangent at dual level"):
                fwd.make_dual(x, t, level=outer)
            # the form the message suggests: the mixed term in the inner level's tangent
            s = fwd.make_dual(dualad.zeros_like(x), dualad.tensor(3.0), level=outer)
            d = fwd.make_dual(fwd.make_dual(x, dualad.tensor(2.0), level=outer), s, level=inner)
            y = d * d  # (x + e0 2 + e0 e1 3)^2: mixed term 2 x 3
            for first, second in [(outer, inner), (inner, outer)]:
                mixed = U(U(y, level=first).tangent, level=second).tangent
                assert mixed.item() == pytest.approx(9.0)
        # a tangent dual at an OUTER level is fine (the usual nesting)
        with fwd.dual_level() as inner:
            t = fwd.make_dual(dualad.tensor(2.0), dualad.tensor(3.0), level=outer)
            d = fwd.make_dual(x, t, level=inner)
            assert U(U(d, level=inner).tangent, level=outer).tangent.item() == 3.0
            assert U(U(d, level=outer).tangent, level=inner).tangent.item() == 3.0
