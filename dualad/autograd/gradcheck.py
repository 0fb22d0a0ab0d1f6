"""Check analytical gradients against finite differences (``torch.autograd.gradcheck``).

``gradcheck(fn, inputs)`` compares, for every differentiable input and output, the Jacobian the
reverse engine computes (one VJP per output element) with central differences; ``fast_mode``
compares one random projection ``v^T J u`` instead; ``check_forward_ad`` does the same for the
forward engine (dual levels). ``gradgradcheck`` runs ``gradcheck`` on the function that computes
the gradient with ``create_graph=True``. The order of the checks and the error messages follow
PyTorch's (spec/forward.md §5), because tests assert which error wins.

Invariants:

- Numbers are compared on the host as NumPy arrays; finite differences perturb the input's own
  buffer in place (the function sees the perturbed tensor object) and restore it exactly.
- A Jacobian w.r.t. input ``x`` and output ``y`` is a 2-D array of shape
  ``(x.numel(), y.numel())``.
- Complex numbers: backward checks split complex outputs into their imaginary, then real, parts;
  forward checks split complex inputs the same way. The numerical column of a complex input
  element ``z = a + ib`` is ``ds/da + 1j * ds/db`` (the conjugate Wirtinger convention that
  ``dualad.autograd.grad`` follows).
- Fast mode draws ``u`` and ``v`` from a private generator: the user's RNG is not touched.
- ``raise_exception=False`` turns only ``GradcheckError`` into ``False``; argument assertions,
  input validation and errors raised by the user's function propagate.

>>> import dualad
>>> x = dualad.tensor([0.5, 1.0, 2.0], dtype=dualad.float64, requires_grad=True)
>>> gradcheck(dualad.sin, (x,))
True
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import fwd
from .._backend import xp_of
from .._tensor import Tensor, wrap
from .._tree import flatten
from ..rev.engine import grad as _autograd_grad

__all__ = [
    "GradcheckError",
    "get_analytical_jacobian",
    "get_numerical_jacobian",
    "gradcheck",
    "gradgradcheck",
]


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


# ---------------------------------------------------------------------------------------------
# finite differences


def _check_outputs_same_dtype_and_shape(out1, out2, eps, idx=None) -> None:
    # AssertionError on purpose (not GradcheckError): raise_exception=False must not hide it
    on_index = f"on index {idx} " if idx is not None else ""
    assert out1.shape == out2.shape, (
        "Expected `func` to return outputs with the same shape when inputs are perturbed "
        f"{on_index}by {eps}, but got: shapes {_shape_str(out1.shape)} and "
        f"{_shape_str(out2.shape)}."
    )
    assert out1.dtype == out2.dtype, (
        "Expected `func` to return outputs with the same dtype when inputs are perturbed "
        f"{on_index}by {eps}, but got: dtypes {out1.dtype} and {out2.dtype}."
    )


def _evaluate(func: Callable, inputs: tuple) -> list:
    """Host copies of ``func``'s float/complex tensor outputs (copies: outputs may alias inputs)."""
    return [_host(o) for o in _as_tuple(func(*inputs)) if _is_float_or_complex(o)]


class _Perturbation:
    """Writes perturbations into an input's buffer and restores it exactly afterwards."""

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor
        self.original_data = tensor._data
        # a read-only NumPy buffer (a broadcast, say): perturb a private copy (CuPy arrays
        # have no writeable flag and are always writeable)
        if not getattr(tensor._data.flags, "writeable", True):
            tensor._data = tensor._data.copy()
        self.data = tensor._data
        self.saved = self.data.copy()
        self.xp = xp_of(self.data)

    def set(self, delta, index=None) -> None:
        """Buffer = saved + delta (a full array, or a scalar at ``index``)."""
        if index is None:
            self.data[...] = self.saved + self.xp.asarray(delta)
        else:
            self.data[index] = self.saved[index] + delta

    def reset(self, index=None) -> None:
        if index is None:
            self.data[...] = self.saved
        else:
            self.data[index] = self.saved[index]

    def close(self) -> None:
        self.data[...] = self.saved
        self.tensor._data = self.original_data


def _central_difference(func, inputs, pert: _Perturbation, delta, eps, index=None, idx=None):
    """``(f(x + delta) - f(x - delta)) / (2 eps)`` per float/complex output, flattened."""
    try:
        pert.set(-delta, index)
        outa = _evaluate(func, inputs)
        pert.set(delta, index)
        outb = _evaluate(func, inputs)
    finally:
        pert.reset(index)
    result = []
    for a, b in zip(outa, outb):
        _check_outputs_same_dtype_and_shape(a, b, eps, idx)
        result.append(((b - a) / (2 * eps)).reshape(-1))
    return result


def _numerical_jvp(func, inputs, pert, u, eps, *, input_is_complex, index=None, idx=None):
    """Numerical ``J u`` per output for one input. ``u``: a step direction (array or scalar at
    ``index``), or a pair ``(ur, ui)`` for a complex input; the result for a complex input is the
    conjugate Wirtinger form ``ds/dx(ur) + 1j * ds/dy(ui)``."""
    ur, ui = u if isinstance(u, tuple) else (u, u)
    ds_dx = _central_difference(func, inputs, pert, ur * eps, eps, index, idx)
    if not input_is_complex:
        return ds_dx
    ds_dy = _central_difference(func, inputs, pert, ui * eps * 1j, eps, index, idx)
    return [dx + 1j * dy for dx, dy in zip(ds_dx, ds_dy)]


