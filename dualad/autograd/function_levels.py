"""Custom Functions under transforms: what each kind of level does with ``Function.apply``.

A Function call goes to the innermost active level that owns one of its arguments, like an op,
and that level's rule runs the call one level down (itself and the levels above suspended):

- dual level: the call one level down, then the Function's ``jvp`` on this level's tangents;
- vmap level: the ``vmap`` staticmethod on the batched values, or with
  ``generate_vmap_rule = True`` a generated Function (``Vmapped<Name>``) one level down whose
  forward/backward/jvp run the user's under a fresh vmap level of the same size;
- ``func.grad`` level: the call one level down, then a ``FunctionGradNode`` at this level whose
  backward calls the Function's backward on the values one level down;
- no level: ``function.eager`` (forward once; a graph node when an input requires grad).

Invariants:
- forward runs once per call, at the bottom, with one ctx. Each level above sees that ctx
  through a ``LevelCtx`` that lifts what was saved to the level's own values: a saved output
  becomes the level's output, a saved input the level's argument (so tangents and tracking the
  level attached to it are there), a batched value of the generated rule's vmap level a batched
  value of this vmap level; anything else (an intermediate) is a constant at the level, as in
  PyTorch's eager semantics. That matching is by identity, so a grad level passes one tensor
  standing for several argument slots (one tensor passed twice) down as distinct aliases.
- a vmap level that runs a user ``vmap`` staticmethod has no ctx for the levels above it; they
  build one with ``setup_context`` on their own values, and a ctx-style Function (forward(ctx,
  ...)) there is an error, not a silently different result.
"""

from __future__ import annotations

from collections import namedtuple

from .._creation import zeros_like
from .._dispatch import dispatch, find_level
from .._errors import TrackedConversionError
from .._state import ACTIVE, GRAD, pop_level, push_level, resume, suspend
from .._tensor import Tensor, _new
from ..func.grad_level import _FREED_MESSAGE as _GRAD_FREED_MESSAGE
from ..func.grad_level import (
    CustomView,
    GradLevel,
    GradTensor,
    check_inplace_view,
    enter,
    grad_tensor,
    leave,
    propagate_inplace,
    register_steps,
    track,
)
from ..func.grad_level import _sequence as _grad_sequence
from ..func.grad_level import backward as level_backward
from ..fwd import _alias_op
from ..fwd.levels import DualLevel, set_fw_enabled
from ..ops import clone
from ..rev.function_node import (
    DIRTY,
    INPUT,
    NONDIFF,
    NONTENSOR,
    NORMAL,
    VIEW,
    FunctionCtx,
    SavedTensors,
    backward_method,
    check_count,
    run_backward,
)
from ..rev.node import Node
from ..vmap.batched import BatchedTensor, VmapLevel, active_vmap_levels, batched
from .function import Function, FunctionMeta, eager, overrides

VmapInfo = namedtuple("VmapInfo", ["batch_size", "randomness"])
VmapInfo.__doc__ = "What a Function's ``vmap`` staticmethod learns about the vmap level."


def run(cls, args: tuple):
    """``cls`` applied to ``args`` at the innermost level owning one of them (or eagerly).

    Returns ``(outputs, is_tuple, ctx, kinds)`` like ``function.eager``; ``ctx`` is valid at
    the caller's level (None where a user vmap staticmethod left none).
    """
    level = find_level(args) if ACTIVE else None
    if level is None:
        return eager(cls, args)
    kind = type(level)
    if kind is DualLevel:
        return _dual_rule(level, cls, args)
    if kind is GradLevel:
        return _grad_rule(level, cls, args)
    if kind is VmapLevel:
        return _vmap_rule(level, cls, args)
    raise RuntimeError(f"dualad.autograd.Function: {cls.__name__} cannot run at {level!r}")


# ---------------------------------------------------------------------------------------------
# the ctx at a level


