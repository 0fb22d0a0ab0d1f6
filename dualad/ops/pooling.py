"""N-d max and average pooling over the trailing spatial dims of ``(*lead, *S)``.

- ``max_pool(x) -> (values, indices)``: the maximum of each window and its position, a flat
  index into the input's spatial plane (PyTorch's ``return_indices``). Padding is ``-inf`` (never
  chosen over an input element: a window whose inputs are all ``-inf`` picks its first input
  element, as PyTorch does); ties pick the first maximum of the window in row-major order, and
  a window holding NaN gives NaN at its last NaN (PyTorch's CPU kernel). The VJP adds the
  cotangent at the saved indices (``scatter_add``) and the JVP gathers the tangent there: both
  are ops with their own rules, so every order composes. Where values tie, the whole gradient
  goes to the chosen index (PyTorch's subgradient).
- ``avg_pool(x)``: window sums over a divisor: the window's size clipped to the padded input
  (``count_include_pad``), or the number of input elements in it, or ``divisor_override``
  (PyTorch's rules, ceil-mode windows that run off the end included). It is linear: its VJP is
  ``avg_pool_backward`` (the cotangent over the divisors added back into the windows), whose
  own VJP is ``avg_pool`` again.

Parameters are normalised by ``dualad.nn.functional``: per spatial dim ints ``kernel``,
``stride``, ``padding`` (symmetric) and ``dilation``, and ``ceil_mode``. The lead dims are
free, so the batching rule only moves the vmap dim to the front.
"""

from __future__ import annotations

import math

import numpy as np

from .._creation import zeros_for
from .._dispatch import OpDef, apply, register
from .._opdef import LINEAR_DENSE
from .base import linear, move_bdim_to_front, reshape
from .convolution import offset_slices, windows
from .gather_scatter import gather, scatter_add

# ---------------------------------------------------------------------------------------------
# shapes


def pool_output_size(size, kernel, stride, padding, dilation, ceil_mode) -> tuple[int, ...]:
    """PyTorch's pooling output size; in ceil mode, the last window must start inside the input
    or its left padding."""
    out = []
    for s, k, st, p, d in zip(size, kernel, stride, padding, dilation):
        span = s + 2 * p - d * (k - 1) - 1 + (st - 1 if ceil_mode else 0)
        o = span // st + 1
        if ceil_mode and (o - 1) * st >= s + p:
            o -= 1
        out.append(o)
    return tuple(out)


def _pads(size, kernel, stride, padding, dilation, out) -> tuple:
    """``(low, high)`` padding per dim so that every window lies inside the padded input (the
    high side grows for ceil-mode windows that run off the end)."""
    return tuple(
        (p, max(p, (o - 1) * st + d * (k - 1) + 1 - s - p))
        for s, k, st, p, d, o in zip(size, kernel, stride, padding, dilation, out)
    )


def _positions(xp, out, nd_lead, j):
    """The output positions along spatial dim ``j``, shaped to broadcast over the output."""
    shape = [1] * (nd_lead + len(out))
    shape[nd_lead + j] = out[j]
    return xp.arange(out[j]).reshape(shape)


# ---------------------------------------------------------------------------------------------
# max pooling


