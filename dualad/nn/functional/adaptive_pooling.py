"""Adaptive pooling: ``adaptive_avg_pool1d/2d/3d`` and ``adaptive_max_pool1d/2d/3d`` with
PyTorch's signatures, output sizes (``None`` keeps an input size) and argument errors.

Output position ``i`` of a dim of input size ``L`` pools ``[floor(i L / out), ceil((i + 1) L /
out))`` (PyTorch's rule). The arithmetic is the ops of ``dualad/ops/adaptive_pooling.py``;
this module checks and normalises the arguments. Inputs are ``(N, C, *S)`` or unbatched ``(C,
*S)``; average pooling takes complex inputs too (it is linear), max pooling real floating ones.
"""

from __future__ import annotations

from ..._creation import as_tensor
from ...ops.adaptive_pooling import adaptive_avg_pool, adaptive_max_pool

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
]


def _arguments(op, nd, input, output_size, real):
    x = as_tensor(input)
    if x.dtype.kind not in ("f" if real else "fc"):
        raise RuntimeError(
            f"dualad.nn.functional.{op}: input of dtype {x.dtype} is not supported: it takes "
            f"{'real ' if real else ''}floating tensors (cast integers with .float())"
        )
    if x.ndim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument "
                f"#1 'self' (while checking arguments for {op})"
            )
        raise RuntimeError(
            f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(x.shape)}"
        )
    for dim in range(x.ndim - nd, x.ndim):
        if x.shape[dim] == 0:
            raise RuntimeError(
                f"{op}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(x.shape)} with dimension {dim} being empty"
            )
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) != nd:
        raise RuntimeError(f"{op}: output_size must be {nd}")
    sizes = x.shape[x.ndim - nd :]
    size = []
    for o, s in zip(output_size, sizes):
        if o is None:
            o = s
        if isinstance(o, bool) or not isinstance(o, int) or o < 0:
            raise RuntimeError(f"{op}: output_size must be non-negative ints or None, got {o!r}")
        size.append(o)
    return x, tuple(size)


def _avg(nd, input, output_size):
    x, size = _arguments(f"adaptive_avg_pool{nd}d", nd, input, output_size, real=False)
    return adaptive_avg_pool(x, size)


def _max(nd, input, output_size, return_indices):
    x, size = _arguments(f"adaptive_max_pool{nd}d", nd, input, output_size, real=True)
    values, indices = adaptive_max_pool(x, size)
    return (values, indices) if return_indices else values


def adaptive_avg_pool1d(input, output_size):
    """The mean of ``output_size`` windows along the last dim of ``(N, C, L)`` or ``(C, L)``
    (``torch.nn.functional.adaptive_avg_pool1d``): window ``i`` spans ``[floor(i L / out),
    ceil((i + 1) L / out))``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.adaptive_avg_pool1d(dualad.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]]), 3)
    tensor([[1.5, 3. , 4.5]])
    """
    return _avg(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Adaptive average pooling of ``(N, C, H, W)`` or ``(C, H, W)`` to ``output_size`` (an
    int or a pair; ``None`` keeps that input size), as ``adaptive_avg_pool1d`` per dim.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.adaptive_avg_pool2d(dualad.arange(16.0).reshape(1, 4, 4), (2, None))
    tensor([[[ 2.,  3.,  4.,  5.],
             [10., 11., 12., 13.]]])
    """
    return _avg(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Adaptive average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (an int or a
    triple; ``None`` keeps that input size).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.adaptive_avg_pool3d(dualad.arange(8.0).reshape(1, 2, 2, 2), 1)
    tensor([[[[3.5]]]])
    """
    return _avg(3, input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """The maximum of ``output_size`` windows along the last dim of ``(N, C, L)`` or ``(C, L)``
    (``torch.nn.functional.adaptive_max_pool1d``; windows as in ``adaptive_avg_pool1d``).

    ``return_indices=True`` also returns each maximum's position (int64, not differentiable).
    The gradient goes to the chosen element: the first maximum of a window where values tie
    (PyTorch's choice).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.adaptive_max_pool1d(dualad.tensor([[1.0, 5.0, 3.0, 4.0, 2.0]]), 3, True)
    (tensor([[5., 5., 4.]]), tensor([[1, 1, 3]]))
    """
    return _max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive max pooling of ``(N, C, H, W)`` or ``(C, H, W)``; indices are flat positions in
    the ``H * W`` plane (row-major), as PyTorch's.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.adaptive_max_pool2d(dualad.arange(9.0).reshape(1, 3, 3), 2, return_indices=True)
    (tensor([[[4., 5.],
             [7., 8.]]]), tensor([[[4, 5],
             [7, 8]]]))
    """
    return _max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)``; indices are flat
    positions in the ``D * H * W`` volume.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.adaptive_max_pool3d(dualad.arange(8.0).reshape(1, 2, 2, 2), 1, True)
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    return _max(3, input, output_size, return_indices)
