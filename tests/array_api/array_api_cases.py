"""The conformance cases of ``dualad.array_api``: for each function of the array API standard
(2024.12), a hypothesis strategy of its arguments (NumPy arrays of the dtypes the standard
requires for it, Python scalars, axes, shapes including 0-d and empty ones), and the comparison
of an implementation's result with ``array_api_strict``'s (the standard's reference
implementation): values, dtypes, shapes, and the exception class where the reference raises.

Used by ``test_array_api_conformance.py`` (dualad against the reference) and by
``benchmarks/array_api_conformance.py`` (the pass rates of dualad and of NumPy's own namespace).
"""

from __future__ import annotations

import math
import operator
import warnings

import array_api_strict
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

array_api_strict.set_array_api_strict_flags(api_version="2024.12")

BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8",)  # uint16..64 behave alike; uint8 keeps the example budget small
INTEGER = SIGNED + UNSIGNED
REAL_FLOAT = ("float32", "float64")
COMPLEX = ("complex64", "complex128")
FLOAT = REAL_FLOAT + COMPLEX
REAL = INTEGER + REAL_FLOAT
NUMERIC = REAL + COMPLEX
ALL = BOOL + NUMERIC

SPECIALS = (0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0)
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
nonempty = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)


def elements(dtype: str, *, positive=False, unit=False, finite=False):
    if dtype == "bool":
        return st.booleans()
    if dtype.startswith("uint"):
        return st.integers(0, 9)
    if dtype.startswith("int"):
        return st.integers(1 if positive else -9, 9)
    low, high = (0.5, 4.0) if positive else (-0.875, 0.875) if unit else (-4.0, 4.0)
    # the special values the standard's special cases are about, now and then
    real = st.floats(low, high, width=32)
    if dtype.startswith("complex"):
        # finite parts: the standard leaves complex infinities in products and sums open
        return st.builds(complex, real, real)
    return real if finite else real | st.sampled_from(SPECIALS)


@st.composite
def array(draw, dtypes, shape=None, **kw):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes) if shape is None else shape
    return draw(hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype, **kw)))


def scalar_for(dtype: str):
    if dtype == "bool":
        return st.booleans()
    if dtype.startswith("int") or dtype.startswith("uint"):
        return st.integers(0, 5)
    if dtype.startswith("complex"):
        return st.builds(complex, st.floats(-2, 2), st.floats(-2, 2))
    return st.floats(-3.0, 3.0)


@st.composite
def axis_of(draw, ndim, *, allow_none=True, allow_tuple=True):
    choices = []
    if allow_none:
        choices.append(st.none())
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        if allow_tuple:
            choices.append(
                st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple)
            )
    return draw(st.one_of(choices)) if choices else None


# --------------------------------------------------------------------- case families
def unary(dtypes, **kw):
    return st.tuples(st.tuples(array(dtypes, **kw)), st.just({}))


def promotable(dtype: str, dtypes) -> list:
    """The dtypes of ``dtypes`` that the standard promotes with ``dtype`` (its table)."""
    out = []
    for other in dtypes:
        try:
            array_api_strict.result_type(
                getattr(array_api_strict, dtype), getattr(array_api_strict, other)
            )
        except TypeError:
            continue
        out.append(other)
    return out


@st.composite
def _binary(draw, dtypes, kw, scalars):
    dtype = draw(st.sampled_from(dtypes))
    other = draw(st.sampled_from(promotable(dtype, dtypes)))
    s1, s2 = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)
    ).input_shapes
    a = draw(hnp.arrays(np.dtype(dtype), s1, elements=elements(dtype, **kw)))
    if scalars and draw(st.integers(0, 3)) == 0:
        return (a, draw(scalar_for(dtype))), {}
    b = draw(hnp.arrays(np.dtype(other), s2, elements=elements(other, **kw)))
    return (a, b), {}


def binary(dtypes, scalars=True, **kw):
    return _binary(dtypes, kw, scalars)


@st.composite
def reduction(draw, dtypes, *, keepdims=True, dtype_kw=False, correction=False, nonempty_=False):
    x = draw(array(dtypes, shape=draw(nonempty if nonempty_ else shapes)))
    kwargs = {"axis": draw(axis_of(x.ndim))}
    if keepdims:
        kwargs["keepdims"] = draw(st.booleans())
    if correction:
        kwargs["correction"] = draw(st.sampled_from([0, 1, 0.5]))
    return (x,), kwargs


