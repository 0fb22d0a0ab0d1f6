"""Dispatch: the one path every dualad op takes.

An op is an ``OpDef`` record (impl | vjp | jvp | batch, ``_opdef``) plus a public caller made
from it here. This module is the core's entry point for the layers above: it also re-exports
``OpDef``, ``register``, ``REGISTRY`` and the ``Level`` protocol (``_level``).
The caller's fast path runs when this thread has no transform level (``_state.ACTIVE`` empty: no
thread has one, else this thread's ``GRAD.levels`` empty) and every
tensor argument is a plain ``Tensor`` (a view only if its base was not modified in place since its
grad_fn was made): it calls the impl, wraps the array and, when an input requires grad and grad
mode is on, has the tape record a graph node (``record_node``). Otherwise ``dispatch`` runs:

1. the highest active transform level that owns an argument processes the op (its rule runs with
   itself and the levels above it suspended, i.e. one level down);
2. with no such level, the eager bottom level runs the impl and, when an input requires grad and
   grad mode is on, has the tape record a graph node for reverse mode. The tape (``dualad.rev``,
   a layer above this one) installs its recorder here (``install_tape``): the core imports
   nothing above ``_creation``, ``_tensor`` and the array/dtype/state modules.

Impls are the only code that calls the array module; they get it as their first argument.
Python scalars alone (``negative(2.0)``) are computed as a 0-d tensor of the first (the others
weak scalars with it). While the default dtype is not float64, a float64 (complex128) result
made from no floating tensor takes the default dtype (``to_default_dtype``, on the careful
path: the fast callers leave the fast path while ``ACTIVE`` holds the default-dtype token).
An impl's exception keeps its class, with the op and arguments added (``op_error``).
The tape's recorder ends with one flag test, ``RECORD_HOOKS``: while saved-tensor hooks or
anomaly mode are active, it packs what a new node saved and keeps its forward trace.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Callable

import numpy as np

from ._backend import _MODULE_OF_TYPE, _resolve, to_device
from ._creation import as_tensor, tensor
from ._dtypes import _default as DEFAULT_DTYPE
from ._dtypes import default_complex_dtype
from ._level import Level, find_level, suspended  # noqa: F401 (the core's entry point)
from ._meta import ViewInfo, _version_box
from ._opdef import REGISTRY, OpDef, register  # noqa: F401 (the core's entry point)
from ._state import ACTIVE, GRAD
from ._tensor import Tensor, _new, wrap
from ._tracked_values import operand

# The compiled fast path (``_fastpath.c``, optional): the fast callers' and the recorder's
# hottest cases in C, equal to the Python code below for every case it takes (it returns
# ``MISS`` for the rest, before running anything). Not built (no compiler at install) or
# switched off with DUALAD_PURE_PYTHON=1: the Python code runs everything.
try:
    if os.environ.get("DUALAD_PURE_PYTHON", "") not in ("", "0"):
        raise ImportError("switched off by DUALAD_PURE_PYTHON")
    if sys.implementation.name != "cpython" or sysconfig.get_config_var("Py_GIL_DISABLED"):
        raise ImportError("written for CPython with its GIL (slots at their offsets)")
    from . import _fastpath
except ImportError:
    _fastpath = None
MISS = object()  # (the compiled fast path's answer "take the Python path")

SCALAR_TYPES = frozenset((float, int, bool, complex))
_SEQUENCES = frozenset((list, tuple))  # operands that dispatch stacks (``_operands``)
_NO_EDGE = (None, 0)
EMPTY: dict = {}

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


# ---------------------------------------------------------------------------------------------
# the tape: the bottom level's graph recorder, installed from above


def _no_tape(*args, **kwargs):
    raise RuntimeError(
        "dualad: no tape is installed to record this op's graph (import dualad, which installs "
        "dualad.rev's, instead of its core modules alone)"
    )


# ``record_node(op, args, params, None, results)`` attaches a graph node to ``results``;
# ``refresh_view(t)`` brings a view's grad_fn up to date after its base was written in place.
# The core calls them as globals of this module (no attribute lookup on the hot path);
# ``dualad.rev.record`` installs its own when imported.
record_node = refresh_view = _no_tape
if _fastpath is not None:
    _fastpath.install_core(
        Tensor,
        ACTIVE,
        GRAD,
        _MODULE_OF_TYPE,
        _NP_SCALAR_TYPES,
        np.asarray,
        EMPTY,
        MISS,
        record_node,
        OpDef,
        np.ndarray,
    )


def install_tape(
    record_fn: Callable, refresh_view_fn: Callable, fast_layout: tuple | None = None
) -> None:
    """Install the tape (``dualad.rev.record`` calls this once, at import). ``fast_layout``:
    what the compiled fast path needs to record nodes itself (``_fastpath.install_tape``'s
    arguments: the node class, its helpers and flags); without it the compiled callers call
    ``record_fn``."""
    global record_node, refresh_view
    record_node, refresh_view = record_fn, refresh_view_fn
    if _fastpath is not None:
        _fastpath.set_recorder(record_fn)
        if fast_layout is not None:
            _fastpath.install_tape(*fast_layout)


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
    return as_tensor(value)


def _operands(args: tuple) -> tuple:
    """``args`` with each list/tuple operand that holds a tensor carrying a derivative stacked
    (``_creation.operand``), before any level looks at them: a level sees only its own
    wrappers, so one inside a list would otherwise reach an op as a constant."""
    return tuple([operand(a) if type(a) is list or type(a) is tuple else a for a in args])


def dispatch(op: OpDef, args: tuple, params: dict):
    """The slow path: levels, conversion of non-tensor arguments, graph recording."""
    for a in args:
        if type(a) is list or type(a) is tuple:
            args = _operands(args)
            break
    if ACTIVE:  # some thread has levels: look at this thread's
        levels = GRAD.levels
        if levels:
            return dispatch_at(levels, op, args, params)
    return eager(op, args, params)


def dispatch_at(levels: list, op: OpDef, args: tuple, params: dict):
    """``dispatch`` given this thread's (non-empty) level stack ``levels``."""
    for a in args:
        if type(a) is list or type(a) is tuple:
            args = _operands(args)
            break
    if not params and len(levels) == 1:  # one level (forward mode's hot case)
        level = levels[0]
        alone = level.process_alone
        if alone is not None:
            return alone(op, args, levels)  # (which runs ``eager`` when it owns no argument)
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
                refresh_view(a)
            data = a._data
            if xp is None:
                xp = _xp(data)
            elif _xp(data) is not xp:
                return _mixed_devices(op, args, params)
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
            record_node(op, args, params, result)
        return result
    results = tuple(wrap(np.asarray(o) if type(o) in _NP_SCALAR_TYPES else o) for o in out)
    if op.view:
        for i, r in enumerate(results):
            make_view(r, args[0], op, params, multi_output=True, index=i)
    if record:
        record_node(op, args, params, None, results)
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


