"""Custom Functions at a vmap level: the ``vmap`` staticmethod, or the generated rule.

``VmapLevel.apply_function`` (see ``rev/function.py`` for how a call reaches a level; this module
attaches the rule to ``VmapLevel``, which it builds on):

- a Function with a ``vmap`` staticmethod: it runs on the values one level down with their batch
  dims (``in_dims``) and says where its outputs carry the batch (``out_dims``); the levels above
  get no ctx from it (``rev/function_ctx.py``);
- ``generate_vmap_rule = True``: a generated Function (``Vmapped<Name>``) runs one level down;
  its forward/backward/jvp run the user's under a fresh vmap level of the same size, and the
  user's ctx is seen at this level through ``_VmapCtx`` (saved values re-batched).
"""

from __future__ import annotations

from collections import namedtuple

from .._state import pop_level, push_level, resume, suspend
from .._tensor import Tensor
from ..ops import broadcast_to, movedim, unsqueeze
from ..ops import sum as sum_
from ..rev.function import FunctionMeta, run
from ..rev.function_ctx import LevelCtx, _lift_map
from ..rev.function_node import (
    DIRTY,
    NONDIFF,
    NONTENSOR,
    NORMAL,
    FunctionCtx,
    backward_method,
    check_count,
    function_base,
    overrides,
)
from .batched import BatchedTensor, VmapLevel, active_vmap_levels, batched

VmapInfo = namedtuple("VmapInfo", ["batch_size", "randomness"])
VmapInfo.__doc__ = "What a Function's ``vmap`` staticmethod learns about the vmap level."


def apply_function(level: VmapLevel, cls, args: tuple):
    """``VmapLevel.apply_function``: the Function's ``vmap`` staticmethod on the batched values,
    or with ``generate_vmap_rule = True`` the generated rule."""
    owns = level.owns
    values = tuple([a._value if owns(a) else a for a in args])
    in_dims = tuple([a._bdim if owns(a) else None for a in args])
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
        self._materialize_as(inner)

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
        self._materialize_as(inner)

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
            (function_base(cls),),
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


def _inner_call(ctx, jvp: bool, values, dims, call) -> list:
    """``call(user ctx, *values)`` with ``values`` batched along ``dims`` under a fresh vmap
    level (the user's backward or jvp): its results as ``(value below, bdim)`` pairs."""
    level = _enter(ctx._spec)
    try:
        view = _inner_view(ctx, level, jvp=jvp)
        wrapped = [
            v if v is None or d is None else batched(v, d, level) for v, d in zip(values, dims)
        ]
        return [_physical(r, level) for r in call(view, *wrapped)]
    finally:
        _leave(level)


def _generated_backward(ctx, *grads):
    spec = ctx._spec
    cls = spec.cls

    def backward(view, *wrapped):
        result = backward_method(cls)(view, *wrapped)
        return check_count(result, len(spec.in_dims), cls._backward_cls.__name__)

    physical = _inner_call(ctx, False, grads, spec.out_dims, backward)
    out = [None]
    for (g, bdim), in_dim in zip(physical, spec.in_dims):
        out.append(None if g is None else _to_dim(g, bdim, in_dim, spec.size, reduce=True))
    return tuple(out)


def _generated_jvp(ctx, _spec_tangent, *tangents):
    spec = ctx._spec
    cls = spec.cls

    def jvp(view, *wrapped):
        result = cls.jvp(view, *wrapped)
        return result if type(result) is tuple else (result,)

    physical = _inner_call(ctx, True, tangents, spec.in_dims, jvp)
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
    if target is None:
        if bdim is None:
            return value
        if reduce:
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


VmapLevel.apply_function = apply_function  # (the level's own rule; see the module docstring)
