"""gradcheck's comparisons of analytical against numerical derivatives, in its two modes.

Slow mode compares whole Jacobians; fast mode one random projection per input/output pair
(``v^T J u`` in reverse mode, ``J u`` in forward mode) and, on failure, recomputes the failing
pair in slow mode for the message. Both compare through ``_compare``. Complex numbers are
checked a part at a time: reverse checks split complex outputs into their imaginary, then real,
parts; forward checks split complex inputs the same way (``_gradcheck_real_imag``).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from ..ops import imag, real
from .gradcheck_extra import _test_undefined_forward_mode
from .gradcheck_jacobians import (
    _analytical_jacobian_checked,
    _forward_jacobian,
    _make_vectors,
    _numerical_jacobian,
    _numerical_Ju,
)
from .gradcheck_util import (
    FAST_FAIL_SLOW_OK_MSG,
    Case,
    GradcheckError,
    Options,
    _allclose,
    _as_tuple,
    _differentiable_outputs,
    _format,
    _is_float_or_complex,
    _notallclose_msg,
)

# ---------------------------------------------------------------------------------------------
# what both modes share


def _numerical_for_outputs(func_out, per_input: list) -> list:
    """Keep the numerical Jacobians of differentiable outputs (numerical ones cover every
    float/complex output)."""
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_or_complex(o)]
    return [j for o, j in zip(float_outputs, per_input) if o.requires_grad]


def _slow_numerical(case: Case, eps: float) -> list:
    """Numerical Jacobians ``[input][differentiable output]``."""
    per_input = _numerical_jacobian(case.func, case.inputs, eps)
    return [_numerical_for_outputs(case.func_out, j) for j in per_input]


def _forward_analytical(case: Case, check_grad_dtypes=False, all_u=None) -> list:
    """Forward-mode Jacobians (or ``J u`` with ``all_u``) ``[input][differentiable output]``."""
    per_input = _forward_jacobian(
        case.func, case.inputs, check_grad_dtypes=check_grad_dtypes, all_u=all_u
    )
    return [_numerical_for_outputs(case.func_out, j) for j in per_input]


def _compare(case: Case, pairs, rtol: float, atol_of, report=None) -> bool:
    """GradcheckError for the first ``(input_idx, output_idx, analytical, numerical)`` of
    ``pairs`` that is not close (``atol_of(input_idx, output_idx)``); ``report(input_idx,
    output_idx)`` adds to the message."""
    for i, j, a, n in pairs:
        a, n = np.asarray(a), np.asarray(n)
        if not _allclose(a, n, rtol, atol_of(i, j)):
            msg = _notallclose_msg(a, n, j, i, case) + _nan_inputs_note(case)
            raise GradcheckError(msg if report is None else msg + report(i, j))
    return True


def _nan_inputs_note(case: Case) -> str:
    """A line per tensor input holding NaN (the usual cause of a NaN numerical Jacobian: the
    finite differences there are NaN), naming the input and its first NaN's index."""
    notes = []
    for k, x in enumerate(case.inputs):
        if isinstance(x, Tensor) and x.dtype.kind in "fc":
            bad = np.argwhere(np.isnan(x._data))  # (NumPy or, by its protocols, CuPy)
            if len(bad):
                notes.append(
                    f"input {k} contains NaN (first at index {tuple(int(v) for v in bad[0])}); "
                    "finite differences there are NaN: check the inputs, or pass finite values"
                )
    return "".join(note + "\n" for note in notes)


def _all_pairs(analytical: list, numerical: list):
    """``(input_idx, output_idx, a, n)`` of Jacobians indexed ``[input][output]``."""
    for i, (a_per_out, n_per_out) in enumerate(zip(analytical, numerical)):
        for j, (a, n) in enumerate(zip(a_per_out, n_per_out)):
            yield i, j, a, n


# ---------------------------------------------------------------------------------------------
# slow mode


def _check_no_differentiable_outputs(func, inputs, eps) -> bool:
    for per_input in _numerical_jacobian(func, inputs, eps):
        for jacobian in per_input:
            if np.count_nonzero(jacobian) > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _slow_gradcheck(case: Case, opts: Options) -> bool:
    if not case.outputs:
        return _check_no_differentiable_outputs(case.func, case.inputs, opts.eps)
    numerical = _slow_numerical(case, opts.eps)

    def atol_of(i, j):
        return opts.atol

    if case.use_forward_ad:
        analytical = _forward_analytical(case, check_grad_dtypes=opts.check_grad_dtypes)
        return _compare(case, _all_pairs(analytical, numerical), opts.rtol, atol_of)
    for j, o in enumerate(case.outputs):
        # one output at a time: its analytical Jacobian's own errors come before later outputs'
        analytical = _analytical_jacobian_checked(
            case.inputs, o, opts.nondet_tol, opts.check_grad_dtypes
        )
        pairs = ((i, j, a, numerical[i][j]) for i, a in enumerate(analytical))
        _compare(case, pairs, opts.rtol, atol_of)
    return True


