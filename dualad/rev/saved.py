"""Saved tensors: what a graph node keeps for its backward, and the hooks that pack it.

A node keeps the tensors its VJP reads (an op's arguments as Tensors, its outputs as arrays; see
rev/node.py). While ``saved_tensors_hooks(pack_hook, unpack_hook)`` is active in a thread, every
tensor saved by a node recorded in that thread goes through the innermost ``pack_hook`` at save
time; the node keeps only what the hook returned, in a ``SavedTensor``, and calls ``unpack_hook``
on it at each use. Python scalars are never packed. Without hooks nothing here runs: the
recording path only reads ``_state.RECORD_HOOKS``.

What the eager graph saves goes through the hooks: op nodes and custom Functions (their
``ctx.save_for_backward``). The nodes a ``dualad.func.grad``/``vjp`` level records keep their
values themselves: a checkpoint there recomputes nothing (gradients are right, memory is not
saved). Packing them would not be sound: their backward runs after the level left the stack,
where a checkpoint's recomputation could not record at that level again. (PyTorch refuses
saved-tensor hooks inside torch.func transforms altogether.)

The API for code that saves tensors for a backward (op nodes here; custom Functions'
``ctx.save_for_backward``):

- ``hooks_active() -> bool``: whether a tensor saved now, in this thread, would be packed.
- ``pack(tensor, *, is_output=False, track_version=True) -> SavedTensor``: save ``tensor``
  through the innermost pack hook (or keep it as it is when none is active). The SavedTensor
  remembers what unpacking needs: the version of ``tensor`` now and its graph identity (grad_fn
  and output_nr, or the AccumulateGrad of a leaf). ``is_output=True`` for an output of the node
  that saves it: the node is not referenced (that would be a cycle), ``unpack`` receives it.
  ``track_version=False`` when the caller checks versions itself (op nodes follow in-place
  updates of their outputs, rev/inplace.py).
- ``SavedTensor.unpack(node=None, index=0) -> Tensor``: the value for one use. It carries the
  original's graph identity, so gradients flowing through it (``create_graph``) reach the
  original's history, and its own version counter. Raises the PyTorch errors when the saved
  value was freed, or when it was modified in place since it was saved (``node`` and ``index``
  name it): without a hook whenever the original's version changed; with one only when the
  unpacked tensor shares the original's version counter (a hook that kept a copy is immune to
  later in-place changes of the original). Without a hook an input unpacks to the very tensor
  that was saved.
- ``SavedTensor.release()``: drop the saved value (after a backward without retain_graph).

>>> import dualad
>>> from dualad.autograd.graph import saved_tensors_hooks
>>> packed = []
>>> with saved_tensors_hooks(lambda t: packed.append(t) or len(packed) - 1, lambda i: packed[i]):
...     x = dualad.tensor([1.0, 2.0], requires_grad=True)
...     y = (x * x).sum()
>>> len(packed)  # x was saved twice (once per operand)
2
>>> y.backward()
>>> x.grad
tensor([2., 4.])
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from typing import Any

from .._backend import to_device
from .._meta import AutogradMeta, _version_box
from .._state import GRAD, MUTATION_WATCH, RECORD_HOOKS
from .._tensor import Tensor, _new, wrap
from .node import _output_tensor, accumulator_of

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)
_INPLACE_PACK_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook can not be modified by in-place operations as this can lead to unexpected side-effects. "
    "Please open an issue if you need to perform in-place operations on the input to a pack hook."
)


def modified_message(shape, dtype, current: int, index: int, node, expected: int, output=False):
    """PyTorch's error for a saved tensor changed in place since it was saved."""
    kind = "output" if output else "input"
    if isinstance(node, str):
        name = node
    else:
        name = node.name() if node is not None else "a custom Function"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [dualad.Tensor {list(shape)}, dtype={dtype}], which is {kind} {index} of "
        f"{name}, is at version {current}; expected version {expected} instead. Hint: "
        "enable anomaly detection to find the operation that failed to compute its gradient, "
        "with dualad.autograd.set_detect_anomaly(True)."
    )


class Packed(tuple):
    """A node's saved arguments or outputs in which tensors are ``SavedTensor`` entries (the
    node checks ``type(saved) is Packed`` to take the unpacking path)."""

    __slots__ = ()


_FREED = object()  # SavedTensor._packed after release()
_NONE = object()  # SavedTensor._packed of a saved None (a custom Function's save_for_backward)


