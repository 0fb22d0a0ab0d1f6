"""``dualad.vmap`` (and ``dualad.func.vmap``): ``dualad.vmap.api.vmap`` with array in, array
out (``_arrays.py``): the batched arguments (those with an int ``in_dim``) may be NumPy/CuPy
arrays, NumPy scalars or Python numbers, and the results are arrays when no argument is a
Tensor. The transforms inside dualad call ``vmap.api.vmap`` itself (their values are Tensors).

>>> import numpy as np
>>> import dualad
>>> dualad.vmap(lambda row: row.sum())(np.array([[1.0, 2.0], [3.0, 4.0]]))
array([3., 7.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from .._tree import flatten
from ..vmap import api
from ._arrays import holds_tensor, leaf_to_tensor, tree_to_arrays


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | str | None = None,
    max_memory: int | str | None = None,
    progress: bool = False,
) -> Callable[..., Any]:
    # (api.vmap's signature and checks; its docstring is this function's)
    batched = api.vmap(
        func,
        in_dims,
        out_dims,
        randomness,
        chunk_size=chunk_size,
        max_memory=max_memory,
        progress=progress,
    )

    @functools.wraps(func, updated=())
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        for arg in args:
            if not isinstance(arg, Tensor):
                break
        else:  # every argument a Tensor: today's path, nothing to convert
            return batched(*args, **kwargs)
        args, plain = _convert_batched(args, in_dims)
        out = batched(*args, **kwargs)
        return tree_to_arrays(out) if plain and not (kwargs and holds_tensor(kwargs)) else out

    return vmapped


vmap.__doc__ = api.vmap.__doc__


def _convert_batched(args: tuple, in_dims: Any) -> tuple[Any, bool]:
    """``(args with the leaves that have an int in_dim converted, no leaf was a Tensor)``;
    arguments that ``in_dims`` does not fit are left for ``api.vmap`` to report."""
    leaves, rebuild = flatten(args)
    plain = not any(isinstance(leaf, Tensor) for leaf in leaves)
    dims: list = []
    if not (isinstance(in_dims, (int, tuple)) and api._broadcast_dims(in_dims, args, dims)):
        return args, plain
    converted = [
        leaf if dim is None or isinstance(dim, bool) else leaf_to_tensor(leaf, "vmap")
        for leaf, dim in zip(leaves, dims)
    ]
    return rebuild(converted), plain


__all__ = ["vmap"]
