"""Convolutions: ``conv1d``, ``conv2d``, ``conv3d`` and their transposes
``conv_transpose1d/2d/3d``, with PyTorch's signatures, output shapes and argument errors.

The arithmetic is the N-d ops of ``dualad/ops/convolution.py`` (im2col and one batched matmul;
derivatives of every order, forward mode and vmap without loops); this module checks and
normalises the arguments, handles unbatched inputs and adds the bias. Real and complex floating
inputs (PyTorch's conjugate convention for complex gradients); integer inputs raise.
"""

from __future__ import annotations

from ..._creation import as_tensor
from ...ops import reshape, squeeze, unsqueeze
from ...ops.convolution import conv, conv_input
from ._arguments import expand_ints

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]


def _tensor(value, name: str, op: str):
    if value is None:
        return None
    t = as_tensor(value)
    if t.dtype.kind not in "fc":
        raise RuntimeError(
            f"dualad.nn.functional.{op}: {name} of dtype {t.dtype} is not supported: "
            "convolutions take floating or complex tensors (cast integers with .float())"
        )
    return t


def _ints(value, nd: int, name: str):
    """An int or a sequence of ``nd`` ints (PyTorch's expansion of scalar arguments)."""
    values = expand_ints(value, nd)
    if values is None:
        shown = list(value) if isinstance(value, (tuple, list)) else value
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nd} values to match "
            f"the convolution dimensions, but got {name}={shown}"
        )
    return values


