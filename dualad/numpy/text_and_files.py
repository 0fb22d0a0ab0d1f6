"""NumPy's printing, saving and loading functions over tensors: ``array2string array_repr
array_str format_float_positional format_float_scientific`` and ``save savez savez_compressed
savetxt`` answer with NumPy's own functions on the tensors' values; ``loadtxt fromiter
frombuffer fromstring fromfile`` return NumPy's arrays as untracked tensors.

Printing or writing a value drops what it tracks, so a tensor that carries a derivative (one
that requires grad, or is differentiated or batched by a transform) raises
``TrackedConversionError``, as ``np.asarray`` of it does; pass ``t.detach()`` to print or save
its value.

>>> import dualad, dualad.numpy as dnp
>>> dnp.array2string(dualad.tensor([1.0, 2.5]), precision=2, separator=", ")
'[1. , 2.5]'
>>> dnp.fromstring("1 2 3", dtype=int, sep=" ")
tensor([1, 2, 3])
"""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor
from .._tensor import Tensor
from ._nondiff import uses

__all__ = [
    "array2string",
    "array_repr",
    "array_str",
    "format_float_positional",
    "format_float_scientific",
    "save",
    "savez",
    "savez_compressed",
    "savetxt",
    "loadtxt",
    "fromiter",
    "frombuffer",
    "fromstring",
    "fromfile",
]


def _value(a):
    """NumPy's value of ``a``: a tensor's values (``TrackedConversionError`` where it carries a
    derivative, from ``np.asarray``), anything else as it is."""
    return np.asarray(a) if isinstance(a, Tensor) else a


def _scalar(x):
    """A 0-d tensor as NumPy's scalar of its dtype (the format_float functions take scalars)."""
    return np.asarray(x)[()] if isinstance(x, Tensor) else x


@uses(differentiable=False)
def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ",
                 prefix="", *, formatter=None, threshold=None, edgeitems=None, sign=None,
                 floatmode=None, suffix="", legacy=None):  # fmt: skip
    """``numpy.array2string`` of the tensor's values.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.array2string(x.detach() / 3, precision=2)
    '[0.33 0.67 1.  ]'
    """
    return np.array2string(
        np.asarray(a), max_line_width, precision, suppress_small, separator, prefix,
        formatter=formatter, threshold=threshold, edgeitems=edgeitems, sign=sign,
        floatmode=floatmode, suffix=suffix, legacy=legacy,
    )  # fmt: skip


@uses(differentiable=False)
def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """``numpy.array_repr`` of the tensor's values (``array([...])``, NumPy's text).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.array_repr(x.detach())
    'array([1., 2., 3.])'
    """
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


@uses(differentiable=False)
def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """``numpy.array_str`` of the tensor's values.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.array_str(x.detach())
    '[1. 2. 3.]'
    """
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


@uses(differentiable=False)
def format_float_positional(
    x, precision=None, unique=True, fractional=True, trim="k", sign=False, pad_left=None,
    pad_right=None, min_digits=None,
):  # fmt: skip
    """``numpy.format_float_positional`` of a scalar (a 0-d tensor too).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.format_float_positional(dualad.tensor(0.25))
    '0.25'
    """
    return np.format_float_positional(
        _scalar(x), precision, unique, fractional, trim, sign, pad_left, pad_right, min_digits
    )


@uses(differentiable=False)
def format_float_scientific(x, precision=None, unique=True, trim="k", sign=False,
                            pad_left=None, exp_digits=None, min_digits=None):  # fmt: skip
    """``numpy.format_float_scientific`` of a scalar (a 0-d tensor too).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.format_float_scientific(dualad.tensor(1250.0), precision=2)
    '1.25e+03'
    """
    return np.format_float_scientific(
        _scalar(x), precision, unique, trim, sign, pad_left, exp_digits, min_digits
    )


@uses(differentiable=False)
def save(file, arr, allow_pickle=True):
    """``numpy.save``: the tensor's values to a ``.npy`` file.

    >>> import dualad, dualad.numpy as dnp
    >>> import io, numpy as np
    >>> f = io.BytesIO()
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.save(f, x.detach())
    >>> _ = f.seek(0)
    >>> np.load(f)
    array([1., 2., 3.])
    """
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


