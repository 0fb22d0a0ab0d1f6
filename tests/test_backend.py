"""Backends and devices: Device parsing, array modules, moving tensors, device mismatch errors.

The last section runs on "cuda" when CuPy and a GPU exist (``@pytest.mark.gpu``; skipped by
tests/conftest.py otherwise). Without a GPU the device-mismatch path is exercised with a fake
"cuda" array type registered for the duration of one test.
"""

import types

import numpy as np
import pytest
from conftest import gpu_available

import dualad
from dualad import _backend
from dualad._tensor import wrap

# ---------------------------------------------------------------------------------------------
# Device


@pytest.mark.parametrize(
    "spec, kind, index, text",
    [
        ("cpu", "cpu", None, "cpu"),
        ("cuda", "cuda", None, "cuda"),
        ("cuda:0", "cuda", 0, "cuda:0"),
        ("cuda:1", "cuda", 1, "cuda:1"),
        (3, "cuda", 3, "cuda:3"),
    ],
)
def test_device_parsing(spec, kind, index, text):
    device = dualad.Device(spec)
    assert device.type == kind and device.index == index
    assert str(device) == text
    assert dualad.Device(device) == device
    assert dualad.device(spec) == device  # torch-style lower-case alias


def test_device_with_index_argument_and_repr():
    device = dualad.Device("cuda", 2)
    assert device == "cuda:2" and device.index == 2
    assert repr(device) == "device(type='cuda', index=2)"
    assert repr(dualad.Device("cpu")) == "device(type='cpu')"


def test_device_equality_and_hash():
    assert dualad.Device("cpu") == "cpu"
    assert dualad.Device("cuda:1") == dualad.Device("cuda", 1)
    assert dualad.Device("cuda:1") != "cuda:0"
    assert dualad.Device("cuda") == "cuda:0"  # no index means the current (first) device
    assert dualad.Device("cpu") != "cuda"
    assert dualad.Device("cpu") != 5 and dualad.Device("cpu") != object()
    table = {dualad.Device("cuda:0"): "a", dualad.Device("cpu"): "b"}
    assert table[dualad.Device("cuda")] == "a" and table[dualad.Device("cpu")] == "b"


@pytest.mark.parametrize(
    "spec, error, match",
    [
        ("tpu", RuntimeError, "unknown device 'tpu'"),
        ("cuda:x", RuntimeError, "unknown device"),
        ("cuda:", RuntimeError, "unknown device"),
        ("cpu:0", RuntimeError, "the cpu has no index"),
        (1.5, TypeError, "a device is 'cpu', 'cuda' or 'cuda:N'"),
        (None, TypeError, "a device is"),
    ],
)
def test_device_errors(spec, error, match):
    with pytest.raises(error, match=match):
        dualad.Device(spec)


def test_device_index_conflicts():
    with pytest.raises(RuntimeError, match="different index"):
        dualad.Device("cuda:1", 2)
    with pytest.raises(RuntimeError, match="non-negative"):
        dualad.Device("cuda", -1)


# ---------------------------------------------------------------------------------------------
# array modules


def test_xp_of():
    assert _backend.xp_of(np.zeros(2)) is np
    assert _backend.xp_of(np.float32(1.0)) is np
    assert _backend.xp_of(1.5) is np and _backend.xp_of(True) is np
    assert _backend.xp_of(np.zeros(2).view(np.matrix)) is np  # subclasses resolve and cache
    with pytest.raises(TypeError, match="cannot use an object of type str"):
        _backend.xp_of("abc")


def test_cpu_helpers():
    a = np.arange(3.0)
    assert _backend.device_of(a) == "cpu"
    assert _backend.module_for(None) is np and _backend.module_for("cpu") is np
    assert _backend.to_device(a, "cpu") is a
    assert _backend.allocate_on("cpu", lambda xp: xp.ones(2)).tolist() == [1.0, 1.0]
    assert _backend.allocate_on(None, lambda xp: xp.zeros(1)).tolist() == [0.0]


def test_cuda_is_available_is_a_bool_matching_conftest():
    assert _backend.cuda_is_available() is gpu_available()


# ---------------------------------------------------------------------------------------------
# tensors on cpu; cuda without CuPy


def test_cpu_tensor_device():
    t = dualad.tensor([1.0, 2.0])
    assert t.device == "cpu" and t.device == dualad.Device("cpu")
    assert str(t.device) == "cpu" and t.device.type == "cpu"
    assert not t.is_cuda
    assert t.cpu() is t and t.to("cpu") is t and t.to(dualad.Device("cpu")) is t
    assert dualad.zeros(2, device="cpu").device == "cpu"
    assert dualad.tensor([1], device=dualad.Device("cpu")).device == "cpu"


needs_no_gpu = pytest.mark.skipif(gpu_available(), reason="CuPy and a GPU are available here")


