"""Registry-driven forward-mode tests: every OpInfo x sample x claimed dtype through dual levels.

For each entry of ``dualad.testing.opdb.all_ops()``:

- first-order JVP: every differentiable input becomes a dual (``make_dual`` with a random tangent)
  at a real dual level; the tangents of the outputs equal central finite differences of the op
  along the tangent direction, ``(f(x + eps t) - f(x - eps t)) / (2 eps)``, computed in float64
  (float32/complex64 samples are upcast for the finite differences and compared with a relative
  tolerance of about 1e-3). For complex inputs the direction is a complex tangent and the
  derivative is the real directional one, ``d/ds f(x + s t)`` for real ``s``. Tangents have their
  output's shape and dtype; integer/boolean outputs (indices) carry none;
- the adjoint identity ``Re<ct, J t> == Re<J^T ct, t>`` (``Re(sum(conj(a) * b))``, PyTorch's
  convention) with ``J t`` from forward mode and ``J^T ct`` from ``dualad.autograd.grad``: exact
  to rounding, no finite differences;
- one dual input at a time for entries with several differentiable inputs (float64/complex128):
  JVP rules must treat a missing tangent as zero;
- JVP-of-JVP for every differentiable entry (float64/complex128, first samples only): two
  nested levels with tangents ``t1`` (outer) and ``t2`` (inner); the outer tangent of the inner
  tangent (the mixed second directional derivative) against finite differences along ``t1`` of
  the first-order forward-mode JVP along ``t2``;
- tangent memory (float64/complex128, every dual pattern): an output's tangent shares memory
  with an input's tangent exactly when the output is a view of that input, and is writeable
  exactly when the output is (in-place ops on an output update its tangent in place);
- reverse over forward: reverse mode through the JVP rules (tangents that require grad) gives
  the VJP exactly (the rules are linear in the tangent and written in dualad ops);
- forward over reverse (first samples only): ``autograd.grad`` inside a dual level runs the VJP
  rules on duals; the gradient's tangent against finite differences of the VJP;
- non-differentiable entries called on duals: no error, same values, no tangent on any output;
- multi-output entries (max/min with a dim, unbind, split, var_mean ...): every floating output
  carries the right tangent, index outputs none;
- an op without a JVP rule raises NotImplementedError on duals.

``OpInfo.skips`` is honoured for "float32", "complex", "fd" (finite-difference checks) and
"gradgrad" (the second-order checks); ``XFAILS`` below lists known bugs outside this file's
reach (strict xfails: fixing the bug turns them into failures to be removed).
"""

from __future__ import annotations

from dataclasses import replace

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
from dualad import fwd
from dualad._dispatch import REGISTRY, OpDef, dispatch, register
from dualad.testing._numeric import (
    as_numpy,
    flatten_outputs,
    is_differentiable_dtype,
    numerical_jvp,
    random_like,
    real_inner,
    replace_leaves,
    sample_function,
    sample_to_tensors,
    to_tensor,
    upcast,
)
from dualad.testing.opdb import OpInfo, SampleInput, all_ops

ALL_INFOS = all_ops()
# the adjoint identity holds to rounding: relative to the size of the terms summed
ADJOINT_RTOL = {"float64": 1e-10, "complex128": 1e-10, "float32": 1e-4, "complex64": 1e-4}
SECOND_ORDER_SAMPLES = 2  # samples per OpInfo and dtype for the JVP-of-JVP check

# Known bugs in code this suite does not own, reported with a minimal repro. Strict xfails: a fix
# shows up as XPASS (a failure), and the entry is then removed.
# (opinfo name, check) -> (reason, sample indices or None for every sample)
XFAILS: dict[tuple[str, str], tuple[str, frozenset | None]] = {}


@pytest.fixture(autouse=True)
def no_leaked_levels():
    yield
    while fwd._current_level >= 0:
        fwd.exit_dual_level()


# ---------------------------------------------------------------------------------------------
# parametrization


_SAMPLE_CACHE: dict = {}


def _samples(info: OpInfo, dtype: str) -> list:
    key = (id(info), dtype)
    if key not in _SAMPLE_CACHE:
        try:
            _SAMPLE_CACHE[key] = info.sample_inputs(dtype)
        except Exception:  # reported by tests/ops/test_registry.py::test_opinfo_samples
            _SAMPLE_CACHE[key] = []
    return _SAMPLE_CACHE[key]