def _numerical_jacobian(func, inputs, eps, *, target_indices=None) -> list:
    """Per differentiable input (or per index in ``target_indices``), a list with one
    ``(input.numel(), output.numel())`` Jacobian per float/complex output, by perturbing one
    element at a time."""
    if target_indices is None:
        target_indices = _diff_input_indices(inputs)
    jacobians = []
    for i in target_indices:
        inp = inputs[i]
        is_complex = inp._data.dtype.kind == "c"
        pert = _Perturbation(inp)
        rows = []
        try:
            for index in np.ndindex(*inp._data.shape):
                rows.append(
                    _numerical_jvp(
                        func,
                        inputs,
                        pert,
                        1.0,
                        eps,
                        input_is_complex=is_complex,
                        index=index,
                        idx=index,
                    )
                )
        finally:
            pert.close()
        n_out = len(rows[0]) if rows else len(_evaluate(func, inputs))
        per_output = []
        for k in range(n_out):
            if rows:
                per_output.append(np.stack([row[k] for row in rows]))
            else:
                out = _evaluate(func, inputs)[k]
                dtype = np.result_type(out.dtype, inp._data.dtype)
                per_output.append(np.zeros((0, out.size), dtype))
        jacobians.append(per_output)
    return jacobians


# ---------------------------------------------------------------------------------------------
# analytical Jacobians (reverse mode)


def _grad_output_tensor(values: np.ndarray, output: Tensor) -> Tensor:
    return _tensor_like(values.astype(output._data.dtype).reshape(output.shape), output)


def _vjp_rows(output: Tensor, diff_inputs: list, grad_outputs) -> list:
    """One ``grad`` call per grad_output; returns per input the list of gradients (or None)."""
    rows: list = [[] for _ in diff_inputs]
    for go in grad_outputs:
        grads = _autograd_grad(output, diff_inputs, go, retain_graph=True, allow_unused=True)
        for i, g in enumerate(grads):
            rows[i].append(None if g is None else _host(g) if isinstance(g, Tensor) else g)
    return rows


def _stack_and_check(rows: list, diff_inputs: list, n_columns: int) -> tuple:
    """Jacobians ``(inp.numel(), n_columns)`` from gradient rows, and the size/dtype flags."""
    sizes_ok = True
    types_ok = True
    jacobians = []
    for inp, column_list in zip(diff_inputs, rows):
        jac = np.zeros((int(inp._data.size), n_columns), dtype=inp._data.dtype)
        for j, g in enumerate(column_list):
            if g is None:
                continue
            if tuple(g.shape) != tuple(inp.shape):
                sizes_ok = False
                continue
            if g.dtype != inp._data.dtype:
                types_ok = False
            jac[:, j] = g.reshape(-1)
        jacobians.append(jac)
    return jacobians, sizes_ok, types_ok


def _jacobians_equal(j1: list, j2: list, tol: float) -> bool:
    return all(not (a.size != 0 and np.max(np.abs(a - b)) > tol) for a, b in zip(j1, j2))


def _analytical_jacobian_checked(inputs, output, nondet_tol, check_grad_dtypes, v=None):
    """Reverse-mode Jacobian rows of ``output`` (all of them, or ``v^T J`` when ``v`` is given),
    computed twice for the reentrancy check."""
    diff_inputs = _diff_inputs(inputs)
    if v is None:
        n = int(output._data.size)
        eye = np.eye(n, dtype=output._data.dtype)
        grad_outputs = [_grad_output_tensor(eye[j], output) for j in range(n)]
    else:
        n = 1
        grad_outputs = [_grad_output_tensor(v, output)]
    jac1, sizes_ok, types_ok = _stack_and_check(
        _vjp_rows(output, diff_inputs, grad_outputs), diff_inputs, n
    )
    jac2, _, _ = _stack_and_check(_vjp_rows(output, diff_inputs, grad_outputs), diff_inputs, n)
    reentrant = _jacobians_equal(jac1, jac2, nondet_tol)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + FAILED_NONDET_MSG
        )
    return jac1


# ---------------------------------------------------------------------------------------------
# analytical Jacobians (forward mode)


