"""In-place ops: compute out of place, write into the buffer, bump the version, rebase history.

``x.op_(...)`` runs the functional op on a snapshot of ``x`` that has x's gradient history (so
whatever the functional op saves is the pre-mutation value), copies the result into x's memory
(views of x see it) and bumps the shared version counter (so nodes that saved x itself detect
the change). Then x's history moves to the new node. If x is a view, its base gets a CopySlices
node instead: the base's gradient outside the view region flows to its old history, inside the
region to the op's result (PyTorch's CopySlices). CopySlices lays the base's gradient out as
the base is (per example under vmap) before it replays the view ops on it.

Writes read before they write: the result is computed out of place from the operands as they
were, so an operand that shares memory with x (``y.mul_(y.T)``, ``y[1:].add_(y[:-1])``,
``y[mask] = y[0]``) gives the copy-first result; while recording, such an operand is cloned
(recorded) first so that what the op saved is not overwritten by the write itself.
"""

from __future__ import annotations

import numpy as np

from .._backend import allocate_on, is_writeable, xp_of
from .._meta import _version_box
from .._state import ACTIVE, GRAD, MUTATION_WATCH
from .._tensor import Tensor, _new, wrap
from .._wrapper import unwrapped
from ..ops import clone
from ..ops.base import inverse_permutation
from ..ops.views import copy_in_order
from .hooks import move_retain_grad
from .node import ArgMeta, Node, _sequence, _validate, accumulator_of
from .saved import before_mutation
from .views import (
    _node_name,
    custom_view_message,
    multi_output_message,
    nograd_view_message,
    refresh_view_node,
    replay_view,
)

_LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_OF_LEAF_MESSAGE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


def _snapshot(x: Tensor) -> Tensor:
    """A copy of x's data with x's gradient history (same grad_fn / output_nr).

    Only used while recording, where x is never a leaf that requires grad (that is an error).
    For a view whose base requires grad the history is a freshly replayed view of the base, not
    the view's own grad_fn: like PyTorch's CopySlices, the view's old grad_fn (and the tensor
    hooks on it) must not be part of the new graph.
    """
    out = _new(Tensor)
    out._data = x._data.copy()
    view = x._view
    if view is not None and view.base._rg:
        fresh = replay_view(view.base, view.replay)
        out._rg = fresh._rg
        out._node = fresh._node
        out._out_nr = fresh._out_nr
    else:
        out._rg = x._rg
        out._node = x.grad_fn
        out._out_nr = x._out_nr
    out._meta = None
    out._fw = None if x._fw is None else dict(x._fw)
    out._fwsig = None
    out._vc = None
    out._view = None
    if ACTIVE:
        _snapshot_tangents(x, out)
    return out


def _snapshot_tangents(x: Tensor, out: Tensor) -> None:
    """The snapshot's tangents at the active dual levels: copies of x's as they are before the
    write. ``update_tangents`` then writes x's tangent in place, and a snapshot sharing it gave
    whatever the functional op saved (sin_ saves its input) the new tangent: the tangent of a
    backward through x.sin_() (of cos(x)) came out wrong. A view with no tangent yet reads its
    base's (``view_tangent``). Suspended levels do not see the write: their tangents stay
    shared."""
    if not GRAD.fw_enabled:
        return
    # (the dual levels are the keys of tangent dicts: x's, or its base's for a view)
    levels = dict.fromkeys(x._fw or ())
    if x._view is not None:
        levels.update(dict.fromkeys(x._view.base._fw or ()))
    if not levels:
        return
    for level in GRAD.levels:
        if level in levels and level.alive:
            tangent = level.tangent_of(x)
            if tangent is not None:
                level.attach(out, tangent.clone())


def _any_requires_grad(args) -> bool:
    return any(isinstance(a, Tensor) and a._rg for a in args)


def check_inplace_allowed(x: Tensor, args: tuple) -> None:
    """PyTorch's errors for in-place ops that would corrupt gradients (only when grad mode
    records the op: under no_grad anything goes)."""
    if not GRAD.enabled:
        return
    x_requires = x.requires_grad  # refreshes a view whose base gained history in place
    if not (x_requires or _any_requires_grad(args)):
        return
    view = x._view
    if view is not None:
        if view.in_custom_function:
            raise RuntimeError(custom_view_message(_node_name(x), x._out_nr, indirect=False))
        if view.multi_output:
            raise RuntimeError(multi_output_message(x, "UnbindBackward0"))
        if view.created_without_grad:
            raise RuntimeError(nograd_view_message(_node_name(x), x._out_nr, indirect=False))
        if x_requires and view.base._node is None:
            raise RuntimeError(_VIEW_OF_LEAF_MESSAGE)
        return
    if x_requires and x._node is None:
        raise RuntimeError(_LEAF_MESSAGE)


