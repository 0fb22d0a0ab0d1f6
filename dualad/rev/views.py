"""Keeping a view's grad_fn in step with its base.

A view records its base version when its grad_fn was made. When the base was changed in place
since (it has a new history), the view's grad_fn is rebuilt by replaying the view ops on the base,
so gradients through the view reach the base's current history (PyTorch's view regeneration).
"""

from __future__ import annotations

from .._dispatch import dispatch
from .._state import GRAD
from .._tensor import Tensor
from .hooks import move_retain_grad


def replay_view(base: Tensor, replay: tuple) -> Tensor:
    """Apply the recorded view ops to ``base``."""
    out = base
    for op, params, index in replay:
        out = dispatch(op, (out,), params)
        if index is not None:  # which output of a multi-output view op (unbind, split)
            out = out[index]
    return out


def refresh_view_node(view: Tensor):
    """Return ``view``'s grad_fn, rebuilding it first if its base changed in place."""
    info = view._view
    base = info.base
    box = base._vc
    current = 0 if box is None else box[0]
    if info.version == current:
        return view._node
    if info.in_custom_function and (view._rg or base._rg):
        # replaying the view ops on the base would replace the Function's own backward (which
        # need not be the view's derivative): PyTorch refuses, as for an in-place op on it
        if not GRAD.enabled:
            return view._node
        raise RuntimeError(custom_view_message(_node_name(view), view._out_nr, indirect=True))
    if info.created_without_grad and base._rg:  # (a custom Function's view: above)
        # a view made in no_grad mode of a base that requires grad, after the base changed in
        # place: whether the change should reach it is ambiguous, so PyTorch refuses its use
        # with grad mode on (under no_grad it stays a constant)
        if not GRAD.enabled:
            return view._node
        raise RuntimeError(nograd_view_message(_node_name(view), view._out_nr, indirect=True))
    if info.multi_output and (view._rg or base._rg):
        # the outputs of unbind/split/chunk cannot be replayed one by one: using one after its
        # base changed in place would silently differentiate the old values (PyTorch raises too)
        if not GRAD.enabled:
            return view._node  # nothing is recorded now; checked again when it is
        raise RuntimeError(multi_output_message(view, "a multi-output view op"))
    info.version = current
    if base._rg and not info.created_without_grad and not info.multi_output:
        previous = GRAD.enabled
        GRAD.enabled = True
        try:
            fresh = replay_view(base, info.replay)
        finally:
            GRAD.enabled = previous
        # (as rebase_history gives an in-place op's result history to a plain tensor)
        view._rg = True
        view._node = fresh._node
        view._out_nr = fresh._out_nr
        meta = view._meta
        if meta is not None and meta.retains_grad:
            move_retain_grad(view, (view._node, view._out_nr))
    return view._node


def _node_name(view: Tensor):
    node = view._node
    return None if node is None else node.name()


def multi_output_message(view: Tensor, unnamed: str) -> str:
    """PyTorch's error for an output of unbind/split/chunk used (or written) after its base or a
    sibling changed in place; ``unnamed`` stands for a view without a grad_fn."""
    node = view._node
    name = node.name() if node is not None else unnamed
    return (
        f"Output {view._out_nr} of {name} is a view and its base or another view of its base "
        "has been modified inplace. This view is the output of a function that returns "
        "multiple views. Such functions do not allow the output views to be modified inplace. "
        "You should replace the inplace operation by an out-of-place one."
    )


def custom_view_message(name: str | None, out_nr: int, indirect: bool) -> str:
    """PyTorch's error for a view that a custom Function (``name``: its backward node) returned,
    or a view of one, when it or (``indirect``) its base or another view of its base is modified
    in place."""
    what = "its base or another view of its base has been" if indirect else "is being"
    if name:
        head = f"Output {out_nr} of {name} is a view and {what} modified inplace."
    else:  # (no grad_fn: the Function ran with no input requiring grad, as under no_grad)
        head = f"A view was created in no_grad mode and {what} modified inplace with grad mode "
        head += "enabled."
    return (
        f"{head} This view was created inside a custom Function (or "
        "because an input was returned as-is) and the autograd logic to handle view+inplace "
        "would override the custom backward associated with the custom Function, leading to "
        "incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
        "output of the custom Function."
    )


def nograd_view_message(name: str | None, out_nr: int, indirect: bool) -> str:
    """PyTorch's error for a view made in no_grad mode (``name``: the grad_fn of the view it
    is a view of, if any) modified, or (``indirect``) whose base is modified, in place with grad
    mode enabled."""
    what = "its base or another view of its base has been" if indirect else "is being"
    if name:
        prefix = f"Output {out_nr} of {name} is a view of a view which was created in"
    else:
        prefix = "A view was created in"
    return (
        f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled. Given that "
        "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
        "by moving both the view and the inplace either both inside the no_grad block (if you "
        "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
        "tracked)."
    )
