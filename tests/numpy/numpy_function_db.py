"""The database of ``dualad.numpy``'s differentiable functions: for every name of NumPy's main
namespace that ``docs/numpy_coverage.md`` marks differentiable, one or more representative calls
(``Call``) with sample inputs, read by ``test_numpy_function_db.py``.

A call is ``fn(module, *args)``: ``module`` is ``numpy`` (the reference, on NumPy arrays, and
the protocols, on tensors) or ``dualad.numpy``; by default ``fn`` calls ``module.<name>(*args,
**kwargs)``. ``diff`` lists the positions of ``args`` that are differentiated (a list of arrays
at such a position: each array). Samples keep clear of kinks and jumps by more than the
finite-difference step, so NumPy's own function differentiated by central differences is the
reference of every derivative.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

RNG = np.random.default_rng(20261126)


def r(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape)


def pos(*shape):
    return r(*shape, low=0.5, high=2.0)


def unit(*shape):  # inside (-1, 1), clear of the ends
    return r(*shape, low=-0.8, high=0.8)


def apart(*shape, low=-2.0, high=2.0):
    """Values at least 0.1 from each other and from 0 and the integers (kinks and jumps)."""
    n = int(np.prod(shape, dtype=int))
    grid = np.arange(low, high, 0.25) + 0.125  # (all k/4 + 1/8: never an integer or 0)
    return RNG.permutation(grid)[:n].reshape(shape)


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    diff: tuple = (0,)
    fn: Callable | None = None  # fn(module, *args) when not module.<name>(*args, **kwargs)
    vmap: bool = True  # vmap over a new leading axis of the first differentiated array
    protocol: bool = True  # whether numpy.<name>(tensors) dispatches to dualad
    values: bool = True  # False: only shapes and dtypes are defined (empty)
    note: str = ""

    def call(self, module, args):
        if self.fn is not None:
            return self.fn(module, *args)
        return getattr(module, self.name)(*args, **self.kwargs)

    @property
    def id(self):
        return f"{self.name}-{self.note}" if self.note else self.name


def _into_copy(method, *extra):
    """NumPy's functions that write into their first argument, as functions of a copy."""

    def fn(m, a, *args):
        b = m.copy(a)
        getattr(m, method)(b, *extra, *args)
        return b

    return fn


A = r(2, 3, 4)
M = r(3, 3)
V = r(5)
W = r(3)
P = pos(2, 3)
U = unit(2, 3)
X = apart(2, 3)
Y = apart(2, 3, low=-4.0, high=4.0)
NAN = r(3, 4)
NAN[0, 1] = NAN[2, 3] = NAN[1, 1] = np.nan
ZEROS = np.array([[2.0, 0.0, 3.0, 0.0, -1.5], [0.0, 1.5, -2.0, 0.5, 1.25]])  # cumprod's zeros
XP = np.array([0.0, 1.0, 2.5, 4.0])  # interp's sample points (increasing)
XI = np.array([-1.0, 0.3, 1.2, 2.9, 3.7, 5.0])  # interp's points, outside [xp0, xp-1] too
INTS = np.array([0, 2, 1, 2, 4, 0])

UNARY = {  # name -> sample (the derivative's domain, clear of kinks)
    **{
        n: r(2, 3)
        for n in [
            "sin",
            "cos",
            "sinh",
            "cosh",
            "tanh",
            "exp",
            "exp2",
            "expm1",
            "arctan",
            "atan",
            "arcsinh",
            "asinh",
            "square",
            "negative",
            "positive",
            "deg2rad",
            "degrees",
            "rad2deg",
            "radians",
            "conj",
            "conjugate",
            "sinc",
            "i0",
        ]
    },
    **{
        n: X
        for n in [
            "cbrt",
            "reciprocal",
            "fabs",
            "abs",
            "absolute",
            "sign",
            "ceil",
            "floor",
            "rint",
            "round",
            "around",
            "fix",
            "trunc",
        ]
    },
    **{n: P for n in ["log", "log10", "log2", "log1p", "sqrt"]},
    **{n: U for n in ["arcsin", "asin", "arccos", "acos", "arctanh", "atanh", "tan"]},
    **{n: 1.0 + P for n in ("arccosh", "acosh")},
}
BINARY = {  # name -> (first, second): broadcasting pairs
    **{
        n: (r(2, 3), r(3))
        for n in [
            "add",
            "subtract",
            "multiply",
            "arctan2",
            "atan2",
            "hypot",
            "logaddexp",
            "logaddexp2",
        ]
    },
    **{n: (r(2, 3), P) for n in ("divide", "true_divide")},
    **{n: (P, r(2, 1)) for n in ("power", "pow", "float_power")},
    **{n: (X, Y[::-1]) for n in ["maximum", "minimum", "fmax", "fmin", "copysign"]},
    **{n: (Y, np.array([0.75, -1.5, 1.25])) for n in ("fmod", "mod", "remainder", "divmod")},
}

