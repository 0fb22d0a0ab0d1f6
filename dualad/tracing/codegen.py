"""Code generation: a ``Program`` as the source of one straight-line Python function.

The generated function takes the input arrays (``s0, s1, ...``) and returns the tuple of output
arrays, or ``RETRACE`` when a guard fails. Each op is one call of its impl (``k3(s0, s1)`` for
an op with a kernel and no parameters, ``u3(s0)`` for an impl that is one ufunc call,
``f3(xp, s0, axis=p3_axis)`` otherwise); constants,
impls and parameters are globals of the function (read by name, never rebuilt). No Tensor,
dispatch or level code runs. ``compile_program`` returns the function and its source.

>>> import numpy as np, dualad
>>> f = dualad.jit(lambda x: dualad.sin(x) * 2.0)
>>> print(f.source(dualad.tensor([1.0, 2.0])))
def replay(s0):
    s1 = u0(s0)  # sin
    s2 = k1(s1, 2.0)  # mul
    return (s2,)
"""

from __future__ import annotations

import dis
import keyword

import numpy as np

from .buffers import plan
from .program import Program

RETRACE = object()  # what a replay returns when a guard fails


def _literal(value) -> str | None:
    """Source for a Python literal that reads back as the same value and type, else None."""
    if value is None or type(value) in (bool, int, str):
        return repr(value)
    if type(value) is float and np.isfinite(value) and float(repr(value)) == value:
        return repr(value)
    return None


def _same(value, expected) -> bool:
    """Whether a guard's value on replay equals the traced one (NaN equals NaN)."""
    if type(expected) is np.ndarray:
        return (
            type(value) is np.ndarray
            and value.shape == expected.shape
            and value.dtype == expected.dtype
            and bool(np.array_equal(value, expected, equal_nan=expected.dtype.kind in "fc"))
        )
    if value == expected:
        return type(value) is type(expected)
    return value != value and expected != expected  # (NaN)


def _convert(kind: str, data):
    """The Python value a guard of ``kind`` reads from array ``data`` (as the trace did)."""
    if kind == "bool":
        return bool(data)
    if kind == "item":
        return data.reshape(()).item()
    if kind == "float":
        value = data.reshape(()).item()
        return float(value.real if isinstance(value, complex) else value)
    if kind == "int":
        return int(data.reshape(()).item())
    if kind == "complex":
        return complex(data.reshape(()).item())
    if kind == "tolist":
        return (data if type(data) is np.ndarray else data.get()).tolist()
    if kind == "array":
        return np.array(data if type(data) is np.ndarray else data.get(), copy=True)
    if kind == "shape":
        return tuple(data.shape)
    raise AssertionError(kind)


_SKIPPED = frozenset(("RESUME", "PRECALL", "PUSH_NULL", "CACHE", "NOP", "COPY_FREE_VARS"))
_DIRECT: dict = {}


def direct_function(impl, xp):
    """The array-module function ``impl`` amounts to on floating arrays, or None.

    An impl written as one call, ``lambda xp, x: xp.sin(_floating(x))`` or ``lambda xp, x:
    xp.abs(x)`` (its bytecode says so: nothing but the loads and the calls), is ``xp.sin`` on
    a floating array (``_floating`` passes it as is): the replay calls that ufunc directly,
    without the impl's Python frame. Anything else (arithmetic, constants, other globals) keeps
    the impl."""
    key = (impl, xp)
    if key in _DIRECT:
        return _DIRECT[key]
    found = None
    code = getattr(impl, "__code__", None)
    if code is not None and code.co_argcount == 2 and not code.co_flags & 0x0C:
        steps = [(i.opname, i.argval) for i in dis.get_instructions(impl)]
        steps = [s for s in steps if s[0] not in _SKIPPED]
        xp_name, x_name = code.co_varnames[:2]
        names = [s[1] for s in steps]
        kinds = [s[0] for s in steps]
        shape = ["LOAD_FAST", "LOAD_METHOD", "LOAD_FAST", "CALL", "RETURN_VALUE"]
        floating = impl.__globals__.get("_floating")
        if (
            len(steps) == 7
            and kinds[2] == "LOAD_GLOBAL"
            and names[2] == "_floating"
            and getattr(floating, "__name__", None) == "_floating"
            and kinds[4] == "CALL"
        ):
            del steps[4], steps[2]
            names = [s[1] for s in steps]
            kinds = [s[0] for s in steps]
        kinds = ["LOAD_METHOD" if k == "LOAD_ATTR" else k for k in kinds]
        if kinds == shape and names[0] == xp_name and names[2] == x_name:
            candidate = getattr(xp, names[1], None)
            if isinstance(candidate, np.ufunc) or type(candidate).__name__ == "ufunc":
                found = candidate
    _DIRECT[key] = found
    return found


def inline_expression(steps: tuple, args: list) -> str:
    """The source of ``OpDef.inline`` steps on the argument sources ``args``: nested calls of
    the array module's functions (each step's result is used once)."""

    def source(k: int) -> str:
        name, refs = steps[k]
        parts = []
        for r in refs:
            if type(r) is int:
                parts.append(args[r])
            elif r[0] == "r":
                parts.append(source(r[1]))
            else:
                parts.append(repr(r[1]))
        return f"xp.{name}({', '.join(parts)})"

    return source(len(steps) - 1)


def _floating_slots(program, instr) -> bool:
    """Whether every argument of ``instr`` is a floating (or complex) array of the program."""
    return all(r[0] == "s" and program.meta[r[1]][1].kind in "fc" for r in instr.args)


