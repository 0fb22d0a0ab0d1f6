"""Special functions of the error-function family: erf, erfc, erfinv, erfcinv, erfcx; and the
impl makers the other special-function modules share (``_special_impl``, ``_special_binary_impl``,
``_no_derivative``).

Values come from ``scipy.special`` (NumPy arrays) or ``cupyx.scipy.special`` (CuPy arrays),
computed in float64 and returned in the input's dtype; the derivative rules are written in
dualad ops, so every order and every transform works. Complex inputs are rejected (scipy's
complex versions have derivatives these rules do not give).
"""

from __future__ import annotations

import math as _math

import numpy as np
import scipy.special

from ._exports import Exports
from ._helpers import unary
from ._promotion import _float_array, _float_operands, _reject_complex
from .comparison import where
from .exp_log import exp

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# error function family: values from scipy.special (NumPy) or cupyx.scipy.special (CuPy)

_TWO_OVER_SQRT_PI = 2.0 / _math.sqrt(_math.pi)
_SQRT_PI_OVER_TWO = _math.sqrt(_math.pi) / 2.0


def _special_module(xp):
    """``scipy.special`` for NumPy arrays, ``cupyx.scipy.special`` for CuPy arrays."""
    if xp is np:
        return scipy.special
    from cupyx.scipy import special  # CuPy's SciPy functions: imported on first GPU use

    return special


def _special_impl(name: str, numpy_version=None, public_name: str | None = None):
    """The impl of ``scipy.special``'s function ``name`` (or of ``numpy_version`` on NumPy) on
    real floating input (computed in float64, the result in the input's dtype)."""
    numpy_version = numpy_version or getattr(scipy.special, name)
    public_name = public_name or name

    def impl(xp, x):
        x = _float_array(x)
        _reject_complex(public_name, x)
        if xp is np:
            return np.asarray(numpy_version(x.astype(np.float64, copy=False)), dtype=x.dtype)
        from cupyx.scipy import special  # CuPy's SciPy functions: imported on first GPU use

        return getattr(special, name)(x).astype(x.dtype, copy=False)

    return impl


def _special_binary_impl(name: str):
    """The impl of ``scipy.special``'s two-argument function ``name`` on real floating operands
    of the promoted dtype (Python scalars adopt the tensor's), computed in float64."""
    numpy_version = getattr(scipy.special, name)

    def impl(xp, a, b):
        _reject_complex(name, a, b)
        a, b = _float_operands(xp, a, b)
        if xp is np:
            wide = (a.astype(np.float64, copy=False), b.astype(np.float64, copy=False))
            return np.asarray(numpy_version(*wide), dtype=a.dtype)
        from cupyx.scipy import special  # CuPy's SciPy functions: imported on first GPU use

        return getattr(special, name)(a, b).astype(a.dtype, copy=False)

    return impl


def _no_derivative(name: str, argument: str, why: str):
    """The partial of an argument that has no derivative here: called only when that argument is
    tracked (it requires grad, has a tangent or is differentiated by a transform), it raises
    instead of letting the derivative be silently zero."""

    def partial(*args):
        raise NotImplementedError(
            f"dualad.{name}: the derivative with respect to {argument} is not implemented "
            f"({why}); {argument} is tracked here (it requires grad, has a forward-mode tangent "
            f"or is an input of a transform). Pass {argument}.detach() to treat it as a constant."
        )

    return partial


def _erfc(x):
    """erfc of a float64 array to a few ulp. ``scipy.special.erfc`` loses up to ~400 ulp for
    x > 0.5; there erfc(x) = erfcx(x) * exp(-x**2), the square taken exactly: exp(-h**2) *
    exp(-(x - h)(x + h)) with h = x rounded down to 1/16 (h**2 has no rounding error)."""
    far = np.minimum(np.maximum(x, 0.5), 30.0)  # erfc(30) underflows to 0; no inf - inf
    high = np.trunc(far * 16.0) / 16.0
    tail = scipy.special.erfcx(far) * np.exp(-high * high) * np.exp(-(far - high) * (far + high))
    return np.where(x < 0.5, scipy.special.erfc(x), tail)


