"""``sparse_jacobian`` against dense ``jacfwd`` over the op database and random programs:
equal values, and a detected pattern holding every nonzero (the detection is conservative)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dualad
import dualad.numpy as dnp
from dualad.func import jacfwd, sparse_hessian, sparse_jacobian
from dualad.nn import functional as F
from dualad.testing import strategies as ds
from dualad.testing._numeric import as_numpy, flatten_outputs, sample_to_tensors, to_tensor
from dualad.testing.opdb import all_ops

# samples per op checked (the first ones: every op's basic shapes)
_SAMPLES = 2


def _substitute(value, mapping: dict):
    if id(value) in mapping:
        return mapping[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(_substitute(v, mapping) for v in value)
    if isinstance(value, dict):
        return {k: _substitute(v, mapping) for k, v in value.items()}
    return value


class _NoFloatingOutput(Exception):
    """The op gives no floating or complex output (indices, booleans): no Jacobian."""


def _flat_function(info, sample):
    """``(f, x)``: the op on the sample, as a function of one vector holding its
    differentiable leaves, returning its floating outputs flattened into one vector."""
    args, kwargs, leaves = sample_to_tensors(sample, requires_grad=False)
    shapes = [tuple(t.shape) for t in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    x = np.concatenate([as_numpy(t).ravel() for t in leaves]) if leaves else None

    def f(vector):
        pieces = []
        offset = 0
        for shape, size in zip(shapes, sizes):
            pieces.append(vector[offset : offset + size].reshape(shape))
            offset += size
        mapping = {id(t): p for t, p in zip(leaves, pieces)}
        out = info.fn(*_substitute(args, mapping), **_substitute(kwargs, mapping))
        outs = []
        for o in flatten_outputs(out):
            if isinstance(o, dualad.Tensor) and o.dtype.kind == "f":
                outs.append(o.reshape(-1))
            elif isinstance(o, dualad.Tensor) and o.dtype.kind == "c":
                # (complex outputs as their real and imaginary parts: sparse Jacobians are
                # real, and the pattern must hold for both parts)
                outs += [dualad.real(o).reshape(-1), dualad.imag(o).reshape(-1)]
        if not outs:
            raise _NoFloatingOutput(info.name)
        return dualad.cat(outs) if len(outs) > 1 else outs[0]

    return f, x


def _cases():
    for info in all_ops():
        if not info.differentiable or "float64" not in info.dtypes:
            continue
        for i, sample in enumerate(info.sample_inputs("float64")[:_SAMPLES]):
            yield pytest.param(info, sample, id=f"{info.name}-{i}")


def _dense(matrix) -> np.ndarray:
    """A sparse result (SciPy's, or cupyx's on "cuda") as a NumPy array."""
    return (matrix.get() if hasattr(matrix, "get") else matrix).toarray()


def _check(f, x):
    x_host, x = x, to_tensor(x)  # (on the test device: DUALAD_TEST_DEVICE)
    try:
        dense = as_numpy(jacfwd(f)(x))
    except NotImplementedError:  # (an op CuPy cannot run: an expected failure on "cuda")
        raise
    except Exception as error:  # an op jacfwd cannot run here: nothing to compare with
        pytest.skip(f"jacfwd: {type(error).__name__}: {error}")
    dense = dense.reshape(-1, x_host.size)
    jac = sparse_jacobian(f)
    result = jac(x)
    assert result.shape == dense.shape
    pattern = jac.pattern.toarray()
    missed = (dense != 0) & ~pattern
    assert not missed.any(), f"missed nonzeros at {np.argwhere(missed)[:5].tolist()}"
    np.testing.assert_allclose(_dense(result), dense, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("info, sample", list(_cases()))
def test_sparse_jacobian_matches_jacfwd_over_the_op_database(info, sample):
    f, x = _flat_function(info, sample)
    if x is None or x.size == 0:
        pytest.skip("no differentiable input")
    try:
        f(to_tensor(x))
    except _NoFloatingOutput:
        pytest.skip("no floating or complex output")
    _check(f, x)


def _hessian_cases():
    for info in all_ops():
        if info.differentiable and info.twice_differentiable and "float64" in info.dtypes:
            samples = info.sample_inputs("float64")
            if samples:
                yield pytest.param(info, samples[0], id=info.name)


@pytest.mark.parametrize("info, sample", list(_hessian_cases()))
def test_sparse_hessian_matches_hessian_over_the_op_database(info, sample):
    f, x = _flat_function(info, sample)
    if x is None or x.size == 0:
        pytest.skip("no differentiable input")

    def loss(v):  # a scalar through the op: its curvature and the square's
        return (f(v) ** 2).sum()

    x = to_tensor(x)  # (on the test device: DUALAD_TEST_DEVICE)
    try:
        dense = as_numpy(dualad.func.hessian(loss)(x))
    except _NoFloatingOutput:
        pytest.skip("no floating or complex output")
    except NotImplementedError:  # (an op CuPy cannot run: an expected failure on "cuda")
        raise
    except Exception as error:  # (not floating, or not twice differentiable here)
        pytest.skip(f"hessian: {type(error).__name__}: {error}")
    h = sparse_hessian(loss)
    result = _dense(h(x))
    missed = (dense != 0) & ~h.pattern.toarray()
    assert not missed.any(), f"missed nonzeros at {np.argwhere(missed)[:5].tolist()}"
    np.testing.assert_allclose(result, dense, rtol=1e-9, atol=1e-10)


@given(
    ds.programs(max_ops=4),
    ds.arrays(shape=ds.shapes(min_dims=1, max_dims=2, max_side=5)),
    st.sampled_from(["stencil", "reverse", "pairs", "sum"]),
)
def test_random_programs_around_moving_ops(program, x, wrap):
    """Random elementwise programs composed with ops that move elements and reduce."""
    x = np.asarray(x, dtype=np.float64).ravel()
    if wrap == "stencil":

        def f(v):
            y = program(v)
            return y[1:] * program(v[:-1]) + v[:-1]

    elif wrap == "reverse":

        def f(v):
            return program(v.flip(0)) * v

    elif wrap == "pairs":

        def f(v):
            return program(dualad.cat([v[::2], v[1::2]]))

    else:

        def f(v):
            return program(v).sum(0, keepdim=True) * v

    if x.size < 2:
        x = np.array([0.3, -0.7])
    _check(f, x)


@given(ds.programs(max_ops=3), ds.arrays(shape=ds.shapes(min_dims=1, max_dims=1, max_side=6)))
def test_random_programs_hessian(program, x):
    x = np.asarray(x, dtype=np.float64).ravel()

    def f(v):
        return (program(v[1:]) * v[:-1]).sum() + program(v).sum()

    if x.size < 2:
        x = np.array([0.3, -0.7])
    dense = np.asarray(dualad.func.hessian(f)(x))
    h = sparse_hessian(f)
    result = _dense(h(x))
    assert not ((dense != 0) & ~h.pattern.toarray()).any()
    np.testing.assert_allclose(result, dense, rtol=1e-9, atol=1e-11)


# ---------------------------------------------------------------------------------------------
# random programs mixing the ops whose rules follow their parameters (scans, FFT lines,
# selections at traced indices, stacked products, einsum, convolutions): (r, c) -> (r, c)


def _depthwise(u):
    r, c = u.shape
    kernel = dualad.tensor(np.linspace(0.5, 1.5, 3 * r).reshape(r, 1, 3))
    return F.conv1d(u.reshape(1, r, c), kernel, padding=1, groups=r).reshape(r, c)


def _traced_kernel(u):
    r, c = u.shape
    return F.conv1d(u.reshape(r, 1, c), u[:1, :3].reshape(1, 1, 3), padding=1).reshape(r, c)


def _rows_convolved(u):
    kernel = dualad.tensor([0.25, 0.5, 1.0])
    return dualad.stack([dnp.convolve(row, kernel, "same") for row in u])


_STAGES = {
    "sin": dualad.sin,
    "cumsum": lambda u: dualad.cumsum(u, 0),
    "cumprod": lambda u: dualad.cumprod(u, 1),
    "logcumsumexp": lambda u: dualad.logcumsumexp(u, 1),
    "cummax": lambda u: dualad.cummax(u, 0).values,
    "softmax": lambda u: dualad.softmax(u, 1),
    "fft": lambda u: dualad.fft.fft(u, dim=0).real + dualad.fft.ifft(u, dim=1).imag,
    "rfft": lambda u: dualad.fft.irfft(dualad.fft.rfft(u, dim=1) * 1.5, n=u.shape[1], dim=1),
    "sort": lambda u: dualad.sort(u, 1).values,
    "topk": lambda u: u * dualad.topk(u, 1, 1).values,
    "max": lambda u: u * dualad.max(u, 0, keepdim=True).values,
    "take_along": lambda u: dualad.take_along_dim(u, dualad.sort(u, 1).indices, 1) * u,
    "stacked_matmul": lambda u: (u.reshape(*u.shape, 1) @ u.reshape(u.shape[0], 1, -1)).sum(2),
    "einsum": lambda u: dualad.einsum("ij,ik->ij", u, u),
    "depthwise_conv": _depthwise,
    "traced_kernel_conv": _traced_kernel,
    "convolve": _rows_convolved,
    "diff": lambda u: dualad.cat([u[:, :1], dualad.diff(u, dim=1)], 1),
    "gradient": lambda u: dnp.gradient(u, axis=1),
}


@given(
    st.lists(st.sampled_from(sorted(_STAGES)), min_size=1, max_size=3),
    st.integers(2, 4),
    st.integers(3, 5),
    st.integers(0, 2**16),
)
def test_random_programs_of_structured_ops(stages, rows, cols, seed):
    x = np.random.default_rng(seed).uniform(0.2, 1.0, rows * cols)

    def f(v):
        u = v.reshape(rows, cols)
        for name in stages:
            u = _STAGES[name](u) * 0.5
        return u.reshape(-1)

    _check(f, x)
    # a second call with other values: exact again (guards on traced indices re-detect)
    _check(f, x[::-1].copy())


@given(
    st.lists(st.sampled_from(sorted(_STAGES)), min_size=1, max_size=2),
    st.integers(0, 2**16),
)
def test_random_programs_of_structured_ops_hessian(stages, seed):
    x = np.random.default_rng(seed).uniform(0.2, 1.0, 12)

    def f(v):
        u = v.reshape(3, 4)
        for name in stages:
            u = _STAGES[name](u) * 0.5
        return (u**2).sum() + (u[:, 1:] * u[:, :-1]).sum()

    dense = np.asarray(dualad.func.hessian(f)(x))
    h = sparse_hessian(f)
    result = h(x).toarray()
    assert not ((dense != 0) & ~h.pattern.toarray()).any()
    np.testing.assert_allclose(result, dense, rtol=1e-8, atol=1e-10)
