"""A custom Function call's ctx as the transform levels above the bottom see it.

Each level's Function rule (``Level.apply_function``: ``fwd/function.py``, ``vmap/function.py``,
``func/grad_function.py``) runs the call one level down (itself and the levels above it
suspended) and hands the levels above a ctx of its own values:

Invariants:
- forward runs once per call, at the bottom, with one ctx. Each level above sees that ctx
  through a ``LevelCtx`` that lifts what was saved to the level's own values: a saved output
  becomes the level's output, a saved input the level's argument (so tangents and tracking the
  level attached to it are there), a batched value of the generated rule's vmap level a batched
  value of this vmap level; anything else (an intermediate) is a constant at the level, as in
  PyTorch's eager semantics. That matching is by identity, so a grad level passes one tensor
  standing for several argument slots (one tensor passed twice) down as distinct aliases.
- a vmap level that runs a user ``vmap`` staticmethod has no ctx for the levels above it; they
  build one with ``setup_context`` on their own values (``_ctx_by_setup``), and a ctx-style
  Function (forward(ctx, ...)) there is an error, not a silently different result.
"""

from __future__ import annotations

from .._dispatch import dispatch
from .._state import GRAD
from .._tensor import Tensor, _new
from .function import alias_op, set_fw_enabled
from .function_node import FunctionCtx, SavedTensors

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
        self._materialize_as(below)

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
            out[i] = dispatch(alias_op, (value,), {})
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
