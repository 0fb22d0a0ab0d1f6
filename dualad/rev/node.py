"""Graph nodes of reverse mode (each one tape entry: what an op needs to send gradients back).

Invariants:
- A node holds ``_edges``: one ``(node, output_nr)`` pair per argument of its op, ``(None, 0)``
  for arguments that do not require grad (Python scalars included). ``next_functions`` shows them.
- Saved arguments are kept as the Tensors themselves with their version at save time, so that
  ``create_graph`` differentiates through them and in-place changes are detected. A saved output
  is kept as its array (a Tensor pointing back at its own node would be a reference cycle) and
  rebuilt as a Tensor whose grad_fn is this node when unpacked.
- Under saved-tensor hooks (rev/saved.py) the saved values are instead ``Packed`` tuples of
  ``SavedTensor`` entries, and the node switches to a subclass of its class (same name) that
  unpacks them: nodes saved without hooks pay nothing for the feature.
- After a backward without ``retain_graph`` the saved values are dropped; using them again raises
  the "Specify retain_graph=True" error. Nodes that saved nothing can run again.
- Nodes never recurse into each other: destruction of deep graphs is flattened by ``_release``.

This module holds the node base, leaves' ``AccumulateGrad`` and the checks every node kind's
backward shares; registered ops' nodes are in ``op_node``, custom Functions' in
``function_node``, the recorder that makes them in ``record``.
"""

from __future__ import annotations

import itertools
import weakref

from .._creation import as_tensor, zeros_for
from .._meta import get_meta
from .._state import GRAD, LOCK
from .._tensor import Tensor, _new
from ..ops import astype, real, sum_to
from .accumulate import accumulate_into_leaf

_hook_ids = itertools.count()
# creation order of nodes: the engine runs ready nodes newest first (PyTorch's sequence_nr)
_sequence = itertools.count()


class RemovableHandle:
    """Handle returned by hook registration; ``remove()`` unregisters (idempotent)."""

    __slots__ = ("_hooks_ref", "id")

    def __init__(self, hooks: dict) -> None:
        import weakref

        self.id = next(_hook_ids)
        self._hooks_ref = weakref.ref(hooks) if hasattr(hooks, "__weakref__") else (lambda: hooks)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class HookDict(dict):
    """A dict of hooks (id -> fn) that handles can refer to weakly."""

    __slots__ = ("__weakref__",)


class ArgMeta:
    """Stand-in for an argument an op did not save: its shape and dtype only."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape, dtype) -> None:
        self.shape = shape
        self.dtype = dtype

    @classmethod
    def of(cls, data) -> ArgMeta:
        """The stand-in of an array (hot path: no __init__ call)."""
        meta = _new(cls)
        meta.shape = data.shape
        meta.dtype = data.dtype
        return meta

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"ArgMeta(shape={self.shape}, dtype={self.dtype})"


class NodeExtra:
    """What few nodes need: hooks, retain-grad captures, metadata (anomaly traces go there)."""

    __slots__ = ("metadata", "post_hooks", "pre_hooks", "retain", "tensor_hooks")

    def __init__(self) -> None:
        self.metadata = None
        self.post_hooks = None
        self.pre_hooks = None
        self.retain = None
        self.tensor_hooks = None


# what every AccumulateGrad starts with (never written to: the first write of a hook or the
# like gives the node its own NodeExtra)
_LEAF_EXTRA = NodeExtra()


def _extra_slot(name: str):
    """A property stored on the node's NodeExtra (made on first write)."""

    def get(self):
        extra = self._extra
        return None if extra is None else getattr(extra, name)

    def set(self, value):
        extra = self._extra
        if extra is None or extra is _LEAF_EXTRA:
            extra = self._extra = NodeExtra()
        setattr(extra, name, value)

    return property(get, set)


