"""The trace level of ``dualad.jit``: every op runs for real and is recorded into a program.

Invariants:
- A ``TraceLevel`` sits at the BOTTOM of this thread's level stack (``jit`` traces only when
  the stack is empty), so every transform entered inside the traced function (``func.grad``,
  ``vmap``, dual levels ...) runs its rules as ordinary ops that reach this level.
- A ``TraceTensor`` of level T wraps a plain ``Tensor`` (``_value``, the concrete value: the
  trace executes every op, so Python control flow works) and ``_slot``, the program slot that
  holds the same array on a replay. It has no eager history of its own unless the traced
  function asked for one (``requires_grad_``): then the tape records on the TraceTensors
  themselves, so ``backward()`` inside the function runs its rules through this level too.
- An op with an argument T owns runs one level down on the values (T suspended) and is
  recorded as ``(op, params, argument references, output slots)``. Other arguments are
  constants of the program (closed-over tensors and values computed from constants alone:
  copies of their arrays as the trace used them) or literals (Python numbers, None).
- Converting a TraceTensor to Python (``bool``, ``float``, ``int``, ``.item()``, ``.tolist()``,
  ``np.asarray``, an index) gives the concrete value and records a GUARD: a replay whose value
  converts differently stops and the function is traced again.
- An in-place op on a TraceTensor writes the concrete value and records a ``write``; views
  made by the program alias their base on a replay exactly as in the trace (same impls, same
  shapes and strides), so they see the write.
- A random draw under T draws for real and is recorded as a draw made afresh on each replay.
- Anything the program cannot replay faithfully (an op on a closed-over tensor that requires
  grad, a traced value hidden in an op's parameters) marks the trace ``eager_only``: its
  results are still the eager ones, and that signature runs eagerly from then on.
"""

from __future__ import annotations

import numpy as np

from .. import _dispatch
from .._dispatch import SCALAR_TYPES, Level, dispatch
from .._state import GRAD, resume, suspend
from .._tensor import Tensor, wrap
from .._wrapper import LevelTensor, new_wrapper
from ..rev.function import eager as eager_function
from ..rev.function_node import NORMAL, VIEW
from ..rev.inplace import check_fits, update_tangents, write_into
from .program import Instr, Program


def array_meta(data) -> tuple:
    """``(shape, dtype, strides, address, root)`` of an array (see ``program``)."""
    iface = data.__array_interface__ if type(data) is np.ndarray else None
    if iface is None:  # CuPy
        address = data.data.ptr
        base = data.base if data.base is not None else data
        root = base.data.ptr
    else:
        address = iface["data"][0]
        base = data.base if isinstance(data.base, np.ndarray) else data
        root = base.__array_interface__["data"][0] if base is not data else address
    return (data.shape, data.dtype, data.strides, address, root)


# ops whose output shapes depend on the VALUES of floating inputs (ops with integer or boolean
# traced inputs, such as masks and indices, are guarded the same way without being listed)
DATA_SHAPED = frozenset(("nonzero", "unique", "unique_values", "setdiff1d", "setxor1d"))


