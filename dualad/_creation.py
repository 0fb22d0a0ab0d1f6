"""Creating tensors: tensor/as_tensor/from_numpy, factories, random numbers.

Python floats become the default dtype (float64 unless changed); lists of Python ints become
int64; an existing array or tensor keeps its dtype. Factories take ``dtype``, ``device`` and
``requires_grad`` keywords and torch-style varargs sizes (``zeros(2, 3)`` or ``zeros((2, 3))``).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import _dtypes
from ._backend import Device, allocate_on, to_device, xp_of
from ._tensor import Tensor, wrap


def _to_array(data: Any, dtype, device, *, copy: bool):
    dtype = _dtypes.to_dtype(dtype)
    if isinstance(data, Tensor):
        array = data._data
        if device is not None and Device(device) != data.device:
            array = to_device(array, device)
            copy = False
        if dtype is not None and array.dtype != dtype:
            return array.astype(dtype)
        return array.copy() if copy else array
    if type(data) is np.ndarray or hasattr(data, "__cuda_array_interface__"):
        array = data
        if device is not None:
            moved = to_device(array, device)
            copy = copy and moved is array
            array = moved
        if dtype is not None and array.dtype != dtype:
            return array.astype(dtype)
        return array.copy() if copy else array
    if isinstance(data, (list, tuple)) and any(isinstance(e, Tensor) for e in _flat(data)):
        data = _nested_tensors_to_lists(data)
    array = np.asarray(data)
    if array.dtype == object:
        raise TypeError(f"dualad: cannot make a tensor from {type(data).__name__} {data!r}")
    if dtype is None:
        if array.dtype.kind == "f" and _is_python_data(data):
            dtype = _dtypes.get_default_dtype()
        elif array.dtype.kind == "c" and _is_python_data(data):
            dtype = _dtypes.default_complex_dtype()
    if dtype is not None and array.dtype != dtype:
        array = array.astype(dtype)
    elif copy and array is data:
        array = array.copy()
    if device is not None and Device(device).type != "cpu":
        array = to_device(array, device)
    return array


def _flat(data):
    for e in data:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def _nested_tensors_to_lists(data):
    if isinstance(data, Tensor):
        if data._rg:
            data = data.detach()
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_nested_tensors_to_lists(e) for e in data]
    return data


def _is_python_data(data) -> bool:
    return isinstance(data, (float, int, complex, list, tuple, builtins.bool))


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays or tensors).

    >>> import dualad
    >>> dualad.tensor([[1, 2], [3, 4]]).dtype
    dtype('int64')
    >>> dualad.tensor(1.5)
    tensor(1.5)
    """
    out = wrap(_to_array(data, dtype, device, copy=True))
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """A tensor sharing memory with ``data`` when it is already an array of the right dtype."""
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return wrap(_to_array(data, dtype, device, copy=False))


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array.

    >>> import numpy as np, dualad
    >>> a = np.zeros(2)
    >>> t = dualad.from_numpy(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 0.])
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return wrap(array)


def _size(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    elif len(size) == 1 and isinstance(size[0], Tensor):
        size = tuple(size[0].tolist())
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, builtins.bool):
            raise TypeError(f"dualad: sizes must be integers, got {size!r}")
        if s < 0:
            raise RuntimeError(f"dualad: negative dimension {s} in size {size}")
    return tuple(int(s) for s in size)


