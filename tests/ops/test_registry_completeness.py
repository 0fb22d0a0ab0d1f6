"""What a registered op still lacks: one test per piece, each failure naming the op and what to add.

Run it after adding an op (``CONTRIBUTING.md`` walks through one)::

    PYTHONPATH=$PWD python -m pytest -p no:cacheprovider -q tests/ops/test_registry_completeness.py

Every registered op (``dualad._opdef.REGISTRY``) needs

- a VJP and a JVP rule, or the mark ``differentiable=False`` (``nondiff_unary``/``nondiff_binary``);
- a batching rule (or its name in ``dualad/vmap/rules.py``'s ``LOOP_BATCHED``);
- an ``OpInfo`` of the op database (``dualad/testing/opdb/``) naming it in ``ops``: the registry
  tests (``tests/ops/test_registry.py``, ``tests/fwd/test_jvp_registry.py``,
  ``tests/vmap/test_batch_rules.py``) then check its values, VJP, JVP, grad-of-grad and vmap;
- its public function exported (``public.inplace``/``method``/``function`` of the op module's
  ``Exports``), elementwise ones as Tensor methods too, with a docstring whose examples run.

Each check is a function returning one message per missing piece; ``test_a_half_added_op_is_
reported_piece_by_piece`` runs them on an op registered with nothing but its impl.
"""

from __future__ import annotations

import doctest
from collections import Counter
from collections.abc import Iterable
from importlib import import_module
from pathlib import Path
from types import ModuleType

import pytest

import dualad
from dualad import ops
from dualad._dispatch import REGISTRY, OpDef, unary_caller
from dualad._tensor import Tensor
from dualad.ops import _batching
from dualad.testing import opdb
from dualad.testing.opdb import OpInfo
from dualad.vmap import rules

ROOT = Path(dualad.__file__).resolve().parent.parent

# ops with a public-looking function that is deliberately not exported: fused derivative ops
# that the rules of sin, cos, tanh and sigmoid are made of (their OpInfos call them directly)
INTERNAL = {"sin_backward", "cos_backward", "tanh_backward", "sigmoid_backward"}

# exported functions without a docstring of their own (none today; a new op must have one)
UNDOCUMENTED: frozenset[str] = frozenset()

# the docstring ``unary_caller``/``binary_caller`` give an op defined without ``doc=``
DEFAULT_DOC_START = "dualad op ``"


# ---------------------------------------------------------------------------------------------
# where an op is defined, and where its OpInfos live


def _relative(filename: str) -> str:
    try:
        return Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return filename


def _ops_modules() -> list[ModuleType]:
    """Every module of ``dualad/ops`` (public ops or not)."""
    return [import_module(f"dualad.ops.{path.stem}") for path in sorted(_ops_dir().glob("*.py"))]


def _ops_dir() -> Path:
    return Path(ops.__file__).resolve().parent


_RULE_HELPERS = ("_helpers.py", "_batching.py", "_opdef.py", "_dispatch.py")


def home_of(op: OpDef, modules: Iterable[ModuleType] = ()) -> str:
    """The file that defines ``op``: the module exporting its public function, else the one
    holding its impl or rules (not the shared helpers), else ``dualad/ops/``."""
    for module in modules:
        for name in getattr(module, "__all__", ()):
            if getattr(getattr(module, name, None), "op", None) is op:
                return _relative(module.__file__)
    for fn in (op.impl, op.vjp, op.jvp, op.batch, op.kernel):
        code = getattr(fn, "__code__", None)
        if (
            code is not None
            and not code.co_filename.endswith(_RULE_HELPERS)
            and "dualad" in Path(code.co_filename).parts
        ):
            return _relative(code.co_filename)
    return "dualad/ops/"


def _families() -> dict[str, list[OpInfo]]:
    """The op database's family modules: file -> its OpInfos."""
    out = {}
    for family in opdb.FAMILIES:
        try:
            module = import_module(f"{opdb.__name__}.{family}")
        except ModuleNotFoundError:
            continue
        out[_relative(module.__file__)] = list(module.OPS)
    return out


