"""Custom Functions at the bottom: the ``Function`` base class, its eager rule and ``run``.

A Function call (``FunctionBase.apply``) goes to the innermost active level that owns one of
its arguments, as an op does: ``run`` asks that level (``Level.apply_function``; each level's
module has its rule: ``fwd/function.py``, ``vmap/function.py``, ``func/grad_function.py``), and
with no such level runs ``eager``. The public class is ``dualad.autograd.Function`` (a facade
subclass of ``FunctionBase``).

Invariants:
- forward runs once per call, at the bottom, with grad mode and forward-mode tangents off (its
  ops are not differentiated: the Function's own rules are); ``setup_context`` runs in the same
  state. When an input requires grad and grad mode is on, the ctx node is the grad_fn of the
  outputs.
- Outputs follow PyTorch: an input returned as-is comes back as a new alias of it, a dirty input
  (``ctx.mark_dirty``) as the very input object with the Function's node as its new history,
  non-differentiable outputs without history.
- The forward grad switch (torch's private ``_set_fwd_grad_enabled``) is per thread:
  ``_state.GRAD.fw_enabled``, set through ``set_fw_enabled``, which keeps a copy on each of the
  thread's dual levels (``fw_on``: ``DualLevel.owns`` reads it per op, a slot instead of a
  thread-local lookup). When off, no dual level owns anything, so ops see plain primals and
  produce no tangents. (It lives here, below the dual levels, because forward switches it off.)
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

from .._dispatch import OpDef, dispatch, find_level, register
from .._state import ACTIVE, GRAD, RECORD_HOOKS
from .._tensor import Tensor, _new
from .anomaly import record_forward_trace
from .function_node import (
    DIRTY,
    INPUT,
    NONDIFF,
    NONTENSOR,
    NORMAL,
    VIEW,
    FunctionCtx,
    FunctionNode,
    SavedTensors,
    make_function_node_class,
    overrides,
)
from .inplace import rebase_history
from .node import _output_tensor, _sequence, accumulator_of

_LEGACY_MESSAGE = (
    "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
    "autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
)


def set_fw_enabled(value: bool) -> None:
    """Set this thread's forward grad switch."""
    state = GRAD
    state.fw_enabled = value
    for level in state.duals:
        level.fw_on = value


# An alias is a view op with identity rules: the outputs of a Function that are its inputs as
# they were (PyTorch's ``_view_as_self_with_no_grad``), ``fwd.make_dual``'s and ``unpack_dual``'s
# primals, one value standing for two argument slots.
alias_op = register(
    OpDef(
        "alias",
        lambda xp, x: x.view(),
        vjp=lambda cts, outs, args, params, needs: (cts[0],),
        jvp=lambda tangents, outs, args, params: tangents[0],
        batch=lambda op, args, bdims, params: (dispatch(op, (args[0],), {}), bdims[0]),
        save_args=False,
        view=True,
        node_name="AliasBackward0",
    )
)


def run(cls, args: tuple):
    """``cls`` applied to ``args`` at the innermost level owning one of them (or eagerly).

    Returns ``(outputs, is_tuple, ctx, kinds)`` like ``eager``; ``ctx`` is valid at the
    caller's level (None where a user vmap staticmethod left none).
    """
    level = find_level(args) if ACTIVE else None
    if level is None:
        return eager(cls, args)
    return level.apply_function(cls, args)


