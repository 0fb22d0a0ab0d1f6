"""autograd's ``test_util``: ``check_grads(fun, argnum=0, modes=["fwd", "rev"], order=2)``.

``check_grads(fun, modes=..., order=...)(*args)`` checks the derivatives of ``fun`` with
respect to ``args[argnum]`` (arrays, numbers or pytrees of them) against central finite
differences (step ``EPS``) along random directions, as autograd does: in reverse mode the
identity ``<u, vjp(v)> == <v, J u>`` for random ``u``, ``v`` (real inner products, autograd's
complex convention), in forward mode ``jvp(u) == J u``; for ``order > 1`` the same checks run
again on the JVP and VJP as functions of the point and the direction (derivatives of
derivatives). A failed check raises ``AssertionError`` with both values.

>>> import numpy as np
>>> from dualad.compat.autograd.test_util import check_grads
>>> check_grads(lambda x: (x**3).sum(), modes=["fwd", "rev"], order=2)(np.array([0.5, -1.2]))
"""

from __future__ import annotations

import numpy as np

from ..._creation import tensor
from ..._tensor import Tensor
from ..._tree import flatten, tree_map
from . import _core

TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6


def scalar_close(a, b) -> bool:
    """Whether two numbers agree to autograd's tolerances (absolute or relative).

    >>> from dualad.compat.autograd.test_util import scalar_close
    >>> scalar_close(1.0, 1.0 + 1e-9), scalar_close(1.0, 1.1)
    (True, False)
    """
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _randn_like(tree):
    def draw(leaf):
        shape = tuple(leaf.shape)
        if leaf.dtype.kind == "c":
            value = np.random.randn(*shape) + 1j * np.random.randn(*shape)
        else:
            value = np.random.randn(*shape)
        return tensor(np.asarray(value, dtype=leaf.dtype))

    return tree_map(draw, tree)


def _combine(a, b, alpha: float, beta: float):
    """``alpha * a + beta * b`` over two pytrees of the same structure."""
    b_leaves = flatten(b)[0]
    a_leaves, rebuild = flatten(a)
    return rebuild([alpha * u + beta * v for u, v in zip(a_leaves, b_leaves)])


def _inner(a, b) -> float:
    """The real inner product ``Re(sum(conj(a) * b))`` over two pytrees."""
    total = 0.0
    for u, v in zip(flatten(a)[0], flatten(b)[0]):
        u, v = _numpy(u), _numpy(v)
        total += float(np.real(np.vdot(u.ravel(), v.ravel())))
    return total


def _numpy(value):
    return value.detach().numpy() if isinstance(value, Tensor) else np.asarray(value)


def _vspace(tree):
    """What autograd's vector-space comparison looks at: structure, shapes, complexness."""
    leaves, _ = flatten(tree)
    kinds = tuple((np.shape(_numpy(v)), _numpy(v).dtype.kind == "c") for v in leaves)
    return len(leaves), kinds, repr(flatten(tree)[1]([None] * len(leaves)))


def _numerical_jvp(f, x):
    def jvp(v):
        plus = f(_combine(x, v, 1.0, EPS / 2))
        minus = f(_combine(x, v, 1.0, -EPS / 2))
        return _combine(plus, minus, 1.0 / EPS, -1.0 / EPS)

    return jvp


def _name(f) -> str:
    return getattr(f, "__name__", "[unknown name]")


def check_vjp(f, x) -> None:
    """``<u, vjp(v)>`` against ``<v, J u>`` by finite differences, random ``u``, ``v``.

    >>> import numpy as np
    >>> import dualad.numpy as dnp
    >>> from dualad.compat.autograd.test_util import check_vjp
    >>> check_vjp(dnp.tanh, np.array([0.1, 0.2]))  # None: the VJP agrees
    """
    vjp, y = _core.make_vjp(f, x)
    x_v, y_v = _randn_like(x), _randn_like(y)
    vjp_y = _core.conj_tree(vjp(_core.conj_tree(y_v)))
    if _vspace(vjp_y) != _vspace(x):
        raise AssertionError(
            f"VJP of {_name(f)} is not shaped like its argument: {_vspace(vjp_y)} vs {_vspace(x)}"
        )
    exact = _inner(x_v, vjp_y)
    numeric = _inner(y_v, _numerical_jvp(f, x)(x_v))
    if not scalar_close(numeric, exact):
        raise AssertionError(
            f"Derivative (VJP) check of {_name(f)} failed with arg {x}:\n"
            f"analytic: {exact}\nnumeric:  {numeric}"
        )


def check_jvp(f, x) -> None:
    """``jvp(u)`` against ``J u`` by finite differences, random ``u``.

    >>> import numpy as np
    >>> import dualad.numpy as dnp
    >>> from dualad.compat.autograd.test_util import check_jvp
    >>> check_jvp(dnp.tanh, np.array([0.1, 0.2]))  # None: the JVP agrees
    """
    x_v = _randn_like(x)
    check_equivalent(_core.make_jvp(f, x)(x_v)[1], _numerical_jvp(f, x)(x_v))


def check_equivalent(x, y) -> None:
    """Same structure and shapes, and close along a random direction.

    >>> import numpy as np
    >>> from dualad.compat.autograd.test_util import check_equivalent
    >>> check_equivalent(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]))
    >>> try:
    ...     check_equivalent(np.ones(2), np.ones(3))
    ... except AssertionError as error:
    ...     print(str(error).splitlines()[0])
    VSpace mismatch:
    """
    if _vspace(x) != _vspace(y):
        raise AssertionError(f"VSpace mismatch:\nx: {_vspace(x)}\ny: {_vspace(y)}")
    v = _randn_like(x)
    if not scalar_close(_inner(x, v), _inner(y, v)):
        raise AssertionError(f"Value mismatch:\nx: {x}\ny: {y}")


@_core.nary
def check_grads(f, x, modes=("fwd", "rev"), order=2, plain=False):
    """Check ``f``'s derivatives up to ``order`` in ``modes`` (see the module docstring).

    >>> import numpy as np
    >>> import dualad.numpy as dnp
    >>> from dualad.compat.autograd.test_util import check_grads
    >>> check = check_grads(lambda x: dnp.sin(x) * x, modes=["fwd", "rev"], order=2)
    >>> check(np.array([0.3, 0.4]))  # silent when the derivatives agree, AssertionError if not
    """
    if not all(m in ("fwd", "rev") for m in modes):
        raise ValueError(f"check_grads: modes are 'fwd' and 'rev', got {modes!r}")
    if "fwd" in modes:
        check_jvp(f, x)
        if order > 1:

            def jvp_f(x, v):
                return _core.make_jvp(f, x)(v)[1]

            jvp_f.__name__ = f"jvp_{_name(f)}"
            check_grads(jvp_f, (0, 1), modes, order=order - 1)(x, _randn_like(x))
    if "rev" in modes:
        check_vjp(f, x)
        if order > 1:

            def vjp_f(x, v):
                return _core.make_vjp(f, x)[0](v)

            vjp_f.__name__ = f"vjp_{_name(f)}"
            check_grads(vjp_f, (0, 1), modes, order=order - 1)(x, _randn_like(f(x)))


__all__ = ["check_equivalent", "check_grads", "check_jvp", "check_vjp", "scalar_close"]