class Node:
    """A node of the backward graph (``tensor.grad_fn``).

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 2
    >>> y.grad_fn.name()
    'MulBackward0'
    >>> y.grad_fn.next_functions[0][0].name()
    'AccumulateGrad'
    """

    __slots__ = ("__weakref__", "_edges", "_extra", "_nout", "_seq")

    # whether the engine runs this node when none of its outputs received a gradient (custom
    # Functions, as in PyTorch); other nodes' results are then undefined too, so they are skipped
    _runs_undefined = False

    _pre_hooks = _extra_slot("pre_hooks")
    _post_hooks = _extra_slot("post_hooks")
    _tensor_hooks = _extra_slot("tensor_hooks")
    _retain = _extra_slot("retain")
    _metadata = _extra_slot("metadata")

    def name(self) -> str:
        return type(self).__name__

    # PyTorch's Node API: read-only properties over the slots (alike Tensor's by shape only)
    @property
    def next_functions(self) -> tuple:
        return self._edges

    @property
    def metadata(self) -> dict:
        meta = self._metadata
        if meta is None:
            meta = self._metadata = {}
        return meta

    def _sequence_nr(self) -> int:
        return self._seq

    def _set_sequence_nr(self, sequence_nr: int) -> None:
        """Change the node's place in the execution order (ready nodes run highest first)."""
        self._seq = int(sequence_nr)

    def __lt__(self, other) -> bool:
        # the engine's ready-heap holds (-sequence_nr, node): equal numbers (only possible after
        # _set_sequence_nr) fall back to comparing nodes, in a fixed arbitrary order
        return id(self) < id(other)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs) -> tuple | None`` runs before this node; may replace grad_outputs."""
        return _add_hook(self, "_pre_hooks", fn)

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs) -> tuple | None`` runs after this node."""
        return _add_hook(self, "_post_hooks", fn)

    def _tensor_hooks_of(self, output_nr: int) -> HookDict:
        table = self._tensor_hooks
        if table is None:
            table = self._tensor_hooks = {}
        hooks = table.get(output_nr)
        if hooks is None:
            hooks = table[output_nr] = HookDict()
        return hooks

    def _init_base(self, seq: int) -> None:
        self._seq = seq
        self._edges = ()
        self._extra = None
        self._nout = 1

    @property
    def _num_outputs(self) -> int:
        return self._nout

    def __call__(self, *grad_outputs):
        """Apply the node to gradients w.r.t. its outputs; returns gradients w.r.t. its inputs."""
        n = self._num_outputs
        if len(grad_outputs) != n:
            raise TypeError(f"expected {n} arguments, got {len(grad_outputs)} instead")
        if not self._runs_undefined and all(g is None for g in grad_outputs):
            return None if len(self._edges) == 1 else (None,) * len(self._edges)
        grads = self._apply(list(grad_outputs), None, GRAD.enabled)
        return grads[0] if len(grads) == 1 else tuple(grads)

    def _apply(self, grads: list, needs, create_graph: bool) -> tuple:
        raise NotImplementedError

    def _release(self) -> None:
        """Drop saved values (after a backward without retain_graph)."""

    def _apply_release(self, grads: list, needs, create_graph: bool) -> tuple:
        """``_apply``, then ``_release``: the engine's call per node of a backward without
        retain_graph (op nodes that save one kind of value have it specialised, the release
        inline: ``rev.op_node``)."""
        out = self._apply(grads, needs, create_graph)
        self._release()
        return out

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


def _add_hook(node: Node, slot: str, fn) -> RemovableHandle:
    """Add ``fn`` to the node's hook dict ``slot`` (made on first use)."""
    hooks = getattr(node, slot)
    if hooks is None:
        hooks = HookDict()
        setattr(node, slot, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def _output_tensor(node, data, index: int, box: list, fw) -> Tensor:
    """A Tensor holding ``data`` as output ``index`` of ``node`` (its grad_fn): a saved output
    rebuilt (no reference cycle while saved: the node keeps only the array), or a custom
    Function's dirty input rebased onto its node. The one home of this slot setup, except where
    the hot paths inline it (``_apply_saved_output``; ``wrap`` for a leaf)."""
    t = _new(Tensor)
    t._data = data
    t._rg = True
    t._node = node
    t._out_nr = index
    t._meta = None
    t._fw = fw or None
    t._fwsig = None
    t._vc = box
    t._view = None
    return t


def _fill_missing(grads: list, out_meta: tuple) -> list:
    """Multi-output nodes: outputs that received no gradient get zeros (rules need all)."""
    return [
        zeros_for(shape, dtype, grads) if g is None else g
        for g, (shape, dtype) in zip(grads, out_meta)
    ]


def _validate(result, args, needs, node) -> tuple:
    """Cast each input gradient to its input's dtype and reduce broadcast shapes; check shapes.

    ``args`` are the op's arguments or their ``ArgMeta`` stand-ins. This is the one place where
    broadcasting is undone for every op (rules may return output-shaped cotangents).
    """
    if len(result) == 1:  # one input: the common case, checked without the loop
        g = result[0]
        if g is None:
            return result
        if type(g) is Tensor and needs[0]:
            a = args[0]
            if type(a) is Tensor:
                a = a._data  # else an ArgMeta: shape and dtype too
            gdata = g._data
            gdtype, adtype = gdata.dtype, a.dtype
            if (gdtype is adtype or gdtype == adtype) and gdata.shape == a.shape:
                return result
    elif len(result) == 2:  # two inputs (binary ops): the same test, unrolled
        # (ga's and gb's conditions below alike on purpose: no loop on every binary node)
        ga, gb = result
        a, b = args
        if type(a) is Tensor:
            a = a._data
        if type(b) is Tensor:
            b = b._data
        if (
            ga is None
            or (
                needs[0]
                and type(ga) is Tensor
                and ga._data.shape == a.shape
                and ga._data.dtype == a.dtype
            )
        ) and (
            gb is None
            or (
                needs[1]
                and type(gb) is Tensor
                and gb._data.shape == b.shape
                and gb._data.dtype == b.dtype
            )
        ):
            return result
    conformed = None
    for i in range(len(result)):
        g = result[i]
        if g is None:
            continue
        if not needs[i]:
            g = None
        else:
            a = args[i]
            if type(a) is Tensor:
                data = a._data
                shape, dtype = data.shape, data.dtype
            else:
                shape, dtype = a.shape, a.dtype
            if type(g) is Tensor:
                data = g._data
                gdtype = data.dtype
                if (gdtype is dtype or gdtype == dtype) and data.shape == shape:
                    continue
            g = _conform(g, shape, dtype, i, node)
        if conformed is None:
            conformed = list(result)
        conformed[i] = g
    return result if conformed is None else tuple(conformed)


def _conform(g, shape, dtype, index: int, node):
    if not isinstance(g, Tensor):
        g = as_tensor(g)
    gshape = tuple(g.shape)
    if gshape != tuple(shape):
        try:
            g = sum_to(g, shape)
        except Exception:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(gshape)} but expected shape compatible with {list(shape)}"
            ) from None
    if g.dtype != dtype:
        if g.dtype.kind == "c" and dtype.kind != "c":
            g = real(g)
        if g.dtype != dtype:
            g = astype(g, dtype)
    return g


