import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from dualad import _backend
from dualad.testing import fake_cupy
from dualad.testing.device import expected_failure, select_cupy

# DUALAD_TEST_DEVICE=cuda: the op-database tests run on "cuda", with the CuPy stand-in where
# CuPy is missing or DUALAD_FAKE_CUPY=1 (installed before anything imports cupy); docs/gpu.md
CUPY_IN_USE = select_cupy()

# CI runs the same examples on every run (derandomize: a failure is reproducible and a run
# cannot fail at random); the dev profile explores new examples each run
settings.register_profile(
    "ci",
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("DUALAD_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def gpu_available() -> bool:
    """True when CuPy imports and sees a CUDA device (tests marked ``gpu`` run only then)."""
    from dualad._backend import cuda_is_available

    return cuda_is_available()


def pytest_addoption(parser):
    parser.addoption(
        "--runslow",
        action="store_true",
        default=False,
        help="run the tests marked slow (also run with DUALAD_HYPOTHESIS_PROFILE=dev)",
    )


def run_slow(config) -> bool:
    """Whether tests marked ``slow`` run: with ``--runslow`` or the ``dev`` profile."""
    return config.getoption("--runslow") or os.environ.get("DUALAD_HYPOTHESIS_PROFILE") == "dev"


def _mark_expected_failures(items) -> None:
    """On a "cuda" test device, the tests of ops listed in CUDA_EXPECTED_FAILURES (and
    CUDA_HIGHER_ORDER_FAILURES) are expected to fail with the NotImplementedError that names
    what CuPy lacks, those of CUDA_OTHER_RESULTS with an AssertionError (never silent skips)."""
    for item in items:
        info = getattr(item, "callspec", None) and item.callspec.params.get("info")
        if item.originalname == "test_op_on_cuda_equals_cpu_without_transfers":
            continue  # (that test asserts the NotImplementedError itself)
        expected = expected_failure(getattr(info, "name", None) or "", item.originalname)
        if expected:
            reason, error = expected
            item.add_marker(pytest.mark.xfail(reason=reason, raises=error))


def pytest_report_header(config):
    if CUPY_IN_USE:
        return f"dualad test device: {os.environ.get('DUALAD_TEST_DEVICE')} ({CUPY_IN_USE} CuPy)"
    return None


def pytest_collection_modifyitems(config, items):
    if CUPY_IN_USE:
        _mark_expected_failures(items)
    gpu_tests = [item for item in items if item.get_closest_marker("gpu") is not None]
    if gpu_tests and not gpu_available():
        skip = pytest.mark.skip(reason="needs CuPy and a CUDA GPU")
        for item in gpu_tests:
            item.add_marker(skip)
    if not run_slow(config):
        skip = pytest.mark.skip(reason="slow: run with --runslow or DUALAD_HYPOTHESIS_PROFILE=dev")
        for item in items:
            if item.get_closest_marker("slow") is not None:
                item.add_marker(skip)


@pytest.fixture(scope="module")
def cuda_standin():
    """ "cuda" for the tests of a module: the CuPy stand-in (``dualad.testing.fake_cupy``),
    taken out again after the module unless the whole run uses it; the real CuPy where the
    suite runs on a GPU (DUALAD_TEST_DEVICE=cuda with CuPy). Yields whether it is the stand-in."""
    if CUPY_IN_USE == "real":
        yield False
        return
    was = fake_cupy.is_installed()
    fake_cupy.install()
    _backend.forget_cupy()
    yield True
    if not was:
        fake_cupy.uninstall()
        _backend.forget_cupy()


SKIP_REASON_LINES = 40  # the summary's length (pytest -rs lists every skip site)


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter):
    """Why tests were skipped: one line per reason with its count, most frequent first (the
    default run skips a few thousand parametrized cases: GPU-only, slow, and cases an op's
    sample or dtype does not apply to)."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if r.skipped]
    if not skipped:
        return
    counts = Counter(_skip_reason(report) for report in skipped)
    terminalreporter.section(f"{len(skipped)} skipped, by reason", sep="-")
    shown = counts.most_common(SKIP_REASON_LINES)
    for reason, count in shown:
        terminalreporter.write_line(f"{count:6d}  {reason}")
    rest = len(counts) - len(shown)
    if rest:
        rest_count = len(skipped) - sum(count for _, count in shown)
        terminalreporter.write_line(
            f"{rest_count:6d}  ({rest} more reasons, each rarer: run with -rs to list every one)"
        )


@pytest.fixture
def float32_default():
    """Run the test with float32 as the default dtype (float64 restored afterwards)."""
    import dualad

    dualad.set_default_dtype(dualad.float32)
    try:
        yield
    finally:
        dualad.set_default_dtype(dualad.float64)