@st.composite
def cumulative(draw, dtypes):
    x = draw(
        array(dtypes, shape=draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3, min_side=0)))
    )
    kwargs = {
        "axis": draw(st.integers(-x.ndim, x.ndim - 1)),
        "include_initial": draw(st.booleans()),
    }
    return (x,), kwargs


@st.composite
def with_axis(draw, dtypes, min_dims=1, kw_name="axis", negative_only=False):
    x = draw(array(dtypes, shape=draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, max_side=3))))
    low = -x.ndim
    axis = draw(st.integers(low, -1 if negative_only else x.ndim - 1))
    return (x,), {kw_name: axis}


def _call_arrays(draw, dtypes, n, shape=None):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes) if shape is None else shape
    return [draw(hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype))) for _ in range(n)]


@st.composite
def _custom(draw, builder):
    return builder(draw)


def custom(builder):
    return _custom(builder)


# builders of the functions with their own arguments (draw -> (args, kwargs))
def _clip(draw):
    (x,) = _call_arrays(draw, REAL, 1)
    lo = draw(st.one_of(st.none(), scalar_for(x.dtype.name)))
    hi = draw(st.one_of(st.none(), scalar_for(x.dtype.name)))
    if lo is not None and hi is not None and lo > hi:  # the standard leaves min > max open
        lo, hi = hi, lo
    return (x,), {"min": lo, "max": hi}


def _where(draw):
    dtype = draw(st.sampled_from(ALL))
    s = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3)).input_shapes
    c = draw(hnp.arrays(np.bool_, s[0]))
    a = draw(hnp.arrays(np.dtype(dtype), s[1], elements=elements(dtype)))
    b = draw(hnp.arrays(np.dtype(dtype), s[2], elements=elements(dtype)))
    if draw(st.booleans()):
        b = draw(scalar_for(dtype))
    return (c, a, b), {}


def _concat(draw):
    dtype = draw(st.sampled_from(ALL))
    base = list(draw(nonempty))
    axis = draw(st.one_of(st.none(), st.integers(-len(base), len(base) - 1)))
    arrays = []
    for _ in range(draw(st.integers(1, 3))):
        shape = list(base)
        if axis is not None:
            shape[axis] = draw(st.integers(0, 3))
        arrays.append(draw(hnp.arrays(np.dtype(dtype), tuple(shape), elements=elements(dtype))))
    return (arrays,), {"axis": axis}


def _stack(draw):
    arrays = _call_arrays(draw, ALL, draw(st.integers(1, 3)))
    return (arrays,), {"axis": draw(st.integers(-arrays[0].ndim - 1, arrays[0].ndim))}


