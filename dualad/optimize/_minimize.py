"""``minimize``: scipy.optimize.minimize with dualad's derivatives supplied to the method."""

from __future__ import annotations

import inspect

import scipy.optimize as so

from ._constraints import convert_bounds, convert_constraints
from ._objective import Objective
from ._params import Params

# which methods take which derivative (scipy warns when given one it does not use)
TAKES_JAC = frozenset(
    [
        "cg",
        "bfgs",
        "newton-cg",
        "l-bfgs-b",
        "tnc",
        "slsqp",
        "dogleg",
        "trust-ncg",
        "trust-krylov",
        "trust-exact",
        "trust-constr",
    ]
)
TAKES_HESS = frozenset(
    ["newton-cg", "dogleg", "trust-ncg", "trust-krylov", "trust-exact", "trust-constr"]
)
TAKES_HESSP = frozenset(["newton-cg", "trust-ncg", "trust-krylov", "trust-constr"])
TAKES_SPARSE_HESS = frozenset(["newton-cg", "trust-constr"])  # (the others need arrays)
# scipy.optimize.minimize's methods (scipy 1.17)
METHODS = frozenset(
    [
        "nelder-mead",
        "powell",
        "cg",
        "bfgs",
        "newton-cg",
        "l-bfgs-b",
        "tnc",
        "cobyla",
        "cobyqa",
        "slsqp",
        "trust-constr",
        "dogleg",
        "trust-ncg",
        "trust-exact",
        "trust-krylov",
    ]
)


def _method(method, constraints, bounds) -> str:
    """The lower-case method name; None picks scipy's default, as scipy does."""
    if callable(method):
        return "_custom"
    if method is None:
        if constraints:
            return "slsqp"
        return "l-bfgs-b" if bounds is not None else "bfgs"
    if not isinstance(method, str) or method.lower() not in METHODS:
        raise ValueError(
            f"dualad.optimize.minimize: Unknown solver {method!r}; scipy.optimize.minimize's "
            f"methods are {sorted(METHODS)} (or a callable)"
        )
    return method.lower()


def minimize(
    fun,
    x0,
    *,
    args=(),
    method=None,
    jac=None,
    hess=None,
    hessp=None,
    bounds=None,
    constraints=(),
    tol=None,
    callback=None,
    options=None,
    jit: bool = False,
    **scipy_kwargs,
):
    """Minimize a scalar ``fun(x, *args)`` with ``scipy.optimize.minimize``, its derivatives
    computed by dualad.

    ``x0`` is an array, a Tensor, a number, or a dict/tuple/list of them (nested); ``fun``
    receives that structure (each leaf with its dtype and device) and returns a 0-d tensor.
    scipy works on one float64 NumPy vector, whatever the leaves' dtype (float32 too) and
    device (CuPy leaves are moved to the host for scipy and back for ``fun``).

    Derivatives supplied, for the methods that use them (scipy's names):

    - ``jac=None``: the gradient, from ONE forward and backward pass that also gives the
      value; the last ``x`` is cached, so scipy's ``fun(x)`` then ``jac(x)`` cost one
      evaluation of ``fun``. ``jac=False``: none (scipy's finite differences).
    - ``hess=None`` (or ``"dense"``): the dense Hessian (``dualad.func.hessian``) for
      Newton-CG, dogleg, trust-ncg, trust-krylov, trust-exact and trust-constr;
      ``hess="sparse"``: a ``scipy.sparse`` Hessian from a few Hessian-vector products
      (``dualad.func.sparse_hessian``; Newton-CG and trust-constr); ``hess=False``: none
      (trust-constr then updates quasi-Newton approximations, for the constraints too).
    - ``hessp=True``: Hessian-vector products (forward over reverse) INSTEAD of the Hessian,
      for Newton-CG, trust-ncg, trust-krylov and trust-constr: each costs about two gradients,
      for large problems.
    - constraints (dicts or ``NonlinearConstraint``, functions of the user's structure) get
      their Jacobians and, for trust-constr, the Hessian of ``v · c(x)``; see
      ``dualad.optimize._constraints``.

    A callable (or scipy's string) given for ``jac``, ``hess`` or ``hessp`` passes to scipy
    unchanged: it receives scipy's flat float64 vector. ``callback`` receives the point in
    ``x0``'s structure (``callback(x)``, or ``callback(intermediate_result=r)`` with ``r.x``
    in it, as scipy decides by the parameter's name). ``bounds`` are
    scipy's (on the flat vector) or a ``(low, high)`` pair per leaf in ``x0``'s structure.

    ``jit=True`` runs the values and derivatives under ``dualad.jit`` (traced once, then
    replayed as straight-line array code: several times faster per evaluation on small
    problems). ``fun`` must then be traceable: its Python side effects happen when it is
    traced, and Python branches on values become guards (see ``dualad.jit``).

    Returns scipy's ``OptimizeResult``; its ``x`` and the gradient (``jac``; trust-constr's
    ``grad``) have ``x0``'s structure, leaf dtypes and device.

    >>> import numpy as np
    >>> from dualad.optimize import minimize
    >>> def rosen(p):
    ...     return (1 - p["a"]) ** 2 + 100 * (p["b"] - p["a"] ** 2) ** 2
    >>> res = minimize(rosen, {"a": np.float32(-1.0), "b": np.float32(2.0)}, method="trust-exact")
    >>> res.success, round(float(res.x["a"]), 4), round(float(res.x["b"]), 4), res.x["a"].dtype
    (True, 1.0, 1.0, dtype('float32'))
    """
    params = Params(x0, "minimize")
    meth = _method(method, constraints, bounds)
    objective = Objective(params, fun, "minimize", jit=jit)
    takes_jac = meth in TAKES_JAC or meth == "_custom"
    if jac is True:
        raise ValueError(
            "dualad.optimize.minimize: jac=True (fun returns its own gradient) is not "
            "supported: dualad computes the gradient (leave jac=None), or pass a callable"
        )
    if jac is None and takes_jac:
        fun_scipy, jac = objective.fun, objective.jac
    else:
        fun_scipy = objective.value
        jac = None if jac is False else jac
    hessians = meth == "trust-constr" and hess is not False  # (for the constraints)
    hess, hessp = _second_order(objective, meth, hess, hessp)
    if bounds is not None:
        bounds = convert_bounds(bounds, params, "minimize")
    if constraints:
        constraints = convert_constraints(constraints, params, hessians, "minimize", jit)
    result = so.minimize(
        fun_scipy,
        params.x0.copy(),
        args=tuple(args) if isinstance(args, (tuple, list)) else (args,),
        method=method if meth == "_custom" else meth,
        jac=jac,
        hess=hess,
        hessp=hessp,
        bounds=bounds,
        constraints=constraints,
        tol=tol,
        callback=_structured_callback(callback, params),
        options=options,
        **scipy_kwargs,
    )
    result.x = params.tree(result.x)
    # the objective's gradient: ``jac`` (trust-constr: ``grad``; its ``jac`` holds the
    # constraints' Jacobians)
    key = "grad" if meth == "trust-constr" else "jac"
    if getattr(result.get(key), "shape", None) == (params.size,):
        result[key] = params.tree(result[key])
    return result


