"""Impl makers for the ops whose values are ``scipy.special`` functions of any arity (the Bessel,
Airy, integral and elliptic modules): real input computed in float64 and returned in the
input's dtype, complex input (where the op allows it) in complex128 and returned in the input's
complex dtype; on CuPy ``cupyx.scipy.special``'s version. Where cupyx has none, CuPy input
raises NotImplementedError naming the function (no hidden copy to the host and back: the
caller moves the tensor with ``.cpu()``; docs/gpu.md lists these functions).

Static parameters of an op (orders, shape parameters) are passed to the scipy function before
the arrays, in the order the op's ``params`` give them (``expn(n, x)``, ``hyp1f1(a, b, x)``).
"""

from __future__ import annotations

import numpy as np
import scipy.special

from .._backend import unavailable_on_cuda
from ._helpers import unary
from ._promotion import _float_array, _float_operands, _reject_complex


def special_function(xp, name: str):
    """``name`` of ``scipy.special`` for NumPy arrays, of ``cupyx.scipy.special`` for CuPy
    arrays (NotImplementedError where cupyx has none)."""
    if xp is np:
        return getattr(scipy.special, name)
    from cupyx.scipy import special  # CuPy's SciPy functions: imported on first GPU use

    on_device = getattr(special, name, None)
    if on_device is None:
        raise unavailable_on_cuda(f"scipy.special.{name}", f"cupyx.scipy.special has no {name}")
    return on_device


def special_impl(
    public_name: str, name: str, *, index: int | None = None, complex_ok=False, real_first=False
):
    """The impl ``impl(xp, *arrays, **params)`` of ``scipy.special.<name>(*params, *arrays)``
    (one or two arrays, promoted together), taking item ``index`` of a tuple result (``airy``,
    ``sici``...). Complex input raises TypeError naming ``public_name`` unless ``complex_ok``;
    with ``real_first`` the first of two arrays (an order) must be real even then."""

    def impl(xp, *arrays, **params):
        if not complex_ok:
            _reject_complex(public_name, *arrays)
        elif real_first:
            _reject_complex(public_name, arrays[0])
        if len(arrays) == 1:
            promoted = (_float_array(arrays[0]),)
        else:
            promoted = _float_operands(xp, *arrays)
        dtype = promoted[-1].dtype
        wide_dtype = np.complex128 if dtype.kind == "c" else np.float64
        wide = [a.astype(wide_dtype, copy=False) for a in promoted]
        if real_first:  # the order as given, in float64 (not rounded to a complex64's parts)
            wide[0] = xp.asarray(arrays[0], dtype=np.float64)
        with np.errstate(all="ignore"):  # scipy's inf/nan outside the domain are the values
            out = special_function(xp, name)(*params.values(), *wide)
        if index is not None:
            out = out[index]
        return xp.asarray(out).astype(dtype, copy=False)

    return impl


def scipy_unary(
    name: str, deriv, *, uses="x", complex_ok=False, function: str | None = None, index=None
):
    """The function of the unary op ``name``: ``scipy.special.<function>``'s values (``name``'s
    by default; item ``index`` of a tuple result), the derivative ``deriv(x, y)`` in dualad
    ops. Its public name and docstring are ``dualad.special``'s."""
    function = function or name
    impl = special_impl(f"special.{name}", function, index=index, complex_ok=complex_ok)
    item = "" if index is None else f"item {index} of "
    doc = f"{item}``scipy.special.{function}`` as an op (``dualad.special`` documents it)."
    return unary(name, impl, deriv, uses=uses, doc=doc)
