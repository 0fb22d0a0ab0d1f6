"""Forward-mode AD with dual tensors (``torch.autograd.forward_ad``'s API), with nesting.

>>> import dualad
>>> from dualad import fwd
>>> x = dualad.tensor([0.0, 1.0])
>>> with fwd.dual_level():
...     y = dualad.sin(fwd.make_dual(x, dualad.ones(2)))
...     tangent = fwd.unpack_dual(y).tangent
>>> tangent
tensor([1.        , 0.54030231])

Levels nest (``with dual_level() as a: with dual_level() as b:`` gives ``b == a + 1``); the
tangent at each level is computed with that level stripped, so nested levels give exact higher
derivatives.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Literal

from .._creation import zeros_like
from .._dispatch import dispatch, suspended
from .._state import DUALS_LIVE, GRAD, pop_level, push_level
from .._tensor import Tensor
from .._wrapper import LevelTensor
from ..ops import clone
from ..rev.function import alias_op, set_fw_enabled
from ..rev.grad_mode import _DecoratorContext, _SetMode
from .levels import DualLevel

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = """``unpack_dual``'s result: the primal and its tangent (or None).

>>> import dualad
>>> from dualad import fwd
>>> with fwd.dual_level():
...     out = fwd.unpack_dual(fwd.make_dual(dualad.tensor(2.0), dualad.tensor(1.0)) ** 2)
>>> out.primal, out.tangent
(tensor(4.), tensor(4.))
>>> primal, tangent = out  # a named tuple
"""


def __getattr__(name: str) -> int:
    # ``_current_level`` (PyTorch's module attribute): this thread's innermost dual level
    # number, -1 when it has none. Computed on read: levels are per thread.
    if name == "_current_level":
        duals = GRAD.duals
        return duals[-1].index if duals else -1
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def enter_dual_level() -> int:
    """Enter a new (innermost) dual level of this thread and return its number (levels and
    their numbers are per thread). ``dual_level()`` is the context manager that pairs it
    with ``exit_dual_level``.

    >>> import dualad
    >>> import dualad.fwd as fwAD
    >>> level = fwAD.enter_dual_level()
    >>> x = fwAD.make_dual(dualad.tensor(2.0), dualad.tensor(1.0), level=level)
    >>> fwAD.unpack_dual(x * x, level=level).tangent
    tensor(4.)
    >>> fwAD.exit_dual_level(level=level)
    """
    duals = GRAD.duals
    level = DualLevel(len(duals))
    duals.append(level)
    DUALS_LIVE.append(level)
    push_level(level)
    return level.index


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit this thread's innermost dual level (``level`` must name it); its tangents are
    cleared: a dual tensor made in it is a plain tensor afterwards (as in PyTorch).

    >>> import dualad
    >>> import dualad.fwd as fwAD
    >>> level = fwAD.enter_dual_level()
    >>> x = fwAD.make_dual(dualad.tensor(2.0), dualad.tensor(1.0))
    >>> fwAD.exit_dual_level()
    >>> fwAD.unpack_dual(x).tangent is None
    True
    """
    duals = GRAD.duals
    if not duals:
        raise RuntimeError("Dual level must be a positive number.")
    innermost = duals[-1]
    if level is not None and level != innermost.index:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This "
            "is not supported."
        )
    duals.pop()
    if innermost in DUALS_LIVE:  # (a copy inherited by a reentrant pass's thread is not)
        DUALS_LIVE.remove(innermost)
    pop_level(innermost)
    innermost.clear()


class dual_level(_DecoratorContext):
    """Context manager (and decorator) for a forward-mode level; yields the level number.

    >>> from dualad import fwd
    >>> with fwd.dual_level() as outer:
    ...     with fwd.dual_level() as inner:
    ...         (outer, inner)
    (0, 1)
    """

    def __enter__(self) -> int:
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc: object) -> Literal[False]:
        exit_dual_level(level=self.level)
        return False


