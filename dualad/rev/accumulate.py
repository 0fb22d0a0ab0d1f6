"""Gradient accumulation into ``.grad``: leaves (``AccumulateGrad``) and retained grads.

Invariants:
- A leaf's first ``.grad`` is a copy (never an alias of a user's tensor or another leaf's grad),
  unless it is a sum the pass made itself that nobody else holds; later accumulation is in place
  unless ``create_graph`` (or either side requires grad or carries tangents).
- Accumulation is serialised by one lock: threads running backward passes into shared leaves
  add their gradients one at a time.
"""

from __future__ import annotations

import threading

from .._meta import get_meta
from .._state import GRAD
from .._tensor import Tensor
from ..ops import astype, clone, real, sum_to

# Serialises .grad accumulation (leaves, retained grads): threads running backward passes into
# shared leaves add their gradients one at a time.
_accumulate_lock = threading.RLock()


def _accumulate_retained(t: Tensor, g, create_graph: bool) -> None:
    meta = get_meta(t)
    with _accumulate_lock:
        if meta.grad is None:  # a copy, as PyTorch's retain_grad hook: never the user's tensor
            meta.grad = g.clone() if create_graph else g.detach().clone()
        elif create_graph:
            meta.grad = meta.grad + g
        else:
            meta.grad = meta.grad + g.detach()


def accumulate_into_leaf(node, g, create_graph: bool, owned: bool = False):
    """AccumulateGrad: add ``g`` into ``variable.grad`` (PyTorch's rules on copying and aliasing).

    ``owned``: ``g`` is a sum this pass made (nobody else holds it), so a first ``.grad`` can be
    ``g`` itself, as PyTorch steals an incoming buffer no one else references.
    Returns the new ``.grad`` tensor when this call created it (``.grad`` was None), else None.
    """
    var = node.variable
    if g is None:
        return
    data, var_data = g._data, var._data
    if data.dtype != var_data.dtype:
        if data.dtype.kind == "c" and var_data.dtype.kind != "c":
            g = real(g)
        g = astype(g, var_data.dtype)
    if data.shape != var_data.shape:
        g = sum_to(g, var_data.shape)
    meta = var._meta
    if meta is None:
        meta = get_meta(var)
    created = None
    with _accumulate_lock:
        current = meta.grad
        if current is None:
            # clone() keeps forward-mode tangents (forward-over-reverse gives dual grads);
            # without create_graph grad mode is off here, so it records nothing (nor does
            # the plain clone: a copy that shares no version counter with g)
            if create_graph or g._fw:
                created = g.clone()
            elif GRAD.levels:  # inside a transform of this thread
                created = g.detach().clone()
            elif owned and type(g) is Tensor and g._rg is False:
                created = g
            else:
                created = clone(g)
            meta.grad = created
        elif create_graph or current._rg or g._fw or current._fw:
            meta.grad = current + g
        else:
            data = current._data
            data += g._data
            current._bump_version()
    hooks = meta.post_accumulate_hooks
    if hooks:
        for fn in list(hooks.values()):
            if fn(var) is not None:
                raise RuntimeError("hooks should return None.")
    return created
