"""The registry-driven op tests: every OpInfo x sample x claimed dtype.

For each entry of ``dualad.testing.opdb.all_ops()``:

- forward values, output dtypes and shapes against the NumPy ``ref`` (when given), on the fast
  path (no grad) and on the graph-recording path;
- the VJP (``dualad.autograd.grad`` with a random cotangent) against central finite differences
  computed in float64 (float32/complex64 inputs are upcast for the finite differences and
  compared with a relative tolerance of about 1e-3); gradients have their input's shape and
  dtype;
- grad-of-grad for twice-differentiable entries (float64/complex128): the first-order VJP built
  with ``create_graph=True``, contracted with a random vector and differentiated with respect to
  the inputs and the cotangent, against finite differences of the first-order VJP;
- non-differentiable entries: no output requires grad, even when the inputs do;
- completeness (every registered op has its rules, an OpInfo, its export, ...):
  ``test_registry_completeness.py``, one message per missing piece.

``OpInfo.skips`` (check name -> reason) turns checks off: "fd", "gradgrad", "float32",
"complex", "ref".
"""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import (
    FD_EPS,
    HIGH_PRECISION,
    LOW_PRECISION_RTOL,
    assert_close,
    assert_low_precision_close,
    case_id,
    describe,
    differentiable_case,
    is_low_precision,
    skip_if_requested,
)

import dualad
from dualad.testing._numeric import (
    as_numpy,
    flatten_outputs,
    is_differentiable_dtype,
    numerical_vjp,
    random_like,
    sample_function,
    to_tensor,
    upcast,
)
from dualad.testing.opdb import OpInfo, SampleInput, all_ops

ALL_INFOS = all_ops()
# forward values against the NumPy reference: (rtol, atol) by dtype
REF_TOLERANCE = {"float64": (1e-7, 1e-10), "complex128": (1e-7, 1e-10), "float16": (1e-2, 1e-3)}
REF_TOLERANCE_DEFAULT = (1e-4, 1e-6)  # float32, complex64
SINGLE_PRECISION = {"f": np.dtype("float32"), "c": np.dtype("complex64")}


# ---------------------------------------------------------------------------------------------
# parametrization


_SAMPLE_CACHE: dict = {}


def _samples(info: OpInfo, dtype: str):
    """The samples of ``info`` for ``dtype`` (generated once, seeded by name and dtype)."""
    key = (id(info), dtype)
    if key not in _SAMPLE_CACHE:
        try:
            _SAMPLE_CACHE[key] = info.sample_inputs(dtype)
        except Exception as exc:  # reported by test_opinfo_samples, not at collection
            _SAMPLE_CACHE[key] = exc
    return _SAMPLE_CACHE[key]


def _cases(select) -> list:
    params = []
    for info in ALL_INFOS:
        for dtype in info.dtypes:
            dtype = np.dtype(dtype).name
            if not select(info, dtype):
                continue
            samples = _samples(info, dtype)
            if isinstance(samples, Exception):
                continue
            for index, sample in enumerate(samples):
                params.append(
                    pytest.param(info, dtype, sample, id=case_id(info, dtype, index, sample))
                )
    return params


REF_CASES = _cases(lambda info, dtype: info.ref is not None)
VJP_CASES = _cases(differentiable_case)
GRADGRAD_CASES = _cases(
    lambda info, dtype: (
        differentiable_case(info, dtype) and info.twice_differentiable and dtype in HIGH_PRECISION
    )
)
NONDIFF_CASES = _cases(lambda info, dtype: not info.differentiable)


# ---------------------------------------------------------------------------------------------
# comparisons


def _tensor_outputs(out) -> list:
    return [o for o in flatten_outputs(out) if isinstance(o, dualad.Tensor)]


