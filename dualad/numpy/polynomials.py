"""NumPy's polynomial and convolution functions over tensors: ``polyval vander convolve
correlate polyadd polysub polymul polydiv polyder polyint poly polyfit roots``, made of dualad
ops (Horner's rule, running products, a product with sliding windows, least squares, the
eigenvalues of the companion matrix), so they differentiate in the coefficients, the points,
the roots and both sequences.

>>> import dualad
>>> import dualad.numpy as dnp
>>> p = dualad.tensor([1.0, 0.0, -2.0], requires_grad=True)
>>> dnp.polyval(p, 3.0)
tensor(7., grad_fn=<AddBackward0>)
>>> dnp.convolve(dualad.tensor([1.0, 2.0, 3.0]), dualad.tensor([0.0, 1.0, 0.5]))
tensor([0. , 1. , 2.5, 4. , 1.5])
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import ops
from .._creation import as_tensor, zeros
from .._dispatch import dispatch
from .._tensor import Tensor
from ..ops.convolve import convolve_full_op
from . import linalg
from ._common import cast, promoted_pair, tensor_of
from .joining import concatenate
from .manipulation import atleast_1d, flip
from .padding import pad
from .predicates import allclose

__all__ = [
    "polyval",
    "vander",
    "convolve",
    "correlate",
    "polyadd",
    "polysub",
    "polymul",
    "polyder",
    "polyint",
    "poly",
    "polydiv",
    "polyfit",
    "roots",
]


def polyval(p, x):
    """``numpy.polyval``: ``p[0] * x**(N-1) + ... + p[N-1]`` by Horner's rule.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.polyval(x, 2.0)
    tensor(11., grad_fn=<AddBackward0>)
    """
    coefficients, points = tensor_of(p), tensor_of(x)
    dtype = np.result_type(coefficients.dtype, points.dtype)
    coefficients, points = cast(coefficients, dtype), cast(points, dtype)
    y = points * 0
    for i in range(coefficients.shape[0] if coefficients.ndim else 1):
        y = y * points + (coefficients[i] if coefficients.ndim else coefficients)
    return y


def vander(x, N=None, increasing=False):
    """``numpy.vander``: the columns ``x**(N-1), ..., x, 1`` (reversed with ``increasing``),
    as running products like NumPy's.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.vander(x, 2)
    tensor([[1., 1.],
            [2., 1.],
            [3., 1.]], grad_fn=<FlipBackward0>)
    """
    v = tensor_of(x)
    if v.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = v.shape[0] if N is None else int(N)
    dtype = np.promote_types(v.dtype, np.int64)
    v = cast(v, dtype)
    if n == 0:
        return ops.reshape(v[:0], (v.shape[0], 0)) if v.shape[0] else ops.reshape(v, (0, 0))
    columns = [v * 0 + 1] + [v] * (n - 1)
    powers = ops.cumprod(ops.stack(columns, 1), axis=1)
    return powers if increasing else flip(powers, 1)


def _sequences(a, v):
    x, y = promoted_pair(a, v)
    if x.ndim > 1 or y.ndim > 1:
        raise ValueError("object too deep for desired array")
    x, y = ops.reshape(x, (-1,)), ops.reshape(y, (-1,))
    if x.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if y.shape[0] == 0:
        raise ValueError("v cannot be empty")
    return x, y


def _full_convolution(a, v):
    """``out[i] = sum_k a[k] v[i - k]``: the ``convolve_full`` op (its rules are
    convolutions; vmap batches it in one call)."""
    return dispatch(convolve_full_op, (a, v), {})


def _mode(full, n, m, mode):
    if mode == "full":
        return full
    if mode == "same":
        start = (min(n, m) - 1) // 2
        return full[start : start + max(n, m)]
    if mode == "valid":
        return full[min(n, m) - 1 : max(n, m)]
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def convolve(a, v, mode="full"):
    """``numpy.convolve``: the discrete linear convolution of two 1-D sequences (``mode``
    'full', 'same' or 'valid').

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.convolve(x, [1.0, -1.0])
    tensor([ 1.,  1.,  1., -3.], grad_fn=<ConvolveFullBackward0>)
    """
    x, y = _sequences(a, v)
    if y.shape[0] > x.shape[0]:
        x, y = y, x
    return _mode(_full_convolution(x, y), x.shape[0], y.shape[0], mode)


def correlate(a, v, mode="valid"):
    """``numpy.correlate``: ``c[k] = sum_n a[n + k] conj(v[n])`` of two 1-D sequences.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.correlate(x, [1.0, 1.0])
    tensor([3., 5.], grad_fn=<SliceBackward0>)
    """
    x, y = _sequences(a, v)
    if x.shape[0] < y.shape[0]:  # NumPy's rule: the swapped correlation, reversed, conjugated
        swapped = correlate(y, x, mode)
        return flip(ops.conj(swapped) if swapped.dtype.kind == "c" else swapped, 0)
    if y.dtype.kind == "c":
        y = ops.conj(y)
    # the convolution with the reversed (conjugated) v
    return _mode(_full_convolution(x, flip(y)), x.shape[0], y.shape[0], mode)


# (the coverage table lists the op behind them)
convolve.ops = correlate.ops = ("convolve_full",)


def _aligned(a1, a2):
    """Two coefficient sequences of one length (the shorter padded with leading zeros)."""
    x, y = promoted_pair(a1, a2)
    x, y = atleast_1d(x), atleast_1d(y)
    n = max(x.shape[0], y.shape[0])
    return pad(x, (n - x.shape[0], 0)), pad(y, (n - y.shape[0], 0))


def polyadd(a1, a2):
    """``numpy.polyadd``: the sum of two polynomials (coefficients, highest power first).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.polyadd(x, [1.0, 1.0])
    tensor([1., 3., 4.], grad_fn=<AddBackward0>)
    """
    x, y = _aligned(a1, a2)
    return x + y


def polysub(a1, a2):
    """``numpy.polysub``: the difference of two polynomials.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.polysub(x, [1.0, 1.0])
    tensor([1., 1., 2.], grad_fn=<SubBackward0>)
    """
    x, y = _aligned(a1, a2)
    return x - y


def polymul(a1, a2):
    """``numpy.polymul``: the product of two polynomials.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.polymul(x, [1.0, -1.0])
    tensor([ 1.,  1.,  1., -3.], grad_fn=<ConvolveFullBackward0>)
    """
    x, y = promoted_pair(a1, a2)
    return convolve(atleast_1d(x), atleast_1d(y))


def polyder(p, m=1):
    """``numpy.polyder``: the ``m``-th derivative of a polynomial.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.polyder(x)
    tensor([2., 2.], grad_fn=<MulBackward0>)
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    y = tensor_of(p)
    for _ in range(m):
        n = y.shape[0] - 1
        y = y[:-1] * as_tensor(np.arange(n, 0, -1), device=y.device)
    return y


