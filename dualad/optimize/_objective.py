"""The scalar objective of ``minimize`` as scipy calls it: the value and the gradient from ONE
forward and backward pass, cached for the last ``x`` (scipy asks for ``fun(x)`` and ``jac(x)``
separately, at the same points), the Hessian (dense, or ``scipy.sparse`` by colouring) and
Hessian-vector products (forward over reverse).

``evaluations`` counts the calls of the user's function; every one made through the cache
gives both the value and the gradient."""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor
from .._tensor import Tensor
from ..func import grad, grad_and_value, hessian, jvp, sparse_hessian
from ..tracing import jit as jit_function
from ._params import Params, host64, host_sparse64


def compiler(jit: bool):
    """``dualad.jit`` when asked for, else the identity."""
    return jit_function if jit else _identity


def _identity(fn):
    return fn


def check_scalar(out, name: str):
    """The objective's output as a 0-d tensor (or number), or an error a user can act on:
    a ValueError for a non-scalar (scipy's class), a TypeError for a non-float."""
    dtype = getattr(out, "dtype", None)
    if dtype is None:
        if isinstance(out, bool) or not isinstance(out, (int, float, complex)):
            raise TypeError(
                f"dualad.optimize.{name}: fun must return a real scalar (a 0-d Tensor or a "
                f"float), got {type(out).__name__}"
            )
        dtype = np.asarray(out).dtype
    dtype = np.dtype(dtype)
    shape = tuple(getattr(out, "shape", ()))
    if int(np.prod(shape)) != 1:
        raise ValueError(
            f"dualad.optimize.{name}: fun must return a scalar, got an output of shape "
            f"{shape} (for a sum of squared residuals use dualad.optimize.least_squares)"
        )
    if dtype.kind != "f":
        raise TypeError(
            f"dualad.optimize.{name}: fun returned dtype {dtype}; it must return a real "
            "floating point scalar"
            + (
                " (a complex objective has no minimum: return its abs or real part)"
                if dtype.kind == "c"
                else " (an integer or boolean output has no gradient)"
            )
        )
    if not isinstance(out, Tensor):
        out = as_tensor(out)  # (a constant: its gradient is zero)
    return out.reshape(()) if shape != () else out


class Objective:
    """``fun`` of the user's structure, as scipy's ``fun``, ``jac``, ``hess`` and ``hessp``
    of flat float64 vectors."""

    def __init__(self, params: Params, fun, name: str, jit: bool = False) -> None:
        self.params = params
        self.name = name
        self.evaluations = 0  # (under ``jit``: the traces)

        def scalar(tree, *args):
            self.evaluations += 1
            return check_scalar(fun(tree, *args), name)

        self.flat = flat = params.flat(scalar)
        gradient = grad(flat)

        def product(z, p, *args):
            return jvp(lambda u: gradient(u, *args), (z,), (p,))[1]

        compiled = compiler(jit)
        self._value_of = compiled(flat)
        self._grad_and_value = compiled(grad_and_value(flat))
        self._hessian = compiled(hessian(flat))
        self._product = compiled(product)
        self._x: np.ndarray | None = None
        self._value = 0.0
        self._grad: np.ndarray | None = None
        self._sparse = None

    def value_and_grad(self, x, *args):
        """``(value, gradient)`` at ``x``, from the cache when ``x`` is the last point."""
        if self._x is None or not np.array_equal(x, self._x):
            gradient, value = self._grad_and_value(self.params.device_vector(x), *args)
            self._value = float(host64(value))
            self._grad = host64(gradient)
            self._x = np.array(x, dtype=np.float64, copy=True)
        return self._value, self._grad

    def fun(self, x, *args) -> float:
        return self.value_and_grad(x, *args)[0]

    def jac(self, x, *args) -> np.ndarray:
        return self.value_and_grad(x, *args)[1].copy()  # (scipy's own; the cache keeps ours)

    def value(self, x, *args) -> float:
        """The value alone (no gradient): for methods without ``jac`` or with the user's."""
        return float(host64(self._value_of(self.params.plain_tensor(x), *args)))

    def hess(self, x, *args) -> np.ndarray:
        """The dense Hessian: forward over reverse (``dualad.func.hessian``)."""
        return host64(self._hessian(self.params.device_vector(x), *args))

    def hess_sparse(self, x, *args):
        """The Hessian as ``scipy.sparse`` CSR, from a few Hessian-vector products
        (``dualad.func.sparse_hessian``: the pattern is detected once, then coloured)."""
        if self._sparse is None:
            self._sparse = sparse_hessian(self.flat)
        return host_sparse64(self._sparse(self.params.device_vector(x), *args))

    def hessp(self, x, p, *args) -> np.ndarray:
        """``H(x) @ p``: forward mode over the gradient, one pass of each."""
        params = self.params
        return host64(self._product(params.device_vector(x), params.device_vector(p), *args))


__all__ = ["Objective", "check_scalar", "compiler"]