def _cotangents(outputs: list, rng: np.random.Generator) -> list:
    """A random cotangent per differentiable (floating/complex) output, None for the others."""
    return [
        random_like(rng, as_numpy(o))
        if o is not None and is_differentiable_dtype(o.dtype)
        else None
        for o in outputs
    ]


def _all_array_positions(sample: SampleInput) -> tuple:
    """Every argument position and keyword holding floating/complex arrays."""

    def floating(value):
        if isinstance(value, np.ndarray):
            return is_differentiable_dtype(value.dtype)
        if isinstance(value, (list, tuple)) and value:
            return all(isinstance(v, np.ndarray) for v in value) and any(
                is_differentiable_dtype(v.dtype) for v in value
            )
        return False

    positions = [i for i, a in enumerate(sample.args) if floating(a)]
    names = [k for k, v in sample.kwargs.items() if floating(v)]
    return (*positions, *names)


# ---------------------------------------------------------------------------------------------
# forward values, dtypes and shapes against the reference


def _reference_outputs(info: OpInfo, sample: SampleInput) -> list:
    expected = info.ref(*sample.args, **sample.kwargs)
    return [np.asarray(e) for e in flatten_outputs(expected)]


@pytest.mark.parametrize("info, dtype, sample", REF_CASES)
def test_forward_matches_reference(info: OpInfo, dtype: str, sample: SampleInput):
    skip_if_requested(info, dtype, "ref")
    expected = _reference_outputs(info, sample)
    rtol, atol = REF_TOLERANCE.get(dtype, REF_TOLERANCE_DEFAULT)
    for requires_grad in (False, True):
        args, kwargs, _ = sample.tensors(requires_grad=requires_grad)
        actual = [as_numpy(o) for o in flatten_outputs(info.fn(*args, **kwargs))]
        where = f"{describe(info, sample)} [requires_grad={requires_grad}]"
        assert len(actual) == len(expected), (
            f"{where}: {len(actual)} outputs, reference has {len(expected)}"
        )
        for k, (a, e) in enumerate(zip(actual, expected)):
            if e.dtype.kind in "fc":
                assert_close(a, e, rtol=rtol, atol=atol, what=f"{where} output {k}")
            else:
                np.testing.assert_array_equal(a, e, err_msg=f"{where} output {k}")


@pytest.mark.parametrize("info, dtype, sample", REF_CASES)
def test_output_dtype_and_shape_match_reference(info: OpInfo, dtype: str, sample: SampleInput):
    skip_if_requested(info, dtype, "ref")
    expected = _reference_outputs(info, sample)
    args, kwargs, _ = sample.tensors(requires_grad=False)
    actual = _tensor_outputs(info.fn(*args, **kwargs))
    where = describe(info, sample)
    assert len(actual) == len(expected), (
        f"{where}: {len(actual)} tensor outputs, reference has {len(expected)}"
    )
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert tuple(a.shape) == e.shape, f"{where} output {k}: shape {a.shape} != {e.shape}"
        assert a.dtype == e.dtype, f"{where} output {k}: dtype {a.dtype} != {e.dtype}"


# ---------------------------------------------------------------------------------------------
# first-order VJP against finite differences


def _vjp(info: OpInfo, sample: SampleInput, rng: np.random.Generator, *, create_graph=False):
    """Run the op and its VJP: ``(leaves, outputs, cotangents, used, grads)``.

    ``used`` indexes the outputs that require grad (the ones passed to autograd.grad); ``grads``
    has one entry per leaf (None where unused).
    """
    args, kwargs, leaves = sample.tensors(requires_grad=True)
    outputs = flatten_outputs(info.fn(*args, **kwargs))
    outputs = [o if isinstance(o, dualad.Tensor) else None for o in outputs]
    cotangents = _cotangents(outputs, rng)
    used = [
        k
        for k, (o, c) in enumerate(zip(outputs, cotangents))
        if o is not None and c is not None and o.requires_grad
    ]
    # (on each output's device: the test device, or the one a transfer op moved it to)
    ct_tensors = [
        to_tensor(cotangents[k], requires_grad=create_graph, device=outputs[k].device) for k in used
    ]
    if not used:
        return leaves, outputs, cotangents, used, ct_tensors, [None] * len(leaves)
    grads = dualad.autograd.grad(
        [outputs[k] for k in used],
        leaves,
        ct_tensors,
        create_graph=create_graph,
        allow_unused=True,
    )
    return leaves, outputs, cotangents, used, ct_tensors, list(grads)


