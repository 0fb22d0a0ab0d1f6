"""Constraints and bounds of ``minimize`` in the user's terms, given to scipy in its own.

- a dict ``{"type": "eq" | "ineq", "fun": c}`` (SLSQP, COBYLA's form) gets ``"jac"`` unless
  it has one;
- a ``NonlinearConstraint`` whose ``jac`` is left at scipy's default ``"2-point"`` gets dualad's
  Jacobian, and for trust-constr, when its ``hess`` is left at scipy's default (None, which
  scipy stores as a fresh ``BFGS()``, so a ``BFGS()`` with default settings counts as left),
  ``hess(x, v)``: the Hessian of ``v · c(x)``; ``minimize(..., hess=False)`` keeps scipy's
  quasi-Newton updates for the constraints too;
- a ``LinearConstraint`` (a constant matrix on the flat vector) passes through.

Constraint functions take the user's structure, as ``fun`` does. Bounds are scipy's (a
``Bounds`` or ``n`` pairs on the flat vector) or a pytree of ``(low, high)`` pairs with the
structure of ``x0`` (each a number or an array of its leaf's shape; None: unbounded).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import BFGS, Bounds, LinearConstraint, NonlinearConstraint

from ._params import Params
from ._vector import VectorFunction


def convert_constraints(constraints, params: Params, hessians: bool, name: str, jit: bool):
    """scipy's constraints with dualad's derivatives (the same container kind: one or a list);
    ``hessians``: supply ``hess(x, v)`` to NonlinearConstraints (trust-constr)."""
    single = isinstance(constraints, (dict, NonlinearConstraint, LinearConstraint))
    items = [constraints] if single else list(constraints)
    converted = [_convert(c, params, hessians, name, jit) for c in items]
    return converted[0] if single else converted


def _left_at_default(hess) -> bool:
    """Whether a NonlinearConstraint's ``hess`` is scipy's default: None becomes ``BFGS()``."""
    if hess is None:
        return True
    return (
        type(hess) is BFGS
        and hess.exception_strategy == "skip_update"
        and hess.min_curvature == 1e-8
        and isinstance(hess.init_scale, str)
        and hess.init_scale == "auto"
        and getattr(hess, "first_iteration", None) is None
    )


def _convert(constraint, params: Params, hessians: bool, name: str, jit: bool):
    if isinstance(constraint, dict):
        if "fun" not in constraint:
            return constraint  # (scipy says what is missing)
        function = VectorFunction(params, constraint["fun"], name, "constraint function", jit)
        out = dict(constraint)
        out["fun"] = function.value
        if out.get("jac") is None:
            out["jac"] = function.jacobian
        return out
    if isinstance(constraint, NonlinearConstraint):
        function = VectorFunction(params, constraint.fun, name, "constraint function", jit)
        jac = constraint.jac
        hess = constraint.hess
        if isinstance(jac, str) and jac == "2-point":
            jac = function.jacobian
        if hessians and _left_at_default(hess):
            hess = function.hess_dot
        return NonlinearConstraint(
            function.value,
            constraint.lb,
            constraint.ub,
            jac=jac,
            hess=hess,
            keep_feasible=constraint.keep_feasible,
            finite_diff_rel_step=constraint.finite_diff_rel_step,
            finite_diff_jac_sparsity=constraint.finite_diff_jac_sparsity,
        )
    return constraint  # LinearConstraint (constant) and anything scipy itself judges


def convert_bounds(bounds, params: Params, name: str):
    """scipy's bounds on the flat vector: ``Bounds`` and ``n`` scalar pairs pass through, a
    pytree of pairs with ``x0``'s structure becomes a ``Bounds``."""
    if bounds is None or isinstance(bounds, Bounds):
        return bounds
    if _flat_pairs(bounds, params.size):
        return bounds
    lows, highs = [], []
    try:
        pairs = params.pairs(bounds)
    except (TypeError, ValueError, KeyError) as error:
        raise ValueError(
            f"dualad.optimize.{name}: bounds must be a scipy.optimize.Bounds, a sequence of "
            f"{params.size} (low, high) pairs, or a (low, high) pair per leaf of x0 in x0's "
            f"structure ({error})"
        ) from None
    for (low, high), shape in zip(pairs, params.shapes):
        lows.append(_side(low, shape, -np.inf))
        highs.append(_side(high, shape, np.inf))
    return Bounds(np.concatenate(lows), np.concatenate(highs))


def _flat_pairs(bounds, n: int) -> bool:
    """Whether ``bounds`` is scipy's sequence of ``n`` pairs of numbers (or None)."""
    if not isinstance(bounds, (list, tuple)) or len(bounds) != n:
        return False
    for pair in bounds:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            return False
        if not all(side is None or np.ndim(side) == 0 for side in pair):
            return False
    return True


def _side(value, shape: tuple, default: float) -> np.ndarray:
    if value is None:
        value = default
    return np.broadcast_to(np.asarray(value, dtype=np.float64), shape).ravel()


__all__ = ["convert_bounds", "convert_constraints"]
