"""The documentation site builds in strict mode: ``mkdocs build --strict`` over ``mkdocs.yml``
(the guides in ``docs/`` and the API reference that mkdocstrings renders from the docstrings).
A broken link between pages, a page missing from the nav, an anchor that does not exist or an
API reference naming an object that is not there fails the build, and with it this test.
The `test` extra installs mkdocs, mkdocs-material and mkdocstrings; the build takes seconds.
The guides' Python examples run too (``test_guide_examples_run``), with or without mkdocs."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the guides whose ```python blocks run here, each page's blocks in order in one namespace (they
# check their own results with asserts); a block starting with "# not run" shows another
# library's code. (docs/dask.md starts a local cluster and docs/sparse_jacobians.md times
# large problems: their code is tested by tests/dask and tests/func.)
GUIDES = [
    "index.md",
    "getting_started.md",
    "guide/engines.md",
    "guide/jit.md",
    "migration/numpy.md",
    "migration/autograd.md",
    "migration/jax.md",
    "migration/pytorch.md",
]


@pytest.mark.parametrize("page", GUIDES)
def test_guide_examples_run(page):
    path = ROOT / "docs" / page
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)
    assert blocks, f"{page} shows no Python example"
    namespace: dict = {}
    for i, block in enumerate(blocks):
        if block.startswith("# not run"):
            continue
        exec(compile(block, f"{path}[block {i}]", "exec"), namespace)


def _need_mkdocs() -> None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(
            module,
            reason=f"{module} is not installed: the docs site needs pip install -e '.[docs]' "
            "(the test extra includes it)",
        )


def _fence_module():
    """``docs/_griffe_doctest.py`` (the griffe extension mkdocs.yml loads; not a package)."""
    _need_mkdocs()
    spec = importlib.util.spec_from_file_location(
        "_griffe_doctest", ROOT / "docs/_griffe_doctest.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_site_builds_in_strict_mode(tmp_path):
    _need_mkdocs()
    env = dict(os.environ)
    # the dualad of this checkout (not another installed copy) is the one documented
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["NO_MKDOCS_2_WARNING"] = "1"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}{result.stderr}"
    # the API reference holds the docstrings, their examples fenced as code (not block quotes)
    page = (tmp_path / "site/api/func/index.html").read_text()
    assert "jacrev" in page and "<blockquote>" not in page
    assert page.count('class="highlight') >= 12  # (one per transform at least)


def test_doctest_examples_are_fenced():
    fence = _fence_module().fence_doctests
    text = "Sine.\n\n>>> import dualad\n>>> dualad.sin(\n...     0.0)\ntensor(0.)\n\nMore prose."
    assert fence(text) == (
        "Sine.\n\n```pycon\n>>> import dualad\n>>> dualad.sin(\n...     0.0)\ntensor(0.)\n```\n"
        "\nMore prose."
    )
    # an example that ends the docstring is closed too; indented examples keep their indent
    assert fence("    >>> 1 + 1\n    2") == "```pycon\n    >>> 1 + 1\n    2\n```"
