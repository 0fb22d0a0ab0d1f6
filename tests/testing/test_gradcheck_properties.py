"""Property tests with ``dualad.testing``: gradcheck and gradgradcheck (the test-suite wrappers:
fast mode, batched gradients) on random programs and on op-database entries with new sample
values, drawn by hypothesis. The ``ci`` profile draws a few examples, ``dev``
(``DUALAD_HYPOTHESIS_PROFILE=dev``) many."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

import dualad
from dualad.testing import gradcheck, gradgradcheck
from dualad.testing import strategies as ds
from dualad.testing._numeric import flatten_outputs
from tests._helpers import replace_leaves

ALL_CHECKS = {"check_forward_ad": True, "check_batched_forward_grad": True}


@given(ds.programs(), ds.arrays(shape=ds.shapes(max_dims=2, max_side=3)), st.booleans())
def test_gradcheck_passes_on_random_programs(program, values, fast_mode):
    x = dualad.tensor(values, requires_grad=True)
    assert gradcheck(program, (x,), fast_mode=fast_mode, **ALL_CHECKS)
    assert gradgradcheck(program, (x,), fast_mode=fast_mode, check_fwd_over_rev=True)


@given(ds.ops(), st.data())
def test_gradcheck_passes_on_new_samples_of_drawn_ops(info, data):
    assume(not info.skip_reason("fd"))
    dtypes = [d for d in ("float64", "complex128") if d in info.dtypes]
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    samples = info.sample_inputs(dtype, np.random.default_rng(seed))
    sample = data.draw(st.sampled_from(samples), label="sample")
    args, kwargs, leaves = sample.tensors(requires_grad=False)
    if not leaves:
        return

    def fn(*xs):
        call_args, call_kwargs = replace_leaves(args, kwargs, leaves, xs)
        return tuple(flatten_outputs(info.fn(*call_args, **call_kwargs)))

    inputs = tuple(leaf.detach().clone().requires_grad_() for leaf in leaves)
    tolerances = {"atol": info.atol, "rtol": info.rtol}
    with warnings.catch_warnings():
        # nan_to_num's samples hold infinities (gradcheck's complex split makes inf * 1j)
        warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
        assert gradcheck(fn, inputs, **ALL_CHECKS, **tolerances)
        if info.twice_differentiable and not info.skip_reason("gradgrad"):
            assert gradgradcheck(fn, inputs, check_fwd_over_rev=True, **tolerances)
