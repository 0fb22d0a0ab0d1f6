"""softmax and log_softmax along one dim: fused ops with their own rules.

Composites (``exp(x - logsumexp(x))``) would be correct but take twice the memory and time, and
their derivative at a slice that is all ``-inf`` is NaN; these ops have rules that cost one
reduction and define that singular point:

- a slice that is all ``-inf`` (a fully masked row of attention scores): ``softmax`` gives 0
  there and ``log_softmax`` gives ``-inf`` (PyTorch gives NaN in both), and every derivative
  there (VJP, JVP, higher orders) is 0, the value ``logsumexp`` gives it too (its weights are 0).
- ``+inf`` or NaN inputs give NaN, as in PyTorch.

Both are real only (PyTorch refuses complex inputs); integer inputs become the default float.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._dispatch import OpDef, apply1, register
from .._tensor import Tensor
from ._dims import normalize_dim, pick_dim
from ._exports import Exports
from ._promotion import _reject_complex
from ._reducing import _as_tensor, _constant, _dim_batch, _sum, _to_floating
from .base import reshape
from .comparison import gt, where
from .exp_log import exp

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _shifted(xp, x, dim):
    """``x`` minus its maximum along ``dim`` (a slice whose maximum is -inf is not shifted: its
    entries stay -inf instead of becoming NaN)."""
    shift = xp.max(x, axis=dim, keepdims=True)
    shift[shift == -np.inf] = 0
    return x - shift


def _softmax_impl(xp, x, *, dim):
    if x.shape[dim] == 0:
        return x.copy()
    with np.errstate(invalid="ignore"):  # +inf inputs give NaN, as in PyTorch
        e = _shifted(xp, x, dim)
        xp.exp(e, out=e)  # (a fresh array: exp in place saves one)
        total = xp.sum(e, axis=dim, keepdims=True)
        # an all -inf slice has total 0: its outputs are 0 (exp(-inf) / 1), not 0 / 0
        total[total == 0] = 1
        e /= total
        return e


def _log_softmax_impl(xp, x, *, dim):
    if x.shape[dim] == 0:
        return x.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        z = _shifted(xp, x, dim)
        log_total = xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))
        # an all -inf slice has total 0: its outputs are -inf, not -inf - log(0) = NaN
        log_total[log_total == -np.inf] = 0
        z -= log_total
        return z


def _dot_along(a, b, dim):
    """``sum(a * b)`` along ``dim``, kept as size 1 (broadcasts back against a and b)."""
    return _sum(a * b, (dim,), True)


def _softmax_vjp(cts, outs, args, params, needs):
    y = outs[0]
    ct = cts[0]
    # y (g - <g, y>): on an all -inf slice y is 0, so the gradient is 0 there
    return (y * (ct - _dot_along(ct, y, params["dim"])),)


def _softmax_jvp(tangents, outs, args, params):
    y = outs[0]
    t = tangents[0]
    return y * (t - _dot_along(t, y, params["dim"]))


def _live(weights, dim):
    """True on slices whose softmax ``weights`` sum to 1, False on all -inf slices (there they
    sum to 0); a constant."""
    return gt(_sum(_constant(weights), (dim,), True), 0)


def _log_softmax_vjp(cts, outs, args, params, needs):
    dim = params["dim"]
    ct = cts[0]
    weights = exp(outs[0])
    grad = ct - weights * _sum(ct, (dim,), True)
    # on an all -inf slice, g - 0 * sum(g) would pass g through: the documented value is 0
    return (where(_live(weights, dim), grad, 0.0),)


def _log_softmax_jvp(tangents, outs, args, params):
    dim = params["dim"]
    t = tangents[0]
    weights = exp(outs[0])
    return where(_live(weights, dim), t - _dot_along(weights, t, dim), 0.0)


_softmax_op = register(
    OpDef(
        "softmax",
        _softmax_impl,
        vjp=_softmax_vjp,
        jvp=_softmax_jvp,
        batch=_dim_batch,
        save_args=False,
        save_out=True,
        sparsity=("lines", "nonlinear"),
    )
)

_log_softmax_op = register(
    OpDef(
        "log_softmax",
        _log_softmax_impl,
        vjp=_log_softmax_vjp,
        jvp=_log_softmax_jvp,
        batch=_dim_batch,
        save_args=False,
        save_out=True,
        sparsity=("lines", "nonlinear"),
    )
)


def _legacy_dim(name: str, ndim: int) -> int:
    """PyTorch's implicit dim for ``softmax(x)`` without ``dim`` (deprecated there too)."""
    dim = 0 if ndim in (0, 1, 3) else 1
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        f"dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return dim


