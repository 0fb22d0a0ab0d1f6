"""``dualad.linalg``'s functions of square matrices under ``scipy.linalg``'s names: ``expm logm
sqrtm fractional_matrix_power signm cosm sinm tanm coshm sinhm tanhm expm_frechet``, and
``polar`` (``dualad/ops/polar.py``).

The ops and their rules are in ``dualad/ops/analytic_functions.py`` (``expm`` is
``matrix_exp``, ``dualad/ops/matrix_functions.py``), whose docstrings give the derivative
rules, the costs and the singular points. ``expm_frechet`` is ``expm`` of a block matrix (its
derivatives are ``expm``'s). Values are SciPy's; the differences (a real input whose result is
not real raises ``ValueError``; float32 stays float32; ``logm`` of a singular matrix raises
``LinAlgError``) are stated there.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops import analytic_functions, astype, matrix_functions, narrow
from ..ops import polar as _polar
from ..ops._lapack import linalg_dtype
from ..ops._reducing import _as_tensor

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
    "expm_frechet",
    "polar",
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
polar = _polar.linalg_polar


def expm_frechet(A, E, method=None, compute_expm: bool = True, check_finite: bool = True):
    """``(expm(A), L)`` with ``L`` the Frechet derivative of ``expm`` at ``A`` (..., n, n) in the
    direction ``E`` (only ``L`` when ``compute_expm`` is False), as ``scipy.linalg.expm_frechet``.

    Both come from one exponential of the block matrix ``[[A, E], [0, A]]`` (SciPy's
    ``method="blockEnlarge"``; ``"SPS"``, its default, gives the same values up to rounding), so
    they are differentiable in ``A`` and ``E`` at every order. ``check_finite`` is accepted for
    SciPy's signature (non-finite input gives non-finite output).

    >>> import dualad
    >>> a = dualad.tensor([[0.0, 1.0], [0.0, 0.0]])
    >>> expm_a, frechet = dualad.linalg.expm_frechet(a, dualad.tensor([[0.0, 0.0], [1.0, 0.0]]))
    >>> frechet
    tensor([[0.5       , 0.16666667],
            [1.        , 0.5       ]])
    """
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"dualad.linalg.expm_frechet: unknown implementation {method!r}")
    A, E = _as_tensor(A), _as_tensor(E)
    for name, x in (("A", A), ("E", E)):
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(
                f"dualad.linalg.expm_frechet: expected {name} to be a square matrix "
                f"(A {tuple(A.shape)}, E {tuple(E.shape)})"
            )
    if tuple(A.shape) != tuple(E.shape):
        raise ValueError(
            "dualad.linalg.expm_frechet: expected A and E to be the same shape "
            f"(A {tuple(A.shape)}, E {tuple(E.shape)})"
        )
    dtype = linalg_dtype("expm_frechet", A.dtype, E.dtype)
    A, E = (x if x.dtype == dtype else astype(x, dtype) for x in (A, E))
    n = A.shape[-1]
    block = matrix_functions.block_function(expm, A, E)
    frechet: Tensor = narrow(narrow(block, -2, 0, n), -1, n, n)
    if not compute_expm:
        return frechet
    return narrow(narrow(block, -2, 0, n), -1, 0, n), frechet
