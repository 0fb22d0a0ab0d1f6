"""Dual levels: forward mode as a transform level on the dispatch stack.

Invariants:
- A tensor's tangents live in its ``_fw`` dict, keyed by the ``DualLevel`` object (not its number:
  a new level with the same number never sees an old level's tangents).
- An op on tensors carrying tangents of level L is processed by L: the op and its JVP rule run
  with L (and the levels above it) suspended, so the primal result and the output tangent are
  ordinary dualad computations that the levels below L (outer dual levels, the reverse tape)
  see. That is what gives nested levels exact higher derivatives, what keeps one level's
  perturbation out of another's (identity checks, never level arithmetic), and what makes
  reverse-over-forward work (the tangent computation is recorded by autograd).
- Nested levels, canonical form: a tangent at level L carries tangents of the levels below L
  only (L's rule ran with L and the levels above it suspended); the mixed terms of L and a level
  M above it sit in M's tangent (as its tangent at L), nowhere else. ``make_dual`` keeps this
  (it refuses a tangent that carries an inner level's tangent), and ``unpack_dual`` at L, while
  such an M is active, gathers the mixed terms from M's tangent, so that every unpacking order
  gives the same values (symmetric mixed partials) and the primal keeps M's perturbation.
- Exiting a level removes its tangents from every tensor that got one (weak references, so the
  level never keeps a tensor alive), and their cached signature parts (``_fwsig``: the hot
  path's, ``fwd/compiled.py``), which may hold a tangent.
- A tangent has its primal's dtype: ``attach`` casts a rule's tangent that was promoted
  differently (float32 dual + int64 tensor: a float64 primal, a float32 tangent).
- The tangent of a view's source is batched at every vmap level its primal is before the view
  is taken (``_widen_viewed_tangent``), so in-place writes through views under
  ``vmap(jacfwd(f))`` land in it.
- Levels, their numbers and the forward grad switch are per thread (``_state.GRAD.duals``,
  ``GRAD.fw_enabled``): a level is entered and exited by one thread, and only that thread's ops
  are processed by it.
"""

from __future__ import annotations

import weakref

from .._creation import full_like, zeros_like
from .._dispatch import EMPTY, Level, dispatch, eager
from .._errors import conversion_error
from .._state import ACTIVE, GRAD, resume, suspend
from .._tensor import Tensor
from .._wrapper import LevelTensor
from ..ops import astype, clone
from ..ops import sum as sum_
from ..rev.views import replay_view
from . import compiled, function

# The forward grad switch (``set_fw_enabled``, per thread) lives in ``rev/function.py``, below
# the dual levels, because a custom Function's forward switches it off; each dual level keeps a
# copy (``fw_on``) that ``owns`` reads per op.


_weakref = weakref.ref


def _no_jvp_error(op) -> NotImplementedError:
    return NotImplementedError(
        f"Trying to use forward AD with {op.name} that does not support it because it has not "
        "been implemented yet."
    )


def _unshared(tangent, input_tangents: list):
    """``tangent``, or a copy of it when it is one of the inputs' tangents: a rule may return
    an input's tangent (d(x + c) = dx), and an in-place op on the output must not then write
    into the input's tangent."""
    for t in input_tangents:
        if tangent is t:
            return clone(t)
    return tangent


