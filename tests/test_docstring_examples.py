"""Every public function and class of dualad's public API has a docstring with a runnable example.

The API is walked namespace by namespace (``PUBLIC``): ``dualad`` itself (its public names: it
has no ``__all__``), ``dualad.autograd`` (with ``functional`` and ``graph``), ``dualad.func``,
forward mode (``dualad.fwd``, also ``dualad.autograd.forward_ad``), the ``dualad.vmap``
package, ``dualad.jit`` (``dualad.tracing``), ``dualad.testing``, ``dualad.linalg``,
``dualad.fft``, ``dualad.special``, ``dualad.nn.functional``, ``dualad.dask``, ``dualad.optimize``,
``dualad.utils.checkpoint``, ``dualad.compat.autograd`` and NumPy's namespace ``dualad.numpy``
(with ``linalg`` and ``fft``; its ufuncs are objects whose docstrings ``ufunc_table`` completes
with their examples). Each function and class found there must have a ``>>>`` example in its
docstring. Exceptions and warnings are exempt (they are raised, not called), and so are NumPy's
own objects that ``dualad.numpy`` re-exports (``float64``, ``dtype``: NumPy documents them).

The examples run as doctests: pytest's ``--doctest-modules`` collects those of the functions
and classes whose module holds them under a name (op functions made by ``unary``/``binary``/...
included: ``dualad/__init__.py`` renames their ``__module__`` to the module exporting them);
this file runs any example it would not collect, so no example goes unchecked.
"""

import doctest
import importlib
import inspect
import sys
from pathlib import Path

import dualad
import dualad.numpy

ROOT = Path(dualad.__file__).resolve().parent

PUBLIC = [
    "dualad",
    "dualad.autograd",
    "dualad.autograd.functional",
    "dualad.autograd.graph",
    "dualad.func",
    "dualad.fwd",
    "dualad.vmap",
    "dualad.tracing",
    "dualad.testing",
    "dualad.linalg",
    "dualad.fft",
    "dualad.special",
    "dualad.nn.functional",
    "dualad.dask",
    "dualad.optimize",
    "dualad.utils.checkpoint",
    "dualad.compat.autograd",
    "dualad.compat.autograd.test_util",
    "dualad.numpy",
    "dualad.numpy.linalg",
    "dualad.numpy.fft",
]


def _namespace(name: str):
    importlib.import_module(name)
    # (sys.modules: ``dualad.vmap`` the attribute is the vmap function, the package is here)
    return sys.modules[name]


def _public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return list(names)


def public_callables() -> dict[int, tuple[str, object]]:
    """The public functions and classes, each once (by identity), under its first public name."""
    found: dict[int, tuple[str, object]] = {}
    for name in PUBLIC:
        module = _namespace(name)
        for attr in _public_names(module):
            obj = getattr(module, attr)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            if inspect.isclass(obj) and issubclass(obj, (BaseException, Warning)):
                continue
            if inspect.isclass(obj) and obj.__module__ == "numpy":
                continue  # NumPy's own scalar types and dtype, re-exported by dualad.numpy
            found.setdefault(id(obj), (f"{name}.{attr}", obj))
    return found


CALLABLES = public_callables()


def test_the_walk_finds_the_api():
    names = {name for name, _ in CALLABLES.values()}
    # the transforms the issue names, and one of each kind (op function, class, facade)
    for expected in (
        "dualad.func.jacrev",
        "dualad.func.jacfwd",
        "dualad.func.hessian",
        "dualad.func.jvp",
        "dualad.func.vjp",
        "dualad.fwd.make_dual",
        "dualad.fwd.unpack_dual",
        "dualad.autograd.grad",
        "dualad.sin",
        "dualad.Tensor",
        "dualad.jit",
        "dualad.linalg.solve",
        "dualad.numpy.sum",
        "dualad.numpy.sin",
        "dualad.numpy.linalg.svd",
        "dualad.numpy.fft.fftfreq",
    ):
        assert expected in names, expected
    assert len(CALLABLES) > 600


def test_every_public_callable_has_an_example():
    missing = sorted(name for name, obj in CALLABLES.values() if ">>>" not in (obj.__doc__ or ""))
    assert not missing, (
        f"{len(missing)} public functions/classes without a `>>>` example in their docstring "
        "(add a minimal one that prints exactly what it shows):\n  " + "\n  ".join(missing)
    )


# the docstrings that modules of dualad hand to doctest in their ``__test__`` dict (the ufuncs
# of dualad.numpy: instances, which doctest does not collect from a module's names)
_IN_TEST_DICTS = {
    id(doc)
    for module in list(sys.modules.values())
    if getattr(module, "__name__", "").startswith("dualad")
    for doc in getattr(module, "__test__", {}).values()
}


def _collected_by_doctest_modules(obj) -> bool:
    """Whether ``--doctest-modules`` over dualad/ runs ``obj``'s examples: doctest looks at the
    names of each module's namespace and takes an object whose module (``inspect.getmodule``:
    its ``__module__``) is that module, and at each module's ``__test__`` dict."""
    if id(obj.__doc__) in _IN_TEST_DICTS:
        return True
    module = inspect.getmodule(obj)
    path = getattr(module, "__file__", None) or ""
    return Path(path).resolve().is_relative_to(ROOT) and any(
        v is obj for v in vars(module).values()
    )


UNCOLLECTED = [
    (name, obj)
    for name, obj in CALLABLES.values()
    if ">>>" in (obj.__doc__ or "") and not _collected_by_doctest_modules(obj)
]


def test_some_examples_are_collected_here():
    """(the test below must not be empty because the check above is wrong: the op functions
    made by ``unary``, whose ``__module__`` names the module exporting them, are collected)"""
    assert _collected_by_doctest_modules(dualad.sin)
    assert _collected_by_doctest_modules(dualad.func.jacrev)
    assert _collected_by_doctest_modules(dualad.numpy.sin)  # (ufunc_table's __test__)
    assert not _collected_by_doctest_modules(lambda: None)


def test_examples_that_doctest_modules_does_not_collect_run():
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for name, obj in UNCOLLECTED:
        for test in doctest.DocTestFinder(recurse=False).find(obj, name, globs={}):
            runner.run(test, out=report.append)
    assert not runner.failures, "docstring examples fail:\n" + "".join(report)


def test_tensor_methods_have_examples():
    """Tensor's methods have a ``>>>`` example; an in-place variant ``name_`` (made from its op)
    says which function it is the in-place version of (whose docstring holds the example)."""
    missing = []
    for name in dir(dualad.Tensor):
        method = getattr(dualad.Tensor, name, None)
        if name.startswith("_") or not callable(method) or isinstance(method, type):
            continue
        doc = method.__doc__ or ""
        if name.endswith("_") and doc.startswith("In-place version of ``"):  # (or an alias's)
            continue
        if ">>>" not in doc:
            missing.append(name)
    assert not missing, f"Tensor methods without an example: {missing}"
