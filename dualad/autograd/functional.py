"""``torch.autograd.functional``-shaped helpers: jacobian, hessian, vjp, jvp, hvp, vhp.

Invariants (PyTorch's documented semantics):
- Results mirror the structure of the arguments: a tuple of inputs (outputs) gives a tuple of
  results, a single Tensor gives a Tensor; ``jacobian[i][j]`` has shape
  ``outputs[i].shape + inputs[j].shape``.
- Inputs are detached copies that require grad (``create_graph=False``) or differentiable views
  of the user's tensors (``create_graph=True``, so results stay differentiable w.r.t. them);
  results are detached unless ``create_graph``.
- A gradient that does not exist (an output independent of an input) is zeros, or a
  RuntimeError with PyTorch's wording when ``strict=True``.
- ``vectorize=True`` runs ONE batched backward pass (``grad(..., is_grads_batched=True)``) for
  reverse mode, or one batched forward pass (vmap over a dual level) for forward mode; without it
  reverse mode loops over the output elements.
- ``jvp``/``hvp`` use the double-backward trick as PyTorch does (their ``strict`` errors speak of
  it); forward mode proper is ``dualad.func.jvp``.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import Any

from .. import fwd
from .._creation import eye, zeros, zeros_like
from .._tensor import Tensor
from ..ops import movedim, reshape, stack
from ..rev.grad_mode import enable_grad, set_grad_enabled
from ..vmap.api import vmap
from .gradients import grad as _grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STRATEGIES = ("forward-mode", "reverse-mode")
_Fn = Callable[..., Any]  # (the types of the public functions' arguments)
_In = Tensor | tuple[Tensor, ...]


# ---------------------------------------------------------------------------------------------
# argument structure


def _as_tuple(value, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """``(was_tuple, tuple_of_tensors)``; TypeError for anything but a Tensor or a tuple/list of
    Tensors (PyTorch's message)."""
    if isinstance(value, Tensor):
        return False, (value,)
    if not isinstance(value, (tuple, list)):
        raise TypeError(
            f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
            f"the given {arg_name} has type {type(value)}."
        )
    for i, item in enumerate(value):
        if not isinstance(item, Tensor):
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the value at index {i} has type {type(item)}."
            )
    return True, tuple(value)


def _tuple_postprocess(result, was_tuple):
    """Undo ``_as_tuple``: ``was_tuple`` is a bool, or a pair (outer, inner) for nested results."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(r[0] for r in result)
        if not outer:
            result = result[0]
        return result
    return result if was_tuple else result[0]


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Inputs the function runs on: differentiable views of the user's tensors when
    ``create_graph`` (the results must depend on them), fresh detached leaves otherwise."""
    result = []
    for t in inputs:
        if create_graph and t.requires_grad:
            result.append(t.view_as(t))
        else:
            result.append(t.detach().requires_grad_(need_graph))
    return tuple(result)


def _grad_postprocess(values: tuple, create_graph: bool) -> tuple:
    if create_graph:
        return values
    return tuple(None if v is None else v.detach() for v in values)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_other) in enumerate(zip(v, other)):
        if tuple(el_v.shape) != tuple(el_other.shape):
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {tuple(el_other.shape)} but got "
                f"{tuple(el_v.shape)}."
            )


def _check_requires_grad(values: tuple, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, t in enumerate(values):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode."
            )
        if t.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode."
            )
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode."
            )
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode."
        )


