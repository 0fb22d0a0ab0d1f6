"""``grad``, ``grad_and_value`` and ``vjp``: reverse mode, one grad level each
(``grad_level.py``).

>>> import dualad
>>> from dualad.func import grad
>>> grad(lambda x: (x ** 3).sum())(dualad.tensor([1.0, 2.0]))
tensor([ 3., 12.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._creation import ones_like, zeros_like
from .._tensor import Tensor
from .._tree import flatten, tree_map
from ._arrays import convert_args, tree_to_arrays, tree_to_tensors
from ._checks import (
    _check_callable,
    _check_scalar,
    _check_tensors,
    _is_int,
    _normalize_argnums,
    _split_aux,
)
from .grad_level import GradLevel, backward, enter, leave, track, unwrap


def _zeros_for_unused(grads: list, inputs: list) -> list:
    for g in grads:
        if g is None:
            break
    else:
        return grads
    return [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]


def _wrap_argnums(
    args: tuple, nums: tuple, level: GradLevel, name: str
) -> tuple[list, list, list, list]:
    """Replace the differentiated arguments by leaves of ``level``; returns the new argument
    list, the input leaves, their capture nodes and one rebuild function per argnum."""
    new_args = list(args)
    inputs: list = []
    nodes: list = []
    rebuilds = []
    for i in nums:
        leaves, rebuild = flatten(new_args[i])
        wrapped = [track(leaf, level, name) for leaf in leaves]
        inputs.extend(leaves)
        nodes.extend(w._gnode for w in wrapped)
        rebuilds.append((len(leaves), rebuild))
        new_args[i] = rebuild(wrapped)
    return new_args, inputs, nodes, rebuilds


def _rebuild_per_argnum(flat: list, rebuilds: list) -> list:
    out = []
    start = 0
    for count, rebuild in rebuilds:
        out.append(rebuild(flat[start : start + count]))
        start += count
    return out


def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``(gradient, value)`` of a scalar-valued ``func`` (``(gradient, (value, aux))`` with
    ``has_aux``). The gradient is with respect to ``argnums`` (an int: that argument's pytree;
    a tuple: a tuple of them).

    >>> import dualad
    >>> from dualad.func import grad_and_value
    >>> grad_and_value(lambda x: (x**2).sum())(dualad.tensor([1.0, 3.0]))
    (tensor([2., 6.]), tensor(10.))
    """
    return _grad_transform(func, argnums, has_aux, "grad_and_value", with_value=True)


def grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``func`` with respect to ``argnums`` (``(gradient, aux)``
    with ``has_aux``). Composes with every transform (``vmap(grad(f))`` gives per-example
    gradients; ``grad(grad(f))`` second derivatives).

    >>> import dualad
    >>> from dualad.func import grad
    >>> grad(grad(dualad.sin))(dualad.tensor(0.0))
    tensor(-0.)
    """
    return _grad_transform(func, argnums, has_aux, "grad", with_value=False)


def _grad_transform(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...],
    has_aux: bool,
    name: str,
    with_value: bool,
) -> Callable[..., Any]:
    _check_callable(func, name)

    @functools.wraps(func, updated=())
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _normalize_argnums(argnums, len(args), name)
        args, plain = convert_args(args, nums, kwargs, name)
        level = enter(f"dualad.func.{name}")
        try:
            wrapped, inputs, nodes, rebuilds = _wrap_argnums(args, nums, level, name)
            result = func(*wrapped, **kwargs)
            aux = None
            if has_aux:
                result, aux = _split_aux(result, name)
            _check_scalar(result, name)
        finally:
            leave(level)
        value = unwrap(result, level)
        grads = backward(level, [result], [ones_like(value)], nodes, retain=False)
        grads = _rebuild_per_argnum(_zeros_for_unused(grads, inputs), rebuilds)
        gradient = grads[0] if _is_int(argnums) else tuple(grads)
        if has_aux:
            aux = tree_map(lambda v: unwrap(v, level), aux)
            out = (gradient, (value, aux)) if with_value else (gradient, aux)
        else:
            out = (gradient, value) if with_value else gradient
        return tree_to_arrays(out) if plain else out

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns a tuple with one gradient
    (pytree) per primal. ``vjp_fn`` can be called many times, under other transforms too
    (``jacrev`` vmaps it).

    >>> import dualad
    >>> from dualad.func import vjp
    >>> out, vjp_fn = vjp(dualad.sin, dualad.tensor([0.0]))
    >>> vjp_fn(dualad.tensor([2.0]))
    (tensor([2.]),)
    """
    _check_callable(func, "vjp")
    primals, saw_tensor = tree_to_tensors(primals, "vjp")
    res = _vjp(func, primals, has_aux, "vjp")
    vjp_fn = res[1]

    def array_vjp_fn(cotangents: Any, *, retain_graph: bool = True) -> Any:
        cotangents, saw_ct = tree_to_tensors(cotangents, "vjp")
        grads = vjp_fn(cotangents, retain_graph=retain_graph)
        # (copies: the retained graph may hold what a gradient is made of)
        return grads if saw_tensor or saw_ct else tree_to_arrays(grads, copy=True)

    if saw_tensor:
        return (res[0], array_vjp_fn, *res[2:])
    return (tree_to_arrays(res[0], copy=True), array_vjp_fn, *tree_to_arrays(res[2:]))


