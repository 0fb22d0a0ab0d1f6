"""The ops layer stays a layer: its modules import only downward (the core below it, and the ops
modules before them), at module level, without a cycle among them."""

from __future__ import annotations

import ast
import pathlib

import dualad.ops

OPS = pathlib.Path(dualad.ops.__file__).parent
# what ops/ may import outside itself: the layers below it
# (``_opdef``: the op record's shared sparsity rules, ``GATHER`` and the like)
BELOW = {
    "_backend",
    "_creation",
    "_dispatch",
    "_dtypes",
    "_opdef",
    "_state",
    "_tensor",
    "_tracked_values",
}


def _imports(path: pathlib.Path):
    """``(target, function_local)`` for each import of a dualad module in ``path``: targets are
    ``"ops.<module>"`` or the dualad module name."""
    tree = ast.parse(path.read_text())
    local = {
        id(node)
        for fn in ast.walk(tree)
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for node in ast.walk(fn)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue  # (absolute imports: numpy, scipy, opt_einsum, a lazy cupyx)
        for alias in node.names:
            if node.level == 2:  # from .. import x / from ..x import y
                target = node.module or alias.name
            else:
                target = "ops." + (node.module or alias.name)
            yield target.split(".")[0] if node.level == 2 else target, id(node) in local


def test_ops_import_only_below_and_at_module_level():
    graph = {}
    for path in sorted(OPS.glob("*.py")):
        name = "ops" if path.stem == "__init__" else "ops." + path.stem
        graph[name] = set()
        for target, function_local in _imports(path):
            assert not function_local, f"{path.name}: function-local import of {target}"
            if target.startswith("ops."):
                graph[name].add(target)
            else:
                assert target in BELOW, f"{path.name} imports dualad.{target} (above ops)"
    done, active = set(), []

    def visit(module):
        assert module not in active, "import cycle: " + " -> ".join([*active, module])
        if module in done:
            return
        active.append(module)
        for target in graph.get(module, ()):
            visit(target)
        active.pop()
        done.add(module)

    for module in graph:
        visit(module)
