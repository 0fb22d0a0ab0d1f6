"""The Jacobians gradcheck compares: numerical ones by central differences (perturbing an
input's own buffer in place and restoring it exactly), analytical ones by reverse mode (one VJP
per output element, or ``v^T J``) and by forward mode (dual levels; ``J u``).

A Jacobian w.r.t. input ``x`` and output ``y`` is a 2-D array of shape
``(x.numel(), y.numel())``. The numerical column of a complex input element ``z = a + ib`` is
``ds/da + 1j * ds/db`` (the conjugate Wirtinger convention ``dualad.autograd.grad`` follows).
Fast mode's ``u`` and ``v`` come from a private generator: the user's RNG is not touched.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import fwd
from .._backend import xp_of
from .._tensor import Tensor
from .gradcheck_util import (
    _FAST_MODE_SEED,
    FAILED_NONDET_MSG,
    GradcheckError,
    _as_tuple,
    _diff_input_indices,
    _diff_inputs,
    _host,
    _is_float_or_complex,
    _random_unit_vector,
    _shape_str,
    _tensor_like,
)
from .gradients import grad as _autograd_grad

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


def _analytical_jacobian(inputs, output, nondet_tol, v=None) -> tuple:
    """Reverse-mode Jacobian rows of ``output`` (all of them, or ``v^T J`` when ``v`` is given),
    computed twice for the reentrancy check: ``(jacobians, reentrant, sizes_ok, types_ok)``."""
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
    return jac1, _jacobians_equal(jac1, jac2, nondet_tol), sizes_ok, types_ok


def _analytical_jacobian_checked(inputs, output, nondet_tol, check_grad_dtypes, v=None):
    """``_analytical_jacobian``'s Jacobians; GradcheckError when a flag says it is wrong."""
    jac1, reentrant, sizes_ok, types_ok = _analytical_jacobian(inputs, output, nondet_tol, v)
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
