"""var, std, var_mean, std_mean (complex input: real output; gradient of std 0 where it is 0)."""

from __future__ import annotations

from .._dispatch import OpDef, apply1, register
from ._exports import Exports
from ._helpers import conj
from ._reducing import _INF, _as_tensor, _keep, _numel, _reduce_params, _sum
from .base import _reduction_batch
from .comparison import eq, where
from .complex_parts import real
from .reductions import _mean_op

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# var, std


def _centered(x, dims):
    return x - apply1(_mean_op, x, {"dims": dims, "keepdim": True})


def _var_scale(shape, dims, correction):
    """d var / d x = scale * (x - mean); infinite when there are no degrees of freedom."""
    dof = _numel(shape, dims) - correction
    return 2.0 / dof if dof > 0 else _INF


def _var_vjp(cts, outs, args, params, needs):
    x = args[0]
    dims, keepdim, correction = params["dims"], params["keepdim"], params["correction"]
    ct = _keep(cts[0], x.shape, dims, keepdim)
    return (ct * _centered(x, dims) * _var_scale(x.shape, dims, correction),)


def _var_tangent(t, x, dims, keepdim, correction):
    # var is real: its tangent is Re(conj(x - mean) * t) summed (the mean's tangent drops out)
    scale = _var_scale(x.shape, dims, correction)
    return _sum(real(conj(_centered(x, dims)) * t), dims, keepdim) * scale


def _var_jvp(tangents, outs, args, params):
    return _var_tangent(
        tangents[0], args[0], params["dims"], params["keepdim"], params["correction"]
    )


def _std_vjp(cts, outs, args, params, needs):
    # d std = d var / (2 std); 0 where std == 0 (PyTorch masks it the same way)
    x = args[0]
    dims, keepdim, correction = params["dims"], params["keepdim"], params["correction"]
    out = _keep(outs[0], x.shape, dims, keepdim)
    zero = eq(out, 0)
    scale = 0.5 * _var_scale(x.shape, dims, correction)
    ct = _keep(cts[0], x.shape, dims, keepdim)
    return (where(zero, 0, ct * _centered(x, dims) * scale / where(zero, 1, out)),)


def _std_jvp(tangents, outs, args, params):
    out = outs[0]
    zero = eq(out, 0)
    var_tangent = _var_tangent(
        tangents[0], args[0], params["dims"], params["keepdim"], params["correction"]
    )
    return where(zero, 0, var_tangent * 0.5 / where(zero, 1, out))


def _var_impl(xp, x, *, dims, correction, keepdim):
    return xp.var(x, axis=dims, ddof=correction, keepdims=keepdim)


def _std_impl(xp, x, *, dims, correction, keepdim):
    return xp.std(x, axis=dims, ddof=correction, keepdims=keepdim)


_var_op = register(OpDef("var", _var_impl, vjp=_var_vjp, jvp=_var_jvp, batch=_reduction_batch))
_std_op = register(
    OpDef("std", _std_impl, vjp=_std_vjp, jvp=_std_jvp, batch=_reduction_batch, save_out=True)
)


def _moment_params(x, dim, unbiased, keepdim, correction, axis, keepdims, ddof, name):
    if isinstance(dim, bool):  # torch.var(x, True): the old (input, unbiased) overload
        dim, unbiased = None, dim
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"dualad.{name}: std and var only support floating point and complex dtypes "
            f"(got {x.dtype})"
        )
    given = [v for v in (unbiased, correction, ddof) if v is not None]
    if len(given) > 1:
        raise TypeError(f"dualad.{name}: pass only one of unbiased=, correction= and ddof=")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    elif correction is None:
        correction = 1 if ddof is None else ddof
    params = _reduce_params(x, dim, axis, keepdim, keepdims, name)
    params["correction"] = correction
    return params


def _moment(op, doc, with_mean=False):
    """The public function of the moment ``op`` (var or std), or with ``with_mean`` its
    ``op_mean`` (``(op(x, ...), mean(x, ...))``): one signature for all four."""
    name = op.name

    def moment(
        x,
        dim=None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction=None,
        axis=None,
        keepdims=None,
        ddof=None,
    ):
        x = _as_tensor(x)
        params = _moment_params(x, dim, unbiased, keepdim, correction, axis, keepdims, ddof, name)
        value = apply1(op, x, params)
        if with_mean:
            return value, apply1(
                _mean_op, x, {"dims": params["dims"], "keepdim": params["keepdim"]}
            )
        return value

    if with_mean:
        name += "_mean"
    moment.__name__ = moment.__qualname__ = name
    moment.__doc__ = doc
    return moment


var = public.method(
    _moment(
        _var_op,
        """Variance over ``dim`` with ``correction`` (default 1, Bessel's; ``unbiased=False`` or
    ``correction=0``/``ddof=0`` for the population variance). Complex input: real output.

    >>> import dualad
    >>> dualad.var(dualad.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor(1.66666667)
    """,
    )
)
std = public.method(
    _moment(
        _std_op,
        """Standard deviation over ``dim`` (``correction``: see ``var``); gradient 0 where it is 0.

    >>> import dualad
    >>> dualad.std(dualad.tensor([[1.0, 3.0], [2.0, 2.0]]), dim=1)
    tensor([1.41421356, 0.        ])
    """,
    )
)
var_mean = public.function(
    _moment(
        _var_op,
        """``(var(x, ...), mean(x, ...))`` over the same dims.

    >>> import dualad
    >>> dualad.var_mean(dualad.tensor([1.0, 2.0, 3.0, 4.0]))
    (tensor(1.66666667), tensor(2.5))
    >>> dualad.var_mean(dualad.tensor([[1.0, 3.0], [2.0, 2.0]]), dim=1, correction=0)
    (tensor([1., 0.]), tensor([2., 2.]))
    """,
        with_mean=True,
    )
)
std_mean = public.function(
    _moment(
        _std_op,
        """``(std(x, ...), mean(x, ...))`` over the same dims.

    >>> import dualad
    >>> dualad.std_mean(dualad.tensor([1.0, 2.0, 3.0, 4.0]))
    (tensor(1.29099445), tensor(2.5))
    >>> dualad.std_mean(dualad.tensor([[1.0, 3.0], [2.0, 2.0]]), dim=1, correction=0)
    (tensor([1., 0.]), tensor([2., 2.]))
    """,
        with_mean=True,
    )
)