@uses(differentiable=False)
def savez(file, *args, allow_pickle=True, **kwds):
    """``numpy.savez``: the tensors' values to an uncompressed ``.npz`` file.

    >>> import dualad, dualad.numpy as dnp
    >>> import io, numpy as np
    >>> f = io.BytesIO()
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.savez(f, x=x.detach())
    >>> _ = f.seek(0)
    >>> np.load(f)['x']
    array([1., 2., 3.])
    """
    np.savez(
        file,
        *(_value(a) for a in args),
        allow_pickle=allow_pickle,
        **{k: _value(v) for k, v in kwds.items()},
    )


@uses(differentiable=False)
def savez_compressed(file, *args, allow_pickle=True, **kwds):
    """``numpy.savez_compressed``: the tensors' values to a compressed ``.npz`` file.

    >>> import dualad, dualad.numpy as dnp
    >>> import io, numpy as np
    >>> f = io.BytesIO()
    >>> dnp.savez_compressed(f, dualad.tensor([1.0, 2.0]), counts=dualad.tensor([3, 4]))
    >>> saved = np.load(io.BytesIO(f.getvalue()))
    >>> saved['arr_0'], saved['counts']
    (array([1., 2.]), array([3, 4]))
    """
    np.savez_compressed(
        file,
        *(_value(a) for a in args),
        allow_pickle=allow_pickle,
        **{k: _value(v) for k, v in kwds.items()},
    )


@uses(differentiable=False)
def savetxt(fname, X, fmt="%.18e", delimiter=" ", newline="\n", header="", footer="",
            comments="# ", encoding=None):  # fmt: skip
    """``numpy.savetxt``: the tensor's values to a text file.

    >>> import dualad, dualad.numpy as dnp
    >>> import io
    >>> f = io.StringIO()
    >>> dnp.savetxt(f, dualad.tensor([[1.0, 2.0]]), fmt='%g')
    >>> f.getvalue().split()
    ['1', '2']
    """
    np.savetxt(fname, np.asarray(X), fmt, delimiter, newline, header, footer, comments, encoding)


def _loaded(result):
    """NumPy's loaded array(s) as untracked tensors (``unpack=True`` gives several)."""
    if isinstance(result, (list, tuple)):
        return type(result)(as_tensor(r) for r in result)
    return as_tensor(result)


@uses(differentiable=False)
def loadtxt(fname, dtype=float, comments="#", delimiter=None, converters=None, skiprows=0,
            usecols=None, unpack=False, ndmin=0, encoding=None, max_rows=None, *,
            quotechar=None, like=None):  # fmt: skip
    """``numpy.loadtxt`` as an untracked tensor (``like=`` is NumPy's dispatch hint).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.loadtxt(['1 2', '3 4'])
    tensor([[1., 2.],
            [3., 4.]])
    """
    return _loaded(
        np.loadtxt(fname, dtype, comments, delimiter, converters, skiprows, usecols, unpack,
                   ndmin, encoding, max_rows, quotechar=quotechar)
    )  # fmt: skip


@uses(differentiable=False)
def fromiter(iter, dtype, count=-1, *, like=None):
    """``numpy.fromiter`` as an untracked tensor.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.fromiter(range(3), dtype=dnp.float64)
    tensor([0., 1., 2.])
    """
    return as_tensor(np.fromiter(iter, dtype, count))


@uses(differentiable=False)
def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """``numpy.frombuffer`` as an untracked tensor (a copy: the buffer may be read-only).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.frombuffer(b'ab', dtype=dnp.uint8)
    tensor([97, 98], dtype=uint8)
    """
    return as_tensor(np.frombuffer(buffer, dtype, count, offset).copy())


@uses(differentiable=False)
def fromstring(string, dtype=float, count=-1, *, sep, like=None):
    """``numpy.fromstring`` (text with ``sep``) as an untracked tensor.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.fromstring('1 2 3', sep=' ')
    tensor([1., 2., 3.])
    """
    return as_tensor(np.fromstring(string, dtype, count, sep=sep))


@uses(differentiable=False)
def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, like=None):
    """``numpy.fromfile`` as an untracked tensor.

    >>> import dualad, dualad.numpy as dnp
    >>> import tempfile
    >>> f = tempfile.TemporaryFile()
    >>> dnp.asarray([1.0, 2.0]).numpy().tofile(f)
    >>> _ = f.seek(0)
    >>> dnp.fromfile(f)
    tensor([1., 2.])
    """
    return as_tensor(np.fromfile(file, dtype, count, sep, offset))
