"""``dualad.optimize``: scipy.optimize with dualad's derivatives.

``minimize``, ``least_squares`` and ``root`` call their scipy namesakes, supplying what each
method can use: gradients (value and gradient from one pass, cached per ``x``), dense or
sparse Hessians, Hessian-vector products (forward over reverse), Jacobians of constraints and
residuals. Parameters may be pytrees (dicts, tuples, lists of arrays or Tensors, nested), of
any floating dtype, on the CPU or a GPU: scipy sees one float64 NumPy vector, the user's
functions their own structure; results come back in it.

Modules: ``_params`` (flattening), ``_objective`` (the cached scalar objective), ``_vector``
(vector functions: constraints, residuals), ``_constraints``, ``_minimize``, ``_residuals``
(``least_squares``, ``root``).

>>> import numpy as np
>>> from dualad import optimize
>>> res = optimize.minimize(lambda x: ((x - 3.0) ** 2).sum(), np.zeros(2), method="BFGS")
>>> np.round(res.x, 6)
array([3., 3.])
"""

from __future__ import annotations

from ._minimize import minimize
from ._residuals import least_squares, root

__all__ = ["least_squares", "minimize", "root"]