class LevelCtx(FunctionCtx):
    """A Function call's ctx as one transform level sees it (see the module invariant).

    ``below`` is the ctx one level down; ``outputs`` the call's outputs at this level; ``lift``
    maps ``id(value one level down)`` to ``(that value, this level's value)``.
    """

    def __init__(self, below, outputs, lift: dict | None, needs_input_grad: tuple) -> None:
        self._below = below
        self._outputs = outputs
        self._lift = lift
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = below.materialize_grads
        self._materialize_non_diff_grads = below._materialize_non_diff_grads

    def __getattr__(self, name: str):
        # attributes forward set on the ctx (ctx.scale = ...), lifted to this level
        if name.startswith("__") or name == "_below":
            raise AttributeError(name)
        return self._lift_value(getattr(self._below, name))

    def _lift_value(self, value):
        lift = self._lift
        if lift is not None and isinstance(value, Tensor):
            hit = lift.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
        return value

    def _lift_from_bottom(self, value):
        return self._lift_value(self._below._lift_from_bottom(value))

    @property
    def saved_tensors(self) -> tuple:
        if self._in_jvp:
            return self._forward_entries()
        return tuple([value for value, _ in self._saved_entries()])

    def _saved_entries(self) -> list:
        outputs = self._outputs
        return [
            (outputs[nr], nr) if nr >= 0 else (self._lift_value(value), -1)
            for value, nr in self._below._saved_entries()
        ]

    def _forward_entries(self) -> tuple:
        return tuple([self._lift_value(v) for v in self._below._forward_entries()])


def _distinct_values(values: tuple, args: tuple) -> tuple:
    """``values`` (one level down, that level active) where one tensor stands for different
    arguments (the same tensor passed in two slots: two wrappers, or a wrapper and the plain
    tensor, hold one value) made distinct objects: aliases one level down. What the Function
    saves, and an output that is an input, are matched to the arguments by identity
    (``_lift_map``, the output kinds): with one object for two slots, a saved input was lifted
    to the wrong slot's wrapper (double backward sent its gradient to the other slot)."""
    seen: dict = {}
    out = None
    for i, (value, arg) in enumerate(zip(values, args)):
        if not isinstance(value, Tensor):
            continue
        first = seen.setdefault(id(value), i)
        if first != i and args[first] is not arg:
            if out is None:
                out = list(values)
            out[i] = dispatch(_alias_op, (value,), {})
    return values if out is None else tuple(out)


def _lift_map(values: tuple, args: tuple, outs_down: tuple, outs: tuple) -> dict:
    lift = {}
    for value, arg in zip(values, args):
        if value is not arg and isinstance(value, Tensor):
            lift[id(value)] = (value, arg)
    for value, out in zip(outs_down, outs):
        if value is not out and isinstance(value, Tensor):
            lift[id(value)] = (value, out)
    return lift


def _ctx_by_setup(cls, level, values: tuple, outputs: tuple, is_tuple: bool, needs: tuple):
    """A ctx for ``level`` when the call below left none (a vmap staticmethod ran there):
    ``setup_context`` on the values one level down."""
    if not cls._setup_ctx:
        raise RuntimeError(
            f"dualad.autograd.Function: {cls.__name__} ran its vmap staticmethod below {level!r}, "
            "which needs the Function's ctx at its own level. Define forward without ctx plus a "
            "setup_context staticmethod (PyTorch's requirement for Functions under function "
            "transforms), or use generate_vmap_rule = True."
        )
    node = _new(cls._backward_cls)
    node._seq = 0
    node._extra = None
    node._edges = ()
    node._freed = False
    node._saved = None
    node.needs_input_grad = needs
    grad_mode = GRAD.enabled
    state = GRAD
    fw_enabled = state.fw_enabled
    state.enabled = False
    set_fw_enabled(False)
    try:
        cls.setup_context(node, values, outputs if is_tuple else outputs[0])
    finally:
        state.enabled = grad_mode
        set_fw_enabled(fw_enabled)
    if node.to_save is not None:
        node._saved = SavedTensors.pack(node, node.to_save, outputs, False)
        node.to_save = None
    return node


def _needs(args: tuple) -> tuple:
    return tuple([isinstance(a, Tensor) and a.requires_grad for a in args])


# ---------------------------------------------------------------------------------------------
# dual levels: jvp


