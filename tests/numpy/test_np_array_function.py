"""NumPy's ``__array_function__`` protocol on tensors, ``np.asarray`` of tensors, and the
errors of ``dualad.numpy`` (functions without a dualad version, foreign arrays, ``out=``, bad
axes, layouts we do not support), on every kind of tensor."""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad import func, fwd
from dualad.numpy import protocol_functions

# NumPy functions that dispatch through __array_function__ but have no dualad version (every
# function with a derivative has one now: these are the datetime functions); the test keeps
# those still missing, so it goes on testing as they are added.
MISSING = [
    f for f in (np.is_busday, np.datetime_as_string) if f not in protocol_functions.FUNCTIONS
]


def each_kind(fn, x):
    """``fn`` applied to ``x`` as: a plain tensor, one that requires grad, a dual tensor, a
    BatchedTensor inside vmap, a GradTensor inside func.grad. Yields each kind's name."""
    yield "plain", lambda: fn(x)
    yield "requires_grad", lambda: fn(x.detach().requires_grad_())

    def dual():
        with fwd.dual_level():
            return fn(fwd.make_dual(x, dualad.ones_like(x)))

    yield "dual", dual

    def batched():
        out = []
        dualad.vmap(lambda t: out.append(fn(t)) or t.sum())(dualad.stack([x, x]))
        return out[0]

    yield "vmap", batched

    def inside_grad():
        out = []
        func.grad(lambda t: out.append(fn(t)) or dnp.sum(t))(x)
        return out[0]

    yield "func.grad", inside_grad


KINDS = ["plain", "requires_grad", "dual", "vmap", "func.grad"]


def run_kind(fn, x, kind):
    return dict(each_kind(fn, x))[kind]()


def test_some_numpy_functions_are_still_missing():
    assert MISSING  # (otherwise pick others for the tests below)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("numpy_fn", MISSING, ids=lambda f: f.__name__)
def test_a_numpy_function_without_a_dualad_version_raises_type_error(numpy_fn, kind):
    x = dualad.tensor(np.eye(3) + 0.5)
    with pytest.raises(TypeError) as info:
        run_kind(lambda t: numpy_fn(t, t) if numpy_fn is np.linalg.solve else numpy_fn(t), x, kind)
    message = str(info.value)
    assert protocol_functions.numpy_name(numpy_fn) in message
    assert "no differentiable dualad version" in message and "detach()" in message


def test_the_missing_names_are_not_attributes():
    assert not hasattr(dnp.linalg, "no_such_function")
    assert not hasattr(dnp.fft, "no_such_function")
    assert protocol_functions.numpy_name(np.linalg.solve) == "numpy.linalg.solve"
    assert protocol_functions.numpy_name(np.fft.fft) == "numpy.fft.fft"


@pytest.mark.parametrize("kind", KINDS)
def test_numpy_functions_work_on_every_kind_of_tensor(kind):
    x = dualad.tensor(np.arange(6.0).reshape(2, 3) - 2.5)
    calls = {
        "sum": lambda t: np.sum(t, axis=0),
        "mean": lambda t: np.mean(t),
        "std": lambda t: np.std(t, axis=-1, ddof=1),
        "max": lambda t: np.max(t, axis=1, keepdims=True),
        "cumsum": lambda t: np.cumsum(t, axis=1),
        "einsum": lambda t: np.einsum("ij,ij->i", t, t),
        "tensordot": lambda t: np.tensordot(t, t, axes=([1], [1])),
        "stack": lambda t: np.stack([t, t], axis=-1),
        "split": lambda t: np.split(t, 3, axis=1)[1],
        "where": lambda t: np.where(t > 0, t, 0.0),
        "clip": lambda t: np.clip(t, -1.0, 1.0),
        "trace": lambda t: np.trace(t),
        "linalg.norm": lambda t: np.linalg.norm(t, axis=1),
        "take_along_axis": lambda t: np.take_along_axis(t, np.zeros((2, 1), np.int64), axis=1),
    }
    for name, fn in calls.items():
        out = run_kind(fn, x, kind)
        assert isinstance(out, dualad.Tensor), name
        expected = fn(x.numpy())
        assert out.shape == expected.shape, name


def test_protocol_results_differentiate_eagerly():
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    np.sum(np.mean(x, axis=0) ** 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 3.0], [2.0, 3.0]])


def test_the_table_comes_from_the_namespace():
    """Every public dualad.numpy function whose NumPy counterpart is a (non-ufunc) function
    answers the protocol, and a namespace given to ``install`` adds its functions."""
    for ours_ns, numpy_ns in ((dnp, np), (dnp.linalg, np.linalg), (dnp.fft, np.fft)):
        for name in getattr(ours_ns, "__all__", None) or dir(ours_ns):
            theirs = getattr(numpy_ns, name, None)
            if (
                name.startswith("_")
                or not callable(theirs)
                or isinstance(theirs, (np.ufunc, type))
                or not callable(getattr(ours_ns, name))
            ):
                continue
            # (NumPy's aliases, np.concat is np.concatenate, map to the function of its name)
            expected = getattr(ours_ns, theirs.__name__, None) or getattr(ours_ns, name)
            assert protocol_functions.FUNCTIONS.get(theirs) is expected, name

    class Namespace:
        __all__ = ("convolve",)

        @staticmethod
        def convolve(a, v, mode="full"):
            return "ours"

    saved = dict(protocol_functions.FUNCTIONS)
    try:
        protocol_functions.install((Namespace, np))
        assert np.convolve(dualad.tensor([1.0]), dualad.tensor([1.0])) == "ours"
    finally:
        protocol_functions.FUNCTIONS.clear()
        protocol_functions.FUNCTIONS.update(saved)


