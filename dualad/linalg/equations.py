"""``dualad.linalg``'s linear matrix equations under ``scipy.linalg``'s names:
``solve_sylvester solve_continuous_lyapunov solve_discrete_lyapunov solve_continuous_are``.

The ops and their rules are in ``dualad/ops/matrix_equations.py``: derivatives in every
argument solve the same equation again (the adjoint one for the VJP). A singular equation raises
``numpy.linalg.LinAlgError`` naming the op and the shapes (SciPy's Sylvester solvers return a
perturbed solution there); a non-square coefficient or a right-hand side of the wrong shape
raises ``ValueError`` (as SciPy).
"""

from __future__ import annotations

from ..ops import matrix_equations

__all__ = [
    "solve_sylvester",
    "solve_continuous_lyapunov",
    "solve_discrete_lyapunov",
    "solve_continuous_are",
]

solve_sylvester = matrix_equations.linalg_solve_sylvester
solve_continuous_lyapunov = matrix_equations.linalg_solve_continuous_lyapunov
solve_discrete_lyapunov = matrix_equations.linalg_solve_discrete_lyapunov
solve_continuous_are = matrix_equations.linalg_solve_continuous_are
