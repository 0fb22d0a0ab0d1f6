"""Every differentiable ``dualad.numpy`` function against NumPy and against its derivatives.

One table, ``CASES``: a case is a function name (``"sum"``, ``"linalg.norm"``), its arguments
(NumPy arrays and other values) and the positions of the arguments it is differentiated in.
Each case is checked, both as ``dualad.numpy.NAME(tensors)`` and as ``numpy.NAME(tensors)``
(NumPy's ``__array_function__`` protocol), for:

- values, dtype and shape equal to NumPy's on the same arrays, inputs unchanged;
- reverse and forward mode against finite differences (``gradcheck`` with forward AD);
- ``func.grad`` equal to the eager gradient, ``func.jvp`` adjoint to it;
- ``vmap`` over a new leading axis of the first differentiable argument equal to a loop.

Adding a function adds a line here and gets all of these checks.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad import func
from dualad.numpy import (
    calculus,
    creation,
    elementwise,
    functional,
    indexing,
    joining,
    manipulation,
    order_statistics,
    padding,
    pieces,
    polynomials,
    products,
    reductions,
    statistics,
)

RNG = np.random.default_rng(1234)


def r(*shape, dtype=np.float64, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def pos(*shape):
    return r(*shape, low=0.5, high=2.0)


@dataclass
class Case:
    name: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    diff: tuple = (0,)  # positions of differentiable (float64) arguments
    vmap: bool = True
    protocol: bool = True  # whether NumPy's function dispatches on tensors

    @property
    def id(self):
        shown = ",".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.name}-{len(self.args)}args-{shown}"[:80]


A = r(2, 3, 2)
M = r(3, 3) / 2
V = r(4)
W = r(3)
SQUARE = r(3, 3) + 3 * np.eye(3)  # well conditioned: the solvers' derivatives are smooth
SPD = SQUARE @ SQUARE.T
F32 = r(2, 3, dtype=np.float32)
I8 = np.arange(6, dtype=np.int8).reshape(2, 3)
NAN = r(3, 4)
NAN[0, 1] = NAN[2, 3] = np.nan
COORDS = np.cumsum(RNG.uniform(0.5, 1.5, size=3))  # increasing sample points
COMPLEX = r(2, 3) + 1j * r(2, 3)
XP = np.array([0.0, 1.0, 2.5, 4.0])  # interp's sample points
SYM = M + M.T  # (Hermitian input of eigh)
_X = np.eye(3) + r(3, 3) / 4
GEN = _X @ np.diag([-1.5, 0.3, 1.6]) @ np.linalg.inv(_X)  # distinct real eigenvalues
ALL_NAN_ROW = np.where(np.arange(3)[:, None] == 1, np.nan, NAN)
MASK = np.array([[True, False, True], [True, True, False]])

CASES = [
    # reductions: axis None / int / negative / tuple, keepdims, dtype, where, initial, ddof
    Case("sum", (A,)),
    Case("sum", (A,), dict(axis=(0, -1), keepdims=True)),
    Case("sum", (A,), dict(axis=1, initial=1.5)),
    Case("sum", (A[..., 0],), dict(where=MASK)),
    Case("sum", (F32,), dict(axis=0), diff=()),
    Case("sum", (I8,), dict(axis=-1), diff=()),
    Case("sum", (F32,), dict(dtype=np.float64), diff=()),
    Case("mean", (A,), dict(axis=-2)),
    Case("mean", (A[..., 0],), dict(axis=1, where=MASK, keepdims=True)),
    Case("mean", (I8,), diff=()),
    Case("mean", (F32,), dict(axis=1), diff=()),
    Case("prod", (A,), dict(axis=(1, 2))),
    Case("prod", (A,), dict(axis=0, keepdims=True)),
    Case("std", (A,)),
    Case("std", (A,), dict(axis=(0, 2), ddof=1)),
    Case("var", (A,), dict(axis=1, keepdims=True)),
    Case("var", (A[..., 0],), dict(axis=1, where=MASK)),
    Case("var", (I8,), dict(ddof=1), diff=()),
    Case("var", (A,), dict(axis=1, correction=1)),
    Case("max", (A,)),
    Case("max", (A,), dict(axis=-1, keepdims=True)),
    Case("amax", (A,), dict(axis=(0, 1))),
    Case("max", (A[..., 0],), dict(axis=1, where=MASK, initial=-5.0)),
    Case("min", (A,), dict(axis=0)),
    Case("amin", (A,), dict(axis=2)),
    Case("ptp", (A,), dict(axis=1)),
    Case("all", (A > 0,), diff=()),
    Case("all", (A,), dict(axis=(0, 2), keepdims=True), diff=()),
    Case("any", (A[..., 0] > 1,), dict(axis=1, where=MASK), diff=()),
    Case("any", (I8,), dict(axis=-1), diff=()),
    Case("cumsum", (A,)),
    Case("cumsum", (A,), dict(axis=-2)),
    Case("cumsum", (I8,), dict(axis=1), diff=()),
    Case("cumprod", (A,), dict(axis=1)),
    Case("cumulative_sum", (A,), dict(axis=1, include_initial=True)),
    Case("cumulative_prod", (V,)),
    Case("average", (A,), dict(axis=1)),
    Case("average", (A, 1, pos(3)), diff=(0, 2)),
    Case("average", (A, (0, 2), pos(2, 3, 2)), dict(keepdims=True), diff=(0, 2)),
    Case("average", (A, None, pos(2, 3, 2), True), diff=(0, 2)),
    Case("nansum", (NAN,), dict(axis=0)),
    Case("nanmean", (NAN,), dict(axis=1)),
    Case("nanprod", (NAN,)),
    Case("nanvar", (NAN,), dict(axis=1, ddof=1)),
    Case("nanstd", (NAN,)),
    Case("nanmax", (NAN,), dict(axis=0)),
    Case("nanmin", (NAN,), dict(axis=-1, keepdims=True)),
    # shape and joining
    Case("reshape", (A, (3, 4))),
    Case("reshape", (A, (-1, 2)), dict(order="F")),
    Case("ravel", (A,)),
    Case("transpose", (A,)),
    Case("transpose", (A, (1, 2, 0))),
    Case("permute_dims", (A, (2, 0, 1))),
    Case("matrix_transpose", (A,)),
    Case("moveaxis", (A, 0, -1)),
    Case("moveaxis", (A, [0, 1], [2, 0])),
    Case("swapaxes", (A, 0, 2)),
    Case("squeeze", (A[:, :1],), dict(axis=1)),
    Case("squeeze", (A[:1, :, :1],)),
    Case("expand_dims", (A, (0, -1))),
    Case("broadcast_to", (W, (2, 3))),
    Case("broadcast_arrays", (W, A[:, :, :1]), diff=(0, 1)),
    Case("concatenate", ([A, A[:, :1]],), dict(axis=1)),
    Case("concatenate", ([A, W],), dict(axis=None)),
    Case("concat", ([A, A],), dict(axis=-1)),
    Case("stack", ([A, A],), dict(axis=-1)),
    Case("hstack", ([W, V],)),
    Case("vstack", ([W, A[:, :, 0]],)),
    Case("dstack", ([A[:, :, 0], A[:, :, 1]],)),
    Case("column_stack", ([W, M],)),
    Case("concatenate", ([F32, I8],), dict(axis=0), diff=()),
    Case("split", (A, 3), dict(axis=1)),
    Case("split", (A, [1, 2]), dict(axis=-2)),
    Case("array_split", (V, 3)),
    Case("hsplit", (A, [1])),
    Case("vsplit", (A, 2)),
    Case("dsplit", (A, 2)),
    Case("flip", (A,)),
    Case("flip", (A, (0, 2))),
    Case("fliplr", (A,)),
    Case("flipud", (A,)),
    Case("roll", (A, 2)),
    Case("roll", (A, (1, -1), (0, 2))),
    Case("rot90", (A,)),
    Case("rot90", (A, 3, (1, 2))),
    Case("tile", (A[0], (2, 1, 2))),
    Case("repeat", (A, 2)),
    Case("repeat", (A, [1, 0, 2], 1)),
    Case("atleast_2d", (V,)),
    Case("atleast_3d", (M,)),
    Case("append", (A, A[:1]), dict(axis=0), diff=(0, 1)),
    Case("pad", (M, ((1, 0), (2, 1))), dict(constant_values=0.5)),
    Case("pad", (A, ((1, 0), (4, 1), (0, 3))), dict(mode="reflect")),
    Case("pad", (M, 2), dict(mode="symmetric")),
    Case("pad", (W, (5, 1)), dict(mode="wrap")),
    Case("pad", (A, 1), dict(mode="edge")),
    Case("copy", (A,)),
    Case("block", ([[M, W[:, None]], [V[None, :3], V[3:, None]]],)),
    Case("block", ([W, 2.0, W],), diff=()),
    Case("apply_along_axis", (lambda row: row[::-1] * row[0], 1, A), diff=(2,)),
    Case("apply_along_axis", (lambda row: (row[:, None] * row)[1:], 0, M), diff=(2,)),
    # selection
    Case("take", (A, [[0, 3], [5, 11]])),
    Case("take", (A, [2, 0, 2]), dict(axis=1)),
    Case("take", (A, [-1, 5]), dict(axis=1, mode="wrap")),
    Case("take_along_axis", (A, np.argsort(A, axis=1)), dict(axis=1)),
    Case("take_along_axis", (V, np.array([3, 0, 0])), dict(axis=None)),
    Case("where", (A > 0, A, A * 2), diff=(1, 2)),
    Case("where", (A > 0, A, 1.0), diff=(1,)),
    Case("where", (F32 > 0, F32, 1.0), diff=()),
    Case("clip", (A, -1.0, 1.0)),
    Case("clip", (A, None, 0.5)),
    Case("clip", (A, r(3, 1) * 0.5 - 0.5, 1.0), diff=(0, 1)),
    Case("clip", (F32, 0, 1.5), diff=()),
    Case("clip", (I8, 0.5, 3.5), diff=()),
    Case("choose", (np.array([0, 1, 2]), [W, W * 2, -W]), diff=(), vmap=False),
    Case("select", ([A > 1, A < -1], [A, A * A], 0.5), diff=(), vmap=False),
    Case("compress", (np.array([True, False, True]), A), dict(axis=1), diff=(1,)),
    Case("extract", (A > 0, A), diff=(1,), vmap=False),
    Case("diag", (M,)),
    Case("diag", (W, 1)),
    Case("diagflat", (M[:2, :2],)),
    Case("diagonal", (A, 1, 0, 1)),
    Case("diagonal", (A, 0, -1, 0)),
    Case("trace", (M,)),
    Case("trace", (A, 0, 0, 2)),
    Case("tril", (A,)),
    Case("triu", (M, 1)),
    Case("delete", (A, [0, -1], 1)),
    Case("delete", (A, slice(None, None, 2))),
    Case("insert", (A, [0, 2, 2], r(2, 3, 2)), dict(axis=1), diff=(0, 2)),
    Case("insert", (M, 1, W), dict(axis=1), diff=(0, 2)),
    Case("insert", (V, -1, 2.5)),
    Case("resize", (A, (5, 7))),
    Case("tril", (W,)),
    # products
    Case("dot", (A, r(2, 4)), diff=(0, 1)),
    Case("dot", (M, W), diff=(0, 1)),
    Case("dot", (W, W), diff=(0, 1)),
    Case("dot", (M, 2.0)),
    Case("vdot", (A, A[::-1]), diff=(0, 1)),
    Case("inner", (A, r(4, 2)), diff=(0, 1)),
    Case("outer", (M, W), diff=(0, 1)),
    Case("tensordot", (A, r(3, 2, 4)), diff=(0, 1)),
    Case("tensordot", (A, r(2, 3)), dict(axes=([0, 1], [0, 1])), diff=(0, 1)),
    Case("einsum", ("ijk,jl->ikl", A, r(3, 4)), diff=(1, 2)),
    Case("einsum", ("ii", M), diff=(1,)),
    Case("einsum", (A, [0, 1, 2], W, [1], [0, 2]), diff=(0, 2)),
    Case("kron", (M, r(2, 2)), diff=(0, 1)),
    Case("cross", (r(2, 3), r(2, 3)), diff=(0, 1)),
    Case("cross", (r(3, 2), r(3, 2)), dict(axisa=0, axisb=0), diff=(0, 1)),
    Case("dot", (F32, F32.T), diff=()),
    # creation (differentiable in tensor endpoints / fill values)
    Case("array", ([1.5, 2.0],), diff=(), vmap=False, protocol=False),
    Case("asarray", (A,), protocol=False),  # (np.asarray converts: test_np_array_function)
    Case("full", ((2, 3), np.float64(1.5)), diff=(), protocol=False, vmap=False),
    Case("zeros_like", (A,), diff=()),
    Case("full_like", (A, 3.0), diff=()),
    Case("linspace", (0.5, np.array([1.0, 3.0]), 5), diff=(1,)),
    Case("logspace", (np.array(0.5), 1.5, 4), diff=(0,)),
    Case("geomspace", (np.array(0.5), 8.0, 4), dict(endpoint=False), diff=(0,)),
    Case("meshgrid", (W, V), diff=(0, 1)),
    Case("meshgrid", (W, V, W[:2]), dict(indexing="ij", sparse=True), diff=(0, 1, 2)),
    Case("zeros", ((2, 3),), diff=(), vmap=False, protocol=False),
    Case("ones", (3,), dict(dtype=np.int32), diff=(), vmap=False, protocol=False),
    Case("ones_like", (F32,), dict(shape=(4,)), diff=()),
    Case("eye", (3, 4, 1), diff=(), vmap=False, protocol=False),
    Case("identity", (3,), dict(dtype=np.float32), diff=(), vmap=False, protocol=False),
    Case("tri", (3,), dict(k=-1), diff=(), vmap=False, protocol=False),
    Case("arange", (1, 2, 0.25), diff=(), vmap=False, protocol=False),
    Case("arange", (5,), dict(dtype=np.float32), diff=(), vmap=False, protocol=False),
    Case("ascontiguousarray", (np.array(2.5),), diff=(), protocol=False),
    Case("asanyarray", (I8,), diff=(), protocol=False),
    Case("atleast_1d", (np.array(2.5), W)),
    Case("row_stack", ([W, W],), diff=(), protocol=False),
    Case("nancumsum", (NAN,), dict(axis=1)),
    Case("nancumprod", (NAN,)),
    Case("rollaxis", (A, 2)),
    Case("rollaxis", (A, 0, 3)),
    Case("unstack", (A,), dict(axis=1)),
    Case("apply_over_axes", (dnp.sum, A, [0, 2]), diff=(1,)),
    Case("fromfunction", (lambda i, j: i * 2.0 + j, (2, 3)), diff=(), vmap=False, protocol=False),
    Case("astype", (A, np.float32), diff=()),
    Case("astype", (F32, np.float64)),
    Case("asfortranarray", (M,), protocol=False),
    Case("asarray_chkfinite", (M,), vmap=False, protocol=False),
    Case("require", (M, np.float64, ["C", "O"]), protocol=False),
    Case("sort_complex", (COMPLEX[0],), diff=()),
    Case("sort_complex", (W,), diff=()),  # (complex out: the real-loss checks do not apply)
    Case("sort_complex", (I8[0],), diff=()),
    Case("polyadd", (W, V), diff=(0, 1)),
    Case("polysub", (V, W), diff=(0, 1)),
    Case("polymul", (W, V), diff=(0, 1)),
    # (polydiv's remainder is trimmed by a test of its values: under vmap, test_pieces_...)
    Case("polydiv", (r(6), W + np.array([3.0, 0, 0])), diff=(0, 1), vmap=False),
    Case("polydiv", (V, r(1) + 3.0), diff=(0, 1), vmap=False),
    Case("polydiv", (W, V + np.array([3.0, 0, 0, 0])), diff=(0, 1), vmap=False),
    Case("polydiv", (I8[0], np.array([2, 1])), diff=(), vmap=False),
    Case("polydiv", (F32[0], np.array([2.0, 1.0], np.float32)), diff=(), vmap=False),
    Case("polyder", (V,)),
    Case("polyder", (V, 2)),
    Case("polyint", (W, 2, [1.0, 2.0])),
    Case("poly", (W,)),
    Case("poly", (np.array([1j, -1j, 2.0]),), diff=()),
    Case("poly", (np.array([[2.0, 0.5], [0.5, -1.0]]),), vmap=False),
    Case("roots", (np.array([1.0, -3.5, 2.0]),), vmap=False),
    Case("polyfit", (np.linspace(0.0, 1.0, 6), r(6), 2), diff=(0, 1), vmap=False),
    Case("polyfit", (np.linspace(0.0, 1.0, 6), r(6), 1), dict(cov=True), diff=(1,), vmap=False),
    *(
        Case(name, args, diff=(), vmap=False, protocol=False)
        for name, args in [
            ("bartlett", (5,)),
            ("blackman", (6,)),
            ("hamming", (4,)),
            ("hanning", (5,)),
            ("kaiser", (5, 14.0)),
        ]
    ),
    # finite differences and integration (differentiable in spacings and sample points too)
    Case("diff", (A,)),
    Case("diff", (A, 2, 0)),
    Case("diff", (M,), dict(prepend=0.5, append=M[:, :2])),
    Case("diff", (MASK,), diff=()),
    Case("ediff1d", (A,), dict(to_begin=[1.0, 2.0], to_end=9.0)),
    Case("gradient", (M,)),
    Case("gradient", (r(3, 4), 0.5), dict(edge_order=2)),
    Case("gradient", (M, COORDS, COORDS[::-1] * -1), diff=(0, 1, 2)),
    Case("gradient", (M, COORDS, COORDS * 2), dict(edge_order=2), diff=(0, 1, 2)),
    Case("gradient", (A, COORDS), dict(axis=1), diff=(0, 1)),
    Case("gradient", (np.arange(5),), diff=()),
    Case("trapezoid", (A,)),
    Case("trapezoid", (M, COORDS), diff=(0, 1)),
    Case("trapezoid", (A, None, 0.3, 0)),
    Case("trapezoid", (M, COORDS[None, :] + M), diff=(0, 1)),
    Case("interp", (np.array([-1.0, 0.3, 1.2, 2.9, 5.0]), XP, r(4)), diff=(0, 1, 2)),
    Case("unwrap", (np.cumsum(r(3, 8) * 3, axis=1),)),
    Case("unwrap", (np.cumsum(r(6, 2) * 3, axis=0),), dict(axis=0, period=5.0)),
    Case("interp", (r(2, 3), XP, r(4)), dict(left=-3.0, right=3.0), diff=(0, 2)),
    # polynomials, convolutions, statistics, elementwise functions that are not ufuncs
    Case("polyval", (W, V), diff=(0, 1)),
    Case("polyval", (np.array([1, 2, 3]), 2), diff=()),
    Case("vander", (W,)),
    Case("vander", (V, 3), dict(increasing=True)),
    Case("convolve", (V, W), diff=(0, 1)),
    Case("convolve", (W, V), dict(mode="same"), diff=(0, 1)),
    Case("convolve", (V, W), dict(mode="valid"), diff=(0, 1)),
    Case("correlate", (V, W), diff=(0, 1)),
    Case("correlate", (W, V), dict(mode="full"), diff=(0, 1)),
    Case("correlate", (W, V), dict(mode="same"), diff=(0, 1)),
    Case("correlate", (V, COMPLEX[0]), dict(mode="full"), diff=()),
    Case("cov", (r(3, 5),)),
    Case("cov", (r(5, 2),), dict(rowvar=False, bias=True)),
    Case("cov", (V, V * V), diff=(0, 1)),
    Case("cov", (r(2, 4), None, True, False, None, np.array([1, 2, 1, 3]), pos(4)), diff=(0, 6)),
    Case("corrcoef", (r(3, 5),)),
    Case("real", (COMPLEX,), diff=()),
    Case("real", (A,)),
    Case("real_if_close", (A,)),
    Case("real_if_close", (COMPLEX,), diff=()),  # (imaginary parts kept: complex out)
    Case("real_if_close", (COMPLEX.real + 1e-15j,), diff=()),
    Case("real_if_close", (COMPLEX.real + 1e-15j,), dict(tol=1), diff=()),
    Case("piecewise", (V, [V < 0, V > 1], [lambda v: -v, lambda v: v * v])),
    Case("piecewise", (V, [V < 0], [lambda v: 2.0 * v, 0.5])),
    Case("piecewise", (A, [A > 0], [lambda v, c: v * c, lambda v, c: v - c], 3.0)),
    Case("piecewise", (I8, [I8 > 2], [lambda v: v * 1.5]), diff=()),
    Case("trim_zeros", (np.array([0.0, 0.0, 1.5, 0.0, -2.0, 0.0]),), diff=()),  # (test_pieces)
    Case("trim_zeros", (np.pad(A[0], 1),), dict(axis=-1, trim="F"), diff=()),
    Case("imag", (COMPLEX,), diff=()),
    Case("imag", (A,), diff=()),
    Case("angle", (COMPLEX,), dict(deg=True), diff=()),
    Case("angle", (A,), diff=()),
    Case("sinc", (A,)),
    Case("i0", (A,)),
    Case("nan_to_num", (NAN,), dict(nan=-1.0)),
    Case("nan_to_num", (np.array([np.inf, -np.inf, 1.5]),), dict(posinf=9.0, neginf=-9.0)),
    # order statistics (through the sort op's permutation)
    Case("sort", (A,)),
    Case("sort", (A, 0)),
    Case("sort", (A, None)),
    Case("partition", (A, 1)),
    Case("partition", (A, (0, 1), 0)),
    Case("partition", (A, -3), dict(axis=None)),
    Case("partition", (V, [0, 3])),
    Case("median", (A,)),
    Case("median", (A,), dict(axis=(0, 2), keepdims=True)),
    Case("median", (r(3, 5),), dict(axis=-1)),
    Case("median", (NAN,), dict(axis=1), diff=()),
    Case("median", (I8,), dict(axis=0), diff=()),
    Case("quantile", (A, 0.3)),
    Case("quantile", (A, [0.1, 0.5, 1.0]), dict(axis=1)),
    Case("quantile", (A, [[0.2], [0.7]]), dict(axis=(0, 2), keepdims=True)),
    Case("quantile", (F32, 0.3), diff=()),
    Case("quantile", (A, [0.0, 0.33, 0.875]), dict(axis=1, method="midpoint")),
    Case("quantile", (A, [0.33, 0.875]), dict(method="nearest")),
    Case("quantile", (I8, 0.5), dict(method="lower"), diff=()),
    Case("percentile", (A, 30), dict(axis=0)),
    Case("percentile", (A, [30, 99.5]), dict(method="higher")),
    Case("nanmedian", (NAN,), dict(axis=1)),
    Case("nanmedian", (NAN,)),
    Case("nanquantile", (NAN, [0.2, 0.9]), dict(axis=0, keepdims=True)),
    Case("nanquantile", (NAN, 0.4), dict(axis=-1, method="nearest")),
    Case("nanquantile", (ALL_NAN_ROW, 0.5), dict(axis=1), diff=()),
    Case("nanpercentile", (NAN, 35), dict(axis=1, method="midpoint")),
    # complex inputs (values and dtypes)
    *(
        Case(name, (COMPLEX, *args), kwargs, diff=(), vmap=False)
        for name, args, kwargs in [
            ("sum", (), dict(axis=0)),
            ("mean", (), {}),
            ("var", (), dict(axis=1, ddof=1)),
            ("std", (), {}),
            ("cumsum", (), dict(axis=1)),
            ("vdot", (COMPLEX[::-1],), {}),
            ("dot", (COMPLEX.T,), {}),
            ("linalg.norm", (), {}),
            ("linalg.norm", (1, 1), {}),
            ("average", (1, np.array([1.0, 2.0, 3.0])), {}),
            ("real", (), {}),
            ("flip", (), {}),
        ]
    ),
    # linalg and fft
    Case("linalg.norm", (A,)),
    Case("linalg.norm", (V, 3)),
    Case("linalg.norm", (A, np.inf, 1)),
    Case("linalg.norm", (M, 1)),
    Case("linalg.norm", (A, -np.inf, (2, 0)), dict(keepdims=True)),
    Case("linalg.norm", (A, "fro", (0, 1))),
    Case("linalg.vector_norm", (A,), dict(axis=(0, 2), ord=1)),
    Case("linalg.matrix_norm", (A[..., 0],), dict(ord=-1)),
    Case("linalg.matmul", (A, r(2, 5)), diff=(0, 1)),
    Case("linalg.multi_dot", ([W, M, M],), diff=(), vmap=False),
    Case("linalg.matrix_power", (M, 5)),
    Case("linalg.matrix_power", (M, 0), diff=()),  # (the identity: constant)
    Case("linalg.outer", (W, V), diff=(0, 1)),
    Case("linalg.trace", (A[:, :2, :],), dict(offset=0)),
    Case("linalg.diagonal", (A,)),
    Case("linalg.matrix_transpose", (A,)),
    Case("linalg.vecdot", (A, r(2)), diff=(0, 1)),
    Case("linalg.cross", (r(2, 3), r(3)), diff=(0, 1)),
    Case("linalg.tensordot", (A, r(2, 5)), dict(axes=1), diff=(0, 1)),
    Case("linalg.solve", (SQUARE, r(3)), diff=(0, 1)),
    Case("linalg.solve", (SQUARE, r(2, 3, 2)), diff=(0, 1)),
    Case("linalg.inv", (SQUARE,)),
    Case("linalg.det", (M,)),
    Case("linalg.slogdet", (SQUARE,)),
    # (cholesky reads one triangle, its gradient is symmetric: tests/linalg checks it)
    Case("linalg.cholesky", (SPD,), diff=()),
    Case("linalg.lstsq", (r(4, 2), r(4)), diff=(), vmap=False),
    Case("linalg.pinv", (r(3, 2),)),
    Case("linalg.matrix_rank", (M,), diff=(), vmap=False),
    Case("linalg.tensorsolve", ((SQUARE * 2).reshape(3, 3, 1), r(3)), diff=(0, 1)),
    Case("linalg.tensorinv", (SQUARE.reshape(3, 3, 1),), dict(ind=1)),
    Case("linalg.matrix_power", (SQUARE / 4, -2)),
    Case("linalg.cond", (SQUARE,)),
    Case("linalg.cond", (SQUARE,), dict(p="fro")),
    Case("linalg.cond", (r(3, 4),)),
    # decompositions: eigh reads one triangle and its gradient is Hermitian (PyTorch's
    # convention), so finite differences of single entries do not apply: values only here
    # (tests/linalg checks its derivatives); real input keeps the vectors' gauge a sign
    Case("linalg.eigh", (SYM,), diff=()),
    Case("linalg.eigh", (SYM,), dict(UPLO="U"), diff=()),
    Case("linalg.eigvalsh", (SYM,), diff=()),
    Case("linalg.svd", (SYM,), dict(hermitian=True), diff=()),
    Case("linalg.svd", (r(4, 3),), dict(full_matrices=False)),
    Case("linalg.svd", (r(3, 3),), dict(compute_uv=False)),
    Case("linalg.svdvals", (r(2, 3, 2),)),
    Case("linalg.qr", (r(4, 3),)),
    Case("linalg.qr", (r(3, 3),), dict(mode="r")),
    # real eigenvalues: NumPy's real results, decided from the values (no vmap)
    Case("linalg.eig", (GEN,), vmap=False),
    Case("linalg.eigvals", (GEN,), vmap=False),
    Case("fft.fftshift", (A,)),
    Case("fft.ifftshift", (A,), dict(axes=(0, 2))),
    Case("fft.fftfreq", (5, np.array(0.3)), diff=(1,), protocol=False),
    Case("fft.rfftfreq", (6, np.array(2.0)), diff=(1,), protocol=False),
    # the transforms: even and odd n, cropping and padding, each norm, repeated axes, out=
    Case("fft.fft", (A,)),
    Case("fft.fft", (COMPLEX,), dict(n=5, axis=0, norm="ortho")),
    Case("fft.ifft", (A,), dict(n=3, axis=1, norm="forward")),
    Case("fft.rfft", (A,), dict(n=5, axis=1)),
    Case("fft.rfft", (F32,), diff=()),
    Case("fft.irfft", (COMPLEX,), dict(n=5)),
    Case("fft.irfft", (COMPLEX,), dict(axis=0, norm="ortho")),
    Case("fft.hfft", (COMPLEX,), dict(n=4, norm="forward")),
    Case("fft.ihfft", (A,), dict(axis=1, n=4)),
    Case("fft.fftn", (A,), dict(axes=(0, 2), s=(3, 1))),
    Case("fft.fftn", (A,), dict(axes=(1, 1, 0))),
    Case("fft.ifftn", (COMPLEX,), dict(norm="ortho")),
    Case("fft.rfftn", (A,), dict(axes=(2, 1), s=(3, 4), norm="forward")),
    Case("fft.irfftn", (COMPLEX,), dict(axes=(0, 1), s=(2, 5))),
    Case("fft.irfftn", (COMPLEX,)),
    Case("fft.fft2", (A,)),
    Case("fft.ifft2", (A,), dict(s=(4, 2), axes=(0, 1))),
    Case("fft.rfft2", (A,), dict(norm="ortho")),
    Case("fft.irfft2", (COMPLEX[None],), dict(s=(3, 4))),
    Case("fft.fft", (I8,), diff=()),
]


def resolve(module, name):
    for part in name.split("."):
        module = getattr(module, part)
    return module


def to_tensors(value, requires_grad=False):
    """NumPy arrays (also inside nested lists) as tensors; other values as they are."""
    if isinstance(value, np.ndarray):
        return dualad.tensor(value, requires_grad=requires_grad and value.dtype.kind == "f")
    if isinstance(value, list):
        return [to_tensors(v, requires_grad) for v in value]
    return value


def flat(out):
    """One 1-D tensor of all the outputs (functions returning several tensors too)."""
    if isinstance(out, (list, tuple)):
        return dnp.concatenate([dnp.ravel(o) for o in out]) if out else dualad.zeros(0)
    return dnp.ravel(out)


def numpy_result(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve(np, case.name)(*case.args, **case.kwargs)


def call(case, via, args):
    fn = resolve(dnp if via == "dualad.numpy" else np, case.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **case.kwargs)


def _array_paths(value, path):
    if isinstance(value, np.ndarray):
        return [path]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _array_paths(v, (*path, i))]
    return []


def leaves(case):
    """Where the differentiable arrays are: a path (argument position, then list indices) per
    array; arrays inside list arguments (``concatenate([a, b])``, ``block``) too."""
    return [p for i in case.diff for p in (_array_paths(case.args[i], (i,)) or [(i,)])]


def leaf_value(case, leaf):
    value = case.args
    for i in leaf:
        value = value[i]
    value = np.asarray(value)
    return value.astype(complex if value.dtype.kind == "c" else float)


def _replaced(value, path, new):
    if not path:
        return new
    copy = list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


def differentiable(case, via):
    """The function of the differentiable arrays alone (a flat real tensor out: a complex
    result's real and imaginary parts, so the checks' real losses apply)."""

    def f(*diffs):
        args = [to_tensors(a) for a in case.args]
        for path, d in zip(leaves(case), diffs):
            args = _replaced(args, path, d)
        out = flat(call(case, via, args))
        if out.dtype.kind == "c":
            return dnp.concatenate([dnp.real(out), dnp.imag(out)])
        return out

    return f


VIAS = ["dualad.numpy", "numpy"]
params = [
    pytest.param(case, via, id=f"{via}:{case.id}")
    for case in CASES
    for via in VIAS
    if via == "dualad.numpy" or case.protocol
]
diff_params = [p for p in params if p.values[0].diff]


def assert_same(ours, theirs):
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t)
        return
    assert isinstance(ours, dualad.Tensor), type(ours)
    theirs = np.asarray(theirs)
    got = ours.detach().numpy()
    assert got.shape == theirs.shape
    assert got.dtype == theirs.dtype, (got.dtype, theirs.dtype)
    np.testing.assert_allclose(got, theirs, rtol=1e-6 if got.dtype == np.float32 else 1e-12,
                               atol=1e-12, equal_nan=True)  # fmt: skip


@pytest.mark.parametrize(("case", "via"), params)
def test_values_dtypes_shapes_match_numpy(case, via):
    before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in case.args]
    tensors = [to_tensors(a, requires_grad=True) for a in case.args]
    ours = call(case, via, tensors)
    assert_same(ours, numpy_result(case))
    for a, b in zip(case.args, before):  # never mutated
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    for t, a in zip(tensors, case.args):
        if isinstance(t, dualad.Tensor):
            np.testing.assert_array_equal(t.detach().numpy(), a)


def diff_inputs(case):
    return tuple(dualad.tensor(leaf_value(case, leaf), requires_grad=True) for leaf in leaves(case))


@pytest.mark.parametrize(("case", "via"), diff_params)
def test_reverse_and_forward_mode_match_finite_differences(case, via):
    assert dualad.autograd.gradcheck(
        differentiable(case, via), diff_inputs(case), check_forward_ad=True
    )


@pytest.mark.parametrize(("case", "via"), diff_params)
def test_func_grad_and_jvp_agree_with_the_tape(case, via):
    f = differentiable(case, via)
    xs = diff_inputs(case)
    out = f(*xs)
    w = dualad.tensor(RNG.normal(size=out.shape))
    eager = dualad.autograd.grad(dnp.sum(out * w), xs, allow_unused=True)
    argnums = tuple(range(len(xs)))
    grads = func.grad(lambda *ys: dnp.sum(f(*ys) * w), argnums=argnums)(*(x.detach() for x in xs))
    for g, e in zip(grads, eager):
        np.testing.assert_allclose(g.numpy(), 0 * g.numpy() if e is None else e.numpy(), atol=1e-12)
    tangents = tuple(dualad.tensor(RNG.normal(size=x.shape)) for x in xs)
    _, jv = func.jvp(f, tuple(x.detach() for x in xs), tangents)
    lhs = float(dnp.sum(jv * w).detach())
    rhs = sum(float(dnp.sum(g * t)) for g, t in zip(grads, tangents))
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize(("case", "via"), [p for p in diff_params if p.values[0].vmap])
def test_vmap_matches_a_loop(case, via):
    f = differentiable(case, via)
    first, *others = leaves(case)
    rest = [dualad.tensor(leaf_value(case, leaf)) for leaf in others]
    base = leaf_value(case, first)
    batch = np.stack([base, base * 0.5 + 0.25, -base])
    g = lambda x: f(x, *rest)
    batched = dualad.vmap(g)(dualad.tensor(batch))
    looped = dnp.stack([g(dualad.tensor(b)) for b in batch])
    np.testing.assert_allclose(batched.numpy(), looped.numpy(), rtol=1e-12, atol=1e-12)
    # and a derivative through vmap
    x = dualad.tensor(batch, requires_grad=True)
    (grad,) = dualad.autograd.grad(dnp.sum(dualad.vmap(g)(x) ** 2), (x,))
    expected = np.stack([
        dualad.autograd.grad(dnp.sum(g(xi) ** 2), (xi,))[0].numpy()
        for xi in (dualad.tensor(b, requires_grad=True) for b in batch)
    ])  # fmt: skip
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-10, atol=1e-12)


def test_every_public_function_has_a_case():
    """A new differentiable function of these modules needs a line in CASES."""
    named = {c.name.split(".")[-1] for c in CASES}
    modules = (reductions, manipulation, joining, indexing, products, creation, calculus, elementwise,
               statistics, polynomials, order_statistics, padding, functional, pieces, dnp.linalg,
               dnp.fft)  # fmt: skip
    missing = set()
    exempt = {"empty", "empty_like"}  # (arbitrary values: test_empty_has_the_shape_and_dtype)
    for module in modules:
        missing |= {n for n in module.__all__ if n not in named and n not in exempt}
    assert not missing, sorted(missing)


def test_empty_has_numpys_shape_and_dtype():
    for ours, theirs in [
        (dnp.empty((2, 3)), np.empty((2, 3))),
        (dnp.empty(4, dtype=np.int8), np.empty(4, dtype=np.int8)),
        (dnp.empty_like(dualad.tensor(F32)), np.empty_like(F32)),
    ]:
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
