"""``grad(..., is_grads_batched=True)``: one backward pass under a vmap level.

Invariant: the engine runs ONCE. The grad_outputs' first dimension is the batch; they enter the
backward pass as ``BatchedTensor`` cotangents of a fresh vmap level, so every VJP rule (a dualad
program) is batched by the ops' batching rules, and the captured gradients come out with the batch
dim first: ``(B, *input.shape)``. This is upstream's ``_vmap(vjp, 0, 0,
allow_none_pass_through=True)(grad_outputs)``. Consequences that the loop alternative would not
have: ``retain_graph=False`` frees the graph after the one pass, hooks and custom ``Function``
backwards run once on batched values, and ``.grad`` is never written (the engine runs with
``accumulate=False``). Unused inputs stay None (passed through unbatched).
"""

from __future__ import annotations

from .._state import pop_level, push_level
from ..rev.engine import run
from .api import _place_batch, _unwrap
from .batched import VmapLevel, active_vmap_levels, batched


def batched_grad(roots: list, grads: list, edges: list, retain_graph, create_graph) -> tuple:
    """Captured gradients of ``edges`` for the batched cotangents ``grads`` of ``roots``.

    ``grads[k]`` is None (an output that needs no gradient) or a Tensor of shape
    ``(B, *outputs[k].shape)`` (validated by ``rev.entry._make_grads``). Returns one entry per
    edge: a Tensor of shape ``(B, *input.shape)`` or None where no gradient flows.
    """
    positions = [k for k, g in enumerate(grads) if g is not None]
    if not positions or any(grads[k].ndim == 0 for k in positions):
        # an implicit ones_like(output) (grad_outputs=None) has no batch dim
        raise RuntimeError(
            "grad(..., is_grads_batched=True) requires grad_outputs whose first dimension is the "
            "batch dimension (got grad_outputs=None or a 0-d grad_output)"
        )
    sizes = [grads[k].shape[0] for k in positions]
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )

    def backward_pass(*cotangents):
        root_grads = list(grads)
        for k, ct in zip(positions, cotangents):
            root_grads[k] = ct
        return run(roots, root_grads, retain_graph, create_graph, accumulate=False, capture=edges)

    return _run_pass(backward_pass, tuple(grads[k] for k in positions), sizes[0])


def _run_pass(backward_pass, batch_args: tuple, size: int) -> tuple:
    """vmap over ``backward_pass`` with None outputs passed through (allow_none_pass_through)."""
    level = VmapLevel(len(active_vmap_levels()) + 1, size, "error")
    push_level(level)
    try:
        cotangents = [batched(a, 0, level) for a in batch_args]
        captured = backward_pass(*cotangents)
        unwrapped = [None if g is None else _unwrap(g, 0, level, "batched_grad") for g in captured]
    finally:
        pop_level(level)
        level.alive = False
    return tuple(
        None if pair is None else _place_batch(pair[0], pair[1], 0, size, "batched_grad", 0)
        for pair in unwrapped
    )
