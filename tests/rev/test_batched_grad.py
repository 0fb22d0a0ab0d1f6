"""``grad(..., is_grads_batched=True)``: one backward pass under vmap equals a loop of ``grad``.

Seed: ``test_grad_batched_grad`` (spec/forward.md §3.2). The op-database test runs every
differentiable entry's first samples with a batch of random cotangents for all its floating
outputs and compares with one unbatched ``grad`` per cotangent.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import dualad
from dualad._tensor import Tensor
from dualad.testing._numeric import flatten_outputs, sample_to_tensors
from dualad.testing.opdb import all_ops

BATCHED_MESSAGE = "If `is_grads_batched=True`, we interpret the first"


# ---------------------------------------------------------------------------------------------
# the seed test (spec/forward.md §3.2)


def test_grad_batched_grad():
    x = dualad.randn(2, 2, requires_grad=True)

    out = x.clone()  # B1: a batch of cotangents, slice b all b (int64 for a float output)
    batched_grad = dualad.arange(3).expand(2, 2, 3).transpose(0, 2)
    (grad,) = dualad.autograd.grad(out, (x,), (batched_grad,), is_grads_batched=True)
    assert grad.shape == (3, 2, 2)
    assert grad.dtype == x.dtype
    np.testing.assert_array_equal(grad.numpy(), batched_grad.numpy().astype(x.dtype))

    # B2: no batch dim -> error (grad[0] has shape (2,), not (2, 2))
    with pytest.raises(RuntimeError, match=BATCHED_MESSAGE):
        dualad.autograd.grad(out, (x,), (dualad.ones(2, 2),), is_grads_batched=True)

    out = x.sum()  # B3: a scalar output
    batched_grad = dualad.arange(3)
    (grad,) = dualad.autograd.grad(out, (x,), (batched_grad,), is_grads_batched=True)
    expected = np.broadcast_to(np.arange(3.0)[:, None, None], (3, 2, 2))
    np.testing.assert_array_equal(grad.numpy(), expected)

    # B4: scalar output vs per-sample shape (1,) is a mismatch
    with pytest.raises(RuntimeError, match=BATCHED_MESSAGE):
        dualad.autograd.grad(out, (x,), (dualad.ones(2).unsqueeze(1),), is_grads_batched=True)


def test_mismatch_message_names_per_sample_shape():
    x = dualad.randn(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        dualad.autograd.grad(x * 2, x, dualad.ones(4, 3, 2), is_grads_batched=True)
    message = str(info.value)
    assert message.startswith(BATCHED_MESSAGE)
    assert "output[0] has a shape of (2, 3)" in message
    assert "consider using vmap" in message


def test_mismatched_batch_sizes_and_missing_grad_outputs():
    x = dualad.randn(3, requires_grad=True)
    a, b = x * 2, x.sin()
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        dualad.autograd.grad(
            (a, b), x, (dualad.ones(2, 3), dualad.ones(4, 3)), is_grads_batched=True
        )
    with pytest.raises(RuntimeError, match="is_grads_batched=True"):
        dualad.autograd.grad(x.sum(), x, is_grads_batched=True)


# ---------------------------------------------------------------------------------------------
# semantics


def _loop(outputs, inputs, batched, **kwargs):
    """``grad`` once per example of the batched cotangents, stacked (None stays None)."""
    size = batched[0].shape[0]
    rows = [
        dualad.autograd.grad(outputs, inputs, [g[b] for g in batched], retain_graph=True, **kwargs)
        for b in range(size)
    ]
    return [
        None if rows[0][i] is None else np.stack([r[i].detach().numpy() for r in rows])
        for i in range(len(rows[0]))
    ]


def test_multiple_outputs_and_inputs():
    rng = np.random.default_rng(0)
    x = dualad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = dualad.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    y1 = (x @ w).tanh()
    y2 = (x * x).sum(1)
    batched = [
        dualad.tensor(rng.standard_normal((5, 3, 2))),
        dualad.tensor(rng.standard_normal((5, 3))),
    ]
    result = dualad.autograd.grad(
        (y1, y2), (x, w), batched, is_grads_batched=True, retain_graph=True
    )
    assert [r.shape for r in result] == [(5, 3, 4), (5, 4, 2)]
    for got, want in zip(result, _loop((y1, y2), (x, w), batched)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_default_retain_graph_frees_after_one_pass():
    x = dualad.randn(3, requires_grad=True)
    y = x.exp() * x
    (grad,) = dualad.autograd.grad(y, x, dualad.eye(3), is_grads_batched=True)
    # rows of the Jacobian: diag((1 + x) e^x)
    xv = x.detach().numpy()
    np.testing.assert_allclose(grad.numpy(), np.diag((1 + xv) * np.exp(xv)), rtol=1e-12)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        dualad.autograd.grad(y, x, dualad.eye(3), is_grads_batched=True)


def test_never_writes_grad_and_unused_inputs():
    x = dualad.randn(3, requires_grad=True)
    z = dualad.randn(2, requires_grad=True)
    y = x.sin()
    hidden = x * 1  # a non-leaf input
    out = hidden.cos()
    gx, gz = dualad.autograd.grad(
        y, (x, z), dualad.ones(4, 3), is_grads_batched=True, allow_unused=True
    )
    assert gz is None and gx.shape == (4, 3)
    assert x.grad is None and z.grad is None
    with pytest.raises(RuntimeError, match="Set allow_unused=True"):
        dualad.autograd.grad(
            out, (hidden, z), dualad.ones(2, 3), is_grads_batched=True, retain_graph=True
        )
    (gh,) = dualad.autograd.grad(out, hidden, dualad.ones(2, 3), is_grads_batched=True)
    np.testing.assert_allclose(
        gh.numpy(), np.broadcast_to(-np.sin(hidden.detach().numpy()), (2, 3))
    )
    assert x.grad is None


def test_materialize_grads_batched_zeros():
    x = dualad.randn(3, requires_grad=True)
    z = dualad.randn(2, requires_grad=True)
    _, gz = dualad.autograd.grad(
        x * 2, (x, z), dualad.ones(4, 3), is_grads_batched=True, materialize_grads=True
    )
    # deliberate deviation from upstream (unbatched zeros): the batch dim is kept
    np.testing.assert_array_equal(gz.numpy(), np.zeros((4, 2)))


def test_create_graph_then_differentiate_again():
    rng = np.random.default_rng(1)
    xv = rng.uniform(0.5, 1.5, 3)
    x = dualad.tensor(xv, requires_grad=True)
    y = x**3  # J = diag(3 x^2)
    (jac,) = dualad.autograd.grad(y, x, dualad.eye(3), is_grads_batched=True, create_graph=True)
    assert jac.requires_grad and jac.grad_fn is not None
    np.testing.assert_allclose(jac.detach().numpy(), np.diag(3 * xv**2), rtol=1e-12)
    # d/dx sum(J * C) = 6 x * diag(C)
    c = rng.standard_normal((3, 3))
    (second,) = dualad.autograd.grad((jac * dualad.tensor(c)).sum(), x)
    np.testing.assert_allclose(second.numpy(), 6 * xv * np.diag(c), rtol=1e-12)
    # batched again: the Hessian of sum(y) rows (H = diag(6x)) through the batched Jacobian
    (g,) = dualad.autograd.grad(y.sum(), x, create_graph=True)
    (hess,) = dualad.autograd.grad(g, x, dualad.eye(3), is_grads_batched=True)
    np.testing.assert_allclose(hess.numpy(), np.diag(6 * xv), rtol=1e-12)


def test_batched_grad_output_requiring_grad_with_create_graph():
    # the cotangent itself is differentiable: d/dv of <J^T v, u> = J u
    x = dualad.tensor([0.3, -0.7], requires_grad=True)
    v = dualad.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    (vjp,) = dualad.autograd.grad(x.sin(), x, v, is_grads_batched=True, create_graph=True)
    (dv,) = dualad.autograd.grad(vjp.sum(), v)
    np.testing.assert_allclose(dv.numpy(), np.broadcast_to(np.cos([0.3, -0.7]), (3, 2)))


def test_complex():
    rng = np.random.default_rng(2)
    x = dualad.tensor(rng.standard_normal(3) + 1j * rng.standard_normal(3), requires_grad=True)
    y = x * x.exp()
    batched = [dualad.tensor(rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)))]
    (grad,) = dualad.autograd.grad(y, x, batched, is_grads_batched=True, retain_graph=True)
    np.testing.assert_allclose(grad.numpy(), _loop(y, x, batched)[0], rtol=1e-12)


def test_custom_function_backward_runs_once():
    calls = []

    class Cube(dualad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad_output):
            calls.append(grad_output.shape)
            (x,) = ctx.saved_tensors
            return grad_output * 3 * x**2

    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    (grad,) = dualad.autograd.grad(Cube.apply(x), x, dualad.eye(2), is_grads_batched=True)
    np.testing.assert_allclose(grad.numpy(), np.diag([3.0, 12.0]))
    assert len(calls) == 1


# ---------------------------------------------------------------------------------------------
# the op database: is_grads_batched == loop of grad


INFOS = [info for info in all_ops() if info.differentiable]
SIZE = 3


def _dtype(info) -> np.dtype:
    return np.dtype("float64" if "float64" in info.dtypes else info.dtypes[0])


@pytest.mark.parametrize("info", INFOS, ids=[info.name for info in INFOS])
def test_opdb_batched_grad_equals_loop(info):
    rng = np.random.default_rng(zlib.crc32(f"batched_grad:{info.name}".encode()))
    checked = 0
    for sample in info.sample_inputs(_dtype(info))[:2]:
        if info.skip_reason("fd"):
            continue
        args, kwargs, leaves = sample_to_tensors(sample)
        leaves = [t for t in leaves if isinstance(t, Tensor) and t.requires_grad]
        if not leaves:
            continue
        result = info.fn(*args, **kwargs)
        outputs = [
            o
            for o in flatten_outputs(result)
            if isinstance(o, Tensor) and o.requires_grad and o.dtype.kind in "fc"
        ]
        if not outputs:
            continue
        batched = []
        for o in outputs:
            shape = (SIZE, *o.shape)
            values = rng.standard_normal(shape)
            if o.dtype.kind == "c":
                values = values + 1j * rng.standard_normal(shape)
            batched.append(dualad.tensor(values.astype(o.dtype)))
        got = dualad.autograd.grad(
            outputs, leaves, batched, is_grads_batched=True, retain_graph=True, allow_unused=True
        )
        want = _loop(outputs, leaves, batched, allow_unused=True)
        for leaf, g, w in zip(leaves, got, want):
            if w is None:
                assert g is None, f"{info.name}: expected no gradient"
                continue
            assert g.shape == (SIZE, *leaf.shape)
            assert g.dtype == leaf.dtype
            tol = 1e-10 if leaf.dtype in (np.float64, np.complex128) else 1e-4
            np.testing.assert_allclose(
                g.numpy(), w, rtol=tol, atol=tol, err_msg=f"{info.name} ({sample.note})"
            )
        checked += 1
    CHECKED[info.name] = checked


CHECKED: dict = {}


def test_opdb_coverage():
    """Most differentiable entries were actually compared (not all skipped)."""
    if len(CHECKED) < len(INFOS):
        pytest.skip("run together with the op-database test")
    assert sum(1 for n in CHECKED.values() if n) >= 0.9 * len(INFOS), CHECKED
