"""Check analytical gradients against finite differences (``torch.autograd.gradcheck``).

``gradcheck(fn, inputs)`` compares, for every differentiable input and output, the Jacobian the
reverse engine computes (one VJP per output element) with central differences; ``fast_mode``
compares one random projection ``v^T J u`` instead; ``check_forward_ad`` does the same for the
forward engine (dual levels). ``gradgradcheck`` runs ``gradcheck`` on the function that computes
the gradient with ``create_graph=True``. The order of the checks and the error messages follow
PyTorch's (spec/forward.md §5), because tests assert which error wins.

The parts: ``gradcheck_util`` (errors, messages, options, small helpers),
``gradcheck_jacobians`` (numerical, reverse- and forward-mode Jacobians), ``gradcheck_modes``
(the slow and fast comparisons, complex parts) and ``gradcheck_extra`` (input checks,
undefined and batched gradients); this module holds the public functions.

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

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._backend import xp_of
from .._random import rand
from .._tensor import Tensor, wrap
from .gradcheck_extra import (
    _check_inputs,
    _test_backward_mul_by_grad_output,
    _test_batched_grad,
    _test_batched_grad_forward_ad,
    _test_undefined_backward_mode,
)
from .gradcheck_jacobians import _analytical_jacobian, _numerical_jacobian
from .gradcheck_modes import _fast_gradcheck, _gradcheck_real_imag, _slow_gradcheck
from .gradcheck_util import (
    Case,
    GradcheckError,
    Options,
    _as_tuple,
    _diff_input_indices,
    _differentiable_outputs,
    _flat_function,
)
from .gradients import grad as _autograd_grad

__all__ = [
    "GradcheckError",
    "get_analytical_jacobian",
    "get_numerical_jacobian",
    "gradcheck",
    "gradgradcheck",
]


# ---------------------------------------------------------------------------------------------
# public API


def gradcheck(
    fn: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
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
    opts = Options(
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
        bool(masked),
    )
    if not raise_exception:
        try:
            return _gradcheck_helper(fn, inputs, opts)
        except GradcheckError:
            return False
    return _gradcheck_helper(fn, inputs, opts)


def _gradcheck_helper(func, inputs, opts: Options) -> bool:
    func, inputs = _flat_function(func, _as_tuple(inputs))
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    check_fn = _fast_gradcheck if opts.fast_mode else _slow_gradcheck
    _gradcheck_real_imag(check_fn, Case(func, func_out, inputs, outputs), opts)
    if opts.check_batched_forward_grad:
        _test_batched_grad_forward_ad(func, inputs)
    if not opts.check_backward_ad:
        return True
    if opts.check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(inputs, o, i)
    _test_backward_mul_by_grad_output(outputs, inputs, opts.masked)
    if opts.check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, inputs)
    return True


def _random_grad_output(output: Tensor, non_contiguous: bool) -> Tensor:
    """gradgradcheck's default grad_output for ``output``: uniform in [-1, 1) (both parts, for
    complex), requiring grad. Drawn from dualad's global generator, as PyTorch draws from its
    own: ``dualad.manual_seed`` makes a failure reproducible."""
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


# gradgradcheck's signature mirrors gradcheck's (PyTorch's two public functions): alike on purpose
def gradgradcheck(
    fn: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Tensor] | None = None,
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
    jacobians, reentrant, sizes_ok, types_ok = _analytical_jacobian(
        _as_tuple(inputs), output, nondet_tol
    )
    return tuple(wrap(j) for j in jacobians), reentrant, sizes_ok, types_ok
