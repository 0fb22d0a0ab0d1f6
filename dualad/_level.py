"""The Level protocol: how a transform level takes part in dispatch.

A level (a dual level, a vmap level, a function-transform tape) sits on this thread's level
stack (``_state``). ``dispatch`` asks the innermost level that ``owns`` an argument to
``process`` the op; the other methods are hooks where the layers below ask every level a
question (is this value tracked, how to draw random values), each with a default that means
"not mine", so a lower layer never needs to know which levels exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._opdef import OpDef
from ._state import GRAD, resume, suspend


class Level:
    """A transform level on the stack (a dual level, a vmap level, a function-transform tape).

    Subclasses say which values they own and how they process an op; ``process`` must run its
    rules with this level and the ones above it suspended (see ``suspended``).
    """

    __slots__ = ("alive", "index")
    alive: bool  # (the slots' types, for type checkers)
    index: int

    # ``process_in(stack, op, args, params)``: ``process`` given this thread's level stack
    # (which ``dispatch`` has in hand already), for levels on the hot path; None: ``process``
    process_in = None
    # ``process_alone(op, args, stack)``: ``process_in`` of an op without parameters while the
    # level is alone on the stack (one call less on the hottest path), called WITHOUT asking
    # ``owns`` first: it runs the op eagerly when it owns no argument; None: ``process_in``
    process_alone = None

    def owns(self, value: Any) -> bool:
        raise NotImplementedError

    def process(self, op: OpDef, args: tuple, params: dict):
        raise NotImplementedError

    def tracks(self, value: Any) -> bool:
        """Whether ``value`` carries a derivative (or a batch) of this level, so that turning
        it into a NumPy array or a Python number would lose it (``Tensor.item`` & co ask)."""
        return self.owns(value)

    # hooks through which code of a level below asks the levels above it (no import upward)
    def apply_function(self, cls: type, args: tuple):
        """Custom ``Function`` ``cls`` applied to ``args`` (one of them this level's): the
        call one level down plus this level's rule. Returns ``(outputs, is_tuple, ctx, kinds)``
        as ``rev.function.eager`` does."""
        raise RuntimeError(f"dualad.autograd.Function: {cls.__name__} cannot run at {self!r}")

    def make_dual_above(self, dual: Level, tensor: Any, tangent: Any):
        """``fwd.make_dual(tensor, tangent)`` at dual level ``dual`` below this level: the dual
        number when this level's values must hold it, else None (the levels below make it)."""
        return None

    def unpack_dual_above(self, dual: Level, tensor: Any):
        """``fwd.unpack_dual(tensor)`` at dual level ``dual`` below this level, of a value of
        this level: ``(primal, tangent)`` as this level's values, or None (unpacked as is)."""
        return None

    def draw_random(self, redraw: Callable, shape: tuple):
        """Random values of logical ``shape`` drawn for this level, or None to leave the draw
        to the levels below (every level but vmap's). ``redraw(shape)`` runs the random
        function again one level down (``dualad._creation``'s random functions ask)."""
        return None

    def conversion_error(self, value: Any, kind: str) -> Exception:
        """The error for conversion ``kind`` (a key of ``dualad._errors.ATTEMPTS``) of a value
        this level tracks: it names the level (as the user called it) and the fix."""
        raise NotImplementedError


def find_level(args: tuple) -> Level | None:
    """The innermost level of this thread's stack that owns one of ``args``."""
    for level in reversed(GRAD.levels):
        owns = level.owns
        for a in args:
            if owns(a):
                return level
    return None


class suspended:
    """Context manager: take ``level`` and every level above it off this thread's stack for a
    while."""

    __slots__ = ("level", "removed")

    def __init__(self, level: Level) -> None:
        self.level = level

    def __enter__(self):
        self.removed = suspend(self.level)

    def __exit__(self, *exc):
        resume(self.removed)