class SavedTensor:
    """One tensor saved for a backward, possibly packed by a saved-tensor hook.

    Not constructible from Python (PyTorch semantics): nodes make them with ``pack``.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> saved = x.exp().grad_fn._raw_saved_result  # exp's backward reuses its output
    >>> saved
    <SavedTensor saved shape=(2,) dtype=float64>
    >>> saved.unpack().detach()
    tensor([1.        , 2.71828183])
    """

    __slots__ = (
        "_acc",
        "_box",
        "_dtype",
        "_fw",
        "_grad_fn",
        "_is_output",
        "_out_nr",
        "_packed",
        "_shape",
        "_track",
        "_unpack",
        "_version",
    )

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    def unpack(self, node=None, index: int = 0) -> Tensor | None:
        packed = self._packed
        if packed is _FREED:
            raise RuntimeError(FREED_MESSAGE)
        if packed is _NONE:
            return None
        box = self._box
        unpack = self._unpack
        if unpack is None:
            if self._track and box[0] != self._version:
                raise self._modified(node, index)
            if not self._is_output:
                return packed  # the saved input itself
            data = packed
            value_box = box  # the output's own version counter, as without a SavedTensor
        else:
            value = unpack(packed)
            if not isinstance(value, Tensor):
                raise TypeError(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                    f"of type {type(value).__name__}"
                )
            data = value._data
            if data.shape != self._shape or data.dtype != self._dtype:
                raise RuntimeError(
                    f"dualad: a saved tensor unpack_hook returned a tensor of shape "
                    f"{tuple(data.shape)} and dtype {data.dtype} for a tensor saved with shape "
                    f"{tuple(self._shape)} and dtype {self._dtype}"
                )
            value_box = value._vc
            if value_box is None:
                value_box = value._vc = [0]
            elif value_box is box and self._track and box[0] != self._version:
                # the hook gave back the saved tensor's own memory, changed in place since; a
                # copy (moved to the CPU, written to disk, cloned before the change) is fine
                raise self._modified(node, index)
        return self._rebuild(data, value_box, node, index)

    def _modified(self, node, index: int) -> RuntimeError:
        box = self._box
        return RuntimeError(
            modified_message(
                self._shape, self._dtype, box[0], index, node, self._version, self._is_output
            )
        )

    def _rebuild(self, data, box, node, index: int) -> Tensor:
        """A tensor holding ``data`` with the saved tensor's graph identity."""
        if self._is_output:
            return _output_tensor(node, data, index, box, self._fw)
        t = wrap(data)
        t._fw = self._fw or None
        t._vc = box
        if self._grad_fn is not None:
            t._rg = True
            t._node = self._grad_fn
            t._out_nr = self._out_nr
        elif self._acc is not None:
            # a leaf that requires grad: the result is a leaf whose gradient accumulates into
            # the original's .grad (through its AccumulateGrad node)
            t._rg = True
            meta = t._meta = AutogradMeta()
            meta.accumulator = weakref.ref(self._acc)
        return t

    def release(self) -> None:
        self._packed = _FREED

    def register_hooks(self, *hooks: Callable) -> None:
        """``register_hooks(pack_hook, unpack_hook)``: pack this saved tensor with ``pack_hook``
        now, unpack it with ``unpack_hook`` at each use."""
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError(
                "register_hooks(): incompatible function arguments: it expects two callables "
                "(pack_hook, unpack_hook)"
            )
        pack_hook, unpack_hook = hooks
        if self._packed is _NONE:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor with value None is forbidden"
            )
        if self._unpack is not None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time."
            )
        if self._packed is _FREED:
            raise RuntimeError(FREED_MESSAGE)
        if self._is_output:  # kept as its array: the hook gets a tensor of it
            value = self._rebuild(self._packed, self._box, None, 0)
        else:
            value = self._packed
        self._packed = _call_pack_hook(pack_hook, value)
        self._unpack = unpack_hook

    def __repr__(self) -> str:
        if self._packed is _NONE:
            return "<SavedTensor None>"
        state = "freed" if self._packed is _FREED else "packed" if self._unpack else "saved"
        return f"<SavedTensor {state} shape={tuple(self._shape)} dtype={self._dtype}>"


def saved_none() -> SavedTensor:
    """The SavedTensor standing for a saved None (``_raw_saved_tensors``); hooks are refused."""
    saved = _new(SavedTensor)
    saved._packed = _NONE
    saved._unpack = None
    saved._is_output = False
    saved._shape = saved._dtype = None
    return saved


def hooks_active() -> bool:
    """Whether a tensor saved now in this thread goes through a pack hook."""
    return bool(GRAD.saved_hooks)


