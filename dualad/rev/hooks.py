"""Tensor hooks, retain_grad and post-accumulate hooks.

A tensor hook belongs to the tensor's current (grad_fn, output_nr): after an in-place op the
tensor has a new grad_fn and hooks registered later go there, while earlier ones stay with the
old version (PyTorch semantics). Leaves keep their hooks in their own metadata, run just before
their AccumulateGrad node. References from graph to tensors are weak, so hooks never keep a
tensor alive.
"""

from __future__ import annotations

import weakref

from .._meta import get_meta
from .._state import LOCK
from .._tensor import Tensor
from .graph_task import current_graph_task
from .node import HookDict, RemovableHandle, accumulator_of


def register_tensor_hook(t: Tensor, hook) -> RemovableHandle:
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = t.grad_fn
    with LOCK:  # the hook tables are made on first use: threads registering at once share one
        if node is None:
            meta = get_meta(t)
            if meta.leaf_hooks is None:
                meta.leaf_hooks = HookDict()
            hooks = meta.leaf_hooks
        else:
            hooks = node._tensor_hooks_of(t._out_nr)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def install_retain_grad(t: Tensor) -> None:
    """Make the engine store the gradient of non-leaf ``t`` (after its tensor hooks) in t.grad."""
    meta = get_meta(t)
    node = t.grad_fn
    key = (node, t._out_nr)
    if meta.retains_grad and meta.retain_key is not None and meta.retain_key[0]() is node:
        return
    move_retain_grad(t, key)
    meta.retains_grad = True


def _unhook_retain_grad(meta) -> None:
    """Remove the retain-grad capture registered at ``meta.retain_key`` from its node."""
    old = meta.retain_key
    if old is not None:
        old_node, old_nr = old
        old_node = old_node() if isinstance(old_node, weakref.ref) else old_node
        if old_node is not None and old_node._retain:
            old_node._retain.pop(old_nr, None)


def drop_retain_grad(t: Tensor) -> None:
    """Stop capturing ``t``'s gradient (``detach_()`` made it a leaf)."""
    meta = get_meta(t)
    _unhook_retain_grad(meta)
    meta.retain_key = None
    meta.retains_grad = False


def move_retain_grad(t: Tensor, key) -> None:
    """Point the retain-grad capture of ``t`` at ``key`` = (node, output_nr) (after in-place)."""
    meta = get_meta(t)
    _unhook_retain_grad(meta)
    node, nr = key
    if node._retain is None:
        node._retain = {}
    node._retain[nr] = weakref.ref(t)
    meta.retain_key = (weakref.ref(node), nr)


def register_post_accumulate_hook(t: Tensor, hook) -> RemovableHandle:
    if t._node is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    meta = get_meta(t)
    with LOCK:  # made on first use: threads registering at once share one table
        if meta.post_accumulate_hooks is None:
            meta.post_accumulate_hooks = HookDict()
        hooks = meta.post_accumulate_hooks
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


# ---------------------------------------------------------------------------------------------
# hooks on several tensors


class MultiHandle:
    """Handle of a hook registered on several tensors: ``remove()`` removes all (idempotent)."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> MultiHandle:
    """Call ``fn`` once per backward pass in which gradients of ``tensors`` are computed.

    ``mode="all"``: ``fn(grads)`` with a tuple holding one gradient per tensor (None for those
    the pass does not compute), once all the pass computes are known. ``mode="any"``:
    ``fn(grad)`` with the first gradient computed, before the hooks of later nodes. Not called
    in a pass that computes none of them, nor ("all") in one that fails first. The progress of
    each pass is kept on the pass itself, so concurrent passes in several threads are
    independent.

    >>> import dualad
    >>> from dualad.autograd.graph import register_multi_grad_hook
    >>> a = dualad.tensor([1.0], requires_grad=True)
    >>> b = dualad.tensor([2.0], requires_grad=True)
    >>> seen = []
    >>> handle = register_multi_grad_hook((a, b), lambda grads: seen.append(grads))
    >>> (a * 3).sum().backward()
    >>> seen
    [(tensor([3.]), None)]
    """
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    tensors = tuple(tensors)
    key = object()  # this registration's entry in each pass's state
    if mode == "any":

        def any_hook(grad):
            task = current_graph_task()
            if key in task.state:
                return
            task.state[key] = True
            fn(grad)

        return MultiHandle(tuple(t.register_hook(any_hook) for t in tensors if t.requires_grad))

    # where each tensor's gradient arrives: its grad_fn, or (looked up during the pass: the
    # cached AccumulateGrad lives exactly as long as some graph uses it) the leaf itself
    places = [
        (t.grad_fn, None) if t.grad_fn is not None else (None, weakref.ref(t))
        for t in tensors
        if t.requires_grad
    ]
    count = len(tensors)

    def start(task) -> list:
        expected = 0
        for node, leaf in places:
            if node is None:
                leaf = leaf()
                node = None if leaf is None else accumulator_of(leaf)
            if node is not None and task.will_execute(node):
                expected += 1
        entry = [expected, [None] * count]
        task.state[key] = entry

        def flush() -> None:  # a gradient expected but never computed (a None one): call now
            if entry[0] > 0 and task.state.get(key) is entry:
                entry[0] = 0
                fn(tuple(entry[1]))

        task.callbacks.append(flush)
        return entry

    def make(index: int):
        def all_hook(grad):
            task = current_graph_task()
            entry = task.state.get(key)
            if entry is None:
                entry = start(task)
            entry[1][index] = grad
            entry[0] -= 1
            if entry[0] == 0:
                fn(tuple(entry[1]))

        return all_hook

    return MultiHandle(
        tuple(t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad)
    )