def _reshape(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    shape = list(np.random.default_rng(draw(st.integers(0, 99))).permutation(x.shape))
    if shape and draw(st.booleans()):
        shape[0] = -1
    return (x, tuple(int(s) for s in shape)), {}


def _permute(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    return (x, tuple(draw(st.permutations(range(x.ndim))))), {}


def _squeeze(draw):
    (x,) = _call_arrays(draw, ALL, 1, shape=draw(nonempty))
    ones_ = [i for i, n in enumerate(x.shape) if n == 1]
    axis = (
        draw(st.lists(st.sampled_from(ones_), unique=True, min_size=1).map(tuple)) if ones_ else 0
    )
    return (x, axis), {}


def _expand_dims(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    return (x,), {"axis": draw(st.integers(-x.ndim - 1, x.ndim))}


def _moveaxis(draw):
    (x,) = _call_arrays(draw, ALL, 1, shape=draw(nonempty))
    return (x, draw(st.integers(0, x.ndim - 1)), draw(st.integers(-x.ndim, x.ndim - 1))), {}


def _roll(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    axis = draw(axis_of(x.ndim, allow_tuple=False))
    return (x,), {"shift": draw(st.integers(-4, 4)), "axis": axis}


def _repeat(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    return (x, draw(st.integers(0, 3))), {"axis": draw(axis_of(x.ndim, allow_tuple=False))}


def _tile(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    return (x, tuple(draw(st.lists(st.integers(0, 2), min_size=x.ndim, max_size=3)))), {}


def _flip(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    return (x,), {"axis": draw(axis_of(x.ndim))}


def _broadcast_to(draw):
    s = draw(hnp.mutually_broadcastable_shapes(num_shapes=1, max_dims=3, max_side=3))
    (x,) = _call_arrays(draw, ALL, 1, shape=s.input_shapes[0])
    return (x, s.result_shape), {}


def _broadcast_arrays(draw):
    dtype = draw(st.sampled_from(ALL))
    s = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3)).input_shapes
    return tuple(draw(hnp.arrays(np.dtype(dtype), sh, elements=elements(dtype))) for sh in s), {}


def _take(draw):
    (x,) = _call_arrays(draw, ALL, 1, shape=draw(nonempty))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    idx = draw(hnp.arrays(np.int64, (draw(st.integers(0, 4)),), elements=st.integers(0, n - 1)))
    return (x, idx), {"axis": axis}


def _take_along(draw):
    (x,) = _call_arrays(draw, ALL, 1, shape=draw(nonempty))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    shape = list(x.shape)
    shape[axis] = draw(st.integers(0, 3))
    idx = draw(hnp.arrays(np.int64, tuple(shape), elements=st.integers(0, x.shape[axis] - 1)))
    return (x, idx), {"axis": axis}


def _matmul(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=1, max_side=2))
    a_shape = (k,) if draw(st.booleans()) else (*batch, m, k)
    b_shape = (k,) if draw(st.booleans()) else (*batch, k, n)
    return tuple(
        draw(hnp.arrays(np.dtype(dtype), s, elements=elements(dtype))) for s in (a_shape, b_shape)
    ), {}


def _tensordot(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    a = draw(hnp.arrays(np.dtype(dtype), (2, 3), elements=elements(dtype)))
    b = draw(hnp.arrays(np.dtype(dtype), (3, 2), elements=elements(dtype)))
    return (a, b), {"axes": draw(st.sampled_from([0, 1, ((1,), (0,)), ((0, 1), (1, 0))]))}


def _vecdot(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    s = draw(
        hnp.mutually_broadcastable_shapes(
            num_shapes=2, min_dims=1, max_dims=3, min_side=1, max_side=3
        )
    )
    shapes_ = [list(sh) or [1] for sh in s.input_shapes]
    n = draw(st.integers(1, 3))
    for sh in shapes_:
        sh[-1] = n
    return tuple(
        draw(hnp.arrays(np.dtype(dtype), tuple(sh), elements=elements(dtype))) for sh in shapes_
    ), {}


def _matrix(draw, dtypes=NUMERIC):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=3))
    return draw(hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype)))


def _cross(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=1, max_side=2))
    return tuple(
        draw(hnp.arrays(np.dtype(dtype), (*batch, 3), elements=elements(dtype))) for _ in range(2)
    ), {}


def _outer(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    return tuple(
        draw(hnp.arrays(np.dtype(dtype), (draw(st.integers(0, 3)),), elements=elements(dtype)))
        for _ in range(2)
    ), {}


def _searchsorted(draw):
    (x,) = _call_arrays(draw, REAL, 1, shape=(draw(st.integers(0, 5)),))
    (v,) = _call_arrays(draw, (x.dtype.name,), 1)
    return (np.sort(x), v), {"side": draw(st.sampled_from(["left", "right"]))}


def _creation_shape(draw):
    return (draw(shapes),), {"dtype": draw(st.sampled_from((None, *ALL)))}


def _full(draw):
    dtype = draw(st.sampled_from(ALL))
    return (draw(shapes), draw(scalar_for(dtype))), {"dtype": draw(st.sampled_from([None, dtype]))}


def _like(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    return (x,), {"dtype": draw(st.sampled_from((None, *ALL)))}


def _full_like(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    return (x,), {"fill_value": draw(scalar_for(x.dtype.name))}


def _arange(draw):
    start = draw(st.integers(-5, 5))
    stop = draw(st.one_of(st.none(), st.integers(-5, 5)))
    step = draw(st.sampled_from([1, 2, -1, -2])) if stop is not None else 1
    return (start, stop, step), {}


def _linspace(draw):
    return (draw(st.floats(-3, 3)), draw(st.floats(-3, 3))), {
        "num": draw(st.integers(0, 5)),
        "endpoint": draw(st.booleans()),
    }


def _eye(draw):
    return (draw(st.integers(0, 4)), draw(st.one_of(st.none(), st.integers(0, 4)))), {
        "k": draw(st.integers(-3, 3)),
        "dtype": draw(st.sampled_from((None, *ALL))),
    }


def _meshgrid(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    arrays = tuple(
        draw(hnp.arrays(np.dtype(dtype), (draw(st.integers(0, 3)),), elements=elements(dtype)))
        for _ in range(draw(st.integers(1, 3)))
    )
    return arrays, {"indexing": draw(st.sampled_from(["xy", "ij"]))}


def _diff(draw):
    (x,) = _call_arrays(draw, REAL, 1, shape=draw(nonempty))
    return (x,), {"axis": draw(st.integers(-x.ndim, x.ndim - 1)), "n": draw(st.integers(0, 2))}


def _tri(draw):
    return (_matrix(draw, ALL),), {"k": draw(st.integers(-2, 2))}


def _astype(draw):
    (x,) = _call_arrays(draw, REAL + BOOL, 1)
    return (x, draw(st.sampled_from(REAL + BOOL))), {}


def _argsort(draw):
    (x,) = _call_arrays(draw, REAL, 1, shape=draw(nonempty))
    return (x,), {"axis": draw(st.integers(-x.ndim, x.ndim - 1)), "descending": draw(st.booleans())}


def _arg_extremum(draw):
    (x,) = _call_arrays(draw, REAL, 1, shape=draw(nonempty))
    return (x,), {
        "axis": draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1))),
        "keepdims": draw(st.booleans()),
    }


def _unstack(draw):
    (x,) = _call_arrays(draw, ALL, 1, shape=draw(nonempty))
    return (x,), {"axis": draw(st.integers(-x.ndim, x.ndim - 1))}


def _nonzero(draw):
    return (_call_arrays(draw, ALL, 1, shape=draw(nonempty))[0],), {}


def _isin(draw):
    x1, x2 = _call_arrays(draw, INTEGER, 2)
    return (x1, x2), {"invert": draw(st.booleans())}


def _matrix_norm(draw):
    return (_matrix(draw, FLOAT),), {
        "keepdims": draw(st.booleans()),
        "ord": draw(st.sampled_from(["fro", 1, -1, math.inf, -math.inf])),
    }


def _vector_norm(draw):
    (x,) = _call_arrays(draw, FLOAT, 1)
    return (x,), {
        "axis": draw(axis_of(x.ndim)),
        "keepdims": draw(st.booleans()),
        "ord": draw(st.sampled_from([2, 1, 3, math.inf, -math.inf])),
    }


def _matrix_power(draw):
    dtype = draw(st.sampled_from(FLOAT))
    n = draw(st.integers(1, 3))
    shape = (*draw(hnp.array_shapes(min_dims=0, max_dims=1, max_side=2)), n, n)
    # finite: how infinities combine in matrix products is left open (BLAS orders differ)
    x = draw(hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype, unit=True, finite=True)))
    return (x, draw(st.integers(0, 4))), {}