def _dual_rule(level: DualLevel, cls, args: tuple):
    tangents = []
    for a in args:
        fw = a._fw if isinstance(a, Tensor) else None
        tangents.append(None if fw is None else fw.get(level))
    input_tangents = list(tangents)
    removed = suspend(level)
    try:
        outputs, is_tuple, ctx, kinds = run(cls, args)
        if ctx is None:
            ctx = _ctx_by_setup(cls, level, args, outputs, is_tuple, _needs(args))
        has_jvp = overrides(cls, "jvp")
        if not has_jvp and not (overrides(cls, "backward") or overrides(cls, "vjp")):
            cls.jvp(ctx)  # raises "You must implement the jvp function ..."
        if ctx.materialize_grads or not has_jvp:
            for i, a in enumerate(args):
                if tangents[i] is None and isinstance(a, Tensor) and a.dtype.kind in "fc":
                    tangents[i] = zeros_like(a)
        if not has_jvp:
            out_tangents = _jvp_from_backward(cls, ctx, args, outputs, kinds, tangents)
            return _attach_derived(level, outputs, is_tuple, ctx, kinds, out_tangents, tangents)
        states = {
            j: _write_state(tangents[j])
            for kind, j in kinds
            if kind == DIRTY and tangents[j] is not None
        }
        view = LevelCtx(ctx, outputs, None, ctx.needs_input_grad)
        view._in_jvp = True
        out_tangents = cls.jvp(view, *tangents)
    finally:
        resume(removed)
    if type(out_tangents) is not tuple:
        out_tangents = (out_tangents,)
    if len(out_tangents) != len(outputs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(outputs)} but got {len(out_tangents)})"
        )
    attached = []
    for i, (o, t, (kind, j)) in enumerate(zip(outputs, out_tangents, kinds)):
        if kind in (NONTENSOR, NONDIFF):
            if t is not None:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {i}, but  the corresponding "
                    "forward output is not a differentiable Tensor.You should return None at "
                    "that position instead."
                )
            continue
        if kind == DIRTY:
            given = tangents[j]
            if given is None or not _written(given, states[j]):
                raise RuntimeError(
                    "An inplace custom Function is not modifying the forward mode gradients "
                    "inplace. If the forward is modifying an input inplace, then the jvp function "
                    "must modify the corresponding gradient inplace."
                )
            if t is not given:
                raise RuntimeError(
                    "An inplace custom Function is not returning the forward mode gradients "
                    "as-is. If the forward is modifying an input inplace, then the jvp function "
                    "must modify the gradient inplace and return it as-is."
                )
            if input_tangents[j] is None:
                level.attach(o, t)  # the materialised zeros, updated in place, are its tangent
            continue
        if t is None:
            continue
        if kind in (INPUT, VIEW):
            _check_view_tangent(t, tangents[j])
        elif any(t is s for s in input_tangents) or any(t is s for s in attached):
            t = clone(t)  # never share a tangent object another tensor owns (in-place safety)
        level.attach(o, t)
        attached.append(t)
    return outputs, is_tuple, ctx, kinds


def _write_state(tangent) -> tuple:
    """What changes when ``tangent`` is written in place: its version, and for a transform's
    wrapper the value it wraps (a grad level REBINDS its tensors to new values instead of
    writing them, so a jvp's ``t.mul_(...)`` on a tangent tracked by an outer ``func.grad``
    can leave the version as it was: jacrev(jacfwd(f)) raised that the jvp did not modify the
    tangent in place, also through vmap's wrapper of the grad level's, under jacfwd)."""
    state = [tangent._version]
    inner = getattr(tangent, "_value", None)
    while inner is not None:
        state.append(inner)  # (the objects, compared by identity: held, so never a reused id)
        inner = getattr(inner, "_value", None)
    return state


def _written(tangent, before: list) -> bool:
    """Whether ``tangent`` was written in place since ``_write_state`` gave ``before``."""
    after = _write_state(tangent)
    return after[0] != before[0] or any(a is not b for a, b in zip(after[1:], before[1:]))


def _no_jvp_error(cls) -> RuntimeError:
    return RuntimeError(
        "You must implement the jvp function for custom autograd.Function to use it with "
        f"forward mode AD. (dualad: {cls.__name__} has no jvp, and its backward is not a "
        "differentiable function of its gradient inputs (it is not written in dualad ops, or "
        "is @once_differentiable), so the tangents cannot be derived from it.)"
    )


