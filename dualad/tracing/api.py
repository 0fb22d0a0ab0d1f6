"""``dualad.jit``: trace a function once per signature, replay it as straight-line array code.

>>> import dualad
>>> from dualad import func
>>> f = dualad.jit(func.grad(lambda x: (dualad.sin(x) * x).sum()))
>>> x = dualad.tensor([0.5, 1.0])
>>> bool(((f(x) - (dualad.cos(x) * x + dualad.sin(x))) == 0).all())
True
>>> f(dualad.tensor([2.0, 3.0])).shape   # a replay: no tracing, no dispatch
(2,)
>>> f.cache_info().hits, f.cache_info().misses
(1, 1)

Semantics (see also ``dualad.tracing.tracer``):

- The first call for a signature (pytree structure, shapes, dtypes, strides, devices, static
  values, Python numbers, grad mode) runs ``fn`` under a trace level: every op runs for real, so
  the first call's results are the eager ones, and is recorded. Later calls with that signature
  replay the optimised program: a generated Python function calling the impls on the arrays.
- Values that reach Python during the trace (``if x.sum() > 0``, ``x.item()``, ``int(n)``)
  become guards: a replay whose guard fails traces again (each signature keeps up to
  ``max_traces`` programs in all); past that bound new cases run eagerly, with one warning.
- A replay that raises (a singular matrix this time) runs ``fn`` eagerly instead, so the
  error is the one dualad gives eagerly (unless the program writes in place: then the array
  module's error is raised as it is).
- Side effects of ``fn`` (printing, appending to a list, ``manual_seed``) happen when it is
  traced only. Random ops draw fresh values on every replay. Closed-over tensors are constants
  of the program, copied when the trace uses them (as ``jax.jit`` bakes them in): later
  changes to them are not seen by replays; pass changing values as arguments.
- Inputs are mutated only by in-place ops of ``fn`` (as eagerly). Arrays passed in are never
  written: a program that writes into an input works on a copy of the array.
- Outputs are Tensors (arrays when no argument was a Tensor, as ``dualad.func``'s transforms
  do), numbers or None. A returned tensor is a fresh Tensor even where ``fn`` returned its
  input; a returned tensor's gradient history inside ``fn`` is not kept.
- A call with inputs that require grad (grad mode on, no transform active, plain floating
  tensors as positional arguments) is staged: the jitted forward plus ONE tape node whose
  backward is the jitted ``func.vjp`` of ``fn`` (``dualad.tracing.staging``; differentiable
  again the same way, so ``create_graph=True`` works to any order).
- A call inside one ``vmap`` (the only active transform, default randomness, positional
  tensors) replays ``jit(vmap(fn))`` for its batch dims (``dualad.tracing.batching``).
- Other transforms applied OUTSIDE the jitted function (``func.grad(jit(f))``, nested
  ``vmap``), a call inside any transform, with an input that carries a tangent, or with
  inputs that require grad but do not fit staging (keyword or static arguments, integer
  inputs, non-floating outputs): ``fn`` runs eagerly under those transforms (correct, not
  staged). So does a function whose
  trace met something the program cannot replay (an op on a closed-over tensor that requires
  grad, an in-place write of a traced value into a tensor made from constants inside ``fn``),
  for that signature, and every call while the default dtype is not float64.
"""

from __future__ import annotations

import collections
import functools
import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np

from .._dtypes import _default as DEFAULT_DTYPE
from .._state import GRAD, pop_level, push_level
from .._tensor import Tensor, wrap
from .._tree import flatten
from .._wrapper import LevelTensor
from ..func._arrays import _leaf_to_array
from .algebra import simplify
from .batching import batchable, batched_call
from .codegen import RETRACE, compile_program
from .program import eliminate_dead, optimise
from .signature import rebuild, signature
from .staging import stageable, staged_call
from .tracer import TraceLevel, TraceTensor

_F64 = np.dtype("float64")

