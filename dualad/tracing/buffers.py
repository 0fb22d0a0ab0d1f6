"""Buffer reuse: an elementwise ufunc writes its result into a dead temporary (``out=``).

Liveness over the straight-line program: an op whose call is one ufunc (a ``kernel`` of the
``operator`` module, or an impl that is one ufunc call: ``codegen.direct_function``) may write
into an argument slot when that slot

- is read by this instruction only and is not returned (so it is dead afterwards, and no view
  of it was ever made: a view is a reader),
- was made by an op that always returns a new array (a ufunc call, ``matmul``, the fused
  ``*_backward`` ops, ``index_put_zeros``: the transpose of slicing), not an input, a constant
  or a view,
- has the result's shape, dtype and strides in the trace, and is large enough that allocating
  it costs something (``MIN_BYTES``: small arrays come from NumPy's cache, and ``out=`` only
  adds the keyword's cost).

A ufunc whose output is one of its inputs computes each element from the same input element
(the same loop, the same bits as into a new array). Programs that write in place are left
alone.

>>> import numpy as np, dualad
>>> f = dualad.jit(lambda a, b: dualad.exp(a @ b))
>>> a = dualad.tensor(np.ones((128, 128)))
>>> print(f.source(a, a).splitlines()[2].split("#")[0].strip())
s3 = o1(s2, out=s2)
"""

from __future__ import annotations

import operator

# ``kernel`` functions of the ops -> the ufunc's name in the array module
_UFUNC_OF = {
    operator.add: "add",
    operator.sub: "subtract",
    operator.mul: "multiply",
    operator.truediv: "true_divide",
    operator.neg: "negative",
}
_NEW_ARRAY = frozenset(("matmul", "tanh_backward", "sigmoid_backward", "index_put_zeros"))
MIN_BYTES = 1 << 16


def ufunc_of(instr, program, xp, direct_function):
    """The ufunc an op instruction's call amounts to, or None."""
    op = instr.op
    if instr.kind != "op" or instr.params or instr.extra[1] or instr.extra[0][0]:
        return None
    if op.kernel is not None:
        name = _UFUNC_OF.get(op.kernel)
        return None if name is None else getattr(xp, name, None)
    if len(instr.args) == 1:
        first = instr.args[0]
        if first[0] == "s" and program.meta[first[1]][1].kind in "fc":
            return direct_function(op.impl, xp)
    return None


def plan(program, xp, direct_function) -> dict:
    """``{instruction index: (ufunc, slot whose buffer it writes)}`` (see the docstring)."""
    if program.written:
        return {}
    uses: dict = {}
    for instr in program.instrs:
        for r in instr.args:
            if r[0] == "s":
                uses[r[1]] = uses.get(r[1], 0) + 1
    returned = {r[1] for r in program.outputs if r[0] == "s"}
    made = set()
    chosen = {}
    meta = program.meta
    for n, instr in enumerate(program.instrs):
        ufunc = ufunc_of(instr, program, xp, direct_function)
        if ufunc is not None:
            out = meta[instr.outs[0]]
            big = out[1].itemsize * _size(out[0]) >= MIN_BYTES
            for r in instr.args if big else ():
                slot = r[1] if r[0] == "s" else None
                if (
                    slot in made
                    and uses.get(slot) == 1
                    and slot not in returned
                    and meta[slot][:3] == out[:3]
                    and meta[slot][3] == meta[slot][4]
                ):
                    chosen[n] = (ufunc, slot)
                    break
            made.add(instr.outs[0])
        elif (
            instr.kind == "op" and instr.op.name in _NEW_ARRAY and instr.extra == ((False,), False)
        ):
            made.add(instr.outs[0])
    return chosen


def _size(shape) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


__all__ = ["MIN_BYTES", "plan", "ufunc_of"]
