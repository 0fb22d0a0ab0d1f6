"""Graph nodes of custom autograd Functions: the ``ctx`` a Function's forward fills IS its node.

Invariants:
- Every ``Function`` subclass gets its own node class ``<Name>Backward`` (a ``FunctionNode``);
  the instance made for one ``apply`` is the ``ctx`` of forward/setup_context/backward/jvp and,
  when the call is recorded, the grad_fn of its differentiable outputs.
- ``_edges`` has one entry per TENSOR argument of forward (non-tensor arguments have no slot, as
  in PyTorch); ``_positions`` says which forward arguments those are.
- What forward saved lives in one ``SavedTensors`` record (``pack`` / ``unpack`` / ``free``) of
  ``SavedTensor`` entries (rev/saved.py, so saved-tensor hooks, ``save_on_cpu`` and
  checkpointing see them): inputs and intermediates are kept with their version, outputs as
  their array (an output pointing back at its own node would be a reference cycle) and rebuilt
  on unpack. Everything saved for backward goes through this one class.
- ``run_backward`` is the single place that turns a Function's backward into input gradients
  (zero materialisation, count/position/shape checks, dtype casts); the eager node and the
  node a ``func.grad`` level records for a Function both use it.
"""

from __future__ import annotations

from .._creation import zeros_for
from .._state import DUALS_LIVE, GRAD, RECORD_HOOKS
from .._tensor import Tensor, _new
from .node import ArgMeta, Node, _output_tensor, _validate
from .saved import FREED_MESSAGE as _FREED_MESSAGE
from .saved import modified_message, pack, saved_none

# kinds of forward outputs (``kinds[i] = (kind, input_index)``)
NONTENSOR = 0  # not a Tensor: passed through, its gradient slot is always None
NONDIFF = 1  # marked non-differentiable or of an integer/bool dtype
NORMAL = 2  # a new differentiable tensor
INPUT = 3  # an input returned as-is (handed out as a fresh alias of it)
DIRTY = 4  # an input modified in place (ctx.mark_dirty): the very input object
VIEW = 5  # a view of an input (forward mode checks the jvp returns a view too)


class FunctionCtx:
    """What forward, setup_context, backward and jvp of a ``Function`` receive as ``ctx``.

    Attributes set on it in forward (``ctx.scale = 2``) are there in backward and jvp.

    >>> import dualad
    >>> class Scale(dualad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x, k):
    ...         ctx.k = k  # kept for backward
    ...         return x * k
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * ctx.k, None
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> Scale.apply(x, 3.0).sum().backward()
    >>> x.grad
    tensor([3., 3.])
    """

    __slots__ = ()

    # defaults, shadowed by the instance attributes the methods below set
    materialize_grads = True
    _materialize_non_diff_grads = True
    to_save = None
    saved_for_forward = None
    dirty_tensors = None
    non_differentiable = None
    _in_jvp = False

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (Tensors or None) for backward; read them as ``ctx.saved_tensors``.

        Saved tensors are checked for in-place modification when unpacked and dropped after a
        backward without ``retain_graph``. A second call replaces what the first saved.
        """
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep ``tensors`` for ``jvp`` (``ctx.saved_tensors`` inside jvp returns them)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_forward expects all arguments to be tensors; but got "
                    f"{type(t).__name__} at position {i}"
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare the inputs that forward modified in place (it must return them)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that are not differentiable (they will not require grad; backward
        receives zeros for them, or None after ``ctx._materialize_non_diff_grads = False``)."""
        self.non_differentiable = tensors

    def _materialize_as(self, other) -> None:
        """Take the gradient materialisation settings of ``other`` (the same call's ctx at
        another level)."""
        self.materialize_grads = other.materialize_grads
        self._materialize_non_diff_grads = other._materialize_non_diff_grads

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward (and jvp) receive zeros (True, the default) or None for gradients
        (tangents) that are not defined."""
        self.materialize_grads = bool(value)


class FunctionNode(FunctionCtx, Node):
    """The node (and ``ctx``) of one custom ``Function`` call.

    Subclassed once per Function class (``MyFnBackward``); instances carry a ``__dict__`` for
    the attributes user code puts on ``ctx``.
    """

    __slots__ = (
        "__dict__",
        "_freed",
        "_in_meta",
        "_kinds",
        "_nargs",
        "_needs",
        "_out_meta",
        "_positions",
        "_saved",
        "needs_input_grad",
    )

    _forward_cls = None  # set on each per-Function subclass
    _runs_undefined = True  # backward runs even when no output received a gradient (PyTorch)

    def name(self) -> str:
        return type(self).__name__

    @property
    def saved_tensors(self) -> tuple:
        if self._in_jvp:
            saved = self.saved_for_forward
            return () if saved is None else tuple(saved)
        saved = self._saved_record()
        return () if saved is None else saved.unpack(self)

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The saved tensors as ``SavedTensor`` objects (to ``register_hooks`` on them)."""
        saved = self._saved_record()
        return () if saved is None else saved.raw(self)

    def _saved_record(self):
        """What save_for_backward kept (None if nothing); raises once freed by a backward."""
        saved = self._saved
        if saved is None and self._freed:
            raise RuntimeError(_FREED_MESSAGE)
        return saved

    def _saved_entries(self) -> list:
        """``[(value, output_index or -1)]`` for the saved tensors (used by transform levels)."""
        saved = self._saved_record()
        return [] if saved is None else saved.entries_of(self)

    def _forward_entries(self) -> tuple:
        """What forward saved for jvp (read by transform levels)."""
        saved = self.saved_for_forward
        return () if saved is None else tuple(saved)

    def _lift_from_bottom(self, value):
        return value  # this IS the bottom

    def _apply(self, grads: list, needs, create_graph: bool) -> tuple:
        return run_backward(self, self, grads, needs)

    def _release(self) -> None:
        self._freed = True
        saved = self._saved
        if saved is not None:
            saved.free()


