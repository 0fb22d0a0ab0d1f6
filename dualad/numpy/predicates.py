"""NumPy's predicates and metadata queries, not differentiable: the elementwise ``isclose``,
``iscomplex``, ``isreal``, ``isposinf``, ``isneginf`` (untracked bool tensors), the whole-array
answers ``allclose``, ``array_equal``, ``array_equiv`` (Python bools, as NumPy gives), and the
metadata of tensors and dtypes: ``shape``, ``ndim``, ``size``, ``iscomplexobj``,
``isrealobj``, ``isscalar``, ``may_share_memory``, ``shares_memory``, ``result_type``,
``can_cast``, ``promote_types``, ``min_scalar_type``, ``common_type``, ``finfo``, ``iinfo``,
``issubdtype``, ``isdtype``, ``iterable``, ``isfortran``, ``broadcast_shapes``, ``mintypecode``,
``typename``, ``binary_repr``, ``base_repr``.

A Python bool has one value, so inside ``vmap`` (where a tensor stands for every example)
``allclose`` and the like of a batched tensor raise, saying to use the elementwise version.

>>> import dualad, dualad.numpy as dnp
>>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
>>> dnp.isclose(x, [1.0, 2.1])
tensor([ True, False])
>>> dnp.allclose(x, [1.0, 2.0]), dnp.shape(x)
(True, (2,))
"""

from __future__ import annotations

import operator

import numpy as np

from .. import ops
from .._creation import zeros_like
from .._dispatch import REGISTRY, apply
from .._errors import TrackedConversionError
from .._tensor import Tensor
from ..ops.closeness import isclose_op
from ._nondiff import arg, no_out, uses

__all__ = [
    "allclose",
    "array_equal",
    "array_equiv",
    "base_repr",
    "binary_repr",
    "broadcast_shapes",
    "can_cast",
    "common_type",
    "finfo",
    "iinfo",
    "iscomplex",
    "iscomplexobj",
    "isclose",
    "isdtype",
    "isfortran",
    "isneginf",
    "isposinf",
    "isreal",
    "isrealobj",
    "isscalar",
    "issubdtype",
    "iterable",
    "may_share_memory",
    "min_scalar_type",
    "mintypecode",
    "ndim",
    "promote_types",
    "result_type",
    "shape",
    "shares_memory",
    "size",
    "typename",
]


def value_only(fn):
    """Mark a function that answers from values or metadata (no op, no derivative)."""
    fn.differentiable = False
    return fn


# ---------------------------------------------------------------------------------------------
# elementwise predicates


