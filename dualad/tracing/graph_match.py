"""Straight-line checks that a new graph has a compiled pass's structure (``graphs``' fast key).

``graphs.raw_backward`` recognises a graph by a key it builds from the whole graph: a walk,
a sort by sequence number and a loop over every node and argument, which costs as much as the
compiled pass itself. Once a structure is compiled, ``make_matcher`` writes a Python function
that checks one new graph against that structure directly: starting at the root it follows
each edge to the node the structure has there and tests that node, in the structure's order,
with no walk, sort, dictionary or key. The function returns the arrays the compiled pass reads
(in the order the key's pass gathers them), the nodes and the leaves, or None at the first
difference (``raw_backward`` then builds the key as before). Where the compiled fast path is
built (``_dispatch._fastpath``), ``make_matcher`` gives ``make_plan``'s description of the same
checks to its ``match_graph`` instead of writing Python (the same tests, without interpreting
them per node).

Invariants (the matcher accepts exactly the graphs whose key equals the compiled one's):
- Every test the key's pass makes is made here: each node's class (so its op and what it
  saves), ``needs``, no ``_extra``, not freed, each saved value's version (and, for saved
  arguments, that it was not detached in place), each argument's type and, by type, its array's
  shape and dtype (tensors, with no tangent), its shape and dtype (``ArgMeta``) or its value
  (Python numbers, ``-0.0`` told from ``0.0``), its parameters, and each edge's target: None,
  the node or leaf the structure has there (``is``, so shared nodes are shared again) or, the
  first time that target is met, a new node tested in its turn. Every node of the new graph is
  reached along those edges, so the whole graph is tested.
- The nodes' sequence numbers are in the structure's order (the engine's order of the pass, so
  the replay sums gradients in the engine's order); leaves are ``AccumulateGrad`` nodes with no
  hooks, holding arrays of the structure's shapes and dtypes; the default dtype and the root
  gradient's array type, shape and dtype are the structure's.
- Anything unexpected raises inside the matcher (an argument tuple of another length): the
  caller treats an exception as no match.
"""

from __future__ import annotations

import math
from functools import partial
from operator import attrgetter

import numpy as np

from .._dispatch import _fastpath
from .._dtypes import _default as DEFAULT_DTYPE
from .._tensor import Tensor
from ..rev.node import _LEAF_EXTRA, AccumulateGrad, ArgMeta
from ..rev.op_node import OpNode

_SHAPE = attrgetter("shape")
_DTYPE = attrgetter("dtype")
# graphs of more nodes keep the key (the matcher's source grows with the graph)
MAX_MATCHED_NODES = 2000
COMPILED_NAMES = 4096  # (the compiled matcher's MATCH_NAMES: nodes and leaves it can name)


def param_key(value):
    """A hashable key telling parameter values apart exactly, or None (not supported)."""
    t = type(value)
    if t is float:
        return ("f", value.hex())
    if value is None or t is int or t is bool or t is str:
        return (t, value)
    if t is tuple:
        parts = []
        for v in value:
            part = param_key(v)
            if part is None:
                return None
            parts.append(part)
        return (tuple, tuple(parts))
    if isinstance(value, np.dtype):
        return ("dtype", value)
    return None


def params_key(params: dict):
    """The key of a node's parameters (a tuple of name, key pairs), or None."""
    parts = []
    for name, value in params.items():
        part = param_key(value)
        if part is None:
            return None
        parts.append((name, part))
    return tuple(parts)


def _leaf_clean(leaf) -> bool:
    """A leaf node the compiled pass can accumulate into (no hooks of any kind)."""
    if type(leaf) is not AccumulateGrad or leaf._extra is not _LEAF_EXTRA:
        return False
    meta = leaf.variable._meta
    return meta is None or not (meta.leaf_hooks or meta.post_accumulate_hooks)


