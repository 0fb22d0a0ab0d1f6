"""gradcheck and gradgradcheck over the whole op database.

Every differentiable entry of ``dualad.testing.opdb.all_ops()``, every sample, in float64 and
(where the entry claims it) complex128, as a function of the sample's differentiable leaves:

- ``gradcheck`` in fast and in slow mode, each with the forward-mode check, the batched
  (``vmap`` over the VJP) and the batched forward (``vmap`` over the JVP) checks and the
  undefined-grad checks;
- ``gradgradcheck`` (twice-differentiable entries) in fast mode with forward-over-reverse and
  batched second derivatives; in slow mode on the first sample of each entry;
- the first sample again with non-contiguous (strided view) inputs.

The ``dev`` hypothesis profile (``DUALAD_HYPOTHESIS_PROFILE=dev``) widens the sweep: slow-mode
gradgradcheck on every sample, and ``DEV_SEEDS`` further draws of every entry's samples (new
values, same shapes), with non-contiguous inputs.

Tolerances are the entry's ``atol``/``rtol``; ``OpInfo.skips`` "fd" (finite differences) and
"gradgrad" turn the checks off for an entry, with the reason.
"""

from __future__ import annotations

import contextlib
import os
import warnings

import numpy as np
import pytest
from _helpers import case_id, replace_leaves, skip_if_requested

from dualad import autograd
from dualad._tensor import wrap
from dualad.testing._numeric import flatten_outputs
from dualad.testing.opdb import OpInfo, SampleInput, all_ops

DEV = os.environ.get("DUALAD_HYPOTHESIS_PROFILE", "ci") == "dev"
DEV_SEEDS = 4
DTYPES = ("float64", "complex128")
ALL_CHECKS = {
    "check_forward_ad": True,
    "check_batched_grad": True,
    "check_batched_forward_grad": True,
}

INFOS = [info for info in all_ops() if info.differentiable]


def _cases(*, first_only=False, twice=False, seeds=(None,)) -> list:
    params = []
    for info in INFOS:
        if twice and not info.twice_differentiable:
            continue
        for dtype in DTYPES:
            if dtype not in info.dtypes:
                continue
            for seed in seeds:
                rng = None if seed is None else np.random.default_rng(seed)
                samples = info.sample_inputs(dtype, rng)
                for index, sample in enumerate(samples[:1] if first_only else samples):
                    name = case_id(info, dtype, index, sample)
                    name = name if seed is None else f"{name}-seed{seed}"
                    params.append(pytest.param(info, dtype, sample, id=name))
    return params


ALL_CASES = _cases()
TWICE_CASES = _cases(twice=True)
# slow-mode second derivatives that take 10-80 s each (matrix functions through nested block
# matrices, LU's rules of rules in complex): marked slow, so the default run stays short; the
# fast mode and every other check still run them by default
_SLOW_SECOND_ORDER = {"linalg.fractional_matrix_power", "lu", "lu_solve"}
SLOW_TWICE_CASES = [
    pytest.param(*case.values, id=case.id, marks=pytest.mark.slow)
    if case.values[0].name in _SLOW_SECOND_ORDER
    else case
    for case in (TWICE_CASES if DEV else _cases(twice=True, first_only=True))
]
FIRST_CASES = _cases(first_only=True)
# the batched sample of fractional_matrix_power in fast mode (25 s under load; the same
# per-matrix rules as its unbatched samples, which run by default) runs with --runslow
FAST_TWICE_CASES = [
    pytest.param(*case.values, id=case.id, marks=pytest.mark.slow)
    if case.values[0].name == "linalg.fractional_matrix_power" and "batch" in case.id
    else case
    for case in TWICE_CASES
]
DEV_CASES = (
    _cases(seeds=range(1, DEV_SEEDS + 1))
    if DEV
    else [pytest.param(None, None, None, id="dev-profile-only", marks=pytest.mark.skip("dev"))]
)


def _strided(array: np.ndarray) -> np.ndarray:
    """The same values as a non-contiguous view (every other element of a wider buffer)."""
    if array.ndim == 0:
        return array.copy()
    wide = np.zeros((*array.shape[:-1], 2 * array.shape[-1]), array.dtype)
    wide[..., ::2] = array
    return wide[..., ::2]