def _cases(select, check: str, max_samples: int | None = None) -> list:
    params = []
    for info in ALL_INFOS:
        for dtype in info.dtypes:
            dtype = np.dtype(dtype).name
            if not select(info, dtype):
                continue
            known = XFAILS.get((info.name, check))
            for index, sample in enumerate(_samples(info, dtype)[:max_samples]):
                marks = ()
                if known is not None and (known[1] is None or index in known[1]):
                    marks = (pytest.mark.xfail(strict=True, reason=known[0]),)
                params.append(
                    pytest.param(
                        info, dtype, sample, id=case_id(info, dtype, index, sample), marks=marks
                    )
                )
    return params


def _multi_output(info: OpInfo) -> bool:
    multi = {name for name, op in REGISTRY.items() if op.nout != 1}
    return bool(multi.intersection(info.ops)) or info.name in ("var_mean", "std_mean")


JVP_CASES = _cases(differentiable_case, "jvp")
ADJOINT_CASES = _cases(differentiable_case, "adjoint")
# every differentiable entry: piecewise-linear ones (relu, max...) have a zero second derivative
# at their samples, which sit away from the kinks
SECOND_ORDER_CASES = _cases(
    lambda info, dtype: differentiable_case(info, dtype) and dtype in HIGH_PRECISION,
    "jvp_of_jvp",
    SECOND_ORDER_SAMPLES,
)
PARTIAL_CASES = [
    case
    for case in _cases(
        lambda info, dtype: differentiable_case(info, dtype) and dtype in HIGH_PRECISION,
        "partial",
    )
    if len(case.values[2].leaves()) > 1
]
MEMORY_CASES = _cases(
    lambda info, dtype: differentiable_case(info, dtype) and dtype in HIGH_PRECISION, "memory"
)
REVERSE_OVER_FORWARD_CASES = _cases(
    lambda info, dtype: differentiable_case(info, dtype) and dtype in HIGH_PRECISION,
    "reverse_over_forward",
)
FORWARD_OVER_REVERSE_CASES = _cases(
    lambda info, dtype: differentiable_case(info, dtype) and dtype in HIGH_PRECISION,
    "forward_over_reverse",
    SECOND_ORDER_SAMPLES,
)
NONDIFF_CASES = _cases(lambda info, dtype: not info.differentiable, "nondiff")
MULTI_OUTPUT_CASES = _cases(
    lambda info, dtype: differentiable_case(info, dtype) and _multi_output(info), "multi"
)


# ---------------------------------------------------------------------------------------------
# comparisons


def _assert_tangent_close(actual, expected, info: OpInfo, dtype: str, what: str) -> None:
    if is_low_precision(dtype):
        rtol = LOW_PRECISION_RTOL[np.dtype(dtype).name]
        assert_low_precision_close(actual, expected, rtol=rtol, what=what)
    else:
        assert_close(actual, expected, rtol=info.rtol, atol=info.atol, what=what)


# ---------------------------------------------------------------------------------------------
# running an op on duals


def _dual_call(fn, sample: SampleInput, leaves: list, tangent_levels: list) -> list:
    """``fn`` on ``sample`` with its leaves replaced by dual tensors; the flattened outputs.

    ``leaves`` are the leaf arrays (or tensors); ``tangent_levels`` is a list of
    ``(level, tangent_arrays)``, outermost level first: each leaf gets the tangent at each level.
    Floating arrays outside ``sample.diff`` stay plain tensors.
    """
    duals = []
    for k, leaf in enumerate(leaves):
        dual = leaf if isinstance(leaf, dualad.Tensor) else to_tensor(leaf)
        for level, tangents in tangent_levels:
            dual = fwd.make_dual(dual, to_tensor(tangents[k]), level=level)
        duals.append(dual)
    args, kwargs, _ = sample_to_tensors(replace_leaves(sample, duals), requires_grad=False)
    return flatten_outputs(fn(*args, **kwargs))


def _unpack(outputs: list, level: int) -> tuple[list, list]:
    """``(primals, tangents)`` of the outputs at ``level`` (None for non-tensors/no tangent)."""
    primals, tangents = [], []
    for o in outputs:
        if isinstance(o, dualad.Tensor):
            p, t = fwd.unpack_dual(o, level=level)
        else:
            p, t = o, None
        primals.append(p)
        tangents.append(t)
    return primals, tangents


def _forward_jvp(info: OpInfo, sample: SampleInput, tangents: list) -> tuple[list, list]:
    """The op on duals at one level: ``(outputs, output_tangents)`` as NumPy (None kept)."""
    with fwd.dual_level() as level:
        outputs = _dual_call(info.fn, sample, sample.leaves(), [(level, tangents)])
        primals, out_tangents = _unpack(outputs, level)
        primals = [None if p is None else as_numpy(p) for p in primals]
        out_tangents = [None if t is None else as_numpy(t) for t in out_tangents]
    return primals, out_tangents


