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
- The backward pass of G runs after G has left the stack, so the VJP rules (dualad ops) run on
  the values one level down: vmap levels below G batch them (per-example gradients), dual
  levels below G push tangents through them (forward-over-reverse), an outer grad level records
  them (grad of grad).
- Grad mode: G records while grad mode is on (an inner ``no_grad`` stops it); entering G turns
  grad mode on (an outer ``no_grad`` does not stop ``func.grad``), and the levels below G run
  with the grad mode that was in force outside G. The backward pass is recorded below G
  (``create_graph``) exactly when grad mode is on where it runs.
"""

from __future__ import annotations

import itertools

from .._dispatch import Level, dispatch
from .._state import GRAD, LEVELS
from .._tensor import Tensor, _new
from ..rev.node import ArgMeta, Node, _fill_missing, _validate

_FREED_MESSAGE = (
    "dualad.func: trying to run the backward of a grad level a second time: its saved values "
    "were freed (use dualad.func.vjp to differentiate the same function call several times)"
)
_sequence = itertools.count()  # execution order within one level's graph (later runs first)


class GradLevel(Level):
    """One active ``func.grad`` / ``func.vjp`` call: a tape recording on logical values."""

    __slots__ = ("outer_grad_mode",)
    kind = "grad"
    forbids_backward = False

    def __init__(self, index: int, outer_grad_mode: bool) -> None:
        self.index = index
        self.alive = True
        self.outer_grad_mode = outer_grad_mode

    def owns(self, value) -> bool:
        return type(value) is GradTensor and value._level is self

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
        position = LEVELS.index(self)
        removed = LEVELS[position:]
        del LEVELS[position:]
        GRAD.enabled = mode and self.outer_grad_mode
        try:
            out = dispatch(op, values, params)
        finally:
            GRAD.enabled = mode
            LEVELS.extend(removed)
        if not (mode and op.differentiable and True in needs):
            return out  # a constant at this level
        multi = isinstance(out, tuple)
        outs = out if multi else (out,)
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
        node._outs = outs if op.save_out else None
        node._out_meta = tuple((tuple(o.shape), o.dtype) for o in outs) if multi else None
        nondiff = op.nondiff_outputs
        wrapped = []
        for i, o in enumerate(outs):
            if i in nondiff or not isinstance(o, Tensor) or o.dtype.kind not in "fc":
                wrapped.append(o)
            else:
                wrapped.append(grad_tensor(o, self, node, i))
        if op.view:
            # views and in-place ops do not mix at a grad level yet (see _apply_inplace)
            source = args[0]
            if type(source) is GradTensor and source._level is self:
                source._aliased = True
            for w in wrapped:
                if type(w) is GradTensor:
                    w._aliased = True
        return tuple(wrapped) if multi else wrapped[0]

    def __repr__(self) -> str:
        return f"<grad level {self.index}{'' if self.alive else ' (exited)'}>"


_NO_EDGE = (None, 0)


def active_grad_levels() -> list:
    return [level for level in LEVELS if type(level) is GradLevel]


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
        "_outs",
        "_params",
        "_versions",
    )

    def name(self) -> str:
        return self._op.node_cls.__name__

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


def _modified_message(value, index: int, node: GradNode, expected: int) -> str:
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [dualad.Tensor {list(value.shape)}, dtype={value.dtype}], which is input "
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
    out = _new(GradTensor)
    out._value = value
    out._level = level
    out._gnode = node
    out._gnr = out_nr
    out._aliased = False  # a view of another tracked tensor, or has views of its own
    out._rg = False
    out._node = None
    out._out_nr = 0
    out._meta = None
    out._fw = None
    out._vc = None
    out._view = None
    return out


def unwrap(value, level: GradLevel):
    """``value`` without ``level``'s wrapper (anything else is returned as is)."""
    if type(value) is GradTensor and value._level is level:
        return value._value
    return value