def _jvp_from_backward(cls, ctx, args: tuple, outputs: tuple, kinds: tuple, tangents: list):
    """Output tangents of a Function without ``jvp``, from its backward (a VJP, linear in the
    output gradients ``u``): ``J t`` is the gradient of ``<backward(u), t>`` with respect to
    ``u``. A ``func.grad`` level records backward on ``u``, so this needs a backward written in
    dualad ops; one that is not (NumPy code, ``@once_differentiable``) raises instead of
    giving zero tangents."""
    level = enter(f"the forward-mode derivative of {cls.__name__} (from its backward)")
    try:
        us = []
        for o, (kind, _) in zip(outputs, kinds):
            if kind == NONTENSOR:
                us.append(None)
            elif kind == NONDIFF:
                us.append(zeros_like(o) if ctx.materialize_grads else None)
            else:
                us.append(track(zeros_like(o), level, "jvp"))
        view = LevelCtx(ctx, outputs, None, ctx.needs_input_grad)
        try:
            result = backward_method(cls)(view, *us)
        except TrackedConversionError as exc:
            # a backward in NumPy code converts the gradient inputs: PyTorch's error, not the
            # conversion's, whose level the user never entered
            raise _no_jvp_error(cls) from exc
        result = check_count(result, len(args), cls._backward_cls.__name__)
    finally:
        leave(level)
    roots = []
    cotangents = []
    for g, t in zip(result, tangents):
        if g is None or t is None:
            continue
        if not (type(g) is GradTensor and g._level is level and g._gnode is not None):
            raise _no_jvp_error(cls)
        roots.append(g)
        cotangents.append(t)
    leaves = [u._gnode for u in us if type(u) is GradTensor]
    derived = level_backward(level, roots, cotangents, leaves, retain=False) if roots else []
    derived = iter(derived)
    return tuple([next(derived, None) if type(u) is GradTensor else None for u in us])


def _attach_derived(level, outputs, is_tuple, ctx, kinds, out_tangents, tangents):
    """Give the outputs the tangents ``_jvp_from_backward`` derived (a dirty input's tangent is
    updated in place, as a jvp would have to)."""
    for o, t, (kind, _) in zip(outputs, out_tangents, kinds):
        if t is None or kind in (NONTENSOR, NONDIFF):
            continue
        if kind == DIRTY:
            fw = o._fw
            current = None if fw is None else fw.get(level)
            if current is not None:
                current.copy_(t)
                continue
        level.attach(o, t)
    return outputs, is_tuple, ctx, kinds


def _check_view_tangent(tangent, given) -> None:
    """An output that is an input (or a view of one) needs a jvp that returns a view of the
    input's tangent (PyTorch's checks; only for plain tensors, wrappers have no view info)."""
    if type(tangent) is not Tensor or type(given) is not Tensor:
        return
    if tangent._view is None:
        raise RuntimeError(
            "A custom Function's forward is returning a view (or an input as-is) but the jvp is "
            "not returning a view."
        )
    base = tangent._view.base
    if given._view is None:
        if base is not given:
            raise RuntimeError(
                "A custom Function is returning a view but the jvp is not returning a view of the "
                "given grad input."
            )
    elif base is not given._view.base:
        raise RuntimeError(
            "A custom Function is returning a view but the jvp is not returning a view of the same "
            "base as the given grad input."
        )


# ---------------------------------------------------------------------------------------------
# func.grad levels: a node that calls backward


class FunctionGradNode(Node):
    """A custom Function call recorded by a ``func.grad``/``vjp`` level."""

    __slots__ = (
        "_ctx",
        "_forward_cls",
        "_in_meta",
        "_kinds",
        "_name",
        "_nargs",
        "_needs",
        "_out_meta",
        "_positions",
    )

    _runs_undefined = True  # backward runs even when no output received a gradient (PyTorch)

    def name(self) -> str:
        return self._name

    def _apply(self, grads: list, needs, create_graph: bool) -> tuple:
        ctx = self._ctx
        if ctx is None:
            raise RuntimeError(_GRAD_FREED_MESSAGE)
        return run_backward(self, ctx, grads, needs)

    def _release(self) -> None:
        self._ctx = None

    @property
    def saved_tensors(self) -> tuple:
        ctx = self._ctx
        if ctx is None:
            raise RuntimeError(_GRAD_FREED_MESSAGE)
        return ctx.saved_tensors


