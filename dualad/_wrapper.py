"""The base of every transform level's wrapper (JAX's Tracer): ``LevelTensor``.

A level that needs its own objects for the values it processes (vmap's ``BatchedTensor``, the
``func.grad`` tape's ``GradTensor``, a tracing level's tracer) subclasses ``LevelTensor`` and
makes them with ``new_wrapper``; what every such wrapper forwards to its value exists here once.

Invariants:
- A wrapper of level L holds ``_value``, the value one level down (a plain ``Tensor`` or a
  wrapper of a level below L), and ``_level``, L. Values of other levels never hold it.
- Its metadata is its value's: ``shape``, ``ndim``, ``dtype``, ``device``; ``size``, ``numel``
  and ``len`` follow from ``shape``, so a level that reports other metadata (vmap's logical,
  per-example shape) overrides ``shape`` and ``ndim`` (and ``_data``) alone.
- It has no eager history of its own (the parent's slots are empty, ``NO_HISTORY``): the tape
  and the levels below see its value, never the wrapper. Only forward-mode tangents (``_fw``)
  of dual levels above L are attached to it.
- Converting it to a number or an array first asks ``_check_conversion(kind)`` (by default:
  refused while an active level tracks it), then converts the value, which asks the levels
  below in turn.
"""

from __future__ import annotations

from typing import Any

from ._tensor import Tensor, _new

# The parent's slots of a fresh wrapper, in the order ``new_wrapper`` assigns them (``_rg``,
# ``_node``, ``_out_nr``, ``_meta``, ``_fw``, ``_vc``, ``_view``): no history, no tangents, no
# version box, not a view of its own. The fast paths test ``type(x) is Tensor`` and never see
# a wrapper.
NO_HISTORY = (False, None, 0, None, None, None, None)


def new_wrapper(cls: type, value, level):
    """A fresh ``cls`` (a ``LevelTensor`` subclass) of ``level`` around ``value``; the caller
    sets the subclass's own slots."""
    out = _new(cls)
    out._value = value
    out._level = level
    out._rg, out._node, out._out_nr, out._meta, out._fw, out._vc, out._view = NO_HISTORY
    return out


def unwrapped(value):
    """The plain tensor under every level's wrapper of ``value``."""
    while isinstance(value, LevelTensor):
        value = value._value
    return value


class LevelTensor(Tensor):
    """A value of one transform level: the value one level down plus what the level adds."""

    __slots__ = ("_level", "_value")
    _level: Any  # (the slots' types, for type checkers: each wrapper names its level's class)
    _value: Tensor

    # whether the wrapper stands for a batch of values (vmap's): the dual levels below make the
    # tangents that in-place writes need batched at those levels too (``fwd.levels``)
    batches = False
    # whether the wrapper's views are its value's (same shapes, the value's view records say
    # how a view was made: jit's traced values), so that view steps can be read from them
    views_of_value = False

    # ------------------------------------------------------------------ metadata
    @property
    def _data(self):
        return self._value._data

    # Tensor's array attributes, forwarded to the value: alike Tensor's own on purpose (one API)
    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def ndim(self) -> int:
        return self._value.ndim

    def dim(self) -> int:
        return self.ndim

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def device(self):
        return self._value.device

    @property
    def is_cuda(self) -> bool:
        return self._value.is_cuda

    def size(self, dim: int | None = None):
        shape = self.shape
        if dim is None:
            return shape
        try:
            return shape[dim]
        except IndexError:
            ndim = max(len(shape), 1)
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                f"but got {dim})"
            ) from None

    def numel(self) -> int:
        count = 1
        for s in self.shape:
            count *= s
        return count

    nelement = numel

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    # ------------------------------------------------------------------ autograd attributes
    @property
    def requires_grad(self) -> bool:
        # the value's flag (the tape below records the values); ``_rg`` is left for a tape
        # level above this one that records on the wrappers themselves
        return self._rg or self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @property
    def _version(self) -> int:
        return self._value._version

    # ------------------------------------------------------------------ conversions
    # (``Tensor``'s conversion section says why a tracked value refuses them)
    def _check_conversion(self, kind: str) -> None:
        """Raise when conversion ``kind`` (a key of ``_errors.ATTEMPTS``) would lose what a
        level tracks; the levels below are asked when the value converts."""
        self._refuse_if_tracked(kind)

    def item(self):
        self._check_conversion("item")
        return self._value.item()

    def tolist(self):
        self._check_conversion("tolist")
        return self._value.tolist()

    def numpy(self, *, force: bool = False):
        if force:
            return self._value.detach().numpy(force=True)
        self._check_conversion("numpy")
        return self._value.numpy()

    def __array__(self, dtype=None, copy=None):
        self._check_conversion("array")
        return self._value.__array__(dtype, copy)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        self._check_conversion("float")
        return float(self._value)

    def __int__(self) -> int:
        self._check_conversion("int")
        return int(self._value)

    def __complex__(self) -> complex:
        self._check_conversion("complex")
        return complex(self._value)

    def __index__(self) -> int:
        return self._value.__index__()

    # ------------------------------------------------------------------ printing
    def _repr_head(self) -> str:
        """``Name(field=..., ...`` of the printed form, up to the value."""
        raise NotImplementedError

    def _repr_extras(self) -> str:
        return ""

    def __repr__(self) -> str:
        body = repr(self._value).replace("\n", "\n    ")
        return f"{self._repr_head()}, value=\n    {body}{self._repr_extras()}\n)"

    __str__ = __repr__

    def _written_into_plain(self, name: str, target: Tensor) -> Exception:
        """The error for in-place op ``name`` on ``target``, a tensor this level does not
        track, whose result is this wrapper (it cannot be written into ``target``); None when
        the level wrote the value into ``target`` itself."""
        raise NotImplementedError
