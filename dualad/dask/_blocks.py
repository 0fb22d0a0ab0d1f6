"""What one dask task of ``dualad.dask`` computes: one block of a Jacobian or Hessian (a box of
basis vectors pushed through one vmap'd ``vjp``, ``jvp`` or ``hvp``) or the gradients of one
chunk of examples (one vmap'd ``grad``).

These functions run on the workers: they take and return plain arrays (NumPy, or CuPy when
the point is a CuPy array), never Tensors, so that a task's inputs and results are what dask
ships and stores. They are module-level functions, so that a worker unpickles them by name.
"""

from __future__ import annotations

from .._backend import xp_of
from .._tree import flatten
from ..func import grad, hvp, jvp, vjp, vmap


def box_basis(shape: tuple, box: list, like):
    """The standard basis vectors of ``shape`` whose index lies in ``box`` (one ``(start,
    stop)`` per dim), stacked: ``(k, *shape)`` with ``k`` the box's size, in C order, in the
    array module and dtype of ``like``."""
    xp = xp_of(like)
    ranges = [xp.arange(start, stop) for start, stop in box]
    size = 1
    for n in shape:
        size *= n
    if ranges:
        grids = xp.meshgrid(*ranges, indexing="ij")
        flat = xp.ravel_multi_index(tuple(g.ravel() for g in grids), shape)
    else:  # a 0-d shape: its one basis vector
        flat = xp.zeros(1, dtype=xp.int64)
    basis = xp.zeros((flat.size, size), dtype=like.dtype)
    basis[xp.arange(flat.size), flat] = 1
    return basis.reshape((flat.size, *shape))


def _box(block_info, dims: slice) -> list:
    return list(block_info[None]["array-location"][dims])


def _box_shape(box: list) -> tuple:
    return tuple(stop - start for start, stop in box)


def jacobian_rows(problem, out_shape: tuple, block_info=None):
    """Rows ``J[box, ...]`` (``box`` over the output's dims): ``vmap`` of one ``vjp_fn`` over
    the box's output basis vectors."""
    func, x = problem
    box = _box(block_info, slice(0, len(out_shape)))
    out, vjp_fn = vjp(func, x)
    cotangents = box_basis(out_shape, box, out)
    (rows,) = vmap(vjp_fn)(cotangents)
    return rows.reshape((*_box_shape(box), *x.shape))


def jacobian_columns(problem, out_shape: tuple, block_info=None):
    """Columns ``J[..., box]`` (``box`` over the input's dims): ``vmap`` of ``jvp`` over the
    box's input basis vectors."""
    func, x = problem
    box = _box(block_info, slice(len(out_shape), None))
    tangents = box_basis(x.shape, box, x)
    columns = vmap(lambda tangent: jvp(func, (x,), (tangent,))[1])(tangents)
    xp = xp_of(columns)
    return xp.moveaxis(columns, 0, -1).reshape((*out_shape, *_box_shape(box)))


def hessian_rows(problem, block_info=None):
    """Rows ``H[box, ...]``: ``vmap`` of Hessian-vector products (forward over reverse) over
    the box's basis vectors (``H`` is symmetric, so ``H v`` is a row as well as a column)."""
    func, x = problem
    box = _box(block_info, slice(0, x.ndim))
    tangents = box_basis(x.shape, box, x)
    rows = vmap(lambda tangent: hvp(func, x, tangent)[1])(tangents)
    return rows.reshape((*_box_shape(box), *x.shape))


def example_grads(*blocks, problem, rebuild, out_dtype):
    """The gradients of one chunk of examples, flattened: ``(chunk, P)`` with the ``P``
    parameters of all leaves side by side (``blocks``: the chunk's batch leaves)."""
    loss, params = problem
    xp = xp_of(blocks[0])
    grads = vmap(grad(loss), in_dims=(None, 0))(params, rebuild(list(blocks)))
    leaves = flatten(grads)[0]
    count = blocks[0].shape[0]
    return xp.concatenate([xp.reshape(leaf, (count, -1)).astype(out_dtype) for leaf in leaves], 1)


__all__ = ["box_basis", "example_grads", "hessian_rows", "jacobian_columns", "jacobian_rows"]
