"""``dualad.linalg``'s functions of square matrices under ``scipy.linalg``'s names: ``expm logm
sqrtm fractional_matrix_power signm cosm sinm tanm coshm sinhm tanhm``.

The ops and their rules are in ``dualad/ops/analytic_functions.py`` (``expm`` is
``matrix_exp``, ``dualad/ops/matrix_functions.py``), whose docstrings give the derivative
rules, the costs and the singular points. Values are SciPy's; the differences (a real input
whose result is not real raises ``ValueError``; float32 stays float32; ``logm`` of a singular
matrix raises ``LinAlgError``) are stated there.
"""

from __future__ import annotations

from ..ops import analytic_functions, matrix_functions

__all__ = [
    "expm",
    "logm",
    "sqrtm",
    "fractional_matrix_power",
    "signm",
    "cosm",
    "sinm",
    "tanm",
    "coshm",
    "sinhm",
    "tanhm",
]

expm = matrix_functions.matrix_exp
logm = analytic_functions.linalg_logm
sqrtm = analytic_functions.linalg_sqrtm
fractional_matrix_power = analytic_functions.linalg_fractional_matrix_power
signm = analytic_functions.linalg_signm
cosm = analytic_functions.linalg_cosm
sinm = analytic_functions.linalg_sinm
tanm = analytic_functions.linalg_tanm
coshm = analytic_functions.linalg_coshm
sinhm = analytic_functions.linalg_sinhm
tanhm = analytic_functions.linalg_tanhm