def _finite(x) -> bool:
    """Whether every element of ``x`` is finite: a sum of finite values is finite unless it
    overflows (then this says False, and the caller takes its safe path), a sum with an inf or
    NaN is not. (One pass, no temporary array.)"""
    return bool(np.isfinite(x.sum()))


def compile_program(program: Program, xp, fallback=None) -> tuple:
    """``(function, source)`` for ``program`` on array module ``xp``; ``fallback`` is the
    function an ``assume`` that fails returns the result of (called with the inputs)."""
    namespace = {"xp": xp, "RETRACE": RETRACE, "_same": _same, "_convert": _convert}
    namespace["_finite"], namespace["_slow"] = _finite, fallback
    namespace["asarray"] = xp.asarray
    for i, c in enumerate(program.consts):
        namespace[f"c{i}"] = c
    lines = [f"def replay({', '.join(f's{i}' for i in range(program.n_inputs))}):"]

    def ref(r) -> str:
        if r[0] == "s":
            return f"s{r[1]}"
        if r[0] == "c":
            return f"c{r[1]}"
        text = _literal(r[1])
        if text is None:
            name = f"l{len(namespace)}"
            namespace[name] = r[1]
            return name
        return text

    reuse = plan(program, xp, direct_function)
    for n, instr in enumerate(program.instrs):
        kind = instr.kind
        if kind == "op":
            op = instr.op
            args = [ref(r) for r in instr.args]
            direct = None
            fused = reuse.get(n, False)
            if fused is None:  # (an index_put_zeros that a slice addition below replaces)
                continue
            if fused and fused[0] == "put":  # (``buffers``: ``t[index] += ct`` in place)
                _, buffer, source, key = fused
                namespace[f"i{n}"] = key
                lines.append(f"    s{buffer}[i{n}] += {ref(source)}  # add (index_put_zeros)")
                lines.append(f"    s{instr.outs[0]} = s{buffer}")
                continue
            if n in reuse:  # (``buffers``: the result goes into a dead temporary)
                namespace[f"o{n}"], buffer = reuse[n]
                lines.append(f"    s{instr.outs[0]} = o{n}({', '.join(args)}, out=s{buffer})")
                lines[-1] += f"  # {op.name}"
                continue
            if op.kernel is None and not instr.params and len(args) == 1:
                first = instr.args[0]
                if first[0] == "s" and program.meta[first[1]][1].kind in "fc":
                    direct = direct_function(op.impl, xp)
            inline = getattr(op, "inline", None)  # (OpDef.inline; pseudo-ops have none)
            inline = inline is not None and not instr.params and _floating_slots(program, instr)
            if inline:  # (``OpDef.inline``: the impl's steps, without its frame)
                call = inline_expression(op.inline, args)
            elif op.kernel is not None and not instr.params:
                namespace[f"k{n}"] = op.kernel
                call = f"k{n}({', '.join(args)})"
            elif direct is not None:
                namespace[f"u{n}"] = direct
                call = f"u{n}({args[0]})"
            else:
                namespace[f"f{n}"] = op.impl
                words = ["xp", *args]
                for key, value in instr.params.items():
                    if key.isidentifier() and not keyword.iskeyword(key):
                        text = _literal(value)
                        if text is None:
                            text = f"p{n}_{key}"
                            namespace[text] = value
                        words.append(f"{key}={text}")
                    else:  # pragma: no cover - parameters are identifiers
                        raise AssertionError(key)
                call = f"f{n}({', '.join(words)})"
            outs = [f"s{s}" for s in instr.outs]
            scalars, multi = instr.extra
            note = f"  # {op.name}"  # (what the call is, for the reader of ``source``)
            if not multi:
                if scalars[0]:
                    call = f"asarray({call})"
                lines.append(f"    {outs[0]} = {call}{note}")
            else:
                lines.append(f"    {', '.join(outs)}, = {call}{note}")
                for s, scalar in zip(instr.outs, scalars):
                    if scalar:
                        lines.append(f"    s{s} = asarray(s{s})")
        elif kind == "write":
            lines.append(f"    {ref(instr.args[0])}[...] = {ref(instr.args[1])}")
        elif kind == "assume":
            inputs = ", ".join(f"s{i}" for i in range(program.n_inputs))
            lines.append(f"    if not _finite({ref(instr.args[0])}):")
            lines.append(f"        return _slow({inputs})")
        elif kind == "random":
            namespace[f"r{n}"] = instr.extra
            lines.append(f"    s{instr.outs[0]} = r{n}(_shape{n})._data")
            namespace[f"_shape{n}"] = program.meta[instr.outs[0]][0]
        elif kind == "guard":
            guard_kind, expected = instr.extra
            namespace[f"g{n}"] = expected
            value = f"_convert({guard_kind!r}, {ref(instr.args[0])})"
            if guard_kind == "bool":
                value = f"bool({ref(instr.args[0])})"
                lines.append(f"    if {value} is not g{n}:")
            elif guard_kind == "shape":
                lines.append(f"    if {ref(instr.args[0])}.shape != g{n}:")
            else:
                lines.append(f"    if not _same({value}, g{n}):")
            lines.append("        return RETRACE")
        else:  # pragma: no cover
            raise AssertionError(kind)
    # a constant returned is copied: the caller may write into what it gets
    outs = [ref(r) + (".copy()" if r[0] == "c" else "") for r in program.outputs]
    lines.append(f"    return ({''.join(o + ', ' for o in outs).rstrip()})")
    source = "\n".join(lines)
    code = compile(source, "<dualad.jit>", "exec")
    exec(code, namespace)
    return namespace["replay"], source


__all__ = ["RETRACE", "compile_program"]
