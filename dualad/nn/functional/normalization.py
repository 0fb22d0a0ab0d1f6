"""Normalisation of ``torch.nn.functional`` by batch and group statistics: batch_norm,
instance_norm, group_norm, and rms_norm (layer_norm and normalize are in ``layers``).

Composites of ops with exact derivatives (the statistics are differentiated through, as in
PyTorch's training mode). Running statistics are updated in place outside the graph, as PyTorch
does: ``running = (1 - momentum) running + momentum * batch`` with the unbiased batch variance;
inside a transform whose batch statistics are per example (vmap) that update is refused by the
in-place write, as in ``torch.func`` (pass no running statistics there).
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ..._creation import as_tensor
from ..._tensor import Tensor
from ...rev.grad_mode import no_grad

__all__ = ["batch_norm", "group_norm", "instance_norm", "rms_norm"]


def _affine(out, weight, bias, channel_shape):
    if weight is not None:
        out = out * ops.reshape(weight, channel_shape)
    if bias is not None:
        out = out + ops.reshape(bias, channel_shape)
    return out


def _check_channels(name, input, tensors):
    if input.ndim < 2:
        raise ValueError(
            f"dualad.nn.functional.{name}: expected an input of shape (N, C, ...), got "
            f"{tuple(input.shape)}"
        )
    channels = input.shape[1]
    for label, t in tensors.items():
        if t is not None and tuple(t.shape) != (channels,):
            raise ValueError(
                f"dualad.nn.functional.{name}: {label} should contain {channels} elements (one "
                f"per channel of input {tuple(input.shape)}), got shape {tuple(t.shape)}"
            )
    return channels


def _update_running(running_mean, running_var, mean, var, count, momentum):
    """PyTorch's running-statistics update (unbiased variance), in place and outside the
    graph."""
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
        if running_var is not None:
            unbiased = var.detach() * (count / max(count - 1, 1))
            running_var.mul_(1 - momentum).add_(unbiased * momentum)


def _normalized(input, dims, eps):
    mean = ops.mean(input, dims, keepdim=True)
    centred = input - mean
    var = ops.mean(centred * centred, dims, keepdim=True)
    return centred * ops.rsqrt(var + eps), mean, var


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
):
    """Normalise each channel (dim 1) of ``(N, C, ...)`` by its statistics over the batch and
    spatial dims (``training=True``, biased variance; the running statistics, when given, are
    updated in place) or by ``running_mean``/``running_var`` (``training=False``); then
    ``* weight + bias`` per channel (``torch.nn.functional.batch_norm``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([[1.0, 10.0], [3.0, 30.0]])
    >>> mean, var = dualad.zeros(2), dualad.ones(2)
    >>> F.batch_norm(x, mean, var, training=True, eps=0.0)
    tensor([[-1., -1.],
            [ 1.,  1.]])
    >>> mean, var
    (tensor([0.2, 2. ]), tensor([ 1.1, 20.9]))
    """
    channels = _check_channels(
        "batch_norm",
        input,
        {"running_mean": running_mean, "running_var": running_var, "weight": weight, "bias": bias},
    )
    shape = (channels,) + (1,) * (input.ndim - 2)
    if not training:
        if running_mean is None or running_var is None:
            raise ValueError(
                "dualad.nn.functional.batch_norm: running_mean and running_var must be given "
                "when training=False"
            )
        mean, var = ops.reshape(running_mean, shape), ops.reshape(running_var, shape)
        return _affine((input - mean) * ops.rsqrt(var + eps), weight, bias, shape)
    count = input.numel() // channels
    if count <= 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size "
            f"{list(input.shape)}"
        )
    dims = (0, *range(2, input.ndim))
    out, mean, var = _normalized(input, dims, eps)
    if running_mean is not None or running_var is not None:
        _update_running(
            running_mean,
            running_var,
            ops.reshape(mean, (channels,)),
            ops.reshape(var, (channels,)),
            count,
            momentum,
        )
    return _affine(out, weight, bias, shape)


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
):
    """Normalise each channel of each example of ``(N, C, ...)`` over its spatial dims
    (``torch.nn.functional.instance_norm``); the running statistics, when given, take the
    batch average of the per-instance ones. ``use_input_stats=False`` normalises by them.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.instance_norm(dualad.tensor([[[1.0, 3.0]]]), eps=0.0)
    tensor([[[-1.,  1.]]])
    """
    channels = _check_channels(
        "instance_norm",
        input,
        {"running_mean": running_mean, "running_var": running_var, "weight": weight, "bias": bias},
    )
    shape = (channels,) + (1,) * (input.ndim - 2)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = tuple(range(2, input.ndim))
    count = 1
    for d in dims:
        count *= input.shape[d]
    if count <= 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size "
            f"{list(input.shape)}"
        )
    out, mean, var = _normalized(input, dims, eps)
    if running_mean is not None or running_var is not None:
        batch_mean = ops.mean(ops.reshape(mean, tuple(input.shape[:2])), 0)
        batch_var = ops.mean(ops.reshape(var, tuple(input.shape[:2])), 0)
        _update_running(running_mean, running_var, batch_mean, batch_var, count, momentum)
    return _affine(out, weight, bias, shape)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalise each group of ``C / num_groups`` channels of each example over those channels
    and the spatial dims, then ``* weight + bias`` per channel
    (``torch.nn.functional.group_norm``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.group_norm(dualad.tensor([[1.0, 3.0, 2.0, 6.0]]), 2, eps=0.0)
    tensor([[-1.,  1., -1.,  1.]])
    """
    if not isinstance(input, Tensor):
        input = as_tensor(input)
    channels = _check_channels("group_norm", input, {"weight": weight, "bias": bias})
    if num_groups <= 0 or channels % num_groups:
        raise ValueError(
            f"dualad.nn.functional.group_norm: Expected number of channels in input to be "
            f"divisible by num_groups, but got input of shape {list(input.shape)} and "
            f"num_groups={num_groups}"
        )
    n = input.shape[0]
    grouped = ops.reshape(input, (n, num_groups, -1))
    out, _, _ = _normalized(grouped, (2,), eps)
    out = ops.reshape(out, tuple(input.shape))
    return _affine(out, weight, bias, (channels,) + (1,) * (input.ndim - 2))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims
    (``torch.nn.functional.rms_norm``); ``eps`` defaults to the machine epsilon of the input's
    dtype, as in PyTorch.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.rms_norm(dualad.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.84852814, 1.13137085]])
    """
    if not isinstance(input, Tensor):
        input = as_tensor(input)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or k > input.ndim or tuple(input.shape[input.ndim - k :]) != normalized_shape:
        raise ValueError(
            f"dualad.nn.functional.rms_norm: Given normalized_shape={list(normalized_shape)}, "
            f"expected input with shape [*, {', '.join(map(str, normalized_shape))}], but got "
            f"input of size{list(input.shape)}"
        )
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise ValueError(
            f"dualad.nn.functional.rms_norm: weight must have shape {normalized_shape}, got "
            f"{tuple(weight.shape)}"
        )
    if eps is None:
        eps = float(np.finfo(input.dtype if input.dtype.kind == "f" else np.float64).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    out = input * ops.rsqrt(ops.mean(input * input, dims, keepdim=True) + eps)
    return out if weight is None else out * weight
