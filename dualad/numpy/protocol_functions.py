"""NumPy's ``__array_function__`` protocol on ``Tensor``: ``np.sum(t)``, ``np.einsum(...)``,
``np.linalg.norm(t)`` run the ``dualad.numpy`` function of the same name, so they differentiate
at every level (requires-grad, dual, vmap, ``func.grad``).

The table from NumPy's functions to ours is built from the ``dualad.numpy`` namespaces
(``install``, called once by ``dualad/numpy/__init__.py`` after it has assembled them): for each
public name there whose NumPy counterpart (same namespace, same name) is a function, NumPy's
function object maps to ours. Nothing is listed by hand, so a function added to
``dualad.numpy`` answers the protocol at once. Ufuncs are not in it (NumPy sends them to
``__array_ufunc__``).

A NumPy function with no dualad version raises TypeError naming it: converting the tensors
to arrays would silently drop their derivative. Arguments of array types other than tensors
and ndarrays (other libraries' arrays) make the protocol return ``NotImplemented``, as NEP 18
asks, so that their own implementation may answer.

>>> import numpy as np
>>> import dualad
>>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> np.sum(x * x).backward()
>>> x.grad
tensor([2., 4., 6.])
>>> np.linalg.solve(2 * np.eye(3), x)  # answered by dualad.numpy.linalg.solve
tensor([0.5, 1. , 1.5], grad_fn=<ViewBackward0>)
"""

from __future__ import annotations

import types as _types

import numpy as np

from .._tensor import Tensor, attach_members

__all__: list[str] = []

# NumPy function object -> the dualad.numpy function that replaces it
FUNCTIONS: dict = {}


def install(*namespaces) -> None:
    """Fill ``FUNCTIONS`` from ``(dualad namespace, NumPy namespace)`` pairs and attach
    ``__array_function__`` to ``Tensor``."""
    for ours, theirs in namespaces:
        for name in getattr(ours, "__all__", None) or dir(ours):
            if name.startswith("_"):
                continue
            numpy_fn = getattr(theirs, name, None)
            fn = getattr(ours, name, None)
            if (
                numpy_fn is None
                or fn is None
                or isinstance(numpy_fn, (np.ufunc, type, _types.ModuleType))
                or not callable(numpy_fn)
                or not callable(fn)
            ):
                continue
            if numpy_fn in FUNCTIONS and name != getattr(numpy_fn, "__name__", name):
                continue  # an alias (np.concat is np.concatenate): the same-named one wins
            FUNCTIONS[numpy_fn] = fn
    attach_members(Tensor, _ArrayFunction)


def numpy_name(func) -> str:
    """``numpy.linalg.solve`` for NumPy's ``solve``: where users find the function."""
    module = getattr(func, "__module__", None) or "numpy"
    if module.startswith("numpy._") or module.startswith("numpy.lib"):
        module = "numpy"  # (private implementation modules: users call it as numpy.NAME)
    return f"{module}.{getattr(func, '__name__', func)}"


def unsupported(func) -> TypeError:
    return TypeError(
        f"{numpy_name(func)} has no differentiable dualad version, so it cannot run on dualad "
        "tensors (converting them to NumPy arrays would silently drop their derivative). If "
        "you do not need the derivative through it, call it on t.detach().numpy() (or "
        "np.asarray of an untracked tensor) and convert the result back with dualad.tensor."
    )


_OURS = (Tensor, np.ndarray)
_NO_VALUE = np._NoValue  # argument types we answer for (any other: NotImplemented)


class _ArrayFunction:
    def __array_function__(self, func, types, args, kwargs):
        for kind in types:  # (a loop: the cheapest test on this path, run on every call)
            if not issubclass(kind, _OURS):
                return NotImplemented
        fn = FUNCTIONS.get(func)
        if fn is None:
            raise unsupported(func)
        for value in kwargs.values():  # (by identity: ``in`` would compare arrays with ==)
            if value is _NO_VALUE:  # NumPy's "not given" (keepdims=np._NoValue)
                kwargs = {k: v for k, v in kwargs.items() if v is not _NO_VALUE}
                break
        return fn(*args, **kwargs)