def unshare_operands(bottom: Tensor, args: tuple, params: dict) -> tuple:
    """``args`` and ``params`` with each tensor that may share memory with ``bottom`` (the plain
    tensor being written) replaced by a differentiable clone.

    Every write computes its result out of place before writing it (read-before-write:
    ``y.mul_(y.T)`` multiplies by the old transpose). The value is right either way, but a
    recorded op that saved such an operand (mul saves y.T) found it overwritten by the write
    itself, and backward raised "modified by an inplace operation" where func.grad and jacfwd
    differentiate the same code. The clone is recorded, so the operand's gradient flows through
    it to its pre-write history. Only called while recording (no saved tensors otherwise)."""
    data = bottom._data
    for a in args:
        if isinstance(a, Tensor) and _shares(data, a):
            break
    else:
        if not params or not any(_shares(data, v) for v in params.values()):
            return args, params
    args = tuple(clone(a) if _shares(data, a) else a for a in args)
    return args, {k: clone(v) if _shares(data, v) else v for k, v in params.items()}


def _shares(data, a) -> bool:
    """Whether tensor ``a`` may share memory with the array ``data`` (bounds only: cheap)."""
    a = unwrapped(a)  # (a transform's wrapper: its memory is the plain tensor's under it)
    if type(a) is not Tensor or type(a._data) is not type(data):
        return False
    if type(data) is np.ndarray:
        return np.may_share_memory(data, a._data)
    return xp_of(data).may_share_memory(data, a._data)