CacheInfo = collections.namedtuple(
    "CacheInfo", ["hits", "misses", "retraces", "eager_calls", "size", "maxsize"]
)
CacheInfo.__doc__ = """``Jitted.cache_info()``: replays (hits), traces (misses), calls whose
programs' guards all failed (retraces), eager calls, programs kept and the bound ``max_traces``.

>>> import dualad
>>> f = dualad.jit(lambda x: x + 1)
>>> for n in (2, 2, 3):
...     _ = f(dualad.ones(n))
>>> f.cache_info().hits, f.cache_info().misses, f.cache_info().size
(1, 2, 2)
"""


class RetraceWarning(UserWarning):
    """A jitted function reached its bound of traces: new cases run eagerly."""


class _Compiled:
    """One recorded program, ready to replay."""

    __slots__ = (
        "copy_inputs",
        "eager_only",
        "literal_outs",
        "out_kind",
        "random",
        "replay",
        "source",
        "spec",
        "written",
    )

    def __init__(self, replay, source, spec, copy_inputs, literal_outs, eager_only=None):
        self.written = False  # whether the program writes in place
        self.random = False  # whether it draws random numbers
        # "one": the function returned one tensor, "tuple": a tuple of tensors, else None
        self.out_kind = None
        self.replay = replay
        self.source = source
        self.spec = spec  # how to rebuild the output tree from its leaves
        self.copy_inputs = copy_inputs  # input positions the program writes into
        self.literal_outs = literal_outs  # output positions that are constants, not arrays
        self.eager_only = eager_only


