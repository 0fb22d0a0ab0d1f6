"""The public names of an ops module, registered where each op is defined.

An op module makes one ``public = Exports()`` and takes its lists from it::

    public = Exports()
    __all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()

    add = public.inplace(binary("add", ...))   # dualad.add, Tensor.add and Tensor.add_
    true_divide = public.inplace(div, "true_divide")   # an alias, under its own name

    @public.method                             # dualad.flatten and Tensor.flatten
    def flatten(x, start_dim=0, end_dim=-1): ...

``__all__`` is what ``dualad`` (through ``dualad.ops``) exports; ``TENSOR_METHODS`` and
``INPLACE_METHODS`` are what ``dualad._operators`` attaches to ``Tensor`` (a method of the same
name, and for the latter also the in-place ``name_``). Nothing else lists the ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

# an exported function keeps its type (what a type checker shows for ``dualad.sin``)
F = TypeVar("F", bound=Callable[..., Any])


class Exports:
    """One module's public names: functions, Tensor methods, in-place methods."""

    __slots__ = ("functions", "inplace_methods", "methods")

    def __init__(self) -> None:
        self.functions: list[str] = []
        self.methods: list[str] = []
        self.inplace_methods: list[str] = []

    def lists(self) -> tuple[list[str], list[str], list[str]]:
        """``(__all__, TENSOR_METHODS, INPLACE_METHODS)``: filled as the module registers."""
        return self.functions, self.methods, self.inplace_methods

    def _add(self, fn, name, function: bool, method: bool, inplace: bool):
        if fn is None:  # used as ``@public.method(name=...)``
            return lambda f: self._add(f, name, function, method, inplace)
        name = name or fn.__name__
        if function:
            self.functions.append(name)
        if method:
            self.methods.append(name)
        if inplace:
            self.inplace_methods.append(name)
        return fn

    @overload
    def function(self, fn: F, name: str | None = None) -> F: ...
    @overload
    def function(self, fn: None = None, name: str | None = None) -> Callable[[F], F]: ...
    def function(self, fn=None, name=None):
        """A function of ``dualad`` only (no Tensor method)."""
        return self._add(fn, name, True, False, False)

    @overload
    def method(self, fn: F, name: str | None = None, *, function: bool = True) -> F: ...
    @overload
    def method(
        self, fn: None = None, name: str | None = None, *, function: bool = True
    ) -> Callable[[F], F]: ...
    def method(self, fn=None, name=None, *, function=True):
        """A function of ``dualad`` (unless ``function=False``) and a Tensor method."""
        return self._add(fn, name, function, True, False)

    @overload
    def inplace(self, fn: F, name: str | None = None) -> F: ...
    @overload
    def inplace(self, fn: None = None, name: str | None = None) -> Callable[[F], F]: ...
    def inplace(self, fn=None, name=None):
        """A function, a Tensor method and its in-place ``name_`` method."""
        return self._add(fn, name, True, True, True)
