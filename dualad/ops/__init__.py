"""The op registry's modules. Importing this package registers every op (``dualad._operators``
attaches the Tensor methods and operators, from above)."""

from __future__ import annotations

from . import einsum, elementwise, indexing, linalg, mutation, reductions, shape, tensor_index

MODULES = (elementwise, reductions, shape, indexing, linalg, einsum, mutation, tensor_index)
