"""BatchedTensor and the vmap level: batching as a transform level on the dispatch stack.

Invariants:
- A ``BatchedTensor`` of vmap level L wraps a value one level down (a plain ``Tensor``, or a
  ``BatchedTensor`` of an outer vmap level) and ``bdim``, the dimension of that value that carries
  L's batch. Everything it reports (shape, ndim, size, numel, len) is LOGICAL: one example's.
  ``bdim`` is never None: a value that is not batched at L is simply not wrapped for L.
- An op with an argument that L owns (``type(v) is BatchedTensor and v._level is L``) runs L's
  batching rule on the unwrapped values with L and the levels above it suspended (one level
  down), and outputs that carry a batch dim are re-wrapped for L. Values of other levels are
  constants to L: only identity tests on the level object, never level arithmetic.
- A ``BatchedTensor`` is a plain Python object around its value: it has no gradient history of its
  own (``_node`` is None, ``_rg`` False). Reverse mode records the PHYSICAL ops that the rules run
  one level down (grad of vmap through the eager tape); a ``func.grad`` tape level entered inside
  vmap will record on the logical values, because it sits above L on the stack and so sees the
  ``BatchedTensor`` objects themselves as its inputs and outputs.
- The parent's ``_data`` slot is shadowed by a property: internal code that reads
  ``x._data.shape`` / ``.dtype`` gets the logical values, anything else raises a clear error
  (the array data of a batched value does not exist per example).
- When L exits it is marked dead; a ``BatchedTensor`` that escaped its vmap raises on use.
- A non-view op's batched result has its batch dim outermost in memory (``batch_outermost``),
  so each example is laid out as the eager op lays out that example (contiguous where eager is).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._backend import xp_of
from .._dispatch import Level, dispatch
from .._errors import ATTEMPTS, TrackedConversionError
from .._state import GRAD, resume, suspend
from .._tensor import Tensor, _new
from .._wrapper import NO_HISTORY, LevelTensor, new_wrapper
from ..fwd import make_dual, unpack_dual
from ..ops import movedim, reshape, select, stack, unsqueeze, where
from ..ops._batching import front as _front
from ..ops.views import copy_in_order
from ..rev.inplace import _snapshot as plain_snapshot
from ..rev.inplace import apply_inplace, check_fits, unshare_operands, update_tangents
from . import rules
from .logical import _escaped, _level_of, _LogicalData

# names of the ops whose per-example fallback has warned already (once per op name)
_WARNED: set = set()


class PerformanceWarning(UserWarning):
    """An op ran under vmap as a Python loop over the examples (it has no batching rule)."""


# ---------------------------------------------------------------------------------------------
# the vmap level


class VmapLevel(Level):
    """One active ``vmap`` call: its batch size and randomness mode.

    ``index`` counts vmap levels from 1 (the outermost active vmap).

    >>> from dualad.vmap import VmapLevel
    >>> level = VmapLevel(1, 5, "same")  # what dualad.vmap(f, randomness="same") pushes
    >>> level.kind, level.size, level.randomness
    ('vmap', 5, 'same')
    """

    __slots__ = ("randomness", "size")
    kind = "vmap"
    title = "dualad.vmap"  # for error messages, as the other levels' titles
    forbids_backward = True  # rev/entry.py: backward() inside vmap is an error
    # apply_function (a custom Function call): vmap/function.py, which builds on this module,
    # attaches it (vmap.api imports it)

    def __init__(self, index: int, size: int, randomness: str) -> None:
        self.index = index
        self.size = size
        self.randomness = randomness
        self.alive = True

    def conversion_error(self, value, kind: str) -> Exception:
        return value._no_values(ATTEMPTS[kind])

    def draw_random(self, redraw, shape: tuple):
        """Random values of logical ``shape`` by this level's randomness mode: ``"error"``
        raises, ``"same"`` draws one value shared by the batch, ``"different"`` draws the
        batch size in front and wraps it as batched along dim 0. ``redraw`` runs one level
        down (so outer vmap levels apply their own randomness in turn)."""
        if self.randomness == "error":
            raise RuntimeError(RANDOM_MESSAGE)
        removed = suspend(self)
        try:
            if self.randomness == "same":
                return redraw(tuple(shape))
            value = redraw((self.size, *shape))
        finally:
            resume(removed)
        return batched(value, 0, self)

    def owns(self, value) -> bool:
        return type(value) is BatchedTensor and value._level is self

    def process(self, op, args: tuple, params: dict):
        values = []
        bdims = []
        for a in args:
            if type(a) is BatchedTensor and a._level is self:
                values.append(a._value)
                bdims.append(a._bdim)
            else:
                values.append(a)
                bdims.append(None)
        rule = op.batch
        if rule is None:
            rule = self._fallback
        removed = suspend(self)
        try:
            out, out_bdims = rule(op, tuple(values), tuple(bdims), params)
            if (
                type(out) is Tensor
                and not op.view
                and not (out_bdims == 0 and out._data.flags.c_contiguous)  # (common case)
            ):
                out = batch_outermost(out, out_bdims, values)
        finally:
            resume(removed)
        if type(out) is Tensor and type(out_bdims) is int:  # the common case: one plain tensor
            shape = out._data.shape
            if out_bdims < 0:
                out_bdims += len(shape)
            if not 0 <= out_bdims < len(shape) or shape[out_bdims] != self.size:
                raise self._bad_rule(op, shape, out_bdims)
            # batched(out, out_bdims, self), inline: the hot path of every op under vmap
            value, out = out, _new(BatchedTensor)
            out._value = value
            out._bdim = out_bdims
            out._level = self
            out._rg, out._node, out._out_nr, out._meta, out._fw, out._vc, out._view = NO_HISTORY
            return out
        if isinstance(out, tuple):
            if not isinstance(out_bdims, (tuple, list)):
                out_bdims = (out_bdims,) * len(out)
            return tuple(self._wrap(op, o, b) for o, b in zip(out, out_bdims))
        return self._wrap(op, out, out_bdims)

    def _fallback(self, op, values: tuple, bdims: tuple, params: dict):
        """An op without a batching rule: the loop fallback for ops marked so, else an error."""
        if op.name not in rules.LOOP_BATCHED:  # (looked up per call: tests extend it)
            raise RuntimeError(
                f"dualad.vmap: no batching rule for '{op.name}' at vmap level {self.index}"
            )
        return self._loop(op, values, bdims, params)

    def _bad_rule(self, op, shape, bdim) -> RuntimeError:
        return RuntimeError(
            f"dualad.vmap: the batching rule of '{op.name}' returned an output of shape "
            f"{tuple(shape)} with batch dim {bdim}, but the batch size at vmap level "
            f"{self.index} is {self.size} (a bug in that rule)"
        )

    def _wrap(self, op, value, bdim):
        """``value`` (one level down) as this level's BatchedTensor when it carries the batch."""
        if bdim is None or not isinstance(value, Tensor):
            return value
        shape = value.shape
        if bdim < 0:
            bdim += len(shape)
        if not 0 <= bdim < len(shape) or shape[bdim] != self.size:
            raise self._bad_rule(op, shape, bdim)
        return batched(value, bdim, self)

    def _loop(self, op, values: tuple, bdims: tuple, params: dict):
        """The fallback for ops in ``LOOP_BATCHED``: run the op once per example and stack."""
        if op.name not in _WARNED:
            _WARNED.add(op.name)
            warnings.warn(
                f"There is a performance drop because we have not yet implemented the batching "
                f"rule for {op.name}. dualad.vmap runs it once per example (a Python loop) "
                "instead.",
                PerformanceWarning,
                stacklevel=4,
            )
        if self.size == 0:
            raise RuntimeError(
                f"dualad.vmap: '{op.name}' has no batching rule, and its per-example fallback "
                "cannot run on an empty batch (batch size 0)"
            )
        results = []
        for i in range(self.size):
            sliced = tuple(v if b is None else select(v, b, i) for v, b in zip(values, bdims))
            out = dispatch(op, sliced, params)
            results.append(out if isinstance(out, tuple) else (out,))
        stacked = []
        for k in range(len(results[0])):
            pieces = [r[k] for r in results]
            shapes = {tuple(p.shape) for p in pieces}
            if len(shapes) > 1:
                raise RuntimeError(
                    f"dualad.vmap: '{op.name}' has no batching rule and its per-example results "
                    f"have different shapes ({sorted(shapes)}): an op whose output shape depends "
                    f"on the data cannot be batched (vmap level {self.index})"
                )
            stacked.append(stack(pieces, 0))
        if op.nout == 1:
            return stacked[0], 0
        return tuple(stacked), (0,) * len(stacked)

    # forward mode through vmap: dual numbers of a dual level BELOW this vmap level
    def make_dual_above(self, dual, tensor, tangent):
        """``make_dual`` at a dual level below this level when it batches the primal or the
        tangent (``with dual_level(): vmap(lambda t: make_dual(x, t))``), else None.

        The dual number must live one level below this level: both parts are brought to the
        batch-first layout there (an unbatched part is broadcast along the batch), made dual at
        ``dual``, and the result wrapped for this level. A tangent attached to the wrapper
        itself would be invisible to the ops, which this level processes first.
        """
        owns_tensor = self.owns(tensor)
        owns_tangent = self.owns(tangent)
        if not (owns_tensor or owns_tangent):
            return None
        primal, primal_bdim = (tensor._value, tensor._bdim) if owns_tensor else (tensor, None)
        value, value_bdim = (tangent._value, tangent._bdim) if owns_tangent else (tangent, None)
        removed = suspend(self)
        try:
            primal = _front(primal, primal_bdim, self.size)
            value = _front(value, value_bdim, self.size)
            inner = make_dual(primal, value, level=dual.index)
        finally:
            resume(removed)
        return batched(inner, 0, self)

    def unpack_dual_above(self, dual, tensor):
        """``unpack_dual`` of a BatchedTensor of this level (its tangent at ``dual``, a dual
        level below, lives in the value): ``(primal, tangent)`` wrapped for this level."""
        removed = suspend(self)
        try:
            primal, tangent = unpack_dual(tensor._value, level=dual.index)
        finally:
            resume(removed)
        bdim = tensor._bdim
        return batched(primal, bdim, self), None if tangent is None else batched(
            tangent, bdim, self
        )

    def __repr__(self) -> str:
        state = "" if self.alive else ", exited"
        return f"<vmap level {self.index} (batch size {self.size}{state})>"


