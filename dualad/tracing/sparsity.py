"""Sparsity detection for ``dualad.func.sparse_jacobian``/``sparse_hessian``: one traced
evaluation, then boolean dependency patterns propagated through the recorded program (DESIGN.md
10). ``dualad.tracing`` installs ``detect`` into ``dualad.func._sparse`` (func's facades may not
import the trace level's package, which imports them).

The function runs once under ``dualad.jit``'s trace level (``tracing.tracer``), which records
every op of the call. Each slot of the program then gets a pattern: a ``scipy.sparse`` CSR
boolean matrix whose rows are the slot's flat elements and whose columns are the flat inputs,
True where the element may depend on the input. Inputs start as identity blocks; every op's
output pattern comes from its arguments' by the op's rule (``OpDef.sparsity``):

- "elementwise": output element ``i`` depends on what the (broadcast) argument elements at
  ``i`` depend on;
- "gather" (views, slicing, joining, padding, flips ...): the op's impl runs on arrays of
  element ids, which says which argument element each output element copies (0: none). The
  ids run a second time through a random relabelling: an op that does not merely move
  elements (the output is not the relabelled ids) falls back to the dense rule;
- "reduce": output element ``j`` depends on the elements reduced into it (``params["dims"]``);
- "zero" (piecewise constant) and ops that are not differentiable, or outputs that are not
  floating: no dependency;
- "dense", no rule, or anything a rule cannot read (an index computed from the inputs: the
  pattern would depend on the values): every output element depends on every input any
  argument element depends on. This is the conservative default, so a missed nonzero would
  need a wrong rule, never a missing one.

Second order (``hessian=True``): the Hessian of a scalar ``f`` is a sum, over the nonlinear
ops, of the op's second derivative mapped through its arguments' first derivatives, so its
pattern lies in the union over nonlinear ops and output elements ``i`` of ``D_i x D_i`` with
``D_i`` the inputs output element ``i`` depends on (the nonlinear interaction domains of
Walther, 2008). Affine ops (add, slicing, sum) add nothing; a bilinear op (mul) adds its
element only where both arguments vary. This is chosen over tracing ``grad(f)`` and taking
that program's Jacobian pattern: the traced gradient holds the VJPs' scatters and in-place
writes, whose patterns this module could only bound conservatively (to dense rows), while the
interaction domains stay as sparse as the Hessian itself.

An in-place write merges the source's dependencies into every element of the target and of
every slot sharing its memory (conservative). A trace that reads values into Python (a guard:
``if x.sum() > 0``) is valid while its guards hold: ``Detection.replay`` re-checks them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._backend import xp_of
from .._state import pop_level, push_level
from .._tensor import Tensor, wrap
from ..ops._batching import elementwise as _elementwise_batch
from ..ops.base import _reduction_batch
from . import sparsity_rules as rules
from .codegen import RETRACE, compile_program
from .program import Instr
from .tracer import TraceLevel, TraceTensor

# the most entries a dense rule may create before detection gives up (pass a pattern instead)
DENSE_LIMIT = 50_000_000

_NONLINEAR_DENSE = ("dense", "nonlinear")


class Detection:
    """The result of one detection: the pattern ``(m, n)`` (``hessian``: the ``(n, n)``
    Hessian pattern too), the output's shape, and ``replay(*arrays)``: whether a later call's
    inputs keep the trace's guards (None when the trace had none)."""

    __slots__ = ("hessian", "out_shape", "pattern", "replay", "written")

    def __init__(self, pattern, hessian, out_shape, replay, written=False) -> None:
        self.pattern = pattern
        self.hessian = hessian
        self.out_shape = out_shape
        self.replay = replay
        self.written = written  # whether the program writes into its inputs

    def holds(self, arrays) -> bool:
        """Whether the guards of the trace hold for these input arrays (a replay that raises
        does not hold: detecting again gives the function's own error, or a new pattern)."""
        if self.replay is None:
            return True
        if self.written:  # (the caller's arrays are never written)
            arrays = [a.copy() for a in arrays]
        try:
            return self.replay(*arrays) is not RETRACE
        except Exception:
            return False


