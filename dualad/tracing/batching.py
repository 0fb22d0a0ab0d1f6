"""Staging ``vmap(jit(f))``: a jitted call inside one ``vmap`` level replays ``jit(vmap(f))``.

When the only active transform is one ``vmap`` level (randomness ``"error"``, the default) and
every positional argument is a tensor (batched at that level or not), the call runs below the
level as a call of ``jit(vmap(fn, in_dims=...))``, kept per tuple of batch dims, and its
outputs are batched along their first dim again. So ``vmap(jit(f))`` replays one traced,
batched program instead of running ``f`` eagerly under vmap. Anything else (keyword or static
arguments, nested levels, other randomness modes) runs eagerly as before.

>>> import dualad
>>> f = dualad.jit(lambda x: (dualad.sin(x) * x).sum())
>>> batch = dualad.tensor([[0.5, 1.0], [2.0, 3.0]])
>>> bool((dualad.vmap(f)(batch) == (dualad.sin(batch) * batch).sum(1)).all())
True
>>> sorted(f._vmapped)
[(0,)]
"""

from __future__ import annotations

from .._state import GRAD, resume, suspend
from .._tensor import Tensor
from .._tree import flatten
from ..vmap.api import vmap
from ..vmap.batched import BatchedTensor, VmapLevel, batched


def batchable(jitted, args: tuple, kwargs: dict):
    """``(level, values, in_dims)`` for a call that ``batched_call`` can run, else None."""
    levels = GRAD.levels
    if kwargs or jitted._static or not args or len(levels) != 1:
        return None
    level = levels[0]
    if type(level) is not VmapLevel or level.randomness != "error":
        return None
    values, dims = [], []
    for a in args:
        if type(a) is BatchedTensor and a._level is level:
            values.append(a._value)
            dims.append(a._bdim)
        elif type(a) is Tensor:
            values.append(a)
            dims.append(None)
        else:
            return None
    if all(d is None for d in dims):
        return None
    return level, tuple(values), tuple(dims)


def batched_call(jitted, level, values: tuple, dims: tuple):
    """Run the call below ``level`` as ``jit(vmap(fn, in_dims=dims))`` (see the module
    docstring); its tensor outputs come back batched along their first dim."""
    inner = jitted._vmapped.get(dims)
    if inner is None:
        inner = jitted._vmapped[dims] = type(jitted)(
            vmap(jitted.fn, in_dims=dims), (), (), jitted.max_traces
        )
    removed = suspend(level)
    try:
        out = inner(*values)
    finally:
        resume(removed)
    if type(out) is Tensor:
        return batched(out, 0, level)
    leaves, rebuild = flatten(out)
    return rebuild([batched(o, 0, level) if isinstance(o, Tensor) else o for o in leaves])


__all__ = ["batchable", "batched_call"]
