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
"""

from __future__ import annotations

import itertools

from .._state import DUALS_LIVE
from .._tensor import Tensor, _new
from .saved import FREED_MESSAGE as _FREED_MESSAGE
from .saved import (
    Packed,
    SavedTensor,
    modified_message,
    pack,
    release_packed,
    unpack_args,
    unpack_outputs,
)

_hook_ids = itertools.count()


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
        hooks = self._pre_hooks
        if hooks is None:
            hooks = self._pre_hooks = HookDict()
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs) -> tuple | None`` runs after this node."""
        hooks = self._post_hooks
        if hooks is None:
            hooks = self._post_hooks = HookDict()
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

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
        from .._state import GRAD

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

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class OpNode(Node):
    """Node of a registered op: calls the op's VJP on the saved arguments."""

    __slots__ = (
        "_args",
        "_freed",
        "_needs",
        "_op",
        "_out_data",
        "_out_meta",
        "_out_versions",
        "_params",
        "_versions",
    )

    def _save_outputs(self, results: tuple) -> None:
        if len(results) == 1:  # the common case, without generator overhead
            r = results[0]
            box = r._vc
            if box is None:
                box = r._vc = [0]
            fw = r._fw
            if fw is None and DUALS_LIVE:
                # a dual level attaches the output's tangent after this node is recorded: share
                # the (still empty) tangent dict so the unpacked output sees it (fwd-over-rev)
                fw = r._fw = {}
            self._out_data = (r._data,)
            self._out_versions = ((box, box[0], fw),)
            return
        boxes = []
        for r in results:
            box = r._vc
            if box is None:
                box = r._vc = [0]
            fw = r._fw
            if fw is None and DUALS_LIVE:
                fw = r._fw = {}
            boxes.append((box, box[0], fw))
        self._out_data = tuple([r._data for r in results])
        self._out_versions = tuple(boxes)

    def _unpack_args(self) -> tuple:
        if self._op.save_args:
            # read before checking: another thread's backward may free concurrently (_release sets
            # _freed before dropping _args)
            args = self._args
            if self._freed or args is None:
                raise RuntimeError(_FREED_MESSAGE)
            versions = self._versions
            for i in range(len(args)):
                version = versions[i]
                if version is not None:
                    arg = args[i]
                    box = arg._vc
                    if (0 if box is None else box[0]) != version:
                        raise RuntimeError(_version_message(arg, i, self, version))
                    if not arg._rg and self._edges[i][0] is not None:
                        _check_not_detached(self._edges[i][0])
            return args
        return self._args  # ArgMeta stand-ins (shape, dtype) and Python scalars

    def _unpack_outputs(self) -> tuple | None:
        if not self._op.save_out:
            return None
        out_data = self._out_data
        if self._freed or out_data is None:
            raise RuntimeError(_FREED_MESSAGE)
        versions = self._out_versions
        if len(out_data) == 1:  # one output: no loop
            box, version, fw = versions[0]
            if box[0] != version:
                raise RuntimeError(
                    _version_message(
                        _saved_output(self, out_data[0], 0, box, fw), 0, self, version, output=True
                    )
                )
            return (_saved_output(self, out_data[0], 0, box, fw),)
        outs = []
        for i, (data, (box, version, fw)) in enumerate(zip(out_data, versions)):
            t = _saved_output(self, data, i, box, fw)
            if box[0] != version:
                raise RuntimeError(_version_message(t, i, self, version, output=True))
            outs.append(t)
        return tuple(outs)

    def _apply(self, grads: list, needs, create_graph: bool) -> tuple:
        op = self._op
        vjp = op.vjp
        if vjp is None:
            raise NotImplementedError(f"the derivative for '{op.name}' is not implemented.")
        if needs is None:
            needs = self._needs
        args = self._unpack_args() if op.save_args else self._args
        outs = self._unpack_outputs() if op.save_out else None
        if self._nout > 1:
            grads = _fill_missing(grads, self._out_meta)
        return _validate(vjp(tuple(grads), outs, args, self._params, needs), args, needs, self)

    def _release(self) -> None:
        op = self._op
        if op.save_args or op.save_out:
            self._freed = True  # first: see _unpack_args
            self._args = None
            self._out_data = None

    @property
    def saved_tensors(self) -> tuple:
        if not self._op.save_args:
            return ()
        args = self._unpack_args()
        return tuple(a for a in args if isinstance(a, Tensor))

    # PyTorch's generated names for what built-in nodes saved: ``_saved_self`` / ``_saved_other``
    # (the op's first / second argument), ``_saved_result`` (its output); ``_raw_saved_*`` give
    # the SavedTensor itself (e.g. to ``register_hooks`` on it)
    @property
    def _saved_self(self) -> Tensor:
        return self._saved_arg(0)

    @property
    def _saved_other(self) -> Tensor:
        return self._saved_arg(1)

    @property
    def _saved_result(self) -> Tensor:
        if not self._op.save_out:
            raise AttributeError(f"'{self.name()}' object has no attribute '_saved_result'")
        saved = self._out_data
        if type(saved) is not Packed:
            return self._unpack_outputs()[0]
        if self._freed or saved is None:
            raise RuntimeError(_FREED_MESSAGE)
        value = saved[0].unpack(self, 0)  # alone: a checkpoint recomputes per unpack
        box, version, _ = self._out_versions[0]
        if box[0] != version and (saved[0]._unpack is None or value._vc is box):
            raise RuntimeError(_version_message(value, 0, self, version, output=True))
        return value

    @property
    def _raw_saved_self(self) -> SavedTensor:
        return self._raw_saved_arg(0)

    @property
    def _raw_saved_other(self) -> SavedTensor:
        return self._raw_saved_arg(1)

    @property
    def _raw_saved_result(self) -> SavedTensor:
        if not self._op.save_out:
            raise AttributeError(f"'{self.name()}' object has no attribute '_raw_saved_result'")
        if self._freed or self._out_data is None:
            raise RuntimeError(_FREED_MESSAGE)
        self._pack_saved()
        return self._out_data[0]

    def _saved_arg(self, index: int) -> Tensor:
        """One saved argument, unpacked alone (a checkpoint's unpack recomputes per call)."""
        args = self._args
        if self._freed or args is None:
            raise RuntimeError(_FREED_MESSAGE)
        if not self._op.save_args or index >= len(args) or not _is_saved(args[index]):
            name = ("_saved_self", "_saved_other")[index]
            raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")
        if type(args) is not Packed:
            return self._unpack_args()[index]
        return args[index].unpack(self, index)

    def _raw_saved_arg(self, index: int) -> SavedTensor:
        args = self._args
        if self._freed or args is None:
            raise RuntimeError(_FREED_MESSAGE)
        if not self._op.save_args or index >= len(args) or not _is_saved(args[index]):
            name = ("_raw_saved_self", "_raw_saved_other")[index]
            raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")
        self._pack_saved()
        return self._args[index]

    def _pack_saved(self) -> None:
        """Turn the saved values into SavedTensor entries without hooks (for ``_raw_saved_*``:
        per-tensor hooks can then be registered on them)."""
        args = self._args
        if self._op.save_args and type(args) is not Packed:
            self._unpack_args()  # version checks first
            entries = list(args)
            for i, a in enumerate(args):
                if isinstance(a, Tensor):
                    saved = pack(a, use_hooks=False)
                    saved._version = self._versions[i]
                    entries[i] = saved
            self._args = Packed(entries)
        outs = self._out_data
        if self._op.save_out and type(outs) is not Packed:
            results = self._unpack_outputs()  # version checks first
            self._out_data = Packed(
                [pack(r, is_output=True, track_version=False, use_hooks=False) for r in results]
            )
        self.__class__ = packed_class(type(self))


