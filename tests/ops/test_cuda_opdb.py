"""Every op of the op database on "cuda" under the CuPy stand-in, in the default test run.

For each entry, its first sample (float64 where the entry claims it) runs forward, VJP
(``autograd.grad``), JVP (a dual level) and vmap (a batch of two) on "cpu" and on "cuda"; the
"cuda" results must equal the cpu ones, and the "cuda" run must move no array between host and
device (``fake_cupy.no_transfers``): only the final comparison copies back. A stage that raises on
the cpu is not compared. Ops listed in ``CUDA_EXPECTED_FAILURES`` must raise a clear error on
"cuda" instead (an op that starts working there fails the test, so the list stays true).

With ``DUALAD_TEST_DEVICE=cuda`` and a real CuPy (a GPU), the same checks run on the GPU
against the cpu within ``REAL_TOLERANCE`` (CuPy's kernels round differently); transfers are then
not counted. The full suite runs on "cuda" with ``DUALAD_TEST_DEVICE=cuda`` (see docs/gpu.md).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from _helpers import replace_leaves

import dualad
from dualad import fwd
from dualad.testing import fake_cupy
from dualad.testing._numeric import as_numpy, flatten_outputs, random_like
from dualad.testing.device import CUDA_EXPECTED_FAILURES, CUDA_OTHER_RESULTS
from dualad.testing.opdb import all_ops

INFOS = all_ops()
# on a real GPU: results within (rtol, atol) of the cpu's; under the stand-in they are equal
REAL_TOLERANCE = (1e-8, 1e-11)
STANDIN_TOLERANCE = (1e-12, 1e-14)


def _first_sample(info):
    names = [np.dtype(d).name for d in info.dtypes]
    dtype = "float64" if "float64" in names else names[0]
    return info.sample_inputs(dtype)[0]


def _tensors(outputs) -> list:
    return [o for o in flatten_outputs(outputs) if isinstance(o, dualad.Tensor)]


def _floating(tensors) -> list:
    return [t for t in tensors if t.dtype.kind in "fc"]


def _run(info, sample, device, directions, guarded=("to_host", "to_device")):
    """``{stage: list of result tensors}`` for the op on ``device``; ``directions`` holds the
    cotangents and tangents (NumPy), moved to the device before the op runs."""
    results = {}
    args, kwargs, leaves = sample.tensors(requires_grad=True, device=device)
    cts = [dualad.tensor(c, device=device) for c in directions["cotangents"]]
    tangents = [dualad.tensor(t, device=device) for t in directions["tangents"]]
    batch = [dualad.tensor(b, device=device) for b in directions["batch"]]
    counted = device == "cuda" and guarded and fake_cupy.is_installed()
    guard = fake_cupy.no_transfers(guarded) if counted else contextlib.nullcontext()
    with guard:
        results["forward"] = _stage(lambda: _tensors(info.fn(*args, **kwargs)))
        outputs = results["forward"]
        if leaves and info.differentiable and not isinstance(outputs, Exception):
            used = [o for o in _floating(outputs) if o.requires_grad]
            # (an output on another device: the op is a transfer, ASKED_TRANSFERS)
            cts = [c.to(o.device) for c, o in zip(cts, used)]
            results["vjp"] = _stage(
                lambda: list(
                    dualad.autograd.grad(used, leaves, cts[: len(used)], allow_unused=True)
                )
            )
            results["jvp"] = _stage(lambda: _jvp(info, args, kwargs, leaves, tangents))
        if leaves:
            results["vmap"] = _stage(lambda: _vmap(info, args, kwargs, leaves, batch))
    return results


def _stage(compute):
    try:
        return compute()
    except Exception as exc:  # compared with the cpu's outcome by the caller
        return exc


def _jvp(info, args, kwargs, leaves, tangents):
    with fwd.dual_level():
        duals = [fwd.make_dual(leaf.detach(), t) for leaf, t in zip(leaves, tangents)]
        a, k = replace_leaves(args, kwargs, leaves, duals)
        outputs = _floating(_tensors(info.fn(*a, **k)))
        return [fwd.unpack_dual(o).tangent for o in outputs]


def _vmap(info, args, kwargs, leaves, batch):
    def call(*values):
        a, k = replace_leaves(args, kwargs, leaves, values)
        return tuple(_tensors(info.fn(*a, **k)))

    return list(dualad.vmap(call)(*batch))


def _directions(info, sample, rng):
    leaves = sample.leaves()
    args, kwargs, _ = sample.tensors(requires_grad=False, device="cpu")
    try:
        outputs = _floating(_tensors(info.fn(*args, **kwargs)))
    except Exception:
        outputs = []
    return {
        "cotangents": [random_like(rng, as_numpy(o)) for o in outputs],
        "tangents": [random_like(rng, a) for a in leaves],
        "batch": [np.stack([a, a + random_like(rng, a, 0.0, 1e-3)]) for a in leaves],
    }


def _compare(name, stage, cpu, cuda, tolerance):
    if isinstance(cpu, Exception):
        return
    if isinstance(cuda, Exception):
        raise AssertionError(f"{name} {stage}: raised on cuda only: {cuda!r}") from cuda
    assert len(cpu) == len(cuda), f"{name} {stage}: {len(cuda)} results on cuda, {len(cpu)} on cpu"
    for k, (c, g) in enumerate(zip(cpu, cuda)):
        if c is None or g is None:
            assert c is None and g is None, f"{name} {stage} {k}: None on one device only"
            continue
        if name not in ASKED_TRANSFERS:
            assert str(g.device) == "cuda:0", f"{name} {stage} {k}: result on {g.device}"
        expected, actual = as_numpy(c), as_numpy(g)
        assert actual.dtype == expected.dtype, f"{name} {stage} {k}: dtype {actual.dtype}"
        rtol, atol = tolerance
        if actual.dtype in (np.float32, np.complex64):  # a few units in the last place
            rtol, atol = max(rtol, 1e-5), max(atol, 1e-6)
        np.testing.assert_allclose(
            actual,
            expected,
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            err_msg=f"{name} {stage}",
        )


# ops whose sample moves host data to the device because the caller asked for it
ASKED_TRANSFERS = {
    "to_device": "the op is the transfer",
    "index_put": "the sample's index is host data (a NumPy array), copied in as CuPy does",
    "setitem": "the sample's index is host data (a NumPy array), copied in as CuPy does",
}


# ops that upload a small constant made on the host from static parameters (no device data goes
# to the host: only "to_host" is forbidden for them); each one is a place to build with xp
CONSTANT_UPLOADS = {
    "affine_grid": "uploads a small constant built on the host (grid_sampling.py)",
    "embedding_bag": "uploads a small constant built on the host (bags.py)",
    "interpolate": "uploads a small constant built on the host (sampling.py)",
    "nanquantile": "q, given as host data (Python numbers), is copied in",
    "quantile": "q, given as host data (Python numbers), is copied in",
}


@pytest.mark.parametrize("info", INFOS, ids=[info.name for info in INFOS])
def test_op_on_cuda_equals_cpu_without_transfers(info, cuda_standin):
    sample = _first_sample(info)
    directions = _directions(info, sample, np.random.default_rng(0))
    cpu = _run(info, sample, "cpu", directions)
    guarded = ("to_host",) if info.name in CONSTANT_UPLOADS else ("to_host", "to_device")
    if info.name in ASKED_TRANSFERS:
        guarded = ()
    cuda = _run(info, sample, "cuda", directions, guarded=guarded)
    reason = CUDA_EXPECTED_FAILURES.get(info.name)
    if reason is not None:
        errors = [r for r in cuda.values() if isinstance(r, NotImplementedError)]
        assert errors, f"{info.name} runs on cuda: take it out of CUDA_EXPECTED_FAILURES"
        assert "cannot run on a CUDA (CuPy) array" in str(errors[0])
        return
    if info.name in CUDA_OTHER_RESULTS:  # (it ran, without transfers; its values may differ)
        assert not any(isinstance(r, Exception) for r in cuda.values()), cuda
        return
    for stage, result in cpu.items():
        tolerance = STANDIN_TOLERANCE if cuda_standin else REAL_TOLERANCE
        _compare(info.name, stage, result, cuda[stage], tolerance)
