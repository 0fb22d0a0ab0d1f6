"""The registry-driven vmap test: every OpInfo through ``dualad.vmap`` against a Python loop.

For each entry of ``dualad.testing.opdb.all_ops()`` and each of its samples (float64, or the
entry's first dtype), the sample is drawn three times (six for nesting) from independent generators; every tensor argument whose shape and
dtype agree across the draws is a batch candidate. For each in_dims configuration the vmapped
call must equal the loop ``stack([fn(example b) for b])`` (shapes, dtypes and values):

- every candidate batched at dim 0, at dim -1, and at dim 1 where its rank allows;
- one candidate batched at a time, the others unbatched (``None``): rules must mix batched and
  unbatched arguments;
- nested vmap (first two samples): every candidate batched at both levels, and the first
  candidate batched only by the inner vmap while the others are batched only by the outer one;
- grad of vmap (differentiable entries): the floating candidates batched at dim -1 require grad;
  the gradients through the eager tape (the physical ops the rules run) equal the per-example
  gradients;
- vmap of jvp (differentiable entries, first samples): unbatched primals and a batch of
  tangents (jacfwd's pattern) against one ``func.jvp`` per tangent; and jvp of vmap: a dual
  level outside the vmap, so the batching rules run on dual values;
- complex128 samples (entries that claim it): dims 0 and -1.

Everything runs with ``LOOP_BATCHED`` emptied unless the entry exercises one of its ops, so an op
that silently needed the per-example fallback fails here. Index tensors are op arguments
(``x[idx]``, ``x[idx] = v``), so batched integer indices batch like anything else; a batched
boolean mask selects a data-dependent number of elements and must raise the clear
``dualad.vmap`` error instead (``MASKED``). Data-dependent ops (``LOOP_BATCHED``) may raise the
"different shapes" error when the examples disagree.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import dualad
from dualad._dispatch import REGISTRY
from dualad._tensor import Tensor
from dualad._tree import flatten
from dualad.func import jvp
from dualad.testing._numeric import as_numpy, flatten_outputs, sample_to_tensors, to_tensor
from dualad.testing.opdb import all_ops
from dualad.vmap import PerformanceWarning, rules

INFOS = all_ops()
SIZE = 3

# entries with boolean mask tensors: a batched mask raises the data-dependent-shape error
MASKED = {"masked_select", "getitem_tensors", "setitem_tensors"}
# entries that write in place into their first argument
INPLACE = {"setitem", "setitem_tensors", "fill_", "copy_"}


def _dtype(info) -> np.dtype:
    return np.dtype("float64" if "float64" in info.dtypes else info.dtypes[0])


def _draws(info, count: int, dtype=None) -> list[list]:
    dtype = _dtype(info) if dtype is None else np.dtype(dtype)
    seed = zlib.crc32(f"vmap:{info.name}".encode())
    return [info.sample_inputs(dtype, np.random.default_rng(seed + k)) for k in range(count)]


class Sample:
    """One sample drawn several times: the flattened call leaves of every draw."""

    def __init__(self, info, draws: list) -> None:
        self.info = info
        self.note = draws[0].note
        self.flats = []
        for sample in draws:
            args, kwargs, _ = sample_to_tensors(sample, requires_grad=False)
            leaves, rebuild = flatten((args, kwargs))
            self.flats.append(leaves)
        self.rebuild = rebuild
        first = self.flats[0]
        same_structure = all(len(f) == len(first) for f in self.flats)
        self.positions = [
            k
            for k, leaf in enumerate(first)
            if same_structure
            and isinstance(leaf, Tensor)
            and all(
                isinstance(f[k], Tensor) and f[k].shape == leaf.shape and f[k].dtype == leaf.dtype
                for f in self.flats
            )
        ]

    def call(self, leaves):
        args, kwargs = self.rebuild(leaves)
        return self.info.fn(*args, **kwargs)

    def leaves_with(self, choice: dict) -> list:
        """Draw 0's leaves with position p taken from draw ``choice[p]``."""
        leaves = list(self.flats[0])
        for p, k in choice.items():
            leaves[p] = self.flats[k][p]
        return leaves

    def batched_input(self, p: int, draws: list, dim: int):
        return to_tensor(np.stack([as_numpy(self.flats[k][p]) for k in draws], axis=dim))


def _outputs(value) -> list:
    return [None if o is None else as_numpy(o) for o in flatten_outputs(value)]