class SavedTensors:
    """The tensors one custom Function call saved for backward.

    An output of the call whose grad_fn is this node is kept as an output (its array only: an
    output pointing back at its own node would be a reference cycle; unpacked with the node as
    its grad_fn); anything else as the tensor, with its version at save time. While saved-tensor
    hooks are active (a recorded call only: PyTorch saves nothing for a call without backward)
    each entry is a ``SavedTensor`` of rev/saved.py packed by them; otherwise a plain record,
    turned into a ``SavedTensor`` only when ``_raw_saved_tensors`` asks (as op nodes do: the
    path without hooks pays nothing for them). ``unpack`` checks versions (or runs the unpack
    hooks); ``free`` drops everything (later unpacking raises the "Specify retain_graph=True"
    error, also through a ``SavedTensor`` the user holds).

    ``entries[i]`` is None or ``(kind, output index or -1, value, box, version, fw)``: kind
    ``_TENSOR`` (value the tensor), ``_OUTPUT`` (value its array, ``box``/``fw`` its version
    counter and tangents) or ``_PACKED`` (value a ``SavedTensor``).
    """

    __slots__ = ("entries",)

    @classmethod
    def pack(cls, node, tensors: tuple, outputs: tuple, recorded: bool) -> SavedTensors:
        hooks = recorded and RECORD_HOOKS and GRAD.saved_hooks
        entries = []
        for i, t in enumerate(tensors):
            if t is None:
                entries.append(None)
                continue
            if not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}"
                )
            nr = -1
            for k, o in enumerate(outputs):
                if o is t:
                    nr = k
                    break
            is_output = nr >= 0 and recorded and t._node is node
            if is_output and t._fw is None and DUALS_LIVE:
                # tangents are attached after this node is made: share the tensor's tangent
                # dict so the unpacked output sees them (forward-over-reverse)
                t._fw = {}
            if hooks:
                entries.append((_PACKED, nr, pack(t, is_output=is_output), None, 0, None))
                continue
            box = t._vc
            if is_output:
                if box is None:
                    box = t._vc = [0]
                entries.append((_OUTPUT, nr, t._data, box, box[0], t._fw))
            else:
                # (a level's wrapper reports its value's version, which unpack checks)
                version = (0 if box is None else box[0]) if type(t) is Tensor else t._version
                entries.append((_TENSOR, nr, t, None, version, None))
        saved = _new(cls)
        saved.entries = entries
        return saved

    def unpack(self, node) -> tuple:
        return tuple([value for value, _ in self.entries_of(node)])

    def entries_of(self, node) -> list:
        """``[(value, output index or -1)]``, one per saved tensor."""
        return self._walk(node, False)

    def raw(self, node) -> tuple:
        """The entries as ``SavedTensor`` objects (a placeholder for each saved None)."""
        return tuple(self._walk(node, True))

    def _walk(self, node, raw: bool) -> list:
        entries = self.entries
        if entries is None:
            raise RuntimeError(_FREED_MESSAGE)
        out = []
        for index, entry in enumerate(entries):
            if entry is None:
                out.append(saved_none() if raw else (None, -1))
                continue
            kind, nr, value, box, version, fw = entry
            if kind == _PACKED:
                if not raw:
                    value = value.unpack(node, nr if value._is_output else index)
                out.append(value if raw else (value, nr))
                continue
            if kind == _OUTPUT:
                value = _output_tensor(node, value, nr, box, fw)
            if raw:
                value = pack(value, is_output=kind == _OUTPUT, use_hooks=False)
                value._version = version  # as saved: a later in-place change is still caught
                entries[index] = (_PACKED, nr, value, None, 0, None)
                out.append(value)
                continue
            if value._version != version:
                raise RuntimeError(_version_message(value, index, nr, node, version))
            out.append((value, nr))
        return out

    def free(self) -> None:
        entries = self.entries
        self.entries = None
        if entries is not None:
            for entry in entries:
                if entry is not None and entry[0] == _PACKED:
                    entry[2].release()


