"""ruff runs with the tests (the `test` extra installs it), so a lint or format error fails CI
like a failing test: `ruff check` and `ruff format --check` over the package, the tests and the
benchmarks, with the settings of pyproject.toml."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["dualad", "tests", "benchmarks"]

pytest.importorskip("ruff", reason="ruff is not installed (pip install -e '.[test]')")


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff_is_clean(command):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"ruff {' '.join(command)}:\n{result.stdout}{result.stderr}"
