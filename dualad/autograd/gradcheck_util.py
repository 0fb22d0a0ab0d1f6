"""gradcheck's vocabulary: its error, its messages, its options and the small helpers every
part of it uses (host copies of values, the differentiable inputs and outputs, tolerances).

Numbers are compared on the host as NumPy arrays (``_host``); ``_tensor_like`` makes a fresh
tensor on an input's device. Nothing here runs the function under test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._backend import xp_of
from .._tensor import Tensor, wrap
from .._tree import flatten


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when a check fails."""


_FAST_MODE_SEED = 67280421310721  # u and v are the same in every call, like PyTorch's

FAILED_NONDET_MSG = """

NOTE: if the backward of an op relies on nondeterministic operations (atomic adds on a GPU,
say), this failure may be expected: call gradcheck/gradgradcheck with `nondet_tol=<tol>`.
"""

FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
Batched gradients (Jacobians, Hessians, is_grads_batched) run dualad.vmap over the backward
pass, so every op its VJP rules call must have a batching rule that gives the same values as a
loop (or the loop fallback). If the op cannot be batched, call gradcheck/gradgradcheck with
`check_batched_grad=False`; otherwise fix the op's batching rule or the VJP that uses a
vmap-incompatible operation (randomness, in-place writes into unbatched tensors, .item()).
""".strip()

FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled automatically when both `check_batched_grad=True` and
`check_forward_ad=True`, but can be disabled with `check_batched_forward_grad=False`.
Batched forward gradients run dualad.vmap over the JVP: every op the JVP rules call must
have a batching rule that gives the same values as a loop.
""".strip()

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. If the test manually invokes gradcheck/gradgradcheck, call it with
`fast_mode=False` as a keyword argument.
""".strip()

_UNDEFINED_GRAD_WARNING = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, you "
    'can call this function with "check_undefined_grad=False" to disable the feature'
)
_UNDEFINED_GRAD_NOTE = (
    'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
)


# ---------------------------------------------------------------------------------------------
# small helpers


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _flat_function(func: Callable, inputs: tuple) -> tuple[Callable, tuple]:
    """``func`` as a function of the leaves of its (nested) arguments, returning a flat tuple.

    Tensors inside lists, tuples and dicts of ``inputs`` become inputs of their own (the
    checks below only see flat tuples); nested outputs are flattened the same way. Flat
    arguments and outputs keep ``func`` and ``inputs`` as they are.
    """
    leaves, rebuild = flatten(inputs)
    nested_inputs = any(isinstance(x, (list, tuple, dict)) for x in inputs)

    def flat_func(*args):
        out = func(*rebuild(list(args))) if nested_inputs else func(*args)
        if isinstance(out, (list, tuple, dict)):
            return tuple(flatten(out)[0])
        return out

    return flat_func, tuple(leaves)


def _is_float_or_complex(x) -> bool:
    return isinstance(x, Tensor) and x._data.dtype.kind in "fc"


def _diff_inputs(inputs: tuple) -> list:
    """The tensor inputs that require grad (the ones gradcheck differentiates)."""
    return [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]


def _diff_input_indices(inputs: tuple) -> list:
    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _differentiable_outputs(out) -> tuple:
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor) and o.requires_grad)


def _host(t) -> np.ndarray:
    """A NumPy copy of a tensor's (or array's) values."""
    data = t._data if isinstance(t, Tensor) else t
    if type(data) is not np.ndarray:
        data = data.get() if hasattr(data, "get") else np.asarray(data)
    return np.array(data, copy=True)


def _tensor_like(values: np.ndarray, like: Tensor) -> Tensor:
    """A fresh tensor holding ``values`` on ``like``'s device (dtype of ``values``)."""
    xp = xp_of(like._data)
    return wrap(xp.asarray(np.array(values, copy=True)))


def _shape_str(shape) -> str:
    return str(tuple(shape))


