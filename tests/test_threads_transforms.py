"""Transforms, levels and thread-local modes under several Python threads (issue 11, item 4).

The transform level stack, dual levels, grad / forward-grad / anomaly modes are per thread;
``.grad`` accumulation and lazily created tensor metadata are shared and locked. Each stress test
runs its reproducer in several threads at once, every thread checking its own results against
analytic values; the default sizes take a few seconds, the ``slow`` variants run longer.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading

import numpy as np
import pytest

import dualad
from dualad import func as F
from dualad import fwd
from dualad._state import ACTIVE, DUALS_LIVE, GRAD


def value(t):
    return t.detach().numpy()


def run_threads(target, n: int = 4):
    """Run ``target(i)`` in ``n`` threads started together; re-raise the first error here."""
    barrier = threading.Barrier(n)
    errors: list = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as error:  # re-raised by the test thread
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@contextlib.contextmanager
def another_thread_inside(enter):
    """Run the body while another thread sits inside the context ``enter()`` makes (entered
    before the body starts, left after it ends)."""
    entered, release = threading.Event(), threading.Event()

    def holder():
        with enter():
            entered.set()
            release.wait()

    worker = threading.Thread(target=holder)
    worker.start()
    try:
        entered.wait()
        yield
    finally:
        release.set()
        worker.join()


def assert_clean():
    """No level is left on this thread's stack nor in the process-wide flags."""
    if ACTIVE or DUALS_LIVE:
        # a finished thread's state (and its ACTIVE token) goes with its frame: collect it
        # (only then: a full collection late in the suite takes half a second)
        gc.collect()
    assert GRAD.levels == [] and GRAD.duals == []
    assert ACTIVE == [] and DUALS_LIVE == []


@pytest.fixture(autouse=True)
def _clean_after():
    # switch threads every microsecond (CPython's default: 5 ms), so that the races these
    # tests look for show within a few hundred calls (the base code failed them so)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
    assert_clean()


# ---------------------------------------------------------------------------------------------
# one transform per test, in 4 threads at once


def _x(i: int, n: int = 5):
    return dualad.tensor(np.linspace(-1.0, 1.0, n) + 0.1 * i)


def f_scalar(x):
    return (dualad.sin(x) * x).sum()


def df_scalar(a):
    return np.cos(a) * a + np.sin(a)


def d2f_scalar(a):
    return np.diag(2 * np.cos(a) - np.sin(a) * a)


def f_vec(x):
    return dualad.exp(x) * x


def jac_vec(a):
    return np.diag(np.exp(a) * (1 + a))


def _check(kind: str, i: int) -> None:
    x = _x(i)
    a = value(x)
    if kind == "grad":
        np.testing.assert_allclose(value(F.grad(f_scalar)(x)), df_scalar(a), rtol=1e-12)
    elif kind == "jacrev":
        np.testing.assert_allclose(value(F.jacrev(f_vec)(x)), jac_vec(a), rtol=1e-12)
    elif kind == "jacfwd":
        np.testing.assert_allclose(value(F.jacfwd(f_vec)(x)), jac_vec(a), rtol=1e-12)
    elif kind == "hessian":
        np.testing.assert_allclose(value(F.hessian(f_scalar)(x)), d2f_scalar(a), atol=1e-12)
    elif kind == "vmap":
        rows = dualad.stack([x, 2 * x])
        out = dualad.vmap(lambda r: (r * r).sum())(rows)
        np.testing.assert_allclose(value(out), [(a * a).sum(), 4 * (a * a).sum()], rtol=1e-12)
    elif kind == "jvp":
        _, tangent = F.jvp(f_vec, (x,), (dualad.ones_like(x),))
        np.testing.assert_allclose(value(tangent), np.exp(a) * (1 + a), rtol=1e-12)
    elif kind == "dual_level":
        with fwd.dual_level():
            y = f_vec(fwd.make_dual(x, dualad.ones_like(x)))
            tangent = fwd.unpack_dual(y).tangent
        np.testing.assert_allclose(value(tangent), np.exp(a) * (1 + a), rtol=1e-12)
    elif kind == "backward":  # eager reverse mode: no level at all in this thread
        leaf = x.detach().requires_grad_(True)
        f_scalar(leaf).backward()
        np.testing.assert_allclose(value(leaf.grad), df_scalar(a), rtol=1e-12)
    else:  # pragma: no cover
        raise AssertionError(kind)
    # this thread's stack is as it was
    assert GRAD.levels == [] and GRAD.duals == []


KINDS = ["grad", "jacrev", "jacfwd", "hessian", "vmap", "jvp", "dual_level", "backward"]


