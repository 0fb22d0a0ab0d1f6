"""``dualad.numpy.linalg``'s decompositions: ``svd svdvals eigh eigvalsh eig eigvals qr``
(dualad.linalg's ops with NumPy's signatures, promotion and NumPy 2's named-tuple results;
``dualad.linalg`` has their derivative conventions).

>>> import dualad
>>> import dualad.numpy as dnp
>>> a = dualad.tensor([[2.0, 0.0], [0.0, 3.0]], requires_grad=True)
>>> dnp.linalg.eigvalsh(a)
tensor([2., 3.], grad_fn=<LinalgEigvalshBackward0>)
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..linalg import spectral as linalg_spectral
from ._common import floating, tensor_of

__all__ = ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "qr"]


def _square_input(a, name: str):
    x = floating(tensor_of(a))
    if x.ndim < 2:
        raise np.linalg.LinAlgError(
            f"{x.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if name and x.shape[-1] != x.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return x


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``numpy.linalg.svd``: ``SVDResult(U, S, Vh)`` (``S`` alone when ``compute_uv`` is
    False); ``hermitian=True`` takes them from ``eigh`` like NumPy (``S = |eigenvalues|``
    sorted descending).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.svd(a).S
    tensor([5.4649857 , 0.36596619], grad_fn=<LinalgSvdBackward0>)
    """
    x = _square_input(a, "svd" if hermitian else "")
    if hermitian:
        if not compute_uv:
            s = ops.abs(linalg_spectral.eigvalsh(x))
            return ops.flip(ops.sort(s, -1).values, (-1,))
        w, v = linalg_spectral.eigh(x)
        order = ops.flip(ops.sort(ops.abs(w), -1).indices, (-1,))
        s = ops.take_along_dim(ops.abs(w), order, -1)
        signs = ops.take_along_dim(ops.sgn(w), order, -1)
        index = ops.broadcast_to(order.unsqueeze(-2), tuple(v.shape))
        u = ops.take_along_dim(v, index, -1)
        vh = ops.conj(ops.matrix_transpose(u * signs.unsqueeze(-2)))
        return linalg_spectral.SVDResult(u, s, vh)
    if not compute_uv:
        return linalg_spectral.svdvals(x)
    return linalg_spectral.svd(x, full_matrices=bool(full_matrices))


def svdvals(x, /):
    """``numpy.linalg.svdvals``: the singular values, descending.

    >>> import dualad, dualad.numpy as dnp
    >>> s = dualad.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.svdvals(s)
    tensor([3.61803399, 1.38196601], grad_fn=<LinalgSvdvalsBackward0>)
    """
    return linalg_spectral.svdvals(_square_input(x, ""))


def eigh(a, UPLO="L"):
    """``numpy.linalg.eigh``: ``EighResult(eigenvalues, eigenvectors)`` of Hermitian
    matrices (the ``UPLO`` triangle is read).

    >>> import dualad, dualad.numpy as dnp
    >>> s = dualad.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.eigh(s).eigenvalues
    tensor([1.38196601, 3.61803399], grad_fn=<LinalgEighBackward0>)
    """
    return linalg_spectral.eigh(_square_input(a, "eigh"), UPLO)


def eigvalsh(a, UPLO="L"):
    """``numpy.linalg.eigvalsh``: the eigenvalues (ascending) of Hermitian matrices.

    >>> import dualad, dualad.numpy as dnp
    >>> s = dualad.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.eigvalsh(s)
    tensor([1.38196601, 3.61803399], grad_fn=<LinalgEigvalshBackward0>)
    """
    return linalg_spectral.eigvalsh(_square_input(a, "eigvalsh"), UPLO)


def qr(a, mode="reduced"):
    """``numpy.linalg.qr``: ``QRResult(Q, R)`` for ``mode`` ``'reduced'`` or ``'complete'``,
    ``R`` alone for ``'r'`` (``'raw'``, LAPACK's Householder reflectors, is not supported).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.qr(a).R
    tensor([[-3.16227766, -4.42718872],
            [ 0.        , -0.63245553]], grad_fn=<LinalgQrBackward0>)
    """
    x = _square_input(a, "")
    if mode == "raw":
        raise NotImplementedError(
            "dualad.numpy.linalg.qr: mode='raw' (Householder reflectors) is not supported; use "
            "'reduced', 'complete' or 'r'"
        )
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    if mode == "r":
        return linalg_spectral.qr(x, "r").R
    return linalg_spectral.qr(x, mode)


def _real_if_real(a, values, *others):
    """NumPy's ``eig``/``eigvals`` of real input: real results when every eigenvalue is real
    (decided from the values, like NumPy)."""
    if a.dtype.kind == "c" or not bool(ops.all(ops.imag(values) == 0)):
        return (values, *others)
    return (ops.real(values), *(ops.real(o) for o in others))


def eig(a):
    """``numpy.linalg.eig``: ``EigResult(eigenvalues, eigenvectors)``, complex unless the
    input is real and every eigenvalue is real (NumPy's rule).

    >>> import dualad, dualad.numpy as dnp
    >>> s = dualad.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.eig(s).eigenvalues
    tensor([1.38196601, 3.61803399], grad_fn=<RealBackward0>)
    """
    x = _square_input(a, "eig")
    w, v = linalg_spectral.eig(x)
    return linalg_spectral.EigResult(*_real_if_real(x, w, v))


def eigvals(a):
    """``numpy.linalg.eigvals``: the eigenvalues, complex unless real input has real ones.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.eigvals(a)
    tensor([-0.37228132,  5.37228132], grad_fn=<RealBackward0>)
    """
    x = _square_input(a, "eigvals")
    return _real_if_real(x, linalg_spectral.eigvals(x))[0]


# the registered ops behind each function, for the coverage table (``coverage._ops_of``)
for _fn, _ops in (
    (svd, ("linalg_svd", "linalg_svdvals")),
    (svdvals, ("linalg_svdvals",)),
    (eigh, ("linalg_eigh",)),
    (eigvalsh, ("linalg_eigvalsh",)),
    (eig, ("linalg_eig",)),
    (eigvals, ("linalg_eigvals",)),
    (qr, ("linalg_qr", "linalg_qr_r")),
):
    _fn.ops = _ops
del _fn, _ops
