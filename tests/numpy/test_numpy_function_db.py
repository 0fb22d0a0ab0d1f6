"""Every differentiable function of ``dualad.numpy``'s main namespace, from the database in
``numpy_function_db.py``, checked against NumPy itself:

- values, dtypes and shapes equal to ``numpy.<name>`` on the same arrays;
- the gradient (a random cotangent) equal to central differences of NumPy's function;
- forward mode (``dualad.func.jvp``) equal to central differences of NumPy's function;
- ``vmap`` over a new leading axis of the first differentiated array equal to a Python loop;
- the same call through NumPy's protocols (``numpy.<name>(tensors)``): the same values and
  the same gradient.

Finite differences of NumPy's own function make the reference independent of dualad; the
database keeps its samples clear of kinks and jumps.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy_function_db import CALLS

import dualad
import dualad.numpy as dnp
from dualad import func
from dualad.numpy.coverage import rows
from dualad.testing._numeric import flatten_outputs, numerical_jvp, numerical_vjp

RNG = np.random.default_rng(7)
PARAMS = [pytest.param(c, id=c.id) for c in CALLS]
DIFF = [p for p in PARAMS if p.values[0].diff]
VIAS = {"dualad.numpy": dnp, "numpy": np}


def _array_paths(value, path):
    if isinstance(value, list):
        return [p for j, v in enumerate(value) for p in _array_paths(v, (*path, j))]
    return [path] if isinstance(value, np.ndarray) else []


def leaf_paths(c):
    """Where the differentiated arrays are: (position, then indices in nested lists)."""
    return [p for i in c.diff for p in (_array_paths(c.args[i], (i,)) or [(i,)])]


def _at(value, path):
    for i in path:
        value = value[i]
    return value


def leaf_arrays(c):
    return [np.asarray(_at(c.args, p), float) for p in leaf_paths(c)]


def as_tensors(value):
    if isinstance(value, np.ndarray):
        return dualad.tensor(value)
    if isinstance(value, list):
        return [as_tensors(v) for v in value]
    return value


def with_leaves(args, paths, leaves):
    """``args`` with ``leaves`` at ``paths`` (the lists on the way copied, never changed)."""
    args = list(args)
    for path, leaf in zip(paths, leaves):
        holder = args
        for i in path[:-1]:
            holder[i] = list(holder[i])
            holder = holder[i]
        holder[path[-1]] = leaf
    return args


def run(c, module, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return flatten_outputs(c.call(module, args))


def reference(c, leaves=None):
    """NumPy's outputs (a flat list) on the sample, or with ``leaves`` in the diff slots."""
    args = c.args if leaves is None else with_leaves(c.args, leaf_paths(c), leaves)
    return [np.asarray(o) for o in run(c, np, args)]


def ours(c, module, leaves):
    """dualad's outputs through ``module`` with the tensors ``leaves`` in the diff slots."""
    return run(c, module, with_leaves(as_tensors(list(c.args)), leaf_paths(c), leaves))


def floating(outputs):
    return [i for i, o in enumerate(outputs) if np.asarray(o).dtype.kind == "f"]


def close(got, want, rtol, atol, what):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("c", PARAMS)
@pytest.mark.parametrize("via", VIAS)
def test_values_dtypes_and_shapes_match_numpy(c, via):
    if via == "numpy" and not c.protocol:
        pytest.skip("NumPy's function takes no array to dispatch on")
    before = [np.copy(a) for a in c.args if isinstance(a, np.ndarray)]
    want = reference(c)
    got = run(c, VIAS[via], as_tensors(list(c.args)))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, dualad.Tensor), type(g)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), (g.shape, g.dtype, w.shape, w.dtype)
        if c.values:
            close(g.numpy(), w, 1e-12, 1e-12, c.id)
    for a, b in zip([a for a in c.args if isinstance(a, np.ndarray)], before):
        np.testing.assert_array_equal(a, b)  # never mutated