def _compare(actual: list, expected_rows: list, grid: tuple, what: str) -> None:
    """``actual`` (flattened vmap outputs) against the loop outputs stacked over ``grid``."""
    assert len(actual) == len(expected_rows[0]), f"{what}: number of outputs"
    for k, got in enumerate(actual):
        expected = np.stack([row[k] for row in expected_rows]).reshape(
            grid + expected_rows[0][k].shape
        )
        assert got.shape == expected.shape, (
            f"{what}: output {k} shape {got.shape} != {expected.shape}"
        )
        assert got.dtype == expected.dtype, (
            f"{what}: output {k} dtype {got.dtype} != {expected.dtype}"
        )
        if expected.dtype.kind in "fc":
            tol = 1e-4 if expected.dtype in (np.float32, np.complex64) else 1e-9
            np.testing.assert_allclose(
                got, expected, rtol=tol, atol=tol, equal_nan=True, err_msg=what
            )
        else:
            np.testing.assert_array_equal(got, expected, err_msg=what)


def _single_configs(sample: Sample):
    ndims = [sample.flats[0][p].ndim for p in sample.positions]
    yield "dim 0", [0] * len(ndims)
    yield "dim -1", [-1] * len(ndims)
    if any(n >= 1 for n in ndims):
        yield "dim 1", [1 if n >= 1 else 0 for n in ndims]
    if len(ndims) > 1:
        for i in range(len(ndims)):
            yield f"only argument {i}", [0 if j == i else None for j in range(len(ndims))]


def _expect_failure(info, sample: Sample, dims, exc: Exception) -> bool:
    """Whether ``exc`` is the documented error for this entry and configuration."""
    batched_kinds = {
        sample.flats[0][p].dtype.kind for p, d in zip(sample.positions, dims) if d is not None
    }
    if info.name in MASKED and batched_kinds & {"b"}:
        return isinstance(exc, RuntimeError) and "batched boolean mask" in str(exc)
    if "is not possible because there exists a Tensor `other`" in str(exc):
        # as in torch: an in-place write of batched values into an unbatched tensor
        return info.name in INPLACE and dims[0] is None
    if "view size is not compatible" in str(exc) and any(d not in (0, None) for d in dims):
        # as in torch: with the batch dim not in front, the batch may not be viewable as the
        # new shape (a view cannot copy); reshape copies instead
        return "view" in info.ops
    if set(info.ops) & rules.LOOP_BATCHED:
        return isinstance(exc, RuntimeError) and "different shapes" in str(exc)
    return False


def _check_single(info, sample: Sample, name: str, dims: list) -> None:
    what = f"{info.name} [{sample.note}] {name} in_dims={dims}"

    def fn(*xs):
        leaves = list(sample.flats[0])
        for p, x in zip(sample.positions, xs):
            leaves[p] = x
        return sample.call(leaves)

    inputs = [
        sample.flats[0][p] if d is None else sample.batched_input(p, list(range(SIZE)), d)
        for p, d in zip(sample.positions, dims)
    ]
    try:
        actual = _outputs(dualad.vmap(fn, in_dims=tuple(dims))(*inputs))
    except NotImplementedError:
        raise  # (what CuPy lacks: the device test mode expects it by this class)
    except Exception as exc:
        if _expect_failure(info, sample, dims, exc):
            return
        raise AssertionError(f"{what}: {type(exc).__name__}: {exc}") from exc
    rows = []
    for b in range(SIZE):
        choice = {p: b for p, d in zip(sample.positions, dims) if d is not None}
        rows.append(_outputs(sample.call(sample.leaves_with(choice))))
    _compare(actual, rows, (SIZE,), what)


