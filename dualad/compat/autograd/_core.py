"""The two primitives of ``dualad.compat.autograd`` and its n-ary wrapper, on ``dualad.func``.

- ``make_vjp(fun, x)``: ``(vjp, ans)`` in autograd's complex convention: autograd's VJP of a
  cotangent ``g`` is ``conj(vjp(conj(g)))`` of dualad's (the two agree on real values; see
  the package docstring). ``vjp`` may be called many times.
- ``make_jvp(fun, x)``: a function of a tangent returning ``(ans, J·tangent)`` (forward mode;
  no convention differs there).
- ``nary(name)``: autograd's ``unary_to_nary``: an operator of ``(fun, x)`` becomes one of
  ``(fun, argnum=0, ...)`` whose result takes ``fun``'s arguments and differentiates with
  respect to ``args[argnum]`` (a tuple of them when ``argnum`` is a tuple or list). The
  differentiated arguments are converted (arrays, numbers, pytrees of them: ``func._arrays``)
  and, when no argument is a Tensor, the results (and the functions returned, such as
  ``make_vjp``'s) give arrays back.

Both work on tensors of any level, so every operator composes with itself and with
``dualad.func``.
"""

from __future__ import annotations

import functools

from ... import func
from ..._creation import zeros_like
from ..._tensor import Tensor
from ..._tree import tree_map
from ...func._arrays import convert_args, tree_to_arrays, tree_to_tensors
from ...ops import conj


def _conj_leaf(value):
    if isinstance(value, Tensor) and value.dtype.kind == "c":
        return conj(value)
    return value


def conj_tree(tree):
    """``tree`` with its complex tensors conjugated (the convention change of a VJP)."""
    return tree_map(_conj_leaf, tree)


def _outputs_as_tensors(fun):
    """``fun`` whose numbers and arrays in the output are tensors: as in autograd, an output
    that does not depend on the input (a constant) has zero derivatives."""

    def traced(*args):
        return tree_to_tensors(fun(*args), getattr(fun, "__name__", "fun"))[0]

    return traced


def make_vjp(fun, x):
    """``(vjp, ans)``: ``ans = fun(x)`` and autograd's VJP function at ``x``."""
    ans, vjp_fn = func.vjp(_outputs_as_tensors(fun), x)

    def vjp(g):
        return conj_tree(vjp_fn(conj_tree(g))[0])

    return vjp, ans


def make_jvp(fun, x):
    """A function of a tangent ``v`` (shaped like ``x``) returning ``(fun(x), J·v)``."""

    def jvp(v):
        return func.jvp(_outputs_as_tensors(fun), (x,), (v,))

    return jvp


def zeros_tree(tree):
    """Zeros shaped like the tensors of ``tree`` (other leaves unchanged)."""
    return tree_map(lambda v: zeros_like(v) if isinstance(v, Tensor) else v, tree)


def plain_function(fn, plain: bool):
    """``fn`` (a function that an operator returns) taking arrays too, and giving arrays back
    when ``plain`` (no Tensor went into the operator) and its own arguments hold no Tensor."""

    @functools.wraps(fn)
    def call(*args):
        args, saw_tensor = tree_to_tensors(args, fn.__name__)
        out = fn(*args)
        # (copies: the graph that fn keeps may hold what a result is made of)
        return tree_to_arrays(out, copy=True) if plain and not saw_tensor else out

    return call


def _check_argnum(argnum, name: str):
    if isinstance(argnum, bool) or not isinstance(argnum, (int, tuple, list)):
        raise TypeError(
            f"dualad.compat.autograd.{name}: argnum must be an int or a tuple (or list) of ints, "
            f"got {argnum!r}"
        )
    if not isinstance(argnum, int) and not all(
        isinstance(a, int) and not isinstance(a, bool) for a in argnum
    ):
        raise TypeError(
            f"dualad.compat.autograd.{name}: argnum must be an int or a tuple (or list) of ints, "
            f"got {argnum!r}"
        )


def nary(unary_operator):
    """autograd's ``unary_to_nary``: ``unary_operator(fun, x, *op_args, plain=..., **op_kwargs)``
    becomes ``operator(fun, argnum=0, *op_args, **op_kwargs)``."""
    name = unary_operator.__name__

    @functools.wraps(unary_operator)
    def operator(fun, argnum=0, *op_args, **op_kwargs):
        if not callable(fun):
            raise TypeError(
                f"dualad.compat.autograd.{name}: expected a function as the first argument, "
                f"got {type(fun).__name__}"
            )
        _check_argnum(argnum, name)

        def nary_f(*args, **kwargs):
            count = len(args)
            positions = (argnum,) if isinstance(argnum, int) else tuple(argnum)
            for a in positions:
                if not -count <= a < count:
                    raise IndexError(
                        f"dualad.compat.autograd.{name}: argnum {a} is out of range for "
                        f"{count} positional arguments"
                    )
            nums = tuple(a % count for a in positions)
            args, plain = convert_args(args, nums, kwargs, name)

            def unary_f(x):
                sub = list(args)
                if isinstance(argnum, int):
                    sub[nums[0]] = x
                else:
                    for i, value in zip(nums, x):
                        sub[i] = value
                return fun(*sub, **kwargs)

            unary_f.__name__ = getattr(fun, "__name__", "fun")
            x = args[nums[0]] if isinstance(argnum, int) else tuple(args[i] for i in nums)
            result = unary_operator(unary_f, x, *op_args, plain=plain, **op_kwargs)
            return tree_to_arrays(result) if plain else result

        fun_name = getattr(fun, "__name__", "[unknown name]")
        nary_f.__name__ = f"{name}_of_{fun_name}_wrt_argnum_{argnum}"
        nary_f.__doc__ = (
            f"{name} of function {fun_name} with respect to argument number {argnum}. Takes the "
            f"same arguments as {fun_name} but returns the {name}."
        )
        return nary_f

    return operator


__all__ = ["conj_tree", "make_jvp", "make_vjp", "nary", "plain_function", "zeros_tree"]