def pack(
    tensor: Tensor, *, is_output: bool = False, track_version: bool = True, use_hooks: bool = True
) -> SavedTensor:
    """Save ``tensor`` for a backward: through the innermost pack hook of this thread if any
    (``use_hooks=False``: never)."""
    saved = _new(SavedTensor)
    box = tensor._vc
    if box is None:
        box = _version_box(tensor)  # made under a lock: tensor may be shared between threads
    saved._box = box
    saved._track = track_version
    saved._version = box[0]
    data = tensor._data
    saved._shape = data.shape
    saved._dtype = data.dtype
    saved._fw = tensor._fw
    saved._is_output = is_output
    saved._grad_fn = None
    saved._out_nr = 0
    saved._acc = None
    if not is_output and tensor._rg:
        node = tensor._node  # as recorded (a stale view was refreshed before its op recorded)
        if node is None:
            saved._acc = accumulator_of(tensor)
        else:
            saved._grad_fn = node
            saved._out_nr = tensor._out_nr
    hooks = GRAD.saved_hooks if use_hooks else None
    if not hooks:
        saved._packed = data if is_output else tensor
        saved._unpack = None
        return saved
    pack_hook, unpack_hook = hooks[-1]
    # an output is handed over detached (same memory and version counter): a hook that keeps
    # what it gets must not make an output -> node -> saved output reference cycle
    saved._packed = _call_pack_hook(pack_hook, tensor.detach() if is_output else tensor)
    saved._unpack = unpack_hook
    return saved


def _call_pack_hook(pack_hook: Callable, tensor: Tensor) -> Any:
    # grad mode off: whatever ops the hook runs record nothing (so they save nothing and cannot
    # recurse into packing); the unpacked value gets the original's graph identity anyway
    box = tensor._vc
    version = 0 if box is None else box[0]
    previous = GRAD.enabled
    GRAD.enabled = False
    try:
        packed = pack_hook(tensor)
    finally:
        GRAD.enabled = previous
    if (0 if tensor._vc is None else tensor._vc[0]) != version:
        raise RuntimeError(_INPLACE_PACK_MESSAGE)
    return packed


def unpack_args(node, args: Packed) -> tuple:
    return tuple([a.unpack(node, i) if type(a) is SavedTensor else a for i, a in enumerate(args)])


def unpack_outputs(node, saved: Packed) -> tuple:
    """Outputs of an op node; versions are checked by the node (it follows in-place updates)."""
    return tuple([s.unpack(node, i) for i, s in enumerate(saved)])


def release_packed(*saved) -> None:
    """Release the SavedTensor entries of a node's Packed values (others are skipped)."""
    for values in saved:
        if type(values) is Packed:
            for s in values:
                if type(s) is SavedTensor:
                    s.release()


# ---------------------------------------------------------------------------------------------
# the public context managers


class saved_tensors_hooks:
    """Context manager: pack every tensor saved for backward with ``pack_hook``, unpack it with
    ``unpack_hook`` when the backward needs it.

    ``pack_hook(tensor) -> Any`` runs (with grad mode off) when an op records its node and must
    not modify its input in place (an op's output is passed detached: same memory and version
    counter, no graph); ``unpack_hook(packed) -> Tensor`` runs at each use and must return a
    tensor of the saved shape and dtype, which backward uses in place of the saved one (with
    its graph identity). The innermost active pair applies; the state is per thread.

    >>> import dualad
    >>> from dualad.autograd.graph import saved_tensors_hooks
    >>> with saved_tensors_hooks(lambda t: t.numpy().copy(), lambda a: dualad.tensor(a)):
    ...     x = dualad.tensor([1.0, 2.0], requires_grad=True)
    ...     y = (x.exp()).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2.71828183, 7.3890561 ])
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self._tokens: list = []

    def __enter__(self):
        state = GRAD
        if state.saved_hooks_disabled is not None:
            raise RuntimeError(state.saved_hooks_disabled)
        state.saved_hooks = (*state.saved_hooks, (self.pack_hook, self.unpack_hook))
        token = object()
        self._tokens.append(token)
        RECORD_HOOKS.append(token)
        return self

    def __exit__(self, *exc) -> None:
        GRAD.saved_hooks = GRAD.saved_hooks[:-1]
        RECORD_HOOKS.remove(self._tokens.pop())


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors of GPU tensors are kept in host memory and copied back when used.

    CPU (NumPy) tensors are kept as they are. ``pin_memory=True`` packs into page-locked host
    memory (faster copies back; CuPy only).

    >>> import dualad
    >>> from dualad.autograd.graph import save_on_cpu
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> with save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor):
            device = tensor.device
            if device.type == "cpu":
                return (None, tensor.detach())
            return (device, _to_host(tensor._data, pin_memory))

        def unpack_from_cpu(packed) -> Tensor:
            device, value = packed
            if device is None:
                return value
            return wrap(to_device(value, device))

        super().__init__(pack_to_cpu, unpack_from_cpu)


def _to_host(array, pin_memory: bool):
    if pin_memory:
        import cupyx

        host = cupyx.empty_pinned(array.shape, dtype=array.dtype)
        array.get(out=host)
        return host
    return array.get()


class disable_saved_tensors_hooks(contextlib.ContextDecorator):
    """Context manager (and decorator) under which ``saved_tensors_hooks`` raise
    ``RuntimeError(error_message)``; entering it while hooks are active raises too.

    >>> import dualad
    >>> from dualad.autograd.graph import disable_saved_tensors_hooks, saved_tensors_hooks
    >>> with disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with saved_tensors_hooks(lambda t: t, lambda t: t):
    ...             pass
    ...     except RuntimeError as error:
    ...         print(error)
    no hooks here
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        self._previous: list = []

    def __enter__(self):
        state = GRAD
        if state.saved_hooks:
            raise RuntimeError(self.error_message)
        self._previous.append(state.saved_hooks_disabled)
        state.saved_hooks_disabled = self.error_message
        return self

    def __exit__(self, *exc) -> None:
        GRAD.saved_hooks_disabled = self._previous.pop()