def polyint(p, m=1, k=None):
    """``numpy.polyint``: the ``m``-th antiderivative, with integration constants ``k``.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.polyint(x)
    tensor([0.33333333, 1.        , 3.        , 0.        ], grad_fn=<CatBackward0>)
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = [0.0] * m if k is None else list(np.atleast_1d(k) if not isinstance(k, Tensor) else k)
    if len(ks) == 1 and m > 1:
        ks = ks * m
    if len(ks) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    y = tensor_of(p)
    for i in range(m):
        divided = y / as_tensor(np.arange(y.shape[0], 0, -1), device=y.device)
        constant = ops.reshape(cast(tensor_of(ks[i]), divided.dtype), (1,))
        y = concatenate([divided, constant])
    return y


def poly(seq_of_zeros):
    """``numpy.poly``: the coefficients of the monic polynomial with the given roots (1-D), or
    the characteristic polynomial of a square matrix (through its eigenvalues, differentiable
    where they are simple). Complex roots in conjugate pairs give real coefficients, as in
    NumPy.

    >>> import dualad, dualad.numpy as dnp
    >>> r = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dnp.poly(r)
    tensor([ 1., -3.,  2.], grad_fn=<ConvolveFullBackward0>)
    """
    x = atleast_1d(tensor_of(seq_of_zeros))
    if x.ndim == 2 and x.shape[0] == x.shape[1] and x.shape[0]:
        x = linalg.eigvals(x)
    if x.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if x.shape[0] == 0:
        return 1.0
    if x.dtype.kind != "c":
        x = cast(x, np.float32 if x.dtype == np.float32 else np.float64)
    a = ops.reshape(cast(tensor_of(1.0), x.dtype), (1,))
    for i in range(x.shape[0]):
        a = convolve(a, ops.stack([x[i] * 0 + 1, -x[i]]))  # (1, -root) of the root's level
    if x.dtype.kind == "c":
        if type(x) is not Tensor:
            raise TypeError(
                "dualad.numpy.poly: complex roots tracked by a transform (vmap, func.grad, a "
                "dual level): whether they come in conjugate pairs cannot be checked"
            )
        roots = x.detach().numpy()
        if np.all(np.sort(roots) == np.sort(roots.conjugate())):
            a = ops.real(a)
    return a


def polydiv(u, v):
    """``numpy.polydiv``: the quotient and remainder of dividing polynomial ``u`` by ``v``
    (coefficients highest power first), by NumPy's long division, so both differentiate in
    ``u`` and ``v``. The remainder loses its leading coefficients while they are close to 0
    (NumPy's rule: a test of the values, so under ``vmap`` it raises).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.polydiv(dualad.tensor([3.0, 5.0, 2.0]), dualad.tensor([2.0, 1.0]))
    (tensor([1.5 , 1.75]), tensor([0.25]))
    """
    u, v = atleast_1d(tensor_of(u)), atleast_1d(tensor_of(v))
    if u.ndim != 1 or v.ndim != 1:
        raise ValueError("dualad.numpy.polydiv: u and v must be 1-D sequences of coefficients")
    dtype = np.result_type(u.dtype, v.dtype, 0.0)  # (NumPy's u + 0.0: floating, NEP 50)
    u, v = cast(u, dtype), cast(v, dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    r, quotient = u, []
    for k in range(m - n + 1):  # (NumPy's loop, each step subtracting a shifted multiple)
        d = scale * r[k]
        quotient.append(d)
        r = r - d * pad(v, (k, m - n - k))
    q = ops.stack(quotient, 0) if quotient else zeros((1,), dtype=dtype, device=u.device)
    while r.shape[0] > 1 and allclose(r[0], 0, rtol=1e-14):
        r = r[1:]
    return q, r


def roots(p):
    """``numpy.roots``: the roots of the polynomial with coefficients ``p`` (highest power
    first), the eigenvalues of its companion matrix, so they differentiate in ``p`` where they
    are simple roots (a repeated root has no derivative: inf/NaN there). Leading zeros are
    dropped and trailing zeros give zero roots, as in NumPy (a test of the values: under
    ``vmap`` it raises); real when every root is real, as ``numpy.linalg.eigvals``.

    >>> import dualad, dualad.numpy as dnp
    >>> p = dualad.tensor([1.0, -3.0, 2.0], requires_grad=True)
    >>> dnp.roots(p)
    tensor([2., 1.], grad_fn=<...>)
    """
    p = atleast_1d(tensor_of(p))
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    nonzero = p != 0
    if type(nonzero) is not Tensor:
        raise ValueError(
            "dualad.numpy.roots: which coefficients are zero decides the number of roots, so "
            "it cannot run under vmap (each example could have its own); call it per example"
        )
    positions = ops.nonzero(nonzero).numpy()[:, 0]
    if positions.size == 0:
        return zeros((0,), dtype=np.result_type(p.dtype, 0.0), device=p.device)
    trailing = p.shape[0] - int(positions[-1]) - 1
    p = p[int(positions[0]) : int(positions[-1]) + 1]
    if p.dtype.kind not in "fc":
        p = cast(p, np.float64)
    n = p.shape[0]
    if n > 1:
        # the companion matrix: the first row -p[1:] / p[0], ones below the diagonal
        shift = as_tensor(np.eye(n - 1, dtype=p.dtype)[:-1], device=p.device)
        companion = concatenate([ops.unsqueeze(-p[1:] / p[0], 0), shift], 0)
        found = linalg.eigvals(companion)
    else:
        found = zeros((0,), dtype=p.dtype, device=p.device)
    if trailing:
        found = concatenate([found, zeros((trailing,), dtype=found.dtype, device=p.device)])
    return found


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """``numpy.polyfit``: the least-squares polynomial fit of degree ``deg`` (coefficients
    highest power first), NumPy's algorithm (scaled Vandermonde columns, ``lstsq``), so the
    coefficients differentiate in ``y``, ``x`` and ``w`` where the fit has full rank. ``full``
    and ``cov`` return what NumPy returns; a rank-deficient fit warns ``RankWarning`` like
    NumPy (its derivative raises: ``dualad.linalg.lstsq``).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([0.0, 1.0, 2.0, 3.0])
    >>> dnp.polyfit(x, 2 * x + 1, 1)
    tensor([2., 1.])
    """
    order = int(deg) + 1
    x, y = tensor_of(x), tensor_of(y)
    x = cast(x, np.result_type(x.dtype, 0.0))
    y = cast(y, np.result_type(y.dtype, 0.0))
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(x.dtype).eps)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = cast(tensor_of(w), np.result_type(tensor_of(w).dtype, 0.0))
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = ops.sqrt(ops.sum(lhs * lhs, 0))
    lhs = lhs / scale
    c, residuals, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = c / (scale if c.ndim == 1 else scale[:, None])
    if int(rank) != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    if full:
        return c, residuals, rank, s, rcond
    if not cov:
        return c
    base = linalg.inv(ops.matmul(ops.matrix_transpose(lhs), lhs))
    base = base / (scale[:, None] * scale[None, :])
    if cov == "unscaled":
        factor = 1.0
    else:
        if x.shape[0] <= order:
            raise ValueError(
                "the number of data points must exceed order to scale the covariance matrix"
            )
        factor = residuals / (x.shape[0] - order)
    if y.ndim == 1:
        return c, base * factor
    return c, base[:, :, None] * factor