class Foreign:
    """Another library's array type."""

    def __array_function__(self, func, types, args, kwargs):
        return "foreign"


def test_foreign_array_types_get_not_implemented():
    t = dualad.tensor([1.0, 2.0])
    assert t.__array_function__(np.concatenate, (type(t), Foreign), ([t],), {}) is NotImplemented
    # NumPy then asks the other type, whose answer wins
    assert np.concatenate([t, Foreign()]) == "foreign"
    # ndarrays mixed with tensors are ours
    out = np.concatenate([t, np.array([3.0])])
    assert isinstance(out, dualad.Tensor) and out.shape == (3,)


# ------------------------------------------------------------------------------- np.asarray
def test_asarray_of_an_untracked_tensor_shares_its_memory():
    x = dualad.tensor([1.0, 2.0, 3.0])
    a = np.asarray(x)
    assert type(a) is np.ndarray and np.shares_memory(a, x.numpy())
    b = np.array(x)
    assert not np.shares_memory(b, x.numpy()) and np.array_equal(b, a)


@pytest.mark.parametrize("convert", [np.asarray, np.array], ids=["asarray", "array"])
@pytest.mark.parametrize("kind", KINDS[1:])
def test_asarray_of_a_tracked_tensor_raises(kind, convert):
    x = dualad.tensor([1.0, 2.0])
    with pytest.raises(dualad.TrackedConversionError):
        run_kind(convert, x, kind)


# ---------------------------------------------------------------------------------- errors
def test_out_writes_into_a_tensor_and_refuses_an_ndarray():
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = dualad.zeros(2)
    assert np.sum(x, axis=0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), [4.0, 6.0])
    assert dnp.cumsum(x, axis=1, out=dualad.zeros(2, 2)).numpy()[1, 1] == 7.0
    med = dualad.zeros(2)
    assert np.median(x, axis=1, out=med) is med
    np.testing.assert_array_equal(med.numpy(), [1.5, 3.5])
    with pytest.raises(TypeError, match=r"dualad.numpy.sum: out= must be a dualad Tensor"):
        np.sum(x, axis=0, out=np.zeros(2))
    with pytest.raises(ValueError, match="shape"):
        dnp.sum(x, axis=0, out=dualad.zeros(3))
    with pytest.raises(TypeError, match="same_kind"):
        dnp.mean(x, axis=0, out=dualad.zeros(2, dtype=dualad.int64))
    wide = dualad.zeros(2, dtype=dualad.complex128)  # (float64 into complex128: same kind)
    assert dnp.sum(x, axis=0, out=wide).dtype == np.complex128


def test_out_records_the_derivative():
    x = dualad.tensor([1.0, 2.0], requires_grad=True)
    out = dualad.zeros(2)
    dnp.clip(x * 3, 0.0, 4.0, out=out)
    dnp.sum(out).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0])


@pytest.mark.parametrize(
    "call",
    [
        lambda x: dnp.sum(x, axis=2),
        lambda x: dnp.mean(x, axis=(0, -3)),
        lambda x: dnp.cumsum(x, axis=-3),
        lambda x: dnp.moveaxis(x, 0, 5),
        lambda x: dnp.take(x, [0], axis=2),
        lambda x: np.std(x, axis=3),
        lambda x: np.linalg.norm(x, axis=2),
    ],
)
def test_bad_axes_raise_numpys_axis_error(call):
    with pytest.raises(np.exceptions.AxisError):
        call(dualad.tensor(np.ones((2, 3))))