class _PackedSaved:
    """Mixin of an op node whose saved values are ``Packed`` (saved-tensor hooks or per-tensor
    hooks): nodes switch to it when packed, so unpacking without hooks has no extra test."""

    __slots__ = ()

    # the general one: it unpacks through the methods below (not the specialised ones)
    _apply = OpNode._apply
    _release_saved = OpNode._release

    def _unpack_args(self) -> tuple:
        args = self._args  # read before checking: see OpNode._unpack_args
        if type(args) is not Packed:
            return super()._unpack_args()
        if self._freed:
            raise RuntimeError(_FREED_MESSAGE)
        return unpack_args(self, args)

    def _unpack_outputs(self) -> tuple | None:
        out_data = self._out_data
        if type(out_data) is not Packed:
            return super()._unpack_outputs()
        if self._freed:
            raise RuntimeError(_FREED_MESSAGE)
        outs = unpack_outputs(self, out_data)
        for i, (box, version, _) in enumerate(self._out_versions):
            # as for inputs: only memory shared with the output can have been changed
            if box[0] != version and (out_data[i]._unpack is None or outs[i]._vc is box):
                saved = out_data[i]
                raise RuntimeError(
                    modified_message(
                        saved._shape, saved._dtype, box[0], i, self, version, output=True
                    )
                )
        return outs

    def _release(self) -> None:
        args, outs = self._args, self._out_data
        self._release_saved()
        release_packed(args, outs)  # SavedTensors the user may hold fail from now on