@needs_no_gpu
@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.to("cuda"),
        lambda t: t.to("cuda:1"),
        lambda t: t.to(device="cuda", dtype=dualad.float32),
        lambda t: t.cuda(),
        lambda t: t.cuda(0),
        lambda t: dualad.tensor([1.0], device="cuda"),
        lambda t: dualad.as_tensor(np.zeros(2), device="cuda"),
        lambda t: dualad.zeros(2, device="cuda"),
        lambda t: dualad.rand(2, device="cuda:0"),
        lambda t: dualad.zeros_like(t, device="cuda"),
    ],
)
def test_cuda_without_cupy_raises_clear_error(make):
    t = dualad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"device 'cuda' needs CuPy and a CUDA GPU"):
        make(t)
    assert t.device == "cpu"


# ---------------------------------------------------------------------------------------------
# device mismatch, with a fake "cuda" array type


class FakeCudaArray(np.ndarray):
    """A NumPy array that dualad's backend table maps to a separate array module ("cuda:0")."""

    @property
    def device(self):
        return types.SimpleNamespace(id=0)

    def get(self):
        return np.asarray(self)


@pytest.fixture
def fake_cuda(monkeypatch):
    fake_xp = types.ModuleType("fake_cupy")
    fake_xp.__getattr__ = lambda name: getattr(np, name)
    monkeypatch.setitem(_backend._MODULE_OF_TYPE, FakeCudaArray, fake_xp)

    def make(values, requires_grad=False):
        t = wrap(np.asarray(values, dtype=np.float64).view(FakeCudaArray))
        return t.requires_grad_(requires_grad)

    return make


def test_fake_cuda_tensor_reports_its_device(fake_cuda):
    t = fake_cuda([1.0, 2.0])
    assert t.device == "cuda:0" and t.is_cuda
    assert repr(t) == "tensor([1., 2.], device='cuda:0')"
    same = t * 2 + t  # ops on one device run on that device's module
    assert same.device == "cuda:0"
    np.testing.assert_array_equal(same.numpy(), [3.0, 6.0])


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: b * a,
        lambda a, b: dualad.sub(a, b),
        lambda a, b: dualad.maximum(a, b),
        lambda a, b: dualad.where(a > 0, a, b),
        lambda a, b: dualad.stack([a, b]),
        lambda a, b: a @ b,
    ],
)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_ops_mixing_devices_raise(fake_cuda, op, requires_grad):
    cpu = dualad.tensor([1.0, 2.0], requires_grad=requires_grad)
    cuda = fake_cuda([3.0, 4.0], requires_grad=requires_grad)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        op(cpu, cuda)


def test_device_mismatch_error_names_op_and_devices(fake_cuda):
    with pytest.raises(RuntimeError) as info:
        dualad.tensor([1.0]) + fake_cuda([1.0])
    message = str(info.value)
    assert "dualad.add" in message and "'cpu'" in message and "'cuda:0'" in message


# ---------------------------------------------------------------------------------------------
# the same checks on a real GPU (skipped without CuPy and a CUDA device)


@pytest.mark.gpu
def test_gpu_creation():
    import cupy

    for t in (
        dualad.tensor([1.0, 2.0], device="cuda"),
        dualad.zeros(2, 3, device="cuda"),
        dualad.ones(2, device="cuda:0", dtype=dualad.float32),
        dualad.arange(4, device="cuda"),
        dualad.eye(3, device="cuda"),
        dualad.rand(3, device="cuda"),
        dualad.randn(3, device="cuda", dtype=dualad.complex64),
        dualad.randint(0, 5, (3,), device="cuda"),
        dualad.full((2,), 7.0, device="cuda"),
    ):
        assert isinstance(t._data, cupy.ndarray)
        assert t.device == "cuda:0" and t.is_cuda
    np.testing.assert_array_equal(dualad.eye(2, device="cuda").numpy(), np.eye(2))
    like = dualad.zeros_like(dualad.ones(2, device="cuda"))
    assert like.device == "cuda:0"
    np.testing.assert_array_equal(like.cpu().numpy(), [0.0, 0.0])
    assert "device='cuda:0'" in repr(like)
    dualad.manual_seed(5)
    first = dualad.rand(4, device="cuda").cpu().numpy()
    dualad.manual_seed(5)
    np.testing.assert_array_equal(dualad.rand(4, device="cuda").cpu().numpy(), first)


@pytest.mark.gpu
def test_gpu_round_trip_and_arithmetic():
    a = np.array([0.5, 1.0, 2.0])
    t = dualad.tensor(a).cuda()
    assert t.device == "cuda:0"
    back = t.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), a)
    out = (dualad.sin(t) * 2.0 + t / 3).exp()
    assert out.device == "cuda:0"
    np.testing.assert_allclose(out.cpu().numpy(), np.exp(np.sin(a) * 2 + a / 3), rtol=1e-12)
    assert (t.float() * 2.5).dtype == dualad.float32
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        t + dualad.tensor(a)


@pytest.mark.gpu
def test_gpu_backward():
    a = np.array([0.5, 1.0, 2.0])
    x = dualad.tensor(a, device="cuda", requires_grad=True)
    (dualad.sin(x) * x).sum().backward()
    assert x.grad.device == "cuda:0"
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.cos(a) * a + np.sin(a), rtol=1e-12)
    # gradients flow back across a device copy
    y = dualad.tensor(a, requires_grad=True)
    (y.cuda() ** 2).sum().backward()
    assert y.grad.device == "cpu"
    np.testing.assert_allclose(y.grad.numpy(), 2 * a, rtol=1e-12)
