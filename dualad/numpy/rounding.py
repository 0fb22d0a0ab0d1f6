"""NumPy's rounding functions that are not ufuncs: ``round`` (``around``) with ``decimals``
and ``fix`` (round towards zero). Piecewise constant, like dualad's ``round`` and ``trunc``
ops they are made of: their derivative is zero wherever it exists (between the jumps), so
results stay in the graph with zero gradients, as PyTorch and JAX give.

>>> import dualad, dualad.numpy as dnp
>>> dnp.round(dualad.tensor([1.25, -2.5]), 1), dnp.fix(dualad.tensor([-1.5, 2.7]))
(tensor([ 1.2, -2.5]), tensor([-1.,  2.]))
"""

from __future__ import annotations

import operator

from .. import ops
from .._dispatch import REGISTRY
from ._nondiff import arg, no_out, uses

__all__ = ["around", "fix", "round"]


@uses(REGISTRY["round"])
def round(a, decimals=0, out=None):
    """``a`` rounded half to even to ``decimals`` decimal places (negative: tens, hundreds).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.25, 2.5, -0.75], requires_grad=True)
    >>> dnp.round(x)
    tensor([ 1.,  2., -1.], grad_fn=<RoundBackward0>)
    """
    no_out("round", out)
    a = arg(a)
    return ops.round(a, operator.index(decimals))


@uses(REGISTRY["round"])
def around(a, decimals=0, out=None):
    """``round`` under its older name.

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.25, 2.5, -0.75], requires_grad=True)
    >>> dnp.around(x, 1)
    tensor([ 1.2,  2.5, -0.8], grad_fn=<RoundBackward0>)
    """
    no_out("around", out)
    return round(a, decimals)


@uses(REGISTRY["trunc"])
def fix(x, out=None):
    """``x`` rounded towards zero (integers stay integers).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.7, -1.7], requires_grad=True)
    >>> dnp.fix(x)
    tensor([ 1., -1.], grad_fn=<TruncBackward0>)
    """
    no_out("fix", out)
    x = arg(x)
    return x if x.dtype.kind in "iub" else ops.trunc(x)
