"""NumPy's covariance and correlation over tensors: ``cov corrcoef``, made of dualad ops
(centring, a matrix product), so they differentiate in the observations and the weights.

>>> import dualad
>>> import dualad.numpy as dnp
>>> m = dualad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
>>> dnp.cov(m)
tensor([[ 1., -1.],
        [-1.,  1.]])
>>> dnp.corrcoef(m)
tensor([[ 1., -1.],
        [-1.,  1.]])
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import ops
from ._common import cast, floating, tensor_of
from .joining import concatenate

__all__ = ["cov", "corrcoef"]


def _observations(m, y, rowvar, dtype):
    """The variables as rows of a 2-D tensor of ``dtype`` (float64 for integer input)."""
    x = tensor_of(m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(
            floating(x).dtype, *(() if y is None else (floating(tensor_of(y)).dtype,))
        )
    x = ops.reshape(cast(x, dtype), (1, -1)) if x.ndim < 2 else cast(x, dtype)
    if not rowvar and x.shape[0] != 1:
        x = ops.swapaxes(x, 0, 1)
    if y is not None:
        other = tensor_of(y)
        if other.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        other = ops.reshape(cast(other, dtype), (1, -1)) if other.ndim < 2 else cast(other, dtype)
        if not rowvar and other.shape[0] != 1:
            other = ops.swapaxes(other, 0, 1)
        x = concatenate([x, other], axis=0)
    return x


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """``numpy.cov``: the covariance matrix of the variables (rows, or columns with
    ``rowvar=False``) with NumPy's normalisation (``N - 1``, ``N`` with ``bias``, ``N - ddof``)
    and frequency/analytic weights; a 0-d tensor for one variable.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0, 4.0], [1.0, 0.0, 2.0]], requires_grad=True)
    >>> dnp.cov(a)
    tensor([[2.33333333, 1.        ],
            [1.        , 1.        ]], grad_fn=<DivBackward0>)
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x = _observations(m, y, rowvar, dtype)
    ddof = (0 if bias else 1) if ddof is None else ddof
    w = None
    if fweights is not None:
        w = cast(tensor_of(fweights), x.dtype)
    if aweights is not None:
        a = cast(tensor_of(aweights), x.dtype)
        w = a if w is None else w * a
    if w is None:
        fact = x.shape[1] - ddof
        avg = ops.mean(x, axis=1, keepdims=True)
    else:
        w_sum = ops.sum(w)
        avg = ops.sum(x * w, axis=1, keepdims=True) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * ops.sum(w * cast(tensor_of(aweights), x.dtype)) / w_sum
    if isinstance(fact, (int, float)) and fact <= 0:  # (NumPy's warning, and its inf/nan)
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    centred = x - avg
    weighted = centred if w is None else centred * w
    c = ops.matmul(
        weighted, ops.swapaxes(ops.conj(centred) if x.dtype.kind == "c" else centred, 0, 1)
    )
    c = c / fact
    return ops.reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """``numpy.corrcoef``: the correlation coefficients ``cov[i, j] / sqrt(cov[i, i]
    cov[j, j])`` (real parts clipped to [-1, 1] as NumPy does).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.corrcoef(a)
    tensor([[1., 1.],
            [1., 1.]], grad_fn=<ClampBackward0>)
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = ops.diagonal(c, 0, 0, 1)
    stddev = ops.sqrt(ops.real(d)) if d.dtype.kind == "c" else ops.sqrt(d)
    c = c / ops.unsqueeze(stddev, 1) / ops.unsqueeze(stddev, 0)
    if c.dtype.kind == "c":
        return ops.clip(ops.real(c), -1, 1) + ops.clip(ops.imag(c), -1, 1) * 1j
    return ops.clip(c, -1, 1)
