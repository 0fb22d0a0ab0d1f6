"""``jacrev``, ``jacfwd`` and ``hessian``: whole Jacobians, by ``vmap`` of ``vjp`` over the
output basis or of ``jvp`` over the input basis (``chunk_size`` rows of it at a time).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._creation import eye, ones_like, zeros
from .._tensor import Tensor
from .._tree import flatten
from ..ops import cat
from ..vmap.api import vmap
from ..vmap.chunking import Chunking, check_chunking
from ._arrays import convert_args, tree_to_arrays
from ._checks import (
    _check_callable,
    _check_tensors,
    _error_if_complex,
    _normalize_argnums,
    _per_argnum,
)
from ._forward import _jvp
from ._reverse import _vjp


def _restricted(func, args: tuple, nums: tuple):
    """``func`` as a function of the arguments at ``nums`` only (the others fixed)."""

    def restricted(*diff):
        full = list(args)
        for i, value in zip(nums, diff):
            full[i] = value
        return func(*full)

    return restricted


def _basis(total: int, like: Tensor, start: int = 0, stop: int | None = None):
    """Rows ``start:stop`` of the ``total x total`` identity (all of them by default), made
    without the others: a chunked Jacobian holds one chunk of the basis at a time."""
    if stop is None or (start == 0 and stop == total):
        return eye(total, dtype=like.dtype, device=like.device)
    rows = zeros(stop - start, total, dtype=like.dtype, device=like.device)
    rows[:, start:stop] = eye(stop - start, dtype=like.dtype, device=like.device)
    return rows


def _over_basis(run, total: int, leaves: list, chunks: Chunking):
    """``run(blocks)`` (a vmapped function of the basis blocks of ``leaves``) over the rows of
    the identity, in the chunks of ``chunks`` (``chunking.py``); returns the output leaves,
    each ``(total, ...)``, and the first chunk's whole result."""

    def rows(start: int, stop: int):
        return run(_columns(_basis(total, leaves[0], start, stop), leaves))

    pieces = chunks.run(rows, total, leaves[0])
    if len(pieces) == 1:
        return flatten(pieces[0])[0], pieces[0]
    first = pieces[0]
    flat = [flatten(piece)[0] for piece in pieces]
    joined = [cat([piece[k] for piece in flat], 0) for k in range(len(flat[0]))]
    return joined, first


def _columns(basis, leaves: list) -> list:
    """The identity's columns split into one block per leaf, shaped ``(total, *leaf.shape)``."""
    total = basis.shape[0]
    if len(leaves) == 1:  # the usual case: one input (or output) leaf takes the whole basis
        return [_reshaped(basis, (total, *leaves[0].shape))]
    blocks = []
    offset = 0
    for leaf in leaves:
        n = leaf.numel()
        block = basis[:, offset : offset + n].reshape(total, *leaf.shape)
        if block.dtype != leaf.dtype:
            block = block.to(dtype=leaf.dtype)
        blocks.append(block)
        offset += n
    return blocks


def _reshaped(x: Tensor, shape: tuple) -> Tensor:
    """``x.reshape(shape)``, or ``x`` itself when it has that shape already (no extra op)."""
    return x if tuple(x.shape) == shape else x.reshape(*shape)


