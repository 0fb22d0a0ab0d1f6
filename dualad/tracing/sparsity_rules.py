"""Sparsity rules of the op families whose structure follows their parameters (DESIGN.md 10):
each rule gives the dependency patterns of an op's outputs from its arguments' patterns
(``scipy.sparse`` CSR boolean matrices, rows the flat elements, columns the inputs), as
``dualad.tracing.sparsity`` does for the elementwise, moving and reducing families.

Every rule is built from one "selection" matrix ``S`` (output elements x argument elements,
True where the output element may read the argument element): the output's pattern is
``S @ P``. Rules return None when the shapes are not the ones they understand (the caller then
uses the conservative dense rule), so a rule can make a pattern only smaller, never miss:

- ``scan`` (``cumsum``, ``cumprod``, ``logcumsumexp``; ``params["dim"]``, ``reverse``):
  element ``t`` of a line along ``dim`` reads elements ``s <= t`` of the same line (``s >=
  t`` reversed): lower triangular along the axis, block diagonal across the others;
- ``lines`` (FFTs over ``params["axes"]``, softmaxes over ``dim``): each output element reads
  the whole line (plane) along the axes through it, nothing across;
- ``select`` (``sort``, ``topk``, ``kthvalue``, ``max``/``min`` along a dim, medians,
  ``cummax``/``cummin``: the values at a returned index along ``dim``): with the traced
  indices (``values``: the index output's value in the trace), each value reads exactly the
  element it was taken from, and the caller guards the indices (a later call whose indices
  differ detects again); without them, the whole line (as ``lines``);
- ``matmul`` of stacks (broadcast batch dims): output ``(t, i, j)`` reads ``a[t, i, :]`` and
  ``b[t, :, j]``, where the other factor is not a constant zero;
- ``einsum``: an output element reads the operand elements whose labels agree with its own
  on the labels they share (a sum over the others);
- ``conv`` (N-d, PyTorch's cross-correlation, with stride, padding, dilation and groups): output
  ``(n, o, p)`` reads the input's window at ``p`` on the channels of ``o``'s group, and the
  kernel ``w[o]``; ``conv_transpose`` (``conv_input``, the transposed convolution) the
  transpose of that selection, and the kernel entries of its channel;
- ``convolve`` (NumPy's full ``convolve``): ``out[i]`` reads ``a[j]`` and ``v[i - j]``.

A selection whose construction would hold more than ``LIMIT`` entries gives None (the dense
rule, which has its own limit and error).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..ops.convolution import windows

# the most (output element, argument element) pairs a rule enumerates
LIMIT = 20_000_000


def numel(shape) -> int:
    count = 1
    for s in shape:
        count *= int(s)
    return count


def _selection(rows, cols, shape):
    """The boolean CSR matrix with True at ``(rows, cols)``."""
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    return sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)), shape=shape)


def _apply(selection, pattern):
    out = sp.csr_matrix(selection @ pattern, dtype=bool)
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def _axis_list(params, ndim: int):
    axes = params.get("axes")
    if axes is None:
        axes = params.get("dims")
    if axes is None:
        dim = params.get("dim")
        if dim is None:
            return None
        axes = (dim,)
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    try:
        return sorted({int(a) % ndim for a in axes}) if ndim else None
    except TypeError:
        return None


def _line_ids(shape, axes):
    """Per element of ``shape``: the id of the line (over ``axes``) through it, and the number
    of lines."""
    other = [s if d not in axes else 1 for d, s in enumerate(shape)]
    ids = np.arange(numel(other)).reshape(other)
    return np.broadcast_to(ids, tuple(shape)).ravel(), numel(other)


# ---------------------------------------------------------------------------------------------
# along axes: scans, whole lines, selections


def lines(params, in_shape, out_shape, pattern):
    """Each output element reads the whole line over the axes through it; None when the
    shapes do not keep the other axes."""
    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    axes = _axis_list(params, len(in_shape))
    if axes is None:
        return None
    kept = tuple(s for d, s in enumerate(in_shape) if d not in axes)
    if len(out_shape) == len(in_shape):
        if tuple(s for d, s in enumerate(out_shape) if d not in axes) != kept:
            return None
        out_ids, count = _line_ids(out_shape, axes)
    elif out_shape == kept:  # the axes dropped (keepdim=False)
        out_ids, count = np.arange(numel(kept)), numel(kept)
    else:
        return None
    in_ids, in_count = _line_ids(in_shape, axes)
    if in_count != count:
        return None
    size = numel(in_shape)
    groups = _selection(in_ids, np.arange(size), (count, size))
    return _apply(groups, pattern)[out_ids]


def scan(params, shape, pattern):
    """Element ``t`` of each line along ``dim`` reads elements ``s <= t`` (``s >= t`` when
    ``reverse``); None past ``LIMIT``."""
    shape = tuple(shape)
    dim = params.get("dim")
    if dim is None or not shape:
        return None
    dim = int(dim) % len(shape)
    length = shape[dim]
    lines_count = numel(shape) // max(length, 1)
    if lines_count * length * (length + 1) // 2 > LIMIT:
        return None
    t, s = np.tril_indices(length)  # (t, s) with s <= t
    if params.get("reverse"):
        t, s = s, t
    # positions along dim -> flat indices: the shape moved so that dim is last
    order = [d for d in range(len(shape)) if d != dim] + [dim]
    flat = np.arange(numel(shape)).reshape(shape).transpose(order).reshape(-1, length)
    rows = flat[:, t]
    cols = flat[:, s]
    size = numel(shape)
    return _apply(_selection(rows, cols, (size, size)), pattern)


def select(params, shape, out_shape, index):
    """The selection matrix of values taken at ``index`` (the op's index output, positions
    along ``dim``) from an argument of ``shape``; None when the shapes do not fit."""
    shape, out_shape = tuple(shape), tuple(out_shape)
    dim = params.get("dim")
    index = np.asarray(index)
    if dim is None or not shape or index.shape != out_shape or index.dtype.kind not in "iu":
        return None
    dim = int(dim) % len(shape)
    keepdim = params.get("keepdim", True) or len(out_shape) == len(shape)
    if not keepdim:
        index = np.expand_dims(index, dim)
    if index.ndim != len(shape) or np.any((index < 0) | (index >= shape[dim])):
        return None
    ids = np.arange(numel(shape)).reshape(shape)
    try:
        cols = np.take_along_axis(ids, index, axis=dim)
    except (ValueError, IndexError):
        return None
    return _selection(np.arange(cols.size), cols, (cols.size, numel(shape)))


# ---------------------------------------------------------------------------------------------
# products


def matmul(a_shape, b_shape, out_shape, mask_a, mask_b):
    """Selections ``(S_a, S_b)`` of ``a @ b`` for stacks of matrices (NumPy's broadcasting of
    the batch dims; 1-d factors as NumPy promotes them); ``mask_a``/``mask_b`` are boolean
    arrays of the factors' shapes, where they may be nonzero. None when the shapes do not
    fit or past ``LIMIT``."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    if not a_shape or not b_shape:
        return None
    a2 = (1, *a_shape) if len(a_shape) == 1 else a_shape
    b2 = (*b_shape, 1) if len(b_shape) == 1 else b_shape
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        return None
    m, inner = a2[-2:]
    inner_b, p = b2[-2:]
    count = numel(batch)
    if inner != inner_b or count * m * p != numel(out_shape) or count * m * p * inner > LIMIT:
        return None
    a_ids = np.broadcast_to(np.arange(numel(a2)).reshape(a2), (*batch, m, inner))
    b_ids = np.broadcast_to(np.arange(numel(b2)).reshape(b2), (*batch, inner, p))
    a_ids = a_ids.reshape(count, m, 1, inner)
    b_ids = b_ids.reshape(count, inner, p).transpose(0, 2, 1).reshape(count, 1, p, inner)
    a_grid = np.broadcast_to(a_ids, (count, m, p, inner))
    b_grid = np.broadcast_to(b_ids, (count, m, p, inner))
    rows = np.broadcast_to(np.arange(count * m * p).reshape(count, m, p, 1), a_grid.shape)
    shape_out = numel(out_shape)
    keep_a = np.asarray(mask_b).reshape(-1)[b_grid]  # a[t, i, k] counts where b[t, k, j] may be
    keep_b = np.asarray(mask_a).reshape(-1)[a_grid]
    sel_a = _selection(rows[keep_a], a_grid[keep_a], (shape_out, numel(a_shape)))
    sel_b = _selection(rows[keep_b], b_grid[keep_b], (shape_out, numel(b_shape)))
    return sel_a, sel_b


