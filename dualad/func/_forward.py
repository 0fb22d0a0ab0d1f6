"""``jvp``: forward mode, one dual level (``dualad.fwd``); ``jacfwd`` and ``hvp`` push their
tangents through ``_jvp``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import fwd
from .._creation import zeros_like
from .._state import GRAD
from .._tensor import Tensor
from .._tree import flatten
from ..ops import clone
from ._arrays import tree_to_arrays, tree_to_tensors
from ._checks import _check_callable


def jvp(
    func: Callable[..., Any],
    primals: tuple,
    tangents: tuple,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """``(func(*primals), J·tangents)`` by forward mode (one dual level).

    ``primals`` and ``tangents`` are tuples (pytrees) of the same structure and shapes; arrays
    and numbers work too (arrays come back when no argument was a Tensor). ``has_aux``:
    ``func`` returns ``(output, aux)`` and ``jvp`` returns ``(output, tangent, aux)``.

    >>> import dualad
    >>> from dualad.func import jvp
    >>> jvp(dualad.sin, (dualad.tensor([0.0, 1.0]),), (dualad.tensor([1.0, 2.0]),))
    (tensor([0.        , 0.84147098]), tensor([1.        , 1.08060461]))
    """
    _check_callable(func, "jvp")
    primals, saw_p = tree_to_tensors(primals, "jvp")
    tangents, saw_t = tree_to_tensors(tangents, "jvp")
    # (the converted tangents are this call's own copies: no copy protecting them is needed)
    out = _jvp(func, primals, tangents, has_aux, copy_tangents=saw_t)
    return out if saw_p or saw_t else tree_to_arrays(out)


def _jvp(
    func: Callable[..., Any],
    primals: tuple,
    tangents: tuple,
    has_aux: bool,
    copy_tangents: bool,
    name: str = "jvp",
) -> tuple:
    """``jvp``; ``copy_tangents=False`` when the tangents are the caller's private values
    (``jacfwd``'s basis): they need no copy protecting them from in-place ops on the duals.
    ``name``: the transform the user called (``jacfwd``, ``hvp`` ...), which errors name."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError(
            "dualad.func.jvp: Expected primals and tangents to be tuples. E.g. jvp(f, (x,), (t,))"
        )
    primal_leaves, rebuild = flatten(primals)
    tangent_leaves, _ = flatten(tangents)
    if len(primal_leaves) != len(tangent_leaves):
        raise RuntimeError(
            "dualad.func.jvp: Expected primals and tangents to have the same python structure"
        )
    pairs = []
    for p, t in zip(primal_leaves, tangent_leaves):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise TypeError("dualad.func.jvp: primals and tangents must be Tensors")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                f"dualad.func.jvp: a primal has shape {tuple(p.shape)} but its tangent has "
                f"shape {tuple(t.shape)}"
            )
        if t.dtype != p.dtype and t.dtype.kind == p.dtype.kind:
            t = t.to(dtype=p.dtype)  # (another float width: the primal's, as torch does)
        # the dual's primal is a copy: an in-place op of ``func`` on an argument must not write
        # into the caller's tensor (nothing a user passes in is mutated; ``vjp`` and ``jacrev``
        # leave it alone too), nor into another slot given the same tensor. (Copied before the
        # level is entered: the copy has no tangent at it, so it is the same copy, made on the
        # fast path.)
        pairs.append((clone(p), t))
    with fwd.dual_level() as level:
        GRAD.duals[-1].title = f"dualad.func.{name}"  # (the level just entered)
        duals = [fwd._make_dual(p, t, level, copy_tangent=copy_tangents) for p, t in pairs]
        result = func(*rebuild(duals))
        aux = None
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(
                    "dualad.func.jvp(f, ..., has_aux=True): output of function f should be a "
                    "tuple: (output, aux)"
                )
            result, aux = result
        out_leaves, rebuild_out = flatten(result)
        primal_out, tangent_out = [], []
        for leaf in out_leaves:
            if not isinstance(leaf, Tensor):
                where = "jvp(f, primals, tangents)" if name == "jvp" else name
                raise RuntimeError(
                    f"dualad.func.{where}: expected f(*primals) to return only "
                    f"tensors, got unsupported type {type(leaf).__name__}"
                )
            p, t = fwd.unpack_dual(leaf, level=level)
            if t is None and isinstance(p, Tensor):
                t = zeros_like(p)
            primal_out.append(p)
            tangent_out.append(t)
    outputs = (rebuild_out(primal_out), rebuild_out(tangent_out))
    return (*outputs, aux) if has_aux else outputs