def _trace(draw):
    return (_matrix(draw),), {"offset": draw(st.integers(-2, 2))}


def _shifts(draw):
    (x,) = _call_arrays(draw, INTEGER, 1)
    return (x, draw(hnp.arrays(x.dtype, x.shape, elements=st.integers(0, 3)))), {}


def _pow(draw):
    (a, b), _ = draw(binary(REAL_FLOAT + COMPLEX, scalars=True))
    return (a, b), {}


def _int_pow(draw):
    dtype = draw(st.sampled_from(INTEGER))
    a = draw(hnp.arrays(np.dtype(dtype), draw(shapes), elements=elements(dtype)))
    b = draw(hnp.arrays(np.dtype(dtype), a.shape, elements=st.integers(0, 3)))
    return (a, b), {}


def _basic_index(draw):
    (x,) = _call_arrays(draw, ALL, 1)
    key = draw(hnp.basic_indices(x.shape, allow_ellipsis=True, allow_newaxis=True))
    key = key if isinstance(key, tuple) else (key,)
    if not any(k is Ellipsis for k in key):  # fewer indices than axes: the standard asks for ...
        key = (*key, Ellipsis)
    return (x, key), {}


def _mask_index(draw):
    (x,) = _call_arrays(draw, ALL, 1, shape=draw(nonempty))
    return (x, draw(hnp.arrays(np.bool_, x.shape))), {}