def _resolve(level: int | None, what: str) -> DualLevel | None:
    duals = GRAD.duals
    if level is None:
        return duals[-1] if duals else None
    if level < 0:
        return None
    for candidate in duals:
        if candidate.index == level:
            return candidate
    raise RuntimeError(f"dualad.fwd.{what}: dual level {level} is not active")


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` at ``level`` (default: innermost).

    The tangent has the primal's shape. A tangent of another floating dtype is cast to the
    primal's (the rules then run in the primal's precision; PyTorch keeps the tangent as
    given); a complex tangent for a real primal raises ValueError (the rules of real ops
    assume real directions: make one dual per part instead). Outside a dual level, or with
    an integer primal or tangent, it raises.

    >>> import dualad
    >>> import dualad.fwd as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(dualad.tensor([0.0, 1.0]), dualad.tensor([1.0, 1.0]))
    ...     fwAD.unpack_dual(dualad.sin(x)).tangent
    tensor([1.        , 0.54030231])
    """
    return _make_dual(tensor, tangent, level, copy_tangent=True)


def _make_dual(tensor: Tensor, tangent: Tensor, level: int | None, copy_tangent: bool) -> Tensor:
    """``make_dual``; ``copy_tangent=False`` when the tangent is a private value of the caller
    (``jacfwd``'s basis), which then needs no protective copy."""
    dual = _resolve(level, "make_dual")
    if dual is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("dualad.fwd.make_dual: the primal and the tangent must be Tensors")
    if tensor.dtype.kind not in "fc":
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if tangent.dtype.kind not in "fc":
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if tangent.dtype.kind == "c" and tensor.dtype.kind != "c":
        raise ValueError(
            f"dualad.fwd.make_dual: the primal is real ({tensor.dtype}) but the tangent is "
            f"complex ({tangent.dtype}); a real primal takes a real tangent (for a complex "
            "direction, make one dual with its real part and one with its imaginary part)"
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the "
            f"given forward gradient is of size {list(tangent.shape)}."
        )
    if dual.owns(tensor):
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            f"same level {dual.index} is not supported."
        )
    if dual.owns(tangent):
        raise RuntimeError(
            "Setting a forward grad that itself has a forward gradient at the same level"
            f"{dual.index} is not supported."
        )
    for inner in _dual_levels_above(dual):
        if inner.tangent_of(tangent) is not None:
            # a tangent at ``dual`` carries the levels below ``dual`` only (the mixed terms
            # belong to the inner level's tangent): such a tangent's inner part would be lost
            raise RuntimeError(
                f"dualad.fwd.make_dual: the tangent given for dual level {dual.index} has itself a "
                f"tangent at dual level {inner.index}, which was entered after it; dualad cannot "
                "propagate that mixed term. Put it in the inner level's tangent instead (t plain, "
                f"s the mixed term): make_dual(make_dual(x, t, level={dual.index}), "
                f"make_dual(zeros_like(x), s, level={dual.index}), level={inner.index})"
            )
    if type(tensor) is not Tensor or type(tangent) is not Tensor:
        # a level above ``dual`` may hold the dual number in its values (vmap's batched ones:
        # the dual number lives below that level)
        for above in reversed(GRAD.levels):
            if above is dual:
                break
            lifted = above.make_dual_above(dual, tensor, tangent)
            if lifted is not None:
                return lifted
    out = dispatch(alias_op, (tensor,), {})
    if copy_tangent and tangent._data.strides != tensor._data.strides and tensor._data.size > 1:
        # laid out differently from the primal: like PyTorch, keep a private copy, so in-place
        # updates of the dual's tangent never write into the caller's tensor (differentiable)
        tangent = clone(tangent)
    dual.attach(out, tangent)
    return out


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at ``level``; tangent is None for a non-dual.

    With nested levels the two carry the other levels' perturbations, whichever level is
    unpacked first (mixed partials are symmetric): unpacking the outer level inside the inner
    one gives a tangent whose inner tangent is the mixed term, and a primal that keeps its inner
    tangent.

    >>> import dualad
    >>> from dualad import fwd
    >>> with fwd.dual_level() as outer:
    ...     x = fwd.make_dual(dualad.tensor(0.0), dualad.tensor(1.0), level=outer)
    ...     with fwd.dual_level() as inner:
    ...         y = dualad.exp(fwd.make_dual(x, dualad.tensor(1.0), level=inner))
    ...         dy = fwd.unpack_dual(y, level=outer).tangent
    ...         fwd.unpack_dual(dy, level=inner).tangent
    tensor(1.)
    """
    dual = _resolve(level, "unpack_dual")
    if dual is None or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    if isinstance(tensor, LevelTensor) and _above(tensor._level, dual):
        # a value of a level above ``dual`` (vmap's batched ones: the tangent lives inside)
        lifted = tensor._level.unpack_dual_above(dual, tensor)
        if lifted is not None:
            return UnpackedDualTensor(*lifted)
    if not GRAD.fw_enabled:
        # forward grad off (e.g. inside a custom Function's forward): no tangents
        return UnpackedDualTensor(_alias_below(tensor, dual), None)
    above = _dual_levels_above(dual)
    if not above or all(m.tangent_of(tensor) is None for m in above):
        # the usual case: no level inside ``dual`` perturbs the tensor
        tangent = dual.tangent_of(tensor)
        return UnpackedDualTensor(_alias_below(tensor, dual), tangent)
    return UnpackedDualTensor(_without(tensor, dual, above), _coefficient(tensor, dual, above))


# Nested levels (see the invariant in ``levels``): a tangent at level L carries the tangents of
# the levels below L only, as L's rules computed it with L and the levels above suspended. The
# mixed terms of L and a level M above it sit in M's tangent (its tangent at L). Unpacking L
# while such an M is active gathers them: ``_coefficient`` (L's tangent, plus, at each M, the
# coefficient of L in M's tangent) and ``_without`` (the tensor, with, at each M, M's tangent
# without L's perturbation).


def _above(level: object, dual: DualLevel) -> bool:
    """Whether ``level`` is above ``dual`` on this thread's stack (both active)."""
    try:
        stack = GRAD.levels
        return stack.index(level) > stack.index(dual)
    except ValueError:
        return False


def _dual_levels_above(dual: DualLevel) -> list:
    """The dual levels active right above ``dual`` (up to the first other transform level:
    above a vmap or grad level, tangents live on that level's wrappers, not on this tensor)."""
    levels = GRAD.levels
    if not levels or levels[-1] is dual or dual not in levels:
        return []
    above = []
    for level in levels[levels.index(dual) + 1 :]:
        if type(level) is not DualLevel:
            break
        above.append(level)
    return above


def _alias_below(tensor: Tensor, dual: DualLevel) -> Tensor:
    """A view of ``tensor`` carrying the tangents of the levels below ``dual`` only (computed
    with ``dual`` and the levels above it suspended); it never derives ``dual``'s tangent from
    its base."""
    if dual in GRAD.levels:
        with suspended(dual):
            out = dispatch(alias_op, (tensor,), {})
    else:  # the level is suspended already (inside a rule or a custom Function's forward/jvp)
        out = dispatch(alias_op, (tensor,), {})
    if type(out) is Tensor and out._view is not None:
        out._view.fw_derivable = False  # the primal never has the dual's tangent
    return out


def _coefficient(tensor: Tensor, dual: DualLevel, above: list) -> Tensor | None:
    """The coefficient of ``dual``'s perturbation in ``tensor`` (None: zero), carrying the
    perturbations of the levels below ``dual`` and of ``above`` (the levels above ``dual`` to
    account for, innermost last)."""
    base = dual.tangent_of(tensor)
    mixed = []
    for k, level in enumerate(above):
        inner = level.tangent_of(tensor)
        if inner is not None:
            term = _coefficient(inner, dual, above[:k])  # (inner carries levels below it only)
            if term is not None:
                mixed.append((level, term))
    if not mixed:
        return base
    if base is None:  # no first-order term, but mixed ones
        base = zeros_like(tensor)
    out = _alias_below(base, dual)
    for level, term in mixed:
        level.attach(out, term)
    return out


def _without(tensor: Tensor, dual: DualLevel, above: list) -> Tensor:
    """A view of ``tensor`` without ``dual``'s perturbation: the tangents of the levels below
    ``dual`` as they are, and at each level of ``above`` that level's tangent without it."""
    out = _alias_below(tensor, dual)
    for k, level in enumerate(above):
        inner = level.tangent_of(tensor)
        if inner is not None:
            rest = [m for m in above[:k] if m.tangent_of(inner) is not None]
            if rest or dual.tangent_of(inner) is not None:  # (else it is free of dual already)
                inner = _without(inner, dual, rest)
            level.attach(out, inner)
    return out


def _is_fwd_grad_enabled() -> bool:
    """Whether dual levels propagate tangents in this thread (on unless turned off with
    _set_fwd_grad_enabled)."""
    return GRAD.fw_enabled


# (a _SetMode like rev.grad_mode's set_grad_enabled: doctest and hooks alike on purpose)
class _set_fwd_grad_enabled(_SetMode):
    """Turn tangent propagation on or off in this thread: immediately, and restored on exit as
    a context.

    >>> from dualad import fwd
    >>> with fwd._set_fwd_grad_enabled(False):
    ...     fwd._is_fwd_grad_enabled()
    False
    >>> fwd._is_fwd_grad_enabled()
    True
    """

    _get = staticmethod(lambda: GRAD.fw_enabled)
    _set = staticmethod(set_fw_enabled)


__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]
