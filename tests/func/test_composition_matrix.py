"""The composition matrix (DESIGN.md §4): every differentiable OpInfo through composed transforms.

For each differentiable entry of ``dualad.testing.opdb.all_ops()`` and each of its float64
samples (complex dtypes are left to the per-op tests) the op becomes ``f(*leaves)``: its
differentiable outputs flattened and concatenated into one small 1-D tensor. Then:

1. ``jacrev(f) == jacfwd(f) ==`` the finite-difference Jacobian;
2. (twice-differentiable, at most ``HESSIAN_MAX`` input elements) ``hessian(g)`` of the scalar
   ``g = (f * c).sum()`` (``c`` fixed random) is symmetric and equals the finite-difference
   Jacobian of ``func.grad(g)``;
3. ``vmap(func.grad(g))`` over a batch of 3 inputs equals a Python loop of ``func.grad``;
4. ``dualad.autograd.grad(..., is_grads_batched=True)`` with 3 cotangents equals a loop;
5. (twice-differentiable) forward-over-reverse ``jvp(grad(g))``, reverse-over-forward
   ``grad(jvp(g))`` and ``func.hvp`` give the same Hessian-vector product, which matches a
   central difference of ``func.grad(g)`` along the tangent;
6. (entries with leaves of one shape, first such sample) one tensor passed in all those slots
   gives what copies of it give: ``func.grad(g)``, ``jacrev(f)``, ``jacfwd(f)`` per slot;
7. (twice-differentiable, first small sample) nested dual levels unpacked in either order give
   the same mixed second derivative ``w^T H v``, that of ``func.hvp``.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import dualad
from dualad import func
from dualad import fwd as fwd_ad
from dualad.testing._numeric import flatten_outputs, is_differentiable_dtype, numerical_jvp
from dualad.testing.opdb import all_ops
from tests._helpers import assert_close, function_of_leaves, replace_leaves

DTYPE = "float64"
BATCH = 3
HESSIAN_MAX = 12  # input elements; the Hessian check runs 2 * n gradients
RTOL, ATOL = 1e-6, 1e-8  # transform against transform (same arithmetic, different order)

INFOS = [info for info in all_ops() if info.differentiable and DTYPE in info.dtypes]

# entry name -> reason, for checks (by name) an entry cannot pass yet
XFAIL: dict[str, dict[str, str]] = {}


def _rng(info, check: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"composition:{check}:{info.name}".encode()))


class Case:
    """An entry's float64 sample as ``f(*leaves) -> 1-D tensor`` and ``g -> scalar``."""

    def __init__(self, info, index: int = 0) -> None:
        self.info = info
        self.sample = info.sample_inputs(DTYPE)[index]
        self.arrays = [np.asarray(a) for a in self.sample.leaves()]
        self.args, self.kwargs, self.leaves = self.sample.tensors(requires_grad=False)
        self.argnums = tuple(range(len(self.arrays)))
        rng = _rng(info, "c")
        out = self.f(*self.inputs())
        self.c = dualad.tensor(rng.uniform(-1.0, 1.0, tuple(out.shape)))
        self.fd_eval = function_of_leaves(info, self.sample)

    def inputs(self) -> list:
        return [dualad.tensor(a.copy()) for a in self.arrays]

    def size(self) -> int:
        return sum(a.size for a in self.arrays)

    def f(self, *xs):
        args, kwargs = replace_leaves(self.args, self.kwargs, self.leaves, xs)
        outs = []
        for o in flatten_outputs(self.info.fn(*args, **kwargs)):
            if isinstance(o, dualad.Tensor) and is_differentiable_dtype(o.dtype.name):
                # a complex output (astype to complex) contributes its real and imaginary parts
                parts = (dualad.real(o), dualad.imag(o)) if o.dtype.kind == "c" else (o,)
                outs.extend(p.reshape(-1) for p in parts)
        return outs[0] if len(outs) == 1 else dualad.cat(outs)

    def g(self, *xs):
        return (self.f(*xs) * self.c).sum()

    def f_numpy(self, *arrays) -> np.ndarray:
        outs = []
        for o in self.fd_eval(*arrays):
            if o is not None and is_differentiable_dtype(o.dtype):
                parts = (o.real, o.imag) if o.dtype.kind == "c" else (o,)
                outs.extend(np.asarray(p).reshape(-1) for p in parts)
        return np.concatenate(outs)

    def fd_jacobian(self, fn, arrays) -> list:
        """Central-difference Jacobian blocks ``(out, *x.shape)`` of ``fn(*arrays)``."""
        blocks = []
        for i, a in enumerate(arrays):
            cols = []
            for k in range(a.size):
                tangents = [None] * len(arrays)
                e = np.zeros(a.size)
                e[k] = 1.0
                tangents[i] = e.reshape(a.shape)
                (col,) = numerical_jvp(fn, arrays, tangents)
                cols.append(col)
            blocks.append(np.stack(cols, axis=-1).reshape(-1, *a.shape))
        return blocks

    def grad_numpy(self, *arrays) -> np.ndarray:
        grads = func.grad(self.g, self.argnums)(*(dualad.tensor(np.asarray(a)) for a in arrays))
        return np.concatenate([np.asarray(gr.numpy()).reshape(-1) for gr in grads])

    def what(self, check: str) -> str:
        return f"{self.info.name} [{check}] note={self.sample.note!r}"


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _tols(info) -> tuple[float, float]:
    """Tolerances against finite differences."""
    return max(info.rtol, 1e-4), max(info.atol, 1e-5)