class FunctionMeta(type):
    """Gives every Function class its node class (``_backward_cls``, named ``<Name>Backward``)."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = make_function_node_class(cls)
        cls._setup_ctx = overrides(cls, "setup_context")
        cls._signature = None

    def __setattr__(cls, name, value):
        super().__setattr__(name, value)
        if name in ("backward", "vjp"):
            _forget_backward(cls)  # the resolved backward is cached per class


def _forget_backward(cls) -> None:
    if "_user_backward" in cls.__dict__:
        type.__delattr__(cls, "_user_backward")
    for sub in cls.__subclasses__():
        _forget_backward(sub)


def _invalid_attribute(name: str):
    def fail(self, *args, **kwargs):
        raise RuntimeError(
            f"Attribute '{name}' is invalid for this instance of autograd.Function. Accessing "
            "this attribute directly on an instance of autograd.Function is a legacy access "
            "pattern that is no longer supported. For examples on how to use new-style autograd "
            "functions, see https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function"
        )

    fail.__name__ = name
    return fail


class FunctionBase(metaclass=FunctionMeta):
    """The base of custom differentiable operations (``dualad.autograd.Function`` documents
    them): forward, backward, jvp, vmap and ``apply``, which runs a call through the levels."""

    _function_base = True  # (``overrides``: a method defined here is not the user's)
    generate_vmap_rule = False

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of dualad.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(_LEGACY_MESSAGE)

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """The computation: ``forward(ctx, *args)`` or, with ``setup_context``, ``forward(*args)``.

        Runs with grad mode and forward-mode tangents off.
        """
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        """Fill ``ctx`` from the inputs and the output (for a ``forward`` without ctx)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        """Gradients of the inputs given gradients of the outputs: one per forward argument
        (None for non-tensors and inputs without gradient)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Any) -> Any:
        """Forward mode: tangents of the outputs given one tangent per forward argument."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims: tuple, *args: Any) -> tuple:
        """Batching rule: ``(outputs, out_dims)`` for arguments batched along ``in_dims``."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @classmethod
    def _jvp_from_backward(cls, ctx, args: tuple, outputs: tuple, kinds: tuple, tangents: list):
        """Output tangents of a call of a Function without ``jvp`` at a dual level, from its
        backward. Deriving them takes a ``func.grad`` tape level, which sits above the dual
        levels: ``dualad.autograd.Function`` (the public subclass) brings it."""
        raise NotImplementedError(
            f"dualad: {cls.__name__} has no jvp, and its base class cannot derive one from "
            "backward (subclass dualad.autograd.Function)"
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the Function on ``args``; outputs get this Function as their grad_fn."""
        if kwargs or cls._setup_ctx:
            args = _bind(cls, args, kwargs)
        if ACTIVE and GRAD.levels:
            outputs, is_tuple, ctx, _ = run(cls, args)
            _drop_forward_saved(ctx)
        else:
            outputs, is_tuple, ctx, _ = eager(cls, args)
            if ctx.saved_for_forward is not None:
                ctx.saved_for_forward = None  # no dual level will ask for them
        return outputs if is_tuple else outputs[0]

    # node-only attributes that PyTorch's legacy Function objects exposed
    next_functions = property(_invalid_attribute("next_functions"))
    metadata = property(_invalid_attribute("metadata"))
    name = _invalid_attribute("name")
    register_hook = _invalid_attribute("register_hook")
    register_prehook = _invalid_attribute("register_prehook")
    _register_hook_dict = _invalid_attribute("_register_hook_dict")


def _bind(cls, args: tuple, kwargs: dict) -> tuple:
    """``args`` and ``kwargs`` as forward's full positional tuple (defaults filled in)."""
    signature = cls._signature
    if signature is None:
        signature = cls._signature = inspect.signature(cls.forward)
    if not kwargs and cls._setup_ctx and len(args) == len(signature.parameters):
        return args  # nothing to fill in (the common case)
    if cls._setup_ctx:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.args)
    bound = signature.bind(None, *args, **kwargs)  # (ctx)
    bound.apply_defaults()
    return tuple(bound.args[1:])


def _drop_forward_saved(ctx) -> None:
    """Forget what forward saved for jvp once the call is done (it may reference the outputs,
    which point back at the node)."""
    while ctx is not None:
        if isinstance(ctx, FunctionNode):
            if ctx.saved_for_forward is not None:
                ctx.saved_for_forward = None
            return
        ctx = getattr(ctx, "_below", None)


# ---------------------------------------------------------------------------------------------
# the eager bottom


def _requires_grad(a) -> bool:
    return a._rg or (a._view is not None and a.requires_grad)


def _edge(a: Tensor):
    node = a.grad_fn if a._view is not None else a._node
    if node is None:
        return (accumulator_of(a), 0)
    return (node, a._out_nr)


