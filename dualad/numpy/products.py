"""NumPy's products over tensors: ``dot vdot inner outer tensordot einsum kron cross``, with
NumPy's rules for the number of dimensions (``dot`` of N-D arrays sums over the last axis of
``a`` and the second-to-last of ``b``; ``outer`` flattens; scalars multiply), all made of dualad
ops, so they differentiate in every operand.

>>> import dualad
>>> import dualad.numpy as dnp
>>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> dnp.einsum("ij,ij->", a, a).backward()
>>> a.grad
tensor([[2., 4.],
        [6., 8.]])
"""

from __future__ import annotations

import string
import warnings

import numpy as np

from .. import ops
from ._common import axis_of, cast, check_casting, check_order, finish, promoted_pair, tensor_of

__all__ = ["dot", "vdot", "inner", "outer", "tensordot", "einsum", "kron", "cross"]


def dot(a, b, out=None):
    """``numpy.dot``: inner product of vectors, matrix product of matrices, and for N-D
    inputs the sum over the last axis of ``a`` and the second-to-last of ``b``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.dot(x, x)
    tensor(14., grad_fn=<MmBackward0>)
    """
    x, y = promoted_pair(a, b)
    if x.ndim == 0 or y.ndim == 0:
        r = x * y
    elif x.ndim <= 2 and y.ndim <= 2:
        r = ops.matmul(x, y)
    else:
        r = ops.tensordot(x, y, axes=([x.ndim - 1], [0 if y.ndim == 1 else y.ndim - 2]))
    return finish(r, out, "dot")


def vdot(a, b, /):
    """``numpy.vdot``: ``sum(conj(a) * b)`` of the flattened inputs.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.vdot(x, x)
    tensor(14., grad_fn=<VdotBackward0>)
    """
    x, y = promoted_pair(a, b)
    if x.numel() != y.numel():
        raise ValueError("cannot reshape array: vdot needs inputs of the same size")
    return ops.vdot(ops.reshape(x, (-1,)), ops.reshape(y, (-1,)))


def inner(a, b, /):
    """``numpy.inner``: sums over the last axes (a product when either is a scalar).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.inner(x, [1.0, 0.0, 1.0])
    tensor(4., grad_fn=<EinsumBackward0>)
    """
    x, y = promoted_pair(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(
            f"shapes {tuple(x.shape)} and {tuple(y.shape)} not aligned: {x.shape[-1]} (dim "
            f"{x.ndim - 1}) != {y.shape[-1]} (dim {y.ndim - 1})"
        )
    return ops.tensordot(x, y, axes=([x.ndim - 1], [y.ndim - 1]))


def outer(a, b, out=None):
    """``numpy.outer``: ``a[i] * b[j]`` of the flattened inputs.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.outer(x[:2], x)
    tensor([[1., 2., 3.],
            [2., 4., 6.]], grad_fn=<MulBackward0>)
    """
    x, y = promoted_pair(a, b)
    r = ops.outer(ops.reshape(x, (-1,)), ops.reshape(y, (-1,)))
    return finish(r, out, "outer")


def tensordot(a, b, axes=2):
    """``numpy.tensordot``: sums over the last ``axes`` axes of ``a`` and the first of ``b``,
    or over the axes of the pair ``(axes_a, axes_b)``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.tensordot(a, a)
    tensor(30., grad_fn=<EinsumBackward0>)
    """
    x, y = promoted_pair(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > x.ndim or n > y.ndim:
            raise ValueError("shape-mismatch for sum")
        pairs = (list(range(x.ndim - n, x.ndim)), list(range(n)))
    else:
        first, second = axes
        first = [first] if isinstance(first, (int, np.integer)) else list(first)
        second = [second] if isinstance(second, (int, np.integer)) else list(second)
        if len(first) != len(second):
            raise ValueError("shape-mismatch for sum")
        pairs = ([axis_of(d, x.ndim) for d in first], [axis_of(d, y.ndim) for d in second])
    for da, db in zip(*pairs):
        if x.shape[da] != y.shape[db]:
            raise ValueError("shape-mismatch for sum")
    return ops.tensordot(x, y, axes=pairs)


def _sublist_equation(args):
    """The subscript string of NumPy's interleaved form ``einsum(op0, sub0, op1, sub1, ...,
    [sub_out])``, and the operands."""
    args = list(args)
    output = args.pop() if len(args) % 2 else None
    letters = string.ascii_letters

    def word(sublist):
        return "".join("..." if s is Ellipsis else letters[s] for s in sublist)

    operands, words = args[0::2], [word(s) for s in args[1::2]]
    equation = ",".join(words) + ("" if output is None else "->" + word(output))
    return equation, operands


def einsum(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """``numpy.einsum``: the Einstein summation of the subscripts (string or NumPy's
    interleaved sublist form). ``optimize`` is accepted; dualad always contracts in the order
    opt_einsum finds.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.einsum('ij,j->i', a, [1.0, 1.0])
    tensor([3., 7.], grad_fn=<EinsumBackward0>)
    """
    check_order(order, "einsum")
    if casting not in ("safe", "same_kind"):
        check_casting(casting, "einsum")
    if not operands:
        raise TypeError("einsum() missing the subscripts")
    if isinstance(operands[0], str):
        equation, arrays = operands[0], operands[1:]
    else:
        equation, arrays = _sublist_equation(operands)
    tensors = [tensor_of(a) for a in arrays]
    if dtype is None:
        dtype = np.result_type(*(t.dtype for t in tensors))
    tensors = [cast(t, dtype) for t in tensors]
    return finish(ops.einsum(equation.replace(" ", ""), *tensors), out, "einsum")


def kron(a, b):
    """``numpy.kron``: the Kronecker product (block ``a[i, j] * b``).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.kron(a, [1.0, 10.0])
    tensor([[ 1., 10.,  2., 20.],
            [ 3., 30.,  4., 40.]], grad_fn=<ViewBackward0>)
    """
    x, y = promoted_pair(a, b)
    return ops.kron(x, y)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``numpy.cross``: cross products of the 3-vectors (or 2-vectors, as NumPy) along
    ``axisa``/``axisb`` (``axis`` sets all three), broadcast over the other axes.

    >>> import dualad, dualad.numpy as dnp
    >>> u = dualad.tensor([1.0, 0.0, 0.0], requires_grad=True)
    >>> dnp.cross(u, [0.0, 1.0, 0.0])
    tensor([0., 0., 1.], grad_fn=<ViewBackward0>)
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = promoted_pair(a, b)
    x = ops.moveaxis(x, axis_of(axisa, x.ndim), -1)
    y = ops.moveaxis(y, axis_of(axisb, y.ndim), -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if x.shape[-1] == 2 or y.shape[-1] == 2:  # (NumPy's deprecation, repeated)
        warnings.warn(
            "Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional "
            "vectors instead. (deprecated in NumPy 2.0)",
            DeprecationWarning,
            stacklevel=2,
        )
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    a0, a1, a2 = _components(x)
    b0, b1, b2 = _components(y)
    c = ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)
    return ops.moveaxis(c, -1, axis_of(axisc, c.ndim))


def _components(v):
    """The three components of vectors along the last axis (a 2-vector's third is 0)."""
    if v.shape[-1] == 3:
        return v[..., 0], v[..., 1], v[..., 2]
    return v[..., 0], v[..., 1], v[..., 0] * 0