def _integer_index(draw):
    (x,) = _call_arrays(draw, ALL, 1, shape=draw(nonempty))
    shapes_ = draw(hnp.mutually_broadcastable_shapes(num_shapes=x.ndim, max_dims=2, max_side=3))
    key = tuple(
        draw(hnp.arrays(np.int64, shape, elements=st.integers(-n, n - 1)))
        for shape, n in zip(shapes_.input_shapes, x.shape)
    )
    return (x, key), {}


def c(builder):
    """The strategy of a builder ``draw -> (args, kwargs)``."""
    return custom(builder)


_UNARY_FLOAT = "acos acosh asin asinh atan atanh cos cosh exp expm1 log log1p log2 log10 sin sinh sqrt tan tanh"
_UNARY_FLOAT_DOMAIN = {
    "acos": "unit",
    "asin": "unit",
    "atanh": "unit",
    "acosh": "positive",
    "log": "positive",
    "log1p": "positive",
    "log2": "positive",
    "log10": "positive",
    "sqrt": "positive",
}
_BINARY_NUMERIC = "add subtract multiply equal not_equal"
_BINARY_REAL = "greater greater_equal less less_equal maximum minimum floor_divide remainder"
_BINARY_REAL_FLOAT = "atan2 copysign hypot logaddexp nextafter"

# name -> (group, strategy of (args, kwargs))
CASES: dict = {}
for _n in _UNARY_FLOAT.split():
    _dom = _UNARY_FLOAT_DOMAIN.get(_n)
    CASES[_n] = (
        "elementwise",
        unary(REAL_FLOAT if _dom else FLOAT, **({_dom: True} if _dom else {})),
    )
for _n in ["abs", "negative", "positive", "square", "sign"]:
    CASES[_n] = ("elementwise", unary(NUMERIC if _n != "abs" else REAL_FLOAT + SIGNED + COMPLEX))
for _n in ["ceil", "floor", "trunc", "round"]:
    CASES[_n] = ("elementwise", unary(REAL))
for _n in ["isfinite", "isinf", "isnan"]:
    CASES[_n] = ("elementwise", unary(NUMERIC))
for _n in ["real", "conj"]:
    CASES[_n] = ("elementwise", unary(COMPLEX + REAL_FLOAT))
CASES["imag"] = ("elementwise", unary(COMPLEX))  # the standard requires complex x only
CASES["signbit"] = ("elementwise", unary(REAL_FLOAT))
CASES["reciprocal"] = ("elementwise", unary(FLOAT, positive=True))
CASES["logical_not"] = ("elementwise", unary(BOOL))
CASES["bitwise_invert"] = ("elementwise", unary(INTEGER + BOOL))
for _n in _BINARY_NUMERIC.split():
    CASES[_n] = ("elementwise", binary(NUMERIC))
CASES["divide"] = ("elementwise", binary(FLOAT, positive=True))
for _n in _BINARY_REAL.split():
    CASES[_n] = ("elementwise", binary(REAL, positive=_n in ("floor_divide", "remainder")))
for _n in _BINARY_REAL_FLOAT.split():
    CASES[_n] = ("elementwise", binary(REAL_FLOAT, scalars=_n != "nextafter"))
for _n in ["logical_and", "logical_or", "logical_xor"]:
    CASES[_n] = ("elementwise", binary(BOOL))
for _n in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
    CASES[_n] = ("elementwise", binary(INTEGER + BOOL))
CASES["bitwise_left_shift"] = ("elementwise", c(_shifts))
CASES["bitwise_right_shift"] = ("elementwise", c(_shifts))
CASES["pow"] = ("elementwise", c(_pow))
CASES["clip"] = ("elementwise", c(_clip))

