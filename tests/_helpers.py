"""Helpers shared by the op-database-driven test files: case ids, skips, tolerant comparisons
with readable failure messages, and running an entry on its sample's leaves."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dualad
from dualad import fwd
from dualad.testing._numeric import (
    as_numpy,
    flatten_outputs,
    is_differentiable_dtype,
    numerical_jvp,
    random_like,
    sample_function,
    to_tensor,
)
from dualad.testing.opdb import OpInfo, SampleInput

HIGH_PRECISION = ("float64", "complex128")
# relative tolerance of derivatives computed in low precision against float64 finite differences
LOW_PRECISION_RTOL = {"float32": 1e-3, "complex64": 1e-3, "float16": 1e-2}
FD_EPS = 1e-6


def case_id(info: OpInfo, dtype: str, index: int, sample: SampleInput) -> str:
    note = re.sub(r"[^A-Za-z0-9_.+-]+", "_", sample.note)[:30] if sample.note else ""
    return f"{info.name}-{dtype}-{index}" + (f"-{note}" if note else "")


def differentiable_case(info: OpInfo, dtype: str) -> bool:
    return info.differentiable and is_differentiable_dtype(dtype)


def skip_if_requested(info: OpInfo, dtype: str, *checks: str) -> None:
    """Skip when ``info.skips`` names one of ``checks`` or the dtype's check ("float32",
    "complex", ...; none for float64)."""
    dtype = np.dtype(dtype)
    dtype_check = "complex" if dtype.kind == "c" else dtype.name if dtype.name != "float64" else ""
    for name in (dtype_check, *checks):
        reason = info.skip_reason(name) if name else None
        if reason:
            pytest.skip(f"{info.name}: skips[{name!r}]: {reason}")


def is_low_precision(dtype: str) -> bool:
    return np.dtype(dtype).name in LOW_PRECISION_RTOL


def describe(info: OpInfo, sample: SampleInput) -> str:
    shapes = []
    for a in sample.args:
        if isinstance(a, np.ndarray):
            shapes.append(f"array{a.shape}:{a.dtype}")
        elif isinstance(a, (list, tuple)) and a and all(isinstance(v, np.ndarray) for v in a):
            shapes.append("[" + ", ".join(f"array{v.shape}:{v.dtype}" for v in a) + "]")
        else:
            shapes.append(repr(a))
    kwargs = {
        k: (f"array{v.shape}" if isinstance(v, np.ndarray) else v) for k, v in sample.kwargs.items()
    }
    note = f" ({sample.note})" if sample.note else ""
    return f"{info.name}({', '.join(shapes)}, **{kwargs}) diff={sample.diff}{note}"


def assert_close(actual, expected, *, rtol: float, atol: float, what: str) -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
        return
    error = np.abs(actual - expected)
    raise AssertionError(
        f"{what}: max abs error {np.nanmax(error):.3g} (rtol={rtol}, atol={atol})\n"
        f"actual:\n{actual}\nexpected:\n{expected}"
    )


def assert_low_precision_close(actual, expected, *, rtol: float, what: str) -> None:
    """Relative comparison of a low-precision result with a float64 one, scaled by its size."""
    expected = np.asarray(expected)
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    assert_close(actual, expected, rtol=rtol, atol=rtol * max(scale, 1e-2), what=what)


# ---------------------------------------------------------------------------------------------
# per-family op tests (tests/ops/test_shape.py, tests/ops/test_indexing.py)


def assert_values_close(actual, expected, rtol=1e-7, atol=1e-9, what=""):
    """``actual`` (tensor or array) has ``expected``'s shape and values."""
    actual = as_numpy(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def family_cases(infos, dtypes) -> list:
    """``(info, dtype, sample)`` params for every entry of ``infos`` in each claimed ``dtypes``."""
    out = []
    for info in infos:
        for dtype in dtypes:
            if dtype not in info.dtypes:
                continue
            for k, sample in enumerate(info.sample_inputs(dtype)):
                out.append(pytest.param(info, dtype, sample, id=f"{info.name}-{dtype}-{k}"))
    return out


def function_of_leaves(info: OpInfo, sample: SampleInput):
    """``info.fn`` on ``sample`` as a function of its leaf arrays (for finite differences)."""
    # numerical_jvp perturbs 0-d arrays into NumPy scalars; give the op arrays again
    evaluate = sample_function(info.fn, sample)
    return lambda *arrays: evaluate(*(np.asarray(a) for a in arrays))


def replace_leaves(args, kwargs, leaves, duals):
    """``args, kwargs`` with each of ``leaves`` (found by identity, also inside lists) swapped
    for the matching entry of ``duals``."""
    swap = {id(leaf): dual for leaf, dual in zip(leaves, duals)}

    def replace(value):
        if isinstance(value, (list, tuple)) and not isinstance(value, dualad.Tensor):
            return type(value)(replace(v) for v in value)
        return swap.get(id(value), value)

    return tuple(replace(a) for a in args), {k: replace(v) for k, v in kwargs.items()}


def forward_tangents(info: OpInfo, sample: SampleInput, rng: np.random.Generator):
    """Forward mode along random tangents of the sample's leaves: ``(tangents, expected,
    outputs)``, the output tangents (None where an output has none), their central-difference
    reference and the outputs."""
    arrays = sample.leaves()
    tangents = [random_like(rng, a) for a in arrays]
    expected = numerical_jvp(function_of_leaves(info, sample), arrays, tangents)
    with fwd.dual_level():
        args, kwargs, leaves = sample.tensors(requires_grad=False)
        duals = [fwd.make_dual(leaf, to_tensor(t)) for leaf, t in zip(leaves, tangents)]
        args, kwargs = replace_leaves(args, kwargs, leaves, duals)
        outputs = flatten_outputs(info.fn(*args, **kwargs))
        actual = [fwd.unpack_dual(o).tangent for o in outputs]
    return actual, expected, outputs


def run_pytest(arguments: list, env: dict) -> subprocess.CompletedProcess:
    """A child pytest run from the repository's root with ``env`` (captured, 20 minutes at
    most): for tests of a mode that must be set before dualad is imported."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *arguments],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