_TENSOR = 0
_OUTPUT = 1
_PACKED = 2


def _version_message(t: Tensor, index: int, nr: int, node, expected: int) -> str:
    """The in-place error for saved entry ``index``, named as output ``nr`` if it is one."""
    output = nr >= 0
    return modified_message(
        t.shape, t.dtype, t._version, nr if output else index, node, expected, output
    )


# ---------------------------------------------------------------------------------------------
# running a Function's backward


def overrides(cls, name: str) -> bool:
    """Whether Function class ``cls`` defines ``name`` itself (not inherited from the base
    classes, which mark themselves with ``_function_base``)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return "_function_base" not in klass.__dict__
    return False


def function_base(cls) -> type:
    """The base class that Function class ``cls`` derives from (``dualad.autograd.Function``)."""
    for klass in cls.__mro__:
        if "_function_base" in klass.__dict__:
            return klass
    raise TypeError(f"{cls.__name__} is not a custom Function class")


def backward_method(cls):
    """The user's backward (or vjp) of Function class ``cls``, with PyTorch's errors."""
    method = cls.__dict__.get("_user_backward")
    if method is not None:
        return method
    has_backward = overrides(cls, "backward")
    has_vjp = overrides(cls, "vjp")
    if has_backward and has_vjp:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
            "should only implement one of them."
        )
    if not (has_vjp or has_backward):
        return cls.backward  # the base's: raises "You must implement either the backward ..."
    method = cls.vjp if has_vjp else cls.backward
    cls._user_backward = method  # (a class attribute assigned later is seen: see FunctionMeta)
    return method


def run_backward(node, ctx, grads: list, needs) -> tuple:
    """Call the Function's backward for ``node`` with gradients ``grads`` (one per forward
    output, None where none arrived) and return one gradient per tensor argument.

    ``node`` carries the call's layout (``_forward_cls``, ``_kinds``, ``_out_meta``,
    ``_positions``, ``_nargs``, ``_in_meta``, ``_needs``); ``ctx`` is what backward receives.
    """
    missing = False
    for g in grads:
        if g is None:
            missing = True  # (not ``None in grads``: that would call Tensor.__eq__)
            break
    if missing and ctx.materialize_grads:
        kinds = node._kinds
        materialize_non_diff = ctx._materialize_non_diff_grads
        out_meta = node._out_meta
        for i, g in enumerate(grads):
            if g is None:
                meta = out_meta[i]
                if meta is None or (kinds[i][0] == NONDIFF and not materialize_non_diff):
                    continue
                grads[i] = _zeros(meta, grads)
    result = backward_method(node._forward_cls)(ctx, *grads)
    nargs = node._nargs
    if type(result) is not tuple or len(result) != nargs:
        result = check_count(result, nargs, node.name())
    positions = node._positions
    if len(positions) != nargs:
        for i, g in enumerate(result):
            if g is not None and i not in positions:
                raise RuntimeError(
                    f"function {node.name()} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable"
                )
        result = tuple([result[p] for p in positions])
    for i, g in enumerate(result):
        if g is not None and type(g) is not Tensor and not isinstance(g, Tensor):
            raise TypeError(
                f"function {node.name()} returned a gradient of type {type(g).__name__} at "
                f"position {positions[i] + 1}; expected a Tensor or None"
            )
    metas = [ArgMeta(shape, dtype) for shape, dtype in node._in_meta]
    return _validate(result, metas, node._needs if needs is None else needs, node)


def check_count(result, nargs: int, name: str) -> tuple:
    """A backward's result as a tuple of ``nargs`` gradients (extra trailing Nones dropped)."""
    if type(result) is not tuple:
        result = (result,)
    if len(result) != nargs:
        if len(result) > nargs and all(r is None for r in result[nargs:]):
            return result[:nargs]  # trailing Nones are tolerated (PyTorch)
        raise RuntimeError(
            f"function {name} returned an incorrect number of gradients (expected {nargs}, got "
            f"{len(result)})"
        )
    return result


def _zeros(meta, like):
    shape, dtype = meta
    return zeros_for(shape, dtype, like)


def make_function_node_class(function_cls) -> type:
    """The node class of a Function class: ``<Name>Backward`` (PyTorch's naming)."""
    name = f"{function_cls.__name__}Backward"
    return type(
        name,
        (FunctionNode,),
        {"__module__": function_cls.__module__, "_forward_cls": function_cls},
    )
