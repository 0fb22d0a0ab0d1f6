"""NumPy's ``matrix`` constructors over tensors: ``asmatrix`` and ``bmat``. dualad has no matrix
subclass, so they give 2-D tensors with NumPy's matrix's shape rules (a scalar is 1 x 1, a
vector one row, larger ranks only when their extra axes have length 1); ``*`` on the result
stays elementwise (``@`` is the matrix product). Both differentiate as the blocks they copy.

>>> import dualad
>>> import dualad.numpy as dnp
>>> A = dualad.tensor([[1.0, 2.0]])
>>> dnp.bmat("A, A; A, A")
tensor([[1., 2., 1., 2.],
        [1., 2., 1., 2.]])
"""

from __future__ import annotations

import sys

from .. import ops
from ._common import cast, tensor_of
from .joining import concatenate

__all__ = ["asmatrix", "bmat"]


def asmatrix(data, dtype=None):
    """``numpy.asmatrix``: ``data`` as a 2-D tensor with NumPy's ``matrix`` shape (see the
    module docstring: a tensor, not a ``numpy.matrix``).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.asmatrix(x)
    tensor([[1., 2., 3.]], grad_fn=<ViewBackward0>)
    """
    x = tensor_of(data)
    if dtype is not None:
        x = cast(x, dtype)
    if x.ndim > 2:
        x = ops.reshape(x, tuple(n for n in x.shape if n != 1))
        if x.ndim > 2:
            raise ValueError("matrix must be 2-dimensional")
    if x.ndim == 0:
        return ops.reshape(x, (1, 1))
    return ops.reshape(x, (1, x.shape[0])) if x.ndim == 1 else x


def _from_string(text, ldict, gdict):
    rows = []
    for row in text.split(";"):
        names = [name.strip() for name in row.split(",") if name.strip()]
        blocks = []
        for name in names:
            if name in ldict:
                blocks.append(ldict[name])
            elif name in gdict:
                blocks.append(gdict[name])
            else:
                raise KeyError(f"name {name!r} is not defined")
        rows.append(blocks)
    return rows


def bmat(obj, ldict=None, gdict=None):
    """``numpy.bmat``: a 2-D tensor built from blocks: nested lists (each row's blocks joined
    along the last axis, then the rows along the first), or a string ``"A, B; C, D"`` whose
    names are looked up in ``ldict`` and ``gdict`` (the caller's variables when ``gdict`` is
    None, as in NumPy).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.bmat([[a, a]])
    tensor([[1., 2., 1., 2.],
            [3., 4., 3., 4.]], grad_fn=<CatBackward0>)
    """
    if isinstance(obj, str):
        if gdict is None:
            frame = sys._getframe(1)  # (NumPy's rule: the caller's names)
            ldict, gdict = frame.f_locals, frame.f_globals
        obj = _from_string(obj, ldict or {}, gdict)
        obj = [[asmatrix(b) for b in row] for row in obj]
    if isinstance(obj, (tuple, list)):
        if obj and not isinstance(obj[0], (tuple, list)):
            return asmatrix(concatenate(list(obj), axis=-1))
        rows = [concatenate(list(row), axis=-1) for row in obj]
        return asmatrix(concatenate(rows, axis=0))
    return asmatrix(obj)