CASES.update({
    "sum": ("statistical", reduction(NUMERIC)),
    "prod": ("statistical", reduction(NUMERIC)),
    "mean": ("statistical", reduction(FLOAT, nonempty_=True)),
    "std": ("statistical", reduction(REAL_FLOAT, correction=True, nonempty_=True)),
    "var": ("statistical", reduction(REAL_FLOAT, correction=True, nonempty_=True)),
    "max": ("statistical", reduction(REAL, nonempty_=True)),
    "min": ("statistical", reduction(REAL, nonempty_=True)),
    "cumulative_sum": ("statistical", cumulative(NUMERIC)),
    "cumulative_prod": ("statistical", cumulative(NUMERIC)),
    "all": ("utility", reduction(ALL)),
    "any": ("utility", reduction(ALL)),
    "diff": ("utility", c(_diff)),
    "argmax": ("searching", c(_arg_extremum)),
    "argmin": ("searching", c(_arg_extremum)),
    "count_nonzero": ("searching", reduction(ALL)),
    "nonzero": ("searching", c(_nonzero)),
    "searchsorted": ("searching", c(_searchsorted)),
    "where": ("searching", c(_where)),
    "argsort": ("sorting", c(_argsort)),
    "sort": ("sorting", c(_argsort)),
    "isin": ("set", c(_isin)),
    "unique_all": ("set", unary(REAL)),
    "unique_counts": ("set", unary(REAL)),
    "unique_inverse": ("set", unary(REAL)),
    "unique_values": ("set", unary(REAL)),
    "broadcast_arrays": ("manipulation", c(_broadcast_arrays)),
    "broadcast_to": ("manipulation", c(_broadcast_to)),
    "concat": ("manipulation", c(_concat)),
    "expand_dims": ("manipulation", c(_expand_dims)),
    "flip": ("manipulation", c(_flip)),
    "moveaxis": ("manipulation", c(_moveaxis)),
    "permute_dims": ("manipulation", c(_permute)),
    "repeat": ("manipulation", c(_repeat)),
    "reshape": ("manipulation", c(_reshape)),
    "roll": ("manipulation", c(_roll)),
    "squeeze": ("manipulation", c(_squeeze)),
    "stack": ("manipulation", c(_stack)),
    "tile": ("manipulation", c(_tile)),
    "unstack": ("manipulation", c(_unstack)),
    "take": ("indexing", c(_take)),
    "take_along_axis": ("indexing", c(_take_along)),
    "arange": ("creation", c(_arange)),
    "empty": ("creation", c(_creation_shape)),
    "zeros": ("creation", c(_creation_shape)),
    "ones": ("creation", c(_creation_shape)),
    "full": ("creation", c(_full)),
    "empty_like": ("creation", c(_like)),
    "zeros_like": ("creation", c(_like)),
    "ones_like": ("creation", c(_like)),
    "full_like": ("creation", c(_full_like)),
    "eye": ("creation", c(_eye)),
    "linspace": ("creation", c(_linspace)),
    "meshgrid": ("creation", c(_meshgrid)),
    "tril": ("creation", c(_tri)),
    "triu": ("creation", c(_tri)),
    "asarray": ("creation", unary(ALL)),
    "astype": ("data types", c(_astype)),
    "matmul": ("linear algebra", c(_matmul)),
    "matrix_transpose": ("linear algebra", st.builds(lambda m: ((m,), {}), custom(_matrix))),
    "tensordot": ("linear algebra", c(_tensordot)),
    "vecdot": ("linear algebra", c(_vecdot)),
    "linalg.matmul": ("linalg extension", c(_matmul)),
    "linalg.matrix_transpose": ("linalg extension", st.builds(lambda m: ((m,), {}), custom(_matrix))),
    "linalg.tensordot": ("linalg extension", c(_tensordot)),
    "linalg.vecdot": ("linalg extension", c(_vecdot)),
    "linalg.outer": ("linalg extension", c(_outer)),
    "linalg.cross": ("linalg extension", c(_cross)),
    "linalg.diagonal": ("linalg extension", st.builds(lambda m: ((m,), {}), custom(_matrix))),
    "linalg.trace": ("linalg extension", c(_trace)),
    "linalg.matrix_power": ("linalg extension", c(_matrix_power)),
    "linalg.matrix_norm": ("linalg extension", c(_matrix_norm)),
    "linalg.vector_norm": ("linalg extension", c(_vector_norm)),
})  # fmt: skip
# the integer pow has its own case: negative integer exponents are an error in NumPy only
CASES["pow_integer"] = ("elementwise", c(_int_pow))

