"""dualad: automatic differentiation for NumPy and CuPy arrays.

>>> import dualad
>>> x = dualad.tensor([0.5, 1.0], requires_grad=True)
>>> y = dualad.sin(x).sum()
>>> y.backward()
>>> x.grad
tensor([0.87758256, 0.54030231])
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from . import _tensor_queries  # (first: Tensor's size queries, attached before any op runs)
from . import autograd
from . import ops as _ops
from ._backend import Device, cuda_is_available
from ._backend import Device as device
from ._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from ._errors import TrackedConversionError
from ._random import manual_seed, rand, rand_like, randint, randn, randn_like
from ._dtypes import (
    bool_,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    int,
    long,
    promote_types,
    short,
    set_default_dtype,
    uint8,
)
from ._tensor import Tensor, is_tensor
from .ops import *

if _TYPE_CHECKING:  # dualad.ops.__all__ is computed: type checkers read its generated stub
    from .ops._public_names import *
from .rev.checkpoint import checkpoint, checkpoint_sequential
from .rev.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

import importlib as _importlib
import sys as _sys

bool = bool_
__version__ = "0.1.0"
from . import _operators
from . import fwd
from . import func
from .func import vmap  # (the array-in, array-out vmap; dualad.vmap.api.vmap is the core one)
from . import utils
from . import numpy  # NumPy's namespace; attaches the NumPy protocols to Tensor
from . import array_api  # the array API standard's namespace; attaches __array_namespace__
from . import fft, linalg, nn, special
from .tracing import jit  # (dualad.tracing holds its level, program, code generation, api)


def _name_made_functions() -> None:
    """Give the op functions that dispatch's factories make (``sin``, ``add``, ...) the module
    that exports them, so that pickle, and with it multiprocessing and dask's workers, finds
    ``dualad.sin`` by name (a function's ``__module__`` is where pickle looks it up)."""
    made = ("dualad._dispatch", "dualad.ops._helpers")
    for namespace in (special, linalg, fft, nn.functional, _sys.modules[__name__]):
        for name in getattr(namespace, "__all__", None) or dir(namespace):
            fn = getattr(namespace, name, None)
            if (
                fn is not None
                and getattr(fn, "__module__", None) in made
                and getattr(namespace, fn.__qualname__, None) is fn
            ):
                fn.__module__ = namespace.__name__


_name_made_functions()


def __getattr__(name: str):
    # PEP 562: ``dualad.optimize`` imports scipy.optimize (about a fifth of ``import dualad``'s
    # time), so it loads on first use; ``import dualad.optimize`` works as usual
    if name == "optimize":
        return _importlib.import_module("dualad.optimize")
    raise AttributeError(f"module 'dualad' has no attribute {name!r}")
