"""A traced program and its optimisation passes: what ``dualad.jit`` records and rewrites.

A ``Program`` is straight-line code over numbered slots. Slots ``0 .. n_inputs-1`` hold the
input arrays; every instruction writes fresh slots. An instruction's arguments are references:
``("s", slot)`` (a traced value), ``("c", index)`` (a constant of the program: a closed-over
array, taken when the trace saw it) or ``("l", value)`` (a Python literal, None included).

Instructions (``Instr.kind``):

- ``"op"``: ``outs = op.impl(xp, *args, **params)`` (one slot per output);
- ``"write"``: ``target[...] = source`` (an in-place op: views of the target see it);
- ``"random"``: ``out = draw(shape)``, drawn afresh on every replay;
- ``"assume"``: the simplified program's condition (``algebra``): the argument is finite, else
  the replay runs the program as it was before ``algebra.simplify`` rewrote it;
- ``"guard"``: a value that reached Python during the trace (``bool(x)``, ``x.item()``, a
  data-dependent shape ...) must convert to the same Python value again, else the replay stops
  and the function is traced again.

Invariants:
- The instructions are in the order the trace ran them; writes, draws and guards keep their
  order with respect to every instruction that reads the slots they touch.
- ``meta[slot]`` is ``(shape, dtype, strides, address, root)`` of the slot's array in the
  trace (``root``: the address of the memory it views); the passes read it (a replay runs on
  arrays of the same shapes, dtypes and strides: the cache's signature says so).
- The passes never change a value: they drop instructions whose results nobody reads (DCE),
  reuse one of two identical pure instructions (CSE) and replace an op whose result is its
  argument's whole memory viewed the same way (a no-op reshape, view, cast) by that argument.
  ``algebra.simplify`` (run after them by ``api``) keeps values too, but for the sign of a
  zero, under its ``assume``s (see there); ``buffers`` only changes where results are stored.

>>> import numpy as np
>>> p = Program(1)
>>> p.meta[0] = ((2,), np.dtype("float64"), (8,), 0, 0)
>>> s = p.new_slot(((2,), np.dtype("float64"), (8,), 16, 16))
>>> len(p.instrs), s
(0, 1)
"""

from __future__ import annotations

# kinds of instructions whose effect is more than their output slots (never removed by DCE)
EFFECTS = frozenset(("write", "random", "guard", "assume"))


class Instr:
    """One instruction of a program (see the module docstring for the kinds)."""

    __slots__ = ("args", "extra", "kind", "op", "outs", "params")

    def __init__(self, kind: str, op, params, args: tuple, outs: tuple, extra=None) -> None:
        self.kind = kind
        self.op = op
        self.params = params
        self.args = args
        self.outs = outs
        self.extra = extra

    def __repr__(self) -> str:
        name = self.op.name if self.kind == "op" else self.kind
        return f"<Instr {name} {self.args} -> {self.outs}>"


class Program:
    """A traced function as straight-line code over slots (see the module docstring)."""

    __slots__ = (
        "const_index",
        "consts",
        "instrs",
        "kept",
        "meta",
        "n_inputs",
        "n_slots",
        "outputs",
        "written",
    )

    def __init__(self, n_inputs: int) -> None:
        self.n_inputs = n_inputs
        self.n_slots = n_inputs
        self.instrs: list[Instr] = []
        self.consts: list = []
        self.const_index: dict = {}  # (id of the array, its tensor's version) -> index
        self.kept: list = []  # the arrays the constants copy (their ids stay theirs)
        self.meta: dict = {}
        self.outputs: list = []  # one reference per output leaf
        self.written = False  # whether some instruction writes into a slot

    def new_slot(self, meta) -> int:
        slot = self.n_slots
        self.n_slots += 1
        self.meta[slot] = meta
        return slot

    def const(self, value, version: int = 0) -> tuple:
        """A reference to constant ``value``: an array is COPIED as it is now (the trace may
        write into it later: a tangent that a dual level updates in place), once per array and
        ``version`` (its tensor's version counter); other objects are kept as they are."""
        key = (id(value), version)
        index = self.const_index.get(key)
        if index is None:
            index = self.const_index[key] = len(self.consts)
            self.kept.append(value)
            if hasattr(value, "copy") and hasattr(value, "strides"):
                value = value.copy(order="K")
            self.consts.append(value)
        return ("c", index)

    def copy(self) -> Program:
        """A copy sharing the constants and the ``Instr`` objects (``algebra.simplify`` and
        ``eliminate_dead`` replace the lists, never change an ``Instr``)."""
        other = Program(self.n_inputs)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.instrs = list(self.instrs)
        other.outputs = list(self.outputs)
        other.meta = dict(self.meta)
        return other

    def written_inputs(self) -> set:
        """Input slots whose memory an instruction may write (directly or through a view):
        the replay copies those inputs first when the caller gave arrays."""
        if not self.written:
            return set()
        addresses = {}
        for slot in range(self.n_inputs):
            meta = self.meta.get(slot)
            if meta is not None:
                addresses[slot] = meta[4]
        hit = set()
        for instr in self.instrs:
            if instr.kind == "write":
                target = self.meta[instr.args[0][1]][4]
                hit.update(s for s, root in addresses.items() if root == target)
        return hit


