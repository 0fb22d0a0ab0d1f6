"""N-d convolution (PyTorch's cross-correlation) as three ops of one trilinear form.

With ``x`` of shape ``(N, C, *S)``, ``w`` of shape ``(C_out, C / groups, *K)`` and ``y`` of shape
``(N, C_out, *O)``, the form ``T(x, w, y) = <y, conv(x, w)>`` is linear in each argument, and
each op is the derivative of ``T`` by one of them:

- ``conv(x, w) -> y``: the convolution itself (``dT/dy``);
- ``conv_input(y, w) -> x``: the transposed convolution (``dT/dx``: the input gradient, and
  PyTorch's ``conv_transpose``), given the input's spatial ``size``;
- ``conv_weight(x, y) -> w``: the correlation of input and output (``dT/dw``: the weight
  gradient), given the kernel's spatial ``kernel`` size.

So each op's VJP is made of the other two (conjugating for complex inputs, PyTorch's
convention) and its JVP of itself (bilinearity): every order of derivative and every transform
composes. Static parameters, normalised by the public functions of ``dualad.nn.functional``:
``stride`` and ``dilation`` (a positive int per spatial dim), ``padding`` (a ``(low, high)`` pair
of non-negative ints per spatial dim: ``padding="same"`` with an even kernel pads one more on
the high side, like PyTorch) and ``groups``.

The impls are im2col: a strided window view of the zero-padded input (no copy), one copy into
``(N, groups, C / groups * prod(K), prod(O))`` matrices and one batched matmul (BLAS); the
transposed convolution adds the columns back, one strided slice per kernel offset. They use only
``xp`` functions that CuPy shares (``as_strided``, ``pad``, ``matmul``).

Batching rules fold the vmap dim into the op instead of looping: into ``N`` when only ``x`` and
``y`` carry it, into the groups when all three do (per-example gradients), into the output
channels of each group when ``w`` and ``y`` do, into the input channels when ``x`` and ``w`` do.
"""

from __future__ import annotations

import math

import numpy as np

from .._dispatch import OpDef, dispatch, register
from ._batching import batch_size
from ._helpers import conj
from .base import move_bdim_to_front, movedim, reshape
from .linalg import product_jvp

# ---------------------------------------------------------------------------------------------
# shapes and the window view


def output_size(size, kernel, stride, padding, dilation) -> tuple[int, ...]:
    """The spatial output size: ``(S + low + high - dilation * (K - 1) - 1) // stride + 1``."""
    return tuple(
        (s + lo + hi - d * (k - 1) - 1) // st + 1
        for s, k, st, (lo, hi), d in zip(size, kernel, stride, padding, dilation)
    )


def windows(xp, x, kernel, out, stride, padding, dilation, value=0):
    """``x`` of shape ``(*lead, *S)`` padded with ``value``, as a view ``(*lead, *out,
    *kernel)`` (read it, never write it): ``view[..., o, k] = xpad[..., o * stride + k *
    dilation]``. ``padding`` is a ``(low, high)`` pair per spatial dim."""
    nd = len(kernel)
    lead = x.ndim - nd
    if any(lo or hi for lo, hi in padding):
        x = xp.pad(x, ((0, 0),) * lead + tuple(padding), constant_values=value)
    strides = x.strides[lead:]
    shape = x.shape[:lead] + tuple(out) + tuple(kernel)
    view_strides = (
        x.strides[:lead]
        + tuple(s * st for s, st in zip(strides, stride))
        + tuple(s * d for s, d in zip(strides, dilation))
    )
    return xp.lib.stride_tricks.as_strided(x, shape, view_strides)


def offset_slices(offset, out, stride, dilation) -> tuple:
    """The strided slices of the padded input that kernel ``offset`` meets at the ``out``
    output positions (one slice per spatial dim)."""
    return tuple(
        slice(k * d, k * d + st * (o - 1) + 1, st)
        for k, d, st, o in zip(offset, dilation, stride, out)
    )


