"""The op registry's modules. Importing this package registers every op (``dualad._operators``
attaches the Tensor methods and operators, from above)."""

from __future__ import annotations

from .. import _creation
from . import einsum, elementwise, indexing, linalg, mutation, reductions, shape, tensor_index

MODULES = (elementwise, reductions, shape, indexing, linalg, einsum, mutation, tensor_index)

# tensors made of tracked values (dualad.tensor([x[0], 2 * x[1]]) inside a transform) are built
# with these ops: the creation layer below asks for them
_creation.install_ops(shape.stack, shape.broadcast_to, shape.cat)
