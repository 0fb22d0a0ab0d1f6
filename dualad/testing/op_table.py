"""The published table of dualad's ops, generated from the registry and the op database::

    python -m dualad.testing.op_table --write docs/ops.md

(without ``--write`` it prints the table). ``tests/testing/test_op_table.py`` checks that the
committed file is what this module generates, so regenerate it after adding or changing ops.

One row per registered op (``dualad._opdef.REGISTRY``): the ``dualad/ops`` module that defines
it; whether it is differentiable (it has a VJP and a JVP) or marked non-differentiable; its
batching rule (``rule``; ``loop`` for the few ops with data-dependent output shapes that vmap
runs per example, ``LOOP_BATCHED``); the dtypes the op database differentiates it in (the union
over the ``OpInfo`` entries that name it) and how many entries test it. Nothing is hand-kept:
an op without an entry shows ``0`` and the registry tests fail for it.

>>> from dualad.testing.op_table import rows
>>> row = next(r for r in rows() if r.name == "sin")
>>> (row.module, row.kind, row.batching, "complex128" in row.dtypes)
('trigonometric', 'differentiable', 'rule', True)
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .. import ops  # noqa: F401 (importing the op library registers every op)
from .._opdef import REGISTRY, OpDef
from ..vmap import rules
from . import opdb

__all__ = ["Row", "render", "rows"]

_DTYPE_ORDER = ("float32", "float64", "complex64", "complex128")


@dataclass(frozen=True)
class Row:
    """One registered op and what it has."""

    name: str
    module: str
    kind: str  # "differentiable" | "non-differentiable"
    batching: str  # "rule" | "loop" | "none"
    dtypes: tuple[str, ...]  # differentiated in by the op database
    entries: int  # OpInfo entries naming the op


_SHARED = ("dualad.ops._helpers", "dualad.ops._batching", "dualad.ops._reducing", "dualad._opdef")


def _modules_of_ops() -> dict[int, str]:
    """id(OpDef) -> the module that defines it, without the ``dualad.ops.`` prefix: the module
    exporting a public function made from it (``__all__``; ``fn.op`` or ``op.fast``), else the
    module holding the OpDef itself, else the module of its impl or rules when that is not one
    of the shared helper modules."""
    by_function = {id(op.fast): op for op in REGISTRY.values() if op.fast is not None}
    modules = [
        (name.removeprefix("dualad.ops."), module)
        for name, module in sorted(sys.modules.items())
        # (not "dualad.ops.__init__": tests/ops/test_registry_completeness imports every file
        # of dualad/ops by name, the package's __init__ too, which then re-exports every op)
        if name.startswith("dualad.ops.") and module is not None and not name.endswith("__init__")
    ]
    found: dict[int, str] = {}
    for short, module in modules:
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name, None)
            op = getattr(value, "op", None)
            if not isinstance(op, OpDef):
                op = by_function.get(id(value))
            if isinstance(op, OpDef):
                found.setdefault(id(op), short)
    for short, module in modules:
        for value in vars(module).values():
            # an OpDef, or the function of a private op (``_j0 = unary(...)``: ``_j0.op``)
            op = value if isinstance(value, OpDef) else getattr(value, "op", None)
            if isinstance(op, OpDef):
                found.setdefault(id(op), short)
    for op in REGISTRY.values():
        if id(op) in found:
            continue
        for fn in (op.impl, op.jvp, op.vjp, op.batch):
            module_name = getattr(fn, "__module__", "") or ""
            if module_name.startswith("dualad.") and module_name not in _SHARED:
                found[id(op)] = module_name.removeprefix("dualad.").removeprefix("ops.")
                break
    return found


def rows() -> list[Row]:
    """Every registered op, sorted by module then name."""
    modules = _modules_of_ops()
    dtypes: dict[str, set[str]] = defaultdict(set)
    entries: dict[str, int] = defaultdict(int)
    for info in opdb.all_ops():
        for name in info.ops:
            entries[name] += 1
            if info.differentiable:
                dtypes[name].update(info.dtypes)
    out = []
    for name, op in REGISTRY.items():
        differentiable = op.differentiable and op.vjp is not None and op.jvp is not None
        if name in rules.LOOP_BATCHED:
            batching = "loop"
        else:
            batching = "rule" if op.batch is not None else "none"
        out.append(
            Row(
                name=name,
                module=modules.get(id(op), "?"),
                kind="differentiable" if differentiable else "non-differentiable",
                batching=batching,
                dtypes=tuple(d for d in _DTYPE_ORDER if d in dtypes[name])
                if differentiable
                else (),
                entries=entries[name],
            )
        )
    return sorted(out, key=lambda r: (r.module, r.name))


def render() -> str:
    """The Markdown page: totals, then one table row per op."""
    table = rows()
    diff = [r for r in table if r.kind == "differentiable"]
    lines = [
        "# dualad's ops",
        "",
        "Generated from the op registry and the op database by "
        "`python -m dualad.testing.op_table --write docs/ops.md`; do not edit by hand "
        "(`tests/testing/test_op_table.py` checks that it is current). What each column "
        "means: the docstring of `dualad/testing/op_table.py`. The NumPy names and which ops "
        "they use: [numpy_coverage.md](numpy_coverage.md).",
        "",
        "## Totals",
        "",
        "| | ops |",
        "|---|---:|",
        f"| registered | {len(table)} |",
        f"| differentiable (VJP and JVP) | {len(diff)} |",
        f"| differentiable with a batching rule | {sum(r.batching == 'rule' for r in diff)} |",
        f"| differentiable for complex inputs | {sum('complex128' in r.dtypes for r in diff)} |",
        f"| non-differentiable (comparisons, integer results, ...) | {len(table) - len(diff)} |",
        f"| batched by vmap's per-example loop | {sum(r.batching == 'loop' for r in table)} |",
        f"| tested by no op-database entry | {sum(r.entries == 0 for r in table)} |",
        "",
        "## Ops",
        "",
        "| op | module | kind | batching | differentiated in | op-database entries |",
        "|---|---|---|---|---|---:|",
    ]
    for r in table:
        kinds = ", ".join(r.dtypes) if r.dtypes else "n/a"
        lines.append(
            f"| `{r.name}` | {r.module} | {r.kind} | {r.batching} | {kinds} | {r.entries} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="dualad's op table (Markdown)")
    parser.add_argument("--write", metavar="PATH", help="write the table to PATH")
    options = parser.parse_args(argv)
    text = render()
    if options.write:
        Path(options.write).write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
