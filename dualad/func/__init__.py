"""Function transforms (``torch.func``-shaped): grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, hvp, linearize and vmap; sparse_jacobian and sparse_hessian (``scipy.sparse`` results).

Each takes NumPy/CuPy arrays and Python numbers wherever it takes tensors, and returns arrays
when no argument is a Tensor (``_arrays.py``).

``grad``/``vjp`` enter a grad level (``grad_level.py``), ``jvp`` a dual level, ``vmap`` a vmap
level; the others are built from these, so every transform composes with every other in any
order and nesting.

>>> import dualad
>>> from dualad.func import jvp
>>> out, tangent = jvp(dualad.sin, (dualad.tensor(0.0),), (dualad.tensor(1.0),))
>>> tangent
tensor(1.)
"""

from __future__ import annotations

from . import grad_function  # noqa: F401 (gives GradLevel its custom Function rule)
from ._forward import jvp
from ._jacobians import hessian, jacfwd, jacrev
from ._products import hvp, linearize
from ._reverse import grad, grad_and_value, vjp
from ._sparse import sparse_hessian, sparse_jacobian
from ._vmap import vmap

__all__ = [
    "grad",
    "grad_and_value",
    "hessian",
    "hvp",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "sparse_hessian",
    "sparse_jacobian",
    "vjp",
    "vmap",
]
