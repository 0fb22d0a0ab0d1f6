"""Matrix functions with their own rules: ``matrix_exp``.

The derivative of ``exp`` at ``A`` in the direction ``E`` (its Frechet derivative) is the upper
right block of ``exp([[A, E], [0, A]])`` (Mathias 1996; Al-Mohy and Higham 2009): the JVP is
that block, the VJP the same with ``A^H`` and the cotangent (PyTorch's convention). Both call
``matrix_exp`` itself, so every order and transform composes, and they are finite everywhere:
at ``A = I``, at repeated eigenvalues and at defective (nilpotent) matrices, where rules built
from an eigendecomposition divide by zero. Values come from ``scipy.linalg.expm``
(``cupyx.scipy.linalg.expm`` on CuPy), scaling and squaring with Pade approximants.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._tensor import Tensor
from ._exports import Exports
from ._lapack import per_matrix
from ._spectral import call, floating_array, linalg_op, mH
from .comparison import gt, where
from .complex_parts import abs
from .exp_log import exp2, log2
from .extrema import amax
from .joining import cat
from .rounding import round
from .slicing import narrow

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _expm_module(xp):
    if xp is np:
        return scipy.linalg
    from cupyx.scipy import linalg  # CuPy's SciPy functions: imported on first GPU use

    return linalg


def _matrix_exp_impl(xp, a):
    a = floating_array(xp, a)
    if a.shape[-1] == 0:
        return a.copy()
    expm = _expm_module(xp).expm
    if xp is not np:  # cupyx's expm takes one matrix; SciPy's takes stacks
        return per_matrix(expm, a.shape[:-2], (2,), a).astype(a.dtype, copy=False)
    return expm(a).astype(a.dtype, copy=False)


def block_function(fn, a, e):
    """``fn([[a, e], [0, a]])``: the matrix function ``fn`` (a tensor function with a real
    power series, such as ``matrix_exp``) of the block matrix whose diagonal blocks are
    ``f(a)`` and whose upper right block is the Frechet derivative ``L_f(a, e)``."""
    zeros = a * 0  # (shaped like a under every transform; its derivative is 0)
    if e.dtype.kind == "c" and a.dtype.kind != "c":
        a = a + 0j
        zeros = zeros + 0j
    return fn(cat([cat([a, e], -1), cat([zeros, a], -1)], -2))


def _largest(x):
    """The largest entry's magnitude of each matrix (..., 1, 1); 1 for a zero matrix."""
    largest = amax(abs(x), dim=(-2, -1), keepdim=True)
    return where(gt(largest, 0.0), largest, 1.0)


def _power_of_two_scale(a, e):
    """``2**k`` (..., 1, 1) with ``e * 2**k`` about as large as ``a``: the block matrix of
    ``frechet_block`` then has ``a``'s size, so ``fn``'s scaling (squarings for ``exp``, square
    roots for ``log`` and powers) is ``a``'s, not the direction's. A power of two scales
    exactly, and through ``round`` the scale is piecewise constant: its derivative is 0, which
    is exact because ``L(a, s e) / s = L(a, e)`` for every ``s``."""
    return exp2(round(log2(_largest(a) / _largest(e))))


def frechet_block(fn, a, e):
    """The Frechet derivative of the matrix function ``fn`` at ``a`` in the direction ``e``:
    the upper right block of ``block_function(fn, a, e)`` (``e`` scaled to ``a``'s size and
    back). Written with ``fn`` itself, so it composes at every order."""
    n = a.shape[-1]
    scale = _power_of_two_scale(a, e)
    return narrow(narrow(block_function(fn, a, e * scale), -2, 0, n), -1, n, n) / scale


def frechet_exp(a, e):
    """The Frechet derivative of ``exp`` at ``a`` in the direction ``e``: the upper right
    block of ``matrix_exp([[a, e], [0, a]])``."""
    return frechet_block(matrix_exp, a, e)


def _matrix_exp_vjp(cts, outs, args, params, needs):
    return (frechet_exp(mH(args[0]), cts[0]),)


def _matrix_exp_jvp(tangents, outs, args, params):
    return frechet_exp(args[0], tangents[0])


_matrix_exp_op = linalg_op(
    "matrix_exp",
    _matrix_exp_impl,
    _matrix_exp_vjp,
    _matrix_exp_jvp,
    node_name="LinalgMatrixExpBackward0",
)


@public.method
def matrix_exp(a) -> Tensor:
    """The matrix exponential of the square matrices ``a`` (..., n, n).

    Its derivatives are those of ``exp`` itself (the Frechet derivative, from the exponential
    of a block matrix), finite everywhere: at ``A = I``, at repeated eigenvalues, at defective
    matrices.

    >>> import dualad
    >>> a = dualad.tensor([[0.0, 1.0], [0.0, 0.0]], requires_grad=True)
    >>> dualad.matrix_exp(a)
    tensor([[1., 1.],
            [0., 1.]], grad_fn=<LinalgMatrixExpBackward0>)
    >>> dualad.autograd.grad(dualad.matrix_exp(a).sum(), a)[0]
    tensor([[1.5       , 1.        ],
            [2.16666667, 1.5       ]])
    """
    return call(_matrix_exp_op, "matrix_exp", a, square=True)
