"""One ``dualad.numpy.ufunc`` per NumPy ufunc that dualad computes, under NumPy's names (its
aliases too: ``abs`` is ``absolute``, ``acos`` is ``arccos``, ``pow`` is ``power``).

Most wrap one dualad op (``sin``, ``add``, ``hypot``); NumPy ufuncs without an op of their own
are compositions: ``divmod`` is ``(floor_divide, remainder)``, ``modf`` ``(frac, trunc)``,
``float_power`` casts to NumPy's loop dtype first, ``vecdot``/``matvec``/``vecmat`` are
``matmul``s. Every ufunc computes in NumPy's loop dtypes for non-floating inputs (``sin`` of
int8 is float16, ``fabs`` of a complex tensor NumPy's TypeError). Comparisons, predicates,
bitwise and integer ufuncs are not differentiable (untracked results); piecewise-constant ones
(``floor``, ``rint``, ``sign``) have zero derivatives, as the dualad ops do.
Each ufunc's docstring ends with its example from ``ufunc_examples.md`` (a call, and its
gradient where it has one), which doctest runs through ``__test__``.

>>> import dualad
>>> import dualad.numpy as dnp
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> q, r = dnp.divmod(x, 0.75)
>>> q, r
(tensor([0., 2.]), tensor([0.5, 0.5], grad_fn=<RemainderBackward0>))
>>> dnp.vecdot(x, x)
tensor(4.25, grad_fn=<SumBackward0>)
"""

from __future__ import annotations

import operator
from pathlib import Path

import numpy as np

from .. import ops
from .._creation import as_tensor
from .._tensor import Tensor
from .ufunc_keywords import _SCALARS, _dtype_key, check_input
from .ufuncs import ufunc

# ---------------------------------------------------------------------------------------------
# compositions


class _Loops:
    """NumPy's loop dtypes for a ufunc's input dtypes (``numpy.ufunc.resolve_dtypes``, cached):
    NumPy's TypeError where it has no loop."""

    def __init__(self, np_ufunc):
        self.np_ufunc = np_ufunc
        self.name = f"dualad.numpy.{np_ufunc.__name__}"
        self.cache = {}

    def cast(self, args: tuple):
        """``args`` as tensors (scalars kept) cast to the loop's input dtypes, and the loop's
        output dtypes."""
        args = tuple(check_input(self.name, a) for a in args)
        keys = tuple(_dtype_key(a) for a in args)
        loop = self.cache.get(keys)
        if loop is None:
            np_ufunc = self.np_ufunc
            loop = np_ufunc.resolve_dtypes(keys + (None,) * np_ufunc.nout)
            loop = self.cache[keys] = (loop[: np_ufunc.nin], loop[np_ufunc.nin :])
        cast = tuple(_cast(a, d) for a, d in zip(args, loop[0], strict=True))
        return cast, loop[1]


def _cast(value, dtype):
    if type(value) in _SCALARS or value.dtype == dtype:
        return value
    return ops.astype(value, dtype)


def _in_loop_dtypes(np_ufunc, fn):
    """``fn`` on its arguments cast to the dtypes of NumPy's loop for them: ``fabs`` of an int8
    tensor computes in float16 as NumPy does."""
    loops = _Loops(np_ufunc)

    def call(*args):
        return fn(*loops.cast(args)[0])

    call.op = getattr(fn, "op", None)
    return call


def _numpy_dtypes(np_ufunc, fn):
    """``fn`` (a dualad op) with NumPy's dtypes: floating tensors and Python scalars go straight
    to it; other inputs (bool, integer, complex tensors; arrays) are cast to NumPy's loop for
    them and the result to the loop's output dtype (``sin`` of int8 is float16 in NumPy, where
    the dualad op follows PyTorch's float64; ``deg2rad`` of a complex tensor is NumPy's
    TypeError)."""
    loops = _Loops(np_ufunc)
    single = np_ufunc.nout == 1

    def call(*args):
        for a in args:
            if type(a) not in _SCALARS and not (isinstance(a, Tensor) and a.dtype.kind == "f"):
                cast, dtypes = loops.cast(args)
                result = fn(*cast)
                if single:
                    return _cast(result, dtypes[0])
                return tuple(_cast(r, d) for r, d in zip(result, dtypes, strict=True))
        return fn(*args)

    call.op = getattr(fn, "op", None)
    return call


def _modf(x):
    return ops.frac(x), ops.trunc(x)


def _divmod(a, b):
    return ops.floor_divide(a, b), ops.remainder(a, b)


def _core_size(name: str, x, axis: int, y, y_axis: int) -> None:
    # NumPy's gufuncs never broadcast a core dimension
    if x.shape[axis] != y.shape[y_axis]:
        raise ValueError(
            f"dualad.numpy.{name}: the core dimensions do not match: {x.shape[axis]} "
            f"(shape {tuple(x.shape)}) and {y.shape[y_axis]} (shape {tuple(y.shape)})"
        )