@pytest.mark.parametrize("info, dtype, sample", VJP_CASES)
def test_vjp_matches_finite_differences(info: OpInfo, dtype: str, sample: SampleInput):
    skip_if_requested(info, dtype, "fd")
    if not sample.diff:
        pytest.skip("sample has no differentiable input")
    rng = np.random.default_rng(1)
    where = describe(info, sample)
    leaves, outputs, cotangents, used, _, grads = _vjp(info, sample, rng)
    assert used, f"{where}: no output requires grad although the inputs do"
    for k, (leaf, grad) in enumerate(zip(leaves, grads)):
        if grad is not None:
            assert tuple(grad.shape) == tuple(leaf.shape), (
                f"{where}: gradient {k} has shape {grad.shape}, input has {leaf.shape}"
            )
            assert grad.dtype == leaf.dtype, (
                f"{where}: gradient {k} has dtype {grad.dtype}, input has {leaf.dtype}"
            )
    actual = [
        np.zeros(leaf.shape, leaf.dtype) if g is None else as_numpy(g)
        for leaf, g in zip(leaves, grads)
    ]
    # finite differences in float64 (low-precision samples are upcast)
    reference = sample.upcast()
    fd_cotangents = [upcast(c) for c in cotangents]
    arrays = reference.leaves()
    expected = numerical_vjp(
        sample_function(info.fn, reference), arrays, range(len(arrays)), fd_cotangents, FD_EPS
    )
    for k, (a, e) in enumerate(zip(actual, expected)):
        what = f"{where}: gradient of input {k}"
        if is_low_precision(dtype):
            assert_low_precision_close(a, e, rtol=LOW_PRECISION_RTOL[dtype], what=what)
        else:
            assert_close(a, e, rtol=info.rtol, atol=info.atol, what=what)
    if dtype in ("float32", "complex64"):
        # no silent promotion: single-precision inputs give single-precision outputs
        for k, o in enumerate(outputs):
            if o is not None and o.dtype.kind in "fc":
                assert o.dtype == SINGLE_PRECISION[o.dtype.kind], (
                    f"{where}: output {k} has dtype {o.dtype} for {dtype} inputs"
                )


# ---------------------------------------------------------------------------------------------
# grad of grad against finite differences of the first-order VJP


def _first_order_function(info: OpInfo, sample: SampleInput, used: list, n_leaves: int):
    """``G(*leaf_arrays, *cotangent_arrays)``: the first-order VJP as NumPy arrays."""

    def first_order(*arrays):
        leaf_arrays, ct_arrays = arrays[:n_leaves], arrays[n_leaves:]
        args, kwargs, leaves = sample.with_leaves(leaf_arrays).tensors(requires_grad=True)
        outputs = flatten_outputs(info.fn(*args, **kwargs))
        grads = dualad.autograd.grad(
            [outputs[k] for k in used],
            leaves,
            [to_tensor(c, device=outputs[k].device) for k, c in zip(used, ct_arrays)],
            allow_unused=True,
        )
        return [
            np.zeros(leaf.shape, leaf.dtype) if g is None else as_numpy(g)
            for leaf, g in zip(leaves, grads)
        ]

    return first_order


