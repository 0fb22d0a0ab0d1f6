"""The methods of ``dualad.numpy.ufunc`` beyond calls: ``reduce``, ``accumulate``, ``outer``,
``reduceat`` and ``at``.

Each first asks NumPy itself about the same call on a stand-in of the input's shape and dtype
(a zero-stride array of ones: no copy), which gives NumPy's errors (a bad axis, a reduction of
an empty axis without identity, several axes of a non-reorderable ufunc) and the result's dtype
and shape; the values and derivatives then come from dualad ops: ``add.reduce`` is
``dualad.sum``, ``multiply`` ``prod``, ``maximum``/``minimum`` ``amax``/``amin``,
``logical_and``/``logical_or`` ``all``/``any``; any other binary ufunc reduces and accumulates
by NumPy's left fold (``((a0 op a1) op a2) ...``), one ufunc call a step, which is exact and
differentiable but costs one op per element along the axis.

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> dnp.add.reduce(x, axis=0)
tensor([4., 6.], grad_fn=<SumBackward0>)
>>> dnp.subtract.accumulate(x, axis=1)
tensor([[ 1., -1.],
        [ 3., -1.]], grad_fn=<PermuteBackward0>)
>>> dnp.multiply.outer(dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, 4.0, 5.0])).shape
(2, 3)
"""

from __future__ import annotations

import operator

import numpy as np

from .._creation import as_tensor
from .._tensor import Tensor
from ..ops import astype, moveaxis, reshape, stack
from ..ops import where as _where
from .ufunc_keywords import check_input, normalise_out, write_out

