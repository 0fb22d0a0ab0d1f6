"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each is a context manager and a decorator (with or without parentheses). The mode is
thread-local. A decorated generator runs its body under the mode only while it executes: the
caller's mode is restored at every yield (PyTorch semantics).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Literal

from .._state import GRAD


def is_grad_enabled() -> bool:
    """Whether operations are recorded for reverse mode in this thread.

    >>> import dualad
    >>> with dualad.no_grad():
    ...     dualad.is_grad_enabled()
    False
    """
    return GRAD.enabled


def is_inference_mode_enabled() -> bool:
    """Whether inference mode is on (``dualad.inference_mode``) in this thread.

    >>> import dualad
    >>> dualad.is_inference_mode_enabled()
    False
    >>> with dualad.inference_mode():
    ...     print(dualad.is_inference_mode_enabled())
    True
    """
    return GRAD.inference


class _DecoratorContext:
    """Base: subclasses define ``_enter_state`` / restore the saved state on exit."""

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=2,
            )
            func.__init__ = self(func.__init__)
            return func
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self._clone():
                return func(*args, **kwargs)

        return decorated

    def _clone(self):
        return self.__class__()

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self._clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self._clone():
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self._clone():
                            response = gen.throw(exc)
                    else:
                        with self._clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator


class _FixedGradMode(_DecoratorContext):
    """Base of ``no_grad`` / ``enable_grad``: sets grad mode to the class's ``_enabled``."""

    _enabled: bool

    def __new__(cls, func=None):
        self = super().__new__(cls)
        if func is not None and callable(func):
            return self(func)
        return self

    def __enter__(self):
        self.previous = GRAD.enabled
        GRAD.enabled = self._enabled

    def __exit__(self, *exc):
        GRAD.enabled = self.previous
        return False


class no_grad(_FixedGradMode):
    """Context manager and decorator that turns off graph recording.

    >>> import dualad
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> with dualad.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _enabled = False


class enable_grad(_FixedGradMode):
    """Context manager and decorator that turns graph recording back on.

    >>> import dualad
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> with dualad.no_grad():
    ...     with dualad.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    _enabled = True


class _SetMode(_DecoratorContext):
    """Base of ``set_grad_enabled``, ``set_multithreading_enabled`` and fwd's
    ``_set_fwd_grad_enabled``: sets a thread's mode
    when called, restored on exit when used with ``with``; ``_get`` / ``_set`` say which."""

    @staticmethod
    def _get() -> bool:
        raise NotImplementedError

    @staticmethod
    def _set(mode: bool, /) -> None:  # (positional: each subclass names its own)
        raise NotImplementedError

    def __init__(self, mode: bool) -> None:
        self.previous = self._get()
        self.mode = bool(mode)
        self._set(self.mode)

    def _clone(self):
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        self._set(self.mode)

    def __exit__(self, *exc) -> Literal[False]:  # (never swallows an exception)
        self._set(self.previous)
        return False


def _set_grad(mode: bool) -> None:
    GRAD.enabled = mode


class set_grad_enabled(_SetMode):
    """Set grad mode: immediately when called, restored on exit when used with ``with``.

    >>> import dualad
    >>> with dualad.set_grad_enabled(False):
    ...     dualad.is_grad_enabled()
    False
    >>> dualad.is_grad_enabled()
    True
    """

    _get = staticmethod(lambda: GRAD.enabled)
    _set = staticmethod(_set_grad)

    def __call__(self, func):
        GRAD.enabled = self.previous  # as a decorator it only applies inside func
        return super().__call__(func)


class inference_mode(_DecoratorContext):
    """Like ``no_grad``, and marks tensors made inside as inference tensors.

    ``inference_mode(False)`` is a no-op scope (grad mode unchanged).

    >>> import dualad
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> with dualad.inference_mode():
    ...     y = x * 2
    >>> (y.requires_grad, dualad.is_inference_mode_enabled())
    (False, False)
    """

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.mode = True
            return self(mode)
        self.mode = bool(mode)
        return self

    def __init__(self, mode=True) -> None:
        pass

    def _clone(self):
        return self.__class__(self.mode)

    def __enter__(self):
        self.previous = (GRAD.enabled, GRAD.inference)
        if self.mode:
            GRAD.enabled = False
            GRAD.inference = True
        else:
            GRAD.inference = False

    def __exit__(self, *exc):
        GRAD.enabled, GRAD.inference = self.previous
        return False


_MULTITHREADING = [True]


def is_multithreading_enabled() -> bool:
    """Whether backward may use worker threads (dualad's engine runs in the calling thread; the
    flag exists for PyTorch compatibility).

    >>> import dualad
    >>> dualad.autograd.is_multithreading_enabled()
    True
    """
    return _MULTITHREADING[0]


def _set_multithreading(mode: bool) -> None:
    _MULTITHREADING[0] = mode


class set_multithreading_enabled(_SetMode):
    """Set the multithreading flag: immediately when called, restored on exit of a ``with``.

    >>> import dualad
    >>> with dualad.autograd.set_multithreading_enabled(False):
    ...     dualad.autograd.is_multithreading_enabled()
    False
    >>> dualad.autograd.is_multithreading_enabled()
    True
    """

    _get = staticmethod(lambda: _MULTITHREADING[0])
    _set = staticmethod(_set_multithreading)

    def __call__(self, func):
        _MULTITHREADING[0] = self.previous  # as a decorator it only applies inside func
        return super().__call__(func)
