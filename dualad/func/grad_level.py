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
  updates those tangents afterwards (``_tangents_after``).
- Grad mode: G records while grad mode is on (an inner ``no_grad`` stops it); entering G turns
  grad mode on (an outer ``no_grad`` does not stop ``func.grad``), and the levels below G run
  with the grad mode that was in force outside G. The backward pass is recorded below G
  (``create_graph``) exactly when grad mode is on where it runs.
"""

from __future__ import annotations

import itertools
import weakref

from .._dispatch import Level, _aliases, _xp, dispatch
from .._errors import conversion_error
from .._state import GRAD, pop_level, push_level, resume, suspend
from .._tensor import Tensor, _new, wrap
from .._wrapper import LevelTensor, new_wrapper, unwrapped
from ..rev.engine import run
from ..rev.node import ArgMeta, Node, _fill_missing, _validate
from ..vmap.batched import inplace_batched_into_unbatched

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
# views at a grad level: which tracked tensor a view shows, rebuilt after in-place ops


# A view's chain holds its view steps ``(op, params, index)`` (``index``: which output of a
# multi-output view op) and, where the view was made without recording or returned by a custom
# Function, a marker step ``(None, kind, None)`` (kind NOGRAD or a CustomView; a Function's
# marker follows the Function's own view steps): views of such a view inherit the marker with the
# chain prefix, as PyTorch propagates a view's creation meta, and the latest of a CustomView
# marker and a multi-output step decides which error an in-place write of the view raises.
NOGRAD = "no_grad"


class CustomView:
    """The marker of a view that custom Function ``name`` returned as output ``out_nr``."""

    __slots__ = ("known", "name", "out_nr")

    def __init__(self, name: str, out_nr: int, known: bool) -> None:
        self.name = name
        self.out_nr = out_nr
        self.known = known  # False: the view steps (from the values below) are not known


def _marker(chain) -> object:
    """The creation marker of a view chain (the innermost one), or None."""
    kind = None
    for op, params, _ in chain or ():
        if op is None:
            kind = params
    return kind


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


def _register_views(
    source: GradTensor, outputs: list, op, params: dict, multi: bool, marker=None
) -> None:
    """Record ``outputs`` of the view op ``op`` as views of ``source``'s root base."""
    if op.view == "maybe":  # (reshape) a view only when the values below share memory
        out = next((w for w in outputs if type(w) is GradTensor), None)
        if out is None or not _aliases(unwrapped(out)._data, unwrapped(source)._data):
            return
    root = source if source._gbase is None else source._gbase
    prefix = () if source._gchain is None else source._gchain
    if marker is not None:
        prefix = (*prefix, (None, marker, None))
    views = root._gviews
    if views is None:
        views = root._gviews = []
    elif len(views) > 32:
        views[:] = [ref for ref in views if ref() is not None]
    for i, w in enumerate(outputs):
        if type(w) is GradTensor:
            w._gbase = root
            w._gchain = (*prefix, (op, params, i if multi else None))
            views.append(weakref.ref(w))


def register_steps(source: GradTensor, output: GradTensor, steps: tuple, marker) -> None:
    """Record ``output`` as the view of ``source`` that the view ``steps`` (``(op, params,
    index)``) give, marked ``marker``."""
    root = source if source._gbase is None else source._gbase
    prefix = () if source._gchain is None else source._gchain
    output._gbase = root
    # (the marker after the steps: they are the Function's own, so its creation is the latest,
    # e.g. over the unbind a Function ran: ``check_inplace_view``)
    output._gchain = (*prefix, *steps, (None, marker, None))
    views = root._gviews
    if views is None:
        views = root._gviews = []
    views.append(weakref.ref(output))


def _replay(base, chain: tuple):
    """The view ``chain`` applied to ``base`` (recorded at the levels active now)."""
    out = base
    for op, params, index in chain:
        if op is None:
            continue  # a marker
        out = dispatch(op, (out,), params)
        if index is not None:
            out = out[index]
    return out


def _zeros_laid_out_as(value):
    """Boolean zeros of ``value``'s logical shape whose dims are ordered in memory as one
    example of ``value`` is (under vmap the bottom array also holds batch dims, skipped here).
    The view chain was recorded on that layout: ``sin(x.mT)`` keeps x.mT's, and its
    ``b.mT.view(-1)`` is a view there but raised on C-ordered zeros."""
    dims = list(range(value.ndim))  # where each logical dim sits in the wrapped value
    inner = getattr(value, "_value", None)
    while inner is not None:
        bdim = getattr(value, "_bdim", None)  # (a vmap level's BatchedTensor adds its batch dim)
        if bdim is not None:
            dims = [d + (d >= bdim) for d in dims]
        value = inner
        inner = getattr(value, "_value", None)
    data = value._data
    xp = _xp(data)
    shape = tuple(data.shape[d] for d in dims)
    strides = [abs(data.strides[d]) for d in dims]
    order = sorted(range(len(dims)), key=lambda i: -strides[i])
    if order == sorted(order) or len(dims) < 2:
        return xp.zeros(shape, dtype=bool)  # C order: the common case
    from ..ops.shape import inverse_permutation

    permuted = xp.zeros(tuple(shape[d] for d in order), dtype=bool)
    return permuted.transpose(inverse_permutation(order))


