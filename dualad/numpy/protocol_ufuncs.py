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
# the lean path: NumPy ufunc -> the dualad function of a plain call (one or two inputs)
_FAST = {theirs: ours._fn for theirs, ours in UFUNCS.items() if ours.nout == 1}
# argument types the dualad functions take directly on the lean path
_PLAIN = frozenset((Tensor, float, int, bool, complex))
_NATIVE = (Tensor, np.ndarray, np.generic)


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


class _UfuncProtocol:
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy's ufunc protocol: ``np.sin(t)`` is ``dualad.numpy.sin(t)`` (module doc)."""
        if not kwargs and method == "__call__":
            fn = _FAST.get(ufunc)
            if fn is not None:
                if len(inputs) == 1:
                    return fn(inputs[0])
                if type(inputs[0]) in _PLAIN and type(inputs[1]) in _PLAIN:
                    return fn(*inputs)
        return array_ufunc(ufunc, method, inputs, kwargs)


attach_members(Tensor, _UfuncProtocol)