# ---------------------------------------------------------------------------------------------
# fast mode


def _adjusted_atol(atol, u, v) -> float:
    # |v^T A u - v^T B u| <= v^T E u with E all atol: scale atol by sum(u) * sum(v)
    u = u[0] if isinstance(u, tuple) else u
    sum_v = 1.0 if v is None else float(np.real(np.sum(v)))
    return atol * float(np.sum(u)) * sum_v


def _slow_mode_report(case: Case, opts: Options, input_idx: int, output_idx: int) -> str:
    """The slow-mode Jacobians of the failing pair, appended to a fast-mode failure."""
    slow_numerical = _slow_numerical(case, opts.eps)[input_idx][output_idx]
    if case.use_forward_ad:
        slow_analytical = _forward_analytical(case)[input_idx][output_idx]
    else:
        slow_analytical = _analytical_jacobian_checked(
            case.inputs, case.outputs[output_idx], float("inf"), False
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
    if _allclose(slow_analytical, slow_numerical, opts.rtol, opts.atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_gradcheck(case: Case, opts: Options) -> bool:
    func, func_out, inputs, outputs = case.func, case.func_out, case.inputs, case.outputs
    all_v, all_u = _make_vectors(inputs, outputs, use_forward_ad=case.use_forward_ad)
    if not case.use_forward_ad and not outputs:
        for per_input in _numerical_Ju(func, inputs, all_u, opts.eps):
            for ju in per_input:
                if ju.size and np.max(np.abs(ju)) > opts.nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    numerical_Ju = [
        _numerical_for_outputs(func_out, ju) for ju in _numerical_Ju(func, inputs, all_u, opts.eps)
    ]
    if case.use_forward_ad:
        analytical = _forward_analytical(case, opts.check_grad_dtypes, all_u)
        numerical = numerical_Ju
    else:
        # v^T (J u) numerically, (v^T J) u analytically
        numerical = [
            [np.dot(v, ju) for v, ju in zip(all_v, per_input)] for per_input in numerical_Ju
        ]
        analytical = [[None] * len(outputs) for _ in all_u]
        for j, (o, v) in enumerate(zip(outputs, all_v)):
            vJ = _analytical_jacobian_checked(
                inputs, o, opts.nondet_tol, opts.check_grad_dtypes, v=v
            )
            for i, (vj, u) in enumerate(zip(vJ, all_u)):
                vj = vj[:, 0]
                if np.iscomplexobj(vj):
                    analytical[i][j] = np.dot(vj.real, u[0]) + 1j * np.dot(vj.imag, u[1])
                else:
                    analytical[i][j] = np.dot(vj, u)

    def atol_of(i, j):
        return _adjusted_atol(opts.atol, all_u[i], all_v[j] if all_v else None)

    def report(i, j):
        return _slow_mode_report(case, opts, i, j)

    return _compare(case, _all_pairs(analytical, numerical), opts.rtol, atol_of, report)


# ---------------------------------------------------------------------------------------------
# complex splitting


def _real_and_imag_output(func):
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


def _part_case(fn, inputs, use_forward_ad: bool, complex_indices: list, part: str) -> Case:
    """The check of one part (``"imag"`` or ``"real"``) of complex outputs or inputs."""
    out = fn(*inputs)
    outputs = _differentiable_outputs(out)
    return Case(fn, out, inputs, outputs, use_forward_ad, complex_indices, part == "imag")


def _gradcheck_real_imag(check_fn, case: Case, opts: Options) -> None:
    """``check_fn`` (slow or fast mode) on ``case`` in reverse and/or forward mode, a part at a
    time where outputs (reverse) or inputs (forward) are complex: imaginary first, then real."""
    func, inputs = case.func, case.inputs
    if opts.check_backward_ad:
        complex_out_indices = [i for i, o in enumerate(case.outputs) if o.is_complex()]
        if any(isinstance(o, Tensor) and o.is_complex() for o in _as_tuple(case.func_out)):
            real_fn, imag_fn = _real_and_imag_output(func)
            for fn, part in ((imag_fn, "imag"), (real_fn, "real")):
                check_fn(_part_case(fn, inputs, False, complex_out_indices, part), opts)
        else:
            check_fn(case, opts)
    if opts.check_forward_ad:
        complex_inp_indices = [
            i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.is_complex()
        ]
        if complex_inp_indices:
            real_fn, imag_fn = _real_and_imag_input(func, complex_inp_indices, inputs)
            parts = []
            for fn, part in ((imag_fn, "imag"), (real_fn, "real")):
                part_inputs = tuple(
                    _part_leaf(x, part) if i in complex_inp_indices else x
                    for i, x in enumerate(inputs)
                )
                check_fn(_part_case(fn, part_inputs, True, complex_inp_indices, part), opts)
                parts.append((fn, part_inputs))
        else:
            check_fn(case._replace(use_forward_ad=True), opts)
            parts = [(func, inputs)]
        if opts.check_undefined_grad:
            for fn, part_inputs in parts:
                _test_undefined_forward_mode(fn, part_inputs)
