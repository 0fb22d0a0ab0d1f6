"""The backward pass as code running inside it sees it: a ``GraphTask`` per pass on this
thread's stack (``GRAD.tasks``), ``current_graph_task`` and ``queue_callback``.

Hooks and custom backwards see the innermost pass (``queue_callback``, per-pass hook state,
checkpoint recomputation); the engine (``engine.run``) pushes and pops them.
"""

from __future__ import annotations

import itertools

from .._state import GRAD


class GraphTask:
    """One backward pass, as seen by code running inside it (hooks, callbacks, checkpoints).

    ``dependencies`` has every node the pass may run or capture at; ``callbacks`` are run once
    the pass finished (``queue_callback``); ``state`` holds per-pass state of hooks (a
    ``register_multi_grad_hook`` registration's progress), so it dies with the pass.
    """

    __slots__ = ("__weakref__", "callbacks", "dependencies", "id", "restricted", "state")

    def __init__(self, restricted: bool) -> None:
        self.id = next(_task_ids)
        self.restricted = restricted  # grad() or backward(inputs=...)
        self.callbacks: list = []
        self.state: dict = {}
        self.dependencies: dict = {}

    def will_execute(self, node) -> bool:
        """Whether ``node`` runs (or is a capture point) in this pass, if it gets gradients."""
        return node in self.dependencies

    def __repr__(self) -> str:
        return f"<GraphTask {self.id}>"


_task_ids = itertools.count()


def current_graph_task() -> GraphTask | None:
    """The innermost backward pass running in this thread, or None.

    >>> import dualad
    >>> from dualad.autograd.graph import current_graph_task
    >>> current_graph_task() is None  # no backward running
    True
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> y = x.exp()
    >>> _ = y.register_hook(lambda g: print(current_graph_task() is not None))
    >>> y.sum().backward()
    True
    """
    tasks = GRAD.tasks
    return tasks[-1] if tasks else None


def queue_callback(callback) -> None:
    """Run ``callback()`` once the innermost backward pass running in this thread has finished.

    Only valid during a backward pass (from a hook or a custom backward). Callbacks may queue
    more callbacks; an exception raised by one propagates from ``backward()``/``grad()``.

    >>> import dualad
    >>> from dualad.autograd.graph import queue_callback
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> y = x * 2
    >>> log = []
    >>> def hook(grad):
    ...     queue_callback(lambda: log.append("done"))
    ...     log.append("hook")
    >>> _ = y.register_hook(hook)
    >>> y.sum().backward()
    >>> log
    ['hook', 'done']
    """
    tasks = GRAD.tasks
    if not tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    tasks[-1].callbacks.append(callback)


class _ExecutionEngine:
    """PyTorch's ``Variable._execution_engine`` shape: ``queue_callback(fn)``."""

    __slots__ = ()

    @staticmethod
    def queue_callback(callback) -> None:
        queue_callback(callback)

    @staticmethod
    def _current_graph_task_id() -> int:
        task = current_graph_task()
        return -1 if task is None else task.id


execution_engine = _ExecutionEngine()