def jacrev(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | str | None = None,
    max_memory: int | str | None = None,
    progress: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``func`` by reverse mode: ``vmap`` of ``vjp_fn`` over the standard basis
    of the output. Each output leaf gets ``(*out.shape, *in.shape)`` blocks (a tuple over
    ``argnums`` when it is a tuple).

    ``chunk_size``: None (the whole basis at once), an int (that many basis vectors at a time:
    less memory for the batched intermediate values), or ``"auto"``: the largest chunks whose
    measured peak memory stays within ``max_memory`` (bytes, or a string such as ``"1GB"`` or
    ``"512MiB"``; by default half the memory available), the whole call and its result
    included (``dualad/vmap/chunking.py`` says how it is measured). ``progress=True`` shows a
    tqdm progress bar over the basis vectors (``pip install tqdm``).

    >>> import dualad
    >>> from dualad.func import jacrev
    >>> jacrev(lambda x: x * x)(dualad.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    >>> jacrev(dualad.sin, chunk_size="auto", max_memory="100MB")(dualad.tensor([0.0, 0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _check_callable(func, "jacrev")
    check_chunking(chunk_size, max_memory, progress, "jacrev")
    return _jacrev(func, argnums, has_aux, (chunk_size, max_memory, progress), "jacrev")


def _jacrev(func, argnums, has_aux: bool, chunking: tuple, title: str):
    """``jacrev``; ``chunking``: ``(chunk_size, max_memory, progress)``; ``title``: the
    transform the user called (``hessian`` calls this)."""

    @functools.wraps(func, updated=())
    def wrapper(*args):
        with Chunking(*chunking, title) as chunks:
            return _jacrev_call(func, argnums, has_aux, chunks, title, args)

    return wrapper


def _jacrev_call(func, argnums, has_aux: bool, chunks: Chunking, title: str, args: tuple):
    """One call of a ``jacrev`` transform."""
    nums = _normalize_argnums(argnums, len(args), "jacrev")
    args, plain = convert_args(args, nums, {}, title)
    _error_if_complex("jacrev", args, "inputs")
    diff = tuple(args[i] for i in nums)
    res = _vjp(_restricted(func, args, nums), diff, has_aux, title)
    out, vjp_fn = res[0], res[1]
    out_leaves, rebuild_out = flatten(out)
    _error_if_complex("jacrev", out_leaves, "outputs")
    in_leaves, rebuild_in = flatten(diff)
    total = sum(o.numel() for o in out_leaves)
    if total == 0:
        flat = [[_empty_block(o, x) for x in in_leaves] for o in out_leaves]
    elif total == 1:
        # one output element (a scalar loss, e.g. the inner jacrev of hessian): the basis has
        # one row, so a single backward pass is the whole vmap (one transform level less)
        row_leaves, _ = flatten(vjp_fn(rebuild_out([ones_like(o) for o in out_leaves])))
        flat = [
            [
                _reshaped(r, (*o.shape, *x.shape)) if o.numel() else _empty_block(o, x)
                for r, x in zip(row_leaves, in_leaves)
            ]
            for o in out_leaves
        ]
    else:
        batched_vjp = vmap(vjp_fn)
        # one (total, *in.shape) per input leaf
        row_leaves = _over_basis(
            lambda cts: batched_vjp(rebuild_out(cts)), total, out_leaves, chunks
        )[0]
        flat = []
        offset = 0
        for o in out_leaves:
            n = o.numel()
            flat.append(
                [
                    _reshaped(r if n == total else r[offset : offset + n], (*o.shape, *x.shape))
                    for r, x in zip(row_leaves, in_leaves)
                ]
            )
            offset += n
    jac = rebuild_out([_per_argnum(rebuild_in(blocks), argnums) for blocks in flat])
    out = (jac, res[2]) if has_aux else jac
    return tree_to_arrays(out) if plain else out


def _empty_block(out: Tensor, x: Tensor, dtype=None):
    return zeros(*out.shape, *x.shape, dtype=x.dtype if dtype is None else dtype, device=x.device)


def jacfwd(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
    chunk_size: int | str | None = None,
    max_memory: int | str | None = None,
    progress: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``func`` by forward mode: ``vmap`` of ``jvp`` over the standard basis of
    the inputs. Same layout as ``jacrev``. ``chunk_size`` (a dualad extension, as in
    ``jacrev``) pushes that many basis tangents at a time, bounding the memory of the batched
    intermediate values; ``chunk_size="auto"`` with ``max_memory`` and ``progress`` as in
    ``jacrev``.

    >>> import dualad
    >>> from dualad.func import jacfwd, jacrev
    >>> x = dualad.tensor([1.0, 2.0, 3.0])
    >>> bool((jacfwd(dualad.sin)(x) == jacrev(dualad.sin)(x)).all())
    True
    >>> bool((jacfwd(dualad.sin, chunk_size="auto")(x) == jacrev(dualad.sin)(x)).all())
    True
    """
    _check_callable(func, "jacfwd")
    check_chunking(chunk_size, max_memory, progress, "jacfwd")
    return _jacfwd(func, argnums, has_aux, randomness, (chunk_size, max_memory, progress), "jacfwd")


def _jacfwd(func, argnums, has_aux: bool, randomness: str, chunking: tuple, title: str):
    """``jacfwd``; ``chunking``: ``(chunk_size, max_memory, progress)``; ``title``: the
    transform the user called (``hessian`` calls this)."""
    # (randomness="same": vmap's own chunks replay the random state, so that every chunk
    # draws what the first one drew; they need the whole basis)
    replayed = randomness == "same"
    outer = (None, None, False) if replayed else chunking

    @functools.wraps(func, updated=())
    def wrapper(*args):
        with Chunking(*outer, title) as chunks:
            return _jacfwd_call(
                func,
                argnums,
                has_aux,
                randomness,
                chunking if replayed else None,
                chunks,
                title,
                args,
            )

    return wrapper


def _jacfwd_call(
    func, argnums, has_aux: bool, randomness: str, inner, chunks: Chunking, title: str, args
):
    """One call of a ``jacfwd`` transform; ``inner``: the chunking of its vmap (``randomness=
    "same"``), else None."""
    nums = _normalize_argnums(argnums, len(args), "jacfwd")
    args, plain = convert_args(args, nums, {}, title)
    _error_if_complex("jacfwd", args, "inputs")
    diff = tuple(args[i] for i in nums)
    in_leaves, rebuild_in = flatten(diff)
    _check_tensors(
        in_leaves,
        "dualad.func.jacfwd: expected the differentiated arguments to be Tensors, arrays or "
        "numbers, got ",
    )
    restricted = _restricted(func, args, nums)
    total = sum(x.numel() for x in in_leaves)

    def push(*tangents):
        res = _jvp(
            restricted,
            diff,
            rebuild_in(list(tangents)),
            has_aux,
            copy_tangents=False,
            name=title,
        )
        _error_if_complex("jacfwd", res[0], "outputs")
        return (res[1], res[2]) if has_aux else res[1]

    if total == 0:
        # no basis to push: one call finds the outputs (and aux); every block is empty
        res = _jvp(
            restricted,
            diff,
            rebuild_in([x.detach() * 0 for x in in_leaves]),
            has_aux,
            copy_tangents=False,
            name=title,
        )
        out_leaves, rebuild_out = flatten(res[0])
        _error_if_complex("jacfwd", out_leaves, "outputs")
        jac = rebuild_out(
            [
                _per_argnum(rebuild_in([_empty_block(o, x, o.dtype) for x in in_leaves]), argnums)
                for o in out_leaves
            ]
        )
        out = (jac, res[2]) if has_aux else jac
        return tree_to_arrays(out) if plain else out
    chunk_size, max_memory, progress = (None, None, False) if inner is None else inner
    batched_push = vmap(
        push,
        out_dims=(0, None) if has_aux else 0,
        randomness=randomness,
        chunk_size=chunk_size,
        max_memory=max_memory,
        progress=progress,
    )
    auxes = []

    def run(tangents):
        result = batched_push(*tangents)
        if has_aux:
            result, aux = result
            auxes.append(aux)
        return result

    # one (total, *out.shape) per output leaf
    col_leaves, columns = _over_basis(run, total, in_leaves, chunks)
    _, rebuild_out = flatten(columns)
    aux = auxes[0] if has_aux else None
    flat = []
    for c in col_leaves:
        out_shape = tuple(c.shape[1:])
        m = 1
        for s in out_shape:
            m *= s
        blocks = []
        offset = 0
        for x in in_leaves:
            n = x.numel()
            block = c if n == total else c[offset : offset + n]
            block = _reshaped(block, (n, m)).transpose(0, 1)
            blocks.append(_reshaped(block, (*out_shape, *x.shape)))
            offset += n
        flat.append(_per_argnum(rebuild_in(blocks), argnums))
    jac = rebuild_out(flat)
    out = (jac, aux) if has_aux else jac
    return tree_to_arrays(out) if plain else out


def hessian(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    chunk_size: int | str | None = None,
    max_memory: int | str | None = None,
    progress: bool = False,
) -> Callable[..., Any]:
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func))`` (forward-over-reverse).
    ``chunk_size`` (an int or ``"auto"``), ``max_memory`` and ``progress`` chunk the outer
    ``jacfwd``'s basis as in ``jacrev`` (dualad extensions).

    >>> import dualad
    >>> from dualad.func import hessian
    >>> hessian(lambda x: (x**3).sum())(dualad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    >>> hessian(lambda x: (x**3).sum(), chunk_size=1)(dualad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    _check_callable(func, "hessian")
    check_chunking(chunk_size, max_memory, progress, "hessian")
    inner = _jacrev(func, argnums, False, (None, None, False), "hessian")
    return _jacfwd(inner, argnums, False, "error", (chunk_size, max_memory, progress), "hessian")