def apply_inplace(functional, x: Tensor, *args, **params) -> Tensor:
    """Run ``functional(x, *args, **params)`` and write the result into ``x``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"dualad: in-place ops need a Tensor, got {type(x).__name__}")
    if type(x) is not Tensor:  # a transform's wrapper (vmap's BatchedTensor) writes via its level
        return x._apply_inplace(functional, args, params)
    check_inplace_allowed(x, args)
    recording = GRAD.enabled and (
        x._rg or _any_requires_grad(args) or (x._view is not None and x._view.base._rg)
    )
    if recording:
        source = _snapshot(x)
        args, params = unshare_operands(x, args, params)
    else:
        source = x
    result = functional(source, *args, **params)
    if type(result) is not Tensor:  # tracked by a level that x is not: cannot be written into x
        error = result._written_into_plain(getattr(functional, "__name__", "op"), x)
        if error is None:  # (the result's level wrote it: jit's trace level does)
            return x
        raise error
    write_into(x, result)
    if recording:
        rebase_history(x, result)
    if ACTIVE and (result._fw is not None or x._fw is not None):
        update_tangents(x, result)
    return x


def update_tangents(x: Tensor, result: Tensor) -> None:
    """Forward mode: x's tangent at each dual level becomes the result's (spec/forward.md V1-V7),
    written by that level (``DualLevel.write_tangent``; the dual levels are the keys of the
    tangent dicts). Levels suspended meanwhile (a rule running one level down, e.g. a custom
    Function's forward) and forward grad switched off: the write is not seen at that level,
    whose tangent stays as it is."""
    if not GRAD.fw_enabled:
        return
    levels = dict.fromkeys(result._fw or ())
    levels.update(dict.fromkeys(x._fw or ()))
    stack = GRAD.levels
    for level in levels:
        if level.alive and level in stack:
            level.write_tangent(x, result)


def check_fits(x: Tensor, result: Tensor) -> None:
    """PyTorch's errors for an in-place op's ``result`` that cannot be written into ``x``: of
    another shape (it does not broadcast to x's), or of a dtype not castable to x's."""
    if tuple(result.shape) != tuple(x.shape):
        raise RuntimeError(
            f"output with shape {list(x.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if not np.can_cast(result.dtype, x.dtype, casting="same_kind"):
        raise RuntimeError(
            f"result type {result.dtype} can't be cast to the desired output type {x.dtype}"
        )


def write_into(x: Tensor, result: Tensor) -> None:
    """Copy ``result`` into x's buffer (same shape, same-kind cast) and bump x's version."""
    check_fits(x, result)
    dst = x._data
    src = result._data
    if type(dst) is not type(src):
        raise RuntimeError(
            f"dualad: in-place op mixes devices: the tensor is on {x.device}, the result on "
            f"{result.device}"
        )
    if not is_writeable(dst):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    if MUTATION_WATCH:  # allow_mutation_on_saved_tensors: copy what was saved from x first
        before_mutation(x)
    dst[...] = src
    x._bump_version()


def rebase_history(x: Tensor, result: Tensor) -> None:
    """Give ``x`` (and its base, if x is a view) the gradient history of ``result``."""
    _track_saved_output(x, result)
    view = x._view
    if view is None:
        # x takes result's grad_fn as refresh_view_node gives a view its replayed one: alike on
        # purpose, inline, as this runs on every recorded in-place op
        if result._rg:
            x._rg = True
            x._node = result._node
            x._out_nr = result._out_nr
            meta = x._meta
            if meta is not None and meta.retains_grad:
                move_retain_grad(x, (x._node, x._out_nr))
        return
    base = view.base
    if not (result._rg or base._rg):
        return
    node = CopySlices(base, result, view.replay)
    base._rg = True
    base._node = node
    base._out_nr = 0
    meta = base._meta
    if meta is not None and meta.retains_grad:
        move_retain_grad(base, (node, 0))
    view.version = -1  # force the view's grad_fn to be rebuilt from the new base history
    refresh_view_node(x)  # (moves x's retain-grad capture along)


def _track_saved_output(x: Tensor, result: Tensor) -> None:
    """If the op saved its output, that output is now x: watch x's version counter instead
    (``w = z.exp_()``; a later in-place op on z must invalidate ExpBackward's saved result)."""
    node = result._node
    op = getattr(node, "_op", None)
    if op is None or not op.save_out or node._out_data is None:
        return
    box = result._vc
    x_box = _version_box(x)
    node._out_versions = tuple(
        (x_box, x_box[0], fw) if saved_box is box else (saved_box, version, fw)
        for saved_box, version, fw in node._out_versions
    )


def _dims_order(base: Tensor) -> tuple | None:
    """The base's dims from the largest stride to the smallest when it is dense but not
    C-contiguous (``sin(x.mT)`` keeps x.mT's layout, so ``base.mT.view(-1)`` is a view); None
    for C order (also for a batched base: its examples are laid out C by the rules)."""
    if type(base) is not Tensor:
        return None
    data = base._data
    if data.flags.c_contiguous:
        return None
    order = tuple(sorted(range(data.ndim), key=lambda d: -abs(data.strides[d])))
    return order if data.transpose(order).flags.c_contiguous else None


def _base_layout(ct: Tensor, order: tuple | None) -> Tensor:
    """The base's gradient ``ct`` laid out as the base is (``order``: see ``_dims_order``; per
    example under vmap) before the recorded view ops are replayed on it, as PyTorch's
    CopySlices copies the gradient into the base's strides first. A gradient arrives in
    whatever layout the op after the write made it (``y.mT``'s backward gives a transposed one;
    an index backward under vmap one with the batch dim inside each example), and a replayed
    ``view(-1)`` raised on it where the forward's view of the base worked."""
    # (clone's batching rule copies batch-first, so under vmap every example is C-contiguous;
    # under a dual level its jvp clones the tangent too, which the replay views as well)
    if order is None:
        if not GRAD.levels and type(ct) is Tensor and ct._data.flags.c_contiguous:
            return ct  # eager and already the base's layout: the common case, no copy
        return clone(ct)
    if not GRAD.levels and type(ct) is Tensor and ct._data.transpose(order).flags.c_contiguous:
        return ct
    return copy_in_order(ct, order)


class CopySlices(Node):
    """History of a base after an in-place op on one of its views."""

    __slots__ = ("_base_dtype", "_base_order", "_base_shape", "_metas", "_replay")

    def __init__(self, base: Tensor, result: Tensor, replay: tuple) -> None:
        self._init_base(next(_sequence))
        if base._rg:
            node = base._node
            base_edge = (accumulator_of(base), 0) if node is None else (node, base._out_nr)
        else:
            base_edge = (None, 0)
        result_edge = (result._node, result._out_nr) if result._rg else (None, 0)
        self._edges = (base_edge, result_edge)
        self._metas = (ArgMeta(base.shape, base.dtype), ArgMeta(result.shape, result.dtype))
        self._replay = replay
        self._base_shape = base.shape
        self._base_dtype = base.dtype
        self._base_order = _dims_order(base)

    def name(self) -> str:
        return "CopySlices"

    def _mask(self, like: Tensor) -> Tensor:
        """1 outside the view region, 0 inside, as a constant on ``like``'s device."""
        # (from ``like.device``, not its array: under vmap ``like`` is a batched gradient)
        shape, dtype, order = self._base_shape, like.dtype, self._base_order
        if order is None:
            keep = wrap(allocate_on(like.device, lambda xp: xp.ones(shape, dtype=dtype)))
        else:  # the base's layout, so that the view ops replay on it as on the base
            permuted = tuple(shape[d] for d in order)
            inverse = inverse_permutation(order)
            keep = wrap(
                allocate_on(
                    like.device, lambda xp: xp.ones(permuted, dtype=dtype).transpose(inverse)
                )
            )
        previous = GRAD.enabled
        GRAD.enabled = False
        try:
            region = replay_view(keep, self._replay)
        finally:
            GRAD.enabled = previous
        region._data[...] = 0
        return keep

    def _apply(self, grads: list, needs, create_graph: bool) -> tuple:
        ct = _base_layout(grads[0], self._base_order)
        base_edge, result_edge = self._edges
        grad_base = ct * self._mask(ct) if base_edge[0] is not None else None
        grad_result = replay_view(ct, self._replay) if result_edge[0] is not None else None
        needs = (grad_base is not None, grad_result is not None)
        return _validate((grad_base, grad_result), self._metas, needs, self)
