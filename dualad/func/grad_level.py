"""The ``func.grad`` / ``func.vjp`` tape as a transform level on the dispatch stack.

Invariants:
- A ``GradTensor`` of grad level G wraps a value one level down (a plain ``Tensor``, a
  ``BatchedTensor`` of a vmap level below G, a dual tensor, a ``GradTensor`` of an outer grad
  level) and the graph edge ``(_gnode, _gnr)`` that produced it at G. Its shape and dtype are
  the value's (logical ones inside vmap). It has no eager history of its own (``_node`` None,
  ``_rg`` False): the eager tape and outer levels see the VALUES, never the wrapper.
- An op with an argument G owns runs one level down on the unwrapped values (G and the levels
  above it suspended), and G records a ``GradNode`` whose saved arguments/outputs are those
  values. Outputs are re-wrapped for G. Values of other levels are constants to G (identity
  test on the level object): that is what keeps nested grads free of perturbation confusion.
- Every argument slot (every pytree leaf) is its own input with its own ``GradLeaf``, also when
  the caller passes one tensor in several slots: then several wrappers hold the SAME value, so
  a VJP rule never reads ``args[i] is args[j]`` as "one input" (``mul`` gives both slots their
  partial; the engine sums them where the edges meet).
- The backward pass of G runs after G has left the stack, so the VJP rules (dualad ops) run on
  the values one level down: vmap levels below G batch them (per-example gradients), dual
  levels below G push tangents through them (forward-over-reverse), an outer grad level records
  them (grad of grad).
- A tensor rebound by G (an in-place change, a view rebuilt from its changed base) takes the
  new value's tangents at the dual levels active then, and keeps its own at the live dual
  levels suspended meanwhile (those above a custom Function that G runs for them): their rule
  updates those tangents afterwards (``grad_views._tangents_after``).
- Grad mode: G records while grad mode is on (an inner ``no_grad`` stops it); entering G turns
  grad mode on (an outer ``no_grad`` does not stop ``func.grad``), and the levels below G run
  with the grad mode that was in force outside G. The backward pass is recorded below G
  (``create_graph``) exactly when grad mode is on where it runs.
"""

from __future__ import annotations

import itertools

from .._dispatch import Level, dispatch
from .._errors import conversion_error
from .._state import GRAD, pop_level, push_level, resume, suspend
from .._tensor import Tensor, _new
from .._wrapper import LevelTensor, new_wrapper
from ..ops import astype
from ..rev.engine import run
from ..rev.node import ArgMeta, Node, _fill_missing, _validate
from ..vmap.batched import inplace_op_name
from .grad_views import (
    NOGRAD,
    _rebind,
    _register_views,
    check_inplace_view,
    propagate_inplace,
)

_FREED_MESSAGE = (
    "dualad.func: trying to run the backward of a grad level a second time: its saved values "
    "were freed (use dualad.func.vjp to differentiate the same function call several times)"
)
_sequence = itertools.count()  # execution order within one level's graph (later runs first)


