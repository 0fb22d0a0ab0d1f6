"""NumPy's joining and splitting functions over tensors (linear, so differentiable):
``concatenate concat stack hstack vstack row_stack dstack column_stack split array_split
hsplit vsplit dsplit append block``.

NumPy's semantics: ``concatenate(axis=None)`` flattens, ``split`` into sections that do not
divide raises, ``block`` gives NumPy's errors for tuples and mismatched depths.

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
>>> dnp.block([[x, x], [x, 2 * x]])
tensor([[1., 2., 1., 2.],
        [1., 2., 2., 4.]], grad_fn=<CatBackward0>)
"""

from __future__ import annotations

import builtins
import itertools
import operator

import numpy as np

from .. import ops
from .._tensor import Tensor
from ._common import axis_of, cast, check_casting, finish, tensor_of
from .manipulation import _atleast

__all__ = [
    "concatenate",
    "concat",
    "stack",
    "hstack",
    "vstack",
    "row_stack",
    "dstack",
    "column_stack",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "append",
    "block",
]


def _joined(arrays, dtype, casting, name):
    if isinstance(arrays, (np.ndarray, Tensor)):
        arrays = list(arrays)  # NumPy iterates over the first axis
    check_casting(casting, name)
    tensors = [tensor_of(a) for a in arrays]
    if not tensors:
        raise ValueError("need at least one array to concatenate")
    if dtype is None:
        dtype = np.result_type(*(t.dtype for t in tensors))
    return [cast(t, dtype) for t in tensors]


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """``numpy.concatenate``: the arrays joined along ``axis`` (flattened when None).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.concatenate([a, a], axis=1)
    tensor([[1., 2., 1., 2.],
            [3., 4., 3., 4.]], grad_fn=<CatBackward0>)
    """
    tensors = _joined(arrays, dtype, casting, "concatenate")
    if axis is None:
        tensors, axis = [ops.reshape(t, (-1,)) for t in tensors], 0
    if tensors[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = axis_of(axis, tensors[0].ndim)
    for t in tensors:
        if t.ndim != tensors[0].ndim:
            raise ValueError(
                "all the input array dimensions except for the concatenation axis must match "
                f"exactly (got {t.ndim} and {tensors[0].ndim} dimensions)"
            )
    return finish(ops.cat(tensors, axis), out, "concatenate")


def concat(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """``numpy.concat``: ``concatenate``'s Array API name.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.concat([x, x[:1]])
    tensor([1., 2., 3., 1.], grad_fn=<CatBackward0>)
    """
    return concatenate(arrays, axis, out, dtype=dtype, casting=casting)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """``numpy.stack``: the arrays (of one shape) joined along a new axis ``axis``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.stack([x, x])
    tensor([[1., 2., 3.],
            [1., 2., 3.]], grad_fn=<StackBackward0>)
    """
    tensors = _joined(arrays, dtype, casting, "stack")
    if len({tuple(t.shape) for t in tensors}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = axis_of(axis, tensors[0].ndim + 1)
    return finish(ops.stack(tensors, axis), out, "stack")


def hstack(tup, *, dtype=None, casting="same_kind"):
    """``numpy.hstack``: joined along axis 1 (axis 0 for 1-D inputs).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.hstack([x, x[:1]])
    tensor([1., 2., 3., 1.], grad_fn=<CatBackward0>)
    """
    tensors = _atleast(1, _joined(tup, dtype, casting, "hstack"))
    return concatenate(tensors, axis=0 if tensors[0].ndim == 1 else 1)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """``numpy.vstack``: joined along axis 0, 1-D inputs as rows.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.vstack([x, x])
    tensor([[1., 2., 3.],
            [1., 2., 3.]], grad_fn=<CatBackward0>)
    """
    return concatenate(_atleast(2, _joined(tup, dtype, casting, "vstack")), 0)


row_stack = vstack


def dstack(tup):
    """``numpy.dstack``: joined along axis 2, inputs made at least 3-D.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.dstack([x, x]).shape
    (1, 3, 2)
    """
    return concatenate(_atleast(3, _joined(tup, None, "same_kind", "dstack")), 2)


def column_stack(tup):
    """``numpy.column_stack``: 1-D inputs as columns, joined along axis 1.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.column_stack([x, 2 * x])
    tensor([[1., 2.],
            [2., 4.],
            [3., 6.]], grad_fn=<CatBackward0>)
    """
    tensors = _joined(tup, None, "same_kind", "column_stack")
    tensors = [ops.reshape(t, (-1, 1)) if t.ndim < 2 else t for t in tensors]
    return concatenate(tensors, 1)


def array_split(ary, indices_or_sections, axis=0):
    """``numpy.array_split``: pieces along ``axis`` (``n`` near-equal ones, or cut at the given
    indices); a list of tensors.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.array_split(x, 2)
    [tensor([1., 2.], grad_fn=<SliceBackward0>), tensor([3.], grad_fn=<SliceBackward0>)]
    """
    x = tensor_of(ary)
    axis = axis_of(axis, x.ndim)
    length = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(length, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = [0, *np.cumsum(sizes).tolist()]
    else:
        bounds = [0, *(operator.index(i) for i in indices_or_sections), length]
    pieces = []
    for start, stop in itertools.pairwise(bounds):  # Python's slicing rules, as NumPy's
        pieces.append(x[(slice(None),) * axis + (slice(start, stop),)])
    return pieces


def split(ary, indices_or_sections, axis=0):
    """``numpy.split``: ``array_split`` whose sections must divide the axis equally.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> first, second, third = dnp.split(x, 3)
    >>> third
    tensor([3.], grad_fn=<SliceBackward0>)
    """
    x = tensor_of(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        length = x.shape[axis_of(axis, x.ndim)]
        if indices_or_sections == 0 or length % int(indices_or_sections):
            raise ValueError("array split does not result in an equal division")
    return array_split(x, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """``numpy.hsplit``: ``split`` along axis 1 (axis 0 for 1-D input).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.hsplit(a, 2)
    [tensor([[1.],
            [3.]], grad_fn=<SliceBackward0>), tensor([[2.],
            [4.]], grad_fn=<SliceBackward0>)]
    """
    x = tensor_of(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """``numpy.vsplit``: ``split`` along axis 0 of an at-least-2-D input.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.vsplit(a, 2)[1]
    tensor([[3., 4.]], grad_fn=<SliceBackward0>)
    """
    x = tensor_of(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """``numpy.dsplit``: ``split`` along axis 2 of an at-least-3-D input.

    >>> import dualad, dualad.numpy as dnp
    >>> t = dnp.arange(4.0).reshape(1, 1, 4)
    >>> dnp.dsplit(t, 2)
    [tensor([[[0., 1.]]]), tensor([[[2., 3.]]])]
    """
    x = tensor_of(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def append(arr, values, axis=None):
    """``numpy.append``: ``values`` added at the end (both flattened when ``axis`` is None).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.append(x, 4.0)
    tensor([1., 2., 3., 4.], grad_fn=<CatBackward0>)
    """
    x, v = tensor_of(arr), tensor_of(values)
    if axis is None:
        return concatenate([ops.reshape(x, (-1,)), ops.reshape(v, (-1,))], 0)
    return concatenate([x, v], axis)


def _block_depth(arrays, path=()):
    """The nesting depth of ``block``'s lists and the largest number of axes of a block;
    NumPy's errors for tuples, empty lists and mismatched depths."""
    if isinstance(arrays, tuple):
        raise TypeError(
            f"arrays{''.join(f'[{i}]' for i in path)} is a tuple. Only lists can be used to "
            "arrange blocks, and np.block does not allow implicit conversion from tuple to "
            "ndarray."
        )
    if not isinstance(arrays, list):
        return 0, tensor_of(arrays).ndim
    if not arrays:
        raise ValueError(f"List at arrays{''.join(f'[{i}]' for i in path)} cannot be empty")
    found = [_block_depth(a, (*path, i)) for i, a in enumerate(arrays)]
    if len({d for d, _ in found}) != 1:
        raise ValueError("List depths are mismatched.")
    return found[0][0] + 1, builtins.max(n for _, n in found)


def block(arrays):
    """``numpy.block``: one tensor assembled from nested lists of blocks (the innermost lists
    joined along the last axis, the next along the second-to-last, ...).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.block([a, dnp.eye(2)])
    tensor([[1., 2., 1., 0.],
            [3., 4., 0., 1.]], grad_fn=<CatBackward0>)
    """
    depth, most = _block_depth(arrays)
    ndim = builtins.max(depth, most)

    def build(part, level):
        if not isinstance(part, list):
            t = tensor_of(part)
            return ops.reshape(t, (1,) * (ndim - t.ndim) + tuple(t.shape))
        return concatenate([build(p, level + 1) for p in part], axis=level - depth)

    return build(arrays, 0)