def _autograd_grad(
    outputs: tuple,
    inputs: tuple,
    grad_outputs=None,
    create_graph: bool = False,
    retain_graph=None,
    is_grads_batched: bool = False,
) -> tuple:
    """``grad`` over the outputs that require grad (None for every input when none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept_outputs = []
    kept_grads = []
    for out, go in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            kept_outputs.append(out)
            kept_grads.append(go)
    if not kept_outputs:
        return (None,) * len(inputs)
    return _grad(
        kept_outputs,
        inputs,
        kept_grads,
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
        is_grads_batched=is_grads_batched,
    )


_FILL_MESSAGES = {
    "jacobian": "Output {out} of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back": "The output of the user-provided function is independent of input {i}. This is not "
    "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. This "
    "is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
    "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
    "in the grad_jacobian. This is not allowed in strict mode as it prevents from using the "
    "double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(
    grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str, out: int = 0
) -> tuple:
    """Missing gradients as zeros shaped like ``refs`` (or PyTorch's strict-mode error; ``out``
    is the output a ``"jacobian"`` stage's gradients belong to)."""
    result = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MESSAGES[stage].format(i=i, out=out))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            if stage in ("jacobian", "back", "back_trick"):
                raise RuntimeError(
                    f"The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode when create_graph=True."
                )
            raise RuntimeError(
                f"The hessian of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        result.append(g)
    return tuple(result)


def _prepare_v(v, values: tuple, is_tuple: bool, what: str, fn_name: str, create_graph: bool):
    """The user's ``v`` as a checked tuple matching ``values``, or None where that is allowed."""
    if v is None:
        return _default_v(values, what)
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph, need_graph=False)
    _validate_v(v, values, is_tuple)
    return v


def _default_v(values: tuple, what: str):
    if len(values) != 1 or values[0].numel() != 1:
        raise RuntimeError(
            f"The vector v can only be None if the {what} of the user-provided function is a "
            "single Tensor with a single element."
        )
    return None


def _call(func: Callable, inputs: tuple, fn_name: str, strict: bool) -> tuple[bool, tuple]:
    """``func(*inputs)`` as ``(was_tuple, outputs)``, checked for requiring grad (``strict``)."""
    outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs[1], "outputs", strict)
    return outputs


def _single_scalar_output(func: Callable, inputs: tuple, fn_name: str, strict: bool):
    is_outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    return outputs


def _inputs(inputs, fn_name: str, create_graph: bool) -> tuple[bool, tuple]:
    """The user's ``inputs`` as ``(was_tuple, inputs the function runs on)``."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    return is_inputs_tuple, _grad_preprocess(inputs, create_graph, need_graph=True)


def _last_vjp(outputs, inputs, v, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    """The final ``vᵀ d outputs / d inputs`` of a vector product, missing parts filled in like
    ``refs`` (recorded only with ``create_graph``)."""
    with set_grad_enabled(create_graph):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        return _fill_in_zeros(grads, refs, strict, create_graph, stage)


def _finish(outputs, is_outputs_tuple, result, is_result_tuple, create_graph: bool) -> tuple:
    """``(outputs, result)`` detached unless ``create_graph``, in the user's structure."""
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (
        _tuple_postprocess(outputs, is_outputs_tuple),
        _tuple_postprocess(result, is_result_tuple),
    )


def _scalar_jacobian(
    func: _Fn, inputs, v, create_graph: bool, strict: bool, fn_name: str
) -> tuple[bool, tuple, Any, Any, Any]:
    """vhp's and hvp's common start: ``(is_inputs_tuple, inputs, v, outputs, jacobian)`` of a
    function with a single-element output, the jacobian recorded."""
    is_inputs_tuple, inputs = _inputs(inputs, fn_name, create_graph)
    v = _prepare_v(v, inputs, is_inputs_tuple, "input", fn_name, create_graph)
    outputs = _single_scalar_output(func, inputs, fn_name, strict)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, outputs, jac


# ---------------------------------------------------------------------------------------------
# vector products (each keeps PyTorch's signature and a doctest: their heads look alike on purpose)


