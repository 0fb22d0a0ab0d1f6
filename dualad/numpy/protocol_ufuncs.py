"""``Tensor.__array_ufunc__``: NumPy's ufuncs called on tensors run the ``dualad.numpy`` ufunc
of the same name, so ``np.exp(x)`` is ``dualad.numpy.exp(x)``: differentiable under every
transform (``func.grad``, ``jacfwd``, dual levels, vmap) and for tensors that require grad.

The table from NumPy ufunc to ours is built from ``dualad.numpy.ufunc_table`` (never a hand-kept
list). A plain call without keywords takes a lean path (one dict lookup, then the dualad op's
fast caller); methods (``reduce``, ``accumulate``, ``outer`` ...) and keywords go through
``getattr(our_ufunc, method)(*inputs, **kwargs)``. A NumPy ufunc without a dualad version is a
TypeError naming it; an input or ``out`` of a foreign array type (one with its own
``__array_ufunc__``, other than NumPy's arrays and scalars) gives ``NotImplemented``, so NumPy
asks that type. NumPy arrays on the left work too: ``ndarray + tensor`` and
``np.add(ndarray, tensor)`` are dualad ops and keep the derivative.

>>> import numpy as np
>>> import dualad
>>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
>>> y = np.exp(x) * x
>>> dualad.autograd.grad(y.sum(), x)
(tensor([1.        , 5.43656366]),)
>>> np.ones(2) + x
tensor([1., 2.], grad_fn=<AddBackward0>)
"""

from __future__ import annotations

import numpy as np

from .._state import ACTIVE
from .._tensor import Tensor, attach_members
from . import ufunc_table
from .ufuncs import ufunc

__all__: list[str] = []

# NumPy ufunc -> our ufunc, for every name of ufunc_table (aliases map to the same object)
UFUNCS = {
    getattr(np, name): ours
    for name, ours in vars(ufunc_table).items()
    if isinstance(ours, ufunc) and isinstance(getattr(np, name, None), np.ufunc)
}
# The lean path of a plain call (no keywords) of a one-output ufunc on eager tensors with no
# level active anywhere (``ACTIVE`` also holds a token while the default dtype is not float64):
# an untracked tensor that is not a view runs NumPy's ufunc on its data (exactly what
# ``dualad.numpy``'s ufunc computes for it, with NumPy's dtypes), a floating tensor that
# requires grad the dualad op; anything else takes the general path.
_FLOAT_FN = {theirs: ours._float_fn for theirs, ours in UFUNCS.items() if ours.nout == 1}
_SCALARS = frozenset((float, int, bool, complex))
_NATIVE = (Tensor, np.ndarray, np.generic)
_ndarray = np.ndarray
_new = object.__new__


def _foreign(value) -> bool:
    """A value of another array library that defines the ufunc protocol itself."""
    if isinstance(value, tuple):
        return any(_foreign(v) for v in value)
    return hasattr(type(value), "__array_ufunc__") and not isinstance(value, _NATIVE)


def array_ufunc(numpy_ufunc, method: str, inputs: tuple, kwargs: dict):
    """``numpy_ufunc``'s ``method`` on ``inputs`` by the ``dualad.numpy`` ufunc of its name."""
    if any(_foreign(v) for v in inputs) or _foreign(kwargs.get("out")):
        return NotImplemented
    ours = UFUNCS.get(numpy_ufunc)
    if ours is None:
        raise TypeError(
            f"numpy.{numpy_ufunc.__name__} has no dualad version: dualad has no differentiable "
            f"(or untracked) implementation of it, so it cannot run on dualad Tensors. Call it "
            f"on tensor.detach().numpy() if no derivative is needed."
        )
    if method == "__call__":
        return ours(*inputs, **kwargs)
    return getattr(ours, method)(*inputs, **kwargs)


def _plain(x) -> bool:
    """An untracked eager tensor the lean path may read the data of, a Python scalar, or a
    NumPy array of numbers (``ndarray + tensor``)."""
    kind = type(x)
    if kind is Tensor:
        return x._view is None and not x._rg and type(x._data) is _ndarray
    return kind in _SCALARS or (kind is _ndarray and x.dtype.kind in "biufc")


def _floating(x) -> bool:
    """A floating eager tensor that is not a view, a Python scalar or a floating NumPy array
    (which the dualad op takes as a constant)."""
    kind = type(x)
    if kind is Tensor:
        return x._view is None and x._data.dtype.kind == "f"
    return kind in _SCALARS or (kind is _ndarray and x.dtype.kind == "f")


class _UfuncProtocol:
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy's ufunc protocol: ``np.sin(t)`` is ``dualad.numpy.sin(t)`` (module doc)."""
        if kwargs or ACTIVE or method != "__call__":
            return array_ufunc(ufunc, method, inputs, kwargs)
        fn = _FLOAT_FN.get(ufunc)
        if fn is None:
            return array_ufunc(ufunc, method, inputs, kwargs)
        if len(inputs) == 1:  # (then the input is self)
            if self._view is not None or type(self) is not Tensor:
                return array_ufunc(ufunc, method, inputs, kwargs)
            data = self._data
            if self._rg or type(data) is not _ndarray:
                if data.dtype.kind == "f":
                    return fn(self)
                return array_ufunc(ufunc, method, inputs, kwargs)
            out = ufunc(data)
        else:
            a, b = inputs
            if type(a) is Tensor and type(b) is Tensor and a._view is None and b._view is None:
                # (two tensors, the common case, tested inline)
                da, db = a._data, b._data
                if a._rg or b._rg or type(da) is not _ndarray or type(db) is not _ndarray:
                    if da.dtype.kind == "f" and db.dtype.kind == "f":
                        return fn(a, b)
                    return array_ufunc(ufunc, method, inputs, kwargs)
                out = ufunc(da, db)
            elif _plain(a) and _plain(b):
                out = ufunc(
                    a._data if type(a) is Tensor else a, b._data if type(b) is Tensor else b
                )
            elif _floating(a) and _floating(b):
                return fn(a, b)
            else:
                return array_ufunc(ufunc, method, inputs, kwargs)
        if type(out) is not _ndarray:
            out = np.asarray(out)
        # _tensor.wrap, inline (the fast callers of _dispatch do the same): the lean path
        result = _new(Tensor)
        result._data = out
        result._rg = False
        result._node = None
        result._out_nr = 0
        result._meta = None
        result._fw = result._fwsig = None
        result._vc = None
        result._view = None
        return result


attach_members(Tensor, _UfuncProtocol)