class Jitted:
    """A function wrapped by ``dualad.jit`` (call it like the function).

    >>> import dualad
    >>> double = dualad.jit(lambda x: x * 2)
    >>> double(dualad.tensor([1.0, 2.0]))  # traced
    tensor([2., 4.])
    >>> double(dualad.tensor([5.0, 6.0]))  # replayed
    tensor([10., 12.])
    >>> double.cache_info()
    CacheInfo(hits=1, misses=1, retraces=0, eager_calls=0, size=1, maxsize=8)
    """

    def __init__(self, fn, static_argnums, static_argnames, max_traces: int) -> None:
        if not callable(fn):
            raise TypeError(f"dualad.jit: expected a callable, got {type(fn).__name__}")
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self.fn = fn
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            params = []
        self._names = tuple(
            p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        )
        self._static = frozenset((*static_argnums, *static_argnames))
        self.max_traces = max_traces
        self._cache: dict = {}
        self._backward: dict = {}  # (inputs, outputs) -> the jitted VJP (``staging``)
        self._vmapped: dict = {}  # in_dims -> jit(vmap(fn, in_dims)) (``batching``)
        self._traces = 0
        self._hits = self._misses = self._retraces = self._eager = 0
        self._warned = False
        functools.update_wrapper(self, fn)

    # ------------------------------------------------------------------ calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if GRAD.levels or DEFAULT_DTYPE[0] is not _F64:
            if DEFAULT_DTYPE[0] is _F64:
                found = batchable(self, args, kwargs)
                if found is not None:
                    return batched_call(self, *found)
            self._eager += 1
            return self.fn(*args, **kwargs)
        if not kwargs and not self._static:
            # the fast path: plain tensors in, one program, tensors out (the key is the one
            # ``signature`` makes for such a call)
            enabled = GRAD.enabled
            key = [enabled, _F64]
            for a in args:
                if type(a) is not Tensor or a._fw or (a._rg and enabled):
                    break
                d = a._data
                if type(d) is not np.ndarray:
                    break  # (CuPy: the key holds the device too)
                key.append((d.shape, d.dtype, d.strides, type(d)))
            else:
                programs = self._cache.get(tuple(key))
                if programs is not None and len(programs) == 1:
                    program = programs[0]
                    if program.eager_only is None and program.out_kind is not None:
                        try:
                            result = program.replay(*[a._data for a in args])
                        except Exception:
                            result = RETRACE  # (the general path below handles it)
                        if result is not RETRACE:
                            self._hits += 1
                            if program.out_kind == "one":
                                return wrap(result[0])
                            return tuple([wrap(r) for r in result])
        key, leaves = signature(args, kwargs, self._static, self._names)
        if leaves.fallback is not None:
            if stageable(self, args, kwargs):
                return staged_call(self, args)
            self._eager += 1
            return self.fn(*args, **kwargs)
        programs = self._cache.get(key)
        if programs is not None:
            for program in programs:
                if program.eager_only is not None:
                    self._eager += 1
                    return self.fn(*args, **kwargs)
                arrays = leaves.arrays
                if program.copy_inputs:
                    arrays = [
                        a.copy() if i in program.copy_inputs and leaves.is_array[i] else a
                        for i, a in enumerate(arrays)
                    ]
                try:
                    result = program.replay(*arrays)
                except Exception:
                    if program.written:
                        raise  # (inputs may be written already: not run a second time)
                    # eagerly again, for the error dualad gives (naming the op and arguments)
                    self._eager += 1
                    return self.fn(*args, **kwargs)
                if result is not RETRACE:
                    self._hits += 1
                    return _outputs(program, result, leaves.plain)
            self._retraces += 1
        if self._traces >= self.max_traces:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"dualad.jit: {getattr(self.fn, '__name__', 'the function')} was traced "
                    f"{self._traces} times (max_traces); new signatures and failed guards now "
                    "run eagerly",
                    RetraceWarning,
                    stacklevel=2,
                )
            self._eager += 1
            return self.fn(*args, **kwargs)
        self._misses += 1
        return self._trace(key, leaves)

    def _trace(self, key, leaves):
        """Run the function under a trace level, compile what it recorded, return its results."""
        level = TraceLevel(len(leaves.values))
        traced = []
        for i, (value, is_array) in enumerate(zip(leaves.values, leaves.is_array)):
            if is_array:
                value = wrap(
                    np.array(value, copy=True) if type(value) is np.ndarray else value.copy()
                )
            traced.append(level.input(value, i))
        args, kwargs = rebuild(leaves.rebuild_spec, traced)
        push_level(level)
        try:
            out = self.fn(*args, **kwargs)
            out_leaves, spec = flatten(out)
            refs, results, literal = _output_refs(level, out_leaves)
        finally:
            pop_level(level)
            level.alive = False
        self._traces += 1
        program = level.program
        program.outputs = refs
        if level.eager_only is not None:
            self._cache.setdefault(key, []).append(
                _Compiled(None, None, spec, (), literal, level.eager_only)
            )
            # the trace ran every op eagerly one level down: the values are the eager results
            return spec([leaf._value if type(leaf) is TraceTensor else leaf for leaf in out_leaves])
        else:
            optimise(program)
            xp = _array_module(leaves.arrays, program)
            plain = program.copy()
            if simplify(program):
                eliminate_dead(program)
                slow, _ = compile_program(plain, xp)
                replay, source = compile_program(program, xp, slow)
            else:
                replay, source = compile_program(program, xp)
            compiled = _Compiled(replay, source, spec, program.written_inputs(), literal)
            compiled.written = program.written
            compiled.random = any(i.kind == "random" for i in program.instrs)
            if isinstance(out, Tensor):
                compiled.out_kind = "one"
            elif type(out) is tuple and all(isinstance(o, Tensor) for o in out):
                compiled.out_kind = "tuple"
        self._cache.setdefault(key, []).append(compiled)
        return _outputs(compiled, results, leaves.plain)

    # ------------------------------------------------------------------ introspection
    def cache_info(self) -> CacheInfo:
        """Hits (replays), misses (traces), retraces (calls whose programs' guards all
        failed), eager calls, programs kept and the bound ``max_traces``."""
        return CacheInfo(
            self._hits, self._misses, self._retraces, self._eager, self._traces, self.max_traces
        )

    def cache_clear(self) -> None:
        """Forget every program (the next calls trace again)."""
        self._cache.clear()
        self._backward.clear()
        self._vmapped.clear()
        self._traces = 0
        self._warned = False

    def source(self, *args: Any, **kwargs: Any) -> str:
        """The generated program that a call with these arguments replays (traces it first if
        needed: ``fn``'s side effects happen then). Like JAX's ``make_jaxpr``."""
        key, leaves = signature(args, kwargs, self._static, self._names)
        if key not in self._cache:
            self(*args, **kwargs)
        programs = self._cache.get(key)
        if not programs:
            raise RuntimeError(
                f"dualad.jit: this call runs eagerly ({leaves.fallback or 'not traced'})"
            )
        program = programs[-1]
        if program.eager_only is not None:
            raise RuntimeError(f"dualad.jit: this call runs eagerly: {program.eager_only}")
        return program.source

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"<dualad.jit of {self.fn!r}>"


