"""The tape's recorder: the bottom level of dispatch, installed into the core.

When an op runs eagerly (no transform level owns its arguments) and an input requires grad with
grad mode on, the core's callers (``_dispatch``) hand the op, its arguments and its results to
the recorder installed here, which attaches an ``OpNode`` (``rev.op_node``) to the results. The
core never imports this package: ``install_tape`` below puts the recorder in place when
``dualad.rev`` is imported (``import dualad`` does), as autodidax's EvalTrace is the bottom of
its trace stack.

``record_node`` is the one recorder, for every op and every number of arguments; the shapes
of the hottest calls (one tensor; two tensors or a tensor and a scalar) take straight-line
branches inside it, with the node's ``needs`` shared constants instead of a tuple per node.
"""

from __future__ import annotations

import itertools

from .. import _dispatch
from .._dispatch import SCALAR_TYPES, OpDef
from .._state import DUALS_LIVE, GRAD, LOCK, RECORD_HOOKS
from .._tensor import Tensor, _new
from .anomaly import record_forward_trace
from .node import ArgMeta, _sequence, accumulator_of
from .op_node import OpNode, make_node_class, pack_node
from .views import refresh_view_node

_NO_EDGE = (None, 0)
_SCALARS = SCALAR_TYPES
_next_seq = _sequence.__next__  # (the node sequence's next number, without next()'s lookup)
# ``needs`` of one- and two-argument nodes: shared constants (no tuple per node)
_FIRST = (True,)
_BOTH = (True, True)
_FIRST_OF_TWO = (True, False)
_SECOND_OF_TWO = (False, True)


def node_class(op: OpDef) -> type:
    """``op``'s node class (``AddBackward0`` ...), made the first time ``op`` is recorded."""
    with LOCK:
        if op.node_cls is None:
            op.node_cls = make_node_class(op.node_name, op)
    return op.node_cls


_argmeta = ArgMeta.of


def record_node(op: OpDef, args: tuple, params: dict, result, results: tuple | None = None) -> None:
    """Attach a graph node for ``op`` to ``results`` (they then require grad).

    Per argument the node keeps its edge (the node and output it came from, a leaf's
    AccumulateGrad, ``(None, 0)`` for what needs no gradient), whether it needs a gradient, and
    the argument with its version where the VJP reads it (a shape/dtype stand-in where it does
    not: ``OpDef.save_mask``, tabulated per ``needs`` in ``OpDef.save_masks``). The hot path of
    every recorded op: one- and two-argument calls (nearly all) take straight-line branches
    with shared ``needs`` tuples and no helper call; more arguments take the general loop.
    """
    # (func.grad_level's GradLevel.process sets up its GradNode alike: kept inline, not shared)
    node = _new(op.node_cls or node_class(op))
    node._seq = _next_seq()
    node._extra = None
    node._op = op
    node._params = params
    node._freed = False
    node._out_data = None
    nargs = len(args)
    if nargs == 1:  # (recorded, so the one argument is a tensor that requires grad)
        a = args[0]
        n = a._node
        node._edges = ((n, a._out_nr),) if n is not None else ((_accumulator(a), 0),)
        node._needs = _FIRST
        masks = op.save_masks
        if op.save_args and (masks is None or masks[_FIRST][0]):
            box = a._vc
            node._args = args
            node._versions = (0 if box is None else box[0],)
        else:  # the VJP reads no argument: a shape/dtype stand-in
            meta = _new(ArgMeta)  # ArgMeta.of, inline
            data = a._data
            meta.shape = data.shape
            meta.dtype = data.dtype
            node._args = (meta,)
            node._versions = (None,)
    elif nargs == 2:
        a, b = args
        # (Python scalars are the common non-tensors: ruled out without an isinstance)
        ta = type(a) is Tensor or (type(a) not in _SCALARS and isinstance(a, Tensor))
        tb = type(b) is Tensor or (type(b) not in _SCALARS and isinstance(b, Tensor))
        if tb and b._rg:
            n = b._node
            edge_b = (n, b._out_nr) if n is not None else (_accumulator(b), 0)
        else:
            edge_b = _NO_EDGE
        if ta and a._rg:
            n = a._node
            node._edges = ((n, a._out_nr) if n is not None else (_accumulator(a), 0), edge_b)
            needs = _BOTH if edge_b is not _NO_EDGE else _FIRST_OF_TWO
        else:
            node._edges = (_NO_EDGE, edge_b)
            needs = _SECOND_OF_TWO
        node._needs = needs
        if op.save_args:
            masks = op.save_masks
            keep_a, keep_b = _BOTH if masks is None else masks[needs]
        else:
            keep_a = keep_b = False
        va = vb = None
        # a's and b's blocks alike on purpose: unrolled for the two-argument hot path, with the
        # shape/dtype stand-in made inline (ArgMeta.of's call costs more than its body)
        if ta:
            if keep_a:
                box = a._vc
                va = 0 if box is None else box[0]
            else:
                data = a._data
                a = _new(ArgMeta)
                a.shape = data.shape
                a.dtype = data.dtype
        if tb:
            if keep_b:
                box = b._vc
                vb = 0 if box is None else box[0]
            else:
                data = b._data
                b = _new(ArgMeta)
                b.shape = data.shape
                b.dtype = data.dtype
        # (the caller's tuple when both are kept: no second tuple)
        node._args = args if keep_a and keep_b else (a, b)
        node._versions = (va, vb)
    else:
        needs = node._needs = tuple([isinstance(a, Tensor) and a._rg for a in args])
        node._edges = tuple([_edge(a) if rg else _NO_EDGE for a, rg in zip(args, needs)])
        if op.save_args:
            masks = op.save_masks
            _save_args(node, args, _ALL if masks is None else masks[needs])
        else:
            node._args = tuple([_argmeta(a._data) if isinstance(a, Tensor) else a for a in args])
    if results is None:
        result._rg = True
        result._node = node
        node._nout = 1
        node._out_meta = None  # one output: its meta is only needed for multi-output nodes
        if op.save_out:
            node._save_outputs((result,))
        if RECORD_HOOKS:
            on_record(node, (result,))
        return
    else:
        node._nout = len(results)
        nondiff = op.nondiff_outputs
        out_meta = []
        for i, r in enumerate(results):
            data = r._data
            out_meta.append((data.shape, data.dtype))
            if i not in nondiff:
                r._rg = True
                r._node = node
                r._out_nr = i
        node._out_meta = tuple(out_meta)
    if op.save_out:
        node._save_outputs(results)
    if RECORD_HOOKS:
        on_record(node, results)