_PACKED_CLASSES: dict = {}


def packed_class(cls: type) -> type:
    """The node class ``cls`` (an op's node class) switches to once its saved values are
    packed: same name (``type(node).__name__ == node.name()``), same slots."""
    if issubclass(cls, _PackedSaved):
        return cls
    packed = _PACKED_CLASSES.get(cls)
    if packed is None:
        packed = type(
            cls.__name__, (_PackedSaved, cls), {"__slots__": (), "__module__": cls.__module__}
        )
        packed.__qualname__ = cls.__qualname__
        packed = _PACKED_CLASSES.setdefault(cls, packed)  # one class, also under threads
    return packed


def _is_saved(entry) -> bool:
    return isinstance(entry, (Tensor, SavedTensor))


def _saved_output(node, data, index: int, box: list, fw) -> Tensor:
    """A saved output rebuilt as a Tensor whose grad_fn is ``node`` (no reference cycle while
    saved: the node keeps only the array)."""
    t = _new(Tensor)
    t._data = data
    t._rg = True
    t._node = node
    t._out_nr = index
    t._meta = None
    t._fw = fw or None
    t._vc = box
    t._view = None
    return t


def _fill_missing(grads: list, out_meta: tuple) -> list:
    """Multi-output nodes: outputs that received no gradient get zeros (rules need all)."""
    from .._creation import zeros_for

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
    from ..ops import astype, real, sum_to

    if not isinstance(g, Tensor):
        from .._creation import as_tensor

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


def _version_message(t: Tensor, index: int, node: Node, expected: int, output=False) -> str:
    current = 0 if t._vc is None else t._vc[0]
    return modified_message(t.shape, t.dtype, current, index, node, expected, output)


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
        created = _accumulate_into_leaf(self, g, create_graph, owned)
        if created is not None:
            # the first .grad stands for the incoming buffer (PyTorch "steals" it): post hooks
            # of this node see grad_outputs[0] is variable.grad (HOOK-14)
            grads[0] = created
        return ()


AccumulateGrad.__qualname__ = "AccumulateGrad"


def _accumulate_into_leaf(node: AccumulateGrad, g, create_graph: bool, owned: bool):
    """``rev.engine.accumulate_into_leaf`` (bound on first use: the engine imports this module)."""
    global _accumulate_into_leaf
    from .engine import accumulate_into_leaf

    _accumulate_into_leaf = accumulate_into_leaf
    return accumulate_into_leaf(node, g, create_graph, owned)