@pytest.mark.parametrize("info, dtype, sample", GRADGRAD_CASES)
def test_grad_of_grad_matches_finite_differences(info: OpInfo, dtype: str, sample: SampleInput):
    skip_if_requested(info, dtype, "gradgrad")
    if not sample.diff:
        pytest.skip("sample has no differentiable input")
    rng = np.random.default_rng(2)
    where = describe(info, sample)
    leaves, _, cotangents, used, ct_tensors, grads = _vjp(info, sample, rng, create_graph=True)
    assert used, f"{where}: no output requires grad although the inputs do"
    directions = [random_like(rng, as_numpy(leaf)) for leaf in leaves]
    inputs = [*leaves, *ct_tensors]
    connected = [k for k, g in enumerate(grads) if g is not None and g.requires_grad]
    if connected:
        second = dualad.autograd.grad(
            [grads[k] for k in connected],
            inputs,
            [to_tensor(directions[k], device=grads[k].device) for k in connected],
            allow_unused=True,
        )
    else:
        second = [None] * len(inputs)
    actual = [
        np.zeros(t.shape, t.dtype) if g is None else as_numpy(g) for t, g in zip(inputs, second)
    ]
    arrays = [*sample.leaves(), *(cotangents[k] for k in used)]
    expected = numerical_vjp(
        _first_order_function(info, sample, used, len(leaves)),
        arrays,
        range(len(arrays)),
        directions,
        FD_EPS,
    )
    for k, (a, e) in enumerate(zip(actual, expected)):
        name = f"input {k}" if k < len(leaves) else f"cotangent {k - len(leaves)}"
        assert_close(
            a,
            e,
            rtol=max(info.rtol, 1e-4),
            atol=max(info.atol, 1e-5),
            what=f"{where}: second-order gradient w.r.t. {name}",
        )


# ---------------------------------------------------------------------------------------------
# non-differentiable ops


@pytest.mark.parametrize("info, dtype, sample", NONDIFF_CASES)
def test_nondifferentiable_outputs_do_not_require_grad(
    info: OpInfo, dtype: str, sample: SampleInput
):
    from dataclasses import replace

    every_float = replace(sample, diff=_all_array_positions(sample))
    args, kwargs, _ = every_float.tensors(requires_grad=True)
    outputs = _tensor_outputs(info.fn(*args, **kwargs))
    where = describe(info, sample)
    for k, o in enumerate(outputs):
        assert not o.requires_grad, f"{where}: output {k} requires grad"
        assert o.grad_fn is None, f"{where}: output {k} has grad_fn {o.grad_fn}"


# ---------------------------------------------------------------------------------------------
# the database itself


@pytest.mark.parametrize("info", ALL_INFOS, ids=[info.name for info in ALL_INFOS])
def test_opinfo_samples(info: OpInfo):
    """Every claimed dtype yields samples whose ``diff`` slots hold floating/complex arrays."""
    assert info.dtypes, f"{info.name}: no dtypes claimed"
    for dtype in info.dtypes:
        dtype = np.dtype(dtype).name
        samples = _samples(info, dtype)
        if isinstance(samples, Exception):
            raise AssertionError(f"{info.name}: samples(rng, {dtype}) raised") from samples
        assert samples, f"{info.name}: no samples for {dtype}"
        for index, sample in enumerate(samples):
            assert isinstance(sample, SampleInput), f"{info.name}: sample {index} is {sample!r}"
            for key in sample.diff:
                container = sample.args if isinstance(key, int) else sample.kwargs
                assert (key in container) if isinstance(key, str) else key < len(container), (
                    f"{info.name}[{dtype}] sample {index}: diff slot {key!r} does not exist"
                )
            if not info.differentiable:
                continue
            for leaf in sample.leaves():
                assert is_differentiable_dtype(leaf.dtype), (
                    f"{info.name}[{dtype}] sample {index}: differentiable slot holds an array of "
                    f"dtype {leaf.dtype}"
                )


# (what a registered op still lacks, VJP/JVP/batching rule, OpInfo, export, Tensor method,
# docstring: tests/ops/test_registry_completeness.py)