def _forward_jacobian(func, inputs, outputs_hint=None, *, check_grad_dtypes=False, all_u=None):
    """Forward-mode Jacobians ``[input][output]``: ``(inp.numel(), out.numel())`` arrays, or
    ``J u`` vectors ``(out.numel(),)`` when ``all_u`` (one direction per input) is given.

    Every differentiable input is passed as a dual of its detached value (zero tangent except
    the one being probed); other inputs are passed unchanged, so no input the function sees
    requires grad (spec R3).
    """
    diff_idx = _diff_input_indices(inputs)
    if any(inputs[i]._data.dtype.kind == "c" for i in diff_idx):
        raise ValueError(
            "Expected inputs to be non-complex for _get_analytical_jacobian_forward_ad."
        )
    jacobians: list = [[] for _ in diff_idx]

    def run(level_tangents: dict) -> list:
        call_inputs = []
        for i, x in enumerate(inputs):
            if i in level_tangents:
                x = fwd.make_dual(x.detach(), _tensor_like(level_tangents[i], x))
            call_inputs.append(x)
        result = []
        for o in _as_tuple(func(*call_inputs)):
            if not _is_float_or_complex(o):
                continue
            primal, tangent = fwd.unpack_dual(o)
            if (
                check_grad_dtypes
                and tangent is not None
                and primal.is_complex() != tangent.is_complex()
            ):
                raise GradcheckError("Forward AD gradient has dtype mismatch.")
            if tangent is None:
                result.append(np.zeros(int(o._data.size), dtype=o._data.dtype))
            else:
                result.append(_host(tangent).reshape(-1))
        return result

    zeros = {i: np.zeros(inputs[i].shape, dtype=inputs[i]._data.dtype) for i in diff_idx}
    with fwd.dual_level():
        for k, i in enumerate(diff_idx):
            inp = inputs[i]
            if all_u is not None:
                tangents = dict(zeros)
                tangents[i] = np.asarray(all_u[k]).reshape(inp.shape).astype(inp._data.dtype)
                jacobians[k] = run(tangents)
                continue
            columns = []
            for index in np.ndindex(*inp._data.shape):
                tangents = dict(zeros)
                one_hot = np.zeros(inp.shape, dtype=inp._data.dtype)
                one_hot[index] = 1.0
                tangents[i] = one_hot
                columns.append(run(tangents))
            if columns:
                jacobians[k] = [np.stack([c[o] for c in columns]) for o in range(len(columns[0]))]
            else:
                outs = [o for o in _as_tuple(func(*inputs)) if _is_float_or_complex(o)]
                jacobians[k] = [np.zeros((0, int(o._data.size)), o._data.dtype) for o in outs]
    return jacobians


# ---------------------------------------------------------------------------------------------
# messages


def _notallclose_msg(a, n, output_idx, input_idx, complex_indices, test_imag, is_forward_ad):
    out_is_complex = (not is_forward_ad) and complex_indices and output_idx in complex_indices
    inp_is_complex = is_forward_ad and complex_indices and input_idx in complex_indices
    part = "imaginary" if test_imag else "real"
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
# slow and fast checks


def _check_no_differentiable_outputs(func, inputs, eps) -> bool:
    for per_input in _numerical_jacobian(func, inputs, eps):
        for jacobian in per_input:
            if np.count_nonzero(jacobian) > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _numerical_for_outputs(func_out, per_input: list) -> list:
    """Keep the numerical Jacobians of differentiable outputs (numerical ones cover every
    float/complex output)."""
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_or_complex(o)]
    return [j for o, j in zip(float_outputs, per_input) if o.requires_grad]


def _slow_gradcheck(
    func,
    func_out,
    inputs,
    outputs,
    eps,
    rtol,
    atol,
    check_grad_dtypes,
    nondet_tol,
    *,
    use_forward_ad=False,
    complex_indices=None,
    test_imag=False,
):
    if not outputs:
        return _check_no_differentiable_outputs(func, inputs, eps)
    numerical = [
        _numerical_for_outputs(func_out, j) for j in _numerical_jacobian(func, inputs, eps)
    ]
    if use_forward_ad:
        analytical = _forward_jacobian(func, inputs, check_grad_dtypes=check_grad_dtypes)
        for j, (n_per_out, a_per_out) in enumerate(zip(numerical, analytical)):
            a_diff = _numerical_for_outputs(func_out, a_per_out)
            for i, (n, a) in enumerate(zip(n_per_out, a_diff)):
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(
                        _notallclose_msg(a, n, i, j, complex_indices, test_imag, True)
                    )
    else:
        for i, o in enumerate(outputs):
            analytical = _analytical_jacobian_checked(inputs, o, nondet_tol, check_grad_dtypes)
            for j, a in enumerate(analytical):
                n = numerical[j][i]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(
                        _notallclose_msg(a, n, i, j, complex_indices, test_imag, False)
                    )
    return True


def _random_grad_output(output: Tensor, non_contiguous: bool) -> Tensor:
    """gradgradcheck's default grad_output for ``output``: uniform in [-1, 1) (both parts, for
    complex), requiring grad. Drawn from dualad's global generator, as PyTorch draws from its
    own: ``dualad.manual_seed`` makes a failure reproducible."""
    from .._creation import rand

    dtype = output._data.dtype if output._data.dtype.kind in "fc" else np.dtype(np.float64)
    data = rand(tuple(output.shape), dtype=dtype, device=output.device)._data
    xp = xp_of(data)
    data = xp.asarray(data * 2 - (1 + 1j if dtype.kind == "c" else 1))  # 0-d stays an array
    if non_contiguous and data.ndim and data.size > 1:
        # the same values as a strided view into a wider buffer
        wide = xp.zeros((*data.shape[:-1], 2 * data.shape[-1]), dtype)
        wide[..., ::2] = data
        data = wide[..., ::2]
    return wrap(data.astype(dtype, copy=False)).requires_grad_()


def _make_vectors(inputs, outputs, *, use_forward_ad):
    rng = np.random.default_rng(_FAST_MODE_SEED)
    all_u = []
    for inp in _diff_inputs(inputs):
        ur = _random_unit_vector(rng, inp, downcast_complex=True)
        if inp._data.dtype.kind == "c":
            all_u.append((ur, _random_unit_vector(rng, inp, downcast_complex=True)))
        else:
            all_u.append(ur)
    all_v = None if use_forward_ad else [_random_unit_vector(rng, o) for o in outputs]
    return all_v, all_u