def _finish(array, requires_grad: bool) -> Tensor:
    out = wrap(array)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _float_dtype(dtype):
    dtype = _dtypes.to_dtype(dtype)
    return _dtypes.get_default_dtype() if dtype is None else dtype


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros. ``dualad.zeros(2, 3)`` or ``dualad.zeros((2, 3))``."""
    shape, dtype = _size(size), _float_dtype(dtype)
    return _finish(allocate_on(device, lambda xp: xp.zeros(shape, dtype=dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    shape, dtype = _size(size), _float_dtype(dtype)
    return _finish(allocate_on(device, lambda xp: xp.ones(shape, dtype=dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor."""
    shape, dtype = _size(size), _float_dtype(dtype)
    return _finish(allocate_on(device, lambda xp: xp.empty(shape, dtype=dtype)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it like ``tensor``)."""
    shape = _size((size,)) if not isinstance(size, int) else (size,)
    if dtype is None:
        dtype = _to_array(fill_value, None, None, copy=False).dtype
    dtype = _dtypes.to_dtype(dtype)
    return _finish(
        allocate_on(device, lambda xp: xp.full(shape, fill_value, dtype=dtype)), requires_grad
    )


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The identity matrix (n x m)."""
    dtype = _float_dtype(dtype)
    return _finish(allocate_on(device, lambda xp: xp.eye(n, m, dtype=dtype)), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; ``arange(n)`` is 0..n-1.

    >>> import dualad
    >>> dualad.arange(3)
    tensor([0, 1, 2])
    """
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = _dtypes.int64 if is_int else _dtypes.get_default_dtype()
    dtype = _dtypes.to_dtype(dtype)
    return _finish(
        allocate_on(device, lambda xp: xp.arange(start, end, step, dtype=dtype)), requires_grad
    )


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    dtype = _float_dtype(dtype)
    return _finish(
        allocate_on(device, lambda xp: xp.linspace(start, end, steps, dtype=dtype)), requires_grad
    )


def _like(t: Tensor, dtype, device):
    return (t.dtype if dtype is None else _dtypes.to_dtype(dtype)), (
        t.device if device is None else device
    )


def zeros_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros with the shape (and by default dtype and device) of ``t``."""
    dtype, device = _like(t, dtype, device)
    return _finish(allocate_on(device, lambda xp: xp.zeros(t.shape, dtype=dtype)), requires_grad)


def ones_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones with the shape (and by default dtype and device) of ``t``."""
    dtype, device = _like(t, dtype, device)
    return _finish(allocate_on(device, lambda xp: xp.ones(t.shape, dtype=dtype)), requires_grad)


def empty_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(t, dtype, device)
    return _finish(allocate_on(device, lambda xp: xp.empty(t.shape, dtype=dtype)), requires_grad)


def full_like(t: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    dtype, device = _like(t, dtype, device)
    return _finish(
        allocate_on(device, lambda xp: xp.full(t.shape, fill_value, dtype=dtype)), requires_grad
    )


def zeros_for(shape, dtype, like) -> Tensor:
    """Zeros on the device of the first tensor in ``like`` (used for missing gradients)."""
    for t in like:
        if isinstance(t, Tensor):
            xp = xp_of(t._data)
            return wrap(xp.zeros(shape, dtype=dtype))
    return wrap(np.zeros(shape, dtype=dtype))


# ---------------------------------------------------------------------------------------------
# random numbers: one Generator per array module, reseeded by manual_seed

_generators: dict = {}
_seed = [None]


def manual_seed(seed: int) -> None:
    """Seed dualad's random number generators (NumPy's, and CuPy's when used).

    >>> import dualad
    >>> dualad.manual_seed(0); a = dualad.rand(2)
    >>> dualad.manual_seed(0); bool((dualad.rand(2) == a).all())
    True
    """
    _seed[0] = int(seed)
    _generators.clear()


def _generator(xp):
    gen = _generators.get(xp)
    if gen is None:
        gen = _generators[xp] = xp.random.default_rng(_seed[0])
    return gen


def rand(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform random numbers in [0, 1)."""
    shape, dtype = _size(size), _float_dtype(dtype)

    def make(xp):
        return _generator(xp).random(shape).astype(dtype, copy=False)

    return _finish(allocate_on(device, make), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal random numbers (complex dtypes get unit variance)."""
    shape, dtype = _size(size), _float_dtype(dtype)

    def make(xp):
        gen = _generator(xp)
        if dtype.kind == "c":
            parts = gen.standard_normal((2, *shape)) / np.sqrt(2.0)
            return (parts[0] + 1j * parts[1]).astype(dtype)
        return gen.standard_normal(shape).astype(dtype, copy=False)

    return _finish(allocate_on(device, make), requires_grad)


def randint(low, high=None, size=(), *, dtype=None, device=None) -> Tensor:
    """Random integers in [low, high) (``randint(high, size=...)`` starts at 0)."""
    if high is None:
        low, high = 0, low
    shape = _size((size,)) if not isinstance(size, int) else (size,)
    dtype = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    return wrap(
        allocate_on(device, lambda xp: _generator(xp).integers(low, high, shape).astype(dtype))
    )


def rand_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(t, dtype, device)
    return rand(t.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dtype, device = _like(t, dtype, device)
    return randn(t.shape, dtype=dtype, device=device, requires_grad=requires_grad)


__all__ = [
    "arange",
    "as_tensor",
    "empty",
    "empty_like",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "manual_seed",
    "ones",
    "ones_like",
    "rand",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "tensor",
    "zeros",
    "zeros_like",
]
