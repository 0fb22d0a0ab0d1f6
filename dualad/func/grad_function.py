"""Custom Functions at a ``func.grad`` level: a node whose backward calls the Function's.

``GradLevel.apply_function`` (see ``rev/function.py`` for how a call reaches a level; this module
attaches the rule to ``GradLevel``, which it builds on). The call runs one level down; when an
argument has a graph edge at the level and grad mode is on, a ``FunctionGradNode`` records it,
with a ``LevelCtx`` of the level's own values as the ctx its backward receives. Outputs that show
an argument's memory (an input returned as-is, a view, a dirty input) are registered as views of
it at the level, so in-place changes of either reach the other (the level rebinds values).
"""

from __future__ import annotations

from .._state import GRAD, resume, suspend
from .._tensor import Tensor, _new
from ..rev.function import run
from ..rev.function_ctx import LevelCtx, _ctx_by_setup, _distinct_values, _lift_map
from ..rev.function_node import DIRTY, INPUT, NORMAL, VIEW, run_backward
from ..rev.node import Node
from .grad_level import _FREED_MESSAGE, GradLevel, GradTensor, _sequence, grad_tensor
from .grad_views import CustomView, check_inplace_view, propagate_inplace, register_steps


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
            raise RuntimeError(_FREED_MESSAGE)
        return run_backward(self, ctx, grads, needs)

    def _release(self) -> None:
        self._ctx = None

    @property
    def saved_tensors(self) -> tuple:
        ctx = self._ctx
        if ctx is None:
            raise RuntimeError(_FREED_MESSAGE)
        return ctx.saved_tensors


def apply_function(level: GradLevel, cls, args: tuple):
    """``GradLevel.apply_function``: the call one level down, then a ``FunctionGradNode`` at
    this level (when an argument has a graph edge here and grad mode is on)."""
    owns = level.owns
    values = tuple([a._value if owns(a) else a for a in args])
    needs = [owns(a) and a._gnode is not None for a in args]
    # (an edge per tensor argument, as the eager node has)
    edges = [(a._gnode, a._gnr) if need else (None, 0) for a, need in zip(args, needs)]
    edges = [edge for a, edge in zip(args, edges) if isinstance(a, Tensor)]
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
        node._seq = next(_sequence)
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
        if (
            type(view) is type(source) and view.views_of_value and view._level is source._level
        ):  # (jit's traced values: their values are the views, as eagerly)
            return _view_steps(source._value, view._value)
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


GradLevel.apply_function = apply_function  # (the level's own rule; see the module docstring)
