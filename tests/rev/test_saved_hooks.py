"""Saved-tensor hooks: saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks, per-tensor
hooks on raw saved tensors (spec/reverse.md section 9, SAVE-1..9), ported from PyTorch's
test/test_autograd.py."""

from __future__ import annotations

import os
import pickle
import tempfile
import threading
import uuid
import warnings

import numpy as np
import pytest

import dualad
from dualad import autograd
from dualad.autograd.graph import (
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
    saved_tensors_hooks_enabled,
)


def value(t):
    return t.detach().numpy()


def assert_equal(actual, expected):
    a = value(actual) if isinstance(actual, dualad.Tensor) else np.asarray(actual)
    e = value(expected) if isinstance(expected, dualad.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)


def identity(x):
    return x


def test_saved_variable_packing_unpacking_saved_original_with_default_hooks():
    def pack(x):
        warnings.warn("pack", stacklevel=1)
        return x

    with saved_tensors_hooks(pack, identity):
        a = dualad.ones(5, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = a * a
            # a is saved twice: once per operand
            assert len(w) == 2

    with saved_tensors_hooks(identity, identity):
        a = dualad.randn(5, requires_grad=True)
        y = a * a
        assert_equal(y.grad_fn._saved_self, a)
        assert_equal(y.grad_fn._saved_other, a)
        y.sum().backward()
        assert_equal(a.grad, 2 * value(a))

    with saved_tensors_hooks(lambda x: 2 * x, lambda x: x / 2):
        a = dualad.randn(5, requires_grad=True)
        y = a * a
        assert_equal(y.grad_fn._saved_self, a)
        assert_equal(y.grad_fn._saved_other, a)
        y.sum().backward()
        assert_equal(a.grad, 2 * value(a))

    with saved_tensors_hooks(lambda x: 2 * x, identity):
        a = dualad.randn(5, requires_grad=True)
        y = a * a
        assert_equal(y.grad_fn._saved_self, 2 * value(a))
        assert_equal(y.grad_fn._saved_other, 2 * value(a))
        y.sum().backward()
        assert_equal(a.grad, 4 * value(a))

    # the hooks are gone after the block
    a = dualad.randn(5, requires_grad=True)
    y = a * a
    assert y.grad_fn._saved_self is a  # without hooks: the very tensor that was saved
    assert y.grad_fn._saved_other is a
    y.sum().backward()
    assert_equal(a.grad, 2 * value(a))


def test_saved_variable_packing_unpacking_did_not_save_original_with_default_hooks():
    with saved_tensors_hooks(identity, identity):
        a = dualad.randn(5, requires_grad=True)
        y = dualad.exp(a)
        assert_equal(y.grad_fn._saved_result, y)
        assert y.grad_fn._saved_result.grad_fn is y.grad_fn
        y.sum().backward()
        assert_equal(a.grad, y)


def test_saved_variable_packing_unpacking_did_not_save_original_with_hooks():
    a = dualad.randn(5, requires_grad=True)
    y = dualad.exp(a)
    y.grad_fn._raw_saved_result.register_hooks(identity, identity)
    assert_equal(y, y.grad_fn._saved_result)
    assert y.grad_fn is y.grad_fn._saved_result.grad_fn
    y.sum().backward()
    assert_equal(a.grad, y)


def test_raw_saved_tensor_hooks_on_an_input():
    a = dualad.randn(5, requires_grad=True)
    y = a.sin()
    calls = []
    y.grad_fn._raw_saved_self.register_hooks(
        lambda x: calls.append("pack") or 3 * x, lambda x: calls.append("unpack") or x / 3
    )
    assert calls == ["pack"]
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    assert_equal(a.grad, np.cos(value(a)))


def test_raw_saved_tensor_register_hooks_errors():
    a = dualad.randn(5, requires_grad=True)
    y = dualad.exp(a)
    raw = y.grad_fn._raw_saved_result
    with pytest.raises(TypeError, match="two callables"):
        raw.register_hooks(identity)
    with pytest.raises(TypeError, match="two callables"):
        raw.register_hooks(identity, 1)
    raw.register_hooks(identity, identity)
    with pytest.raises(RuntimeError, match="already been set"):
        raw.register_hooks(identity, identity)
    with saved_tensors_hooks(identity, identity):
        z = dualad.exp(a)
    with pytest.raises(RuntimeError, match="already been set"):
        z.grad_fn._raw_saved_result.register_hooks(identity, identity)
    with pytest.raises(AttributeError, match="_raw_saved_self"):
        y.grad_fn._raw_saved_self  # noqa: B018  (exp saves its result, not its input)


def test_cant_create_saved_tensors():
    with pytest.raises(
        RuntimeError, match="Trying to create a SavedTensor object from Python is forbidden"
    ):
        autograd.SavedTensor()


def test_setting_default_saved_variable_hooks_twice_should_not_fail():
    with saved_tensors_hooks(identity, identity), saved_tensors_hooks(identity, identity):
        pass


def test_setting_default_saved_variable_hooks_twice_should_use_inner():
    with saved_tensors_hooks(lambda x: 3 * x, lambda x: 3 * x):
        b = dualad.randn(5, requires_grad=True)
        with saved_tensors_hooks(lambda x: 5 * x, lambda x: 5 * x):
            a = dualad.randn(5, requires_grad=True)
            y = a * a
        z = b * b
    y.sum().backward()
    z.sum().backward()
    assert_equal(a.grad, 2 * 5 * 5 * value(a))
    assert_equal(b.grad, 2 * 3 * 3 * value(b))


def test_disabling_saved_tensor_hooks():
    with (
        disable_saved_tensors_hooks("error message"),
        pytest.raises(RuntimeError, match="error message"),
        saved_tensors_hooks(identity, identity),
    ):
        pass
    assert saved_tensors_hooks_enabled()

    with (
        saved_tensors_hooks(identity, identity),
        pytest.raises(RuntimeError, match="error message"),
        disable_saved_tensors_hooks("error message"),
    ):
        pass
    assert saved_tensors_hooks_enabled()


def test_disabling_saved_tensor_hooks_nested():
    with disable_saved_tensors_hooks("outer"):
        with (
            disable_saved_tensors_hooks("inner"),
            pytest.raises(RuntimeError, match="inner"),
            saved_tensors_hooks(identity, identity),
        ):
            pass
        assert not saved_tensors_hooks_enabled()
        with pytest.raises(RuntimeError, match="outer"), saved_tensors_hooks(identity, identity):
            pass
    assert saved_tensors_hooks_enabled()


def test_disable_saved_tensors_hooks_as_decorator():
    @disable_saved_tensors_hooks("not in here")
    def f():
        with saved_tensors_hooks(identity, identity):
            pass

    with pytest.raises(RuntimeError, match="not in here"):
        f()
    assert saved_tensors_hooks_enabled()


def test_saved_tensor_hooks_custom_error_propagation():
    class CustomError(Exception):
        pass

    class error_on_pack_hook(saved_tensors_hooks):
        def __init__(self):
            def pack_hook(x):
                raise CustomError("pack")

            super().__init__(pack_hook, identity)

    class error_on_unpack_hook(saved_tensors_hooks):
        def __init__(self):
            def unpack_hook(x):
                raise CustomError("unpack")

            super().__init__(identity, unpack_hook)

    a = dualad.tensor(1.0, requires_grad=True)
    with error_on_pack_hook(), pytest.raises(CustomError, match="pack"):
        dualad.sin(a)
    with error_on_unpack_hook():
        out = dualad.sin(a)
        with pytest.raises(CustomError, match="unpack"):
            out.backward()


def test_unpack_hooks_exec_count():
    pack_count = 0
    unpack_count = 0

    def pack_hook(x):
        nonlocal pack_count
        pack_count += 1
        return x

    def unpack_hook(x):
        nonlocal unpack_count
        unpack_count += 1
        return x

    x = dualad.ones(4, requires_grad=True)
    y = dualad.ones(4, requires_grad=False)
    with saved_tensors_hooks(pack_hook, unpack_hook):
        out = x * y  # only y is saved (x's gradient needs y; nobody needs y's)
        assert (pack_count, unpack_count) == (1, 0)
        out.sum().backward()
        assert (pack_count, unpack_count) == (1, 1)


@pytest.mark.parametrize(
    "fn, saved",
    [
        (lambda x, y: x * y, 1),
        (lambda x, y: x / y, 1),
        (lambda x, y: x.sin(), 1),
        (lambda x, y: x.exp(), 1),
        (lambda x, y: x * x, 2),
        (lambda x, y: x + y, 0),
        (lambda x, y: x.sum(), 0),
        (lambda x, y: x.reshape(3, 1), 0),
        (lambda x, y: x * 2, 0),
        (lambda x, y: x**2, 1),
        (lambda x, y: x.pow(0.5), 1),
        (lambda x, y: x ** y.requires_grad_(), 3),  # base, exponent, result (as PyTorch)
    ],
)
def test_what_ops_save(fn, saved):
    # spec 21.2: which tensors ops save, as PyTorch's counting pack hook sees them
    count = [0]

    def pack_hook(x):
        count[0] += 1
        return x

    x = dualad.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = dualad.tensor([1.5, 2.0, 3.0])
    with saved_tensors_hooks(pack_hook, identity):
        fn(x, y)
    assert count[0] == saved


def test_index_backward_does_not_save_tensor():
    seen = []
    x = dualad.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: seen.append(t) or t, identity):
        out = x[dualad.tensor([0, 1])]
    assert all(t is not x for t in seen)
    out.sum().backward()
    assert_equal(x.grad, [1.0, 1.0, 0.0])


