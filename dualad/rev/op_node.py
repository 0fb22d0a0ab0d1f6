"""Graph nodes of registered ops: ``OpNode`` calls its op's VJP on what it saved.

Each op gets its own node class (``AddBackward0``, ``make_node_class``) whose ``_apply`` and
``_release`` are picked for what the op saves (nothing, its arguments, its output). Saved
tensors go through ``rev.saved`` (version checks, saved-tensor hooks: ``pack_node`` packs a
node recorded while hooks are active, and turns its class into the packed variant).
"""

from __future__ import annotations

from .._state import DUALS_LIVE
from .._tensor import Tensor, _new
from .node import Node, _check_not_detached, _fill_missing, _output_tensor, _validate
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
                        _output_tensor(self, out_data[0], 0, box, fw), 0, self, version, output=True
                    )
                )
            return (_output_tensor(self, out_data[0], 0, box, fw),)
        outs = []
        for i, (data, (box, version, fw)) in enumerate(zip(out_data, versions)):
            t = _output_tensor(self, data, i, box, fw)
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
    _saved_self = property(lambda self: self._saved_arg(0))
    _saved_other = property(lambda self: self._saved_arg(1))
    _saved_result = property(lambda self: self._saved_out(False))
    _raw_saved_self = property(lambda self: self._saved_arg(0, True))
    _raw_saved_other = property(lambda self: self._saved_arg(1, True))
    _raw_saved_result = property(lambda self: self._saved_out(True))

    def _saved_arg(self, index: int, raw: bool = False):
        """One saved argument: unpacked alone (a checkpoint's unpack recomputes per call), or
        ``raw``, the SavedTensor itself."""
        args = self._args
        if self._freed or args is None:
            raise RuntimeError(_FREED_MESSAGE)
        if not self._op.save_args or index >= len(args) or not _is_saved(args[index]):
            name = ("_raw_saved_" if raw else "_saved_") + ("self", "other")[index]
            raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")
        if raw:
            self._pack_saved()
            return self._args[index]
        if type(args) is not Packed:
            return self._unpack_args()[index]
        return args[index].unpack(self, index)

    def _saved_out(self, raw: bool):
        """The saved output: unpacked, or ``raw``, the SavedTensor itself."""
        if not self._op.save_out:
            name = "_raw_saved_result" if raw else "_saved_result"
            raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")
        saved = self._out_data
        if not raw and type(saved) is not Packed:
            return self._unpack_outputs()[0]
        if self._freed or saved is None:
            raise RuntimeError(_FREED_MESSAGE)
        if raw:
            self._pack_saved()
            return self._out_data[0]
        value = saved[0].unpack(self, 0)  # alone: a checkpoint recomputes per unpack
        box, version, _ = self._out_versions[0]
        if box[0] != version and (saved[0]._unpack is None or value._vc is box):
            raise RuntimeError(_version_message(value, 0, self, version, output=True))
        return value

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
    _apply_release = Node._apply_release
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


def _version_message(t: Tensor, index: int, node: Node, expected: int, output=False) -> str:
    current = 0 if t._vc is None else t._vc[0]
    return modified_message(t.shape, t.dtype, current, index, node, expected, output)


# The three ``_apply`` specialisations below are alike on purpose (same prologue and tail): each
# is the per-node backward path of one kind of op, where a shared helper would add a Python call
# per node; ``OpNode._apply`` is the general version. The two that save something are made twice
# by a factory: as ``_apply``, and as ``_apply_release``, which drops what the node saved once
# the VJP has returned (the engine's call per node when the graph is not retained: the release
# inline instead of a second call).
def _apply_unsaved(self, grads: list, needs, create_graph: bool) -> tuple:
    """``OpNode._apply`` of a one-output op that saved no tensor (add, sum, reshape, ...)."""
    args = self._args
    if needs is None:
        needs = self._needs
    return _validate(self._op.vjp((grads[0],), None, args, self._params, needs), args, needs, self)


def _saved_args_apply(release: bool):
    def apply(self, grads: list, needs, create_graph: bool) -> tuple:
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
        out = _validate(
            self._op.vjp((grads[0],), None, args, self._params, needs), args, needs, self
        )
        if release:
            self._freed = True  # first: see OpNode._unpack_args
            self._args = None
        return out

    return apply


def _saved_output_apply(release: bool):
    def apply(self, grads: list, needs, create_graph: bool) -> tuple:
        """``OpNode._apply`` of a one-output op that saved its output only (exp, tanh, ...)."""
        out_data = self._out_data  # read before checking: see OpNode._unpack_args
        if self._freed or out_data is None:
            raise RuntimeError(_FREED_MESSAGE)
        box, version, fw = self._out_versions[0]
        if box[0] != version:
            self._unpack_outputs()  # raises: modified in place since saved
        y = _new(Tensor)  # _output_tensor(self, out_data[0], 0, box, fw) inline: per-node path
        y._data = out_data[0]
        y._rg = True
        y._node = self
        y._out_nr = 0
        y._meta = None
        y._fw = fw or None
        y._fwsig = None
        y._vc = box
        y._view = None
        args = self._args
        if needs is None:
            needs = self._needs
        out = _validate(
            self._op.vjp((grads[0],), (y,), args, self._params, needs), args, needs, self
        )
        if release:
            self._freed = True
            self._out_data = None
        return out

    return apply


_apply_saved_args = _saved_args_apply(release=False)
_apply_release_saved_args = _saved_args_apply(release=True)
_apply_saved_output = _saved_output_apply(release=False)
_apply_release_saved_output = _saved_output_apply(release=True)


def _release_nothing(self) -> None:
    """``_release`` of a node that saved nothing: it can run again."""


def _release_args(self) -> None:
    self._freed = True  # first: see OpNode._unpack_args
    self._args = None


def _release_output(self) -> None:
    self._freed = True
    self._out_data = None


# the specialised ``_apply``s above: a node whose class has one of them is a one-output op node
# whose saved values are not packed (what ``tracing.graphs`` compiles whole passes of)
SPECIALISED_APPLIES = frozenset((_apply_unsaved, _apply_saved_args, _apply_saved_output))


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
            namespace["_apply_release"] = _apply_release_saved_args
            namespace["_release"] = _release_args
        elif op.save_out:
            namespace["_apply"] = _apply_saved_output
            namespace["_apply_release"] = _apply_release_saved_output
            namespace["_release"] = _release_output
        else:
            namespace["_apply"] = namespace["_apply_release"] = _apply_unsaved
            namespace["_release"] = _release_nothing
    return type(name, (OpNode,), namespace)


def pack_node(node, results: tuple) -> None:
    """Pack what op node ``node`` (just recorded, with outputs ``results``) saved."""
    op = node._op
    if op.save_args:
        args = node._args
        for a in args:
            if isinstance(a, Tensor):
                node._args = Packed([pack(a) if isinstance(a, Tensor) else a for a in args])
                break
    if op.save_out:
        node._out_data = Packed([pack(r, is_output=True, track_version=False) for r in results])
    node.__class__ = packed_class(type(node))