class DualLevel(Level):
    """One forward-mode level (``dual_level()`` enters one)."""

    __slots__ = ("__weakref__", "fw_on", "holders", "process_alone", "prune_at", "title")
    kind = "dual_level"
    forbids_backward = False

    def __init__(self, index: int) -> None:
        self.index = index
        self.alive = True
        self.fw_on = GRAD.fw_enabled  # the thread's switch (kept in step by set_fw_enabled)
        self.holders: list = []
        self.prune_at = 1024
        # the transform as the user called it, for error messages (func.jvp/jacfwd rename it)
        self.title = "dualad.fwd.dual_level"
        # forward mode's hot path (fwd/compiled.py), bound to this level: dispatch calls it
        # directly, and where the compiled fast path exists a replayed call enters no Python
        self.process_alone = compiled.entry(self)

    apply_function = function.apply_function  # (a custom Function call: fwd/function.py)

    def conversion_error(self, value, kind: str) -> Exception:
        via = "" if self.title == "dualad.fwd.dual_level" else f" (the level of {self.title})"
        return conversion_error(self.title, f"with a tangent at dual level {self.index}{via}", kind)

    def owns(self, value) -> bool:
        if type(value) is Tensor or isinstance(value, Tensor):
            fw = value._fw
            if fw is not None and self in fw:
                return self.fw_on
            return value._view is not None and self.view_tangent(value) is not None
        return False

    def tangent_of(self, value):
        """``value``'s tangent at this level, or None (for a view, derived from its base's
        tangent when it has none itself: see ``view_tangent``)."""
        if type(value) is Tensor or isinstance(value, Tensor):
            fw = value._fw
            tangent = None if fw is None else fw.get(self)
            if tangent is None and value._view is not None:
                return self.view_tangent(value)
            return tangent
        return None

    def view_tangent(self, view: Tensor):
        """The tangent of a view that has none at this level while its base has one: the base
        got it after the view was made (an in-place op or setitem on the base or another view).
        As PyTorch does on reading such a view's forward grad, the view's tangent becomes the
        same view of the base's tangent (so later in-place writes on either stay in step)."""
        if not self.fw_on:
            return None
        info = view._view
        if not info.fw_derivable:
            return None
        fw = info.base._fw
        holder = None if fw is None else fw.get(self)
        if holder is None:
            return None
        if view._fw is not None and self in view._fw:
            return view._fw[self]
        tangent = replay_view(holder, info.replay)
        self.attach(view, tangent)
        return tangent

    def process(self, op, args: tuple, params: dict):
        return self.process_in(GRAD.levels, op, args, params)

    def process_in(self, stack: list, op, args: tuple, params: dict):
        if not params and len(stack) == 1:
            return self.process_alone(op, args, stack)
        return self._process_general(stack, op, args, params)

    def _process_general(self, stack: list, op, args: tuple, params: dict):
        tangents = [self.tangent_of(a) for a in args]
        removed = suspend(self)
        try:
            if op.view and tangents[0] is not None and type(args[0]) is not Tensor:
                tangents[0] = self._widen_viewed_tangent(args[0], tangents[0])
            if stack:
                out = dispatch(op, args, params)
            elif op.fast is not None and not params:
                out = op.fast(*args)  # nothing below but eager autograd: the op's fast path
            else:
                out = eager(op, args, params)
            if not op.differentiable:
                return out
            if op.jvp is None:
                raise _no_jvp_error(op)
            if op.nout == 1:
                out_tangent = op.jvp(tangents, (out,), args, params)
            else:
                outs = out if isinstance(out, tuple) else (out,)
                out_tangents = op.jvp(tangents, outs, args, params)
        finally:
            resume(removed)
        if op.nout == 1:  # one output: the common case, without the loops below
            if out_tangent is not None:
                if not op.view:
                    out_tangent = _unshared(out_tangent, tangents)
                self.attach(out, out_tangent)
            return out
        if isinstance(out, tuple):
            nondiff = op.nondiff_outputs
            for i, (o, t) in enumerate(zip(out, out_tangents)):
                if i not in nondiff:
                    if not op.view and t is not None:
                        t = _unshared(t, tangents)
                    self.attach(o, t)
        elif out_tangents is not None:
            self.attach(out, out_tangents if op.view else _unshared(out_tangents, tangents))
        return out

    def alone_general(self, op, args: tuple, stack):
        """``process_alone``'s general path: the general case's steps with fewer tests for a
        one-output op that has a fast caller, ``_process_general`` for the others."""
        fast = op.fast
        if fast is None or op.nout != 1 or op.view:
            for a in args:
                if self.owns(a):
                    return self._process_general(stack, op, args, EMPTY)
            return eager(op, args, EMPTY)
        owns = self.owns
        for a in args:
            if owns(a):
                break
        else:
            return eager(op, args, EMPTY)
        tangents = []
        for a in args:
            if type(a) is Tensor or isinstance(a, Tensor):
                fw = a._fw
                tangent = None if fw is None else fw.get(self)
                if tangent is None and a._view is not None:
                    tangent = self.view_tangent(a)
                tangents.append(tangent)
            else:
                tangents.append(None)
        # suspend(self), inline: the stack empties, so this thread leaves ACTIVE and the rule's
        # ops take their fast path
        del stack[0]  # self
        token = stack.token
        ACTIVE.remove(token)
        try:
            out = fast(*args)
            if not op.differentiable:
                return out
            if op.jvp is None:
                raise _no_jvp_error(op)
            tangent = op.jvp(tangents, (out,), args, EMPTY)
        finally:
            if not stack:  # resume([self]), inline
                ACTIVE.append(token)
            stack.append(self)
        if tangent is None:
            return out
        for t in tangents:  # _unshared, inline (this is the hot path of forward mode)
            if tangent is t:
                tangent = clone(t)
                break
        if (
            type(tangent) is Tensor
            and out._fw is None
            and out._data.dtype.kind == "f"
            and tangent._data.dtype is out._data.dtype
        ):
            out._fw = {self: tangent}  # attach, inline: a real result's first tangent
            holders = self.holders
            holders.append(_weakref(out))
            if len(holders) > self.prune_at:
                self._prune()
        else:
            self.attach(out, tangent)
        return out

    def _widen_viewed_tangent(self, primal, tangent):
        """The tangent of a view's source, batched at every vmap level its primal is.

        Under ``vmap(jacfwd(f))`` the tangent of ``y = x.clone()`` is batched at jacfwd's basis
        level only, while y is batched at the outer vmap level too. A view of y gets a view of
        that tangent; an in-place op on the view then writes a tangent batched at both levels,
        which cannot go into it. So before a view is taken the source's tangent is replaced by
        a copy batched like its primal (runs with this level suspended, in ``process``); later
        in-place writes through any view then land in it, and the source sees them.
        """
        if _vmap_levels(primal) <= _vmap_levels(tangent):
            return tangent
        wide = tangent + batched_zero(primal)
        self.attach(primal, wide)
        return wide

    def _prune(self) -> None:
        """Drop references to dead tensors now and then, so a long-lived level stays small."""
        self.holders = holders = [ref for ref in self.holders if ref() is not None]
        self.prune_at = max(1024, 2 * len(holders))

    def attach(self, tensor: Tensor, tangent) -> None:
        """Give ``tensor`` the tangent ``tangent`` at this level (None: no tangent)."""
        if tangent is None:
            return
        kind = tensor._data.dtype.kind
        if kind != "f" and kind != "c":
            return
        if type(tangent) is not Tensor and not isinstance(tangent, Tensor):
            tangent = full_like(tensor, tangent)
        elif tangent._data.dtype != tensor._data.dtype and (
            kind == "c" or tangent._data.dtype.kind != "c"
        ):
            # a tangent has its primal's dtype: a rule's tangent may be promoted differently
            # (float32 dual + int64 tensor: a float64 primal, a float32 tangent from the dual's
            # tangent alone), or real where the result is complex (x + 1j * c with c constant),
            # and later rules (imag, scatter, in-place ops) rely on the primal's dtype. A
            # complex tangent of a real result is a broken rule, not a promotion: it stays, for
            # gradcheck's dtype check to report (dropping its imaginary part would hide it)
            tangent = astype(tangent, tensor._data.dtype)
        fw = tensor._fw
        if fw is None:
            tensor._fw = {self: tangent}
        else:
            fw[self] = tangent
        holders = self.holders
        holders.append(_weakref(tensor))
        if len(holders) > self.prune_at:
            self._prune()

    def clear(self) -> None:
        """Remove this level's tangents from every tensor holding one (on exit)."""
        self.alive = False
        for ref in self.holders:
            tensor = ref()
            if tensor is not None and tensor._fw is not None:
                tensor._fw.pop(self, None)
                if not tensor._fw:
                    tensor._fw = None
                tensor._fwsig = None  # (its cached signature may hold the tangent)
        self.holders = []

    def write_tangent(self, x: Tensor, result) -> None:
        """After an in-place write of ``result`` into ``x`` (``rev.inplace``, which asks each
        dual level with a tangent on either): x's tangent at this level becomes the result's
        (spec/forward.md V1-V7).

        It is written IN PLACE into x's existing tangent, so the tangent object the user gave
        and the tangents of x's views and base (views of one another's memory) all see it. A
        view without a tangent gets the region of its base's tangent (made as zeros if needed).
        """
        view = x._view
        new = None if result._fw is None else result._fw.get(self)
        current = None if x._fw is None else x._fw.get(self)
        # (a wrapper of a view is not marked as a view itself, its bottom is: the tangent of
        # such a view was made batched like its source when the view was taken, in
        # ``_widen_viewed_tangent``; if it still needs widening, the write raises vmap's error
        # rather than widening a copy its source would not see)
        if (
            current is not None
            and new is not None
            and _batched_beyond(new, current)
            and (view is not None or _under_batches(x)._view is None)
        ):
            # vmap(jacfwd(f)) with x.sin_() on a clone: the new tangent is batched at a vmap
            # level (the outer one, through x's primal) where x's tangent (the clone of a basis
            # tangent) is not, so it cannot be written into it; x's tangent (its base's, for a
            # view) is first widened to a copy batched there too, then written in place
            current = _widen_tangent(self, x, new)
        if current is not None:
            if new is None:
                current.zero_()
            elif new is not current:
                current.copy_(new)
            return
        if new is None:
            return
        if view is None:
            self.attach(x, new.clone())
            return
        base = view.base
        holder = None if base._fw is None else base._fw.get(self)
        if holder is None:
            holder = zeros_like(base)
            self.attach(base, holder)
        elif _batched_beyond(new, holder):
            holder = _widen_tangent(self, base, new)
        target = replay_view(holder, view.replay)
        target.copy_(new)
        self.attach(x, target)

    def __repr__(self) -> str:
        return f"<dual level {self.index}{'' if self.alive else ' (exited)'}>"