def _check_tangent_layout(primals: list, tangents: list, where: str) -> None:
    """Floating outputs carry a tangent of their shape and dtype; other outputs carry none."""
    for k, (p, t) in enumerate(zip(primals, tangents)):
        if p is None or not is_differentiable_dtype(p.dtype):
            assert t is None, f"{where}: non-differentiable output {k} ({p!r}) has a tangent"
            continue
        assert t is not None, f"{where}: output {k} has no tangent although its inputs do"
        assert t.shape == p.shape, f"{where}: tangent {k} has shape {t.shape}, output {p.shape}"
        assert t.dtype == p.dtype, f"{where}: tangent {k} has dtype {t.dtype}, output {p.dtype}"


def _random_tangents(sample: SampleInput, rng: np.random.Generator) -> list:
    return [random_like(rng, leaf) for leaf in sample.leaves()]


def _plain_function(info: OpInfo, sample: SampleInput):
    """``f(*leaf_arrays)``: the op on plain tensors (no dual level, no graph), as NumPy."""
    return sample_function(info.fn, sample)


def _fd_tangents(info: OpInfo, sample: SampleInput, tangents: list) -> list:
    """Central differences of the op along ``tangents`` (float64, no dual levels)."""
    reference = sample.upcast()
    return numerical_jvp(
        _plain_function(info, reference),
        reference.leaves(),
        [upcast(t) for t in tangents],
        FD_EPS,
    )


# ---------------------------------------------------------------------------------------------
# first-order JVP against finite differences


def _check_first_order(info: OpInfo, dtype: str, sample: SampleInput, seed: int) -> list:
    where = describe(info, sample)
    tangents = _random_tangents(sample, np.random.default_rng(seed))
    primals, actual = _forward_jvp(info, sample, tangents)
    _check_tangent_layout(primals, actual, where)
    expected = _fd_tangents(info, sample, tangents)
    assert len(expected) == len(actual), f"{where}: {len(actual)} outputs, FD saw {len(expected)}"
    for k, (a, e) in enumerate(zip(actual, expected)):
        if e is None:
            continue
        _assert_tangent_close(a, e, info, dtype, f"{where}: tangent of output {k}")
    return primals


@pytest.mark.parametrize("info, dtype, sample", JVP_CASES)
def test_jvp_matches_finite_differences(info: OpInfo, dtype: str, sample: SampleInput):
    skip_if_requested(info, dtype, "fd")
    if not sample.diff:
        pytest.skip("sample has no differentiable input")
    primals = _check_first_order(info, dtype, sample, seed=3)
    # the primal outputs are the op's values (the dual level does not change them)
    args, kwargs, _ = sample.tensors(requires_grad=False)
    plain = [None if o is None else as_numpy(o) for o in flatten_outputs(info.fn(*args, **kwargs))]
    for k, (p, q) in enumerate(zip(primals, plain)):
        if isinstance(q, np.ndarray) and q.dtype.kind in "fc":
            np.testing.assert_allclose(p, q, rtol=1e-12, atol=0, err_msg=f"output {k}")
        elif isinstance(q, np.ndarray):
            np.testing.assert_array_equal(p, q, err_msg=f"output {k}")


@pytest.mark.parametrize("info, dtype, sample", PARTIAL_CASES)
def test_jvp_with_one_dual_input_at_a_time(info: OpInfo, dtype: str, sample: SampleInput):
    """Only input k is a dual, the others are plain tensors (JVP rules see None tangents)."""
    skip_if_requested(info, dtype, "fd")
    where = describe(info, sample)
    rng = np.random.default_rng(8)
    leaves = sample.leaves()
    for k, leaf in enumerate(leaves):
        tangent = random_like(rng, leaf)
        with fwd.dual_level() as level:
            tensors = [to_tensor(x) for x in leaves]
            tensors[k] = fwd.make_dual(tensors[k], to_tensor(tangent), level=level)
            args, kwargs, _ = sample_to_tensors(
                replace_leaves(sample, tensors), requires_grad=False
            )
            outputs = flatten_outputs(info.fn(*args, **kwargs))
            primals, actual = _unpack(outputs, level)
            primals = [None if p is None else as_numpy(p) for p in primals]
            actual = [None if t is None else as_numpy(t) for t in actual]
        tangents = [None] * len(leaves)
        tangents[k] = tangent
        expected = numerical_jvp(_plain_function(info, sample), leaves, tangents, FD_EPS)
        for j, (p, a, e) in enumerate(zip(primals, actual, expected)):
            what = f"{where}: tangent of output {j}, dual input {k} only"
            if e is None:
                assert a is None, f"{what}: a non-differentiable output has a tangent"
                continue
            if a is None:  # the output does not depend on input k: a symbolic zero
                a = np.zeros_like(p)
            assert a.shape == p.shape and a.dtype == p.dtype, f"{what}: {a.shape}/{a.dtype}"
            assert_close(a, e, rtol=info.rtol, atol=info.atol, what=what)


