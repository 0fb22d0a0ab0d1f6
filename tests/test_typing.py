"""dualad's types as type checkers see them (``py.typed``): mypy over the package and over a
user's code (``tests/typing/usage_check.py``), the generated stubs up to date, and the public
functions fully annotated."""

import importlib.util
import inspect
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest

import dualad
import dualad.autograd.functional
import dualad.linalg
import dualad.nn.functional
import dualad.special
import dualad.testing
from dualad import ops

pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e .[test]")

ROOT = Path(__file__).resolve().parents[1]
TYPING = ROOT / "tests" / "typing"


def _load(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, TYPING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mypy_passes_on_dualad_and_a_users_code(tmp_path):
    """The package under its [tool.mypy] configuration, and a user's strict code using it.
    A fresh cache, as on a clean CI clone (about 15 s on one core)."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--cache-dir",
            str(tmp_path / "mypy_cache"),
            "dualad",
            str(TYPING / "usage_check.py"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_usage_check_runs():
    """What usage_check.py claims statically holds at run time."""
    _load("usage_check").main()


def test_stubs_match_the_runtime():
    """The generated stubs list exactly what dualad builds at import time."""
    stubgen = _load("stubgen")
    facades = [(stubgen.facade_stub_path(n), stubgen.facade_stub(n)) for n in stubgen.FACADES]
    for path, text in (
        (stubgen.NAMES_STUB, stubgen.names_stub()),
        (stubgen.MEMBERS_STUB, stubgen.members_stub()),
        (stubgen.NUMPY_STUB, stubgen.numpy_stub()),
        *facades,
        *[(stubgen.module_stub_path(n), stubgen.module_stub(n)) for n in stubgen.NUMPY_MODULES],
    ):
        assert path.read_text() == stubgen.formatted(text, path), (
            f"{path.relative_to(ROOT)} is out of date: run `python tests/typing/stubgen.py`"
        )


# the namespaces whose hand-written functions are annotated in full (dualad.linalg, special and
# nn.functional are not: type checkers read their functions' declarations in generated stubs)
NAMESPACES = (
    dualad,
    dualad.fft,
    dualad.func,
    dualad.autograd,
    dualad.autograd.functional,
    dualad.fwd,
    dualad.testing,
)


def _public_functions():
    made_by_registry = set(ops.__all__)
    for namespace in NAMESPACES:
        for name in getattr(namespace, "__all__", None) or dir(namespace):
            fn = getattr(namespace, name, None)
            if name.startswith("_") or not inspect.isfunction(fn):
                continue
            if namespace is dualad and name in made_by_registry:
                continue
            yield f"{namespace.__name__}.{name}", fn


def test_public_functions_are_annotated():
    missing = []
    for qualname, fn in _public_functions():
        signature = inspect.signature(fn)
        unannotated = [
            p.name for p in signature.parameters.values() if p.annotation is inspect.Parameter.empty
        ]
        if signature.return_annotation is inspect.Signature.empty:
            unannotated.append("return")
        if unannotated:
            missing.append(f"{qualname}: {', '.join(unannotated)}")
    assert not missing, "public functions without complete annotations:\n" + "\n".join(missing)


def test_the_check_sees_the_public_functions():
    names = {name for name, _ in _public_functions()}
    assert {"dualad.tensor", "dualad.func.jacrev", "dualad.autograd.grad", "dualad.jit"} <= names


def test_declared_results_hold_at_run_time():
    """The result types the generated stubs declare (Tensor unless stubgen's RETURNS says
    otherwise) are what the op database's samples get: every public function it calls by name."""
    from dualad.testing.opdb import all_ops

    stubgen = _load("stubgen")
    declared = {}
    for path in ("dualad", *stubgen.FACADES, *stubgen.NUMPY_MODULES):
        namespace = sys.modules[path]
        for name in getattr(namespace, "__all__", None) or ops.__all__:
            declared.setdefault(id(getattr(namespace, name)), f"{path}.{name}")
    other = {id(stubgen._resolve(k)): v for k, v in stubgen.RETURNS.items()}
    varies = {id(stubgen._resolve(k)) for k in (*stubgen.OVERLOADS, *stubgen.UNTYPED)}
    checked = 0
    for info in all_ops():
        if id(info.fn) not in declared or id(info.fn) in varies:
            continue
        args, kwargs, _ = info.sample_inputs(info.dtypes[0])[0].tensors(requires_grad=False)
        result = info.fn(*args, **kwargs)
        expected = other.get(id(info.fn), "Tensor")
        if expected.startswith("dualad."):
            assert type(result) is stubgen._resolve(expected), declared[id(info.fn)]
        elif expected.startswith("tuple"):
            assert isinstance(result, tuple), declared[id(info.fn)]
            assert all(isinstance(r, dualad.Tensor) for r in result), declared[id(info.fn)]
        else:
            assert isinstance(result, dualad.Tensor), (declared[id(info.fn)], type(result))
        checked += 1
    assert checked > 300, checked


def _called(name, fn, candidates):
    """``fn`` called with the first of ``candidates`` (argument lists) it accepts."""
    for args in candidates:
        try:
            with warnings.catch_warnings():  # (arccosh(1.5) is fine, arcsin(1.5) is nan)
                warnings.simplefilter("ignore", RuntimeWarning)
                return fn(*args)
        except (TypeError, ValueError, IndexError):
            continue
    raise AssertionError(f"{name}: no input found to call it with")


def _holds(name, result, expected, module):
    """``result`` has the type a stub declares with ``expected``."""
    if expected == "Tensor":
        assert isinstance(result, dualad.Tensor), (name, type(result))
    elif expected.startswith("tuple["):
        assert isinstance(result, tuple), (name, expected)
        assert all(isinstance(r, dualad.Tensor) for r in result), (name, expected)
        if "..." not in expected:
            assert len(result) == expected.count("Tensor"), (name, expected)
    else:
        stubgen = _load("stubgen")
        cls = stubgen._resolve(expected) if "." in expected else getattr(module, expected)
        assert type(result) is cls, (name, expected)
        assert all(isinstance(r, dualad.Tensor) for r in result), (name, expected)


def test_numpy_ufunc_results_hold_at_run_time():
    """``dualad/numpy/__init__.pyi`` types a ufunc's call by its ``nout``: one Tensor or a
    tuple of two."""
    import dualad.numpy as dnp

    stubgen = _load("stubgen")
    floats, ints, matrix = dualad.tensor([1.5, 2.5]), dualad.tensor([3, 5]), dualad.eye(2)
    for name, ufunc in vars(dnp).items():
        if isinstance(ufunc, dnp.ufunc):
            # (inputs in the ufunc's domain: integer-only ufuncs, matvec, vecmat)
            candidates = [[floats] * ufunc.nin, [ints] * ufunc.nin, [matrix, floats]]
            result = _called(name, ufunc, [*candidates, [floats, matrix]])
            _holds(name, result, stubgen.UFUNC_RESULTS[ufunc.nout], dnp)


def test_numpy_submodule_results_hold_at_run_time():
    """The result types ``dualad/numpy/linalg.pyi`` and ``fft.pyi`` declare hold for every
    function called with a matrix, a vector or sizes (the cases overloads tell apart are in
    tests/typing/usage_check.py)."""
    stubgen = _load("stubgen")
    other = {id(stubgen._resolve(k)): v for k, v in stubgen.RETURNS.items()}
    overloaded = {id(stubgen._resolve(k)) for k in stubgen.OVERLOADS}
    spd, vector = dualad.tensor([[2.0, 0.5], [0.5, 1.0]]), dualad.tensor([1.0, 2.0])
    for namespace in stubgen.NUMPY_MODULES:
        module = sys.modules[namespace]
        for name in module.__all__:
            fn = getattr(module, name)
            if id(fn) in overloaded:
                continue
            n = sum(
                p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                for p in inspect.signature(fn).parameters.values()
            )
            candidates = [[spd] * n, [vector] * n, [4] * n, [spd, vector], [spd, 2], [[spd, spd]]]
            candidates.append([dualad.tensor([1.0, 2.0, 3.0])] * n)  # (cross)
            result = _called(f"{namespace}.{name}", fn, [c for c in candidates if len(c) == n])
            _holds(f"{namespace}.{name}", result, other.get(id(fn), "Tensor"), module)
