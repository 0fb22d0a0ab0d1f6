"""Tensors built out of values that carry a derivative, with dualad ops.

Values that an active level tracks (a ``func.grad`` tape, a dual level's tangent, a vmap batch),
and tensors that require grad or have a tangent, must not become NumPy arrays on the way into a
new tensor: their derivative would be dropped silently. ``_creation``'s factories use the
builders here for tracked data (``tensor([x[0], 2 * x[1]])`` is ``stack([x[0], 2 * x[1]])``),
and dispatch uses ``operand`` for list/tuple operands of ops (``x * [a, 2 * a]``).

The three ops the builders need (``stack``, ``broadcast_to``, ``cat``) live a layer above;
``dualad.ops`` installs them here when it is imported (``install_ops``).
"""

from __future__ import annotations

from . import _dtypes
from ._errors import TrackedConversionError
from ._state import GRAD
from ._tensor import (
    _PYTHON_SCALARS,
    Tensor,
    _leaf_dtype,
    _scan,
    _to_array,
    tracking_level,
    wrap,
)


def _ops_missing(*args, **kwargs):
    raise RuntimeError(
        "dualad: building a tensor out of tracked values needs dualad.ops (import dualad)"
    )


# The three ops those builders use live a layer above this one; ``dualad.ops`` installs them
# here when it is imported (``install_ops``). Plain data never needs them.
stack = broadcast_to = cat = _ops_missing


def install_ops(stack_fn, broadcast_to_fn, cat_fn) -> None:
    """Install ``stack``, ``broadcast_to`` and ``cat`` (``dualad.ops`` calls this once)."""
    global stack, broadcast_to, cat
    stack, broadcast_to, cat = stack_fn, broadcast_to_fn, cat_fn


def _holds_tracked(data) -> bool:
    """Whether ``data`` is, or (nested in lists/tuples) holds, a tensor that an active level
    tracks or a level's wrapper (whose array is not the value to use). Call only while
    this thread has a level (``GRAD.levels``): otherwise nothing is tracked."""
    if isinstance(data, Tensor):
        return type(data) is not Tensor or tracking_level(data) is not None
    if isinstance(data, (list, tuple)):
        for kind in set(map(type, data)):
            if (
                kind not in _PYTHON_SCALARS
                and issubclass(kind, (Tensor, list, tuple))
                and any(_holds_tracked(item) for item in data if type(item) is kind)
            ):
                return True
    return False


def _first_tracked(data, keep=_holds_tracked):
    """The first tensor in ``data`` (nested lists/tuples) that ``keep`` (``_holds_tracked``)."""
    if isinstance(data, Tensor):
        return data if keep(data) else None
    for item in data:
        if isinstance(item, (Tensor, list, tuple)):
            found = _first_tracked(item, keep)
            if found is not None:
                return found
    return None


def _carries_derivative(data) -> bool:
    """Whether ``data`` is, or (nested in lists/tuples) holds, a tensor with a derivative to
    keep: one that requires grad, has a dual tangent, or that a level tracks or wraps."""
    if isinstance(data, Tensor):
        return data._rg or bool(data._fw) or (bool(GRAD.levels) and _holds_tracked(data))
    if isinstance(data, (list, tuple)):
        return any(_carries_derivative(item) for item in data)
    return False


def operand(data):
    """An op's list/tuple operand: stacked with dualad ops when it holds a tensor that carries a
    derivative (``x * [a, 2 * a]`` differentiates in ``a``), else returned as it is (plain data
    becomes a constant where the op converts its arguments).

    >>> import dualad
    >>> a = dualad.tensor(3.0, requires_grad=True)
    >>> (dualad.tensor([1.0, 2.0]) * [a, 2 * a]).sum().backward()
    >>> a.grad
    tensor(5.)
    """
    if not _carries_derivative(data):
        return data
    return _tracked_tensor(data, None, None, keep=_carries_derivative)


def _tracked_tensor(data, dtype, device, keep=_holds_tracked) -> Tensor:
    """``tensor(data)`` for data holding tracked values: a differentiable copy of a tensor, or
    the nested sequence stacked with dualad ops (numbers and untracked tensors become constants
    of the same dtype, detached as ``tensor`` detaches them). The dtype is inferred as for
    plain data; the device, unless given, is that of the first tracked tensor."""
    dtype = _dtypes.to_dtype(dtype)
    if isinstance(data, Tensor):
        out = data.to(dtype=dtype, device=device)
        return out.clone() if out is data else out  # tensor() never aliases its input
    if dtype is None:
        leaf_dtypes: set = set()
        _scan(data, leaf_dtypes)
        dtype = _leaf_dtype(leaf_dtypes)  # as for plain data
    if device is None:
        device = _first_tracked(data, keep).device

    def build(item) -> Tensor:
        if isinstance(item, Tensor):
            if not keep(item):
                item = item.detach()
            return item.to(dtype=dtype, device=device)
        if isinstance(item, (list, tuple)):
            parts = [build(part) for part in item]
            if not parts:
                return wrap(_to_array([], dtype, device, copy=False))
            shapes = {tuple(part.shape) for part in parts}
            if len(shapes) > 1:
                raise ValueError(
                    "dualad.tensor: cannot make a tensor from ragged data: its entries have "
                    f"the shapes {sorted(shapes)}"
                )
            return stack(parts)
        return wrap(_to_array(item, dtype, device, copy=True))

    return build(data)


def _tracked_argument(name: str, argument: str, value: Tensor, why: str):
    """The error for a factory argument that must be a number but is a tracked tensor."""
    level = tracking_level(value)
    return TrackedConversionError(
        f"dualad.{name}: {argument} is a tensor that {level.title} tracks, and {why}: taking "
        "its value as a number would silently drop its derivative. Pass "
        f"{argument}.detach() if the value is meant as a constant."
    )