def _structured_callback(callback, params: Params):
    """``callback`` given the point in x0's structure: as ``callback(x, *rest)``, or, when its
    one parameter is named ``intermediate_result`` (scipy's rule), as
    ``callback(intermediate_result=result)`` with ``result.x`` in that structure."""
    if callback is None:
        return None
    if set(inspect.signature(callback).parameters) == {"intermediate_result"}:

        def with_result(intermediate_result):
            result = so.OptimizeResult(intermediate_result)  # (a copy: scipy keeps its own)
            result.x = params.tree(result.x)
            return callback(intermediate_result=result)

        return with_result

    def with_point(xk, *rest):
        return callback(params.tree(xk), *rest)

    return with_point


def _second_order(objective: Objective, meth: str, hess, hessp):
    """scipy's ``hess`` and ``hessp`` for the method, from the user's request."""
    if hessp is True:
        if meth not in TAKES_HESSP:
            raise ValueError(
                f"dualad.optimize.minimize: hessp=True: method {meth!r} takes no "
                f"Hessian-vector products (those that do: {sorted(TAKES_HESSP)})"
            )
        if hess not in (None, False):
            raise ValueError(
                "dualad.optimize.minimize: give hess or hessp, not both (scipy ignores hessp "
                "when it has hess)"
            )
        return None, objective.hessp
    if hessp is not None and hessp is not False:
        # the user's hessp: scipy ignores it when it also has a Hessian, so supply none
        return (None if hess in (None, False) else hess), hessp
    if hess is None or (isinstance(hess, str) and hess in ("dense", "sparse")):
        asked = hess is not None
        kind = hess or "dense"
        if meth not in TAKES_HESS and not (asked and meth == "_custom"):
            if asked:
                raise ValueError(
                    f"dualad.optimize.minimize: hess={hess!r}: method {meth!r} takes no "
                    f"Hessian (those that do: {sorted(TAKES_HESS)})"
                )
            return None, None
        if kind == "sparse":
            if meth not in TAKES_SPARSE_HESS:
                raise ValueError(
                    f"dualad.optimize.minimize: hess='sparse' needs a method that takes a "
                    f"scipy.sparse Hessian ({sorted(TAKES_SPARSE_HESS)}), not {meth!r}"
                )
            return objective.hess_sparse, None
        return objective.hess, None
    if hess is False:
        return None, None
    return hess, None  # the user's callable, or scipy's string / HessianUpdateStrategy


__all__ = ["minimize"]