class GradLevel(Level):
    """One active ``func.grad`` / ``func.vjp`` call: a tape recording on logical values."""

    __slots__ = ("outer_grad_mode", "title")
    kind = "grad"
    forbids_backward = False
    # apply_function (a custom Function call): func/grad_function.py, which builds on this
    # module, attaches it (dualad.func imports it)

    def __init__(self, index: int, outer_grad_mode: bool, title: str = "dualad.func.grad") -> None:
        self.index = index
        self.alive = True
        self.outer_grad_mode = outer_grad_mode
        self.title = title  # the transform as the user called it, for error messages

    def owns(self, value) -> bool:
        return type(value) is GradTensor and value._level is self

    def tracks(self, value) -> bool:
        # a value with a graph edge here, while this level records (grad mode on: under
        # no_grad its values are constants to it, as eager tensors that require grad are)
        return (
            type(value) is GradTensor
            and value._level is self
            and value._gnode is not None
            and GRAD.enabled
        )

    def conversion_error(self, value, kind: str) -> Exception:
        return conversion_error(
            self.title, f"that {self.title} differentiates (grad level {self.index})", kind
        )

    def process(self, op, args: tuple, params: dict):
        values = []
        needs = []
        edges = []
        for a in args:
            if type(a) is GradTensor and a._level is self:
                values.append(a._value)
                node = a._gnode
                if node is None:
                    needs.append(False)
                    edges.append(_NO_EDGE)
                else:
                    needs.append(True)
                    edges.append((node, a._gnr))
            else:
                values.append(a)
                needs.append(False)
                edges.append(_NO_EDGE)
        values = tuple(values)
        mode = GRAD.enabled
        removed = suspend(self)
        GRAD.enabled = mode and self.outer_grad_mode
        try:
            out = dispatch(op, values, params)
        finally:
            GRAD.enabled = mode
            resume(removed)
        if not (mode and op.differentiable and True in needs):
            if op.view and type(args[0]) is GradTensor and args[0]._level is self:
                # a view made without recording still shows its base's memory: wrapped (a
                # constant here) and registered, so that in-place changes of the base reach it
                return _constant_views(self, args[0], out, op, params)
            return out  # a constant at this level
        multi = isinstance(out, tuple)
        outs = out if multi else (out,)
        # the node's fields are set as the tape's record_node sets an OpNode's (rev/record.py):
        # alike on purpose, not shared, as a helper would add a call to record_node, the hot
        # path of every recorded op
        node = _new(GradNode)
        node._seq = next(_sequence)
        node._extra = None
        node._nout = len(outs)
        node._op = op
        node._params = params
        node._freed = False
        node._edges = tuple(edges)
        node._needs = needs
        if op.save_args:
            node._args = values
            node._versions = tuple([v._version if isinstance(v, Tensor) else None for v in values])
        else:
            node._args = tuple(
                [ArgMeta(tuple(v.shape), v.dtype) if isinstance(v, Tensor) else v for v in values]
            )
        if op.save_out:
            # (a custom Function that marks a value dirty writes one level down: check these)
            node._outs = outs
            node._out_versions = tuple(
                [o._version if isinstance(o, Tensor) else None for o in outs]
            )
        else:
            node._outs = node._out_versions = None
        node._out_meta = tuple((tuple(o.shape), o.dtype) for o in outs) if multi else None
        nondiff = op.nondiff_outputs
        wrapped = []
        for i, o in enumerate(outs):
            if i in nondiff or not isinstance(o, Tensor) or o.dtype.kind not in "fc":
                wrapped.append(o)
            else:
                wrapped.append(grad_tensor(o, self, node, i))
        if op.view:
            source = args[0]
            if type(source) is GradTensor and source._level is self:
                _register_views(source, wrapped, op, params, multi)
        return tuple(wrapped) if multi else wrapped[0]

    def __repr__(self) -> str:
        return f"<grad level {self.index}{'' if self.alive else ' (exited)'}>"


_NO_EDGE = (None, 0)


# ---------------------------------------------------------------------------------------------
# views made without recording (the rest of the views at a grad level: func/grad_views.py)


def _constant_views(level: GradLevel, source: GradTensor, out, op, params: dict):
    """The outputs of view op ``op`` on ``source`` made without recording, wrapped as constants
    of ``level`` and registered as views of source's base (marked as made without grad)."""
    multi = isinstance(out, tuple)
    wrapped = [
        grad_tensor(o, level, None, i) if isinstance(o, Tensor) and o.dtype.kind in "fc" else o
        for i, o in enumerate(out if multi else (out,))
    ]
    _register_views(source, wrapped, op, params, multi, marker=NOGRAD)
    return tuple(wrapped) if multi else wrapped[0]


def active_grad_levels() -> list:
    return [level for level in GRAD.levels if type(level) is GradLevel]


# ---------------------------------------------------------------------------------------------
# graph nodes of a grad level


