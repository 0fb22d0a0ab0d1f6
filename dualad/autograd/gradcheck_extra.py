"""gradcheck's checks besides the Jacobian comparison: the inputs it accepts, undefined
gradients (forward and reverse), batched gradients (``vmap`` over the VJP / JVP against a loop)
and "backward multiplied by grad_output".
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import fwd
from .._dispatch import OpDef, dispatch
from .._tensor import Tensor
from ..ops import stack
from ..vmap.api import vmap
from .gradcheck_jacobians import _make_vectors
from .gradcheck_util import (
    _FAST_MODE_SEED,
    _UNDEFINED_GRAD_NOTE,
    _UNDEFINED_GRAD_WARNING,
    FAILED_BATCHED_GRAD_MSG,
    FAILED_BATCHED_GRAD_MSG_FWD_AD,
    GradcheckError,
    _allclose,
    _as_tuple,
    _batched_grad_failure_msg,
    _diff_input_indices,
    _diff_inputs,
    _differentiable_outputs,
    _host,
    _is_float_or_complex,
    _random_like,
    _tensor_like,
    _zeros_for,
)
from .gradients import grad as _autograd_grad

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


def _compare_batched(result, expected, output_idx_of, is_forward_ad) -> None:
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        r, e = _host(res), _host(exp)
        if r.shape == e.shape and _allclose(r, e, 1e-5, 1e-8):
            continue
        raise GradcheckError(
            _batched_grad_failure_msg(output_idx_of(input_idx), input_idx, res, exp, is_forward_ad)
        )


def _batched_vs_loop(per_sample, batched, samples: list, output_idx_of, is_forward_ad) -> None:
    """``batched`` on the stacked ``samples`` against ``per_sample`` on each, stacked."""
    expected = [stack(list(shards)) for shards in zip(*[per_sample(s) for s in samples])]
    try:
        result = batched(stack(samples))
    except RuntimeError as ex:
        note = FAILED_BATCHED_GRAD_MSG_FWD_AD if is_forward_ad else FAILED_BATCHED_GRAD_MSG
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{note}") from ex
    _compare_batched(result, expected, output_idx_of, is_forward_ad)


def _test_batched_grad_forward_ad(func, inputs) -> bool:
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
        _batched_vs_loop(jvp, vmap(jvp), tangents, lambda i, k=input_idx: k, True)
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

    def batched_vjp(v):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Pp]erformance.*")
            return vjp(v, batched=True)

    _batched_vs_loop(vjp, batched_vjp, grad_outputs, lambda i: output_idx, False)
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


# An identity op whose VJP returns no gradient: the input receives an undefined (None) gradient,
# whatever its output's grad_output was (PyTorch's ``UndefinedGrad``). Deliberately not
# registered: a private helper, not part of the op registry.
_UNDEFINED_GRAD_OP = OpDef(
    "gradcheck_undefined_grad",
    lambda xp, x: x.copy(),
    vjp=lambda cts, outs, args, params, needs: (None,),
    jvp=lambda tangents, outs, args, params: tangents[0],
    batch=lambda op, args, bdims, params: (dispatch(op, (args[0],), {}), bdims[0]),
    save_args=False,
    node_name="UndefinedGradBackward",
)


def _undefined_grad(t: Tensor) -> Tensor:
    return dispatch(_UNDEFINED_GRAD_OP, (t,), {})


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