@pytest.mark.parametrize("c", DIFF)
@pytest.mark.parametrize("via", VIAS)
def test_gradient_matches_finite_differences_of_numpy(c, via):
    if via == "numpy" and not c.protocol:
        pytest.skip("NumPy's function takes no array to dispatch on")
    arrays = leaf_arrays(c)
    leaves = [dualad.tensor(a, requires_grad=True) for a in arrays]
    outs = ours(c, VIAS[via], leaves)
    keep = floating(reference(c))
    cts = [RNG.normal(size=np.shape(outs[i])) for i in keep]
    loss = sum((dnp.sum(outs[i] * dualad.tensor(ct)) for i, ct in zip(keep, cts)), 0.0)
    if isinstance(loss, dualad.Tensor) and loss.requires_grad:
        grads = dualad.autograd.grad(loss, leaves, allow_unused=True)
    else:  # (a constant result: imag of a real input)
        grads = [None] * len(leaves)

    def f(*xs):
        outputs = reference(c, list(xs))
        return tuple(outputs[i] for i in keep)

    expected = numerical_vjp(f, arrays, range(len(arrays)), cts)
    for k, (g, e) in enumerate(zip(grads, expected)):
        close(np.zeros_like(e) if g is None else g.numpy(), e, 1e-5, 1e-6, f"{c.id}: arg {k}")


@pytest.mark.parametrize("c", DIFF)
def test_forward_mode_matches_finite_differences_of_numpy(c):
    arrays = leaf_arrays(c)
    tangents = [RNG.normal(size=a.shape) for a in arrays]
    keep = floating(reference(c))

    def ours_f(*xs):
        outputs = ours(c, dnp, list(xs))
        return tuple(outputs[i] for i in keep)

    def numpy_f(*xs):
        outputs = reference(c, list(xs))
        return tuple(outputs[i] for i in keep)

    _, tangent = func.jvp(
        ours_f, tuple(dualad.tensor(a) for a in arrays), tuple(dualad.tensor(t) for t in tangents)
    )
    expected = numerical_jvp(numpy_f, arrays, tangents)
    for k, (t, e) in enumerate(zip(tangent, expected)):
        close(t.numpy(), e, 1e-5, 1e-6, f"{c.id}: output {k}")


@pytest.mark.parametrize("c", [p for p in DIFF if p.values[0].vmap])
def test_vmap_matches_a_loop(c):
    first, *rest = leaf_arrays(c)
    others = [dualad.tensor(a) for a in rest]
    batch = np.stack([first, first * 0.75 + 0.125, -first])

    def g(x):
        return tuple(ours(c, dnp, [x, *others]))

    batched = dualad.vmap(g)(dualad.tensor(batch))
    looped = [g(dualad.tensor(b)) for b in batch]
    for k, out in enumerate(batched):
        want = np.stack([loop[k].numpy() for loop in looped])
        assert out.dtype == want.dtype
        close(out.numpy(), want, 1e-12, 1e-12, f"{c.id}: output {k}")


def test_every_differentiable_numpy_function_has_a_call():
    names = {c.name for c in CALLS}
    listed = {row.name for row in rows("numpy") if row.status == "differentiable"}
    assert not listed - names, sorted(listed - names)


def test_arguments_that_are_not_differentiated_raise_when_tracked_and_bad_input_raises():
    x = dualad.tensor(np.arange(6.0).reshape(2, 3))
    w = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(dualad.TrackedConversionError):  # (weights choose: no derivative)
        dnp.quantile(x, 0.5, axis=1, method="inverted_cdf", weights=w)
    with pytest.raises(ValueError, match="Only method 'inverted_cdf' supports weights"):
        dnp.quantile(x, 0.5, axis=1, weights=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="non-negative"):
        dnp.quantile(x, 0.5, axis=1, method="inverted_cdf", weights=[1.0, -2.0, 3.0])
    with pytest.raises(ValueError, match="all zero"):
        dnp.quantile(x, 0.5, axis=1, method="inverted_cdf", weights=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        dnp.interp(x, [0.0, 1.0], [1.0, 2.0], period=0)
    with pytest.raises(ValueError, match="reflect_type"):
        dnp.pad(x, 1, mode="reflect", reflect_type="nope")
    with pytest.raises(ValueError, match="stat_length of 0"):
        dnp.pad(x, 1, mode="maximum", stat_length=0)