def _grad_rule(level: GradLevel, cls, args: tuple):
    values = []
    needs = []
    edges = []
    for a in args:
        if type(a) is GradTensor and a._level is level:
            values.append(a._value)
            node = a._gnode
            needs.append(node is not None)
            edges.append((None, 0) if node is None else (node, a._gnr))
        else:
            values.append(a)
            needs.append(False)
            if isinstance(a, Tensor):
                edges.append((None, 0))
    values = tuple(values)
    mode = GRAD.enabled
    removed = suspend(level)
    GRAD.enabled = mode and level.outer_grad_mode
    try:
        values = _distinct_values(values, args)
        outputs, is_tuple, ctx, kinds = run(cls, values)
        recording = mode and True in needs
        needs_input_grad = tuple(needs) if recording else (False,) * len(args)
        if ctx is None and recording:
            ctx = _ctx_by_setup(cls, level, values, outputs, is_tuple, needs_input_grad)
    finally:
        GRAD.enabled = mode
        resume(removed)
    wrapped = list(outputs)
    if recording:
        positions = tuple([i for i, a in enumerate(args) if isinstance(a, Tensor)])
        node = _new(FunctionGradNode)
        node._seq = next(_grad_sequence)
        node._extra = None
        node._nout = len(outputs)
        node._edges = tuple(edges)
        node._forward_cls = cls
        node._name = cls._backward_cls.__name__
        node._kinds = kinds
        node._out_meta = tuple(
            [(tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None for o in outputs]
        )
        node._positions = positions
        node._nargs = len(args)
        node._needs = tuple([needs[p] for p in positions])
        node._in_meta = tuple([(tuple(values[p].shape), values[p].dtype) for p in positions])
        node._ctx = LevelCtx(ctx, outputs, None, needs_input_grad)
        for i, (o, (kind, j)) in enumerate(zip(outputs, kinds)):
            if kind == DIRTY:
                arg = args[j]
                if type(arg) is GradTensor and arg._level is level:
                    check_inplace_view(arg)
                    arg._value = o
                    arg._gnode = node
                    arg._gnr = i
                    wrapped[i] = arg
                    propagate_inplace(arg)  # a dirty view changes its base, as an in-place op
                    continue
            if kind in (NORMAL, INPUT, VIEW, DIRTY):
                wrapped[i] = grad_tensor(o, level, node, i)
                if kind != NORMAL and type(args[j]) is GradTensor and args[j]._level is level:
                    # it shows the memory of that argument: in-place changes of either must
                    # reach the other (the level rebinds values instead of writing them)
                    # (an input returned as-is is the whole input: no view step between)
                    steps = () if kind == INPUT else _view_steps(values[j], o)
                    marker = CustomView(node._name, i, steps is not None)
                    register_steps(args[j], wrapped[i], steps or (), marker)
    else:
        for i, (kind, j) in enumerate(kinds):
            if kind == DIRTY:
                wrapped[i] = args[j]  # the very argument, modified in place below
    wrapped = tuple(wrapped)
    if ctx is None:
        return wrapped, is_tuple, None, kinds  # (a level above that needs one makes its own)
    lift = _lift_map(values, args, outputs, wrapped)
    return wrapped, is_tuple, LevelCtx(ctx, wrapped, lift, needs_input_grad), kinds


def _view_steps(source, view):
    """The view steps ``(op, params, None)`` that give ``view`` from ``source`` (values one
    level below a grad level), or None where the levels there do not say."""
    if type(view) is GradTensor:  # an outer grad level registered it
        if view._gbase is None or type(source) is not GradTensor:
            return None
        prefix = source._gchain or ()
        root = source if source._gbase is None else source._gbase
        chain = view._gchain
        if view._gbase is not root or chain[: len(prefix)] != prefix:
            return None
        steps = chain[len(prefix) :]
        for op, marker, _ in steps:
            if op is None and type(marker) is CustomView and not marker.known:
                return None  # (the outer level does not know them either)
        return steps
    if type(view) is not Tensor or type(source) is not Tensor:
        return None
    info = view._view
    if info is None:
        return None
    # (an output of a multi-output view op, or a view of one, too: its chain link names which
    # output it is, and a grad level replays that index)
    stop = None
    if source._view is None:
        if info.base is not source:
            return None
    else:
        if info.base is not source._view.base:
            return None
        stop = source._view.chain
    steps = []
    link = info.chain
    while link is not stop:
        if link is None:
            return None  # source's chain is not a prefix of view's
        link, op, params, index = link
        steps.append((op, params, index))
    steps.reverse()
    return tuple(steps)


# ---------------------------------------------------------------------------------------------
# vmap levels


def _vmap_rule(level: VmapLevel, cls, args: tuple):
    values = []
    in_dims = []
    for a in args:
        if type(a) is BatchedTensor and a._level is level:
            values.append(a._value)
            in_dims.append(a._bdim)
        else:
            values.append(a)
            in_dims.append(None)
    values = tuple(values)
    in_dims = tuple(in_dims)
    has_vmap = overrides(cls, "vmap")
    if cls.generate_vmap_rule:
        if has_vmap:
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
                "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
                "delete the overridden vmap staticmethod to avoid ambiguity."
            )
        return _generated_rule(level, cls, args, values, in_dims)
    if not has_vmap:
        raise RuntimeError(
            f"To use autograd.Function with vmap, you must either override the vmap staticmethod "
            f"or set generate_vmap_rule=True. (dualad: {cls.__name__} at vmap level "
            f"{level.index})"
        )
    removed = suspend(level)
    try:
        result = cls.vmap(VmapInfo(level.size, level.randomness), in_dims, *values)
    finally:
        resume(removed)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(
            "Expected the vmap staticmethod to have two returns, an output and out_dims with "
            f"pytree structure compatible with the output. Got {type(result).__name__} from "
            f"{cls.__name__}.vmap"
        )
    out, out_dims = result
    is_tuple = type(out) is tuple
    outs = out if is_tuple else (out,)
    if is_tuple and not isinstance(out_dims, tuple):
        out_dims = (out_dims,) * len(outs)
    elif not is_tuple:
        out_dims = (out_dims,)
    if len(out_dims) != len(outs):
        raise RuntimeError(
            f"{cls.__name__}.vmap returned {len(outs)} outputs but out_dims {out_dims!r} has "
            f"{len(out_dims)} entries; they must have the same structure"
        )
    wrapped = []
    kinds = []
    for i, (o, d) in enumerate(zip(outs, out_dims)):
        if not isinstance(o, Tensor):
            if d is not None:
                raise RuntimeError(
                    f"{cls.__name__}.vmap: out_dims[{i}] is {d} but output {i} is not a Tensor"
                )
            wrapped.append(o)
            kinds.append((NONTENSOR, -1))
            continue
        wrapped.append(o if d is None else _batched_output(level, o, d, cls, i))
        kinds.append((NORMAL if o.dtype.kind in "fc" else NONDIFF, -1))
    return tuple(wrapped), is_tuple, None, tuple(kinds)


