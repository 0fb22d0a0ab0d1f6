"""Whole backward passes compiled to straight-line array code (issue 15 item 6).

A plain ``backward()`` that records nothing (``create_graph=False``, no transform level, no
anomaly mode, no ``inputs``) over a graph of ordinary op nodes spends most of its time on the
engine's bookkeeping and on Tensors and dispatch inside the VJP rules, not on arithmetic. Graphs
built by the same code have the same structure, so ``raw_backward`` keys a graph by its
structure (each node's op, which inputs need gradients, parameters, Python numbers, the shapes
and dtypes of what it saved, its edges), traces the pass once with the jit's trace level (the
rules and the gradient sums run as ordinary ops and are recorded), compiles the recording with
``codegen`` and replays it on later graphs of that structure with their saved arrays. The
engine installs it with ``rev.engine.install_raw_graph`` (``rev`` is below this layer).

Invariants:
- The trace runs the nodes in the engine's order (the highest sequence number first: a node's
  inputs were recorded before it, so this order is the engine's ready order), sums the
  gradients arriving at a node in the order the engine does (first one kept, then
  ``previous + g``) and runs ``_validate`` as the engine's nodes do: a replay computes the
  engine's gradients bit for bit.
- Leaves get their gradients through their own ``AccumulateGrad`` node (copy, cast, reduce,
  the lock, version bump), as the engine hands them.
- Anything else takes the engine: nodes that are not one-output op nodes with a specialised
  apply (custom Functions, in-place and view-replay nodes, packed saved tensors), any hook or
  retain-grad capture, leaves with hooks, saved values that were modified or freed (the engine
  raises the error), arguments that are not tensors, ``ArgMeta`` or Python numbers, tangents,
  traces that give up or draw random numbers, guards that fail on a replay, a structure's
  first pass (it is compiled on its second: tracing costs tens of engine passes), passes
  while graphs keep changing (a back-off: building a key costs a third of an engine pass),
  graphs of more than ``MAX_NODES`` nodes.
- The key holds the default dtype (rules may create tensors of it).
- A structure in steady use (its key found ``MATCH_AFTER`` times) also gets a matcher
  (``graph_match``): a pass whose graph it accepts replays without building the key (it
  accepts exactly the graphs of that key).
- Saved values are released afterwards unless ``retain_graph``, as the engine releases them.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from .._dtypes import _default as DEFAULT_DTYPE
from .._state import ACTIVE, GRAD, pop_level, push_level
from .._tensor import Tensor, wrap
from ..rev.engine import install_raw_graph
from ..rev.node import _LEAF_EXTRA, AccumulateGrad, ArgMeta, GradSum, _validate
from ..rev.op_node import SPECIALISED_APPLIES
from .codegen import RETRACE, compile_program
from .graph_match import make_matcher, param_key
from .program import optimise
from .tracer import TraceLevel, TraceTensor

# structure key -> [replay, owned flags per leaf, replays found by the key], None (the engine
# runs it) or _SEEN_ONCE
_CACHE: dict = {}
_SEEN_ONCE = object()  # a structure met once: compiled when it comes again
MAX_GRAPHS = 1024  # entries; when full, the structures seen once are forgotten
# the keys' items held in all (a key has about a dozen per node): bounds the cache's memory
MAX_HELD = 500_000
_HELD = [0]
# larger graphs take the engine: compiling a program costs time linear in its length, and deep
# graphs (a million nodes) are what the engine's iterative loop is for
MAX_NODES = 5000
_SEQ = attrgetter("_seq")
# root node class -> ((match, release, compiled entry), ...): compiled structures' matchers,
# made for a structure once the key has found it MATCH_AFTER times (a matcher's source grows
# with the graph and compiling it costs as much as hundreds of keys)
_MATCHERS: dict = {}
MATCHERS_PER_ROOT = 8
MATCH_AFTER = 64
# Graphs that change on every pass (data-dependent control flow) would pay for a key each time
# and never replay: after BACKOFF_AFTER new structures in a row, that many passes (at most
# MAX_BACKOFF) go to the engine unexamined. [new structures in a row, passes left to skip]
_BACKOFF = [0, 0]
BACKOFF_AFTER = 8
MAX_BACKOFF = 256


def raw_backward(root, root_grad, retain_graph: bool) -> bool:
    """Run the pass from ``root`` (a (node, output_nr) pair) with gradient ``root_grad``
    compiled; False when the engine must run it (nothing was done then)."""
    if (ACTIVE and GRAD.levels) or GRAD.anomaly[0]:
        return False
    if _BACKOFF[1]:
        _BACKOFF[1] -= 1  # graphs keep changing: leave them to the engine for a while
        return False
    node, nr = root
    if nr != 0 or type(root_grad) is not Tensor or root_grad._fw is not None:
        return False
    if type(node) is AccumulateGrad:
        return False
    # ---- a compiled structure's matcher (``graph_match``): no key for a graph that has it
    for match, release, compiled in _MATCHERS.get(type(node), ()):
        try:
            found = match(node, root_grad._data)
        except Exception:  # (an argument tuple of another length...: another structure)
            found = None
        if found is not None:
            _BACKOFF[0] = 0
            if not _run_compiled(compiled, found[0], found[2]):
                return False
            if not retain_graph:
                release(found[1])
            return True
    found = _structure(node, root_grad)
    if found is None:
        return False
    key, ops, leaves, arrays = found
    compiled = _CACHE.get(key, _CACHE)
    if compiled is _CACHE:
        # a structure seen once is only remembered: tracing costs tens of engine passes, so
        # graphs that change every time (data-dependent control flow) must not pay it
        if len(_CACHE) >= MAX_GRAPHS or _HELD[0] + len(key) > MAX_HELD:
            _forget_seen_once()
            if len(_CACHE) >= MAX_GRAPHS or _HELD[0] + len(key) > MAX_HELD:
                return False  # full of compiled structures
        _CACHE[key] = _SEEN_ONCE
        _HELD[0] += len(key)
        streak = _BACKOFF[0] = _BACKOFF[0] + 1
        if streak >= BACKOFF_AFTER:
            _BACKOFF[1] = min(streak, MAX_BACKOFF)
        return False
    _BACKOFF[0] = 0
    if compiled is _SEEN_ONCE:
        previous = GRAD.enabled
        GRAD.enabled = False
        try:
            grads = _trace(key, ops, leaves, root_grad, len(arrays))
            if grads is None:
                return False
            compiled = _CACHE[key]
            _accumulate(leaves, grads, compiled[1])
        finally:
            GRAD.enabled = previous
    elif compiled is None or not _run_compiled(compiled, arrays, leaves):
        return False
    else:
        compiled[2] += 1
        if compiled[2] == MATCH_AFTER:  # a structure in steady use: worth its matcher
            _add_matcher(ops, leaves, root_grad._data, compiled)  # (before the release below)
    if not retain_graph:
        # each node's ``_release``, inline (one Python call less per node): the specialised
        # node classes (the only ones here) drop what they saved, arguments or output
        for n in ops:
            op = n._op
            if op.save_args:
                n._freed = True  # first: see OpNode._unpack_args
                n._args = None
            elif op.save_out:
                n._freed = True
                n._out_data = None
    return True


def _structure(node, root_grad: Tensor):
    """``(key, ops, leaves, arrays)`` of the graph from op node ``node``: its structure's key,
    its op nodes in the engine's order, its leaves and the arrays its pass reads; None when the
    engine must run it."""
    # ---- the nodes (each once), checked
    seen = {node: None}
    ops = [node]
    leaves = []
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        for child, _ in pop()._edges:
            if child is None or child in seen:
                continue
            seen[child] = None
            if type(child) is AccumulateGrad:
                if child._extra is not _LEAF_EXTRA:
                    return None
                meta = child.variable._meta
                if meta is not None and (meta.leaf_hooks or meta.post_accumulate_hooks):
                    return None
                leaves.append(child)
            else:
                ops.append(child)
                push(child)
                if len(ops) > MAX_NODES:
                    return None
    ops.sort(key=_SEQ, reverse=True)
    # ---- the key, and the arrays the program reads (one pass that also checks each node).
    # Per node: its class (the op and what it saves), ``needs`` (one flag per argument, so
    # also how many arguments and edges it has), what it saved, each argument's kind and
    # shape/dtype or value, its parameters, its edges' positions in this order.
    index = {n: i for i, n in enumerate(ops)}
    for i, leaf in enumerate(leaves):
        index[leaf] = -1 - i
    data = root_grad._data
    key = [DEFAULT_DTYPE[0], type(data), data.shape, data.dtype]
    append = key.append
    arrays = [data]
    push = arrays.append
    for n in ops:
        cls = type(n)
        if n._extra is not None or cls._apply not in SPECIALISED_APPLIES or n._freed:
            return None
        op = n._op
        append(cls)
        append(n._needs)
        if op.save_out:
            box, version, _ = n._out_versions[0]
            if box[0] != version:
                return None  # modified in place: the engine raises
            out = n._out_data[0]
            append(out.shape)
            append(out.dtype)
            push(out)
        args = n._args
        if op.save_args:
            for i, version in enumerate(n._versions):
                if version is not None:
                    a = args[i]
                    box = a._vc
                    if (0 if box is None else box[0]) != version or (
                        not a._rg and n._edges[i][0] is not None
                    ):
                        return None  # modified or detached in place: the engine raises
        for a in args:
            t = type(a)
            if t is Tensor:
                if a._fw is not None:
                    return None
                d = a._data
                append(d.shape)
                append(d.dtype)
                push(d)
            elif t is ArgMeta:
                append(t)
                append(a.shape)
                append(a.dtype)
            elif t is float:
                append(a if a else repr(a))  # (0.0 and -0.0 are equal keys otherwise)
            elif t is int or t is bool:
                append(t)
                append(a)
            elif a is None:
                append(None)
            else:
                return None
        params = n._params
        if params:
            for name, value in params.items():
                part = param_key(value)
                if part is None:
                    return None
                append(name)
                append(part)
        for child, _ in n._edges:
            append(None if child is None else index[child])
    for leaf in leaves:
        d = leaf.variable._data
        append(d.shape)
        append(d.dtype)
    return tuple(key), ops, leaves, arrays


def _run_compiled(compiled: tuple, arrays, leaves) -> bool:
    """Replay a compiled pass on ``arrays`` and accumulate into ``leaves``; False (nothing done)
    when a guard of the program fails."""
    previous = GRAD.enabled
    GRAD.enabled = False
    try:
        results = compiled[0](*arrays)
        if results is RETRACE:
            return False
        grads = [None if r is None else wrap(r) for r in results]
        if len(grads) > 1 and True in compiled[1]:
            _unshare(grads, compiled[1])
        _accumulate(leaves, grads, compiled[1])
    finally:
        GRAD.enabled = previous
    return True


def _accumulate(leaves, grads: list, owned: tuple) -> None:
    """Hand each leaf its gradient through its AccumulateGrad node, as the engine does."""
    for leaf, g, own in zip(leaves, grads, owned):
        # (a leaf keeps an owned sum as its .grad: the engine's GradSum)
        if g is not None:
            buf = GradSum([g]) if own else [g]
            if own:
                buf.owned = g
            leaf._apply(buf, None, False)


def _add_matcher(ops: list, leaves: list, grad_data, compiled: tuple) -> None:
    """Give a newly compiled structure its matcher (the newest ``MATCHERS_PER_ROOT`` per root
    node class are kept)."""
    kinds = [2 if n._op.save_out else 1 if n._op.save_args else 0 for n in ops]
    made = make_matcher(ops, leaves, grad_data, kinds)
    if made is not None:
        cls = type(ops[0])
        _MATCHERS[cls] = ((*made, compiled), *_MATCHERS.get(cls, ())[: MATCHERS_PER_ROOT - 1])


def _forget_seen_once() -> None:
    """Drop the structures seen only once (the cache is full; compiled ones stay)."""
    for key in [k for k, v in _CACHE.items() if v is _SEEN_ONCE]:
        _CACHE.pop(key, None)
    _HELD[0] = sum(len(k) for k in list(_CACHE))


def _unshare(grads: list, owned: tuple) -> None:
    """A leaf keeps an owned sum as its ``.grad`` and later adds into it in place: two leaves
    must never get one array (common-subexpression elimination may merge equal sums), so a
    repeated one is copied."""
    seen = set()
    for i, (g, own) in enumerate(zip(grads, owned)):
        if g is not None and own:
            if id(g._data) in seen:
                grads[i] = wrap(g._data.copy())
            seen.add(id(g._data))


def _trace(key: tuple, ops: list, leaves: list, root_grad: Tensor, n_inputs: int):
    """Run the pass under a trace level; cache its program (or None) and return the leaves'
    gradients (None when the program cannot stand for the pass: the engine runs it)."""
    level = TraceLevel(n_inputs)
    slots = [0]

    def traced(t: Tensor):
        out = level.input(t, slots[0])
        slots[0] += 1
        return out

    # the program's inputs, in the order raw_backward gathers their arrays
    buffers = {ops[0]: [traced(root_grad), 1]}
    saved = []
    for n in ops:
        outs = (traced(wrap(n._out_data[0])),) if n._op.save_out else None
        saved.append((outs, tuple(traced(a) if type(a) is Tensor else a for a in n._args)))
    assert slots[0] == n_inputs
    push_level(level)
    try:
        for n, (outs, args) in zip(ops, saved):
            op = n._op
            entry = buffers.pop(n, None)
            if entry is None:
                continue  # reached without a gradient: the engine skips it too
            needs = n._needs
            result = _validate(op.vjp((entry[0],), outs, args, n._params, needs), args, needs, n)
            for (child, _), g in zip(n._edges, result):
                if child is None or g is None:
                    continue
                if type(g) is not TraceTensor or g._level is not level:
                    level.give_up("a rule returned a value the program does not hold")
                    continue
                held = buffers.get(child)
                if held is None:
                    buffers[child] = [g, 1]
                else:
                    held[0] = held[0] + g
                    held[1] += 1
    except Exception:
        _CACHE[key] = None
        return None  # the engine runs the pass (and raises the rule's error itself)
    finally:
        pop_level(level)
        level.alive = False
    program = level.program
    if (
        level.eager_only is not None
        or program.written
        or any(instr.kind == "random" for instr in program.instrs)
    ):
        _CACHE[key] = None
        return None
    refs, grads, owned = [], [], []
    for leaf in leaves:
        entry = buffers.get(leaf)
        if entry is None:
            refs.append(("l", None))
            grads.append(None)
            owned.append(False)
        else:
            refs.append(("s", entry[0]._slot))
            grads.append(entry[0]._value)
            owned.append(entry[1] > 1)
    program.outputs = refs
    optimise(program)
    data = root_grad._data
    xp = np if type(data) is np.ndarray else _cupy()
    replay, _ = compile_program(program, xp)
    _CACHE[key] = [replay, tuple(owned), 0]  # (the last: replays found by the key)
    return grads


def _cupy():
    import cupy  # (optional dependency, only for CuPy arrays)

    return cupy


def cache_clear() -> None:
    """Forget every compiled pass (and the back-off)."""
    _CACHE.clear()
    _MATCHERS.clear()
    _HELD[0] = 0
    _BACKOFF[:] = [0, 0]


def cache_size() -> int:
    """How many graph structures have been seen (compiled or left to the engine)."""
    return len(_CACHE)


install_raw_graph(raw_backward)

__all__ = ["MAX_GRAPHS", "MAX_HELD", "MAX_NODES", "cache_clear", "cache_size", "raw_backward"]