def detect(
    fn, tensors: list, title: str, hessian: bool = False, trust_values: bool = True
) -> Detection:
    """Trace ``fn(*tensors)`` once and propagate dependency patterns through what it did.
    ``trust_values``: indices computed from the inputs give the exact pattern of their traced
    values, guarded (else the rules that hold for any values: see the module docstring)."""
    level = TraceLevel(len(tensors))
    inputs = [level.input(wrap(_copy(t._data)), i) for i, t in enumerate(tensors)]
    push_level(level)
    try:
        out = fn(*inputs)
    finally:
        pop_level(level)
        level.alive = False
    if level.eager_only is not None:
        raise RuntimeError(
            f"dualad.func.{title}: the function could not be traced for sparsity detection "
            f"({level.eager_only}); pass the pattern as sparsity="
        )
    if not isinstance(out, Tensor):
        array = isinstance(out, np.ndarray) or type(out).__module__.startswith("cupy")
        raise TypeError(
            f"dualad.func.{title}: the function must return one tensor, got "
            f"{type(out).__name__}" + (" (a NumPy array is a constant: no derivative)" * array)
        )
    program = level.program
    sizes = [int(t._data.size) for t in tensors]
    xp = xp_of(tensors[0]._data)
    values = {}
    if trust_values and not any(instr.kind == "random" for instr in program.instrs):
        values = _traced_values(program, [t._data for t in tensors], xp)
    propagation = _Propagation(program, sizes, hessian, title, values)
    propagation.run()
    for slot in sorted(propagation.guarded):  # (the indices the pattern was read from)
        guard = Instr("guard", None, None, (("s", slot),), (), ("array", values[slot]))
        program.instrs.append(guard)
    if type(out) is TraceTensor and out._level is level:
        pattern = propagation.pats[out._slot]
        program.outputs = [("s", out._slot)]
    else:  # a constant output: nothing depends on the inputs
        pattern = sp.csr_matrix((int(out._data.size), sum(sizes)), dtype=bool)
        program.outputs = [program.const(out._data)]
    second = propagation.hessian() if hessian else None
    replay = None
    if any(instr.kind == "guard" for instr in program.instrs):
        replay = compile_program(program, xp)[0]
    written = bool(program.written_inputs())
    return Detection(_canonical(pattern), second, tuple(out.shape), replay, written)


def _copy(data):
    return data.copy()


def _index_slots(program) -> list:
    """The integer slots whose values a rule reads: the index arguments of moving ops and the
    index outputs of selections."""
    slots = []
    for instr in program.instrs:
        if instr.kind != "op":
            continue
        family = _rule_of(instr.op)[0]
        if family == "gather":
            for kind, slot in instr.args:
                if kind == "s" and program.meta[slot][1].kind in "biu":
                    slots.append(slot)
        elif family == "select" and len(instr.outs) == 2 and instr.outs[1] >= 0:
            slots.append(instr.outs[1])
    return slots


def _traced_values(program, arrays: list, xp) -> dict:
    """``{slot: value}`` of the index slots, from one replay of the recorded program (on
    copies: it may write into its inputs)."""
    slots = list(dict.fromkeys(_index_slots(program)))
    if not slots:
        return {}
    probe = program.copy()
    probe.outputs = [("s", s) for s in slots]
    try:
        result = compile_program(probe, xp)[0](*[a.copy() for a in arrays])
    except Exception:  # (then the rules that hold for any values)
        return {}
    if result is RETRACE:
        return {}
    return {s: np.asarray(_host(v)) for s, v in zip(slots, result)}


def _host(value):
    """A NumPy view of a constant (CuPy arrays copied to the host)."""
    if hasattr(value, "get") and not isinstance(value, np.ndarray):
        return value.get()
    return value


def _canonical(pattern):
    pattern = sp.csr_matrix(pattern, dtype=bool)
    pattern.sum_duplicates()
    pattern.eliminate_zeros()
    pattern.sort_indices()
    return pattern


