"""Every op of the op database on "cuda" under the CuPy stand-in, in the default test run.

For each entry, its first sample (float64 where the entry claims it) runs forward, VJP
(``autograd.grad``), JVP (a dual level) and vmap (a batch of two) on "cpu" and on "cuda"; the
"cuda" results must equal the cpu ones, and the "cuda" run must move no array between host and
device (``fake_cupy.no_transfers``): only the final comparison copies back. A stage that raises on
the cpu is not compared. Ops listed in ``CUDA_EXPECTED_FAILURES`` must raise a clear error on
"cuda" instead (an op that starts working there fails the test, so the list stays true).

The full suite runs on "cuda" with ``DUALAD_TEST_DEVICE=cuda`` (see docs/gpu.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
from dualad import _backend, fwd
from dualad.testing import fake_cupy
from dualad.testing._numeric import as_numpy, flatten_outputs, random_like
from dualad.testing.device import CUDA_EXPECTED_FAILURES
from dualad.testing.opdb import all_ops

INFOS = all_ops()


def _first_sample(info):
    names = [np.dtype(d).name for d in info.dtypes]
    dtype = "float64" if "float64" in names else names[0]
    return info.sample_inputs(dtype)[0]


@pytest.fixture(scope="module")
def cuda_standin():
    """The stand-in as ``cupy`` for this module (a real CuPy, if imported, comes back after)."""
    was = fake_cupy.is_installed()
    fake_cupy.install()
    _backend.forget_cupy()
    yield
    if not was:
        fake_cupy.uninstall()
        _backend.forget_cupy()


def _tensors(outputs) -> list:
    return [o for o in flatten_outputs(outputs) if isinstance(o, dualad.Tensor)]


def _floating(tensors) -> list:
    return [t for t in tensors if t.dtype.kind in "fc"]


def _run(info, sample, device, directions):
    """``{stage: list of result tensors}`` for the op on ``device``; ``directions`` holds the
    cotangents and tangents (NumPy), moved to the device before the op runs."""
    results = {}
    args, kwargs, leaves = sample.tensors(requires_grad=True, device=device)
    cts = [dualad.tensor(c, device=device) for c in directions["cotangents"]]
    tangents = [dualad.tensor(t, device=device) for t in directions["tangents"]]
    batch = [dualad.tensor(b, device=device) for b in directions["batch"]]
    guard = fake_cupy.no_transfers() if device == "cuda" else _nothing()
    with guard:
        results["forward"] = _stage(lambda: _tensors(info.fn(*args, **kwargs)))
        outputs = results["forward"]
        if leaves and info.differentiable and not isinstance(outputs, Exception):
            used = [o for o in _floating(outputs) if o.requires_grad]
            results["vjp"] = _stage(
                lambda: list(
                    dualad.autograd.grad(used, leaves, cts[: len(used)], allow_unused=True)
                )
            )
            results["jvp"] = _stage(lambda: _jvp(info, args, kwargs, leaves, tangents))
        if leaves:
            results["vmap"] = _stage(lambda: _vmap(info, args, kwargs, leaves, batch))
    return results


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _stage(compute):
    try:
        return compute()
    except Exception as exc:  # compared with the cpu's outcome by the caller
        return exc


def _swap(args, kwargs, leaves, new):
    swap = {id(leaf): value for leaf, value in zip(leaves, new)}

    def replace(value):
        if isinstance(value, (list, tuple)) and not isinstance(value, dualad.Tensor):
            return type(value)(replace(v) for v in value)
        return swap.get(id(value), value)

    return tuple(replace(a) for a in args), {k: replace(v) for k, v in kwargs.items()}


def _jvp(info, args, kwargs, leaves, tangents):
    with fwd.dual_level():
        duals = [fwd.make_dual(leaf.detach(), t) for leaf, t in zip(leaves, tangents)]
        a, k = _swap(args, kwargs, leaves, duals)
        outputs = _floating(_tensors(info.fn(*a, **k)))
        return [fwd.unpack_dual(o).tangent for o in outputs]


def _vmap(info, args, kwargs, leaves, batch):
    def call(*values):
        a, k = _swap(args, kwargs, leaves, values)
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


def _compare(name, stage, cpu, cuda):
    if isinstance(cpu, Exception):
        return
    if isinstance(cuda, Exception):
        raise AssertionError(f"{name} {stage}: raised on cuda only: {cuda!r}") from cuda
    assert len(cpu) == len(cuda), f"{name} {stage}: {len(cuda)} results on cuda, {len(cpu)} on cpu"
    for k, (c, g) in enumerate(zip(cpu, cuda)):
        if c is None or g is None:
            assert c is None and g is None, f"{name} {stage} {k}: None on one device only"
            continue
        assert str(g.device) == "cuda:0", f"{name} {stage} {k}: result on {g.device}"
        expected, actual = as_numpy(c), as_numpy(g)
        assert actual.dtype == expected.dtype, f"{name} {stage} {k}: dtype {actual.dtype}"
        np.testing.assert_allclose(
            actual, expected, rtol=1e-12, atol=1e-14, equal_nan=True, err_msg=f"{name} {stage}"
        )


@pytest.mark.parametrize("info", INFOS, ids=[info.name for info in INFOS])
def test_op_on_cuda_equals_cpu_without_transfers(info, cuda_standin):
    sample = _first_sample(info)
    directions = _directions(info, sample, np.random.default_rng(0))
    reason = CUDA_EXPECTED_FAILURES.get(info.name)
    if reason is not None:
        args, kwargs, _ = sample.tensors(requires_grad=False, device="cuda")
        with pytest.raises((TypeError, NotImplementedError), match="cuda|CuPy|cupyx"):
            info.fn(*args, **kwargs)
        return
    cpu = _run(info, sample, "cpu", directions)
    cuda = _run(info, sample, "cuda", directions)
    for stage, result in cpu.items():
        _compare(info.name, stage, result, cuda[stage])