def _write_view(base: GradTensor, chain: tuple, value):
    """``base`` with the region that ``chain`` views replaced by ``value``, in dualad ops (so
    recorded, differentiable and batchable): ``where(region, embed(value), base)``, where
    ``embed`` is the transpose of the view steps (it puts value into zeros of base's shape)."""
    from ..ops.elementwise import where

    stand_in = _zeros_laid_out_as(base)
    xp = _xp(stand_in)
    region = stand_in
    shapes = []
    chain = tuple([step for step in chain if step[0] is not None])  # (no markers)
    for op, params, _ in chain:
        shapes.append(tuple(region.shape))
        region = op.impl(xp, region, **params)
    if not region.flags.writeable or not _aliases(region, stand_in):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    region[...] = True
    embedded = value
    for (op, params, _), shape in zip(reversed(chain), reversed(shapes)):
        embedded = op.vjp((embedded,), None, (ArgMeta(shape, base.dtype),), params, (True,))[0]
    return where(wrap(stand_in), embedded, base)


def _rebind(target: GradTensor, new) -> None:
    """Make ``target`` stand for ``new`` (a value of target's level or a constant)."""
    if type(new) is GradTensor and new._level is target._level:
        target._value = new._value
        if new._gnode is not None or GRAD.enabled:  # (a constant made under no_grad: as below)
            target._gnode = new._gnode
            target._gnr = new._gnr
    else:
        target._value = new
        if GRAD.enabled:
            target._gnode = None
            target._gnr = 0
        # (under no_grad the history stays, as for an eager in-place op that is not recorded)
    target._fw = _tangents_after(target, new)


def _tangents_after(target: GradTensor, new):
    """The tangents ``target`` has once it stands for ``new``: ``new``'s, at the dual levels
    that computed it, and target's own at the live dual levels suspended meanwhile (levels above
    this one, while a custom Function runs below them: ``new`` cannot have their tangents, and
    their rule updates target's afterwards, as a Function's jvp writing the dirtied input's
    tangent in place, which reaches its views' tangents, views of it). Taking ``new``'s alone
    dropped a view's tangent there: jacrev(jacfwd(f)) of a view read after a Function marked
    its base dirty came out 0."""
    fw = new._fw if isinstance(new, Tensor) else None
    old = target._fw
    if old:
        active = GRAD.levels
        kept = {
            level: t
            for level, t in old.items()
            if level.alive and not any(level is a for a in active)
        }
        if kept:
            fw = kept if fw is None else {**fw, **kept}
    return fw


def _refresh_views(root: GradTensor) -> None:
    """Rebuild every live view of ``root`` from its current value and history."""
    views = root._gviews
    alive = []
    for ref in list(views):
        view = ref()
        if view is not None:
            alive.append(ref)
            marker = _marker(view._gchain)
            if marker is None:
                _rebind(view, _replay(root, view._gchain))
            else:
                _rebind_marked(view, root, marker)
    views[:] = alive  # (the rebuilt views registered themselves again: drop those)