def _real_dtype(dtype) -> np.dtype:
    return np.empty((), dtype).real.dtype


def _allclose(a: np.ndarray, n: np.ndarray, rtol: float, atol: float) -> bool:
    """``|a - n| <= atol + rtol * |n|`` everywhere, after type promotion (torch.allclose)."""
    dtype = np.result_type(a, n)
    return bool(np.allclose(a.astype(dtype), n.astype(dtype), rtol=rtol, atol=atol))


def _random_unit_vector(rng: np.random.Generator, tensor: Tensor, downcast_complex=False):
    dtype = tensor._data.dtype
    if downcast_complex:
        dtype = _real_dtype(dtype)
    vec = rng.random(int(tensor._data.size))
    norm = np.linalg.norm(vec)
    if norm > 0:
        vec = vec / norm
    return vec.astype(dtype)


def _zeros_for(t: Tensor, batch: int | None = None) -> Tensor:
    xp = xp_of(t._data)
    shape = tuple(t.shape) if batch is None else (batch, *t.shape)
    return wrap(xp.zeros(shape, dtype=t._data.dtype))


def _random_like(rng: np.random.Generator, t: Tensor) -> Tensor:
    values = rng.standard_normal(t.shape)
    if t._data.dtype.kind == "c":
        values = values + 1j * rng.standard_normal(t.shape)
    return _tensor_like(np.asarray(values).astype(t._data.dtype), t)


# ---------------------------------------------------------------------------------------------
# messages


def _notallclose_msg(a, n, output_idx: int, input_idx: int, case: Case) -> str:
    complex_indices, is_forward_ad = case.complex_indices, case.use_forward_ad
    out_is_complex = (not is_forward_ad) and complex_indices and output_idx in complex_indices
    inp_is_complex = is_forward_ad and complex_indices and input_idx in complex_indices
    part = "imaginary" if case.test_imag else "real"
    element = "inputs" if is_forward_ad else "outputs"
    prefix = (
        f"While considering the {part} part of complex {element} only, "
        if (out_is_complex or inp_is_complex)
        else ""
    )
    mode = "computed with forward mode " if is_forward_ad else ""
    return (
        prefix
        + f"Jacobian {mode}mismatch for output {output_idx} with respect to input {input_idx},\n"
        f"numerical:{_format(n)}\nanalytical:{_format(a)}\n"
    )


def _format(values) -> str:
    return repr(wrap(np.asarray(values)))


def _batched_grad_failure_msg(output_idx, input_idx, res, exp, is_forward_ad=False) -> str:
    note = FAILED_BATCHED_GRAD_MSG_FWD_AD if is_forward_ad else FAILED_BATCHED_GRAD_MSG
    return (
        f"For output {output_idx} and input {input_idx}:\n\n{note}\n\n"
        f"Got:\n{res}\n\nExpected:\n{exp}"
    )


# ---------------------------------------------------------------------------------------------
# what one check is given


@dataclass(frozen=True)
class Options:
    """``gradcheck``'s settings, as the checks read them (see ``gradcheck`` for each)."""

    eps: float
    atol: float
    rtol: float
    nondet_tol: float
    check_undefined_grad: bool
    check_grad_dtypes: bool
    check_batched_grad: bool
    check_batched_forward_grad: bool
    check_forward_ad: bool
    check_backward_ad: bool
    fast_mode: bool
    masked: bool


class Case(NamedTuple):
    """One comparison of analytical against numerical derivatives: ``func`` at ``inputs``
    (``func_out`` its result, ``outputs`` the differentiable ones), in reverse mode or forward
    mode (``use_forward_ad``). For the real/imaginary part of complex outputs (reverse) or inputs
    (forward), ``complex_indices`` lists them and ``test_imag`` says which part this is."""

    func: Callable[..., Any]
    func_out: Any
    inputs: tuple
    outputs: tuple
    use_forward_ad: bool = False
    complex_indices: list | None = None
    test_imag: bool = False
