"""The NumPy functions CuPy lacks or spells differently, written once for both.

Impls call ``xp.name(...)`` where NumPy and CuPy agree. Where they do not (found by running the
op database on a GPU), the impl calls the function here instead: on NumPy each one is exactly
NumPy's call; on CuPy it is written from what CuPy has, on the device (no host round trip).

- ``add_at``: ``cupy.add.at`` takes no complex, bool or 8/16-bit integer data;
- ``accumulate``: ``ufunc.accumulate`` exists in CuPy only for ``add`` and ``multiply``
  (``cumsum``/``cumprod``); maximum, minimum and logaddexp scan by doubling here;
- ``spacing``, ``argsort(stable=)``, ``lexsort(axis=)``, ``unique(sorted=)``,
  ``packbits(axis=)`` and ``unpackbits(count=)``.
"""

from __future__ import annotations

import numpy as np

# the dtypes cupy.add.at accumulates directly
_ADD_AT_KINDS = frozenset(
    np.dtype(t) for t in ("int32", "int64", "uint32", "uint64", "float16", "float32", "float64")
)


def add_at(xp, out, key, values) -> None:
    """``out[key] += values`` with repeated positions accumulating (``xp.add.at``).

    >>> out = np.zeros(3, np.complex128)
    >>> add_at(np, out, np.array([0, 0, 2]), np.array([1j, 1, 2]))
    >>> out
    array([1.+1.j, 0.+0.j, 2.+0.j])
    """
    if xp is np or out.dtype in _ADD_AT_KINDS:
        xp.add.at(out, key, values)
        return
    values = xp.asarray(values)
    if out.dtype.kind == "c":  # the real and imaginary parts are views of ``out`` in CuPy
        add_at(xp, out.real, key, values.real)
        add_at(xp, out.imag, key, values.imag)
        return
    wide = out.astype(xp.int64)  # bool and small integers: accumulate wide, cast back
    xp.add.at(wide, key, values.astype(xp.int64))
    out[...] = wide.astype(out.dtype) if out.dtype.kind != "b" else wide != 0


_SCANS = {"maximum", "minimum", "logaddexp"}


def accumulate(xp, name: str, x, axis: int):
    """``getattr(xp, name).accumulate(x, axis=axis)`` for ``name`` in maximum, minimum,
    logaddexp; on CuPy a doubling (Hillis-Steele) scan: log2(n) elementwise steps, each exact,
    so values equal the sequential scan's for max/min and agree to rounding for logaddexp.

    >>> accumulate(np, "maximum", np.array([1.0, 3.0, 2.0, 5.0]), 0)
    array([1., 3., 3., 5.])
    """
    if name not in _SCANS:
        raise ValueError(f"accumulate: {name!r} is not one of {sorted(_SCANS)}")
    ufunc = getattr(xp, name)
    if xp is np:
        return ufunc.accumulate(x, axis=axis)
    out = xp.moveaxis(x, axis, -1).copy()
    n = out.shape[-1]
    shift = 1
    while shift < n:
        out[..., shift:] = ufunc(out[..., shift:], out[..., :-shift])  # (the right side first)
        shift *= 2
    return xp.ascontiguousarray(xp.moveaxis(out, -1, axis))


def spacing(xp, x):
    """NumPy's ``spacing``: the distance from ``x`` to the next float away from 0, negative for
    negative ``x`` (nan at inf).

    >>> float(spacing(np, np.float64(1.0))) == 2.0**-52
    True
    """
    if xp is np:
        return np.spacing(x)
    size = xp.abs(x)
    step = xp.nextafter(size, xp.asarray(xp.inf, dtype=x.dtype)) - size
    return xp.where(x < 0, -step, step)  # (NumPy's spacing(-0.0) is positive)


def argsort(xp, x, *, axis, **options):
    """``xp.argsort``; CuPy's sort is always stable (radix sort) and takes neither ``kind``
    nor ``stable``."""
    if xp is not np:
        options.pop("kind", None)
        options.pop("stable", None)
    return xp.argsort(x, axis=axis, **options)


def lexsort(xp, keys, *, axis):
    """``xp.lexsort(keys, axis=axis)`` (the last key primary); on CuPy, whose lexsort takes
    only 1-D keys and no axis, by stable argsorts from the least significant key.

    >>> lexsort(np, (np.array([1, 0, 1]), np.array([2, 2, 1])), axis=-1)
    array([2, 1, 0])
    """
    if xp is np:
        return np.lexsort(keys, axis=axis)
    keys = [xp.asarray(k) for k in keys]
    order = None
    for key in keys:  # least significant first: each stable sort keeps the earlier order
        if order is None:
            order = xp.argsort(key, axis=axis)
        else:
            order = xp.take_along_axis(
                order, xp.argsort(xp.take_along_axis(key, order, axis=axis), axis=axis), axis=axis
            )
    return order


def unique(xp, x, **kwargs):
    """``xp.unique``; CuPy's result is always sorted and takes no ``sorted`` flag."""
    if xp is not np:
        kwargs.pop("sorted", None)
    return xp.unique(x, **kwargs)


def _bit_weights(xp, bitorder: str):
    weights = 2 ** xp.arange(8, dtype=xp.uint8)
    return weights[::-1] if bitorder == "big" else weights


def packbits(xp, a, *, axis, bitorder):
    """``xp.packbits`` (CuPy's takes no ``axis``): groups of 8 along ``axis`` as bytes.

    >>> packbits(np, np.array([[1, 0, 1], [0, 0, 1]]), axis=1, bitorder="big")
    array([[160],
           [ 32]], dtype=uint8)
    """
    if xp is np:
        return np.packbits(a, axis=axis, bitorder=bitorder)
    if axis is None:
        return xp.packbits(a.ravel(), bitorder=bitorder)
    bits = xp.moveaxis(a != 0, axis, -1)
    n = bits.shape[-1]
    padded = xp.zeros((*bits.shape[:-1], -(-n // 8) * 8), dtype=xp.uint8)
    padded[..., :n] = bits
    groups = padded.reshape(*bits.shape[:-1], -1, 8)
    packed = (groups * _bit_weights(xp, bitorder)).sum(axis=-1, dtype=xp.uint8)
    return xp.moveaxis(packed, -1, axis)


def unpackbits(xp, a, *, axis, count, bitorder):
    """``xp.unpackbits`` (CuPy's takes no ``axis`` or ``count``).

    >>> unpackbits(np, np.array([160], np.uint8), axis=0, count=3, bitorder="big")
    array([1, 0, 1], dtype=uint8)
    """
    if xp is np:
        return np.unpackbits(a, axis=axis, count=count, bitorder=bitorder)
    if axis is None:
        a, axis = a.ravel(), 0
    moved = xp.moveaxis(a, axis, -1)
    bits = (moved[..., None] & _bit_weights(xp, bitorder)) != 0
    bits = bits.reshape(*moved.shape[:-1], -1).astype(xp.uint8)
    if count is not None:
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            extra = xp.zeros((*bits.shape[:-1], keep - total), dtype=xp.uint8)
            bits = xp.concatenate([bits, extra], axis=-1)
    return xp.moveaxis(bits, -1, axis)
