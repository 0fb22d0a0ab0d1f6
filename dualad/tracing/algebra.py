"""Algebraic simplification of a traced program: products with identity matrices and ones.

``jacrev``/``jacfwd``/``hessian`` push the identity basis through the rules: a trace of them
multiplies ``eye(n)`` elementwise into diagonal matrices and then runs full matrix products
with those diagonal matrices, O(n^3) where scaling rows is O(n^2). This pass knows which slots
hold diagonal matrices and rewrites the products with them:

- an identity constant is ``diag(1.0)``;
- ``D * b``, ``tanh_backward(D, y)``, ``sigmoid_backward(D, y)`` (ops linear in the diagonal
  argument) with ``b``/``y`` a vector along either axis (or a scalar) are ``diag(w)``, ``w`` the
  same op on the diagonal values (``1.0 * h == h`` exactly, so ``w`` has the eager diagonal's
  bits);
- ``D @ M`` and ``M @ D`` are row and column scalings (``eye @ M`` is ``M``), laid out as the
  trace's product unless only elementwise arithmetic reads the product (then as ``M`` is);
- ``D + M`` is ``M`` with ``w`` added to its diagonal (``M[j, j] + w[j]``, the eager sum);
- ``permute(D, (1, 0))`` is ``D``; ``x * 1`` (a ones constant or the literal 1) is ``x``.

Exactness. A diagonal matrix's off-diagonal entries are ``0 * h`` in the eager program: zero
only while ``h`` is finite. A dense product ``D @ M`` adds ``0 * M[k, j]`` terms to
``w[i] * M[i, j]``: exact zeros (so the product is that one rounding, as the scaling computes
it) only while ``M`` is finite. Each rewrite that needs such a condition emits an ``assume``
instruction: when it fails at replay time (a NaN or inf came in), the replay runs the
unsimplified program instead, so non-finite values spread exactly as eagerly. The only
difference left is the sign of a zero: ``-0.0`` where the eager sum ``-0.0 + 0.0`` gave
``0.0`` (equal values). The pass does not run on programs that write in place or draw random
numbers (it relies on slots never changing, and the fallback runs the whole program again).
"""

from __future__ import annotations

import operator

import numpy as np

from .program import Instr, Program

# ops linear in their first argument, ``t * h(y)``: the diagonal of ``op(D, y)`` is ``op`` on
# the diagonal values (see the module docstring); ``mul`` is linear in either argument
_LINEAR_FIRST = frozenset(("tanh_backward", "sigmoid_backward"))

# ops whose values do not depend on how their arguments are laid out in memory (elementwise
# NumPy/CuPy arithmetic) and whose outputs' layout follows the arguments': a slot read only by
# these (and by views, guards and the outputs, transitively) may hold its values in another
# layout than the trace's; see ``_Rewriter.layout_free``
_ELEMENTWISE = frozenset(("add", "sub", "mul", "div", "neg", "where", *_LINEAR_FIRST))
# ops whose result is always a new array (never an argument or a view of one)
_NEW_ARRAY = frozenset(("matmul", *_ELEMENTWISE))


class _Helper:
    """A pseudo-op of the simplified program: what ``codegen`` reads of an ``OpDef``."""

    __slots__ = ("impl", "inline", "kernel", "name", "view")

    def __init__(self, name: str, impl, kernel=None) -> None:
        self.name = name
        self.impl = impl
        self.kernel = kernel
        self.view = False
        self.inline = None


def _flat(xp, v):
    # a vector along either axis ((n,), (1, n), (n, 1)) as (n,): a view
    return v.reshape(-1)


def _scale(xp, v, m, rows, order):
    # ``diag(v) @ m`` (rows) or ``m @ diag(v)``, into an array laid out as the traced product
    out = xp.empty_like(m, order=order)
    if rows and m.ndim == 2 and getattr(v, "ndim", 0):
        v = v.reshape(-1, 1)
    return xp.multiply(v, m, out=out)


