"""The structural primitives every rule and batching rule uses, and the ``linear`` category helper.

reshape (and the view op), permute / movedim / unsqueeze, broadcast_to and its transpose
``sum_to`` (the one place broadcast cotangents are reduced), and ``move_bdim_to_front``. They
are one module because their rules use each other: broadcast_to's VJP is sum_to and sum_to's
is broadcast_to, every batching rule here moves batch dims with permute. Most are views: they
share memory and the version counter with their base (see rev/inplace.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._dispatch import OpDef, apply, apply1, dispatch, register
from .._opdef import GATHER, REDUCE_AFFINE
from ._dims import normalize_dim, size_args
from ._exports import Exports

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def linear(
    name: str,
    impl: Callable,
    transpose: Callable,
    *,
    batch: Callable | None = None,
    view: bool | str = False,
    node_name: str | None = None,
    sparsity: tuple[str, str] = GATHER,
):
    """An op linear in its single tensor argument: JVP applies the op, VJP its transpose.
    ``sparsity``: most of these move elements (views, slicing, flips; ``OpDef.sparsity``);
    the others say so (``LINEAR_DENSE``, ``REDUCE_AFFINE``).

    ``transpose(ct, x, **params)`` gets the cotangent and an ``ArgMeta`` (shape and dtype) of x.
    Returns the OpDef; the caller builds the public function (these ops take parameters).
    """

    def vjp(cts, outs, args, params, needs):
        return (transpose(cts[0], args[0], **params),)

    def jvp(tangents, outs, args, params):
        return apply(op, tangents[0], **params)

    op = register(
        OpDef(
            name,
            impl,
            vjp=vjp,
            jvp=jvp,
            batch=batch,
            save_args=False,
            view=view,
            node_name=node_name,
            sparsity=sparsity,
        )
    )
    return op


# ---------------------------------------------------------------------------------------------
# reshaping


def _infer_shape(shape: tuple, numel: int, op: str) -> tuple:
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError(f"dualad.{op}: only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(
                f"dualad.{op}: shape '{list(shape)}' is invalid for input of size {numel}"
            )
        shape = tuple(numel // known if s == -1 else s for s in shape)
    total = 1
    for s in shape:
        total *= s
    if total != numel:
        raise RuntimeError(
            f"dualad.{op}: shape '{list(shape)}' is invalid for input of size {numel}"
        )
    return shape


def _reshape_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, shape=(x.shape[0], *params["shape"])), 0


_reshape_op = linear(
    "reshape",
    lambda xp, x, *, shape: xp.reshape(x, shape),
    lambda ct, x, *, shape: reshape(ct, x.shape),
    batch=_reshape_batch,
    view="maybe",
    node_name="ViewBackward0",
)


@public.method
def reshape(x, *shape):
    """``x`` with a new shape (a view when possible). ``-1`` infers one dimension.

    >>> import dualad
    >>> dualad.arange(6).reshape(2, -1).shape
    (2, 3)
    """
    shape = _infer_shape(size_args(shape), x.numel(), "reshape")
    if shape == x.shape:
        return _same_shape_view(x)
    return apply1(_reshape_op, x, {"shape": shape})


def _view_impl(xp, x, *, shape):
    out = x.view()
    try:
        out.shape = shape
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return out


_view_op = linear(
    "view",
    _view_impl,
    lambda ct, x, *, shape: reshape(ct, x.shape),
    batch=_reshape_batch,
    view=True,
)


def _same_shape_view(x):
    return dispatch(_view_op, (x,), {"shape": tuple(x.shape)})


@public.method
def unsqueeze(x, dim: int):
    """Insert a dimension of size 1 at ``dim``.

    >>> import dualad
    >>> dualad.unsqueeze(dualad.tensor([1.0, 2.0]), 0)
    tensor([[1., 2.]])
    >>> dualad.unsqueeze(dualad.tensor([1.0, 2.0]), -1).shape
    (2, 1)
    """
    dim = normalize_dim(dim, x.ndim + 1, op="unsqueeze")
    return dispatch(_view_op, (x,), {"shape": (*x.shape[:dim], 1, *x.shape[dim:])})


# ---------------------------------------------------------------------------------------------
# permuting dims


def _permute_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    return apply(op, x, dims=(0, *(d + 1 for d in params["dims"]))), 0


def inverse_permutation(dims) -> tuple:
    """The dims that undo ``permute(x, dims)``: ``permute(permute(x, dims), inverse)`` is x's
    order again (also for ``ndarray.transpose``)."""
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return tuple(inverse)


_permute_op = linear(
    "permute",
    lambda xp, x, *, dims: xp.transpose(x, dims),
    lambda ct, x, *, dims: permute(ct, inverse_permutation(dims)),
    batch=_permute_batch,
    view=True,
)


@public.method
def permute(x, *dims):
    """Reorder the dimensions of ``x`` (a view).

    >>> import dualad
    >>> dualad.permute(dualad.zeros(2, 3, 4), 2, 0, 1).shape
    (4, 2, 3)
    >>> dualad.permute(dualad.zeros(2, 3, 4), (1, 0, 2)).shape
    (3, 2, 4)
    """
    dims = size_args(dims)
    if len(dims) != x.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    dims = tuple(normalize_dim(d, x.ndim, op="permute") for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if dims == tuple(range(x.ndim)):
        return _same_shape_view(x)
    return dispatch(_permute_op, (x,), {"dims": dims})


@public.method
def movedim(x, source, destination):
    """Move dimension(s) ``source`` to position(s) ``destination`` (a view).

    >>> import dualad
    >>> dualad.movedim(dualad.zeros(2, 3, 4), 0, -1).shape
    (3, 4, 2)
    """
    if isinstance(source, int):
        source = (source,)
    if isinstance(destination, int):
        destination = (destination,)
    source = [normalize_dim(s, x.ndim, op="movedim") for s in source]
    destination = [normalize_dim(d, x.ndim, op="movedim") for d in destination]
    if len(source) != len(destination):
        raise RuntimeError("movedim: Invalid source or destination dims")
    order = [d for d in range(x.ndim) if d not in source]
    for dst, src in sorted(zip(destination, source)):
        order.insert(dst, src)
    return permute(x, tuple(order))


moveaxis = public.method(movedim, "moveaxis")


def move_bdim_to_front(x, bdim):
    """``x`` with its batch dimension first (no-op when it already is)."""
    if bdim is None or bdim == 0:
        return x
    return movedim(x, bdim, 0)


# ---------------------------------------------------------------------------------------------
# broadcasting


def _broadcast_batch(op, args, bdims, params):
    x = move_bdim_to_front(args[0], bdims[0])
    shape = params["shape"]
    logical = x.shape[1:]
    if len(logical) < len(shape):  # left-pad the logical dims so the batch dim stays first
        x = reshape(x, (x.shape[0],) + (1,) * (len(shape) - len(logical)) + tuple(logical))
    return apply(op, x, shape=(x.shape[0], *shape)), 0


_broadcast_op = linear(
    "broadcast_to",
    lambda xp, x, *, shape: _broadcast_impl(xp, x, shape),
    lambda ct, x, *, shape: sum_to(ct, x.shape),
    batch=_broadcast_batch,
    view=True,
    node_name="ExpandBackward0",
)


def _broadcast_impl(xp, x, shape: tuple):
    if type(x) is np.ndarray and x.flags.c_contiguous:
        # np.broadcast_to goes through nditer (~1.7 us); a contiguous array's broadcast view is
        # one ndarray call with the strides worked out here (read-only, like broadcast_to's)
        lead = len(shape) - x.ndim
        strides = [0] * lead
        for size, n, stride in zip(x.shape, shape[lead:], x.strides):
            strides.append(stride if size == n else 0)
        out = np.ndarray(shape, x.dtype, x, 0, strides)
        out.flags.writeable = False
        return out
    return xp.broadcast_to(x, shape)


@public.method
def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (a read-only view, like NumPy's).

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dualad.broadcast_to(x, (2, 2))
    tensor([[1., 2.],
            [1., 2.]], grad_fn=<ExpandBackward0>)
    >>> dualad.autograd.grad(dualad.broadcast_to(x, (3, 2)).sum(), x)  # summed back
    (tensor([3., 3.]),)
    """
    shape = tuple(int(s) for s in shape)
    if tuple(x.shape) == shape:
        return x
    try:
        np.broadcast_shapes(tuple(x.shape), shape)
    except ValueError:
        raise RuntimeError(
            f"dualad.broadcast_to: the shape {tuple(x.shape)} cannot be broadcast to {shape}"
        ) from None
    return dispatch(_broadcast_op, (x,), {"shape": shape})


