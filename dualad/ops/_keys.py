"""Index keys: normalising what ``x[key]`` accepts, and holding a key as a static parameter
(``IndexKey``) or as a template whose index tensors are op arguments (``TensorKey``).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor

_SEQUENCE_ITEM_TYPES = (list, tuple, slice, type(Ellipsis), type(None), np.ndarray, Tensor)


def _sequence_as_tuple(key: list) -> bool:
    """PyTorch's (and old NumPy's) rule: a short list holding a sequence, slice, None, Ellipsis
    or tensor is a tuple of indices (``x[[[0, 1], [1, 0]]]`` is ``x[[0, 1], [1, 0]]``); a list of
    plain integers or booleans is one index array. Seed tests pin this for indexing/setitem."""
    return len(key) < 32 and any(isinstance(k, _SEQUENCE_ITEM_TYPES) for k in key)


def _normalize_key(key, tensor_args: bool = False):
    """Index keys as NumPy understands them: tensors become arrays, lists of ints arrays.

    With ``tensor_args``, a key holding a tensor gives None instead: its tensors are to be op
    arguments (``split_tensor_key``)."""
    if isinstance(key, list) and _sequence_as_tuple(key):
        key = tuple(key)
    elif not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            if tensor_args:
                return None
            k = k._data
            if k.dtype.kind not in "iub":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            # a copy: the key is kept for backward, and the index tensor may change in place
            k = k.astype(bool) if k.dtype == np.uint8 else k.copy()  # torch: bytes are a mask
        elif isinstance(k, (list, tuple)):
            try:
                k = np.asarray(k)
            except ValueError:
                raise IndexError(f"dualad: ragged index sequence {k!r}") from None
            if k.size == 0:
                k = k.astype(np.int64)
            if k.dtype.kind not in "iub":
                raise IndexError(f"dualad: list index must hold integers or booleans: {k!r}")
        elif isinstance(k, np.ndarray):
            if k.dtype.kind not in "iub":
                raise IndexError(
                    f"dualad: arrays used as indices must be integer or boolean: {k!r}"
                )
            k = k.copy()
        elif isinstance(k, float):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got float)"
            )
        out.append(k)
    return tuple(out)


def is_basic_key(key: tuple) -> bool:
    """True if indexing with ``key`` gives a view (ints, slices, None, Ellipsis only)."""
    for k in key:
        if type(k) is bool:
            return False
        if not (k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))):
            return False
    return True


class IndexKey:
    """An index key held as a static parameter (arrays inside are not hashed or compared)."""

    __slots__ = ("basic", "key")

    def __init__(self, key: tuple) -> None:
        self.key = key
        self.basic = is_basic_key(key)

    def __repr__(self) -> str:
        return f"IndexKey({self.key!r})"


class _Slot:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<tensor>"


SLOT = _Slot()  # where an index tensor goes in a TensorKey


class TensorKey:
    """The static part of an index key whose tensors are op arguments (``SLOT`` marks them)."""

    __slots__ = ("key",)

    def __init__(self, key: tuple) -> None:
        self.key = key

    def fill(self, xp, arrays: tuple) -> tuple:
        """The array-module key with ``arrays`` (the index tensors' data) in the slots."""
        it = iter(arrays)
        out = []
        for k in self.key:
            if k is SLOT:
                k = next(it)
                if k.dtype == np.uint8:
                    k = k.astype(bool)  # torch: a byte tensor is a mask
            out.append(k)
        return _device_key(xp, tuple(out))

    def with_batch_index(self, position: int) -> TensorKey:
        """This key with one more slot (the batch's arange) before element ``position``."""
        return TensorKey((*self.key[:position], SLOT, *self.key[position:]))

    def __repr__(self) -> str:
        return f"TensorKey({self.key!r})"


def split_tensor_key(key):
    """``(TensorKey, index tensors)`` for a key that holds tensors, None for any other key."""
    if isinstance(key, Tensor):
        parts = (key,)
    elif isinstance(key, tuple):
        parts = key
    elif isinstance(key, list) and _sequence_as_tuple(key):
        parts = tuple(key)
    else:
        return None
    tensors = [k for k in parts if isinstance(k, Tensor)]
    if not tensors:
        return None
    for t in tensors:
        if t.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    static = iter(_normalize_key(tuple(k for k in parts if not isinstance(k, Tensor))))
    template = tuple(SLOT if isinstance(k, Tensor) else next(static) for k in parts)
    return TensorKey(template), tensors


def _device_key(xp, key):
    if xp is np:
        return key
    return tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


def _advanced_layout(key: tuple) -> tuple[bool, int]:
    """For a key with advanced parts: (are they adjacent?, ndim of their broadcast result).

    NumPy puts the advanced result dims where the first advanced index was when the advanced
    indices are adjacent, and first otherwise (ints count as advanced next to arrays).
    """
    positions = []
    ndim = 0
    for i, k in enumerate(key):
        if isinstance(k, np.ndarray):
            positions.append(i)
            ndim = max(ndim, 1 if k.dtype == bool else k.ndim)
        elif type(k) is bool:
            positions.append(i)
            ndim = max(ndim, 1)
        elif isinstance(k, (int, np.integer)):
            positions.append(i)
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    return adjacent, ndim


def resolve_key(key) -> tuple:
    """``(IndexKey, None)`` for an indexing key of constants, or ``(None, (template, tensors))``
    when it holds index tensors: those are op arguments (they may be batched, saved...)."""
    if isinstance(key, IndexKey):
        return key, None
    normalized = _normalize_key(key, tensor_args=True)
    if normalized is None:
        return None, split_tensor_key(key)
    return IndexKey(normalized), None