def _add_diagonal(xp, m, v, order):
    out = xp.array(m, copy=True, order=order)
    index = xp.arange(out.shape[0])
    out[index, index] += v
    return out


def _add_diagonal_inplace(xp, m, v):
    # (``m`` is a temporary of the program read by this instruction only)
    index = xp.arange(m.shape[0])
    m[index, index] += v
    return m


FLAT = _Helper("flat", _flat)
MUL = _Helper("mul", lambda xp, a, b: a * b, kernel=operator.mul)
SCALE = _Helper("scale", _scale)
ADD_DIAGONAL = _Helper("add_diagonal", _add_diagonal)
ADD_DIAGONAL_INPLACE = _Helper("add_diagonal_inplace", _add_diagonal_inplace)
ONE = ("l", 1.0)


def _layout(meta) -> str | None:
    """'C' or 'F' for a contiguous array's metadata, else None."""
    shape, dtype, strides = meta[0], meta[1], meta[2]
    c = np.empty(shape, dtype=dtype, order="C").strides
    if strides == c:
        return "C"
    if strides == np.empty(shape, dtype=dtype, order="F").strides:
        return "F"
    return None


def _is_identity(c) -> bool:
    return (
        type(c) is np.ndarray
        and c.ndim == 2
        and c.shape[0] == c.shape[1]
        and c.dtype.kind in "fc"
        and bool(np.array_equal(c, np.eye(c.shape[0], dtype=c.dtype)))
    )


def _is_ones(c) -> bool:
    return type(c) is np.ndarray and c.dtype.kind in "fc" and bool((c == 1).all())