def _columns(xp, x, kernel, out, stride, padding, dilation, groups):
    """The im2col matrices of ``x`` ``(N, C, *S)``: ``(N, groups, C/groups * prod(kernel),
    prod(out))``, rows ordered ``(c, *k)``. Output positions innermost: the copy out of the
    window view then runs along the input's rows (several times faster than positions first)."""
    nd = len(kernel)
    n, c = x.shape[:2]
    win = windows(xp, x, kernel, out, stride, padding, dilation)
    win = win.reshape((n, groups, c // groups, *win.shape[2:]))  # splits C: still a view
    order = (0, 1, 2, *range(3 + nd, 3 + 2 * nd), *range(3, 3 + nd))
    rows = c // groups * math.prod(kernel)
    return xp.ascontiguousarray(win.transpose(order)).reshape(n, groups, rows, math.prod(out))


def _conv_impl(xp, x, w, *, stride, padding, dilation, groups):
    kernel = w.shape[2:]
    out = output_size(x.shape[2:], kernel, stride, padding, dilation)
    cols = _columns(xp, x, kernel, out, stride, padding, dilation, groups)
    wm = w.reshape(groups, w.shape[0] // groups, -1)
    # (G, C_out/G, C/G * prod(K)) @ (N, G, C/G * prod(K), prod(O)): one GEMM per (n, g)
    return xp.matmul(wm, cols).reshape((x.shape[0], w.shape[0], *out))


def _conv_weight_impl(xp, x, y, *, stride, padding, dilation, groups, kernel):
    n, cout = y.shape[:2]
    cols = _columns(xp, x, kernel, y.shape[2:], stride, padding, dilation, groups)
    rows = y.reshape(n, groups, cout // groups, math.prod(y.shape[2:]))
    dw = xp.matmul(rows, cols.transpose(0, 1, 3, 2)).sum(axis=0)  # (G, C_out/G, C/G * K)
    return dw.reshape((cout, x.shape[1] // groups, *tuple(kernel)))


def _conv_input_impl(xp, y, w, *, stride, padding, dilation, groups, size):
    n, cout = y.shape[:2]
    out, kernel = y.shape[2:], w.shape[2:]
    cg = w.shape[1]
    wm = w.reshape(groups, cout // groups, -1)
    rows = y.reshape(n, groups, cout // groups, math.prod(out))
    cols = xp.matmul(wm.transpose(0, 2, 1), rows)  # (N, G, C/G * prod(K), prod(O))
    cols = cols.reshape((n, groups, cg, *tuple(kernel), *tuple(out)))
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, padding))
    xpad = xp.zeros((n, groups, cg, *padded), dtype=cols.dtype)
    # col2im: each kernel offset adds its block at a strided slice of the padded input
    for offset in np.ndindex(*kernel):
        target = (slice(None),) * 3 + offset_slices(offset, out, stride, dilation)
        xpad[target] += cols[(slice(None),) * 3 + offset]
    crop = (slice(None),) * 3 + tuple(slice(lo, lo + s) for s, (lo, _) in zip(size, padding))
    return xp.ascontiguousarray(xpad[crop]).reshape((n, groups * cg, *tuple(size)))


# ---------------------------------------------------------------------------------------------
# the rules: each op's VJP is made of the other two ops, its JVP of itself (_bilinear_op)


def _common(params) -> dict:
    return {k: params[k] for k in ("stride", "padding", "dilation", "groups")}


def conv(x, w, params):
    """``conv(x, w)`` with normalised ``params`` (stride, padding, dilation, groups)."""
    return dispatch(_conv_op, (x, w), params)


def conv_weight(x, y, params, kernel):
    """The weight gradient ``dT/dw``: ``(N, C, *S), (N, C_out, *O) -> (C_out, C/G, *kernel)``."""
    return dispatch(_conv_weight_op, (x, y), dict(_common(params), kernel=tuple(kernel)))


def conv_input(y, w, params, size):
    """The transposed convolution ``dT/dx``: ``(N, C_out, *O), w -> (N, C, *size)``."""
    return dispatch(_conv_input_op, (y, w), dict(_common(params), size=tuple(size)))


def _conv_vjp(cts, outs, args, params, needs):
    x, w = args
    ct = cts[0]
    gx = conv_input(ct, conj(w), params, x.shape[2:]) if needs[0] else None
    gw = conv_weight(conj(x), ct, params, w.shape[2:]) if needs[1] else None
    return gx, gw


def _conv_input_vjp(cts, outs, args, params, needs):
    y, w = args
    ct = cts[0]
    gy = conv(ct, conj(w), _common(params)) if needs[0] else None
    gw = conv_weight(ct, conj(y), params, w.shape[2:]) if needs[1] else None
    return gy, gw


def _conv_weight_vjp(cts, outs, args, params, needs):
    x, y = args
    ct = cts[0]
    gx = conv_input(conj(y), ct, params, x.shape[2:]) if needs[0] else None
    gy = conv(conj(x), ct, _common(params)) if needs[1] else None
    return gx, gy


def _keep_other(needs):
    """A bilinear op's VJP reads argument i only for the other argument's gradient."""
    return (needs[1], needs[0])


# ---------------------------------------------------------------------------------------------
# batching: fold the vmap dim into N, the groups, or the channels of each group

# which argument (and output) plays which role of the form: x, w or y
_ROLES = {"conv": ("x", "w", "y"), "conv_input": ("y", "w", "x"), "conv_weight": ("x", "y", "w")}

# role -> (logical dim of the channels, how many groups they are split in: G or 1) per mode
_FOLDS = {
    "groups": {"x": (1, 1), "y": (1, 1), "w": (0, 1)},  # all three batched
    "cout": {"y": (1, "G"), "w": (0, "G")},  # w and y: per group (G, B, C_out / G)
    "cin": {"x": (1, "G"), "w": (1, 1)},  # x and w: per group (G, B, C / G)
}


def _fold(t, dim: int, groups: int):
    """``t`` with its batch at 0 folded into logical dim ``dim``, laid out as
    ``(groups, B, size / groups)``."""
    b, shape = t.shape[0], tuple(t.shape[1:])
    c = shape[dim] // groups
    t = reshape(t, (b, *shape[:dim], groups, c, *shape[dim + 1 :]))
    t = movedim(t, 0, dim + 1)
    return reshape(t, (*shape[:dim], groups * b * c, *shape[dim + 1 :]))


def _unfold(t, dim: int, groups: int, b: int):
    """The inverse of ``_fold``: the batch back at 0."""
    shape = tuple(t.shape)
    c = shape[dim] // (groups * b)
    t = reshape(t, (*shape[:dim], groups, b, c, *shape[dim + 1 :]))
    t = movedim(t, dim + 1, 0)
    return reshape(t, (b, *shape[:dim], groups * c, *shape[dim + 1 :]))


def _conv_batch(op, args, bdims, params):
    roles = _ROLES[op.name]
    size = batch_size(args, bdims)
    batched = {roles[i] for i, b in enumerate(bdims) if b is not None} | {roles[2]}
    args = [a if b is None else move_bdim_to_front(a, b) for a, b in zip(args, bdims)]
    groups = params["groups"]
    if batched == {"x", "y"}:  # fold into N
        args = [
            a if b is None else reshape(a, (size * a.shape[1], *a.shape[2:]))
            for a, b in zip(args, bdims)
        ]
        out = dispatch(op, tuple(args), params)
        return reshape(out, (size, out.shape[0] // size, *out.shape[1:])), 0
    mode = "groups" if len(batched) == 3 else ("cout" if "y" in batched else "cin")
    folds = {role: (dim, groups if g == "G" else g) for role, (dim, g) in _FOLDS[mode].items()}
    args = [a if b is None else _fold(a, *folds[r]) for a, b, r in zip(args, bdims, roles)]
    if mode == "groups":
        params = dict(params, groups=groups * size)
    return _unfold(dispatch(op, tuple(args), params), *folds[roles[2]], size), 0


def _bilinear_op(name: str, impl, vjp, node_name: str | None = None, sparsity=None) -> OpDef:
    """An op bilinear in its two arguments: its JVP is ``op(ta, b) + op(a, tb)``."""

    def same_op(a, b, **params):
        return dispatch(op, (a, b), params)

    op = register(
        OpDef(
            name,
            impl,
            vjp=vjp,
            jvp=product_jvp(same_op),
            batch=_conv_batch,
            save_mask=_keep_other,
            node_name=node_name,
            sparsity=sparsity,
        )
    )
    return op


# (conv_weight keeps the dense rule: it appears in VJPs, rarely in traced functions)
_conv_op = _bilinear_op(
    "conv", _conv_impl, _conv_vjp, "ConvolutionBackward0", sparsity=("conv", "bilinear")
)
_conv_input_op = _bilinear_op(
    "conv_input", _conv_input_impl, _conv_input_vjp, sparsity=("conv_transpose", "bilinear")
)
_conv_weight_op = _bilinear_op("conv_weight", _conv_weight_impl, _conv_weight_vjp)
