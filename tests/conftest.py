import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow]
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


def pytest_collection_modifyitems(config, items):
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
