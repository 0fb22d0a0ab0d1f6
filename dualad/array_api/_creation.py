"""The array API's creation functions: ``arange``, ``asarray``, ``empty``, ``empty_like``,
``eye``, ``from_dlpack``, ``full``, ``full_like``, ``linspace``, ``meshgrid``, ``ones``,
``ones_like``, ``tril``, ``triu``, ``zeros``, ``zeros_like``.

Default dtypes are the standard's (Python float: dualad's default float dtype; int: int64).
``asarray`` of a tensor keeps its graph (a cast or copy is an op); ``meshgrid``, ``tril`` and
``triu`` are differentiable, ``linspace`` in its end points.

>>> import dualad.array_api as xp
>>> xp.linspace(0.0, 1.0, 4, endpoint=False)
tensor([0.  , 0.25, 0.5 , 0.75])
>>> [t.shape for t in xp.meshgrid(xp.arange(3), xp.arange(2))]
[(2, 3), (2, 3)]
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _creation as _c
from .. import ops
from .._backend import Device, module_for, to_device
from .._dtypes import get_default_dtype
from .._tensor import Tensor, wrap
from ._common import tensor_arg
from ._dtypes import _dtype

_DLPACK_CUDA = 2  # DLPack's device type of CUDA memory (kDLCUDA)


def _opt_dtype(name: str, dtype):
    return None if dtype is None else _dtype(name, dtype)


def _shape(shape) -> tuple:
    return (shape,) if isinstance(shape, builtins.int) else tuple(shape)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Tensor:
    """Evenly spaced values in ``[start, stop)`` (``[0, start)`` without ``stop``)."""
    dtype = _opt_dtype("arange", dtype)
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        kinds = {type(v) for v in (start, stop, step)}
        dtype = get_default_dtype() if float in kinds else np.dtype("int64")
    # NumPy's arange (an empty result where the step points away from stop; dualad's raises)
    return _c.as_tensor(np.arange(start, stop, step, dtype=dtype), device=device)


def asarray(obj, /, *, dtype=None, device=None, copy=None) -> Tensor:
    """``obj`` (a tensor, array, Python scalar or nested sequence, or an object with
    ``__dlpack__``) as a tensor. A tensor keeps its graph; ``copy=False`` raises ValueError
    where a copy or cast is needed, ``copy=True`` always copies."""
    dtype = _opt_dtype("asarray", dtype)
    if isinstance(obj, Tensor):
        out = obj
        needs_cast = dtype is not None and dtype != obj.dtype
        needs_move = device is not None and Device(device) != obj.device
        if copy is False and (needs_cast or needs_move):
            raise ValueError(
                "dualad.array_api.asarray: copy=False, but the dtype or device asked for needs "
                "a copy"
            )
        if needs_cast or needs_move:
            return out.to(dtype=dtype, device=device)
        return ops.clone(out) if copy else out
    if copy is False and not isinstance(obj, np.ndarray) and not hasattr(obj, "__dlpack__"):
        raise ValueError(
            f"dualad.array_api.asarray: copy=False, but a {type(obj).__name__} cannot be "
            "shared without a copy"
        )
    if copy is False:
        out = wrap(obj) if isinstance(obj, np.ndarray) else from_dlpack(obj, copy=False)
        if (dtype is not None and out.dtype != dtype) or (
            device is not None and Device(device) != out.device
        ):
            raise ValueError("dualad.array_api.asarray: copy=False, but a cast or a move is needed")
        return out
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        obj = from_dlpack(obj)
    if copy:
        return _c.tensor(obj, dtype=dtype, device=device)
    return _c.as_tensor(obj, dtype=dtype, device=device)


def from_dlpack(x, /, *, device=None, copy=None) -> Tensor:
    """A tensor sharing memory with ``x`` (any object with ``__dlpack__``: NumPy arrays,
    untracked tensors, CuPy and other CUDA arrays, whose tensors are on ``"cuda"``). ``device``
    moves it (a copy; ValueError with ``copy=False``), ``copy=True`` always copies."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"dualad.array_api.from_dlpack: a {type(x).__name__} has no __dlpack__ (use asarray "
            "for Python data)"
        )
    kind, index = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    source = Device("cuda", index) if kind == _DLPACK_CUDA else Device("cpu")
    array = module_for(source).from_dlpack(x)
    target = source if device is None else Device(device)
    if target != source:
        if copy is False:
            raise ValueError(
                f"dualad.array_api.from_dlpack: copy=False, but moving from {source} to "
                f"{target} needs a copy"
            )
        return wrap(to_device(array, target))
    return wrap(array.copy() if copy else array)