def test_wrapped_number_saved_variable_hooks():
    def err_hook(x):
        raise RuntimeError("this hook should not be called")

    with saved_tensors_hooks(err_hook, err_hook):
        a = dualad.randn(5, requires_grad=True)
        out = (a * 3).sum()
        (g,) = autograd.grad(out, (a,))
    assert_equal(g, 3 * np.ones(5))


def test_pack_hook_with_inplace_modification_should_fail():
    a = dualad.randn(5, requires_grad=True)

    def inc(x):
        x += 1
        return x

    with (
        saved_tensors_hooks(inc, identity),
        pytest.raises(
            RuntimeError, match=r"A saved tensor pack hook is modifying its input in place\."
        ),
    ):
        dualad.exp(a)

    y = dualad.exp(a)
    with pytest.raises(
        RuntimeError, match=r"A saved tensor pack hook is modifying its input in place\."
    ):
        y.grad_fn._raw_saved_result.register_hooks(inc, identity)


def test_saving_variable_to_disk():
    with tempfile.TemporaryDirectory() as tmp_dir:

        def pack(x):
            name = os.path.join(tmp_dir, str(uuid.uuid4()))
            with open(name, "wb") as f:
                pickle.dump(x.detach(), f)
            return name

        def unpack(name):
            with open(name, "rb") as f:
                return pickle.load(f)

        with saved_tensors_hooks(pack, unpack):
            a = dualad.ones(5, requires_grad=True)
            y = a * a
            assert_equal(a, y.grad_fn._saved_self)
            y.sum().backward()
            assert_equal(a.grad, 2 * np.ones(5))
        assert len(os.listdir(tmp_dir)) == 2


