"""``dualad.linalg``'s solvers, factorisations and determinants, with PyTorch's and NumPy's (or
SciPy's) spellings: solve, solve_triangular, inv, det, slogdet, logdet, cholesky,
cholesky_solve, cho_solve, lu, lu_factor, lu_solve, lstsq, pinv, matrix_rank, tensorsolve,
tensorinv, matrix_power.

The ops and their rules live in ``dualad/ops`` (``triangular``, ``factorizations``,
``solvers``, ``determinants``, ``least_squares``); this module gives them their public names,
their signatures and argument checks. Inputs are stacks of matrices (leading dims are a batch);
integer inputs promote to the default float dtype (NumPy's rule); errors keep NumPy's classes
(``numpy.linalg.LinAlgError`` for a singular or non-positive-definite matrix).

>>> import dualad
>>> a = dualad.tensor([[4.0, 2.0], [2.0, 3.0]], requires_grad=True)
>>> x = dualad.linalg.solve(a, dualad.tensor([2.0, 4.0]))
>>> x
tensor([-0.25,  1.5 ], grad_fn=<ViewBackward0>)
>>> dualad.autograd.grad(x.sum(), a)[0]
tensor([[ 0.03125, -0.1875 ],
        [ 0.0625 , -0.375  ]])
"""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor

__all__ = [
    "solve",
    "solve_triangular",
    "inv",
    "det",
    "slogdet",
    "logdet",
    "cholesky",
    "cholesky_solve",
    "cho_solve",
    "lu",
    "lu_factor",
    "lu_solve",
    "lstsq",
    "pinv",
    "matrix_rank",
    "tensorsolve",
    "tensorinv",
    "matrix_power",
]

_TRANS = {0: False, "N": False, 1: "T", "T": "T", 2: "C", "C": "C"}


