"""Shared pieces of the scipy.special ops of any number of arguments (``special_gamma``,
``incomplete_beta``, ``elementary_special``, ``distributions``): the impl maker ``scipy_impl``
and ``elementwise_op``, a broadcasting elementwise op from one partial derivative per argument.

Values come from ``scipy.special`` (``cupyx.scipy.special`` on CuPy; NotImplementedError where it
lacks the function), in float64, returned in the dtype the arguments promote to (Python
scalars are weak, integers become the default float dtype).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import _dtypes
from .._dispatch import EMPTY, OpDef, dispatch, register
from . import _batching as batching
from ._helpers import _cotangent_term, _sum_tangents
from ._promotion import _PY_SCALARS, _floating, _reject_complex
from ._special_impls import special_function


def result_dtype(args, *, complex_ok: bool = False):
    """The dtype ``args`` (arrays and Python scalars) promote to, integers and bools as the
    default float dtype (or its complex partner when ``complex_ok`` and a complex is among
    them); Python scalars are weak, as in NumPy 2."""
    arrays = [_floating(a) for a in args if type(a) not in _PY_SCALARS]
    if not arrays:
        has_complex = any(type(a) is complex for a in args)
        if has_complex and complex_ok:
            return np.dtype(_dtypes.default_complex_dtype())
        return np.dtype(_dtypes.get_default_dtype())
    dtype = np.result_type(*(a.dtype for a in arrays), *(a for a in args if type(a) in _PY_SCALARS))
    if dtype.kind in "biu":
        dtype = np.dtype(_dtypes.get_default_dtype())
    return dtype


def scipy_call(xp, name: str, *wide):
    """``scipy.special.<name>`` (``cupyx.scipy.special`` on CuPy; NotImplementedError where it
    has no ``name``) of float64/complex128 arrays."""
    return xp.asarray(special_function(xp, name)(*wide))


def scipy_impl(
    name: str, public_name: str, *, complex_ok: bool = False, integers: tuple[int, ...] = ()
) -> Callable:
    """The impl of ``scipy.special.<name>`` on any number of arguments: computed in float64
    (complex128 for complex input where ``complex_ok``, else complex input is a TypeError naming
    ``dualad.special.<public_name>``), the result in the promoted dtype. The arguments at the
    positions ``integers`` (counts) are floored to int64 for scipy's integer loop (its float
    loop floors them too, with a DeprecationWarning); the result is nan where one is not
    finite."""

    def impl(xp, *args):
        if not complex_ok:
            _reject_complex(f"special.{public_name}", *args)
        dtype = result_dtype(args, complex_ok=complex_ok)
        wide_dtype = np.complex128 if dtype.kind == "c" else np.float64
        wide = [xp.asarray(a, dtype=wide_dtype) for a in args]
        finite = True
        for i in integers:
            finite = finite & xp.isfinite(wide[i])
            wide[i] = xp.floor(xp.where(xp.isfinite(wide[i]), wide[i], 0.0)).astype(np.int64)
        with np.errstate(all="ignore"):
            out = scipy_call(xp, name, *wide)
        if integers:
            out = xp.where(finite, out, xp.nan)
        return out.astype(dtype, copy=False)

    return impl


def elementwise_op(name: str, impl: Callable, partials, *, uses_out: bool = False) -> OpDef:
    """The OpDef of a broadcasting elementwise op of ``len(partials)`` arguments.

    ``partials[i](*args, y)`` is the derivative in argument ``i``, written in dualad ops (``y``
    the output, None unless ``uses_out``); a partial that raises (``special._no_derivative``)
    marks an argument without a derivative: it is called only when that argument is tracked.
    The engine sums broadcast cotangents down to each argument's shape.
    """

    def vjp(cts, outs, args, params, needs):
        y = outs[0] if outs else None
        return tuple(
            _cotangent_term(cts[0], partial(*args, y)) if need else None
            for partial, need in zip(partials, needs)
        )

    def jvp(tangents, outs, args, params):
        y = outs[0]
        terms = tuple(
            None if t is None else t * partial(*args, y) for partial, t in zip(partials, tangents)
        )
        return _sum_tangents(terms, y)

    return register(
        OpDef(name, impl, vjp=vjp, jvp=jvp, batch=batching.elementwise, save_out=uses_out)
    )


def caller(op: OpDef) -> Callable:
    """The function calling ``op`` on its positional arguments (tensors or numbers)."""

    def call(*args):
        return dispatch(op, args, EMPTY)

    call.__name__ = call.__qualname__ = op.name
    call.op = op
    return call


def own_impls(module: str, *functions) -> None:
    """Mark the impls of the ops of ``functions`` (made here by ``scipy_impl``) as ``module``'s,
    where the op table (``dualad.testing.op_table``) looks for an op's module."""
    for function in functions:
        function.op.impl.__module__ = module