_SCALARS = (bool, int, float, complex)
# ufuncs with op(a, a) == a: a masked element may repeat initial
_IDEMPOTENT = frozenset(("maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                         "bitwise_and", "bitwise_or"))  # fmt: skip


def _name(uf, method: str) -> str:
    return f"dualad.numpy.{uf.__name__}.{method}"


def _binary_only(uf, method: str, what: str) -> None:
    if uf.nin != 2:
        raise ValueError(f"{_name(uf, method)}: {what} only supported for binary functions")
    if uf.nout != 1:
        raise ValueError(
            f"{_name(uf, method)}: {what} only supported for functions returning a single value"
        )
    if uf.signature is not None:  # (NumPy's exception classes)
        if method != "outer":
            raise RuntimeError(
                f"{_name(uf, method)}: Reduction not defined on ufunc with signature"
            )
        raise TypeError(
            f"{_name(uf, method)}: method outer is not allowed in ufunc with non-trivial signature"
        )


def _tensor_input(uf, method: str, value):
    value = check_input(_name(uf, method), value)
    return as_tensor(value) if type(value) in _SCALARS else value


def _stand_in(x: Tensor) -> np.ndarray:
    """A read-only array of ``x``'s shape and dtype that takes no memory."""
    return np.broadcast_to(np.ones((), dtype=x.dtype), tuple(x.shape))


def _plain_mask(mask):
    if isinstance(mask, Tensor):
        return mask.numpy(force=True)
    return np.asarray(mask)


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return tuple(operator.index(a) % ndim for a in axis)
    return (operator.index(axis) % ndim,)


def _finish(uf, method, result, expected: np.ndarray, out):
    """``result`` in NumPy's shape and dtype (``expected``'s), written into ``out`` if given."""
    if tuple(result.shape) != expected.shape:
        result = reshape(result, expected.shape)
    if result.dtype != expected.dtype:
        result = astype(result, expected.dtype)
    (out,) = normalise_out(_name(uf, method), 1, out)
    if out is None:
        return result
    return write_out(_name(uf, method), uf, result, out, "same_kind")


def _fold(uf, x: Tensor, start=None):
    """NumPy's left fold of ``uf`` over the first axis of ``x`` (``start`` first if given)."""
    acc = start
    for i in range(x.shape[0]):
        acc = x[i] if acc is None else uf(acc, x[i])
    return acc


def reduce(uf, array, axis, dtype, out, keepdims, initial, where):
    """``uf.reduce``: see the module docstring."""
    _binary_only(uf, "reduce", "reduce")
    x = _tensor_input(uf, "reduce", array)
    kwargs = {"axis": axis, "dtype": dtype, "keepdims": keepdims}
    if initial is not np._NoValue:
        if isinstance(initial, Tensor):
            raise TypeError(f"{_name(uf, 'reduce')}: initial= must be a Python or NumPy scalar")
        kwargs["initial"] = initial
    has_mask = where is not True
    if has_mask:
        kwargs["where"] = _plain_mask(where)
    with np.errstate(all="ignore"):
        expected = np.asarray(uf._np.reduce(_stand_in(x), **kwargs))
    axes = _axes(axis, x.ndim)
    if x.numel() == 0:  # nothing to combine: NumPy's value (initial or identity) is the answer
        return _finish(uf, "reduce", as_tensor(expected), expected, out)
    start = initial if initial is not np._NoValue else None
    if not axes:  # nothing reduced (axis=()): x itself, combined with initial
        return _finish(uf, "reduce", x if start is None else uf(x, start), expected, out)
    if dtype is not None and x.dtype != np.dtype(dtype):
        x = astype(x, np.dtype(dtype))
    if has_mask:  # masked elements take no part: the identity, or initial where repeating it
        fill = uf.identity  # changes nothing (max, min, and, or); NumPy asks for one of them
        if fill is None and uf.__name__ in _IDEMPOTENT:
            fill = start
        if fill is None:
            raise TypeError(
                f"{_name(uf, 'reduce')}: where= needs a ufunc with an identity (or an idempotent "
                "one such as maximum, with initial=); reduce the selected elements instead"
            )
        x = _where(as_tensor(kwargs["where"]), x, fill)
    if uf._reducer is not None:
        result = uf._reducer(x, axes, dtype)
        if start is not None:
            result = uf(result, start)
    else:
        moved = moveaxis(x, axes, tuple(range(len(axes))))
        rest = tuple(moved.shape[len(axes) :])
        result = _fold(uf, reshape(moved, (-1, *rest)), start)
    return _finish(uf, "reduce", result, expected, out)


def accumulate(uf, array, axis, dtype, out):
    """``uf.accumulate``: see the module docstring."""
    _binary_only(uf, "accumulate", "accumulate")
    x = _tensor_input(uf, "accumulate", array)
    with np.errstate(all="ignore"):
        expected = uf._np.accumulate(_stand_in(x), axis=axis, dtype=dtype)
    axis = operator.index(axis) % max(x.ndim, 1)
    if dtype is not None and x.dtype != np.dtype(dtype):
        x = astype(x, np.dtype(dtype))
    if x.numel() == 0:
        return _finish(uf, "accumulate", x, expected, out)
    if uf._accumulator is not None:
        result = uf._accumulator(x, axis, dtype)
    else:
        moved = moveaxis(x, axis, 0)
        steps = [moved[0]]
        for i in range(1, moved.shape[0]):
            steps.append(uf(steps[-1], moved[i]))
        result = moveaxis(stack(steps, 0), 0, axis)
    return _finish(uf, "accumulate", result, expected, out)


def outer(uf, a, b, kwargs: dict):
    """``uf.outer(a, b)``: ``uf(a[..., None * b.ndim], b)``, differentiable in both."""
    _binary_only(uf, "outer", "outer product")
    a = _tensor_input(uf, "outer", a)
    b = _tensor_input(uf, "outer", b)
    return uf(reshape(a, (*a.shape, *(1,) * b.ndim)), b, **kwargs)


def reduceat(uf, array, indices, axis, dtype, out):
    """``uf.reduceat``: for each ``i``, ``uf.reduce(array[indices[i]:indices[i+1]])`` along
    ``axis`` (``array[indices[i]]`` where ``indices[i] >= indices[i+1]``; the last slice runs
    to the end)."""
    _binary_only(uf, "reduceat", "reduceat")
    x = _tensor_input(uf, "reduceat", array)
    if isinstance(indices, Tensor):
        indices = indices.numpy(force=True)
    indices = np.asarray(indices)
    with np.errstate(all="ignore"):
        expected = uf._np.reduceat(_stand_in(x), indices, axis=axis, dtype=dtype)
    axis = operator.index(axis) % x.ndim
    if dtype is not None and x.dtype != np.dtype(dtype):
        x = astype(x, np.dtype(dtype))
    moved = moveaxis(x, axis, 0)
    n = moved.shape[0]
    pieces = []
    for k, start in enumerate(indices.tolist()):
        stop = indices[k + 1] if k + 1 < len(indices) else n
        if start < stop:
            pieces.append(reduce(uf, moved[start:stop], 0, None, None, False, np._NoValue, True))
        else:
            pieces.append(moved[start])
    result = moveaxis(stack(pieces, 0), 0, axis)
    return _finish(uf, "reduceat", result, expected, out)


def at(uf, a, indices, b):
    """``uf.at`` is refused: it writes into ``a`` in place, unbuffered (repeated indices
    accumulate), which has no differentiable counterpart here."""
    raise TypeError(
        f"{_name(uf, 'at')}: dualad has no differentiable version of ufunc.at (an unbuffered "
        "in-place write into its first argument). Write it functionally instead: for add, "
        "dualad.zeros_like(a).index_add(...) / a.index_put(index, values, accumulate=True); "
        "or compute on tensor.detach().numpy() if no derivative is wanted."
    )