erf = public.inplace(
    unary(
        "erf",
        _special_impl("erf"),
        lambda x, y: exp(-(x * x)) * _TWO_OVER_SQRT_PI,
        doc="""Error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.erf(x)
        tensor([0.        , 0.84270079], grad_fn=<ErfBackward0>)
        >>> dualad.autograd.grad(dualad.erf(x).sum(), x)
        (tensor([1.12837917, 0.4151075 ]),)
        """,
    )
)
erfc = public.inplace(
    unary(
        "erfc",
        _special_impl("erfc", _erfc),
        lambda x, y: exp(-(x * x)) * -_TWO_OVER_SQRT_PI,
        doc="""Complementary error function ``1 - erf(x)`` (accurate where erf(x) is close to 1).

        >>> import dualad
        >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
        >>> dualad.erfc(x)
        tensor([1.        , 0.15729921], grad_fn=<ErfcBackward0>)
        >>> dualad.autograd.grad(dualad.erfc(x).sum(), x)
        (tensor([-1.12837917, -0.4151075 ]),)
        """,
    )
)
erfinv = public.inplace(
    unary(
        "erfinv",
        _special_impl("erfinv"),
        lambda x, y: exp(y * y) * _SQRT_PI_OVER_TWO,
        uses="y",
        doc="""Inverse error function on (-1, 1) (±inf at ±1, nan outside).

        >>> import dualad
        >>> x = dualad.tensor([0.0, 0.5], requires_grad=True)
        >>> dualad.erfinv(x)
        tensor([0.        , 0.47693628], grad_fn=<ErfinvBackward0>)
        >>> dualad.autograd.grad(dualad.erfinv(x).sum(), x)
        (tensor([0.88622693, 1.11258482]),)
        """,
    )
)
erfcinv = public.inplace(
    unary(
        "erfcinv",
        _special_impl("erfcinv"),
        lambda x, y: exp(y * y) * -_SQRT_PI_OVER_TWO,
        uses="y",
        doc="""Inverse of ``erfc`` on [0, 2]: ``erfcinv(erfc(y)) == y``, accurate near 0 where
    ``erfinv(1 - x)`` is not. ``erfcinv(0) = inf`` and ``erfcinv(2) = -inf`` (the derivative
    ``-sqrt(pi)/2 exp(erfcinv(x)**2)`` is -inf there); nan outside [0, 2].

    >>> import dualad
    >>> x = dualad.tensor([1e-10, 0.5], requires_grad=True)
    >>> dualad.erfcinv(x)
    tensor([4.57282497, 0.47693628], grad_fn=<ErfcinvBackward0>)
    """,
    )
)


# erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi): for large x both terms are close to 2/sqrt(pi) and
# their difference (about -1/(sqrt(pi) x**2)) loses 2 x**2 ulp, all of it by x ~ 1e8. Beyond
# _ERFCX_FAR the asymptotic series -1/sqrt(pi) sum_k (-1)**k (2k+1)!!/2**k x**(-2k-2) is used
# instead: its 12 terms are exact to double precision there, and so are its derivatives.
_ERFCX_FAR = 12.0
_ERFCX_SERIES = [(-1) ** k * _math.prod(range(1, 2 * k + 2, 2)) / 2**k for k in range(12)]
_ONE_OVER_SQRT_PI = 1.0 / _math.sqrt(_math.pi)


def _erfcx_deriv(x, y):
    far = x > _ERFCX_FAR
    # (double where: the series never sees small x, so its rules stay finite there)
    u = 1 / (where(far, x, _ERFCX_FAR) ** 2)
    series = _ERFCX_SERIES[-1] * u
    for coefficient in reversed(_ERFCX_SERIES[:-1]):
        series = (series + coefficient) * u
    near = y * (2 * x) - _TWO_OVER_SQRT_PI
    return where(far, series * -_ONE_OVER_SQRT_PI, near)


erfcx = public.inplace(
    unary(
        "erfcx",
        _special_impl("erfcx"),
        _erfcx_deriv,
        uses="xy",
        doc="""Scaled complementary error function ``exp(x**2) * erfc(x)``, finite for large
    positive x (about ``1 / (sqrt(pi) x)``), overflowing for x below about -26.6. Its
    derivative ``2 x erfcx(x) - 2/sqrt(pi)`` is taken from the asymptotic series for x > 12,
    where that difference would cancel.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 100.0], requires_grad=True)
    >>> dualad.erfcx(x)
    tensor([1.        , 0.00564161], grad_fn=<ErfcxBackward0>)
    >>> dualad.autograd.grad(dualad.erfcx(x).sum(), x)
    (tensor([-1.12837917e+00, -5.64104976e-05]),)
    """,
    )
)