def test_default_saved_variable_hooks_double_backward():
    with saved_tensors_hooks(identity, identity):
        a = dualad.randn(5, requires_grad=True)
        y = a**3
        s = dualad.sum(y)
        (g,) = autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
        assert_equal(a.grad, 6 * value(a))

    with saved_tensors_hooks(lambda x: 2 * x, identity):
        a = dualad.randn(5, requires_grad=True)
        y = a**3
        s = dualad.sum(y)
    (g,) = autograd.grad(s, (a,), create_graph=True)
    g.sum().backward()
    # a is saved once, as 2a (its gradient is routed to a itself)
    assert_equal(a.grad, 6 * 2 * value(a))

    a = dualad.randn(5, requires_grad=True)
    y = a**3
    s = dualad.sum(y)
    with saved_tensors_hooks(lambda x: 2 * x, identity):
        (g,) = autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
        # the double backward saved the incoming gradient and a: 2 * 2
        assert_equal(a.grad, 6 * 4 * value(a))

    with saved_tensors_hooks(lambda x: 2 * x, identity):
        a = dualad.randn(5, requires_grad=True)
        y = a**3
        s = dualad.sum(y)
        (g,) = autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
        assert_equal(a.grad, 6 * 8 * value(a))


def test_save_tensor_hook_version_counter_not_shared_op_node():
    a = dualad.tensor([1.0], requires_grad=True)
    a_replacement = a.detach().clone()
    with saved_tensors_hooks(lambda x: a_replacement, identity):
        b = a.sin()
    unpacked = b.grad_fn._saved_self
    before = a._version
    with dualad.no_grad():
        unpacked.add_(1)
    assert a._version == before
    assert_equal(a_replacement, [2.0])