class GradTensor(Tensor):
    """A tensor inside ``dualad.func.grad``/``vjp``: a value one level down plus its graph edge
    at that grad level. Ops and methods see the value's (logical) shape and dtype."""

    __slots__ = ("_aliased", "_gnode", "_gnr", "_level", "_value")

    @property
    def _data(self):
        return self._value._data

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def ndim(self) -> int:
        return self._value.ndim

    def dim(self) -> int:
        return self._value.ndim

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def device(self):
        return self._value.device

    @property
    def is_cuda(self) -> bool:
        return self._value.is_cuda

    def size(self, dim: int | None = None):
        return self._value.size(dim)

    def numel(self) -> int:
        return self._value.numel()

    nelement = numel

    def __len__(self) -> int:
        return len(self._value)

    @property
    def requires_grad(self) -> bool:
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True):
        raise NotImplementedError(
            f"dualad.func: requires_grad_() on a tensor tracked by grad level {self._level.index} "
            "is not supported (func.grad already differentiates with respect to it)"
        )

    @property
    def _version(self) -> int:
        return self._value._version

    def detach(self) -> Tensor:
        """The value without gradient tracking (at this level and below; batching stays)."""
        return self._value.detach()

    @property
    def data(self) -> Tensor:
        return self._value.data

    # values: the value's (which raises inside vmap)
    def item(self):
        return self._value.item()

    def tolist(self):
        return self._value.tolist()

    def numpy(self, *, force: bool = False):
        return self._value.detach().numpy(force=force)

    def __array__(self, dtype=None, copy=None):
        return self._value.detach().__array__(dtype, copy)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __index__(self) -> int:
        return self._value.__index__()

    def _apply_inplace(self, functional, args: tuple, params: dict) -> GradTensor:
        """``self.op_(...)`` at this level: the functional op, recorded, then ``self`` stands
        for its result (the value below is rebound, not written: saved values stay intact).

        A view, or a tensor with views, would not see the change (no CopySlices at this level
        yet): that is an error rather than a silently different result."""
        if self._aliased:
            raise NotImplementedError(
                f"dualad.func: an in-place operation on a view (or on a tensor that has views) "
                f"inside func.grad/func.vjp (grad level {self._level.index}) is not supported "
                "yet; use the out-of-place op (e.g. y = y * 2 instead of y.mul_(2), or "
                "dualad.where / index_put for writes into part of a tensor)"
            )
        result = functional(self, *args, **params)
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(result.shape)}"
            )
        if result.dtype != self.dtype:
            from ..ops.elementwise import astype

            result = astype(result, self.dtype)
        if type(result) is GradTensor and result._level is self._level:
            self._value = result._value
            self._gnode = result._gnode
            self._gnr = result._gnr
        else:
            self._value = result
            self._gnode = None
            self._gnr = 0
        self._fw = result._fw
        return self

    def __repr__(self) -> str:
        body = repr(self._value).replace("\n", "\n    ")
        state = "" if self._level.alive else " (exited)"
        return f"GradTrackingTensor(lvl={self._level.index}{state}, value=\n    {body}\n)"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        raise RuntimeError("dualad.func: a tensor tracked by a grad level cannot be pickled")


# ---------------------------------------------------------------------------------------------
# entering, leaving, running backward


def enter() -> GradLevel:
    """Push a new grad level (grad mode on inside it)."""
    level = GradLevel(len(active_grad_levels()) + 1, GRAD.enabled)
    LEVELS.append(level)
    GRAD.enabled = True
    return level


def leave(level: GradLevel) -> None:
    """Take ``level`` off the stack and restore the grad mode of its caller."""
    if level in LEVELS:
        LEVELS.remove(level)
    level.alive = False
    GRAD.enabled = level.outer_grad_mode


def track(value, level: GradLevel, what: str):
    """An input of the transform as a leaf of ``level`` (a GradTensor with a capture point)."""
    if not isinstance(value, Tensor):
        raise TypeError(
            f"dualad.func.{what}: expected the differentiated arguments to be Tensors (or "
            f"pytrees of Tensors), got {type(value).__name__}"
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
    from ..rev.engine import run

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