def _empty(rows: int, n: int):
    return sp.csr_matrix((rows, n), dtype=bool)


def _rule_of(op) -> tuple:
    if op.sparsity is not None:
        return op.sparsity
    if op.batch is _elementwise_batch:  # the elementwise family (its batching rule says so)
        return ("elementwise", "nonlinear")
    if op.batch is _reduction_batch:  # reductions over params["dims"]
        return ("reduce", "nonlinear")
    return _NONLINEAR_DENSE


class _Propagation:
    """Patterns per slot of ``program`` (see the module docstring)."""

    def __init__(self, program, sizes: list, hessian: bool, title: str, values=None) -> None:
        self.program = program
        self.values = values or {}  # traced values of index slots (``_traced_values``)
        self.guarded: set = set()  # slots whose values the patterns were read from
        self.n = n = sum(sizes)
        self.title = title
        self.second = hessian
        self.interactions: list = []  # rows D_i whose squares make the Hessian pattern
        self.pats: dict = {}
        offset = 0
        for slot, size in enumerate(sizes):
            rows = np.arange(size)
            self.pats[slot] = sp.csr_matrix(
                (np.ones(size, dtype=bool), (rows, rows + offset)), shape=(size, n)
            )
            offset += size

    # -------------------------------------------------------------- arguments
    def _arg(self, ref):
        """``(pattern or None, shape, array or None)`` of an argument reference: traced slots
        have patterns, constants and literals have values and empty patterns."""
        kind, value = ref
        if kind == "s":
            shape = self.program.meta[value][0]
            pattern = self.pats.get(value)
            if pattern is None:  # (a slot no rule wrote: depends on everything, conservatively)
                pattern = self.pats[value] = self._everything(_numel(shape))
            return pattern, shape, None
        if kind == "c":
            array = _host(self.program.consts[value])
            shape = getattr(array, "shape", None)
            return None, shape, array
        return None, None, value

    def run(self) -> None:
        for instr in self.program.instrs:
            if instr.kind == "op":
                self._op(instr)
            elif instr.kind == "random":
                self._set_empty(instr.outs[0])
            elif instr.kind == "write":
                self._write(instr)

    def _set_empty(self, slot: int) -> None:
        self.pats[slot] = _empty(_numel(self.program.meta[slot][0]), self.n)

    # -------------------------------------------------------------- ops
    def _op(self, instr) -> None:
        op = instr.op
        args = [self._arg(r) for r in instr.args]
        outs = [s for s in instr.outs if s >= 0]
        varying = [a for a in args if a[0] is not None and a[0].nnz]
        if not varying or not op.differentiable:
            for s in outs:
                self._set_empty(s)
            return
        family, curvature = _rule_of(op)
        results = None
        if family == "elementwise" and len(outs) == 1:
            results = [self._elementwise(args, outs[0], curvature)]
            curvature = "affine"  # (its interactions are recorded row by row above)
        elif family == "gather":
            results = self._gather(op, instr, args, outs)
        elif family == "reduce" and len(outs) == 1 and len(varying) == 1:
            results = self._reduce(instr, args, outs[0])
        elif family in _PRODUCTS and len(outs) == 1:
            results = self._product(family, instr, args, outs[0])
            if results is not None and self.second and len(varying) >= 2:
                self.interactions.append(results[0])  # (two factors vary: curved)
            curvature = "affine"
        elif family in ("scan", "lines", "select") and len(varying) == 1 and len(args) == 1:
            results = self._along(family, instr, args[0], outs)
        elif family == "zero":
            results = [_empty(self._numel(s), self.n) for s in outs]
        if results is None:
            results = [self._dense(op, varying, self._numel(s)) for s in outs]
            if family != "dense":
                curvature = "nonlinear"
        for s, pattern in zip(outs, results):
            meta = self.program.meta[s]
            if meta[1].kind not in "fc":  # integer and boolean results carry no derivative
                pattern = _empty(pattern.shape[0], self.n)
            self.pats[s] = pattern
            if curvature != "affine" and self.second:
                self.interactions.append(pattern)

    def _numel(self, slot: int) -> int:
        return _numel(self.program.meta[slot][0])

    def _elementwise(self, args, out: int, curvature: str):
        shape = self.program.meta[out][0]
        total = None
        varying_rows = []  # the varying arguments' patterns, broadcast to the output
        positions = []
        for position, (pattern, arg_shape, _) in enumerate(args):
            if pattern is None or not pattern.nnz:
                continue
            index = _broadcast_index(arg_shape, shape)
            rows = pattern if index is None else pattern[index]
            varying_rows.append(rows)
            positions.append(position)
            total = rows if total is None else total + rows
        if self.second and curvature != "affine":
            if curvature == "bilinear":
                # a product adds second derivatives only where both factors vary
                counts = sum((m.getnnz(axis=1) > 0).astype(np.int8) for m in varying_rows)
                mask = counts >= 2
            elif curvature == "linear_in_first":  # a / b: only where b varies
                mask = np.zeros(total.shape[0], dtype=bool)
                for position, rows in zip(positions, varying_rows):
                    if position > 0:
                        mask |= rows.getnnz(axis=1) > 0
            else:
                mask = total.getnnz(axis=1) > 0
            if mask.any():
                self.interactions.append(total[np.flatnonzero(mask)])
        return total

    def _dense(self, op, varying, rows: int):
        """Every one of ``rows`` output elements depending on every input that a varying
        argument depends on (the conservative rule)."""
        columns = np.zeros(self.n, dtype=bool)
        for pattern, _, _ in varying:
            columns[pattern.indices] = True
        cols = np.flatnonzero(columns)
        if rows * cols.size > DENSE_LIMIT:
            raise ValueError(
                f"dualad.func.{self.title}: {_describe(op)} has the dense sparsity rule: each "
                f"of its {rows} output elements may depend on all {cols.size} inputs its "
                "arguments depend on: too many to detect; pass the pattern as sparsity="
            )
        indptr = np.arange(rows + 1, dtype=np.int64) * cols.size
        return sp.csr_matrix(
            (np.ones(rows * cols.size, dtype=bool), np.tile(cols, rows), indptr),
            shape=(rows, self.n),
        )

    def _reduce(self, instr, args, out: int):
        params = instr.params or {}
        dims, keepdim = params.get("dims"), params.get("keepdim")
        pattern, shape, _ = args[0]
        if dims is None or keepdim is None or pattern is None or shape is None:
            return None
        kept = tuple(1 if d in dims else s for d, s in enumerate(shape))
        count = _numel(kept)
        if count != self._numel(out):
            return None
        labels = np.broadcast_to(np.arange(count).reshape(kept), shape).ravel()
        k = labels.size
        groups = sp.csr_matrix((np.ones(k, dtype=bool), (labels, np.arange(k))), shape=(count, k))
        return [_canonical(groups @ pattern)]

    def _matmul(self, args, out: int):
        """``a @ b`` of matrices or vectors: output ``(i, j)`` depends on ``a[i, k]`` and
        ``b[k, j]`` for every ``k`` where the other factor is not a constant zero (a varying
        factor counts as nonzero everywhere). Stacks of matrices: ``rules.matmul``."""
        (pa, sa, va), (pb, sb, vb) = args
        if sa is None or sb is None:
            return None
        if not (1 <= len(sa) <= 2 and 1 <= len(sb) <= 2):
            found = rules.matmul(
                sa, sb, self.program.meta[out][0], _mask(va, sa, pa), _mask(vb, sb, pb)
            )
            return None if found is None else [self._combine(found, (pa, pb))]
        m, inner = (1, sa[0]) if len(sa) == 1 else sa
        inner_b, p = (sb[0], 1) if len(sb) == 1 else sb
        if inner != inner_b or self._numel(out) != m * p:
            return None
        mask_a = _nonzeros(va, (m, inner), pa)
        mask_b = _nonzeros(vb, (inner, p), pb)
        total = _empty(m * p, self.n)
        if pa is not None and pa.nnz:  # (i, j) reads a[i, k] where b[k, j] != 0
            total = total + sp.kron(sp.identity(m, dtype=bool, format="csr"), mask_b.T) @ pa
        if pb is not None and pb.nnz:  # (i, j) reads b[k, j] where a[i, k] != 0
            total = total + sp.kron(mask_a, sp.identity(p, dtype=bool, format="csr")) @ pb
        return [_canonical(total)]

    def _product(self, family: str, instr, args, out: int):
        """The product families (``rules``): one selection per argument, combined."""
        if family == "matmul":
            return self._matmul(args, out) if len(args) == 2 else None
        shapes = [a[1] for a in args]
        if any(shape is None for shape in shapes):
            return None
        out_shape = self.program.meta[out][0]
        params = instr.params or {}
        if family == "einsum":
            found = rules.einsum(params.get("equation", ""), shapes, out_shape)
        elif family == "conv" and len(args) == 2:
            found = rules.conv(params, shapes[0], shapes[1], out_shape)
        elif family == "conv_transpose" and len(args) == 2:
            found = rules.conv_transpose(params, shapes[0], shapes[1], out_shape)
        elif family == "convolve" and len(args) == 2:
            found = rules.convolve(shapes[0], shapes[1], out_shape)
        else:
            return None
        return None if found is None else [self._combine(found, [a[0] for a in args])]

    def _combine(self, selections, patterns):
        total = None
        for selection, pattern in zip(selections, patterns):
            if pattern is not None and pattern.nnz:
                part = selection @ pattern
                total = part if total is None else total + part
        return _canonical(total)

    def _along(self, family: str, instr, arg, outs):
        """Scans, whole lines and selections along axes (``rules``)."""
        pattern, shape, _ = arg
        params = instr.params or {}
        out_shape = self.program.meta[outs[0]][0]
        if shape is None:
            return None
        if family == "scan":
            found = rules.scan(params, shape, pattern) if out_shape == tuple(shape) else None
            return None if found is None else [found]
        if family == "select":
            index = self.values.get(outs[1]) if len(outs) == 2 else None
            selection = None
            if index is not None:
                selection = rules.select(params, shape, out_shape, index)
            if selection is not None:
                self.guarded.add(outs[1])
                first = _canonical(selection @ pattern)
            else:  # any values: the whole line along dim
                first = rules.lines(params, shape, out_shape, pattern)
            if first is None:
                return None
            return [first, *(_empty(self._numel(s), self.n) for s in outs[1:])]
        found = [rules.lines(params, shape, self.program.meta[s][0], pattern) for s in outs]
        return None if any(f is None for f in found) else found

    def _gather(self, op, instr, args, outs):
        """Run the impl on element ids (see the module docstring); None: use the dense rule."""
        blocks = [_empty(1, self.n)]  # id 0: no element
        first = []
        id_args = []  # positions of the arguments replaced by ids
        guarded = []  # the traced indices read (guarded when the rule succeeds)
        start = 1
        for (pattern, shape, value), ref in zip(args, instr.args):
            dtype = None
            if ref[0] == "s":
                dtype = self.program.meta[ref[1]][1]
            elif ref[0] == "c" and hasattr(value, "dtype"):
                dtype = value.dtype
            if dtype is None or dtype.kind in "biu":
                if ref[0] == "s":  # an index computed from the inputs: its traced value
                    value = self.values.get(ref[1])
                    if value is None:
                        return None  # (not trusted: the dense rule holds for any value)
                    guarded.append(ref[1])
                first.append(value)  # (a literal, a constant index, a traced index)
                continue
            size = _numel(shape)
            id_args.append(len(first))
            first.append(np.arange(start, start + size, dtype=np.float64).reshape(shape))
            blocks.append(pattern if pattern is not None else _empty(size, self.n))
            start += size
        relabel = np.concatenate(([0.0], np.random.default_rng(0).permutation(start - 1) + 1.0))
        second = list(first)
        for i in id_args:
            second[i] = relabel[first[i].astype(np.int64)]
        try:
            out1 = self._run(op, first, instr.params)
            out2 = self._run(op, second, instr.params)
        except Exception:  # an impl that needs other dtypes: the dense rule
            return None
        if len(out1) != len(outs) or len(out2) != len(outs):
            return None
        source = sp.vstack(blocks, format="csr")
        results = []
        for a, b in zip(out1, out2):
            a = np.asarray(a)
            if a.dtype.kind != "f" or not np.all((a >= 0) & (a < start) & (a == np.floor(a))):
                return None
            index = a.astype(np.int64).ravel()
            if not np.array_equal(relabel[index], np.asarray(b).ravel()):
                return None  # not a copy of elements (a sum, a scaling, a scan ...)
            results.append(source[index])
        self.guarded.update(guarded)
        return results

    @staticmethod
    def _run(op, arrays, params) -> tuple:
        out = op.impl(np, *arrays, **(params or {}))
        return out if isinstance(out, tuple) else (out,)

    def _write(self, instr) -> None:
        target = instr.args[0][1]
        source = self._arg(instr.args[1])[0]
        if source is None or not source.nnz:
            return
        columns = np.unique(source.indices)
        root = self.program.meta[target][4]
        for slot, meta in self.program.meta.items():
            if slot in self.pats and meta[4] == root:
                rows = self._numel(slot)
                merged = self._dense(_WRITE, [(_from_columns(columns, self.n), None, None)], rows)
                self.pats[slot] = _canonical(self.pats[slot] + merged)

    def _everything(self, rows: int):
        everything = [(_from_columns(np.arange(self.n), self.n), None, None)]
        return self._dense(_UNRECORDED, everything, rows)

    def hessian(self):
        """The conservative Hessian pattern ``(n, n)`` (see the module docstring)."""
        if not self.interactions:
            return _empty(self.n, self.n)
        rows = sp.vstack(self.interactions, format="csr").astype(np.float32)
        return _canonical((rows.T @ rows).tocsr())


