"""Forward mode's hot path: compiled per-op rules under one dual level alone (issue 15 item 6).

Under one dual level alone on this thread's stack (``func.jvp``, ``fwd.dual_level``: forward
mode's hot case) a call of an op without parameters reaches ``process_alone`` here straight
from the op's fast caller. A call whose signature (the op, the default dtype, each tensor
argument's and tangent's shape and dtype, the Python numbers' types and values) was met before
replays a function of the arrays computing the primal and its tangent (``_RULES``: compiled by
``tracing.tangents`` the second time a signature is met, installed from above with
``install_rule_compiler``) and wraps one output Tensor holding its tangent; every other call
takes the level's general path (``DualLevel.alone_general``).

The signature costs what its reads cost (shapes, dtypes, a tuple hashed), which is most of an
op's overhead on small arrays; so each tensor argument's part of it is cached on the tensor, in
its ``_fwsig`` slot, as ``(data, tangent, tangent data, piece)`` (None for the tangent and its
data where there is none): ``piece`` is the part (a ``Piece``, interned: equal parts are one
object, hashed and compared by identity); data and tangent data are what a rule takes from the
tensor (a rule takes four arrays: each argument's and its tangent's, None where there is none).
The cache holds only facts that identities and flags vouch for, and they are checked on every
use:

- the tensor's ``_data`` is the cached array (``.data =`` and in-place ops that rebind it
  invalidate it; an array's shape and dtype never change under dualad: one reshaped in place
  through ``numpy()`` is not seen), and it requires no grad;
- its tangent at this level is the cached Tensor (``make_dual``, ``attach`` and a level's exit
  replace or remove it), or None for both; that tangent's ``_data`` is the cached array, and it
  requires no grad and has no tangent of its own;
- a view's base was not modified in place since the view was made (as before), checked anew.

A part that fails a check is recomputed from scratch (``signature``, the full checks) and
cached again; a tangent that is itself a view is never cached (its freshness is checked on
every call instead). Outputs of a compiled rule get their part from the rule (known when it was
compiled), so a chain of ops on duals reads no shape. A level's exit clears the cache of every
tensor it gave a tangent (``DualLevel.clear``), so a cache never keeps a stripped tangent alive.
"""

from __future__ import annotations

import weakref
from functools import partial
from types import MethodType

import numpy as np

from .._dispatch import _fastpath
from .._dtypes import _default as DEFAULT_DTYPE
from .._meta import ViewInfo
from .._tensor import Tensor, _new

# Compiled forward rules: a call's signature -> ``(replay, piece, copies, plan)`` (``replay(a,
# ta, b, tb) -> (y, ty)`` from the arguments' arrays and their tangents', None where there is
# none; ``piece`` the output's part of a signature; ``copies``: ty is an argument's tangent, to
# be copied; ``plan``: replay as calls the compiled fast path makes itself, or None), or a
# marker: _SEEN_ONCE (compiled when met again: one-off
# calls cost no trace) or _DECLINED (the general path runs it). The compiler is installed from
# above (``tracing.tangents``: fwd must not import the trace level), None while there is none.
_RULES: dict = {}
_UNSEEN, _SEEN_ONCE, _DECLINED = 2, 1, 0  # (ints: one type test tells a marker from a rule)
MAX_RULES = 4096  # a full table compiles nothing more (new signatures take the general path)
_PIECES: dict = {}  # (shape, dtype[, tangent's shape, tangent's dtype]) -> its Piece
MAX_PIECES = 4096
_COMPILE = None
_NO_PART = (None, None, None, None)  # (a missing second argument's)
_ndarray = np.ndarray
_weakref = weakref.ref


class Piece:
    """One tensor argument's part of a call's signature: its array's shape and dtype and, for
    a dual, its tangent's (``tangent_shape`` None for a tensor without a tangent). Interned
    (``piece``), so a signature holding it is hashed and compared by identity."""

    __slots__ = ("dtype", "shape", "tangent_dtype", "tangent_shape")

    def __init__(self, shape, dtype, tangent_shape=None, tangent_dtype=None) -> None:
        self.shape = shape
        self.dtype = dtype
        self.tangent_shape = tangent_shape
        self.tangent_dtype = tangent_dtype

    def __repr__(self) -> str:
        tangent = "" if self.tangent_shape is None else f", tangent {self.tangent_shape}"
        return f"<piece {self.shape} {self.dtype}{tangent}>"