@uses(isclose_op)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True where ``|a - b| <= atol + rtol * |b|`` (NumPy's ``isclose``: not symmetric).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.isclose(x, [1.0, 2.1, 3.0])
    tensor([ True, False,  True])
    """
    a = a if isinstance(a, (Tensor, int, float, complex)) else arg(a)
    b = b if isinstance(b, (Tensor, int, float, complex)) else arg(b)
    params = {"rtol": rtol, "atol": atol, "equal_nan": bool(equal_nan)}
    return apply(isclose_op, a, b, **params)


@uses(REGISTRY["imag"], REGISTRY["ne"], differentiable=False)
def iscomplex(x):
    """True where ``x`` has a nonzero imaginary part (all False for real ``x``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.iscomplex(dualad.tensor([1.0 + 0j, 1.0 + 2.0j]))
    tensor([False,  True])
    """
    x = arg(x)
    if x.dtype.kind == "c":
        return ops.ne(ops.imag(x), 0)
    return zeros_like(x, dtype=bool)


@uses(REGISTRY["imag"], REGISTRY["ne"], REGISTRY["logical_not"], differentiable=False)
def isreal(x):
    """True where ``x`` has a zero imaginary part (all True for real ``x``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.isreal(dualad.tensor([1.0 + 0j, 1.0 + 2.0j]))
    tensor([ True, False])
    """
    return ops.logical_not(iscomplex(x))


def _infinite(x, name):
    x = arg(x)
    if x.dtype.kind == "c":
        raise TypeError(
            f"dualad.numpy.{name}: This operation is not supported for {x.dtype} values "
            "because it would be ambiguous."
        )
    return x, ops.isinf(x), ops.signbit(x)


_INFINITY_OPS = tuple(REGISTRY[name] for name in ("isinf", "signbit", "logical_and", "logical_not"))


@uses(*_INFINITY_OPS, differentiable=False)
def isposinf(x, out=None):
    """True where ``x`` is +inf.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.isposinf(dualad.tensor([-dnp.inf, 0.0, dnp.inf]))
    tensor([False, False,  True])
    """
    no_out("isposinf", out)
    _, inf, negative = _infinite(x, "isposinf")
    return ops.logical_and(inf, ops.logical_not(negative))


@uses(*_INFINITY_OPS, differentiable=False)
def isneginf(x, out=None):
    """True where ``x`` is -inf.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.isneginf(dualad.tensor([-dnp.inf, 0.0, dnp.inf]))
    tensor([ True, False, False])
    """
    no_out("isneginf", out)
    _, inf, negative = _infinite(x, "isneginf")
    return ops.logical_and(inf, negative)


# ---------------------------------------------------------------------------------------------
# whole-array answers: Python bools


def _answer(result, name: str) -> bool:
    """``bool(result)``, or inside vmap the error that says why there is no single answer."""
    try:
        return bool(result)
    except TrackedConversionError as exc:
        raise TrackedConversionError(
            f"dualad.numpy.{name} returns one Python bool, but its argument is batched "
            f"(inside vmap): use dualad.numpy.all of the elementwise test instead "
            f"(all(isclose(a, b)) for allclose, all(a == b) for array_equal). {exc}"
        ) from None


@value_only
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose(a, b)`` holds everywhere (a Python bool).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.allclose(x, [1.0, 2.0, 3.0 + 1e-9])
    True
    """
    return _answer(ops.all(isclose(a, b, rtol, atol, equal_nan)), "allclose")


@value_only
def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have one shape and equal elements (NaNs equal with
    ``equal_nan``); a Python bool.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.array_equal(x, [1.0, 2.0, 3.0])
    True
    """
    a1, a2 = arg(a1), arg(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return False
    same = ops.eq(a1, a2)
    if equal_nan and (a1.dtype.kind in "fc" or a2.dtype.kind in "fc"):
        same = ops.logical_or(same, ops.logical_and(ops.isnan(a1), ops.isnan(a2)))
    return _answer(ops.all(same), "array_equal")


@value_only
def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast together and are equal everywhere (a Python bool).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.array_equiv(a[:1], [1.0, 2.0])
    True
    """
    a1, a2 = arg(a1), arg(a2)
    try:
        np.broadcast_shapes(tuple(a1.shape), tuple(a2.shape))
    except ValueError:
        return False
    return _answer(ops.all(ops.eq(a1, a2)), "array_equiv")


# ---------------------------------------------------------------------------------------------
# metadata: Python values, as NumPy's


def _metadata(value):
    """What NumPy's metadata functions read of a tensor: its dtype; anything else as given."""
    return value.dtype if isinstance(value, Tensor) else value


@value_only
def shape(a):
    """The shape of ``a`` (a tuple; a tensor's logical shape inside transforms).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.shape(a)
    (2, 2)
    """
    return tuple(a.shape) if isinstance(a, Tensor) else np.shape(a)


@value_only
def ndim(a):
    """The number of dimensions of ``a``.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.ndim(a)
    2
    """
    return a.ndim if isinstance(a, Tensor) else np.ndim(a)


@value_only
def size(a, axis=None):
    """The number of elements of ``a`` (along ``axis``: that dim's length).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.size(a), dnp.size(a, axis=0)
    (4, 2)
    """
    if not isinstance(a, Tensor):
        return np.size(a, axis)
    if axis is None:
        return a.numel()
    return int(np.prod([a.shape[i] for i in np.atleast_1d(axis)] if a.ndim else [], dtype=int))


@value_only
def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (whatever its values).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.iscomplexobj(dualad.tensor([1.0 + 0j]))
    True
    """
    return (isinstance(x, Tensor) and x.dtype.kind == "c") or np.iscomplexobj(_metadata(x))


@value_only
def isrealobj(x):
    """Whether ``x`` has no complex dtype.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.isrealobj(x)
    True
    """
    return not iscomplexobj(x)


@value_only
def isscalar(element):
    """Whether ``element`` is a scalar (a tensor, even 0-d, is not: as NumPy's 0-d arrays).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.isscalar(3.0), dnp.isscalar(dualad.tensor(3.0))
    (True, False)
    """
    return False if isinstance(element, Tensor) else np.isscalar(element)


def _memory(value):
    while isinstance(value, Tensor) and type(value) is not Tensor:
        value = value._value  # a level's wrapper: the value one level down holds the memory
    return value._data if isinstance(value, Tensor) else value


@value_only
def may_share_memory(a, b, /, max_work=0):
    """Whether ``a`` and ``b`` might share memory (NumPy's bounds check on their arrays).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.may_share_memory(a, a[0])
    True
    """
    return bool(np.may_share_memory(_memory(a), _memory(b), max_work=max_work))


@value_only
def shares_memory(a, b, /, max_work=-1):
    """Whether ``a`` and ``b`` share memory (NumPy's exact check on their arrays).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.shares_memory(a, a[1]), dnp.shares_memory(a, dnp.copy(a))
    (True, False)
    """
    return bool(np.shares_memory(_memory(a), _memory(b), max_work=max_work))


@value_only
def result_type(*arrays_and_dtypes):
    """The dtype NumPy's promotion gives these arguments (NEP 50: Python scalars are weak).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.result_type(x, 1)
    dtype('float64')
    """
    return np.result_type(*(_metadata(a) for a in arrays_and_dtypes))


@value_only
def can_cast(from_, to, casting="safe"):
    """Whether ``from_`` (a tensor's dtype, or a dtype) casts to ``to`` under ``casting``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.can_cast(x, dnp.float32)
    False
    """
    return np.can_cast(_metadata(from_), to, casting=casting)


@value_only
def promote_types(type1, type2):
    """The smallest dtype both dtypes cast to safely.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.promote_types(dnp.int8, dnp.float32)
    dtype('float32')
    """
    return np.promote_types(_metadata(type1), _metadata(type2))


@value_only
def min_scalar_type(a, /):
    """The smallest dtype that holds the scalar ``a`` (a tensor: its dtype).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.min_scalar_type(200)
    dtype('uint8')
    """
    return np.min_scalar_type(_metadata(a))


@value_only
def common_type(*arrays):
    """The inexact scalar type common to the arrays (float64 for integers).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.common_type(dualad.tensor([1, 2]), dualad.tensor([1.0], dtype=dnp.float32))
    <class 'numpy.float64'>
    """
    return np.common_type(
        *(np.empty(0, _metadata(a)) if isinstance(a, Tensor) else a for a in arrays)
    )


@value_only
def finfo(dtype):
    """Machine limits of a floating dtype (a tensor: its dtype).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.finfo(x).eps
    np.float64(2.220446049250313e-16)
    """
    return np.finfo(_metadata(dtype))


@value_only
def iinfo(int_type):
    """Machine limits of an integer dtype (a tensor: its dtype).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.iinfo(dualad.tensor([1, 2], dtype=dnp.int8)).max
    127
    """
    return np.iinfo(_metadata(int_type))


@value_only
def issubdtype(arg1, arg2):
    """Whether dtype ``arg1`` is lower in NumPy's type hierarchy than ``arg2`` (a tensor: its
    dtype).

    >>> import dualad, dualad.numpy as dnp
    >>> import numpy as np
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.issubdtype(x.dtype, np.floating)
    True
    """
    return np.issubdtype(_metadata(arg1), _metadata(arg2))


@value_only
def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (the Array API's kinds: "real floating", ...).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.isdtype(x.dtype, 'real floating')
    True
    """
    return np.isdtype(_metadata(dtype), kind)


@value_only
def iterable(y):
    """Whether ``y`` can be iterated over (a 0-d tensor cannot, as a 0-d array).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.iterable(dualad.tensor([1.0])), dnp.iterable(dualad.tensor(1.0))
    (True, False)
    """
    if isinstance(y, Tensor):
        return y.ndim > 0
    return np.iterable(y)


@value_only
def isfortran(a):
    """Whether ``a``'s memory is Fortran-ordered and not also C-ordered (the memory of a
    level's wrapper: its value's, one level down).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.isfortran(a)
    False
    """
    return bool(np.isfortran(_memory(a)))


@value_only
def broadcast_shapes(*args):
    """The shape the given shapes broadcast to (ValueError when they do not).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return np.broadcast_shapes(*args)


@value_only
def mintypecode(typechars, typeset="GDFgdf", default="d"):
    """The character of the smallest safe type of ``typeset`` for ``typechars`` (type
    characters, or arrays and tensors: their dtypes' characters).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.mintypecode(['d', 'f'])
    'd'
    """
    chars = [t.dtype.char if isinstance(t, Tensor) else t for t in typechars]
    return np.mintypecode(chars, typeset, default)


@value_only
def typename(char):
    """The description of a type character.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.typename('d')
    'double precision'
    """
    return np.typename(char)


@value_only
def binary_repr(num, width=None):
    """The binary string of the integer ``num`` (two's complement with ``width``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.binary_repr(-3, width=4)
    '1101'
    """
    return np.binary_repr(operator.index(num), width)


@value_only
def base_repr(number, base=2, padding=0):
    """The string of the integer ``number`` in ``base``.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.base_repr(10, base=3)
    '101'
    """
    return np.base_repr(operator.index(number), base, padding)
