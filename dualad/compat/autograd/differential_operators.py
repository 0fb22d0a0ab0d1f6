"""HIPS autograd's differential operators (``autograd.differential_operators``) on dualad.

Each has autograd's signature and semantics (see the package docstring for the conventions);
the n-ary wrapping (``argnum``) and autograd's complex convention are in ``_core.py``.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections import OrderedDict

import numpy as np

from ... import func
from ..._creation import eye, ones_like, zeros
from ..._tensor import Tensor
from ..._tree import flatten, tree_map
from ...func._arrays import holds_tensor, leaf_to_tensor, tree_to_arrays
from ...ops import real, tensordot
from ...rev.checkpoint import checkpoint as _tape_checkpoint
from ...vmap.api import vmap
from . import _core
from ._core import conj_tree, nary, plain_function, zeros_tree

_NOT_SCALAR = (
    "{} only applies to real scalar-output functions. Try jacobian, elementwise_grad or "
    "holomorphic_grad."
)


def _check_size_one(ans, name: str) -> None:
    """autograd's check: the output has one element (any shape, as autograd's ``vspace``)."""
    if not (isinstance(ans, Tensor) and ans.numel() == 1):
        raise TypeError(_NOT_SCALAR.format(name))


@nary
def grad(fun, x, plain=False):
    """The gradient of a scalar-output ``fun`` with respect to positional argument ``argnum``
    (an int, or a tuple: a tuple of gradients); same type and shape as the argument.

    >>> from dualad.compat.autograd import grad
    >>> grad(lambda x, y: x * y, 1)(3.0, 4.0)
    np.float64(3.0)
    """
    vjp, ans = _core.make_vjp(fun, x)
    _check_size_one(ans, "Grad")
    return vjp(ones_like(ans))


@nary
def elementwise_grad(fun, x, plain=False):
    """The sum of the Jacobian's rows (the VJP of ones) in one backward pass: the derivative
    of each output element with respect to the matching input element when the Jacobian is
    diagonal (a function applied elementwise).

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import elementwise_grad
    >>> import dualad.numpy as dnp
    >>> elementwise_grad(dnp.tanh)(np.array([0.0, 1.0]))  # 1 - tanh(x)**2
    array([1.        , 0.41997434])
    """
    vjp, ans = _core.make_vjp(fun, x)
    if any(isinstance(v, Tensor) and v.dtype.kind == "c" for v in flatten(ans)[0]):
        raise TypeError("Elementwise_grad only applies to real-output functions.")
    return vjp(tree_map(ones_like, ans))


@nary
def jacobian(fun, x, plain=False):
    """The Jacobian of ``fun`` with respect to one array (or scalar) argument, of shape
    ``out.shape + in.shape`` (one VJP per output element, vectorised by ``vmap``).

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import jacobian
    >>> jacobian(lambda x: x[::-1] * 3.0)(np.array([1.0, 2.0]))
    array([[0., 3.],
           [3., 0.]])
    """
    if not isinstance(x, Tensor):
        raise TypeError(
            "dualad.compat.autograd.jacobian: the argument to differentiate must be a scalar or "
            f"an array, got {type(x).__name__} (as in autograd, not a tuple, list or dict)"
        )
    vjp, ans = _core.make_vjp(fun, x)
    if not isinstance(ans, Tensor):
        raise TypeError(
            "dualad.compat.autograd.jacobian: the function must return a scalar or an array, "
            f"got {type(ans).__name__}"
        )
    shape = (*ans.shape, *x.shape)
    n = ans.numel()
    if n == 0:
        return zeros(shape, dtype=x.dtype, device=x.device)
    if n == 1:
        return vjp(ones_like(ans)).reshape(shape)
    basis = eye(n, dtype=ans.dtype, device=ans.device).reshape(n, *ans.shape)
    return vmap(vjp)(basis).reshape(shape)


@nary
def holomorphic_grad(fun, x, plain=False):
    """The complex derivative ``f'(z)`` of a holomorphic ``fun`` (the gradient of its real
    part, in autograd's convention); warns when the input is not complex.

    >>> import dualad
    >>> from dualad.compat.autograd import holomorphic_grad
    >>> holomorphic_grad(lambda z: z**2)(1.0 + 1.0j)  # 2 z
    np.complex128(2+2j)
    """
    if not any(isinstance(v, Tensor) and v.dtype.kind == "c" for v in flatten(x)[0]):
        warnings.warn("Input to holomorphic_grad is not complex", stacklevel=3)
    return grad(lambda v: real(fun(v)))(x)


@nary
def hessian(fun, x, plain=False):
    """The exact Hessian: ``jacobian(jacobian(fun))``, of shape ``in.shape + in.shape`` for a
    scalar ``fun``.

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import hessian
    >>> hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    """
    return jacobian(jacobian(fun))(x)


@nary
def make_vjp(fun, x, plain=False):
    """``(vjp, ans)``: the value ``fun(*args)`` and its vector-Jacobian product function.

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import make_vjp
    >>> vjp, ans = make_vjp(lambda x: x**2)(np.array([1.0, 3.0]))
    >>> ans, vjp(np.array([1.0, 1.0]))
    (array([1., 9.]), array([2., 6.]))
    """
    vjp, ans = _core.make_vjp(fun, x)
    return plain_function(vjp, plain), ans


@nary
def make_jvp(fun, x, plain=False):
    """A function ``jvp(v)`` returning ``(fun(*args), J·v)`` (forward mode).

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import make_jvp
    >>> make_jvp(lambda x: x**2)(np.array([1.0, 3.0]))(np.array([1.0, 1.0]))
    (array([1., 9.]), array([2., 6.]))
    """
    return plain_function(_core.make_jvp(fun, x), plain)


@nary
def make_hvp(fun, x, plain=False):
    """``(hvp, gradient)``: ``hvp(v)`` is the Hessian-vector product at the point, from one
    recorded gradient computation (reverse over reverse, as autograd).

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import make_hvp
    >>> hvp, g = make_hvp(lambda x: (x**3).sum())(np.array([1.0, 2.0]))
    >>> g, hvp(np.array([1.0, 0.0]))
    (array([ 3., 12.]), array([6., 0.]))
    """
    vjp, gradient = _core.make_vjp(grad(fun), x)
    return plain_function(vjp, plain), gradient


@nary
def value_and_grad(fun, x, plain=False):
    """``(value, gradient)`` of a scalar-output ``fun`` (what ``scipy.optimize.minimize`` takes
    with ``jac=True``).

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import value_and_grad
    >>> value_and_grad(lambda x: (x**2).sum())(np.array([1.0, 2.0]))
    (np.float64(5.0), array([2., 4.]))
    """
    vjp, ans = _core.make_vjp(fun, x)
    _check_size_one(ans, "value_and_grad")
    return ans, vjp(ones_like(ans))


@nary
def grad_and_aux(fun, x, plain=False):
    """``(gradient of the first output, the second output)`` of a ``fun`` returning two.

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import grad_and_aux
    >>> grad_and_aux(lambda x: ((x**2).sum(), x.max()))(np.array([1.0, 3.0]))
    (array([2., 6.]), np.float64(3.0))
    """
    ans, vjp_fn, aux = func.vjp(lambda v: tuple(fun(v)), x, has_aux=True)
    return conj_tree(vjp_fn(conj_tree(tree_map(ones_like, ans)))[0]), aux


def _half_squared_norm(x):
    return 0.5 * (x**2).sum(-1)


def make_ggnvp(f, g=_half_squared_norm, f_argnum=0):
    """A function of ``f``'s arguments returning ``ggnvp(v)``, the generalized Gauss-Newton
    product ``J_f^T H_g J_f v`` at the point (``g`` defaults to half the squared norm over the
    last axis, whose GGN is ``J^T J``).

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import make_ggnvp
    >>> ggnvp = make_ggnvp(lambda x: x**2)(np.array([1.0, 2.0]))  # g(y) = |y|^2 / 2
    >>> ggnvp(np.array([1.0, 0.0]))  # J^T J v with J = diag(2 x)
    array([4., 0.])
    """

    @nary
    def _make_ggnvp(f, x, plain=False):
        f_vjp, f_x = _core.make_vjp(f, x)
        g_hvp, grad_g_x = _core.make_vjp(grad(g), f_x)
        # (f_vjp is linear: its VJP at any point, zeros here, is f's JVP)
        f_jvp, _ = _core.make_vjp(f_vjp, zeros_tree(grad_g_x))

        def ggnvp(v):
            return f_vjp(g_hvp(f_jvp(v)))

        return plain_function(ggnvp, plain)

    return _make_ggnvp(f, f_argnum)


def _contract(a, b, count: int):
    """``np.tensordot(a, b, count)`` on tensors (arrays and numbers converted)."""
    return tensordot(leaf_to_tensor(a, "tensordot"), leaf_to_tensor(b, "tensordot"), count)


def hessian_tensor_product(fun, argnum=0):
    """A function of ``(*args, tensor)`` returning the Hessian of ``fun`` contracted with
    ``tensor`` (over all of its axes): the Hessian-vector product for a vector argument.

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import hessian_tensor_product
    >>> hvp = hessian_tensor_product(lambda x: (x**3).sum())
    >>> hvp(np.array([1.0, 2.0]), np.array([1.0, 1.0]))  # diag(6 x) @ v
    array([ 6., 12.])
    """
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return _contract(fun_grad(*args, **kwargs), vector, np.ndim(vector))

    return grad(vector_dot_grad, argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """A function of ``(*args, tensor)`` returning ``tensor`` contracted with the Jacobian of
    ``fun`` over ``tensor``'s axes (the vector-Jacobian product for a full-shape tensor).

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import tensor_jacobian_product
    >>> vjp = tensor_jacobian_product(lambda x: x**2)
    >>> vjp(np.array([1.0, 3.0]), np.array([1.0, 1.0]))  # v @ diag(2 x)
    array([2., 6.])
    """

    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return _contract(vector, fun(*args, **kwargs), np.ndim(vector))

    return jacobian(vector_dot_fun, argnum)


vector_jacobian_product = tensor_jacobian_product


def multigrad_dict(fun):
    """A function of ``fun``'s arguments returning an ``OrderedDict`` mapping each argument's
    name (defaults included) to its gradient.

    >>> import dualad
    >>> import numpy as np
    >>> from dualad.compat.autograd import multigrad_dict
    >>> def f(a, b=2.0):
    ...     return a * b
    >>> multigrad_dict(f)(3.0)
    OrderedDict([('a', np.float64(2.0)), ('b', np.float64(3.0))])
    """
    signature = inspect.signature(fun)
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                "dualad.compat.autograd.multigrad_dict: functions with *args or **kwargs are not "
                f"supported (parameter {param.name!r})"
            )

    @functools.wraps(fun)
    def gradfun(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        grads = grad(lambda values: fun(**values))(dict(bound.arguments))
        return OrderedDict((name, grads[name]) for name in bound.arguments)

    return gradfun


def checkpoint(fun):
    """``fun`` with the same values and derivatives, whose intermediate values are not kept
    for the backward pass of the tape but recomputed (``dualad.checkpoint``); under the
    ``dualad.func`` transforms (so under this module's operators) it keeps them.

    >>> import dualad
    >>> import dualad
    >>> from dualad.compat.autograd import checkpoint, grad
    >>> block = checkpoint(lambda x: dualad.numpy.sin(x) * x)
    >>> grad(lambda x: block(x).sum())(dualad.tensor([0.0, 1.0]))  # sin x + x cos x
    tensor([0.        , 1.38177329])
    """

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        out = _tape_checkpoint(fun, *args, **kwargs)
        plain = not (holds_tensor(args) or holds_tensor(kwargs))
        return tree_to_arrays(out) if plain else out

    return checkpointed


__all__ = [
    "checkpoint",
    "elementwise_grad",
    "grad",
    "grad_and_aux",
    "hessian",
    "hessian_tensor_product",
    "hessian_vector_product",
    "holomorphic_grad",
    "jacobian",
    "make_ggnvp",
    "make_hvp",
    "make_jvp",
    "make_vjp",
    "multigrad_dict",
    "tensor_jacobian_product",
    "value_and_grad",
    "vector_jacobian_product",
]
