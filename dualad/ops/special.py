"""Special functions: erf, erfc, erfinv.

Values come from ``scipy.special`` (NumPy arrays) or ``cupyx.scipy.special`` (CuPy arrays);
the derivative rules are written in dualad ops.
"""

from __future__ import annotations

import math as _math

import numpy as np
import scipy.special

from ._exports import Exports
from ._helpers import unary
from ._promotion import _float_array, _reject_complex
from .exp_log import exp

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# error function family: values from scipy.special (NumPy) or cupyx.scipy.special (CuPy)

_TWO_OVER_SQRT_PI = 2.0 / _math.sqrt(_math.pi)
_SQRT_PI_OVER_TWO = _math.sqrt(_math.pi) / 2.0


def _special_impl(name: str, numpy_version=None):
    """The impl of ``scipy.special``'s function ``name`` (or of ``numpy_version`` on NumPy) on
    real floating input (computed in float64, the result in the input's dtype)."""
    numpy_version = numpy_version or getattr(scipy.special, name)

    def impl(xp, x):
        x = _float_array(x)
        _reject_complex(name, x)
        if xp is np:
            return np.asarray(numpy_version(x.astype(np.float64, copy=False)), dtype=x.dtype)
        from cupyx.scipy import special  # CuPy's SciPy functions: imported on first GPU use

        return getattr(special, name)(x)

    return impl


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
        doc="Error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.",
    )
)
erfc = public.inplace(
    unary(
        "erfc",
        _special_impl("erfc", _erfc),
        lambda x, y: exp(-(x * x)) * -_TWO_OVER_SQRT_PI,
        doc="Complementary error function ``1 - erf(x)`` (accurate where erf(x) is close to 1).",
    )
)
erfinv = public.inplace(
    unary(
        "erfinv",
        _special_impl("erfinv"),
        lambda x, y: exp(y * y) * _SQRT_PI_OVER_TWO,
        uses="y",
        doc="Inverse error function on (-1, 1) (±inf at ±1, nan outside).",
    )
)
