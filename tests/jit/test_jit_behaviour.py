"""``dualad.jit``'s semantics: guards and retracing, the cache and its bound, static arguments,
pytrees, outputs, random ops, in-place ops and views, inputs never mutated, bad input."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dualad
from dualad.tracing import RetraceWarning


def tensor(*values):
    return dualad.tensor(np.array(values, dtype=np.float64))


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b))


# ---------------------------------------------------------------------------------------------
# guards


def test_python_control_flow_on_values_retraces():
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    jitted = dualad.jit(fn)
    assert same(jitted(tensor(1.0)), [2.0])
    assert same(jitted(tensor(-1.0)), [-2.0])  # the guard fails: traced again
    assert same(jitted(tensor(3.0)), [6.0])  # replays of both branches
    assert same(jitted(tensor(-3.0)), [-4.0])
    info = jitted.cache_info()
    assert (info.misses, info.hits, info.retraces, info.size) == (2, 2, 1, 2)


@pytest.mark.parametrize(
    "convert",
    [
        lambda v: v.max().item(),
        lambda v: float(v.max()),
        lambda v: int(v.max()),
        lambda v: v.tolist()[0],
        lambda v: np.asarray(v)[0],
        lambda v: len(dualad.nonzero(v)),
    ],
    ids=["item", "float", "int", "tolist", "asarray", "data-dependent-shape"],
)
def test_values_reaching_python_are_guarded(convert):
    def fn(x):
        return x * convert(x)

    jitted = dualad.jit(fn)
    for values in ([1.0, 2.0], [1.0, 2.0], [0.0, 3.0], [1.0, 2.0], [0.0, 3.0]):
        x = tensor(*values)
        assert same(jitted(x), fn(x)), values
    assert jitted.cache_info().misses == 2
    assert jitted.cache_info().hits == 3


def test_cache_bound_warns_once_then_runs_eagerly():
    jitted = dualad.jit(lambda x: x * 2, max_traces=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 6):
            assert same(jitted(dualad.ones(n)), [2.0] * n)
    assert [w.category for w in caught] == [RetraceWarning]
    assert "max_traces" in str(caught[0].message)
    info = jitted.cache_info()
    assert (info.misses, info.eager_calls, info.size, info.maxsize) == (2, 3, 2, 2)
    jitted.cache_clear()
    assert jitted.cache_info().size == 0


# ---------------------------------------------------------------------------------------------
# signatures: static arguments, numbers, pytrees


def test_static_arguments_are_part_of_the_key():
    calls = []

    def power(x, n, *, mode="plain"):
        calls.append((n, mode))
        return x**n if mode == "plain" else -(x**n)

    jitted = dualad.jit(power, static_argnums=1, static_argnames="mode")
    x = tensor(2.0)
    assert same(jitted(x, 3), [8.0])
    assert same(jitted(x, 3), [8.0])
    assert same(jitted(x, 2), [4.0])
    assert same(jitted(x, 2, mode="neg"), [-4.0])
    assert calls == [(3, "plain"), (2, "plain"), (2, "neg")]  # side effects at trace time only


def test_unhashable_static_argument_names_it():
    jitted = dualad.jit(lambda x, shape: x.reshape(shape), static_argnums=(1,))
    with pytest.raises(TypeError, match=r"static argument 1 \(shape\) must be hashable"):
        jitted(tensor(1.0, 2.0), [2, 1])
    jitted = dualad.jit(lambda x, *, shape: x.reshape(shape), static_argnames="shape")
    with pytest.raises(TypeError, match="static argument 'shape' must be hashable"):
        jitted(tensor(1.0, 2.0), shape=[2, 1])


def test_non_array_argument_names_it():
    jitted = dualad.jit(lambda x, opts: x)
    with pytest.raises(TypeError, match=r"argument 1\['f'\] has type object"):
        jitted(tensor(1.0), {"f": object()})
    with pytest.raises(TypeError, match="argument 0 is an array of dtype <U1"):
        jitted(np.array(["a"]), 1)


def test_python_numbers_are_constants_of_the_program():
    jitted = dualad.jit(lambda x, a: x * a)
    assert same(jitted(tensor(2.0), 3.0), [6.0])
    assert same(jitted(tensor(2.0), 4.0), [8.0])
    assert jitted.cache_info().misses == 2


def test_changing_pytree_structure_traces_again():
    jitted = dualad.jit(lambda d: sum(v * 2 for v in d["xs"]) + d.get("b", 0))
    assert same(jitted({"xs": [tensor(1.0), tensor(2.0)]}), [6.0])
    assert same(jitted({"xs": [tensor(1.0)]}), [2.0])
    assert same(jitted({"xs": (tensor(1.0),), "b": tensor(5.0)}), [7.0])
    assert same(jitted({"xs": [tensor(3.0), tensor(4.0)]}), [14.0])
    info = jitted.cache_info()
    assert (info.misses, info.hits) == (3, 1)


def test_shapes_and_dtypes_are_part_of_the_key():
    jitted = dualad.jit(lambda x: x + 1)
    jitted(dualad.ones(2))
    jitted(dualad.ones(3))
    jitted(dualad.ones(3, dtype=dualad.float32))
    jitted(dualad.ones(3).mT if False else dualad.ones(4)[::2])  # other strides
    assert jitted.cache_info().misses == 4


# ---------------------------------------------------------------------------------------------
# outputs


def test_outputs_tensors_numbers_none_strings():
    jitted = dualad.jit(lambda x: {"y": x * 2, "n": 3, "none": None, "s": "ok", "t": (x,)})
    for _ in range(2):
        out = jitted(tensor(1.0))
        assert same(out["y"], [2.0]) and out["n"] == 3 and out["none"] is None
        assert out["s"] == "ok" and same(out["t"][0], [1.0])


def test_bad_output_names_it():
    jitted = dualad.jit(lambda x: (x, object()))
    with pytest.raises(TypeError, match="output 1 of the function is a object"):
        jitted(tensor(1.0))


def test_arrays_in_arrays_out():
    jitted = dualad.jit(lambda x: (dualad.sin(x), x.sum()))
    for _ in range(2):
        y, s = jitted(np.array([1.0, 2.0]))
        assert type(y) is np.ndarray and type(s) is np.float64
        assert same(y, np.sin([1.0, 2.0])) and s == 3.0


def test_closed_over_tensor_is_a_constant():
    w = tensor(1.0, 2.0)
    jitted = dualad.jit(lambda x: x * w + dualad.exp(w))  # exp(w) is folded at trace time
    assert same(jitted(tensor(1.0, 1.0)), np.array([1.0, 2.0]) + np.exp([1.0, 2.0]))
    source = jitted.source(tensor(1.0, 1.0))
    assert len(source.splitlines()) == 4  # x * w, + the folded constant, return
    assert "c0" in source


def test_closed_over_tensor_that_requires_grad_runs_eagerly():
    w = tensor(1.0, 2.0).requires_grad_()
    jitted = dualad.jit(lambda x: (x * w).sum())
    for _ in range(2):
        out = jitted(tensor(3.0, 4.0))
        assert out.grad_fn is not None
        out.backward()
    assert same(w.grad, [6.0, 8.0])
    with pytest.raises(RuntimeError, match="requires grad"):
        jitted.source(tensor(3.0, 4.0))


# ---------------------------------------------------------------------------------------------
# random ops, side effects


def test_random_ops_draw_afresh_on_every_replay():
    jitted = dualad.jit(lambda x: x + dualad.randn(3) + dualad.rand(3))
    zero = dualad.zeros(3)
    draws = [np.asarray(jitted(zero)) for _ in range(3)]
    assert jitted.cache_info().hits == 2
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])
    dualad.manual_seed(7)
    first = np.asarray(jitted(zero))
    dualad.manual_seed(7)
    assert same(jitted(zero), first)  # replays draw from dualad's generators


def test_random_inside_vmap_different():
    jitted = dualad.jit(
        lambda x: dualad.vmap(lambda r: r + dualad.rand(2), randomness="different")(x)
    )
    out = np.asarray(jitted(dualad.zeros(4, 2)))
    assert len({tuple(row) for row in out}) == 4


# ---------------------------------------------------------------------------------------------
# in-place ops and views, inputs never mutated


def test_inplace_ops_and_views_replay():
    def fn(x):
        y = x.clone()
        y.mul_(2)
        view = y[0:2]
        view.add_(10)  # through a view: y sees it
        y[3] = view[0] * 3  # setitem reading a view
        return y, view * 1

    jitted = dualad.jit(fn)
    for values in ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]):
        x = tensor(*values)
        got, expected = jitted(x), fn(x)
        assert same(got[0], expected[0]) and same(got[1], expected[1])
        assert same(x, values)  # the input untouched
    assert jitted.cache_info().hits == 1


def test_inplace_on_an_input_mutates_it_as_eagerly():
    def fn(x):
        x.add_(1)
        return x * 2

    jitted = dualad.jit(fn)
    x = tensor(1.0)
    assert same(jitted(x), [4.0]) and same(x, [2.0])
    assert same(jitted(x), [6.0]) and same(x, [3.0])
    array = np.array([1.0])
    assert same(jitted(array), [4.0]) and same(array, [1.0])  # arrays passed in: never
    assert same(jitted(array), [4.0]) and same(array, [1.0])


def test_pure_functions_never_write_their_inputs():
    def fn(x):
        return (x.reshape(2, 2).mT * 2, x[1:])

    jitted = dualad.jit(fn)
    x = tensor(1.0, 2.0, 3.0, 4.0)
    for _ in range(2):
        out, tail = jitted(x)
        out.mul_(0)
        tail.zero_()
    # the outputs of a replay may alias the input as eagerly (x[1:] is a view): writing into
    # the view writes x, exactly as it does eagerly
    assert same(x, [1.0, 0.0, 0.0, 0.0])


def test_inplace_write_into_a_constant_runs_eagerly():
    def fn(x):
        out = dualad.zeros(2)
        out[0] = x[0]
        out.add_(x)
        return out * 2

    jitted = dualad.jit(fn)
    for values in ([1.0, 2.0], [3.0, 5.0]):
        assert same(jitted(tensor(*values)), fn(tensor(*values)))
    assert jitted.cache_info().eager_calls == 1
    with pytest.raises(RuntimeError, match="wrote a traced value into a tensor that is not"):
        jitted.source(tensor(1.0, 2.0))


def test_source_shows_the_optimised_program():
    def fn(x):
        a = dualad.sin(x)
        b = dualad.sin(x)  # CSE
        dualad.exp(x)  # dead
        return (a + b).reshape(2)  # no-op reshape

    jitted = dualad.jit(fn)
    source = jitted.source(tensor(1.0, 2.0))
    assert source.count("= u") == 1 and len(source.splitlines()) == 4
    assert source.splitlines()[0] == "def replay(s0):"
    assert same(jitted(tensor(1.0, 2.0)), 2 * np.sin([1.0, 2.0]))


def test_not_callable():
    with pytest.raises(TypeError, match="expected a callable"):
        dualad.jit(3)


def test_replay_errors_are_eager_errors():
    jitted = dualad.jit(lambda x, i: x[i] * 2)
    x = tensor(1.0, 2.0)
    assert same(jitted(x, dualad.tensor([1])), [4.0])
    with pytest.raises(IndexError) as caught:
        jitted(x, dualad.tensor([5]))  # a replay: out of bounds this time
    with pytest.raises(IndexError) as eager:
        x[dualad.tensor([5])]
    assert str(caught.value) == str(eager.value)


def test_constants_are_taken_when_the_trace_uses_them():
    w = tensor(1.0, 2.0)
    jitted = dualad.jit(lambda x: (x * w, w * 3))
    jitted(tensor(1.0, 1.0))
    w.add_(100)  # not seen by replays: the program holds the values the trace used
    scaled, constant = jitted(tensor(1.0, 1.0))
    assert same(scaled, [1.0, 2.0]) and same(constant, [3.0, 6.0])
    constant.add_(1)  # a returned constant is the caller's own
    assert same(jitted(tensor(1.0, 1.0))[1], [3.0, 6.0])


def test_a_constant_written_later_in_the_trace_keeps_its_value():
    def fn(x):
        with dualad.fwd.dual_level():
            d = dualad.fwd.make_dual(x * 1, dualad.ones(2))
            y = dualad.clamp(d, -1.0, 1.0)  # its tangent: where(mask, ones, 0)
            d.add_(x)  # writes d's tangent (a constant array) in place
            return dualad.fwd.unpack_dual(y).tangent

    jitted = dualad.jit(fn)
    for values in ([0.5, 2.0], [0.25, -3.0]):
        assert same(jitted(tensor(*values)), fn(tensor(*values)))


def test_keyword_arguments_are_traced_pytrees():
    jitted = dualad.jit(lambda x, *, scale: x * scale["a"])
    assert same(jitted(tensor(1.0), scale={"a": tensor(2.0)}), [2.0])
    assert same(jitted(tensor(1.0), scale={"a": tensor(3.0)}), [3.0])
    assert jitted.cache_info().hits == 1


def test_threads_trace_and_replay_independently():
    jitted = dualad.jit(lambda x: dualad.exp(x) * x)

    def work(k):
        xs = [tensor(float(k), float(i)) for i in range(20)]
        return all(same(jitted(x), np.exp(np.asarray(x)) * np.asarray(x)) for x in xs)

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(work, range(4)))