class TraceLevel(Level):
    """One running trace of ``dualad.jit``: the program being recorded."""

    __slots__ = ("eager_only", "program", "title")
    kind = "jit"
    forbids_backward = False

    def __init__(self, n_inputs: int) -> None:
        self.index = 0
        self.alive = True
        self.program = Program(n_inputs)
        self.title = "dualad.jit"
        self.eager_only = None  # the reason the program cannot be replayed, if one appears

    def owns(self, value) -> bool:
        return type(value) is TraceTensor and value._level is self

    def tracks(self, value) -> bool:
        # conversions of traced values are allowed: they become guards (TraceTensor's own)
        return False

    def conversion_error(self, value, kind: str) -> Exception:  # pragma: no cover - unused
        raise AssertionError("the trace level tracks nothing")

    # ------------------------------------------------------------------ values
    def input(self, value: Tensor, slot: int) -> TraceTensor:
        """Input ``slot`` of the program, holding ``value`` during the trace."""
        self.program.meta[slot] = array_meta(value._data)
        return trace_tensor(value, self, slot)

    def ref(self, value) -> tuple:
        """The program reference for an op argument."""
        if type(value) is TraceTensor and value._level is self:
            return ("s", value._slot)
        if value is None or type(value) in SCALAR_TYPES or type(value) is str:
            return ("l", value)
        if isinstance(value, LevelTensor):
            self.give_up(f"a value of another level ({type(value).__name__}) reached the trace")
            return ("l", None)
        if isinstance(value, Tensor):
            if value._rg and GRAD.enabled:
                self.give_up("an op used a closed-over tensor that requires grad")
            return self.program.const(value._data, value._version)
        return self.program.const(value)

    def give_up(self, reason: str) -> None:
        if self.eager_only is None:
            self.eager_only = reason

    def wrap_out(self, value):
        """A fresh slot for ``value`` (a plain tensor one level down), wrapped."""
        if isinstance(value, LevelTensor):
            self.give_up("an op returned a value of another level")
            return value
        return trace_tensor(value, self, self.program.new_slot(array_meta(value._data)))

    # ------------------------------------------------------------------ ops
    def process(self, op, args: tuple, params: dict):
        values = []
        refs = []
        tape = False
        for a in args:
            if type(a) is TraceTensor and a._level is self:
                values.append(a._value)
                refs.append(("s", a._slot))
                if a._rg:
                    tape = True
            else:
                values.append(a)
                refs.append(self.ref(a))
        for v in params.values():
            if isinstance(v, LevelTensor) or (isinstance(v, (tuple, list)) and _holds_level(v)):
                self.give_up(f"a traced value is a parameter of '{op.name}'")
        removed = suspend(self)
        try:
            out = dispatch(op, tuple(values), params)
        finally:
            resume(removed)
        multi = isinstance(out, tuple)
        outs = out if multi else (out,)
        for o in outs:
            if isinstance(o, Tensor) and type(o) is Tensor and o._rg:
                self.give_up("an op's result requires grad below the trace (a closed-over tensor)")
        wrapped = tuple(self.wrap_out(o) for o in outs)
        slots = tuple(w._slot if type(w) is TraceTensor else -1 for w in wrapped)
        scalar = tuple(
            type(o) is Tensor and o._data.ndim == 0 and type(o._data) is np.ndarray for o in outs
        )
        self.program.instrs.append(Instr("op", op, params, tuple(refs), slots, (scalar, multi)))
        if op.name in DATA_SHAPED or any(
            type(a) is TraceTensor and a._value._data.dtype.kind in "biu" for a in args
        ):
            # the output's shape may depend on the values (a mask, indices, counts)
            for o, slot in zip(outs, slots):
                if type(o) is Tensor:
                    self.program.instrs.append(
                        Instr("guard", None, None, (("s", slot),), (), ("shape", o.shape))
                    )
        if tape and GRAD.enabled and op.differentiable:
            if multi:
                _dispatch.record_node(op, args, params, None, wrapped)
            else:
                _dispatch.record_node(op, args, params, wrapped[0])
        return wrapped if multi else wrapped[0]

    def apply_function(self, cls: type, args: tuple):
        """A custom ``Function`` on traced values: its forward runs on them as the eager tape
        runs it (its ops reach this level and are recorded; a tape inside the traced function
        records its node on the TraceTensors)."""
        outputs, is_tuple, ctx, kinds = eager_function(cls, args)
        # an output that is a view of an input: the wrappers carry no view records, their
        # values do (eager's rule reads the wrappers', so it said NORMAL)
        values = [a._value if type(a) is TraceTensor else a for a in args]
        kinds = list(kinds)
        for i, (o, (kind, _)) in enumerate(zip(outputs, kinds)):
            if kind == NORMAL and type(o) is TraceTensor and o._value._view is not None:
                base = o._value._view.base
                for j, v in enumerate(values):
                    if isinstance(v, Tensor) and (
                        v is base or (v._view is not None and v._view.base is base)
                    ):
                        kinds[i] = (VIEW, j)
                        break
        return outputs, is_tuple, ctx, tuple(kinds)

    def draw_random(self, redraw, shape: tuple):
        """Draw for real one level down; the program draws afresh with ``redraw`` each replay."""
        removed = suspend(self)
        try:
            value = redraw(tuple(shape))
        finally:
            resume(removed)
        requires_grad = value._rg
        if requires_grad:
            value = value.detach()
        out = self.wrap_out(value)
        self.program.instrs.append(Instr("random", None, None, (), (out._slot,), redraw))
        out._rg = requires_grad
        return out

    def guard(self, tensor: TraceTensor, kind: str, result):
        """Record that converting ``tensor`` (``kind``) gave ``result``; returns ``result``."""
        self.program.instrs.append(
            Instr("guard", None, None, (("s", tensor._slot),), (), (kind, result))
        )
        return result

    def write(self, target: TraceTensor, source) -> None:
        """``target[...] = source`` for real and in the program (an in-place op)."""
        src = source._value if type(source) is TraceTensor else source
        write_into(target._value, src)
        self.program.written = True
        self.program.instrs.append(
            Instr("write", None, None, (("s", target._slot), self.ref(source)), ())
        )

    def __repr__(self) -> str:
        return f"<jit trace level{'' if self.alive else ' (exited)'}>"


