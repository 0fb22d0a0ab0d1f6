"""The signature parts that forward mode's hot path caches on tensors (``fwd.compiled``).

A tensor's part of a call's signature (its shape and dtype, its tangent's) is cached in its
``_fwsig`` slot and trusted only while identities and flags vouch for it: its array, its
tangent at the level, the tangent's array, no grad required, a view's base unmodified. Each
test changes one of them after the part was cached (three calls: seen, compiled, replayed) and
checks the next op against the general path (no compiler installed), to the last bit.
"""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import dualad
from dualad import fwd
from dualad._tensor import Tensor, _new
from dualad.fwd import compiled
from dualad.tracing.tangents import compile_rule


def _run(fn, uncompiled: bool = False):
    """``fn()``, without the compiler when ``uncompiled`` (the general path)."""
    if not uncompiled:
        return fn()
    compiled.install_rule_compiler(None)
    try:
        return fn()
    finally:
        compiled.install_rule_compiler(compile_rule)


def _same(a, b):
    a, b = np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy())
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _check(body):
    """``body(warm)`` returns (primal, tangent) pairs; ``warm`` runs ops enough times for
    their signatures to be compiled and the parts cached. Compiled and general paths agree."""
    reference = _run(lambda: body(_warm), uncompiled=True)
    for _ in range(2):
        for r, c in zip(reference, body(_warm), strict=True):
            _same(r, c)


def _warm(fn, *args):
    for _ in range(3):
        out = fn(*args)
    return out


def _pair(y):
    return y, fwd.unpack_dual(y).tangent


def _cached(warm, then):
    """A dual and ``y = exp(dual)``, the part of y cached by ``then(y)`` (at the innermost
    level)."""
    dual = fwd.make_dual(dualad.tensor([0.5, 1.5]), dualad.tensor([1.0, 2.0]))
    y = warm(dualad.exp, dual)
    warm(then, y)
    return dual, y


def test_outputs_carry_their_signature_part():
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([0.5, 1.5]), dualad.tensor([1.0, 2.0]))
        y = _warm(dualad.sin, dual)
        tangent = fwd.unpack_dual(y).tangent
        sig = y._fwsig
        assert sig is not None and sig[0] is y._data and sig[1] is tangent
        assert sig[2] is tangent._data and sig[3].shape == (2,)
        assert sig[3] is compiled.piece(((2,), y.dtype, (2,), y.dtype))  # (interned)


def test_data_assignment_invalidates_the_part():
    def body(warm):
        with fwd.dual_level():
            _, y = _cached(warm, dualad.sin)
            y.data = dualad.tensor([3.0, 4.0], dtype="float32")  # another array and dtype
            return _pair(dualad.sin(y) * 2.0)

    _check(body)


def test_in_place_ops_on_the_primal_and_the_tangent():
    def body(warm):
        with fwd.dual_level():
            dual, y = _cached(warm, dualad.tanh)
            y.mul_(dual)  # the primal and its tangent change in place
            first = dualad.tanh(y)
            fwd.unpack_dual(y).tangent.mul_(3.0)  # the tangent alone
            second = dualad.tanh(y)
            return [*_pair(first), *_pair(second)]

    _check(body)


def test_primal_that_now_requires_grad_is_recorded():
    for _ in range(2):
        x = dualad.tensor([0.5, 1.5])
        with fwd.dual_level():
            y = _warm(dualad.exp, fwd.make_dual(x, dualad.tensor([1.0, 1.0])))
            _warm(dualad.sin, y)
            y.requires_grad_()
            z = dualad.sin(y)
            assert z.requires_grad
            tangent = fwd.unpack_dual(z).tangent
        (g,) = dualad.autograd.grad(tangent.sum(), y)
        e = np.exp([0.5, 1.5])
        np.testing.assert_allclose(g.numpy(), -np.sin(e) * e, rtol=1e-13)


def test_tangent_that_now_requires_grad_is_recorded():
    for _ in range(2):
        with fwd.dual_level():
            dual = fwd.make_dual(dualad.tensor([0.5, 1.5]), dualad.tensor([1.0, 1.0]))
            y = _warm(dualad.exp, dual)
            _warm(dualad.sin, y)
            t = fwd.unpack_dual(y).tangent
            t.requires_grad_()
            tangent = fwd.unpack_dual(dualad.sin(y)).tangent
            assert tangent.requires_grad
        (g,) = dualad.autograd.grad(tangent.sum(), t)
        np.testing.assert_allclose(g.numpy(), np.cos(np.exp([0.5, 1.5])), rtol=1e-13)


def test_view_whose_base_changed_takes_the_general_path():
    def body(warm):
        with fwd.dual_level():
            base = fwd.make_dual(dualad.tensor([1.0, 2.0, 3.0]), dualad.tensor([1.0, 1.0, 1.0]))
            view = base[1:]
            before = warm(dualad.exp, view)
            base.mul_(base)  # the view's values and tangent change through its base
            return [*_pair(before), *_pair(dualad.exp(view)), *_pair(view * 2.0)]

    _check(body)


def test_tangent_that_is_a_view_of_a_changed_base():
    def body(warm):
        with fwd.dual_level():
            directions = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
            dual = fwd.make_dual(dualad.tensor([0.5, 1.5]), directions[0])
            before = warm(dualad.sin, dual)
            directions.mul_(-1.0)  # the tangent is a view of it
            return [*_pair(before), *_pair(dualad.sin(dual))]

    _check(body)