def solve(A, B, *, left: bool = True):
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``), PyTorch's ``torch.linalg.solve`` and
    NumPy's ``numpy.linalg.solve`` (NumPy 2's rule: ``B`` is a vector only when 1-D, else a
    stack of ``(n, k)`` matrices; batch dims broadcast).

    One LU factorisation (LAPACK getrf) serves the forward and every derivative:
    ``gB = A^{-H} ct``, ``gA = -gB X^H``. Singular points: an exactly singular ``A`` raises
    ``numpy.linalg.LinAlgError`` naming the op and shape.

    >>> import dualad
    >>> dualad.linalg.solve(dualad.tensor([[2.0, 0.0], [0.0, 4.0]]), dualad.tensor([[2.0], [2.0]]))
    tensor([[1. ],
            [0.5]])
    """
    return ops.linalg_solve(A, B, left=left)


def solve_triangular(
    A,
    B,
    *,
    upper=None,
    left: bool = True,
    unitriangular=None,
    lower=None,
    unit_diagonal=None,
    trans=0,
):
    """``X`` with ``A X = B`` for triangular ``A``: PyTorch's spelling (``upper=``, ``left=``,
    ``unitriangular=``, ``B`` a matrix) and SciPy's (``lower=`` default False, ``trans=``,
    ``unit_diagonal=``, ``B`` may be a vector).

    Only the named triangle is read (the diagonal neither with ``unitriangular``); the other
    entries get a zero gradient. The VJP solves with ``A^H`` (one more triangular solve). A
    zero on the diagonal raises ``LinAlgError``.

    >>> import dualad
    >>> a = dualad.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> dualad.linalg.solve_triangular(a, dualad.tensor([2.0, 3.0]), lower=True)
    tensor([1., 2.])
    """
    if upper is None:
        upper = not bool(lower) if lower is not None else True
    elif lower is not None and bool(lower) == bool(upper):
        raise ValueError("dualad.linalg.solve_triangular: upper= and lower= contradict each other")
    unit = bool(unitriangular) or bool(unit_diagonal)
    if trans not in _TRANS:
        raise ValueError(f"dualad.linalg.solve_triangular: invalid trans={trans!r}")
    if _TRANS[trans]:  # solve with A^T (A^H): its triangle is the other one
        A = ops.matrix_transpose(A) if _TRANS[trans] == "T" else ops.conj(ops.matrix_transpose(A))
        upper = not upper
    vector = isinstance(B, Tensor) and B.ndim == 1
    if vector:
        B = ops.reshape(B, (B.shape[0], 1) if left else (1, B.shape[0]))
    x = ops.linalg_solve_triangular(A, B, upper=bool(upper), left=left, unitriangular=unit)
    return ops.reshape(x, (x.shape[-2] * x.shape[-1],)) if vector else x


def inv(A):
    """The inverse of square matrices (``torch.linalg.inv``, ``numpy.linalg.inv``): an LU
    factorisation and LAPACK's getri; ``gA = -Y^H ct Y^H``. A singular matrix raises
    ``LinAlgError``.

    >>> import dualad
    >>> dualad.linalg.inv(dualad.tensor([[1.0, 1.0], [0.0, 1.0]]))
    tensor([[ 1., -1.],
            [ 0.,  1.]])
    """
    return ops.linalg_inv(A)


det = ops.det
slogdet = ops.slogdet
logdet = ops.logdet


def cholesky(A, *, upper: bool = False):
    """The Cholesky factor of Hermitian positive-definite matrices (``torch.linalg.cholesky``,
    ``numpy.linalg.cholesky``): lower ``L`` with ``A = L L^H``, or ``U = L^H`` with ``upper``.

    Only the lower triangle is read; the gradient is Hermitian (PyTorch's convention), made of
    two triangular solves with ``L``. A matrix that is not positive definite raises
    ``LinAlgError``.

    >>> import dualad
    >>> dualad.linalg.cholesky(dualad.tensor([[4.0, 2.0], [2.0, 5.0]]), upper=True)
    tensor([[2., 1.],
            [0., 2.]])
    """
    return ops.linalg_cholesky(A, upper=upper)


cholesky_solve = ops.cholesky_solve


def cho_solve(c_and_lower, b):
    """SciPy's ``cho_solve((c, lower), b)``: ``x`` with ``A x = b`` from the Cholesky factor
    ``c`` of ``A`` (lower when ``lower``, else upper); ``b`` may be a vector.

    >>> import dualad
    >>> c = dualad.linalg.cholesky(dualad.tensor([[4.0, 2.0], [2.0, 5.0]]))
    >>> dualad.linalg.cho_solve((c, True), dualad.tensor([4.0, 2.0]))
    tensor([1., 0.])
    """
    c, lower = c_and_lower
    vector = isinstance(b, Tensor) and b.ndim == 1
    if vector:
        b = ops.reshape(b, (b.shape[0], 1))
    x = ops.cholesky_solve(b, c, upper=not lower)
    return ops.reshape(x, (x.shape[-2],)) if vector else x


lu = ops.linalg_lu
lu_factor = ops.linalg_lu_factor
lu_solve = ops.linalg_lu_solve


def lstsq(A, B, rcond=None, *, driver=None):
    """Least squares, NumPy's ``lstsq(a, b, rcond=None)`` and PyTorch's named result
    ``(solution, residuals, rank, singular_values)``, batched over leading dims. The solution
    is differentiable for ``A`` of full rank; at a rank-deficient ``A`` its derivative raises
    ``LinAlgError`` (it does not exist).

    ``residuals`` and ``singular_values`` differentiate too (see ``dualad.linalg_lstsq``);
    ``rank`` is an integer.

    >>> import dualad
    >>> a = dualad.tensor([[1.0], [1.0]])
    >>> dualad.linalg.lstsq(a, dualad.tensor([1.0, 3.0])).solution
    tensor([2.])
    >>> b = dualad.tensor([1.0, 3.0], requires_grad=True)
    >>> dualad.autograd.grad(dualad.linalg.lstsq(a, b).residuals.sum(), b)[0]
    tensor([-2.,  2.])
    """
    return ops.linalg_lstsq(A, B, rcond, driver=driver)


def pinv(A, rcond=None, hermitian: bool = False, *, atol=None, rtol=None):
    """The pseudo-inverse (``torch.linalg.pinv``'s ``atol``/``rtol``, NumPy's ``rcond``,
    a relative cutoff). The derivative is the constant-rank formula written with ``pinv``
    itself (exact where the rank does not change nearby).

    >>> import dualad
    >>> dualad.linalg.pinv(dualad.tensor([[1.0, 1.0]]))
    tensor([[0.5],
            [0.5]])
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("dualad.linalg.pinv: rcond and rtol can't be both set")
        rtol = rcond
    return ops.linalg_pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


def matrix_rank(A, tol=None, hermitian: bool = False, *, atol=None, rtol=None):
    """The rank of matrices of a stack (``torch.linalg.matrix_rank``; NumPy's ``tol``, an
    absolute cutoff): int64, not differentiable.

    >>> import dualad
    >>> dualad.linalg.matrix_rank(dualad.eye(3))
    tensor(3)
    """
    if tol is not None:
        atol = tol
    return ops.linalg_matrix_rank(A, atol=atol, rtol=rtol, hermitian=hermitian)


def tensorsolve(A, B, dims=None, *, axes=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B`` (``torch.linalg.tensorsolve``'s ``dims``,
    NumPy's ``axes``): a reshaped solve.

    >>> import dualad
    >>> dualad.linalg.tensorsolve(2 * dualad.eye(4).reshape(4, 2, 2), dualad.ones(4))
    tensor([[0.5, 0.5],
            [0.5, 0.5]])
    """
    return ops.linalg_tensorsolve(A, B, axes if dims is None else dims)


def tensorinv(A, ind: int = 2):
    """The inverse of ``A`` seen as a matrix of its first ``ind`` dims by the rest (NumPy's and
    PyTorch's ``tensorinv``): a reshaped inv.

    >>> import dualad
    >>> dualad.linalg.tensorinv(dualad.eye(4).reshape(2, 2, 4), ind=2).shape
    (4, 2, 2)
    """
    return ops.linalg_tensorinv(A, ind)


matrix_power = ops.matrix_power
