"""The linear-algebra functions of the array API's main namespace: ``matmul``,
``matrix_transpose``, ``tensordot`` and ``vecdot``, the same functions as ``linalg``'s.

>>> import dualad, dualad.array_api as xp
>>> xp.vecdot(dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, 4.0]))
tensor(11.)
"""

from __future__ import annotations

from .linalg import matmul, matrix_transpose, tensordot, vecdot

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]
