"""Tensor hooks, retain_grad and post-accumulate hooks.

A tensor hook belongs to the tensor's current (grad_fn, output_nr): after an in-place op the
tensor has a new grad_fn and hooks registered later go there, while earlier ones stay with the
old version (PyTorch semantics). Leaves keep their hooks in their own metadata, run just before
their AccumulateGrad node. References from graph to tensors are weak, so hooks never keep a
tensor alive.
"""

from __future__ import annotations

import weakref

from .._tensor import Tensor, get_meta
from .node import HookDict, RemovableHandle


def register_tensor_hook(t: Tensor, hook) -> RemovableHandle:
    if not t._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = t.grad_fn
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
    if meta.post_accumulate_hooks is None:
        meta.post_accumulate_hooks = HookDict()
    handle = RemovableHandle(meta.post_accumulate_hooks)
    meta.post_accumulate_hooks[handle.id] = hook
    return handle
