"""``cupyx.scipy.sparse`` of the stand-in: CSR/CSC/COO matrices whose ``data``, ``indices`` and
``indptr`` are device arrays, over ``scipy.sparse`` on the host buffers. Built from device arrays
(``csr_matrix((data, indices, indptr), shape=...)``) or, by a logged transfer, from a SciPy
matrix; ``get()`` is the way back to SciPy (a logged transfer).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from ._core import log_transfer, ndarray, unwrap, wrap

__all__ = [
    "coo_matrix",
    "csc_matrix",
    "csr_matrix",
    "issparse",
    "isspmatrix",
    "isspmatrix_coo",
    "isspmatrix_csc",
    "isspmatrix_csr",
    "spmatrix",
]


class spmatrix:
    """A sparse matrix on the (stand-in) device."""

    format = ""
    _scipy_type = scipy.sparse.csr_matrix

    def __init__(self, arg1, shape=None, dtype=None, copy=False):
        if scipy.sparse.issparse(arg1):
            log_transfer("to_device", arg1.shape)
            held = arg1
        elif isinstance(arg1, spmatrix):
            held = arg1._m
        elif isinstance(arg1, np.ndarray):
            raise TypeError(f"Unsupported type {type(arg1)} (a NumPy array given to cupyx)")
        else:
            held = unwrap(arg1, f"{type(self).__name__}")
        self._m = self._scipy_type(held, shape=shape, dtype=dtype, copy=copy)

    @classmethod
    def _of(cls, matrix):
        out = object.__new__(_BY_FORMAT[matrix.format])
        out._m = matrix
        return out

    shape = property(lambda self: self._m.shape)
    dtype = property(lambda self: self._m.dtype)
    nnz = property(lambda self: self._m.nnz)
    ndim = property(lambda self: 2)
    data = property(lambda self: wrap(self._m.data))
    T = property(lambda self: spmatrix._of(self._m.T))

    def get(self, stream=None):
        """The SciPy matrix on the host (a logged transfer)."""
        log_transfer("to_host", self.shape)
        return self._m.copy()

    def toarray(self, order=None, out=None):
        return wrap(self._m.toarray(order=order))

    def todense(self, order=None, out=None):
        return self.toarray(order)

    def tocsr(self, copy=False):
        return spmatrix._of(self._m.tocsr(copy=copy))

    def tocsc(self, copy=False):
        return spmatrix._of(self._m.tocsc(copy=copy))

    def tocoo(self, copy=False):
        return spmatrix._of(self._m.tocoo(copy=copy))

    def transpose(self, axes=None, copy=False):
        return spmatrix._of(self._m.transpose(copy=copy))

    def astype(self, dtype):
        return spmatrix._of(self._m.astype(dtype))

    def copy(self):
        return spmatrix._of(self._m.copy())

    def __matmul__(self, other):
        if isinstance(other, spmatrix):
            return spmatrix._of(self._m @ other._m)
        return wrap(self._m @ unwrap(other, "@"))

    def __mul__(self, other):
        if type(other) is ndarray or isinstance(other, np.ndarray):
            raise TypeError("use @ for a sparse matrix product")
        return spmatrix._of(self._m * other)

    __rmul__ = __mul__

    def __repr__(self):
        return f"<cupyx {self.format} matrix {self.shape} nnz={self.nnz}>"


class csr_matrix(spmatrix):
    """Compressed sparse rows."""

    format = "csr"
    _scipy_type = scipy.sparse.csr_matrix
    indices = property(lambda self: wrap(self._m.indices))
    indptr = property(lambda self: wrap(self._m.indptr))


class csc_matrix(spmatrix):
    """Compressed sparse columns."""

    format = "csc"
    _scipy_type = scipy.sparse.csc_matrix
    indices = property(lambda self: wrap(self._m.indices))
    indptr = property(lambda self: wrap(self._m.indptr))


class coo_matrix(spmatrix):
    """Coordinates."""

    format = "coo"
    _scipy_type = scipy.sparse.coo_matrix
    row = property(lambda self: wrap(self._m.row))
    col = property(lambda self: wrap(self._m.col))


_BY_FORMAT = {"csr": csr_matrix, "csc": csc_matrix, "coo": coo_matrix}


def issparse(x) -> bool:
    return isinstance(x, spmatrix)


isspmatrix = issparse


def isspmatrix_csr(x) -> bool:
    return isinstance(x, csr_matrix)


def isspmatrix_csc(x) -> bool:
    return isinstance(x, csc_matrix)


def isspmatrix_coo(x) -> bool:
    return isinstance(x, coo_matrix)


for _cls in (spmatrix, csr_matrix, csc_matrix, coo_matrix):
    _cls.__module__ = "cupyx.scipy.sparse"
