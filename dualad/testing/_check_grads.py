"""``check_grads``: reverse- and forward-mode derivatives (and their compositions) against
central finite differences.

The function is differentiated with ``dualad.func.vjp`` / ``dualad.func.jvp``, which compose in
any order, and evaluated for the finite differences as a black box on NumPy arrays
(``_numeric.numerical_vjp`` / ``numerical_jvp``), so a wrong rule cannot hide in both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._creation import zeros_like
from ..func import jvp, vjp
from ..rev.grad_mode import no_grad
from ._numeric import (
    as_numpy,
    flatten_outputs,
    is_differentiable_dtype,
    numerical_jvp,
    numerical_vjp,
    random_like,
    to_tensor,
)

__all__ = ["check_grads"]

_MODES = ("fwd", "rev")
# what a derivative of each order is called, by the chain of modes (innermost first)
_NAMES = {
    ("rev",): "VJP",
    ("fwd",): "JVP",
    ("rev", "rev"): "grad-of-grad",
    ("fwd", "fwd"): "jvp-of-jvp",
    ("rev", "fwd"): "jvp-of-grad",
}


def _describe(path: tuple) -> str:
    name = _NAMES.get(path, " of ".join(reversed(path)))
    mode = path[-1] if len(set(path)) == 1 else "-of-".join(reversed(path))
    return f"mode {mode!r}, order {len(path)} ({name})"


def _is_array_like(value) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


class _Program:
    """``fn`` over ``args`` with the floating/complex array arguments as the variables."""

    def __init__(self, fn: Callable, args: Sequence):
        self.fn = fn
        self.args = list(args)
        self.positions = [
            i
            for i, a in enumerate(self.args)
            if _is_array_like(a) and is_differentiable_dtype(as_numpy(a).dtype)
        ]

    def call(self, variables):
        """``fn`` with the variables (dualad tensors) put in their positions."""
        args = list(self.args)
        for i, v in zip(self.positions, variables):
            args[i] = v
        return self.fn(*args)

    def outputs(self, variables) -> list:
        """The differentiable outputs of ``call`` (flattened; others dropped)."""
        outs = flatten_outputs(self.call(variables))
        return [o for o in outs if _is_array_like(o) and is_differentiable_dtype(o.dtype)]


def _tensors(arrays) -> list:
    return [to_tensor(a) for a in arrays]


def _derivative(program: _Program, mode: str, arrays: list, rng) -> _Program:
    """A program computing the ``mode`` derivative of ``program`` along a fixed random
    cotangent (rev) or tangent (fwd) drawn at ``arrays``; its variables are the same."""
    with no_grad():
        outs = [as_numpy(o) for o in program.outputs(_tensors(arrays))]
    if mode == "rev":
        cotangents = [random_like(rng, o) for o in outs]

        def derived(*variables):
            _, pullback = vjp(lambda *v: tuple(program.outputs(v)), *variables)
            grads = pullback(tuple(_tensors(cotangents)))
            return tuple(zeros_like(v) if g is None else g for g, v in zip(grads, variables))

    else:
        tangents = [random_like(rng, a) for a in arrays]

        def derived(*variables):
            _, out_tangents = jvp(
                lambda *v: tuple(program.outputs(v)), tuple(variables), tuple(_tensors(tangents))
            )
            return tuple(out_tangents)

    return _Program(derived, [np.asarray(a) for a in arrays])


def _compare(actual: list, expected: list, what: str, path: tuple, atol, rtol) -> None:
    for k, (a, e) in enumerate(zip(actual, expected)):
        a = np.zeros_like(e) if a is None else as_numpy(a)
        e = np.asarray(e)
        if a.shape != e.shape:
            raise AssertionError(
                f"check_grads: {_describe(path)}: {what} {k} has shape {a.shape}, "
                f"finite differences give {e.shape}"
            )
        diff = np.abs(a - e)
        if not np.all(diff <= atol + rtol * np.abs(e)):
            raise AssertionError(
                f"check_grads: {_describe(path)}: {what} {k} does not match finite "
                f"differences: max difference {float(np.max(diff)):.3g} "
                f"(atol={atol}, rtol={rtol})\nanalytic:\n{a}\nnumerical:\n{e}"
            )


def _check_first_order(program: _Program, mode: str, arrays, path, rng, eps, atol, rtol):
    def evaluate(*values):
        with no_grad():
            return [as_numpy(o) for o in program.outputs(_tensors(values))]

    variables = _tensors(arrays)
    if mode == "rev":
        outs = program.outputs(variables)
        cotangents = [random_like(rng, as_numpy(o)) for o in outs]
        _, pullback = vjp(lambda *v: tuple(program.outputs(v)), *variables)
        analytic = list(pullback(tuple(_tensors(cotangents))))
        numeric = numerical_vjp(evaluate, arrays, range(len(arrays)), cotangents, eps)
        _compare(analytic, list(numeric), "gradient of input", path, atol, rtol)
    else:
        tangents = [random_like(rng, a) for a in arrays]
        _, analytic = jvp(
            lambda *v: tuple(program.outputs(v)), tuple(variables), tuple(_tensors(tangents))
        )
        expected = numerical_jvp(evaluate, arrays, tangents, eps)
        _compare(list(analytic), expected, "tangent of output", path, atol, rtol)


def check_grads(
    f: Callable,
    args: Sequence,
    modes: Sequence[str] = ("fwd", "rev"),
    order: int = 2,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> None:
    """Check ``f``'s derivatives against central finite differences, up to ``order``.

    ``f(*args)`` returns a dualad tensor or a (nested) tuple/list of tensors. The variables are
    the arguments that are floating or complex tensors/arrays (NumPy arrays are turned into
    dualad tensors); other arguments (integers, Python scalars, options) are passed unchanged.
    Use float64 inputs: the differences are taken in the inputs' dtype.

    - ``"rev"``: the VJP along a random cotangent, compared with central differences of
      ``<cotangent, f>``; at order 2 also the VJP of that VJP (grad-of-grad);
    - ``"fwd"``: the JVP along a random tangent, compared with ``(f(x + eps t) - f(x - eps t)) /
      2 eps``; at order 2 also the JVP of the JVP;
    - both modes at order 2: also the JVP of the VJP (forward-over-reverse, as in Hessians).

    Higher orders continue the same way. Raises ``AssertionError`` naming the mode, the order
    and the greatest difference at the first mismatch; returns None when everything matches.

    >>> import dualad
    >>> check_grads(lambda x: dualad.sin(x) * x, (dualad.tensor([0.5, 1.0]),))
    """
    modes = tuple(modes)
    for mode in modes:
        if mode not in _MODES:
            raise ValueError(f"check_grads: unknown mode {mode!r}; expected 'fwd' or 'rev'")
    if order < 1:
        raise ValueError(f"check_grads: order must be at least 1, got {order}")
    program = _Program(f, args)
    if not program.positions:
        raise ValueError("check_grads: no floating or complex tensor among the arguments")
    arrays = [np.array(as_numpy(program.args[i])) for i in program.positions]
    rng = np.random.default_rng(seed)
    _check_tree(program, arrays, modes, order, (), rng, eps, atol, rtol)


def _check_tree(program, arrays, modes, order, path, rng, eps, atol, rtol) -> None:
    # after a forward-mode step only forward mode follows (jvp-of-jvp, jvp-of-grad)
    allowed = ("fwd",) if path and path[-1] == "fwd" else ("rev", "fwd")
    for mode in (m for m in allowed if m in modes):
        _check_first_order(program, mode, arrays, (*path, mode), rng, eps, atol, rtol)
    if len(path) + 1 >= order:
        return
    for mode in (m for m in allowed if m in modes):
        derived = _derivative(program, mode, arrays, rng)
        _check_tree(derived, arrays, modes, order, (*path, mode), rng, eps, atol, rtol)
