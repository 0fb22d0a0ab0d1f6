"""Views at a ``func.grad`` level: which tracked tensor a view shows, rebuilt after in-place
changes (PyTorch's CopySlices, functionally).

A grad level never writes the values one level down: an in-place op REBINDS its tensor to a new
value (``_rebind``). A view made at the level remembers its root base and the view steps from it
(``register_steps``, ``_register_views``); an in-place change of a view rebinds the base to
``where(region, embed(view), base)`` (``propagate_inplace``, ``_write_view``), and every view of a
changed base is rebuilt from it (``_refresh_views``). The wrappers are the grad level's
``GradTensor`` objects (``func/grad_level.py``, which builds on this module: here they are known
by their wrapper base alone).
"""

from __future__ import annotations

import weakref

from .._backend import is_writeable
from .._dispatch import _aliases, _xp, dispatch
from .._state import GRAD
from .._tensor import Tensor, _new, wrap
from .._wrapper import LevelTensor, unwrapped
from ..ops import where
from ..ops.base import inverse_permutation
from ..rev.grad_mode import no_grad
from ..rev.node import ArgMeta, ErrorNode
from ..rev.views import custom_view_message, nograd_view_message

# A view's chain holds its view steps ``(op, params, index)`` (``index``: which output of a
# multi-output view op) and, where the view was made without recording or returned by a custom
# Function, a marker step ``(None, kind, None)`` (kind NOGRAD or a CustomView; a Function's
# marker follows the Function's own view steps): views of such a view inherit the marker with the
# chain prefix, as PyTorch propagates a view's creation meta, and the latest of a CustomView
# marker and a multi-output step decides which error an in-place write of the view raises.
NOGRAD = "no_grad"


class CustomView:
    """The marker of a view that custom Function ``name`` returned as output ``out_nr``."""

    __slots__ = ("known", "name", "out_nr")

    def __init__(self, name: str, out_nr: int, known: bool) -> None:
        self.name = name
        self.out_nr = out_nr
        self.known = known  # False: the view steps (from the values below) are not known


def _marker(chain) -> object:
    """The creation marker of a view chain (the innermost one), or None."""
    kind = None
    for op, params, _ in chain or ():
        if op is None:
            kind = params
    return kind


def _register_views(
    source: LevelTensor, outputs: list, op, params: dict, multi: bool, marker=None
) -> None:
    """Record ``outputs`` of the view op ``op`` as views of ``source``'s root base."""
    if op.view == "maybe":  # (reshape) a view only when the values below share memory
        out = next((w for w in outputs if type(w) is type(source)), None)
        if out is None or not _aliases(unwrapped(out)._data, unwrapped(source)._data):
            return
    root = source if source._gbase is None else source._gbase
    prefix = () if source._gchain is None else source._gchain
    if marker is not None:
        prefix = (*prefix, (None, marker, None))
    views = root._gviews
    if views is None:
        views = root._gviews = []
    elif len(views) > 32:
        views[:] = [ref for ref in views if ref() is not None]
    for i, w in enumerate(outputs):
        if type(w) is type(source):
            w._gbase = root
            w._gchain = (*prefix, (op, params, i if multi else None))
            views.append(weakref.ref(w))


def register_steps(source: LevelTensor, output: LevelTensor, steps: tuple, marker) -> None:
    """Record ``output`` as the view of ``source`` that the view ``steps`` (``(op, params,
    index)``) give, marked ``marker``."""
    root = source if source._gbase is None else source._gbase
    prefix = () if source._gchain is None else source._gchain
    output._gbase = root
    # (the marker after the steps: they are the Function's own, so its creation is the latest,
    # e.g. over the unbind a Function ran: ``check_inplace_view``)
    output._gchain = (*prefix, *steps, (None, marker, None))
    views = root._gviews
    if views is None:
        views = root._gviews = []
    views.append(weakref.ref(output))


def _replay(base, chain: tuple):
    """The view ``chain`` applied to ``base`` (recorded at the levels active now)."""
    out = base
    for op, params, index in chain:
        if op is None:
            continue  # a marker
        out = dispatch(op, (out,), params)
        if index is not None:
            out = out[index]
    return out