def _numerical_Ju(func, inputs, all_u, eps) -> list:
    """Per differentiable input, ``J u`` for every float/complex output (flattened)."""
    result = []
    for i, u in zip(_diff_input_indices(inputs), all_u):
        inp = inputs[i]
        pert = _Perturbation(inp)
        try:
            shaped = (
                tuple(p.reshape(inp.shape) for p in u)
                if isinstance(u, tuple)
                else u.reshape(inp.shape)
            )
            result.append(
                _numerical_jvp(
                    func, inputs, pert, shaped, eps, input_is_complex=inp._data.dtype.kind == "c"
                )
            )
        finally:
            pert.close()
    return result


def _adjusted_atol(atol, u, v) -> float:
    # |v^T A u - v^T B u| <= v^T E u with E all atol: scale atol by sum(u) * sum(v)
    u = u[0] if isinstance(u, tuple) else u
    sum_v = 1.0 if v is None else float(np.real(np.sum(v)))
    return atol * float(np.sum(u)) * sum_v


def _slow_mode_report(
    func, inputs, outputs, func_out, input_idx, output_idx, rtol, atol, eps, is_forward_ad
) -> str:
    """The slow-mode Jacobians of the failing pair, appended to a fast-mode failure."""
    numerical = _numerical_for_outputs(func_out, _numerical_jacobian(func, inputs, eps)[input_idx])
    slow_numerical = numerical[output_idx]
    if is_forward_ad:
        analytical = _forward_jacobian(func, inputs)[input_idx]
        slow_analytical = _numerical_for_outputs(func_out, analytical)[output_idx]
    else:
        slow_analytical = _analytical_jacobian_checked(
            inputs, outputs[output_idx], float("inf"), False
        )[input_idx]
    max_diff = (
        float(np.max(np.abs(slow_numerical - slow_analytical))) if slow_numerical.size else 0.0
    )
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode (a random projection v^T J u). Below, we recompute numerical and "
        "analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {_format(slow_numerical)}\n"
        f"Analytical:\n{_format(slow_analytical)}\n\n"
        f"The max per-element difference (slow mode) is: {max_diff}.\n"
    )
    if _allclose(slow_analytical, slow_numerical, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_gradcheck(
    func,
    func_out,
    inputs,
    outputs,
    eps,
    rtol,
    atol,
    check_grad_dtypes,
    nondet_tol,
    *,
    use_forward_ad=False,
    complex_indices=None,
    test_imag=False,
):
    all_v, all_u = _make_vectors(inputs, outputs, use_forward_ad=use_forward_ad)
    if not use_forward_ad and not outputs:
        for per_input in _numerical_Ju(func, inputs, all_u, eps):
            for ju in per_input:
                if ju.size and np.max(np.abs(ju)) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    numerical_Ju = [
        _numerical_for_outputs(func_out, ju) for ju in _numerical_Ju(func, inputs, all_u, eps)
    ]
    if use_forward_ad:
        analytical = [
            _numerical_for_outputs(func_out, per_input)
            for per_input in _forward_jacobian(
                func, inputs, check_grad_dtypes=check_grad_dtypes, all_u=all_u
            )
        ]
        numerical = numerical_Ju
    else:
        # v^T (J u) numerically, (v^T J) u analytically
        numerical = [
            [np.dot(v, ju) for v, ju in zip(all_v, per_input)] for per_input in numerical_Ju
        ]
        analytical = [[None] * len(outputs) for _ in all_u]
        for j, (o, v) in enumerate(zip(outputs, all_v)):
            vJ = _analytical_jacobian_checked(inputs, o, nondet_tol, check_grad_dtypes, v=v)
            for i, (vj, u) in enumerate(zip(vJ, all_u)):
                vj = vj[:, 0]
                if np.iscomplexobj(vj):
                    analytical[i][j] = np.dot(vj.real, u[0]) + 1j * np.dot(vj.imag, u[1])
                else:
                    analytical[i][j] = np.dot(vj, u)
    for i, per_input in enumerate(numerical):
        for j, n in enumerate(per_input):
            a = analytical[i][j]
            a_arr, n_arr = np.asarray(a), np.asarray(n)
            tol = _adjusted_atol(atol, all_u[i], all_v[j] if all_v else None)
            if not _allclose(a_arr, n_arr, rtol, tol):
                report = _slow_mode_report(
                    func, inputs, outputs, func_out, i, j, rtol, atol, eps, use_forward_ad
                )
                raise GradcheckError(
                    _notallclose_msg(a_arr, n_arr, j, i, complex_indices, test_imag, use_forward_ad)
                    + report
                )
    return True


# ---------------------------------------------------------------------------------------------
# complex splitting


def _real_and_imag_output(func):
    from ..ops import imag, real

    def apply(part):
        def wrapped(*inputs):
            return tuple(
                part(o) if isinstance(o, Tensor) and o.is_complex() else o
                for o in _as_tuple(func(*inputs))
            )

        return wrapped

    return apply(real), apply(imag)


def _part_leaf(x: Tensor, part: str) -> Tensor:
    data = x._data.real if part == "real" else x._data.imag
    leaf = wrap(data.copy())
    if x.requires_grad:
        leaf.requires_grad_()
    return leaf


def _real_and_imag_input(func, complex_indices, inputs):
    """``real_fn(a) = func(a + 1j * Im(x))`` and ``imag_fn(b) = func(Re(x) + 1j * b)`` for the
    complex inputs (the other part is a constant: never zero, so ``func`` gets valid inputs)."""
    constants = {
        i: (_part_leaf(inputs[i], "real").detach(), _part_leaf(inputs[i], "imag").detach())
        for i in complex_indices
    }

    def real_fn(*args):
        args = list(args)
        for i in complex_indices:
            args[i] = args[i] + constants[i][1] * 1j
        return _as_tuple(func(*args))

    def imag_fn(*args):
        args = list(args)
        for i in complex_indices:
            args[i] = constants[i][0] + args[i] * 1j
        return _as_tuple(func(*args))

    return real_fn, imag_fn


def _gradcheck_real_imag(
    check_fn,
    func,
    func_out,
    inputs,
    outputs,
    eps,
    rtol,
    atol,
    check_grad_dtypes,
    check_forward_ad,
    check_backward_ad,
    nondet_tol,
    check_undefined_grad,
):
    complex_out_indices = [i for i, o in enumerate(outputs) if o.is_complex()]
    has_any_complex_output = any(
        isinstance(o, Tensor) and o.is_complex() for o in _as_tuple(func_out)
    )
    if check_backward_ad:
        if has_any_complex_output:
            real_fn, imag_fn = _real_and_imag_output(func)
            imag_out = imag_fn(*inputs)
            check_fn(
                imag_fn,
                imag_out,
                inputs,
                _differentiable_outputs(imag_out),
                eps,
                rtol,
                atol,
                check_grad_dtypes,
                nondet_tol,
                complex_indices=complex_out_indices,
                test_imag=True,
            )
            real_out = real_fn(*inputs)
            check_fn(
                real_fn,
                real_out,
                inputs,
                _differentiable_outputs(real_out),
                eps,
                rtol,
                atol,
                check_grad_dtypes,
                nondet_tol,
                complex_indices=complex_out_indices,
            )
        else:
            check_fn(
                func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol
            )
    if check_forward_ad:
        complex_inp_indices = [
            i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.is_complex()
        ]
        if complex_inp_indices:
            real_fn, imag_fn = _real_and_imag_input(func, complex_inp_indices, inputs)
            imag_inputs = tuple(
                _part_leaf(x, "imag") if i in complex_inp_indices else x
                for i, x in enumerate(inputs)
            )
            imag_out = imag_fn(*imag_inputs)
            check_fn(
                imag_fn,
                imag_out,
                imag_inputs,
                _differentiable_outputs(imag_out),
                eps,
                rtol,
                atol,
                check_grad_dtypes,
                nondet_tol,
                complex_indices=complex_inp_indices,
                test_imag=True,
                use_forward_ad=True,
            )
            real_inputs = tuple(
                _part_leaf(x, "real") if i in complex_inp_indices else x
                for i, x in enumerate(inputs)
            )
            real_out = real_fn(*real_inputs)
            check_fn(
                real_fn,
                real_out,
                real_inputs,
                _differentiable_outputs(real_out),
                eps,
                rtol,
                atol,
                check_grad_dtypes,
                nondet_tol,
                complex_indices=complex_inp_indices,
                use_forward_ad=True,
            )
            if check_undefined_grad:
                _test_undefined_forward_mode(imag_fn, imag_inputs)
                _test_undefined_forward_mode(real_fn, real_inputs)
        else:
            check_fn(
                func,
                func_out,
                inputs,
                outputs,
                eps,
                rtol,
                atol,
                check_grad_dtypes,
                nondet_tol,
                use_forward_ad=True,
            )
            if check_undefined_grad:
                _test_undefined_forward_mode(func, inputs)


# ---------------------------------------------------------------------------------------------
# the extra checks


def _check_inputs(inputs: tuple) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp._data.dtype not in (np.float64, np.complex128):
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not of "
                    "double precision floating point or complex. ",
                    stacklevel=3,
                )
            data = inp._data
            # an empty array has zero strides without any overlap (NumPy's convention)
            if data.size and any(st == 0 and sz > 1 for st, sz in zip(data.strides, data.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck."
                )
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the "
            "them have requires_grad=True."
        )


