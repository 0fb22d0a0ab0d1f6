"""Activation checkpointing: keep a function's inputs, recompute what it saved during backward.

Non-reentrant (the default): ``fn`` runs under saved-tensor hooks whose pack keeps only a
position, so the intermediates ``fn`` saved for backward are freed as soon as the forward stops
using them. The first unpack in a backward pass runs ``fn`` again on its inputs, under hooks that
collect, by position, what it saves; by default it stops as soon as the last of those was
regenerated (early stop). Each backward pass recomputes at most once; its recomputed values live
only as long as the pass (they are keyed weakly by its GraphTask) and each is handed out once.
Unpacked values carry the original tensors' graph identity (rev/saved.py), so gradients of any
order flow through a checkpoint. The inputs are themselves saved through the hooks active
around the checkpoint: inside an outer checkpoint they are recomputed on demand too.

Reentrant (``use_reentrant=True``): ``fn`` runs without recording; one node stands for it and,
during backward, runs ``fn`` again with recording on and a nested ``backward`` through the result
(hence incompatible with ``grad()`` and ``backward(inputs=...)``, and first order only).

Random numbers: by default the generators' states at the forward call are restored for the
recomputation, so random ops (dropout masks) replay the same values.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from .._random import _replaying_rng, _rng_state
from .._state import GRAD
from .._tensor import Tensor
from .entry import backward
from .grad_mode import enable_grad, no_grad
from .graph_task import current_graph_task
from .node import Node, _sequence, accumulator_of
from .saved import FREED_MESSAGE, SavedTensor, pack, saved_tensors_hooks

_EARLY_STOP = [True]


class CheckpointError(RuntimeError):
    """A checkpointed function behaved differently when it was recomputed."""


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once everything needed was regenerated."""


class set_checkpoint_early_stop:
    """Context manager: whether checkpoints made inside stop recomputing as soon as every value
    they need was regenerated (default True). The setting is read when ``checkpoint`` is called.

    >>> import dualad
    >>> from dualad.rev.checkpoint import set_checkpoint_early_stop
    >>> with set_checkpoint_early_stop(False):
    ...     y = dualad.checkpoint(dualad.exp, dualad.tensor([1.0], requires_grad=True))
    """

    def __init__(self, enable: bool) -> None:
        self.enable = bool(enable)
        self._previous: list = []

    def __enter__(self):
        self._previous.append(_EARLY_STOP[0])
        _EARLY_STOP[0] = self.enable
        return self

    def __exit__(self, *exc) -> None:
        _EARLY_STOP[0] = self._previous.pop()


def noop_context_fn() -> tuple:
    """The default ``context_fn``: no context around the forward nor the recomputation.

    >>> from dualad.utils.checkpoint import noop_context_fn
    >>> forward_context, recompute_context = noop_context_fn()
    >>> with forward_context:
    ...     print("the forward pass runs here")
    the forward pass runs here
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool = False,
    context_fn: Callable[[], tuple] = noop_context_fn,
    determinism_check: str = "default",
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)`` without keeping its intermediates: they are recomputed
    during backward.

    Gradients (of any order with the default ``use_reentrant=False``) equal those of calling
    ``function`` directly; peak memory drops to the inputs and outputs of the checkpointed
    region plus one region's intermediates at a time during backward.

    Parameters
    ----------
    function : callable
        Run once now (grad mode as around the call) and again during backward. It must compute
        the same thing both times; non-tensor arguments and outputs pass through.
    use_reentrant : bool
        False (default): recompute through saved-tensor hooks. True: one node whose backward
        reruns ``function`` and calls ``backward`` inside (no ``grad()``, first order only).
    context_fn : callable
        Returns two context managers, entered around the forward and around each recomputation
        (non-reentrant only).
    determinism_check : {"default", "none"}
        "default": the recomputed saved tensors must have the shapes and dtypes of the first run.
    preserve_rng_state : bool
        Replay the random generators' states of the forward call during recomputation.

    >>> import dualad
    >>> x = dualad.tensor([0.5, 1.0], requires_grad=True)
    >>> y = dualad.checkpoint(lambda t: dualad.sin(t).exp(), x)
    >>> y.sum().backward()
    >>> x.grad
    tensor([1.41742422, 1.25338077])
    """
    if use_reentrant:
        if context_fn is not noop_context_fn:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _checkpoint_reentrant(function, args, preserve_rng_state)
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ('default', 'none'), but got {determinism_check!r}"
        )
    if not GRAD.enabled:  # nothing is recorded, so nothing is saved
        return function(*args, **kwargs)
    frame = _Frame(function, args, kwargs, determinism_check == "default", preserve_rng_state)
    forward_context, frame.recompute_context = context_fn()
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        out = function(*args, **kwargs)
    frame.forward_completed = True
    return out


