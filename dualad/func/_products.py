"""``hvp`` (forward mode over ``grad``) and ``linearize`` (a JVP function from one recorded
reverse graph)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._creation import zeros_like
from .._tensor import Tensor
from .._tree import flatten
from ._arrays import leaf_to_tensor, tree_to_arrays, tree_to_tensors
from ._checks import _check_callable
from ._forward import _jvp
from ._reverse import _grad_transform, _vjp, vjp


def hvp(func: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """``(func(*primals), H·tangents)`` for a scalar ``func``: forward mode over the gradient
    (``jvp`` of ``grad``). With tuples the product is a tuple with one entry per primal, like
    ``jvp``; a single Tensor primal and tangent give a single Tensor product, as in
    ``torch.autograd.functional.hvp``.

    >>> import dualad
    >>> from dualad.func import hvp
    >>> cube = lambda x: (x**3).sum()
    >>> hvp(cube, (dualad.tensor([1.0, 2.0]),), (dualad.tensor([1.0, 1.0]),))[1]
    (tensor([ 6., 12.]),)
    >>> hvp(cube, dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    _check_callable(func, "hvp")
    plain = not isinstance(primals, Tensor) and not isinstance(tangents, Tensor)
    # (a single array or number stands for one primal, as a single Tensor does)
    primals, tangents = leaf_to_tensor(primals, "hvp"), leaf_to_tensor(tangents, "hvp")
    single = isinstance(primals, Tensor) and isinstance(tangents, Tensor)
    if single:
        primals, tangents = (primals,), (tangents,)
    else:
        primals, saw_p = tree_to_tensors(primals, "hvp")
        tangents, saw_t = tree_to_tensors(tangents, "hvp")
        plain = plain and not (saw_p or saw_t)
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError(
            "dualad.func.hvp: Expected primals and tangents to be tuples (or both single "
            "Tensors). E.g. hvp(f, (x,), (t,))"
        )
    nums = tuple(range(len(primals)))
    if not nums:
        raise RuntimeError("dualad.func.hvp: expected at least one primal")

    def gradient_and_value(*p: Any) -> Any:
        return _grad_transform(func, nums, False, "hvp", with_value=True)(*p)

    (_, value), (product, _) = _jvp(
        gradient_and_value, primals, tangents, False, copy_tangents=True, name="hvp"
    )
    out = value, (product[0] if single else product)
    return tree_to_arrays(out) if plain else out


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the JVP at ``primals``.

    ``func`` runs once. Its reverse graph is recorded by ``vjp``; ``vjp_fn`` is linear in the
    cotangent, so the VJP of ``vjp_fn`` itself (recorded once, at a zero cotangent) is its
    transpose, the JVP: every ``jvp_fn`` call is one backward pass of that recorded graph.

    >>> import dualad
    >>> from dualad.func import linearize
    >>> out, jvp_fn = linearize(dualad.sin, dualad.tensor([0.0, 1.0]))
    >>> jvp_fn(dualad.tensor([2.0, 1.0]))
    tensor([2.        , 0.54030231])
    """
    _check_callable(func, "linearize")
    primals, saw_tensor = tree_to_tensors(primals, "linearize")
    out, vjp_fn = _vjp(func, primals, False, "linearize")
    out_leaves, rebuild_out = flatten(out)
    in_leaves, _ = flatten(primals)
    # outputs without a derivative (integer, boolean) get zero tangents, as in jvp
    diff = [k for k, o in enumerate(out_leaves) if o.dtype.kind in "fc"]
    fixed = [zeros_like(o) for o in out_leaves]

    def pullback(*cotangents: Any) -> Any:
        cts = list(fixed)
        for k, ct in zip(diff, cotangents):
            cts[k] = ct
        return vjp_fn(rebuild_out(cts))

    transpose = vjp(pullback, *[fixed[k] for k in diff])[1] if diff else None

    def jvp_fn(*tangents: Any) -> Any:
        tangents, saw_t = tree_to_tensors(tangents, "linearize")
        tangent_leaves, _ = flatten(tangents)
        if len(tangent_leaves) != len(in_leaves):
            raise RuntimeError(
                "dualad.func.linearize: expected the tangents to have the structure of the "
                f"primals ({len(in_leaves)} tensors), got {len(tangent_leaves)}"
            )
        for i, (tangent, primal) in enumerate(zip(tangent_leaves, in_leaves)):
            if not isinstance(tangent, Tensor):
                raise RuntimeError(
                    f"dualad.func.linearize: tangent {i} must be a Tensor, got "
                    f"{type(tangent).__name__}"
                )
            if tuple(tangent.shape) != tuple(primal.shape):
                raise RuntimeError(
                    f"dualad.func.linearize: tangent {i} has shape {tuple(tangent.shape)} but "
                    f"its primal has shape {tuple(primal.shape)}"
                )
        result = [zeros_like(o) for o in out_leaves]
        if transpose is not None:
            for k, value in zip(diff, transpose(tuple(tangents))):
                result[k] = value
        result = rebuild_out(result)
        # (copies: the recorded graph that jvp_fn runs again may hold them)
        return result if saw_tensor or saw_t else tree_to_arrays(result, copy=True)

    return (out, jvp_fn) if saw_tensor else (tree_to_arrays(out, copy=True), jvp_fn)