class GradNode(Node):
    """One op recorded by a grad level: its VJP runs on the saved values one level down."""

    __slots__ = (
        "_args",
        "_freed",
        "_needs",
        "_op",
        "_out_meta",
        "_out_versions",
        "_outs",
        "_params",
        "_versions",
    )

    def name(self) -> str:
        return self._op.node_name

    def _apply(self, grads: list, needs, create_graph: bool) -> tuple:
        op = self._op
        if op.vjp is None:
            raise NotImplementedError(f"the derivative for '{op.name}' is not implemented.")
        args = self._args
        if self._freed or args is None:
            raise RuntimeError(_FREED_MESSAGE)
        if op.save_args:
            for i, version in enumerate(self._versions):
                if version is not None and args[i]._version != version:
                    raise RuntimeError(_modified_message(args[i], i, self, version))
        if self._out_versions is not None:
            outs = self._outs
            for i, version in enumerate(self._out_versions):
                if version is not None and outs[i]._version != version:
                    raise RuntimeError(_modified_message(outs[i], i, self, version, "output"))
        if needs is None:
            needs = self._needs
        if self._nout > 1:
            grads = _fill_missing(grads, self._out_meta)
        result = op.vjp(tuple(grads), self._outs, args, self._params, needs)
        return _validate(result, args, needs, self)

    def _release(self) -> None:
        self._freed = True
        self._args = None
        self._outs = None


def _modified_message(value, index: int, node: GradNode, expected: int, what="input") -> str:
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [dualad.Tensor {list(value.shape)}, dtype={value.dtype}], which is {what} "
        f"{index} of {node.name()} (recorded by dualad.func grad level), is at version "
        f"{value._version}; expected version {expected} instead."
    )


class GradLeaf(Node):
    """The capture point of one input of ``func.grad``/``func.vjp`` (its gradient is read, the
    node itself never runs)."""

    __slots__ = ()

    def __init__(self) -> None:
        self._init_base(next(_sequence))

    def name(self) -> str:
        return "GradLeaf"

    def _apply(self, grads, needs, create_graph) -> tuple:
        return ()


# ---------------------------------------------------------------------------------------------
# GradTensor


def grad_tensor(value, level: GradLevel, node, out_nr: int) -> GradTensor:
    """Wrap ``value`` (one level below ``level``) as tracked by ``level`` through ``node``."""
    out = new_wrapper(GradTensor, value, level)
    out._gnode = node
    out._gnr = out_nr
    out._gbase = None  # a view: the tracked tensor it views (its root base at this level)
    out._gchain = None  # a view: the view steps from that base
    out._gviews = None  # a base: weak references to its views
    return out


def unwrap(value, level: GradLevel):
    """``value`` without ``level``'s wrapper (anything else is returned as is)."""
    if type(value) is GradTensor and value._level is level:
        return value._value
    return value


