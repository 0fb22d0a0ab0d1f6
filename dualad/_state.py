"""Global and thread-local state read on every op.

Invariants:
- Each thread has its own stack of active transform levels (dual levels, vmap levels, function
  transform tapes), innermost last: ``GRAD.levels``. A level is pushed and popped by one thread
  (``push_level``/``pop_level``), and processing an op suspends levels of that thread's stack
  only (``suspend``/``resume``). Eager autograd is not on the stack: it is the bottom level,
  always there.
- ``ACTIVE`` is process-wide. It holds a thread's token (``GRAD.levels.token``) exactly while
  that thread's stack is non-empty (``append``/``remove`` are atomic under the GIL).
  ``if ACTIVE`` (then ``if GRAD.levels``) is the per-op fast-path test: while no thread holds
  a level it is one truthiness test and every op takes the fast path (impl call and output
  wrap, plus a graph node when an input requires grad); while another thread holds one, a
  thread without levels pays one thread-local read more and still takes the fast path
  (``dispatch`` too reads this thread's stack only). Every stack change goes through the
  functions below, which keep ``ACTIVE`` in step. ``ACTIVE`` also holds ``_dtypes``' token
  while the default dtype is not float64 (the fast callers then take the path that converts
  results to it), so that the fast path keeps its one test.
- ``DUALS_LIVE`` lists the live dual levels of all threads, for code that only needs to know
  whether tangents may still arrive (a conservative superset for one thread).
- ``GRAD`` holds the rest of the per-thread state (PyTorch semantics: grad mode, forward grad
  mode, anomaly mode, saved-tensor hooks and the running backward passes are thread-local;
  functorch's dynamic layer stack is too). Live dual levels are per thread (``GRAD.duals``).
- ``RECORD_HOOKS`` is the one flag the recording path reads for the rarely used features that
  must see every recorded node (saved-tensor hooks or anomaly mode in some thread): while it is
  empty a recorded node costs nothing more.
- Shared mutable state (``.grad`` accumulation, lazily created tensor metadata, version counters
  and accumulator nodes) is guarded by ``LOCK`` on its rare creation step only (double-checked),
  never on the per-op path.
"""

from __future__ import annotations

import threading

# One token per thread whose level stack is non-empty. A list so that ``if ACTIVE`` is the
# fast-path test.
ACTIVE: list = []

# The live dual levels of all threads (each thread's own are ``GRAD.duals``).
DUALS_LIVE: list = []

# Non-empty while some thread has saved-tensor hooks or anomaly mode on: one token (a plain
# ``object()``, equal only to itself) per reason; ``append``/``remove`` are atomic under the GIL.
# Read on the recording path only.
RECORD_HOOKS: list = []

# Non-empty while allow_mutation_on_saved_tensors is active: in-place writes then first let it
# copy what graphs saved from the memory they write to. Read by in-place writes only.
MUTATION_WATCH: list = []

# Guards the creation of state shared between threads that is made lazily (a tensor's
# AutogradMeta, version counter, accumulator node): taken only when it is missing.
LOCK = threading.RLock()


class _Unlist:
    """Held by a thread's state only: when the thread ends (its state is dropped), its token
    leaves ``ACTIVE`` and its dual levels leave ``DUALS_LIVE``, also when the thread ended
    with levels entered (other threads' ops would take the slow path for good)."""

    __slots__ = ("duals", "token")

    def __init__(self, token, duals: list) -> None:
        self.token = token
        self.duals = duals

    def __del__(self) -> None:
        try:
            while self.token in ACTIVE:
                ACTIVE.remove(self.token)
            for level in self.duals:
                if level in DUALS_LIVE:
                    DUALS_LIVE.remove(level)
        except (ValueError, TypeError):  # pragma: no cover - interpreter shutdown
            pass


class LevelStack(list):
    """A thread's level stack: a list carrying the thread's ``ACTIVE`` token (one attribute
    read where code holding the stack needs it, not a thread-local lookup)."""

    __slots__ = ("token",)
    token: _Unlist  # (the slot's type, for type checkers)


class _GradState(threading.local):
    enabled = True
    inference = False
    # forward grad switch (torch's private _set_fwd_grad_enabled): when off, no dual level owns
    # anything, so ops see plain primals and produce no tangents
    fw_enabled = True
    # anomaly mode: (enabled, check_nan)
    anomaly = (False, True)
    # saved-tensor hooks: (pack, unpack) pairs, innermost last (rev/saved.py); a tuple, so that
    # the class default is never shared mutable state
    saved_hooks: tuple = ()
    # the message of the innermost active disable_saved_tensors_hooks, else None
    saved_hooks_disabled = None
    # the node whose backward this thread is running (anomaly mode: parents of new nodes)
    current_node = None

    def __init__(self) -> None:
        self.tasks = []  # backward passes (rev.graph_task.GraphTask) running here, innermost last
        self.levels = LevelStack()  # this thread's transform levels, innermost last
        self.levels.token = token = object()
        self.duals = []  # this thread's live dual levels, outermost first
        self._unlist = _Unlist(token, self.duals)


GRAD = _GradState()


def push_level(level) -> None:
    """Push ``level`` on this thread's stack (innermost)."""
    state = GRAD
    stack = state.levels
    if not stack:  # (this thread's token is in ACTIVE exactly while its stack is non-empty)
        ACTIVE.append(stack.token)
    stack.append(level)


def pop_level(level) -> None:
    """Take ``level`` (pushed by this thread) off this thread's stack, wherever it is; no-op if
    it is not there (suspended, or popped already)."""
    state = GRAD
    stack = state.levels
    if level in stack:
        stack.remove(level)
        if not stack:
            ACTIVE.remove(stack.token)


def suspend(level) -> list:
    """Take ``level`` and every level above it off this thread's stack; returns them for
    ``resume``."""
    state = GRAD
    stack = state.levels
    position = stack.index(level)
    removed = stack[position:]
    del stack[position:]
    if not stack:
        ACTIVE.remove(stack.token)
    return removed


def resume(removed) -> None:
    """Put levels that ``suspend`` took back on top of this thread's stack."""
    state = GRAD
    stack = state.levels
    if removed and not stack:
        ACTIVE.append(stack.token)
    stack.extend(removed)


def adopt_levels(levels: list, duals: list) -> None:
    """Give this (fresh) thread a copy of another thread's level stack and live dual levels
    (the engine's reentrant passes on a fresh thread)."""
    state = GRAD
    stack = state.levels
    if levels and not stack:
        ACTIVE.append(stack.token)
    stack[:] = levels
    state.duals[:] = duals  # (not in DUALS_LIVE again: the other thread keeps them live)


def drop_levels() -> None:
    """Forget this thread's levels (a fresh thread that ends: the levels belong to another)."""
    state = GRAD
    stack = state.levels
    if stack:
        ACTIVE.remove(stack.token)
    stack.clear()
    state.duals.clear()