class GradSum(list):
    """An engine buffer whose entry ``owned`` is a sum the engine made itself (a one-output
    node's gradient that arrived along several edges): nobody else holds it, so further
    gradients may be added into it in place and a leaf may keep it as its first ``.grad``."""

    __slots__ = ("owned",)


class ErrorNode(Node):
    """A node whose backward raises (used where differentiating again is not supported)."""

    __slots__ = ("_message", "_nin")

    def __init__(self, message: str, edges: tuple) -> None:
        from .._dispatch import _sequence

        self._init_base(next(_sequence))
        self._message = message
        self._edges = edges

    def name(self) -> str:
        return "Error"

    def _apply(self, grads, needs, create_graph):
        raise RuntimeError(self._message)


def _apply_unsaved(self, grads: list, needs, create_graph: bool) -> tuple:
    """``OpNode._apply`` of a one-output op that saved no tensor (add, sum, reshape, ...)."""
    args = self._args
    if needs is None:
        needs = self._needs
    return _validate(self._op.vjp((grads[0],), None, args, self._params, needs), args, needs, self)


def _apply_saved_args(self, grads: list, needs, create_graph: bool) -> tuple:
    """``OpNode._apply`` of a one-output op that saved its arguments only (mul, sin, ...)."""
    args = self._args  # read before checking: see OpNode._unpack_args
    if self._freed or args is None:
        raise RuntimeError(_FREED_MESSAGE)
    for arg, version in zip(args, self._versions):
        if version is not None:
            box = arg._vc
            if (0 if box is None else box[0]) != version or not arg._rg:
                self._unpack_args()  # raises if modified (or detached) in place since saved
    if needs is None:
        needs = self._needs
    return _validate(self._op.vjp((grads[0],), None, args, self._params, needs), args, needs, self)


def _apply_saved_output(self, grads: list, needs, create_graph: bool) -> tuple:
    """``OpNode._apply`` of a one-output op that saved its output only (exp, tanh, ...)."""
    out_data = self._out_data  # read before checking: see OpNode._unpack_args
    if self._freed or out_data is None:
        raise RuntimeError(_FREED_MESSAGE)
    box, version, fw = self._out_versions[0]
    if box[0] != version:
        self._unpack_outputs()  # raises: modified in place since saved
    y = _new(Tensor)  # _saved_output, inline
    y._data = out_data[0]
    y._rg = True
    y._node = self
    y._out_nr = 0
    y._meta = None
    y._fw = fw or None
    y._vc = box
    y._view = None
    args = self._args
    if needs is None:
        needs = self._needs
    return _validate(self._op.vjp((grads[0],), (y,), args, self._params, needs), args, needs, self)


def _release_nothing(self) -> None:
    """``_release`` of a node that saved nothing: it can run again."""


def _release_args(self) -> None:
    self._freed = True  # first: see OpNode._unpack_args
    self._args = None


def _release_output(self) -> None:
    self._freed = True
    self._out_data = None


def make_node_class(name: str, op=None) -> type:
    """A Node subclass whose ``__name__`` is ``name`` (``type(node).__name__ == node.name()``).

    With ``op``, one-output ops get an ``_apply`` specialised to what the op saves (the engine
    calls it once per node, so the tests ``OpNode._apply`` makes are made here once instead).
    """
    namespace = {"__slots__": (), "__module__": "dualad.rev.node"}
    if op is not None and op.nout == 1 and op.vjp is not None:
        if op.save_args and op.save_out:
            pass  # the general OpNode._apply
        elif op.save_args:
            namespace["_apply"] = _apply_saved_args
            namespace["_release"] = _release_args
        elif op.save_out:
            namespace["_apply"] = _apply_saved_output
            namespace["_release"] = _release_output
        else:
            namespace["_apply"] = _apply_unsaved
            namespace["_release"] = _release_nothing
    return type(name, (OpNode,), namespace)