def eager(cls, args: tuple):
    """Run ``cls``'s forward on ``args`` at the bottom level.

    Returns ``(outputs, is_tuple, ctx, kinds)``: the outputs as a tuple, whether forward
    returned a tuple, the ctx node, and one ``(kind, input_index)`` per output.
    """
    node = _new(cls._backward_cls)
    node._seq = next(_sequence)
    node._extra = None
    node._edges = ()
    node._freed = False
    node._saved = None
    grad_mode = GRAD.enabled
    positions = []
    required = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            positions.append(i)
            required.append(_requires_grad(a))
    executable = grad_mode and True in required
    nargs = len(args)
    if executable:
        if len(positions) == nargs and nargs < len(_ALL_TRUE) and False not in required:
            needs = required = _ALL_TRUE[nargs]  # the common case, without new tuples
        else:
            flags = [False] * nargs
            for p, rg in zip(positions, required):
                flags[p] = rg
            needs = tuple(flags)
        # edges before forward runs: a dirty input's history is about to change
        edges = tuple([_edge(args[p]) if rg else (None, 0) for p, rg in zip(positions, required)])
    else:
        needs = _ALL_FALSE[nargs] if nargs < len(_ALL_FALSE) else (False,) * nargs
    node.needs_input_grad = needs

    # forward mode off (per thread, like grad mode) only while this thread has dual levels
    state = GRAD
    fw_switch = state.fw_enabled and bool(state.duals)
    state.enabled = False
    if fw_switch:
        set_fw_enabled(False)
    try:
        if cls._setup_ctx:
            output = cls.forward(*args)
            cls.setup_context(node, args, output)
        else:
            output = cls.forward(node, *args)
    finally:
        GRAD.enabled = grad_mode
        if fw_switch:
            set_fw_enabled(True)

    is_tuple = type(output) is tuple
    raw = output if is_tuple else (output,)
    outputs, kinds, out_meta = _process_outputs(node, args, raw, executable, grad_mode)
    to_save = node.to_save
    if to_save is not None:
        node._saved = SavedTensors.pack(node, to_save, outputs, executable)
        node.to_save = None  # (it may hold an output: output -> node -> output)
    saved_for_forward = node.saved_for_forward
    if saved_for_forward is not None:
        node.saved_for_forward = tuple(saved_for_forward)
    node._nout = len(outputs)
    node._kinds = kinds
    node._out_meta = out_meta
    if len(positions) == nargs and nargs < len(_RANGES):
        node._positions = _RANGES[nargs]
    else:
        node._positions = tuple(positions)
    node._nargs = nargs
    if executable:
        node._edges = edges
        node._needs = required if type(required) is tuple else tuple(required)
        # (shape, dtype) pairs, not ArgMeta objects: tuples of plain values leave the garbage
        # collector's view, which keeps long chains of Function nodes cheap to collect
        node._in_meta = tuple([(args[p]._data.shape, args[p]._data.dtype) for p in positions])
        if RECORD_HOOKS and GRAD.anomaly[0]:  # the forward trace (as _dispatch.on_record)
            record_forward_trace(node)
    else:
        node._needs = None
        node._in_meta = None
    return outputs, is_tuple, node, kinds


