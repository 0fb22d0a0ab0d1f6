"""Pooling: ``max_pool1d/2d/3d`` and ``avg_pool1d/2d/3d`` with PyTorch's
signatures, output shapes (``ceil_mode`` included) and argument errors.

The arithmetic is the N-d ops of ``dualad/ops/pooling.py`` (max pooling saves the argmax indices;
its gradient goes to the chosen element of each window, the first maximum where values tie);
this module checks and normalises the arguments. Inputs are ``(N, C, *S)`` or unbatched
``(C, *S)``, real floating.
"""

from __future__ import annotations

from ..._creation import as_tensor
from ...ops.pooling import avg_pool, max_pool, pool_output_size
from ._arguments import expand_ints

__all__ = ["avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d"]


def _input(x, op: str, nd: int):
    x = as_tensor(x)
    if x.dtype.kind == "c":
        kind = "ComplexFloat" if x.dtype.itemsize == 8 else "ComplexDouble"
        raise NotImplementedError(f"\"{op}\" not implemented for '{kind}'")
    if x.dtype.kind != "f":
        raise RuntimeError(
            f"dualad.nn.functional.{op}: input of dtype {x.dtype} is not supported: pooling "
            "takes floating tensors (cast integers with .float())"
        )
    if x.ndim not in (nd + 1, nd + 2) or 0 in x.shape[x.ndim - nd - 1 :]:
        raise RuntimeError(
            f"{op}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim "
            f"batch size for input, but got: {list(x.shape)}"
        )
    return x


_WORDS = {2: "two", 3: "three"}


def _ints(value, nd: int, name: str, op: str, default=None):
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0 and default):
        return default
    values = expand_ints(value, nd)
    if values is None:
        count = "a single int" + ("" if nd == 1 else f", or a tuple of {_WORDS[nd]} ints")
        omitted = "either be omitted, " if name == "stride" else "either be "
        raise RuntimeError(f"{op}: {name} must {omitted}{count}")
    return values


def _geometry(op, x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked, normalised pooling parameters (PyTorch's messages)."""
    kernel = _ints(kernel_size, nd, "kernel_size", op)
    stride = _ints(stride, nd, "stride", op, default=kernel)
    padding = _ints(padding, nd, "padding", op)
    dilation = _ints(dilation, nd, "dilation", op)
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got {list(kernel)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(padding)}")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}"
            )
    size = tuple(x.shape[x.ndim - nd :])
    out = pool_output_size(size, kernel, stride, padding, dilation, bool(ceil_mode))
    if any(o < 1 for o in out):
        lead = tuple(x.shape[x.ndim - nd - 1 : x.ndim - nd])
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, lead + size))}). Calculated output size: "
            f"({'x'.join(map(str, lead + out))}). Output size is too small"
        )
    for s, k, st, p, d, o in zip(size, kernel, stride, padding, dilation, out):
        # a window of dilated taps can fall wholly into the padding (PyTorch then returns
        # -inf with an index outside the input); refuse rather than give a gradient nowhere
        for start in range(-p, (o - 1) * st - p + 1, st):
            if not any(0 <= start + j * d < s for j in range(k)):
                raise RuntimeError(
                    f"{op}: a pooling window (start {start}, kernel_size={k}, dilation={d}) "
                    f"holds no element of the input of size {s}"
                )
    return {
        "kernel": kernel,
        "stride": stride,
        "padding": padding,
        "dilation": dilation,
        "ceil_mode": bool(ceil_mode),
    }


def _max_pool(nd, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    op = f"max_pool{nd}d"
    x = _input(x, op, nd)
    params = _geometry(op, x, nd, kernel_size, stride, padding, dilation, ceil_mode)
    values, indices = max_pool(x, params)
    return (values, indices) if return_indices else values


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """1-d max pooling of ``(N, C, L)`` or ``(C, L)``; PyTorch's ``max_pool1d``.

    ``stride`` defaults to ``kernel_size``; padding (at most half the dilated kernel) is
    ``-inf``; ``ceil_mode`` rounds the output length up (a last window must start inside the
    input or its left padding). ``return_indices=True`` also returns the position of each
    maximum in the input's length (int64, not differentiable). The gradient goes to the chosen
    element: the first maximum of the window where values tie (PyTorch's choice).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]], requires_grad=True)
    >>> F.max_pool1d(x, 2, return_indices=True)
    (tensor([[[3., 5.]]], grad_fn=<MaxPoolWithIndicesBackward0>), tensor([[[1, 3]]]))
    >>> F.max_pool1d(x, 2, ceil_mode=True).sum().backward()
    >>> x.grad
    tensor([[[0., 1., 0., 1., 1.]]])
    """
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-d max pooling of ``(N, C, H, W)`` or ``(C, H, W)``; PyTorch's ``max_pool2d``.

    Parameters as in ``max_pool1d``, each an int or a pair; indices are flat positions in the
    ``H * W`` plane (row-major), as PyTorch's.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.arange(16.0).reshape(1, 1, 4, 4)
    >>> F.max_pool2d(x, 2, return_indices=True)
    (tensor([[[[ 5.,  7.],
              [13., 15.]]]]), tensor([[[[ 5,  7],
              [13, 15]]]]))
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """3-d max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)``; PyTorch's ``max_pool3d``.

    Parameters as in ``max_pool1d``, each an int or a triple; indices are flat positions in the
    ``D * H * W`` volume (row-major).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.max_pool3d(dualad.arange(8.0).reshape(1, 2, 2, 2), 2, return_indices=True)
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool(nd, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor):
    op = f"avg_pool{nd}d"
    x = _input(x, op, nd)
    params = _geometry(op, x, nd, kernel_size, stride, padding, 1, ceil_mode)
    del params["dilation"]
    if divisor is not None and divisor == 0:
        raise RuntimeError("divisor must be not zero")
    params["count_include_pad"] = bool(count_include_pad)
    params["divisor_override"] = None if divisor is None else int(divisor)
    return avg_pool(x, params)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-d average pooling of ``(N, C, L)`` or ``(C, L)``; PyTorch's ``avg_pool1d``.

    Each window's sum is divided by its size clipped to the padded input
    (``count_include_pad=True``) or by the number of input elements in it (``False``); padding is
    zeros, at most half the kernel. ``ceil_mode`` as in ``max_pool1d``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
    >>> F.avg_pool1d(x, 2, padding=1)
    tensor([[[0.5, 2.5, 4.5]]])
    >>> F.avg_pool1d(x, 2, padding=1, count_include_pad=False)
    tensor([[[1. , 2.5, 4.5]]])
    """
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """2-d average pooling of ``(N, C, H, W)`` or ``(C, H, W)``; PyTorch's ``avg_pool2d``.

    Parameters as in ``avg_pool1d`` (ints or pairs); ``divisor_override`` replaces every
    window's divisor.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.avg_pool2d(dualad.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 2.5,  4.5],
             [10.5, 12.5]]])
    """
    geometry = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _avg_pool(2, input, *geometry)


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """3-d average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)``; PyTorch's
    ``avg_pool3d``. Parameters as in ``avg_pool2d`` (ints or triples).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.avg_pool3d(dualad.arange(8.0).reshape(1, 2, 2, 2), 2, divisor_override=4)
    tensor([[[[7.]]]])
    """
    geometry = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _avg_pool(3, input, *geometry)
