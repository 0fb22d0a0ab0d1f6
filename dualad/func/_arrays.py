"""Array in, array out: the transforms' boundary with plain array code.

Every transform (``grad``, ``vjp``, ``jvp``, ``jacrev``, ``vmap`` ...) accepts, where it takes a
tensor (a differentiated or batched argument, a tangent, a cotangent, a leaf of such a pytree),
a NumPy or CuPy array, a NumPy scalar or a Python number too, and converts it here, in one
place:

- an input leaf becomes a Tensor holding a COPY of it, with NumPy's dtype (``np.asarray``'s:
  a Python float is float64, an int int64): the function never writes into the caller's array,
  and nothing returned aliases it. Arrays of other dtypes (strings, objects) raise TypeError.
  Lists, tuples and dicts are pytree containers, as everywhere in ``dualad.func`` (and in JAX
  and HIPS autograd): ``grad(f)([1.0, 2.0])`` differentiates with respect to two numbers and
  returns a list of two; pass ``np.array([1.0, 2.0])`` for one array. Arguments that are not
  differentiated or batched are passed to the function as they are.
- when NO argument of the call (differentiated or not, keyword arguments included; for a
  ``vjp_fn``/``jvp_fn`` the primals of its transform too) is a Tensor, every Tensor in the
  result (gradients, values, aux outputs) becomes an array of its backend: a NumPy ndarray on
  the CPU, following NumPy's convention for 0-d results (a NumPy scalar such as ``np.float64``,
  as ``np.sum`` returns), a CuPy array (0-d included, CuPy's convention) on a GPU. Returned
  arrays are writable; those a transform's closure may still read (``vjp``, ``linearize``) are
  copies. A result that an active level still tracks (a function closing over a tensor of an
  outer transform, or over one that requires grad) stays a Tensor: as an array it would lose
  its derivative.
- when any argument is a Tensor, results are Tensors, as they always were.

>>> import numpy as np
>>> from dualad import func
>>> g = func.grad(lambda x: (x**3).sum())(np.array([1.0, 2.0]))
>>> type(g).__name__, g
('ndarray', array([ 3., 12.]))
>>> func.grad(lambda x: x * x)(3.0)
np.float64(6.0)
"""

from __future__ import annotations

import numpy as np

from .._backend import is_writeable, xp_of
from .._state import GRAD
from .._tensor import Tensor, tracking_level, wrap
from .._tree import flatten

# dtype kinds an array input may have: booleans, integers and numbers (the dtype checks of the
# transforms then say which of them can be differentiated)
_NUMERIC_KINDS = frozenset("biufc")


def _array_module(value):
    """The array module of an array-like leaf (a NumPy/CuPy array, NumPy scalar, Python
    number), or None for anything else."""
    try:
        return xp_of(value)
    except TypeError:
        return None


def leaf_to_tensor(value, name: str):
    """``value`` as a fresh Tensor holding a copy (NumPy's dtype), or ``value`` unchanged when
    it is no array-like (a Tensor, None, a string ...: the transform's own checks see it)."""
    if isinstance(value, Tensor):
        return value
    xp = _array_module(value)
    if xp is None:
        return value
    data = xp.array(value, copy=True)
    if data.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(
            f"dualad.func.{name}: an argument of dtype {data.dtype} has no derivative (only "
            "arrays of booleans, integers, floating point or complex numbers can be passed where "
            "a tensor is expected)"
        )
    return wrap(data)


def tree_to_tensors(tree, name: str):
    """``(tree with its array-like leaves converted, whether a leaf was a Tensor)``."""
    if isinstance(tree, Tensor):  # the common cases: one tensor, a tuple of tensors
        return tree, True
    if type(tree) is tuple and tree:
        for item in tree:
            if not isinstance(item, Tensor):
                break
        else:
            return tree, True
    leaves, rebuild = flatten(tree)
    saw_tensor = False
    converted = False
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor):
            saw_tensor = True
            continue
        new = leaf_to_tensor(leaf, name)
        if new is not leaf:
            leaves[i] = new
            converted = True
    return (rebuild(leaves) if converted else tree), saw_tensor


def holds_tensor(tree) -> bool:
    """Whether a leaf of ``tree`` is a Tensor."""
    if isinstance(tree, Tensor):
        return True
    if isinstance(tree, (tuple, list, dict)):
        return any(isinstance(leaf, Tensor) for leaf in flatten(tree)[0])
    return False


def convert_args(args: tuple, nums, kwargs: dict, name: str):
    """The arguments of a transformed call with those at positions ``nums`` (pytrees)
    converted; returns ``(args, plain)``, ``plain`` True when no argument held a Tensor."""
    plain = True
    new_args = None
    for i in nums:
        arg = args[i]
        if isinstance(arg, Tensor):
            plain = False
            continue
        new, saw_tensor = tree_to_tensors(arg, name)
        if saw_tensor:
            plain = False
        if new is not arg:
            if new_args is None:
                new_args = list(args)
            new_args[i] = new
    if plain:
        plain = not (
            any(holds_tensor(a) for i, a in enumerate(args) if i not in nums)
            or (kwargs and holds_tensor(kwargs))
        )
    return (args if new_args is None else tuple(new_args)), plain


def _leaf_to_array(leaf, copy: bool):
    if type(leaf) is not Tensor or leaf._rg or (GRAD.levels and tracking_level(leaf) is not None):
        # (a level wrapper or a tracked value: the derivative lives in the Tensor)
        return leaf
    data = leaf._data
    if type(data) is np.ndarray:
        # (read-only arrays are the broadcast views that vmap and reductions' VJPs return)
        if copy or not is_writeable(data):
            data = data.copy()
        return data[()] if data.ndim == 0 else data
    if copy or (data.size > 1 and 0 in data.strides):
        # (CuPy has no read-only flag: its broadcast views show as zero strides)
        data = data.copy()
    return data


def tree_to_arrays(tree, copy: bool = False):
    """``tree`` with its untracked eager Tensors as arrays (0-d NumPy ones as NumPy scalars);
    ``copy``: copy every array (results that a closure of the transform may still read)."""
    if isinstance(tree, Tensor):
        return _leaf_to_array(tree, copy)
    leaves, rebuild = flatten(tree)
    return rebuild([_leaf_to_array(leaf, copy) for leaf in leaves])


__all__ = [
    "convert_args",
    "holds_tensor",
    "leaf_to_tensor",
    "tree_to_arrays",
    "tree_to_tensors",
]