# ---------------------------------------------------------------------------------------------
# tangent memory: in-place ops on an output write into its tangent


def _dual_patterns(n_leaves: int) -> list:
    """Which leaves are duals: all of them, then each one alone (when there are several)."""
    patterns = [tuple(range(n_leaves))]
    if n_leaves > 1:
        patterns.extend((k,) for k in range(n_leaves))
    return patterns


@pytest.mark.parametrize("info, dtype, sample", MEMORY_CASES)
def test_tangent_memory_follows_primal_memory(info: OpInfo, dtype: str, sample: SampleInput):
    """An output's tangent shares memory with an input's tangent exactly when the output shares
    memory with that input (then it must be a view), and is writeable exactly when the output is.

    An in-place op on an output updates its tangent in place (so views see it): a tangent that
    aliases an input's tangent (``x + 1`` returning x's tangent itself) would change the input's
    tangent too, and a read-only broadcast tangent could not be updated at all.
    """
    where = describe(info, sample)
    leaves = sample.leaves()
    rng = np.random.default_rng(9)
    for pattern in _dual_patterns(len(leaves)):
        with fwd.dual_level() as level:
            tensors = [to_tensor(x) for x in leaves]
            for k in pattern:
                tensors[k] = fwd.make_dual(
                    tensors[k], to_tensor(random_like(rng, leaves[k])), level=level
                )
            inputs = [
                (k, tensors[k], fwd.unpack_dual(tensors[k], level=level).tangent) for k in pattern
            ]
            args, kwargs, _ = sample_to_tensors(
                replace_leaves(sample, tensors), requires_grad=False
            )
            outputs = flatten_outputs(info.fn(*args, **kwargs))
            for j, out in enumerate(outputs):
                tangent = (
                    fwd.unpack_dual(out, level=level).tangent
                    if isinstance(out, dualad.Tensor)
                    else None
                )
                if tangent is None:
                    continue
                what = f"{where}: output {j} (dual inputs {pattern})"
                out_array, tangent_array = as_numpy(out), as_numpy(tangent)
                assert tangent_array.flags.writeable == out_array.flags.writeable, (
                    f"{what}: tangent writeable={tangent_array.flags.writeable}, output "
                    f"writeable={out_array.flags.writeable}"
                )
                for k, primal, in_tangent in inputs:
                    primal_shared = np.shares_memory(out_array, as_numpy(primal))
                    assert not primal_shared or out is primal or out._base is not None, (
                        f"{what}: the output shares memory with input {k} but is not a view"
                    )
                    tangent_shared = np.shares_memory(tangent_array, as_numpy(in_tangent))
                    assert primal_shared == tangent_shared, (
                        f"{what}: the output {'shares' if primal_shared else 'does not share'} "
                        f"memory with input {k} but its tangent "
                        f"{'does' if tangent_shared else 'does not'} share the input's tangent's"
                    )


_INPLACE_CASES = [
    pytest.param(lambda x: dualad.prod(x), (), "float64", id="prod-0d"),
    pytest.param(lambda x: dualad.amax(x), (), "float64", id="amax-0d"),
    pytest.param(lambda x: dualad.max(x), (), "float64", id="max-0d"),
    pytest.param(dualad.real, (3,), "complex128", id="real"),
    pytest.param(dualad.imag, (3,), "complex128", id="imag"),
    pytest.param(
        lambda x: dualad.to_device_op(x, device="cpu"), (3,), "float64", id="to_device-same"
    ),
    pytest.param(
        lambda x: dualad.lerp(x, dualad.zeros((2, 3)), 0.25), (3,), "float64", id="lerp-broadcast"
    ),
    pytest.param(
        lambda x: dualad.where(dualad.tensor([True, False, True]), x, dualad.zeros((2, 3))),
        (3,),
        "float64",
        id="where-broadcast",
    ),
    pytest.param(
        lambda x: x + 1.0,
        (3,),
        "float64",
        id="add-scalar",
    ),
    pytest.param(
        lambda x: x + dualad.zeros((2, 3)),
        (3,),
        "float64",
        id="add-broadcast",
    ),
]


