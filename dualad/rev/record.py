"""The tape's recorder: the bottom level of dispatch, installed into the core.

When an op runs eagerly (no transform level owns its arguments) and an input requires grad with
grad mode on, the core's callers (``_dispatch``) hand the op, its arguments and its results to
the recorder installed here, which attaches an ``OpNode`` (``rev.op_node``) to the results. The
core never imports this package: ``install_tape`` below puts the recorder in place when
``dualad.rev`` is imported (``import dualad`` does), as autodidax's EvalTrace is the bottom of
its trace stack.

``record_one`` and ``record_two`` are ``record_node`` specialised to the shapes of the hottest
calls (one plain tensor; two plain tensors or scalars), with the node's ``needs`` shared
constants instead of a list per node.
"""

from __future__ import annotations

from .. import _dispatch
from .._dispatch import _BOTH, _FIRST, _FIRST_OF_TWO, _SECOND_OF_TWO, EMPTY, OpDef
from .._state import GRAD, LOCK, RECORD_HOOKS
from .._tensor import Tensor, _new
from .anomaly import record_forward_trace
from .node import ArgMeta, _sequence, accumulator_of
from .op_node import make_node_class, pack_node
from .views import refresh_view_node

_NO_EDGE = (None, 0)


def node_class(op: OpDef) -> type:
    """``op``'s node class (``AddBackward0`` ...), made the first time ``op`` is recorded."""
    with LOCK:
        if op.node_cls is None:
            op.node_cls = make_node_class(op.node_name, op)
    return op.node_cls


_argmeta = ArgMeta.of


def record_node(op: OpDef, args: tuple, params: dict, results: tuple) -> None:
    """Attach a graph Node for ``op`` to ``results`` (they then require grad).

    Hot path of every recorded op: no generators, no helper calls beyond what is needed.
    """
    node = _new(op.node_cls or node_class(op))
    node._seq = next(_sequence)
    node._extra = None
    node._nout = len(results)
    node._op = op
    node._params = params
    node._freed = False
    node._out_data = None
    edges = []
    needs = []
    versions = []
    for a in args:
        if isinstance(a, Tensor):
            box = a._vc
            versions.append(0 if box is None else box[0])
            if a._rg:
                n = a._node
                if n is None:
                    meta = a._meta
                    ref = None if meta is None else meta.accumulator
                    n = None if ref is None else ref()
                    if n is None:
                        n = accumulator_of(a)
                    edges.append((n, 0))
                else:
                    edges.append((n, a._out_nr))
                needs.append(True)
            else:
                edges.append(_NO_EDGE)
                needs.append(False)
        else:
            versions.append(None)
            edges.append(_NO_EDGE)
            needs.append(False)
    node._edges = tuple(edges)
    node._needs = needs
    if op.save_args:
        node._args = args
        node._versions = versions
        if op.save_mask is not None:
            _drop_unread_args(node, op.save_mask(needs), args, versions)
    else:
        node._args = tuple([_argmeta(a._data) if isinstance(a, Tensor) else a for a in args])
    if len(results) == 1:
        r = results[0]
        r._rg = True
        r._node = node
        node._out_meta = None  # one output: its meta is only needed for multi-output nodes
    else:
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


def on_record(node, results: tuple) -> None:
    """The recording path's slow branch, taken while ``RECORD_HOOKS`` is set: pack what the node
    saved through this thread's saved-tensor hooks; in anomaly mode keep the forward trace."""
    if GRAD.saved_hooks:
        pack_node(node, results)
    if GRAD.anomaly[0]:
        record_forward_trace(node)


def _drop_unread_args(node, mask, args: tuple, versions: list) -> None:
    kept = list(args)
    for i, keep in enumerate(mask):
        if not keep and isinstance(kept[i], Tensor):
            kept[i] = _argmeta(kept[i]._data)
            versions[i] = None
    node._args = tuple(kept)
    node._versions = versions


def record_one(op: OpDef, x: Tensor, result: Tensor, params: dict = EMPTY) -> None:
    """``record_node`` specialised to one plain tensor argument that requires grad."""
    node = _new(op.node_cls or node_class(op))
    node._seq = next(_sequence)
    node._extra = None
    node._nout = 1
    node._op = op
    node._params = params
    node._freed = False
    node._out_data = None
    node._out_meta = None
    n = x._node
    node._edges = ((n, x._out_nr),) if n is not None else ((_accumulator(x), 0),)
    node._needs = _FIRST
    if op.save_args:
        node._args = (x,)
        box = x._vc
        node._versions = (0 if box is None else box[0],)
    else:
        meta = _new(ArgMeta)  # ArgMeta.of, inline
        data = x._data
        meta.shape = data.shape
        meta.dtype = data.dtype
        node._args = (meta,)
    result._rg = True
    result._node = node
    if op.save_out:
        node._save_outputs((result,))
    if RECORD_HOOKS:
        on_record(node, (result,))


def _accumulator(t: Tensor):
    """The AccumulateGrad node of a leaf that requires grad (cached while the graph lives)."""
    meta = t._meta
    ref = None if meta is None else meta.accumulator
    n = None if ref is None else ref()
    return accumulator_of(t) if n is None else n


def _edge(t: Tensor):
    """The graph edge of a plain tensor that requires grad (its AccumulateGrad for a leaf)."""
    n = t._node
    return (n, t._out_nr) if n is not None else (_accumulator(t), 0)


def record_two(op: OpDef, a, b, result: Tensor, masks: dict | None) -> None:
    """``record_node`` specialised to two plain-tensor-or-scalar arguments (binary ops);
    ``masks`` is ``two_arg_save_masks(op)``."""
    node = _new(op.node_cls or node_class(op))
    node._seq = next(_sequence)
    node._extra = None
    node._nout = 1
    node._op = op
    node._params = EMPTY
    node._freed = False
    node._out_data = None
    node._out_meta = None
    ta = type(a) is Tensor
    tb = type(b) is Tensor
    if ta and a._rg:
        n = a._node
        edge_a = (n, a._out_nr) if n is not None else (_accumulator(a), 0)
        if tb and b._rg:
            n = b._node
            node._edges = (edge_a, (n, b._out_nr) if n is not None else (_accumulator(b), 0))
            needs = _BOTH
        else:
            node._edges = (edge_a, _NO_EDGE)
            needs = _FIRST_OF_TWO
    else:
        n = b._node
        node._edges = (_NO_EDGE, (n, b._out_nr) if n is not None else (_accumulator(b), 0))
        needs = _SECOND_OF_TWO
    node._needs = needs
    if op.save_args:
        # arguments the VJP will not read are not kept (mul, div): shape/dtype stand-ins
        keep_a, keep_b = _BOTH if masks is None else masks[needs]
        va = vb = None
        if ta:
            if keep_a:
                box = a._vc
                va = 0 if box is None else box[0]
            else:
                a = _argmeta(a._data)
        if tb:
            if keep_b:
                box = b._vc
                vb = 0 if box is None else box[0]
            else:
                b = _argmeta(b._data)
        node._args = (a, b)
        node._versions = (va, vb)
    else:
        node._args = (_argmeta(a._data) if ta else a, _argmeta(b._data) if tb else b)
    result._rg = True
    result._node = node
    if op.save_out:
        node._save_outputs((result,))
    if RECORD_HOOKS:
        on_record(node, (result,))


_dispatch.install_tape(record_node, record_one, record_two, refresh_view_node)
