"""dualad.vmap: the API (in_dims/out_dims, pytrees, chunks, errors), BatchedTensor, randomness,
in-place ops, the per-example fallback, and composition with forward and reverse mode."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import dualad
from dualad import fwd
from dualad._dispatch import OpDef, dispatch
from dualad.func import jvp
from dualad.vmap import BatchedTensor, PerformanceWarning, rules
from dualad.vmap import batched as batched_module

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal((3, 4))


def close(actual, expected, rtol=1e-12, atol=1e-12):
    if isinstance(actual, dualad.Tensor):
        actual = actual.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def t(array, **kwargs):
    return dualad.tensor(np.asarray(array), **kwargs)


# ---------------------------------------------------------------------------------------------
# in_dims / out_dims


def test_in_dims_int_tuple_none_and_negative():
    close(dualad.vmap(dualad.sin)(t(X)), np.sin(X))
    close(dualad.vmap(lambda r: r.sum(), in_dims=1)(t(X)), X.sum(0))
    close(dualad.vmap(lambda r: r.sum(), in_dims=-1)(t(X)), X.sum(0))
    close(dualad.vmap(lambda r: r.sum(), in_dims=-2)(t(X)), X.sum(1))
    out = dualad.vmap(lambda a, b: a * b, in_dims=(0, None))(t(X), t(Y[0]))
    close(out, X * Y[0])
    out = dualad.vmap(lambda a, b: a - b, in_dims=(1, 0))(t(X.T), t(Y))
    close(out, X - Y)


def test_out_dims():
    close(dualad.vmap(lambda r: r * 2, out_dims=1)(t(X)), (X * 2).T)
    close(dualad.vmap(lambda r: r * 2, out_dims=-1)(t(X)), (X * 2).T)
    close(dualad.vmap(lambda r: r * 2, out_dims=(1,))(t(X)), (X * 2).T)
    a, b = dualad.vmap(lambda r: (r, r.sum()), out_dims=(1, 0))(t(X))
    close(a, X.T)
    close(b, X.sum(1))
    # an unbatched output with out_dims=None passes through as is
    value, const = dualad.vmap(lambda r: (r, dualad.ones(2)), out_dims=(0, None))(t(X))
    close(const, np.ones(2))
    close(value, X)


def test_pytree_inputs_and_outputs():
    def f(pair, mapping):
        a, b = pair
        return {"sum": a + b + mapping["c"], "list": [a * mapping["c"], b]}

    out = dualad.vmap(f, in_dims=((0, 1), {"c": None}))((t(X), t(Y.T)), {"c": t(2.0)})
    close(out["sum"], X + Y + 2.0)
    close(out["list"][0], X * 2.0)
    close(out["list"][1], Y)
    # a leaf in in_dims applies to a whole subtree; out_dims may nest the same way
    out = dualad.vmap(f, in_dims=(0, None), out_dims={"sum": 1, "list": [0, 1]})(
        (t(X), t(Y)), {"c": t(3.0)}
    )
    close(out["sum"], (X + Y + 3.0).T)
    close(out["list"][1], Y.T)


def test_keyword_arguments_are_not_batched():
    out = dualad.vmap(lambda a, *, scale: a * scale)(t(X), scale=t(Y[0]))
    close(out, X * Y[0])


def test_unbatched_outputs_are_broadcast_along_the_batch():
    out = dualad.vmap(lambda r: dualad.ones(2), out_dims=1)(t(X))
    assert out.shape == (2, 3)
    close(out, np.ones((2, 3)))


def test_function_runs_once_per_call_and_once_per_chunk():
    calls = []

    def f(r):
        calls.append(type(r))
        return r * 2

    dualad.vmap(f)(t(np.zeros((10, 2))))
    assert calls == [BatchedTensor]
    calls.clear()
    out = dualad.vmap(f, chunk_size=4)(t(np.arange(20.0).reshape(10, 2)))
    assert len(calls) == 3
    close(out, np.arange(20.0).reshape(10, 2) * 2)


def test_chunks_with_out_dims_and_unbatched_arguments():
    x = RNG.standard_normal((7, 3))
    w = RNG.standard_normal(3)
    f = dualad.vmap(lambda r, v: (r * v, (r @ v)), in_dims=(0, None), out_dims=(1, 0), chunk_size=3)
    a, b = f(t(x), t(w))
    close(a, (x * w).T)
    close(b, x @ w)


def test_nested_vmap_outer_product_and_closures():
    x, y = RNG.standard_normal(3), RNG.standard_normal(4)
    out = dualad.vmap(dualad.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(
        t(x), t(y)
    )
    close(out, np.outer(x, y))
    # the inner function closes over a value of the outer level (a constant to the inner level)
    out = dualad.vmap(lambda a: dualad.vmap(lambda b: a * b + a)(t(y)))(t(x))
    close(out, np.outer(x, y) + x[:, None])
    # levels are told apart by identity: both batch the same physical tensor differently
    out = dualad.vmap(lambda a: dualad.vmap(lambda b: a - b)(t(x)))(t(x))
    close(out, x[:, None] - x[None, :])


def test_nested_vmap_of_reductions_and_matmul():
    a = RNG.standard_normal((2, 3, 4, 5))
    out = dualad.vmap(dualad.vmap(lambda m: (m @ m.T).sum(0), in_dims=1), in_dims=0)(t(a))
    expected = np.stack([[a[i, :, j] @ a[i, :, j].T for j in range(4)] for i in range(2)]).sum(2)
    close(out, expected)


def test_empty_batch():
    out = dualad.vmap(lambda r: dualad.exp(r).sum())(t(np.zeros((0, 3))))
    assert out.shape == (0,)


def test_func_vmap_is_vmap():
    from dualad import func

    assert func.vmap is dualad.vmap


# ---------------------------------------------------------------------------------------------
# errors


def _name_error(fn, kind, message):
    with pytest.raises(kind, match=re.escape(message)):
        fn()


def test_batch_size_mismatch():
    _name_error(
        lambda: dualad.vmap(dualad.add)(t(np.zeros(2)), t(np.zeros(3))),
        ValueError,
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
        "[2, 3] for the mapped dimension",
    )


def test_in_dims_errors():
    x = t(X)

    def f(*args):
        return args[0]

    with pytest.raises(
        ValueError,
        match=r"Got in_dim=2 for some input, but that input is a Tensor of dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2",
    ):
        dualad.vmap(f, in_dims=2)(x)
    with pytest.raises(ValueError, match=r"Got in_dim=-3"):
        dualad.vmap(f, in_dims=-3)(x)
    with pytest.raises(
        ValueError, match="in_dims is not compatible with the structure of `inputs`"
    ):
        dualad.vmap(f, in_dims=(0, 0))(x)
    with pytest.raises(
        ValueError, match="in_dims is not compatible with the structure of `inputs`"
    ):
        dualad.vmap(f, in_dims=([0, 0],))((x, x))
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        dualad.vmap(f, in_dims=({"a": 0},))({"b": x})
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        dualad.vmap(f, in_dims=[0])(x)
    with pytest.raises(ValueError, match="in_dim must be either an integer dimension or None"):
        dualad.vmap(f, in_dims=(0.5,))(x)
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        dualad.vmap(f, in_dims=(0, 0))(x, "3.0")
    with pytest.raises(ValueError, match="got no inputs"):
        dualad.vmap(f)()
    with pytest.raises(ValueError, match="vmap: Expected at least one Tensor to vmap over"):
        dualad.vmap(f, in_dims=(None,))(x)
    # a 0-d tensor has no dim to map over
    with pytest.raises(ValueError, match="dimensionality 0"):
        dualad.vmap(f)(t(1.0))


def test_out_dims_errors():
    x = t(X)
    with pytest.raises(ValueError, match=r"out_dim=2 does not fit an output with 2 dimensions"):
        dualad.vmap(lambda r: r, out_dims=2)(x)
    with pytest.raises(
        ValueError, match="out_dims is not compatible with the structure of `outputs`"
    ):
        dualad.vmap(lambda r: (r, r), out_dims=(0, 0, 0))(x)
    with pytest.raises(ValueError, match="out_dims is not compatible"):
        dualad.vmap(lambda r: r, out_dims=(0, 1))(x)
    with pytest.raises(ValueError, match="`out_dims` must be an int, None or a python collection"):
        dualad.vmap(lambda r: r, out_dims="0")(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        dualad.vmap(lambda r: r, out_dims=None)(x)
    with pytest.raises(ValueError, match="must only return Tensors, got type <class 'float'>"):
        dualad.vmap(lambda r: 1.0)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        dualad.vmap(lambda r: (r, None))(x)
    # non-tensor outputs are fine with out_dims None
    out, extra = dualad.vmap(lambda r: (r, "label"), out_dims=(0, None))(x)
    assert extra == "label" and out.shape == (3, 4)


def test_argument_errors():
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got wrong"
        ),
    ):
        dualad.vmap(dualad.sin, randomness="wrong")
    with pytest.raises(ValueError, match=r"chunk_size should be None or greater than 0. \(got 0\)"):
        dualad.vmap(dualad.sin, chunk_size=0)


def test_errors_leave_no_level_behind():
    from dualad._state import ACTIVE, GRAD

    def bad(r):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        dualad.vmap(bad)(t(X))
    with pytest.raises(ValueError):
        dualad.vmap(lambda r: 1.0)(t(X))
    assert GRAD.levels == [] and ACTIVE == []


def test_op_errors_propagate():
    with pytest.raises(RuntimeError):
        dualad.vmap(lambda a, b: a @ b)(t(np.zeros((3, 2))), t(np.zeros((3, 3))))


# ---------------------------------------------------------------------------------------------
# BatchedTensor


def test_batched_tensor_reports_logical_metadata():
    seen = {}

    def f(r):
        seen.update(
            shape=r.shape,
            ndim=r.ndim,
            dim=r.dim(),
            size=r.size(),
            size1=r.size(-1),
            numel=r.numel(),
            len=len(r),
            dtype=r.dtype,
            device=str(r.device),
            type=type(r),
            is_complex=r.is_complex(),
            iter=[tuple(row.shape) for row in r],
        )
        return r

    dualad.vmap(f, in_dims=1)(t(np.zeros((5, 3, 4), dtype=np.float32)))
    assert seen == {
        "shape": (5, 4),
        "ndim": 2,
        "dim": 2,
        "size": (5, 4),
        "size1": 4,
        "numel": 20,
        "len": 5,
        "dtype": np.float32,
        "device": "cpu",
        "type": BatchedTensor,
        "is_complex": False,
        "iter": [(4,)] * 5,
    }


def test_batched_tensor_repr():
    text = []
    dualad.vmap(lambda r: text.append(repr(r)) or r, in_dims=1)(t(X))
    assert text[0].startswith("BatchedTensor(lvl=1, bdim=1, value=\n    tensor(")
    nested = []
    dualad.vmap(dualad.vmap(lambda r: nested.append(repr(r)) or r))(t(np.zeros((2, 3, 1))))
    assert nested[0].startswith("BatchedTensor(lvl=2, bdim=0, value=\n    BatchedTensor(lvl=1")


@pytest.mark.parametrize(
    "use",
    [
        lambda r: r.sum().item(),
        lambda r: bool(r.sum() > 0),
        lambda r: float(r.sum()),
        lambda r: int(r.sum()),
        lambda r: r.numpy(),
        lambda r: r.tolist(),
        lambda r: np.asarray(r),
        lambda r: 1 if r[0] > 0 else 0,
    ],
    ids=["item", "bool", "float", "int", "numpy", "tolist", "asarray", "if"],
)
def test_per_example_values_raise(use):
    with pytest.raises(RuntimeError, match=r"dualad\.vmap: .* on a batched tensor \(vmap level 1"):
        dualad.vmap(use)(t(X))


def test_tensor_values_as_static_arguments_raise_clearly():
    # a shape given as a batched tensor has no value per call (index tensors are arguments and
    # batch: test_batched_index.py)
    shape = t(np.array([[4], [4], [4]]))
    with pytest.raises(RuntimeError, match="Tensor values used as static arguments"):
        dualad.vmap(lambda r, s: r.reshape(tuple(s._data)))(t(X), shape)
    index = t(np.array([[0], [1], [2]]))
    close(dualad.vmap(lambda r, i: r[i])(t(X), index), X[np.arange(3), [0, 1, 2]][:, None])
    out = dualad.vmap(lambda r, i: dualad.take_along_dim(r, i, dim=0))(t(X), index)
    close(out, X[np.arange(3), [0, 1, 2]][:, None])


def test_escaped_batched_tensor_raises():
    kept = []
    dualad.vmap(lambda r: kept.append(r) or r)(t(X))
    with pytest.raises(RuntimeError, match="escaped its vmap"):
        kept[0] + 1
    assert "escaped" in repr(kept[0])


def test_backward_inside_vmap_raises():
    x = t(X, requires_grad=True)

    def f(r):
        r.sum().backward()
        return r

    with pytest.raises(RuntimeError, match=r"backward\(\) called inside a dualad\.vmap transform"):
        dualad.vmap(f)(x)
    with pytest.raises(RuntimeError, match=r"backward\(\) called inside a dualad\.vmap transform"):
        dualad.vmap(lambda r: (x.sum().backward(), r)[1])(t(X))


def test_requires_grad_on_batched_raises_not_implemented():
    with pytest.raises(NotImplementedError, match=r"requires_grad_\(\) on a batched tensor"):
        dualad.vmap(lambda r: r.requires_grad_())(t(X))
    # it reports the value's flag
    seen = []
    dualad.vmap(lambda r: seen.append(r.requires_grad) or r)(t(X, requires_grad=True))
    assert seen == [True]


def test_detach_and_like_constructors():
    def f(r):
        zeros = dualad.zeros_like(r)  # unbatched: the same for every example
        assert type(zeros) is dualad.Tensor and zeros.shape == r.shape
        return r.detach() + zeros + dualad.ones_like(r)

    close(dualad.vmap(f)(t(X, requires_grad=True)), X + 1)


# ---------------------------------------------------------------------------------------------
# randomness


RANDOM_CALLS = [
    lambda r: dualad.rand(2),
    lambda r: dualad.randn(2),
    lambda r: dualad.randint(0, 10, (2,)),
    lambda r: dualad.rand_like(r),
    lambda r: dualad.randn_like(r),
]


@pytest.mark.parametrize(
    "draw", RANDOM_CALLS, ids=["rand", "randn", "randint", "rand_like", "randn_like"]
)
def test_random_ops_raise_by_default(draw):
    with pytest.raises(RuntimeError, match=re.escape(batched_module.RANDOM_MESSAGE)):
        dualad.vmap(draw)(t(X))


@pytest.mark.parametrize(
    "draw", RANDOM_CALLS, ids=["rand", "randn", "randint", "rand_like", "randn_like"]
)
def test_random_same_and_different(draw):
    same = dualad.vmap(lambda r: draw(r) + 0 * r.sum(), randomness="same")(t(np.zeros((4, 2))))
    assert same.shape == (4, 2)
    values = same.numpy()
    assert (values == values[0]).all()
    different = dualad.vmap(lambda r: draw(r) + 0 * r.sum(), randomness="different")(
        t(np.zeros((4, 2)))
    )
    assert different.shape == (4, 2)
    values = different.numpy()
    assert len({tuple(row) for row in values}) > 1


def test_random_different_draws_a_batched_value():
    seen = []

    def f(r):
        noise = dualad.randn(3)
        seen.append((type(noise), noise.shape))
        return noise

    out = dualad.vmap(f, randomness="different")(t(np.zeros(5)))
    assert seen == [(BatchedTensor, (3,))] and out.shape == (5, 3)


def test_nested_randomness():
    def inner(r):
        return dualad.rand(2) + 0 * r

    # outer different, inner same: rows differ along the outer batch only
    out = dualad.vmap(dualad.vmap(inner, randomness="same"), randomness="different")(
        t(np.zeros((3, 4, 2)))
    ).numpy()
    assert out.shape == (3, 4, 2)
    assert (out == out[:, :1]).all()
    assert not (out == out[:1]).all()
    # an "error" level anywhere outside still forbids it
    with pytest.raises(RuntimeError, match="random operations inside of vmap"):
        dualad.vmap(dualad.vmap(inner, randomness="same"))(t(np.zeros((3, 4, 2))))


def test_random_same_with_chunks_is_the_same_in_every_chunk():
    out = dualad.vmap(lambda r: dualad.rand(2) + 0 * r, randomness="same", chunk_size=2)(
        t(np.zeros((5, 2)))
    ).numpy()
    assert (out == out[0]).all()


def test_random_outside_vmap_unaffected():
    dualad.manual_seed(3)
    a = dualad.rand(2).numpy()
    dualad.manual_seed(3)
    assert (dualad.rand(2).numpy() == a).all()


# ---------------------------------------------------------------------------------------------
# in-place ops


def test_inplace_on_batched_values():
    def f(r):
        y = r * 1
        y.add_(1)
        y.mul_(2)
        y[0] = 5.0
        y[1:3] = r[1:3]
        return y

    expected = (X + 1) * 2
    expected[:, 0] = 5.0
    expected[:, 1:3] = X[:, 1:3]
    close(dualad.vmap(f)(t(X)), expected)
    close(dualad.vmap(f, in_dims=1, out_dims=1)(t(X.T)), expected.T)


def test_inplace_with_batched_and_unbatched_operands():
    w = RNG.standard_normal(4)
    # batched target, unbatched value
    close(dualad.vmap(lambda r, v: (r * 1).add_(v), in_dims=(0, None))(t(X), t(w)), X + w)
    # batched value into a tensor that is not batched: torch's error
    with pytest.raises(RuntimeError, match=r"vmap: add_\(self, \*extra_args\) is not possible"):
        dualad.vmap(lambda r, v: v.clone().add_(r), in_dims=(0, None))(t(X), t(w))
    with pytest.raises(RuntimeError, match="is not possible because there exists a Tensor `other`"):
        dualad.vmap(lambda r, v: v.clone().__setitem__(0, r[0]), in_dims=(0, None))(t(X), t(w))


def test_inplace_on_an_input_writes_through():
    x = t(X.copy())
    dualad.vmap(lambda r: r.mul_(2), in_dims=1)(x)
    close(x, X * 2)


def test_inplace_on_batched_views_reaches_the_base():
    def f(r):
        y = r.clone()
        y[1:].zero_()
        y.narrow(0, 0, 1).fill_(3.0)
        return y

    expected = np.zeros_like(X)
    expected[:, 0] = 3.0
    close(dualad.vmap(f)(t(X)), expected)


def test_inplace_fill_with_batched_value():
    out = dualad.vmap(lambda r: (r * 0).fill_(r.sum()))(t(X))
    close(out, np.repeat(X.sum(1, keepdims=True), 4, axis=1))


# ---------------------------------------------------------------------------------------------
# the per-example fallback


def _probe_op(name):
    """An unregistered op (no batching rule): ``x * 3`` for any shape."""
    return OpDef(name, lambda xp, x: x * 3, vjp=lambda *a: None, jvp=lambda *a: None)


def test_op_without_rule_raises():
    op = _probe_op("vmap_probe_a")
    with pytest.raises(
        RuntimeError, match=r"dualad\.vmap: no batching rule for 'vmap_probe_a' at vmap level 1"
    ):
        dualad.vmap(lambda r: dispatch(op, (r,), {}))(t(X))
    with pytest.raises(RuntimeError, match="at vmap level 2"):
        dualad.vmap(dualad.vmap(lambda r: dispatch(op, (r,), {})))(t(np.zeros((2, 3, 4))))


def test_loop_batched_op_falls_back_with_one_warning(monkeypatch):
    op = _probe_op("vmap_probe_b")
    monkeypatch.setattr(rules, "LOOP_BATCHED", rules.LOOP_BATCHED | {"vmap_probe_b"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = dualad.vmap(lambda r: dispatch(op, (r,), {}), in_dims=1)(t(X))
        again = dualad.vmap(dualad.vmap(lambda r: dispatch(op, (r,), {})))(t(np.ones((2, 3, 4))))
    close(out, X.T * 3)
    close(again, np.full((2, 3, 4), 3.0))
    performance = [w for w in caught if issubclass(w.category, PerformanceWarning)]
    assert len(performance) == 1
    assert (
        "There is a performance drop because we have not yet implemented the batching rule for vmap_probe_b"
        in str(performance[0].message)
    )


def test_data_dependent_op_with_different_shapes():
    x = t(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PerformanceWarning)
        with pytest.raises(
            RuntimeError,
            match="'nonzero' has no batching rule and its per-example results have different shapes",
        ):
            dualad.vmap(dualad.nonzero)(x)
        same = dualad.vmap(dualad.nonzero)(t(np.array([[1.0, 0.0], [0.0, 2.0]])))
    close(same, np.array([[[0]], [[1]]]))


# ---------------------------------------------------------------------------------------------
# reverse mode: grad of vmap through the eager tape (the physical ops are recorded)


def _loss(r, w):
    hidden = dualad.tanh(r * w).sum() * r
    hidden.mul_(2.0)  # in place on a value with history: the saved inputs stay valid
    return (hidden**2).sum()


def test_grad_of_vmap_through_the_tape():
    x = t(X, requires_grad=True)
    w = t(Y[0], requires_grad=True)
    out = dualad.vmap(_loss, in_dims=(0, None))(x, w)
    out.sum().backward()
    x_ref = t(X, requires_grad=True)
    w_ref = t(Y[0], requires_grad=True)
    dualad.stack([_loss(x_ref[b], w_ref) for b in range(3)]).sum().backward()
    close(out, dualad.stack([_loss(t(X[b]), t(Y[0])) for b in range(3)]).numpy())
    close(x.grad, x_ref.grad.numpy(), rtol=1e-10)
    close(w.grad, w_ref.grad.numpy(), rtol=1e-10)


def test_inplace_on_a_leaf_that_requires_grad_raises():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        dualad.vmap(lambda r: r.add_(1))(t(X, requires_grad=True))


# ---------------------------------------------------------------------------------------------
# forward mode: dual levels inside and outside the vmap level


def _f(a, b):
    return dualad.sin(a) * b + (a * a).sum()


def _f_jvp(a, b, ta, tb):
    return np.cos(a) * ta * b + np.sin(a) * tb + 2 * (a * ta).sum()


def test_vmap_of_jvp():
    ta, tb = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    out, tangent = dualad.vmap(lambda a, b, u, v: jvp(_f, (a, b), (u, v)))(t(X), t(Y), t(ta), t(tb))
    close(out, np.stack([_f(t(X[i]), t(Y[i])).numpy() for i in range(3)]))
    close(tangent, np.stack([_f_jvp(X[i], Y[i], ta[i], tb[i]) for i in range(3)]))


def test_jvp_of_vmap():
    ta, tb = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 3))
    out, tangent = jvp(dualad.vmap(_f, in_dims=(0, 1)), (t(X), t(Y.T)), (t(ta), t(tb)))
    close(out, np.stack([_f(t(X[i]), t(Y[i])).numpy() for i in range(3)]))
    close(tangent, np.stack([_f_jvp(X[i], Y[i], ta[i], tb[:, i]) for i in range(3)]))


def test_vmap_over_tangents_gives_the_jacobian():
    x = X[0]

    def column(u):
        return jvp(lambda a: dualad.sin(a) * a.sum(), (t(x),), (u,))[1]

    jacobian = dualad.vmap(column, out_dims=1)(t(np.eye(4)))
    expected = np.diag(np.cos(x) * x.sum()) + np.sin(x)[:, None] * np.ones(4)[None, :]
    close(jacobian, expected)


def test_make_dual_and_unpack_dual_inside_vmap():
    tangents = RNG.standard_normal((3, 4))

    def f(a, u):
        with fwd.dual_level():
            dual = fwd.make_dual(a, u)
            y = dualad.exp(dual).sum()
            primal, tangent = fwd.unpack_dual(y)
        return primal, tangent

    primal, tangent = dualad.vmap(f)(t(X), t(tangents))
    close(primal, np.exp(X).sum(1))
    close(tangent, (np.exp(X) * tangents).sum(1))


def test_dual_level_outside_vmap():
    tangents = RNG.standard_normal((3, 4))
    with fwd.dual_level():
        dual = fwd.make_dual(t(X), t(tangents))
        y = dualad.vmap(lambda r: (r * r).sum(), in_dims=0)(dual)
        primal, tangent = fwd.unpack_dual(y)
    close(primal, (X * X).sum(1))
    close(tangent, (2 * X * tangents).sum(1))


def test_inplace_on_batched_dual_updates_its_tangent():
    tangents = RNG.standard_normal((3, 4))

    def f(a, u):
        with fwd.dual_level():
            dual = fwd.make_dual(a * 1, u)
            dual.mul_(dual)
            return fwd.unpack_dual(dual).tangent

    close(dualad.vmap(f)(t(X), t(tangents)), 2 * X * tangents)


def test_dual_level_outside_vmap_over_tangents():
    # gradcheck's batched forward-grad pattern: the dual level is entered before vmap, and the
    # dual number is made inside from an unbatched primal and a batched tangent
    x, tangents = X[0], RNG.standard_normal((3, 4))
    with fwd.dual_level():

        def column(u):
            dual = fwd.make_dual(t(x), u)
            return fwd.unpack_dual(dualad.sin(dual) * dual.sum()).tangent

        out = dualad.vmap(column)(t(tangents))
    expected = np.stack([np.cos(x) * u * x.sum() + np.sin(x) * u.sum() for u in tangents])
    close(out, expected)


def test_dual_level_outside_vmap_batched_primal_and_tangent():
    tangents = RNG.standard_normal((3, 4))
    with fwd.dual_level():

        def f(a, u):
            dual = fwd.make_dual(a, u)
            primal, tangent = fwd.unpack_dual(dualad.exp(dual) * 2)
            return primal, tangent

        primal, tangent = dualad.vmap(f, in_dims=(1, 0))(t(X.T), t(tangents))
        # nested vmaps between the dual level and make_dual
        nested = dualad.vmap(dualad.vmap(lambda a, u: f(a, u)[1]))(
            t(X.reshape(3, 2, 2)), t(tangents.reshape(3, 2, 2))
        )
    close(primal, np.exp(X) * 2)
    close(tangent, np.exp(X) * tangents * 2)
    close(nested, (np.exp(X) * tangents * 2).reshape(3, 2, 2))


def test_unpack_dual_inside_vmap_of_a_dual_made_outside():
    tangents = RNG.standard_normal((3, 4))
    with fwd.dual_level():
        dual = fwd.make_dual(t(X), t(tangents))
        out = dualad.vmap(lambda r: fwd.unpack_dual(r * r).tangent, in_dims=1, out_dims=1)(dual)
    close(out, 2 * X * tangents)


def test_setitem_with_a_batched_mask():
    def f(r):
        y = r * 1
        y[y < 0] = 0.0
        y[(y > 0.5,)] = dualad.tensor(0.5)
        return y

    close(dualad.vmap(f)(t(X)), np.clip(X, 0.0, 0.5))
    # grad of vmap through the masked write
    x = t(X, requires_grad=True)
    dualad.vmap(f)(x).sum().backward()
    close(x.grad, ((X > 0) & (X <= 0.5)).astype(float))


def test_a_numpy_array_of_higher_rank_on_either_side_of_a_batched_operand():
    # (a NumPy array was taken for a scalar by the elementwise rule: ``s * t`` with a batched
    # 0-d ``s`` and a closed-over array ``t`` met the batch dim and failed to broadcast)
    s, grid = np.arange(1.0, 4.0), np.linspace(0.0, 1.0, 5)
    expected = s[:, None] * grid
    close(dualad.func.vmap(lambda a: a * grid)(s), expected)
    close(dualad.func.vmap(lambda a: grid * a)(s), expected)
    close(dualad.func.vmap(lambda a: a - grid[None])(s[:, None, None]), s[:, None, None] - grid)
    jac = dualad.func.jacfwd(lambda z: z[0] * -grid)(np.array([2.0, 1.0]))
    close(jac, np.stack([-grid, np.zeros(5)], axis=1))