def _holds_level(items) -> bool:
    for v in items:
        if isinstance(v, LevelTensor) or (isinstance(v, (tuple, list)) and _holds_level(v)):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# TraceTensor


def trace_tensor(value: Tensor, level: TraceLevel, slot: int) -> TraceTensor:
    out = new_wrapper(TraceTensor, value, level)
    out._slot = slot
    return out


class TraceTensor(LevelTensor):
    """A tensor inside a function ``dualad.jit`` is tracing: a concrete value and its slot.

    Its metadata are its value's; converting it to Python gives the value's and records a guard
    (see the module docstring).
    """

    __slots__ = ("_slot",)
    _level: TraceLevel  # (the slots' types, for type checkers)
    _slot: int
    views_of_value = True  # (its value is the concrete tensor, with eager view records)

    def _guarded(self, kind: str, result):
        level = self._level
        if level.alive:
            level.guard(self, kind, result)
        return result

    def item(self):
        self._check_conversion("item")
        return self._guarded("item", self._value.item())

    def tolist(self):
        self._check_conversion("tolist")
        return self._guarded("tolist", self._value.tolist())

    def numpy(self, *, force: bool = False):
        if not force:
            self._check_conversion("numpy")
        data = self._value._data
        data = data if type(data) is np.ndarray else data.get()
        return self._guarded("array", data.copy())

    def __array__(self, dtype=None, copy=None):
        self._check_conversion("array")
        data = self._value.__array__(dtype, copy)
        self._guarded("array", np.array(data, copy=True))
        return data

    def __bool__(self) -> bool:
        return self._guarded("bool", bool(self._value))

    def __float__(self) -> float:
        self._check_conversion("float")
        return self._guarded("float", float(self._value))

    def __int__(self) -> int:
        self._check_conversion("int")
        return self._guarded("int", int(self._value))

    def __complex__(self) -> complex:
        self._check_conversion("complex")
        return self._guarded("complex", complex(self._value))

    def __index__(self) -> int:
        return self._guarded("int", self._value.__index__())

    def detach(self) -> TraceTensor:
        """The same traced value without gradient history (the same slot)."""
        return trace_tensor(self._value.detach(), self._level, self._slot)

    @property
    def data(self) -> TraceTensor:
        return trace_tensor(self._value.data, self._level, self._slot)

    def _apply_inplace(self, functional, args: tuple, params: dict) -> TraceTensor:
        """``self.op_(...)``: the functional op (recorded), written into self's memory."""
        if GRAD.enabled and (
            self._rg or any(isinstance(a, Tensor) and a.requires_grad for a in args)
        ):
            raise NotImplementedError(
                f"dualad.jit: in-place op {getattr(functional, '__name__', '')!r} on a tensor "
                "that requires grad inside the traced function is not supported (use the "
                "out-of-place op, or dualad.func.grad, whose tape handles in-place ops)"
            )
        result = functional(self, *args, **params)
        if not isinstance(result, Tensor):
            result = wrap(np.asarray(result))
        elif isinstance(result, LevelTensor) and not (
            type(result) is TraceTensor and result._level is self._level
        ):
            # tracked by a level above this one (a func.grad tape) that does not track self:
            # it cannot be written into self, as eagerly (rev.inplace.apply_inplace)
            error = result._written_into_plain(getattr(functional, "__name__", "op"), self)
            if error is not None:
                raise error
        check_fits(self, result)
        self._level.write(self, result)
        if result._fw is not None or self._fw is not None:
            update_tangents(self, result)
        return self

    def _written_into_plain(self, name: str, target: Tensor) -> Exception | None:
        """A traced value written into a tensor that is not traced (one made inside the
        function from constants, ``dualad.zeros(3)``, or a closed-over one): the program has no
        slot for it, so the write happens for real and this trace is eager-only (its results
        are the eager ones; the signature runs eagerly from then on)."""
        if not (GRAD.enabled and target.requires_grad):
            write_into(target, self._value)
            self._level.give_up(
                f"in-place op {name!r} wrote a traced value into a tensor that is not traced "
                "(made from constants inside the function, or closed over); start from a "
                "traced value instead (z = x * 0, x.clone()) or use out-of-place ops"
            )
            return None
        return RuntimeError(
            f"dualad.jit: in-place op {name!r} writes a traced value into a tensor that is not "
            f"traced (shape {tuple(target.shape)}: a closed-over tensor or one made inside the "
            "function from constants such as dualad.zeros). Start from a traced value instead "
            "(z = x.clone(), z = x * 0), or build the result with out-of-place ops "
            "(dualad.where, dualad.stack, dualad.cat)."
        )

    def _repr_head(self) -> str:
        return f"TraceTensor(slot={self._slot}"


__all__ = ["TraceLevel", "TraceTensor"]
