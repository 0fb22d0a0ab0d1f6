"""Forward mode's per-op rules compiled to array code (issue 15 item 6, the eager path).

Under one dual level alone (``func.jvp``, ``fwd.dual_level``: forward mode's hot case) every op
on a dual runs its impl and then its JVP rule, which is several dualad ops (``t * cos(x)``),
each paying dispatch and Tensor wrapping. The dual level instead keys such a call by its
signature (``fwd.compiled._RULES``: the op, the default dtype, each tensor argument's and
tangent's shape and dtype, the Python numbers' types and values) and, the second time it meets
one, asks ``compile_rule`` here: it traces the op and its rule with the jit's trace level (the
rule's ops are recorded as ordinary ops) and compiles the recording with ``codegen`` into one
function of the arrays that computes the primal and its tangent. Later calls of the signature
replay it and wrap one output Tensor holding its tangent. Installed with
``fwd.compiled.install_rule_compiler`` (``fwd`` is below this layer).

Invariants:
- The level offers only calls on plain ``Tensor`` arguments that require no grad (nothing is
  recorded on the tape), tangents that are plain Tensors without history or tangents of their
  own, NumPy arrays and Python ``float``/``int`` scalars, one or two arguments
  (``fwd.compiled.process_alone``). This compiler declines (None: the general path runs
  every such call, with the old behaviour) view ops, ops of several outputs or without a
  rule, traces that fail, give up, write in place, draw random numbers or record guards,
  and rules whose tangent has another shape or dtype than the (floating or complex) primal
  (the general path broadcasts or casts it).
- A replay takes four arrays, argument i's in input slot 2i and its tangent's in slot 2i + 1
  (None where there is none, never read: the program does not use the slot), so the hot path
  calls it with fixed arguments.
- A replay whose impls raise leaves the call to the general path, which raises the clear
  error; a replayed tangent that is an input array (a rule returning its argument's tangent,
  known when compiling) is copied, as the general path's ``_unshared`` copies it.
- The replay runs the impls the general path's rule runs, on the same arrays: equal results
  to the last bit (``tests/fwd/test_compiled_tangents.py``). The trace runs the op and its
  rule once more, for real: they are deterministic (ops never draw random numbers; a program
  with a draw would be declined).
- Shapes and dtypes are in the signature, strides are not: a program's values never depend
  on them (only where its no-op views and reused buffers put results, and its outputs are
  fresh arrays or copies).
"""

from __future__ import annotations

import numpy as np

from .._dispatch import EMPTY
from .._state import pop_level, push_level, resume, suspend
from .._tensor import Tensor
from ..fwd.compiled import install_rule_compiler
from .codegen import compile_program, direct_function
from .program import optimise
from .tracer import TraceLevel, TraceTensor

_ndarray = np.ndarray


