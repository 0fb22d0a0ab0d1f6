"""NumPy's functions made of pieces of their input: ``piecewise`` (a function per condition)
and ``trim_zeros`` (the input without its leading/trailing zeros).

``piecewise`` is made of ``where``: every function of ``funclist`` is evaluated on the whole
input and each element takes the value of the last condition that holds for it, so it
differentiates everywhere and under every transform. (NumPy evaluates a function only on the
elements its condition selects; the values agree. A function whose value or derivative is not
finite where its condition does not hold gives NaN derivatives there, as ``where`` of such a
function does; guard its argument, ``f(dnp.where(cond, x, 1.0))``.)

``trim_zeros`` has a shape that depends on the values: it differentiates in the values kept
(eagerly, under ``grad`` and ``jvp``), and under ``vmap`` it raises (each example would trim to
its own shape).

>>> import dualad, dualad.numpy as dnp
>>> x = dualad.tensor([-2.0, 0.5, 3.0], requires_grad=True)
>>> y = dnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v**2, 0.25])
>>> y
tensor([2.  , 0.25, 9.  ], grad_fn=<WhereBackward0>)
>>> y.sum().backward()
>>> x.grad
tensor([-1.,  0.,  6.])
>>> dnp.trim_zeros(dualad.tensor([0.0, 1.0, 0.0, 2.0, 0.0]))
tensor([1., 0., 2.])
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from .. import ops
from .._creation import zeros
from .._tensor import Tensor
from ._common import tensor_of

__all__ = ["piecewise", "trim_zeros"]


def _conditions(condlist, x):
    """``condlist`` as a list of boolean tensors, by NumPy's rules (a single condition is one
    condition, not a list of them)."""
    if isinstance(condlist, Tensor | np.ndarray):
        first = condlist[0] if condlist.ndim else None
        if condlist.ndim == 0 or (x.ndim != 0 and getattr(first, "ndim", 0) == 0):
            condlist = [condlist]
        else:
            condlist = [condlist[i] for i in range(condlist.shape[0])]
    elif np.isscalar(condlist) or (
        x.ndim != 0 and not isinstance(condlist[0], list | np.ndarray | Tensor)
    ):
        condlist = [condlist]
    elif x.ndim != 0 and isinstance(condlist[0], Tensor) and condlist[0].ndim == 0:
        condlist = [condlist]  # (a list of 0-d tensors is one condition, as NumPy's scalars)
    conds = []
    for c in condlist:
        c = tensor_of(c)
        conds.append(c if c.dtype.kind == "b" else ops.astype(c, np.bool_))
    return conds


def piecewise(x, condlist, funclist, *args, **kw):
    """``numpy.piecewise``: where ``condlist[i]`` holds, ``funclist[i](x, *args, **kw)`` (or the
    constant ``funclist[i]``), cast to ``x``'s dtype, the last condition that holds winning; one
    function more than conditions is the value where none holds, elsewhere the result is 0.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([-1.0, 2.0], requires_grad=True)
    >>> dnp.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t**2])
    tensor([1., 4.], grad_fn=<WhereBackward0>)
    """
    x = tensor_of(x)
    conds = _conditions(condlist, x)
    n, n2 = len(conds), len(funclist)
    if n == n2 - 1:  # the "otherwise" condition
        stacked = ops.stack([ops.broadcast_to(c, tuple(x.shape)) for c in conds], 0)
        conds.append(ops.logical_not(ops.any(stacked, 0)))
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    shape = tuple(x.shape)
    y = zeros(shape, dtype=x.dtype, device=x.device)
    for cond, func in zip(conds, funclist):
        if tuple(cond.shape) != shape:
            raise IndexError(  # (NumPy's class: it indexes x with the condition)
                f"dualad.numpy.piecewise: a condition of shape {tuple(cond.shape)} for x of "
                f"shape {shape}; each condition must have x's shape (NumPy indexes x with it)"
            )
        value = func(x, *args, **kw) if isinstance(func, Callable) else func
        value = ops.astype(tensor_of(value), x.dtype)
        y = ops.where(cond, ops.broadcast_to(value, shape), y)
    return y


def trim_zeros(filt, trim="fb", axis=None):
    """``numpy.trim_zeros``: ``filt`` without the zeros before (``"f"``) and/or after
    (``"b"``) its nonzero elements along ``axis`` (every axis when None: the bounding box of
    the nonzero elements).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.trim_zeros(dualad.tensor([0.0, 1.0, 2.0, 0.0], requires_grad=True))
    tensor([1., 2.], grad_fn=<SliceBackward0>)
    """
    x = tensor_of(filt)
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = range(x.ndim) if axis is None else normalize_axis_tuple(axis, x.ndim, argname="axis")
    if not axes:
        return x
    mask = x != 0  # (a plain tensor but under vmap: the only level batching its values)
    if type(mask) is not Tensor:
        raise ValueError(
            "dualad.numpy.trim_zeros: the trimmed shape depends on the values, so it cannot "
            "run under vmap (each example would have its own shape); trim each example in a "
            "loop, or mask the zeros instead (dnp.where)"
        )
    positions = ops.nonzero(mask).numpy()
    if positions.shape[0] == 0:  # all zeros: an empty slice on every trimmed axis
        start = stop = [0] * x.ndim
    else:
        start = positions.min(axis=0).tolist() if "f" in trim else [None] * x.ndim
        stop = (positions.max(axis=0) + 1).tolist() if "b" in trim else [None] * x.ndim
    return x[tuple(slice(start[a], stop[a]) if a in axes else slice(None) for a in range(x.ndim))]
