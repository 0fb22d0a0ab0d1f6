"""Array backends: NumPy on "cpu", CuPy on "cuda"/"cuda:N".

Invariant: the array module of an op is the module of its data. It is found from the array's type
through a small dict (tens of ns); CuPy is imported only when a "cuda" device is asked for or a
CuPy array is seen. Impls use only names that NumPy 2 and CuPy share.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

# type(array) -> array module. Python scalars resolve to NumPy: they carry no device.
_MODULE_OF_TYPE: dict[type, ModuleType] = {
    np.ndarray: np,
    float: np,
    int: np,
    complex: np,
    bool: np,
}
for _t in (
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.bool_,
):
    _MODULE_OF_TYPE[_t] = np

_cupy: ModuleType | None = None
_cupy_error: str | None = None


def _import_cupy() -> ModuleType:
    """Import CuPy once, with an error that says why "cuda" cannot be used."""
    global _cupy, _cupy_error
    if _cupy is not None:
        return _cupy
    if _cupy_error is not None:
        raise RuntimeError(_cupy_error)
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device is visible")
    except Exception as exc:  # ImportError, CUDARuntimeError, ...
        _cupy_error = (
            "dualad: device 'cuda' needs CuPy and a CUDA GPU "
            f"({type(exc).__name__}: {exc}); install the 'gpu' extra (pip install dualad[gpu])"
        )
        raise RuntimeError(_cupy_error) from None
    _cupy = cupy
    _MODULE_OF_TYPE[cupy.ndarray] = cupy
    return cupy


def forget_cupy() -> None:
    """Forget the CuPy module imported (or the failure to import it), so that the next "cuda"
    use imports ``cupy`` again: for tests that swap CuPy for a stand-in and back
    (``dualad.testing.fake_cupy``)."""
    global _cupy, _cupy_error
    for array_type, module in list(_MODULE_OF_TYPE.items()):
        if module is not np:
            del _MODULE_OF_TYPE[array_type]
    _cupy = _cupy_error = None


def xp_of(array: Any) -> ModuleType:
    """The array module (numpy or cupy) of ``array``."""
    try:
        return _MODULE_OF_TYPE[type(array)]
    except KeyError:
        return _resolve(type(array))


def is_writeable(array: Any) -> bool:
    """Whether writing into ``array`` is safe: no two of its elements share memory.

    NumPy marks broadcast views (and other shared-memory views) read-only; CuPy has no such
    flag and lets a write into a zero-stride view race, so there a zero stride over an axis
    of length > 1 counts as read-only.
    """
    if isinstance(array, np.ndarray):
        return bool(array.flags.writeable)
    return not any(stride == 0 and length > 1 for stride, length in zip(array.strides, array.shape))


def _resolve(array_type: type) -> ModuleType:
    module = getattr(array_type, "__module__", "")
    if module.startswith("cupy"):
        return _import_cupy()
    if issubclass(array_type, (np.ndarray, np.generic)):
        _MODULE_OF_TYPE[array_type] = np
        return np
    raise TypeError(f"dualad: cannot use an object of type {array_type.__name__} as array data")


class Device:
    """A device: ``Device("cpu")``, ``Device("cuda")``, ``Device("cuda:1")``, ``Device("cuda", 1)``.

    A bare integer means that CUDA device, as in PyTorch. ``"cuda"`` without an index is the
    current CUDA device and compares equal to ``"cuda:0"``.

    >>> Device("cuda:1").index
    1
    >>> str(Device("cpu")), str(Device(2)), Device("cuda") == "cuda:0"
    ('cpu', 'cuda:2', True)
    """

    __slots__ = ("index", "type")
    index: int | None  # (the slots' types, for type checkers)
    type: str

    def __init__(self, spec: str | int | Device = "cpu", index: int | None = None) -> None:
        if isinstance(spec, Device):
            self.type, self.index = spec.type, spec.index
            return
        if isinstance(spec, int) and not isinstance(spec, bool) and index is None:
            index = spec
            spec = "cuda"
        if not isinstance(spec, str):
            raise TypeError(f"dualad: a device is 'cpu', 'cuda' or 'cuda:N', got {spec!r}")
        kind, colon, number = spec.strip().partition(":")
        if kind not in ("cpu", "cuda") or (colon and not number.isdigit()):
            raise RuntimeError(
                f"dualad: unknown device {spec!r}; expected 'cpu', 'cuda' or 'cuda:N'"
            )
        if number and index is not None and int(number) != index:
            raise RuntimeError(f"dualad: device {spec!r} given with a different index {index}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"dualad: a device index is a non-negative int, got {index!r}")
        if kind == "cpu" and (number or index):
            raise RuntimeError(f"dualad: device {spec!r}: the cpu has no index")
        self.type = kind
        self.index = None if kind == "cpu" else (int(number) if number else index)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Device(other)
        if not isinstance(other, Device):
            return NotImplemented
        if self.type != other.type:
            return False
        return self.type == "cpu" or (self.index or 0) == (other.index or 0)

    def __hash__(self) -> int:
        return hash((self.type, self.index or 0))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return (
            f"device(type='{self.type}'"
            + ("" if self.index is None else f", index={self.index}")
            + ")"
        )


CPU = Device("cpu")
# what a ``device=`` argument takes: a Device, "cpu", "cuda", "cuda:N", a CUDA index or None
DeviceArg = Device | str | int | None


def device_of(array: Any) -> Device:
    """The device that holds ``array``."""
    xp = xp_of(array)
    if xp is np:
        return CPU
    return Device("cuda", int(array.device.id))


def module_for(device: DeviceArg) -> ModuleType:
    """The array module that allocates on ``device`` (None means cpu)."""
    if device is None:
        return np
    device = Device(device)
    if device.type == "cpu":
        return np
    return _import_cupy()


def to_device(array: Any, device: Device | str) -> Any:
    """``array`` on ``device``: the same array if it is already there, else a copy."""
    device = Device(device)
    xp = xp_of(array)
    if device.type == "cpu":
        return array if xp is np else array.get()
    cupy = _import_cupy()
    index = device.index or 0
    if xp is cupy:
        if int(array.device.id) == index:
            return array
        with cupy.cuda.Device(index):
            return array.copy()  # CuPy copies across devices into the current one
    with cupy.cuda.Device(index):
        return cupy.asarray(array)


def unavailable_on_cuda(what: str, missing: str) -> NotImplementedError:
    """The error for ``what`` (an op or function) called on CUDA data where CuPy lacks
    ``missing``: dualad never copies device data to the host behind the caller's back, so it
    says how to do it explicitly (docs/gpu.md lists these functions).

    >>> print(unavailable_on_cuda("special.jv", "cupyx.scipy.special has no jv"))
    dualad: special.jv cannot run on a CUDA (CuPy) array: cupyx.scipy.special has no jv; \
dualad copies nothing to the host behind your back: move the tensor to the CPU with .cpu() or \
.to('cpu') (and back with .to('cuda'))
    """
    return NotImplementedError(
        f"dualad: {what} cannot run on a CUDA (CuPy) array: {missing}; dualad copies nothing "
        "to the host behind your back: move the tensor to the CPU with .cpu() or .to('cpu') "
        "(and back with .to('cuda'))"
    )


def cuda_is_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device (never raises).

    >>> isinstance(cuda_is_available(), bool)
    True
    """
    try:
        _import_cupy()
    except RuntimeError:
        return False
    return True


def allocate_on(device: DeviceArg, make):
    """Run ``make(xp)`` with the right array module and, for CUDA, the right current device."""
    xp = module_for(device)
    if xp is np or device is None:  # (None is the cpu: module_for gave NumPy)
        return make(np)
    index = Device(device).index or 0
    with xp.cuda.Device(index):
        return make(xp)
