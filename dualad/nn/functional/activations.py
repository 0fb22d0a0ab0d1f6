"""Activations and normalised exponentials of ``torch.nn.functional``, with its signatures.

The ops live in ``dualad.ops`` (``activations``, ``smooth_activations``, ``softmaxes``); this
module gives them PyTorch's functional names and keywords (``inplace=``, ``_stacklevel``) and the
in-place variants (``relu_``, ``elu_``, ...), which write the result into their input through the
tape's in-place machinery (so the graph stays correct).

hardsigmoid, hardswish, hardshrink, softshrink, threshold, prelu and glu are ops of their own
(``dualad/ops/piecewise_activations.py``, with PyTorch's derivatives at the kinks); rrelu is
``where`` over the pieces (at a kink, the piece PyTorch's backward picks there).
"""

from __future__ import annotations

from ... import ops
from ..._dtypes import get_default_dtype
from ..._random import rand
from ...rev.inplace import apply_inplace

__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "logsumexp",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rrelu",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]

logsumexp = ops.logsumexp
logsigmoid = ops.logsigmoid
softplus = ops.softplus
softsign = ops.softsign
tanhshrink = ops.tanhshrink
sigmoid = ops.sigmoid
tanh = ops.tanh


def _maybe_inplace(functional, x, inplace, *args, **params):
    if inplace:
        return apply_inplace(functional, x, *args, **params)
    return functional(x, *args, **params)


def relu(input, inplace: bool = False):
    """``max(x, 0)`` (gradient 0 at 0, PyTorch's convention); ``inplace=True`` writes into
    ``input``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.relu(dualad.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return _maybe_inplace(ops.relu, input, inplace)


def relu_(input):
    """In-place ``relu``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([-1.0, 2.0])
    >>> F.relu_(x) is x
    True
    >>> x
    tensor([0., 2.])
    """
    return apply_inplace(ops.relu, input)


def relu6(input, inplace: bool = False):
    """``min(max(x, 0), 6)`` (gradient 0 at the kinks 0 and 6).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.relu6(dualad.tensor([-1.0, 8.0]))
    tensor([0., 6.])
    """
    return _maybe_inplace(ops.relu6, input, inplace)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """``x`` for ``x > 0``, else ``alpha (exp(x) - 1)``; see ``dualad.elu``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.elu(dualad.tensor([-1.0, 1.0]), alpha=2.0)
    tensor([-1.26424112,  1.        ])
    """
    return _maybe_inplace(ops.elu, input, inplace, alpha)


def elu_(input, alpha: float = 1.0):
    """In-place ``elu``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([-1.0, 2.0])
    >>> F.elu_(x) is x
    True
    >>> x
    tensor([-0.63212056,  2.        ])
    """
    return apply_inplace(ops.elu, input, alpha)


def selu(input, inplace: bool = False):
    """Scaled ELU with the SELU constants; see ``dualad.selu``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.selu(dualad.tensor([1.0]))
    tensor([1.05070099])
    """
    return _maybe_inplace(ops.selu, input, inplace)


def selu_(input):
    """In-place ``selu``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([0.0, 1.0])
    >>> F.selu_(x) is x
    True
    >>> x
    tensor([0.        , 1.05070099])
    """
    return apply_inplace(ops.selu, input)


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``; see ``dualad.celu``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.celu(dualad.tensor([-1.0]))
    tensor([-0.63212056])
    """
    return _maybe_inplace(ops.celu, input, inplace, alpha)


def celu_(input, alpha: float = 1.0):
    """In-place ``celu``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([-1.0, 2.0])
    >>> F.celu_(x, alpha=2.0) is x
    True
    >>> x
    tensor([-0.78693868,  2.        ])
    """
    return apply_inplace(ops.celu, input, alpha)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``x`` for ``x > 0``, else ``negative_slope * x`` (gradient ``negative_slope`` at 0).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.leaky_relu(dualad.tensor([-1.0, 1.0]))
    tensor([-0.01,  1.  ])
    """
    return _maybe_inplace(ops.leaky_relu, input, inplace, negative_slope)


def leaky_relu_(input, negative_slope: float = 0.01):
    """In-place ``leaky_relu``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([-1.0, 2.0])
    >>> F.leaky_relu_(x, 0.1) is x
    True
    >>> x
    tensor([-0.1,  2. ])
    """
    return apply_inplace(ops.leaky_relu, input, negative_slope)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``input`` clamped to ``[min_val, max_val]`` (gradient 0 at and beyond the bounds).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.hardtanh(dualad.tensor([-3.0, 0.5]), -2.0, 2.0)
    tensor([-2. ,  0.5])
    """
    return _maybe_inplace(ops.hardtanh, input, inplace, min_val, max_val)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """In-place ``hardtanh``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([-3.0, 0.5, 2.0])
    >>> F.hardtanh_(x) is x
    True
    >>> x
    tensor([-1. ,  0.5,  1. ])
    """
    return apply_inplace(ops.hardtanh, input, min_val, max_val)


def gelu(input, approximate: str = "none"):
    """``x * Phi(x)``, or its tanh approximation (``approximate="tanh"``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.gelu(dualad.tensor([1.0]))
    tensor([0.84134475])
    """
    return ops.gelu(input, approximate=approximate)


def silu(input, inplace: bool = False):
    """``x * sigmoid(x)``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.silu(dualad.tensor([1.0]))
    tensor([0.73105858])
    """
    return _maybe_inplace(ops.silu, input, inplace)