def _zeros_laid_out_as(value):
    """Boolean zeros of ``value``'s logical shape whose dims are ordered in memory as one
    example of ``value`` is (under vmap the bottom array also holds batch dims, skipped here).
    The view chain was recorded on that layout: ``sin(x.mT)`` keeps x.mT's, and its
    ``b.mT.view(-1)`` is a view there but raised on C-ordered zeros."""
    dims = list(range(value.ndim))  # where each logical dim sits in the wrapped value
    while isinstance(value, LevelTensor):
        if value.batches:  # (a vmap level's BatchedTensor adds its batch dim)
            bdim = value._bdim
            dims = [d + (d >= bdim) for d in dims]
        value = value._value
    data = value._data
    xp = _xp(data)
    shape = tuple(data.shape[d] for d in dims)
    strides = [abs(data.strides[d]) for d in dims]
    order = sorted(range(len(dims)), key=lambda i: -strides[i])
    if order == sorted(order) or len(dims) < 2:
        return xp.zeros(shape, dtype=bool)  # C order: the common case
    permuted = xp.zeros(tuple(shape[d] for d in order), dtype=bool)
    return permuted.transpose(inverse_permutation(order))


def _write_view(base: LevelTensor, chain: tuple, value):
    """``base`` with the region that ``chain`` views replaced by ``value``, in dualad ops (so
    recorded, differentiable and batchable): ``where(region, embed(value), base)``, where
    ``embed`` is the transpose of the view steps (it puts value into zeros of base's shape)."""
    stand_in = _zeros_laid_out_as(base)
    xp = _xp(stand_in)
    region = stand_in
    shapes = []
    chain = tuple([step for step in chain if step[0] is not None])  # (no markers)
    for op, params, _ in chain:
        shapes.append(tuple(region.shape))
        region = op.impl(xp, region, **params)
    if not is_writeable(region) or not _aliases(region, stand_in):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    region[...] = True
    embedded = value
    for (op, params, _), shape in zip(reversed(chain), reversed(shapes)):
        embedded = op.vjp((embedded,), None, (ArgMeta(shape, base.dtype),), params, (True,))[0]
    return where(wrap(stand_in), embedded, base)


def _rebind(target: LevelTensor, new) -> None:
    """Make ``target`` stand for ``new`` (a value of target's level or a constant)."""
    if type(new) is type(target) and new._level is target._level:
        target._value = new._value
        if new._gnode is not None or GRAD.enabled:  # (a constant made under no_grad: as below)
            target._gnode = new._gnode
            target._gnr = new._gnr
    else:
        target._value = new
        if GRAD.enabled:
            target._gnode = None
            target._gnr = 0
        # (under no_grad the history stays, as for an eager in-place op that is not recorded)
    target._fw = _tangents_after(target, new)


def _tangents_after(target: LevelTensor, new):
    """The tangents ``target`` has once it stands for ``new``: ``new``'s, at the dual levels
    that computed it, and target's own at the live dual levels suspended meanwhile (levels above
    this one, while a custom Function runs below them: ``new`` cannot have their tangents, and
    their rule updates target's afterwards, as a Function's jvp writing the dirtied input's
    tangent in place, which reaches its views' tangents, views of it). Taking ``new``'s alone
    dropped a view's tangent there: jacrev(jacfwd(f)) of a view read after a Function marked
    its base dirty came out 0."""
    fw = new._fw if isinstance(new, Tensor) else None
    old = target._fw
    if old:
        active = GRAD.levels
        kept = {
            level: t
            for level, t in old.items()
            if level.alive and not any(level is a for a in active)
        }
        if kept:
            fw = kept if fw is None else {**fw, **kept}
    return fw


def _refresh_views(root: LevelTensor) -> None:
    """Rebuild every live view of ``root`` from its current value and history."""
    views = root._gviews
    alive = []
    for ref in list(views):
        view = ref()
        if view is not None:
            alive.append(ref)
            marker = _marker(view._gchain)
            if marker is None:
                _rebind(view, _replay(root, view._gchain))
            else:
                _rebind_marked(view, root, marker)
    views[:] = alive  # (the rebuilt views registered themselves again: drop those)