# the array object's operators: ``op:NAME`` calls ``operator.NAME`` on the namespace's arrays
_OPERATOR_DTYPES = {
    "add": NUMERIC, "sub": NUMERIC, "mul": NUMERIC, "truediv": FLOAT, "eq": ALL, "ne": ALL,
    "floordiv": REAL, "mod": REAL, "lt": REAL, "le": REAL, "gt": REAL, "ge": REAL,
    "and_": INTEGER + BOOL, "or_": INTEGER + BOOL, "xor": INTEGER + BOOL,
}  # fmt: skip
for _n, _dtypes in _OPERATOR_DTYPES.items():
    _kw = {"positive": True} if _n in ("truediv", "floordiv", "mod") else {}
    CASES[f"op:{_n}"] = ("array object", binary(_dtypes, **_kw))
for _n, _dtypes in {"neg": NUMERIC, "pos": NUMERIC, "abs": REAL_FLOAT + SIGNED,
                    "invert": INTEGER + BOOL}.items():  # fmt: skip
    CASES[f"op:{_n}"] = ("array object", unary(_dtypes))
CASES["op:pow"] = ("array object", c(_pow))
CASES["op:matmul"] = ("array object", c(_matmul))
CASES["op:lshift"] = ("array object", c(_shifts))
CASES["op:rshift"] = ("array object", c(_shifts))
CASES["op:getitem"] = ("array object", c(_basic_index))
CASES["op:getitem_mask"] = ("array object", c(_mask_index))
CASES["op:getitem_integers"] = ("array object", c(_integer_index))

# the functions whose results are not values (uninitialised memory): compared in shape/dtype
SHAPE_ONLY = {"empty", "empty_like"}
# exception classes the standard names; the reference raising one of these means "invalid input"
ERRORS = (TypeError, ValueError, IndexError, NotImplementedError)


MISSING = object()  # (not None: the standard's ``newaxis`` is None)


def lookup(xp, name):
    """The object ``name`` (``"linalg.outer"``; ``"pow_integer"`` is ``pow``) of namespace
    ``xp``, or ``MISSING`` where ``xp`` lacks it."""
    name = {"pow_integer": "pow"}.get(name, name)
    if name.startswith("op:"):
        return getattr(operator, name[3:].split("_mask")[0].split("_integers")[0])
    obj = xp
    for part in name.split("."):
        obj = getattr(obj, part, MISSING)
        if obj is MISSING:
            return MISSING
    return obj


def convert(xp, value):
    """NumPy arrays (and lists of them) in a case's arguments as ``xp``'s arrays; dtype names
    as ``xp``'s dtypes."""
    if isinstance(value, np.ndarray):
        return xp.asarray(value)
    if isinstance(value, list):
        return [convert(xp, v) for v in value]
    if isinstance(value, tuple):
        return tuple(convert(xp, v) for v in value)
    if isinstance(value, str) and value in ALL:
        return getattr(xp, value)
    return value