def _params(check: str, keep=lambda info, sample: True) -> list:
    out = []
    for info in INFOS:
        marks = []
        reason = XFAIL.get(info.name, {}).get(check)
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        for index, sample in enumerate(info.sample_inputs(DTYPE)):
            if keep(info, sample):
                out.append(pytest.param(info, index, id=f"{info.name}-{index}", marks=marks))
    return out


def _twice(info, sample=None) -> bool:
    return info.twice_differentiable and info.skip_reason("gradgrad") is None


# ---------------------------------------------------------------------------------------------
# 1. jacrev == jacfwd == finite differences


@pytest.mark.parametrize(("info", "index"), _params("jacobian"))
def test_jacrev_jacfwd_match_finite_differences(info, index):
    case = Case(info, index)
    xs = case.inputs()
    rev = func.jacrev(case.f, case.argnums)(*xs)
    fwd = func.jacfwd(case.f, case.argnums)(*xs)
    expected = case.fd_jacobian(case.f_numpy, case.arrays)
    rtol, atol = _tols(info)
    for i, (r, f, e) in enumerate(zip(rev, fwd, expected)):
        what = case.what(f"jacobian wrt leaf {i}")
        assert_close(_np(r), _np(f), rtol=RTOL, atol=ATOL, what=f"{what}: jacrev vs jacfwd")
        assert_close(_np(r), e, rtol=rtol, atol=atol, what=f"{what}: jacrev vs FD")


# ---------------------------------------------------------------------------------------------
# 2. hessian: symmetric and the Jacobian of the gradient


def _small_twice(info, sample) -> bool:
    return _twice(info) and sum(a.size for a in sample.leaves()) <= HESSIAN_MAX


@pytest.mark.parametrize(("info", "index"), _params("hessian", _small_twice))
def test_hessian_is_symmetric_and_matches_fd_of_grad(info, index):
    case = Case(info, index)
    h = func.hessian(case.g, case.argnums)(*case.inputs())
    sizes = [a.size for a in case.arrays]
    full = np.block(
        [
            [_np(h[i][j]).reshape(sizes[i], sizes[j]) for j in range(len(sizes))]
            for i in range(len(sizes))
        ]
    )
    assert_close(full, full.T, rtol=RTOL, atol=ATOL, what=case.what("hessian symmetry"))
    blocks = case.fd_jacobian(case.grad_numpy, case.arrays)
    expected = np.concatenate([b.reshape(b.shape[0], -1) for b in blocks], axis=1)
    rtol, atol = _tols(info)
    assert_close(full, expected, rtol=rtol, atol=atol, what=case.what("hessian vs FD of grad"))