def _vjp(
    func: Callable[..., Any], primals: tuple, has_aux: bool, name: str
) -> tuple:  # (output, vjp_fn) or (output, vjp_fn, aux)
    """``vjp``; ``name``: the transform the user called (``jacrev``, ``linearize`` ...), which
    error messages name."""
    level = enter(f"dualad.func.{name}")
    try:
        leaves, rebuild = flatten(primals)
        wrapped = [track(leaf, level, name) for leaf in leaves]
        nodes = [w._gnode for w in wrapped]
        result = func(*rebuild(wrapped))
        aux = None
        if has_aux:
            result, aux = _split_aux(result, name)
        out_leaves, rebuild_out = flatten(result)
        _check_tensors(
            out_leaves,
            f"dualad.func.{name}: expected f(*primals) to return only Tensors (or pytrees of "
            "Tensors), got ",
        )
    finally:
        leave(level)
    values = [unwrap(o, level) for o in out_leaves]

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True) -> tuple:
        ct_leaves, _ = flatten(cotangents)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError(
                "dualad.func.vjp: Expected pytree structure of cotangents to be the same as "
                f"pytree structure of outputs to the function ({len(ct_leaves)} cotangents for "
                f"{len(out_leaves)} outputs)"
            )
        for i, (ct, v) in enumerate(zip(ct_leaves, values)):
            if not isinstance(ct, Tensor):
                raise RuntimeError(
                    f"dualad.func.vjp: cotangent {i} must be a Tensor, got {type(ct).__name__}"
                )
            if tuple(ct.shape) != tuple(v.shape):
                raise RuntimeError(
                    f"dualad.func.vjp: Mismatch in shape: cotangent {i} has shape "
                    f"{tuple(ct.shape)} but the output has shape {tuple(v.shape)}"
                )
            if ct.dtype != v.dtype and v.dtype.kind in "fc":
                if (ct.dtype.kind == "c") != (v.dtype.kind == "c"):
                    raise RuntimeError(
                        "For complex Tensors, both grad_output and output are required to have "
                        f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                        f"{ct.dtype} and output[{i}] has a dtype of {v.dtype}."
                    )
                ct_leaves[i] = ct.to(dtype=v.dtype)  # (as backward does: integers, widths)
        grads = backward(level, out_leaves, ct_leaves, nodes, retain=retain_graph)
        return tuple(rebuild(_zeros_for_unused(grads, leaves)))

    out = rebuild_out(values)
    if has_aux:
        return out, vjp_fn, tree_map(lambda v: unwrap(v, level), aux)
    return out, vjp_fn