class _Rewriter:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.new: list = []
        self.diag: dict = {}  # slot -> (n, reference to the diagonal values)
        self.alias: dict = {}  # slot -> reference it equals
        self.returned = {r[1] for r in program.outputs if r[0] == "s"}
        self.uses: dict = {}
        self.fresh_made: set = set()  # slots of ops that always make a new array
        self.readers: dict = {}  # slot -> the instructions reading it
        for instr in program.instrs:
            for r in instr.args:
                if r[0] == "s":
                    self.uses[r[1]] = self.uses.get(r[1], 0) + 1
                    self.readers.setdefault(r[1], []).append(instr)
            if instr.kind == "op" and instr.op.name in _NEW_ARRAY and not instr.extra[1]:
                self.fresh_made.add(instr.outs[0])
        roots: dict = {}  # the memory of the slots the program still has -> how many
        slots = [*range(program.n_inputs), *(s for i in program.instrs for s in i.outs)]
        for slot in slots:
            root = program.meta[slot][4]
            roots[root] = roots.get(root, 0) + 1
        self.roots = roots
        self.identities = {i: c.shape[0] for i, c in enumerate(program.consts) if _is_identity(c)}
        self.fresh: set = set()  # slots made by this pass's helpers (unaliased arrays)

    # -- facts
    def meta_of(self, ref):
        """(shape, dtype) of a reference, or None for a literal that is not a number."""
        if ref[0] == "s":
            meta = self.program.meta[ref[1]]
            return meta[0], meta[1]
        if ref[0] == "c":
            c = self.program.consts[ref[1]]
            return (c.shape, c.dtype) if type(c) is np.ndarray else None
        value = ref[1]
        if type(value) in (int, float) and np.isfinite(value):
            return (), None
        return None

    def diagonal(self, ref):
        if ref[0] == "s":
            return self.diag.get(ref[1])
        if ref[0] == "c" and ref[1] in self.identities:
            return self.identities[ref[1]], ONE
        return None

    # -- emitting
    def emit(self, op, args, meta, params=None) -> tuple:
        slot = self.program.new_slot(meta)
        scalar = len(meta[0]) == 0
        self.new.append(Instr("op", op, params or {}, tuple(args), (slot,), ((scalar,), False)))
        return ("s", slot)

    def assume_finite(self, ref) -> None:
        if ref[0] != "l":
            self.new.append(Instr("assume", None, None, (ref,), ()))

    def vector(self, ref, n, dtype):
        """``ref`` as diagonal values (a scalar or an (n,) array), or None if it is not a
        vector along one axis of an (n, n) matrix with ``dtype``."""
        meta = self.meta_of(ref)
        if meta is None:
            return None
        shape, kind = meta
        if kind is not None and kind != dtype:
            return None
        if shape in ((), (1,), (1, 1)) and ref[0] == "l":
            return ref
        if shape not in ((), (n,), (1, n), (n, 1), (1,), (1, 1)):
            return None
        if len(shape) == 0:
            return ref
        return self.emit(FLAT, (ref,), ((max(shape),), dtype, None, None, None))

    def times(self, v, h, n, dtype):
        if v == ONE:
            return h  # (1.0 * h == h)
        shape = (n,) if any(len(self.meta_of(r)[0]) for r in (v, h)) else ()
        return self.emit(MUL, (v, h), (shape, dtype, None, None, None))

    # -- rules
    def rewrite(self, instr) -> bool:
        """Rewrite one instruction (True) or keep it (False)."""
        if instr.kind != "op" or instr.extra[1]:
            return False
        if len(instr.args) != 2 and instr.op.name != "permute":
            return False
        name = instr.op.name
        out = instr.outs[0]
        shape, dtype = self.program.meta[out][:2]
        if name == "permute":
            found = self.diagonal(instr.args[0]) if instr.args else None
            if found is not None and tuple(instr.params.get("dims", ())) == (1, 0):
                self.diag[out] = found
            return False
        a, b = instr.args
        if instr.params:
            return False
        da, db = self.diagonal(a), self.diagonal(b)
        if name == "mul" and (da is None) != (db is None):
            (n, v), other = (da, b) if da is not None else (db, a)
            if shape == (n, n) and self.same_dtype(a, b, dtype):
                h = self.vector(other, n, dtype)
                if h is not None:
                    self.assume_finite(h)
                    self.diag[out] = n, self.times(v, h, n, dtype)
            return False
        if name == "mul" and da is None and db is None:
            for x, one in ((a, b), (b, a)):
                if (
                    self.is_one(one)
                    and x[0] == "s"
                    and self.fresh_readers(out)
                    and self.program.meta[x[1]][:3] == self.program.meta[out][:3]
                ):
                    self.alias[out] = x
                    # (the readers of ``out`` read ``x`` now; the product no longer does)
                    self.uses[x[1]] = self.uses.get(x[1], 0) - 1 + self.uses.get(out, 0)
                    return True
            return False
        if name in _LINEAR_FIRST and da is not None and db is None:
            n, v = da
            if shape == (n, n) and self.same_dtype(a, b, dtype):
                y = self.vector(b, n, dtype)
                if y is not None:
                    meta = ((n,) if len(self.meta_of(y)[0]) else (), dtype, None, None, None)
                    h = self.emit(instr.op, (ONE, y), meta)
                    self.assume_finite(h)
                    self.diag[out] = n, self.times(v, h, n, dtype)
            return False
        layout = _layout(self.program.meta[out])
        if name == "matmul" and (da is None) != (db is None):
            (n, v), m = (da, b) if da is not None else (db, a)
            mmeta = self.meta_of(m)
            if mmeta is None or mmeta[1] != dtype or mmeta[0] != shape:
                return False
            if len(shape) == 1 or (len(shape) == 2 and shape[0 if da is not None else 1] == n):
                free = self.layout_free(out)
                if free and v == ONE and m[0] == "s" and self.fresh_readers(out):
                    # ``eye @ M`` is ``M`` (under the assumption): read M itself, as laid out
                    self.assume_finite(m)
                    self.alias[out] = m
                    self.uses[m[1]] = self.uses.get(m[1], 0) - 1 + self.uses.get(out, 0)
                    return True
                if free:
                    layout = "K"  # (the layout of M: no transposing copy)
                if layout is None:
                    return False
                self.assume_finite(m)
                self.replace(instr, SCALE, (v, m), {"rows": da is not None, "order": layout})
                return True
            return False
        if layout is None:
            return False
        if name == "add" and (da is None) != (db is None):
            (n, v), m = (da, b) if da is not None else (db, a)
            mmeta = self.meta_of(m)
            if mmeta is None or mmeta != ((n, n), dtype) or shape != (n, n):
                return False
            if self.temporary(m):
                self.replace(instr, ADD_DIAGONAL_INPLACE, (m, v), {})
            else:
                self.replace(instr, ADD_DIAGONAL, (m, v), {"order": layout})
            return True
        return False

    def layout_free(self, slot, depth: int = 0) -> bool:
        """Whether ``slot``'s values may come in another memory layout than the trace's: every
        reader is elementwise arithmetic, a view or a guard, and so are their results' readers
        (an output returned that way has other strides than eagerly, the same values)."""
        if depth > 32:
            return False
        for reader in self.readers.get(slot, ()):
            if reader.kind == "guard":
                continue
            if reader.kind != "op" or reader.extra[1]:
                return False
            if reader.op.name not in _ELEMENTWISE and not reader.op.view:
                return False
            if not all(self.layout_free(o, depth + 1) for o in reader.outs):
                return False
        return True

    def fresh_readers(self, slot) -> bool:
        """Whether ``slot`` is not returned and only read by guards and by ops that make new
        arrays (not views, and whose results in the trace did not share its memory): then it
        may be another slot's array itself (an input's too), as no view or output can reach
        that array through it."""
        if slot in self.returned:
            return False
        meta = self.program.meta
        root = meta[slot][4]
        return all(
            r.kind == "guard"
            or (
                r.kind == "op"
                and not r.op.view
                and not r.extra[1]
                and (r.op.name in _NEW_ARRAY or meta[r.outs[0]][4] != root)
            )
            for r in self.readers.get(slot, ())
        )

    def same_dtype(self, a, b, dtype) -> bool:
        for r in (a, b):
            meta = self.meta_of(r)
            if meta is None or (meta[1] is not None and meta[1] != dtype):
                return False
        return True

    def is_one(self, ref) -> bool:
        if ref[0] == "l":
            return type(ref[1]) in (int, float) and ref[1] == 1
        return ref[0] == "c" and _is_ones(self.program.consts[ref[1]])

    def temporary(self, ref) -> bool:
        """Whether ``ref`` is an array this program made, read once, not returned, sharing its
        memory with no other slot (so an instruction may write into it)."""
        if ref[0] != "s" or ref[1] < self.program.n_inputs or ref[1] in self.returned:
            return False
        if self.uses.get(ref[1]) != 1:
            return False
        if ref[1] in self.fresh or ref[1] in self.fresh_made:
            return True
        meta = self.program.meta[ref[1]]
        return meta[3] == meta[4] and self.roots.get(meta[4]) == 1

    def replace(self, instr, helper, args, params) -> None:
        self.new.append(Instr("op", helper, params, args, instr.outs, instr.extra))
        self.fresh.add(instr.outs[0])


def simplify(program: Program) -> bool:
    """Rewrite ``program`` in place (see the module docstring); whether anything changed.
    Dead instructions are left for ``eliminate_dead``."""
    if program.written or any(i.kind in ("random",) for i in program.instrs):
        return False
    rewriter = _Rewriter(program)
    if not rewriter.identities and not any(
        type(c) is np.ndarray and _is_ones(c) for c in program.consts
    ):
        return False
    changed = False
    for instr in program.instrs:
        instr = Instr(instr.kind, instr.op, instr.params, instr.args, instr.outs, instr.extra)
        instr.args = tuple(_follow(rewriter.alias, r) for r in instr.args)
        if rewriter.rewrite(instr):
            changed = True
        else:
            rewriter.new.append(instr)
    program.instrs = rewriter.new
    program.outputs = [_follow(rewriter.alias, r) for r in program.outputs]
    return changed


def _follow(alias: dict, ref):
    while ref[0] == "s" and ref[1] in alias:
        ref = alias[ref[1]]
    return ref


__all__ = ["simplify"]
