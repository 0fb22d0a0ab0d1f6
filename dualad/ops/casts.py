"""Casts between dtypes and devices: astype, to_device_op."""

from __future__ import annotations

from .. import _dtypes
from .._backend import to_device
from .._dispatch import OpDef, apply, apply1, register
from .._opdef import ELEMENTWISE_AFFINE
from .._state import GRAD
from ._exports import Exports
from .complex_parts import real

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _astype_vjp(cts, outs, args, params, needs):
    (x,) = args
    ct = cts[0]
    if x.dtype.kind != "c" and ct.dtype.kind == "c":
        ct = real(ct)
    return (astype(ct, x.dtype),)


_astype_op = register(
    OpDef(
        "astype",
        lambda xp, x, *, dtype: x.astype(dtype),
        vjp=_astype_vjp,
        jvp=lambda tangents, outs, args, params: astype(tangents[0], params["dtype"]),
        batch=lambda op, args, bdims, params: (apply(op, args[0], **params), bdims[0]),
        save_args=False,
        node_name="ToCopyBackward0",
        sparsity=ELEMENTWISE_AFFINE,
    )
)


@public.method
def astype(x, dtype):
    """A copy of ``x`` cast to ``dtype`` (differentiable between float/complex dtypes).

    >>> import dualad
    >>> x = dualad.tensor([1.5, 2.5], requires_grad=True)
    >>> dualad.astype(x, dualad.float32)
    tensor([1.5, 2.5], dtype=float32, grad_fn=<ToCopyBackward0>)
    >>> dualad.astype(x, dualad.int64)  # not differentiable: no graph
    tensor([1, 2])
    """
    dtype = _dtypes.to_dtype(dtype)
    if not _dtypes.is_differentiable(dtype):
        enabled = GRAD.enabled  # (a cast to a non-differentiable dtype records nothing)
        GRAD.enabled = False
        try:
            return apply1(_astype_op, x, {"dtype": dtype})
        finally:
            GRAD.enabled = enabled
    return apply1(_astype_op, x, {"dtype": dtype})


def _to_device_impl(xp, x, *, device):
    out = to_device(x, device)
    # already there: to_device hands back the array itself; the op promises a copy (a result
    # sharing the input's memory without being a view would let in-place writes leak into it)
    return out.copy() if out is x else out


_to_device_op = register(
    OpDef(
        "to_device",
        _to_device_impl,
        vjp=lambda cts, outs, args, params, needs: (
            to_device_op(cts[0], device=_device_of_meta(args[0], cts[0])),
        ),
        jvp=lambda tangents, outs, args, params: to_device_op(tangents[0], **params),
        batch=lambda op, args, bdims, params: (apply(op, args[0], **params), bdims[0]),
        save_args=True,
        node_name="ToCopyBackward0",
    )
)


def _device_of_meta(x, like):
    return x.device


@public.function
def to_device_op(x, *, device):
    """``x`` copied to ``device`` (differentiable: gradients go back to the source device).

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dualad.to_device_op(x, device='cpu')
    >>> y.device, dualad.autograd.grad((3 * y).sum(), x)
    (device(type='cpu'), (tensor([3., 3.]),))
    """
    return apply1(_to_device_op, x, {"device": device})