def vjp(
    func: _Fn, inputs: _In, v: _In | None = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``(func(inputs), vᵀ J)``: the vector-Jacobian product of ``func`` at ``inputs``.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0])
    >>> dualad.autograd.functional.vjp(lambda t: t ** 2, x, dualad.tensor([1.0, 1.0]))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, "vjp", create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, "output", "vjp", create_graph)
    result = _last_vjp(outputs, inputs, v, inputs, strict, create_graph, "back")
    return _finish(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def jvp(
    func: _Fn, inputs: _In, v: _In | None = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product (double-backward trick).

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0])
    >>> dualad.autograd.functional.jvp(lambda t: t ** 2, x, dualad.tensor([1.0, 0.0]))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, "jvp", create_graph)
        v = _prepare_v(v, inputs, is_inputs_tuple, "input", "jvp", create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        # J v = d/du <Jᵀ u, v>: the VJP is linear in u, so differentiate it w.r.t. u at u = 0
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    result = _last_vjp(grad_inputs, grad_outputs, v, outputs, strict, create_graph, "back_trick")
    return _finish(outputs, is_outputs_tuple, result, is_outputs_tuple, create_graph)


def vhp(
    func: _Fn, inputs: _In, v: _In | None = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``(func(inputs), vᵀ H)`` for a function with a single-element output.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0])
    >>> dualad.autograd.functional.vhp(lambda t: (t ** 3).sum(), x, dualad.tensor([1.0, 1.0]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _scalar_jacobian(
            func, inputs, v, create_graph, strict, "vhp"
        )
    result = _last_vjp(jac, inputs, v, inputs, strict, create_graph, "double_back")
    return _finish(outputs, False, result, is_inputs_tuple, create_graph)


def hvp(
    func: _Fn, inputs: _In, v: _In | None = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a function with a single-element output (double-backward
    trick, as PyTorch; equal to ``vhp`` for twice continuously differentiable functions).

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0])
    >>> dualad.autograd.functional.hvp(lambda t: (t ** 3).sum(), x, dualad.tensor([1.0, 0.0]))
    (tensor(9.), tensor([6., 0.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _scalar_jacobian(
            func, inputs, v, create_graph, strict, "hvp"
        )
        grad_jac = tuple(zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    result = _last_vjp(double_back, grad_jac, v, inputs, strict, create_graph, "double_back_trick")
    return _finish(outputs, False, result, is_inputs_tuple, create_graph)


# ---------------------------------------------------------------------------------------------
# Jacobians and Hessians


def _check_strategy(strategy: str) -> None:
    if strategy not in _STRATEGIES:
        raise ValueError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )


def jacobian(
    func: _Fn,
    inputs: _In,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` of shape ``out_i.shape + in_j.shape``.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0])
    >>> dualad.autograd.functional.jacobian(lambda t: t ** 2, x)
    tensor([[2., 0.],
            [0., 4.]])
    """
    _check_strategy(strategy)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'dualad.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                'mode"` are not supported together (yet). Please either set `create_graph=False` '
                'or `strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, "jacobian", create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "dualad.autograd.functional.jacobian: `strict=True` and `vectorize=True` are "
                    "not supported together. Please either set `strict=False` or "
                    "`vectorize=False`."
                )
            rows = _jacrev_vectorized(outputs, inputs, create_graph)
        else:
            rows = _jacrev_loop(outputs, inputs, create_graph, strict)
    result = tuple(_grad_postprocess(row, create_graph) for row in rows)
    return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _basis(tensors: tuple) -> tuple[list, list]:
    """The rows of an identity matrix as one batch per tensor: ``(numels, batches)``, batch k
    of shape ``(total, *tensors[k].shape)`` with ``total`` the sum of ``numels``."""
    numels = [t.numel() for t in tensors]
    total = sum(numels)
    batches = []
    offset = 0
    for t, n in zip(tensors, numels):
        identity = eye(total, dtype=t.dtype, device=t.device)[:, offset : offset + n]
        batches.append(reshape(identity, (total, *t.shape)))
        offset += n
    return numels, batches


def _blocks(batched, numels: list):
    """``batched[offset : offset + n]`` for each ``n`` in ``numels`` (the rows that came from
    one tensor of a ``_basis``), with that tensor's index."""
    offset = 0
    for k, n in enumerate(numels):
        yield k, batched[offset : offset + n]
        offset += n


def _jacrev_loop(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> list:
    """One ``grad`` call per output element (reverse mode without vectorization)."""
    rows = []
    for i, out in enumerate(outputs):
        flat = reshape(out, (-1,))
        per_input: list[list] = [[] for _ in inputs]
        for k in range(flat.shape[0]):
            if out.requires_grad:
                grads = _grad(
                    flat[k],
                    inputs,
                    retain_graph=True,
                    create_graph=create_graph,
                    allow_unused=True,
                )
            else:
                grads = (None,) * len(inputs)
            grads = _fill_in_zeros(grads, inputs, strict, create_graph, "jacobian", out=i)
            for j, g in enumerate(grads):
                per_input[j].append(g)
        row = []
        for j, inp in enumerate(inputs):
            shape = (*out.shape, *inp.shape)
            if per_input[j]:
                row.append(reshape(stack(per_input[j], 0), shape))
            else:  # an output with no elements
                row.append(zeros(shape, dtype=inp.dtype, device=inp.device))
        rows.append(tuple(row))
    return rows


def _jacrev_vectorized(outputs: tuple, inputs: tuple, create_graph: bool) -> list:
    """One batched backward pass: the cotangents are the rows of an identity matrix."""
    numels, grad_outputs = _basis(outputs)
    if sum(numels) == 0:
        grads = (None,) * len(inputs)
    else:
        grads = _autograd_grad(
            tuple(outputs), inputs, grad_outputs, create_graph=create_graph, is_grads_batched=True
        )
    rows: list[list] = [[] for _ in outputs]
    for g, inp in zip(grads, inputs):
        parts = repeat(None) if g is None else (block for _, block in _blocks(g, numels))
        for row, out, block in zip(rows, outputs, parts):
            shape = (*out.shape, *inp.shape)
            if block is None:
                row.append(zeros(shape, dtype=inp.dtype, device=inp.device))
            else:
                row.append(reshape(block, shape))
    return [tuple(row) for row in rows]


def _jacfwd(func: Callable, inputs, strict: bool, vectorize: bool):
    """Forward-mode Jacobian: vmap over a dual level whose tangents are identity rows."""
    if strict:
        raise RuntimeError(
            'dualad.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
            'not supported together (yet). Please either set `strict=False` or `strategy="reverse-'
            'mode"`.'
        )
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
            'implemented for `vectorize=True` (dualad.autograd.functional.jacobian: `strategy="'
            'forward-mode"` requires `vectorize=True`).'
        )
    numels, tangents = _basis(inputs)
    structure: list = []

    def push_forward(*batched_tangents):
        with fwd.dual_level():
            duals = tuple(fwd.make_dual(p, tg) for p, tg in zip(inputs, batched_tangents))
            is_outputs_tuple, outputs = _as_tuple(
                func(*duals), "outputs of the user-provided function", "jacobian"
            )
            structure.append(is_outputs_tuple)
            out_tangents = []
            for out in outputs:
                tangent = fwd.unpack_dual(out).tangent
                out_tangents.append(
                    zeros(out.shape, dtype=out.dtype) if tangent is None else tangent
                )
        return tuple(out_tangents)

    if sum(numels) == 0:
        # no basis to push: one call finds the outputs' shapes; every block has no elements
        out_tangents = push_forward(*(zeros(t.shape, dtype=t.dtype) for t in inputs))
        empty = tuple(
            tuple(zeros((*o.shape, *t.shape), dtype=o.dtype, device=o.device) for t in inputs)
            for o in out_tangents
        )
        return _tuple_postprocess(empty, (structure[0], is_inputs_tuple))
    out_tangents = vmap(push_forward)(*tangents)  # each (total, *out.shape)
    rows = []
    for tangent in out_tangents:
        tangent = tangent.detach()
        out_shape = tuple(tangent.shape[1:])
        row = []
        for k, block in _blocks(tangent, numels):
            block = movedim(block, 0, -1)  # out.shape + (n,)
            row.append(reshape(block, (*out_shape, *inputs[k].shape)))
        rows.append(tuple(row))
    return _tuple_postprocess(tuple(rows), (structure[0], is_inputs_tuple))


def hessian(
    func: _Fn,
    inputs: _In,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a function with a single-element output: ``H[i][j]`` of shape
    ``in_i.shape + in_j.shape``.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0])
    >>> dualad.autograd.functional.hessian(lambda t: (t ** 3).sum(), x)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = _single_scalar_output(func, inp, "hessian", strict)[0]
        return out.reshape(())

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            # the inner reverse pass must record on the dual inputs
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
        return jac

    result = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _tuple_postprocess(result, (is_inputs_tuple, is_inputs_tuple))
