"""Compiled VJP rules for the eager backward pass (issue 15 item 6).

An op's VJP rule is written in dualad ops, so running it costs one dispatch per op of the rule.
In a backward pass that records nothing (``create_graph=False``, no transform level active, no
anomaly mode) the rule's result is all that matters: ``raw_vjp`` traces the rule once per
signature (op, parameters, Python-number arguments, shapes, dtypes and array types of the
gradients, saved values and arguments, which inputs need gradients) with the jit's trace level,
compiles the recording into straight-line code calling the impls on arrays (``codegen``), and
replays that on later nodes with the same signature. The tape installs it with
``rev.op_node.install_raw_vjp`` (``rev`` is below this layer and never imports it).

Invariants:
- A replay runs the same impls on the same arrays in the same order as the rule would through
  dispatch, so its gradients are bit-equal to the rule's.
- Only plain ``Tensor`` values without tangents, ``ArgMeta`` stand-ins and Python numbers take
  part; anything else (level wrappers, lists, tangents, unhashable parameters) returns None and
  the caller runs the rule as written. So does a signature whose trace could not be replayed
  faithfully (``eager_only``, an in-place write, a random draw, an output that is not a tensor
  or None), one whose guard fails on a replay, and every signature once the cache is full.
- A float argument is part of the key, zeros with their sign (0.0 and -0.0 are equal keys
  otherwise); a NaN never equals a key, so it runs the rule as written once the cache is full.
- An output that is one of the rule's inputs is returned as that very Tensor (as the rule
  returns it), others are fresh tensors around the replay's arrays.
"""

from __future__ import annotations

import numpy as np

from .._state import ACTIVE, GRAD, pop_level, push_level
from .._tensor import Tensor, wrap
from ..rev.node import ArgMeta
from ..rev.op_node import install_raw_vjp
from .codegen import RETRACE, compile_program
from .program import optimise
from .tracer import TraceLevel, TraceTensor

# signature -> (replay, output spec), or None: that signature runs the rule as written
_CACHE: dict = {}
# past this many signatures new ones run the rule as written (no eviction on the hot path)
MAX_SIGNATURES = 4096
_NUMBERS = (int, bool)
# ops whose first compiled rule called fewer than MIN_CALLS impls: building the key costs about
# what dispatching that many ops does, so their rules run as written
_SHORT: set = set()
MIN_CALLS = 3


def raw_vjp(op, grads: tuple, outs, args: tuple, params: dict, needs):
    """The rule's input gradients computed by the compiled rule, or None (run it as written).

    ``grads`` and ``outs`` (None or a tuple) hold one tensor each: the callers are the nodes of
    one-output ops. (The key is built inline, without helper calls: this runs once per node.)
    """
    if op in _SHORT or (ACTIVE and GRAD.levels) or GRAD.anomaly[0]:
        return None
    g = grads[0]
    if type(g) is not Tensor or g._fw is not None:
        return None
    data = g._data
    inputs = [g]
    if outs is None:
        key = [op, needs, type(data), data.shape, data.dtype]
    else:
        y = outs[0]
        if type(y) is not Tensor or y._fw is not None:
            return None
        out = y._data
        key = [op, needs, type(data), data.shape, data.dtype, out.shape, out.dtype]
        inputs.append(y)
    append = key.append
    for a in args:
        t = type(a)
        if t is Tensor:
            if a._fw is not None:
                return None
            data = a._data
            append(data.shape)
            append(data.dtype)
            inputs.append(a)
        elif t is float:
            append(a)
            if a == 0.0:
                append(str(a))  # 0.0 and -0.0 are equal keys otherwise
        elif t is ArgMeta:
            append(t)
            append(a.shape)
            append(a.dtype)
        elif t is int or t is bool:
            append(t)
            append(a)
        elif a is None:
            append(None)
        else:
            return None
    if params:
        for name, value in params.items():
            part = _param_key(value)
            if part is None:
                return None
            append(name)
            append(part)
    key = tuple(key)
    compiled = _CACHE.get(key, _CACHE)
    if compiled is _CACHE:
        if len(_CACHE) >= MAX_SIGNATURES:
            return None
        return _trace(key, op, grads, outs, args, params, needs)
    if compiled is None:
        return None
    replay, spec = compiled
    results = replay(*[a._data for a in inputs])
    if results is RETRACE:
        return None
    if len(spec) == 1:
        s = spec[0]
        return (None if s is None else (inputs[s] if s >= 0 else wrap(results[0])),)
    return tuple(
        [None if s is None else (inputs[s] if s >= 0 else wrap(r)) for s, r in zip(spec, results)]
    )


def _param_key(value):
    """A hashable key telling parameter values apart exactly, or None (not supported)."""
    t = type(value)
    if t is float:
        return ("f", value.hex())
    if value is None or t in _NUMBERS or t is str:
        return (t, value)
    if t is tuple:
        parts = []
        for v in value:
            part = _param_key(v)
            if part is None:
                return None
            parts.append(part)
        return (tuple, tuple(parts))
    if isinstance(value, np.dtype):
        return ("dtype", value)
    return None


def _trace(key: tuple, op, grads, outs, args, params, needs):
    """Run the rule under a trace level: its results now, and its compiled replay cached (or
    None cached when the recording cannot stand for the rule)."""
    tensors = [a for group in (grads, outs or (), args) for a in group if type(a) is Tensor]
    level = TraceLevel(len(tensors))
    traced = {id(t): level.input(t, i) for i, t in enumerate(tensors)}

    def swap(group):
        return tuple(traced[id(a)] if type(a) is Tensor else a for a in group)

    push_level(level)
    try:
        result = op.vjp(swap(grads), None if outs is None else swap(outs), swap(args), params, needs)
    except Exception:
        _CACHE[key] = None
        return None  # the rule as written raises its own error
    finally:
        pop_level(level)
        level.alive = False
    program = level.program
    refs, spec, values = [], [], []
    ok = level.eager_only is None and not program.written and type(result) is tuple
    for r in result if type(result) is tuple else ():
        if type(r) is TraceTensor and r._level is level:
            refs.append(("s", r._slot))
            spec.append(r._slot if r._slot < len(tensors) else -1)
            values.append(r._value)
        elif r is None:
            refs.append(("l", None))
            spec.append(None)
            values.append(None)
        else:
            ok = False
    if any(instr.kind == "random" for instr in program.instrs):
        ok = False
    if not ok:
        _CACHE[key] = None
        return None  # (a random draw made by the trace is not reused: the rule draws again)
    program.outputs = refs
    optimise(program)
    if sum(instr.kind == "op" for instr in program.instrs) < MIN_CALLS:
        _SHORT.add(op)
    data = tensors[0]._data if tensors else None
    xp = np if data is None or type(data) is np.ndarray else _cupy()
    replay, _ = compile_program(program, xp)
    _CACHE[key] = (replay, tuple(spec))
    return tuple(
        None if s is None else (tensors[s] if s >= 0 else v) for s, v in zip(spec, values)
    )


def _cupy():
    import cupy  # (optional dependency, only for CuPy arrays)

    return cupy


def cache_clear() -> None:
    """Forget every compiled rule."""
    _CACHE.clear()


def cache_size() -> int:
    """How many signatures have been seen (compiled or running the rule as written)."""
    return len(_CACHE)


install_raw_vjp(raw_vjp)

__all__ = ["MAX_SIGNATURES", "cache_clear", "cache_size", "raw_vjp"]
