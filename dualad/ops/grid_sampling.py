"""``grid_sample`` on 4-D inputs (PyTorch's ``grid_sampler_2d``) as two ops of derivative order.

``x`` is ``(N, C, H, W)``, ``grid`` ``(N, Ho, Wo, 2)`` of normalised ``(gx, gy)`` in ``[-1, 1]``
(beyond it: the padding). Coordinates follow PyTorch: ``ix = (gx + 1) / 2 * (W - 1)`` with
``align_corners``, else ``((gx + 1) W - 1) / 2``; ``padding_mode`` ``border`` clips ``ix`` to
``[0, W - 1]``, ``reflection`` reflects it about the borders (the pixel centres with
``align_corners``, the pixel edges without) and clips; ``zeros`` reads 0 outside. ``bilinear``
blends the four neighbours with the weights ``(1 - fx, fx) x (1 - fy, fy)``; ``nearest`` reads
the neighbour at ``rint(ix), rint(iy)`` (half to even, as PyTorch's ``nearbyint``).

- ``grid_sample(x, grid; order=(a, b)) -> (N, C, Ho, Wo)``: ``d^a/dgx^a d^b/dgy^b`` of the
  sample (``order=(0, 0)`` the sample itself). Bilinear: the x weights are ``(1 - fx, fx)``
  for ``a = 0``, ``(-sx, sx)`` for ``a = 1`` with ``sx = d ix / d gx`` (the unnormalisation's
  scale times the clip's 0/1 and the reflection's +-1: PyTorch's ``*_set_grad`` values, 0 on a
  clipped border itself), 0 for ``a >= 2`` (``ix`` is piecewise linear in ``gx``); likewise in
  y. Nearest: every derivative order above 0 is 0 (piecewise constant in the grid).
- ``grid_sample_transpose(ct, grid; order, size) -> (N, C, H, W)``: the adjoint in its first
  argument (each output entry's cotangent spread over its neighbours with the same weights).

Both are linear in their first argument, and the grid derivative of an order is the next
order, so the rules close over the two ops: with ``S = grid_sample``, ``T`` its transpose and
``S'x``, ``S'y`` the orders one higher in x and y, the VJP of ``S`` is ``T(ct)`` for ``x`` and
``(sum_c ct S'x, sum_c ct S'y)`` for the grid; that of ``T(ct)`` is ``S(z)`` for ``ct`` and
``(sum_c ct S'x(z), sum_c ct S'y(z))`` for the grid; the JVPs are the same forms. Every
derivative order (the bilinear cross term ``d2/dgx dgy`` is not 0) and transform composes.
The points where ``ix`` or ``iy`` is an integer (the weights' kinks) and the clip borders take
PyTorch's one-sided values. Real floating inputs only (as PyTorch).

Batching: a batched grid folds the vmap dim into ``N`` (the other argument broadcast), else it
goes into the channels ``C`` of the first argument (every channel shares the grid).
"""

from __future__ import annotations

import numpy as np

from .._creation import zeros_for
from .._dispatch import OpDef, apply, register
from ._batching import batch_size, front
from .base import move_bdim_to_front, permute, reshape
from .joining import stack
from .reductions import sum as _sum

# ---------------------------------------------------------------------------------------------
# coordinates


def _clip(xp, ix, slope, size):
    """PyTorch's ``clip_coordinates_set_grad``: ``ix`` in ``[0, size - 1]``, slope 0 at and
    beyond the borders."""
    inside = (ix > 0) & (ix < size - 1)
    return xp.clip(ix, 0, size - 1), slope * inside


def _reflect(xp, ix, slope, twice_low, twice_high):
    """PyTorch's ``reflect_coordinates_set_grad``: ``ix`` reflected into ``[twice_low / 2,
    twice_high / 2]``, the slope's sign flipped on every odd reflection."""
    if twice_low == twice_high:
        return xp.zeros_like(ix), xp.zeros_like(slope)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = ix - low
    sign = xp.where(shifted < 0, -1, 1).astype(ix.dtype)
    shifted = xp.abs(shifted)
    extra = xp.fmod(shifted, span)
    odd = (xp.floor(shifted / span) % 2) == 1
    return xp.where(odd, span - extra + low, extra + low), slope * xp.where(odd, -sign, sign)


