"""The compiled passes' matchers (``dualad.tracing.graph_match``): a matcher accepts a new graph
exactly when the graph's structure key equals its compiled structure's key, so the replay it
starts is the one the key would have found; and passes it starts give the engine's gradients."""

from __future__ import annotations

import numpy as np
import pytest

# (this folder's op-database cases, and how a case's pass runs and compares)
from test_compiled_backward import CASES, _run, _same

import dualad
from dualad.rev import engine
from dualad.tracing import graphs


@pytest.fixture(autouse=True)
def fresh_cache():
    graphs.cache_clear()
    engine.install_raw_graph(graphs.raw_backward)
    yield
    graphs.cache_clear()


def _compile(build):
    """Run ``build``'s pass until its structure is compiled and has its matcher; its key."""
    for _ in range(2 + graphs.MATCH_AFTER):
        x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
        build(x).backward()
    x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    y = build(x)
    key = graphs._structure(y.grad_fn, dualad.ones_like(y))[0]
    assert graphs._MATCHERS
    return key


def _accepts(y) -> bool:
    grad = dualad.ones_like(y)
    for match, _, _ in graphs._MATCHERS.get(type(y.grad_fn), ()):
        try:
            if match(y.grad_fn, grad._data) is not None:
                return True
        except Exception:
            pass
    return False


def _key(y):
    found = graphs._structure(y.grad_fn, dualad.ones_like(y))
    return None if found is None else found[0]


def _base(x, c=0.7, scale=2):
    h = dualad.sin(x * x) + x
    return (dualad.exp(dualad.tanh(h)) / x * c + scale).sum()


VARIANTS = {
    "same": lambda x: _base(x),
    "another float": lambda x: _base(x, c=0.75),
    "zero": lambda x: _base(x, c=0.0),
    "negative zero": lambda x: _base(x, c=-0.0),
    "an int": lambda x: _base(x, scale=3),
    "an int for a float": lambda x: _base(x, scale=2.0),
    "a bool": lambda x: _base(x, scale=True),
    "another op": lambda x: (dualad.exp(dualad.tanh(dualad.cos(x * x) + x)) / x * 0.7 + 2).sum(),
    "a shared node": lambda x: _shared(x, True),
    "two equal nodes": lambda x: _shared(x, False),
    "another shape": lambda x: _base(x.reshape(2, 3)),
    "float32": lambda x: _base(x.to(dualad.float32)),
    "a parameter": lambda x: (dualad.exp(dualad.tanh(dualad.sin(x * x) + x)) / x * 0.7 + 2).sum(0),
    "a constant tensor": lambda x: _base(x) * dualad.tensor(2.0),
    "detached": lambda x: _base(x.detach().requires_grad_()),
}


def _shared(x, shared: bool):
    a = dualad.sin(x * x)
    b = a if shared else dualad.sin(x * x)
    return (a * b).sum()


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_matcher_accepts_exactly_the_graphs_of_its_key(name):
    compiled_key = _compile(lambda x: _base(x))
    x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    y = VARIANTS[name](x)
    assert _accepts(y) == (_key(y) == compiled_key)
    if name == "same":
        assert _accepts(y)


def test_a_matcher_is_made_for_structures_in_steady_use():
    for _ in range(2 + graphs.MATCH_AFTER):
        assert not graphs._MATCHERS
        x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
        _base(x).backward()
    assert graphs._MATCHERS


def test_sharing_is_told_apart_both_ways():
    for compiled, other in ((True, False), (False, True)):
        graphs.cache_clear()
        _compile(lambda x, s=compiled: _shared(x, s))
        x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
        assert _accepts(_shared(x, compiled))
        assert not _accepts(_shared(x, other))


def test_matched_passes_equal_the_engine_and_release():
    for _ in range(2 + graphs.MATCH_AFTER):
        x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
        _base(x).backward()
    x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    y = _base(x)
    assert _accepts(y)
    y.backward()
    x2 = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    engine.install_raw_graph(None)
    try:
        _base(x2).backward()
    finally:
        engine.install_raw_graph(graphs.raw_backward)
    assert np.array_equal(x.grad.numpy(), x2.grad.numpy())
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_modified_saved_value_is_not_matched_and_the_engine_raises():
    _compile(lambda x: _base(x))
    x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    h = x * 1.0
    y = (dualad.sin(h * h) + h).sum()
    h.mul_(2.0)
    assert not _accepts(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_hooks_are_not_matched():
    _compile(lambda x: _base(x))
    x = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    y = _base(x)
    assert _accepts(y)
    x.register_hook(lambda g: g * 2)
    assert not _accepts(y)
    y.backward()
    x2 = dualad.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    _base(x2).backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x2.grad.numpy())


@pytest.mark.parametrize("info, sample", CASES)
def test_opdb_matched_passes_equal_the_engine(info, sample, monkeypatch):
    monkeypatch.setattr(graphs, "MATCH_AFTER", 1)  # a matcher from the first replay on
    engine.install_raw_graph(None)
    try:
        expected = _run(info, sample, 0)
    finally:
        engine.install_raw_graph(graphs.raw_backward)
    for _ in range(3):  # remembered, traced, replayed through the key (the matcher is made)
        _run(info, sample, 0)
    keyed = []
    structure = graphs._structure

    def counted(node, grad):
        keyed.append(node)
        return structure(node, grad)

    monkeypatch.setattr(graphs, "_structure", counted)
    got = _run(info, sample, 0)
    if graphs._MATCHERS:  # a compiled structure: its matcher accepted the same graph again
        assert not keyed
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if e is not None:
            assert _same(g, e), f"{info.name}: {g} != {e}"