def batch_outermost(out: Tensor, bdim, values: tuple) -> Tensor:
    """A rule's fresh result with its batch dim outermost in memory, each example keeping its
    own order of dims, so that an example is laid out as the eager op lays out that example.
    NumPy follows its inputs' memory order (order K: elementwise ops, ``tril``, ``copy``...),
    and with an input's batch dim inside each example (``vmap(f, in_dims=1)``, a rule that
    moved the batch as a view, or one that allocated with the batch at the indexed dim) every
    example came out strided where eager gives a contiguous result: a ``reshape`` then copied
    where eager gives a view, so it missed later in-place writes (silently wrong values), and
    ``view(-1)`` raised. View ops keep their layout (they must share memory); so does a result
    that may share memory with an input (an op that returned its input as is)."""
    data = out._data
    if type(bdim) is not int or (bdim == 0 and data.flags.c_contiguous) or data.ndim < 2:
        return out  # the common case: batch-first and C-contiguous
    shape = data.shape
    strides = [abs(s) for s in data.strides]
    if bdim < 0:
        bdim += len(shape)
    if not 0 <= bdim < len(shape) or shape[bdim] == 1:
        return out  # (a bad bdim is reported by the caller)
    if all(strides[bdim] >= strides[d] * shape[d] for d in range(len(shape)) if d != bdim):
        return out  # the batch is outermost already
    xp = xp_of(data)
    for v in values:
        # (memory of another device is never shared: CuPy refuses NumPy arrays here)
        if type(v) is Tensor and xp_of(v._data) is xp and xp.may_share_memory(data, v._data):
            return out
    order = [bdim, *sorted((d for d in range(len(shape)) if d != bdim), key=lambda d: -strides[d])]
    return copy_in_order(out, order)