def _source(xp, g, size, padding_mode, align_corners):
    """``(ix, d ix / d g)`` of normalised coordinates ``g`` along a dim of ``size``."""
    if align_corners:
        ix, scale = (g + 1) / 2 * (size - 1), (size - 1) / 2
    else:
        ix, scale = ((g + 1) * size - 1) / 2, size / 2
    slope = xp.full(g.shape, scale, dtype=g.dtype)
    if padding_mode == "border":
        ix, slope = _clip(xp, ix, slope, size)
    elif padding_mode == "reflection":
        if align_corners:
            ix, slope = _reflect(xp, ix, slope, 0, 2 * (size - 1))
        else:
            ix, slope = _reflect(xp, ix, slope, -1, 2 * size - 1)
        ix, slope = _clip(xp, ix, slope, size)
    return ix, slope


def _corners(xp, g, size, mode, padding_mode, align_corners, order):
    """The ``(index, weight)`` pairs along one dim: each index (int, possibly outside the
    input) with the weight of its order-``order`` derivative (0 where outside)."""
    ix, slope = _source(xp, g, size, padding_mode, align_corners)
    if mode == "nearest":
        index = xp.rint(ix).astype(np.int64)
        weights = [xp.ones_like(ix) if order == 0 else xp.zeros_like(ix)]
        indices = [index]
    else:
        low = xp.floor(ix)
        frac = ix - low
        low = low.astype(np.int64)
        indices = [low, low + 1]
        if order == 0:
            weights = [1 - frac, frac]
        elif order == 1:
            weights = [-slope, slope]
        else:
            weights = [xp.zeros_like(ix), xp.zeros_like(ix)]
    out = []
    for index, weight in zip(indices, weights):
        inside = (index >= 0) & (index < size)
        out.append((xp.clip(index, 0, size - 1), xp.where(inside, weight, 0)))
    return out


def _taps(xp, grid, size, mode, padding_mode, align_corners, order):
    """Every neighbour of every output position: ``(flat index (N, P), weight (N, P))``."""
    n = grid.shape[0]
    gx = grid[..., 0].reshape(n, -1)
    gy = grid[..., 1].reshape(n, -1)
    h, w = size
    xs = _corners(xp, gx, w, mode, padding_mode, align_corners, order[0])
    ys = _corners(xp, gy, h, mode, padding_mode, align_corners, order[1])
    return [(iy * w + ix, wy * wx) for iy, wy in ys for ix, wx in xs]


# ---------------------------------------------------------------------------------------------
# the two ops


def _sample_impl(xp, x, grid, *, mode, padding_mode, align_corners, order):
    n, c, h, w = x.shape
    flat = x.reshape(n, c, h * w)
    out = xp.zeros((n, c, grid.shape[1] * grid.shape[2]), dtype=x.dtype)
    for index, weight in _taps(xp, grid, (h, w), mode, padding_mode, align_corners, order):
        picked = xp.take_along_axis(flat, xp.broadcast_to(index[:, None], out.shape), axis=2)
        out += picked * weight[:, None].astype(x.dtype, copy=False)
    return out.reshape((n, c, *grid.shape[1:3]))


def _transpose_impl(xp, ct, grid, *, mode, padding_mode, align_corners, order, size):
    n, c = ct.shape[:2]
    h, w = size
    flat = ct.reshape(n, c, -1)
    base = (xp.arange(n * c) * (h * w)).reshape(n, c, 1)
    out = xp.zeros(n * c * h * w, dtype=ct.dtype)
    for index, weight in _taps(xp, grid, size, mode, padding_mode, align_corners, order):
        keys = (base + index[:, None]).reshape(-1)
        values = (flat * weight[:, None]).reshape(-1)
        out += xp.bincount(keys, weights=values, minlength=out.size).astype(ct.dtype)
    return out.reshape(n, c, h, w)


def _next(params, axis: int):
    """The params of the derivative one order higher along ``axis`` (0: x, 1: y), or None
    where it is identically 0 (nearest, or bilinear beyond first order)."""
    order = list(params["order"])
    order[axis] += 1
    if params["mode"] == "nearest" or order[axis] > 1:
        return None
    return dict(params, order=tuple(order))


def _sample_params(params):
    return {k: v for k, v in params.items() if k != "size"}


def _grid_grad(ct, z, grid, params, op):
    """``(sum_c ct S'x(z), sum_c ct S'y(z))`` as ``grid``'s gradient ``(N, Ho, Wo, 2)``."""
    parts = []
    for axis in (0, 1):
        higher = _next(params, axis)
        if higher is None:
            parts.append(zeros_for(tuple(grid.shape[:3]), grid.dtype, (grid,)))
        else:
            parts.append(_sum(ct * apply(op, z, grid, **_sample_params(higher)), 1))
    return stack(parts, -1)