def test_no_unnecessary_unwrapping():
    # saved inputs unpack to the very tensors saved, a saved output to an equal but distinct
    # tensor; after backward they are gone; nothing touched the input
    a = dualad.randn(5, requires_grad=True)
    a_orig = a.detach().clone()
    b = a * a
    c = a * b
    d = dualad.exp(a)

    assert b.grad_fn._saved_self is a
    assert b.grad_fn._saved_other is a
    assert c.grad_fn._saved_self is a
    assert c.grad_fn._saved_other is b
    assert_equal(d.grad_fn._saved_result, d)
    assert d.grad_fn._saved_result is not d

    c.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        c.grad_fn._saved_self  # noqa: B018
    assert_equal(a, a_orig)
    assert_equal(a.grad, 3 * value(a_orig) ** 2)


def test_saved_variable_version_counter():
    a = dualad.rand(2, requires_grad=True)
    b = dualad.exp(a)
    b_unpacked = b.grad_fn._saved_result
    assert_equal(b, b_unpacked)
    assert b._version == b_unpacked._version
    with dualad.no_grad():
        b += 1
    assert_equal(b, b_unpacked)
    assert b._version == b_unpacked._version


def test_inplace_change_after_packing():
    # a hook that gave back the saved tensor's own memory: the change is detected (as without
    # hooks); a hook that kept a copy still has the value saved at forward time (PyTorch checks
    # no versions at all with hooks)
    with saved_tensors_hooks(identity, identity):
        a = dualad.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1.0
        c = b * b
    with dualad.no_grad():
        b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()

    with saved_tensors_hooks(lambda x: x.detach().clone(), identity):
        a = dualad.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1.0
        c = b * b
    with dualad.no_grad():
        b.mul_(2)
    c.sum().backward()
    assert_equal(a.grad, [2.0, 4.0])


def test_inplace_on_saved_output_after_packing():
    with saved_tensors_hooks(identity, identity):
        a = dualad.tensor([1.0, 2.0], requires_grad=True)
        b = (a * 1.0).exp()
    b.add_(1)
    with pytest.raises(RuntimeError, match="which is output 0 of ExpBackward0"):
        b.sum().backward()

    with saved_tensors_hooks(lambda x: x.detach().clone(), identity):
        a = dualad.tensor([1.0, 2.0], requires_grad=True)
        b = (a * 1.0).exp()
    with dualad.no_grad():
        b.add_(1)
    b.sum().backward()
    assert_equal(a.grad, np.exp([1.0, 2.0]))


def test_saved_values_freed_after_backward():
    with saved_tensors_hooks(lambda x: x.detach().clone(), identity):
        a = dualad.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
    raw = y.grad_fn._raw_saved_self
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._saved_self  # noqa: B018
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        raw.unpack()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.sum().backward()


def test_retain_graph_unpacks_again():
    unpacks = []
    with saved_tensors_hooks(identity, lambda x: unpacks.append(1) or x):
        a = dualad.tensor([1.0, 2.0], requires_grad=True)
        y = (a.sin() * a).sum()
    y.backward(retain_graph=True)
    first = len(unpacks)
    y.backward()
    assert len(unpacks) == 2 * first == 6  # sin saved a; mul saved a and sin(a)
    assert_equal(a.grad, 2 * (np.sin([1.0, 2.0]) + np.array([1.0, 2.0]) * np.cos([1.0, 2.0])))


def test_unpack_hook_must_return_a_tensor_of_the_saved_shape():
    with saved_tensors_hooks(lambda x: x.detach().numpy(), lambda a: a):
        x = dualad.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got"):
        y.sum().backward()

    with saved_tensors_hooks(identity, lambda t: t[:1]):
        x = dualad.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
    with pytest.raises(RuntimeError, match=r"shape \(1,\)"):
        y.sum().backward()


def test_hooks_see_tensors_saved_in_place_ops():
    seen = []
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(
        lambda t: seen.append(value(t).copy()) or t.detach().clone(), identity
    ):
        y = x * 1.0
        y.exp_()
    assert_equal(seen[-1], np.exp([1.0, 2.0]))
    y.sum().backward()
    assert_equal(x.grad, np.exp([1.0, 2.0]))