def active_vmap_levels() -> list:
    """The vmap levels on this thread's stack, outermost first."""
    return [level for level in GRAD.levels if type(level) is VmapLevel]


# ---------------------------------------------------------------------------------------------
# BatchedTensor


def batched(value: Tensor, bdim: int, level: VmapLevel) -> BatchedTensor:
    """Wrap ``value`` (one level below ``level``) as batched along ``bdim`` at ``level``."""
    out = new_wrapper(BatchedTensor, value, level)
    out._bdim = bdim
    return out


class BatchedTensor(LevelTensor):
    """A tensor inside ``dualad.vmap``: one example's view of a batch of values.

    Ops and methods see the logical (per-example) shape; the batch lives in ``_value`` along
    ``_bdim``. Converting one to Python numbers or NumPy raises, since inside vmap it stands for
    all examples at once.

    >>> import dualad
    >>> def per_row(r):
    ...     print(type(r).__name__, r.shape)  # one row's shape, the batch hidden
    ...     return r.sum()
    >>> dualad.vmap(per_row)(dualad.ones(3, 2))
    BatchedTensor (2,)
    tensor([2., 2., 2.])
    """

    __slots__ = ("_bdim",)
    _level: VmapLevel  # (the slots' types, for type checkers)
    _bdim: int
    batches = True

    # ------------------------------------------------------------------ logical metadata
    @property
    def _data(self):
        level = self._level
        if not level.alive:
            raise _escaped(self)
        if level not in GRAD.levels:
            raise RuntimeError(
                f"dualad.vmap: a batched tensor of {_level_of(self)} reached code running below "
                "that level (a batching rule or transform passed a wrapped value down instead "
                "of its value)"
            )
        return _LogicalData(self)

    @property
    def shape(self) -> tuple[int, ...]:
        shape = self._value.shape
        bdim = self._bdim
        return (*shape[:bdim], *shape[bdim + 1 :])

    @property
    def ndim(self) -> int:
        return self._value.ndim - 1

    # ------------------------------------------------------------------ autograd attributes
    # (``requires_grad`` is the value's: grad of vmap records the physical ops)
    def requires_grad_(self, requires_grad: bool = True):
        raise NotImplementedError(
            f"dualad.vmap: requires_grad_() on a batched tensor ({_level_of(self)}) is not "
            "supported yet; set requires_grad on the inputs before calling vmap, or use "
            "dualad.func.grad inside vmap"
        )

    def retain_grad(self) -> None:
        raise NotImplementedError(
            f"dualad.vmap: retain_grad() on a batched tensor ({_level_of(self)}) is not supported"
        )

    def register_hook(self, hook):
        raise NotImplementedError(
            f"dualad.vmap: register_hook() on a batched tensor ({_level_of(self)}) is not supported"
        )

    def detach(self) -> BatchedTensor:
        """The batched value detached from autograd and forward mode (per example)."""
        return batched(self._value.detach(), self._bdim, self._level)

    def detach_(self) -> BatchedTensor:
        # rebinds the value instead of detaching it in place: the value may be the user's input
        self._value = self._value.detach()
        self._fw = None
        return self

    @property
    def data(self) -> BatchedTensor:
        return batched(self._value.data, self._bdim, self._level)

    @data.setter
    def data(self, value) -> None:
        raise NotImplementedError(
            f"dualad.vmap: assigning .data of a batched tensor ({_level_of(self)}) is not supported"
        )

    # ------------------------------------------------------------------ no per-example values
    def _no_values(self, what: str) -> TrackedConversionError:
        if what.startswith("conversion to a NumPy array"):
            fix = (
                "Use the dualad op instead of the NumPy function (dualad.exp(x) for "
                "np.exp(x)), or move the NumPy code out of the vmapped function."
            )
        else:
            fix = (
                "Data-dependent Python control flow on batched values cannot be vmapped: "
                "rewrite it with tensor ops (dualad.where, masks) or move it out of the "
                "vmapped function."
            )
        return TrackedConversionError(
            f"dualad.vmap: {what} on a batched tensor ({_level_of(self)}, logical shape "
            f"{self.shape}) is not supported: inside vmap a tensor stands for all examples at "
            f"once, so it has no single value. {fix}"
        )

    # always refused, even once the level has exited (the value is still a whole batch)
    def _check_conversion(self, kind: str) -> None:
        raise self._no_values(ATTEMPTS[kind])

    def numpy(self, *, force: bool = False):
        raise self._no_values(ATTEMPTS["numpy"])  # (forced too: there is no single value)

    def __bool__(self) -> bool:
        raise self._no_values("bool() (an `if` or `while` on a tensor)")

    def __index__(self) -> int:
        raise self._no_values("use as a Python index")

    def __reduce_ex__(self, protocol):
        raise self._no_values("pickling")

    def __deepcopy__(self, memo):
        raise self._no_values("copy.deepcopy()")

    # ------------------------------------------------------------------ in-place ops
    def _apply_inplace(self, functional, args: tuple, params: dict) -> BatchedTensor:
        """``self.op_(...)``: the functional op at this level, written into the value below.

        Called by ``rev.inplace.apply_inplace``. The functional op runs on a snapshot when the
        value's history is recorded (so the nodes it makes never see the write), and the result
        goes into the value with ``copy_`` one level down, which bumps the version, rebases the
        value's history and updates its tangents there. While recording, an operand that
        shares memory with the value is cloned first (``unshare_operands``).
        """
        level = self._level
        if GRAD.enabled and _bottom(self).requires_grad:
            source = _snapshot(self)
            args, params = unshare_operands(_bottom(self), args, params)
        else:
            source = self
        result = functional(source, *args, **params)
        physical = self._physical_result(result, functional)
        removed = suspend(level)
        try:
            self._value.copy_(physical)
        finally:
            resume(removed)
        if result._fw is not None or self._fw is not None:
            update_tangents(self, result)
        return self

    def __setitem__(self, key, value) -> None:
        # ``x[mask] = v`` with a batched boolean mask (``x[x < 0] = 0``): a key must be static, so
        # it is written as ``x.copy_(where(mask, v, x))``, which batches (v broadcasts against
        # x's trailing dims, as in torch; a v of one value per selected element cannot batch)
        mask = key[0] if isinstance(key, tuple) and len(key) == 1 else key
        if (
            type(mask) is BatchedTensor
            and mask.dtype == np.bool_
            and mask.shape == self.shape[: mask.ndim]
            and _broadcasts_per_element(value, self.ndim - mask.ndim)
        ):
            mask = reshape(mask, (*mask.shape, *(1,) * (self.ndim - mask.ndim)))
            apply_inplace(_masked_write, self, mask, value)  # (on a snapshot when recording)
            return
        Tensor.__setitem__(self, key, value)

    def _physical_result(self, result, functional):
        """``result`` (logical, like self) as a value laid out like ``self._value``."""
        name = getattr(functional, "__name__", "op")
        check_fits(self, result)
        level = self._level
        if (
            type(result) is BatchedTensor
            and result._level is not level
            and _is_inner(result._level, level)
        ):
            raise inplace_batched_into_unbatched(name, self, result)
        removed = suspend(level)
        try:
            if type(result) is BatchedTensor and result._level is level:
                value = result._value
                if result._bdim != self._bdim:
                    value = movedim(value, result._bdim, self._bdim)
                return value
            # the same for every example: copy_ broadcasts it along the batch dim
            return unsqueeze(result, self._bdim)
        finally:
            resume(removed)

    # ------------------------------------------------------------------ printing
    def _repr_head(self) -> str:
        return f"BatchedTensor(lvl={self._level.index}, bdim={self._bdim}"

    def _repr_extras(self) -> str:
        fw = self._fw
        return "".join(f",\n    tangent={t!r}" for t in fw.values()) if fw else ""

    def __repr__(self) -> str:
        if not self._level.alive:
            return f"{self._repr_head()}, <escaped its vmap>)"
        return LevelTensor.__repr__(self)

    __str__ = __repr__

    def _written_into_plain(self, name: str, target: Tensor) -> Exception:
        return inplace_batched_into_unbatched(name, target, self)