def _mixed_devices(op: OpDef, args: tuple, params: dict):
    """Tensors of several devices: PyTorch's rule lets 0-d CPU tensors that need no gradient (a
    scalar made of Python numbers inside a derivative rule, say) join tensors of one other
    device, moved there (a one-number copy); anything else is the device error."""
    others = {a.device for a in args if isinstance(a, Tensor) and not _cpu_scalar(a)}
    if len(others) != 1 or any(isinstance(a, Tensor) and a._rg and _cpu_scalar(a) for a in args):
        raise _device_error(op, args)
    device = others.pop()
    if device.type == "cpu":
        raise _device_error(op, args)
    moved = tuple(wrap(to_device(a._data, device)) if _cpu_scalar(a) else a for a in args)
    return eager(op, moved, params)


def _cpu_scalar(a) -> bool:
    return isinstance(a, Tensor) and a._data.ndim == 0 and type(a._data) is np.ndarray


def _device_error(op: OpDef, args: tuple) -> RuntimeError:
    devices = [str(a.device) for a in args if isinstance(a, Tensor)]
    return RuntimeError(
        f"dualad.{op.name}: Expected all tensors to be on the same device, but found tensors on "
        f"devices {devices}"
    )


# ---------------------------------------------------------------------------------------------
# public callers with the fast path


def _fresh(view: ViewInfo) -> bool:
    """True if a view's grad_fn is current (its base was not modified in place since)."""
    return view.version == view.base._vc[0]


def _bound(op: OpDef) -> tuple:
    """What the fast callers read on every call, bound once per op as closure variables (read
    faster than attributes and globals): the op's impl, kernel and whether it is differentiable
    (comparisons never record a node), then module constants."""
    return (
        op.impl,
        op.kernel,
        op.differentiable,
        _MODULE_OF_TYPE,
        _new,
        _NP_SCALAR_TYPES,
        DEFAULT_DTYPE,
        _F64,
    )


