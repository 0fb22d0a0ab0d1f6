"""The composition fuzz test's random programs (elementwise ops, reductions, matmul, views,
in-place writes on views and bases, setitem, custom Functions, detach, no_grad ...) through
``dualad.jit``: the value, ``func.grad``, ``func.jacfwd`` and ``func.vmap`` of ``func.grad`` of
each program, traced on one input and replayed on another, equal eager to the last bit.

A route that raises eagerly (an error PyTorch gives for that program) must raise under jit too.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, note, settings
from test_composition_fuzz import programs, run

import dualad
import dualad.func as F


def _arrays(value):
    return [np.asarray(v.detach()) for v in dualad._tree.flatten(value)[0]]


def _routes(prog):
    def value(x):
        return run(prog, x)

    def loss(x):
        out = run(prog, x)
        return (out * out.conj()).real.sum() if out.dtype.kind == "c" else (out * out).sum()

    return {
        "value": value,
        "grad": F.grad(loss),
        "jacfwd": F.jacfwd(value),
        "vmap(grad)": dualad.vmap(F.grad(loss)),
    }


def _eager(fn, x):
    try:
        return fn(x), None
    except Exception as exc:  # (the fuzz test checks which errors are allowed)
        return None, type(exc)


@settings(max_examples=2 * settings.default.max_examples, deadline=None)
@given(programs())
def test_jit_of_random_programs_equals_eager(prog):
    note(repr(prog))
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(prog.shape) for _ in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn in _routes(prog).items():
            jitted = dualad.jit(fn)
            for x0 in inputs:
                if name == "vmap(grad)":
                    x0 = np.stack([x0, 2 * x0])
                expected, error = _eager(fn, dualad.tensor(x0))
                if error is not None:
                    try:
                        jitted(dualad.tensor(x0))
                    except error:
                        continue
                    raise AssertionError(f"{name}: eager raised {error.__name__}, jit did not")
                got = jitted(dualad.tensor(x0))
                for a, b in zip(_arrays(got), _arrays(expected)):
                    assert a.dtype == b.dtype and a.shape == b.shape, name
                    assert np.array_equal(a, b, equal_nan=True), name
