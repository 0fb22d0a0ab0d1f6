"""The generated coverage table: the committed ``docs/numpy_coverage.md`` is what
``python -m dualad.numpy.coverage`` makes from today's namespace and registry, and the
classification reads its data (the ops' rules, the functions' marks), not a list of names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad._dispatch import REGISTRY, OpDef
from dualad.numpy import coverage

DOC = Path(dualad.__file__).resolve().parent.parent / "docs" / "numpy_coverage.md"


def test_the_committed_table_is_current():
    text = DOC.read_text()
    if f"NumPy {np.__version__} " not in text.splitlines()[2]:
        pytest.skip(f"the table was generated with another NumPy than {np.__version__}")
    assert text == coverage.render(), (
        "docs/numpy_coverage.md is out of date: run "
        "`python -m dualad.numpy.coverage --write docs/numpy_coverage.md`"
    )


def test_every_callable_of_the_three_namespaces_is_listed():
    for namespace, module in coverage.NAMESPACES.items():
        listed = set(coverage.numpy_names(namespace))
        for name in dir(module):
            value = getattr(module, name)
            if name.startswith("_") or isinstance(value, type) or not callable(value):
                continue
            assert name in listed or name in coverage.SKIPPED[namespace], (namespace, name)
    assert "sum" in coverage.numpy_names("numpy")
    assert "solve" in coverage.numpy_names("numpy.linalg")
    assert "rfft" in coverage.numpy_names("numpy.fft")
    assert "float64" not in coverage.numpy_names("numpy")  # a type, not a function


def test_classification_comes_from_the_ops_and_the_marks(monkeypatch):
    assert coverage.classify("numpy", "argsort").status == "non-differentiable"
    assert coverage.classify("numpy", "argsort").ops == ("argsort",)
    assert coverage.classify("numpy", "shape").batch == "value"
    assert coverage.classify("numpy", "unique").batch == "loop"
    round_row = coverage.classify("numpy", "round")
    assert (round_row.status, round_row.vjp, round_row.jvp) == ("differentiable", "yes", "yes")

    # a function of an op without a JVP and without a batching rule says so
    op = OpDef("coverage_probe", lambda xp, x: x, vjp=lambda *a: None)

    def probe(x):
        return x

    probe.op = op
    monkeypatch.setitem(REGISTRY, "coverage_probe", op)
    monkeypatch.setattr(dnp, "outer", probe, raising=False)
    row = coverage.classify("numpy", "outer")
    assert (row.status, row.vjp, row.jvp, row.batch) == ("differentiable", "yes", "no", "none")

    # a function of no op: a composite; marked, a value query
    monkeypatch.setattr(dnp, "outer", lambda a, b: a, raising=False)
    assert coverage.classify("numpy", "outer").vjp == "composite"
    monkeypatch.delattr(dnp, "outer", raising=False)
    assert coverage.classify("numpy", "outer").status == "missing"


def test_the_command_line_writes_the_table(tmp_path, capsys):
    target = tmp_path / "table.md"
    assert coverage.main(["--write", str(target)]) == 0
    assert target.read_text() == coverage.render()
    coverage.main([])
    assert capsys.readouterr().out == coverage.render()
