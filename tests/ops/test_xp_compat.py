"""dualad/ops/_xp_compat.py: the CuPy branches equal NumPy's own functions.

The branches written for CuPy use only calls CuPy has; here they run on NumPy through a module
that is not ``numpy`` (so the CuPy branch is taken) and are compared with NumPy's functions.
The ``gpu`` test runs them on CuPy itself.
"""

import functools
import types

import numpy as np
import pytest

from dualad.ops import _xp_compat

# numpy under another name: ``xp is np`` is false, so each function takes its CuPy branch
OTHER = types.SimpleNamespace(**{name: getattr(np, name) for name in dir(np) if name[0] != "_"})
OTHER.argsort = functools.partial(np.argsort, kind="stable")  # CuPy's sort is stable


def _modules():
    yield OTHER
    try:
        import cupy
    except ImportError:
        return
    yield cupy


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int8", "bool"])
def test_add_at_accumulates_repeated_positions(dtype):
    rng = np.random.default_rng(0)
    out = (rng.standard_normal((4, 3)) * 3).astype(dtype)
    if np.dtype(dtype).kind == "c":
        out = out + 1j * rng.standard_normal((4, 3)).astype(dtype)
    index = np.array([0, 2, 0, 3, 0])
    values = (rng.standard_normal((5, 3)) * 3).astype(dtype)
    want = out.copy()
    np.add.at(want, index, values)
    got = out.copy()
    _xp_compat.add_at(OTHER, got, index, values)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["maximum", "minimum", "logaddexp"])
@pytest.mark.parametrize(
    "shape, axis", [((1,), 0), ((7,), 0), ((5, 9), 1), ((16, 3), 0), ((2, 3, 4), 1)]
)
def test_accumulate_equals_the_sequential_scan(name, shape, axis):
    x = np.random.default_rng(1).standard_normal(shape)
    x.flat[0] = np.nan if name != "logaddexp" else -np.inf
    want = getattr(np, name).accumulate(x, axis=axis)
    got = _xp_compat.accumulate(OTHER, name, x, axis)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert got.flags.c_contiguous


def test_accumulate_rejects_other_ufuncs():
    with pytest.raises(ValueError, match="add"):
        _xp_compat.accumulate(OTHER, "add", np.ones(3), 0)


# (not float16: NumPy's own float16 spacing of negative numbers is positive and off by a step)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_spacing(dtype):
    x = np.array([0.0, -0.0, 1.0, -1.0, 1e30, -3.5, np.inf, -np.inf, np.nan], dtype)
    x[4] = np.finfo(dtype).max
    np.testing.assert_array_equal(_xp_compat.spacing(OTHER, x), np.spacing(x))


def test_argsort_without_kind_or_stable_on_cupy():
    x = np.array([3.0, 1.0, 2.0, 1.0])
    got = _xp_compat.argsort(OTHER, x, axis=0, kind="stable", stable=True)
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_lexsort_on_any_axis(axis):
    rng = np.random.default_rng(2)
    keys = [rng.integers(0, 3, (4, 5)) for _ in range(3)]
    got = _xp_compat.lexsort(OTHER, keys, axis=axis)
    np.testing.assert_array_equal(got, np.lexsort(keys, axis=axis))


def test_unique_drops_sorted():
    x = np.array([3, 1, 3, 2])
    np.testing.assert_array_equal(_xp_compat.unique(OTHER, x, sorted=True), np.unique(x))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_and_unpackbits(axis, bitorder):
    bits = np.random.default_rng(3).integers(0, 2, (3, 11)).astype(np.uint8)
    packed = _xp_compat.packbits(OTHER, bits, axis=axis, bitorder=bitorder)
    want = np.packbits(bits, axis=axis, bitorder=bitorder)
    np.testing.assert_array_equal(packed, want)
    assert packed.dtype == np.uint8
    for count in (None, 3, -2, 40):
        got = _xp_compat.unpackbits(OTHER, want, axis=axis, count=count, bitorder=bitorder)
        ref = np.unpackbits(want, axis=axis, count=count, bitorder=bitorder)
        np.testing.assert_array_equal(got, ref)
        assert got.dtype == np.uint8


@pytest.mark.gpu
def test_the_cupy_branches_on_cupy():
    import cupy

    out = cupy.zeros(3, cupy.complex128)
    _xp_compat.add_at(cupy, out, cupy.array([0, 0, 2]), cupy.array([1j, 1, 2]))
    np.testing.assert_array_equal(out.get(), [1 + 1j, 0, 2])
    x = np.random.default_rng(4).standard_normal((5, 9))
    for name in ("maximum", "minimum", "logaddexp"):
        got = _xp_compat.accumulate(cupy, name, cupy.asarray(x), 1).get()
        np.testing.assert_allclose(got, getattr(np, name).accumulate(x, axis=1), rtol=1e-14)
    v = np.array([0.0, 1.0, -3.5, np.inf])
    np.testing.assert_array_equal(_xp_compat.spacing(cupy, cupy.asarray(v)).get(), np.spacing(v))
    keys = [np.random.default_rng(5).integers(0, 3, (4, 5)) for _ in range(2)]
    got = _xp_compat.lexsort(cupy, [cupy.asarray(k) for k in keys], axis=0).get()
    np.testing.assert_array_equal(got, np.lexsort(keys, axis=0))
    bits = np.random.default_rng(6).integers(0, 2, (3, 11)).astype(np.uint8)
    packed = _xp_compat.packbits(cupy, cupy.asarray(bits), axis=1, bitorder="big")
    np.testing.assert_array_equal(packed.get(), np.packbits(bits, axis=1))
    back = _xp_compat.unpackbits(cupy, packed, axis=1, count=11, bitorder="big").get()
    np.testing.assert_array_equal(back, bits)