def _sample_vjp(cts, outs, args, params, needs):
    x, grid = args
    ct = cts[0]
    gx = apply(_transpose_op, ct, grid, **params, size=tuple(x.shape[2:])) if needs[0] else None
    ggrid = _grid_grad(ct, x, grid, params, _sample_op) if needs[1] else None
    return gx, ggrid


def _transpose_vjp(cts, outs, args, params, needs):
    ct, grid = args
    z = cts[0]
    sample = _sample_params(params)
    gct = apply(_sample_op, z, grid, **sample) if needs[0] else None
    ggrid = _grid_grad(ct, z, grid, sample, _sample_op) if needs[1] else None
    return gct, ggrid


def _grid_tangent(op, first, grid, t_grid, params, extra):
    """The tangent through the grid: ``sum over axes of op'(first) * t_grid[..., axis]`` (the
    sample's) or ``op'(first * t_grid[..., axis])`` (the transpose's)."""
    total = None
    for axis in (0, 1):
        higher = _next(params, axis)
        if higher is None:
            continue
        t = reshape(t_grid[..., axis], (t_grid.shape[0], 1, *t_grid.shape[1:3]))
        if op is _sample_op:
            term = apply(op, first, grid, **higher, **extra) * t
        else:
            term = apply(op, first * t, grid, **higher, **extra)
        total = term if total is None else total + term
    return total


def _jvp(op, tangents, args, params, extra):
    first, grid = args
    spatial = extra["size"] if extra else tuple(grid.shape[1:3])
    t_first, t_grid = tangents
    total = None if t_first is None else apply(op, t_first, grid, **params, **extra)
    if t_grid is not None:
        term = _grid_tangent(op, first, grid, t_grid, params, extra)
        if term is not None:
            total = term if total is None else total + term
    if total is None:
        return zeros_for((*first.shape[:2], *spatial), first.dtype, args)
    return total


def _sample_jvp(tangents, outs, args, params):
    return _jvp(_sample_op, tangents, args, params, {})


def _transpose_jvp(tangents, outs, args, params):
    size = {"size": params["size"]}
    return _jvp(_transpose_op, tangents, args, _sample_params(params), size)


def _batch(op, args, bdims, params):
    first, grid = args
    if bdims[1] is not None:  # fold the vmap dim into N
        b = batch_size(args, bdims)
        first, grid = front(first, bdims[0], b), front(grid, bdims[1], b)
        first = reshape(first, (b * first.shape[1], *first.shape[2:]))
        grid = reshape(grid, (b * grid.shape[1], *grid.shape[2:]))
        out = apply(op, first, grid, **params)
        return reshape(out, (b, out.shape[0] // b, *out.shape[1:])), 0
    first = move_bdim_to_front(first, bdims[0])  # fold into C: the channels share the grid
    b, n, c = first.shape[:3]
    moved = reshape(_swap01(first), (n, b * c, *first.shape[3:]))
    out = apply(op, moved, grid, **params)
    return _swap01(reshape(out, (n, b, c, *out.shape[2:]))), 0


def _swap01(t):
    return permute(t, (1, 0, *range(2, t.ndim)))


_sample_op = register(
    OpDef(
        "grid_sample",
        _sample_impl,
        vjp=_sample_vjp,
        jvp=_sample_jvp,
        batch=_batch,
        node_name="GridSampler2DBackward0",
    )
)
_transpose_op = register(
    OpDef(
        "grid_sample_transpose",
        _transpose_impl,
        vjp=_transpose_vjp,
        jvp=_transpose_jvp,
        batch=_batch,
    )
)


def grid_sample(x, grid, params: dict):
    """The sample of ``x`` at ``grid`` with normalised ``params`` (mode, padding_mode,
    align_corners); ``order`` defaults to ``(0, 0)``."""
    params = dict(params)
    params.setdefault("order", (0, 0))
    return apply(_sample_op, x, grid, **params)


def grid_sample_transpose(ct, grid, params: dict, size):
    """The adjoint of ``grid_sample`` in its input, for an input of spatial ``size``."""
    params = dict(params)
    params.setdefault("order", (0, 0))
    return apply(_transpose_op, ct, grid, **params, size=tuple(size))