# ---------------------------------------------------------------------------------------------
# 3. vmap(grad) == loop of grad


def _batch(case) -> list[np.ndarray]:
    """``BATCH`` inputs near the sample: small relative perturbations keep signs, domains and
    orderings."""
    rng = _rng(case.info, "batch")
    out = []
    for a in case.arrays:
        scale = 1.0 + 0.02 * rng.uniform(-1.0, 1.0, (BATCH, *a.shape))
        scale[0] = 1.0
        out.append(a[None] * scale)
    return out


@pytest.mark.parametrize(("info", "index"), _params("vmap_grad"))
def test_vmap_of_grad_matches_a_loop(info, index):
    case = Case(info, index)
    batch = _batch(case)
    grad_g = func.grad(case.g, case.argnums)
    batched = func.vmap(grad_g, in_dims=(0,) * len(batch))(*(dualad.tensor(b) for b in batch))
    for k in range(BATCH):
        single = grad_g(*(dualad.tensor(b[k]) for b in batch))
        for i, (bg, sg) in enumerate(zip(batched, single)):
            assert_close(
                _np(bg)[k],
                _np(sg),
                rtol=RTOL,
                atol=ATOL,
                what=case.what(f"vmap(grad) example {k} leaf {i}"),
            )


# ---------------------------------------------------------------------------------------------
# 4. autograd.grad(is_grads_batched=True) == loop


@pytest.mark.parametrize(("info", "index"), _params("batched_grad"))
def test_is_grads_batched_matches_a_loop(info, index):
    case = Case(info, index)
    xs = [x.requires_grad_() for x in case.inputs()]
    out = case.f(*xs)
    rng = _rng(info, "cotangents")
    cts = dualad.tensor(rng.uniform(-1.0, 1.0, (BATCH, *out.shape)))
    batched = dualad.autograd.grad(
        out,
        xs,
        grad_outputs=cts,
        retain_graph=True,
        is_grads_batched=True,
        allow_unused=True,
        materialize_grads=True,
    )
    for k in range(BATCH):
        single = dualad.autograd.grad(
            out,
            xs,
            grad_outputs=cts[k],
            retain_graph=True,
            allow_unused=True,
            materialize_grads=True,
        )
        for i, (bg, sg) in enumerate(zip(batched, single)):
            assert_close(
                _np(bg)[k],
                _np(sg),
                rtol=RTOL,
                atol=ATOL,
                what=case.what(f"is_grads_batched cotangent {k} leaf {i}"),
            )


# ---------------------------------------------------------------------------------------------
# 5. forward-over-reverse == reverse-over-forward == func.hvp == FD of grad


@pytest.mark.parametrize(("info", "index"), _params("hvp", _twice))
def test_hvp_three_ways(info, index):
    case = Case(info, index)
    rng = _rng(info, "tangent")
    vs_np = [rng.uniform(-1.0, 1.0, a.shape) for a in case.arrays]
    vs = tuple(dualad.tensor(v) for v in vs_np)
    xs = tuple(case.inputs())

    _, fwd_over_rev = func.jvp(func.grad(case.g, case.argnums), xs, vs)

    def directional(*p):
        return func.jvp(case.g, p, vs)[1]

    rev_over_fwd = func.grad(directional, case.argnums)(*xs)
    _, product = func.hvp(case.g, xs, vs)
    (expected,) = numerical_jvp(case.grad_numpy, case.arrays, vs_np)
    rtol, atol = _tols(info)
    flat = np.concatenate([_np(p).reshape(-1) for p in fwd_over_rev])
    for name, other in (("reverse-over-forward", rev_over_fwd), ("func.hvp", product)):
        got = np.concatenate([_np(p).reshape(-1) for p in other])
        assert_close(got, flat, rtol=RTOL, atol=ATOL, what=case.what(f"{name} vs fwd-over-rev"))
    assert_close(flat, expected, rtol=rtol, atol=atol, what=case.what("hvp vs FD of grad"))


