"""The architecture rules of ARCHITECTURE.md, checked by reading ``dualad/`` with ``ast``.

``LAYERS`` below places every module in a layer; the checks are:

- every module is in ``LAYERS`` (a new module is placed deliberately: add it to the table);
- no import cycle (an import of ``dualad.a.b`` also runs the ``__init__`` of ``dualad.a``,
  unless that package is an ancestor of the importing module, which is already running);
- every import, module-level or function-local, goes to the same layer or a lower one;
- no function-local import of a dualad module (a lazy import of an optional third-party
  dependency, such as cupy, is fine);
- no import-on-first-use global (a function with a ``global`` statement that imports a
  dualad module);
- every file has at most ``MAX_LINES`` lines, and every module a docstring.

The refactoring towards these rules is in progress, so each check has an allowlist at the end
of this file (a ratchet): a violation not in it fails, and so does an entry that no longer
occurs (whoever fixes one deletes its line; a file over the limit may shrink but not grow).
To fix a failure: move the code to the right layer, or pass the knowledge through the
``Level`` protocol or a hook installed from above (see ARCHITECTURE.md); after fixing one,
``python tests/test_architecture.py --print-allowlists`` prints the allowlists to paste.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# ---------------------------------------------------------------------------------------------
# The layers, lowest first: a module imports only from its own layer or the ones before it in
# this table. ``pkg.*`` is the package and everything in it; a plain name is that module. The
# most specific entry wins (a plain name over ``pkg.*``, a longer ``pkg.*`` over a shorter).

LAYERS = (
    ("L0 base", "dualad._backend dualad._dtypes dualad._state dualad._tree dualad._errors"),
    ("L1a tensor metadata", "dualad._meta"),
    ("L1b tensor", "dualad._tensor dualad._tensor_queries"),
    ("L1c tensor: the level wrappers' base", "dualad._wrapper"),
    ("L2a core: ops and levels", "dualad._opdef dualad._level"),
    ("L2b core: creation", "dualad._tracked_values dualad._creation dualad._random"),
    ("L2c core: dispatch", "dualad._dispatch"),
    ("L3 ops", "dualad.ops.*"),
    ("L4a level: rev (the tape)", "dualad.rev.*"),
    ("L4b level: fwd", "dualad.fwd.*"),
    ("L4c level: vmap", "dualad.vmap.*"),
    (
        "L4d level: func's grad",
        "dualad.func.grad_level dualad.func.grad_views dualad.func.grad_function",
    ),
    (
        "L4e level: jit",
        "dualad.tracing.program dualad.tracing.algebra dualad.tracing.buffers "
        "dualad.tracing.tracer dualad.tracing.codegen dualad.tracing.signature "
        "dualad.tracing.graph_match dualad.tracing.graphs dualad.tracing.tangents "
        "dualad.tracing.sparsity dualad.tracing.sparsity_rules",
    ),
    (
        "L5 facades",
        "dualad dualad.__main__ dualad._operators dualad.func.* dualad.autograd.* "
        "dualad.testing.* dualad.utils.* dualad.numpy.* dualad.compat.* dualad.array_api.* "
        "dualad.linalg.* dualad.fft.* dualad.special.* dualad.nn.* dualad.dask.* dualad.tracing "
        "dualad.optimize.* "
        "dualad.tracing.api "
        "dualad.tracing.staging dualad.tracing.batching",
    ),
)
MAX_LINES = 600

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "dualad"


def layer_of(module: str) -> int | None:
    """The index in ``LAYERS`` of ``module``'s layer, or None when no entry matches."""
    best, best_len = None, -1
    for rank, (_, names) in enumerate(LAYERS):
        for name in names.split():
            if name == module:
                return rank
            package = name.removesuffix(".*")
            inside = module == package or module.startswith(package + ".")
            if name.endswith(".*") and inside and len(package) > best_len:
                best, best_len = rank, len(package)
    return best


# ---------------------------------------------------------------------------------------------
# Reading the package


@dataclass
class Import:
    """One import statement of a dualad module: where it is and what it runs."""

    source: str  # the importing module
    line: int
    targets: list[str]  # the modules it names
    parents: list[str]  # the packages whose __init__ it also runs
    function: ast.FunctionDef | ast.AsyncFunctionDef | None  # None: at module level

    @property
    def local(self) -> bool:
        return self.function is not None

    @property
    def where(self) -> str:
        return f"{path_of(self.source)}:{self.line}"