def test_a_part_cached_at_one_level_is_no_tangent_at_the_next():
    def body(warm):
        x = dualad.tensor([0.5, 1.5])
        with fwd.dual_level():
            y = warm(dualad.exp, fwd.make_dual(x, dualad.tensor([1.0, 1.0])))
            warm(dualad.sin, y)
        assert y._fwsig is None  # (the exit cleared it with the tangent)
        with fwd.dual_level():
            dual = fwd.make_dual(x, dualad.tensor([2.0, -1.0]))
            return _pair(warm(dualad.mul, y, dual))

    _check(body)


def test_exit_keeps_no_tangent_alive():
    with fwd.dual_level():
        y = _warm(dualad.sin, fwd.make_dual(dualad.tensor([0.5]), dualad.tensor([1.0])))
        tangent = weakref.ref(fwd.unpack_dual(y).tangent)
    gc.collect()
    assert tangent() is None and y._fw is None and y._fwsig is None


def test_constant_tensor_keeps_no_other_tensor():
    w = dualad.tensor([2.0, 3.0])
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([0.5, 1.5]), dualad.tensor([1.0, 1.0]))
        _warm(dualad.mul, w, dual)
    assert w._fwsig is not None and w._fwsig[1] is None and w._fwsig[0] is w._data


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -0.0, 0, 3])
def test_scalars_of_every_kind(value):
    def body(warm):
        with fwd.dual_level():
            dual = fwd.make_dual(dualad.tensor([0.5, -1.5]), dualad.tensor([1.0, 2.0]))
            return [*_pair(warm(dualad.mul, dual, value)), *_pair(warm(dualad.add, value, dual))]

    with np.errstate(invalid="ignore"):
        _check(body)
    before = len(compiled._RULES)
    with np.errstate(invalid="ignore"):
        body(_warm)
    assert len(compiled._RULES) == before  # (a NaN is one signature, not one per call)


def test_one_tensor_shared_by_two_threads_levels():
    w = dualad.tensor(np.linspace(0.5, 1.5, 4))
    errors = []

    def worker(scale: float):
        try:
            for _ in range(50):
                with fwd.dual_level():
                    dual = fwd.make_dual(w, dualad.full((4,), scale))
                    tangent = fwd.unpack_dual(dualad.sin(dual) * w).tangent
                    expected = scale * (np.cos(w.numpy()) * w.numpy())
                    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-14)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in (1.0, -2.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_constant_that_gets_a_tangent_in_place():
    def body(warm):
        with fwd.dual_level():
            w = dualad.tensor([2.0, 3.0])
            dual = fwd.make_dual(dualad.tensor([0.5, 1.5]), dualad.tensor([1.0, -1.0]))
            warm(dualad.mul, w, dual)
            warm(dualad.sin, w)  # (w's part is cached: no tangent)
            w.add_(dual)  # now it has one
            return [*_pair(dualad.sin(w)), *_pair(w * 2.0), *_pair(dualad.mul(w, dual))]

    _check(body)


def test_dual_of_another_threads_level_is_a_constant_here():
    with fwd.dual_level():
        x = fwd.make_dual(dualad.tensor([0.5, 1.5]), dualad.tensor([1.0, 1.0]))
        y = _warm(dualad.sin, x)
        _warm(dualad.mul, y, x)  # y's part is cached with this thread's tangent, and the
        # rule of two duals compiled: read as a dual, y would bring this tangent to the other
        results = []

        def other():
            with fwd.dual_level():  # this thread's own level, alone on its stack
                dual = fwd.make_dual(dualad.tensor([1.0, 1.0]), dualad.tensor([0.0, 1.0]))
                for _ in range(3):
                    results.append(fwd.unpack_dual(_warm(dualad.mul, y, dual)).tangent)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        for tangent in results:  # y is a constant at the other thread's level
            np.testing.assert_array_equal(tangent.numpy(), [0.0, np.sin(1.5)])


def test_tensor_without_the_slot_set_takes_the_slow_checks():
    template = dualad.tensor([2.0, 3.0])
    bare = _new(Tensor)  # (as code that skips wrap might make one: every slot but _fwsig)
    for name in ("_data", "_rg", "_node", "_out_nr", "_meta", "_fw", "_vc", "_view"):
        setattr(bare, name, getattr(template, name))
    with fwd.dual_level():
        dual = fwd.make_dual(dualad.tensor([0.5, 1.5]), dualad.tensor([1.0, 1.0]))
        tangent = fwd.unpack_dual(_warm(dualad.mul, bare, dual)).tangent
    np.testing.assert_array_equal(tangent.numpy(), [2.0, 3.0])


def test_full_piece_table_leaves_new_shapes_to_the_general_path(monkeypatch):
    shape = (1, 3, 1, 2)
    assert all(p.shape != shape for p in compiled._PIECES.values())  # (a shape new here)
    monkeypatch.setattr(compiled, "MAX_PIECES", len(compiled._PIECES))
    duals = []

    def body(warm):
        with fwd.dual_level():
            dual = fwd.make_dual(
                dualad.tensor(np.linspace(0.5, 1.5, 6).reshape(shape)), dualad.ones(shape)
            )
            duals.append(dual)
            return _pair(warm(dualad.mul, warm(dualad.sin, dual), dual))

    _check(body)
    assert all(d._fwsig is None for d in duals)  # (no part: every call took the general path)
    assert all(p.shape != shape for p in compiled._PIECES.values())