def _batched_output(level: VmapLevel, value, bdim: int, cls, index: int):
    shape = value.shape
    if bdim < 0:
        bdim += len(shape)
    if not 0 <= bdim < len(shape) or shape[bdim] != level.size:
        raise RuntimeError(
            f"dualad.vmap: {cls.__name__}'s vmap rule returned output {index} of shape "
            f"{tuple(shape)} with out_dim {bdim}, but the batch size at vmap level {level.index} "
            f"is {level.size}"
        )
    return batched(value, bdim, level)


# ---------------------------------------------------------------------------------------------
# generate_vmap_rule = True


class _Spec:
    """The static facts of one generated-rule call (a non-tensor argument of the generated
    Function, so it travels with the ctx through the levels below)."""

    __slots__ = ("cls", "in_dims", "is_tuple", "out_dims", "randomness", "size")

    def __init__(self, cls, in_dims: tuple, size: int, randomness: str) -> None:
        self.cls = cls
        self.in_dims = in_dims
        self.size = size
        self.randomness = randomness
        self.out_dims = None
        self.is_tuple = False


class _Batched:
    """A ctx attribute that was a batched value of the generated rule's vmap level."""

    __slots__ = ("bdim", "value")

    def __init__(self, value, bdim: int) -> None:
        self.value = value
        self.bdim = bdim


class _InnerCtx(FunctionCtx):
    """The ctx the user's forward fills inside the generated rule's vmap level."""


class _InnerView(FunctionCtx):
    """The user's ctx seen by backward/jvp under a fresh vmap level ``level``: saved values and
    batched attributes wrapped for it."""

    def __init__(self, inner, saved: tuple, forward_saved: tuple, level, lift) -> None:
        self._inner = inner
        self._saved_values = saved
        self._forward_values = forward_saved
        self._level = level
        self._lift = lift
        self.needs_input_grad = inner.needs_input_grad
        self.materialize_grads = inner.materialize_grads
        self._materialize_non_diff_grads = inner._materialize_non_diff_grads

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_inner":
            raise AttributeError(name)
        value = getattr(self._inner, name)
        if type(value) is _Batched:
            return batched(self._lift(value.value), value.bdim, self._level)
        return value

    @property
    def saved_tensors(self) -> tuple:
        return self._forward_values if self._in_jvp else self._saved_values


