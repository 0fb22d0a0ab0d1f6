"""What the engine runs around a node's backward: its tensor hooks (and retained grads), its
pre- and post-hooks, and the gradients of a node reached without any (all undefined).

A hook returning None keeps the value it was given; a pre/post hook's replacement must have as
many values as it was given.
"""

from __future__ import annotations

from .._state import GRAD
from .accumulate import _accumulate_retained
from .node import AccumulateGrad


def _undefined_grads(node) -> list | None:
    """The gradients of a node none of whose outputs received one (all undefined), or None
    when it has nothing to run. PyTorch still runs such a node: its tensor hooks see None, a
    custom Function's backward runs (with zeros, or None after ``set_materialize_grads(False)``);
    an op node's or a leaf's result is undefined in turn unless a hook gave a gradient."""
    grads = [None] * node._nout
    _run_tensor_hooks(node, grads)
    if node._runs_undefined:
        return grads
    for g in grads:
        if g is not None:
            return grads
    return None


def _run_tensor_hooks(node, grads: list) -> None:
    if type(node) is AccumulateGrad:
        meta = node.variable._meta
        hooks = None if meta is None else meta.leaf_hooks
        if hooks:
            grads[0] = _call_tensor_hooks(hooks, grads[0])
    else:
        table = node._tensor_hooks
        if table:
            for nr, hooks in list(table.items()):
                if hooks:
                    grads[nr] = _call_tensor_hooks(hooks, grads[nr])
    retain = node._retain
    if retain:
        for nr, ref in list(retain.items()):
            t = ref()
            if t is not None and grads[nr] is not None:
                _accumulate_retained(t, grads[nr], GRAD.enabled)


def _call_tensor_hooks(hooks, g):
    for fn in list(hooks.values()):
        replaced = fn(g)
        if replaced is not None:
            g = replaced
    return g


def _checked(fn, replaced, expected: int):
    """A pre/post hook's result: None (keep) or as many values as ``expected``."""
    if replaced is not None and (
        not isinstance(replaced, (tuple, list)) or len(replaced) != expected
    ):
        raise RuntimeError(
            f"hook '{getattr(fn, '__name__', fn)}' has returned an incorrect number of "
            f"values (got {len(replaced) if isinstance(replaced, (tuple, list)) else 1}, "
            f"but expected {expected})"
        )
    return replaced


def _run_pre_hooks(node, grads: list) -> list:
    for fn in list(node._pre_hooks.values()):
        replaced = _checked(fn, fn(tuple(grads)), len(grads))
        if replaced is not None:
            grads = list(replaced)
    return grads


def _run_post_hooks(node, out: tuple, grads: list) -> tuple:
    for fn in list(node._post_hooks.values()):
        replaced = _checked(fn, fn(tuple(out), tuple(grads)), len(out))
        if replaced is not None:
            out = tuple(replaced)
    return out