def _check_nested(info, sample: Sample, split: bool) -> None:
    """Outer batch of 2 (draws 3, 4 / 0..5), inner batch of 3."""
    positions = sample.positions
    what = f"{info.name} [{sample.note}] nested{' split' if split else ''}"
    inputs, outer_dims, inner_dims = [], [], []
    for i, p in enumerate(positions):
        if split and i == 0:  # only the inner vmap batches it: draws 0, 1, 2
            inputs.append(sample.batched_input(p, [0, 1, 2], 0))
            outer_dims.append(None)
            inner_dims.append(0)
        elif split:  # only the outer vmap: draws 3, 4
            inputs.append(sample.batched_input(p, [3, 4], 0))
            outer_dims.append(0)
            inner_dims.append(None)
        else:  # both: draws o * 3 + i, laid out (inner, outer) to exercise a non-leading bdim
            stacked = np.stack(
                [
                    np.stack([as_numpy(sample.flats[o * 3 + j][p]) for o in range(2)])
                    for j in range(SIZE)
                ]
            )
            inputs.append(to_tensor(stacked))
            outer_dims.append(1)
            inner_dims.append(0)

    def fn(*xs):
        leaves = list(sample.flats[0])
        for p, x in zip(positions, xs):
            leaves[p] = x
        return sample.call(leaves)

    inner = dualad.vmap(fn, in_dims=tuple(inner_dims))
    try:
        actual = _outputs(dualad.vmap(inner, in_dims=tuple(outer_dims))(*inputs))
    except NotImplementedError:  # (an op CuPy cannot run: an expected failure on "cuda")
        raise
    except Exception as exc:
        # (split: the first argument is not batched at the outer level)
        if _expect_failure(info, sample, outer_dims if split else inner_dims, exc):
            return
        raise AssertionError(f"{what}: {type(exc).__name__}: {exc}") from exc
    rows = []
    for o in range(2):
        for j in range(SIZE):
            choice = {}
            for i, p in enumerate(positions):
                if split:
                    choice[p] = j if i == 0 else 3 + o
                else:
                    choice[p] = o * 3 + j
            rows.append(_outputs(sample.call(sample.leaves_with(choice))))
    _compare(actual, rows, (2, SIZE), what)


def _check_grad_of_vmap(info, sample: Sample) -> None:
    """Reverse mode through the physical ops the rules run (batch at dim -1): the gradients of
    ``sum(ct * vmap(fn)(x))`` equal the per-example gradients, stacked."""
    floating = [p for p in sample.positions if sample.flats[0][p].dtype.kind in "fc"]
    if not floating:
        return
    what = f"{info.name} [{sample.note}] grad of vmap"
    rng = np.random.default_rng(1)

    def fn(*xs):
        leaves = list(sample.flats[0])
        for p, x in zip(floating, xs):
            leaves[p] = x
        return sample.call(leaves)

    inputs = [
        to_tensor(
            np.stack([as_numpy(sample.flats[k][p]) for k in range(SIZE)], axis=-1),
            requires_grad=True,
        )
        for p in floating
    ]
    outputs = [o for o in flatten_outputs(dualad.vmap(fn, in_dims=-1)(*inputs))]
    pairs = [(o, o.dtype) for o in outputs if isinstance(o, Tensor) and o.dtype.kind in "fc"]
    pairs = [
        (o, to_tensor(rng.standard_normal(o.shape).astype(d), device=o.device)) for o, d in pairs
    ]
    pairs = [(o, ct) for o, ct in pairs if o.requires_grad]
    if not pairs:
        return
    grads = dualad.autograd.grad(
        [o for o, _ in pairs], inputs, [ct for _, ct in pairs], allow_unused=True
    )
    for b in range(SIZE):
        leaves = list(sample.flats[0])
        singles = [to_tensor(as_numpy(sample.flats[b][p]), requires_grad=True) for p in floating]
        for p, x in zip(floating, singles):
            leaves[p] = x
        outs = [o for o in flatten_outputs(sample.call(leaves))]
        outs = [
            o for o in outs if isinstance(o, Tensor) and o.dtype.kind in "fc" and o.requires_grad
        ]
        expected = dualad.autograd.grad(
            outs, singles, [ct[b] for _, ct in pairs], allow_unused=True
        )
        for k, (got, want) in enumerate(zip(grads, expected)):
            if want is None:
                assert got is None or not np.any(as_numpy(got)[..., b]), f"{what}: input {k}"
                continue
            np.testing.assert_allclose(
                as_numpy(got)[..., b], as_numpy(want), rtol=1e-9, atol=1e-12, err_msg=what
            )


def _check_vmap_of_jvp(info, sample: Sample) -> None:
    """Forward mode under vmap (jacfwd's pattern): unbatched primals, a batch of tangents; the
    JVP rules run on batched tangents and must equal one ``func.jvp`` per tangent."""
    floating = [p for p in sample.positions if sample.flats[0][p].dtype.kind in "fc"]
    if not floating:
        return
    what = f"{info.name} [{sample.note}] vmap of jvp"
    rng = np.random.default_rng(2)
    primals = tuple(sample.flats[0][p] for p in floating)
    tangents = [
        rng.standard_normal((SIZE, *primal.shape)).astype(primal.dtype) for primal in primals
    ]

    def fn(*xs):
        leaves = list(sample.flats[0])
        for p, x in zip(floating, xs):
            leaves[p] = x
        return sample.call(leaves)

    def tangent_out(*ts):
        return jvp(fn, primals, ts)[1]

    try:
        actual = _outputs(dualad.vmap(tangent_out)(*[to_tensor(t) for t in tangents]))
    except NotImplementedError:  # (an op CuPy cannot run: an expected failure on "cuda")
        raise
    except Exception as exc:
        raise AssertionError(f"{what}: {type(exc).__name__}: {exc}") from exc
    rows = [_outputs(tangent_out(*[to_tensor(t[b]) for t in tangents])) for b in range(SIZE)]
    _compare(actual, rows, (SIZE,), what)