def compile_rule(level, op, args: tuple):
    """Trace ``op`` and its JVP rule on ``args`` with dual ``level`` (alone on this thread's
    stack) suspended: ``(replay, shape, dtype, copies)``, the replay function of the arrays of
    the arguments and their tangents at ``level`` (four slots, see the invariants), the
    output's shape and dtype (its tangent's too) and whether the caller must copy the tangent
    (the rule returns an argument's), or None (the general path runs such calls)."""
    if op.view or op.nout != 1 or op.fast is None or not op.differentiable or op.jvp is None:
        return None
    if len(args) > 2:
        return None
    # input slots 2i and 2i + 1: argument i's array and its tangent's (unused where it has none)
    trace = TraceLevel(4)
    traced_args, traced_tangents = [], []
    for slot, a in enumerate(args):
        tangent = None
        if type(a) is Tensor:
            tangent = None if a._fw is None else a._fw.get(level)
            a = trace.input(a, 2 * slot)
            if tangent is not None:
                tangent = trace.input(tangent, 2 * slot + 1)
        traced_args.append(a)
        traced_tangents.append(tangent)
    traced_args = tuple(traced_args)
    removed = suspend(level)
    push_level(trace)
    try:
        out = op.fast(*traced_args)
        tangent = op.jvp(traced_tangents, (out,), traced_args, EMPTY)
    except Exception:
        return None  # (the general path runs it, and raises the rule's error itself)
    finally:
        pop_level(trace)
        trace.alive = False
        resume(removed)
    program = trace.program
    if (
        type(out) is not TraceTensor
        or type(tangent) is not TraceTensor
        or out._level is not trace
        or tangent._level is not trace
        or trace.eager_only is not None
        or program.written
        or any(instr.kind != "op" for instr in program.instrs)  # (so no guard: no RETRACE)
    ):
        return None
    y, ty = out._value._data, tangent._value._data
    if (
        type(y) is not _ndarray
        or type(ty) is not _ndarray
        or y.dtype.kind not in "fc"
        or ty.dtype != y.dtype
        or ty.shape != y.shape
    ):
        return None  # (the general path casts or broadcasts such a tangent)
    program.outputs = [("s", out._slot), ("s", tangent._slot)]
    optimise(program)
    replay, _ = compile_program(program, np)
    where, slot = program.outputs[1]
    # a rule that returned an argument's tangent (d(x + c) = dx): its caller copies it, since
    # an in-place op on the output must not write into the input's tangent (the general
    # path's ``_unshared`` copies it too)
    copies = where == "s" and slot < program.n_inputs
    return replay, y.shape, y.dtype, copies, _plan(program)


PLAN_SLOTS = 256  # (the compiled fast path's: the slots a plan may use)


def _plan(program):
    """The program as the compiled fast path's straight-line calls (``_fastpath.forward``
    runs them without the replay's Python frame), or None where it has an instruction that
    the code generator writes otherwise than as calls of a kernel, a ufunc or an op's
    ``inline`` steps (impls with their frame, parameters): ``(slots, steps, y, ty)``, each step
    ``(function, out slot, to array, argument references)``, a reference a slot number or a
    1-tuple holding a constant. The calls are the generated replay's, in its order (it may
    write into dead temporaries with ``out=``: the same values)."""
    steps = []
    used = program.n_inputs
    for instr in program.instrs:  # (slots past the program's hold inline steps' results)
        read = [r[1] + 1 for r in instr.args if r[0] == "s"]
        used = max(used, *(s + 1 for s in instr.outs), *read)
    for instr in program.instrs:
        op = instr.op
        scalars, multi = instr.extra
        if instr.params or multi or len(instr.outs) != 1 or len(instr.args) > 4:
            return None
        inline = getattr(op, "inline", None)
        if inline is not None and all(
            r[0] == "s" and program.meta[r[1]][1].kind in "fc" for r in instr.args
        ):
            # (the code generator writes it inline: its steps, into temporary slots)
            refs = [_reference(program, r) for r in instr.args]
            results = []
            for k, (name, step_refs) in enumerate(inline):
                out = instr.outs[0] if k == len(inline) - 1 else used
                used = max(used, out + 1)
                step_args = tuple(
                    refs[r] if type(r) is int else results[r[1]] if r[0] == "r" else (r[1],)
                    for r in step_refs
                )
                last = k == len(inline) - 1
                steps.append((getattr(np, name), out, last and bool(scalars[0]), step_args))
                results.append(out)
            continue
        function = op.kernel
        if function is None:
            first = instr.args[0] if len(instr.args) == 1 else None
            if first is not None and first[0] == "s" and program.meta[first[1]][1].kind in "fc":
                function = direct_function(op.impl, np)
            if function is None:
                return None
        refs = tuple(_reference(program, r) for r in instr.args)
        steps.append((function, instr.outs[0], bool(scalars[0]), refs))
    y, ty = (_reference(program, r) for r in program.outputs)
    if used > PLAN_SLOTS or type(y) is not int or type(ty) is not int:
        return None
    return used, tuple(steps), y, ty


def _reference(program, r):
    """A plan's reference to ``r``: its slot, or its constant in a 1-tuple."""
    if r[0] == "s":
        return r[1]
    return (program.consts[r[1]] if r[0] == "c" else r[1],)


install_rule_compiler(compile_rule)

__all__ = ["compile_rule"]