def checkpoint_sequential(
    functions: Sequence[Callable],
    segments: int,
    input: Any,
    use_reentrant: bool = False,
    **kwargs: Any,
) -> Any:
    """Run ``functions`` one after the other on ``input``, checkpointing them in ``segments``
    runs of consecutive functions (the last run is not checkpointed: backward needs it first).

    >>> import dualad
    >>> layers = [dualad.sin, dualad.exp, dualad.tanh, dualad.cos]
    >>> x = dualad.tensor([0.5], requires_grad=True)
    >>> dualad.checkpoint_sequential(layers, 2, x).sum().backward()
    >>> x.grad
    tensor([-0.16556173])
    """
    functions = list(functions)
    if not isinstance(segments, int) or segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be a positive int, got {segments}")
    if segments > len(functions):
        raise ValueError(
            f"checkpoint_sequential: {segments} segments for {len(functions)} functions"
        )

    def run(start: int, end: int) -> Callable:
        def forward(value):
            for fn in functions[start:end]:
                value = fn(value)
            return value

        return forward

    size = len(functions) // segments
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end, len(functions))(input)


# ---------------------------------------------------------------------------------------------
# non-reentrant


class _Frame:
    """One non-reentrant checkpointed call: how to run it again and what it saved."""

    __slots__ = (
        "__weakref__",
        "check_metadata",
        "early_stop",
        "fn",
        "forward_completed",
        "inputs",
        "kwargs",
        "metas",
        "recompute_context",
        "recomputed",
        "rng_state",
    )

    def __init__(self, fn, args, kwargs, check_metadata: bool, preserve_rng_state: bool) -> None:
        self.fn = fn
        # through the hooks around this checkpoint: inside an outer checkpoint the inputs are
        # recomputed on demand as well; the SavedTensor checks their versions at recomputation
        self.inputs = tuple(pack(a) if isinstance(a, Tensor) else a for a in args)
        self.kwargs = kwargs
        self.check_metadata = check_metadata
        self.rng_state = _rng_state() if preserve_rng_state else None
        self.early_stop = _EARLY_STOP[0]
        self.forward_completed = False
        self.metas: list = []  # (shape, dtype) of each saved tensor, by position
        self.recomputed = weakref.WeakKeyDictionary()  # GraphTask -> {position: tensor}
        self.recompute_context = contextlib.nullcontext()

    def pack(self, tensor: Tensor) -> int:
        self.metas.append((tensor.shape, tensor.dtype))
        return len(self.metas) - 1

    def unpack(self, position: int) -> Tensor:
        task = current_graph_task()
        values = None if task is None else self.recomputed.get(task)
        if values is None:
            # outside a backward pass (e.g. reading ``_saved_result``) every unpack recomputes
            values = self.recompute()
            if task is not None:
                self.recomputed[task] = values
        try:
            return values.pop(position)
        except KeyError:
            raise CheckpointError(
                "dualad.checkpoint: Unpack is being triggered for a tensor that was already "
                "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do "
                "so only once. Otherwise please open an issue with details on your use case."
            ) from None

    def recompute(self) -> dict:
        values: dict = {}
        metas = self.metas
        total = len(metas)
        count = [0]

        # the recomputation's own graph keeps detached values (its backward, if fn runs one,
        # needs only the data): saving an output itself would make a node -> output -> node cycle
        def pack_recomputed(tensor: Tensor) -> Tensor:
            position = count[0]
            count[0] += 1
            if position >= total:
                if not self.forward_completed:
                    # unpacked while the forward itself runs a backward (fn calls grad()): it
                    # saved less so far than the whole recomputation will
                    return tensor.detach()
                raise CheckpointError(
                    "dualad.checkpoint: trying to save more tensors during recomputation than "
                    "during the original forward pass."
                )
            if self.check_metadata and (tensor.shape, tensor.dtype) != metas[position]:
                shape, dtype = metas[position]
                raise CheckpointError(
                    "dualad.checkpoint: Recomputed values for the following tensors have "
                    "different metadata than during the forward pass.\n"
                    f"tensor at position {position}:\n"
                    f"saved metadata: {{'shape': {tuple(shape)}, 'dtype': {dtype}}}\n"
                    f"recomputed metadata: {{'shape': {tuple(tensor.shape)}, "
                    f"'dtype': {tensor.dtype}}}\n"
                )
            detached = values[position] = tensor.detach()
            if self.early_stop and count[0] == total:
                raise _StopRecomputation
            return detached

        inputs = [
            a.unpack("checkpoint", i) if type(a) is SavedTensor else a
            for i, a in enumerate(self.inputs)
        ]
        args = [_recompute_input(a) if isinstance(a, Tensor) else a for a in inputs]
        rng = contextlib.nullcontext() if self.rng_state is None else _replaying_rng(self.rng_state)
        try:
            with (
                enable_grad(),
                saved_tensors_hooks(pack_recomputed, _identity),
                self.recompute_context,
                rng,
            ):
                self.fn(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        return values


def _recompute_input(a: Tensor) -> Tensor:
    """``a`` cut from the original graph for the recomputation, keeping its tangents: under a
    dual level the forward's jvp rules saved tensors too (their primals require grad), and the
    recomputation must save the same ones in the same order, or values unpack at the wrong
    positions (and forward-over-reverse loses the tangent's contribution)."""
    out = a.detach().requires_grad_(a.requires_grad)
    for level, tangent in (a._fw or {}).items():
        if level.alive:
            level.attach(out, tangent)  # (registered: cleared when its level exits)
    return out


def _identity(tensor: Tensor) -> Tensor:
    return tensor


# ---------------------------------------------------------------------------------------------
# reentrant


class CheckpointFunctionBackward(Node):
    """The node of a reentrant checkpoint: reruns the function and backpropagates through it."""

    __slots__ = ("_fn", "_inputs", "_rng_state")

    def __init__(self, fn, inputs: tuple, rng_state, outputs: int) -> None:
        self._init_base(next(_sequence))
        self._fn = fn
        self._inputs = inputs
        self._rng_state = rng_state
        self._nout = outputs
        self._edges = tuple(_edge_of(a) for a in inputs)

    def _apply(self, grads: list, needs, create_graph: bool) -> tuple:
        task = current_graph_task()
        if task is not None and task.restricted:
            raise RuntimeError(
                "When use_reentrant=True, dualad.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument."
            )
        inputs = self._inputs
        if inputs is None:
            raise RuntimeError(FREED_MESSAGE)
        detached = tuple(
            a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
            for a in inputs
        )
        state = self._rng_state
        rng = contextlib.nullcontext() if state is None else _replaying_rng(state)
        with enable_grad(), rng:
            outputs = self._fn(*detached)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        tensors = [o for o in outputs if isinstance(o, Tensor)]
        if not any(o.requires_grad for o in tensors):
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        pairs = [(o, g) for o, g in zip(tensors, grads) if o.requires_grad and g is not None]
        if pairs:
            backward([o for o, _ in pairs], [g for _, g in pairs])
        return tuple(
            d.grad if isinstance(d, Tensor) and d.requires_grad else None for d in detached
        )

    def _release(self) -> None:
        self._inputs = None


def _edge_of(value) -> tuple:
    if not isinstance(value, Tensor) or not value.requires_grad:
        return (None, 0)
    node = value.grad_fn
    return (accumulator_of(value), 0) if node is None else (node, value._out_nr)


def _checkpoint_reentrant(fn, args: tuple, preserve_rng_state: bool):
    if not GRAD.enabled:
        return fn(*args)
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        import warnings

        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None",
            UserWarning,
            stacklevel=3,
        )
        return fn(*args)
    rng_state = _rng_state() if preserve_rng_state else None
    with no_grad():
        outputs = fn(*args)
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    count = sum(isinstance(o, Tensor) for o in outs)
    node = CheckpointFunctionBackward(fn, args, rng_state, count)
    wrapped = []
    index = 0
    for o in outs:
        if isinstance(o, Tensor):
            out = o.detach()  # a fresh tensor on the same data: fn's own result stays unmarked
            if o.dtype.kind in "fc":
                out._rg = True
                out._node = node
                out._out_nr = index
            index += 1
            wrapped.append(out)
        else:
            wrapped.append(o)
    return wrapped[0] if single else tuple(wrapped)
