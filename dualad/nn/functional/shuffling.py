"""``pixel_shuffle``, ``pixel_unshuffle`` and ``channel_shuffle``: rearrangements of channels and
pixels, with PyTorch's signatures and errors.

Each is a ``reshape``, a ``permute`` and a ``reshape`` (views where the layout allows): exact,
linear, and differentiable at every order under every transform, complex inputs included.
"""

from __future__ import annotations

from ... import ops
from .layers import _tensor

__all__ = ["channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]


def _factor(op, x, factor, name):
    if isinstance(factor, bool) or not isinstance(factor, int) or factor <= 0:
        raise RuntimeError(f"{op} expects a positive {name}, but got {factor}")
    if x.ndim < 3:
        raise RuntimeError(
            f"{op} expects input to have at least 3 dimensions, but got input with {x.ndim} "
            "dimension(s)"
        )


def pixel_shuffle(input, upscale_factor):
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``: ``out[..., c, h r + i, w r + j] =
    in[..., c r^2 + i r + j, h, w]`` (``torch.nn.functional.pixel_shuffle``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.pixel_shuffle(dualad.arange(4.0).reshape(4, 1, 1), 2)
    tensor([[[0., 1.],
             [2., 3.]]])
    """
    x, r = _tensor(input), upscale_factor
    _factor("pixel_shuffle", x, r, "upscale_factor")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    k = len(lead)
    x = ops.reshape(x, (*lead, c // (r * r), r, r, h, w))
    x = ops.permute(x, (*range(k), k, k + 3, k + 1, k + 4, k + 2))
    return ops.reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """The inverse of ``pixel_shuffle``: ``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``
    (``torch.nn.functional.pixel_unshuffle``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.pixel_unshuffle(dualad.arange(4.0).reshape(1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    x, r = _tensor(input), downscale_factor
    _factor("pixel_unshuffle", x, r, "downscale_factor")
    *lead, c, h, w = x.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                f"input.size({dim})={size} is not divisible by {r}"
            )
    k = len(lead)
    x = ops.reshape(x, (*lead, c, h // r, r, w // r, r))
    x = ops.permute(x, (*range(k), k, k + 2, k + 4, k + 1, k + 3))
    return ops.reshape(x, (*lead, c * r * r, h // r, w // r))


def channel_shuffle(input, groups):
    """Interleave the ``groups`` groups of channels of ``(N, C, *)``: channel ``g C/groups + i``
    moves to ``i groups + g`` (``torch.nn.functional.channel_shuffle``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.channel_shuffle(dualad.arange(6.0).reshape(1, 6, 1), 2).flatten()
    tensor([0., 3., 1., 4., 2., 5.])
    """
    x = _tensor(input)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    if x.ndim <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(x.shape)}"
        )
    n, c, *rest = x.shape
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    x = ops.reshape(x, (n, groups, c // groups, *rest))
    return ops.reshape(ops.transpose(x, 1, 2), (n, c, *rest))
