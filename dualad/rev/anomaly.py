"""Anomaly mode: forward traces on nodes, NaN checks in backward, errors that name their node.

Invariants:
- The mode ``(enabled, check_nan)`` is per thread (``_state.GRAD.anomaly``, like grad mode; in
  PyTorch it is process-wide, but a debugging switch in one thread must not slow down or change
  the errors of another). While it is on in some thread, the recording
  path (``_dispatch.on_record``, reached through ``_state.RECORD_HOOKS``) stores the forward
  stack of each new node in ``node.metadata["traceback_"]`` and, for a node made while a backward
  runs a node (``create_graph``), that node in ``metadata["parent_"]``. Off, nothing is stored and
  the recording path pays nothing.
- The engine reads the mode once per backward pass: in anomaly mode it checks every node's
  returned gradients for NaN (unless ``check_nan`` is off) and, when an error escapes a node,
  warns with that node's forward trace and those of its parents before re-raising.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
import warnings

from .._backend import xp_of
from .._state import GRAD, RECORD_HOOKS

_TOKEN = object()  # this module's entry in RECORD_HOOKS, once per thread with anomaly mode on
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_ENABLED_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
    "enabled for debugging."
)


def _set_mode(enabled: bool, check_nan: bool) -> None:
    state = GRAD
    was = state.anomaly[0]
    state.anomaly = (bool(enabled), bool(check_nan))
    if enabled and not was:
        RECORD_HOOKS.append(_TOKEN)
    elif was and not enabled:
        RECORD_HOOKS.remove(_TOKEN)


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on in this thread.

    >>> import dualad
    >>> dualad.autograd.is_anomaly_enabled()
    False
    """
    return GRAD.anomaly[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks the gradients each node returns for NaN.

    >>> import dualad
    >>> dualad.autograd.is_anomaly_check_nan_enabled()  # detect_anomaly(check_nan=False): off
    True
    """
    return GRAD.anomaly[1]


class detect_anomaly(contextlib.ContextDecorator):
    """Context manager and decorator that turns anomaly mode on.

    In anomaly mode each recorded node keeps the stack of the forward call that made it; an
    error raised while a backward runs a node is preceded by a warning showing that stack, and
    a node returning NaN gradients raises ``RuntimeError("Function 'PowBackward0' returned nan
    values in its 0th output.")`` (``check_nan=False`` skips that check). For debugging only:
    it slows recording and backward down.

    >>> import warnings
    >>> import dualad
    >>> x = dualad.tensor([0.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with dualad.autograd.detect_anomaly():
    ...         y = (dualad.sqrt(x) * 0.0).sum()  # d sqrt / dx is inf at 0; times 0 gives nan
    ...         try:
    ...             y.backward()
    ...         except RuntimeError as error:
    ...             print(error)
    Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._previous: list = []
        warnings.warn(_ENABLED_WARNING, UserWarning, stacklevel=2)

    def __enter__(self):
        self._previous.append(GRAD.anomaly)
        _set_mode(True, self.check_nan)
        return self

    def __exit__(self, *exc) -> None:
        _set_mode(*self._previous.pop())


# (a mode switch like rev.grad_mode's set_*_enabled, its doctest alike on purpose; no _SetMode:
# it also takes check_nan and is no decorator)
class set_detect_anomaly:
    """Turn anomaly mode on or off now; as a context manager, restore the previous mode on exit.

    >>> import dualad
    >>> with dualad.autograd.set_detect_anomaly(True):
    ...     dualad.autograd.is_anomaly_enabled()
    True
    >>> dualad.autograd.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.previous = GRAD.anomaly
        _set_mode(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        _set_mode(*self.previous)


# ---------------------------------------------------------------------------------------------
# recording and reporting


def record_forward_trace(node) -> None:
    """Keep the user's stack (dualad's own innermost frames dropped) and the parent node."""
    stack = traceback.extract_stack()
    end = len(stack)
    while end > 1 and stack[end - 1].filename.startswith(_PACKAGE_DIR):
        end -= 1
    meta = node.metadata
    meta["traceback_"] = traceback.format_list(stack[:end])
    parent = GRAD.current_node
    if parent is not None:
        meta["parent_"] = parent


def check_returned_nan(node, grads) -> None:
    for i, g in enumerate(grads):
        if g is not None:
            data = g._data
            if bool(xp_of(data).isnan(data).any()):
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan values in its {i}th output."
                )


def report_error_node(node) -> None:
    """Warn with the forward traces of the node an error escaped from and of its parents."""
    meta = node._metadata or {}
    stack = meta.get("traceback_")
    name = node.name()
    if stack is None:
        _warn(
            f"Error detected in {name}. No forward pass information available. Enable detect "
            "anomaly during forward pass for more information."
        )
    else:
        _warn(
            f"Error detected in {name}. Traceback of forward call that caused the error:\n"
            + "".join(stack)
        )
    parent = meta.get("parent_")
    while parent is not None:
        parent_meta = parent._metadata or {}
        stack = parent_meta.get("traceback_")
        if stack is None:
            _warn(
                f"Error detected in {parent.name()}. No forward pass information available. "
                "Enable detect anomaly during forward pass for more information."
            )
        else:
            _warn(
                f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward "
                "call that induced the previous calculation:\n" + "".join(stack)
            )
        parent = parent_meta.get("parent_")


def _warn(text: str) -> None:
    try:
        warnings.warn(text, UserWarning, stacklevel=3)
    except Warning:  # warnings are errors: still show the text, raise the original error
        print(text, file=sys.stderr)
