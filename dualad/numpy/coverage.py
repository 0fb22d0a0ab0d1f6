"""The coverage table of ``dualad.numpy``: every public function of NumPy's main, ``linalg``
and ``fft`` namespaces, and what dualad gives for it. Generated, never hand-kept::

    python -m dualad.numpy.coverage --write docs/numpy_coverage.md

(without ``--write`` it prints the table). ``tests/numpy/test_numpy_coverage.py`` checks that the
committed file is what this module generates, so regenerate it after adding functions.

**Which names.** Every public name of ``numpy``, ``numpy.linalg`` and ``numpy.fft`` that is
callable, except: names starting with ``_``; classes (dtypes and scalar types, ``ndarray``,
exceptions, ``errstate``: types, not functions); and the names of ``SKIPPED``: NumPy's own
environment (its test runner, configuration, print and floating-point-error settings) and
deprecated aliases. Nothing else is filtered: a NumPy function dualad does not give is listed
as missing.

**How a name is classified**, from the live ``dualad.numpy`` namespace and the op registry:

- *missing*: ``dualad.numpy`` (``.linalg``, ``.fft``) has no callable of that name;
- the ops behind a function: those it is marked with (``fn.ops``, or ``fn.op``: the functions
  made from one op), else the registered op of the same name, else none (a *composite*,
  made of other dualad functions);
- *non-differentiable*: the function is marked ``differentiable = False`` (it answers from
  values or metadata), or every op behind it is registered ``differentiable=False``;
  otherwise *differentiable* (composites of differentiable ops included);
- the rules columns say whether every op behind it has a VJP, a JVP, and a batching rule
  (``rule``) or vmap's per-example loop (``loop``: ``LOOP_BATCHED``); a composite's rules are
  those of the ops it is made of (``composite``); ``n/a`` where there is no derivative, and
  ``value`` for answers from values or metadata (Python values, no op).

>>> from dualad.numpy.coverage import classify
>>> classify("numpy", "argsort").status
'non-differentiable'
"""

from __future__ import annotations

import argparse
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._dispatch import REGISTRY, OpDef
from ..vmap import rules

__all__ = ["NAMESPACES", "SKIPPED", "Row", "classify", "numpy_names", "render", "rows"]

# NumPy's namespaces, by the name the table gives them
NAMESPACES = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft}

# callables of NumPy's namespaces that are not array functions (NumPy's environment), and the
# deprecated aliases (the names they stand for are listed)
SKIPPED = {
    "numpy": frozenset(
        {
            # NumPy's test runner, configuration and introspection of NumPy itself
            "test",
            "show_config",
            "show_runtime",
            "get_include",
            "info",
            # print options and floating-point error handling: process settings
            "set_printoptions",
            "get_printoptions",
            "printoptions",
            "seterr",
            "geterr",
            "seterrcall",
            "geterrcall",
            "setbufsize",
            "getbufsize",
            # deprecated in NumPy 2.0 (vstack)
            "row_stack",
        }
    ),
    "numpy.linalg": frozenset({"test"}),
    "numpy.fft": frozenset({"test"}),
}

DIFFERENTIABLE = "differentiable"
NON_DIFFERENTIABLE = "non-differentiable"
MISSING = "missing"


@dataclass(frozen=True)
class Row:
    """One NumPy name: its status and, where dualad gives it, the ops and their rules."""

    namespace: str
    name: str
    status: str
    ops: tuple[str, ...] = ()
    vjp: str = ""
    jvp: str = ""
    batch: str = ""


def numpy_names(namespace: str) -> list[str]:
    """The public callable names of one NumPy namespace, sorted (see the module docstring)."""
    module = NAMESPACES[namespace]
    names = []
    for name in dir(module):
        if name.startswith("_") or name in SKIPPED[namespace]:
            continue
        value = getattr(module, name)
        if isinstance(value, (type, types.ModuleType)) or not callable(value):
            continue
        names.append(name)
    return sorted(names)


def _dualad_namespace(namespace: str):
    """``dualad.numpy`` or its sub-namespace of that name (None while it does not exist)."""
    module = sys.modules[__package__]
    for part in namespace.split(".")[1:]:
        module = getattr(module, part, None)
        if not isinstance(module, types.ModuleType):
            return None
    return module