@pytest.mark.parametrize("f, shape, dtype", _INPLACE_CASES)
def test_inplace_on_output_keeps_input_tangent(f, shape, dtype):
    """``y = f(x); y.mul_(2)`` doubles y's tangent and leaves x and its tangent alone (y is not a
    view of x)."""
    rng = np.random.default_rng(10)
    x0 = random_like(rng, np.zeros(shape, dtype), 0.5, 1.5)
    t0 = random_like(rng, x0)
    with fwd.dual_level():
        x = fwd.make_dual(dualad.tensor(x0), dualad.tensor(t0))
        y = f(x)
        before = as_numpy(fwd.unpack_dual(y).tangent).copy()
        y.mul_(2.0)
        np.testing.assert_array_equal(as_numpy(fwd.unpack_dual(x).tangent), t0)
        np.testing.assert_array_equal(as_numpy(fwd.unpack_dual(y).tangent), 2 * before)
        np.testing.assert_array_equal(as_numpy(fwd.unpack_dual(x).primal), x0)


# ---------------------------------------------------------------------------------------------
# adjoint identity: forward mode against reverse mode


@pytest.mark.parametrize("info, dtype, sample", ADJOINT_CASES)
def test_adjoint_identity(info: OpInfo, dtype: str, sample: SampleInput):
    skip_if_requested(info, dtype)
    if not sample.diff:
        pytest.skip("sample has no differentiable input")
    where = describe(info, sample)
    rng = np.random.default_rng(4)
    tangents = _random_tangents(sample, rng)
    _, jt = _forward_jvp(info, sample, tangents)

    args, kwargs, leaves = sample.tensors(requires_grad=True)
    outputs = flatten_outputs(info.fn(*args, **kwargs))
    used = [
        k
        for k, o in enumerate(outputs)
        if isinstance(o, dualad.Tensor) and o.requires_grad and is_differentiable_dtype(o.dtype)
    ]
    with_tangent = [k for k, t in enumerate(jt) if t is not None]
    assert used == with_tangent, (
        f"{where}: outputs {used} require grad in reverse mode, outputs {with_tangent} carry "
        "tangents in forward mode"
    )
    assert used, f"{where}: no output requires grad although the inputs do"
    cts = {k: random_like(rng, as_numpy(outputs[k])) for k in used}
    grads = dualad.autograd.grad(
        [outputs[k] for k in used],
        leaves,
        [to_tensor(cts[k], device=outputs[k].device) for k in used],
        allow_unused=True,
    )
    forward_terms = [real_inner(upcast(cts[k]), upcast(jt[k])) for k in used]
    reverse_terms = [
        real_inner(upcast(as_numpy(g)), upcast(t)) for g, t in zip(grads, tangents) if g is not None
    ]
    lhs, rhs = sum(forward_terms), sum(reverse_terms)
    scale = sum(float(np.sum(np.abs(upcast(cts[k])) * np.abs(upcast(jt[k])))) for k in used) + sum(
        float(np.sum(np.abs(upcast(as_numpy(g))) * np.abs(upcast(t))))
        for g, t in zip(grads, tangents)
        if g is not None
    )
    tolerance = ADJOINT_RTOL[dtype] * max(scale, 1.0)
    assert abs(lhs - rhs) <= tolerance, (
        f"{where}: Re<ct, J t> = {lhs!r} (forward) but Re<J^T ct, t> = {rhs!r} (reverse); "
        f"difference {abs(lhs - rhs):.3g} > {tolerance:.3g}"
    )


