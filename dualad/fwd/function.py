"""Custom Functions at a dual level: the call one level down, then the Function's ``jvp``.

``DualLevel.apply_function`` (see ``rev/function.py`` for how a call reaches a level). The
tangents of the arguments at this level go into ``jvp``, whose results become the outputs'
tangents here, with PyTorch's checks: a dirty input's tangent is written in place and returned
as is, an input returned as-is (or a view of one) gets a view of its tangent. A Function without
``jvp`` gets tangents derived from its backward (``Function._jvp_from_backward``: that needs a
``func.grad`` tape level, which sits above this one, so the public ``Function`` class brings it).
"""

from __future__ import annotations

from .._creation import zeros_like
from .._state import resume, suspend
from .._tensor import Tensor
from .._wrapper import LevelTensor
from ..ops import clone
from ..rev.function import run
from ..rev.function_ctx import LevelCtx, _ctx_by_setup, _needs
from ..rev.function_node import DIRTY, INPUT, NONDIFF, NONTENSOR, VIEW, overrides


def apply_function(level, cls, args: tuple):
    """``DualLevel.apply_function``: the call one level down, then the Function's ``jvp`` on
    this level's tangents (without a jvp: tangents derived from its backward)."""
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
            out_tangents = cls._jvp_from_backward(ctx, args, outputs, kinds, tangents)
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
    while isinstance(tangent, LevelTensor):
        tangent = tangent._value
        state.append(tangent)  # (the objects, compared by identity: held, so never a reused id)
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


def _attach_derived(level, outputs, is_tuple, ctx, kinds, out_tangents, tangents):
    """Give the outputs the tangents ``Function._jvp_from_backward`` derived (a dirty input's
    tangent is updated in place, as a jvp would have to)."""
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