def test_pack_hook_runs_without_recording():
    modes = []

    def pack(t):
        modes.append(dualad.is_grad_enabled())
        return t * t  # an op that saves: records nothing here, so it is not packed again

    with saved_tensors_hooks(pack, lambda t: dualad.sqrt(t)):
        x = dualad.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
    assert modes == [False]
    y.sum().backward()
    assert_equal(x.grad, np.cos([1.0, 2.0]))


def test_hooks_are_thread_local():
    packed_here = []
    other_thread_saved = []

    def other():
        x = dualad.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
        other_thread_saved.append(y.grad_fn._saved_self is x)
        y.sum().backward()
        other_thread_saved.append(np.allclose(value(x.grad), np.cos([1.0, 2.0])))

    with saved_tensors_hooks(lambda t: packed_here.append(1) or t, identity):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        x = dualad.tensor([1.0], requires_grad=True)
        x.sin()
    assert other_thread_saved == [True, True]
    assert packed_here == [1]


def test_func_grad_levels_do_not_pack():
    # what a dualad.func.grad/vjp level saves stays with its own nodes: the hooks see nothing
    # and the gradient is right (PyTorch refuses saved-tensor hooks inside torch.func.grad
    # altogether; dualad keeps them usable around eager code in the same program)
    packed = []
    x = dualad.tensor([0.5, 1.0])
    with saved_tensors_hooks(lambda t: packed.append(t) or t, identity):
        g = dualad.func.grad(lambda t: (t.sin() * t).sum())(x)
        y = dualad.tensor([0.5, 1.0], requires_grad=True).sin()
    assert len(packed) == 1 and y.grad_fn is not None  # only the eager sin
    assert_equal(g, np.sin([0.5, 1.0]) + np.array([0.5, 1.0]) * np.cos([0.5, 1.0]))


def test_graph_save_on_cpu():
    for dtype in (dualad.float32, dualad.float64):
        with save_on_cpu():
            a = dualad.randn(5, dtype=dtype, requires_grad=True)
            y = a * a
            assert_equal(a, y.grad_fn._saved_self)
            assert_equal(a, y.grad_fn._saved_other)
            assert y.grad_fn._saved_self.dtype == a.dtype
            y.sum().backward()
        assert_equal(a.grad, 2 * value(a))


@pytest.mark.gpu
@pytest.mark.parametrize("pin_memory", [False, True])
def test_graph_save_on_cpu_cuda(pin_memory):
    import cupy

    def f(x):
        a = x + 1
        return a * a

    x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True, device="cuda")
    with save_on_cpu(pin_memory=pin_memory):
        y = f(x)
    for saved in (y.grad_fn._raw_saved_self, y.grad_fn._raw_saved_other):
        device, host = saved._packed
        assert isinstance(host, np.ndarray) and device.type == "cuda"
    assert y.grad_fn._saved_self.device == x.device
    y.sum().backward()
    assert isinstance(x.grad._data, cupy.ndarray)
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * (np.array([1.0, 2.0, 3.0]) + 1))


def test_identity_hooks_keep_no_reference_cycle():
    # outputs reach the pack hook detached: keeping them does not make output -> node -> output
    import gc
    import weakref

    gc.disable()
    try:
        with saved_tensors_hooks(identity, identity):
            x = dualad.tensor([1.0, 2.0], requires_grad=True)
            y = x.exp()  # saves its output
            z = y * y
        node_ref = weakref.ref(y.grad_fn)
        assert y.grad_fn._saved_result.grad_fn is y.grad_fn
        del y, z
        assert node_ref() is None
    finally:
        gc.enable()


# ------------------------------------------------------------------------- custom Functions
# what ctx.save_for_backward keeps goes through the same SavedTensor machinery as op nodes