def _compiled(op: OpDef, kind: str) -> tuple:
    """The compiled fast path of a caller of ``kind`` ("unary", "binary") and its state (what
    ``_bound`` binds, as ``_fastpath`` reads it), or (None, None) without the extension."""
    if _fastpath is None:
        return None, None
    return getattr(_fastpath, kind), (op, op.impl, op.kernel, bool(op.differentiable))


def unary_caller(
    op: OpDef, name: str | None = None, doc: str | None = None
) -> Callable[[object], Tensor]:
    """The public function for a one-argument op without parameters."""
    impl, kernel, differentiable, modules, new, scalar_types, default_dtype, f64 = _bound(op)
    compiled, state = _compiled(op, "unary")

    def call(x):
        if ACTIVE:  # some thread has levels, or the default dtype is not float64
            levels = GRAD.levels
            if levels:  # this thread has
                if len(levels) == 1 and type(x) is not list and type(x) is not tuple:
                    alone = levels[0].process_alone  # (dispatch_at's first case, inline)
                    if alone is not None:
                        return alone(op, (x,), levels)
                return dispatch_at(levels, op, (x,), EMPTY)
            if default_dtype[0] is not f64:
                return eager(op, (x,), EMPTY)  # (which applies the default dtype)
        elif compiled is not None:  # the fast path below, compiled: MISS where it declines
            out = compiled(state, x)
            if out is not MISS:
                return out
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
            result._out_nr = 0
            result._meta = None
            result._fw = result._fwsig = None
            result._vc = None
            result._view = None
            if x._rg and GRAD.enabled and differentiable:
                record_node(op, (x,), EMPTY, result)  # (sets result._rg and ._node)
            else:
                result._rg = False
                result._node = None
            return result
        return dispatch(op, (x,), EMPTY)

    call.fast_state = (state, 1)  # (operator_method's)
    return _finish(call, op, name, doc)


def binary_caller(
    op: OpDef, name: str | None = None, doc: str | None = None
) -> Callable[[object, object], Tensor]:
    """The public function for a two-argument op without parameters (Python scalars allowed)."""
    impl, kernel, differentiable, modules, new, scalar_types, default_dtype, f64 = _bound(op)
    scalars = SCALAR_TYPES
    compiled, state = _compiled(op, "binary")

    def call(a, b):
        if ACTIVE:  # some thread has levels, or the default dtype is not float64
            levels = GRAD.levels
            if levels:  # this thread has
                if len(levels) == 1 and type(a) not in _SEQUENCES and type(b) not in _SEQUENCES:
                    alone = levels[0].process_alone  # (dispatch_at's first case, inline)
                    if alone is not None:
                        return alone(op, (a, b), levels)
                return dispatch_at(levels, op, (a, b), EMPTY)
            if default_dtype[0] is not f64:
                return eager(op, (a, b), EMPTY)  # (which applies the default dtype)
        elif compiled is not None:  # the fast path below, compiled: MISS where it declines
            out = compiled(state, a, b)
            if out is not MISS:
                return out
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
            result = new(Tensor)  # wrap(out), inline: this is the hot path of every op
            result._data = out
            result._out_nr = 0
            result._meta = None
            result._fw = result._fwsig = None
            result._vc = None
            result._view = None
            if requires_grad and GRAD.enabled and differentiable:
                record_node(op, (a, b), EMPTY, result)  # (sets result._rg and ._node)
            else:
                result._rg = False
                result._node = None
            return result
        return dispatch(op, (a, b), EMPTY)

    call.fast_state = (state, 2)  # (operator_method's)
    return _finish(call, op, name, doc)


def operator_method(fn: Callable):
    """``fn`` as a Tensor operator method (``Tensor.__mul__ = operator_method(mul)``): where
    ``fn`` is a fast caller and the compiled fast path exists, a compiled method that does what
    ``fn`` does without a Python frame (``_fastpath.Method``: its name, doc and signature are
    ``fn``'s); else ``fn`` itself."""
    fast = getattr(fn, "fast_state", None)
    if _fastpath is None or fast is None:
        return fn
    return _fastpath.Method(fast[0], fn, fast[1])


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
                record_node(op, (x,), params, result)
            return result
        if not x._rg or not GRAD.enabled:
            return tuple(wrap(np.asarray(o) if type(o) in _NP_SCALAR_TYPES else o) for o in out)
        return dispatch(op, (x,), params)  # several outputs recorded: the general path
    return dispatch(op, (x,), params)