@functools.cache
def modules() -> dict[str, Path]:
    """Module name -> file, for every .py file under dualad/."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@functools.cache
def compiled_modules() -> frozenset[str]:
    """The C extensions' module names (``dualad/_fastpath.c`` is ``dualad._fastpath``)."""
    return frozenset(
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in (ROOT / PACKAGE).rglob("*.c")
    )


def path_of(module: str) -> str:
    return modules()[module].relative_to(ROOT).as_posix()


@functools.cache
def trees() -> dict[str, ast.Module]:
    return {m: ast.parse(p.read_text(), str(p)) for m, p in modules().items()}


def _named_modules(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dualad modules an import statement names (``from m import x``: ``m.x`` if that is a
    module, else ``m``)."""
    mods = modules()
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in mods]
    if node.level:
        package = module if mods[module].name == "__init__.py" else module.rpartition(".")[0]
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(base + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    named = []
    for alias in node.names:
        if f"{base}.{alias.name}" in compiled_modules():
            continue  # (a C extension imports no dualad module: no edge to check)
        target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in mods else base
        if target in mods and target not in named:
            named.append(target)
    return named


def _packages_above(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


@functools.cache
def imports() -> list[Import]:
    """Every import of a dualad module in dualad/, module-level and function-local."""
    found = []
    for module, tree in trees().items():

        def visit(node, function, module=module):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    targets = _named_modules(module, child)
                    parents = set().union(*map(_packages_above, targets))
                    parents -= {*_packages_above(module), module, *targets}  # already running
                    if targets:
                        found.append(
                            Import(module, child.lineno, targets, sorted(parents), function)
                        )
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    visit(child, child)
                elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    visit(child, function)  # imports are statements: skip expressions

        visit(tree, None)
    return found


@functools.cache
def edges() -> dict[str, dict[str, list[str]]]:
    """Importing module -> imported module (named or parent package) -> where."""
    graph: dict[str, dict[str, list[str]]] = {m: {} for m in modules()}
    for imp in imports():
        for target in imp.targets + imp.parents:
            graph[imp.source].setdefault(target, []).append(imp.where)
    return graph


def cycles() -> list[list[str]]:
    """The strongly connected components of the import graph that are cycles (Tarjan)."""
    graph, index, low, stack, on_stack, found = edges(), {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return found


# ---------------------------------------------------------------------------------------------
# The checks: each returns {violation key: [where, ...]}


def cycle_violations() -> dict[str, list[str]]:
    graph, found = edges(), {}
    for component in cycles():
        for module in component:
            found[module] = [
                f"imports {target} at {', '.join(where)}"
                for target, where in graph[module].items()
                if target in component
            ]
    return found


def layer_violations() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for imp in imports():
        for target in imp.targets + imp.parents:
            source_rank, target_rank = layer_of(imp.source), layer_of(target)
            if None not in (source_rank, target_rank) and target_rank > source_rank:
                found.setdefault(f"{imp.source} -> {target}", []).append(
                    f"{imp.where}: {LAYERS[source_rank][0]} imports {LAYERS[target_rank][0]}"
                )
    return found


def local_import_violations() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for imp in imports():
        if imp.local:
            for target in imp.targets:
                found.setdefault(f"{imp.source} -> {target} (local)", []).append(imp.where)
    return found


def first_use_global_violations() -> dict[str, list[str]]:
    found = {}
    for imp in imports():
        fn = imp.function
        if fn is not None and any(isinstance(n, ast.Global) for n in ast.walk(fn)):
            where = f"{path_of(imp.source)}:{fn.lineno}"
            found[f"{imp.source}.{fn.name} (global + import)"] = [where]
    return found


def long_file_violations() -> dict[str, list[str]]:
    found, limits = {}, dict(map(_lines_key, LONG_FILES_ALLOWED))
    for module, path in modules().items():
        count, name = len(path.read_text().splitlines()), path_of(module)
        if count > MAX_LINES:
            allowed = limits.get(name, MAX_LINES)
            found[f"{name} ({count:,} lines)"] = [f"{name}: {count:,} lines, allowed {allowed:,}"]
    return found


def docstring_violations() -> dict[str, list[str]]:
    return {
        path_of(m): [path_of(m)] for m, tree in trees().items() if ast.get_docstring(tree) is None
    }


def _lines_key(key: str) -> tuple[str, int]:
    name, count = re.fullmatch(r"(.*) \(([\d,]+) lines\)", key).groups()
    return name, int(count.replace(",", ""))


def check(found, allowed: frozenset, problem: str, fix: str, may_shrink=False) -> None:
    """Fail on a violation not in ``allowed`` and on an entry of ``allowed`` no longer found
    (``may_shrink``: keys are "file (N lines)", and a file may shrink but not grow)."""
    if may_shrink:
        limits = dict(map(_lines_key, allowed))
        current = dict(map(_lines_key, found))
        new = [k for k in found if _lines_key(k)[1] > limits.get(_lines_key(k)[0], MAX_LINES)]
        stale = [k for k in allowed if _lines_key(k)[0] not in current]
    else:
        new = [k for k in found if k not in allowed]
        stale = [k for k in allowed if k not in found]
    message = []
    for key in sorted(new):
        message.append(f"{problem}: {key}\n    " + "\n    ".join(found[key]))
    if new:
        message.append(f"How to fix: {fix}")
    if stale:
        message.append(
            "Fixed, so delete these lines from the allowlist in tests/test_architecture.py "
            "(or paste `python tests/test_architecture.py --print-allowlists`):\n    "
            + "\n    ".join(sorted(stale))
        )
    assert not message, "\n".join(message)


# ---------------------------------------------------------------------------------------------
# Tests


def test_every_module_has_a_layer():
    unknown = [m for m in modules() if layer_of(m) is None]
    assert not unknown, (
        f"modules in no layer: {unknown}. Add each to LAYERS at the top of "
        "tests/test_architecture.py (and to ARCHITECTURE.md), in the lowest layer whose "
        "modules it needs."
    )


def test_no_import_cycle():
    check(
        cycle_violations(),
        CYCLE_ALLOWED,
        "module in an import cycle",
        "remove an import that goes up a layer (see the layering test); inside one layer, move "
        "the shared code to a module both can import.",
    )


def test_imports_go_down():
    check(
        layer_violations(),
        UPWARD_ALLOWED,
        "import from a higher layer",
        "move the code to the layer it belongs in, or pass what the lower module needs through "
        "the Level protocol (_dispatch.Level) or a hook the higher module installs at import "
        "(as rev.record does with _dispatch.install_tape).",
    )


def test_no_function_local_import():
    check(
        local_import_violations(),
        LOCAL_ALLOWED,
        "function-local import of a dualad module",
        "import at module level; if that makes a cycle, the import goes up a layer: fix that.",
    )


def test_no_import_on_first_use_global():
    check(
        first_use_global_violations(),
        FIRST_USE_GLOBAL_ALLOWED,
        "global bound by an import on first use",
        "import the name at module level (fix the layering first if that makes a cycle).",
    )


def test_files_are_short():
    check(
        long_file_violations(),
        LONG_FILES_ALLOWED,
        f"file over {MAX_LINES} lines (or longer than its allowlisted length)",
        "split the file by subject into modules of one subject each.",
        may_shrink=True,
    )


def test_modules_have_docstrings():
    check(
        docstring_violations(),
        DOCSTRING_ALLOWED,
        "module without a docstring",
        "start the module with a docstring saying what it holds.",
    )


CHECKS = {
    "CYCLE_ALLOWED": cycle_violations,
    "UPWARD_ALLOWED": layer_violations,
    "LOCAL_ALLOWED": local_import_violations,
    "FIRST_USE_GLOBAL_ALLOWED": first_use_global_violations,
    "LONG_FILES_ALLOWED": long_file_violations,
    "DOCSTRING_ALLOWED": docstring_violations,
}


def print_allowlists() -> None:
    for name, violations in CHECKS.items():
        keys = sorted(violations())
        body = "".join(f'        "{k}",\n' for k in keys)
        print(f"{name} = frozenset(\n    {{\n{body}    }}\n)" if keys else f"{name} = frozenset()")


# ---------------------------------------------------------------------------------------------
# Allowlists (the ratchet): regenerate with `python tests/test_architecture.py --print-allowlists`
CYCLE_ALLOWED = frozenset()
UPWARD_ALLOWED = frozenset()
LOCAL_ALLOWED = frozenset()
FIRST_USE_GLOBAL_ALLOWED = frozenset()
LONG_FILES_ALLOWED = frozenset()
DOCSTRING_ALLOWED = frozenset()


if __name__ == "__main__":
    if sys.argv[1:] != ["--print-allowlists"]:
        sys.exit(__doc__)
    print_allowlists()


def test_test_file_names_are_unique():
    # the tests are not packages (no __init__.py): pytest imports each file by its base name,
    # so two files of the same name in different folders stop the run at collection
    names: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {name: paths for name, paths in names.items() if len(paths) > 1}