def saved_tensors_hooks_enabled() -> bool:
    """Whether ``saved_tensors_hooks`` may be entered in this thread (no active disable).

    >>> from dualad.autograd.graph import disable_saved_tensors_hooks, saved_tensors_hooks_enabled
    >>> saved_tensors_hooks_enabled()
    True
    >>> with disable_saved_tensors_hooks("this library keeps its saved tensors"):
    ...     print(saved_tensors_hooks_enabled())
    False
    """
    return GRAD.saved_hooks_disabled is None


# ---------------------------------------------------------------------------------------------
# allow_mutation_on_saved_tensors

_MUTATION_CONTEXT: list = [None]  # the active context (process-wide, as in PyTorch)
_OUTSIDE_CONTEXT = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in which the "
    "graph was originally recorded."
)


class _Handle:
    """What the pack hook returns: a key into the context (weakly held there)."""

    __slots__ = ("__weakref__",)


class AllowMutationContext:
    """The state of an ``allow_mutation_on_saved_tensors`` block.

    ``original`` / ``cloned`` map a saved tensor's handle to the tensor (a detached alias of
    what was saved) or, once it was about to be modified in place, to a copy of its value then.
    Entries go away with the graphs that saved them (weak keys). ``sid_to_tid`` and
    ``tid_to_weakhandle`` find the handles of what was saved from one piece of memory.
    """

    def __init__(self) -> None:
        self.original = weakref.WeakKeyDictionary()
        self.cloned = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid: dict = {}

    def pack(self, tensor: Tensor) -> _Handle:
        box = tensor._vc  # set by pack(): views share it with their base (one piece of memory)
        tid = (id(tensor), box[0])
        self.sid_to_tid.setdefault(id(box), set()).add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:  # the same tensor at the same version is recorded once
            handle = _Handle()
            self.tid_to_weakhandle[tid] = handle
            self.original[handle] = tensor.detach()
        return handle

    def unpack(self, handle: _Handle) -> Tensor:
        if _MUTATION_CONTEXT[0] is not self:
            raise AssertionError(_OUTSIDE_CONTEXT)
        value = self.cloned.get(handle)
        if value is None:
            value = self.original.get(handle)
        if value is None:
            raise AssertionError(_OUTSIDE_CONTEXT)
        return value

    def before_mutation(self, tensor: Tensor) -> None:
        """Copy what graphs saved from ``tensor``'s memory before it is written to."""
        box = tensor._vc
        if box is None:
            return
        for tid in self.sid_to_tid.get(id(box), ()):
            handle = self.tid_to_weakhandle.get(tid)
            if handle is None or handle in self.cloned:
                continue
            original = self.original.pop(handle, None)
            if original is not None:
                self.cloned[handle] = wrap(original._data.copy())

    def clear(self) -> None:
        self.original.clear()
        self.cloned.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def before_mutation(tensor: Tensor) -> None:
    """Called by in-place writes while ``MUTATION_WATCH`` is set."""
    context = _MUTATION_CONTEXT[0]
    if context is not None:
        context.before_mutation(tensor)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager: in-place changes of tensors saved for backward are allowed; what was saved
    is copied just before the first change, and backward uses the copy.

    The backward of a graph recorded inside must run inside the same block (else
    ``AssertionError``); blocks cannot be nested.

    >>> import dualad
    >>> from dualad.autograd.graph import allow_mutation_on_saved_tensors
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> with allow_mutation_on_saved_tensors():
    ...     b = a.clone()
    ...     out = (b * b).sum()
    ...     _ = b.sin_()  # b was saved by the multiplication
    ...     out.backward()
    >>> a.grad
    tensor([2., 4.])
    """
    if _MUTATION_CONTEXT[0] is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    context = AllowMutationContext()
    with saved_tensors_hooks(context.pack, context.unpack):
        _MUTATION_CONTEXT[0] = context
        MUTATION_WATCH.append(context)
        try:
            yield context
        finally:
            MUTATION_WATCH.remove(context)
            _MUTATION_CONTEXT[0] = None
            context.clear()
