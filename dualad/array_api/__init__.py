"""The Python array API standard (2024.12) over dualad tensors: ``xp = t.__array_namespace__()``
(or ``array_api_compat.array_namespace(t)``) makes array-API code differentiable.

Every function is built on dualad ops, so it records derivatives where it has one and runs
under ``vmap``, dual levels and ``dualad.func`` transforms like any op; functions without a
derivative (``argsort``, ``searchsorted``, ``unique_*``'s indices, bit shifts) return untracked
tensors. ``nextafter`` alone computes on the values (its derivative exists and dualad has none:
an argument that requires grad or is tracked by a level raises ``TrackedConversionError``, see
``_common``). The ``fft`` extension is whole; the ``linalg`` extension has the functions dualad
differentiates, the decompositions are absent (``NOT_IMPLEMENTED`` in
``tests/array_api/test_array_api_signatures.py`` lists each missing name with its reason).

>>> import dualad, dualad.array_api as xp
>>> def softmax(x):
...     xp = x.__array_namespace__()
...     e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
...     return e / xp.sum(e, axis=-1, keepdims=True)
>>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> y = softmax(x)
>>> dualad.autograd.grad(y[0], x)[0]
tensor([ 0.08192507, -0.02203304, -0.05989202])
"""

from __future__ import annotations

import math

from .._backend import Device
from . import _members, fft, linalg
from ._creation import *  # noqa: F403
from ._creation import __all__ as _creation_all
from ._dtypes import *  # noqa: F403
from ._dtypes import __all__ as _dtypes_all
from ._elementwise import *  # noqa: F403
from ._elementwise import __all__ as _elementwise_all
from ._linalg_main import *  # noqa: F403
from ._linalg_main import __all__ as _linalg_main_all
from ._manipulation import *  # noqa: F403
from ._manipulation import __all__ as _manipulation_all
from ._searching import *  # noqa: F403
from ._searching import __all__ as _searching_all
from ._statistical import *  # noqa: F403
from ._statistical import __all__ as _statistical_all

__array_api_version__ = "2024.12"

e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None

__all__ = [
    "__array_api_version__",
    "Device",
    "e",
    "inf",
    "nan",
    "pi",
    "newaxis",
    "linalg",
    "fft",
    *_creation_all,
    *_dtypes_all,
    *_elementwise_all,
    *_linalg_main_all,
    *_manipulation_all,
    *_searching_all,
    *_statistical_all,
]
del _members