def _tensors(name: str, *args):
    args = tuple(check_input(f"dualad.numpy.{name}", a) for a in args)
    return tuple(as_tensor(a) if type(a) in _SCALARS else a for a in args)


def _vecdot(x1, x2, axis=-1):
    x1, x2 = _tensors("vecdot", x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("dualad.numpy.vecdot: both inputs need a vector dimension (ndim >= 1)")
    x1, x2 = ops.moveaxis(x1, axis, -1), ops.moveaxis(x2, axis, -1)
    _core_size("vecdot", x1, -1, x2, -1)
    return ops.sum(ops.conj(x1) * x2, axis=-1)


def _matvec(a, v):
    a, v = _tensors("matvec", a, v)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("dualad.numpy.matvec: needs a matrix (ndim >= 2) and a vector")
    _core_size("matvec", a, -1, v, -1)
    return ops.matmul(a, v[..., None])[..., 0]


def _vecmat(v, a):
    v, a = _tensors("vecmat", v, a)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError("dualad.numpy.vecmat: needs a vector and a matrix (ndim >= 2)")
    _core_size("vecmat", v, -1, a, -2)
    return ops.matmul(ops.conj(v)[..., None, :], a)[..., 0, :]


def _matmul_axes(a, b, axes=None, axis=None, keepdims=False):
    """``matmul`` with NumPy's ``axes=`` (the core axes of a, b and the result)."""
    if axis is not None or keepdims:
        raise TypeError(
            "dualad.numpy.matmul: axis= and keepdims= are for gufuncs with one core dim"
        )
    a, b = _tensors("matmul", a, b)
    if axes is None:
        return ops.matmul(a, b)
    if a.ndim < 2 or b.ndim < 2 or len(axes) != 3:
        raise ValueError("dualad.numpy.matmul: axes= needs 2-d (or more) inputs and 3 pairs")
    (a0, a1), (b0, b1), (o0, o1) = (tuple(map(operator.index, pair)) for pair in axes)
    result = ops.matmul(ops.moveaxis(a, (a0, a1), (-2, -1)), ops.moveaxis(b, (b0, b1), (-2, -1)))
    return ops.moveaxis(result, (-2, -1), (o0, o1))


def _vecdot_keywords(x1, x2, axes=None, axis=None, keepdims=False):
    if keepdims or axes is not None:
        raise TypeError("dualad.numpy.vecdot: keepdims= and axes= are not supported; use axis=")
    return _vecdot(x1, x2, -1 if axis is None else axis)


def _reducer(fn, with_dtype=True):
    if with_dtype:
        return lambda x, axes, dtype: fn(x, axis=axes, dtype=dtype)
    return lambda x, axes, dtype: fn(x, axis=axes)


def _accumulator(fn):
    return lambda x, axis, dtype: fn(x, axis=axis, dtype=dtype)


def _examples() -> dict[str, str]:
    """The doctest lines of each ufunc from ``ufunc_examples.md``: the ``pycon`` block of the
    section ``## name``."""
    text = Path(__file__).with_name("ufunc_examples.md").read_text(encoding="utf-8")
    examples = {}
    for section in text.split("\n## ")[1:]:
        name, _, rest = section.partition("\n")
        examples[name.strip()] = rest.split("```pycon\n", 1)[1].split("```", 1)[0]
    return examples


_EXAMPLES = _examples()


def _make(name, fn, **kwargs):
    """The ufunc ``name`` computed by ``fn`` (with NumPy's dtypes: ``_numpy_dtypes``)."""
    op = getattr(fn, "op", None)
    differentiable = kwargs.pop("differentiable", op is None or op.differentiable)
    np_ufunc = getattr(np, name)
    made = ufunc(np_ufunc, _numpy_dtypes(np_ufunc, fn), differentiable=differentiable, **kwargs)
    made._float_fn = fn  # what floating tensors run (the protocol's lean path calls it)
    if name in _EXAMPLES:  # (tests/test_docstring_examples.py finds a ufunc without one)
        made.__doc__ += f"\n\n>>> import dualad, dualad.numpy as dnp\n{_EXAMPLES[name]}"
    return made


# ---------------------------------------------------------------------------------------------
# the ufuncs (NumPy's name = the dualad function it runs; one greppable line a ufunc and its
# aliases, alike on purpose, as the alias lists of ops/comparison.py)

add = _make("add", ops.add, reducer=_reducer(ops.sum), accumulator=_accumulator(ops.cumsum))
subtract = _make("subtract", ops.sub)
multiply = _make(
    "multiply", ops.mul, reducer=_reducer(ops.prod), accumulator=_accumulator(ops.cumprod)
)
divide = true_divide = _make("divide", ops.div)
floor_divide = _make("floor_divide", ops.floor_divide)
power = pow = _make("power", ops.pow)
float_power = _make("float_power", _in_loop_dtypes(np.float_power, ops.pow))
remainder = mod = _make("remainder", ops.remainder)
fmod = _make("fmod", ops.fmod)
divmod = _make("divmod", _divmod)
negative = _make("negative", ops.neg)
positive = _make("positive", ops.positive)
absolute = abs = _make("absolute", ops.abs)
fabs = _make("fabs", ops.abs)
sign = _make("sign", ops.sign)
reciprocal = _make("reciprocal", ops.reciprocal)
square = _make("square", ops.square)
sqrt = _make("sqrt", ops.sqrt)
cbrt = _make("cbrt", ops.cbrt)

exp = _make("exp", ops.exp)
exp2 = _make("exp2", ops.exp2)
expm1 = _make("expm1", ops.expm1)
log = _make("log", ops.log)
log2 = _make("log2", ops.log2)
log10 = _make("log10", ops.log10)
log1p = _make("log1p", ops.log1p)
logaddexp = _make("logaddexp", ops.logaddexp)
logaddexp2 = _make("logaddexp2", ops.logaddexp2)

sin = _make("sin", ops.sin)
cos = _make("cos", ops.cos)
tan = _make("tan", ops.tan)
arcsin = asin = _make("arcsin", ops.arcsin)
arccos = acos = _make("arccos", ops.arccos)
arctan = atan = _make("arctan", ops.arctan)
arctan2 = atan2 = _make("arctan2", ops.arctan2)
hypot = _make("hypot", ops.hypot)
sinh = _make("sinh", ops.sinh)
cosh = _make("cosh", ops.cosh)
tanh = _make("tanh", ops.tanh)
arcsinh = asinh = _make("arcsinh", ops.arcsinh)
arccosh = acosh = _make("arccosh", ops.arccosh)
arctanh = atanh = _make("arctanh", ops.arctanh)
deg2rad = _make("deg2rad", ops.deg2rad)
radians = _make("radians", ops.deg2rad)
rad2deg = _make("rad2deg", ops.rad2deg)
degrees = _make("degrees", ops.rad2deg)

floor = _make("floor", ops.floor)
ceil = _make("ceil", ops.ceil)
trunc = _make("trunc", ops.trunc)
rint = _make("rint", ops.round)

maximum = _make("maximum", ops.maximum, reducer=_reducer(ops.amax, False))
minimum = _make("minimum", ops.minimum, reducer=_reducer(ops.amin, False))
fmax = _make("fmax", ops.fmax)
fmin = _make("fmin", ops.fmin)

equal = _make("equal", ops.eq)
not_equal = _make("not_equal", ops.ne)
less = _make("less", ops.lt)
less_equal = _make("less_equal", ops.le)
greater = _make("greater", ops.gt)
greater_equal = _make("greater_equal", ops.ge)
isfinite = _make("isfinite", ops.isfinite)
isinf = _make("isinf", ops.isinf)
isnan = _make("isnan", ops.isnan)
signbit = _make("signbit", ops.signbit)
logical_and = _make("logical_and", ops.logical_and, reducer=_reducer(ops.all, False))
logical_or = _make("logical_or", ops.logical_or, reducer=_reducer(ops.any, False))
logical_xor = _make("logical_xor", ops.logical_xor)
logical_not = _make("logical_not", ops.logical_not)

bitwise_and = _make("bitwise_and", ops.bitwise_and)
bitwise_or = _make("bitwise_or", ops.bitwise_or)
bitwise_xor = _make("bitwise_xor", ops.bitwise_xor)
invert = bitwise_not = bitwise_invert = _make("invert", ops.bitwise_not)
left_shift = bitwise_left_shift = _make("left_shift", ops.left_shift)
right_shift = bitwise_right_shift = _make("right_shift", ops.right_shift)
bitwise_count = _make("bitwise_count", ops.bitwise_count)
gcd = _make("gcd", ops.gcd)
lcm = _make("lcm", ops.lcm)

conjugate = conj = _make("conjugate", ops.conj)
copysign = _make("copysign", ops.copysign)
heaviside = _make("heaviside", ops.heaviside)
ldexp = _make("ldexp", ops.ldexp)
frexp = _make("frexp", ops.frexp)
modf = _make("modf", _modf)
nextafter = _make("nextafter", ops.nextafter)
spacing = _make("spacing", ops.spacing)

matmul = _make("matmul", ops.matmul, gufunc=_matmul_axes)
vecdot = _make("vecdot", _vecdot, gufunc=_vecdot_keywords)
matvec = _make("matvec", _matvec)
vecmat = _make("vecmat", _vecmat)

__all__ = sorted(name for name, value in globals().items() if isinstance(value, ufunc))

# doctest runs the examples of the ufuncs' docstrings from here (``--doctest-modules`` collects
# functions and classes only, and a ufunc is an instance)
__test__ = {name: globals()[name].__doc__ for name in __all__ if globals()[name].__name__ == name}
