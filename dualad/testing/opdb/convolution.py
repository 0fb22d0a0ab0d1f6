"""Op database entries for convolution and pooling (``dualad.nn.functional``: conv1d/2d,
conv_transpose1d/2d, max_pool1d/2d, avg_pool1d/2d; the registry ops ``conv``, ``conv_input``,
``conv_weight``, ``max_pool``, ``avg_pool``, ``avg_pool_backward``).

The references are written here in NumPy, one kernel offset at a time (a formulation unlike the
ops' im2col): ``y[n, o] += w[o, c, k] * xpad[n, c, o * stride + k * dilation]``.
"""

from __future__ import annotations

import functools

import numpy as np

import dualad.nn.functional as F
from dualad.ops.convolution import conv_weight
from dualad.ops.pooling import avg_pool_backward

from . import ALL_DIFF, FLOATING, OpInfo, SampleInput, uniform

# ---------------------------------------------------------------------------------------------
# NumPy references


def _tuple(value, nd):
    return (value,) * nd if isinstance(value, int) else tuple(value)


def _pairs(padding, kernel, dilation, nd):
    if padding == "valid":
        return ((0, 0),) * nd
    if padding == "same":
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in _tuple(padding, nd))


def _taps(shape_out, offset, stride, dilation):
    return tuple(
        slice(k * d, k * d + s * (o - 1) + 1, s)
        for o, k, s, d in zip(shape_out, offset, stride, dilation)
    )


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """``conv1d``/``conv2d`` in NumPy (batched or unbatched input)."""
    unbatched = x.ndim == w.ndim - 1
    x = x[None] if unbatched else x
    nd = w.ndim - 2
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    kernel = w.shape[2:]
    pads = _pairs(padding, kernel, dilation, nd)
    xpad = np.pad(x, ((0, 0), (0, 0), *pads))
    out = [
        (s - d * (k - 1) - 1) // st + 1
        for s, k, st, d in zip(xpad.shape[2:], kernel, stride, dilation)
    ]
    n = x.shape[0]
    cout, cg = w.shape[:2]
    y = np.zeros((n, cout, *out), dtype=np.result_type(x, w))
    for g in range(groups):
        xs = xpad[:, g * cg : (g + 1) * cg]
        ws = w[g * (cout // groups) : (g + 1) * (cout // groups)]
        for offset in np.ndindex(*kernel):
            taps = xs[(slice(None), slice(None), *_taps(out, offset, stride, dilation))]
            block = np.einsum("nc...,oc->no...", taps, ws[(Ellipsis, *offset)])
            y[:, g * (cout // groups) : (g + 1) * (cout // groups)] += block
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * nd)
    return y[0] if unbatched else y


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``conv_transpose1d``/``2d``: every input element spreads ``x * w`` over its window."""
    unbatched = x.ndim == w.ndim - 1
    x = x[None] if unbatched else x
    nd = w.ndim - 2
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    pads, extra = _tuple(padding, nd), _tuple(output_padding, nd)
    kernel = w.shape[2:]
    n, cin = x.shape[:2]
    cg = w.shape[1]
    size = [
        (i - 1) * s - 2 * p + d * (k - 1) + e + 1
        for i, s, p, d, k, e in zip(x.shape[2:], stride, pads, dilation, kernel, extra)
    ]
    full = np.zeros(
        (n, cg * groups, *[s + 2 * p for s, p in zip(size, pads)]), np.result_type(x, w)
    )
    per = cin // groups
    for g in range(groups):
        xs = x[:, g * per : (g + 1) * per]
        for offset in np.ndindex(*kernel):
            block = np.einsum(
                "ni...,io->no...", xs, w[(slice(g * per, (g + 1) * per), slice(None), *offset)]
            )
            full[
                (
                    slice(None),
                    slice(g * cg, (g + 1) * cg),
                    *_taps(x.shape[2:], offset, stride, dilation),
                )
            ] += block
    y = full[(slice(None), slice(None), *tuple(slice(p, p + s) for p, s in zip(pads, size)))]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * nd)
    return y[0] if unbatched else y


def _pool_windows(x, kernel, stride, padding, dilation, ceil_mode, fill, overrun=None):
    """Every window of ``x`` ``(..., *S)`` as ``(..., *out, prod(kernel))`` (padding ``fill``,
    and ``overrun`` beyond it where ceil-mode windows run off the end), and the output size
    (PyTorch's rule)."""
    nd = len(kernel)
    size = x.shape[x.ndim - nd :]
    out = []
    for s, k, st, p, d in zip(size, kernel, stride, padding, dilation):
        o = (s + 2 * p - d * (k - 1) - 1 + (st - 1 if ceil_mode else 0)) // st + 1
        out.append(o - 1 if ceil_mode and (o - 1) * st >= s + p else o)
    extra = [
        max(0, (o - 1) * st + d * (k - 1) + 1 - s - p)
        for s, o, k, st, p, d in zip(size, out, kernel, stride, padding, dilation)
    ]
    lead = ((0, 0),) * (x.ndim - nd)
    xpad = np.pad(x, lead + tuple((p, p) for p in padding), constant_values=fill)
    overrun = fill if overrun is None else overrun
    xpad = np.pad(xpad, lead + tuple((0, e) for e in extra), constant_values=overrun)
    taps = [
        xpad[(Ellipsis, *_taps(out, offset, stride, dilation))] for offset in np.ndindex(*kernel)
    ]
    return np.stack(taps, axis=-1), out


def ref_max_pool(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, nd=1):
    kernel = _tuple(kernel_size, nd)
    stride = kernel if stride is None else _tuple(stride, nd)
    win, _ = _pool_windows(
        x, kernel, stride, _tuple(padding, nd), _tuple(dilation, nd), ceil_mode, -np.inf
    )
    return win.max(axis=-1)


def ref_avg_pool(x, kernel_size, stride=None, padding=0, ceil_mode=False, *, nd=1, **divisor):
    """``avg_pool1d``/``2d``; ``divisor`` holds ``count_include_pad`` and ``divisor_override``."""
    kernel = _tuple(kernel_size, nd)
    stride = kernel if stride is None else _tuple(stride, nd)
    padding = _tuple(padding, nd)
    ones = (1,) * nd
    win, _ = _pool_windows(x, kernel, stride, padding, ones, ceil_mode, 0.0)
    # the divisors by counting: windows of ones padded with ones (the padded input) and zeros
    # beyond, or padded with zeros (the input's own elements only)
    size = x.shape[x.ndim - nd :]
    inside_win, _ = _pool_windows(np.ones(size), kernel, stride, padding, ones, ceil_mode, 1, 0)
    real_win, _ = _pool_windows(np.ones(size), kernel, stride, padding, ones, ceil_mode, 0)
    if divisor.get("divisor_override"):
        divisor = divisor["divisor_override"]
    elif divisor.get("count_include_pad", True):
        divisor = inside_win.sum(axis=-1)
    else:
        divisor = real_win.sum(axis=-1)
    return (win.sum(axis=-1) / divisor).astype(x.dtype)


def ref_conv_weight(x, y, kernel, stride, padding, dilation, groups):
    """The weight gradient: ``dw[o, c, k] = sum y[n, o, :] * xpad[n, c, taps(k)]``."""
    xpad = np.pad(x, ((0, 0), (0, 0), *tuple(padding)))
    cout, cg = y.shape[1], x.shape[1] // groups
    per = cout // groups
    dw = np.zeros((cout, cg, *kernel), np.result_type(x, y))
    summed = [0, *range(2, y.ndim)]  # n and the output positions
    for g in range(groups):
        for offset in np.ndindex(*kernel):
            taps = xpad[
                (
                    slice(None),
                    slice(g * cg, (g + 1) * cg),
                    *_taps(y.shape[2:], offset, stride, dilation),
                )
            ]
            dw[(slice(g * per, (g + 1) * per), slice(None), *offset)] = np.tensordot(
                y[:, g * per : (g + 1) * per], taps, axes=(summed, summed)
            )
    return dw


# ---------------------------------------------------------------------------------------------
# samples

# (input shape, weight shape, bias?, keyword arguments, note)
CONV_CASES = [
    ((2, 4, 7), (3, 4, 3), True, {}, "1d"),
    ((2, 4, 8), (3, 4, 2), False, {"stride": 2, "padding": 1}, "1d stride padding"),
    ((1, 2, 9), (2, 2, 3), True, {"dilation": 2, "padding": "same"}, "1d dilation same"),
    ((2, 4, 8), (6, 2, 3), False, {"stride": 3, "padding": 2, "groups": 2}, "1d groups"),
    ((4, 7), (3, 4, 4), True, {"padding": "same"}, "1d unbatched even-kernel same"),
    (
        (2, 3, 5, 6),
        (4, 3, 3, 2),
        True,
        {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)},
        "2d",
    ),
    ((1, 4, 5, 5), (4, 2, 2, 3), False, {"padding": "same", "groups": 2}, "2d groups same"),
    ((2, 5, 4), (3, 2, 3, 3), True, {"padding": 1}, "2d unbatched"),
    (
        (2, 3, 5, 5),
        (6, 1, 3, 3),
        False,
        {"stride": 2, "groups": 3, "padding": "valid"},
        "2d depthwise",
    ),
    (
        (1, 2, 4, 3, 4),
        (2, 1, 2, 2, 3),
        True,
        {"stride": (1, 2, 1), "padding": (1, 0, 1), "dilation": (1, 1, 2), "groups": 2},
        "3d",
    ),
    ((2, 3, 3, 4), (2, 2, 2, 1, 2), False, {"padding": "same"}, "3d unbatched same"),
]

# (input shape, weight shape, bias?, keyword arguments, note)
TRANSPOSE_CASES = [
    ((2, 4, 5), (4, 3, 3), False, {"stride": 2, "padding": 1, "output_padding": 1}, "1d"),
    ((4, 3), (4, 2, 2), True, {"dilation": 2, "groups": 2}, "1d unbatched groups"),
    (
        (1, 4, 3, 3),
        (4, 1, 2, 3),
        True,
        {"stride": (2, 1), "dilation": (1, 2), "groups": 2, "padding": (0, 1)},
        "2d",
    ),
    ((1, 2, 2, 3, 2), (2, 2, 2, 2, 2), True, {"stride": 2, "output_padding": 1}, "3d"),
]

# (x shape, y shape, kernel, stride, padding pairs, dilation, groups, note)
WEIGHT_CASES = [
    ((2, 4, 7), (2, 6, 4), (3,), (2,), ((1, 1),), (1,), 2, "1d groups"),
    ((1, 3, 5, 6), (1, 2, 3, 3), (2, 3), (2, 2), ((0, 1), (1, 0)), (1, 1), 1, "2d"),
    ((2, 2, 5, 4), (2, 2, 3, 2), (2, 2), (1, 1), ((0, 0), (0, 0)), (2, 2), 1, "2d dilation"),
]


def _conv_samples(cases, transposed):
    def samples(rng, dtype):
        out = []
        for xs, ws, bias, kwargs, note in cases:
            args = [uniform(rng, xs, dtype), uniform(rng, ws, dtype)]
            if bias:
                groups = kwargs.get("groups", 1)
                args.append(uniform(rng, (ws[1] * groups if transposed else ws[0],), dtype))
            out.append(
                SampleInput(tuple(args), dict(kwargs), diff=tuple(range(len(args))), note=note)
            )
        return out

    return samples


def _weight_fn(x, y, *, kernel, stride, padding, dilation, groups):
    params = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    return conv_weight(x, y, params, kernel)


def _weight_samples(rng, dtype):
    out = []
    for xs, ys, kernel, stride, padding, dilation, groups, note in WEIGHT_CASES:
        kwargs = {
            "kernel": kernel,
            "stride": stride,
            "padding": padding,
            "dilation": dilation,
            "groups": groups,
        }
        out.append(
            SampleInput(
                (uniform(rng, xs, dtype), uniform(rng, ys, dtype)), kwargs, diff=(0, 1), note=note
            )
        )
    return out


def distinct(rng, shape, dtype):
    """Values in [-2, 2) at least ``4 / size`` apart: no ties, so max pooling is differentiable
    at the sample and central differences see one piece."""
    size = int(np.prod(shape))
    values = (rng.permutation(size) + rng.uniform(0.3, 0.7, size)) * (4.0 / size) - 2.0
    return values.reshape(shape).astype(dtype)


# (input shape, keyword arguments, note)
MAX_POOL_CASES = {
    1: [
        ((2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}, "padding"),
        ((1, 2, 7), {"kernel_size": 2, "ceil_mode": True}, "ceil_mode"),
        ((2, 1, 8), {"kernel_size": 2, "stride": 1, "dilation": 3, "padding": 1}, "dilation"),
        ((3, 8), {"kernel_size": 4, "stride": 3, "ceil_mode": True, "padding": 2}, "unbatched"),
    ],
    2: [
        ((2, 2, 5, 6), {"kernel_size": (2, 3), "stride": (1, 2), "padding": 1}, "padding"),
        ((1, 2, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}, "ceil"),
        ((2, 5, 5), {"kernel_size": 2, "dilation": (2, 1), "stride": 1}, "unbatched dilation"),
    ],
    3: [
        (
            (1, 2, 4, 5, 4),
            {"kernel_size": 2, "stride": (2, 1, 2), "padding": 1, "ceil_mode": True},
            "3d",
        )
    ],
}

AVG_POOL_CASES = {
    1: [
        ((2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}, "padding"),
        (
            (1, 2, 8),
            {
                "kernel_size": 3,
                "stride": 2,
                "padding": 1,
                "ceil_mode": True,
                "count_include_pad": False,
            },
            "ceil exclude pad",
        ),
        ((3, 7), {"kernel_size": 2, "ceil_mode": True}, "unbatched ceil"),
    ],
    2: [
        ((2, 2, 5, 6), {"kernel_size": (2, 3), "stride": (1, 2), "padding": 1}, "padding"),
        ((1, 2, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}, "ceil"),
        (
            (2, 5, 5),
            {
                "kernel_size": 3,
                "stride": 2,
                "padding": 1,
                "count_include_pad": False,
                "ceil_mode": True,
            },
            "unbatched exclude pad",
        ),
        ((1, 1, 4, 5), {"kernel_size": 2, "divisor_override": 3}, "divisor_override"),
    ],
    3: [
        (
            (2, 4, 3, 5),
            {"kernel_size": (3, 2, 2), "stride": 2, "padding": 1, "count_include_pad": False},
            "3d unbatched exclude pad",
        )
    ],
}


def _pool_samples(cases, make):
    def samples(rng, dtype):
        return [
            SampleInput((make(rng, shape, dtype),), dict(kwargs), note=note)
            for shape, kwargs, note in cases
        ]

    return samples


def _avg_backward_fn(ct, *, size, **params):
    return avg_pool_backward(ct, params, size)


def _avg_backward_samples(rng, dtype):
    # ct has avg_pool's output shape for an input of spatial ``size``
    cases = [
        (
            (2, 5),
            dict(
                kernel=(3,),
                stride=(2,),
                padding=(1,),
                ceil_mode=True,
                count_include_pad=False,
                divisor_override=None,
            ),
            (9,),
        ),
        (
            (1, 2, 3, 3),
            dict(
                kernel=(3, 2),
                stride=(2, 2),
                padding=(1, 0),
                ceil_mode=False,
                count_include_pad=True,
                divisor_override=None,
            ),
            (6, 6),
        ),
    ]
    return [
        SampleInput((uniform(rng, shape, dtype),), dict(params, size=size))
        for shape, params, size in cases
    ]


def _ref_avg_backward(
    ct, *, size, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    """The transpose of the avg_pool reference, column by column of its matrix."""
    lead = ct.shape[: ct.ndim - len(size)]
    columns = []
    for k in range(int(np.prod(size))):
        e = np.zeros(size)
        e.flat[k] = 1.0
        pooled = ref_avg_pool(
            e,
            kernel,
            stride,
            padding,
            ceil_mode,
            nd=len(size),
            count_include_pad=count_include_pad,
            divisor_override=divisor_override,
        )
        columns.append(
            np.tensordot(ct, pooled, axes=len(size)) if ct.ndim > len(size) else (ct * pooled).sum()
        )
    return np.stack(columns, axis=-1).reshape(lead + tuple(size)).astype(ct.dtype)


def _by_rank(cases):
    """``(nd, the cases with an nd-d weight)`` for nd = 1, 2, 3."""
    return [(nd, [case for case in cases if len(case[1]) == nd + 2]) for nd in (1, 2, 3)]


def _family(name, fn, samples, ops, dtypes, ref):
    return OpInfo(name, fn, samples, ops=ops, dtypes=dtypes, ref=ref)


OPS = [
    *(
        _family(
            f"conv{nd}d",
            getattr(F, f"conv{nd}d"),
            _conv_samples(cases, False),
            ("conv",),
            ALL_DIFF,
            ref_conv,
        )
        for nd, cases in _by_rank(CONV_CASES)
    ),
    *(
        _family(
            f"conv_transpose{nd}d",
            getattr(F, f"conv_transpose{nd}d"),
            _conv_samples(cases, True),
            ("conv_input",),
            ALL_DIFF,
            ref_conv_transpose,
        )
        for nd, cases in _by_rank(TRANSPOSE_CASES)
    ),
    OpInfo("conv_weight", _weight_fn, _weight_samples, dtypes=ALL_DIFF, ref=ref_conv_weight),
    *(
        _family(
            f"{kind}_pool{nd}d",
            getattr(F, f"{kind}_pool{nd}d"),
            _pool_samples(cases[nd], make),
            (f"{kind}_pool",),
            FLOATING,
            functools.partial(ref, nd=nd),
        )
        for kind, cases, make, ref in (
            ("max", MAX_POOL_CASES, distinct, ref_max_pool),
            ("avg", AVG_POOL_CASES, uniform, ref_avg_pool),
        )
        for nd in (1, 2, 3)
    ),
    OpInfo(
        "avg_pool_backward",
        _avg_backward_fn,
        _avg_backward_samples,
        dtypes=FLOATING,
        ref=_ref_avg_backward,
    ),
]