def _test_undefined_forward_mode(func, inputs) -> bool:
    diff_idx = _diff_input_indices(inputs)
    _, all_u = _make_vectors(inputs, (), use_forward_ad=True)
    with fwd.dual_level():
        duals = list(inputs)
        for k, i in enumerate(diff_idx):
            x = inputs[i]
            tangent = _tensor_like(np.asarray(all_u[k]).reshape(x.shape).astype(x._data.dtype), x)
            duals[i] = fwd.make_dual(x.detach(), tangent)
        for i in diff_idx:
            x = inputs[i]
            saved = duals[i]
            # a materialised zero tangent, then a plain tensor (no tangent): the same result
            duals[i] = fwd.make_dual(x.detach(), _tensor_like(np.zeros(x.shape, x._data.dtype), x))
            outs1 = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[i] = x.detach()
            outs2 = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[i] = saved
            for index_o, (o1, o2) in enumerate(zip(outs1, outs2)):
                t1 = fwd.unpack_dual(o1).tangent
                t2 = fwd.unpack_dual(o2).tangent
                if (
                    t1 is not None
                    and t2 is not None
                    and not _allclose(_host(t1), _host(t2), 1e-5, 1e-8)
                ):
                    raise GradcheckError(
                        f"Mismatch in tangent values for output with index: {index_o} when "
                        f"input: {x} has an undefined tangent value.  Got: {t1} but expected: "
                        f"{t2}"
                    )
    return True


