"""``unfold`` (im2col) and ``fold`` (col2im): sliding blocks of an image as columns and back.

- ``unfold(x) -> cols``: ``x`` of shape ``(*lead, C, *S)`` to ``(*lead, C * prod(kernel), L)``,
  ``L = prod(out)`` the number of block positions: ``cols[..., (c, k), o] = xpad[..., c,
  o * stride + k * dilation]`` (rows ordered ``(c, *k)``, positions row-major), ``xpad`` ``x``
  zero-padded by ``padding`` on both sides of each spatial dim (PyTorch's ``unfold``).
- ``fold(cols) -> x``: the adjoint, given the spatial ``size``: each column entry is added back
  at its position of the padded image, which is then cropped (PyTorch's ``fold``; overlapping
  blocks sum).

Each is linear and the other's transpose, so each op's VJP is the other op and its JVP the op
itself: every order and transform composes, complex inputs included (real coefficients: no
conjugate is needed). Parameters, normalised by ``dualad.nn.functional``: per spatial dim ints
``kernel``, ``dilation``, ``padding`` and ``stride``. The dims before ``C`` are free, so the
batching rule only moves the vmap dim to the front.
"""

from __future__ import annotations

import math

import numpy as np

from .._dispatch import apply
from .base import linear
from .convolution import offset_slices, output_size, windows
from .pooling import lead_batch


def blocks(size, *, kernel, dilation, padding, stride) -> tuple[int, ...]:
    """The number of block positions along each spatial dim (may be < 1 for a bad geometry)."""
    return output_size(size, kernel, stride, [(p, p) for p in padding], dilation)


def _unfold_impl(xp, x, *, kernel, dilation, padding, stride):
    nd = len(kernel)
    lead = x.ndim - nd  # the dims before the spatial ones, C included
    out = blocks(x.shape[lead:], kernel=kernel, dilation=dilation, padding=padding, stride=stride)
    pads = tuple((p, p) for p in padding)
    win = windows(xp, x, kernel, out, stride, pads, dilation)  # (*lead, *out, *kernel)
    order = (*range(lead), *range(lead + nd, lead + 2 * nd), *range(lead, lead + nd))
    cols = xp.ascontiguousarray(win.transpose(order))  # (*lead, *kernel, *out)
    rows = x.shape[lead - 1] * math.prod(kernel)
    return cols.reshape((*x.shape[: lead - 1], rows, math.prod(out)))


def _fold_impl(xp, cols, *, kernel, dilation, padding, stride, size):
    nd = len(kernel)
    out = blocks(size, kernel=kernel, dilation=dilation, padding=padding, stride=stride)
    lead = cols.shape[:-2]
    c = cols.shape[-2] // math.prod(kernel)
    cols = cols.reshape((*lead, c, *kernel, *out))
    padded = tuple(s + 2 * p for s, p in zip(size, padding))
    xpad = xp.zeros((*lead, c, *padded), dtype=cols.dtype)
    keep = (slice(None),) * nd
    # col2im: each kernel offset adds its block of columns at a strided slice of the image
    for offset in np.ndindex(*kernel):
        xpad[(Ellipsis, *offset_slices(offset, out, stride, dilation))] += cols[
            (Ellipsis, *offset, *keep)
        ]
    crop = tuple(slice(p, p + s) for s, p in zip(size, padding))
    return xp.ascontiguousarray(xpad[(Ellipsis, *crop)])


def _unfold_transpose(ct, x, **params):
    nd = len(params["kernel"])
    return apply(_fold_op, ct, **params, size=tuple(x.shape[len(x.shape) - nd :]))


def _fold_transpose(ct, cols, *, size, **params):
    return apply(_unfold_op, ct, **params)


_unfold_op = linear(
    "unfold", _unfold_impl, _unfold_transpose, batch=lead_batch, node_name="Im2ColBackward0"
)
_fold_op = linear(
    "fold", _fold_impl, _fold_transpose, batch=lead_batch, node_name="Col2ImBackward0"
)


def unfold(x, params: dict):
    """im2col of ``x`` ``(*lead, C, *S)`` with normalised ``params`` (kernel, dilation,
    padding, stride): ``(*lead, C * prod(kernel), L)``."""
    return apply(_unfold_op, x, **params)


def fold(cols, params: dict, size):
    """col2im of ``cols`` ``(*lead, C * prod(kernel), L)`` into ``(*lead, C, *size)`` (the
    adjoint of ``unfold``: overlapping blocks sum)."""
    return apply(_fold_op, cols, **params, size=tuple(size))