def _ops_of(fn, name: str) -> tuple[OpDef, ...]:
    """The registered ops behind ``fn``: its mark, its one op, or the op of its name."""
    marked = getattr(fn, "ops", None)
    if marked is None and isinstance(getattr(fn, "op", None), OpDef):
        marked = (fn.op,)
    if marked is None:
        marked = (REGISTRY[name],) if name in REGISTRY else ()
    return tuple(REGISTRY[op] if isinstance(op, str) else op for op in marked)


def _every(ops: Iterable[OpDef], has) -> str:
    ops = list(ops)
    present = [bool(has(op)) for op in ops]
    if all(present):
        return "yes"
    return "no" if not any(present) else "partly"


def _batching(ops: tuple[OpDef, ...]) -> str:
    kinds = {
        "rule" if op.batch is not None else "loop" if op.name in rules.LOOP_BATCHED else "none"
        for op in ops
    }
    for kind in ("none", "loop"):
        if kind in kinds:
            return kind
    return "rule"


def classify(namespace: str, name: str) -> Row:
    """The row of NumPy's ``namespace.name`` (see the module docstring for the rules)."""
    home = _dualad_namespace(namespace)
    fn = getattr(home, name, None) if home is not None else None
    if fn is None or not callable(fn):
        return Row(namespace, name, MISSING)
    ops = _ops_of(fn, name)
    marked = getattr(fn, "differentiable", None)
    if marked is not None:
        differentiable = bool(marked)
    else:
        differentiable = not ops or any(op.differentiable for op in ops)
    status = DIFFERENTIABLE if differentiable else NON_DIFFERENTIABLE
    names = tuple(op.name for op in ops)
    if not ops:
        if differentiable:
            return Row(namespace, name, status, (), "composite", "composite", "composite")
        return Row(namespace, name, status, (), "n/a", "n/a", "value")
    if not differentiable:
        return Row(namespace, name, status, names, "n/a", "n/a", _batching(ops))
    tracked = [op for op in ops if op.differentiable]
    return Row(
        namespace,
        name,
        status,
        names,
        _every(tracked, lambda op: op.vjp),
        _every(tracked, lambda op: op.jvp),
        _batching(ops),
    )


def rows(namespace: str) -> list[Row]:
    """Every row of one namespace, by name."""
    return [classify(namespace, name) for name in numpy_names(namespace)]


def _totals(table: dict[str, list[Row]]) -> list[str]:
    lines = [
        "| namespace | names | differentiable | non-differentiable | missing |",
        "|---|---:|---:|---:|---:|",
    ]
    for namespace, entries in table.items():
        count = {
            s: sum(r.status == s for r in entries)
            for s in (DIFFERENTIABLE, NON_DIFFERENTIABLE, MISSING)
        }
        lines.append(
            f"| `{namespace}` | {len(entries)} | {count[DIFFERENTIABLE]} | "
            f"{count[NON_DIFFERENTIABLE]} | {count[MISSING]} |"
        )
    return lines


def render() -> str:
    """The whole Markdown document."""
    table = {namespace: rows(namespace) for namespace in NAMESPACES}
    out = [
        "# NumPy coverage of `dualad.numpy`",
        "",
        f"Generated from NumPy {np.__version__} by `python -m dualad.numpy.coverage --write "
        "docs/numpy_coverage.md`; do not edit by hand (`tests/numpy/test_numpy_coverage.py` checks "
        "that it is current). Which names are listed and how each is classified: the docstring "
        "of `dualad/numpy/coverage.py`. In short: *differentiable* (the VJP, JVP and batching "
        "columns say which rules its ops have; `composite`: made of other dualad functions), "
        "*non-differentiable* (it works and returns untracked results or Python values), "
        "*missing* (no `dualad.numpy` function of that name).",
        "",
        "## Totals",
        "",
        *_totals(table),
    ]
    for namespace, entries in table.items():
        out += [
            "",
            f"## `{namespace}`",
            "",
            "| name | status | ops | VJP | JVP | batching |",
            "|---|---|---|---|---|---|",
        ]
        for r in entries:
            ops = ", ".join(f"`{op}`" for op in r.ops)
            out.append(f"| `{r.name}` | {r.status} | {ops} | {r.vjp} | {r.jvp} | {r.batch} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """The command line: print the table, or ``--write PATH``."""
    parser = argparse.ArgumentParser(prog="python -m dualad.numpy.coverage", description=__doc__)
    parser.add_argument("--write", metavar="PATH", help="write the Markdown table to PATH")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        Path(args.write).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