compiled.install_compiled(DualLevel)  # (the compiled fast path reads its slots)


# ---------------------------------------------------------------------------------------------
# tangents batched by vmap levels (above this one: known through the wrapper base alone)


def _under_batches(t):
    """``t`` without the batching wrappers around it (vmap's, outermost first)."""
    while isinstance(t, LevelTensor) and t.batches:
        t = t._value
    return t


def _vmap_levels(t) -> set:
    """The vmap levels whose batching wrappers ``t`` is made of."""
    levels = set()
    while isinstance(t, LevelTensor) and t.batches:
        levels.add(t._level)
        t = t._value
    return levels


def batched_zero(like):
    """An exact 0 batched at ``like``'s vmap levels, to add to a tangent that must be batched
    there too (a sum over no elements of ``like``: no NaN from ``inf * 0``)."""
    return sum_(like.detach().reshape(-1)[:0])


def _batched_beyond(new, current) -> bool:
    """Whether ``new`` is batched at a vmap level where ``current`` is not (so it cannot be
    written into ``current``)."""
    return not _vmap_levels(new) <= _vmap_levels(current)


def _widen_tangent(level: DualLevel, x: Tensor, new):
    """Replace the tangent of x's base (x itself when not a view) at the dual ``level`` by a copy
    batched also at ``new``'s vmap levels, and return x's tangent in it (the base's, or its
    view replayed). Views of the base that held a view of the old tangent drop it, to replay
    the new one when next read (``DualLevel.view_tangent``)."""
    view = x._view
    base = x if view is None else view.base
    old = base._fw.get(level) if base._fw is not None else None
    zero = batched_zero(new)
    if old is None:
        old = zeros_like(base)
    wide = old + zero
    level.attach(base, wide)
    for ref in level.holders:
        held = ref()
        if (
            held is not None
            and held is not base
            and held._view is not None
            and held._view.base is base
            and held._fw is not None
        ):
            held._fw.pop(level, None)
    if view is None:
        return wide
    target = replay_view(wide, view.replay)
    level.attach(x, target)
    return target
