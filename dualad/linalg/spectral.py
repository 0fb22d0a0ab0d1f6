"""``dualad.linalg``'s decompositions and matrix functions: ``eigh eigvalsh svd svdvals
matrix_exp`` (PyTorch's ``torch.linalg`` names and signatures; the ops and their rules are in
``dualad/ops/eigen.py``, ``svd.py`` and ``matrix_functions.py``, whose docstrings give the
derivative conventions).

Singular points, in short: at repeated eigenvalues or singular values, losses of the values
(``eigvalsh``, ``svdvals``, norms, traces of functions of the eigenvalues) and of projectors onto
a whole repeated eigenspace have finite, exact gradients; losses of an eigenvector basis that
the matrix does not define get inf or NaN, never a finite wrong number. The second derivative
of ``sum(f(eigvalsh(A)))`` (and of ``svdvals``) is exact there in forward-over-reverse mode
(``jvp`` of ``grad``); reverse-over-reverse gives NaN where it would need it.
"""

from __future__ import annotations

from typing import NamedTuple

from .._creation import zeros
from .._tensor import Tensor
from ..ops import eigen, eigen_general, matrix_functions
from ..ops import qr as _qr
from ..ops import svd as _svd

__all__ = [
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "svd",
    "svdvals",
    "qr",
    "matrix_exp",
    "EighResult",
    "EigResult",
    "SVDResult",
    "QRResult",
]

# NamedTuple's call form: fields typed Tensor for type checkers, the class keeps its name
EighResult = NamedTuple("EighResult", [("eigenvalues", Tensor), ("eigenvectors", Tensor)])  # noqa: UP014
EigResult = NamedTuple("EigResult", [("eigenvalues", Tensor), ("eigenvectors", Tensor)])  # noqa: UP014
SVDResult = NamedTuple("SVDResult", [("U", Tensor), ("S", Tensor), ("Vh", Tensor)])  # noqa: UP014
QRResult = NamedTuple("QRResult", [("Q", Tensor), ("R", Tensor)])  # noqa: UP014
EighResult.__doc__ = """``eigh``'s result: ascending real eigenvalues, orthonormal eigenvectors
(the columns).

>>> import dualad
>>> dualad.linalg.eigh(dualad.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
tensor([1., 2.])
"""
EigResult.__doc__ = """``eig``'s result: complex eigenvalues and eigenvectors (columns, unit norm).

>>> import dualad
>>> dualad.linalg.eig(dualad.tensor([[0.0, -1.0], [1.0, 0.0]])).eigenvalues
tensor([0.+1.j, 0.-1.j])
"""
SVDResult.__doc__ = """``svd``'s result ``U, S, Vh``: ``A = U @ diag(S) @ Vh``, ``S`` descending.

>>> import dualad
>>> U, S, Vh = dualad.linalg.svd(dualad.tensor([[0.0, 2.0], [3.0, 0.0]]))
>>> S
tensor([3., 2.])
"""
QRResult.__doc__ = """``qr``'s result ``Q, R`` with ``A = Q @ R``, ``R`` upper triangular.

>>> import dualad
>>> Q, R = dualad.linalg.qr(dualad.tensor([[3.0, 1.0], [4.0, 2.0]]))
>>> R.abs()
tensor([[5. , 2.2],
        [0. , 0.4]])
>>> bool(((Q @ R - dualad.tensor([[3.0, 1.0], [4.0, 2.0]])).abs() < 1e-12).all())
True
"""


