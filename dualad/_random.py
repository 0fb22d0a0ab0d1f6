"""Random tensors: ``manual_seed``, ``rand``, ``randn``, ``randint`` and their ``_like`` forms.

One NumPy (or CuPy, per device) Generator per array module, reseeded by ``manual_seed``. Inside a
transform, the innermost level that draws for itself (``Level.draw_random``: vmap's randomness
modes) decides what a draw means; checkpointing replays the generators' state
(``_rng_state``/``_replaying_rng``).
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _dtypes
from ._backend import DeviceArg, allocate_on
from ._creation import _finish, _float_dtype, _scalar_value, _size, as_tensor
from ._dtypes import DTypeArg
from ._state import ACTIVE, GRAD
from ._tensor import Tensor

# ---------------------------------------------------------------------------------------------
# random numbers: one Generator per (array module, device), reseeded by manual_seed

_generators: dict = {}
_seed: list = [None]


def manual_seed(seed: int) -> None:
    """Seed dualad's random number generators (NumPy's, and CuPy's on every device).

    >>> import dualad
    >>> dualad.manual_seed(0); a = dualad.rand(2)
    >>> dualad.manual_seed(0); bool((dualad.rand(2) == a).all())
    True
    """
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(
            f"dualad.manual_seed: the seed must be an int, got {type(seed).__name__}"
        ) from None
    _seed[0] = seed & 0xFFFF_FFFF_FFFF_FFFF  # negative seeds too, as in PyTorch
    _generators.clear()


def _generator(xp):
    key = xp if xp is np else (xp, xp.cuda.Device().id)
    gen = _generators.get(key)
    if gen is None:
        gen = _generators[key] = xp.random.default_rng(_seed[0])
    return gen


def _rng_state() -> dict:
    """What ``_replaying_rng`` needs to draw the random numbers that the generators in use
    (NumPy's is made if missing) will draw from now on (checkpoint recomputation).

    A NumPy generator's state is copied. CuPy's bit generators keep theirs on the device,
    unreadable: such a generator is replaced by one seeded from it, and the seed is kept.
    """
    _generator(np)
    states = {}
    for key, gen in list(_generators.items()):
        try:
            states[key] = ("state", gen.bit_generator.state)
        except (AttributeError, NotImplementedError, TypeError):
            xp, device = key
            seed = int(gen.integers(0, 2**62, size=1)[0])
            with xp.cuda.Device(device):
                _generators[key] = xp.random.default_rng(seed)
            states[key] = ("seed", seed)
    return states


@contextlib.contextmanager
def _replaying_rng(states: dict):
    """Inside, the generators draw what they drew after ``_rng_state()`` returned ``states``;
    outside, the generators in use before are back, their states untouched."""
    current = dict(_generators)
    try:
        for key, (kind, value) in states.items():
            if kind == "state":
                gen = np.random.Generator(getattr(np.random, value["bit_generator"])())
                gen.bit_generator.state = value
            else:
                xp, device = key
                with xp.cuda.Device(device):
                    gen = xp.random.default_rng(value)
            _generators[key] = gen
        yield
    finally:
        _generators.clear()
        _generators.update(current)


def _random_dtype(name: str, dtype) -> np.dtype:
    dtype = _float_dtype(dtype)
    if dtype.kind not in "fc":
        raise RuntimeError(
            f"dualad.{name}: random {name} numbers need a floating point or complex dtype, "
            f"got {dtype}"
        )
    return dtype


def _uniform(gen, shape, dtype):
    """Uniform in [0, 1); complex dtypes: real and imaginary parts each uniform."""
    if dtype.kind == "c":
        part = _dtypes.real_dtype(dtype)
        return _uniform(gen, shape, part) + 1j * _uniform(gen, shape, part)
    if dtype == _dtypes.float32 or dtype == _dtypes.float64:
        return gen.random(shape, dtype=dtype)
    return gen.random(shape).astype(dtype)


def _normal(gen, shape, dtype):
    """Standard normal; complex dtypes: unit variance (each part has variance 1/2)."""
    if dtype.kind == "c":
        part = _dtypes.real_dtype(dtype)
        scale = np.sqrt(0.5).astype(part)
        return _normal(gen, shape, part) * scale + 1j * (_normal(gen, shape, part) * scale)
    if dtype == _dtypes.float32 or dtype == _dtypes.float64:
        return gen.standard_normal(shape, dtype=dtype)
    return gen.standard_normal(shape).astype(dtype)


def _level_draw(redraw, shape: tuple):
    """Random values of ``shape`` drawn by the innermost level of this thread that draws for
    itself (``Level.draw_random``: vmap, by its randomness mode: raise, one draw shared by the
    batch, or one per example), or None when no level does. ``redraw(shape)`` calls the random
    function again one level down."""
    for level in reversed(GRAD.levels):
        drawn = level.draw_random(redraw, shape)
        if drawn is not None:
            return drawn
    return None


def _random(name, public, draw, shape, size, dtype, device, requires_grad) -> Tensor:
    """``rand`` / ``randn`` (``public``): ``draw(generator, shape, dtype)`` on ``device``."""
    shape, dtype = _size(name, shape, size), _random_dtype(name, dtype)
    if ACTIVE:
        drawn = _level_draw(
            lambda s: public(s, dtype=dtype, device=device, requires_grad=requires_grad), shape
        )
        if drawn is not None:
            return drawn
    return _finish(
        allocate_on(device, lambda xp: draw(_generator(xp), shape, dtype)), requires_grad
    )


def rand(
    *shape: int | Sequence[int],
    size: int | Sequence[int] | None = None,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform random numbers in [0, 1) (real and imaginary parts, for complex dtypes).

    >>> import dualad
    >>> x = dualad.rand(3, 2)
    >>> x.shape, bool(((x >= 0) & (x < 1)).all())
    ((3, 2), True)
    """
    return _random("rand", rand, _uniform, shape, size, dtype, device, requires_grad)


def randn(
    *shape: int | Sequence[int],
    size: int | Sequence[int] | None = None,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal random numbers (complex dtypes: unit variance, E|z|^2 = 1).

    >>> import dualad
    >>> dualad.randn(2, 3, dtype=dualad.float32).dtype
    dtype('float32')
    """
    return _random("randn", randn, _normal, shape, size, dtype, device, requires_grad)


def randint(
    low: Any,  # (an int or a 0-d tensor; torch's randint(high, size) is accepted too)
    high: Any = None,
    size: int | Sequence[int] | None = None,
    *,
    dtype: DTypeArg = None,
    device: DeviceArg = None,
    requires_grad: bool = False,
) -> Tensor:
    """Random integers in [low, high): ``randint(low, high, size)`` or ``randint(high, size)``.

    >>> import dualad
    >>> x = dualad.randint(0, 10, (4,))
    >>> x.dtype, bool(((x >= 0) & (x < 10)).all())
    (dtype('int64'), True)
    >>> dualad.randint(5, (2, 2)).shape
    (2, 2)
    """
    if size is None and isinstance(high, (tuple, list)):  # torch's randint(high, size)
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    # integer draws are piecewise constant in their bounds (zero derivative): the bounds' values
    # are all that counts, so tracked bounds are detached (a vmap batch still raises)
    low, high = (
        _scalar_value(v.detach() if isinstance(v, Tensor) else v, "randint") for v in (low, high)
    )
    shape = _size("randint", () if size is None else (size,), None)
    dtype = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    if not high > low:
        raise RuntimeError(
            f"dualad.randint: random_ expects 'from' to be less than 'to', but got "
            f"from={low} >= to={high}"
        )
    if ACTIVE:

        def redraw(s):
            return randint(low, high, s, dtype=dtype, device=device, requires_grad=requires_grad)

        drawn = _level_draw(redraw, shape)
        if drawn is not None:
            return drawn

    def make(xp):
        values = _generator(xp).integers(low, high, size=shape, dtype=np.int64)
        return values if dtype == _dtypes.int64 else values.astype(dtype)

    return _finish(allocate_on(device, make), requires_grad)


def _random_like(draw, t, dtype, device, requires_grad) -> Tensor:
    """``draw`` (``rand`` / ``randn``) with the shape (and by default dtype, device) of ``t``."""
    if not isinstance(t, Tensor):
        t = as_tensor(t)
    dtype = t.dtype if dtype is None else dtype
    device = t.device if device is None else device
    return draw(t.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def rand_like(
    t: Tensor, *, dtype: DTypeArg = None, device: DeviceArg = None, requires_grad: bool = False
) -> Tensor:
    """Uniform random numbers in [0, 1) with the shape (dtype, device) of ``t``.

    >>> import dualad
    >>> dualad.manual_seed(0)
    >>> r = dualad.rand_like(dualad.zeros(2, 3))
    >>> r.shape, bool(((r >= 0) & (r < 1)).all())
    ((2, 3), True)
    """
    return _random_like(rand, t, dtype, device, requires_grad)


def randn_like(
    t: Tensor, *, dtype: DTypeArg = None, device: DeviceArg = None, requires_grad: bool = False
) -> Tensor:
    """Standard normal random numbers with the shape (dtype, device) of ``t``.

    >>> import dualad
    >>> dualad.manual_seed(0)
    >>> dualad.randn_like(dualad.zeros(2, 3, dtype=dualad.float32)).dtype
    dtype('float32')
    """
    return _random_like(randn, t, dtype, device, requires_grad)


__all__ = ["manual_seed", "rand", "rand_like", "randint", "randn", "randn_like"]