def _stress(kinds, calls: int, n: int = 4):
    def target(i):
        for k in range(calls):
            _check(kinds[(i + k) % len(kinds)], i)

    run_threads(target, n)


@pytest.mark.parametrize("kind", KINDS)
def test_transform_in_four_threads(kind):
    # func.grad in 4 threads gave zeros or partial gradients now and then (a thread's ops were
    # processed by another thread's level); jvp raised "not the last one" and left levels
    _stress([kind], calls=60)


def test_mixed_transforms_in_four_threads():
    # every thread runs every transform in turn, each next to different ones
    _stress(KINDS, calls=80)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_transform_in_four_threads_long(kind):
    _stress([kind], calls=5000)


@pytest.mark.slow
def test_mixed_transforms_in_eight_threads_long():
    _stress(KINDS, calls=2000, n=8)


def test_vmap_or_jacrev_in_one_thread_while_another_runs_backward():
    # a vmap level in one thread made backward() in another raise "backward() called inside a
    # dualad.vmap transform"; the thread without levels now runs eager (the dispatch path)
    stop = threading.Event()
    holding = threading.Event()
    errors: list = []

    def transforms():
        try:
            x = _x(0)
            while not stop.is_set():

                def body(r):
                    holding.set()
                    return (r * r).sum()

                dualad.vmap(body)(dualad.stack([x, x]))
                F.jacrev(f_vec)(x)
        except BaseException as error:
            errors.append(error)
            holding.set()

    worker = threading.Thread(target=transforms)
    worker.start()
    try:
        holding.wait()
        for i in range(200):
            x = _x(i).requires_grad_(True)
            y = f_scalar(x)
            y.backward()
            np.testing.assert_allclose(value(x.grad), df_scalar(value(x)), rtol=1e-12)
            (g,) = dualad.autograd.grad(f_scalar(x), x)
            np.testing.assert_allclose(value(g), df_scalar(value(x)), rtol=1e-12)
    finally:
        stop.set()
        worker.join()
    if errors:
        raise errors[0]


def test_op_in_a_thread_without_levels_while_another_holds_one():
    # ops of a thread without levels take dispatch() while ACTIVE is set by another thread:
    # plain eager results, recorded graphs, no tangents
    @contextlib.contextmanager
    def dual_with_a_tangent():
        with fwd.dual_level():
            fwd.make_dual(dualad.zeros(2), dualad.ones(2))
            yield

    with another_thread_inside(dual_with_a_tangent):
        assert ACTIVE and not GRAD.levels and fwd._current_level == -1
        x = dualad.tensor([0.5, 2.0], requires_grad=True)
        y = dualad.exp(x) * x
        assert y.grad_fn is not None and y._fw is None
        y.sum().backward()
        np.testing.assert_allclose(value(x.grad), np.exp([0.5, 2.0]) * [1.5, 3.0])
        with pytest.raises(RuntimeError, match="no level exists"):
            fwd.make_dual(x, x)


def test_jvp_in_two_threads_leaves_no_levels():
    def target(i):
        for k in range(300):
            x = _x(i + k, 3)
            _, t = F.jvp(dualad.sin, (x,), (dualad.ones_like(x),))
            np.testing.assert_allclose(value(t), np.cos(value(x)), rtol=1e-12)
        assert GRAD.levels == [] and GRAD.duals == [] and fwd._current_level == -1

    run_threads(target, 2)
    assert_clean()