def _padding(padding, kernel, stride, dilation, nd: int):
    """``(low, high)`` pairs per dim from an int, a sequence, ``'valid'`` or ``'same'``."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        # the total d * (k - 1) split with the odd one on the high side (PyTorch)
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple((t // 2, t - t // 2) for t in totals)
    pads = _ints(padding, nd, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pads)


def _sizes(shape) -> str:
    return list(shape).__repr__()


def _check_channels(op, x, weight, groups, transposed: bool) -> None:
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    w = tuple(weight.shape)
    if transposed:
        if w[0] != x.shape[1]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {_sizes(w)}, expected input"
                f"{_sizes(x.shape)} to have {w[0]} channels, but got {x.shape[1]} channels "
                "instead"
            )
        if w[0] % groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be divisible by {groups} at "
                f"dimension 0, but got weight of size [{_sizes(w)}] instead"
            )
        return
    if w[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{_sizes(w)}] instead"
        )
    if x.shape[1] != w[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_sizes(w)}, expected input"
            f"{_sizes(x.shape)} to have {w[1] * groups} channels, but got {x.shape[1]} channels "
            "instead"
        )


def _prepare(op, nd, x, weight, bias, transposed, groups):
    """The checked tensors, with an unbatched input given a batch of one."""
    x = _tensor(x, "input", op)
    weight = _tensor(weight, "weight", op)
    bias = _tensor(bias, "bias", op)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got "
            f"input of size: {_sizes(x.shape)}"
        )
    unbatched = x.ndim == nd + 1
    if unbatched:
        x = unsqueeze(x, 0)
    if weight.ndim != nd + 2:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
            f"{_sizes(weight.shape)}, but got {x.ndim}-dimensional input of size "
            f"{_sizes(x.shape)} instead"
        )
    for other in (weight, bias):
        if other is not None and other.dtype != x.dtype:
            raise RuntimeError(
                f"{op}: expected input and {'weight' if other is weight else 'bias'} to have "
                f"the same dtype, but got {x.dtype} and {other.dtype}"
            )
    channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != channels):
        raise RuntimeError(
            f"Given weight of size {_sizes(weight.shape)}, expected bias to be 1-dimensional "
            f"with {channels} elements, but got bias of size {_sizes(bias.shape)} instead"
        )
    return x, weight, bias, unbatched


def _steps(stride, dilation, nd: int):
    """Checked ``stride`` and ``dilation`` tuples."""
    stride = _ints(stride, nd, "stride")
    dilation = _ints(dilation, nd, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    return stride, dilation


def _finish(y, bias, unbatched: bool, nd: int):
    if bias is not None:
        y = y + reshape(bias, (-1,) + (1,) * nd)
    return squeeze(y, 0) if unbatched else y


def _conv(op, nd, x, weight, bias, stride, padding, dilation, groups):
    x, weight, bias, unbatched = _prepare(op, nd, x, weight, bias, False, groups)
    stride, dilation = _steps(stride, dilation, nd)
    kernel = tuple(weight.shape[2:])
    pads = _padding(padding, kernel, stride, dilation, nd)
    _check_channels(op, x, weight, groups, False)
    padded = [s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads)]
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    if any(p < k for p, k in zip(padded, spans)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than "
            "actual input size"
        )
    params = {"stride": stride, "padding": pads, "dilation": dilation, "groups": int(groups)}
    return _finish(conv(x, weight, params), bias, unbatched, nd)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution (cross-correlation) of ``input`` ``(N, C_in, L)`` or ``(C_in, L)`` with
    ``weight`` ``(C_out, C_in / groups, K)``, plus ``bias`` ``(C_out,)``; PyTorch's
    ``torch.nn.functional.conv1d``.

    ``padding``: an int, a 1-tuple, ``'valid'`` (none) or ``'same'`` (output length = input
    length; stride 1 only; an even total goes one more on the right). The output length is
    ``(L + 2 * padding - dilation * (K - 1) - 1) // stride + 1``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([[[1.0, 2.0, 3.0, 4.0]]], requires_grad=True)
    >>> w = dualad.tensor([[[1.0, -1.0]]])
    >>> y = F.conv1d(x, w, padding=1)
    >>> y
    tensor([[[-1., -1., -1., -1.,  4.]]], grad_fn=<ConvolutionBackward0>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([[[0., 0., 0., 0.]]])
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution (cross-correlation) of ``input`` ``(N, C_in, H, W)`` or ``(C_in, H, W)``
    with ``weight`` ``(C_out, C_in / groups, kH, kW)``, plus ``bias`` ``(C_out,)``; PyTorch's
    ``torch.nn.functional.conv2d``.

    ``stride``, ``padding`` and ``dilation`` are ints or pairs; ``padding`` may also be
    ``'valid'`` or ``'same'`` (stride 1 only). Each output size is
    ``(size + 2 * padding - dilation * (k - 1) - 1) // stride + 1``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.arange(16.0).reshape(1, 1, 4, 4)
    >>> w = dualad.ones(1, 1, 2, 2, requires_grad=True)
    >>> y = F.conv2d(x, w, stride=2)
    >>> y
    tensor([[[[10., 18.],
              [42., 50.]]]], grad_fn=<ConvolutionBackward0>)
    >>> dualad.autograd.grad(y.sum(), w)[0]
    tensor([[[[20., 24.],
              [36., 40.]]]])
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution (cross-correlation) of ``input`` ``(N, C_in, D, H, W)`` or
    ``(C_in, D, H, W)`` with ``weight`` ``(C_out, C_in / groups, kD, kH, kW)``; PyTorch's
    ``conv3d``. Parameters as in ``conv2d`` (ints or triples, ``'valid'``, ``'same'``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.conv3d(dualad.ones(1, 1, 3, 3, 3), dualad.ones(1, 1, 2, 2, 2), padding="same").shape
    (1, 1, 3, 3, 3)
    """
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _transpose(nd, x, weight, bias, stride, padding, output_padding, groups, dilation):
    op = f"conv_transpose{nd}d"
    x, weight, bias, unbatched = _prepare(op, nd, x, weight, bias, True, groups)
    stride, dilation = _steps(stride, dilation, nd)
    extra = _ints(output_padding, nd, "output_padding")
    if isinstance(padding, str):
        raise RuntimeError(f"{op}: padding must be an int or a tuple of ints, not a string")
    pads = _padding(padding, (), stride, dilation, nd)
    _check_channels(op, x, weight, groups, True)
    if any(e < 0 or e >= s for e, s in zip(extra, stride)):
        # (PyTorch also allows output_padding < dilation; those extra elements are outside
        # every window, which this transpose's derivatives do not model)
        raise RuntimeError(
            f"{op}: output padding must be non-negative and smaller than stride, but got "
            f"output_padding={list(extra)} and stride={list(stride)}"
        )
    kernel = tuple(weight.shape[2:])
    size = tuple(
        (n - 1) * s - 2 * p + d * (k - 1) + e + 1
        for n, s, (p, _), d, k, e in zip(x.shape[2:], stride, pads, dilation, kernel, extra)
    )
    if any(s <= 0 for s in size):
        raise RuntimeError(
            f"{op}: the output size {list(size)} is too small for input {_sizes(x.shape)}"
        )
    params = {"stride": stride, "padding": pads, "dilation": dilation, "groups": int(groups)}
    return _finish(conv_input(x, weight, params, size), bias, unbatched, nd)


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """1-d transposed convolution (the gradient of ``conv1d`` with respect to its input) of
    ``input`` ``(N, C_in, L)`` or ``(C_in, L)`` with ``weight`` ``(C_in, C_out / groups, K)``;
    PyTorch's ``conv_transpose1d``. The output length is ``(L - 1) * stride - 2 * padding +
    dilation * (K - 1) + output_padding + 1``; ``output_padding`` must be smaller than
    ``stride``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.conv_transpose1d(dualad.tensor([[[1.0, 2.0]]]), dualad.tensor([[[1.0, 10.0]]]))
    tensor([[[ 1., 12., 20.]]])
    """
    return _transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """2-d transposed convolution (the gradient of ``conv2d`` with respect to its input) of
    ``input`` ``(N, C_in, H, W)`` or ``(C_in, H, W)`` with ``weight``
    ``(C_in, C_out / groups, kH, kW)``; PyTorch's ``conv_transpose2d`` (``output_padding``
    smaller than ``stride``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.conv_transpose2d(dualad.ones(1, 1, 2, 2), dualad.ones(1, 1, 2, 2), stride=2).shape
    (1, 1, 4, 4)
    """
    return _transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """3-d transposed convolution (the gradient of ``conv3d`` with respect to its input) of
    ``input`` ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` with ``weight``
    ``(C_in, C_out / groups, kD, kH, kW)``; PyTorch's ``conv_transpose3d``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.conv_transpose3d(dualad.ones(1, 1, 2, 2, 2), dualad.ones(1, 1, 2, 2, 2)).sum()
    tensor(64.)
    """
    return _transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation)