def opdb_file_for(home: str, registry: dict, families: dict[str, list[OpInfo]]) -> str:
    """The op database file holding the entries of the other ops defined in ``home``."""
    votes: Counter = Counter()
    for path, infos in families.items():
        for info in infos:
            for name in info.ops:
                op = registry.get(name)
                if op is not None and home_of(op, ops.MODULES) == home:
                    votes[path] += 1
    if votes:
        return votes.most_common(1)[0][0]
    return "dualad/testing/opdb/<family>.py (a new family goes into opdb.FAMILIES)"


def _public_name(op: OpDef, modules: Iterable[ModuleType]) -> str:
    for module in modules:
        for name, value in vars(module).items():
            if not name.startswith("_") and getattr(value, "op", None) is op:
                return name
    return op.name


# ---------------------------------------------------------------------------------------------
# the checks: one message per missing piece


def missing_vjp(registry: dict) -> list[str]:
    return [
        f"{name} ({home_of(op, ops.MODULES)}): differentiable but has no VJP rule. Make it with "
        "a helper of dualad/ops/_helpers.py (unary, binary, ...: they derive the VJP from the "
        "derivative), pass OpDef(vjp=...), or mark it non-differentiable (nondiff_unary, "
        "nondiff_binary, OpDef(differentiable=False))"
        for name, op in sorted(registry.items())
        if op.differentiable and op.vjp is None
    ]


def missing_jvp(registry: dict) -> list[str]:
    return [
        f"{name} ({home_of(op, ops.MODULES)}): differentiable but has no JVP rule (forward "
        "mode, jvp, jacfwd and hessian need it). Make it with a helper of dualad/ops/_helpers.py "
        "(unary, binary, ...), pass OpDef(jvp=...), or mark it non-differentiable"
        for name, op in sorted(registry.items())
        if op.differentiable and op.jvp is None
    ]


def missing_batch_rule(registry: dict, loop_batched=frozenset()) -> list[str]:
    return [
        f"{name} ({home_of(op, ops.MODULES)}): no batching rule for vmap. Pass OpDef(batch=...) "
        "(dualad/ops/_batching.py has the shared ones: batching.elementwise for elementwise "
        "ops; unary/binary pass it), or, for an op whose output shape depends on the values, add "
        "its name to LOOP_BATCHED in dualad/vmap/rules.py (a per-example loop)"
        for name, op in sorted(registry.items())
        if op.batch is None and name not in loop_batched
    ]


def missing_opinfo(registry: dict, infos: list[OpInfo], families: dict) -> list[str]:
    covered = {name for info in infos for name in info.ops}
    messages = []
    for name, op in sorted(registry.items()):
        if name in covered:
            continue
        home = home_of(op, ops.MODULES)
        public = _public_name(op, ops.MODULES)
        messages.append(
            f"{name} ({home}): named in no OpInfo, so no test runs it. Add "
            f'OpInfo("{public}", dualad.{public}, <samples>, ref=<NumPy reference>) to '
            f"{opdb_file_for(home, registry, families)} (samples: see its _samples module; an "
            f'entry calling the op under another name lists it in ops=("{name}",))'
        )
    return messages


def unknown_opinfo_ops(registry: dict, infos: list[OpInfo]) -> list[str]:
    return [
        f"OpInfo {info.name!r} names {name!r} in ops, but no op of that name is registered "
        "(ops= holds OpDef names, e.g. the first argument of unary(...))"
        for info in infos
        for name in info.ops
        if name not in registry
    ]


def differentiability_mismatches(registry: dict, infos: list[OpInfo]) -> list[str]:
    messages = []
    for info in infos:
        marks = [registry[name].differentiable for name in info.ops if name in registry]
        if info.differentiable and marks and not any(marks):
            messages.append(
                f"OpInfo {info.name!r} claims differentiable=True, but its ops {info.ops} are "
                "registered differentiable=False: give the OpInfo differentiable=False"
            )
    return messages


def exported_functions(modules: Iterable[ModuleType]):
    """``(module, name, function)`` for every name of every module's ``__all__``."""
    for module in modules:
        for name in getattr(module, "__all__", ()):
            yield module, name, getattr(module, name)


