"""``dualad.utils.checkpoint`` (PyTorch's ``torch.utils.checkpoint``): activation checkpointing.

The implementation lives in ``dualad.rev.checkpoint``; ``dualad.checkpoint`` and
``dualad.checkpoint_sequential`` are the same functions.
"""

from __future__ import annotations

from ..rev.checkpoint import (
    CheckpointError,
    checkpoint,
    checkpoint_sequential,
    noop_context_fn,
    set_checkpoint_early_stop,
)

__all__ = [
    "CheckpointError",
    "checkpoint",
    "checkpoint_sequential",
    "noop_context_fn",
    "set_checkpoint_early_stop",
]
