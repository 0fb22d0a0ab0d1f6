"""dualad.array_api against array_api_strict, the array API standard's reference implementation
(2024.12): every function on the same hypothesis-drawn inputs (the dtypes the standard requires,
0-d and empty shapes, Python scalars), comparing values, dtypes, shapes and the exception class
where the reference raises (``array_api_cases.py`` holds the cases). Also the dtype functions,
the inspection namespace and the Tensor members (``__array_namespace__``, ``device``,
``to_device``, ``__dlpack__``).
"""

from __future__ import annotations

import array_api_compat
import numpy as np
import pytest
from array_api_cases import CASES, DTYPE_FUNCTIONS, check, check_dtype_function
from hypothesis import given

import dualad
import dualad.array_api as xp
from dualad.func import grad


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_the_reference(name):
    _, strategy = CASES[name]

    @given(strategy)
    def run(case):
        args, kwargs = case
        why = check(xp, name, args, kwargs)
        assert why is None, f"{name}(*{args!r}, **{kwargs!r}): {why}"

    run()


def test_a_mismatch_is_reported():
    # the comparison itself can fail: NumPy's sum of int8 keeps int64, a wrong dtype is caught
    class Wrong:
        @staticmethod
        def asarray(a):
            return np.asarray(a)

        @staticmethod
        def sum(x, **kw):
            return np.sum(x, **kw).astype(np.float32)

    assert "dtype float32" in check(Wrong, "sum", (np.arange(3),), {})


@pytest.mark.parametrize("name", DTYPE_FUNCTIONS)
def test_dtype_functions_match_the_reference(name):
    # every dtype, or pair of dtypes, against array_api_strict (see check_dtype_function)
    assert check_dtype_function(xp, name) is None


def test_bad_dtype_arguments_raise():
    with pytest.raises(ValueError, match="unknown kind"):
        xp.isdtype(xp.float32, "floating")
    with pytest.raises(TypeError, match="not a dtype of the array API"):
        xp.zeros(3, dtype="float32")
    with pytest.raises(ValueError, match="not an integer dtype"):
        xp.iinfo(xp.float32)


def test_namespace_info():
    info = xp.__array_namespace_info__()
    assert info.default_device() == dualad.device("cpu") in info.devices()
    assert info.default_dtypes()["real floating"] == dualad.get_default_dtype()
    assert info.default_dtypes()["indexing"] == xp.int64
    assert set(info.dtypes(kind="real floating").values()) == {xp.float32, xp.float64}
    assert info.capabilities()["boolean indexing"] is True
    assert xp.__array_api_version__ == "2024.12"


def test_tensors_name_their_namespace():
    t = dualad.tensor([1.0, 2.0])
    assert t.__array_namespace__() is xp
    assert t.__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(ValueError, match="unsupported array API version"):
        t.__array_namespace__(api_version="2099.12")
    assert array_api_compat.array_namespace(t) is xp
    assert array_api_compat.array_namespace(t, dualad.tensor(1.0)) is xp
    assert array_api_compat.is_array_api_obj(t)


def test_device_and_to_device_keep_the_graph():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    assert xp.asarray(x).device == x.device == dualad.device("cpu")
    y = x.to_device("cpu")
    assert y is x
    with pytest.raises(ValueError, match="stream"):
        x.to_device("cpu", stream=1)


def test_dlpack_export_shares_memory_and_refuses_tracked_tensors():
    t = dualad.tensor([1.0, 2.0])
    a = np.from_dlpack(t)
    assert np.shares_memory(a, t.numpy())
    assert t.__dlpack_device__() == (1, 0)
    assert xp.from_dlpack(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(dualad.TrackedConversionError, match="DLPack"):
        np.from_dlpack(x)
    with dualad.no_grad():
        assert np.from_dlpack(x).tolist() == [1.0, 2.0]

    def f(v):
        np.from_dlpack(v)
        return v.sum()

    with pytest.raises(dualad.TrackedConversionError, match=r"dualad\.func\.grad"):
        grad(f)(dualad.tensor([1.0]))


def test_asarray_copy_rules():
    a = np.arange(3.0)
    assert np.shares_memory(xp.asarray(a, copy=False).numpy(), a)
    assert not np.shares_memory(xp.asarray(a, copy=True).numpy(), a)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray([1.0, 2.0], copy=False)
    x = dualad.tensor([1.0], requires_grad=True)
    assert xp.asarray(x) is x
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(x, dtype=xp.float32, copy=False)
    assert xp.asarray(x, dtype=xp.float32).requires_grad  # the cast is an op: graph kept


def test_from_dlpack_copy_and_device_rules():
    a = np.arange(3.0)
    assert np.shares_memory(xp.from_dlpack(a).numpy(), a)
    assert np.shares_memory(xp.from_dlpack(a, device="cpu", copy=False).numpy(), a)
    assert not np.shares_memory(xp.from_dlpack(a, copy=True).numpy(), a)
    t = dualad.tensor([1.0, 2.0])
    assert np.shares_memory(xp.from_dlpack(t).numpy(), t.numpy())
    with pytest.raises(TypeError):
        xp.from_dlpack([1.0, 2.0])  # no __dlpack__


@pytest.mark.gpu
def test_cuda_tensors_through_the_namespace():
    import cupy  # only with a GPU (the gpu marker skips the test otherwise)

    c = cupy.arange(3.0)
    t = xp.from_dlpack(c)
    assert t.device == dualad.device("cuda", 0) and xp.asarray(t) is t
    assert cupy.shares_memory(cupy.from_dlpack(t), c)
    assert xp.sum(t * 2.0).to_device("cpu").item() == 6.0
    assert xp.from_dlpack(c, device="cpu").device == dualad.device("cpu")
    assert xp.zeros(2, device=t.device).device == t.device
    with pytest.raises(ValueError, match="copy=False"):
        xp.from_dlpack(c, device="cpu", copy=False)