def make_matcher(ops: list, leaves: list, grad_data, kinds: list):
    """``(match, release)`` for the structure of ``ops`` (the op nodes in the pass's order,
    the root first), ``leaves`` and the root gradient's array ``grad_data``; ``kinds[i]``
    says what ``ops[i]`` saves (0 nothing, 1 arguments, 2 output). ``match(root, data)``
    returns ``(arrays, nodes, leaves)`` or None; ``release(nodes)`` drops what the nodes saved
    (their ``_release``). None when the graph is too large."""
    if len(ops) > MAX_MATCHED_NODES:
        return None
    if (
        _fastpath is not None
        and len(ops) + len(leaves) <= COMPILED_NAMES
        and all(isinstance(n, OpNode) for n in ops)
    ):
        # the compiled matcher runs the same checks from a plan (``make_plan``)
        plan = make_plan(ops, leaves, grad_data, kinds)
        return partial(_fastpath.match_graph, plan), partial(_fastpath.release_graph, tuple(kinds))
    names = {n: f"n{i}" for i, n in enumerate(ops)}
    names.update((leaf, f"l{i}") for i, leaf in enumerate(leaves))
    consts: dict = {}

    def const(value) -> str:
        name = f"k{len(consts)}"
        consts[name] = value
        return name

    fail = "return None"
    lines = [
        "def match(n0, s0):",
        f"    if DEFAULT_DTYPE[0] is not {const(DEFAULT_DTYPE[0])} or type(s0) is not "
        f"{const(type(grad_data))}:",
        f"        {fail}",
    ]
    add = lines.append
    arrays = [grad_data]
    met = {ops[0]}
    # per node: unpack its arguments and edges, test everything in one ``if`` (one exit per
    # node keeps the function quick to compile), then name its new children and its arrays
    for i, (n, kind) in enumerate(zip(ops, kinds)):
        v = f"n{i}"
        tests = [
            f"type({v}) is not {const(type(n))}",
            f"{v}._extra is not None",
            f"{v}._freed",
            f"{v}._needs != {const(n._needs)}",
        ]
        after = []
        if kind == 2:
            tests.append(f"{v}._out_versions[0][0][0] != {v}._out_versions[0][1]")
            after.append(f"s{len(arrays)} = {v}._out_data[0]")
            arrays.append(n._out_data[0])
        args = n._args
        if args:
            add(f"    {''.join(f'a{j}, ' for j in range(len(args)))}= {v}._args")
        else:
            tests.append(f"{v}._args")
        for j, a in enumerate(args):
            t = type(a)
            if t is Tensor:
                tests.append(f"type(a{j}) is not Tensor or a{j}._fw is not None")
                after.append(f"s{len(arrays)} = a{j}._data")
                arrays.append(a._data)
                if kind == 1 and n._versions[j] is not None:
                    tests.append(f"(0 if a{j}._vc is None else a{j}._vc[0]) != {v}._versions[{j}]")
                    if n._edges[j][0] is not None:
                        tests.append(f"not a{j}._rg")
            elif t is ArgMeta:
                tests.append(f"type(a{j}) is not ArgMeta")
                tests.append(f"a{j}.shape != {const(a.shape)} or a{j}.dtype != {const(a.dtype)}")
            elif t is float:
                tests.append(f"type(a{j}) is not float or a{j} != {const(a)}")
                if not a:
                    tests.append(f"copysign(1.0, a{j}) != {const(math.copysign(1.0, a))}")
            elif t is int or t is bool:
                tests.append(f"type(a{j}) is not {t.__name__} or a{j} != {const(a)}")
            else:  # None (the key's pass declines other arguments)
                tests.append(f"a{j} is not None")
        if n._params:
            tests.append(f"params_key({v}._params) != {const(params_key(n._params))}")
        else:
            tests.append(f"{v}._params")
        if n._edges:
            add(f"    {''.join(f'(e{j}, _), ' for j in range(len(n._edges)))}= {v}._edges")
        else:
            tests.append(f"{v}._edges")
        for j, (child, _) in enumerate(n._edges):
            if child is None:
                tests.append(f"e{j} is not None")
            elif child in met:
                tests.append(f"e{j} is not {names[child]}")
            else:
                met.add(child)
                add(f"    {names[child]} = e{j}")  # (before the test: a later edge may name it)
                if type(child) is AccumulateGrad:
                    tests.append(f"not _leaf_clean(e{j})")
        add(f"    if {' or '.join(tests)}:")
        add(f"        {fail}")
        lines.extend(f"    {line}" for line in after)
    for start in range(0, len(ops) - 1, 64):  # the pass's order (chained comparisons)
        chain = " > ".join(f"n{i}._seq" for i in range(start, min(start + 65, len(ops))))
        add(f"    if not ({chain}):")
        add(f"        {fail}")
    everything = ", ".join(f"s{i}" for i in range(len(arrays)))
    add(f"    arrays = ({everything},)")
    add(f"    if tuple(map(_SHAPE, arrays)) != {const(tuple(map(_SHAPE, arrays)))}:")
    add(f"        {fail}")
    add(f"    if tuple(map(_DTYPE, arrays)) != {const(tuple(map(_DTYPE, arrays)))}:")
    add(f"        {fail}")
    if leaves:
        data = [leaf.variable._data for leaf in leaves]
        held = ", ".join(f"l{i}.variable._data" for i in range(len(leaves)))
        add(f"    held = ({held},)")
        add(f"    if tuple(map(_SHAPE, held)) != {const(tuple(map(_SHAPE, data)))}:")
        add(f"        {fail}")
        add(f"    if tuple(map(_DTYPE, held)) != {const(tuple(map(_DTYPE, data)))}:")
        add(f"        {fail}")
    nodes = ", ".join(f"n{i}" for i in range(len(ops)))
    leaf_names = ", ".join(f"l{i}" for i in range(len(leaves)))
    add(f"    return arrays, ({nodes},), ({leaf_names}{',' if leaves else ''})")
    # release: each node's ``_release`` (what the key's pass runs inline)
    add("def release(nodes):")
    add(f"    ({nodes},) = nodes")
    for i, kind in enumerate(kinds):
        if kind:
            add(f"    n{i}._freed = True")  # first: see OpNode._unpack_args
            add(f"    n{i}.{'_args' if kind == 1 else '_out_data'} = None")
    add("    return None")
    namespace = {
        "DEFAULT_DTYPE": DEFAULT_DTYPE,
        "Tensor": Tensor,
        "ArgMeta": ArgMeta,
        "copysign": math.copysign,
        "params_key": params_key,
        "_leaf_clean": _leaf_clean,
        "_SHAPE": _SHAPE,
        "_DTYPE": _DTYPE,
        **consts,
    }
    exec(compile("\n".join(lines), "<dualad.graph_match>", "exec"), namespace)
    return namespace["match"], namespace["release"]


