"""Every notebook runs top to bottom (its code cells assert their results)."""

import json
import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    cells = json.loads(path.read_text())["cells"]
    namespace: dict = {"__name__": "__notebook__"}
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            exec(compile(source, f"{path.name}[cell {index}]", "exec"), namespace)


def test_there_are_notebooks():
    assert NOTEBOOKS


def test_readme_lists_every_notebook():
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Notebooks", 1)[1].split("\n## ", 1)[0]
    for path in NOTEBOOKS:
        assert f"`{path.stem}`" in section, f"README's Notebooks section misses {path.stem}"