def _generated_rule(level: VmapLevel, cls, args: tuple, values: tuple, in_dims: tuple):
    spec = _Spec(cls, in_dims, level.size, level.randomness)
    generated = _generated_class(cls)
    removed = suspend(level)
    try:
        outputs, _, below, gen_kinds = run(generated, (spec, *values))
    finally:
        resume(removed)
    out_dims = spec.out_dims
    kinds = tuple([(kind, j - 1 if j > 0 else -1) for kind, j in gen_kinds])
    wrapped = []
    for o, d, (kind, j) in zip(outputs, out_dims, kinds):
        if kind == DIRTY and type(args[j]) is BatchedTensor and args[j]._level is level:
            wrapped.append(args[j])  # the very argument, its value modified in place below
        else:
            wrapped.append(o if d is None else batched(o, d, level))
    wrapped = tuple(wrapped)
    ctx = _VmapCtx(below, level, args, values, wrapped)
    return wrapped, spec.is_tuple, ctx, kinds


class _VmapCtx(LevelCtx):
    """The user's ctx at the vmap level of a generated-rule call (see the module invariant):
    a ``LevelCtx`` whose saved values are re-batched with the bdims the inner call recorded."""

    def __init__(self, below, level, args: tuple, values: tuple, outputs: tuple) -> None:
        self._below = below
        self._level = level
        self._outputs = outputs
        self._lift = _lift_map(values, args, (), ())
        inner = below._inner
        self._inner = inner
        self.needs_input_grad = tuple(below.needs_input_grad[1:])
        self.materialize_grads = inner.materialize_grads
        self._materialize_non_diff_grads = inner._materialize_non_diff_grads

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_inner", "_below"):
            raise AttributeError(name)
        value = getattr(self._inner, name)
        if type(value) is _Batched:
            return self._wrap(self._below._lift_from_bottom(value.value), value.bdim)
        return value

    def _wrap(self, value, bdim):
        if value is None:
            return None
        if bdim is None:
            return self._lift_value(value)
        lifted = self._lift_value(value)
        if lifted is not value and type(lifted) is BatchedTensor and lifted._bdim == bdim:
            return lifted  # the argument itself (keeps what levels above attached to it)
        return batched(value, bdim, self._level)

    def _saved_entries(self) -> list:
        bdims = self._inner._saved_bdims
        outputs = self._outputs
        return [
            (outputs[nr], nr) if nr >= 0 else (self._wrap(value, bdims[k]), -1)
            for k, (value, nr) in enumerate(self._below._saved_entries())
        ]

    def _forward_entries(self) -> tuple:
        bdims = self._inner._forward_bdims
        return tuple(
            [self._wrap(v, bdims[k]) for k, v in enumerate(self._below._forward_entries())]
        )


def _generated_class(cls):
    """``Vmapped<Name>``: a Function over the physical values whose forward, backward and jvp
    run the user's under a fresh vmap level (one per user class, cached)."""
    generated = cls.__dict__.get("_vmapped_cls")
    if generated is None:
        generated = FunctionMeta(
            f"Vmapped{cls.__name__}",
            (Function,),
            {
                "forward": staticmethod(_generated_forward),
                "backward": staticmethod(_generated_backward),
                "generate_vmap_rule": True,  # nested vmaps generate again, one level down
                "__module__": cls.__module__,
                # without a user jvp, forward mode derives one from the (generated) backward
                **({"jvp": staticmethod(_generated_jvp)} if overrides(cls, "jvp") else {}),
            },
        )
        cls._vmapped_cls = generated
    return generated


def _enter(spec: _Spec) -> VmapLevel:
    level = VmapLevel(len(active_vmap_levels()) + 1, spec.size, spec.randomness)
    push_level(level)
    return level


def _leave(level: VmapLevel) -> None:
    pop_level(level)
    level.alive = False


def _physical(value, level):
    """``(value below level, bdim)`` of a value at the generated rule's level."""
    if type(value) is BatchedTensor and value._level is level:
        return value._value, value._bdim
    return value, None


