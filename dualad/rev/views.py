"""Keeping a view's grad_fn in step with its base.

A view records its base version when its grad_fn was made. When the base was changed in place
since (it has a new history), the view's grad_fn is rebuilt by replaying the view ops on the base,
so gradients through the view reach the base's current history (PyTorch's view regeneration).
"""

from __future__ import annotations

from .._state import GRAD
from .._tensor import Tensor


def replay_view(base: Tensor, replay: tuple) -> Tensor:
    """Apply the recorded view ops to ``base``."""
    from .._dispatch import dispatch

    out = base
    for op, params in replay:
        out = dispatch(op, (out,), params)
        if isinstance(out, tuple):  # multi-output views (unbind) keep their own index
            raise RuntimeError("dualad: cannot replay a multi-output view op")
    return out


def refresh_view_node(view: Tensor):
    """Return ``view``'s grad_fn, rebuilding it first if its base changed in place."""
    info = view._view
    base = info.base
    box = base._vc
    current = 0 if box is None else box[0]
    if info.version == current:
        return view._node
    if info.multi_output and (view._rg or base._rg):
        # the outputs of unbind/split/chunk cannot be replayed one by one: using one after its
        # base changed in place would silently differentiate the old values (PyTorch raises too)
        if not GRAD.enabled:
            return view._node  # nothing is recorded now; checked again when it is
        node = view._node
        name = node.name() if node is not None else "a multi-output view op"
        raise RuntimeError(
            f"Output {view._out_nr} of {name} is a view and its base or another view of its base "
            "has been modified inplace. This view is the output of a function that returns "
            "multiple views. Such functions do not allow the output views to be modified inplace. "
            "You should replace the inplace operation by an out-of-place one."
        )
    info.version = current
    if base._rg and not info.created_without_grad and not info.multi_output:
        previous = GRAD.enabled
        GRAD.enabled = True
        try:
            fresh = replay_view(base, info.replay)
        finally:
            GRAD.enabled = previous
        view._rg = True
        view._node = fresh._node
        view._out_nr = fresh._out_nr
        meta = view._meta
        if meta is not None and meta.retains_grad:
            from .hooks import move_retain_grad

            move_retain_grad(view, (view._node, view._out_nr))
    return view._node
