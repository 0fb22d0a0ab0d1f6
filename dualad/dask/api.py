"""``dualad.dask.jacobian``, ``hessian`` and ``per_example_grad``: the dask arrays, their
blocks, and where they run (the default scheduler, or a ``dask.distributed.Client``).

A result is an ordinary ``dask.array.Array``: one task per block, each task running one
vmap'd transform on its block of basis vectors or chunk of examples (``_blocks.py``), all of
them reading the point (and the function) from one shared graph key, so that it is shipped to
each worker once. ``.compute()`` runs it on dask's default scheduler (threads, or the
``Client`` created last); ``client=`` starts it on that cluster at once (``Client.persist``).
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np

from .._backend import xp_of
from .._tensor import Tensor
from .._tree import flatten
from ..func import _arrays
from ._blocks import example_grads, hessian_rows, jacobian_columns, jacobian_rows

try:  # (optional: client= needs it, the default scheduler does not)
    import distributed
except ImportError:  # pragma: no cover - dask installed without distributed
    distributed = None  # type: ignore[assignment]

_MODES = ("rev", "fwd")


def _as_array(value, name: str, what: str):
    """``value`` (a Tensor, array, number or list) as a NumPy/CuPy array; a tracked Tensor
    raises: a dask array carries no derivative, so it would silently drop it."""
    if isinstance(value, Tensor) and value.requires_grad:
        raise RuntimeError(
            f"dualad.dask.{name}: {what} requires grad, but the dask array it returns carries "
            f"no derivative; pass {what}.detach()"
        )
    array = _arrays.tree_to_arrays(value) if isinstance(value, Tensor) else value
    if isinstance(array, Tensor):
        raise RuntimeError(
            f"dualad.dask.{name}: {what} is tracked by an active transform (grad, jvp, vmap), "
            "but the dask array it returns carries no derivative or batch; call it outside"
        )
    try:
        xp = xp_of(array)
    except TypeError:
        xp = np
    # (a copy: the lazy result must not change when the caller later writes into its array)
    array = xp.array(array, copy=True)
    if array.dtype.kind != "f":
        raise TypeError(
            f"dualad.dask.{name}: {what} must hold floating point numbers (real), got dtype "
            f"{array.dtype}"
        )
    return array


def _check_function(func, name: str) -> None:
    if not callable(func):
        raise TypeError(
            f"dualad.dask.{name}: expected a function as the first argument, got "
            f"{type(func).__name__}"
        )


def _basis_chunks(shape: tuple, block_size, dtype, trailing: tuple) -> tuple:
    """Dask chunks over ``shape`` (the basis dims) holding ``block_size`` basis vectors each:
    whole trailing dims while they fit, then runs of the first dim that does not (``"auto"``:
    dask's own choice for blocks of ``(*shape, *trailing)`` of ``array.chunk-size`` bytes)."""
    if 0 in shape or 0 in trailing:  # an empty result: one (empty) block
        return tuple((n,) for n in shape)
    if block_size == "auto":
        chunks = da.core.normalize_chunks(
            ("auto",) * len(shape) + (-1,) * len(trailing), (*shape, *trailing), dtype=dtype
        )
        return chunks[: len(shape)]
    sizes = []
    left = block_size
    for n in reversed(shape):
        if left >= n:
            sizes.append(n)
            left //= max(n, 1)
        else:
            sizes.append(max(left, 1))
            left = 1
    return da.core.normalize_chunks(tuple(reversed(sizes)), shape)


def _check_block_size(block_size, name: str, what: str = "block_size") -> None:
    if block_size == "auto" or block_size is None:
        return
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size <= 0:
        raise ValueError(
            f"dualad.dask.{name}: {what} must be a positive int or 'auto', got {block_size!r}"
        )


def _check_client(client, name: str) -> None:
    """``client``: None, or a running ``dask.distributed.Client``; anything else raises."""
    if client is None:
        return
    if distributed is None or not isinstance(client, distributed.Client):
        raise TypeError(
            f"dualad.dask.{name}: client must be a dask.distributed.Client (or None for dask's "
            f"default scheduler), got {type(client).__name__}"
        )
    status = getattr(client.status, "value", client.status)
    if status != "running":
        raise RuntimeError(
            f"dualad.dask.{name}: the dask Client {client!r} is not running (status "
            f"{status!r}): it was closed or lost its scheduler; connect a new Client"
        )


def _shared(problem: tuple, client, name: str):
    """``problem`` (the function and the point) as one object of the graph that every task
    reads: a delayed value, or on a Client data scattered to the cluster beforehand (so that
    the graph the scheduler receives stays small, however large the point or the arrays the
    function closes over)."""
    if client is None:
        return dask.delayed(problem, traverse=False)
    try:
        return client.scatter([problem], hash=False)[0]
    except TypeError as error:
        raise _not_pickled(error, name) from error


def _not_pickled(error: TypeError, name: str) -> TypeError:
    """The error for distributed's failure to serialize (pickle) the function or the point."""
    return TypeError(
        f"dualad.dask.{name}: the function and its arguments cannot be pickled to the cluster's "
        f"workers ({error}); a lambda or a function of a module the workers can import works"
    )


def _on_client(array, client, name: str):
    """``array``, started on ``client`` when one is given (its blocks become futures)."""
    if client is None:
        return array
    try:
        return client.persist(array)
    except TypeError as error:  # (the graph holds the scattered problem: pickling failed)
        raise _not_pickled(error, name) from error


def _meta(array, ndim: int, dtype):
    return xp_of(array).empty((0,) * ndim, dtype=dtype)


def _blocks(block, problem, chunks: tuple, like, dtype, token: str, **kwargs):
    """The dask array of ``block(problem, **kwargs, block_info=...)`` over ``chunks``; an
    empty one (no basis vector or no output) has no task to run."""
    shape = tuple(sum(c) for c in chunks)
    if 0 in shape:
        return da.from_array(xp_of(like).zeros(shape, dtype=dtype), chunks=chunks)
    meta = _meta(like, len(chunks), dtype)
    return da.map_blocks(
        block, problem, chunks=chunks, dtype=dtype, meta=meta, token=token, **kwargs
    )


def jacobian(func, x, *, mode: str = "rev", block_size="auto", client=None):
    """The Jacobian of ``func`` at ``x`` as a ``dask.array.Array`` of shape
    ``(*out.shape, *x.shape)`` (``dualad.func.jacrev``'s layout), computed block by block.

    Parameters
    ----------
    func : callable
        Takes one array (a Tensor inside) and returns one array; it is pickled to the workers
        (cloudpickle), so it may be a lambda or a closure over arrays.
    x : array_like
        The point (a NumPy or CuPy array, a number or list, or an untracked Tensor).
    mode : {"rev", "fwd"}
        "rev": the blocks are rows (a box of output basis vectors pushed back through one
        ``vjp`` per task, vmap'd); "fwd": columns (a box of input basis vectors pushed forward
        by a vmap'd ``jvp``). Pick "rev" for fewer outputs than inputs.
    block_size : int or "auto"
        Basis vectors per task: whole trailing dims of the output ("rev") or input ("fwd")
        while they fit, then runs of the first dim that does not; ``"auto"``: dask's choice
        for blocks of its ``array.chunk-size`` configuration (128 MiB by default).
    client : dask.distributed.Client, optional
        Start the tasks on this cluster now (``client.persist``); by default the result is
        lazy and ``.compute()`` runs it on dask's default scheduler (threads, or the Client
        created last).

    ``func`` runs once here, to find the output's shape and dtype, and once more in each
    "rev" task (each task runs its own forward pass before its backward ones).

    >>> import numpy as np
    >>> import dualad, dualad.dask
    >>> J = dualad.dask.jacobian(lambda x: dualad.sin(x) * x.sum(), np.zeros(4), block_size=2)
    >>> J.chunks
    ((2, 2), (4,))
    >>> J.compute()
    array([[0., 0., 0., 0.],
           [0., 0., 0., 0.],
           [0., 0., 0., 0.],
           [0., 0., 0., 0.]])
    """
    _check_function(func, "jacobian")
    if mode not in _MODES:
        raise ValueError(f"dualad.dask.jacobian: mode must be 'rev' or 'fwd', got {mode!r}")
    _check_block_size(block_size, "jacobian")
    _check_client(client, "jacobian")
    x = _as_array(x, "jacobian", "x")
    out = _output(func, x, "jacobian")
    out_shape = tuple(out.shape)
    dtype = np.result_type(out.dtype, x.dtype)
    problem = _shared((func, x), client, "jacobian")
    if mode == "rev":
        chunks = _basis_chunks(out_shape, block_size, dtype, x.shape) + tuple((n,) for n in x.shape)
        block = jacobian_rows
    else:
        chunks = tuple((n,) for n in out_shape) + _basis_chunks(
            x.shape, block_size, dtype, out_shape
        )
        block = jacobian_columns
    array = _blocks(
        block, problem, chunks, x, dtype, f"dualad-jacobian-{mode}", out_shape=out_shape
    )
    return _on_client(array, client, "jacobian")


def _output(func, x, name: str):
    """``func(x)`` as an array (run once, for its shape and dtype); anything else raises."""
    out = _arrays.tree_to_arrays(func(_arrays.leaf_to_tensor(x, name)))
    if isinstance(out, Tensor) or not hasattr(out, "dtype") or not hasattr(out, "shape"):
        raise TypeError(
            f"dualad.dask.{name}: expected func to return one array (a Tensor), got "
            f"{type(out).__name__}"
        )
    if out.dtype.kind != "f":
        raise TypeError(
            f"dualad.dask.{name}: expected func to return real floating point numbers, got "
            f"dtype {out.dtype}"
        )
    return out


def hessian(func, x, *, block_size="auto", client=None):
    """The Hessian of a scalar ``func`` at ``x`` as a ``dask.array.Array`` of shape
    ``(*x.shape, *x.shape)``: blocks of rows, each a vmap'd Hessian-vector product
    (forward over reverse) over a box of basis vectors. ``block_size`` and ``client`` as in
    ``jacobian``; ``func`` runs once here to check that it returns a scalar.

    >>> import numpy as np
    >>> import dualad, dualad.dask
    >>> H = dualad.dask.hessian(lambda x: (x**3).sum(), np.array([1.0, 2.0, 3.0]), block_size=2)
    >>> H.compute()
    array([[ 6.,  0.,  0.],
           [ 0., 12.,  0.],
           [ 0.,  0., 18.]])
    """
    _check_function(func, "hessian")
    _check_block_size(block_size, "hessian")
    _check_client(client, "hessian")
    x = _as_array(x, "hessian", "x")
    out = _output(func, x, "hessian")
    if out.shape != ():
        raise ValueError(
            f"dualad.dask.hessian: expected func to return a scalar, got shape {out.shape}"
        )
    dtype = np.result_type(out.dtype, x.dtype)
    chunks = _basis_chunks(x.shape, block_size, dtype, x.shape) + tuple((n,) for n in x.shape)
    array = _blocks(
        hessian_rows, _shared((func, x), client, "hessian"), chunks, x, dtype, "dualad-hessian"
    )
    return _on_client(array, client, "hessian")


def per_example_grad(loss, params, batch, *, chunk_size="auto", client=None):
    """The gradient of ``loss(params, example)`` with respect to ``params`` for every example
    of ``batch``, as ``params``' structure of dask arrays ``(n_examples, *leaf.shape)``: one
    task per chunk of examples, each a ``vmap`` of ``grad`` over its chunk.

    Parameters
    ----------
    loss : callable
        ``loss(params, example) -> scalar``; ``example`` has ``batch``'s structure, each leaf
        without its first dim.
    params : array or pytree of arrays
        The parameters (NumPy/CuPy arrays or untracked Tensors, in tuples, lists, dicts).
    batch : array or pytree of arrays
        The examples along the first dim of every leaf: NumPy/CuPy arrays or dask arrays (a
        dask array may be larger than memory: each task reads its chunk).
    chunk_size : int or "auto"
        Examples per task; ``"auto"``: the chunks of a dask ``batch`` along its first dim,
        else dask's choice for blocks of the gradients of ``array.chunk-size`` bytes.
    client : dask.distributed.Client, optional
        As in ``jacobian``.

    >>> import numpy as np
    >>> import dualad, dualad.dask
    >>> loss = lambda w, xy: ((xy[0] @ w - xy[1]) ** 2)
    >>> X, y = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]), np.array([1.0, 0.0, 2.0])
    >>> g = dualad.dask.per_example_grad(loss, np.ones(2), (X, y), chunk_size=2)
    >>> g.chunks
    ((2, 1), (2,))
    >>> g.compute()
    array([[0., 0.],
           [0., 8.],
           [0., 0.]])
    """
    _check_function(loss, "per_example_grad")
    _check_block_size(chunk_size, "per_example_grad", "chunk_size")
    _check_client(client, "per_example_grad")
    param_leaves, rebuild_params = flatten(params)
    param_leaves = [_as_array(p, "per_example_grad", "params") for p in param_leaves]
    batch_leaves, rebuild_batch = flatten(batch)
    if not batch_leaves:
        raise ValueError("dualad.dask.per_example_grad: batch holds no arrays")
    batch_leaves = [
        b if isinstance(b, da.Array) else _as_array(b, "per_example_grad", "batch")
        for b in batch_leaves
    ]
    sizes = {b.shape[0] if b.ndim else None for b in batch_leaves}
    if None in sizes or len(sizes) != 1:
        raise ValueError(
            "dualad.dask.per_example_grad: every leaf of batch needs the examples along its "
            f"first dim, and the same number of them; got shapes "
            f"{[tuple(b.shape) for b in batch_leaves]}"
        )
    (count,) = sizes
    dtype = np.result_type(*[p.dtype for p in param_leaves])
    width = sum(int(np.prod(p.shape, dtype=np.int64)) for p in param_leaves)
    rows = _example_chunks(batch_leaves, chunk_size, count, width, dtype)
    arguments = []
    for k, leaf in enumerate(batch_leaves):
        leaf = da.asarray(leaf).rechunk((rows, *((n,) for n in leaf.shape[1:])))
        arguments += [leaf, ("i", *(f"b{k}_{d}" for d in range(1, leaf.ndim)))]
    flat = da.blockwise(
        example_grads,
        ("i", "p"),
        *arguments,
        new_axes={"p": width},
        problem=_shared((loss, rebuild_params(param_leaves)), client, "per_example_grad"),
        rebuild=rebuild_batch,
        out_dtype=dtype,
        dtype=dtype,
        meta=_meta(param_leaves[0], 2, dtype),
        concatenate=True,
        token="dualad-per-example-grad",
    )
    flat = _on_client(flat, client, "per_example_grad")
    grads = []
    offset = 0
    for p in param_leaves:
        n = int(np.prod(p.shape, dtype=np.int64))
        grads.append(flat[:, offset : offset + n].reshape(count, *p.shape).astype(p.dtype))
        offset += n
    return rebuild_params(grads)


def _example_chunks(leaves: list, chunk_size, count: int, width: int, dtype) -> tuple:
    """The chunks of the examples: ``chunk_size`` each, or (``"auto"``) a dask batch's own,
    or dask's choice for ``(count, width)`` gradients."""
    if chunk_size != "auto":
        return da.core.normalize_chunks((chunk_size,), (count,))[0]
    for leaf in leaves:
        if isinstance(leaf, da.Array):
            return leaf.chunks[0]
    return da.core.normalize_chunks(("auto", -1), (count, width), dtype=dtype)[0]


__all__ = ["hessian", "jacobian", "per_example_grad"]
