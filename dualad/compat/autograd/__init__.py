"""HIPS autograd's interface on dualad: switch by changing two imports.

.. code-block:: python

    import autograd.numpy as np          ->  import dualad.numpy as np
    from autograd import grad            ->  from dualad.compat.autograd import grad
    from autograd.test_util import ...   ->  from dualad.compat.autograd.test_util import ...

The operators (``grad``, ``elementwise_grad``, ``jacobian``, ``hessian``, ``holomorphic_grad``,
``value_and_grad``, ``grad_and_aux``, ``make_vjp``, ``make_jvp``, ``make_hvp``, ``make_ggnvp``,
``hessian_tensor_product``/``hessian_vector_product``,
``tensor_jacobian_product``/``vector_jacobian_product``, ``multigrad_dict``, ``checkpoint``)
have autograd's signatures and semantics: ``grad(fun, argnum=0)`` returns a function of
``fun``'s arguments; ``argnum`` may be a tuple (the result is then a tuple); ``grad`` of an
output with more than one element raises ``TypeError``; ``jacobian``'s result has shape
``out.shape + in.shape``; ``make_vjp`` returns ``(vjp, value)``; keyword arguments go to
``fun`` untouched. Arguments may be arrays, numbers or tuples/lists/dicts of them; with no
Tensor among them, results are NumPy arrays (0-d ones NumPy scalars, like autograd's
``np.float64`` gradients of Python floats). They are built on ``dualad.func``, so they compose
with each other and with dualad's transforms.

Complex numbers. For a real-valued ``f(z)`` of complex ``z = x + iy``, autograd defines
``grad(f)(z) = df/dx - i df/dy``; dualad (like PyTorch) returns the conjugate,
``df/dx + i df/dy`` (the direction of steepest ascent). For a holomorphic ``f``, autograd's
``grad(f)`` (of its real part) is the complex derivative ``f'(z)``; dualad's is ``conj(f'(z))``.
Generally autograd's VJP of a cotangent ``g`` is ``conj(vjp(conj(g)))`` of dualad's. This
module returns AUTOGRAD's values (``dualad.func`` keeps dualad's); on real numbers they agree.

>>> import numpy as np
>>> from dualad.compat.autograd import grad, holomorphic_grad, jacobian
>>> grad(lambda x: (x**2).sum())(np.array([1.0, 2.0]))
array([2., 4.])
>>> grad(lambda z: abs(z) ** 2)(1.0 + 2.0j)  # autograd's 2*conj(z); dualad.func's: 2*z
np.complex128(2-4j)
>>> holomorphic_grad(lambda z: z**3)(1.0 + 1.0j)  # 3 z**2
np.complex128(6j)
>>> jacobian(lambda x: x * 2.0)(np.ones(2))
array([[2., 0.],
       [0., 2.]])
"""

from __future__ import annotations

from . import differential_operators, test_util
from .differential_operators import *  # noqa: F403 (the names of __all__ below)

__all__ = [*differential_operators.__all__, "test_util"]