def piece(parts: tuple):
    """The interned ``Piece`` of ``parts`` (shape, dtype[, tangent shape, tangent dtype]), or
    None when the table is full."""
    found = _PIECES.get(parts)
    if found is None and len(_PIECES) < MAX_PIECES:
        found = _PIECES[parts] = Piece(*parts)
    return found


def install_rule_compiler(compile_rule) -> None:
    """Install (or, with None, remove) the compiler of forward rules:
    ``compile_rule(level, op, args)`` gives the replay function of the call's signature (its
    primal and tangent from the arrays of the tensor arguments and their tangents, in order),
    or None. Installing forgets the rules compiled so far."""
    global _COMPILE
    _COMPILE = compile_rule
    _RULES.clear()


def signature(level, a: Tensor):
    """The signature part of tensor argument ``a`` at dual ``level`` (see the module's
    docstring), cached on ``a`` where its checks are identities and flags; None when the
    compiled rules cannot take it: it requires grad, its array is not NumPy's, it is a view
    without its own tangent or of a base modified in place since, or its tangent is not a
    plain Tensor without history and tangents of its own."""
    data = a._data
    view = a._view
    fw = a._fw
    tangent = None if fw is None else fw.get(level)
    if (
        a._rg
        or type(data) is not _ndarray
        or (view is not None and (tangent is None or view.version != view.base._vc[0]))
    ):
        return None
    if tangent is None:
        part = piece((data.shape, data.dtype))
        sig = (data, None, None, part)
    else:
        tdata = tangent._data
        view = tangent._view
        if (
            type(tangent) is not Tensor
            or tangent._rg
            or tangent._fw is not None
            or type(tdata) is not _ndarray
            or (view is not None and view.version != view.base._vc[0])
        ):
            return None
        part = piece((data.shape, data.dtype, tdata.shape, tdata.dtype))
        sig = (data, tangent, tdata, part)
        if view is not None:
            return None if part is None else sig  # (not cached: its freshness needs checking)
    if part is None:
        return None
    a._fwsig = sig
    return sig


def part_of(level, a):
    """``a``'s part of a call's signature at dual ``level`` as a ``signature`` tuple: a tensor's
    cached one while its checks hold (see the module's docstring), else recomputed; for a
    Python float or int, its type and value (no arrays); None when the compiled rules cannot
    take ``a``."""
    if type(a) is Tensor:
        try:
            sig = a._fwsig
        except AttributeError:  # (made by code that skips ``wrap`` and left the slot unset)
            sig = None
        if sig is not None and sig[0] is a._data and not a._rg:
            fw = a._fw
            tangent = sig[1]
            view = a._view
            if (
                (None if fw is None else fw.get(level)) is tangent
                and (
                    tangent is None
                    or (tangent._data is sig[2] and not tangent._rg and tangent._fw is None)
                )
                and (view is None or view.version == view.base._vc[0])
            ):
                return sig
        return signature(level, a)
    t = type(a)
    if t is float or t is int:
        # (0.0 and -0.0 are equal keys otherwise; NaN is no key at all: never equal to itself)
        return (None, None, None, (t, a if a and a == a else repr(a)))
    return None


