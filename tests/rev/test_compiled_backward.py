"""Compiled backward passes (``dualad.tracing.graphs``): the same gradients as the engine, bit
for bit, over the op database; and the engine runs every pass the compiled path must not
(hooks, anomaly mode, saved-tensor hooks, levels, create_graph, modified saved values)."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad.rev import engine
from dualad.testing._numeric import sample_to_tensors
from dualad.testing.opdb import all_ops
from dualad.tracing import graphs


class Recorder:
    """Installed as the provider: records what ``raw_backward`` answered."""

    def __init__(self) -> None:
        self.answers: list = []

    def __call__(self, root, grad, retain_graph):
        answer = graphs.raw_backward(root, grad, retain_graph)
        self.answers.append(answer)
        return answer


@pytest.fixture
def recorder():
    rec = Recorder()
    graphs.cache_clear()  # (and the back-off other tests' changing graphs may have started)
    engine.install_raw_graph(rec)
    try:
        yield rec
    finally:
        engine.install_raw_graph(graphs.raw_backward)


def _engine_only():
    class Off:
        def __enter__(self):
            engine.install_raw_graph(None)

        def __exit__(self, *exc):
            engine.install_raw_graph(graphs.raw_backward)

    return Off()


def _chain(x):
    h = x
    for _ in range(3):
        h = dualad.tanh(dualad.sin(h * x) + x) / x * 0.7 + 0.2
    return h.sum()


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


# ---------------------------------------------------------------------------------------------
# the op database: every op's VJP through backward(), compiled (traced, then replayed) == engine

CASES = []
for _info in all_ops():
    if not _info.differentiable:
        continue
    for _dtype in _info.dtypes:
        _name = np.dtype(_dtype).name
        if _name not in ("float64", "float32", "complex128"):
            continue
        try:
            _samples = _info.sample_inputs(_name)
        except Exception:  # reported by the registry tests
            continue
        for _index, _sample in enumerate(_samples[:2]):
            if _sample.diff:
                CASES.append(pytest.param(_info, _sample, id=f"{_info.name}-{_name}-{_index}"))


def _run(info, sample, seed: int):
    """Leaves' gradients of a weighted sum of the op's outputs (None for unreached leaves)."""
    args, kwargs, leaves = sample_to_tensors(sample)
    out = info.fn(*args, **kwargs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    rng = np.random.default_rng(seed)
    total = None
    for o in outs:
        if isinstance(o, dualad.Tensor) and o.requires_grad:
            weight = rng.standard_normal(o.shape).astype(o.dtype)
            term = o * dualad.tensor(weight)
            if term.dtype.kind == "c":
                term = dualad.real(term)
            term = term.sum()
            total = term if total is None else total + term
    if total is None:
        pytest.skip("no output requires grad")
    total.backward()
    return [None if t.grad is None else t.grad.numpy().copy() for t in leaves]


@pytest.mark.parametrize("info, sample", CASES)
def test_opdb_vjp_compiled_equals_engine(info, sample, recorder):
    with _engine_only():
        expected = _run(info, sample, 0)
    first = _run(info, sample, 0)  # a structure's first pass: the engine (remembered)
    traced = _run(info, sample, 0)  # its second: traced and compiled
    replayed = _run(info, sample, 0)  # then replayed from the compiled program
    for got in (first, traced, replayed):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert (g is None) == (e is None)
            if e is not None:
                assert _same(g, e), f"{info.name}: {g} != {e}"


def test_most_op_passes_are_compiled():
    rec = Recorder()
    graphs.cache_clear()
    engine.install_raw_graph(rec)
    try:
        for param in CASES[::7]:
            info, sample = param.values
            try:
                _run(info, sample, 1)
                _run(info, sample, 1)
                _run(info, sample, 1)
            except pytest.skip.Exception:
                pass
    finally:
        engine.install_raw_graph(graphs.raw_backward)
    assert sum(rec.answers[2::3]) > 0.6 * len(rec.answers[2::3])


# ---------------------------------------------------------------------------------------------
# the compiled path's own behaviour


def test_chain_replays_bit_equal(recorder):
    x = dualad.tensor(np.linspace(0.5, 1.5, 8), requires_grad=True)
    results = []
    for _ in range(3):
        x.grad = None
        _chain(x).backward()
        results.append(x.grad.numpy().copy())
    assert recorder.answers == [False, True, True]  # remembered, traced, replayed
    with _engine_only():
        x.grad = None
        _chain(x).backward()
    for r in results:
        assert _same(r, x.grad.numpy())


def test_grad_accumulates_across_passes(recorder):
    x = dualad.tensor([0.3, 0.8, 1.1], requires_grad=True)
    for _ in range(3):
        _chain(x).backward()
    compiled = x.grad.numpy().copy()
    with _engine_only():
        y = dualad.tensor([0.3, 0.8, 1.1], requires_grad=True)
        for _ in range(3):
            _chain(y).backward()
    assert _same(compiled, y.grad.numpy())


def test_leaves_never_share_a_grad_array(recorder):
    # equal sums for two leaves: common-subexpression elimination may merge them in the program
    c = dualad.tensor([1.5, -2.0])
    for _ in range(3):
        a = dualad.tensor([1.0, 2.0], requires_grad=True)
        b = dualad.tensor([3.0, 4.0], requires_grad=True)
        ((a * c + a * c).sum() + (b * c + b * c).sum()).backward()
        assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
        a.grad.add_(1.0)
        assert _same(b.grad.numpy(), np.array([3.0, -4.0]))
    assert recorder.answers == [False, True, True]


def test_retain_graph_runs_twice_and_release_frees(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    _chain(x).backward()  # (the structure's first pass: remembered)
    x.grad = None
    y = _chain(x)
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    assert _same(x.grad.numpy(), 2 * first)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_modified_saved_tensor_raises_as_the_engine(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    for _ in range(3):
        h = x * 1.0
        y = (dualad.sin(h) * 2.0).sum()
        h.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_tensor_hook_takes_the_engine(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    seen = []
    h = dualad.sin(x)
    h.register_hook(lambda g: seen.append(g) or g * 2)
    (h * h).sum().backward()
    assert recorder.answers == [False] and len(seen) == 1
    assert np.allclose(x.grad.numpy(), 2 * 2 * np.sin([0.5, 1.0]) * np.cos([0.5, 1.0]))


def test_leaf_hooks_take_the_engine(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    _chain(x).backward()
    z = dualad.tensor([0.5, 1.0], requires_grad=True)
    z.register_hook(lambda g: g * 0)
    _chain(z).backward()
    assert recorder.answers == [False, False] and len(seen) == 1
    assert _same(z.grad.numpy(), np.zeros(2))


@pytest.mark.filterwarnings("ignore:Anomaly Detection")
def test_anomaly_mode_takes_the_engine(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    with dualad.autograd.detect_anomaly():
        _chain(x).backward()
    assert recorder.answers == [False]


def test_saved_tensor_hooks_take_the_engine(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    packed = []
    with dualad.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        y = _chain(x)
    y.backward()
    assert packed and recorder.answers == [False]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")
def test_levels_and_create_graph_take_the_engine(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    _chain(x).backward(create_graph=True)
    assert recorder.answers == []  # not even offered
    x.grad = None
    with dualad.autograd.forward_ad.dual_level():
        _chain(x).backward()
    assert recorder.answers == [False]
    g = dualad.func.grad(lambda t: _chain(t))(dualad.tensor([0.5, 1.0]))
    with _engine_only():
        x.grad = None
        _chain(x).backward()
    assert _same(g.numpy(), x.grad.numpy())


def test_grad_and_inputs_take_the_engine(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    (g,) = dualad.autograd.grad(_chain(x), x)
    _chain(x).backward(inputs=[x])
    assert recorder.answers == []
    assert _same(g.numpy(), x.grad.numpy())


def test_new_structures_are_compiled_on_their_second_pass(recorder):
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    for n in (1, 2, 3, 1, 2, 3):
        h = x
        for _ in range(n + 40):
            h = dualad.sin(h) * 0.5
        h.sum().backward()
    assert recorder.answers == [False] * 3 + [True] * 3


def test_a_full_cache_forgets_structures_seen_once(recorder, monkeypatch):
    monkeypatch.setattr(graphs, "MAX_GRAPHS", 3)
    graphs.cache_clear()
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    for n in range(6):
        h = x
        for _ in range(n + 50):
            h = dualad.cos(h) * 0.5
        h.sum().backward()
        assert graphs.cache_size() <= 3


def test_graphs_that_keep_changing_back_off(recorder):
    graphs.cache_clear()
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    for n in range(graphs.BACKOFF_AFTER + 4):
        h = x
        for _ in range(n + 60):
            h = dualad.tanh(h) * 0.5
        h.sum().backward()
    # each new structure is examined until the back-off starts, then the engine runs unasked
    assert graphs.cache_size() == graphs.BACKOFF_AFTER
    assert not any(recorder.answers)
    graphs.cache_clear()


def test_the_keys_memory_is_bounded(recorder, monkeypatch):
    monkeypatch.setattr(graphs, "MAX_HELD", 5000)
    x = dualad.tensor([0.5, 1.0], requires_grad=True)
    for n in (100, 150, 100, 150, 200):  # keys of about 1,700, 2,600 and 3,400 items
        h = x
        for _ in range(n):
            h = dualad.sin(h) * 0.5
        h.sum().backward()
        assert graphs._HELD[0] <= 5000
    assert sum(len(k) for k in graphs._CACHE) == graphs._HELD[0]
    # the first two fit and are compiled on their second pass; the third is left to the engine
    assert recorder.answers == [False, False, True, True, False]
    assert graphs.cache_size() == 2


def test_python_numbers_key_by_value_kind_and_sign(recorder):
    # ``x * c`` for c = 0.0 and -0.0 (equal, but their gradients' zeros differ in sign), 2 and
    # 2.0: each a structure of its own, replayed with its own constant
    x = dualad.tensor([0.5, -1.5], requires_grad=True)
    for _ in range(3):
        for c, expected in ((0.0, [0.0, 0.0]), (-0.0, [-0.0, -0.0]), (2, [2.0, 2.0])):
            x.grad = None
            (x * c).sum().backward()
            assert _same(x.grad.numpy(), np.array(expected))
            assert np.array_equal(np.signbit(x.grad.numpy()), np.signbit(expected))
        x.grad = None
        (x * 2.0 + x * 0.5).sum().backward()
        assert _same(x.grad.numpy(), np.array([2.5, 2.5]))
    assert recorder.answers[-4:] == [True] * 4