def _broadcasts_per_element(value, trailing: int) -> bool:
    """Whether ``x[mask] = value`` gives every selected element the same ``value`` (a number,
    or a tensor that broadcasts to x's ``trailing`` dims after the mask's), so that it can be
    written as ``where(mask, value, x)``. A value with one entry per selected element (its
    dim for the selection not 1) is laid out in selection order, which ``where`` would lay out
    by x's trailing dims instead: that silently gave other values than the same write eagerly."""
    if not isinstance(value, Tensor):
        return True
    extra = value.ndim - trailing
    return extra <= 0 or all(d == 1 for d in value.shape[:extra])


def _masked_write(x, mask, value):
    """``x`` with ``value`` where ``mask`` is true (``x[mask] = value`` as a functional op)."""
    return where(mask, value, x)


def _bottom(x):
    """The plain tensor under any number of BatchedTensor wrappers."""
    while type(x) is BatchedTensor:
        x = x._value
    return x


def _snapshot(x):
    """A copy of ``x``'s values with x's history, wrapped exactly like ``x`` (see
    ``rev.inplace._snapshot``); forward tangents stay attached at every level."""
    if type(x) is not BatchedTensor:
        return plain_snapshot(x)
    out = batched(_snapshot(x._value), x._bdim, x._level)
    out._fw = x._fw
    return out