# ---------------------------------------------------------------------------------------------
# 6. one tensor in several argument slots == copies of it


def _shared_groups(sample) -> list[list[int]]:
    """Positions of leaves with one shape and dtype (groups of two or more)."""
    groups: dict = {}
    for i, a in enumerate(sample.leaves()):
        a = np.asarray(a)
        groups.setdefault((a.shape, a.dtype.str), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def _first_sample_params(keep) -> list:
    """One sample per entry (the first that ``keep`` accepts): these checks look for wrong
    plumbing, not per-sample numerics, and keep the default run short."""
    out = []
    for info in INFOS:
        for index, sample in enumerate(info.sample_inputs(DTYPE)):
            if keep(info, sample):
                out.append(pytest.param(info, index, id=f"{info.name}-{index}"))
                break
    return out


@pytest.mark.parametrize(
    ("info", "index"), _first_sample_params(lambda info, sample: bool(_shared_groups(sample)))
)
def test_one_tensor_in_several_slots_matches_copies(info, index):
    case = Case(info, index)
    arrays = list(case.arrays)
    for group in _shared_groups(case.sample):
        for j in group[1:]:
            arrays[j] = arrays[group[0]]
    copies = [dualad.tensor(a.copy()) for a in arrays]
    shared = list(copies)
    for group in _shared_groups(case.sample):
        for j in group[1:]:
            shared[j] = shared[group[0]]  # the same tensor object in every slot of the group
    for name, transform, fn in (
        ("grad", func.grad, case.g),
        ("jacrev", func.jacrev, case.f),
        ("jacfwd", func.jacfwd, case.f),
    ):
        # (one value in several slots may leave the op's domain, xlogy(x, x) at x < 0: NaN
        # either way, compared as equal)
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = transform(fn, case.argnums)(*copies)
            got = transform(fn, case.argnums)(*shared)
        for i, (a, e) in enumerate(zip(got, expected)):
            what = case.what(f"{name} slot {i}: one tensor in slots {_shared_groups(case.sample)}")
            assert_close(_np(a), _np(e), rtol=RTOL, atol=ATOL, what=what)


# ---------------------------------------------------------------------------------------------
# 7. nested dual levels: the mixed derivative in either unpacking order


@pytest.mark.parametrize(("info", "index"), _first_sample_params(_small_twice))
def test_nested_dual_levels_either_order(info, index):
    case = Case(info, index)
    rng = _rng(info, "nested")
    vs = [dualad.tensor(rng.uniform(-1.0, 1.0, a.shape)) for a in case.arrays]
    ws = [dualad.tensor(rng.uniform(-1.0, 1.0, a.shape)) for a in case.arrays]
    xs = case.inputs()
    _, hv = func.hvp(case.g, tuple(xs), tuple(vs))
    expected = sum(float((h * w).sum()) for h, w in zip(hv, ws))
    unpack = fwd_ad.unpack_dual
    with fwd_ad.dual_level() as outer:
        duals = [fwd_ad.make_dual(x, v, level=outer) for x, v in zip(xs, vs)]
        with fwd_ad.dual_level() as inner:
            duals = [fwd_ad.make_dual(d, w, level=inner) for d, w in zip(duals, ws)]
            y = case.g(*duals)
            results = {}
            for first, second in ((outer, inner), (inner, outer)):
                tangent = unpack(unpack(y, level=first).tangent, level=second).tangent
                results[(first, second)] = None if tangent is None else float(tangent)
    for order, got in results.items():
        what = case.what(f"nested levels, unpacked {order}")
        assert got is not None or expected == 0.0, f"{what}: no mixed tangent"
        assert_close(got or 0.0, expected, rtol=RTOL, atol=ATOL, what=f"{what} vs func.hvp")