def empty(shape, *, dtype=None, device=None) -> Tensor:
    """An uninitialised array."""
    return _c.empty(_shape(shape), dtype=_opt_dtype("empty", dtype), device=device)


def zeros(shape, *, dtype=None, device=None) -> Tensor:
    """An array of zeros."""
    return _c.zeros(_shape(shape), dtype=_opt_dtype("zeros", dtype), device=device)


def ones(shape, *, dtype=None, device=None) -> Tensor:
    """An array of ones."""
    return _c.ones(_shape(shape), dtype=_opt_dtype("ones", dtype), device=device)


def full(shape, fill_value, *, dtype=None, device=None) -> Tensor:
    """An array filled with ``fill_value`` (its dtype: ``dtype`` or the scalar's default)."""
    return _c.full(_shape(shape), fill_value, dtype=_opt_dtype("full", dtype), device=device)


def _like(name: str, make, x, dtype, device, *fill) -> Tensor:
    x = tensor_arg(name, x)
    dtype = x.dtype if dtype is None else _dtype(name, dtype)
    return make(x.shape, *fill, dtype=dtype, device=x.device if device is None else device)


def empty_like(x, /, *, dtype=None, device=None) -> Tensor:
    """An uninitialised array of ``x``'s shape (and dtype and device, unless given)."""
    return _like("empty_like", _c.empty, x, dtype, device)


def zeros_like(x, /, *, dtype=None, device=None) -> Tensor:
    """Zeros of ``x``'s shape (and dtype and device, unless given)."""
    return _like("zeros_like", _c.zeros, x, dtype, device)


def ones_like(x, /, *, dtype=None, device=None) -> Tensor:
    """Ones of ``x``'s shape (and dtype and device, unless given)."""
    return _like("ones_like", _c.ones, x, dtype, device)


def full_like(x, /, fill_value, *, dtype=None, device=None) -> Tensor:
    """``fill_value`` in ``x``'s shape (and dtype and device, unless given)."""
    return _like("full_like", _c.full, x, dtype, device, fill_value)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None) -> Tensor:
    """Ones on the ``k``-th diagonal of an ``n_rows`` by ``n_cols`` matrix, zeros elsewhere."""
    dtype = _opt_dtype("eye", dtype)
    n_cols = n_rows if n_cols is None else n_cols
    array = np.eye(n_rows, n_cols, k=k, dtype=dtype or get_default_dtype())
    return _c.as_tensor(array, device=device)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (excluded with
    ``endpoint=False``); differentiable in ``start`` and ``stop`` when they are tensors."""
    dtype = _opt_dtype("linspace", dtype)
    if not endpoint:
        return _c.linspace(start, stop, num + 1, dtype=dtype, device=device)[:num]
    return _c.linspace(start, stop, num, dtype=dtype, device=device)


def meshgrid(*arrays, indexing: str = "xy") -> list:
    """Coordinate grids of 1-d ``arrays`` (``indexing="xy"``: Cartesian, the first two axes
    swapped; ``"ij"``: matrix); differentiable (each grid is a broadcast of its array)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(
            f"dualad.array_api.meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}"
        )
    arrays = [tensor_arg("meshgrid", a) for a in arrays]
    for a in arrays:
        if a.ndim != 1:
            raise ValueError("dualad.array_api.meshgrid: every array must be 1-d")
    if len({a.dtype for a in arrays}) > 1:
        raise ValueError("dualad.array_api.meshgrid: the arrays must have one dtype")
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(arrays) >= 2 else i
        view = [1] * len(arrays)
        view[axis] = a.shape[0]
        out.append(ops.broadcast_to(ops.reshape(a, tuple(view)), tuple(shape)))
    return out


def tril(x, /, *, k: int = 0) -> Tensor:
    """``x`` with the elements above the ``k``-th diagonal zeroed (over the last two axes)."""
    return ops.tril(tensor_arg("tril", x), k)


def triu(x, /, *, k: int = 0) -> Tensor:
    """``x`` with the elements below the ``k``-th diagonal zeroed (over the last two axes)."""
    return ops.triu(tensor_arg("triu", x), k)


__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
]
