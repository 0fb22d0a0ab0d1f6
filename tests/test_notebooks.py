"""Every notebook runs top to bottom in a real Jupyter kernel (its code cells assert their
results), and is stored executed: every cell has an id and every code cell its outputs, so a
reader sees the results and figures without running anything, and the outputs are those of the
code as it stands (a digest of the code cells is stored with them).

The kernel is ipykernel on THIS interpreter (a kernelspec written to a temporary folder), so
the notebooks run in the environment that runs the tests, whatever kernels the machine has
installed. ``python tests/test_notebooks.py [NAME ...]`` executes the notebooks (or those
whose file name contains a NAME) and stores them with their outputs.
"""

import hashlib
import json
import pathlib
import sys
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "dualad-notebooks"
TIMEOUT_PER_CELL = 120  # seconds: far above what any cell needs, below a hung kernel


def sources_digest(notebook) -> str:
    """A digest of the code cells' sources: stored when a notebook is executed, so a cell edited
    afterwards (its stored outputs stale) is caught without running anything."""
    code = [cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "code"]
    code = ["".join(source) if isinstance(source, list) else source for source in code]
    return hashlib.sha256(json.dumps(code).encode()).hexdigest()


def execute(path: pathlib.Path):
    """The notebook at ``path`` executed top to bottom (an ``nbformat`` node).

    Raises ``nbclient.exceptions.CellExecutionError`` (with the cell and its traceback) when a
    cell raises, an assertion of the notebook included."""
    import nbformat
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as kernels:
        # argv: [sys.executable, "-m", "ipykernel_launcher", ...] of this interpreter
        write_kernel_spec(pathlib.Path(kernels) / KERNEL)
        specs = KernelSpecManager(kernel_dirs=[kernels], ensure_native_kernel=False)
        manager = KernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)
        client = NotebookClient(
            notebook,
            km=manager,
            timeout=TIMEOUT_PER_CELL,
            record_timing=False,
            resources={"metadata": {"path": str(path.parent)}},
        )
        client.execute()
    return notebook


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path):
    for module in ("nbclient", "ipykernel", "matplotlib"):
        pytest.importorskip(module, reason=f"{module} is missing: pip install -e '.[notebooks]'")
    execute(path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_executed(path):
    """Ids on every cell; every code cell run, in order, in one session, with its outputs kept
    (a cell may print nothing, but the notebook shows what it computed)."""
    notebook = json.loads(path.read_text())
    assert (notebook["nbformat"], notebook["nbformat_minor"]) >= (4, 5), "cell ids need 4.5"
    ids = [cell.get("id") for cell in notebook["cells"]]
    assert all(ids), f"{path.name}: cells without an id"
    assert len(set(ids)) == len(ids), f"{path.name}: repeated cell ids"
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    counts = [cell["execution_count"] for cell in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name}: not stored from one top-to-bottom run (execution counts {counts}); "
        "run `python tests/test_notebooks.py` to store it executed"
    )
    for cell in code:
        for output in cell["outputs"]:
            assert output["output_type"] != "error", f"{path.name}: a stored error"
    assert sum(len(cell["outputs"]) for cell in code) >= len(code) // 2, (
        f"{path.name}: most code cells show nothing; print or plot what they compute"
    )
    stored = notebook["metadata"].get("dualad", {}).get("executed_sources")
    assert stored == sources_digest(notebook), (
        f"{path.name}: code edited since its outputs were stored; "
        f"run `python tests/test_notebooks.py {path.stem}`"
    )


def test_plots_are_embedded():
    """The notebooks that draw show their figures as stored PNG images."""
    for path in NOTEBOOKS:
        text = path.read_text()
        if "matplotlib" in text:
            assert '"image/png"' in text, f"{path.name} draws but stores no figure"


def test_there_are_notebooks():
    assert NOTEBOOKS


def test_readme_lists_every_notebook():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Notebooks", 1)[1].split("\n## ", 1)[0]
    for path in NOTEBOOKS:
        assert f"`{path.stem}`" in section, f"README's Notebooks section misses {path.stem}"


def main(names: list[str]) -> None:
    """Execute the notebooks (those whose name contains one of ``names``) and store them."""
    import nbformat

    for path in NOTEBOOKS:
        if names and not any(name in path.name for name in names):
            continue
        start = time.perf_counter()
        notebook = execute(path)
        notebook.metadata["dualad"] = {"executed_sources": sources_digest(notebook)}
        nbformat.validate(notebook)
        nbformat.write(notebook, path)
        print(f"{path.name}: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
