"""Call signatures of a jitted function: what must match for a recorded program to replay.

``signature(args, kwargs, static)`` flattens a call's arguments (pytrees of tuples, lists, dicts
and namedtuples) into the cache key and the leaves a replay needs:

- a ``Tensor`` leaf: its array's shape, dtype, strides and array type (device) are in the key,
  its array is a replay input;
- a NumPy/CuPy array or NumPy scalar leaf: the same, marked as an array (array in, array out);
- a Python number, None or a string leaf: its type and value are in the key (it is a constant of
  the program: a new value traces again);
- a static argument (``static_argnums``/``static_argnames``): its value is in the key (it must
  be hashable);
- anything else raises TypeError naming the argument.

Also in the key: grad mode and the default dtype. ``Leaves.fallback`` says why the call must run
eagerly instead (an input that requires grad, a tangent attached to an input).

>>> import numpy as np, dualad
>>> key, leaves = signature((dualad.tensor([1.0]), 2.0), {}, frozenset())
>>> len(leaves.values), leaves.plain, leaves.fallback
(1, False, None)
"""

from __future__ import annotations

import numpy as np

from .._dtypes import _default as DEFAULT_DTYPE
from .._state import GRAD
from .._tensor import Tensor
from .._wrapper import LevelTensor

_LITERALS = frozenset((bool, int, float, complex, str, type(None)))


class Leaves:
    """The dynamic leaves of one call, in order."""

    __slots__ = ("arrays", "fallback", "is_array", "plain", "rebuild_spec", "values")

    def __init__(self) -> None:
        self.values: list = []  # the leaves as the caller gave them (Tensors or arrays)
        self.arrays: list = []  # their arrays
        self.is_array: list = []  # per leaf: given as an array (not a Tensor)
        self.plain = True  # no leaf (dynamic or static) is a Tensor
        self.fallback = None  # why the call runs eagerly, or None
        self.rebuild_spec = None


def _describe(path: tuple) -> str:
    head, *rest = path
    text = f"argument {head!r}" if isinstance(head, str) else f"argument {head}"
    for step in rest:
        text += f"[{step!r}]"
    return text


def _array_type(value) -> bool:
    kind = type(value)
    return kind is np.ndarray or kind.__module__.startswith("cupy")


def _flatten(value, path: tuple, leaves: Leaves, key: list) -> object:
    kind = type(value)
    if kind is Tensor:
        data = value._data
        leaves.plain = False
        if value._rg and GRAD.enabled:
            leaves.fallback = f"{_describe(path)} requires grad"
        elif value._fw:
            leaves.fallback = f"{_describe(path)} carries a forward-mode tangent"
        if type(data) is np.ndarray:
            key.append((data.shape, data.dtype, data.strides, type(data)))
        else:  # CuPy: the device too
            key.append((data.shape, data.dtype, data.strides, type(data), data.device.id))
        leaves.values.append(value)
        leaves.arrays.append(data)
        leaves.is_array.append(False)
        return None
    if kind in _LITERALS:
        key.append((kind, value))
        return ("lit", value)
    if kind is tuple or kind is list or (isinstance(value, tuple) and hasattr(value, "_fields")):
        spec = []
        key.append((kind, len(value)))
        for i, item in enumerate(value):
            spec.append(_flatten(item, (*path, i), leaves, key))
        return (kind, spec)
    if kind is dict:
        names = list(value)
        key.append(("dict", tuple(names)))
        return ("dict", names, [_flatten(value[k], (*path, k), leaves, key) for k in names])
    if isinstance(value, np.generic) or _array_type(value):
        data = np.asarray(value) if isinstance(value, np.generic) else value
        if data.dtype.kind not in "biufc":
            raise TypeError(
                f"dualad.jit: {_describe(path)} is an array of dtype {data.dtype}; only arrays "
                "of booleans and numbers can be traced (mark the argument static)"
            )
        device = None if type(data) is np.ndarray else data.device.id
        key.append(("array", data.shape, data.dtype, data.strides, type(data), device))
        leaves.values.append(data)
        leaves.arrays.append(data)
        leaves.is_array.append(True)
        return None
    if isinstance(value, LevelTensor):
        leaves.plain = False
        leaves.fallback = f"{_describe(path)} is a value of an active transform"
        key.append(("level", id(value)))
        leaves.values.append(value)
        leaves.arrays.append(None)
        leaves.is_array.append(False)
        return None
    raise TypeError(
        f"dualad.jit: {_describe(path)} has type {kind.__name__}, which cannot be traced: pass "
        "tensors, arrays, numbers or pytrees (tuples, lists, dicts) of them, or mark the "
        "argument static (static_argnums / static_argnames)"
    )


def signature(args: tuple, kwargs: dict, static: frozenset, names: tuple = ()) -> tuple:
    """``(key, leaves)`` of a call (see the module docstring). ``static`` holds the positions
    and names of static arguments; ``names`` the function's parameter names (for messages)."""
    leaves = Leaves()
    key: list = [GRAD.enabled, DEFAULT_DTYPE[0]]
    specs = []
    for i, a in enumerate(args):
        name = names[i] if i < len(names) else i
        if i in static or name in static:
            key.append(("static", i, _hashed(a, f"argument {i} ({name})")))
            specs.append(("static", a))
            _note_tensors(a, leaves)
        else:
            specs.append(_flatten(a, (i,), leaves, key))
    kw_specs = {}
    for name in sorted(kwargs):
        value = kwargs[name]
        if name in static:
            key.append(("static", name, _hashed(value, f"argument {name!r}")))
            kw_specs[name] = ("static", value)
            _note_tensors(value, leaves)
        else:
            key.append(("kw", name))
            kw_specs[name] = _flatten(value, (name,), leaves, key)
    leaves.rebuild_spec = (specs, kw_specs)
    return tuple(key), leaves


def _note_tensors(value, leaves: Leaves) -> None:
    if isinstance(value, Tensor):
        leaves.plain = False


def _hashed(value, what: str):
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"dualad.jit: static {what} must be hashable (it is part of the cache key), got "
            f"an unhashable {type(value).__name__}; pass a tuple instead of a list, or make the "
            "argument non-static"
        ) from None
    if isinstance(value, Tensor):
        raise TypeError(
            f"dualad.jit: static {what} is a Tensor; tensors are traced arguments (remove it "
            "from static_argnums / static_argnames)"
        )
    return (type(value), value)


def rebuild(spec, leaves: list):
    """The arguments ``(args, kwargs)`` of a call, its dynamic leaves replaced by ``leaves``."""
    it = iter(leaves)
    specs, kw_specs = spec
    args = tuple(_unflatten(s, it) for s in specs)
    kwargs = {k: _unflatten(s, it) for k, s in kw_specs.items()}
    return args, kwargs


def _unflatten(spec, it):
    if spec is None:
        return next(it)
    head = spec[0]
    if head == "lit" or head == "static":
        return spec[1]
    if head == "dict":
        return {k: _unflatten(s, it) for k, s in zip(spec[1], spec[2])}
    kind, children = spec
    items = [_unflatten(s, it) for s in children]
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # a namedtuple


__all__ = ["Leaves", "rebuild", "signature"]