def test_custom_function_saved_tensors():
    def get_fn(save):
        class MyFn(autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        return MyFn

    a = dualad.randn(5, requires_grad=True)
    y = get_fn(True).apply(a)
    saved_values = y.grad_fn.saved_tensors
    assert len(saved_values) == 2 and saved_values[0] is a and saved_values[1] is None

    saved = y.grad_fn._raw_saved_tensors
    assert isinstance(saved[0], autograd.SavedTensor)
    assert isinstance(saved[1], autograd.SavedTensor)
    with pytest.raises(RuntimeError, match="None is forbidden"):
        saved[1].register_hooks(identity, identity)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        saved[0].register_hooks(identity)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        saved[0].register_hooks(1, 1)
    saved[0].register_hooks(identity, identity)
    with pytest.raises(RuntimeError, match="already been set"):
        saved[0].register_hooks(identity, identity)
    y.sum().backward()
    assert_equal(a.grad, np.ones(5))

    del saved
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._raw_saved_tensors  # noqa: B018
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn.saved_tensors  # noqa: B018

    y = get_fn(False).apply(a)
    assert y.grad_fn.saved_tensors == ()
    assert y.grad_fn._raw_saved_tensors == ()


def test_custom_function_raw_saved_tensor_hooks():
    # per-tensor hooks registered on a Function's saved input: packed now, unpacked at use; a
    # SavedTensor held past the backward fails like the node's own access
    class Square(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    calls = []
    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    y = Square.apply(a)
    (raw,) = y.grad_fn._raw_saved_tensors
    raw.register_hooks(
        lambda x: calls.append("pack") or 3 * x, lambda x: calls.append("unpack") or x / 3
    )
    assert calls == ["pack"]
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    assert_equal(a.grad, [2.0, 4.0])
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        raw.unpack()


def test_custom_function_raw_saved_output_and_versions():
    # SavedTensor objects made on demand (no hooks were active at save time) keep what the
    # plain records knew: a saved output unpacks with the node as grad_fn, and a change in
    # place made before they were asked for is still caught
    x = dualad.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = _SaveAll.apply(x)
    raw = y.grad_fn._raw_saved_tensors
    assert [entry._is_output for entry in raw] == [False, False, True]
    calls = []
    raw[2].register_hooks(lambda t: calls.append("pack") or t, lambda t: calls.append(1) or t)
    assert y.grad_fn.saved_tensors[2].grad_fn is y.grad_fn
    y.sum().backward()
    assert calls == ["pack", 1, 1]
    xs = np.array([0.5, 1.0, 2.0])
    assert_equal(x.grad, np.sin(xs) + xs * np.cos(xs))

    w = dualad.tensor([1.0, 2.0])
    y = _SaveAll.apply(w.requires_grad_())
    with dualad.no_grad():
        y.mul_(2)
    y.grad_fn._raw_saved_tensors  # noqa: B018
    with pytest.raises(
        RuntimeError, match="which is output 0 of _SaveAllBackward, is at version 1"
    ):
        y.grad_fn.saved_tensors  # noqa: B018


def test_save_tensor_hook_version_counter_not_shared():
    # the seed's form: an in-place change of the unpacked tensor in backward does not bump the
    # version of the tensor that was saved (the pack hook replaced it)
    versions = []

    class Test(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            before = a._version
            x.add_(1)
            versions.append((before, a._version))
            return grad_output

    a = dualad.tensor(1.0, requires_grad=True)
    a_replacement = a.detach().clone()
    with saved_tensors_hooks(lambda x: a_replacement, identity):
        b = Test.apply(a)
    b.backward()
    assert versions == [(0, 0)]
    assert_equal(a_replacement, 2.0)  # the unpacked tensor was the replacement's memory
    assert_equal(a, 1.0)
    assert_equal(a.grad, 1.0)


def test_saved_tensor_hooks_custom_function_intermediates():
    class Func(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            intermediate = x.exp()
            ctx.save_for_backward(intermediate.clone().detach_().requires_grad_(True))
            return x.exp()

        @staticmethod
        def backward(ctx, grad_out):
            (intermediate,) = ctx.saved_tensors
            return grad_out * intermediate

    packed = []
    a = dualad.tensor(1.0, requires_grad=True)
    with saved_tensors_hooks(lambda x: packed.append(x) or x, identity):
        out = Func.apply(a)
    assert len(packed) == 1 and packed[0].requires_grad
    out.backward()
    assert_equal(a.grad, np.e)


class _SaveAll(autograd.Function):
    """Saves its input, an intermediate and its output."""

    @staticmethod
    def forward(ctx, x):
        s = x.sin()
        out = s * x
        ctx.save_for_backward(x, s, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, s, out = ctx.saved_tensors
        assert out.grad_fn is ctx  # a saved output unpacks with this node as its grad_fn
        return g * (s + x * x.cos())


def test_custom_function_saved_tensors_go_through_hooks():
    seen = []
    unpacked = []

    def pack(t):
        seen.append((t.requires_grad, t.grad_fn))
        return t.detach().numpy().copy()

    def unpack(array):
        unpacked.append(1)
        return dualad.tensor(array)

    x = dualad.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = _SaveAll.apply(x)
    # x as it is (a leaf that requires grad), the intermediate, and the output handed over
    # detached (a hook that kept it would otherwise make output -> node -> output)
    assert seen == [(True, None), (False, None), (False, None)]
    assert y.grad_fn._raw_saved_tensors[2]._is_output
    y.sum().backward()
    assert len(unpacked) == 3
    xs = np.array([0.5, 1.0, 2.0])
    assert_equal(x.grad, np.sin(xs) + xs * np.cos(xs))
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.sum().backward()


def test_custom_function_saved_output_keeps_no_reference_cycle():
    import gc
    import weakref

    gc.disable()
    try:
        with saved_tensors_hooks(identity, identity):
            x = dualad.tensor([1.0, 2.0], requires_grad=True)
            y = _SaveAll.apply(x)
        node_ref = weakref.ref(y.grad_fn)
        assert y.grad_fn.saved_tensors[2].grad_fn is y.grad_fn
        del y
        assert node_ref() is None
    finally:
        gc.enable()


def test_custom_function_unpack_per_access_and_retain_graph():
    unpacks = []

    class Twice(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 2 * x

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors  # noqa: B018  (each access unpacks)
            ctx.saved_tensors  # noqa: B018
            return 2 * g

    with saved_tensors_hooks(identity, lambda t: unpacks.append(1) or t):
        x = dualad.tensor([1.0], requires_grad=True)
        y = Twice.apply(x)
    y.backward(retain_graph=True)
    y.backward()
    assert len(unpacks) == 4
    assert_equal(x.grad, [4.0])


def test_custom_function_not_recorded_is_not_packed():
    # nothing requires grad: nothing is saved for a backward, the hooks are not called
    def fail(t):
        raise AssertionError("pack hook called")

    x = dualad.tensor([1.0, 2.0])
    with saved_tensors_hooks(fail, fail):
        y = _SaveAll.apply(x)
        with dualad.no_grad():
            _SaveAll.apply(dualad.tensor([1.0], requires_grad=True))
    assert_equal(y, np.sin([1.0, 2.0]) * np.array([1.0, 2.0]))


def test_custom_function_inplace_change_of_saved_input():
    class Scale(autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensors
            return g * w, None

    # without a copy the change is detected, naming the Function's node
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    w = dualad.tensor([3.0, 4.0])
    with saved_tensors_hooks(identity, identity):
        y = Scale.apply(x, w)
    w.add_(1)
    with pytest.raises(RuntimeError, match="which is input 0 of ScaleBackward"):
        y.sum().backward()

    # a hook that kept a copy has the value saved at forward time
    w = dualad.tensor([3.0, 4.0])
    with saved_tensors_hooks(lambda t: t.detach().clone(), identity):
        y = Scale.apply(x, w)
    w.add_(1)
    y.sum().backward()
    assert_equal(x.grad, [3.0, 4.0])


def test_custom_function_with_allow_mutation_on_saved_tensors():
    from dualad.autograd.graph import allow_mutation_on_saved_tensors

    class Cube(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    a = dualad.tensor([1.0, 2.0], requires_grad=True)
    with allow_mutation_on_saved_tensors():
        b = a.clone()
        out = Cube.apply(b).sum()
        b.mul_(10)  # backward uses the value saved before the change
        out.backward()
    assert_equal(a.grad, [3.0, 12.0])


def test_custom_function_save_on_cpu():
    x = dualad.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with save_on_cpu():
        y = _SaveAll.apply(x)
    raw = y.grad_fn._raw_saved_tensors
    assert all(entry._unpack is not None for entry in raw)  # packed by save_on_cpu's hooks
    y.sum().backward()
    xs = np.array([0.5, 1.0, 2.0])
    assert_equal(x.grad, np.sin(xs) + xs * np.cos(xs))


@pytest.mark.gpu
def test_custom_function_save_on_cpu_cuda():
    import cupy

    x = dualad.tensor([0.5, 1.0, 2.0], requires_grad=True, device="cuda")
    with save_on_cpu():
        y = _SaveAll.apply(x)
    for saved in y.grad_fn._raw_saved_tensors:
        device, host = saved._packed
        assert isinstance(host, np.ndarray) and device.type == "cuda"
    y.sum().backward()
    assert isinstance(x.grad._data, cupy.ndarray)
    xs = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.sin(xs) + xs * np.cos(xs))
