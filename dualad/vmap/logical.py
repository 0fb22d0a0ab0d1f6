"""What a ``BatchedTensor`` shows of itself that is not per example: its ``_data`` stand-in
(logical shape and dtype, nothing else) and the errors for values that escaped their vmap."""

from __future__ import annotations

from .._errors import TrackedConversionError
from .._wrapper import LevelTensor


def _level_of(x: LevelTensor) -> str:
    return f"vmap level {x._level.index}"


def _escaped(x: LevelTensor) -> RuntimeError:
    return RuntimeError(
        f"dualad.vmap: a batched tensor of vmap level {x._level.index} escaped its vmap call (it "
        "was stored outside the vmapped function, or returned inside a container vmap does not "
        "look into); its value only exists inside that call"
    )


class _LogicalData:
    """What a BatchedTensor shows as ``_data``: the logical shape and dtype, nothing else.

    Internal code reads ``t._data.shape`` / ``t._data.dtype.kind`` in many places; those get the
    per-example values. Any use of the array itself raises, naming the problem.
    """

    __slots__ = ("_owner",)

    def __init__(self, owner: LevelTensor) -> None:
        self._owner = owner

    # the array attributes, from the owner: alike LevelTensor's forwarding on purpose
    @property
    def shape(self):
        return self._owner.shape

    @property
    def ndim(self) -> int:
        return self._owner.ndim

    @property
    def size(self) -> int:
        return self._owner.numel()

    @property
    def dtype(self):
        return self._owner.dtype

    @property
    def itemsize(self) -> int:
        return self._owner.dtype.itemsize

    # layouts of batched values are not comparable per example (fwd.make_dual compares them)
    strides = None

    def _unsupported(self, what: str) -> TrackedConversionError:
        owner = self._owner
        return TrackedConversionError(
            f"dualad.vmap: this operation needs the array data of a batched tensor "
            f"({_level_of(owner)}, logical shape {owner.shape}) ({what}), which inside vmap "
            "stands for a whole batch. Tensor values used as static arguments (a shape or a "
            "size given as a tensor, say) cannot be batched."
        )

    def __getattr__(self, name: str):
        raise self._unsupported(f"attribute {name!r}")

    def __array__(self, dtype=None, copy=None):
        raise self._unsupported("conversion to a NumPy array")

    def __getitem__(self, key):
        raise self._unsupported("indexing its data")

    def __setitem__(self, key, value):
        raise self._unsupported("writing its data")

    def __iter__(self):
        raise self._unsupported("iterating over its data")

    def __bool__(self) -> bool:
        raise self._unsupported("its truth value")