def _marked_ids(tensors: tuple, what: str) -> set:
    """The ids of the tensors that ``ctx.<what>`` marked (anything else is an error)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{what} can only accept variables, but argument {i} is of type {type(t).__name__}"
            )
    return {id(t) for t in tensors}


def _process_outputs(node, args: tuple, raw: tuple, executable: bool, grad_mode: bool):
    """PyTorch's output wrapping: classify each output and give it its history."""
    dirty = node.dirty_tensors
    dirty_ids = ()
    if dirty:
        dirty_ids = _marked_ids(dirty, "mark_dirty")
        for t in dirty:
            t._bump_version()  # forward may have written through .data or an array kernel
    nondiff = node.non_differentiable
    nondiff_ids = _marked_ids(nondiff, "mark_non_differentiable") if nondiff else ()
    n = len(raw)
    outputs = list(raw)
    kinds = []
    out_meta = []
    for i, o in enumerate(raw):
        if not isinstance(o, Tensor):
            kinds.append(_CONSTANT_KIND[NONTENSOR])
            out_meta.append(None)
            continue
        data = o._data
        out_meta.append((data.shape, data.dtype))
        j = -1
        for k, a in enumerate(args):
            if a is o:
                j = k
                break
        if j >= 0 and dirty_ids and id(o) in dirty_ids:
            kind = DIRTY
        elif (nondiff_ids and id(o) in nondiff_ids) or data.dtype.kind not in "fc":
            kind = NONDIFF
        elif j >= 0:
            kind = INPUT
        else:
            kind = NORMAL
            if o._view is not None:
                j = _viewed_input(o, args)
                if j >= 0:
                    kind = VIEW
        kinds.append(_CONSTANT_KIND[kind] if j < 0 else (kind, j))
        if o._view is not None and grad_mode and kind != DIRTY:
            # in-place on it would replace this Function's backward by view bookkeeping
            o._view.in_custom_function = True
        if kind == NONDIFF or not executable:
            # no history from this call (the kind still tells forward mode what o is)
            if not _requires_grad(o):
                if kind == INPUT:
                    outputs[i] = _alias(o, grad_mode)
            elif j >= 0 and args[j] is o:
                outputs[i] = o.detach()  # a detached alias: the input keeps its history
            elif o._view is None:
                o.detach_()
            continue
        if kind == DIRTY:
            _rebase_dirty(node, o, i, n)
            continue
        if kind == INPUT:
            o = outputs[i] = _alias(o, grad_mode)
        o._rg = True
        o._node = node
        o._out_nr = i
        if o._view is not None:
            # its grad_fn is this node as of now (in-place changes inside forward, e.g. of a
            # local clone it views, are not changes made after it: PyTorch's set_gradient_edge)
            o._view.version = o._vc[0]
    if n == 1:
        # one output: shared kinds and meta tuples (a chain of Function calls keeps no
        # per-call tuples for the garbage collector to walk)
        kind = kinds[0]
        meta = out_meta[0]
        shared_meta = _ONE_META.get(meta)
        if shared_meta is None:
            if len(_ONE_META) >= 1024:
                _ONE_META.clear()  # (bounded: programs with ever new shapes)
            shared_meta = _ONE_META[meta] = (meta,)
        return tuple(outputs), _ONE_KIND.get(kind) or (kind,), shared_meta
    return tuple(outputs), tuple(kinds), tuple(out_meta)


# (kind, -1) pairs and position tuples are shared, not rebuilt per call (fewer allocations:
# chains of many Function calls build faster)
_CONSTANT_KIND = {kind: (kind, -1) for kind in (NONTENSOR, NONDIFF, NORMAL, INPUT, DIRTY, VIEW)}
_RANGES = [tuple(range(n)) for n in range(16)]
_ALL_TRUE = [(True,) * n for n in range(16)]
_ALL_FALSE = [(False,) * n for n in range(16)]
_ONE_KIND = {pair: (pair,) for pair in _CONSTANT_KIND.values()}
_ONE_META: dict = {}  # (shape, dtype) of a single output -> the shared ((shape, dtype),)


def _viewed_input(o: Tensor, args: tuple) -> int:
    """The position of the input whose memory the view ``o`` shares (-1 if none)."""
    base = o._view.base
    for k, a in enumerate(args):
        if isinstance(a, Tensor) and (a is base or (a._view is not None and a._view.base is base)):
            return k
    return -1


def _alias(t: Tensor, grad_mode: bool) -> Tensor:
    """A new view of ``t`` made without grad (PyTorch's ``_view_as_self_with_no_grad``)."""
    previous = GRAD.enabled
    GRAD.enabled = False
    try:
        out = dispatch(alias_op, (t,), {})
    finally:
        GRAD.enabled = previous
    if grad_mode and out._view is not None:
        out._view.in_custom_function = True
    return out


def _rebase_dirty(node, t: Tensor, index: int, noutputs: int) -> None:
    """A dirty input becomes output ``index`` of ``node`` (its history moves to the node)."""
    if t._node is None and t._rg and t._view is None:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation."
        )
    if t._view is not None:
        if noutputs != 1:
            raise RuntimeError(
                "If your Function modifies inplace an input that is a view of another Tensor, "
                "your Function cannot return more than one Tensor. This is not supported by the "
                "current autograd engine. You should either make sure the input is not a view "
                "(using .clone() for example) or make your Function only return one Tensor "
                "(potentially splitting it into two Functions: one doing the inplace that returns "
                "a single Tensor and a second one that does the other operations)."
            )
        if t._view.base._node is None and t._view.base._rg:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
    rebase_history(t, _output_tensor(node, t._data, index, None, None))


__all__ = ["FunctionBase", "FunctionMeta", "alias_op", "run", "set_fw_enabled"]