def _check_not_detached(edge_node) -> None:
    """A saved non-leaf that lost its history through ``detach_()`` cannot be used (INPL-11)."""
    if type(edge_node) is not AccumulateGrad:
        raise RuntimeError(
            "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_(). "
            "This is not supported, please use out-of-place `.detach()` instead"
        )


_LEAF_SEQUENCE_NR = 2**63 - 1


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: accumulates into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        # the highest priority, as in PyTorch: a leaf's gradient is accumulated (and its hooks
        # run) as soon as it is complete, before other ready nodes
        self._seq = _LEAF_SEQUENCE_NR
        self._edges = ()
        self._nout = 1
        self.variable = variable
        # never None: the engine's one per-node test (``_extra is None``) then sends leaves to
        # its careful path (leaf tensor hooks, accumulate or not), plain op nodes to the fast one
        self._extra = _LEAF_EXTRA

    def name(self) -> str:
        return "AccumulateGrad"

    def _apply(self, grads: list, needs, create_graph: bool) -> tuple:
        g = grads[0]
        # a sum the engine made may become .grad itself, unless a hook was handed it (the hook
        # may keep it, and .grad is later accumulated into in place)
        owned = (
            type(grads) is GradSum
            and grads.owned is g
            and not self._extra.pre_hooks
            and not getattr(self.variable._meta, "leaf_hooks", None)
        )
        created = accumulate_into_leaf(self, g, create_graph, owned)
        if created is not None:
            # the first .grad stands for the incoming buffer (PyTorch "steals" it): post hooks
            # of this node see grad_outputs[0] is variable.grad (HOOK-14)
            grads[0] = created
        return ()


AccumulateGrad.__qualname__ = "AccumulateGrad"


def accumulator_of(t: Tensor):
    """The cached AccumulateGrad node of a leaf that requires grad (made on first use)."""
    meta = t._meta
    if meta is not None and meta.accumulator is not None:
        node = meta.accumulator()
        if node is not None:
            return node
    meta = get_meta(t)
    with LOCK:  # one node per leaf, also when threads record their first use at once
        ref = meta.accumulator
        node = None if ref is None else ref()
        if node is None:
            node = AccumulateGrad(t)
            meta.accumulator = weakref.ref(node)
    return node


class GradSum(list):
    """An engine buffer whose entry ``owned`` is a sum the engine made itself (a one-output
    node's gradient that arrived along several edges): nobody else holds it, so further
    gradients may be added into it in place and a leaf may keep it as its first ``.grad``."""

    __slots__ = ("owned",)


class ErrorNode(Node):
    """A node whose backward raises (used where differentiating again is not supported)."""

    __slots__ = ("_message", "_nin")

    def __init__(self, message: str, edges: tuple) -> None:
        self._init_base(next(_sequence))
        self._message = message
        self._edges = edges

    def name(self) -> str:
        return "Error"

    def _apply(self, grads, needs, create_graph):
        raise RuntimeError(self._message)