def _rebind_marked(view: GradTensor, root: GradTensor, marker) -> None:
    """Give ``view`` (made without grad, or returned by a custom Function) the values of its
    base changed in place. Its history is not rebuilt from the base's: a view made without grad
    stays a constant; a custom Function's view keeps the Function's backward when the change was
    not recorded, and otherwise differentiating it raises PyTorch's error (rebuilding its history
    from the base would silently replace the Function's backward). A custom Function's view
    whose steps from its base are not known (see ``CustomView``) cannot be given the new values:
    any later use of it raises (the write itself, as in eager mode, is fine)."""
    if marker is not NOGRAD and not marker.known:
        # writing the base is fine (as in eager mode): only a use of the view's stale values
        # raises, there being no way to give it the new ones
        view._value = _StaleView(
            view._value,
            f"dualad.func: output {marker.out_nr} of {marker.name} is a view of a tensor that "
            f"was changed in place at grad level {root._level.index}, and dualad cannot rebuild "
            "that view (the Function ran on values of another transform, whose view relation "
            "is not tracked here). Clone the output of the custom Function.",
        )
        view._fw = None
        return
    previous = GRAD.enabled
    GRAD.enabled = False
    try:
        new = _replay(root, view._gchain)
    finally:
        GRAD.enabled = previous
    view._value = new._value if type(new) is GradTensor else new
    view._fw = _tangents_after(view, new)
    from ..rev.views import custom_view_message, nograd_view_message

    if marker is NOGRAD:
        if root._gnode is None:  # a constant view of a constant base: nothing is ambiguous
            view._gnode = None
            view._gnr = 0
            return
        # whether the change should reach the view is ambiguous: PyTorch refuses to use it
        # with grad mode on; here differentiating through it raises (its values stay readable)
        message = nograd_view_message(None, 0, indirect=True)
    elif previous and (view._gnode is not None or root._gnode is not None):
        message = custom_view_message(marker.name, marker.out_nr, indirect=True)
    else:
        return
    from ..rev.node import ErrorNode

    # (edges to the histories it stands between, so that backward passes reach it)
    edges = tuple([(n, nr) for n, nr in ((view._gnode, view._gnr), (root._gnode, root._gnr)) if n])
    view._gnode = ErrorNode(message, edges)
    view._gnode._nout = 1
    view._gnr = 0


class _StaleView(Tensor):
    """The value of a view (see ``_rebind_marked``) whose base changed in place when the grad
    level cannot rebuild it: reading its data (any op, conversion or repr) raises ``message``;
    its shape and dtype, which did not change, stay readable."""

    __slots__ = ("_device", "_dtype", "_message", "_shape")

    def __new__(cls, old, message: str):
        out = _new(cls)
        out._shape = tuple(old.shape)
        out._dtype = old.dtype
        out._device = old.device
        out._message = message
        out._fw = out._meta = out._node = out._vc = out._view = None
        out._out_nr = 0
        out._rg = False
        return out

    def __init__(self, old, message: str) -> None:
        pass

    @property
    def _data(self):
        raise RuntimeError(self._message)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device


def check_inplace_view(target: GradTensor) -> None:
    """Refuse in-place changes that PyTorch refuses on views: of one output of a multi-output
    view op, and (when recorded) of a view that a custom Function returned or that was made
    without grad."""
    chain = target._gchain
    if target._gbase is None:
        return
    # the latest of a custom Function's view and a multi-output view op decides (PyTorch's
    # creation meta): a Function's view of an unbind output refuses as the Function's view
    last = max([i for i, step in enumerate(chain) if type(step[1]) is CustomView], default=-1)
    if any(step[2] is not None for step in chain[last + 1 :]):
        raise RuntimeError(_multi_output_message(chain[last + 1 :]))
    marker = _marker(chain)
    if marker is None or not GRAD.enabled:
        return
    if target._gnode is None and target._gbase._gnode is None:
        return  # nothing tracked: nothing to corrupt
    from ..rev.views import custom_view_message, nograd_view_message

    if marker is NOGRAD:
        raise RuntimeError(nograd_view_message(None, 0, indirect=False))
    raise RuntimeError(custom_view_message(marker.name, marker.out_nr, indirect=False))


def propagate_inplace(target: GradTensor) -> None:
    """After ``target`` was rebound to the result of an in-place change (an in-place op, or a
    custom Function that marked it dirty): its root base, when ``target`` is a view, becomes
    ``where(region, embed(target), base)`` (PyTorch's CopySlices, functionally), and every view
    of that base is rebuilt from it."""
    root = target._gbase
    if root is None:
        if target._gviews:
            _refresh_views(target)
        return
    _rebind(root, _write_view(root, target._gchain, target))
    _refresh_views(root)


def _multi_output_message(chain: tuple) -> str:
    op = next(op for op, _, index in chain if index is not None)
    index = next(index for _, _, index in chain if index is not None)
    return (
        f"Output {index} of {op.node_cls.__name__} is a view and is being modified inplace. "
        "This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."
    )


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
            from ..ops.elementwise import astype

            result = astype(result, self.dtype)
        _rebind(self, result)
        propagate_inplace(self)
        return self

    def _repr_head(self) -> str:
        state = "" if self._level.alive else " (exited)"
        return f"GradTrackingTensor(lvl={self._level.index}{state}"

    def _written_into_plain(self, name: str, target: Tensor) -> Exception:
        # (vmap's error, as before the wrappers shared a base: a message naming the grad level
        # would be a behaviour change of its own; programs that catch "vmap" rely on it)
        return inplace_batched_into_unbatched(name, target, self)

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