def test_dual_level_numbers_are_per_thread():
    numbers: dict = {}
    inside = threading.Barrier(3)

    def target(i):
        with fwd.dual_level() as outer, fwd.dual_level() as inner:
            inside.wait()  # all three threads hold two levels now
            numbers[i] = (outer, inner, fwd._current_level)
            x = fwd.make_dual(dualad.tensor([1.0]), dualad.tensor([float(i)]), level=outer)
            assert fwd.unpack_dual(x, level=outer).tangent.item() == float(i)
            assert fwd.unpack_dual(x, level=inner).tangent is None

    threads = [threading.Thread(target=target, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert numbers == {i: (0, 1, 1) for i in range(3)}


# ---------------------------------------------------------------------------------------------
# shared leaves: .grad accumulation and metadata creation


@pytest.mark.parametrize("rounds", [400, pytest.param(5000, marks=pytest.mark.slow)])
def test_first_concurrent_backward_into_fresh_leaves_accumulates_exactly(rounds):
    # the first backward() of several threads into a fresh leaf made its metadata (and .grad)
    # check-then-set without a lock: one thread's gradient was lost
    n = 4
    barrier = threading.Barrier(n)
    leaves: list = [None]
    errors: list = []
    ready = threading.Barrier(n + 1)

    def target(i):
        try:
            for _ in range(rounds):
                ready.wait()
                x = leaves[0]
                barrier.wait()
                (x * float(i + 1)).sum().backward()
                ready.wait()
        except BaseException as error:
            errors.append(error)
            ready.abort()
            barrier.abort()

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    try:
        for _ in range(rounds):
            leaves[0] = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
            ready.wait()  # threads start on the fresh leaf
            ready.wait()  # all threads are done with it
            np.testing.assert_array_equal(value(leaves[0].grad), [10.0] * 3)  # 1 + 2 + 3 + 4
    except threading.BrokenBarrierError:
        pass
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_concurrent_backward_into_shared_leaf_with_hooks():
    # many passes from several threads into one leaf (post-accumulate hook, retained grads)
    x = dualad.tensor([1.0, -2.0], requires_grad=True)
    seen: list = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(1))

    def target(i):
        for _ in range(100):
            y = x * 3.0
            y.retain_grad()
            y.sum().backward()
            np.testing.assert_array_equal(value(y.grad), [1.0, 1.0])

    run_threads(target, 4)
    np.testing.assert_array_equal(value(x.grad), [1200.0, 1200.0])
    assert len(seen) == 400


def test_concurrent_grad_wrt_shared_leaf_finds_its_accumulator():
    # the leaf's AccumulateGrad node was made check-then-set: two threads recording their
    # first use of a fresh leaf at once could each make one, and autograd.grad(y, x) in the
    # thread whose node lost then found no path to x
    for _ in range(100):
        x = dualad.tensor([1.0, 2.0], requires_grad=True)

        def target(i, x=x):
            (g,) = dualad.autograd.grad((x * float(i + 1)).sum(), x)
            np.testing.assert_array_equal(value(g), [i + 1.0] * 2)

        run_threads(target, 4)


# ---------------------------------------------------------------------------------------------
# modes are per thread


def _in_other_thread(fn):
    out: list = []
    errors: list = []

    def body():
        try:
            out.append(fn())
        except BaseException as error:
            errors.append(error)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return out[0]


def _other_thread_state():
    x = dualad.tensor([1.0], requires_grad=True)
    y = x * 2
    with fwd.dual_level():
        d = fwd.make_dual(dualad.tensor([1.0]), dualad.tensor([1.0]))
        tangent = fwd.unpack_dual(d * 3).tangent
    return (
        dualad.is_grad_enabled(),
        y.requires_grad,
        dualad.autograd.is_anomaly_enabled(),
        fwd._is_fwd_grad_enabled(),
        None if tangent is None else tangent.item(),
    )


DEFAULTS = (True, True, False, True, 3.0)


def test_no_grad_does_not_leak_to_another_thread():
    with dualad.no_grad():
        assert _in_other_thread(_other_thread_state) == DEFAULTS
        assert not dualad.is_grad_enabled()
    with dualad.inference_mode():
        assert _in_other_thread(_other_thread_state) == DEFAULTS


def test_anomaly_mode_does_not_leak_to_another_thread():
    with pytest.warns(UserWarning, match="Anomaly Detection"), dualad.autograd.detect_anomaly():
        assert _in_other_thread(_other_thread_state) == DEFAULTS
        assert dualad.autograd.is_anomaly_enabled()
    with dualad.autograd.set_detect_anomaly(True, check_nan=False):
        assert _in_other_thread(_other_thread_state) == DEFAULTS
        assert not dualad.autograd.is_anomaly_check_nan_enabled()
    assert dualad.autograd.is_anomaly_check_nan_enabled()

    # anomaly mode on in another thread: this thread's NaN gradient passes unchecked
    def nan_in_anomaly_thread():
        with dualad.autograd.set_detect_anomaly(True):
            x = dualad.tensor([0.0], requires_grad=True)
            with (
                pytest.raises(RuntimeError, match="returned nan"),
                np.errstate(all="ignore"),
                pytest.warns(UserWarning, match="Error detected in SqrtBackward0"),
            ):
                (dualad.sqrt(x) * 0.0).sum().backward()

    nan_in_anomaly_thread()  # (this thread, to check the reproducer)
    with another_thread_inside(lambda: dualad.autograd.set_detect_anomaly(True)):
        x = dualad.tensor([0.0], requires_grad=True)
        with np.errstate(all="ignore"):
            (dualad.sqrt(x) * 0.0).sum().backward()  # no anomaly mode here: no NaN check
        assert np.isnan(value(x.grad)).all()


def test_fwd_grad_switch_does_not_leak_to_another_thread():
    with fwd._set_fwd_grad_enabled(False):
        assert _in_other_thread(_other_thread_state) == DEFAULTS
        assert not fwd._is_fwd_grad_enabled()
    assert fwd._is_fwd_grad_enabled()


def test_modes_set_in_another_thread_do_not_reach_this_one():
    @contextlib.contextmanager
    def every_mode_changed():
        with (
            dualad.no_grad(),
            fwd._set_fwd_grad_enabled(False),
            fwd.dual_level(),
            dualad.autograd.set_detect_anomaly(True),
        ):
            yield

    with another_thread_inside(every_mode_changed):
        assert _other_thread_state() == DEFAULTS


# ---------------------------------------------------------------------------------------------
# exceptions inside transforms leave this thread's stack as it was


class Boom(Exception):
    pass


def _raising(depth_to_raise: int, depth: int = 0):
    """A function that raises ``Boom`` at nesting depth ``depth_to_raise`` of its transforms."""

    def f(x):
        if depth == depth_to_raise:
            raise Boom(depth)
        return _raising(depth_to_raise, depth + 1)(x)

    return f


def _nest(kind: str, inner):
    x = _x(0, 3)
    if kind == "grad":
        return lambda: F.grad(lambda v: inner(v).sum())(x)
    if kind == "jvp":
        return lambda: F.jvp(inner, (x,), (dualad.ones_like(x),))
    if kind == "vmap":
        return lambda: dualad.vmap(inner)(dualad.stack([x, x]))
    if kind == "jacrev":
        return lambda: F.jacrev(inner)(x)
    if kind == "jacfwd":
        return lambda: F.jacfwd(inner)(x)
    if kind == "dual_level":

        def run():
            with fwd.dual_level():
                return inner(fwd.make_dual(x, dualad.ones_like(x)))

        return run
    raise AssertionError(kind)


TRANSFORMS = ["grad", "jvp", "vmap", "jacrev", "jacfwd", "dual_level"]


@pytest.mark.parametrize("kind", TRANSFORMS)
def test_exception_inside_transform_leaves_stack_clean(kind):
    def inner(v):
        raise Boom()

    with pytest.raises(Boom):
        _nest(kind, inner)()
    assert_clean()


@pytest.mark.parametrize("outer", TRANSFORMS)
@pytest.mark.parametrize("middle", TRANSFORMS)
def test_exception_at_each_depth_of_nested_transforms(outer, middle):
    for raise_at in range(3):

        def innermost(v, raise_at=raise_at):
            if raise_at == 2:
                raise Boom(2)
            return dualad.sin(v) * v

        def mid(v, raise_at=raise_at):
            if raise_at == 1:
                raise Boom(1)
            return _run_at(middle, innermost, v)

        def top(v, raise_at=raise_at):
            if raise_at == 0:
                raise Boom(0)
            return mid(v)

        with pytest.raises(Boom):
            _run_at(outer, top, _x(0, 3))
        assert_clean()


def _run_at(kind: str, fn, v):
    """``fn`` under transform ``kind`` applied at ``v`` (a value of any level)."""
    if kind == "grad":
        return F.grad(lambda u: fn(u).sum())(v)
    if kind == "jvp":
        return F.jvp(fn, (v,), (dualad.ones_like(v),))[1]
    if kind == "vmap":
        return dualad.vmap(fn)(dualad.stack([v, v]))[0]
    if kind == "jacrev":
        return F.jacrev(fn)(v).sum(0)
    if kind == "jacfwd":
        return F.jacfwd(fn)(v).sum(0)
    if kind == "dual_level":
        with fwd.dual_level():
            return fwd.unpack_dual(fn(fwd.make_dual(v, dualad.ones_like(v)))).primal
    raise AssertionError(kind)


def test_exceptions_in_threads_leave_each_stack_clean():
    def target(i):
        for k in range(20):
            kind = TRANSFORMS[(i + k) % len(TRANSFORMS)]
            with pytest.raises(Boom):
                _run_at(kind, _raising(k % 2), _x(i, 3))
            assert GRAD.levels == [] and GRAD.duals == []
            _check("grad", i)  # and the next transform works

    run_threads(target, 4)


def test_exit_dual_level_out_of_order_keeps_the_stack():
    # exiting a level that is not this thread's innermost raises and changes nothing
    outer = fwd.enter_dual_level()
    inner = fwd.enter_dual_level()
    with pytest.raises(RuntimeError, match="not the last one"):
        fwd.exit_dual_level(level=outer)
    assert [d.index for d in GRAD.duals] == [outer, inner]
    fwd.exit_dual_level(level=inner)
    fwd.exit_dual_level(level=outer)


def test_thread_that_ends_inside_a_level_leaves_no_flag():
    # a thread that exits with a level still entered (never exited) must not leave the
    # process-wide flag set (every later op of every thread would take the slow path)
    def leaky():
        fwd.enter_dual_level()

    t = threading.Thread(target=leaky)
    t.start()
    t.join()
    del t
    gc.collect()
    assert ACTIVE == [] and DUALS_LIVE == []


# ---------------------------------------------------------------------------------------------
# reentrant backward on fresh threads: levels inherited, depth bounded


def test_reentrant_pass_on_a_fresh_thread_inherits_levels():
    # a deep reentrant chain under a dual level: the innermost passes run on fresh threads,
    # which see this thread's dual level (and may use it), and leave nothing behind
    depth = 300
    seen: list = []

    def make(level):
        x = dualad.tensor([1.0], requires_grad=True)
        y = x * 2
        if level < depth:

            def hook(grad):
                with dualad.enable_grad():
                    make(level + 1)[1].sum().backward()

            y.register_hook(hook)
        else:

            def deepest(grad):
                d = fwd.make_dual(dualad.tensor([2.0]), dualad.tensor([1.0]))
                seen.append(
                    (
                        threading.get_ident(),
                        fwd._current_level,
                        fwd.unpack_dual(d * d).tangent.item(),
                        fwd._is_fwd_grad_enabled(),
                    )
                )

            y.register_hook(deepest)
        return x, y

    with fwd.dual_level() as level:
        _, y = make(0)
        y.sum().backward()
        assert [d.index for d in GRAD.duals] == [level]
    ((ident, current, tangent, fw_enabled),) = seen
    assert ident != threading.get_ident()  # it ran on a fresh thread
    assert (current, tangent, fw_enabled) == (level, 4.0, True)


def test_reentrant_backward_that_never_ends_raises(monkeypatch):
    # a hook that runs backward on its own graph again from every pass: before, a new OS thread
    # every few hundred frames without end; now a clear error at MAX_REENTRANT_DEPTH
    from dualad.rev import engine

    assert engine.MAX_REENTRANT_DEPTH <= 10000  # bounded by default
    monkeypatch.setattr(engine, "MAX_REENTRANT_DEPTH", 400)  # (fast: 400 crosses threads too)
    threads_before = threading.active_count()
    x = dualad.tensor([1.0], requires_grad=True)

    def forever(grad):
        with dualad.enable_grad():
            (x * 2).sum().backward()

    x.register_hook(forever)
    with pytest.raises(RuntimeError, match=r"reentrant backward nested 400 deep"):
        (x * 2).sum().backward()
    assert threading.active_count() == threads_before


def _slow_class(monkeypatch, module, name: str):
    """Make ``module.name`` (a class made lazily under a check-then-set) slow to construct, so
    that threads racing to make it overlap every time (the race shows without luck)."""
    import time

    cls = getattr(module, name)

    class Slow(cls):
        __slots__ = ()

        def __init__(self, *args, **kwargs):
            time.sleep(0.002)  # (releases the GIL: another thread runs its check meanwhile)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(module, name, Slow)


def test_concurrent_hook_registration_on_a_fresh_leaf_keeps_every_hook(monkeypatch):
    # the hook tables of a leaf are made on first use: threads registering at once each made
    # one, and the hooks in the tables that lost never ran
    import dualad._meta
    import dualad.rev.hooks

    _slow_class(monkeypatch, dualad.rev.hooks, "HookDict")
    _slow_class(monkeypatch, dualad._meta, "AutogradMeta")
    for _ in range(10):
        x = dualad.tensor([1.0], requires_grad=True)
        ran: list = []

        def target(i, x=x, ran=ran):
            x.register_hook(lambda g, i=i: ran.append(("tensor", i)))
            x.register_post_accumulate_grad_hook(lambda t, i=i: ran.append(("post", i)))

        run_threads(target, 4)
        (x * 2.0).sum().backward()
        assert sorted(ran) == [(kind, i) for kind in ("post", "tensor") for i in range(4)]


def test_first_concurrent_backward_with_slow_metadata_creation(monkeypatch):
    # the same race as above on .grad's metadata, made certain: every thread reaches the
    # creation of the fresh leaf's AutogradMeta before any finishes it
    import dualad._meta

    _slow_class(monkeypatch, dualad._meta, "AutogradMeta")
    for _ in range(10):
        x = dualad.tensor([1.0, 2.0], requires_grad=True)
        run_threads(lambda i, x=x: (x * float(i + 1)).sum().backward(), 4)
        np.testing.assert_array_equal(value(x.grad), [10.0, 10.0])
