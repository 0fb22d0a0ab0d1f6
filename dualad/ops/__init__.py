"""The op registry's modules. Importing this package registers every op and attaches the
Tensor methods and operators."""

from __future__ import annotations

from .. import _operators
from . import einsum, elementwise, indexing, linalg, mutation, reductions, shape, tensor_index

MODULES = (elementwise, reductions, shape, indexing, linalg, einsum, mutation, tensor_index)

_operators.attach_methods(MODULES)
_operators.attach_operators()