def _stack(tensors: list) -> Tensor:
    from ..ops import stack

    return stack(tensors)


def _zeros_for(t: Tensor, batch: int | None = None) -> Tensor:
    xp = xp_of(t._data)
    shape = tuple(t.shape) if batch is None else (batch, *t.shape)
    return wrap(xp.zeros(shape, dtype=t._data.dtype))


def _random_like(rng: np.random.Generator, t: Tensor) -> Tensor:
    values = rng.standard_normal(t.shape)
    if t._data.dtype.kind == "c":
        values = values + 1j * rng.standard_normal(t.shape)
    return _tensor_like(np.asarray(values).astype(t._data.dtype), t)


def _compare_batched(result, expected, output_idx_of, is_forward_ad) -> None:
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        r, e = _host(res), _host(exp)
        if r.shape == e.shape and _allclose(r, e, 1e-5, 1e-8):
            continue
        raise GradcheckError(
            _batched_grad_failure_msg(output_idx_of(input_idx), input_idx, res, exp, is_forward_ad)
        )


def _test_batched_grad_forward_ad(func, inputs) -> bool:
    from ..vmap.api import vmap

    rng = np.random.default_rng(_FAST_MODE_SEED + 1)
    for input_idx, current in enumerate(inputs):
        if not (isinstance(current, Tensor) and current.requires_grad):
            continue

        def jvp(tangent, input_idx=input_idx, current=current):
            with fwd.dual_level():
                dual = fwd.make_dual(current.detach(), tangent)
                call_inputs = tuple(
                    dual if i == input_idx else (x.detach() if isinstance(x, Tensor) else x)
                    for i, x in enumerate(inputs)
                )
                result = []
                for out in _as_tuple(func(*call_inputs)):
                    if not isinstance(out, Tensor):
                        continue
                    primal, tangent_out = fwd.unpack_dual(out)
                    result.append(tangent_out if tangent_out is not None else _zeros_for(primal))
                return tuple(result)

        if not _is_float_or_complex(current):
            continue
        tangents = [_random_like(rng, current) for _ in range(2)]
        expected = [_stack(list(shards)) for shards in zip(*[jvp(t) for t in tangents])]
        try:
            result = vmap(jvp)(_stack(tangents))
        except RuntimeError as ex:
            raise GradcheckError(
                f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG_FWD_AD}"
            ) from ex
        _compare_batched(result, expected, lambda i, k=input_idx: k, True)
    return True


def _test_batched_grad(inputs, output: Tensor, output_idx: int) -> bool:
    """``grad(..., is_grads_batched=True)`` (vmap over the backward pass) vs a loop of VJPs."""
    diff_inputs = _diff_inputs(inputs)

    def vjp(v, batched=False):
        grads = _autograd_grad(
            output,
            diff_inputs,
            v,
            retain_graph=True,
            allow_unused=True,
            is_grads_batched=batched,
        )
        return tuple(
            g if g is not None else _zeros_for(inp, batch=v.shape[0] if batched else None)
            for g, inp in zip(grads, diff_inputs)
        )

    rng = np.random.default_rng(_FAST_MODE_SEED + 2)
    grad_outputs = [_random_like(rng, output) for _ in range(2)]
    expected = [_stack(list(shards)) for shards in zip(*[vjp(g) for g in grad_outputs])]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Pp]erformance.*")
        try:
            result = vjp(_stack(grad_outputs), batched=True)
        except RuntimeError as ex:
            raise GradcheckError(
                f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG}"
            ) from ex
    _compare_batched(result, expected, lambda i: output_idx, False)
    return True


def _test_backward_mul_by_grad_output(outputs, inputs, masked=False) -> bool:
    diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    if not outputs:
        return True
    grads = _autograd_grad(
        outputs, diff_inputs, [_zeros_for(o) for o in outputs], allow_unused=True
    )
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        values = _host(gi)
        if masked:
            # masked semantics tolerate round-off (torch.allclose's default tolerances)
            nonzero = not np.allclose(values, 0.0, rtol=1e-5, atol=1e-8)
        else:
            nonzero = np.count_nonzero(values) != 0
        if nonzero:
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")
    return True


@functools.cache
def _undefined_grad_op():
    """An identity op whose VJP returns no gradient: the input receives an undefined (None)
    gradient, whatever its output's grad_output was (PyTorch's ``UndefinedGrad``)."""
    from .._dispatch import OpDef, dispatch

    op = OpDef(
        "gradcheck_undefined_grad",
        lambda xp, x: x.copy(),
        vjp=lambda cts, outs, args, params, needs: (None,),
        jvp=lambda tangents, outs, args, params: tangents[0],
        batch=lambda op, args, bdims, params: (dispatch(op, (args[0],), {}), bdims[0]),
        save_args=False,
        node_name="UndefinedGradBackward",
    )
    # deliberately not registered: a private helper, not part of the op registry
    return op, dispatch


def _undefined_grad(t: Tensor) -> Tensor:
    op, dispatch = _undefined_grad_op()
    return dispatch(op, (t,), {})


