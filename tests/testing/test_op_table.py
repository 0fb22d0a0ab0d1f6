"""The published op table (docs/ops.md) is the one the registry generates today."""

from __future__ import annotations

from pathlib import Path

from dualad._opdef import REGISTRY
from dualad.testing import op_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def test_docs_ops_md_is_current():
    assert DOC.read_text() == op_table.render(), (
        "docs/ops.md is out of date: run python -m dualad.testing.op_table --write docs/ops.md"
    )


def test_every_registered_op_has_a_row_with_its_module():
    table = op_table.rows()
    assert sorted(r.name for r in table) == sorted(REGISTRY)
    assert all(r.module != "?" for r in table), [r.name for r in table if r.module == "?"]


def test_the_columns_come_from_the_rules():
    by_name = {r.name: r for r in op_table.rows()}
    assert by_name["eq"].kind == "non-differentiable"
    assert by_name["eq"].dtypes == ()
    assert by_name["mul"].kind == "differentiable"
    assert by_name["mul"].batching == "rule"
    assert {"float32", "float64", "complex64", "complex128"} <= set(by_name["mul"].dtypes)
    assert by_name["mul"].entries >= 1