def eigh(A, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of the Hermitian matrices ``A``
    (..., n, n), reading only the ``UPLO`` triangle (``"L"`` or ``"U"``).

    The gradient is Hermitian (the derivative along Hermitian perturbations, PyTorch's
    convention). Eigenvectors are defined up to sign (phase): only losses invariant to it are
    differentiable (NaN otherwise, complex). At repeated eigenvalues the loss must not depend
    on the basis of the repeated eigenspace (eigenvalues, the projector onto the whole
    eigenspace): such losses get exact finite gradients, the others inf or NaN.

    >>> import dualad
    >>> a = dualad.tensor([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> L, V = dualad.linalg.eigh(a)
    >>> L
    tensor([1., 3.], grad_fn=<LinalgEighBackward0>)
    >>> dualad.autograd.grad(L[1], a)[0]
    tensor([[0.5, 0.5],
            [0.5, 0.5]])
    """
    return EighResult(*eigen.eigh(A, UPLO))


def eigvalsh(A, UPLO: str = "L"):
    """The eigenvalues (ascending) of the Hermitian matrices ``A`` (..., n, n).

    Its gradient ``V diag(g) V^H`` is an op of its own (``eigvalsh_grad``): finite and exact at
    repeated eigenvalues for losses symmetric in them, and so is its JVP (the Hessian-vector
    product of ``sum(f(eigvalsh(A)))`` by ``jvp`` of ``grad``, at ``A = I`` too). A loss that is
    not symmetric in a repeated eigenvalue (``eigvalsh(A)[0]`` at ``A = I``) is not
    differentiable there: the gradient given is the mean over the repeated ones (the
    subgradient that does not depend on a basis, ``amax``'s tie rule).

    >>> import dualad
    >>> a = dualad.eye(2, requires_grad=True)
    >>> dualad.autograd.grad((dualad.linalg.eigvalsh(a) ** 2).sum(), a)[0]
    tensor([[2., 0.],
            [0., 2.]])
    """
    return eigen.eigvalsh(A, UPLO)


def eig(A) -> EigResult:
    """Eigenvalues and eigenvectors (columns of unit norm) of the square matrices ``A``
    (..., n, n), complex even for real ``A`` (PyTorch's convention).

    Eigenvectors are defined up to a phase: only losses invariant to it are differentiable
    (NaN otherwise). The gradient of real ``A`` is real. Repeated eigenvalues: as ``eigh``;
    defective matrices have no derivative.

    >>> import dualad
    >>> L, V = dualad.linalg.eig(dualad.tensor([[0.0, -1.0], [1.0, 0.0]]))
    >>> L
    tensor([0.+1.j, 0.-1.j])
    """
    return EigResult(*eigen_general.eig(A))


def eigvals(A):
    """The eigenvalues (complex) of the square matrices ``A`` (..., n, n); the gradient of
    real ``A`` is real.

    >>> import dualad
    >>> dualad.linalg.eigvals(dualad.tensor([[2.0, 1.0], [0.0, 3.0]]))
    tensor([2.+0.j, 3.+0.j])
    """
    return eigen_general.eigvals(A)


def svd(A, full_matrices: bool = True, *, driver=None) -> SVDResult:
    """``A = U diag(S) Vh`` for the matrices ``A`` (..., m, n); ``S`` descending.

    ``full_matrices=True`` gives square ``U`` and ``Vh``; their columns (rows) past
    ``min(m, n)`` span a complement that ``A`` does not determine: a loss that depends on them
    gets NaN gradients. Singular vectors are defined up to a joint sign (phase): losses must
    be invariant to it. Repeated singular values: as ``eigh``. ``driver`` (a CUDA option of
    PyTorch) must be None.

    >>> import dualad
    >>> U, S, Vh = dualad.linalg.svd(dualad.tensor([[3.0, 0.0], [0.0, -2.0]]))
    >>> S
    tensor([3., 2.])
    """
    if driver is not None:
        raise ValueError(f"dualad.linalg.svd: driver={driver!r} is a CUDA option; use None")
    return SVDResult(*_svd.svd(A, full_matrices))


def svdvals(A, *, driver=None):
    """The singular values (descending) of the matrices ``A`` (..., m, n).

    Its gradient ``U diag(g) Vh`` is an op of its own (``svdvals_grad``), exact at repeated
    singular values for symmetric losses (norms), its JVP too. Zero singular values are kinks
    (``s = |sigma|``): the gradient in them is 0, the subgradient of least norm (``abs`` at
    0; the nuclear norm of a rank-deficient matrix gets ``U1 V1^H`` of the non-zero ones).

    >>> import dualad
    >>> dualad.linalg.svdvals(dualad.tensor([[0.0, 2.0], [1.0, 0.0]]))
    tensor([2., 1.])
    """
    if driver is not None:
        raise ValueError(f"dualad.linalg.svdvals: driver={driver!r} is a CUDA option; use None")
    return _svd.svdvals(A)


def qr(A, mode: str = "reduced") -> QRResult:
    """``A = Q R`` for the matrices ``A`` (..., m, n): ``Q`` with orthonormal columns, ``R``
    upper triangular with a real diagonal (LAPACK's signs). ``mode``: ``'reduced'`` (``Q`` m x
    k, ``R`` k x n, ``k = min(m, n)``), ``'complete'`` (``Q`` m x m) or ``'r'`` (``R`` only,
    ``Q`` empty as in PyTorch).

    Differentiable for ``m >= n`` (reduced, square, ``'r'``); ``'complete'`` with ``m > n``
    (the extra columns of ``Q`` are any basis of a complement) and wide matrices raise when
    differentiated, rank-deficient ``A`` raises ``LinAlgError``.

    >>> import dualad
    >>> Q, R = dualad.linalg.qr(dualad.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> R
    tensor([[-5. , -2.2],
            [ 0. ,  0.4]])
    """
    if mode == "r":
        R = _qr.qr(A, "r")
        return QRResult(zeros(0, dtype=R.dtype, device=R.device), R)
    return QRResult(*_qr.qr(A, mode))


matrix_exp = matrix_functions.matrix_exp