def as_function(info: OpInfo, sample: SampleInput, *, contiguous: bool = True):
    """``(fn, inputs)``: the entry as a function of fresh leaf tensors that require grad
    (other arguments fixed), its outputs flattened into a tuple."""
    args, kwargs, leaves = sample.tensors(requires_grad=False)
    if not leaves:
        pytest.skip(f"{info.name}: the sample has no differentiable input")

    def fn(*xs):
        call_args, call_kwargs = replace_leaves(args, kwargs, leaves, xs)
        return tuple(flatten_outputs(info.fn(*call_args, **call_kwargs)))

    copy = np.copy if contiguous else _strided
    inputs = tuple(wrap(copy(leaf.detach().numpy())).requires_grad_() for leaf in leaves)
    return fn, inputs


@contextlib.contextmanager
def _quiet_if_not_finite(inputs):
    """Samples with infinite values (nan_to_num): gradcheck's complex split rebuilds
    ``x + 1j * y``, and ``inf * 1j`` has a NaN real part (IEEE, as in PyTorch); NumPy warns."""
    with warnings.catch_warnings():
        if not all(np.isfinite(x.detach().numpy()).all() for x in inputs):
            warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        yield


def _gradcheck(info, dtype, sample, *, fast_mode, contiguous=True):
    skip_if_requested(info, dtype, "fd")
    fn, inputs = as_function(info, sample, contiguous=contiguous)
    with _quiet_if_not_finite(inputs):
        assert autograd.gradcheck(
            fn, inputs, fast_mode=fast_mode, atol=info.atol, rtol=info.rtol, **ALL_CHECKS
        )


def _gradgradcheck(info, dtype, sample, *, fast_mode):
    skip_if_requested(info, dtype, "fd", "gradgrad")
    fn, inputs = as_function(info, sample)
    with _quiet_if_not_finite(inputs):
        assert autograd.gradgradcheck(
            fn,
            inputs,
            fast_mode=fast_mode,
            check_fwd_over_rev=True,
            check_batched_grad=True,
            atol=info.atol,
            rtol=info.rtol,
        )


@pytest.mark.parametrize("info, dtype, sample", ALL_CASES)
def test_gradcheck_fast(info, dtype, sample):
    _gradcheck(info, dtype, sample, fast_mode=True)


@pytest.mark.parametrize("info, dtype, sample", ALL_CASES)
def test_gradcheck_slow(info, dtype, sample):
    _gradcheck(info, dtype, sample, fast_mode=False)


@pytest.mark.parametrize("info, dtype, sample", FIRST_CASES)
def test_gradcheck_non_contiguous_inputs(info, dtype, sample):
    _gradcheck(info, dtype, sample, fast_mode=True, contiguous=False)


@pytest.mark.parametrize("info, dtype, sample", FAST_TWICE_CASES)
def test_gradgradcheck_fast(info, dtype, sample):
    _gradgradcheck(info, dtype, sample, fast_mode=True)


@pytest.mark.parametrize("info, dtype, sample", SLOW_TWICE_CASES)
def test_gradgradcheck_slow(info, dtype, sample):
    _gradgradcheck(info, dtype, sample, fast_mode=False)


@pytest.mark.parametrize("info, dtype, sample", DEV_CASES)
def test_gradcheck_more_samples(info, dtype, sample):
    """dev profile only: new draws of every sample, strided, both modes and second order."""
    _gradcheck(info, dtype, sample, fast_mode=True, contiguous=False)
    _gradcheck(info, dtype, sample, fast_mode=False)
    if info.twice_differentiable:
        _gradgradcheck(info, dtype, sample, fast_mode=True)


def test_the_sweep_covers_the_op_database():
    """Every differentiable entry is checked, complex entries in complex128 too."""
    checked = {(case.values[0].name, case.values[1]) for case in ALL_CASES}
    for info in INFOS:
        for dtype in DTYPES:
            if dtype in info.dtypes:
                assert (info.name, dtype) in checked, (info.name, dtype)
    assert len({name for name, _ in checked}) == len(INFOS) > 100
    assert sum(1 for _, dtype in checked if dtype == "complex128") > 80
    assert len(TWICE_CASES) > 0.8 * len(ALL_CASES)
