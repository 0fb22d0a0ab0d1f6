"""Activation checkpointing: dualad.checkpoint / checkpoint_sequential (spec/reverse.md section 10,
CKPT-1..4), ported from PyTorch's test_checkpointing_* and TestNestedCheckpoint (nn.Module
replaced by functions of explicit weight tensors)."""

from __future__ import annotations

import collections
import threading
import weakref

import numpy as np
import pytest

import dualad
from dualad import autograd
from dualad.autograd.graph import save_on_cpu, saved_tensors_hooks
from dualad.utils.checkpoint import CheckpointError, set_checkpoint_early_stop


def value(t):
    return t.detach().numpy()


def assert_close(actual, expected, rtol=1e-10, atol=1e-12):
    a = value(actual) if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    e = value(expected) if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def checkpoint(fn, *args, **kwargs):
    return dualad.checkpoint(fn, *args, use_reentrant=False, **kwargs)


def test_checkpoint_is_exported():
    import dualad.utils.checkpoint as module

    assert dualad.checkpoint is module.checkpoint
    assert dualad.checkpoint_sequential is module.checkpoint_sequential


def test_checkpointing_without_reentrant_correct_grad():
    a = dualad.randn(2, 2, requires_grad=True)

    b = dualad.exp(a).sum()
    b.backward()
    b_grad = a.grad

    a.grad = None
    c = checkpoint(dualad.exp, a).sum()
    c.backward()
    c_grad = a.grad

    a.grad = None
    d = checkpoint(dualad.exp, a).sum()
    (d_grad,) = autograd.grad(d, (a,))

    assert_close(c_grad, b_grad)
    assert_close(d_grad, b_grad)


def test_checkpoint_recomputes_once_per_backward():
    count = [0]

    def fn(x):
        count[0] += 1
        return (x.sin() * x).exp().sum()

    x = dualad.tensor([0.3, 0.7, -1.2], requires_grad=True)
    out = checkpoint(fn, x)
    assert count[0] == 1
    out.backward(retain_graph=True)
    assert count[0] == 2
    first = value(x.grad).copy()
    out.backward()
    assert count[0] == 3
    xs = np.array([0.3, 0.7, -1.2])
    expected = np.exp(np.sin(xs) * xs) * (np.cos(xs) * xs + np.sin(xs))
    np.testing.assert_allclose(first, expected, rtol=1e-12)
    np.testing.assert_allclose(value(x.grad), 2 * expected, rtol=1e-12)
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        out.backward()


def test_access_saved_tensor_twice_without_recomputation_works():
    count = [0]

    def foo(a):
        count[0] += 1
        b = a * a
        c = a * b  # noqa: F841  (saved tensors that the output does not need)
        d = dualad.exp(a)
        return d

    a = dualad.randn(5, requires_grad=True)
    d = checkpoint(foo, a)
    assert count[0] == 1
    # outside a backward pass each access recomputes (and keeps nothing)
    d.grad_fn._saved_result  # noqa: B018
    assert count[0] == 2
    d.grad_fn._saved_result  # noqa: B018
    assert count[0] == 3
    d.sum().backward()
    assert count[0] == 4
    with pytest.raises(
        RuntimeError, match="or directly access saved tensors after they have already been freed"
    ):
        d.grad_fn._saved_result  # noqa: B018


def test_unpack_twice_in_one_backward_raises():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    out = checkpoint(lambda t: (t * t).sin(), x)
    mul_node = out.grad_fn.next_functions[0][0]
    errors = []

    def after_mul(grad_inputs, grad_outputs):
        with pytest.raises(CheckpointError, match="already unpacked once") as info:
            mul_node._saved_self  # noqa: B018  (mul already unpacked it in this pass)
        errors.append(info.value)

    mul_node.register_hook(after_mul)
    out.sum().backward()
    assert len(errors) == 1
    assert_close(x.grad, np.cos([1.0, 4.0]) * 2 * np.array([1.0, 2.0]))