class GradTensor(LevelTensor):
    """A tensor inside ``dualad.func.grad``/``vjp``: a value one level down plus its graph edge
    at that grad level. Ops and methods see the value's (logical) shape and dtype; conversions
    are refused while this level (or one above) tracks the tensor, else they are the value's
    (which checks the levels below, and raises inside vmap)."""

    __slots__ = ("_gbase", "_gchain", "_gnode", "_gnr", "_gviews")
    _level: GradLevel  # (the slots' types, for type checkers; see ``track`` for their meaning)
    _gnode: Node | None
    _gnr: int
    _gbase: GradTensor | None
    _gchain: tuple | None
    _gviews: list | None

    def requires_grad_(self, requires_grad: bool = True):
        raise NotImplementedError(
            f"dualad.func: requires_grad_() on a tensor tracked by grad level {self._level.index} "
            "is not supported (func.grad already differentiates with respect to it)"
        )

    def detach(self) -> Tensor:
        """The value without gradient tracking (at this level and below; batching stays)."""
        return self._value.detach()

    @property
    def data(self) -> Tensor:
        return self._value.data

    def _apply_inplace(self, functional, args: tuple, params: dict) -> GradTensor:
        """``self.op_(...)`` at this level: the functional op, recorded, then ``self`` stands
        for its result. Nothing is written one level down (the values saved for backward and
        the caller's inputs stay intact): tensors are REBOUND to new values.

        Views (PyTorch's CopySlices, functionally): an in-place op on a view rebinds its base
        to ``where(region, embed(result), base)`` (recorded, so the base's gradient reaches the
        op's inputs inside the region and its old history outside), then every view of that
        base is rebuilt from the new base, as are the views of a base changed in place.
        """
        check_inplace_view(self)
        result = functional(self, *args, **params)
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(result.shape)}"
            )
        if result.dtype != self.dtype:
            result = astype(result, self.dtype)
        _rebind(self, result)
        propagate_inplace(self)
        return self

    def _repr_head(self) -> str:
        state = "" if self._level.alive else " (exited)"
        return f"GradTrackingTensor(lvl={self._level.index}{state}"

    def _written_into_plain(self, name: str, target: Tensor) -> Exception:
        # (named for the transform the user called: this said "vmap: ... vmapped over" before)
        name = inplace_op_name(name)
        return RuntimeError(
            f"{self._level.title}: in-place op {name}_ writes a value that depends on the "
            f"transform's inputs into a tensor of shape {tuple(target.shape)} that the transform "
            "does not track (made from constants inside the function, or closed over): its "
            "derivative would be lost. Start from a tracked value instead (y = x * 0, "
            "x.clone()) or build the result out of place (dualad.stack, dualad.where, cat)."
        )

    def __reduce_ex__(self, protocol):
        raise RuntimeError("dualad.func: a tensor tracked by a grad level cannot be pickled")


# ---------------------------------------------------------------------------------------------
# entering, leaving, running backward


def enter(title: str = "dualad.func.grad") -> GradLevel:
    """Push a new grad level (grad mode on inside it); ``title`` names the transform the user
    called, for error messages."""
    level = GradLevel(len(active_grad_levels()) + 1, GRAD.enabled, title)
    push_level(level)
    GRAD.enabled = True
    return level


def leave(level: GradLevel) -> None:
    """Take ``level`` off this thread's stack and restore the grad mode of its caller."""
    pop_level(level)
    level.alive = False
    GRAD.enabled = level.outer_grad_mode


def track(value, level: GradLevel, what: str):
    """An input of the transform as a leaf of ``level`` (a GradTensor with a capture point)."""
    if not isinstance(value, Tensor):
        raise TypeError(
            f"dualad.func.{what}: expected the differentiated arguments to be Tensors, arrays or "
            f"numbers (or pytrees of them), got {type(value).__name__}"
        )
    if value.dtype.kind not in "fc":
        raise RuntimeError(
            f"dualad.func.{what}: only Tensors of floating point or complex dtype can be "
            f"differentiated (got an argument of dtype {value.dtype})"
        )
    return grad_tensor(value, level, GradLeaf(), 0)


def backward(level: GradLevel, outputs: list, cotangents: list, leaves: list, retain: bool):
    """Gradients (values one level down, None when unused) of ``outputs`` (wrapped values of
    ``level``'s graph or constants) with ``cotangents`` with respect to ``leaves`` (the
    ``GradLeaf`` nodes of the inputs).

    Runs with ``level`` off the stack, in the levels active now; recorded below when grad mode
    is on.
    """
    roots = []
    root_grads = []
    for out, ct in zip(outputs, cotangents):
        if type(out) is GradTensor and out._level is level and out._gnode is not None:
            roots.append((out._gnode, out._gnr))
            root_grads.append(ct)
    if not roots:
        return [None] * len(leaves)
    capture = [(leaf, 0) for leaf in leaves]
    return run(roots, root_grads, retain, GRAD.enabled, accumulate=False, capture=capture)


__all__ = ["GradLevel", "GradTensor"]
