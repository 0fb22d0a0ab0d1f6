"""Vector-valued functions of the parameters (constraints, residuals) as scipy calls them:
values, Jacobians (``jacrev`` when there are fewer outputs than parameters, else ``jacfwd``;
or ``scipy.sparse`` by colouring) and the Hessian of ``v · c(x)`` that trust-constr asks for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._creation import as_tensor
from .._tensor import Tensor
from ..func import hessian, jacfwd, jacrev, sparse_jacobian
from ._objective import compiler
from ._params import Params, host64, host_sparse64

# Jacobian modes a user may name (``None`` and "auto" pick by shape)
JACOBIAN_MODES = ("auto", "jacfwd", "jacrev", "sparse")


class VectorFunction:
    """``fn`` (of the user's structure, then ``*args``) returning an array of any shape, seen
    by scipy as a function of flat float64 vectors returning a flat float64 vector.
    ``what`` names it in errors ("constraint", "residual function", ...)."""

    def __init__(self, params: Params, fn, name: str, what: str, jit: bool = False) -> None:
        self.params = params
        self.size: int | None = None  # the number of outputs, known after the first call
        self._sparse: Callable[..., Any] | None = None
        self.evaluations = 0

        def flat_out(tree, *args):
            self.evaluations += 1
            out = fn(tree, *args)
            if not isinstance(out, Tensor):
                out = as_tensor(out)
            if out.dtype.kind != "f":
                raise TypeError(
                    f"dualad.optimize.{name}: the {what} returned dtype {out.dtype}; it must "
                    "return real floating point values"
                )
            return out.reshape(-1)

        self.flat = flat = params.flat(flat_out)

        def weighted_hessian(z, weights, *args):
            return hessian(lambda u: (flat(u, *args) * weights).sum())(z)  # (the Tensor first)

        compiled = compiler(jit)
        self._value_of = compiled(flat)
        self._transforms = {"jacfwd": compiled(jacfwd(flat)), "jacrev": compiled(jacrev(flat))}
        self._weighted_hessian = compiled(weighted_hessian)

    def value(self, x, *args) -> np.ndarray:
        out = host64(self._value_of(self.params.plain_tensor(x), *args))
        self.size = out.size
        return out

    def jacobian(self, x, *args, mode: str = "auto", sparsity="auto"):
        """The ``(outputs, parameters)`` Jacobian at ``x``: dense (float64 NumPy), or CSR."""
        n = self.params.size
        z = self.params.device_vector(x)
        if mode == "sparse":
            if self._sparse is None:
                self._sparse = sparse_jacobian(self.flat, sparsity=sparsity)
            return host_sparse64(self._sparse(z, *args))
        if mode == "auto":
            if self.size is None:
                self.value(x, *args)
            # reverse mode costs one pass per output, forward mode one per parameter
            mode = "jacrev" if self.size < n else "jacfwd"
        jac = host64(self._transforms[mode](z, *args))
        self.size = jac.shape[0]
        return jac.reshape(self.size, n)

    def jacobian_function(self, mode: str, sparsity="auto"):
        """scipy's ``jac(x, *args)`` computing ``jacobian`` in ``mode``."""

        def jac(x, *args):
            return self.jacobian(x, *args, mode=mode, sparsity=sparsity)

        return jac

    def hess_dot(self, x, v, *args) -> np.ndarray:
        """The Hessian of ``v · c(x)`` (trust-constr's ``hess(x, v)`` of a constraint)."""
        params = self.params
        return host64(self._weighted_hessian(params.device_vector(x), params.on_device(v), *args))


__all__ = ["JACOBIAN_MODES", "VectorFunction"]