def test_numpys_value_errors():
    x = dualad.tensor(np.ones((2, 3)))
    cases = [
        (lambda: dnp.squeeze(x, axis=0), "size not equal to one"),
        (lambda: dnp.split(x, 2, axis=1), "equal division"),
        (lambda: dnp.max(dnp.zeros((0, 2)), axis=0), "zero-size"),
        (lambda: dnp.max(x, where=x > 0), "initial"),
        (lambda: dnp.reshape(x, (6,), order="X"), "order"),
        (lambda: dnp.concatenate([x, x], casting="unsafe"), "casting"),
        (lambda: dnp.pad(x, 1, mode="nonsense"), "mode"),
        (lambda: dnp.var(x, ddof=1, correction=1), "ddof and correction"),
        (lambda: dnp.linalg.norm(dualad.ones(2, 2, 2), ord=1), "dimensions"),
        (lambda: dnp.linalg.norm(dualad.ones(3), ord="fro"), "Invalid norm order"),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            call()


def test_what_was_unsupported_before_the_decompositions_now_works():
    m = dualad.tensor(np.eye(2))
    np.testing.assert_allclose(dnp.linalg.norm(2 * m, ord=2).numpy(), 2.0)
    # (a negative matrix power is the power of the inverse)
    np.testing.assert_allclose(np.linalg.matrix_power(2 * m, -1).numpy(), np.eye(2) / 2)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.where(x > 0, x, 1.0),  # NEP 50: the Python float is weak
        lambda m, x: m.clip(x, 0, 0.5),
        lambda m, x: m.sum(x, initial=1.0),
        lambda m, x: m.dot(x, 2.0),  # (dot converts 2.0 to a float64 array: float64)
        lambda m, x: m.concatenate([x, [[1.0, 2.0]]]),
        lambda m, x: m.full_like(x, 2),
        lambda m, x: m.average(x, weights=[1, 2], axis=1),
        lambda m, x: m.sum(m.astype(x, m.int8) if m is np else x.astype(np.int8)),
        lambda m, x: m.mean(m.astype(x, m.int8) if m is np else x.astype(np.int8)),
    ],
)
def test_python_scalar_and_integer_promotion_follows_numpy(call):
    a = np.ones((2, 2), np.float32)
    ours, theirs = call(dnp, dualad.tensor(a)), call(np, a)
    assert ours.dtype == np.asarray(theirs).dtype


def test_numpy_creation_with_like_returns_tensors():
    t = dualad.tensor([1.0])
    for out in (np.zeros(3, like=t), np.ones((2, 2), like=t), np.arange(4, like=t)):
        assert isinstance(out, dualad.Tensor)


def test_inputs_are_never_mutated_by_out_or_in_place_looking_calls():
    a = np.arange(6.0).reshape(2, 3)
    x = dualad.tensor(a)
    dnp.sum(x, axis=0, out=dualad.zeros(3))
    dnp.clip(x, 1, 2)
    dnp.pad(x, 1)
    dnp.append(x, x)
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3))


def test_namespace_constants_and_random():
    assert dnp.newaxis is None and dnp.pi == np.pi and dnp.e == np.e
    assert dnp.inf == np.inf and np.isnan(dnp.nan) and dnp.euler_gamma == np.euler_gamma
    assert dnp.float64 is np.float64 and dnp.bool_ is np.bool_ and dnp.complex128 is np.complex128
    assert dnp.random is np.random
    x = dualad.tensor([1.0, 2.0])
    assert x[:, dnp.newaxis].shape == (2, 1)


def test_quantile_positions_must_be_plain_values():
    x = dualad.tensor([1.0, 2.0, 3.0])
    assert dnp.quantile(x, dualad.tensor(0.5)).item() == 2.0
    with pytest.raises(dualad.TrackedConversionError):
        dnp.quantile(x, dualad.tensor(0.5, requires_grad=True))
    with pytest.raises(ValueError, match="range"):
        dnp.percentile(x, 101)


@pytest.mark.parametrize("kind", KINDS)
def test_lists_holding_tensors_keep_their_derivative(kind):
    """``dnp.sum([x, 2 * x])``: the list is stacked with dualad ops, never detached."""
    x = dualad.tensor([1.0, 2.0])

    def f(t):
        return dnp.sum([t, 2 * t]) + dnp.mean(dnp.array([[t[0], 1.0], [t[1], t[0]]]))

    if kind == "plain":
        t = x.detach().requires_grad_()
        f(t).backward()
        np.testing.assert_allclose(t.grad.numpy(), [3.5, 3.25])
    elif kind == "func.grad":
        np.testing.assert_allclose(func.grad(f)(x).numpy(), [3.5, 3.25])
    else:
        out = run_kind(f, x, kind)
        assert isinstance(out, dualad.Tensor)


@pytest.mark.parametrize("m", [dnp, np], ids=["dualad.numpy", "numpy"])
@pytest.mark.parametrize(
    "f",
    [
        lambda m, z: m.var(z, axis=1),
        lambda m, z: m.std(z, ddof=1),
        lambda m, z: m.linalg.norm(z),
        lambda m, z: m.linalg.norm(z, 1),
        lambda m, z: m.var(z, where=np.array([[True, False, True], [True, True, True]])),
        lambda m, z: m.real(m.sum(z * z, axis=0)),
        lambda m, z: m.real(m.vdot(z, z[::-1])),
    ],
)
def test_complex_inputs_differentiate(m, f):
    """Real results of complex inputs (dualad's complex convention) in both modes."""
    rng = np.random.default_rng(3)
    z = dualad.tensor(rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3)), requires_grad=True)
    assert dualad.autograd.gradcheck(lambda t: f(m, t), (z,), check_forward_ad=True)


def test_numpys_no_value_keywords_mean_not_given():
    x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = np.sum(x, axis=0, keepdims=np._NoValue, initial=np._NoValue, where=np._NoValue)
    assert out.shape == (2,)