def _save_args(node, args: tuple, keep) -> None:
    """``record_node``'s saving of three or more arguments (``keep``: one flag per argument)."""
    saved = []
    versions = []
    for a, kept in zip(args, keep):
        if not isinstance(a, Tensor):
            saved.append(a)
            versions.append(None)
        elif kept:
            saved.append(a)
            box = a._vc
            versions.append(0 if box is None else box[0])
        else:
            saved.append(_argmeta(a._data))
            versions.append(None)
    node._args = tuple(saved)
    node._versions = versions


_ALL = itertools.repeat(True)  # (zip stops at the arguments)


def _accumulator(t: Tensor):
    """The AccumulateGrad node of a leaf that requires grad (cached while the graph lives)."""
    meta = t._meta
    ref = None if meta is None else meta.accumulator
    n = None if ref is None else ref()
    return accumulator_of(t) if n is None else n


def _edge(t: Tensor) -> tuple:
    """The graph edge of a tensor that requires grad (its AccumulateGrad for a leaf)."""
    n = t._node
    return (n, t._out_nr) if n is not None else (_accumulator(t), 0)


def on_record(node, results: tuple) -> None:
    """The recording path's slow branch, taken while ``RECORD_HOOKS`` is set: pack what the node
    saved through this thread's saved-tensor hooks; in anomaly mode keep the forward trace."""
    if GRAD.saved_hooks:
        pack_node(node, results)
    if GRAD.anomaly[0]:
        record_forward_trace(node)


# (the compiled fast path records one- and two-argument nodes itself, as ``record_node`` does,
# from the node layout and helpers given here: ``_dispatch._fastpath``)
_FAST_LAYOUT = (
    OpNode,
    ArgMeta,
    _sequence,
    _accumulator,
    RECORD_HOOKS,
    DUALS_LIVE,
    _FIRST,
    _BOTH,
    _FIRST_OF_TWO,
    _SECOND_OF_TWO,
    _NO_EDGE,
)
_dispatch.install_tape(record_node, refresh_view_node, _FAST_LAYOUT)
