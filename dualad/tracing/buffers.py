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

The sum of such a temporary and the transpose of a basic slicing (``index_put_zeros``: zeros
with ``ct`` at ``index``, the VJP of ``x[index]``, read by that sum only) is an in-place slice
addition, ``t[index] += ct`` (``fused``): the same sums on the slice, and no zero-padded array
allocated and filled (what a stencil's gradient, and a Hessian's products, are made of).
Outside the slice the temporary keeps its values, where the sum added zeros: equal values, a
``-0.0`` keeping its sign.

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
    """``{instruction index: (ufunc, slot whose buffer it writes)}`` (see the docstring); a
    fused slice addition is ``{sum's index: ("put", slot, ct reference, index key)}`` and its
    ``index_put_zeros``'s index maps to None (not emitted)."""
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
    puts = {}  # slot of a fusable index_put_zeros -> its instruction index

    def dead_temporary(slot, out) -> bool:
        return (
            slot in made
            and uses.get(slot) == 1
            and slot not in returned
            and meta[slot][:3] == out[:3]
            and meta[slot][3] == meta[slot][4]
        )

    for n, instr in enumerate(program.instrs):
        ufunc = ufunc_of(instr, program, xp, direct_function)
        if ufunc is not None:
            out = meta[instr.outs[0]]
            big = out[1].itemsize * _size(out[0]) >= MIN_BYTES
            fused = _fusable(instr, puts, dead_temporary, out, meta) if big else None
            if fused is not None:
                buffer, put = fused
                source = program.instrs[put]
                chosen[put] = None
                chosen[n] = ("put", buffer, source.args[0], source.params["index"].key)
                made.add(instr.outs[0])
                continue
            for r in instr.args if big else ():
                slot = r[1] if r[0] == "s" else None
                if dead_temporary(slot, out):
                    chosen[n] = (ufunc, slot)
                    break
            made.add(instr.outs[0])
        elif _put_zeros(instr, meta, uses, returned):
            puts[instr.outs[0]] = n
            made.add(instr.outs[0])
        elif (
            instr.kind == "op" and instr.op.name in _NEW_ARRAY and instr.extra == ((False,), False)
        ):
            made.add(instr.outs[0])
    return chosen


def _put_zeros(instr, meta, uses, returned) -> bool:
    """Whether ``instr`` is a basic ``index_put_zeros`` whose result only one op reads, of its
    argument's dtype (the slice addition adds ``ct`` as the zeros would hold it)."""
    if instr.kind != "op" or instr.op.name != "index_put_zeros" or instr.extra[1]:
        return False
    out = instr.outs[0]
    first = instr.args[0]
    index = (instr.params or {}).get("index")
    return (
        index is not None
        and index.basic
        and uses.get(out) == 1
        and out not in returned
        and first[0] == "s"
        and meta[first[1]][1] == meta[out][1]
        and meta[out][3] == meta[out][4]
    )


def _fusable(instr, puts: dict, dead_temporary, out, meta):
    """``(buffer slot, index_put_zeros's instruction index)`` when ``instr`` is ``add`` of a
    dead temporary and a fusable ``index_put_zeros`` result of the sum's own layout (not
    broadcast: its index must address the sum's elements), else None."""
    if instr.op.kernel is not operator.add or len(instr.args) != 2:
        return None
    (kind_a, a), (kind_b, b) = instr.args
    if kind_a != "s" or kind_b != "s" or a == b:
        return None
    for put, other in ((a, b), (b, a)):
        if put in puts and meta[put][:3] == out[:3] and dead_temporary(other, out):
            return other, puts[put]
    return None


def _size(shape) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


__all__ = ["MIN_BYTES", "plan", "ufunc_of"]