def _array_module(arrays: list, program):
    for a in arrays:
        if a is not None:
            return np if type(a) is np.ndarray else _cupy_of(a)
    for c in program.consts:
        if type(c) is np.ndarray:
            return np
        if hasattr(c, "__cuda_array_interface__"):
            return _cupy_of(c)
    return np


def _cupy_of(array):
    import cupy  # (optional dependency, only for CuPy arrays)

    return cupy


def _output_refs(level: TraceLevel, leaves: list) -> tuple:
    """The program references of the output leaves, their values now, and the positions of
    outputs that are literals."""
    refs, results, literal = [], [], []
    for i, leaf in enumerate(leaves):
        if type(leaf) is TraceTensor and leaf._level is level:
            refs.append(("s", leaf._slot))
            results.append(leaf._value._data)
        elif type(leaf) is Tensor:
            refs.append(level.program.const(leaf._data, leaf._version))
            results.append(leaf._data)
        elif isinstance(leaf, LevelTensor):
            raise TypeError(
                f"dualad.jit: output {i} is a value of a transform inside the function "
                f"({type(leaf).__name__}) that escaped it"
            )
        elif leaf is None or type(leaf) in (bool, int, float, complex, str):
            refs.append(("l", leaf))
            results.append(leaf)
            literal.append(i)
        elif type(leaf) is np.ndarray or isinstance(leaf, np.generic):
            refs.append(level.program.const(np.asarray(leaf)))
            results.append(np.asarray(leaf))
        else:
            raise TypeError(
                f"dualad.jit: output {i} of the function is a {type(leaf).__name__}; a jitted "
                "function returns tensors, arrays, numbers, strings or None (in tuples, lists "
                "or dicts)"
            )
    return refs, tuple(results), frozenset(literal)


def _outputs(program: _Compiled, results: tuple, plain: bool):
    """The function's result from the output leaves' arrays."""
    leaves = []
    literal = program.literal_outs
    for i, r in enumerate(results):
        if i in literal:
            leaves.append(r)
        elif plain:
            leaves.append(_leaf_to_array(wrap(r), False))
        else:
            leaves.append(wrap(r))
    return program.spec(leaves)


@overload
def jit(
    fn: Callable[..., Any],
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    max_traces: int = 8,
) -> Jitted: ...
@overload
def jit(
    fn: None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    max_traces: int = 8,
) -> Callable[[Callable[..., Any]], Jitted]: ...
def jit(
    fn: Callable[..., Any] | None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    max_traces: int = 8,
) -> Jitted | Callable[[Callable[..., Any]], Jitted]:
    """Trace ``fn`` once per call signature and replay it as straight-line array code.

    ``static_argnums`` / ``static_argnames``: arguments that are not traced; their (hashable)
    values are part of the cache key. ``max_traces``: how many programs the function keeps
    (signatures and guard outcomes); past it new cases run eagerly, with one warning.
    Usable as a decorator, with or without arguments. See the module docstring.

    >>> import dualad
    >>> @dualad.jit(static_argnums=1)
    ... def power(x, n):
    ...     return x**n
    >>> power(dualad.tensor([2.0]), 3)
    tensor([8.])
    >>> print(power.source(dualad.tensor([2.0]), 3))
    def replay(s0):
        s1 = f0(xp, s0, 3)  # pow_scalar_exponent
        return (s1,)
    """
    if fn is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            max_traces=max_traces,
        )
    return Jitted(fn, static_argnums, static_argnames, max_traces)


__all__ = ["CacheInfo", "Jitted", "RetraceWarning", "jit"]