@pytest.mark.parametrize("info, dtype, sample", REVERSE_OVER_FORWARD_CASES)
def test_reverse_mode_through_the_jvp_rule_gives_the_vjp(
    info: OpInfo, dtype: str, sample: SampleInput
):
    """The JVP rules are dualad computations, linear in the tangent: the gradient of
    ``Re<ct, J t>`` with respect to the tangents ``t`` (reverse mode through the JVP rule) is the
    VJP ``J^T ct``, exactly."""
    skip_if_requested(info, dtype)
    where = describe(info, sample)
    rng = np.random.default_rng(11)
    leaves = sample.leaves()
    tangents = [to_tensor(random_like(rng, leaf), requires_grad=True) for leaf in leaves]
    with fwd.dual_level() as level:
        duals = [
            fwd.make_dual(to_tensor(leaf), t, level=level) for leaf, t in zip(leaves, tangents)
        ]
        args, kwargs, _ = sample_to_tensors(replace_leaves(sample, duals), requires_grad=False)
        outputs = flatten_outputs(info.fn(*args, **kwargs))
        _, jt = _unpack(outputs, level)
    used = [k for k, t in enumerate(jt) if t is not None]
    assert used, f"{where}: no output has a tangent although the inputs do"
    cts = {k: random_like(rng, as_numpy(jt[k])) for k in used}
    # a tangent that does not require grad is a constant (zero) map of the input tangents
    connected = [k for k in used if jt[k].requires_grad]
    through_jvp = [None] * len(tangents)
    if connected:
        through_jvp = dualad.autograd.grad(
            [jt[k] for k in connected],
            tangents,
            [to_tensor(cts[k], device=jt[k].device) for k in connected],
            allow_unused=True,
        )
    args, kwargs, inputs = sample.tensors(requires_grad=True)
    outputs = flatten_outputs(info.fn(*args, **kwargs))
    vjp = dualad.autograd.grad(
        [outputs[k] for k in used],
        inputs,
        [to_tensor(cts[k], device=outputs[k].device) for k in used],
        allow_unused=True,
    )
    for k, (a, e) in enumerate(zip(through_jvp, vjp)):
        a = np.zeros_like(leaves[k]) if a is None else as_numpy(a)
        e = np.zeros_like(leaves[k]) if e is None else as_numpy(e)
        assert_close(a, e, rtol=1e-10, atol=1e-12, what=f"{where}: gradient w.r.t. tangent {k}")


# ---------------------------------------------------------------------------------------------
# JVP of JVP: two nested levels against finite differences of the first-order JVP


def _first_order_function(info: OpInfo, sample: SampleInput, tangents: list):
    """``G(*leaf_arrays)``: the forward-mode JVP along ``tangents`` at the leaves, as NumPy."""

    def first_order(*arrays):
        _, out_tangents = _forward_jvp(info, sample.with_leaves(arrays), tangents)
        return out_tangents

    return first_order


@pytest.mark.parametrize("info, dtype, sample", SECOND_ORDER_CASES)
def test_jvp_of_jvp_matches_finite_differences(info: OpInfo, dtype: str, sample: SampleInput):
    skip_if_requested(info, dtype, "fd", "gradgrad")
    if not sample.diff:
        pytest.skip("sample has no differentiable input")
    where = describe(info, sample)
    rng = np.random.default_rng(5)
    t1 = _random_tangents(sample, rng)  # outer level
    t2 = _random_tangents(sample, rng)  # inner level
    with fwd.dual_level() as outer, fwd.dual_level() as inner:
        outputs = _dual_call(info.fn, sample, sample.leaves(), [(outer, t1), (inner, t2)])
        _, inner_tangents = _unpack(outputs, inner)
        first, second = [], []
        for t in inner_tangents:
            p, tt = _unpack([t], outer) if t is not None else ([None], [None])
            first.append(None if p[0] is None else as_numpy(p[0]))
            second.append(None if tt[0] is None else as_numpy(tt[0]))
        _, outer_tangents = _unpack(outputs, outer)
        outer_tangents = [None if t is None else as_numpy(t) for t in outer_tangents]
    # the first-order parts of the nested computation
    _, jt1 = _forward_jvp(info, sample, t1)
    _, jt2 = _forward_jvp(info, sample, t2)
    for k in range(len(outputs)):
        for got, want, what in ((outer_tangents[k], jt1[k], "t1"), (first[k], jt2[k], "t2")):
            if want is None:
                assert got is None, f"{where}: output {k} has a {what} tangent at one level only"
            else:
                assert_close(got, want, rtol=1e-10, atol=1e-12, what=f"{where}: J {what}, {k}")
    expected = numerical_jvp(_first_order_function(info, sample, t2), sample.leaves(), t1, FD_EPS)
    for k, (a, e) in enumerate(zip(second, expected)):
        if e is None:
            continue
        if a is None:  # no second-order tangent: a symbolic zero (linear ops)
            a = np.zeros_like(e)
        assert_close(
            a,
            e,
            rtol=max(info.rtol, 1e-4),
            atol=max(info.atol, 1e-5),
            what=f"{where}: second directional derivative of output {k}",
        )


# ---------------------------------------------------------------------------------------------
# forward over reverse: the VJP rules run on duals


