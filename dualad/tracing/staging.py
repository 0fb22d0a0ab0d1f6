"""Staging ``dualad.jit`` under the tape: a call with inputs that require grad.

Such a call (grad mode on, no transform level active, every argument a plain floating Tensor
and no tangent) replays the jitted forward on the detached inputs and records ONE tape node
(a ``Function``) whose backward is itself a jitted program: ``func.vjp`` of ``fn``, traced once
per signature of ``(inputs, cotangents)``. The backward recomputes the forward inside its
program (nothing but the inputs is saved). Under ``create_graph=True`` that backward program is
called with inputs that require grad, so it is staged the same way: grad of grad of a jitted
function is two staged nodes, each a traced program, and every order is the derivative of the
order below it (no rule is approximated).

Calls that do not fit (keyword or static arguments, integer or complex inputs, outputs that are
not floating Tensors, a program that writes in place, draws random numbers (the backward would
draw others) or runs eagerly) run ``fn`` eagerly under the tape, as before.

>>> import dualad
>>> f = dualad.jit(lambda x: (dualad.sin(x) * x).sum())
>>> x = dualad.tensor([0.5, 1.0], requires_grad=True)
>>> y = f(x)
>>> y.grad_fn.name()
'JitBackward'
>>> y.backward()
>>> bool(((x.grad - (dualad.cos(x) * x + dualad.sin(x))).abs() < 1e-15).all())
True
"""

from __future__ import annotations

from .._random import _replaying_rng, _rng_state
from .._state import GRAD
from .._tensor import Tensor
from ..autograd.function import Function
from ..func import vjp
from .signature import signature


class Jit(Function):
    """The tape node of a staged ``dualad.jit`` call (see the module docstring)."""

    @staticmethod
    def forward(ctx, jitted, outputs, *inputs):
        ctx.jitted = jitted
        ctx.save_for_backward(*inputs)
        return outputs

    @staticmethod
    def backward(ctx, *cotangents):
        inputs = ctx.saved_tensors
        program = backward_program(ctx.jitted, len(inputs), len(cotangents))
        grads = program(*inputs, *cotangents)
        return (None, None, *grads)


def backward_program(jitted, n_inputs: int, n_outputs: int):
    """The jitted VJP of ``jitted.fn`` for ``n_inputs`` inputs and ``n_outputs`` outputs: a
    function of the inputs and the cotangents returning one gradient per input."""
    key = (n_inputs, n_outputs)
    found = jitted._backward.get(key)
    if found is None:
        fn = jitted.fn

        def fn_vjp(*values):
            primals, cotangents = values[:n_inputs], values[n_inputs:]
            out, pull = vjp(fn, *primals)
            return tuple(pull(cotangents if type(out) is tuple else cotangents[0]))

        found = jitted._backward[key] = type(jitted)(fn_vjp, (), (), jitted.max_traces)
    return found


def stageable(jitted, args: tuple, kwargs: dict) -> bool:
    """Whether a call that the cache cannot replay (``signature``'s fallback) can be staged."""
    if kwargs or jitted._static or not args or not GRAD.enabled or GRAD.levels:
        return False
    tracked = False
    for a in args:
        if type(a) is not Tensor or a._fw or a.dtype.kind != "f":
            return False
        tracked = tracked or a.requires_grad
    return tracked


def _floating(out) -> bool:
    if type(out) is tuple:
        return bool(out) and all(type(o) is Tensor and o.dtype.kind == "f" for o in out)
    return type(out) is Tensor and out.dtype.kind == "f"


def _fits(programs) -> bool:
    return not any(p.written or p.random or p.eager_only is not None for p in programs)


def staged_call(jitted, args: tuple):
    """Run a call with inputs that require grad as one ``Jit`` node (or eagerly, see above)."""
    detached = tuple([a.detach() for a in args])
    previous = GRAD.enabled
    GRAD.enabled = False
    try:
        key, _ = signature(detached, {}, jitted._static, jitted._names)
        programs = jitted._cache.get(key, ())
        if not _fits(programs):
            out = None
        else:
            # (a trace that turns out to draw random numbers: the eager call below draws the
            # same ones, and leaves the generators as one call would)
            states = _rng_state()
            out = jitted(*detached)
            programs = jitted._cache.get(key, ())
    finally:
        GRAD.enabled = previous
    if out is not None and _floating(out) and _fits(programs):
        return Jit.apply(jitted, out, *args)
    jitted._eager += 1
    if out is not None:
        with _replaying_rng(states):
            return jitted.fn(*args)
    return jitted.fn(*args)


__all__ = ["Jit", "staged_call", "stageable"]
