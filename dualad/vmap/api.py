"""``dualad.vmap``: the public batching transform (``torch.func.vmap`` semantics).

The function runs ONCE per call (once per chunk with ``chunk_size``) on ``BatchedTensor``
inputs; every op it calls is batched by its rule at this vmap level (see ``batched.py``). Inputs
and outputs are pytrees (tuples, lists, dicts) of tensors; ``in_dims``/``out_dims`` are ints,
None, or pytrees matching them (a leaf applies to a whole subtree).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _random
from .._state import pop_level, push_level
from .._tensor import Tensor
from .._tree import flatten
from ..ops import broadcast_to, cat, movedim, narrow, unsqueeze
from . import function  # noqa: F401 (gives VmapLevel its custom Function rule)
from .batched import BatchedTensor, VmapLevel, _escaped, active_vmap_levels, batched
from .chunking import Chunking, check_chunking

_RANDOMNESS = ("error", "different", "same")


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | str | None = None,
    max_memory: int | str | None = None,
    progress: bool = False,
) -> Callable:
    """Vectorise ``func`` over a batch dimension of its inputs.

    ``vmap(func, in_dims, out_dims)(*args)`` equals stacking ``func`` applied to each example
    (the slices of the batched inputs along their ``in_dims``), with the batch at ``out_dims`` of
    each output, but ``func`` runs once on batched values.

    Parameters
    ----------
    func : callable
        Takes tensors (or pytrees of them) and returns a tensor or a pytree of tensors.
    in_dims : int, None or pytree
        The batch dim of each input (None: not batched, the same for every example); an int or
        None applies to every input; a tuple matches the positional arguments and may nest.
    out_dims : int, None or pytree
        Where the batch dim goes in each output (None: the output must not be batched).
    randomness : {"error", "same", "different"}
        What ``dualad.rand``/``randn``/``randint``/``*_like`` do inside: raise, draw one value
        for the whole batch, or draw independent values per example.
    chunk_size : int or "auto", optional
        Run the batch in chunks of this many examples (less memory) and concatenate;
        ``"auto"``: the largest chunks whose measured peak memory stays within ``max_memory``
        (``chunking.py`` says how it is measured).
    max_memory : int or str, optional
        The budget of ``chunk_size="auto"``, in bytes or as a string such as ``"1GB"`` or
        ``"512MiB"``; by default half the memory available when the call starts.
    progress : bool
        Show a tqdm progress bar over the examples (``pip install tqdm``).

    >>> import dualad
    >>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dualad.vmap(lambda row: row.sum())(x)
    tensor([3., 7.])
    >>> dualad.vmap(lambda a, b: a * b, in_dims=(1, None))(x, dualad.tensor(10.0))
    tensor([[10., 30.],
            [20., 40.]])
    """
    if not callable(func):
        raise TypeError(
            f"dualad.vmap: expected a function as the first argument, got {type(func).__name__}"
        )
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    if (
        chunk_size is not None
        and not isinstance(chunk_size, str)
        and (not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size <= 0)
    ):
        # (PyTorch's message; strings other than "auto" are check_chunking's to report)
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    check_chunking(chunk_size, max_memory, progress, "vmap")
    chunking = (chunk_size, max_memory, progress)

    # (updated=(): a dualad op's attributes, such as its ``op`` record, must not be copied)
    @functools.wraps(func, updated=())
    def vmapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunking, args, kwargs)

    return vmapped


# ---------------------------------------------------------------------------------------------
# one call


def _vmap_call(func, in_dims, out_dims, randomness, chunking: tuple[Any, Any, bool], args, kwargs):
    name = _name(func)
    _check_out_dims(out_dims, name)
    chunk_size, _, progress = chunking
    if chunk_size is None and not progress:
        size, flat_args, flat_dims, rebuild = _process_inputs(func, name, in_dims, args)
        return _run(func, name, size, flat_args, flat_dims, rebuild, kwargs, out_dims, randomness)
    with Chunking(*chunking, "vmap") as chunks:
        size, flat_args, flat_dims, rebuild = _process_inputs(func, name, in_dims, args)
        if chunk_size is not None and chunk_size != "auto" and chunk_size >= size and not progress:
            return _run(
                func, name, size, flat_args, flat_dims, rebuild, kwargs, out_dims, randomness
            )
        return _run_chunked(
            func, name, size, chunks, flat_args, flat_dims, rebuild, kwargs, out_dims, randomness
        )


def _run(func, name, size, flat_args, flat_dims, rebuild, kwargs, out_dims, randomness):
    """Enter a vmap level, call ``func`` once on BatchedTensors, take the batch out again."""
    level = VmapLevel(len(active_vmap_levels()) + 1, size, randomness)
    push_level(level)
    try:
        inputs = [
            arg if dim is None else batched(arg, dim, level)
            for arg, dim in zip(flat_args, flat_dims)
        ]
        result = func(*rebuild(inputs), **kwargs)
        leaves, rebuild_out = flatten(result)
        leaf_dims = _output_dims(result, leaves, out_dims, name)
        unwrapped = [_unwrap(leaf, dim, level, name) for leaf, dim in zip(leaves, leaf_dims)]
    finally:
        pop_level(level)
        level.alive = False
    outputs = [
        value if dim is None else _place_batch(value, bdim, dim, size, name, out_dims)
        for (value, bdim), dim in zip(unwrapped, leaf_dims)
    ]
    return rebuild_out(outputs)


def _unwrap(leaf, out_dim, level: VmapLevel, name: str):
    """``(value, bdim)`` of one output leaf at ``level`` (bdim None: not batched there)."""
    if type(leaf) is BatchedTensor:
        if leaf._level is level:
            if out_dim is None:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is "
                    "None"
                )
            return leaf._value, leaf._bdim
        if not leaf._level.alive:
            raise _escaped(leaf)
    if out_dim is not None and not isinstance(leaf, Tensor):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaf)}. Did "
            "you mean to set out_dims= to None for output?"
        )
    return leaf, None


def _place_batch(value, bdim, out_dim: int, size: int, name: str, out_dims):
    """The batch of ``value`` (at ``bdim``, or absent when None) moved to ``out_dim``."""
    rank = value.ndim + (bdim is None)
    if not -rank <= out_dim < rank:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims}): out_dim={out_dim} does not fit an output "
            f"with {rank} dimensions (batch dim included): Dimension out of range (expected to "
            f"be in range of [{-rank}, {rank - 1}], but got {out_dim})"
        )
    out_dim %= rank
    if bdim == out_dim:
        return value
    if bdim is None:
        # the same for every example: broadcast along a new batch dim (a view, as torch's expand)
        shape = list(value.shape)
        shape.insert(out_dim, size)
        return broadcast_to(unsqueeze(value, out_dim), tuple(shape))
    return movedim(value, bdim, out_dim)


def _run_chunked(
    func, name, size, chunks, flat_args, flat_dims, rebuild, kwargs, out_dims, randomness
):
    """Run ``func`` on consecutive chunks of the batch (``chunks``: ``chunking.Chunking``) and
    concatenate the outputs."""
    state = None
    if randomness == "same":
        _random._generator(np)  # exists before the first chunk: every chunk starts from one state
        state = _random_state()
    structure = None

    def run(start: int, stop: int):
        nonlocal structure
        chunk_args = [
            arg if dim is None else narrow(arg, dim, start, stop - start)
            for arg, dim in zip(flat_args, flat_dims)
        ]
        if state is not None:
            _set_random_state(state)  # "same": every chunk draws what the first one drew
        result = _run(
            func, name, stop - start, chunk_args, flat_dims, rebuild, kwargs, out_dims, randomness
        )
        shape = _structure(result)
        if structure is not None and shape != structure:
            raise ValueError(
                f"vmap({name}, ..., chunk_size={chunks.chunk_size}): the chunks returned "
                f"different output structures ({structure} and {shape})"
            )
        structure = shape
        return result

    like = next(arg for arg, dim in zip(flat_args, flat_dims) if dim is not None)
    pieces = [(*flatten(result), result) for result in chunks.run(run, size, like)]
    first_leaves, rebuild_out, first = pieces[0]
    if len(pieces) == 1:
        return first
    leaf_dims = _output_dims(first, first_leaves, out_dims, name)
    joined = []
    for k, dim in enumerate(leaf_dims):
        if dim is None:
            joined.append(first_leaves[k])
        else:
            joined.append(cat([leaves[k] for leaves, _, _ in pieces], dim))
    return rebuild_out(joined)


def _random_state():
    return {key: gen.bit_generator.state for key, gen in _random._generators.items()}


def _set_random_state(state) -> None:
    for key in list(_random._generators):
        if key not in state:
            del _random._generators[key]
    for key, value in state.items():
        gen = _random._generators.get(key)
        if gen is not None:
            gen.bit_generator.state = value


# ---------------------------------------------------------------------------------------------
# in_dims / out_dims against the argument and output structures


def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _process_inputs(func, name: str, in_dims, args: tuple):
    if not (_is_int(in_dims) or isinstance(in_dims, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, rebuild = flatten(args)
    flat_dims: list = []
    if not _broadcast_dims(in_dims, args, flat_dims):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {_structure(in_dims)} but inputs has "
            f"structure {_structure(args)}."
        )
    for i, (arg, dim) in enumerate(zip(flat_args, flat_dims)):
        if dim is None:
            continue
        if not _is_int(dim):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input "
                "but in_dim must be either an integer dimension or None."
            )
        if not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input "
                f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        ndim = arg.ndim
        if not -ndim <= dim < ndim:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some "
                f"input, but that input is a Tensor of dimensionality {ndim} so expected in_dim "
                f"to satisfy -{ndim} <= in_dim < {ndim}."
            )
        flat_dims[i] = dim % ndim
    sizes = [arg.shape[dim] for arg, dim in zip(flat_args, flat_dims) if dim is not None]
    if not sizes:
        raise ValueError(
            "vmap: Expected at least one Tensor to vmap over (at least one input must be "
            f"batched: every in_dim is None, in_dims={in_dims})"
        )
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return sizes[0], flat_args, flat_dims, rebuild


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _count_leaves(tree) -> int:
    return len(flatten(tree)[0])


def _broadcast_dims(dims, tree, out: list) -> bool:
    """Append one dim per leaf of ``tree`` (the leaf order of ``_tree.flatten``); a non-container
    ``dims`` applies to a whole subtree. False when the structures do not match."""
    if not isinstance(dims, (tuple, list, dict)):
        if isinstance(tree, Tensor):  # the common case: one dim for one tensor
            out.append(dims)
        else:
            out.extend([dims] * _count_leaves(tree))
        return True
    if isinstance(tree, dict):
        if not isinstance(dims, dict) or set(dims) != set(tree):
            return False
        return all(_broadcast_dims(dims[k], tree[k], out) for k in tree)
    if isinstance(tree, (tuple, list)):
        # a plain tuple of dims also matches a namedtuple of arguments
        same_kind = isinstance(dims, tuple) if isinstance(tree, tuple) else isinstance(dims, list)
        if not same_kind or (_is_namedtuple(dims) and type(dims) is not type(tree)):
            return False
        if len(dims) != len(tree):
            return False
        return all(_broadcast_dims(d, t, out) for d, t in zip(dims, tree))
    return False  # a container of dims for a single leaf


def _structure(tree) -> str:
    """A short description of a pytree's structure (``*`` for a leaf)."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_structure(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(_structure(v) for v in tree) + "]"
    if isinstance(tree, tuple):
        inner = ", ".join(_structure(v) for v in tree)
        prefix = type(tree).__name__ if _is_namedtuple(tree) else ""
        return f"{prefix}({inner}{',' if len(tree) == 1 else ''})"
    return "*"


def _check_out_dims(out_dims, name: str) -> None:
    leaves, _ = flatten(out_dims)
    for leaf in leaves:
        if leaf is not None and not _is_int(leaf):
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                "python collection of ints representing where in the outputs the vmapped "
                "dimension should appear."
            )


def _output_dims(result, leaves: list, out_dims, name: str) -> list:
    """One out_dim per output leaf."""
    if isinstance(result, Tensor):
        # a single output takes an int, None or a one-element tuple (torch's edge case)
        if out_dims is None or _is_int(out_dims):
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return [out_dims[0]]
    else:
        dims: list = []
        if _broadcast_dims(out_dims, result, dims):
            return dims
    raise ValueError(
        f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
        f"structure of `outputs`. out_dims has structure {_structure(out_dims)} but outputs has "
        f"structure {_structure(result)}."
    )


__all__ = ["vmap"]