def _parse(equation: str, ndims: list):
    """The labels of each operand and of the output, or None (ellipses and implicit outputs
    that this rule does not unfold)."""
    equation = equation.replace(" ", "")
    if "." in equation or "->" not in equation:
        return None
    inputs, output = equation.split("->")
    operands = inputs.split(",")
    if len(operands) != len(ndims) or any(len(o) != d for o, d in zip(operands, ndims)):
        return None
    return operands, output


def einsum(equation: str, shapes: list, out_shape):
    """One selection per operand of ``einsum(equation, *operands)``; None when the equation is
    not explicit (``->``, no ellipsis) or past ``LIMIT``."""
    parsed = _parse(equation, [len(s) for s in shapes])
    if parsed is None:
        return None
    operands, output = parsed
    sizes: dict = {}
    for labels, shape in zip(operands, shapes):
        for label, size in zip(labels, shape):
            if sizes.setdefault(label, size) != size and size != 1:
                if sizes[label] == 1:
                    sizes[label] = size
                else:
                    return None
    labels = sorted(sizes)
    if (
        tuple(sizes[c] for c in output) != tuple(out_shape)
        or numel(sizes.values()) * len(shapes) > LIMIT
    ):
        return None
    grid = np.indices([sizes[c] for c in labels]).reshape(len(labels), -1)
    axis = {c: i for i, c in enumerate(labels)}
    out_flat = np.ravel_multi_index([grid[axis[c]] for c in output], out_shape) if output else 0
    rows = np.broadcast_to(out_flat, grid.shape[1:])
    selections = []
    for ops, shape in zip(operands, shapes):
        # a size-1 dim broadcasts: every label value reads its element 0
        coords = [grid[axis[c]] if s != 1 else np.zeros_like(grid[0]) for c, s in zip(ops, shape)]
        cols = np.ravel_multi_index(coords, shape) if ops else np.zeros_like(grid[0])
        selections.append(_selection(rows, cols, (numel(out_shape), numel(shape))))
    return selections


