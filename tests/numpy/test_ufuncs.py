"""``dualad.numpy``'s ufuncs against NumPy's own: values, dtypes and shapes for every ufunc and
input dtype (through ``dualad.numpy.<name>`` and through NumPy's protocol ``numpy.<name>``),
NEP 50 promotion with Python scalars, broadcasting, and the keywords ``dtype=``, ``where=``,
``out=``, ``casting=``, ``order=``, ``signature=``; the bad-input errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad.numpy.protocol_ufuncs import UFUNCS
from dualad.testing import assert_close

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64", "complex128"]
NAMES = sorted({ours.__name__ for ours in UFUNCS.values()})
RNG = np.random.default_rng(0)
# dualad computes these only for real inputs (a clear TypeError for complex ones)
REAL_ONLY = {"maximum", "minimum", "fmax", "fmin"}


def _inputs(name: str, dtype: str, rng=RNG):
    """Arguments for ufunc ``name`` of ``dtype`` (shapes that broadcast; gufuncs' core dims)."""
    uf = getattr(np, name)
    if name == "arccosh":
        low, high = 1.2, 3.0
    else:
        low, high = 0.2, 2.8
    scale = 1 if dtype in ("float16", "float32", "float64", "complex128") else 3

    def draw(shape):
        values = rng.uniform(low, high, shape) * scale
        if dtype == "complex128":
            values = values + 0.3j * rng.uniform(low, high, shape)
        return values.astype(dtype)

    if name in ("matmul", "vecmat"):
        return (draw((4,)), draw((4, 3))) if name == "vecmat" else (draw((2, 3, 4)), draw((4, 2)))
    if name == "matvec":
        return draw((2, 3, 4)), draw((4,))
    if name == "vecdot":
        return draw((3, 4)), draw((4,))
    if uf.nin == 1:
        return (draw((3, 4)),)
    if name == "ldexp":  # an integer exponent
        return draw((3, 4)), rng.integers(-3, 4, (4,)).astype("int32")
    return draw((3, 4)), draw((4,))


def _run(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args)
        except Exception as exc:  # (compared with NumPy's outcome)
            return exc


def _assert_same(got, ref, context):
    if isinstance(ref, Exception):
        assert isinstance(got, Exception), f"{context}: NumPy raised {ref!r}, dualad gave {got!r}"
        assert isinstance(got, (type(ref), TypeError)), context
        return
    assert not isinstance(got, Exception), f"{context}: dualad raised {got!r}"
    refs = ref if isinstance(ref, tuple) else (ref,)
    gots = got if isinstance(got, tuple) else (got,)
    assert len(refs) == len(gots), context
    for g, r in zip(gots, refs, strict=True):
        r = np.asarray(r)
        assert isinstance(g, dualad.Tensor), context
        assert g.dtype == r.dtype, f"{context}: dtype {g.dtype} != NumPy's {r.dtype}"
        assert tuple(g.shape) == r.shape, context
        tol = 1e-2 if r.dtype == np.float16 else 1e-6
        if r.dtype.kind in "fc":
            np.testing.assert_allclose(g.numpy(), r, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g.numpy(), r, err_msg=context)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_values_dtypes_shapes_match_numpy(name, dtype):
    np_ufunc = getattr(np, name)
    args = _inputs(name, dtype)
    before = [a.copy() for a in args]
    ref = _run(np_ufunc, *args)
    tensors = [dualad.tensor(a) for a in args]
    ours = getattr(dnp, name)
    for route, fn in (("dualad.numpy", ours), ("numpy protocol", np_ufunc)):
        got = _run(fn, *tensors)
        if name in REAL_ONLY and isinstance(got, TypeError) and dtype == "complex128":
            assert "complex" in str(got)  # (the protocol's lean path gives NumPy's values)
            continue
        _assert_same(got, ref, f"{route}.{name}({dtype})")
    for a, b, t in zip(args, before, tensors, strict=True):  # inputs never mutated
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(t.numpy(), b)


def test_every_namespace_ufunc_is_numpys():
    for name in dnp.ufunc_table.__all__:
        ours, theirs = getattr(dnp, name), getattr(np, name)
        assert isinstance(ours, dnp.ufunc) and isinstance(theirs, np.ufunc)
        assert ours.__name__ == theirs.__name__
        assert (ours.nin, ours.nout, ours.nargs) == (theirs.nin, theirs.nout, theirs.nargs)
        assert ours.identity == theirs.identity or (ours.identity is theirs.identity)
        assert ours.signature == theirs.signature
    assert dnp.abs is dnp.absolute and dnp.acos is dnp.arccos and dnp.pow is dnp.power
    assert repr(dnp.add) == "<dualad.numpy.ufunc 'add'>"


SCALARS = [2, 2.5, True, 1j, -3]
SCALAR_DTYPES = ["int8", "uint8", "int64", "float32", "float64", "complex64"]
BINARY = [
    "add",
    "subtract",
    "multiply",
    "true_divide",
    "power",
    "maximum",
    "arctan2",
    "hypot",
    "less",
    "equal",
    "logaddexp",
    "remainder",
    "copysign",
]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_nep50_python_scalars(name, dtype):
    np_ufunc, ours = getattr(np, name), getattr(dnp, name)
    array = np.array([1, 2, 3]).astype(dtype)
    for scalar in SCALARS:
        for args in ((array, scalar), (scalar, array)):
            ref = _run(np_ufunc, *args)
            tensor_args = tuple(dualad.tensor(a) if isinstance(a, np.ndarray) else a for a in args)
            for route, fn in (("dualad.numpy", ours), ("protocol", np_ufunc)):
                got = _run(fn, *tensor_args)
                if isinstance(ref, Exception) and isinstance(got, Exception):
                    continue
                if name in REAL_ONLY and isinstance(got, TypeError) and "complex" in str(got):
                    continue
                _assert_same(got, ref, f"{route} {name}{args!r}")


def test_numpy_scalars_are_strongly_typed():
    t = dualad.tensor([1.0, 2.0], dtype="float32")
    assert dnp.add(t, np.float64(1.0)).dtype == np.float64
    assert np.add(t, 1.0).dtype == np.float32
    assert dnp.multiply(np.float32(2), dualad.tensor([1, 2], dtype="int8")).dtype == np.float32


def test_broadcasting():
    a, b = RNG.standard_normal((3, 1)), RNG.standard_normal((1, 4, 1, 1))
    _assert_same(dnp.add(dualad.tensor(a), dualad.tensor(b)), np.add(a, b), "broadcast")
    _assert_same(np.hypot(dualad.tensor(a), b), np.hypot(a, b), "ndarray and tensor")
    _assert_same(dnp.multiply([1.0, 2.0], dualad.tensor(3.0)), np.multiply([1.0, 2.0], 3.0), "")


# ---------------------------------------------------------------------------------------------
# keywords


@pytest.mark.parametrize(
    ("name", "dtype", "args"),
    [
        ("add", "float32", ([1.5, 2.25], [1.0, 3.0])),
        ("add", "int8", ([1, 2], [3, 4])),
        ("multiply", "complex128", ([1.5, 2.0], [1.0, 3.0])),
        ("sqrt", "float32", ([2.0, 3.0],)),
        ("true_divide", "float32", ([1, 2], [3, 4])),
        ("add", None, ([1, 2], [0.5, 1])),
    ],
)
def test_dtype_keyword(name, dtype, args):
    arrays = [np.asarray(a) for a in args]
    ref = getattr(np, name)(*arrays, dtype=dtype)
    got = getattr(dnp, name)(*[dualad.tensor(a) for a in arrays], dtype=dtype)
    _assert_same(got, ref, f"{name} dtype={dtype}")
    assert np.add(dualad.tensor([1.5]), 1, dtype="float32").dtype == np.float32


def test_dtype_keyword_is_differentiable():
    x = dualad.tensor([1.5, 2.0], requires_grad=True)
    y = dnp.multiply(x, x, dtype="float32")
    assert y.dtype == np.float32
    (g,) = dualad.autograd.grad(y.sum(), x)
    assert g.dtype == np.float64
    assert_close(g, 2 * x.detach())


def test_signature_keyword():
    a = np.array([1, 2], dtype="int32")
    ref = np.add(a, a, signature="dd->d")
    _assert_same(dnp.add(dualad.tensor(a), dualad.tensor(a), signature="dd->d"), ref, "sig")
    ref = np.add(a, a, signature=(None, None, "float32"))
    got = dnp.add(dualad.tensor(a), dualad.tensor(a), signature=(None, None, "float32"))
    _assert_same(got, ref, "signature tuple")
    with pytest.raises(TypeError, match="both 'signature' and 'dtype'"):
        dnp.add(dualad.tensor(a), 1, dtype="float64", signature="dd->d")


def test_casting_keyword():
    f64 = dualad.tensor([1.5, 2.5])
    i64 = dualad.tensor([1, 2])
    for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
        for args, dtype in (((f64, f64), "float32"), ((i64, i64), "float64"), ((f64, 1), None)):
            plain = [a.numpy() if isinstance(a, dualad.Tensor) else a for a in args]
            ref = _run(lambda *v, c=casting, d=dtype: np.add(*v, dtype=d, casting=c), *plain)
            got = _run(lambda *v, c=casting, d=dtype: dnp.add(*v, dtype=d, casting=c), *args)
            _assert_same(got, ref, f"casting={casting} dtype={dtype}")
    with pytest.raises(ValueError, match="casting must be one of"):
        dnp.add(f64, f64, casting="sometimes")
    with pytest.raises(ValueError, match="casting="):
        np.add(f64, f64, casting="bogus")


def test_order_and_subok_keywords():
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
    for order in ("K", "A", "C"):
        assert_close(dnp.exp(x, order=order), np.exp(x.numpy()))
    with pytest.raises(ValueError, match="order='F' is not supported"):
        dnp.exp(x, order="F")
    with pytest.raises(ValueError, match="order must be one of"):
        np.exp(x, order="Z")
    assert_close(dnp.exp(x, subok=False), np.exp(x.numpy()))
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        dnp.exp(x, bogus=1)
    with pytest.raises(TypeError, match="generalized ufuncs"):
        dnp.exp(x, axis=0)


def test_where_keyword():
    a = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    mask = np.array([True, False, True])
    out = np.full_like(a, 7.0)
    ref = np.add(a, 1.0, out=out.copy(), where=mask)
    t_out = dualad.tensor(out)
    got = dnp.add(dualad.tensor(a), 1.0, out=t_out, where=mask)
    assert got is t_out
    assert_close(got, ref)
    # without out: zeros where the mask is False (NumPy leaves those uninitialised)
    got = np.add(dualad.tensor(a), 1.0, where=dualad.tensor(mask))
    assert_close(got, np.where(mask, a + 1.0, 0.0))
    # the masked result is differentiable where the mask is True
    x = dualad.tensor(a, requires_grad=True)
    (g,) = dualad.autograd.grad(dnp.multiply(x, x, where=mask).sum(), x)
    assert_close(g, np.where(mask, 2 * a, 0.0))
    with pytest.raises(TypeError, match="boolean mask"):
        dnp.add(x, 1.0, where=np.array([1.0, 0.0, 1.0]))


def test_out_tensor_records_the_write():
    x = dualad.tensor([0.5, 1.5], requires_grad=True)
    out = dualad.zeros(2)
    y = np.multiply(x, x, out=out)
    assert y is out and out.requires_grad
    (g,) = dualad.autograd.grad(out.sum(), x)
    assert_close(g, 2 * x.detach())
    # a 1-tuple and a positional out
    out2 = dualad.zeros(2)
    assert dnp.sin(x, out=(out2,)) is out2
    out3 = dualad.zeros(3, 2)
    assert dnp.add(x, 1.0, out3) is out3  # broadcast into a larger out, as NumPy does
    assert_close(out3, np.broadcast_to(x.detach().numpy() + 1.0, (3, 2)))
    # multi-output ufuncs take a tuple of outs
    q, r = dualad.zeros(2), dualad.zeros(2)
    assert dnp.divmod(x, 0.75, out=(q, r)) == (q, r)
    assert_close(r, np.remainder([0.5, 1.5], 0.75))


def test_out_errors_like_numpy():
    x = dualad.tensor([0.5, 1.5])
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        dnp.add(x, 1.0, out=dualad.zeros(2, dtype="int64"))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        dnp.add(x, 1.0, out=dualad.zeros(3))
    with pytest.raises(TypeError, match="both a positional and keyword"):
        dnp.add(x, 1.0, dualad.zeros(2), out=dualad.zeros(2))
    with pytest.raises(TypeError, match="tuple of 2"):
        dnp.divmod(x, 1.0, out=dualad.zeros(2))
    with pytest.raises(TypeError, match="out= must be a dualad Tensor"):
        dnp.add(x, 1.0, out=[0.0, 0.0])
    with pytest.raises(TypeError, match="takes from 2 to 3 positional arguments"):
        dnp.add(x)


def test_ndarray_out():
    x = dualad.tensor([0.5, 1.5], requires_grad=True)
    array = np.zeros(2)
    # untracked results are written like NumPy does, and the array is returned
    assert np.add(x.detach(), 1.0, out=array) is array
    assert_close(array, np.array([1.5, 2.5]))
    assert dnp.less(x, 1.0, out=np.zeros(2, bool)).tolist() == [True, False]
    with dualad.no_grad():
        assert np.exp(x, out=array) is array
    # tracked: a TypeError that says why and what to do
    for call in (lambda: np.add(x, 1.0, out=array), lambda: dnp.exp(x, out=(array,))):
        with pytest.raises(TypeError, match="out= is a NumPy array but the result is tracked"):
            call()
    before = array.copy()
    with pytest.raises(TypeError, match=r"inside dualad\.func"):
        dualad.func.grad(lambda v: np.sin(v, out=array).sum())(x.detach())
    np.testing.assert_array_equal(array, before)  # nothing was written
    with pytest.raises(TypeError, match="batched"):
        dualad.vmap(lambda v: np.less(v, 1.0, out=np.zeros(2, bool)))(dualad.ones(3, 2))


def test_bad_inputs():
    x = dualad.tensor([1.0, 2.0])
    for bad in (np.array(["a", "b"]), np.array([1, "a"], dtype=object), ["a", "b"]):
        with pytest.raises(TypeError, match=r"dtype .* not supported"):
            dnp.add(x, bad, out=dualad.zeros(2))
        with pytest.raises(TypeError):
            np.add(bad, x)
    with pytest.raises(TypeError, match=r"numpy\.isnat has no dualad version"):
        np.isnat(x)
    # NumPy's own errors where it has no loop
    with pytest.raises(TypeError, match="not supported for the input types"):
        dnp.fabs(dualad.tensor([1 + 1j]))
    with pytest.raises(TypeError, match="not supported for the input types"):
        np.deg2rad(dualad.tensor([1 + 1j]))
