"""``isclose`` (no gradient): elementwise ``|a - b| <= atol + rtol * |b|``, NumPy's test, with
its tolerances and ``equal_nan`` as static parameters; batched like any broadcasting
elementwise op. Its public function is ``dualad.numpy.isclose`` (``dualad/numpy/predicates.py``).
"""

from __future__ import annotations

from .._dispatch import OpDef, register
from . import _batching as batching


def _isclose_impl(xp, a, b, *, rtol, atol, equal_nan):
    return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


isclose_op = register(
    OpDef("isclose", _isclose_impl, batch=batching.elementwise, differentiable=False)
)