def _prepare(name, x, dim, axis, dtype):
    x = _as_tensor(x)
    _reject_complex(name, x)
    x = _to_floating(x, dtype)
    if dtype is not None and x.dtype.kind != "f":
        raise TypeError(f"dualad.{name}: dtype must be a floating dtype, got {x.dtype}")
    dim = pick_dim(dim, axis)
    if dim is None:
        dim = _legacy_dim(name, x.ndim)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"dualad.{name}: dim must be an int, got {type(dim).__name__}")
    return x, normalize_dim(int(dim), x.ndim, op=name)


def _along(name, op, x, dim, axis, dtype):
    x, dim = _prepare(name, x, dim, axis, dtype)
    if x.ndim == 0:  # a 0-d tensor is its own slice (softmax 1, log_softmax 0), as in PyTorch
        return reshape(apply1(op, reshape(x, (1,)), {"dim": 0}), ())
    return apply1(op, x, {"dim": dim})


@public.method
def softmax(x, dim=None, dtype=None, *, axis=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (``torch.softmax``; ``axis=`` as in SciPy).

    ``dtype``: cast ``x`` to it first. Without ``dim``, PyTorch's deprecated implicit choice
    (dim 0 for 0-, 1- and 3-d inputs, else 1) with its warning. Singular points: a slice that is
    all ``-inf`` gives 0 (PyTorch: NaN) and gradient 0; ``+inf`` inputs give NaN.

    >>> import dualad
    >>> dualad.softmax(dualad.tensor([[0.0, 0.0], [0.0, 1000.0]]), dim=1)
    tensor([[0.5, 0.5],
            [0. , 1. ]])
    >>> x = dualad.tensor([-float("inf"), -float("inf")], requires_grad=True)
    >>> y = dualad.softmax(x, dim=0); y
    tensor([0., 0.], grad_fn=<SoftmaxBackward0>)
    >>> dualad.autograd.grad(y[0], x)
    (tensor([0., 0.]),)
    """
    return _along("softmax", _softmax_op, x, dim, axis, dtype)


@public.method
def log_softmax(x, dim=None, dtype=None, *, axis=None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim`` (``torch.log_softmax``; ``axis=`` as in SciPy).

    ``dtype``: cast ``x`` to it first. Without ``dim``, PyTorch's deprecated implicit choice
    (see ``softmax``). Singular points: a slice that is all ``-inf`` gives ``-inf`` (PyTorch:
    NaN) and gradient 0; a single ``-inf`` entry of a finite slice gives ``-inf`` there and the
    exact gradient (1 - softmax = 1 for that entry); ``+inf`` inputs give NaN.

    >>> import dualad
    >>> dualad.log_softmax(dualad.tensor([0.0, 0.0, -float("inf")]), dim=0)
    tensor([-0.69314718, -0.69314718,        -inf])
    >>> x = dualad.tensor([[-float("inf")] * 2, [1.0, 2.0]], requires_grad=True)
    >>> dualad.autograd.grad(dualad.log_softmax(x, 1)[:, 0].sum(), x)
    (tensor([[ 0.        ,  0.        ],
            [ 0.73105858, -0.73105858]]),)
    """
    return _along("log_softmax", _log_softmax_op, x, dim, axis, dtype)