def expand_to(x, shape: tuple):
    """``x`` broadcast to ``shape``, a tuple of ints known to be compatible (for rules: no
    checks, no conversions)."""
    if x.shape == shape:
        return x
    return dispatch(_broadcast_op, (x,), {"shape": shape})


def _keepdim_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def expand_reduced(ct, x_shape, dims, keepdim):
    """Broadcast a reduction's cotangent back to the input's shape."""
    if not keepdim and dims and len(dims) < len(x_shape):
        # a partial reduction: put the reduced dims back as 1s (a full one broadcasts as is)
        ct = reshape(ct, _keepdim_shape(x_shape, dims))
    return expand_to(ct, x_shape)


def _reduction_batch(op, args, bdims, params):
    """Batch rule for reductions over ``dims``: move the batch dim first, shift dims by one."""
    x = move_bdim_to_front(args[0], bdims[0])
    params = dict(params, dims=tuple(d + 1 for d in params["dims"]))
    return apply(op, x, **params), 0


_sum_op = linear(
    "sum",
    # the method: NumPy's np.sum wrapper costs twice the reduction on small arrays
    lambda xp, x, *, dims, keepdim: x.sum(axis=dims, keepdims=keepdim),
    lambda ct, x, *, dims, keepdim: expand_reduced(ct, x.shape, dims, keepdim),
    batch=_reduction_batch,
    sparsity=REDUCE_AFFINE,
)


@public.function
def sum_to(x, shape: tuple):
    """Sum ``x`` down to ``shape`` (the inverse of broadcasting ``shape`` to ``x.shape``).

    >>> import dualad
    >>> sum_to(dualad.ones(2, 3), (1, 3))
    tensor([[2., 2., 2.]])
    """
    shape = tuple(shape)
    xshape = tuple(x.shape)
    if xshape == shape:
        return x
    lead = len(xshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"dualad.sum_to: cannot sum shape {xshape} to {shape}")
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and xshape[lead + i] != 1:
            dims.append(lead + i)
        elif s != xshape[lead + i]:
            raise RuntimeError(f"dualad.sum_to: cannot sum shape {xshape} to {shape}")
    out = apply1(_sum_op, x, {"dims": tuple(dims), "keepdim": True}) if dims else x
    if lead:
        out = reshape(out, shape)
    return out