def _is_inner(level: VmapLevel, than: VmapLevel) -> bool:
    """Whether ``level`` sits above ``than`` on the stack (an inner vmap)."""
    try:
        stack = GRAD.levels
        return stack.index(level) > stack.index(than)
    except ValueError:
        return True  # not on the stack: an inner level that has exited (an escaped value)


def inplace_op_name(name: str) -> str:
    """The name a user wrote for the in-place op whose functional is ``name`` (for errors)."""
    return {"copy_from": "copy", "index_put": "setitem/index_put"}.get(name, name)


def inplace_batched_into_unbatched(name: str, target, result) -> RuntimeError:
    """The error for ``x.op_(y)`` where y is batched at a level where x is not."""
    name = inplace_op_name(name)
    return RuntimeError(
        f"vmap: {name}_(self, *extra_args) is not possible because there exists a Tensor "
        "`other` in extra_args that has more elements than `self`. This happened due to `other` "
        "being vmapped over but `self` not being vmapped over in a vmap (dualad: the result is "
        f"batched at vmap level {result._level.index}, the tensor written to is not). Please try "
        "to use out-of-place operators instead of inplace arithmetic, or clone the tensor "
        "inside vmap (x = x + 0 makes it batched)."
    )


# ---------------------------------------------------------------------------------------------
# randomness


RANDOM_MESSAGE = (
    "vmap: We do not yet support calling random operations inside of vmap. Please perform random "
    "operations outside of vmap as a workaround, or pass randomness='different' (independent "
    "draws per example) or randomness='same' (one draw shared by the batch) to dualad.vmap"
)


__all__ = ["BatchedTensor", "PerformanceWarning", "VmapLevel"]