def _vjp_function(info: OpInfo, sample: SampleInput, cts: dict):
    """``G(*leaf_arrays)``: the reverse-mode VJP with the cotangents ``cts``, as NumPy."""

    def vjp(*arrays):
        args, kwargs, leaves = sample.with_leaves(arrays).tensors(requires_grad=True)
        outputs = flatten_outputs(info.fn(*args, **kwargs))
        grads = dualad.autograd.grad(
            [outputs[k] for k in cts],
            leaves,
            [to_tensor(c, device=outputs[k].device) for k, c in cts.items()],
            allow_unused=True,
        )
        return [np.zeros_like(a) if g is None else as_numpy(g) for a, g in zip(arrays, grads)]

    return vjp


@pytest.mark.parametrize("info, dtype, sample", FORWARD_OVER_REVERSE_CASES)
def test_forward_over_reverse_matches_finite_differences(
    info: OpInfo, dtype: str, sample: SampleInput
):
    """``autograd.grad`` inside a dual level runs the VJP rules on duals: the gradient's tangent
    is the derivative of the VJP along the inputs' tangents."""
    skip_if_requested(info, dtype, "fd", "gradgrad")
    where = describe(info, sample)
    rng = np.random.default_rng(12)
    leaves = sample.leaves()
    directions = [random_like(rng, leaf) for leaf in leaves]
    with fwd.dual_level() as level:
        duals = [
            fwd.make_dual(to_tensor(leaf, requires_grad=True), to_tensor(v), level=level)
            for leaf, v in zip(leaves, directions)
        ]
        args, kwargs, _ = sample_to_tensors(replace_leaves(sample, duals), requires_grad=False)
        outputs = flatten_outputs(info.fn(*args, **kwargs))
        used = [
            k
            for k, o in enumerate(outputs)
            if isinstance(o, dualad.Tensor) and o.requires_grad and is_differentiable_dtype(o.dtype)
        ]
        assert used, f"{where}: no output requires grad although the inputs do"
        cts = {k: random_like(rng, as_numpy(outputs[k])) for k in used}
        grads = dualad.autograd.grad(
            [outputs[k] for k in used],
            duals,
            [to_tensor(c, device=outputs[k].device) for k, c in cts.items()],
            allow_unused=True,
        )
        unpacked = [(None, None) if g is None else fwd.unpack_dual(g, level=level) for g in grads]
        primals = [None if p is None else as_numpy(p) for p, _ in unpacked]
        tangents = [None if t is None else as_numpy(t) for _, t in unpacked]
    plain = _vjp_function(info, sample, cts)(*leaves)
    expected = numerical_jvp(_vjp_function(info, sample, cts), leaves, directions, FD_EPS)
    for k, leaf in enumerate(leaves):
        p = np.zeros_like(leaf) if primals[k] is None else primals[k]
        assert_close(p, plain[k], rtol=1e-10, atol=1e-12, what=f"{where}: gradient {k}")
        t = np.zeros_like(leaf) if tangents[k] is None else tangents[k]
        assert_close(
            t,
            expected[k],
            rtol=max(info.rtol, 1e-4),
            atol=max(info.atol, 1e-5),
            what=f"{where}: tangent of gradient {k}",
        )


# ---------------------------------------------------------------------------------------------
# non-differentiable ops


def _floating_positions(sample: SampleInput) -> tuple:
    """Every argument position and keyword holding floating/complex arrays."""

    def floating(value):
        if isinstance(value, np.ndarray):
            return is_differentiable_dtype(value.dtype)
        if isinstance(value, (list, tuple)) and value:
            return all(isinstance(v, np.ndarray) for v in value) and all(
                is_differentiable_dtype(v.dtype) for v in value
            )
        return False

    positions = [i for i, a in enumerate(sample.args) if floating(a)]
    names = [k for k, v in sample.kwargs.items() if floating(v)]
    return (*positions, *names)


@pytest.mark.parametrize("info, dtype, sample", NONDIFF_CASES)
def test_nondifferentiable_ops_on_duals(info: OpInfo, dtype: str, sample: SampleInput):
    every_float = replace(sample, diff=_floating_positions(sample))
    leaves = every_float.leaves()
    if not leaves:
        pytest.skip("no floating input to make dual")
    where = describe(info, sample)
    args, kwargs, _ = sample.tensors(requires_grad=False)
    expected = flatten_outputs(info.fn(*args, **kwargs))
    rng = np.random.default_rng(6)
    tangents = [random_like(rng, leaf) for leaf in leaves]
    with fwd.dual_level() as level:
        outputs = _dual_call(info.fn, every_float, leaves, [(level, tangents)])
        primals, out_tangents = _unpack(outputs, level)
        assert len(outputs) == len(expected), f"{where}: {len(outputs)} outputs"
        for k, (p, t, e) in enumerate(zip(primals, out_tangents, expected)):
            assert t is None, f"{where}: output {k} of a non-differentiable op has a tangent"
            if isinstance(e, dualad.Tensor):
                np.testing.assert_array_equal(as_numpy(p), as_numpy(e), err_msg=where)


