"""Op records and dispatch: the one path every dualad op takes.

An op is an ``OpDef`` record (impl | vjp | jvp | batch) plus a public caller made from it.
The caller's fast path runs when this thread has no transform level (``_state.ACTIVE`` empty: no
thread has one, else this thread's ``GRAD.levels`` empty) and every
tensor argument is a plain ``Tensor`` (a view only if its base was not modified in place since its
grad_fn was made): it calls the impl, wraps the array and, when an input requires grad and grad
mode is on, records a graph node with a specialised recorder. Otherwise ``dispatch`` runs:

1. the highest active transform level that owns an argument processes the op (its rule runs with
   itself and the levels above it suspended, i.e. one level down);
2. with no such level, the eager bottom level runs the impl and, when an input requires grad and
   grad mode is on, records a graph Node (``rev.node.OpNode``) for reverse mode.

Impls are the only code that calls the array module; they get it as their first argument.
Python scalars alone (``negative(2.0)``) are computed as a 0-d tensor of the first (the others
weak scalars with it). While the default dtype is not float64, a float64 (complex128) result
made from no floating tensor takes the default dtype (``to_default_dtype``, on the careful
path: the fast callers leave the fast path while ``ACTIVE`` holds the default-dtype token).
An impl's exception keeps its class, with the op and arguments added (``op_error``).
Every recorder ends with one flag test, ``RECORD_HOOKS``: while saved-tensor hooks or anomaly
mode are active, ``on_record`` sees each new node (packs what it saved, keeps its forward trace).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ._backend import _MODULE_OF_TYPE, _resolve
from ._dtypes import _default as DEFAULT_DTYPE
from ._dtypes import default_complex_dtype
from ._state import ACTIVE, GRAD, RECORD_HOOKS, resume, suspend
from ._tensor import Tensor, ViewInfo, _new, _version_box, accumulator_of, wrap
from .rev.anomaly import record_forward_trace
from .rev.node import ArgMeta, make_node_class
from .rev.saved import pack_node

SCALAR_TYPES = frozenset((float, int, bool, complex))
_NO_EDGE = (None, 0)
EMPTY: dict = {}
REGISTRY: dict[str, OpDef] = {}
_sequence = itertools.count()

# NumPy returns NumPy scalars from 0-d operations; dualad keeps 0-d arrays.
_NP_SCALAR_TYPES = frozenset(
    (
        np.float64,
        np.float32,
        np.float16,
        np.complex128,
        np.complex64,
        np.int64,
        np.int32,
        np.int16,
        np.int8,
        np.uint8,
        np.bool_,
    )
)


class OpDef:
    """One op: its array impl and its rules, defined once.

    impl(xp, *arrays, **params) -> array | tuple of arrays
    vjp(cts, outs, args, params, needs) -> tuple with one cotangent (or None) per argument.
        ``cts``/``outs`` are tuples over the outputs; ``args`` are the saved arguments (Tensors,
        Python scalars, or ``ArgMeta`` stand-ins carrying shape/dtype when not saved);
        ``needs[i]`` says whether argument i needs a cotangent. Written in dualad ops.
    jvp(tangents, outs, args, params) -> output tangent (tuple for several outputs); tangents
        has None for arguments without one. Written in dualad ops.
    batch(args, bdims, params) -> (outs, out_bdims) for vmap; written in dualad ops.
    """

    __slots__ = (
        "batch",
        "differentiable",
        "fast",
        "impl",
        "jvp",
        "kernel",
        "name",
        "node_cls",
        "nondiff_outputs",
        "nout",
        "save_args",
        "save_mask",
        "save_out",
        "view",
        "vjp",
    )

    def __init__(
        self,
        name: str,
        impl: Callable | None,
        *,
        vjp: Callable | None = None,
        jvp: Callable | None = None,
        batch: Callable | None = None,
        differentiable: bool = True,
        save_args: bool = True,
        save_out: bool = False,
        save_mask: Callable | None = None,
        nout: int = 1,
        nondiff_outputs: tuple[int, ...] = (),
        view: bool | str = False,
        node_name: str | None = None,
        kernel: Callable | None = None,
    ) -> None:
        if impl is None:  # defined by its kernel alone
            impl = _impl_of_kernel(kernel)
        self.name = name
        self.impl = impl
        # the impl as a function of the arrays alone, for ops whose impl needs no array module
        # (operator.add for add): the fast callers call it directly, without a Python frame
        self.kernel = kernel
        self.vjp = vjp
        self.jvp = jvp
        self.batch = batch
        self.differentiable = differentiable
        self.save_args = save_args
        self.save_out = save_out
        # save_mask(needs) -> one bool per argument: whether the VJP reads that argument's
        # value given which arguments need gradients (mul: a only for b's gradient). Arguments
        # it does not read are kept as shape/dtype stand-ins: no reference, no version check.
        self.save_mask = save_mask
        self.nout = nout
        self.nondiff_outputs = nondiff_outputs
        self.view = view  # False, True (always a view of argument 0) or "maybe"
        self.fast = None  # the public caller with a fast path, for ops without parameters
        self.node_cls = make_node_class(node_name or _node_name(name), self)

    def __repr__(self) -> str:
        return f"<dualad op {self.name}>"


def _impl_of_kernel(kernel: Callable) -> Callable:
    def impl(xp, *arrays):
        return kernel(*arrays)

    return impl


def _node_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Backward0"


def register(op: OpDef) -> OpDef:
    if op.name in REGISTRY:
        raise ValueError(f"dualad: op {op.name!r} is registered twice")
    REGISTRY[op.name] = op
    return op


class Level:
    """A transform level on the stack (a dual level, a vmap level, a function-transform tape).

    Subclasses say which values they own and how they process an op; ``process`` must run its
    rules with this level and the ones above it suspended (see ``suspended``).
    """

    __slots__ = ("alive", "index")

    # ``process_in(stack, op, args, params)``: ``process`` given this thread's level stack
    # (which ``dispatch`` has in hand already), for levels on the hot path; None: ``process``
    process_in = None
    # ``process_alone(op, args, stack)``: ``process_in`` of an op without parameters while the
    # level is alone on the stack (one call less on the hottest path); None: ``process_in``
    process_alone = None

    def owns(self, value: Any) -> bool:
        raise NotImplementedError

    def process(self, op: OpDef, args: tuple, params: dict):
        raise NotImplementedError

    def tracks(self, value: Any) -> bool:
        """Whether ``value`` carries a derivative (or a batch) of this level, so that turning
        it into a NumPy array or a Python number would lose it (``Tensor.item`` & co ask)."""
        return self.owns(value)

    def conversion_error(self, value: Any, kind: str) -> Exception:
        """The error for conversion ``kind`` (a key of ``dualad._errors.ATTEMPTS``) of a value
        this level tracks: it names the level (as the user called it) and the fix."""
        raise NotImplementedError

    # hooks through which code of a level below asks the levels above it (no import upward)
    def apply_function(self, cls: type, args: tuple):
        """Custom ``Function`` ``cls`` applied to ``args`` (one of them this level's): the
        call one level down plus this level's rule. Returns ``(outputs, is_tuple, ctx, kinds)``
        as ``rev.function.eager`` does."""
        raise RuntimeError(f"dualad.autograd.Function: {cls.__name__} cannot run at {self!r}")

    def make_dual_above(self, dual: Level, tensor: Any, tangent: Any):
        """``fwd.make_dual(tensor, tangent)`` at dual level ``dual`` below this level: the dual
        number when this level's values must hold it, else None (the levels below make it)."""
        return None

    def unpack_dual_above(self, dual: Level, tensor: Any):
        """``fwd.unpack_dual(tensor)`` at dual level ``dual`` below this level, of a value of
        this level: ``(primal, tangent)`` as this level's values, or None (unpacked as is)."""
        return None


def find_level(args: tuple) -> Level | None:
    """The innermost level of this thread's stack that owns one of ``args``."""
    for level in reversed(GRAD.levels):
        owns = level.owns
        for a in args:
            if owns(a):
                return level
    return None


class suspended:
    """Context manager: take ``level`` and every level above it off this thread's stack for a
    while."""

    __slots__ = ("level", "removed")

    def __init__(self, level: Level) -> None:
        self.level = level

    def __enter__(self):
        self.removed = suspend(self.level)

    def __exit__(self, *exc):
        resume(self.removed)


# ---------------------------------------------------------------------------------------------
# eager evaluation (the bottom level)


def _xp(array):
    try:
        return _MODULE_OF_TYPE[type(array)]
    except KeyError:
        return _resolve(type(array))


def as_arg(value):
    """Normalise one op argument: Tensors and Python scalars pass, arrays/lists become Tensors."""
    if isinstance(value, Tensor) or type(value) in SCALAR_TYPES or value is None:
        return value
    from ._creation import as_tensor

    return as_tensor(value)


def dispatch(op: OpDef, args: tuple, params: dict):
    """The slow path: levels, conversion of non-tensor arguments, graph recording."""
    if ACTIVE:  # some thread has levels: look at this thread's
        levels = GRAD.levels
        if levels:
            return dispatch_at(levels, op, args, params)
    return eager(op, args, params)


def dispatch_at(levels: list, op: OpDef, args: tuple, params: dict):
    """``dispatch`` given this thread's (non-empty) level stack ``levels``."""
    if not params and len(levels) == 1:  # one level (forward mode's hot case)
        level = levels[0]
        alone = level.process_alone
        if alone is not None:
            owns = level.owns
            for a in args:
                if owns(a):
                    return alone(op, args, levels)
            return eager(op, args, params)
    for level in reversed(levels):  # find_level, inline
        owns = level.owns
        for a in args:
            if owns(a):
                process_in = level.process_in
                if process_in is not None:
                    return process_in(levels, op, args, params)
                return level.process(op, args, params)
    return eager(op, args, params)


def eager(op: OpDef, args: tuple, params: dict):
    """Run ``op`` on the bottom level: impl on the arrays, plus a Node if grad is recorded."""
    datas = []
    requires_grad = False
    xp = None
    converted = False
    for a in args:
        if isinstance(a, Tensor):
            if a._view is not None and a._view.version != _version(a._view.base):
                from .rev.views import refresh_view_node

                refresh_view_node(a)
            data = a._data
            if xp is None:
                xp = _xp(data)
            elif _xp(data) is not xp:
                raise _device_error(op, args)
            if a._rg:
                requires_grad = True
            datas.append(data)
        elif type(a) in SCALAR_TYPES or a is None:
            datas.append(a)
        else:
            converted = True
            break
    if converted:
        return eager(op, tuple(as_arg(a) for a in args), params)
    if xp is None:
        for i, a in enumerate(args):
            if type(a) in SCALAR_TYPES:
                # Python scalars alone (``negative(2.0)``, ``add(2, 3)``): the first as the 0-d
                # tensor ``tensor(value)`` makes (default float dtype, int64, bool, default
                # complex), the others weak scalars with it, so the result is a 0-d array of
                # the dtype ``result_type`` gives the scalars, not a Python number
                from ._creation import tensor

                return eager(op, (*args[:i], tensor(a), *args[i + 1 :]), params)
        xp = np
    try:
        out = op.impl(xp, *datas, **params)
    except Exception as exc:
        error = op_error(op, args, params, exc)
        if error is exc:
            raise
        raise error from exc
    record = requires_grad and op.differentiable and GRAD.enabled
    if op.nout == 1:
        if type(out) in _NP_SCALAR_TYPES:
            out = np.asarray(out)
        if DEFAULT_DTYPE[0] is not _F64:
            out = to_default_dtype(out, args, params)
        result = wrap(out)
        if op.view:
            make_view(result, args[0], op, params)
        if record:
            record_node(op, args, params, (result,))
        return result
    results = tuple(wrap(np.asarray(o) if type(o) in _NP_SCALAR_TYPES else o) for o in out)
    if op.view:
        for i, r in enumerate(results):
            make_view(r, args[0], op, params, multi_output=True, index=i)
    if record:
        record_node(op, args, params, results)
    return results


_F64 = np.dtype("float64")
_C128 = np.dtype("complex128")


def to_default_dtype(out, args: tuple, params: dict = EMPTY):
    """``out`` in the default dtype when NumPy made it float64 (complex128) out of no floating
    or complex tensor: an integer tensor with a Python float, true division of integers.

    Called only while the default dtype is not float64 (the fast callers then leave their fast
    path: ``_dtypes`` puts a token in ``ACTIVE``), where PyTorch's rule (the default dtype) and
    NumPy's (float64) differ; ops asked for a dtype (``astype``) keep it.
    """
    dtype = getattr(out, "dtype", None)
    if (dtype is not _F64 and dtype is not _C128) or "dtype" in params:
        return out
    for a in args:
        if isinstance(a, Tensor) and a._data.dtype.kind in "fc":
            return out
    return out.astype(DEFAULT_DTYPE[0] if dtype is _F64 else default_complex_dtype())


def _version(t: Tensor) -> int:
    box = t._vc
    return 0 if box is None else box[0]


def make_view(
    result: Tensor, source: Tensor, op: OpDef, params: dict, multi_output=False, index=None
):
    """Mark ``result`` as a view of ``source`` when their data alias (``index``: which output
    of a multi-output view op ``result`` is)."""
    if op.view == "maybe" and not _aliases(result._data, source._data):
        return
    view = source._view
    if view is None:
        base, chain = source, (None, op, params, index)
    else:
        base, chain = view.base, (view.chain, op, params, index)
    box = base._vc
    if box is None:
        box = _version_box(base)  # made under a lock: base may be shared between threads
    result._vc = box
    result._view = ViewInfo(
        base,
        chain,
        box[0],
        # torch marks every view made in no_grad mode (and views of such views), whether or not
        # its base requires grad: an in-place op on it that grad mode records is an error
        created_without_grad=not GRAD.enabled or (view is not None and view.created_without_grad),
        multi_output=multi_output or (view is not None and view.multi_output),
        in_custom_function=view is not None and view.in_custom_function,
        fw_derivable=view is None or view.fw_derivable,
    )


def _aliases(a, b) -> bool:
    root_a = a if a.base is None else a.base
    root_b = b if b.base is None else b.base
    return root_a is root_b


_argmeta = ArgMeta.of


def record_node(op: OpDef, args: tuple, params: dict, results: tuple) -> None:
    """Attach a graph Node for ``op`` to ``results`` (they then require grad).

    Hot path of every recorded op: no generators, no helper calls beyond what is needed.
    """
    node = _new(op.node_cls)
    node._seq = next(_sequence)
    node._extra = None
    node._nout = len(results)
    node._op = op
    node._params = params
    node._freed = False
    node._out_data = None
    edges = []
    needs = []
    versions = []
    for a in args:
        if isinstance(a, Tensor):
            box = a._vc
            versions.append(0 if box is None else box[0])
            if a._rg:
                n = a._node
                if n is None:
                    meta = a._meta
                    ref = None if meta is None else meta.accumulator
                    n = None if ref is None else ref()
                    if n is None:
                        n = accumulator_of(a)
                    edges.append((n, 0))
                else:
                    edges.append((n, a._out_nr))
                needs.append(True)
            else:
                edges.append(_NO_EDGE)
                needs.append(False)
        else:
            versions.append(None)
            edges.append(_NO_EDGE)
            needs.append(False)
    node._edges = tuple(edges)
    node._needs = needs
    if op.save_args:
        node._args = args
        node._versions = versions
        if op.save_mask is not None:
            _drop_unread_args(node, op.save_mask(needs), args, versions)
    else:
        node._args = tuple([_argmeta(a._data) if isinstance(a, Tensor) else a for a in args])
    if len(results) == 1:
        r = results[0]
        r._rg = True
        r._node = node
        node._out_meta = None  # one output: its meta is only needed for multi-output nodes
    else:
        nondiff = op.nondiff_outputs
        out_meta = []
        for i, r in enumerate(results):
            data = r._data
            out_meta.append((data.shape, data.dtype))
            if i not in nondiff:
                r._rg = True
                r._node = node
                r._out_nr = i
        node._out_meta = tuple(out_meta)
    if op.save_out:
        node._save_outputs(results)
    if RECORD_HOOKS:
        on_record(node, results)


def on_record(node, results: tuple) -> None:
    """The recording path's slow branch, taken while ``RECORD_HOOKS`` is set: pack what the node
    saved through this thread's saved-tensor hooks; in anomaly mode keep the forward trace."""
    if GRAD.saved_hooks:
        pack_node(node, results)
    if GRAD.anomaly[0]:
        record_forward_trace(node)


def _drop_unread_args(node, mask, args: tuple, versions: list) -> None:
    kept = list(args)
    for i, keep in enumerate(mask):
        if not keep and isinstance(kept[i], Tensor):
            kept[i] = _argmeta(kept[i]._data)
            versions[i] = None
    node._args = tuple(kept)
    node._versions = versions


def op_error(op: OpDef, args: tuple, params: dict, exc: Exception) -> Exception:
    """A clear error naming the op, the shapes and dtypes, wrapping an impl's exception.

    The class stays the impl's (NumPy's ``FloatingPointError`` under ``np.errstate``,
    ``LinAlgError``, ``ValueError`` ...), so callers can catch what NumPy raises; the caller
    chains it ``from`` the original. A class that cannot be built from one message (or would
    render it differently) gets the context as a note on the original exception, which is then
    returned as is (the caller re-raises it unchanged).
    """
    if str(exc).startswith("dualad"):
        return exc
    described = ", ".join(
        f"Tensor(shape={tuple(a.shape)}, dtype={a.dtype})" if isinstance(a, Tensor) else repr(a)
        for a in args
    )
    extra = f" with {params}" if params else ""
    text = f"dualad.{op.name}: {type(exc).__name__}: {exc} (arguments: {described}{extra})"
    try:
        error = type(exc)(text)
        if str(error) == text:
            return error
    except Exception:  # a constructor that takes something else (UnicodeDecodeError): a note
        pass
    add_note = getattr(exc, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(text)
    return exc


def _device_error(op: OpDef, args: tuple) -> RuntimeError:
    devices = [str(a.device) for a in args if isinstance(a, Tensor)]
    return RuntimeError(
        f"dualad.{op.name}: Expected all tensors to be on the same device, but found tensors on "
        f"devices {devices}"
    )


# ---------------------------------------------------------------------------------------------
# public callers with the fast path


def _record_one(op: OpDef, x: Tensor, result: Tensor, params: dict = EMPTY) -> None:
    """``record_node`` specialised to one plain tensor argument that requires grad."""
    node = _new(op.node_cls)
    node._seq = next(_sequence)
    node._extra = None
    node._nout = 1
    node._op = op
    node._params = params
    node._freed = False
    node._out_data = None
    node._out_meta = None
    n = x._node
    node._edges = ((n, x._out_nr),) if n is not None else ((_accumulator(x), 0),)
    node._needs = _FIRST
    if op.save_args:
        node._args = (x,)
        box = x._vc
        node._versions = (0 if box is None else box[0],)
    else:
        meta = _new(ArgMeta)  # ArgMeta.of, inline
        data = x._data
        meta.shape = data.shape
        meta.dtype = data.dtype
        node._args = (meta,)
    result._rg = True
    result._node = node
    if op.save_out:
        node._save_outputs((result,))
    if RECORD_HOOKS:
        on_record(node, (result,))


# ``needs`` of one- and two-argument nodes: shared constants (no tuple per node)
_FIRST = (True,)
_BOTH = (True, True)
_FIRST_OF_TWO = (True, False)
_SECOND_OF_TWO = (False, True)


def _accumulator(t: Tensor):
    """The AccumulateGrad node of a leaf that requires grad (cached while the graph lives)."""
    meta = t._meta
    ref = None if meta is None else meta.accumulator
    n = None if ref is None else ref()
    return accumulator_of(t) if n is None else n


def _edge(t: Tensor):
    """The graph edge of a plain tensor that requires grad (its AccumulateGrad for a leaf)."""
    n = t._node
    return (n, t._out_nr) if n is not None else (_accumulator(t), 0)


def two_arg_save_masks(op: OpDef) -> dict | None:
    """``op.save_mask`` of a two-argument op tabulated for the three ``needs`` a node can have
    (a dict lookup when recording instead of a call)."""
    if op.save_mask is None:
        return None
    return {
        needs: tuple(bool(keep) for keep in op.save_mask(needs))
        for needs in (_BOTH, _FIRST_OF_TWO, _SECOND_OF_TWO)
    }


def _record_two(op: OpDef, a, b, result: Tensor, masks: dict | None) -> None:
    """``record_node`` specialised to two plain-tensor-or-scalar arguments (binary ops);
    ``masks`` is ``two_arg_save_masks(op)``."""
    node = _new(op.node_cls)
    node._seq = next(_sequence)
    node._extra = None
    node._nout = 1
    node._op = op
    node._params = EMPTY
    node._freed = False
    node._out_data = None
    node._out_meta = None
    ta = type(a) is Tensor
    tb = type(b) is Tensor
    if ta and a._rg:
        n = a._node
        edge_a = (n, a._out_nr) if n is not None else (_accumulator(a), 0)
        if tb and b._rg:
            n = b._node
            node._edges = (edge_a, (n, b._out_nr) if n is not None else (_accumulator(b), 0))
            needs = _BOTH
        else:
            node._edges = (edge_a, _NO_EDGE)
            needs = _FIRST_OF_TWO
    else:
        n = b._node
        node._edges = (_NO_EDGE, (n, b._out_nr) if n is not None else (_accumulator(b), 0))
        needs = _SECOND_OF_TWO
    node._needs = needs
    if op.save_args:
        # arguments the VJP will not read are not kept (mul, div): shape/dtype stand-ins
        keep_a, keep_b = _BOTH if masks is None else masks[needs]
        va = vb = None
        if ta:
            if keep_a:
                box = a._vc
                va = 0 if box is None else box[0]
            else:
                a = _argmeta(a._data)
        if tb:
            if keep_b:
                box = b._vc
                vb = 0 if box is None else box[0]
            else:
                b = _argmeta(b._data)
        node._args = (a, b)
        node._versions = (va, vb)
    else:
        node._args = (_argmeta(a._data) if ta else a, _argmeta(b._data) if tb else b)
    result._rg = True
    result._node = node
    if op.save_out:
        node._save_outputs((result,))
    if RECORD_HOOKS:
        on_record(node, (result,))


def _fresh(view: ViewInfo) -> bool:
    """True if a view's grad_fn is current (its base was not modified in place since)."""
    return view.version == view.base._vc[0]


def unary_caller(op: OpDef, name: str | None = None, doc: str | None = None):
    """The public function for a one-argument op without parameters."""
    impl = op.impl
    kernel = op.kernel
    modules = _MODULE_OF_TYPE
    differentiable = op.differentiable  # comparisons etc. never record a node
    new = _new
    scalar_types = _NP_SCALAR_TYPES
    default_dtype = DEFAULT_DTYPE
    f64 = _F64

    def call(x):
        if ACTIVE:  # some thread has levels, or the default dtype is not float64
            levels = GRAD.levels
            if levels:  # this thread has
                return dispatch_at(levels, op, (x,), EMPTY)
            if default_dtype[0] is not f64:
                return eager(op, (x,), EMPTY)  # (which applies the default dtype)
        if type(x) is Tensor and (x._view is None or _fresh(x._view)):
            data = x._data
            try:
                out = impl(modules[type(data)], data) if kernel is None else kernel(data)
            except Exception:
                return eager(op, (x,), EMPTY)  # re-run on the slow path for a clear error
            if type(out) in scalar_types:
                out = np.asarray(out)
            result = new(Tensor)  # wrap(out), inline: this is the hot path of every op
            result._data = out
            result._rg = False
            result._node = None
            result._out_nr = 0
            result._meta = None
            result._fw = None
            result._vc = None
            result._view = None
            if x._rg and GRAD.enabled and differentiable:
                _record_one(op, x, result)
            return result
        return dispatch(op, (x,), EMPTY)

    return _finish(call, op, name, doc)


def binary_caller(op: OpDef, name: str | None = None, doc: str | None = None):
    """The public function for a two-argument op without parameters (Python scalars allowed)."""
    impl = op.impl
    kernel = op.kernel
    modules = _MODULE_OF_TYPE
    differentiable = op.differentiable  # comparisons etc. never record a node
    scalars = SCALAR_TYPES
    new = _new
    scalar_types = _NP_SCALAR_TYPES
    masks = two_arg_save_masks(op)
    default_dtype = DEFAULT_DTYPE
    f64 = _F64

    def call(a, b):
        if ACTIVE:  # some thread has levels, or the default dtype is not float64
            levels = GRAD.levels
            if levels:  # this thread has
                return dispatch_at(levels, op, (a, b), EMPTY)
            if default_dtype[0] is not f64:
                return eager(op, (a, b), EMPTY)  # (which applies the default dtype)
        # the fast path (no level in this thread): plain tensors (views only while current)
        # and Python scalars
        if type(a) is Tensor:
            da = a._data
            if type(b) is Tensor:
                db = b._data
                fast = type(da) is type(db) and (b._view is None or _fresh(b._view))
                requires_grad = a._rg or b._rg
            else:
                db = b
                fast = type(b) in scalars
                requires_grad = a._rg
            fast = fast and (a._view is None or _fresh(a._view))
            xp_of = da
        elif type(b) is Tensor:
            da = a
            db = xp_of = b._data
            fast = type(a) in scalars and (b._view is None or _fresh(b._view))
            requires_grad = b._rg
        else:
            fast = False
        if fast:
            try:
                if kernel is None:
                    out = impl(modules[type(xp_of)], da, db)
                else:
                    out = kernel(da, db)
            except Exception:
                return eager(op, (a, b), EMPTY)  # re-run on the slow path for a clear error
            if type(out) in scalar_types:
                out = np.asarray(out)
            result = new(Tensor)  # wrap(out), inline
            result._data = out
            result._rg = False
            result._node = None
            result._out_nr = 0
            result._meta = None
            result._fw = None
            result._vc = None
            result._view = None
            if requires_grad and GRAD.enabled and differentiable:
                _record_two(op, a, b, result, masks)
            return result
        return dispatch(op, (a, b), EMPTY)

    return _finish(call, op, name, doc)


def _finish(call, op: OpDef, name: str | None, doc: str | None):
    if op.fast is None:
        op.fast = call
    call.__name__ = call.__qualname__ = name or op.name
    call.__doc__ = doc or f"dualad op ``{op.name}`` (differentiable: {op.differentiable})."
    call.op = op
    return call


def apply(op: OpDef, *args, **params):
    """Call ``op`` on ``args`` through the full dispatch (levels, graph recording)."""
    return dispatch(op, args, params)


def apply1(op: OpDef, x, params: dict):
    """Call a one-tensor op with static ``params``; fast path as in ``unary_caller``."""
    if ACTIVE:  # some thread has levels, or the default dtype is not float64
        levels = GRAD.levels
        if levels:  # this thread has
            return dispatch_at(levels, op, (x,), params)
        if DEFAULT_DTYPE[0] is not _F64:
            return eager(op, (x,), params)  # (which applies the default dtype)
    if type(x) is Tensor and x._view is None and not op.view:
        data = x._data
        try:
            out = op.impl(_MODULE_OF_TYPE[type(data)], data, **params)
        except Exception:
            return eager(op, (x,), params)
        if op.nout == 1:
            if type(out) in _NP_SCALAR_TYPES:
                out = np.asarray(out)
            result = wrap(out)
            if x._rg and op.differentiable and GRAD.enabled:
                if op.save_mask is None:
                    _record_one(op, x, result, params)
                else:
                    record_node(op, (x,), params, (result,))
            return result
        if not x._rg or not GRAD.enabled:
            return tuple(wrap(np.asarray(o) if type(o) in _NP_SCALAR_TYPES else o) for o in out)
        return dispatch(op, (x,), params)  # several outputs recorded: the general path
    return dispatch(op, (x,), params)
