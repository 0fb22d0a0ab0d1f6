"""A stand-in for CuPy, to prove dualad's GPU paths without a GPU.

``install()`` puts modules named ``cupy``, ``cupy.linalg``, ``cupy.fft``, ``cupy.random``,
``cupy.cuda`` (one device, no-op streams), ``cupyx``, ``cupyx.scipy.special``,
``cupyx.scipy.linalg`` and ``cupyx.scipy.sparse`` into ``sys.modules``; ``uninstall()`` takes
them out again (restoring a real CuPy that was imported before). Their arrays hold NumPy arrays
but refuse, as CuPy's do, to become NumPy implicitly (``np.asarray(x)`` raises CuPy's
``TypeError``) or to mix with NumPy arrays in operators and functions; ``get()``/``asnumpy`` are
the ways out, ``asarray`` of NumPy data the way in, and each crossing is logged in
``TRANSFERS`` (``transfers()`` reads it, ``no_transfers()`` asserts that a block makes none).
Each module holds exactly the functions CuPy 14.2 has (``_api``): calling a NumPy or SciPy
function that CuPy lacks fails here as on a GPU. Numbers are NumPy's, so results equal the CPU's
bit for bit; the speed is NumPy's too (plus a wrapper per call).

What it cannot find: kernels that behave differently on a GPU (precision of CuPy's own special
functions, non-deterministic reductions), device memory limits, multi-GPU placement.

>>> from dualad.testing import fake_cupy
>>> with fake_cupy.installed() as cupy:
...     x = cupy.asarray([1.0, 2.0])
...     y = cupy.exp(x).sum()
...     print(type(y).__name__, y.shape, round(float(y), 3))
ndarray () 10.107
>>> with fake_cupy.installed() as cupy:
...     import numpy as np
...     np.asarray(cupy.ones(2))  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
TypeError: Implicit conversion to a NumPy array is not allowed. Please use `.get()` to ...
"""

from __future__ import annotations

import contextlib
import sys

from ._core import CONVERSION_ERROR, TRANSFERS, install_members, ndarray
from ._modules import MODULES, cupy

__all__ = [
    "CONVERSION_ERROR",
    "TRANSFERS",
    "cupy",
    "install",
    "installed",
    "is_installed",
    "ndarray",
    "no_transfers",
    "transfers",
    "uninstall",
]

from ._api import NDARRAY as _NDARRAY_MEMBERS

install_members(_NDARRAY_MEMBERS)

_saved: dict = {}


def is_installed() -> bool:
    """Whether ``sys.modules["cupy"]`` is the stand-in."""
    return sys.modules.get("cupy") is cupy


def install():
    """Make ``import cupy`` (and its submodules, ``cupyx``...) give the stand-in; returns it."""
    if not is_installed():
        for name, module in MODULES.items():
            _saved[name] = sys.modules.get(name)
            sys.modules[name] = module
    return cupy


def uninstall() -> None:
    """Undo ``install()``: the modules that were there before come back."""
    if not is_installed():
        return
    for name in MODULES:
        previous = _saved.pop(name, None)
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous


@contextlib.contextmanager
def installed():
    """``install()`` for the block, ``uninstall()`` after it (if it was not installed before)."""
    was = is_installed()
    install()
    try:
        yield cupy
    finally:
        if not was:
            uninstall()


def transfers(kinds=("to_host", "to_device")) -> list:
    """The logged crossings of the given kinds ("to_host", "to_device", "scalar")."""
    return [t for t in TRANSFERS if t[0] in kinds]


@contextlib.contextmanager
def no_transfers(kinds=("to_host", "to_device")):
    """Assert that the block moves no array between host and device (the kinds given).

    >>> with installed() as cupy:
    ...     x = cupy.arange(3.0)
    ...     with no_transfers():
    ...         y = (x * 2).sum()
    """
    start = len(TRANSFERS)
    yield
    made = [t for t in TRANSFERS[start:] if t[0] in kinds]
    if made:
        lines = "\n".join(f"  {kind} {shape}: {where}" for kind, shape, where in made)
        raise AssertionError(
            f"{len(made)} host/device transfer(s) where none was expected:\n{lines}"
        )