def conv(params, x_shape, w_shape, out_shape):
    """Selections ``(S_x, S_w)`` of the N-d convolution ``conv(x, w)`` (the windows of
    ``dualad.ops.convolution``, which its impl reads). None past ``LIMIT``."""
    x_shape, w_shape, out_shape = tuple(x_shape), tuple(w_shape), tuple(out_shape)
    groups = params["groups"]
    n, c = x_shape[:2]
    c_out, c_group = w_shape[:2]
    kernel, spatial = w_shape[2:], out_shape[2:]
    if c != c_group * groups or out_shape[:2] != (n, c_out):
        return None
    k = numel(kernel)
    total = numel(out_shape) * c_group * k
    if total > LIMIT:
        return None
    # ids of x, 1-based, padded with zeros (a padded position reads nothing)
    ids = np.arange(1, numel(x_shape) + 1, dtype=np.int64).reshape(x_shape)
    view = windows(
        np, ids, kernel, spatial, params["stride"], params["padding"], params["dilation"]
    )  # (n, c, *spatial, *kernel)
    view = view.reshape(n, groups, c_group, numel(spatial), k)
    per_out = c_out // groups
    # out (n, g * per_out + o, p) reads view[n, g, :, p, :]
    reads = np.broadcast_to(
        view.transpose(0, 1, 3, 2, 4).reshape(n, groups, 1, numel(spatial), c_group * k),
        (n, groups, per_out, numel(spatial), c_group * k),
    )
    rows = np.broadcast_to(
        np.arange(numel(out_shape)).reshape(n, groups, per_out, numel(spatial), 1), reads.shape
    )
    valid = reads > 0
    sel_x = _selection(rows[valid], reads[valid] - 1, (numel(out_shape), numel(x_shape)))
    # and the kernel of its output channel: w[o] (all of it: conservative near the padding)
    w_rows = np.arange(numel(out_shape)).reshape(n, c_out, -1)
    w_cols = np.arange(numel(w_shape)).reshape(c_out, -1)
    grid_rows = np.broadcast_to(w_rows[..., None], (*w_rows.shape, w_cols.shape[1]))
    grid_cols = np.broadcast_to(w_cols[None, :, None, :], grid_rows.shape)
    sel_w = _selection(grid_rows, grid_cols, (numel(out_shape), numel(w_shape)))
    return sel_x, sel_w


def conv_transpose(params, y_shape, w_shape, x_shape):
    """Selections ``(S_y, S_w)`` of the transposed convolution ``conv_input(y, w) -> x``: an
    element of ``x`` reads the elements of ``y`` whose windows hold it (the transpose of
    ``conv``'s selection of ``x``), and the kernel entries of its channel in its group."""
    found = conv(params, x_shape, w_shape, y_shape)
    if found is None:
        return None
    groups = params["groups"]
    x_shape, w_shape = tuple(x_shape), tuple(w_shape)
    n = x_shape[0]
    c_group = w_shape[1]
    per_out = w_shape[0] // groups
    k = numel(w_shape[2:])
    spatial = numel(x_shape[2:])
    if numel(x_shape) * per_out * k > LIMIT:
        return None
    w_ids = np.arange(numel(w_shape)).reshape(groups, per_out, c_group, k)
    reads = w_ids.transpose(0, 2, 1, 3).reshape(1, groups, c_group, 1, per_out * k)
    shape = (n, groups, c_group, spatial, per_out * k)
    rows = np.arange(numel(x_shape)).reshape(n, groups, c_group, spatial, 1)
    sel_w = _selection(
        np.broadcast_to(rows, shape),
        np.broadcast_to(reads, shape),
        (numel(x_shape), numel(w_shape)),
    )
    return found[0].T.tocsr(), sel_w


def convolve(a_shape, v_shape, out_shape):
    """Selections of NumPy's full ``convolve(a, v)``: ``out[i]`` reads ``a[j]``, ``v[i - j]``."""
    if len(a_shape) != 1 or len(v_shape) != 1:
        return None
    na, nv = int(a_shape[0]), int(v_shape[0])
    if tuple(out_shape) != (na + nv - 1,) or na * nv > LIMIT:
        return None
    j, m = np.meshgrid(np.arange(na), np.arange(nv), indexing="ij")
    rows = j + m
    size = na + nv - 1
    return _selection(rows, j, (size, na)), _selection(rows, m, (size, nv))


__all__ = [
    "LIMIT",
    "conv",
    "conv_transpose",
    "convolve",
    "einsum",
    "lines",
    "matmul",
    "scan",
    "select",
]
