"""The composition fuzz test with "cuda" semantics (the CuPy stand-in), in the default run.

Issue 17 item 4: the op database and the composition tests run with ``device="cuda"``
semantics in CI, with no GPU. The op database is checked in-process by
``tests/ops/test_cuda_opdb.py`` (every op: forward, VJP, JVP, vmap on "cuda", no host
transfer). The composition fuzz test picks its device when it is imported, so it runs here in
a child pytest with ``DUALAD_TEST_DEVICE=cuda`` and the stand-in (``DUALAD_FAKE_CUPY=1``); the
same command with real CuPy runs it on a GPU (docs/gpu.md).
"""

import os
import pathlib

import pytest
from _helpers import run_pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_composition_fuzz_with_cuda_semantics():
    if os.environ.get("DUALAD_TEST_DEVICE"):
        pytest.skip("this run is on a test device already: the fuzz test runs in it directly")
    env = {**os.environ, "DUALAD_TEST_DEVICE": "cuda", "DUALAD_FAKE_CUPY": "1"}
    run = run_pytest(["-o", "addopts=", str(ROOT / "tests" / "test_composition_fuzz.py")], env)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "dualad test device: cuda (fake CuPy)" in run.stdout