def _test_undefined_backward_mode(func, outputs, inputs) -> bool:
    diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")

    def check(outputs_to_check) -> bool:
        if not outputs_to_check:
            return True
        zero_grads = [_zeros_for(o) for o in outputs_to_check]
        try:
            grads = _autograd_grad(outputs_to_check, diff_inputs, zero_grads, allow_unused=True)
        except RuntimeError as e:
            warnings.warn(_UNDEFINED_GRAD_WARNING, stacklevel=4)
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. "
                + _UNDEFINED_GRAD_NOTE
            ) from e
        for gi in grads:
            if gi is not None and np.count_nonzero(_host(gi)) != 0:
                warnings.warn(_UNDEFINED_GRAD_WARNING, stacklevel=4)
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    "undefined or zero. " + _UNDEFINED_GRAD_NOTE
                )
        return True

    to_check = [[_undefined_grad(o) for o in _differentiable_outputs(func(*inputs))]]
    if len(to_check[0]) > 1:
        for undefined_idx in range(len(outputs)):
            outs = _differentiable_outputs(func(*inputs))
            to_check.append(
                [_undefined_grad(o) if k == undefined_idx else o for k, o in enumerate(outs)]
            )
    return all(check(outs) for outs in to_check)


# ---------------------------------------------------------------------------------------------
# public API


