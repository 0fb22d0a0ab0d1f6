import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

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


@pytest.fixture
def float32_default():
    """Run the test with float32 as the default dtype (float64 restored afterwards)."""
    import dualad

    dualad.set_default_dtype(dualad.float32)
    try:
        yield
    finally:
        dualad.set_default_dtype(dualad.float64)
