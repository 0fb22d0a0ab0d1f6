"""``least_squares`` and ``root``: scipy's solvers for vector functions, with the Jacobian
from dualad (forward or reverse mode, whichever the shapes make cheaper, or sparse)."""

from __future__ import annotations

import scipy.optimize as so

from ._params import Params
from ._vector import JACOBIAN_MODES, VectorFunction

LEAST_SQUARES_METHODS = ("trf", "dogbox", "lm")
ROOT_METHODS = frozenset(
    [
        "hybr",
        "lm",
        "broyden1",
        "broyden2",
        "anderson",
        "linearmixing",
        "diagbroyden",
        "excitingmixing",
        "krylov",
        "df-sane",
    ]
)
ROOT_TAKES_JAC = frozenset(["hybr", "lm"])


def _args(args) -> tuple:
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)


def _prepared(fun, x0, jac, name: str, what: str, jit: bool):
    """``(params, function, mode, jac)``: ``mode`` names dualad's Jacobian (``jac`` is then
    None), or is None when the user's ``jac`` passes on to scipy."""
    params = Params(x0, name)
    function = VectorFunction(params, fun, name, what, jit)
    if jac is None:
        return params, function, "auto", None
    if isinstance(jac, str) and jac in JACOBIAN_MODES:
        return params, function, jac, None
    if jac is True:
        raise ValueError(
            f"dualad.optimize.{name}: jac=True (fun returns its own Jacobian) is not "
            "supported: dualad computes the Jacobian (leave jac=None), or pass a callable"
        )
    return params, function, None, jac


def least_squares(
    fun, x0, *, jac=None, method="trf", jac_sparsity=None, args=(), jit=False, **scipy_kwargs
):
    """Solve a nonlinear least-squares problem, ``min ½ Σ fun(x)²``, with
    ``scipy.optimize.least_squares`` and dualad's Jacobian of the residuals.

    ``x0`` is an array, a Tensor or a pytree of them (as in ``minimize``); ``fun(x, *args)``
    returns the residuals (any shape: they are flattened). ``jac``:

    - None or ``"auto"``: dense, by ``jacrev`` when there are fewer residuals than
      parameters, else ``jacfwd`` (one pass per residual, resp. per parameter);
      ``"jacfwd"``/``"jacrev"`` force one;
    - ``"sparse"``: ``scipy.sparse`` by colouring (``dualad.func.sparse_jacobian``; methods
      trf and dogbox), its pattern detected from the function or given as ``jac_sparsity``;
    - a callable or scipy's finite-difference strings: passed to scipy unchanged (with
      ``jac_sparsity``), receiving the flat float64 vector.

    ``jit=True``: values and Jacobians under ``dualad.jit``, as in ``minimize``. Other
    keywords (``bounds`` on the flat vector, ``loss``, ``x_scale``, tolerances...) go to
    scipy. Returns scipy's ``OptimizeResult`` with ``x`` in ``x0``'s structure (``jac``,
    ``grad`` and ``fun`` stay flat).

    >>> import numpy as np
    >>> from dualad.optimize import least_squares
    >>> t = np.linspace(0.0, 1.0, 20)
    >>> y = 2.0 * np.exp(-1.5 * t)
    >>> res = least_squares(lambda p: p["a"] * (p["k"] * -t).exp() - y, {"a": 1.0, "k": 1.0})
    >>> round(float(res.x["a"]), 6), round(float(res.x["k"]), 6)
    (2.0, 1.5)
    """
    if method not in LEAST_SQUARES_METHODS:
        raise ValueError(
            f"dualad.optimize.least_squares: `method` must be 'trf', 'dogbox' or 'lm', got "
            f"{method!r}"
        )
    params, residuals, mode, jac = _prepared(
        fun, x0, jac, "least_squares", "residual function", jit
    )
    if mode == "sparse" and method == "lm":
        raise ValueError(
            "dualad.optimize.least_squares: jac='sparse' needs method 'trf' or 'dogbox' "
            "(MINPACK's 'lm' takes dense Jacobians only)"
        )
    if mode is None:
        if jac_sparsity is not None:
            scipy_kwargs["jac_sparsity"] = jac_sparsity
    else:
        jac = residuals.jacobian_function(mode, "auto" if jac_sparsity is None else jac_sparsity)

    result = so.least_squares(
        residuals.value, params.x0.copy(), jac=jac, method=method, args=_args(args), **scipy_kwargs
    )
    result.x = params.tree(result.x)
    return result


def root(fun, x0, *, method="hybr", jac=None, args=(), jit=False, **scipy_kwargs):
    """Find a root of ``fun(x, *args)`` with ``scipy.optimize.root``; the methods that use a
    Jacobian (hybr, lm) get dualad's (``jacfwd`` or ``jacrev`` by shape, as in
    ``least_squares``; ``jac="jacfwd"``/``"jacrev"`` force one).

    ``x0`` is an array, a Tensor or a pytree of them; ``fun`` returns as many values as x0
    holds (any shape). A callable ``jac`` passes to scipy unchanged (it receives the flat
    float64 vector). ``jit=True``: values and Jacobians under ``dualad.jit``, as in
    ``minimize``. Returns scipy's ``OptimizeResult`` with ``x`` in ``x0``'s structure.

    >>> import numpy as np
    >>> from dualad.optimize import root
    >>> res = root(lambda x: x**3 - np.array([8.0, 27.0]), np.ones(2))
    >>> np.round(res.x, 8)
    array([2., 3.])
    """
    meth = method.lower() if isinstance(method, str) else method
    if meth not in ROOT_METHODS:
        raise ValueError(
            f"dualad.optimize.root: Unknown solver {method!r}; scipy.optimize.root's methods "
            f"are {sorted(ROOT_METHODS)}"
        )
    params, function, mode, jac = _prepared(fun, x0, jac, "root", "function", jit)
    if mode == "sparse":
        raise ValueError("dualad.optimize.root: jac='sparse': scipy's root takes dense Jacobians")
    if mode is not None and meth in ROOT_TAKES_JAC:
        jac = function.jacobian_function(mode)
    # (otherwise the user's jac, or None: scipy warns when a method that uses no Jacobian is
    # given one)
    result = so.root(
        function.value, params.x0.copy(), method=method, jac=jac, args=_args(args), **scipy_kwargs
    )
    result.x = params.tree(result.x)
    return result


__all__ = ["least_squares", "root"]