def unexported_ops(modules: Iterable[ModuleType], internal=frozenset()) -> list[str]:
    modules = list(modules)
    exported = {id(fn) for _, _, fn in exported_functions(modules)}
    seen = set()
    messages = []
    for module in modules:
        for name, value in vars(module).items():
            op = getattr(value, "op", None)
            if name.startswith("_") or not isinstance(op, OpDef) or op.name in internal:
                continue
            if id(value) in exported or op.name in seen or not _defined_in(op, module):
                continue
            seen.add(op.name)
            messages.append(
                f"{op.name} ({_relative(module.__file__)}): its function {name} is not exported. "
                f"Write {name} = public.inplace(unary(...)) (dualad.{name}, Tensor.{name} and "
                f"Tensor.{name}_), public.method(...) (no in-place method) or public.function(...) "
                "(no Tensor method); see dualad/ops/_exports.py. (A helper op no user should call: "
                "a name starting with _, or its name in INTERNAL here, with the reason.)"
            )
    return messages


def _defined_in(op: OpDef, module: ModuleType) -> bool:
    """Whether ``op`` is made in ``module`` (not imported into it from another ops module)."""
    home = home_of(op)
    return home == "dualad/ops/" or home == _relative(module.__file__)


def elementwise_ops_not_methods(modules: Iterable[ModuleType]) -> list[str]:
    modules = list(modules)
    methods = {name for module in modules for name in getattr(module, "TENSOR_METHODS", ())}
    by_op: dict = {}
    for module, name, fn in exported_functions(modules):
        op = getattr(fn, "op", None)
        if isinstance(op, OpDef) and op.batch is _batching.elementwise:
            by_op.setdefault(op.name, []).append((module, name))
    return [
        f"{op_name} ({_relative(names[0][0].__file__)}): elementwise, so a Tensor method too: "
        f"export it with public.inplace(...) (or public.method(...)) instead of "
        f"public.function(...), making Tensor.{names[0][1]}"
        for op_name, names in sorted(by_op.items())
        if not any(name in methods for _, name in names)
    ]


def methods_not_attached(modules: Iterable[ModuleType]) -> list[str]:
    messages = []
    for module in modules:
        for name in getattr(module, "TENSOR_METHODS", ()):
            if not hasattr(Tensor, name):
                messages.append(f"Tensor.{name} ({module.__name__}.TENSOR_METHODS) is missing")
        for name in getattr(module, "INPLACE_METHODS", ()):
            if not hasattr(Tensor, name + "_"):
                messages.append(f"Tensor.{name}_ ({module.__name__}.INPLACE_METHODS) is missing")
    return messages


def undocumented(modules: Iterable[ModuleType], known=frozenset()) -> list[str]:
    return [
        f"dualad.{name} ({_relative(module.__file__)}) has no docstring: give unary/binary "
        'doc="..." (what it computes, its domain and singular points, an example), or write '
        "one for a def"
        for module, name, fn in exported_functions(modules)
        if name not in known
        and (not (fn.__doc__ or "").strip() or fn.__doc__.startswith(DEFAULT_DOC_START))
    ]


def _unseen_docstrings(modules: Iterable[ModuleType]):
    """Exported functions with examples that ``--doctest-modules`` does not collect: those made
    by ``unary``/``binary``/... (their function is defined in ``_dispatch``, not in the module
    that exports it). Aliases once."""
    seen = set()
    for module, name, fn in exported_functions(modules):
        if id(fn) in seen or ">>>" not in (fn.__doc__ or ""):
            continue
        seen.add(id(fn))
        if getattr(fn, "__globals__", {}).get("__name__") != module.__name__:
            yield f"{module.__name__}.{name}", fn


# ---------------------------------------------------------------------------------------------
# the tests

try:
    INFOS = opdb.all_ops()
    DATABASE_ERROR = None
except Exception as exc:  # reported by test_the_op_database_imports; the checks above still run
    INFOS, DATABASE_ERROR = [], exc


def _database() -> list[OpInfo]:
    if DATABASE_ERROR is not None:
        pytest.skip("the op database does not import (test_the_op_database_imports)")
    return INFOS


def test_the_op_database_imports():
    if DATABASE_ERROR is not None:
        hint = ""
        if isinstance(DATABASE_ERROR, AttributeError) and "module 'dualad'" in str(DATABASE_ERROR):
            hint = (
                "\n  an OpInfo calls dualad.<name> of a function that is not exported: see "
                "test_every_public_op_is_exported"
            )
        pytest.fail(
            f"dualad.testing.opdb does not import: {type(DATABASE_ERROR).__name__}: "
            f"{DATABASE_ERROR}{hint}",
            pytrace=False,
        )