class _Named:
    """What a dense rule's error names when no op is to blame."""

    def __init__(self, name: str) -> None:
        self.name = name


_WRITE = _Named("an in-place write")
_UNRECORDED = _Named("a value without a recorded op")


def _describe(op) -> str:
    return op.name if isinstance(op, _Named) else f"op '{op.name}'"


def _from_columns(columns, n: int):
    return sp.csr_matrix(
        (np.ones(columns.size, dtype=bool), columns, np.array([0, columns.size])), shape=(1, n)
    )


_PRODUCTS = ("matmul", "einsum", "conv", "conv_transpose", "convolve")


def _mask(value, shape, pattern):
    """Where a factor may be nonzero, as a boolean array of its shape (``_nonzeros``)."""
    if pattern is None and isinstance(value, np.ndarray) and value.shape == tuple(shape):
        return value != 0
    return np.ones(tuple(shape), dtype=bool)


def _nonzeros(value, shape: tuple, pattern):
    """Where a factor of a product may be nonzero, as a boolean CSR matrix of ``shape``: a
    constant's nonzeros, everywhere for a traced value (it may change) and for literals."""
    if pattern is None and isinstance(value, np.ndarray) and value.size == shape[0] * shape[1]:
        return sp.csr_matrix(value.reshape(shape) != 0)
    return sp.csr_matrix(np.ones(shape, dtype=bool))


def _numel(shape) -> int:
    count = 1
    for s in shape:
        count *= int(s)
    return count


def _broadcast_index(shape, out_shape):
    """For each element of ``out_shape``, the flat index of the element of ``shape`` that
    broadcasting reads (None: the same shape, the identity)."""
    if shape is None:
        return None
    shape = tuple(shape)
    if shape == tuple(out_shape):
        return None
    ids = np.arange(_numel(shape)).reshape(shape)
    return np.broadcast_to(ids, out_shape).ravel()


__all__ = ["DENSE_LIMIT", "Detection", "detect"]
