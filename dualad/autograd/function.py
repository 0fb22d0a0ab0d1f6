"""Custom differentiable operations: ``Function`` (PyTorch's ``torch.autograd.Function``).

A Function gathers a forward computation (any Python code, NumPy/CuPy kernels included) with
its derivatives: ``backward`` (a VJP), optionally ``jvp`` (forward mode) and ``vmap`` (batching).

This module is a facade: the machinery sits in the levels, each owning its rule for a Function
call (``rev/function.py``: the base class, ``apply`` and the eager bottom; ``fwd/function.py``,
``vmap/function.py``, ``func/grad_function.py``: dual, vmap and ``func.grad`` levels). What is
here needs the levels together: a forward-mode rule derived from backward (a ``func.grad`` level
under a dual level's rule) and ``once_differentiable``, which refuses ``func.grad`` tracking.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._creation import zeros_like
from .._errors import TrackedConversionError
from .._state import GRAD
from .._tensor import Tensor
from .._wrapper import LevelTensor
from ..func.grad_level import GradTensor, enter, leave, track
from ..func.grad_level import backward as level_backward
from ..fwd.function import _no_jvp_error
from ..rev.function import FunctionBase, FunctionMeta
from ..rev.function_ctx import LevelCtx
from ..rev.function_node import NONDIFF, NONTENSOR, FunctionCtx, backward_method, check_count
from ..rev.node import ErrorNode, accumulator_of


class Function(FunctionBase):
    """Base class of custom differentiable operations.

    Subclass it with static ``forward`` and ``backward`` (and optionally ``jvp``, ``vmap``) and
    call ``MyFunction.apply(*args)``. Either ``forward(ctx, *args)`` fills ``ctx`` itself, or
    ``forward(*args)`` leaves that to ``setup_context(ctx, inputs, output)``.

    >>> import dualad
    >>> class Cube(dualad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         (x,) = ctx.saved_tensors
    ...         return grad_output * 3 * x ** 2
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = Cube.apply(x)
    >>> y.grad_fn.name()
    'CubeBackward'
    >>> y.sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
    """

    _function_base = True  # (``overrides``: a method defined here is not the user's)

    @classmethod
    def _jvp_from_backward(cls, ctx, args: tuple, outputs: tuple, kinds: tuple, tangents: list):
        """Output tangents of a Function without ``jvp``, from its backward (a VJP, linear in the
        output gradients ``u``): ``J t`` is the gradient of ``<backward(u), t>`` with respect to
        ``u``. A ``func.grad`` level records backward on ``u``, so this needs a backward written in
        dualad ops; one that is not (NumPy code, ``@once_differentiable``) raises instead of
        giving zero tangents."""
        level = enter(f"the forward-mode derivative of {cls.__name__} (from its backward)")
        try:
            us: list = []
            for o, (kind, _) in zip(outputs, kinds):
                if kind == NONTENSOR:
                    us.append(None)
                elif kind == NONDIFF:
                    us.append(zeros_like(o) if ctx.materialize_grads else None)
                else:
                    us.append(track(zeros_like(o), level, "jvp"))
            view = LevelCtx(ctx, outputs, None, ctx.needs_input_grad)
            try:
                result = backward_method(cls)(view, *us)
            except TrackedConversionError as exc:
                # a backward in NumPy code converts the gradient inputs: PyTorch's error, not the
                # conversion's, whose level the user never entered
                raise _no_jvp_error(cls) from exc
            result = check_count(result, len(args), cls._backward_cls.__name__)
        finally:
            leave(level)
        roots = []
        cotangents = []
        for g, t in zip(result, tangents):
            if g is None or t is None:
                continue
            if not (type(g) is GradTensor and g._level is level and g._gnode is not None):
                raise _no_jvp_error(cls)
            roots.append(g)
            cotangents.append(t)
        leaves = [u._gnode for u in us if type(u) is GradTensor]
        derived = level_backward(level, roots, cotangents, leaves, retain=False) if roots else []
        derived = iter(derived)
        return tuple([next(derived, None) if type(u) is GradTensor else None for u in us])


# ---------------------------------------------------------------------------------------------
# once_differentiable

_ONCE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a Function's ``backward`` that cannot itself be differentiated.

    The backward runs with grad mode off (it may use any NumPy/CuPy code). When its result
    would be differentiated again (``create_graph=True`` with gradients that require grad),
    that second differentiation raises instead of silently giving wrong values.

    >>> import dualad
    >>> from dualad.autograd import Function, once_differentiable
    >>> class Square(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad_output):
    ...         (x,) = ctx.saved_tensors
    ...         return dualad.tensor(2 * x.numpy() * grad_output.numpy())
    >>> x = dualad.tensor(3.0, requires_grad=True)
    >>> dualad.autograd.grad(Square.apply(x), x)
    (tensor(6.),)
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        previous = GRAD.enabled
        GRAD.enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            GRAD.enabled = previous
        if not previous:
            return outputs
        _refuse_transform_tracking(args)
        _refuse_transform_tracking(_saved_values(ctx))
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        values = outputs if is_tuple else (outputs,)
        return _through_error_node(values) if is_tuple else _through_error_node(values)[0]

    return wrapper


def _saved_values(ctx) -> tuple:
    try:
        return tuple(ctx.saved_tensors)
    except RuntimeError:
        return ()  # freed: nothing that a level could track


def _refuse_transform_tracking(args: tuple) -> None:
    """A ``func.grad`` level recording the backward would see constants: refuse loudly."""
    for a in args:
        while isinstance(a, LevelTensor):
            if type(a) is GradTensor and a._level.alive:
                raise RuntimeError(
                    f"{_ONCE_MESSAGE} (dualad: the backward's gradients are tracked by "
                    f"dualad.func grad level {a._level.index}, which would differentiate it)"
                )
            a = a._value


def _through_error_node(values: tuple) -> tuple:
    """``values`` as outputs of a node whose backward raises (PyTorch's DelayedError)."""
    edges = []
    for v in values:
        if isinstance(v, Tensor) and type(v) is Tensor:
            leaf = v.detach()
            leaf._rg = True
            edges.append((accumulator_of(leaf), 0))
        else:
            edges.append((None, 0))
    node = ErrorNode(_ONCE_MESSAGE, tuple(edges))
    node._nout = len(values)
    out = []
    for i, (v, (edge_node, _)) in enumerate(zip(values, edges)):
        if edge_node is None:
            out.append(v)
            continue
        alias = v.detach()
        alias._rg = True
        alias._node = node
        alias._out_nr = i
        out.append(alias)
    return tuple(out)


__all__ = ["Function", "FunctionCtx", "FunctionMeta", "once_differentiable"]