def _generated_forward(ctx, spec: _Spec, *values):
    cls = spec.cls
    level = _enter(spec)
    try:
        inputs = tuple(
            [v if d is None else batched(v, d, level) for v, d in zip(values, spec.in_dims)]
        )
        inner = _InnerCtx()
        inner.needs_input_grad = tuple(ctx.needs_input_grad[1:])
        if cls._setup_ctx:
            output = cls.forward(*inputs)
            cls.setup_context(inner, inputs, output)
        else:
            output = cls.forward(inner, *inputs)
        is_tuple = type(output) is tuple
        outs = output if is_tuple else (output,)
        physical = [_physical(o, level) for o in outs]
        saved = [_physical(t, level) for t in (inner.to_save or ())]
        forward_saved = [_physical(t, level) for t in (inner.saved_for_forward or ())]
        for name, value in list(vars(inner).items()):
            if type(value) is BatchedTensor and value._level is level:
                setattr(inner, name, _Batched(value._value, value._bdim))
        dirty = [_physical(t, level)[0] for t in (inner.dirty_tensors or ())]
        nondiff = [_physical(t, level)[0] for t in (inner.non_differentiable or ())]
    finally:
        _leave(level)
    inner.to_save = inner.saved_for_forward = None
    inner.dirty_tensors = inner.non_differentiable = None
    inner._saved_bdims = tuple([d for _, d in saved])
    inner._forward_bdims = tuple([d for _, d in forward_saved])
    ctx._inner = inner
    ctx._spec = spec
    ctx.save_for_backward(*[v for v, _ in saved])
    ctx.save_for_forward(*[v for v, _ in forward_saved])
    if dirty:
        ctx.mark_dirty(*dirty)
    if nondiff:
        ctx.mark_non_differentiable(*nondiff)
    ctx.set_materialize_grads(inner.materialize_grads)
    ctx._materialize_non_diff_grads = inner._materialize_non_diff_grads
    spec.out_dims = tuple([d for _, d in physical])
    spec.is_tuple = is_tuple
    return tuple([v for v, _ in physical])


def _inner_view(ctx, level: VmapLevel, jvp: bool) -> _InnerView:
    """The user's ctx for backward (or jvp) of the generated Function under ``level``."""
    inner = ctx._inner
    if jvp:
        values, bdims = ctx._forward_entries(), inner._forward_bdims
    else:
        values, bdims = [v for v, _ in ctx._saved_entries()], inner._saved_bdims
    wrapped = tuple(
        [v if v is None or d is None else batched(v, d, level) for v, d in zip(values, bdims)]
    )
    view = _InnerView(inner, wrapped, wrapped, level, ctx._lift_from_bottom)
    view._in_jvp = jvp
    return view


def _generated_backward(ctx, *grads):
    spec = ctx._spec
    cls = spec.cls
    level = _enter(spec)
    try:
        view = _inner_view(ctx, level, jvp=False)
        wrapped = [
            g if g is None or d is None else batched(g, d, level)
            for g, d in zip(grads, spec.out_dims)
        ]
        result = check_count(
            backward_method(cls)(view, *wrapped),
            len(spec.in_dims),
            cls._backward_cls.__name__,
        )
        physical = [_physical(g, level) for g in result]
    finally:
        _leave(level)
    out = [None]
    for (g, bdim), in_dim in zip(physical, spec.in_dims):
        out.append(None if g is None else _to_dim(g, bdim, in_dim, spec.size, reduce=True))
    return tuple(out)


def _generated_jvp(ctx, _spec_tangent, *tangents):
    spec = ctx._spec
    cls = spec.cls
    level = _enter(spec)
    try:
        view = _inner_view(ctx, level, jvp=True)
        wrapped = [
            t if t is None or d is None else batched(t, d, level)
            for t, d in zip(tangents, spec.in_dims)
        ]
        result = cls.jvp(view, *wrapped)
        if type(result) is not tuple:
            result = (result,)
        physical = [_physical(t, level) for t in result]
    finally:
        _leave(level)
    if len(physical) != len(spec.out_dims):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(spec.out_dims)} but got {len(physical)})"
        )
    out = [
        None if t is None else _to_dim(t, bdim, out_dim, spec.size, reduce=False)
        for (t, bdim), out_dim in zip(physical, spec.out_dims)
    ]
    return tuple(out) if len(out) != 1 else out[0]


def _to_dim(value, bdim, target, size: int, reduce: bool):
    """``value`` (batched along ``bdim`` or not at all) laid out with its batch at ``target``:
    moved, broadcast along a new dim, or summed away when ``target`` is None (the gradient of
    an argument every example shared)."""
    from ..ops import broadcast_to, movedim, unsqueeze

    if target is None:
        if bdim is None:
            return value
        if reduce:
            from ..ops import sum as sum_

            return sum_(value, bdim)
        raise RuntimeError(
            "dualad.vmap: a generated vmap rule produced a batched tangent for an output that is "
            "not batched"
        )
    if bdim is None:
        shape = list(value.shape)
        shape.insert(target, size)
        return broadcast_to(unsqueeze(value, target), tuple(shape))
    if bdim == target:
        return value
    return movedim(value, bdim, target)
