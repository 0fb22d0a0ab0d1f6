"""``dualad.linalg``: linear algebra on stacks of matrices, with PyTorch's and NumPy's spellings.

Every function works on ``(..., m, n)`` inputs (the leading dimensions are a batch, as in
``numpy.linalg``), has reverse, forward and batching rules, and says in its docstring what it
does at singular points. The functions come from four modules of one subject each:

- ``solvers``: solve, solve_triangular, inv, det, slogdet, logdet, cholesky, cholesky_solve,
  cho_solve, lu, lu_factor, lu_solve, lstsq, pinv, matrix_rank, tensorsolve, tensorinv,
  matrix_power;
- ``spectral``: eigh, eigvalsh, eig, eigvals, svd, svdvals, qr, matrix_exp;
- ``norms``: norm, vector_norm, matrix_norm, cond;
- ``products``: multi_dot, cross, vecdot, outer, trace, diagonal, matmul, tensordot,
  matrix_transpose;
- ``matrix_functions``, ``equations``: scipy.linalg's expm, logm, sqrtm, signm, cosm, ...,
  solve_sylvester and the Lyapunov solvers.

``dualad.numpy.linalg`` is built on these with NumPy's signatures and results.
"""

from __future__ import annotations

from . import norms, products, solvers, spectral
from .norms import *
from .products import *
from .solvers import *
from .spectral import *

__all__ = [*solvers.__all__, *spectral.__all__, *norms.__all__, *products.__all__]

from . import equations, matrix_functions  # scipy.linalg's names
from .equations import *
from .matrix_functions import *

__all__ += [*matrix_functions.__all__, *equations.__all__]