# ---------------------------------------------------------------------------------------------
# multi-output ops


@pytest.mark.parametrize("info, dtype, sample", MULTI_OUTPUT_CASES)
def test_multi_output_tangents(info: OpInfo, dtype: str, sample: SampleInput):
    """Floating outputs of multi-output ops get the right tangents, index outputs none."""
    skip_if_requested(info, dtype, "fd")
    primals = _check_first_order(info, dtype, sample, seed=7)
    index_outputs = [k for k, p in enumerate(primals) if p is not None and p.dtype.kind in "iub"]
    if info.name in ("max", "min") and len(primals) == 2:
        assert index_outputs == [1], f"{describe(info, sample)}: indices are output 1"


def test_multi_output_cases_cover_several_outputs():
    """The multi-output selection really reaches ops with several outputs and index outputs."""
    names = {case.values[0].name for case in MULTI_OUTPUT_CASES}
    assert {"max", "min", "unbind", "split", "chunk", "var_mean", "std_mean"} <= names


def test_max_with_dim_on_duals():
    x0 = np.array([[1.0, 5.0, 2.0], [7.0, 3.0, 4.0]])
    t0 = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    with fwd.dual_level():
        values, indices = dualad.max(fwd.make_dual(dualad.tensor(x0), dualad.tensor(t0)), dim=1)
        np.testing.assert_array_equal(as_numpy(fwd.unpack_dual(values).tangent), [0.2, 0.4])
        assert fwd.unpack_dual(indices).tangent is None
        np.testing.assert_array_equal(as_numpy(indices), [1, 0])


def test_complex_result_of_real_tangents_has_a_complex_tangent():
    """``x + 1j * c`` with a real dual ``x`` and a constant ``c``: the result is complex, so is
    its tangent (found by gradcheck's complex-input split: imag/scatter on it failed)."""
    x0, t0, c0 = np.array([1.0, -2.0]), np.array([0.5, 3.0]), np.array([0.25, 4.0])
    with fwd.dual_level():
        z = fwd.make_dual(dualad.tensor(x0), dualad.tensor(t0)) + dualad.tensor(c0) * 1j
        tangent = fwd.unpack_dual(z).tangent
        assert tangent.dtype == dualad.complex128
        np.testing.assert_array_equal(as_numpy(tangent), t0 + 0j)
        np.testing.assert_array_equal(as_numpy(fwd.unpack_dual(dualad.imag(z)).tangent), [0, 0])
        np.testing.assert_array_equal(as_numpy(fwd.unpack_dual(dualad.real(z)).tangent), t0)
        base = dualad.tensor(np.zeros(3, dtype=np.complex128))
        out = dualad.scatter(base, 0, dualad.tensor(np.array([2, 0])), z)
        np.testing.assert_array_equal(as_numpy(fwd.unpack_dual(out).tangent), [3.0, 0, 0.5])


# ---------------------------------------------------------------------------------------------
# ops without a JVP rule


def test_op_without_jvp_rule_raises():
    op = OpDef(
        "_test_op_without_jvp",
        lambda xp, x: x * 2,
        vjp=lambda cts, outs, args, params, needs: (cts[0] * 2,),
        jvp=None,
    )
    register(op)
    try:
        x = dualad.tensor([1.0, 2.0])
        # without a dual the op runs normally
        np.testing.assert_array_equal(as_numpy(dispatch(op, (x,), {})), [2.0, 4.0])
        with fwd.dual_level():
            dual = fwd.make_dual(x, dualad.ones(2))
            with pytest.raises(
                NotImplementedError,
                match=r"Trying to use forward AD with .* that does not support it",
            ):
                dispatch(op, (dual,), {})
    finally:
        del REGISTRY[op.name]
    assert op.name not in REGISTRY


def test_every_registered_differentiable_op_has_a_jvp_rule():
    missing = sorted(name for name, op in REGISTRY.items() if op.differentiable and op.jvp is None)
    assert not missing, (
        f"registered differentiable ops without a JVP rule: {missing}; "
        "tests/ops/test_registry_completeness.py says what to add for each"
    )