def _report(messages: list[str], what: str) -> None:
    """Fail with one line per missing piece (no traceback: the message says it all)."""
    if messages:
        pytest.fail(f"{what} ({len(messages)}):\n  " + "\n  ".join(messages), pytrace=False)


def test_every_differentiable_op_has_a_vjp():
    _report(missing_vjp(REGISTRY), "differentiable ops without a VJP rule")


def test_every_differentiable_op_has_a_jvp():
    _report(missing_jvp(REGISTRY), "differentiable ops without a JVP rule")


def test_every_op_has_a_batching_rule():
    _report(missing_batch_rule(REGISTRY, rules.LOOP_BATCHED), "ops without a batching rule")
    stale = sorted(rules.LOOP_BATCHED - set(REGISTRY))
    assert not stale, f"LOOP_BATCHED (dualad/vmap/rules.py) names unregistered ops: {stale}"


def test_every_op_is_covered_by_an_opinfo():
    _report(
        missing_opinfo(REGISTRY, _database(), _families()), "ops in no OpInfo of the op database"
    )


def test_opinfo_ops_are_registered():
    _report(unknown_opinfo_ops(REGISTRY, _database()), "OpInfo ops that are not registered")


def test_opinfo_differentiability_matches_the_ops():
    _report(differentiability_mismatches(REGISTRY, _database()), "OpInfos with the wrong mark")


def test_every_public_op_is_exported():
    _report(unexported_ops(_ops_modules(), INTERNAL), "ops whose public function is not exported")


def test_elementwise_ops_are_tensor_methods():
    _report(elementwise_ops_not_methods(ops.MODULES), "elementwise ops without a Tensor method")


def test_tensor_methods_are_attached():
    _report(methods_not_attached(ops.MODULES), "Tensor methods missing")


def test_exported_ops_have_docstrings():
    _report(undocumented(ops.MODULES, UNDOCUMENTED), "exported ops without a docstring")


@pytest.mark.parametrize(
    "name, fn", [pytest.param(name, fn, id=name) for name, fn in _unseen_docstrings(ops.MODULES)]
)
def test_docstring_examples_of_helper_made_ops_run(name, fn):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for test in doctest.DocTestFinder(recurse=False).find(fn, name, globs={}):
        runner.run(test, out=report.append)
    assert not runner.failures, f"{name}: docstring examples fail:\n" + "".join(report)


# ---------------------------------------------------------------------------------------------
# the checks themselves: an op registered with its impl alone gets one message per piece


def test_a_half_added_op_is_reported_piece_by_piece():
    half = OpDef("half_added", lambda xp, x: x)  # no rules, no OpInfo, not exported
    registry = {**REGISTRY, "half_added": half}
    module = ModuleType("dualad.ops.scratch")
    module.__file__ = str(_ops_dir() / "scratch.py")
    module.__all__, module.TENSOR_METHODS, module.INPLACE_METHODS = [], [], []
    module.half_added = unary_caller(half)
    infos, families = _database(), _families()
    checks = {
        "vjp": lambda r, m: missing_vjp(r),
        "jvp": lambda r, m: missing_jvp(r),
        "batch": lambda r, m: missing_batch_rule(r, rules.LOOP_BATCHED),
        "opinfo": lambda r, m: missing_opinfo(r, infos, families),
        "export": lambda r, m: unexported_ops(m, INTERNAL),
    }
    for check, run in checks.items():
        before = run(REGISTRY, _ops_modules())  # (empty unless the tests above fail too)
        messages = [m for m in run(registry, [*_ops_modules(), module]) if m not in before]
        assert len(messages) == 1 and messages[0].startswith("half_added"), (check, messages)
    # exported as a function only, without a docstring
    module.__all__.append("half_added")
    half.batch = _batching.elementwise
    assert unexported_ops([module]) == []
    (message,) = elementwise_ops_not_methods([module])
    assert "public.inplace" in message and "Tensor.half_added" in message
    (message,) = undocumented([module])
    assert message.startswith("dualad.half_added (dualad/ops/scratch.py) has no docstring")
