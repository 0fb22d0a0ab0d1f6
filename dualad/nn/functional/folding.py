"""``unfold`` (im2col) and ``fold`` (col2im) with PyTorch's signatures, shapes and errors.

The arithmetic is the two ops of ``dualad/ops/im2col.py``, each the other's adjoint (so the
VJP of ``unfold`` is ``fold`` and vice versa); this module checks and normalises the
arguments. ``unfold`` takes ``(N, C, H, W)`` or ``(C, H, W)``; ``fold`` takes ``(N, C * kh *
kw, L)`` or ``(C * kh * kw, L)``. Every geometry argument is an int or a pair.
"""

from __future__ import annotations

import math

from ..._creation import as_tensor
from ...ops import im2col
from ._arguments import expand_ints

__all__ = ["fold", "unfold"]


def _pair(value, name):
    values = expand_ints(value, 2)
    if values is None:
        count = len(value) if isinstance(value, (tuple, list)) else value
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {count}")
    return values


def _geometry(kernel_size, dilation, padding, stride) -> dict:
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    for name, values, low, what in (
        ("kernel size", kernel, 1, "greater than zero"),
        ("dilation", dilation, 1, "greater than zero"),
        ("stride", stride, 1, "greater than zero"),
        ("padding", padding, 0, "non-negative"),
    ):
        if any(v < low for v in values):
            short = {"kernel size": "kernel", "padding": "pad"}.get(name, name)
            raise RuntimeError(
                f"{name} should be {what}, but got {short}_height: {values[0]} "
                f"{short}_width: {values[1]}"
            )
    return {"kernel": kernel, "dilation": dilation, "padding": padding, "stride": stride}


# the accepted ranks and PyTorch's message for another rank, per function
_RANKS = {
    "unfold": (
        (3, 4),
        "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
        "dimensions for input, but got: {}",
    ),
    "fold": (
        (2, 3),
        "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
        "non-zero dimensions for input, but got: {}",
    ),
}


def _input(x, op):
    """``x`` as a floating or complex tensor of a rank ``op`` takes, non-empty but for N."""
    x = as_tensor(x)
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"dualad.nn.functional.{op}: input of dtype {x.dtype} is not supported (cast "
            "integers with .float())"
        )
    ranks, message = _RANKS[op]
    if x.ndim not in ranks or 0 in x.shape[x.ndim - ranks[0] :]:
        raise RuntimeError(message.format(list(x.shape)))
    return x


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of ``(N, C, H, W)`` (or ``(C, H, W)``) as columns: ``(N, C * kh *
    kw, L)`` with ``L`` the number of block positions (``torch.nn.functional.unfold``, im2col).

    Column ``l`` holds the block at position ``l`` (row-major) of the zero-padded input, its
    rows ordered channel first, then the kernel offsets row-major. Linear: its gradient is
    ``fold``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.unfold(dualad.arange(9.0).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    params = _geometry(kernel_size, dilation, padding, stride)
    input = _input(input, "unfold")
    size = tuple(input.shape[-2:])
    out = im2col.blocks(size, **params)
    if any(o < 1 for o in out):
        raise RuntimeError(
            f"Given input with spatial size {size}, kernel_size={params['kernel']}, "
            f"dilation={params['dilation']}, padding={params['padding']}, calculated shape of "
            f"the array of sliding blocks as {out}, but its components must be at least one."
        )
    return im2col.unfold(input, params)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns of blocks summed back into an image: ``(N, C * kh * kw, L)`` (or ``(C * kh *
    kw, L)``) to ``(N, C, *output_size)`` (``torch.nn.functional.fold``, col2im).

    The adjoint of ``unfold``: entries of overlapping blocks add up, padding is cropped. ``L``
    must be the number of block positions in ``output_size``. Linear: its gradient is
    ``unfold``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.fold(dualad.ones(1, 4, 4), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    size = _pair(output_size, "output_size")
    params = _geometry(kernel_size, dilation, padding, stride)
    input = _input(input, "fold")
    rows, count = input.shape[-2:]
    if rows % math.prod(params["kernel"]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={rows} and kernel_size={params['kernel']}."
        )
    out = im2col.blocks(size, **params)
    if any(o < 1 for o in out) or math.prod(out) != count:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={params['kernel']}, "
            f"dilation={params['dilation']}, padding={params['padding']}, "
            f"stride={params['stride']}, expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {max(out[0], 0)} * {max(out[1], 0)} = "
            f"{max(out[0], 0) * max(out[1], 0)}, but got input.size(2)={count}."
        )
    return im2col.fold(input, params, size)
