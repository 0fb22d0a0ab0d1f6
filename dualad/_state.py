"""Global and thread-local state read on every op.

Invariant: ``LEVELS`` is the stack of active transform levels (dual levels, vmap levels, function
transform tapes), innermost last. While it is empty every op takes the fast path: impl call and
output wrap, plus a graph node when an input requires grad. Eager autograd is not on the stack:
it is the bottom level, always there.

``GRAD`` holds the per-thread autograd state (PyTorch semantics: grad mode, saved-tensor hooks and
the running backward passes are thread-local). The level stack is process-wide, like PyTorch's
dual levels and JAX's trace stack: transforms are not thread-safe.

``RECORD_HOOKS`` is the one flag the recording path reads for the rarely used features that must
see every recorded node (saved-tensor hooks in some thread, anomaly mode): while it is empty a
recorded node costs nothing more.
"""

from __future__ import annotations

import threading

# Active transform levels, innermost last. A list so that ``if LEVELS`` is the fast-path test.
LEVELS: list = []

# Live dual levels, outermost first (a subset of LEVELS, but stays set while a level processes an
# op with itself suspended: code that must know whether tangents may still arrive reads this).
DUAL_LEVELS: list = []

# Non-empty while some thread has saved-tensor hooks or anomaly mode is on: one token (a plain
# ``object()``, equal only to itself) per reason; ``append``/``remove`` are atomic under the GIL.
# Read on the recording path only.
RECORD_HOOKS: list = []

# Non-empty while allow_mutation_on_saved_tensors is active: in-place writes then first let it
# copy what graphs saved from the memory they write to. Read by in-place writes only.
MUTATION_WATCH: list = []


class _GradState(threading.local):
    enabled = True
    inference = False
    # saved-tensor hooks: (pack, unpack) pairs, innermost last (rev/saved.py); a tuple, so that
    # the class default is never shared mutable state
    saved_hooks: tuple = ()
    # the message of the innermost active disable_saved_tensors_hooks, else None
    saved_hooks_disabled = None
    # the node whose backward this thread is running (anomaly mode: parents of new nodes)
    current_node = None

    def __init__(self) -> None:
        self.tasks = []  # backward passes (rev.engine.GraphTask) running here, innermost last


GRAD = _GradState()