def make_plan(ops: list, leaves: list, grad_data, kinds: list) -> tuple:
    """The compiled matcher's description of the structure of ``ops`` and ``leaves`` (what
    ``_fastpath.match_graph`` reads; its comment there says the layout): the same checks, in
    the same order, as the function ``make_matcher`` writes."""
    names = {n: i for i, n in enumerate(ops)}
    names.update((leaf, len(ops) + i) for i, leaf in enumerate(leaves))
    met = {ops[0]}
    arrays = [grad_data]
    specs = []
    for n, kind in zip(ops, kinds):
        if kind == 2:
            arrays.append(n._out_data[0])
        arg_specs = []
        for j, a in enumerate(n._args):
            t = type(a)
            if t is Tensor:
                version = kind == 1 and n._versions[j] is not None
                rg = version and n._edges[j][0] is not None
                arg_specs.append((0, version, rg))
                arrays.append(a._data)
            elif t is ArgMeta:
                arg_specs.append((1, a.shape, a.dtype))
            elif t is float:
                arg_specs.append((2, a, math.copysign(1.0, a)))
            elif t is int or t is bool:
                arg_specs.append((3, t, a))
            else:  # None (the key's pass declines other arguments)
                arg_specs.append((4,))
        edge_specs = []
        for child, _ in n._edges:
            if child is None:
                edge_specs.append((0,))
            elif child in met:
                edge_specs.append((1, names[child]))
            else:
                met.add(child)
                edge_specs.append((3 if type(child) is AccumulateGrad else 2, names[child]))
        params = params_key(n._params) if n._params else None
        specs.append((type(n), n._needs, kind, tuple(arg_specs), params, tuple(edge_specs)))
    data = [leaf.variable._data for leaf in leaves]
    return (
        DEFAULT_DTYPE,
        DEFAULT_DTYPE[0],
        type(grad_data),
        _leaf_clean,
        params_key,
        tuple(specs),
        len(ops) + len(leaves),
        tuple(a.shape for a in arrays),
        tuple(a.dtype for a in arrays),
        tuple(range(len(ops), len(ops) + len(leaves))),
        tuple(d.shape for d in data),
        tuple(d.dtype for d in data),
    )