CALLS = [
    *(Call(n, (x,)) for n, x in UNARY.items()),
    *(Call(n, xy, diff=(0, 1)) for n, xy in BINARY.items()),
    Call("around", (X * 3.3, 1), note="decimals"),
    Call("heaviside", (X, 0.5), diff=(0,), note="zero derivative"),
    Call("ldexp", (r(2, 3), np.array([1, -2, 3]))),
    Call("frexp", (X * 7,)),
    Call("modf", (Y,)),
    # products
    Call("matmul", (r(2, 3, 4), r(4, 2)), diff=(0, 1)),
    Call("matvec", (r(2, 3, 4), r(4)), diff=(0, 1)),
    Call("vecmat", (r(4), r(2, 4, 3)), diff=(0, 1)),
    Call("vecdot", (r(2, 3), r(3)), diff=(0, 1)),
    Call("dot", (r(2, 3), r(3, 4)), diff=(0, 1)),
    Call("vdot", (r(2, 3), r(2, 3)), diff=(0, 1)),
    Call("inner", (r(2, 3), r(4, 3)), diff=(0, 1)),
    Call("outer", (W, V), diff=(0, 1)),
    Call("tensordot", (A, r(3, 4, 2)), dict(axes=2), diff=(0, 1)),
    Call("einsum", ("ijk,kl->jl", A, r(4, 2)), diff=(1, 2)),
    Call("kron", (r(2, 3), r(3, 2)), diff=(0, 1)),
    Call("kron", (r(2), r(2, 2, 2)), diff=(0, 1), note="ranks"),
    Call("cross", (r(4, 3), r(3)), diff=(0, 1)),
    Call("trace", (A,), dict(offset=1, axis1=1, axis2=2)),
    # reductions
    *(Call(n, (A,), dict(axis=1)) for n in ("sum", "mean", "std", "var", "prod", "cumsum")),
    *(Call(n, (X,), dict(axis=0)) for n in ("max", "min", "amax", "amin", "ptp")),
    Call("ptp", (X,), note="all"),
    Call("cumprod", (ZEROS,), dict(axis=1), note="zeros"),
    Call("cumprod", (ZEROS,), note="flat-zeros"),
    Call("cumulative_prod", (ZEROS,), dict(axis=1, include_initial=True), note="zeros"),
    Call("cumulative_sum", (A,), dict(axis=2)),
    Call("average", (A,), dict(axis=1)),
    Call("average", (A, 2, pos(4)), diff=(0, 2), note="weights"),
    Call("average", (A, None, pos(2, 3, 4), True), diff=(0, 2), note="returned"),
    Call("average", (A, (0, 2), pos(2, 4)), dict(keepdims=True), diff=(0, 2), note="axes"),
    # nan reductions: the NaN positions get derivative 0 (NumPy's values ignore them)
    *(
        Call(n, (NAN,), kw, note=str(kw.get("axis")))
        for n in (
            "nansum",
            "nanmean",
            "nanprod",
            "nanstd",
            "nanvar",
            "nanmax",
            "nanmin",
            "nanmedian",
            "nancumsum",
            "nancumprod",
        )
        for kw in ({}, {"axis": 1})
    ),
    Call("nanvar", (NAN,), dict(axis=1, ddof=1), note="ddof"),
    *(
        Call("nanquantile", (NAN, [0.2, 0.75]), dict(axis=1, method=m), note=m)
        for m in (
            "linear",
            "inverted_cdf",
            "averaged_inverted_cdf",
            "closest_observation",
            "hazen",
            "weibull",
            "median_unbiased",
            "normal_unbiased",
            "midpoint",
        )
    ),
    Call("nanpercentile", (NAN, 40.0), dict(axis=0, method="midpoint")),
    # order statistics
    Call("sort", (A,), dict(axis=1)),
    Call("sort_complex", (W,), diff=(), note="complex out"),
    Call("partition", (V, 2)),
    Call("median", (A,), dict(axis=2)),
    Call("median", (r(3, 5),), dict(axis=1), note="odd"),
    *(
        Call("quantile", (r(2, 7), [0.1, 0.5, 0.93]), dict(axis=1, method=m), note=m)
        for m in (
            "linear",
            "lower",
            "higher",
            "nearest",
            "midpoint",
            "inverted_cdf",
            "averaged_inverted_cdf",
            "closest_observation",
            "interpolated_inverted_cdf",
            "hazen",
            "weibull",
            "median_unbiased",
            "normal_unbiased",
        )
    ),
    Call("percentile", (A, [10.0, 90.0]), dict(axis=(0, 2))),
    Call(
        "quantile",
        (r(3, 7), [0.2, 0.6]),
        dict(axis=1, method="inverted_cdf", weights=pos(7)),
        note="weights",
    ),
    Call(
        "percentile",
        (A, 35.0),
        dict(axis=(0, 2), method="inverted_cdf", weights=pos(2, 4)),
        note="weights",
    ),
    # statistics
    Call("cov", (r(3, 6),)),
    Call("cov", (r(6, 2),), dict(rowvar=False, ddof=2), note="ddof"),
    Call(
        "cov",
        (r(2, 5), None, True, False, None, np.array([1, 2, 1, 3, 1]), pos(5)),
        diff=(0, 6),
        note="weights",
    ),
    Call("corrcoef", (r(3, 6),)),
    Call("corrcoef", (V, V * V + r(5)), diff=(0, 1), note="y"),
    Call("histogram", (r(12), 4)),
    Call("histogram", (r(12), 3, None, None, pos(12)), diff=(0, 4), note="weights"),
    Call("histogram_bin_edges", (r(10), 5)),
    Call("histogram2d", (r(10), r(10), 3), diff=(0, 1)),
    Call("histogramdd", (r(10, 2), 2)),
    Call("bincount", (INTS, pos(6)), diff=(1,), fn=lambda m, x, w: m.bincount(x, weights=w)),
    # finite differences, integration, interpolation
    Call("diff", (A,)),
    Call("diff", (A, 2, 1), note="n2"),
    Call("diff", (M,), dict(prepend=0.5, append=M[:, :2]), note="edges"),
    Call("diff", (M, 1, 0, r(1, 3), r(2, 3)), diff=(0, 3, 4), note="tracked edges"),
    Call("ediff1d", (A,), dict(to_begin=[1.0], to_end=2.0)),
    Call("gradient", (r(4, 5),)),
    Call("gradient", (r(4, 5), 0.5), dict(edge_order=2), note="edge2"),
    Call("gradient", (r(5), np.cumsum(pos(5))), diff=(0, 1), note="coords"),
    Call(
        "gradient",
        (r(5, 4), np.cumsum(pos(5))),
        dict(axis=0, edge_order=2),
        diff=(0, 1),
        note="coords-edge2",
    ),
    Call("trapezoid", (A,)),
    Call("trapezoid", (r(5), np.cumsum(pos(5))), diff=(0, 1), note="x"),
    Call("trapezoid", (A, None, 0.3, 1), note="dx"),
    Call("interp", (XI, XP, r(4)), diff=(0, 2)),
    Call("interp", (XI, XP, r(4)), dict(left=-3.0, right=3.0), diff=(0, 2), note="left-right"),
    Call("interp", (XI * 3 + 0.2, XP, r(4)), dict(period=5.0), diff=(0, 2), note="period"),
    Call("interp", (XI[1:-1], XP, r(4)), diff=(1,), note="xp"),
    Call("unwrap", (np.cumsum(r(2, 8) * 3, axis=1),)),
    # polynomials and convolutions
    Call("polyval", (r(4), r(2, 3)), diff=(0, 1)),
    Call("polyval", (r(1), r(3)), diff=(0, 1), note="constant"),
    Call("vander", (W,)),
    Call("poly", (W,)),
    Call("polyadd", (W, V), diff=(0, 1)),
    Call("polysub", (V, W), diff=(0, 1)),
    Call("polymul", (W, V), diff=(0, 1)),
    Call("polydiv", (r(6), W + np.array([3.0, 0, 0])), diff=(0, 1), vmap=False),
    Call("polyfit", (np.linspace(0.0, 1.0, 6), r(6), 2), diff=(0, 1), vmap=False),
    Call(
        "polyfit",
        (np.linspace(0.0, 1.0, 6), r(6, 2), 1),
        dict(w=pos(6)),
        diff=(1,),
        vmap=False,
        note="weights",
    ),
    Call("roots", (np.array([1.0, -3.5, 2.0]),), vmap=False, note="real"),
    Call("roots", (np.array([1.0, 0.5, 2.0, 0.0]),), vmap=False, note="complex"),
    Call("poly", (np.array([[2.0, 0.5], [0.5, -1.0]]),), vmap=False, note="matrix"),
    Call("polyder", (V, 2)),
    Call("polyint", (W, 2, [1.0, 2.0])),
    *(
        Call(n, (r(7), r(3)), dict(mode=mode), diff=(0, 1), note=f"{mode}")
        for n in ("convolve", "correlate")
        for mode in ("full", "same", "valid")
    ),
    Call("convolve", (r(3), r(6)), dict(mode="same"), diff=(0, 1), note="short-first"),
    Call("correlate", (r(2), r(5)), dict(mode="valid"), diff=(0, 1), note="short-first"),
    # shapes, joining, splitting
    *(
        Call(n, (A,))
        for n in [
            "ravel",
            "transpose",
            "matrix_transpose",
            "flip",
            "fliplr",
            "flipud",
            "rot90",
            "copy",
            "squeeze",
            "atleast_1d",
            "atleast_2d",
            "atleast_3d",
            "real_if_close",
        ]
    ),
    # NumPy's conversions give ndarrays (no protocol: tensors are converted, on purpose)
    *(
        Call(n, (A,), protocol=False)
        for n in ["asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "array"]
    ),
    # (a test of the values: under vmap it raises, as data-dependent control flow does)
    Call("asarray_chkfinite", (A,), protocol=False, vmap=False),
    *(Call(n, (V,)) for n in ("atleast_2d", "atleast_3d")),
    Call("atleast_1d", (np.array(2.5), W), diff=(0, 1), note="several"),
    Call("require", (A, np.float64, ["C"]), protocol=False),
    Call("reshape", (A, (4, 6))),
    Call("permute_dims", (A, (2, 0, 1))),
    Call("moveaxis", (A, 0, -1)),
    Call("rollaxis", (A, 2)),
    Call("swapaxes", (A, 0, 2)),
    Call("expand_dims", (A, (0, 2))),
    Call("squeeze", (A[:, :1],), dict(axis=1), note="axis"),
    Call("broadcast_to", (W, (2, 3))),
    Call("broadcast_arrays", (W, r(2, 1)), diff=(0, 1)),
    Call("roll", (A, (1, -1), (0, 2))),
    Call("tile", (M, (2, 1, 2))),
    Call("repeat", (A, [1, 0, 2], 1)),
    Call("resize", (A, (5, 7))),
    Call("append", (A, A[:1]), dict(axis=0), diff=(0, 1)),
    Call("insert", (M, 1, W), dict(axis=1), diff=(0, 2)),
    Call("delete", (A, [0, 2], 2)),
    # (its result's shape depends on which values are 0: its derivative is in test_pieces_...)
    Call("trim_zeros", (np.array([0.0, 0.0, 1.5, 0.0, -2.0, 0.0]),), diff=()),
    *(
        Call(n, ([M, r(3, 3)],))
        for n in ["concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack"]
    ),
    *(
        Call(n, (A, 2), dict(axis=2) if n == "split" else {})
        for n in ["split", "array_split", "dsplit"]
    ),
    Call("hsplit", (A, [1])),
    Call("vsplit", (A, 2)),
    Call("unstack", (A,), dict(axis=1)),
    Call("block", ([[M, W[:, None]], [V[None, :3], V[3:4, None]]],)),
    Call("block", ([[r(2, 2), r(2, 1)], [r(1, 3)]],), note="rows"),
    *(
        Call("pad", (M, ((1, 2), (3, 1))), dict(mode=mode), note=mode)
        for mode in (
            "constant",
            "edge",
            "reflect",
            "symmetric",
            "wrap",
            "linear_ramp",
            "maximum",
            "minimum",
            "mean",
            "median",
        )
    ),
    Call("pad", (M, 1), dict(mode="empty"), diff=(), values=False, note="empty"),
    Call(
        "pad", (A, ((1, 0), (0, 2), (2, 1))), dict(mode="median", stat_length=2), note="median-3d"
    ),
    Call(
        "pad",
        (A, ((1, 0), (0, 2), (2, 1))),
        dict(mode="linear_ramp", end_values=1.5),
        note="ramp-3d",
    ),
    Call("pad", (V, (9, 11)), dict(mode="symmetric", reflect_type="odd"), note="odd-long"),
    Call("pad", (M, 2), dict(mode="reflect", reflect_type="odd"), note="reflect-odd"),
    Call("pad", (M, 2), dict(mode="symmetric", reflect_type="odd"), note="symmetric-odd"),
    Call("pad", (M, ((1, 1), (2, 0))), dict(mode="maximum", stat_length=2), note="stat_length"),
    Call(
        "pad",
        (M, 1),
        dict(mode="linear_ramp", end_values=((1.0, 2.0), (0.5, -1.0))),
        note="end_values",
    ),
    Call("pad", (V, (7, 6)), dict(mode="reflect"), note="reflect-long"),
    Call("pad", (V, (9, 12)), dict(mode="reflect", reflect_type="odd"), note="reflect-odd-long"),
    Call("pad", (V, (7, 6)), dict(mode="wrap"), note="wrap-long"),
    # (np.asmatrix and np.bmat make np.matrix objects: they do not dispatch to dualad)
    Call("asmatrix", (V,), protocol=False),
    Call("asmatrix", (r(1, 3, 1, 2),), protocol=False, note="squeezed"),
    Call("bmat", ([[M, r(3, 2)], [r(1, 3), r(1, 2)]],), protocol=False),
    Call("bmat", ([W, V],), protocol=False, note="one row"),
    Call(
        "bmat",
        (M, r(3, 2)),
        diff=(0, 1),
        fn=lambda m, a, b: m.bmat("a, b; a, b", {"a": a}, {"b": b}),
        protocol=False,
        note="string",
    ),
    # selection and indexing
    Call("take", (A, [[0, 3], [5, 11]])),
    Call("take", (A, [2, 0, 2]), dict(axis=1), note="axis"),
    Call("take", (A, [-1, 7]), dict(axis=2, mode="clip"), note="clip"),
    Call("take_along_axis", (A, np.argsort(A, axis=1)), dict(axis=1)),
    Call("where", (A > 0, A, -A * 2), diff=(1, 2)),
    Call("clip", (X, -1.0, 1.0)),
    Call("clip", (X, r(3) * 0.0 - 0.5, 1.05), diff=(0, 1), note="tracked bound"),
    Call("choose", (np.array([0, 1, 2, 1]), [r(4), r(4), r(4)]), diff=(1,)),
    Call("choose", (np.array([[0, 1], [1, 0]]), [r(2), r(2, 2)]), diff=(1,), note="broadcast"),
    Call("select", ([A > 1, A < -1], [A, A * A], 0.5), diff=(1,)),
    Call("select", ([W > 0], [W], r(3)), diff=(1, 2), note="tracked default"),
    Call("compress", (np.array([True, False, True]), A), dict(axis=1), diff=(1,)),
    Call("extract", (A > 0, A), diff=(1,), vmap=False),
    Call("diag", (M, 1)),
    Call("diag", (W, -1), note="1d"),
    Call("diagflat", (r(2, 2),)),
    Call("diagonal", (A, 1, 0, 2)),
    Call("tril", (A, -1)),
    Call("triu", (M, 1)),
    Call("piecewise", (V, [V < 0, V > 1], [lambda v: -v, lambda v: v * v])),
    Call("apply_along_axis", (lambda row: row[::-1] * row[0], 1, A), diff=(2,)),
    Call(
        "apply_over_axes",
        (lambda a, axis: (a * a).sum(axis), A, [0, 2]),
        diff=(1,),
        fn=lambda m, f, a, axes: m.apply_over_axes(lambda x, ax: m.sum(x * x, ax), a, axes),
    ),
    Call("put", (M, [0, 4, 8], W), diff=(0, 2), fn=_into_copy("put")),
    Call(
        "put",
        (M, [0, 10], W[:2]),
        dict(mode="wrap"),
        diff=(0, 2),
        fn=lambda m, a, i, v: (b := m.copy(a), m.put(b, i, v, mode="wrap"), b)[2],
        note="wrap",
    ),
    Call(
        "put_along_axis",
        (M, np.array([[0], [2], [1]]), r(3, 1)),
        diff=(0, 2),
        fn=lambda m, a, i, v: (b := m.copy(a), m.put_along_axis(b, i, v, 1), b)[2],
    ),
    Call("putmask", (M, M > 0, r(2)), diff=(0, 2), fn=_into_copy("putmask")),
    Call("place", (M, M > 0, r(2)), diff=(0, 2), fn=_into_copy("place"), vmap=False),
    Call("copyto", (M, r(3)), diff=(0, 1), fn=_into_copy("copyto")),
    Call("fill_diagonal", (M, r(3)), diff=(0, 1), fn=_into_copy("fill_diagonal")),
    Call("meshgrid", (W, V), diff=(0, 1)),
    Call("meshgrid", (W, V, r(2)), dict(indexing="ij", sparse=True), diff=(0, 1, 2), note="ij"),
    Call("real", (A,)),
    Call("imag", (A,), note="real input"),
    Call("angle", (r(2, 3) + 3.0,), note="real input"),
    Call("nan_to_num", (NAN,), dict(nan=-1.0)),
    Call("astype", (A, np.float32), diff=(), note="float32"),
    Call("astype", (A.astype(np.float32), np.float64), note="float64"),
    # creation: differentiable in tensor endpoints and fill values
    Call("linspace", (0.5, np.array([1.0, 3.0]), 5), diff=(1,)),
    Call("logspace", (np.array(0.5), 1.5, 4), diff=(0,)),
    Call("geomspace", (np.array(0.5), 8.0, 4), dict(endpoint=False), diff=(0,)),
    Call("full_like", (A, np.array(2.5)), diff=(1,)),
    Call("full", ((2, 3), np.array(1.5)), diff=(1,), protocol=False),
    *(Call(n, (A,), diff=()) for n in ("zeros_like", "ones_like")),
    Call("empty_like", (A,), diff=(), values=False),
    Call("empty", ((2, 3),), diff=(), protocol=False, values=False),
    *(
        Call(n, (3,), diff=(), protocol=False)
        for n in [
            "zeros",
            "ones",
            "eye",
            "identity",
            "tri",
            "arange",
            "bartlett",
            "blackman",
            "hamming",
            "hanning",
        ]
    ),
    Call("kaiser", (5, 14.0), diff=(), protocol=False),
    Call("fromfunction", (lambda i, j: i * 2.0 + j, (2, 3)), diff=(), protocol=False),
]