def _rebind_marked(view: LevelTensor, root: LevelTensor, marker) -> None:
    """Give ``view`` (made without grad, or returned by a custom Function) the values of its
    base changed in place. Its history is not rebuilt from the base's: a view made without grad
    stays a constant; a custom Function's view keeps the Function's backward when the change was
    not recorded, and otherwise differentiating it raises PyTorch's error (rebuilding its history
    from the base would silently replace the Function's backward). A custom Function's view
    whose steps from its base are not known (see ``CustomView``) cannot be given the new values:
    any later use of it raises (the write itself, as in eager mode, is fine)."""
    if marker is not NOGRAD and not marker.known:
        # writing the base is fine (as in eager mode): only a use of the view's stale values
        # raises, there being no way to give it the new ones
        view._value = _StaleView(
            view._value,
            f"dualad.func: output {marker.out_nr} of {marker.name} is a view and its base or "
            f"another view of its base has been modified inplace (at grad level "
            f"{root._level.index}), and dualad cannot rebuild that view (the Function ran on "
            "values of another transform, whose view relation is not tracked here). Clone the "
            "output of the custom Function.",
        )
        view._fw = None
        return
    previous = GRAD.enabled
    with no_grad():
        new = _replay(root, view._gchain)
    view._value = new._value if type(new) is type(view) else new
    view._fw = _tangents_after(view, new)
    if marker is NOGRAD:
        if root._gnode is None:  # a constant view of a constant base: nothing is ambiguous
            view._gnode = None
            view._gnr = 0
            return
        # whether the change should reach the view is ambiguous: PyTorch refuses to use it
        # with grad mode on; here differentiating through it raises (its values stay readable)
        message = nograd_view_message(None, 0, indirect=True)
    elif previous and (view._gnode is not None or root._gnode is not None):
        message = custom_view_message(marker.name, marker.out_nr, indirect=True)
    else:
        return
    # (edges to the histories it stands between, so that backward passes reach it)
    edges = tuple([(n, nr) for n, nr in ((view._gnode, view._gnr), (root._gnode, root._gnr)) if n])
    view._gnode = ErrorNode(message, edges)
    view._gnode._nout = 1
    view._gnr = 0


class _StaleView(Tensor):
    """The value of a view (see ``_rebind_marked``) whose base changed in place when the grad
    level cannot rebuild it: reading its data (any op, conversion or repr) raises ``message``;
    its shape and dtype, which did not change, stay readable."""

    __slots__ = ("_device", "_dtype", "_message", "_shape")

    def __new__(cls, old, message: str):
        out = _new(cls)
        out._shape = tuple(old.shape)
        out._dtype = old.dtype
        out._device = old.device
        out._message = message
        out._fw = out._meta = out._node = out._vc = out._view = None
        out._out_nr = 0
        out._rg = False
        return out

    def __init__(self, old, message: str) -> None:
        pass

    @property
    def _data(self):
        raise RuntimeError(self._message)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device


def check_inplace_view(target: LevelTensor) -> None:
    """Refuse in-place changes that PyTorch refuses on views: of one output of a multi-output
    view op, and (when recorded) of a view that a custom Function returned or that was made
    without grad."""
    chain = target._gchain
    if target._gbase is None:
        return
    # the latest of a custom Function's view and a multi-output view op decides (PyTorch's
    # creation meta): a Function's view of an unbind output refuses as the Function's view
    last = max([i for i, step in enumerate(chain) if type(step[1]) is CustomView], default=-1)
    if any(step[2] is not None for step in chain[last + 1 :]):
        raise RuntimeError(_multi_output_message(chain[last + 1 :]))
    marker = _marker(chain)
    if marker is None or not GRAD.enabled:
        return
    if target._gnode is None and target._gbase._gnode is None:
        return  # nothing tracked: nothing to corrupt
    if marker is NOGRAD:
        raise RuntimeError(nograd_view_message(None, 0, indirect=False))
    raise RuntimeError(custom_view_message(marker.name, marker.out_nr, indirect=False))


def propagate_inplace(target: LevelTensor) -> None:
    """After ``target`` was rebound to the result of an in-place change (an in-place op, or a
    custom Function that marked it dirty): its root base, when ``target`` is a view, becomes
    ``where(region, embed(target), base)`` (PyTorch's CopySlices, functionally), and every view
    of that base is rebuilt from it."""
    root = target._gbase
    if root is None:
        if target._gviews:
            _refresh_views(target)
        return
    _rebind(root, _write_view(root, target._gchain, target))
    _refresh_views(root)


def _multi_output_message(chain: tuple) -> str:
    op = next(op for op, _, index in chain if index is not None)
    index = next(index for _, _, index in chain if index is not None)
    return (
        f"Output {index} of {op.node_name} is a view and is being modified inplace. "
        "This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."
    )
