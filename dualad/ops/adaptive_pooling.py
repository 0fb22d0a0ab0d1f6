"""Adaptive average and max pooling over the trailing spatial dims of ``(*lead, *S)``.

Output position ``i`` of a spatial dim of input size ``L`` and output size ``out`` pools the
input range ``[floor(i L / out), ceil((i + 1) L / out))`` (PyTorch's rule: windows of varying
length that cover the input, overlapping where ``out`` does not divide ``L``).

- ``adaptive_avg_pool(x)``: the mean of each window. A box mean is the product of one mean per
  dim, so the impl applies one small ``(out, L)`` averaging matrix per spatial dim. It is
  linear; its VJP is ``adaptive_avg_pool_backward`` (the transposed matrices: each cotangent
  entry spread evenly over its window), whose VJP is ``adaptive_avg_pool`` again.
- ``adaptive_max_pool(x) -> (values, indices)``: the maximum of each window and its flat index
  in the input's spatial plane (PyTorch's ``return_indices``). Ties pick the first maximum of
  the window in row-major order and a window holding NaN gives NaN at its last NaN (PyTorch's
  CPU kernel); the whole gradient goes to the chosen index (PyTorch's subgradient). Its rules
  are max pooling's (``scatter_add`` at the indices, ``gather`` of the tangent).

The lead dims are free, so the batching rules only move the vmap dim to the front.
"""

from __future__ import annotations

import numpy as np

from .._dispatch import apply
from .base import linear
from .pooling import indices_pooling_op, lead_batch


def window_bounds(size: int, out: int, xp=np) -> tuple:
    """``(start, end)`` of the ``out`` adaptive windows over a dim of ``size`` (PyTorch's), as
    arrays of ``xp`` (made there: on a GPU, no host array is copied to the device)."""
    i = xp.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _averaging(xp, size: int, out: int, dtype) -> object:
    """The ``(out, size)`` matrix of the window means along one dim."""
    start, end = window_bounds(size, out, xp)
    j = xp.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    real = np.zeros((), dtype).real.dtype  # the coefficients are real, in x's precision
    return (inside / (end - start)[:, None]).astype(real)


def _along(xp, x, matrices):
    """``x`` with ``matrices[j]`` applied along its ``j``-th trailing spatial dim."""
    nd = len(matrices)
    for j, m in enumerate(matrices):
        axis = x.ndim - nd + j
        x = xp.moveaxis(xp.moveaxis(x, axis, -1) @ m.T, -1, axis)
    return xp.ascontiguousarray(x)


def _avg_impl(xp, x, *, output_size):
    nd = len(output_size)
    sizes = x.shape[x.ndim - nd :]
    return _along(xp, x, [_averaging(xp, s, o, x.dtype) for s, o in zip(sizes, output_size)])


def _avg_backward_impl(xp, ct, *, output_size, size):
    return _along(xp, ct, [_averaging(xp, s, o, ct.dtype).T for s, o in zip(size, output_size)])


def _avg_transpose(ct, x, *, output_size):
    nd = len(output_size)
    size = tuple(x.shape[len(x.shape) - nd :])
    return apply(_avg_backward_op, ct, output_size=output_size, size=size)


def _avg_backward_transpose(ct, x, *, output_size, size):
    return apply(_avg_op, ct, output_size=output_size)


_avg_op = linear(
    "adaptive_avg_pool",
    _avg_impl,
    _avg_transpose,
    batch=lead_batch,
    node_name="AdaptiveAvgPoolBackward0",
)
_avg_backward_op = linear(
    "adaptive_avg_pool_backward", _avg_backward_impl, _avg_backward_transpose, batch=lead_batch
)


def adaptive_avg_pool(x, output_size):
    """Adaptive average pooling of the last ``len(output_size)`` dims of ``x``."""
    return apply(_avg_op, x, output_size=tuple(output_size))


def adaptive_avg_pool_backward(ct, output_size, size):
    """The transpose of ``adaptive_avg_pool`` for an input of spatial ``size`` (its VJP;
    exposed for the op database)."""
    return apply(_avg_backward_op, ct, output_size=tuple(output_size), size=tuple(size))


# ---------------------------------------------------------------------------------------------
# adaptive max pooling


def _window_taps(xp, size: int, out: int):
    """``(index, valid)`` of shape ``(out, longest window)``: the input positions of each
    window, clipped, and which of them lie inside it."""
    # made by ``xp`` (on a GPU, no host array is copied over); the longest window from Python
    longest = max(-((-(i + 1) * size) // out) - (i * size) // out for i in range(out))
    start, end = window_bounds(size, out, xp)
    index = start[:, None] + xp.arange(longest)
    valid = index < end[:, None]
    return xp.minimum(index, size - 1), valid


def _max_impl(xp, x, *, output_size):
    nd = len(output_size)
    lead, sizes = x.shape[: x.ndim - nd], x.shape[x.ndim - nd :]
    if 0 in output_size:  # no windows (PyTorch allows it): empty values and indices
        return xp.zeros((*lead, *output_size), x.dtype), xp.zeros((*lead, *output_size), xp.int64)
    taps = [_window_taps(xp, s, o) for s, o in zip(sizes, output_size)]
    # the index arrays broadcast to (*out, *longest): one gather builds every window
    keys, valid = [], True
    for j, (index, ok) in enumerate(taps):
        shape = [1] * (2 * nd)
        shape[j], shape[nd + j] = index.shape
        keys.append(index.reshape(shape))
        valid = valid & ok.reshape(shape)
    win = x[(Ellipsis, *keys)]  # (*lead, *out, *longest)
    win = xp.where(valid, win, -np.inf)
    flat = win.reshape((*lead, *output_size, -1))
    arg = xp.argmax(flat, axis=-1)  # the first maximum; NaN counts as the largest
    values = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0].astype(x.dtype)
    if xp.isnan(values).any():  # PyTorch's CPU kernel keeps the last NaN of a window
        nan = xp.isnan(flat)
        last = flat.shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        arg = xp.where(nan.any(axis=-1), last, arg)
    offsets = xp.unravel_index(arg, tuple(index.shape[1] for index, _ in taps))
    flat_index = 0
    for j, (index, _) in enumerate(taps):
        shape = [1] * len(lead) + [1] * nd
        shape[len(lead) + j] = output_size[j]
        start = index[:, 0].reshape(shape)
        flat_index = flat_index * sizes[j] + (start + offsets[j])
    return values, xp.asarray(flat_index, dtype=xp.int64)


_max_op = indices_pooling_op("adaptive_max_pool", _max_impl, "AdaptiveMaxPoolBackward0")


def adaptive_max_pool(x, output_size):
    """``(values, indices)`` of adaptive max pooling of the last ``len(output_size)`` dims."""
    return apply(_max_op, x, output_size=tuple(output_size))