def gradcheck(
    fn: Callable[..., Any],
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the gradients of ``fn`` at ``inputs`` against central finite differences.

    Parameters
    ----------
    fn : callable
        Takes the ``inputs`` (positionally) and returns a tensor or a (nested) tuple/list of
        tensors (other values are ignored).
    inputs : Tensor or tuple/list
        The arguments. Floating/complex tensors with ``requires_grad=True`` are differentiated
        (use float64/complex128), also inside (nested) lists, tuples and dicts; anything else
        is passed through unchanged. Inputs and outputs are numbered in flattened order in the
        messages (``input 2`` is the third tensor that requires grad).
    eps, atol, rtol : float
        Finite-difference step; ``|analytical - numerical| <= atol + rtol * |numerical|``.
    raise_exception : bool
        Raise ``GradcheckError`` on failure (default) or return ``False``. Only
        ``GradcheckError`` is turned into ``False``.
    nondet_tol : float
        How much two backward passes with the same grad_output may differ.
    check_undefined_grad, check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
    check_forward_ad, check_backward_ad : bool
        The optional checks (PyTorch's meaning): undefined output grads give zero/undefined
        input grads; gradient dtypes; ``vmap`` over the VJP / JVP equals a loop; forward mode
        (dual levels) against finite differences; reverse mode against finite differences.
    fast_mode : bool
        Compare one random projection ``v^T J u`` per input/output pair instead of the full
        Jacobians (much faster; on failure the message shows the slow-mode Jacobians).
    masked : bool or None
        PyTorch's masked (sparse) semantics. dualad tensors are dense, so every element is
        specified and the Jacobian checks are the same either way; ``masked=True`` only
        relaxes the "backward multiplied by grad_output" check from exact zeros to
        ``allclose(grad, 0)``, as PyTorch does. ``None`` means ``False``.

    Returns
    -------
    bool
        ``True`` when every check passes.

    >>> import dualad
    >>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dualad.float64, requires_grad=True)
    >>> gradcheck(lambda a: (a * a).sum(0), (x,), fast_mode=True, check_forward_ad=True)
    True
    """
    assert check_forward_ad or check_backward_ad, (
        "Expected at least one of check_forward_ad or check_backward_ad to be True"
    )
    assert not (check_batched_grad and not check_backward_ad), (
        "Setting check_batched_grad=True requires check_backward_ad to be True"
    )
    assert not (check_batched_forward_grad and not check_forward_ad), (
        "Setting check_batched_forward_grad=True requires check_forward_ad to be True"
    )
    args = dict(
        eps=eps,
        atol=atol,
        rtol=rtol,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        check_batched_forward_grad=check_batched_forward_grad,
        check_forward_ad=check_forward_ad,
        check_backward_ad=check_backward_ad,
        fast_mode=fast_mode,
        masked=bool(masked),
    )
    if not raise_exception:
        try:
            return _gradcheck_helper(fn, inputs, **args)
        except GradcheckError:
            return False
    return _gradcheck_helper(fn, inputs, **args)


def _gradcheck_helper(
    func,
    inputs,
    *,
    eps,
    atol,
    rtol,
    nondet_tol,
    check_undefined_grad,
    check_grad_dtypes,
    check_batched_grad,
    check_batched_forward_grad,
    check_forward_ad,
    check_backward_ad,
    fast_mode,
    masked,
) -> bool:
    func, inputs = _flat_function(func, _as_tuple(inputs))
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    check_fn = _fast_gradcheck if fast_mode else _slow_gradcheck
    _gradcheck_real_imag(
        check_fn,
        func,
        func_out,
        inputs,
        outputs,
        eps,
        rtol,
        atol,
        check_grad_dtypes,
        check_forward_ad,
        check_backward_ad,
        nondet_tol,
        check_undefined_grad,
    )
    if check_batched_forward_grad:
        _test_batched_grad_forward_ad(func, inputs)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(inputs, o, i)
    _test_backward_mul_by_grad_output(outputs, inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, inputs)
    return True


def gradgradcheck(
    fn: Callable[..., Any],
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool | None = False,
) -> bool:
    """Check second derivatives: ``gradcheck`` of the VJP of ``fn`` (``create_graph=True``).

    ``grad_outputs`` default to random tensors like the differentiable outputs, uniform in
    ``[-1, 1]`` and requiring grad (so the VJP is checked w.r.t. them too), drawn from dualad's
    global generator (``dualad.manual_seed`` repeats them); ``gen_non_contig_grad_outputs``
    makes them strided views. Grad outputs that do not require grad are constants.
    ``check_fwd_over_rev`` checks the VJP with forward mode, ``check_rev_over_rev`` with reverse
    mode. Other arguments as in ``gradcheck``.

    >>> import dualad
    >>> x = dualad.tensor([0.5, 1.5], dtype=dualad.float64, requires_grad=True)
    >>> gradgradcheck(dualad.tanh, (x,))
    True
    """
    assert check_fwd_over_rev or check_rev_over_rev, (
        "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"
    )
    assert not (check_undefined_grad and not check_rev_over_rev), (
        "Setting check_undefined_grad=True requires check_rev_over_rev to be True"
    )
    assert not (check_batched_grad and not check_rev_over_rev), (
        "Setting check_batched_grad=True requires check_rev_over_rev to be True"
    )
    fn, inputs = _flat_function(fn, _as_tuple(inputs))
    if grad_outputs is None:
        outputs = _differentiable_outputs(fn(*inputs))
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs) for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    num_inputs = len(inputs)
    diff_input_indices = {
        i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad
    }
    diff_grad_output_indices = {
        i for i, x in enumerate(grad_outputs) if isinstance(x, Tensor) and x.requires_grad
    }

    def new_func(*args):
        # gradcheck's forward-AD path passes detached duals: restore requires_grad first
        input_args = tuple(
            x.requires_grad_() if i in diff_input_indices else x
            for i, x in enumerate(args[:num_inputs])
        )
        outputs = _differentiable_outputs(fn(*input_args))
        gos = tuple(
            x.requires_grad_() if i in diff_grad_output_indices else x
            for i, x in enumerate(args[num_inputs:])
        )
        diff_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_indices)
        if not outputs:
            return ()
        grads = _autograd_grad(outputs, diff_args, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    assert len(grad_outputs) == num_outputs
    return gradcheck(
        new_func,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        masked=masked,
    )


# ---------------------------------------------------------------------------------------------
# deprecated helpers (kept for PyTorch compatibility)


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`{name}` was part of PyTorch's private API and is kept in dualad only for "
        "compatibility; it will be removed in a future version. Use `gradcheck` or "
        "`dualad.func.jacrev`/`jacfwd` instead.",
        FutureWarning,
        stacklevel=3,
    )


def get_numerical_jacobian(fn, inputs, target=None, eps: float = 1e-3, grad_out: float = 1.0):
    """Deprecated. Numerical Jacobians of ``fn(inputs)``'s FIRST output, one per differentiable
    input (or per tensor in ``target``), each of shape ``(input.numel(), output.numel())``.

    ``fn`` takes the tuple of inputs as its single argument.
    """
    _deprecated("get_numerical_jacobian")
    if grad_out != 1.0:
        raise ValueError(
            "Expected grad_out to be 1.0. get_numerical_jacobian no longer supports values of "
            "grad_out != 1.0."
        )
    inputs = _as_tuple(inputs)

    def fn_pack_inputs(*args):
        return fn(args)

    outputs = _as_tuple(fn_pack_inputs(*inputs))
    if any(isinstance(o, Tensor) and o.is_complex() for o in outputs):
        raise ValueError(
            "Expected output to be non-complex. get_numerical_jacobian no longer supports "
            "functions that return complex outputs."
        )
    if target is None:
        indices = _diff_input_indices(inputs)
    else:
        targets = [t for t in _as_tuple(target) if isinstance(t, Tensor) and t.requires_grad]
        indices = [next(i for i, x in enumerate(inputs) if x is t) for t in targets]
    jacobians = _numerical_jacobian(fn_pack_inputs, inputs, eps, target_indices=indices)
    return tuple(wrap(per_output[0]) for per_output in jacobians)


def get_analytical_jacobian(inputs, output, nondet_tol: float = 0.0, grad_out: float = 1.0):
    """Deprecated. ``(jacobians, reentrant, correct_grad_sizes, correct_grad_types)`` of
    ``output`` w.r.t. the differentiable ``inputs``; ``jacobians[i]`` has shape
    ``(inputs[i].numel(), output.numel())``."""
    _deprecated("get_analytical_jacobian")
    if grad_out != 1.0:
        raise ValueError(
            "Expected grad_out to be 1.0. get_analytical_jacobian no longer supports values of "
            "grad_out != 1.0."
        )
    if output.is_complex():
        raise ValueError(
            "Expected output to be non-complex. get_analytical_jacobian no longer supports "
            "functions that return complex outputs."
        )
    inputs = _as_tuple(inputs)
    diff_inputs = _diff_inputs(inputs)
    n = int(output._data.size)
    eye = np.eye(n, dtype=output._data.dtype)
    grad_outputs = [_grad_output_tensor(eye[j], output) for j in range(n)]
    jac1, sizes_ok, types_ok = _stack_and_check(
        _vjp_rows(output, diff_inputs, grad_outputs), diff_inputs, n
    )
    jac2, _, _ = _stack_and_check(_vjp_rows(output, diff_inputs, grad_outputs), diff_inputs, n)
    reentrant = _jacobians_equal(jac1, jac2, nondet_tol)
    return tuple(wrap(j) for j in jac1), reentrant, sizes_ok, types_ok
