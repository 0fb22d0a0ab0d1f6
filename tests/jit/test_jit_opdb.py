"""Every op of the op database through ``dualad.jit``: forward values and the VJP (``func.vjp``)
equal eager to the last bit, on the traced call and on a REPLAY with other input values (a
concrete value that leaked into the program as a constant would show there).

The default run takes each op's first claimed dtype and its first two samples; the full sweep
(every dtype, every sample) is marked ``slow``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad
from dualad import func
from dualad._tree import flatten
from dualad.testing._numeric import as_numpy, to_tensor
from dualad.testing.opdb import all_ops

INFOS = all_ops()


def _substitute(tree, mapping: dict):
    if isinstance(tree, dualad.Tensor):
        return mapping.get(id(tree), tree)
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*[_substitute(t, mapping) for t in tree])
    if isinstance(tree, (tuple, list)):
        return type(tree)(_substitute(t, mapping) for t in tree)
    if isinstance(tree, dict):
        return {k: _substitute(v, mapping) for k, v in tree.items()}
    return tree


def _function(info, sample):
    """``(f, leaves)``: ``f(*leaves)`` calls the op on the sample with its differentiable
    tensors replaced by ``f``'s arguments (everything else closed over)."""
    args, kwargs, leaves = sample.tensors(requires_grad=False)

    def f(*xs):
        mapping = {id(leaf): x for leaf, x in zip(leaves, xs)}
        return info.fn(*_substitute(args, mapping), **_substitute(kwargs, mapping))

    return f, leaves


def _arrays(tree) -> list:
    out = []
    for leaf in flatten(tree)[0]:
        if isinstance(leaf, dualad.Tensor):
            out.append(as_numpy(leaf))
        elif isinstance(leaf, (np.ndarray, np.generic)):
            out.append(np.asarray(leaf))
        else:
            out.append(leaf)
    return out


def _assert_equal(got, expected, what: str) -> None:
    a, b = _arrays(got), _arrays(expected)
    assert len(a) == len(b), what
    for x, y in zip(a, b):
        if isinstance(y, np.ndarray):
            assert isinstance(x, np.ndarray), what
            assert x.dtype == y.dtype and x.shape == y.shape, what
            assert np.array_equal(x, y, equal_nan=y.dtype.kind in "fc"), what
        else:
            assert x == y or (x != x and y != y), what


def _perturbed(leaves: list) -> list:
    """Other values of the same shapes and dtypes (floating ones nudged, others kept)."""
    out = []
    for leaf in leaves:
        data = as_numpy(leaf)
        if data.dtype.kind in "fc":
            data = data * (1 + 1e-3) + 1e-4
        out.append(to_tensor(data.copy()))
    return out


def _check(info, dtype, sample) -> None:
    f, leaves = _function(info, sample)
    if not leaves:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jitted = dualad.jit(f)
        _assert_equal(jitted(*leaves), f(*leaves), f"{info.name} forward (traced)")
        other = _perturbed(leaves)
        _assert_equal(jitted(*other), f(*other), f"{info.name} forward (replayed)")
        expected = f(*other)
        outs = flatten(expected)[0]
        if not (
            info.differentiable
            and np.dtype(dtype).kind in "fc"
            and all(isinstance(o, dualad.Tensor) and o.dtype.kind in "fc" for o in outs)
        ):
            return
        rng = np.random.default_rng(0)
        cts = [
            to_tensor(rng.standard_normal(o.shape).astype(o.dtype)) for o in outs
        ]  # (real cotangents: complex outputs take them as well)
        if isinstance(expected, dualad.Tensor):
            ct = cts[0]
        elif hasattr(expected, "_fields"):  # (named results: slogdet, lu, qr, ...)
            ct = type(expected)(*cts)
        else:
            ct = type(expected)(cts)

        def vjp(xs, ct):
            out, pullback = func.vjp(f, *xs)
            return out, pullback(ct)

        jitted = dualad.jit(vjp)
        _assert_equal(jitted(leaves, ct), vjp(leaves, ct), f"{info.name} vjp (traced)")
        _assert_equal(jitted(other, ct), vjp(other, ct), f"{info.name} vjp (replayed)")


def _cases(full: bool) -> list:
    cases = []
    for info in INFOS:
        dtypes = info.dtypes if full else info.dtypes[:1]
        for dtype in dtypes:
            cases.append(pytest.param(info, dtype, id=f"{info.name}-{np.dtype(dtype).name}"))
    return cases


def _run(info, dtype, limit) -> None:
    samples = info.sample_inputs(dtype)
    for sample in samples[:limit]:
        try:
            sample.tensors(requires_grad=False)
        except Exception:  # (the registry tests report bad samples)
            continue
        _check(info, dtype, sample)


@pytest.mark.parametrize("info, dtype", _cases(full=False))
def test_jit_matches_eager(info, dtype):
    _run(info, dtype, 2)


@pytest.mark.slow
@pytest.mark.parametrize("info, dtype", _cases(full=True))
def test_jit_matches_eager_every_sample(info, dtype):
    _run(info, dtype, None)
