"""The device the op-database tests run on, and the CuPy they run with.

``DUALAD_TEST_DEVICE=cuda`` makes the test helpers (``dualad.testing._numeric.to_tensor``,
``sample_to_tensors``, ``SampleInput.tensors``) put the samples' arrays on "cuda"; references and
finite differences stay NumPy (``as_numpy`` copies results back). CuPy is the real one when it
imports; otherwise, or with ``DUALAD_FAKE_CUPY=1``, the stand-in ``dualad.testing.fake_cupy``
(``select_cupy()``, called by the test suite's conftest before anything imports CuPy).

``CUDA_EXPECTED_FAILURES`` lists the ops that legitimately cannot run on CuPy, each with why;
the device test mode marks their tests as expected failures (never silent skips).

>>> test_device() in ("cpu", "cuda")
True
>>> sorted(CUDA_EXPECTED_FAILURES)[:1]
['special.airy_ai']
"""

from __future__ import annotations

import importlib.util
import os

from .._backend import Device, forget_cupy
from . import fake_cupy

__all__ = [
    "CUDA_EXPECTED_FAILURES",
    "ENV_DEVICE",
    "ENV_FAKE_CUPY",
    "expected_failure",
    "select_cupy",
    "test_device",
    "use_fake_cupy",
]

ENV_DEVICE = "DUALAD_TEST_DEVICE"
ENV_FAKE_CUPY = "DUALAD_FAKE_CUPY"

_NO_CUPYX = "cupyx.scipy.special has no {}: dualad raises rather than compute on the host"

# op name (as in the op database) -> why it cannot run on CuPy
CUDA_EXPECTED_FAILURES: dict[str, str] = {}


def _no_cupyx(names: dict[str, str]) -> None:
    for op, function in names.items():
        CUDA_EXPECTED_FAILURES[op] = _NO_CUPYX.format(function)


_no_cupyx({"special.airy_ai": "airy"})


def test_device() -> str:
    """The device the test helpers put samples on: ``$DUALAD_TEST_DEVICE``, "cpu" by default."""
    return str(Device(os.environ.get(ENV_DEVICE) or "cpu"))


def use_fake_cupy() -> bool:
    """Whether the stand-in replaces CuPy: ``DUALAD_FAKE_CUPY=1``, or a "cuda" test device
    without an importable CuPy."""
    flag = os.environ.get(ENV_FAKE_CUPY, "")
    if flag:
        return flag not in ("0", "false", "no")
    return test_device() != "cpu" and importlib.util.find_spec("cupy") is None


def select_cupy() -> str | None:
    """Install the stand-in when ``use_fake_cupy()``; returns "fake", "real" (a "cuda" test
    device with CuPy) or None (cpu)."""
    if use_fake_cupy():
        fake_cupy.install()
        forget_cupy()
        return "fake"
    return "real" if test_device() != "cpu" else None


def expected_failure(name: str) -> str | None:
    """Why the op ``name`` cannot run on the test device (None: it must pass there)."""
    if test_device() == "cpu":
        return None
    return CUDA_EXPECTED_FAILURES.get(name)
