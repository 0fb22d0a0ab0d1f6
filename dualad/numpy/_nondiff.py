"""What the non-differentiable functions of ``dualad.numpy`` share: turning arguments into
tensors, NumPy's axis normalisation (and its ``AxisError``), the ``out=`` they refuse, and
marking a function with the ops it runs (``dualad.numpy.coverage`` reads the mark).
"""

from __future__ import annotations

from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .._creation import as_tensor
from .._tensor import Tensor

__all__: list[str] = []


def arg(value) -> Tensor:
    """A tensor argument: a tensor of any level as it is, anything else (arrays, lists,
    scalars) as an untracked tensor."""
    return value if isinstance(value, Tensor) else as_tensor(value)


def axis_index(axis, ndim: int) -> int:
    """``axis`` as a non-negative int (NumPy's ``AxisError`` when out of range)."""
    return normalize_axis_index(_int(axis), ndim)


def axis_tuple(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (an int or a sequence of ints) as a tuple of non-negative ints."""
    return normalize_axis_tuple(axis, ndim)


def _int(value) -> int:
    try:
        return int(value.__index__())
    except AttributeError:
        raise TypeError(f"an axis must be an integer, got {type(value).__name__}") from None


def no_out(name: str, out) -> None:
    """NumPy's ``out=`` is accepted only as None: these functions return new tensors."""
    if out is not None:
        raise TypeError(
            f"dualad.numpy.{name}: out= is not supported (got {type(out).__name__}); use the "
            "returned tensor instead"
        )


def uses(*ops, differentiable=None):
    """Mark a function with the registered ops it runs (``fn.ops``), so the coverage table
    tells their rules, and with ``differentiable=False`` where its result never carries a
    derivative although some of those ops could (``iscomplex`` compares ``imag``)."""

    def mark(fn):
        fn.ops = ops
        if differentiable is not None:
            fn.differentiable = differentiable
        return fn

    return mark