def test_checkpointing_without_reentrant_custom_function_works():
    msg = "Unpack is being triggered for a tensor that was already unpacked once"
    errors = []

    class MyFunc(autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            w = x * y * z
            out = w + w
            ctx.save_for_backward(x, y, z, w, out)
            return out

        @staticmethod
        def backward(ctx, grad_out):
            x, y, z, w, out = ctx.saved_tensors
            assert_close(w, 6 * 12 * 9)  # recomputed: w = x' y' z' with x' = 6, y' = 12, z' = 9
            assert out.grad_fn is ctx  # the recomputed output keeps this node as grad_fn
            with pytest.raises(RuntimeError, match=msg):
                ctx.saved_tensors  # noqa: B018
            errors.append(msg)
            return x, y, z

    x = dualad.tensor(1.0, requires_grad=True)
    y = dualad.tensor(2.0, requires_grad=True)
    z = dualad.tensor(3.0, requires_grad=True)

    def foo(x, y, z):
        x = x * y * z
        y = y * y * z
        z = z * z
        return MyFunc.apply(x, y, z)

    out = checkpoint(foo, x, y, z)
    out.sum().backward()
    assert errors == [msg]
    # backward hands back the saved x' = xyz = 6, y' = y^2 z = 12, z' = z^2 = 9 as the
    # gradients of x', y', z'; the chain rule through foo's ops gives:
    assert_close(x.grad, 2 * 3 * 6)
    assert_close(y.grad, 1 * 3 * 6 + 2 * 2 * 3 * 12)
    assert_close(z.grad, 1 * 2 * 6 + 2 * 2 * 12 + 2 * 3 * 9)


class _Cubic(autograd.Function):
    """x -> x**3 with its input, an intermediate (x**2) and its output saved."""

    @staticmethod
    def forward(ctx, x):
        square = x * x
        out = square * x
        ctx.save_for_backward(x, square, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, square, out = ctx.saved_tensors
        assert out.grad_fn is ctx
        np.testing.assert_allclose(value(square), value(x) ** 2)
        np.testing.assert_allclose(value(out), value(x) ** 3)
        return 3 * x * x * g  # (the saved input is differentiable: second order works)


def test_checkpoint_recomputes_what_a_custom_function_saved():
    refs = []
    count = [0]

    def fn(x):
        count[0] += 1
        h = x.sin() + 1.0  # a fresh tensor that only _Cubic's node keeps
        refs.append(weakref.ref(h))
        return _Cubic.apply(h)

    xs = np.array([0.1, 0.5, -0.7])
    x = dualad.tensor(xs, requires_grad=True)
    plain = fn(x)
    assert refs[-1]() is not None  # without checkpoint the Function's node keeps h alive
    out = checkpoint(fn, x)
    assert refs[-1]() is None  # with it, nothing does
    assert count[0] == 2
    (g_plain,) = autograd.grad(plain.sum(), x)
    (g_ckpt,) = autograd.grad(out.sum(), x, create_graph=True)
    assert count[0] == 3
    expected = 3 * (np.sin(xs) + 1) ** 2 * np.cos(xs)
    assert_close(g_plain, expected)
    assert_close(g_ckpt, expected)
    # second order through the recomputed Function (its backward is made of dualad ops)
    (gg,) = autograd.grad(g_ckpt.sum(), x)
    h = np.sin(xs) + 1
    assert_close(gg, 6 * h * np.cos(xs) ** 2 - 3 * h**2 * np.sin(xs))


def test_save_on_cpu_and_checkpoint_with_a_custom_function():
    xs = np.array([0.2, -0.4])
    x = dualad.tensor(xs, requires_grad=True)
    with save_on_cpu():
        h = x * 2
        h = checkpoint(_Cubic.apply, h)
        out = _Cubic.apply(h)
    out.sum().backward()
    # out = (2x)^9
    assert_close(x.grad, 9 * 2**9 * xs**8)

    x.grad = None

    def f(t):
        with save_on_cpu():
            return _Cubic.apply(_Cubic.apply(t))

    checkpoint(f, x).sum().backward()
    assert_close(x.grad, 9 * xs**8)


def test_checkpointing_without_reentrant_parameter_used_in_an_out():
    w = dualad.randn(10, 10, requires_grad=True)
    count = 0

    def hook(grad):
        nonlocal count
        count += 1

    w.register_hook(hook)
    x = dualad.rand(10, 10, requires_grad=True)
    h = w * x  # w used outside the checkpoint
    out = checkpoint(lambda x: w * x, h)  # and inside it
    out.sum().backward()
    assert count == 1
    assert_close(w.grad, 2 * value(w) * value(x))
    assert_close(x.grad, value(w) ** 2)


def test_checkpointing_without_reentrant_arbitrary_input_output():
    weight = dualad.randn(5, 5)

    def model(params, dict_input):
        return {"result": dict_input["tensor"] @ params["W"]}

    w_plain = weight.clone().requires_grad_()
    w_ckpt = weight.clone().requires_grad_()
    inp = {"tensor": dualad.randn(5, 5)}
    out_no_checkpoint = model({"W": w_plain}, inp)["result"].sum()
    out_checkpoint = checkpoint(model, {"W": w_ckpt}, inp)["result"].sum()
    assert_close(out_checkpoint, out_no_checkpoint)
    out_no_checkpoint.backward()
    out_checkpoint.backward()
    assert_close(w_ckpt.grad, w_plain.grad)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpointing_without_reentrant_detached_tensor(use_reentrant):
    w1 = dualad.randn(2, 2, requires_grad=True)
    w2 = dualad.randn(2, 2, requires_grad=True)

    def no_grad_module(x):
        with dualad.no_grad():
            return (x @ w1) @ w2

    a = dualad.randn(2, 2, requires_grad=True)
    for _ in range(3):
        if use_reentrant:
            with pytest.raises(RuntimeError, match="none of output has requires_grad=True"):
                out = dualad.checkpoint(no_grad_module, a, use_reentrant=True)
                out += a
                out.sum().backward()
        else:
            out = checkpoint(no_grad_module, a)
            out += a
            out.sum().backward()
    if not use_reentrant:
        assert_close(a.grad, 3 * np.ones((2, 2)))


def test_checkpoint_valid_reset_on_error():
    a = dualad.randn(2, 2, requires_grad=True)
    with pytest.raises(Exception, match="checkpoint is incompatible"):
        b = dualad.checkpoint(dualad.exp, a, use_reentrant=True).sum()
        autograd.grad(b, (a,))
    c = dualad.checkpoint(dualad.exp, a, use_reentrant=True).sum()
    c.backward()
    assert_close(a.grad, np.exp(value(a)))


def test_reentrant_checkpoint_rejects_backward_inputs_and_context_fn():
    a = dualad.randn(3, requires_grad=True)
    out = dualad.checkpoint(lambda t: t.sin() * t, a, use_reentrant=True).sum()
    with pytest.raises(RuntimeError, match=r"passing an `inputs` parameter to \.backward\(\)"):
        out.backward(inputs=(a,))
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        dualad.checkpoint(lambda t: t.sin(), a, use_reentrant=True, context_fn=lambda: (None, None))
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        dualad.checkpoint(lambda t, scale: t * scale, a, use_reentrant=True, scale=2.0)


def test_reentrant_checkpoint_grads_and_parameters():
    rng = np.random.default_rng(3)
    w = dualad.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    x = dualad.tensor(rng.standard_normal((2, 4)), requires_grad=True)

    def layer(inp):
        return dualad.tanh(inp @ w), inp.sum()

    hidden, total = dualad.checkpoint(layer, x, use_reentrant=True)
    assert hidden.grad_fn.name() == "CheckpointFunctionBackward"
    assert hidden.grad_fn is total.grad_fn
    (hidden.sum() + 2 * total).backward()
    expected_x = (1 - np.tanh(value(x) @ value(w)) ** 2) @ value(w).T + 2
    expected_w = value(x).T @ (1 - np.tanh(value(x) @ value(w)) ** 2)
    assert_close(x.grad, expected_x)
    assert_close(w.grad, expected_w)  # the closure's parameter gets its gradient too
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        dualad.checkpoint(layer, dualad.ones(2, 4), use_reentrant=True)


def test_checkpointing_without_reentrant_many_calls():
    # the seed's test_checkpointing_without_reentrant (2000 inputs through a small MLP), reduced
    rng = np.random.default_rng(0)
    shapes = [(10, 100), (100,), (100, 10), (10,)]
    params = [dualad.tensor(rng.standard_normal(s) / 10, requires_grad=True) for s in shapes]
    copies = [p.detach().clone().requires_grad_() for p in params]

    def module(w1, b1, w2, b2, data):
        return dualad.relu(data @ w1 + b1) @ w2 + b2

    for input_requires_grad in (True, False):
        feats, feats_plain = [], []
        inputs, inputs_plain = [], []
        for _ in range(20):
            data = dualad.tensor(rng.uniform(size=(1, 10)), requires_grad=input_requires_grad)
            data_plain = data.detach().clone().requires_grad_(input_requires_grad)
            inputs.append(data)
            inputs_plain.append(data_plain)
            feats.append(checkpoint(module, *params, data=data))
            feats_plain.append(module(*copies, data=data_plain))
        dualad.stack(feats).mean().backward()
        dualad.stack(feats_plain).mean().backward()
        for p, q in zip(params, copies):
            assert_close(p.grad, q.grad)
        for d, e in zip(inputs, inputs_plain):
            if input_requires_grad:
                assert_close(d.grad, e.grad)
            else:
                assert d.grad is None


def test_checkpointing_reentrant_many_calls():
    rng = np.random.default_rng(1)
    w1 = dualad.tensor(rng.standard_normal((10, 50)) / 5, requires_grad=True)
    w2 = dualad.tensor(rng.standard_normal((50, 10)) / 5, requires_grad=True)

    def module(data):
        return dualad.relu(data @ w1) @ w2

    feats, inputs = [], []
    for _ in range(20):
        data = dualad.tensor(rng.uniform(size=(1, 10)), requires_grad=True)
        inputs.append(data)
        feats.append(dualad.checkpoint(module, data, use_reentrant=True))
    dualad.stack(feats).mean().backward()
    grads = [value(w1.grad).copy(), value(w2.grad).copy()] + [value(d.grad).copy() for d in inputs]
    w1.grad = w2.grad = None
    for d in inputs:
        d.grad = None
    dualad.stack([module(d) for d in inputs]).mean().backward()
    for g, t in zip(grads, [w1, w2, *inputs]):
        assert_close(g, t.grad)


def test_save_on_cpu_and_checkpoint():
    a = dualad.randn(2, 2, requires_grad=True)

    b = a.pow(2).pow(2).pow(2).pow(2)
    b.sum().backward()
    b_grad = value(a.grad).copy()
    a.grad.zero_()

    with save_on_cpu():
        h = a.pow(2)
        h = checkpoint(lambda x: x.pow(2).pow(2), h)
        c = h.pow(2)
    c.sum().backward()
    c_grad = value(a.grad).copy()
    a.grad.zero_()

    def f(a):
        h = a.pow(2)
        with save_on_cpu():
            h = h.pow(2).pow(2)
        return h.pow(2)

    d = checkpoint(f, a)
    d.sum().backward()
    d_grad = value(a.grad).copy()

    np.testing.assert_allclose(c_grad, b_grad, rtol=1e-12)
    np.testing.assert_allclose(d_grad, b_grad, rtol=1e-12)


def test_checkpoint_frees_intermediates():
    refs = []

    def fn(x):
        hidden = x.sin() * 3
        refs.append(weakref.ref(hidden))
        return (hidden * hidden).sum()  # mul saves hidden (twice)

    x = dualad.tensor([0.1, 0.2], requires_grad=True)
    plain = fn(x)
    assert refs[-1]() is not None  # without checkpoint, mul keeps the intermediate
    out = checkpoint(fn, x)
    assert refs[-1]() is None  # with it, nothing does
    out.sum().backward()
    plain.sum().backward()
    xs = np.array([0.1, 0.2])
    assert_close(x.grad, 2 * (2 * 9 * np.sin(xs) * np.cos(xs)))


def _held_after_forward(forward, x):
    """Bytes NumPy allocated (as tracemalloc sees them) that the graph still holds after
    ``forward(x)``, and the gradient of ``forward(x).sum()``."""
    import gc
    import tracemalloc

    x.grad = None
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        loss = forward(x).sum()
        held = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    loss.backward()
    return held, value(x.grad).copy()


def test_checkpoint_reduces_memory_held_after_forward():
    # benchmarks/checkpoint_memory.py at a small size: each layer of this chain keeps two
    # intermediates besides its input (tanh's result and sin(h)), so a checkpoint per layer keeps
    # about a third of what the plain chain keeps; checkpoint_sequential keeps one input per
    # checkpointed segment plus the last segment's intermediates
    def layer(h):
        return dualad.sin(h) * dualad.tanh(h) + 0.5 * h

    layers = [layer] * 20
    numel = 20_000  # 160 kB per activation: far above the graph's own Python objects

    def plain(x):
        for f in layers:
            x = f(x)
        return x

    def per_layer(x):
        for f in layers:
            x = dualad.checkpoint(f, x, use_reentrant=False)
        return x

    def sequential(x):
        return dualad.checkpoint_sequential(layers, 5, x)

    x = dualad.tensor(np.random.default_rng(0).standard_normal(numel), requires_grad=True)
    held_plain, grad_plain = _held_after_forward(plain, x)
    held_layer, grad_layer = _held_after_forward(per_layer, x)
    held_sequential, grad_sequential = _held_after_forward(sequential, x)
    activation = numel * 8
    assert held_plain > 2.5 * len(layers) * activation  # input, sin(h) and tanh(h) per layer
    assert held_layer < 0.5 * held_plain
    assert held_sequential < 0.5 * held_plain
    np.testing.assert_allclose(grad_layer, grad_plain, rtol=1e-13, atol=0)
    np.testing.assert_allclose(grad_sequential, grad_plain, rtol=1e-13, atol=0)


def test_checkpoint_inside_func_grad():
    # nodes of a func.grad level keep their saved values themselves (saved-tensor hooks do not
    # see them, rev/saved.py): a checkpoint there saves no memory but gives the right gradients,
    # of first and second order
    xs = np.array([0.5, 1.0, -0.3])

    def f(x):
        return checkpoint(lambda t: (t.sin() * t).sum(), x)

    g = dualad.func.grad(f)(dualad.tensor(xs))
    assert_close(g, np.sin(xs) + xs * np.cos(xs))
    h = dualad.func.grad(lambda x: dualad.func.grad(f)(x).sum())(dualad.tensor(xs))
    assert_close(h, 2 * np.cos(xs) - xs * np.sin(xs))


def test_checkpoint_inputs_modified_in_place():
    x = dualad.tensor([0.1, 0.2], requires_grad=True)
    h = x * 2
    out = checkpoint(lambda t: t.sin() * t, h)
    with dualad.no_grad():
        h.mul_(3)
    with pytest.raises(RuntimeError, match="which is input 0 of checkpoint"):
        out.sum().backward()


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_preserves_rng_state(use_reentrant):
    def dropout(x):
        mask = (dualad.rand(*x.shape) > 0.5).to(x.dtype)
        return (x * mask * 2).sin()

    x = dualad.randn(200, requires_grad=True)
    dualad.manual_seed(7)
    out = dualad.checkpoint(dropout, x, use_reentrant=use_reentrant)
    after_forward = dualad.rand(3)
    out.sum().backward()
    grad = value(x.grad).copy()
    x.grad = None
    dualad.manual_seed(7)
    plain = dropout(x)
    assert_close(plain, out)
    np.testing.assert_allclose(value(dualad.rand(3)), value(after_forward))  # replay was undone
    plain.sum().backward()
    assert_close(grad, x.grad)


def test_checkpoint_determinism_check():
    calls = [0]

    def fn(x):
        calls[0] += 1
        if calls[0] == 1:
            return (x * x).sum()
        return (x[:1] * x[:1]).sum()

    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    out = checkpoint(fn, x)
    with pytest.raises(CheckpointError, match="different metadata than during the forward pass"):
        out.backward()

    calls[0] = 0

    def more(x):
        calls[0] += 1
        y = x * x
        for _ in range(calls[0] - 1):
            y = y * x
        return y.sum()

    with set_checkpoint_early_stop(False):  # read when checkpoint is called
        out = checkpoint(more, x, determinism_check="none")
    with pytest.raises(CheckpointError, match="more tensors during recomputation"):
        out.backward()
    with pytest.raises(ValueError, match="determinism_check"):
        checkpoint(more, x, determinism_check="strict")


def test_checkpoint_without_grad_mode_runs_plainly():
    x = dualad.tensor([1.0], requires_grad=True)
    with dualad.no_grad():
        out = checkpoint(lambda t: t * 2, x)
    assert not out.requires_grad


def test_checkpoint_in_threads():
    errors = []

    def work(seed):
        try:
            x = dualad.tensor([0.5 + seed, 1.0], requires_grad=True)
            y = checkpoint(lambda t: (t.sin() * t).exp(), x).sum()
            (g,) = autograd.grad(y, x)
            xs = np.array([0.5 + seed, 1.0])
            expected = np.exp(np.sin(xs) * xs) * (np.cos(xs) * xs + np.sin(xs))
            np.testing.assert_allclose(value(g), expected, rtol=1e-12)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_checkpoint_composes_with_saved_tensor_hooks_around_it():
    packed = []
    x = dualad.tensor([0.5, 1.5], requires_grad=True)
    with saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        out = checkpoint(lambda t: t.sin() * t, x)
    assert packed == [1]  # the checkpoint's input; what fn saves is the checkpoint's business
    out.sum().backward()
    xs = np.array([0.5, 1.5])
    assert_close(x.grad, np.cos(xs) * xs + np.sin(xs))


# ------------------------------------------------------------------------- checkpoint_sequential


def test_checkpoint_sequential():
    rng = np.random.default_rng(2)
    weights = [dualad.tensor(rng.standard_normal((6, 6)) / 3, requires_grad=True) for _ in range(7)]
    layers = [(lambda h, w=w: dualad.tanh(h @ w)) for w in weights]
    x = dualad.tensor(rng.standard_normal((2, 6)), requires_grad=True)

    plain = x
    for layer in layers:
        plain = layer(plain)
    grads_plain = autograd.grad(plain.sum(), [x, *weights])
    for segments in (1, 2, 3, 7):
        out = dualad.checkpoint_sequential(layers, segments, x)
        assert_close(out, plain)
        grads = autograd.grad(out.sum(), [x, *weights])
        for g, e in zip(grads, grads_plain):
            assert_close(g, e)
    out = dualad.checkpoint_sequential(layers, 3, x, use_reentrant=True)
    out.sum().backward()
    assert_close(x.grad, grads_plain[0])
    with pytest.raises(ValueError, match="segments"):
        dualad.checkpoint_sequential(layers, 0, x)
    with pytest.raises(ValueError, match="segments"):
        dualad.checkpoint_sequential(layers, 8, x)


# ------------------------------------------------------------------------- nested checkpoints


def grad(fn):
    def wrapper(x):
        with dualad.enable_grad():
            out = fn(x)
            (grad_input,) = autograd.grad(out, inputs=(x,), create_graph=True)
        return grad_input

    return wrapper


def sum_of(fn):
    def wrapped(x):
        return fn(x).sum()

    return wrapped


def ckpt(fn):
    def wrapped(*args, **kwargs):
        return dualad.checkpoint(fn, *args, use_reentrant=False, **kwargs)

    return wrapped


def get_tests(fn):
    c = ckpt
    return (
        (fn, (c(fn), c(c(fn)))),
        (grad(fn), (grad(c(fn)), grad(c(c(fn))))),
        (
            grad(grad(fn)),
            (grad(c(grad(fn))), c(grad(grad(c(fn)))), grad(c(grad(c(fn))))),
        ),
        (
            grad(grad(grad(fn))),
            (grad(c(grad(grad(c(fn))))), grad(c(grad(c(grad(c(fn))))))),
        ),
    )


def check_graph_dies(fn):
    def iter_graph(roots):
        seen = set()
        queue = collections.deque()
        for node in roots:
            if node is not None:
                seen.add(node)
                queue.append(node)
        while queue:
            node = queue.popleft()
            for child, _ in node.next_functions:
                if child is None or child in seen:
                    continue
                seen.add(child)
                queue.append(child)
            yield node

    class Handle:
        def __init__(self, node_name):
            self.node_name = node_name

    def scope():
        a = dualad.randn((), requires_grad=True)
        out = fn(a)
        refs = []
        for node in iter_graph([out.grad_fn]):
            handle = Handle(node.name())
            refs.append(weakref.ref(handle))
            node.metadata["blah"] = handle
        return refs

    refs = scope()
    alive = [ref().node_name for ref in refs if ref() is not None]
    assert alive == []


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint(early_stop):
    with set_checkpoint_early_stop(early_stop):
        x = dualad.randn((), requires_grad=True)

        def f(x):
            return x.sin().exp().sin()

        def g(x):
            a = x.sin().exp().sin()
            b = x.sin().exp().sin()
            autograd.grad(a, x)  # backward passes inside the checkpointed forward
            autograd.grad(b, x)
            return x.sin()

        for fn in (f, g):
            for expected_fn, actual_fns in get_tests(fn):
                expected = expected_fn(x)
                for actual_fn in actual_fns:
                    actual = actual_fn(x)
                    assert_close(actual, expected, rtol=1e-9, atol=1e-12)
                    check_graph_dies(actual_fn)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_two_children(early_stop):
    with set_checkpoint_early_stop(early_stop):
        c = ckpt

        def f(x):
            return x.sin().exp().sin()

        def g(x):
            return x.cos().sin().exp()

        def hc(x):
            return c(g)(c(f)(x))

        def h(x):
            return g(f(x))

        a = dualad.randn(3, 3, requires_grad=True)
        expected = grad(sum_of(grad(sum_of(h))))(a)
        actual = grad(sum_of(grad(sum_of(c(hc)))))(a)
        assert_close(actual, expected, rtol=1e-9)
        actual = grad(sum_of(c(grad(sum_of(c(hc))))))(a)
        assert_close(actual, expected, rtol=1e-9)

        check_graph_dies(grad(c(hc)))
        check_graph_dies(grad(sum_of(grad(sum_of(c(hc))))))
        check_graph_dies(grad(sum_of(c(grad(sum_of(c(hc)))))))


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_non_tensor_inputs_and_outputs(early_stop):
    def fn(k, a, b, f):
        return f(k * a * b.exp()), 1, "abcd"

    k = 3
    a = dualad.tensor(2.0, requires_grad=True)
    b = dualad.tensor(3.0, requires_grad=True)

    def f(x):
        return x.sin()

    with set_checkpoint_early_stop(early_stop):
        out, unused1, unused2 = checkpoint(fn, k, a, b, f)
    assert (unused1, unused2) == (1, "abcd")
    actual_grads = autograd.grad(out, (a, b))
    out, _, _ = fn(k, a, b, f)
    expected_grads = autograd.grad(out, (a, b))
    for actual, expected in zip(actual_grads, expected_grads):
        assert_close(actual, expected)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_kwargs(early_stop):
    def fn(a, blah=None):
        out = a.sin().exp()
        if blah is not None:
            out = out * blah
        return out.sin().exp()

    a = dualad.tensor(2.0, requires_grad=True)
    b = dualad.tensor(3.0, requires_grad=True)
    with set_checkpoint_early_stop(early_stop):
        out = checkpoint(fn, a, blah=b)
        actual_grads = autograd.grad(out, (a, b))
        out = fn(a, blah=b)
        expected_grads = autograd.grad(out, (a, b))
        for actual, expected in zip(actual_grads, expected_grads):
            assert_close(actual, expected)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_same_graph(early_stop):
    counter = [0]

    def hook(*_unused_args):
        counter[0] += 1

    def fn(a):
        return a.sin().cos().sin()

    a = dualad.tensor(1.0, requires_grad=True)
    with set_checkpoint_early_stop(early_stop):
        out = checkpoint(fn, a)
    # hooks on the original graph fire once (the recomputed graph is never backwarded)
    out.grad_fn.next_functions[0][0].register_hook(hook)
    out.backward()
    assert counter[0] == 1


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_reentrant_backwards(early_stop):
    def fn(a):
        x = a.sin().cos()
        out = x.sin()
        return x, out

    def hook(*_unused_args):
        # a reentrant backward through part of the same checkpointed graph
        x.backward(retain_graph=True)

    a = dualad.tensor(1.0, requires_grad=True)
    with set_checkpoint_early_stop(early_stop):
        x, out = checkpoint(fn, a)
    out.grad_fn.register_hook(hook)
    out.backward(retain_graph=True)
    # d out/da + d x/da
    dx = -np.sin(np.sin(1.0)) * np.cos(1.0)
    expected = np.cos(np.cos(np.sin(1.0))) * dx + dx
    assert_close(a.grad, expected)


def test_nested_checkpoint_set_early_stop():
    counter = [0]

    def clone(x):
        counter[0] += 1
        return x.clone()

    def fn(x):
        # clone saves nothing: with early stop the recomputation ends before it runs
        return clone(x.sin().cos())

    a = dualad.tensor(1.0, requires_grad=True)
    out = checkpoint(fn, a)
    out.backward()
    assert counter[0] == 1

    counter = [0]
    a = dualad.tensor(1.0, requires_grad=True)
    with set_checkpoint_early_stop(False):
        out = checkpoint(fn, a)
    out.backward()
    assert counter[0] == 2


def test_nested_checkpoint_set_early_stop_no_recomputation_needed():
    counter = [0]

    def fn(x):
        counter[0] += 1
        return x.sin()

    for early_stop in (True, False):
        counter = [0]
        a = dualad.tensor(1.0, requires_grad=True)
        with set_checkpoint_early_stop(early_stop):
            out = checkpoint(fn, a)
        out.backward()
        assert counter[0] == 2
        assert_close(a.grad, np.cos(1.0))

    # the forward saves nothing: never recomputed
    def fn2(x):
        counter[0] += 1
        return x.clone()

    for early_stop in (True, False):
        counter = [0]
        a = dualad.tensor(1.0, requires_grad=True)
        with set_checkpoint_early_stop(early_stop):
            out = checkpoint(fn2, a)
        out.backward()
        assert counter[0] == 1


def test_nested_checkpoint_inputs_are_recomputed_by_the_outer_one():
    inner_inputs = []

    def inner(h):
        inner_inputs.append(weakref.ref(h))
        return h.exp()

    def outer(x):
        h = x.sin() * 2
        return ckpt(inner)(h).sum()

    x = dualad.tensor([0.2, 0.4], requires_grad=True)
    out = checkpoint(outer, x)
    assert inner_inputs[0]() is None  # the inner checkpoint's input was not kept
    out.backward()
    xs = np.array([0.2, 0.4])
    assert_close(x.grad, np.exp(2 * np.sin(xs)) * 2 * np.cos(xs))


def test_checkpoint_forward_over_reverse_recomputes_with_the_tangents():
    # under a dual level the jvp rules of the checkpointed ops save tensors too (their primals
    # require grad); the recomputation ran on tangent-free inputs, saved fewer tensors, and
    # unpacked values at the wrong positions: a wrong Hessian-vector product (or an error)
    from dualad import fwd

    x0, v = np.array([0.3, -0.7]), np.array([1.0, 0.5])
    u = dualad.tensor([1.0, 2.0, 3.0, 4.0])
    seg = lambda x: dualad.cat([x, 1.0 / (1.0 + x * x)])
    with fwd.dual_level():
        x = fwd.make_dual(dualad.tensor(x0), dualad.tensor(v)).requires_grad_()
        (g,) = autograd.grad((dualad.checkpoint(seg, x, use_reentrant=False) * u).sum(), x)
        hv = fwd.unpack_dual(g).tangent.numpy()
    # L = sum(u[:2] x) + sum(u[2:] / (1 + x^2)); d2/dx2 of 1/(1+x^2) = (6x^2 - 2) / (1+x^2)^3
    expected = u.numpy()[2:] * (6 * x0**2 - 2) / (1 + x0**2) ** 3 * v
    np.testing.assert_allclose(hv, expected, rtol=1e-12)
    np.testing.assert_allclose(hv, [-3.38216364, 0.56832799], rtol=1e-8)  # (PyTorch's numbers)