def process_alone(level, op, args: tuple, stack):
    """``DualLevel.process`` of an op without parameters while ``level`` is alone on this
    thread's stack (``stack``; dispatch calls it directly, without asking ``owns``: forward
    mode's hot path): the compiled rule of the call's signature when it has one, else the
    general path (``level.alone_general``).

    The compiled rule is used only for one or two arguments, plain Tensors that require no
    grad (nothing to record on the tape; a view only while its base is unmodified, so that its
    flags are current, and with its own tangent), tangents that are plain Tensors without
    history or tangents of their own, NumPy arrays and Python float/int scalars, with at least
    one tangent at this level and not one tensor in both slots (``x * x``: a rule may tell them
    apart); the compiler (``tracing.tangents``) declines the rest. A rule takes four arrays,
    each argument's and its tangent's (None where there is none). Where the compiled fast
    path exists, the level enters it first (``entry``) and calls this for what it declines."""
    if not level.fw_on:
        return level.alone_general(op, args, stack)
    n = len(args)
    if n == 2:
        first, second = args
        if first is second:
            return level.alone_general(op, args, stack)
        first = part_of(level, first)
        second = part_of(level, second)
        if first is None or second is None:
            return level.alone_general(op, args, stack)
        key = (op, DEFAULT_DTYPE[0], first[3], second[3])
    elif n == 1:
        first = part_of(level, args[0])
        if first is None:
            return level.alone_general(op, args, stack)
        second = _NO_PART
        key = (op, DEFAULT_DTYPE[0], first[3])
    else:
        return level.alone_general(op, args, stack)
    rule = _RULES.get(key, _UNSEEN)
    if type(rule) is not tuple:
        _compile(level, op, args, key, rule, first[1] is not None or second[1] is not None)
        return level.alone_general(op, args, stack)
    replay, part, copies, _ = rule  # (the last: the compiled fast path's plan of replay)
    try:
        y, ty = replay(first[0], first[2], second[0], second[2])
        if copies:  # (the rule returned an argument's tangent: see tracing.tangents)
            ty = ty.copy()
    except Exception:
        return level.alone_general(op, args, stack)  # (which raises its clear error)
    out = _new(Tensor)  # wrap(y) and wrap(ty), inline: the hot path
    out._data = y
    out._rg = False
    out._out_nr = 0
    out._node = out._meta = out._vc = out._view = None
    tangent = _new(Tensor)
    tangent._data = ty
    tangent._rg = False
    tangent._out_nr = 0
    tangent._node = tangent._meta = tangent._fw = tangent._fwsig = tangent._vc = None
    tangent._view = None
    out._fw = {level: tangent}
    out._fwsig = (y, tangent, ty, part)  # (its signature part, known to the rule)
    holders = level.holders
    holders.append(_weakref(out))
    if len(holders) > level.prune_at:
        level._prune()
    return out


def entry(level):
    """``level.process_alone``: ``process_alone`` bound to the level, entered in C where the
    compiled fast path exists (``_fastpath.forward_entry``: a replayed call runs no Python)."""
    if _fastpath is None:
        return MethodType(process_alone, level)
    # (the rule branch of process_alone, in C, for a call whose cached parts all hold and whose
    # rule is compiled; process_alone itself for every other call)
    return partial(_fastpath.forward_entry, level, process_alone)


def install_compiled(level_type: type) -> None:
    """Give the compiled fast path this module's rule table and the dual level's slots
    (``fwd.levels`` calls it once ``DualLevel`` exists)."""
    if _fastpath is not None:
        _fastpath.install_forward(_RULES, DEFAULT_DTYPE, level_type, ViewInfo)


def _compile(level, op, args: tuple, key: tuple, rule, owned: bool) -> None:
    """A call without a compiled rule (``rule``: the marker its signature ``key`` has):
    its signature is noted the first time (only a call with a tangent, ``owned``), compiled
    the second, declined for good when the compiler declines it."""
    if _COMPILE is None:
        return
    if rule == _UNSEEN:
        if len(_RULES) < MAX_RULES and owned:
            _RULES[key] = _SEEN_ONCE
    elif rule == _SEEN_ONCE:
        compiled = _COMPILE(level, op, args)
        if compiled is not None:  # (replay, the output's shape and dtype)
            replay, shape, dtype, copies, plan = compiled
            part = piece((shape, dtype, shape, dtype))
            compiled = None if part is None else (replay, part, copies, plan)
        _RULES[key] = _DECLINED if compiled is None else compiled


__all__ = [
    "MAX_RULES",
    "Piece",
    "install_rule_compiler",
    "part_of",
    "piece",
    "process_alone",
    "signature",
]