def mish(input, inplace: bool = False):
    """``x * tanh(softplus(x))``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.mish(dualad.tensor([1.0]))
    tensor([0.86509839])
    """
    return _maybe_inplace(ops.mish, input, inplace)


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``; see ``dualad.softmax`` (an all ``-inf`` slice
    gives 0 with gradient 0; PyTorch gives NaN).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.softmax(dualad.tensor([[1.0, 1.0]]), dim=1)
    tensor([[0.5, 0.5]])
    """
    return ops.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``x - logsumexp(x)`` along ``dim``; see ``dualad.log_softmax`` (an all ``-inf`` slice
    gives ``-inf`` with gradient 0; PyTorch gives NaN).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.log_softmax(dualad.tensor([0.0, 0.0]), dim=0)
    tensor([-0.69314718, -0.69314718])
    """
    return ops.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``softmax(-x)`` along ``dim`` (an all ``+inf`` slice gives 0 with gradient 0).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.softmin(dualad.tensor([0.0, 1000.0]), dim=0)
    tensor([1., 0.])
    """
    return ops.softmax(ops.neg(input), dim, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# the piecewise activations: ops of their own (dualad/ops/piecewise_activations.py)


def hardsigmoid(input, inplace: bool = False):
    """``relu6(x + 3) / 6``: 0 up to -3, 1 from 3, linear between (gradient 1/6 strictly
    inside, 0 at and beyond -3 and 3, as in PyTorch).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.hardsigmoid(dualad.tensor([-4.0, 0.0, 1.5]))
    tensor([0.  , 0.5 , 0.75])
    """
    return _maybe_inplace(ops.hardsigmoid, input, inplace)


def hardswish(input, inplace: bool = False):
    """``x * relu6(x + 3) / 6`` (gradient 0 at and below -3, 1 at and above 3, as in PyTorch).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.hardswish(dualad.tensor([-4.0, 1.0, 4.0]))
    tensor([0.        , 0.66666667, 4.        ])
    """
    return _maybe_inplace(ops.hardswish, input, inplace)


def hardshrink(input, lambd: float = 0.5):
    """``x`` where ``|x| > lambd``, else 0 (gradient 0 at ``+-lambd``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.hardshrink(dualad.tensor([-1.0, 0.2, 0.7]))
    tensor([-1. ,  0. ,  0.7])
    """
    return ops.hardshrink(input, lambd)


def softshrink(input, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.softshrink(dualad.tensor([-1.0, 0.2, 0.7]))
    tensor([-0.5,  0. ,  0.2])
    """
    return ops.softshrink(input, lambd)


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``x`` where ``x > threshold``, else ``value`` (gradient 0 at and below the threshold).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.threshold(dualad.tensor([0.1, 0.5]), 0.2, -1.0)
    tensor([-1. ,  0.5])
    """
    return _maybe_inplace(ops.threshold, input, inplace, threshold, value)


def threshold_(input, threshold: float, value: float):
    """In-place ``threshold``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> x = dualad.tensor([0.5, 2.0])
    >>> F.threshold_(x, 1.0, -1.0) is x
    True
    >>> x
    tensor([-1.,  2.])
    """
    return apply_inplace(ops.threshold, input, threshold, value)


def prelu(input, weight):
    """``x`` where ``x > 0``, else ``weight * x``, with one learnable slope per channel (dim 1;
    dim 0 of a 1-d input) or one for all (``torch.nn.functional.prelu``); the gradient at 0 is
    the negative side's.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.prelu(dualad.tensor([[-1.0, 2.0], [-3.0, -0.5]]), dualad.tensor([0.25, 0.5]))
    tensor([[-0.25,  2.  ],
            [-0.75, -0.25]])
    """
    channels = 1 if input.ndim == 0 else input.shape[1 if input.ndim >= 2 else 0]
    count = weight.numel()
    if count != 1 and count != channels:
        raise ValueError(
            f"dualad.nn.functional.prelu: Mismatch of parameter numbers and input channel size. "
            f"Found parameter numbers = {count} and channel size = {channels}."
        )
    if count != 1 and input.ndim >= 2:
        weight = ops.reshape(weight, (channels,) + (1,) * (input.ndim - 2))
    elif count == 1:
        weight = ops.reshape(weight, ())
    return ops.prelu(input, weight)


def glu(input, dim: int = -1):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``input`` along
    ``dim``.

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.glu(dualad.tensor([1.0, -2.0, 0.0, 100.0]))
    tensor([ 0.5, -2. ])
    """
    return ops.glu(input, dim)


def rrelu(
    input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace=False
):
    """Randomized leaky ReLU: ``x`` above 0, ``slope * x`` at and below, the slope drawn
    uniformly from ``[lower, upper)`` per element when ``training`` (``dualad.rand``: vmap's
    randomness modes apply), else ``(lower + upper) / 2`` (``torch.nn.functional.rrelu``).

    >>> import dualad
    >>> import dualad.nn.functional as F
    >>> F.rrelu(dualad.tensor([-1.0, 2.0]), 0.1, 0.3)
    tensor([-0.2,  2. ])
    """
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if not lower <= upper:
        raise ValueError(
            f"dualad.nn.functional.rrelu: Lower bound should be less than or equal to the upper "
            f"bound (got lower={lower}, upper={upper})"
        )
    dtype = input.dtype if input.dtype.kind == "f" else get_default_dtype()
    slope = rand(tuple(input.shape), dtype=dtype, device=input.device) * (upper - lower) + lower

    def randomized(x):
        return ops.where(x <= 0, x * slope, x)

    return _maybe_inplace(randomized, input, inplace)
