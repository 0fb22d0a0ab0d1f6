"""Global and thread-local state read on every op.

Invariant: ``LEVELS`` is the stack of active transform levels (dual levels, vmap levels, function
transform tapes), innermost last. While it is empty every op takes the fast path: impl call and
output wrap, plus a graph node when an input requires grad. Eager autograd is not on the stack:
it is the bottom level, always there.

``GRAD.enabled`` is per thread (PyTorch semantics: grad mode is thread-local). The level stack is
process-wide, like PyTorch's dual levels and JAX's trace stack: transforms are not thread-safe.
"""

from __future__ import annotations

import threading

# Active transform levels, innermost last. A list so that ``if LEVELS`` is the fast-path test.
LEVELS: list = []

# Live dual levels, outermost first (a subset of LEVELS, but stays set while a level processes an
# op with itself suspended: code that must know whether tangents may still arrive reads this).
DUAL_LEVELS: list = []


class _GradState(threading.local):
    enabled = True
    inference = False


GRAD = _GradState()
