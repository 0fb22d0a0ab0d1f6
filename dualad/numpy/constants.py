"""NumPy's constants, scalar types and ``random`` in ``dualad.numpy``: ``newaxis pi e inf nan
euler_gamma``, the dtypes (``float64``, ``int64``, ``bool_``, ``complex128``, ...), and ``dtype``,
all NumPy's own objects, so ``dnp.float32 is np.float32``.
``random`` is NumPy's ``numpy.random``: random draws are plain arrays (no derivative to keep).

>>> import numpy as np
>>> import dualad.numpy as dnp
>>> dnp.newaxis is None, dnp.pi == np.pi, dnp.float32 is np.float32
(True, True, True)
"""

from __future__ import annotations

import numpy as np
from numpy import (
    bool_,
    complex64,
    complex128,
    dtype,
    e,
    euler_gamma,
    float16,
    float32,
    float64,
    inf,
    int8,
    int16,
    int32,
    int64,
    intp,
    nan,
    newaxis,
    pi,
    random,
    uint8,
    uint16,
    uint32,
    uint64,
)

__all__ = [
    "newaxis",
    "pi",
    "e",
    "inf",
    "nan",
    "euler_gamma",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "intp",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "dtype",
    "random",
]

bool = np.bool  # NumPy 2's name for bool_ (``dnp.bool``), kept out of ``import *``
