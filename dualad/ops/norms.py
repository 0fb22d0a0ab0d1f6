"""Vector norms: vector_norm (the 2-norm has gradient 0 at 0); ``torch.norm`` itself is in
``ops/torch_norm.py``, above the singular values its ``"nuc"`` needs."""

from __future__ import annotations

from .._dispatch import OpDef, apply1, register
from ._dims import normalize_dims
from ._exports import Exports
from ._helpers import conj
from ._reducing import _INF, _constant, _count, _floating_input, _keep, _sum
from .arithmetic import sqrt
from .base import _reduction_batch, expand_reduced
from .comparison import eq, isnan, logical_or, where
from .complex_parts import abs, real, sgn
from .exp_log import pow

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# vector norms


def _norm_impl(xp, x, *, ord, dims, keepdim):
    # (testing/opdb/reductions.py's numpy_norm has the same cases on purpose: a reference must
    # not share the code it checks)
    a = xp.abs(x)
    if ord == 2:
        return xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
    if ord == _INF:
        return xp.max(a, axis=dims, keepdims=keepdim)
    if ord == -_INF:
        return xp.min(a, axis=dims, keepdims=keepdim)
    if ord == 0:
        return xp.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    if ord == 1:
        return xp.sum(a, axis=dims, keepdims=keepdim)
    return xp.sum(a**ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)


def _magnitude(x):
    """|x|, differentiable to any order away from 0 (also for complex x)."""
    if x.dtype.kind == "c":
        return sqrt(real(x * conj(x)))
    return abs(x)


def _sign(x):
    """x / |x| (0 at 0): a constant for real x, differentiable for complex x."""
    if x.dtype.kind == "c":
        zero = eq(x, 0)
        return where(zero, 0, x / where(zero, 1, _magnitude(x)))
    return _constant(sgn(x))


def _norm_unit_gradient(x, out, order, dims):
    """The gradient of the norm for a unit cotangent, shaped like ``x`` (PyTorch's complex
    convention: ``x / |x|`` where the real case has ``sign(x)``); ``out`` has its reduced dims
    kept. None for ord 0 (zero gradient)."""
    if order == 0:
        return None
    if order == 1:
        return _sign(x)
    if order in (_INF, -_INF):  # like amax(|x|): ties (and NaNs) share the gradient
        magnitude = abs(x)  # bitwise the impl's |x|, so that the maxima are found
        mask = logical_or(eq(magnitude, out), isnan(magnitude))
        return where(mask, _sign(x) / _count(mask, dims, True, out.dtype), 0)
    magnitude = _magnitude(x)
    zero = eq(out, 0)
    if order == 2:  # x / |x|_2, and 0 at 0 (PyTorch's subgradient)
        return where(zero, 0, x / where(zero, 1, out))
    if order < 1:  # |x|^(p-1) blows up at x = 0: that element gets 0, like PyTorch
        x_zero = eq(x, 0)
        scaled = where(x_zero, 0, _sign(x) * pow(where(x_zero, 1, magnitude), order - 1))
        return scaled * pow(out, 1 - order)
    scaled = _sign(x) * pow(magnitude, order - 1)
    return where(zero, 0, scaled / pow(where(zero, 1, out), order - 1))


def _norm_vjp(cts, outs, args, params, needs):
    x = args[0]
    dims, keepdim = params["dims"], params["keepdim"]
    ct = _keep(cts[0], x.shape, dims, keepdim)
    unit = _norm_unit_gradient(x, _keep(outs[0], x.shape, dims, keepdim), params["ord"], dims)
    if unit is None:
        return (expand_reduced(ct * 0, x.shape, dims, True),)
    return (ct * unit,)


def _norm_jvp(tangents, outs, args, params):
    # the norm is real: tangent = Re(conj(gradient) * t), summed
    x = args[0]
    dims, keepdim = params["dims"], params["keepdim"]
    unit = _norm_unit_gradient(x, _keep(outs[0], x.shape, dims, keepdim), params["ord"], dims)
    if unit is None:
        return outs[0] * 0
    return _sum(real(conj(unit) * tangents[0]), dims, keepdim)


_norm_op = register(
    OpDef(
        "norm",
        _norm_impl,
        vjp=_norm_vjp,
        jvp=_norm_jvp,
        batch=_reduction_batch,
        save_out=True,
        node_name="LinalgVectorNormBackward0",
    )
)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None):
    """The vector ``ord``-norm over ``dim`` (all dims by default, as one flat vector).

    ``ord``: any float, ``inf``, ``-inf`` or 0 (the number of non-zeros). Real output for
    complex input. The gradient and tangent of the 2-norm at 0 are 0 (PyTorch's subgradient),
    and so is its second derivative there (PyTorch's too).
    """
    x = _floating_input(
        x,
        dtype,
        "dualad.linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
    )
    dims = normalize_dims(dim, x.ndim, op="norm")
    order = float(ord)
    if order in (_INF, -_INF) and x.numel() == 0:
        raise RuntimeError(
            "dualad.linalg.vector_norm: cannot compute the inf norm on an empty tensor because "
            "the operation does not have an identity"
        )
    return apply1(_norm_op, x, {"ord": order, "dims": dims, "keepdim": bool(keepdim)})