# ---------------------------------------------------------------------------------------------
# passes


def optimise(program: Program) -> Program:
    """Run the passes in order: no-op views, CSE, DCE. Returns ``program`` (changed in place)."""
    drop_noop_views(program)
    eliminate_common(program)
    eliminate_dead(program)
    return program


def _substitute(program: Program, mapping: dict) -> None:
    """Replace references to the slots in ``mapping`` (slot -> reference) everywhere."""
    if not mapping:
        return

    def sub(ref):
        while ref[0] == "s" and ref[1] in mapping:
            ref = mapping[ref[1]]
        return ref

    for instr in program.instrs:
        instr.args = tuple(sub(r) for r in instr.args)
    program.outputs = [sub(r) for r in program.outputs]


def drop_noop_views(program: Program) -> None:
    """An op with one output whose array in the trace was its first argument's memory seen
    identically (same address, shape, strides and dtype: a reshape to the same shape, ``[...]``,
    an ``astype`` to the dtype it has, ``contiguous`` of a contiguous array) is replaced by that
    argument. Aliasing is unchanged: the output shared the argument's memory anyway."""
    mapping = {}
    keep = []
    meta = program.meta
    for instr in program.instrs:
        if instr.kind == "op" and not instr.extra[1] and instr.args and instr.op.view:
            first = instr.args[0]
            out = instr.outs[0]
            if first[0] == "s" and first[1] not in mapping and meta[first[1]] == meta[out]:
                mapping[out] = first
                continue
        keep.append(instr)
    program.instrs = keep
    _substitute(program, mapping)


def _outputs(program: Program) -> set:
    return {r[1] for r in program.outputs if r[0] == "s"}


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def eliminate_common(program: Program) -> None:
    """Common-subexpression elimination: a second op with the same op, parameters and argument
    references as an earlier one reuses its outputs. Only in programs without writes (a write
    changes what a reference holds), never for random draws or guards, and never for an
    instruction whose outputs are returned (each returned array stays its own)."""
    if program.written:
        return
    seen = {}
    mapping = {}
    keep = []
    returned = _outputs(program)
    for instr in program.instrs:
        if instr.kind == "op" and not set(instr.outs) & returned:
            args = tuple(
                mapping.get(r[1], r) if r[0] == "s" else (r if r[0] == "c" else _literal_key(r))
                for r in instr.args
            )
            params = tuple(sorted(instr.params.items())) if instr.params else ()
            key = (instr.op, args, params)
            if _hashable(key):
                previous = seen.get(key)
                if previous is not None:
                    for mine, theirs in zip(instr.outs, previous.outs):
                        mapping[mine] = ("s", theirs)
                    continue
                seen[key] = instr
        keep.append(instr)
    program.instrs = keep
    _substitute(program, mapping)


def _literal_key(ref):
    # 1 == 1.0 == True as dict keys: a literal's type is part of what it means to an op
    return ("l", type(ref[1]), ref[1])


def eliminate_dead(program: Program) -> None:
    """Dead-code elimination: drop every op whose outputs no later instruction, guard, write or
    output reads. Writes, random draws and guards stay (their effect is not their slot)."""
    live = _outputs(program)
    keep = []
    for instr in reversed(program.instrs):
        if instr.kind in EFFECTS or set(instr.outs) & live:
            keep.append(instr)
            live.update(r[1] for r in instr.args if r[0] == "s")
    keep.reverse()
    program.instrs = keep


__all__ = ["Instr", "Program", "eliminate_dead", "optimise"]
