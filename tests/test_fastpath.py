"""The compiled fast path (``dualad/_fastpath.c``) equals the Python one it stands for.

For every op whose public function is a fast caller (``_dispatch.unary_caller`` /
``binary_caller``), over the argument shapes the compiled path takes (tensors that require grad,
leaves and not, tensors that do not, Python float/int/bool/complex scalars on either side, saved
tensors at a version above 0, grad mode off), the result and its graph node must be those the
Python code makes: the same data (bit for bit), the same flags, and a node whose class, edges
(the same nodes), ``needs``, saved arguments (the same tensors, or stand-ins of the same shape
and dtype), versions and saved outputs are what ``rev.record.record_node`` records for that
call. The cases the compiled path declines (views, saved-tensor hooks, anomaly mode, a dual
level, errors) must still behave as in Python; ``test_pure_python_run`` runs the graph
matcher's and the composition fuzz's tests again with the extension switched off
(``DUALAD_PURE_PYTHON=1``), the path users without a C compiler get. The compiled graph matcher
(``graph_match.make_plan``) is checked by tests/rev/test_graph_match.py, which runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _helpers import run_pytest

import dualad
from dualad import _dispatch
from dualad._tensor import wrap
from dualad.fwd import compiled
from dualad.rev import record
from dualad.rev.node import ArgMeta
from dualad.testing.opdb import all_ops

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    _dispatch._fastpath is None,
    reason="the compiled fast path is not built here (no C compiler at install) or "
    "DUALAD_PURE_PYTHON is set: the Python path runs everything",
)


def _fast_callers() -> list:
    """(op, public function, number of arguments) of every op with a compiled fast caller."""
    found = {}
    for op in _dispatch.REGISTRY.values():
        fn = op.fast
        code = getattr(fn, "__code__", None)
        if code is None or "compiled" not in code.co_freevars:
            continue
        found[op.name] = (op, fn, code.co_argcount)
    return [found[name] for name in sorted(found)]


CALLERS = _fast_callers()


def test_there_are_fast_callers():
    assert len(CALLERS) > 100
    assert {n for _, _, n in CALLERS} == {1, 2}


def _sample_arrays() -> dict:
    """op name -> the arrays of its op-database sample (float64), where the sample is one
    call of the fast caller on arrays alone (ops with shape rules: mm, bmm, ...)."""
    found: dict = {}
    for info in all_ops():
        op = getattr(info.fn, "op", None)
        if op is None or op.name in found or getattr(info.fn, "__code__", None) is None:
            continue
        if "float64" not in [np.dtype(d).name for d in info.dtypes]:
            continue
        sample = info.sample_inputs("float64")[0]
        if not sample.kwargs and all(isinstance(a, np.ndarray) for a in sample.args):
            found[op.name] = sample.args
    return found


SAMPLES = _sample_arrays()


def _integer_only(op) -> bool:
    probe = [dualad.tensor([0.5, 0.75])] * op.fast.__code__.co_argcount
    with np.errstate(all="ignore"):
        try:
            op.fast(*probe)
        except TypeError:
            return True
        except Exception:
            return False
    return False


def _values(op, position: int, rng, integers: bool):
    """Arrays inside the op's domain: its op-database sample's, or float64 values in
    (0.55, 0.95) (integers for the integer-only ops)."""
    if integers:
        return rng.integers(1, 5, size=3)
    sample = SAMPLES.get(op.name)
    if sample is not None and position < len(sample):
        return sample[position].copy()
    return rng.uniform(0.55, 0.95, size=3)


def _compare_nodes(fast, ref) -> None:
    """``fast``'s node equals ``ref``'s (recorded by the Python recorder for the same call)."""
    assert fast._rg is ref._rg
    a, b = fast._node, ref._node
    if b is None:
        assert a is None
        return
    assert type(a) is type(b)
    assert a._op is b._op and a._params is b._params
    assert a._needs == b._needs and a._nout == b._nout
    assert a._extra is None and b._extra is None and a._freed is b._freed is False
    assert a._out_meta is b._out_meta is None
    assert len(a._edges) == len(b._edges)
    for (na, ia), (nb, ib) in zip(a._edges, b._edges):
        assert na is nb and ia == ib
    assert len(a._args) == len(b._args)
    for sa, sb in zip(a._args, b._args):
        assert type(sa) is type(sb)
        if type(sa) is ArgMeta:
            assert sa.shape == sb.shape and sa.dtype == sb.dtype
        elif isinstance(sa, dualad.Tensor):
            assert sa is sb
        else:
            assert sa == sb and type(sa) is type(sb)
    assert tuple(a._versions) == tuple(b._versions)
    if b._out_data is None:
        assert a._out_data is None
    else:
        assert len(a._out_data) == 1 and a._out_data[0] is fast._data
        ((box_a, version_a, fw_a),) = a._out_versions
        assert box_a is fast._vc and version_a == 0 and fw_a is fast._fw


def _check(op, fn, args) -> bool:
    """Run ``fn(*args)`` (the compiled path) and compare with the Python recorder's node;
    False when the op raises on these arguments (the compiled path declined: the Python path
    raised its error)."""
    with np.errstate(all="ignore"):
        try:
            out = fn(*args)
        except Exception:
            return False
        arrays = [a._data if isinstance(a, dualad.Tensor) else a for a in args]
        expected = op.impl(np, *arrays) if op.kernel is None else op.kernel(*arrays)
    if type(expected) in _dispatch._NP_SCALAR_TYPES:
        expected = np.asarray(expected)
    assert type(out) is dualad.Tensor and type(out._data) is type(expected)
    np.testing.assert_array_equal(out._data, expected)
    assert out._data.dtype == expected.dtype
    assert out._view is None and out._meta is None and out._out_nr == 0
    ref = wrap(out._data)
    tracked = any(isinstance(a, dualad.Tensor) and a._rg for a in args)
    if tracked and dualad.is_grad_enabled() and op.differentiable:
        record.record_node(op, tuple(args), _dispatch.EMPTY, ref)
    else:
        ref._rg = False
    _compare_nodes(out, ref)
    return True


def _argument(kind, values):
    if kind == "leaf":
        return dualad.tensor(values, requires_grad=True)
    if kind == "inner":  # a non-leaf, made by a multiplication
        return dualad.tensor(values, requires_grad=True) * 1.0
    if kind == "plain":
        return dualad.tensor(values)
    if kind == "bumped":  # a tensor that needs no grad, written in place (version 1)
        t = dualad.tensor(values)
        t.add_(0)
        return t
    return kind  # a Python scalar


UNARY_KINDS = ["leaf", "inner", "plain", "bumped"]
BINARY_KINDS = [
    ("leaf", "leaf"),
    ("inner", "leaf"),
    ("leaf", "plain"),
    ("plain", "inner"),
    ("bumped", "inner"),
    ("inner", "bumped"),
    ("inner", 0.75),
    (0.75, "inner"),
    ("leaf", -0.0),
    ("inner", 2),
    (3, "leaf"),
    ("inner", True),
    ("inner", 0.5 + 0.25j),
    ("plain", 0.5),
]


@pytest.mark.parametrize("op, fn, nargs", CALLERS, ids=[op.name for op, _, _ in CALLERS])
def test_node_equals_python_recorder(op, fn, nargs):
    rng = np.random.default_rng(0)
    integers = _integer_only(op)
    cases = [(kind,) for kind in UNARY_KINDS] if nargs == 1 else BINARY_KINDS
    if integers:  # (integer tensors cannot require grad)
        cases = (
            [(k,) for k in ("plain", "bumped")]
            if nargs == 1
            else [("plain", "bumped"), ("plain", 2), (3, "bumped"), ("plain", True)]
        )
    checked = 0
    for kinds in cases:
        args = [_argument(k, _values(op, i, rng, integers)) for i, k in enumerate(kinds)]
        checked += _check(op, fn, args)
    with dualad.no_grad():  # grad mode off: no node
        args = [_argument(k, _values(op, i, rng, integers)) for i, k in enumerate(cases[0])]
        checked += _check(op, fn, args)
    assert checked >= len(cases) // 2, f"{op.name}: only {checked} of {len(cases) + 1} ran"


def test_same_tensor_in_both_slots_and_shared_leaf_edges():
    x = dualad.tensor([0.5, 1.5], requires_grad=True)
    y = x * x
    (n0, i0), (n1, i1) = y.grad_fn._edges
    assert n0 is n1 and type(n0).__name__ == "AccumulateGrad" and i0 == i1 == 0
    assert y.grad_fn._args == (x, x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 3.0])


def test_zero_dim_results_are_arrays():
    x = dualad.tensor(2.0, requires_grad=True)
    for y in (x * 3.0, dualad.sin(x), 2 - x):
        assert type(y._data) is np.ndarray and y.shape == ()


def test_declined_views_take_the_python_path():
    base = dualad.tensor([0.5, 1.0, 1.5], requires_grad=True) * 1.0
    view = base[1:]
    y = dualad.sin(view) * view
    y.sum().backward()  # (the view's grad_fn is current: Python's fast path took it)
    base2 = dualad.tensor([0.5, 1.0, 1.5], requires_grad=True)
    (dualad.sin(base2[1:]) * base2[1:]).sum().backward()
    v = np.array([1.0, 1.5])
    np.testing.assert_allclose(base2.grad.numpy()[1:], np.cos(v) * v + np.sin(v))


def test_saved_tensor_hooks_see_compiled_calls():
    packed = []

    def pack(t):
        packed.append(t)
        return t

    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    with dualad.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = dualad.sin(x) * x
    assert len(packed) == 3  # sin's argument, mul's two
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0]))


def test_saved_output_shares_tangent_dict_under_a_dual_level():
    # forward-over-reverse: a node saving its output records the output's (empty) tangent dict
    # while a dual level lives, as OpNode._save_outputs does
    with dualad.fwd.dual_level():
        x = dualad.tensor([0.5, 1.0], requires_grad=True)
        y = dualad.exp(x)  # no tangent at the level: the fast path records it
        ((box, version, fw),) = y.grad_fn._out_versions
        assert fw is y._fw and fw == {} and box is y._vc and version == 0


def test_errors_keep_their_class_and_message():
    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    b = dualad.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"shapes|broadcast"):
        a * b
    with pytest.raises(ValueError, match=r"shapes|broadcast"):
        dualad.add(a, b)
    with pytest.raises(TypeError):
        a * "x"


def test_in_place_after_use_is_caught():
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    h = x * 1.0
    y = dualad.sin(h)
    h.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_grad_mode_is_per_thread():
    import threading

    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    seen = []

    def worker():
        seen.append((x * 2.0).requires_grad)

    with dualad.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert not (x * 2.0).requires_grad
    assert seen == [True]


def test_pure_python_run():
    """The graph matcher's and the composition fuzz's tests with the extension switched off
    (the path of users without a C compiler: the Python fast callers, recorder and matcher)."""
    env = dict(os.environ, DUALAD_PURE_PYTHON="1")
    probe = "import dualad._dispatch as d; assert d._fastpath is None"
    assert subprocess.run([sys.executable, "-c", probe], env=env, timeout=300).returncode == 0
    tests = ["tests/rev/test_graph_match.py", "tests/test_composition_fuzz.py", "-k", "not thread"]
    done = run_pytest(["-q", "-x", *tests], env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


# ---------------------------------------------------------------------------------------------
# forward mode's compiled rules (fwd/compiled.py's rule branch, _fastpath.forward_alone)


def _dual_args(kinds, op, rng, level):
    args = []
    for i, kind in enumerate(kinds):
        values = _values(op, i, rng, False)
        if kind == "dual":
            args.append(
                dualad.fwd.make_dual(
                    dualad.tensor(values), dualad.tensor(values * 0.5 + 0.25), level=level
                )
            )
        elif kind == "plain":
            args.append(dualad.tensor(values))
        else:
            args.append(kind)
    return args


FORWARD_KINDS = [
    ("dual", "dual"),
    ("dual", "plain"),
    ("plain", "dual"),
    ("dual", 0.75),
    (2, "dual"),
    ("dual", -0.0),
    ("dual", float("nan")),
]


@pytest.mark.parametrize("op, fn, nargs", CALLERS, ids=[op.name for op, _, _ in CALLERS])
def test_forward_rule_equals_python(op, fn, nargs):
    """Each compiled rule (plan or replay) gives the Python path's primal and tangent, bit for
    bit, with the same cached signature and holder bookkeeping."""
    if _integer_only(op) or not op.differentiable:
        pytest.skip("no tangent")
    rng = np.random.default_rng(1)
    cases = [("dual",)] if nargs == 1 else FORWARD_KINDS
    ran = 0
    for kinds in cases:
        with dualad.fwd.dual_level() as level, np.errstate(all="ignore"):
            dual = dualad._state.GRAD.duals[-1]
            args = _dual_args(kinds, op, rng, level)
            try:
                for _ in range(3):  # noted, compiled, replayed
                    fn(*args)
            except Exception:
                continue
            key_args = tuple(args)
            fast = _dispatch._fastpath.forward_alone(dual, op, key_args)
            slow = compiled.process_alone(dual, op, key_args, dualad._state.GRAD.levels)
            if fast is _dispatch.MISS:
                continue  # (no compiled rule for this call: the Python path runs it)
            ran += 1
            ft, st = fast._fw[dual], slow._fw[dual]
            assert type(fast._data) is type(slow._data)
            np.testing.assert_array_equal(fast._data, slow._data)
            np.testing.assert_array_equal(ft._data, st._data)
            assert fast._data.dtype == slow._data.dtype and ft._data.dtype == st._data.dtype
            assert fast._fwsig[3] is slow._fwsig[3] and fast._fwsig[1] is ft
            assert fast._rg is False and ft._fw is None and ft._fwsig is None
            for a in args:  # an argument's tangent is never the output's
                if isinstance(a, dualad.Tensor) and a._fw:
                    assert a._fw[dual]._data is not ft._data
            assert any(ref() is fast for ref in dual.holders)
    if op.name in ("sin", "exp", "tanh", "mul", "add", "div", "sub"):
        assert ran, f"{op.name}: no compiled rule ran"


def test_forward_rule_plans_are_used_and_equal_the_replay():
    from dualad.tracing import tangents

    x = dualad.tensor([0.5, 1.0, 1.5])
    with dualad.fwd.dual_level() as level:
        d = dualad.fwd.make_dual(x, dualad.tensor([1.0, 2.0, 3.0]), level=level)
        for _ in range(3):
            y = (d / (d + 1.0)) * 0.7
    rules = [v for v in compiled._RULES.values() if type(v) is tuple and v[3] is not None]
    assert rules, "no rule got a plan"
    arrays = (
        np.array([0.5, 1.0]),
        np.array([1.0, -1.0]),
        np.array([2.0, 3.0]),
        np.array([0.5, 0.25]),
    )
    for replay, _, _, plan in rules:
        used, steps, _, _ = plan
        assert used <= tangents.PLAN_SLOTS and steps
        with np.errstate(all="ignore"):
            try:
                expected = replay(*arrays)
            except Exception:
                continue
            got = _dispatch._fastpath.run_plan(plan, *arrays)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)
    assert y.shape == (3,)


def test_forward_invalidation_is_seen_by_the_compiled_path():
    with dualad.fwd.dual_level() as level:
        d = dualad.fwd.make_dual(dualad.tensor([0.5, 1.0]), dualad.tensor([1.0, 1.0]), level=level)
        for _ in range(3):
            y = dualad.sin(d) * d
        d.data = dualad.tensor([1.5, 2.0])  # rebinding the data: its cached part is stale
        y = dualad.sin(d) * d
        primal, tangent = dualad.fwd.unpack_dual(y, level=level)
        v = np.array([1.5, 2.0])
        np.testing.assert_array_equal(primal.numpy(), np.sin(v) * v)
        np.testing.assert_array_equal(tangent.numpy(), np.cos(v) * v + np.sin(v))
    assert dualad.fwd.unpack_dual(y).tangent is None  # (the level's exit stripped it)


# ---------------------------------------------------------------------------------------------
# Tensor's compiled operator methods (_fastpath.Method)


def test_operator_methods_are_compiled_and_behave_as_the_functions():
    import inspect

    method = dualad.Tensor.__mul__
    assert type(method) is _dispatch._fastpath.Method
    assert method.__name__ == "mul" and method.__wrapped__ is dualad.mul
    assert method.__doc__ == dualad.mul.__doc__
    assert inspect.signature(method) == inspect.signature(dualad.mul)
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    assert x.__mul__(3.0).tolist() == [3.0, 6.0]  # (bound like a function)
    assert (2 * x).tolist() == [2.0, 4.0] and (-x).tolist() == [-1.0, -2.0]
    assert abs(dualad.tensor([-1.5])).tolist() == [1.5]
    with pytest.raises(TypeError):
        x * "text"
    assert (x * [1.0, 2.0]).tolist() == [1.0, 4.0]  # (lists take the Python path)
    batched = dualad.func.vmap(lambda t: t * 2.0 + t)(dualad.tensor([[1.0], [2.0]]))
    assert batched.tolist() == [[3.0], [6.0]]  # (a level without process_alone: Python's)
    with dualad.fwd.dual_level():  # a dual level alone: its process_alone, from the method
        d = dualad.fwd.make_dual(dualad.tensor([1.0]), dualad.tensor([2.0]))
        for _ in range(3):
            y = d * d + d
        assert dualad.fwd.unpack_dual(y).tangent.tolist() == [6.0]


def test_operator_methods_find_each_threads_own_levels():
    """The compiled methods keep the last thread's level stack (by thread-state id): two
    threads with their own dual levels, interleaved, each see their own tangents."""
    import threading

    barrier = threading.Barrier(2)
    results = {}

    def work(name, scale):
        with dualad.fwd.dual_level():
            d = dualad.fwd.make_dual(dualad.tensor([1.0, 2.0]), dualad.tensor([scale, scale]))
            for _ in range(50):
                barrier.wait()
                y = d * d + d * 0.5
            results[name] = dualad.fwd.unpack_dual(y).tangent.tolist()

    threads = [threading.Thread(target=work, args=(n, s)) for n, s in (("a", 1.0), ("b", 3.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"a": [2.5, 4.5], "b": [7.5, 13.5]}
    x = dualad.tensor([1.0, 2.0])  # and this thread has no level: no tangent
    assert dualad.fwd.unpack_dual(x * x).tangent is None