def to_numpy(value):
    """A result as NumPy data (tuples, named tuples and lists elementwise)."""
    if isinstance(value, (tuple, list)):
        items = [to_numpy(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    try:
        return np.from_dlpack(value)
    except (TypeError, AttributeError, BufferError, RuntimeError):
        return np.asarray(value)


def call(xp, name, args, kwargs):
    """``(result as NumPy, None)`` or ``(None, exception)``."""
    fn = lookup(xp, name)
    kwargs = {k: convert(xp, v) for k, v in kwargs.items()}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return to_numpy(fn(*[convert(xp, a) for a in args], **kwargs)), None
        except Exception as exc:  # compared with the reference's exception by the caller
            return None, exc


def canonical_unique(name, result):
    """The standard leaves the order of ``unique_*``'s values unspecified: their results sorted
    by value (the inverse indices as the values they pick)."""
    if name == "unique_values":
        return np.sort(np.asarray(result))
    parts = [np.asarray(r) for r in result]
    order = np.argsort(parts[0], kind="stable")
    if name == "unique_counts":
        return (parts[0][order], parts[1][order])
    if name == "unique_inverse":
        return (parts[0][order], parts[0][parts[1]])
    values, indices, inverse, counts = parts
    return (values[order], indices[order], values[inverse], counts[order])


def mismatch(name, expected, got) -> str | None:
    """Why ``got`` differs from ``expected`` (values, dtype, shape), or None."""
    if isinstance(expected, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return f"expected a sequence of {len(expected)} results, got {type(got).__name__}"
        for e, g in zip(expected, got):
            why = mismatch(name, e, g)
            if why:
                return why
        return None
    if isinstance(expected, list):
        return mismatch(
            name, tuple(expected), tuple(got) if isinstance(got, (list, tuple)) else got
        )
    got = np.asarray(got)
    if expected.dtype != got.dtype:
        return f"dtype {got.dtype}, expected {expected.dtype}"
    if expected.shape != got.shape:
        return f"shape {got.shape}, expected {expected.shape}"
    if name in SHAPE_ONLY:
        return None
    if expected.dtype.kind in "fc":
        rtol = 1e-4 if expected.dtype in (np.float32, np.complex64) else 1e-10
        if not np.allclose(got, expected, rtol=rtol, atol=rtol, equal_nan=True):
            return f"values {got!r}, expected {expected!r}"
    elif not np.array_equal(got, expected):
        return f"values {got!r}, expected {expected!r}"
    return None


def check(xp, name, args, kwargs) -> str | None:
    """Compare ``xp``'s ``name`` with the reference's on one case: None when they agree, else
    what differs."""
    expected, ref_error = call(array_api_strict, name, args, kwargs)
    got, error = call(xp, name, args, kwargs)
    if name.startswith("unique_") and expected is not None and got is not None:
        expected, got = canonical_unique(name, expected), canonical_unique(name, got)
    if ref_error is not None:
        if not isinstance(ref_error, ERRORS):
            return None  # the reference failed for its own reasons: nothing to compare
        if error is None:
            return f"the reference raised {type(ref_error).__name__}: {ref_error}; got a result"
        if not isinstance(error, ERRORS):
            return f"raised {type(error).__name__} ({error}), expected {type(ref_error).__name__}"
        return None
    if error is not None:
        return f"raised {type(error).__name__}: {error}"
    return mismatch(name, expected, got)


KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric")  # fmt: skip
DTYPE_FUNCTIONS = ("can_cast", "result_type", "isdtype", "finfo", "iinfo")


def check_dtype_function(xp, name) -> str | None:
    """Compare ``xp``'s dtype function ``name`` with the reference over every dtype (pair):
    None when they agree, else the first difference."""
    ref = array_api_strict
    fn = lookup(xp, name)
    if fn is MISSING:
        return "missing"
    pairs = [(a, b) for a in ALL for b in ALL]
    for a, b in pairs if name in ("can_cast", "result_type") else [(a, a) for a in ALL]:
        da, db, ra, rb = getattr(xp, a), getattr(xp, b), getattr(ref, a), getattr(ref, b)
        if name == "can_cast" and fn(da, db) != ref.can_cast(ra, rb):
            return f"can_cast({a}, {b}) is {fn(da, db)}, the reference's {ref.can_cast(ra, rb)}"
        if name == "result_type":
            try:
                expected = str(ref.result_type(ra, rb)).split(".")[-1]
            except TypeError:  # mixed kinds: the standard leaves them to the implementation
                continue
            if np.dtype(fn(da, db)).name != expected:
                return f"result_type({a}, {b}) is {fn(da, db)}, the reference's {expected}"
        if name == "isdtype":
            for kind in KINDS:
                if fn(da, kind) != ref.isdtype(ra, kind):
                    return f"isdtype({a}, {kind!r}) is {fn(da, kind)}"
        limits = {"finfo": ("bits", "eps", "max", "min", "smallest_normal"),
                  "iinfo": ("bits", "max", "min")}  # fmt: skip
        wanted = {"finfo": ("float", "complex"), "iinfo": ("int", "uint")}
        if name in limits and a.startswith(wanted[name]):
            ours, theirs = fn(da), getattr(ref, name)(ra)
            for attr in limits[name]:
                if getattr(ours, attr) != getattr(theirs, attr):
                    return f"{name}({a}).{attr} is {getattr(ours, attr)}"
    return None
