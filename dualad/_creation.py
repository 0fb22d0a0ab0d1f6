"""Creating tensors: tensor/as_tensor/from_numpy, factories, random numbers.

Dtype inference follows PyTorch: Python floats become the default dtype (float64 unless
changed), Python complex numbers its complex counterpart, Python ints int64, bools bool; NumPy
scalars, arrays and tensors keep their dtype, and a list mixing them promotes as the ops do
(``dualad._dtypes.result_type``: NumPy 2's rule, Python numbers weak). ``tensor`` always
copies; ``as_tensor`` and ``from_numpy`` share memory when they can. Factories take ``dtype``,
``device`` and ``requires_grad`` keywords and torch-style sizes: ``zeros(2, 3)``,
``zeros((2, 3))``, ``zeros([2, 3])`` or ``zeros(size=(2, 3))``.
Random numbers come from one NumPy/CuPy ``Generator`` per device, reseeded by ``manual_seed``.

Values that an active level tracks (a ``func.grad`` tape, a dual level's tangent, a vmap batch)
never become NumPy arrays or numbers here, which would silently drop their derivative: a
factory given one either stays differentiable (``tensor``/``as_tensor`` of sequences holding
them stack them, ``tensor(t)`` is a differentiable copy, ``full``/``full_like`` broadcast the
fill value, ``linspace`` is computed with dualad ops) or raises ``TrackedConversionError``
(``arange``, ``randint``: no derivative exists where a shape or a draw depends on the value).
Eager tensors that merely require grad keep PyTorch's rules (``tensor`` copies and detaches).
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _dtypes, _tracked_values
from ._backend import DeviceArg, allocate_on
from ._dtypes import DTypeArg
from ._state import GRAD
from ._tensor import (
    _PYTHON_SCALARS,
    Tensor,
    _python_scalar_dtype,
    _to_array,
    tracking_level,
    wrap,
)
from ._tracked_values import _holds_tracked, _tracked_argument, _tracked_tensor

# ---------------------------------------------------------------------------------------------
# tensor, as_tensor, from_numpy


def tensor(
    data: Any, *, dtype: DTypeArg = None, device: DeviceArg = None, requires_grad: bool = False
) -> Tensor:
    """A new leaf tensor holding a copy of ``data``.

    ``data`` may be a Python scalar, a (nested) list or tuple of numbers or tensors, a NumPy or
    CuPy array, or a tensor (copied and detached). Python floats become the default dtype.

    Inside a transform, values that it tracks stay tracked (detaching them would make the
    derivative silently wrong): a tracked tensor is copied differentiably, a sequence holding
    tracked tensors is stacked (``tensor([x[0], 2 * x[1]])`` is ``stack([x[0], 2 * x[1]])``),
    on the device of the tracked values unless ``device`` is given.

    >>> import dualad
    >>> dualad.tensor([[1, 2], [3, 4]]).dtype
    dtype('int64')
    >>> dualad.tensor(1.5)
    tensor(1.5)
    >>> dualad.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    >>> from dualad.func import grad
    >>> grad(lambda x: dualad.tensor([x[0], 2 * x[1]]).sum())(dualad.tensor([1.0, 1.0]))
    tensor([1., 2.])
    """
    if GRAD.levels and _holds_tracked(data):
        out = _tracked_tensor(data, dtype, device)
    else:
        out = wrap(_to_array(data, dtype, device, copy=True))
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_tensor(data: Any, dtype: DTypeArg = None, device: DeviceArg = None) -> Tensor:
    """``data`` as a tensor, sharing memory when it is already an array of that dtype and device.

    A tensor is returned as is, or converted with ``Tensor.to`` (which keeps its graph).

    >>> import numpy as np, dualad
    >>> a = np.array([1.0, 2.0])
    >>> t = dualad.as_tensor(a)
    >>> a[0] = 7.0
    >>> t
    tensor([7., 2.])
    """
    if isinstance(data, Tensor):
        if dtype is None and device is None:
            return data
        return data.to(dtype=dtype, device=device)
    if GRAD.levels and _holds_tracked(data):
        return _tracked_tensor(data, dtype, device)  # (a sequence: stacked, as tensor does)
    return wrap(_to_array(data, dtype, device, copy=False))


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array (writes show through both ways).

    >>> import numpy as np, dualad
    >>> a = np.zeros(2)
    >>> t = dualad.from_numpy(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 0.])
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype.kind not in _dtypes.TENSOR_KINDS:
        raise TypeError(
            f"can't convert np.ndarray of type {array.dtype}. The only supported types are: "
            "complex128, complex64, float64, float32, float16, int64, int32, int16, int8, "
            "uint8, and bool."
        )
    return wrap(array if type(array) is np.ndarray else np.asarray(array))


# ---------------------------------------------------------------------------------------------
# factories


def _size(name: str, args: tuple, size) -> tuple[int, ...]:
    """Normalise torch-style sizes: ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(size=(2, 3))``"""
    if size is not None:
        if args:
            raise TypeError(f"dualad.{name}: got the size both positionally and as size=")
        args = (size,)
    if len(args) == 1 and isinstance(args[0], (tuple, list, Tensor, np.ndarray)):
        only = args[0]
        if isinstance(only, Tensor):
            if only.dtype.kind not in "iu":
                raise TypeError(
                    f"dualad.{name}: argument 'size' must be a tuple of ints, but got a tensor "
                    f"of dtype {only.dtype}"
                )
            only = only.tolist()
        args = (only,) if isinstance(only, builtins.int) else tuple(only)
    shape = []
    for position, s in enumerate(args):
        if isinstance(s, (builtins.bool, np.bool_, builtins.float, np.floating)):
            raise TypeError(
                f"dualad.{name}: argument 'size' must be a tuple of ints, but found element of "
                f"type {type(s).__name__} at pos {position}"
            )
        try:
            shape.append(operator.index(s))
        except TypeError:
            raise TypeError(
                f"dualad.{name}: argument 'size' must be a tuple of ints, but found element of "
                f"type {type(s).__name__} at pos {position}"
            ) from None
    if any(s < 0 for s in shape):
        raise RuntimeError(
            f"dualad.{name}: Trying to create tensor with negative dimension "
            f"{min(shape)}: {list(shape)}"
        )
    return tuple(shape)


def _count(name: str, argument: str, value) -> int:
    """A non-negative int argument (``eye``'s n, ``linspace``'s steps)."""
    if isinstance(value, (builtins.bool, np.bool_)):
        raise TypeError(f"dualad.{name}: argument '{argument}' must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(
            f"dualad.{name}: argument '{argument}' must be an int, not {type(value).__name__}"
        ) from None
    if value < 0:
        raise RuntimeError(f"dualad.{name}: {argument} must be non-negative, got {value}")
    return value


def _finish(array, requires_grad: bool) -> Tensor:
    out = wrap(array)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _finish_tracked(out: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        out.requires_grad_(True)  # (a level's wrapper or a non-leaf refuses, as it should)
    return out


def _float_dtype(dtype):
    dtype = _dtypes.to_dtype(dtype)
    return _dtypes.get_default_dtype() if dtype is None else dtype


def _scalar_value(value, name: str, argument: str = "the value", why: str = ""):
    """A fill value or bound as a Python/NumPy scalar (one-element tensors are unwrapped).
    A tensor that an active level tracks raises (``why``: why it has no derivative here)."""
    if isinstance(value, Tensor):
        _check_one_element(value, name)
        if GRAD.levels and tracking_level(value) is not None:
            raise _tracked_argument(name, argument, value, why)
        return value.item()
    return value


def _check_one_element(value: Tensor, name: str) -> None:
    if value.numel() != 1:
        raise RuntimeError(
            f"dualad.{name}: expected a number, got a tensor of shape {tuple(value.shape)}"
        )


def _is_tracked(value) -> bool:
    """Whether ``value`` is a tensor that an active level tracks (or a level's wrapper)."""
    return bool(GRAD.levels) and isinstance(value, Tensor) and _holds_tracked(value)


def _filled(value: Tensor, shape: tuple, dtype, device) -> Tensor:
    """A new tensor of ``shape`` filled with the one-element tracked ``value``, differentiably
    (its derivative is the sum of the result's)."""
    value = value.reshape(()).to(dtype=dtype, device=device)
    # (clone: memory of its own, as full's)
    return _tracked_values.broadcast_to(value, shape).clone()


def _number_dtype(kind: str) -> np.dtype:
    """The dtype ``tensor(t.item())`` has for a tensor ``t`` of dtype kind ``kind``."""
    if kind == "c":
        return _dtypes.default_complex_dtype()
    if kind == "f":
        return _dtypes.get_default_dtype()
    return _dtypes.bool_ if kind == "b" else _dtypes.int64


def _scalar_dtype(value) -> np.dtype:
    """The dtype ``tensor(value)`` would have."""
    if type(value) in _PYTHON_SCALARS:
        return _python_scalar_dtype(type(value))
    if isinstance(value, (np.generic, np.ndarray)):
        return value.dtype
    raise TypeError(f"dualad: expected a number, got {type(value).__name__}")


def zeros(
    *shape: int | Sequence[int],
    size: int | Sequence[int] | None = None,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of zeros: ``dualad.zeros(2, 3)`` or ``dualad.zeros((2, 3))``.

    >>> import dualad
    >>> dualad.zeros(2, 3).shape
    (2, 3)
    """
    shape, dtype = _size("zeros", shape, size), _float_dtype(dtype)
    return _finish(allocate_on(device, lambda xp: xp.zeros(shape, dtype=dtype)), requires_grad)


def ones(
    *shape: int | Sequence[int],
    size: int | Sequence[int] | None = None,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of ones.

    >>> import dualad
    >>> dualad.ones(2, dtype=dualad.int64)
    tensor([1, 1])
    """
    shape, dtype = _size("ones", shape, size), _float_dtype(dtype)
    return _finish(allocate_on(device, lambda xp: xp.ones(shape, dtype=dtype)), requires_grad)


def empty(
    *shape: int | Sequence[int],
    size: int | Sequence[int] | None = None,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """An uninitialised tensor (its values are whatever the memory held).

    >>> import dualad
    >>> dualad.empty(2, 3).shape
    (2, 3)
    >>> dualad.empty((2,), dtype=dualad.float32).dtype
    dtype('float32')
    """
    shape, dtype = _size("empty", shape, size), _float_dtype(dtype)
    return _finish(allocate_on(device, lambda xp: xp.empty(shape, dtype=dtype)), requires_grad)


def full(
    size: int | Sequence[int],
    fill_value: Any,
    *,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor filled with ``fill_value``; its dtype is inferred from the value like ``tensor``.

    >>> import dualad
    >>> dualad.full((2,), 7)
    tensor([7, 7])
    >>> dualad.full((2,), 0.5).dtype
    dtype('float64')

    A one-element tensor that a transform tracks fills differentiably (on its device unless
    ``device`` is given).
    """
    shape = _size("full", (size,), None)
    if _is_tracked(fill_value):
        _check_one_element(fill_value, "full")
        dtype = _number_dtype(fill_value.dtype.kind) if dtype is None else _dtypes.to_dtype(dtype)
        return _finish_tracked(_filled(fill_value, shape, dtype, device), requires_grad)
    fill_value = _scalar_value(fill_value, "full")
    dtype = _scalar_dtype(fill_value) if dtype is None else _dtypes.to_dtype(dtype)
    return _finish(
        allocate_on(device, lambda xp: xp.full(shape, fill_value, dtype=dtype)), requires_grad
    )


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """The ``n x m`` identity matrix (``m`` defaults to ``n``).

    >>> import dualad
    >>> dualad.eye(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    n = _count("eye", "n", n)
    m = n if m is None else _count("eye", "m", m)
    dtype = _float_dtype(dtype)
    return _finish(allocate_on(device, lambda xp: xp.eye(n, m, dtype=dtype)), requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; ``arange(n)`` is ``0..n-1``.

    Integer arguments give int64, any float argument the default float dtype.

    >>> import dualad
    >>> dualad.arange(3)
    tensor([0, 1, 2])
    >>> dualad.arange(0, 1, 0.25)
    tensor([0.  , 0.25, 0.5 , 0.75])
    """
    if end is None:
        start, end = 0, start
    why = "the length of arange's result depends on it, which no derivative can follow"
    start, end, step = (
        _scalar_value(v, "arange", argument, why)
        for v, argument in ((start, "start"), (end, "end"), (step, "step"))
    )
    if dtype is None:
        kinds = {_scalar_dtype(v).kind for v in (start, end, step)}
        if "c" in kinds:
            raise TypeError("dualad.arange: complex arguments are not supported")
        dtype = _dtypes.get_default_dtype() if "f" in kinds else _dtypes.int64
    dtype = _dtypes.to_dtype(dtype)
    if step == 0:
        raise RuntimeError("dualad.arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"dualad.arange: upper bound and larger bound inconsistent with step sign "
            f"(start={start}, end={end}, step={step})"
        )
    return _finish(
        allocate_on(device, lambda xp: xp.arange(start, end, step, dtype=dtype)), requires_grad
    )


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included.

    >>> import dualad
    >>> dualad.linspace(0, 1, 5)
    tensor([0.  , 0.25, 0.5 , 0.75, 1.  ])

    Tensor endpoints that a transform tracks give a differentiable result (the values of
    ``linspace`` of the detached endpoints, on their device unless ``device`` is given).
    """
    steps = _count("linspace", "steps", steps)
    if _is_tracked(start) or _is_tracked(end):
        return _finish_tracked(_linspace_tracked(start, end, steps, dtype, device), requires_grad)
    start, end = _scalar_value(start, "linspace"), _scalar_value(end, "linspace")
    if dtype is None:
        is_complex = "c" in (_scalar_dtype(start).kind, _scalar_dtype(end).kind)
        dtype = _dtypes.default_complex_dtype() if is_complex else _dtypes.get_default_dtype()
    dtype = _dtypes.to_dtype(dtype)
    return _finish(
        allocate_on(device, lambda xp: xp.linspace(start, end, steps, dtype=dtype)), requires_grad
    )


def _linspace_tracked(start, end, steps: int, dtype, device) -> Tensor:
    """``linspace`` with tracked endpoints, in dualad ops: NumPy's steps (``arange * step +
    start``, the last value exactly ``end``) computed in float64 (complex128), as NumPy computes
    for the Python numbers that untracked endpoints become, then cast to the result dtype
    (PyTorch's: the default float or complex dtype unless given). So the values are exactly
    those of ``linspace`` with the endpoints detached."""
    ends = []
    for value in (start, end):
        if isinstance(value, Tensor):
            _check_one_element(value, "linspace")
            value = value.reshape(())
        ends.append(value)
    tracked = next(v for v in ends if isinstance(v, Tensor))
    device = tracked.device if device is None else device
    is_complex = any(
        (v.dtype if isinstance(v, Tensor) else _scalar_dtype(v)).kind == "c" for v in ends
    )
    work = np.dtype(np.complex128 if is_complex else np.float64)
    start, end = (
        v.to(dtype=work, device=device)
        if isinstance(v, Tensor)
        else wrap(_to_array(v, work, device, copy=False))
        for v in ends
    )
    if dtype is None:
        dtype = _dtypes.default_complex_dtype() if is_complex else _dtypes.get_default_dtype()
    dtype = _dtypes.to_dtype(dtype)
    if steps == 0:
        values = (start * 0).reshape((1,))[:0]  # (empty, but still at the tracked levels)
    elif steps == 1:
        values = start.reshape((1,)) * 1
    else:
        div = steps - 1
        ramp = wrap(allocate_on(device, lambda xp: xp.arange(div, dtype=work)))
        values = _tracked_values.cat([ramp * ((end - start) / div) + start, end.reshape((1,))])
    return values.to(dtype=dtype)


def _like(t, dtype, device, make) -> Any:
    """Allocate with ``make(xp, shape, dtype)`` like ``t`` (its shape; dtype/device by default)."""
    if not isinstance(t, Tensor):
        t = as_tensor(t)
    dtype = t._data.dtype if dtype is None else _dtypes.to_dtype(dtype)
    shape = t._data.shape
    if device is None:
        data = t._data
        if type(data) is np.ndarray:  # the common case, kept cheap: backward() makes ones_like
            return make(np, shape, dtype)
        device = t.device
    return allocate_on(device, lambda xp: make(xp, shape, dtype))


def zeros_like(
    t: Tensor, *, dtype: DTypeArg = None, device: DeviceArg = None, requires_grad: bool = False
) -> Tensor:
    """Zeros with the shape (and by default the dtype and device) of ``t``.

    >>> import dualad
    >>> dualad.zeros_like(dualad.ones(2, dtype=dualad.float32))
    tensor([0., 0.], dtype=float32)
    """
    array = _like(t, dtype, device, lambda xp, shape, dt: xp.zeros(shape, dtype=dt))
    return _finish(array, requires_grad)


def ones_like(
    t: Tensor, *, dtype: DTypeArg = None, device: DeviceArg = None, requires_grad: bool = False
) -> Tensor:
    """Ones with the shape (and by default the dtype and device) of ``t``.

    >>> import dualad
    >>> dualad.ones_like(dualad.zeros(2, dtype=dualad.int64))
    tensor([1, 1])
    """
    array = _like(t, dtype, device, lambda xp, shape, dt: xp.ones(shape, dtype=dt))
    return _finish(array, requires_grad)


def empty_like(
    t: Tensor, *, dtype: DTypeArg = None, device: DeviceArg = None, requires_grad: bool = False
) -> Tensor:
    """An uninitialised tensor with the shape (and by default dtype and device) of ``t``.

    >>> import dualad
    >>> dualad.empty_like(dualad.zeros(2, 3, dtype=dualad.float32)).shape
    (2, 3)
    """
    array = _like(t, dtype, device, lambda xp, shape, dt: xp.empty(shape, dtype=dt))
    return _finish(array, requires_grad)


def full_like(
    t: Tensor,
    fill_value: Any,
    *,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """``fill_value`` everywhere, with the shape (and by default dtype and device) of ``t``.

    >>> import dualad
    >>> dualad.full_like(dualad.zeros(2), 3)
    tensor([3., 3.])

    A one-element tensor that a transform tracks fills differentiably.
    """
    if _is_tracked(fill_value):
        _check_one_element(fill_value, "full_like")
        if not isinstance(t, Tensor):
            t = as_tensor(t)
        dtype = t.dtype if dtype is None else _dtypes.to_dtype(dtype)
        device = t.device if device is None else device
        return _finish_tracked(_filled(fill_value, tuple(t.shape), dtype, device), requires_grad)
    fill_value = _scalar_value(fill_value, "full_like")
    array = _like(t, dtype, device, lambda xp, shape, dt: xp.full(shape, fill_value, dtype=dt))
    return _finish(array, requires_grad)


def zeros_for(shape, dtype, like) -> Tensor:
    """Zeros on the device of the first tensor in ``like`` (used for missing gradients)."""
    for t in like:
        if isinstance(t, Tensor):
            data = t._data
            if type(data) is np.ndarray:
                break
            # (t.device, not data.device: a vmap BatchedTensor has no array of its own)
            return wrap(allocate_on(t.device, lambda xp: xp.zeros(shape, dtype=dtype)))
    return wrap(np.zeros(shape, dtype=dtype))


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
    "ones",
    "ones_like",
    "tensor",
    "zeros",
    "zeros_like",
]
