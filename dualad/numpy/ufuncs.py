"""``dualad.numpy.ufunc``: NumPy's ufunc object over dualad ops, and its keyword arguments.

A ``ufunc`` wraps one dualad function of ``nin`` arguments (``dualad.sin``, ``dualad.add``, a
composition for ``divmod``) and mirrors ``numpy.ufunc``: ``__name__``, ``nin``, ``nout``,
``nargs``, ``identity``, ``signature``, calls with NumPy's keywords, and the methods ``reduce``,
``accumulate``, ``outer``, ``reduceat`` and ``at`` (``ufunc_methods``). A call without keywords
goes straight to the dualad function (the fast path ``__array_ufunc__`` uses too).

The keywords follow NumPy:

- ``out=``: a Tensor (or a tuple of one per output): the result is written into it with
  ``copy_``, recorded like any in-place op, and ``out`` is returned. A NumPy array ``out`` is
  written like NumPy does when the result is untracked; when the result is tracked (it requires
  grad, is dual, batched, or inside ``func.grad``) it is a TypeError, since an array cannot hold
  the derivative.
- ``where=``: with ``out``, ``out`` keeps its values where ``where`` is False; without ``out``
  those elements are **zeros** (NumPy leaves them uninitialised; dualad gives a deterministic
  value). The mask is not differentiated; the result is, where it is True.
- ``dtype=``, ``signature=`` and ``casting=`` select the loop as NumPy does
  (``numpy.ufunc.resolve_dtypes``): inputs are cast to the loop's dtypes (differentiably) and
  the result to its output dtype. ``casting`` takes NumPy's five values; a cast to ``out``'s
  dtype follows it too.
- ``order=`` ``'K'``, ``'A'``, ``'C'`` (the result is C-contiguous or laid out like the input);
  ``'F'`` raises ValueError. ``subok`` is accepted (tensors have no subclasses to keep).

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
>>> dnp.exp(x)
tensor([1.        , 2.71828183], grad_fn=<ExpBackward0>)
>>> dnp.add.nin, dnp.add.nout, dnp.add.identity
(2, 1, 0)
>>> out = dualad.zeros(2)
>>> dnp.multiply(x, 3.0, out=out) is out
True
>>> out
tensor([0., 3.], grad_fn=<CopyBackwards>)
>>> dnp.add(x, 1.0, where=dualad.tensor([True, False]))
tensor([1., 0.], grad_fn=<WhereBackward0>)
"""

from __future__ import annotations

import numpy as np

from . import ufunc_methods as _methods
from .ufunc_keywords import call

__all__ = ["ufunc"]

# numpy.ufunc's attributes that ours has too, with NumPy's values
_MIRRORED = ("nin", "nout", "nargs", "ntypes", "types", "identity", "signature")


class ufunc:
    """A NumPy ufunc over dualad tensors: see the module docstring of ``dualad.numpy.ufuncs``.

    ``fn`` computes the ufunc from ``nin`` positional arguments (tensors, arrays or Python
    scalars) with NumPy's dtypes; ``differentiable`` says whether its results may be tracked;
    ``reducer``/``accumulator`` are dualad functions ``f(x, axis, dtype)`` that ``reduce``/
    ``accumulate`` use instead of the general left fold (``dualad.sum`` for ``add``); ``gufunc``
    handles the gufunc keywords ``axes``/``axis``/``keepdims`` (``matmul``, ``vecdot``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.sin
    <dualad.numpy.ufunc 'sin'>
    >>> isinstance(dnp.sin, dnp.ufunc), dnp.sin.nin, dnp.sin.differentiable
    (True, 1, True)
    """

    def __init__(self, np_ufunc, fn, *, differentiable=True, reducer=None, accumulator=None,
                 gufunc=None):  # fmt: skip
        self._np = np_ufunc
        self._fn = fn
        self._float_fn = fn  # for floating tensors alone, when _fn adapts other dtypes
        self.__name__ = self.__qualname__ = np_ufunc.__name__
        for attribute in _MIRRORED:
            setattr(self, attribute, getattr(np_ufunc, attribute))
        self.differentiable = differentiable
        self._reducer = reducer
        self._accumulator = accumulator
        self._gufunc = gufunc
        self.__doc__ = (
            f"NumPy's ``numpy.{self.__name__}`` on dualad tensors "
            f"({'differentiable' if differentiable else 'not differentiable: untracked results'})"
            "; keywords as in ``dualad.numpy.ufuncs``."
        )

    def __repr__(self) -> str:
        return f"<dualad.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args, **kwargs):
        if not kwargs and len(args) == self.nin:
            return self._fn(*args)
        return call(self, args, kwargs)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue,
               where=True):  # fmt: skip
        """``numpy.ufunc.reduce``: ``array`` reduced along ``axis`` by this binary ufunc."""
        return _methods.reduce(self, array, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        """``numpy.ufunc.accumulate``: the running reduction along ``axis``."""
        return _methods.accumulate(self, array, axis, dtype, out)

    def outer(self, a, b, /, **kwargs):
        """``numpy.ufunc.outer``: the ufunc of every pair (``a[i..., None...] op b``)."""
        return _methods.outer(self, a, b, kwargs)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        """``numpy.ufunc.reduceat``: reductions over the slices ``indices[i]:indices[i+1]``."""
        return _methods.reduceat(self, array, indices, axis, dtype, out)

    def at(self, a, indices, b=None, /):
        """``numpy.ufunc.at`` writes into ``a`` unbuffered; refused (see the error)."""
        return _methods.at(self, a, indices, b)