def _check_jvp_of_vmap(info, sample: Sample) -> None:
    """vmap inside a dual level: batched primals and tangents at dim 0; the batching rules run
    on dual values (their ops carry the tangents)."""
    floating = [p for p in sample.positions if sample.flats[0][p].dtype.kind in "fc"]
    if not floating:
        return
    what = f"{info.name} [{sample.note}] jvp of vmap"
    rng = np.random.default_rng(3)
    primals = [np.stack([as_numpy(sample.flats[k][p]) for k in range(SIZE)]) for p in floating]
    tangents = [rng.standard_normal(a.shape).astype(a.dtype) for a in primals]

    def fn(*xs):
        leaves = list(sample.flats[0])
        for p, x in zip(floating, xs):
            leaves[p] = x
        return sample.call(leaves)

    try:
        out, tangent = jvp(
            dualad.vmap(fn),
            tuple(to_tensor(a) for a in primals),
            tuple(to_tensor(t) for t in tangents),
        )
    except NotImplementedError:  # (an op CuPy cannot run: an expected failure on "cuda")
        raise
    except Exception as exc:
        raise AssertionError(f"{what}: {type(exc).__name__}: {exc}") from exc
    rows = []
    for b in range(SIZE):
        single = jvp(
            fn,
            tuple(to_tensor(a[b]) for a in primals),
            tuple(to_tensor(t[b]) for t in tangents),
        )
        rows.append(_outputs(single[0]) + _outputs(single[1]))
    _compare(_outputs(out) + _outputs(tangent), rows, (SIZE,), what)


@pytest.fixture
def strict_rules(monkeypatch, request):
    """No per-example fallback unless the entry exercises a LOOP_BATCHED op."""
    info = request.node.callspec.params["info"]
    if not set(info.ops) & rules.LOOP_BATCHED:
        monkeypatch.setattr(rules, "LOOP_BATCHED", frozenset())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        yield


@pytest.mark.parametrize("info", INFOS, ids=[info.name for info in INFOS])
def test_vmap_matches_a_loop(info, strict_rules):
    draws = _draws(info, 6)
    count = min(len(d) for d in draws)
    checked = 0
    for j in range(count):
        sample = Sample(info, [d[j] for d in draws])
        if not sample.positions:
            continue
        for name, dims in _single_configs(sample):
            _check_single(info, sample, name, dims)
            checked += 1
        if info.differentiable:
            _check_grad_of_vmap(info, sample)
            if j < 3:
                _check_vmap_of_jvp(info, sample)
                _check_jvp_of_vmap(info, sample)
        if j < 2:
            _check_nested(info, sample, split=False)
            if len(sample.positions) > 1:
                _check_nested(info, sample, split=True)
    assert checked, f"{info.name}: no sample could be batched"
    if "complex128" in info.dtypes and info.skip_reason("complex") is None:
        draws = _draws(info, SIZE, "complex128")
        for j in range(min(len(d) for d in draws)):
            sample = Sample(info, [d[j] for d in draws])
            if sample.positions:
                for name, dims in list(_single_configs(sample))[:2]:  # dims 0 and -1
                    _check_single(info, sample, f"complex128 {name}", dims)


def test_every_op_has_a_batching_rule_or_is_loop_batched():
    missing = sorted(
        name for name, op in REGISTRY.items() if op.batch is None and name not in rules.LOOP_BATCHED
    )
    assert not missing, (
        f"ops without a batching rule (add one, or list in LOOP_BATCHED): {missing}; "
        "tests/ops/test_registry_completeness.py says what to add for each"
    )
    assert set(REGISTRY) >= rules.LOOP_BATCHED, "LOOP_BATCHED names ops that do not exist"


def test_every_op_is_exercised_by_the_op_database():
    covered = set().union(*(info.ops for info in INFOS))
    uncovered = sorted(set(REGISTRY) - covered)
    assert not uncovered, (
        f"ops named in no OpInfo, so vmap is never tested on them: {uncovered}; "
        "tests/ops/test_registry_completeness.py says where to add each"
    )