def _max_pool_impl(xp, x, *, kernel, stride, padding, dilation, ceil_mode):
    nd = len(kernel)
    lead, size = x.ndim - nd, x.shape[x.ndim - nd :]
    out = pool_output_size(size, kernel, stride, padding, dilation, ceil_mode)
    pads = _pads(size, kernel, stride, padding, dilation, out)
    win = windows(xp, x, kernel, out, stride, pads, dilation, value=-np.inf)
    flat = win.reshape((*win.shape[: lead + nd], math.prod(kernel)))
    arg = xp.argmax(flat, axis=-1)  # the first maximum; NaN counts as the largest
    values = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    if xp.isnan(values).any():  # PyTorch's CPU kernel keeps the last NaN of a window
        nan = xp.isnan(flat)
        last = flat.shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        arg = xp.where(nan.any(axis=-1), last, arg)
    offsets = xp.unravel_index(arg, kernel)
    coords, firsts = [], []
    outside = None
    for j in range(nd):
        start = _positions(xp, out, lead, j) * stride[j] - padding[j]
        coord = start + offsets[j] * dilation[j]
        coords.append(coord)
        if pads[j] != (0, 0):  # only windows that reach into the padding can pick it
            off = (coord < 0) | (coord >= size[j])
            outside = off if outside is None else outside | off
        # the window's first input element along j (the choice when all of its inputs are -inf)
        firsts.append(start + (-(start // dilation[j])).clip(0) * dilation[j])
    if outside is not None and not outside.any():
        outside = None
    index = 0
    for j in range(nd):
        coord = coords[j] if outside is None else xp.where(outside, firsts[j], coords[j])
        index = index * size[j] + coord
    return values, xp.asarray(index, dtype=xp.int64)


def _flat_planes(t, nd: int):
    """``t`` ``(*lead, *spatial)`` as ``(prod(lead), prod(spatial))``."""
    shape = tuple(t.shape)
    return reshape(t, (math.prod(shape[: len(shape) - nd]), math.prod(shape[len(shape) - nd :])))


def _spatial_dims(params) -> int:
    """How many trailing dims a max pooling op pools over (its kernel's or output's length)."""
    return len(params["kernel"] if "kernel" in params else params["output_size"])


def max_pool_vjp(cts, outs, args, params, needs):
    """The VJP of an op returning ``(values, flat spatial indices)``: the cotangent added at
    the indices (``scatter_add``)."""
    shape = tuple(args[0].shape)
    nd = _spatial_dims(params)
    ct, index = _flat_planes(cts[0], nd), _flat_planes(outs[1], nd)
    zeros = zeros_for((ct.shape[0], math.prod(shape[len(shape) - nd :])), ct.dtype, (ct,))
    return (reshape(scatter_add(zeros, 1, index, ct), shape),)


def max_pool_jvp(tangents, outs, args, params):
    """The JVP of an op returning ``(values, flat spatial indices)``: the tangent gathered at
    the indices."""
    nd = _spatial_dims(params)
    index = outs[1]
    picked = gather(_flat_planes(tangents[0], nd), 1, _flat_planes(index, nd))
    return reshape(picked, tuple(index.shape)), None


def lead_batch(op, args, bdims, params):
    """Pooling ops take any lead dims: the vmap dim only moves to the front."""
    out = apply(op, move_bdim_to_front(args[0], bdims[0]), **params)
    return out, ((0,) * len(out) if isinstance(out, tuple) else 0)


def indices_pooling_op(name: str, impl, node_name: str) -> OpDef:
    """Register a pooling op returning ``(values, flat spatial indices)`` whose values are
    input entries: the rules scatter and gather at the indices (saved, with the output)."""
    return register(
        OpDef(
            name,
            impl,
            vjp=max_pool_vjp,
            jvp=max_pool_jvp,
            batch=lead_batch,
            save_args=False,
            save_out=True,
            nout=2,
            nondiff_outputs=(1,),
            node_name=node_name,
        )
    )


_max_pool_op = indices_pooling_op("max_pool", _max_pool_impl, "MaxPoolWithIndicesBackward0")


def max_pool(x, params: dict):
    """``(values, indices)`` of max pooling with normalised ``params``."""
    return apply(_max_pool_op, x, **params)


# ---------------------------------------------------------------------------------------------
# average pooling


def _divisor(xp, size, out, kernel, stride, padding, count_include_pad, divisor_override):
    """The divisor of each output position (PyTorch's avg_pool rules), shaped ``out``."""
    if divisor_override:
        return divisor_override
    # computed by ``xp`` from the shapes: on a GPU, no host array is copied to the device
    divisor = xp.ones((), dtype=np.int64)
    for s, o, k, st, p in zip(size, out, kernel, stride, padding):
        start = xp.arange(o) * st - p
        end = xp.minimum(start + k, s + p)
        if count_include_pad:
            count = end - start
        else:
            count = xp.minimum(end, s) - xp.maximum(start, 0)
        divisor = divisor[..., None] * count
    return divisor


def _avg_geometry(x_shape, kernel, stride, padding, ceil_mode, size=None):
    nd = len(kernel)
    size = tuple(x_shape[len(x_shape) - nd :]) if size is None else tuple(size)
    ones = (1,) * nd
    out = pool_output_size(size, kernel, stride, padding, ones, ceil_mode)
    return size, out, _pads(size, kernel, stride, padding, ones, out)


def _avg_pool_impl(
    xp, x, *, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    size, out, pads = _avg_geometry(x.shape, kernel, stride, padding, ceil_mode)
    nd = len(kernel)
    xpad = xp.pad(x, ((0, 0),) * (x.ndim - nd) + pads) if any(map(any, pads)) else x
    total = xp.zeros(x.shape[: x.ndim - nd] + out, dtype=x.dtype)
    for offset in np.ndindex(*kernel):
        total += xpad[(Ellipsis, *offset_slices(offset, out, stride, (1,) * nd))]
    divisor = _divisor(xp, size, out, kernel, stride, padding, count_include_pad, divisor_override)
    return (total / divisor).astype(x.dtype, copy=False)


def _avg_pool_backward_impl(
    xp, ct, *, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, size
):
    size, out, pads = _avg_geometry(None, kernel, stride, padding, ceil_mode, size)
    nd = len(kernel)
    divisor = _divisor(xp, size, out, kernel, stride, padding, count_include_pad, divisor_override)
    share = (ct / divisor).astype(ct.dtype, copy=False)
    lead = ct.shape[: ct.ndim - nd]
    xpad = xp.zeros(lead + tuple(s + lo + hi for s, (lo, hi) in zip(size, pads)), dtype=ct.dtype)
    for offset in np.ndindex(*kernel):
        xpad[(Ellipsis, *offset_slices(offset, out, stride, (1,) * nd))] += share
    crop = tuple(slice(p, p + s) for s, p in zip(size, padding))
    return xp.ascontiguousarray(xpad[(Ellipsis, *crop)])


def _avg_pool_transpose(ct, x, **params):
    nd = len(params["kernel"])
    return apply(_avg_pool_backward_op, ct, **params, size=tuple(x.shape[len(x.shape) - nd :]))


def _avg_pool_backward_transpose(ct, x, *, size, **params):
    return apply(_avg_pool_op, ct, **params)


_avg_pool_op = linear(
    "avg_pool",
    _avg_pool_impl,
    _avg_pool_transpose,
    batch=lead_batch,
    node_name="AvgPoolBackward0",
    sparsity=LINEAR_DENSE,
)
_avg_pool_backward_op = linear(
    "avg_pool_backward",
    _avg_pool_backward_impl,
    _avg_pool_backward_transpose,
    batch=lead_batch,
    sparsity=LINEAR_DENSE,
)


def avg_pool(x, params: dict):
    """Average pooling with normalised ``params``."""
    return apply(_avg_pool_op, x, **params)


def avg_pool_backward(ct, params: dict, size):
    """The transpose of ``avg_pool``: ``ct`` over the divisors added back into the windows of
    an input of spatial ``size`` (the VJP of ``avg_pool``; exposed for the op database)."""
    return apply(_avg_pool_backward_op, ct, **params, size=tuple(size))
