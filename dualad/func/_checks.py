"""Argument checks and small helpers the transforms share (``argnums``, ``has_aux``,
the function argument, real and scalar results)."""

from __future__ import annotations

from .._tensor import Tensor
from .._tree import flatten


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_callable(func, name: str) -> None:
    """A transform's function argument must be callable (a clear error at once, not later)."""
    if not callable(func):
        raise TypeError(
            f"dualad.func.{name}: expected a function as the first argument, got "
            f"{type(func).__name__}"
        )


def _normalize_argnums(argnums, count: int, name: str) -> tuple[int, ...]:
    """``argnums`` as a tuple of non-negative positions (checked against ``count`` inputs)."""
    if _is_int(argnums):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and argnums and all(_is_int(a) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(
            f"{name}: argnums must be int or Tuple[int, ...], got: {argnums!r}"
            + (" (an empty tuple)" if argnums == () else "")
        )
    result = []
    for a in nums:
        if not -count <= a < count:
            raise RuntimeError(
                f"{name}: Got argnums={a}, but only {count} positional inputs (expected argnums "
                f"in range [{-count}, {count - 1}])"
            )
        result.append(a % count)
    if len(set(result)) != len(result):
        # (PyTorch's text; one slot named twice would ask for one derivative in two places: to
        # differentiate with respect to one tensor in two slots, pass it in both slots)
        raise RuntimeError(
            f"{name}: argnums elements must be unique, got {tuple(result)} (argnums={argnums!r} "
            "names one argument more than once; each argument slot gets its own derivative, so "
            "pass a tensor in two slots to differentiate each use of it)"
        )
    return tuple(result)


def _split_aux(result, name: str):
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(
            f"{name}(f, ...)(*args): output of function f should be a tuple: (output, aux) if "
            "has_aux is True"
        )
    return result


def _check_scalar(result, name: str) -> None:
    if not isinstance(result, Tensor):
        raise RuntimeError(
            f"dualad.func.{name}: expected f(*args) to return a scalar Tensor, got "
            f"{type(result).__name__}"
        )
    if tuple(result.shape) != ():
        raise RuntimeError(
            f"dualad.func.{name}: expected f(*args) to return a scalar Tensor, got shape "
            f"{tuple(result.shape)}. Maybe you wanted to use the vjp or jacrev APIs instead?"
        )
    if result.dtype.kind != "f":
        raise RuntimeError(
            f"dualad.func.{name}: expected f(*args) to return a real floating point scalar "
            f"Tensor, got dtype {result.dtype}"
        )


def _error_if_complex(name: str, leaves, what: str) -> None:
    """``jacrev``/``jacfwd`` build real Jacobians, as PyTorch's: a complex input or output has
    no real Jacobian of this layout (the derivative is R-linear, not C-linear, in general), so
    it raises PyTorch's error rather than return the C-linear part or a truncated real one."""
    for idx, leaf in enumerate(flatten(leaves)[0]):
        if isinstance(leaf, Tensor) and leaf.dtype.kind == "c":
            raise RuntimeError(
                f"{name}: Expected all {what} to be real but received complex tensor at "
                f"flattened input idx: {idx}"
            )


def _per_argnum(per_arg: tuple, argnums):
    return per_arg[0] if _is_int(argnums) else per_arg


def _check_tensors(leaves, what: str) -> None:
    """Every leaf a Tensor; else ``RuntimeError(what + <the leaf's type name>)``."""
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(what + type(leaf).__name__)
