"""``dualad.special``: special functions (values from ``scipy.special``), differentiable.

scipy.special's names and signatures (PyTorch's ``torch.special`` uses the same names; ``psi``
is ``digamma``). Every function is an op of ``dualad.ops`` with VJP, JVP and batching rules,
except ``logsumexp`` with ``b=``/``return_sign=`` and scipy's ``softmax``/``log_softmax``
(every axis by default), composed of ops here. The core set below is also exported as
``dualad.<name>`` (``kl_div`` only here); of it, real inputs only, except ``expit``,
``logit``, ``logsumexp`` without ``b``/``return_sign``, and ``sinc``.

The modules ``gamma_family`` (gamma, loggamma, rgamma, poch, beta, betainc, the incomplete
gamma and beta inverses, ...), ``elementary`` (exprel, powm1, boxcox, huber, owens_t, ...),
``distributions`` (stdtr, chdtr, gdtr, fdtr, pdtr, bdtr, nbdtr, ... and their inverses) and
``polynomials`` (eval_chebyt, eval_legendre, eval_jacobi, ...) add ops exported here only (no
``dualad.<name>``: ``dualad.gamma`` or ``dualad.beta`` would read as distributions); gamma,
loggamma, rgamma and the polynomials (not the Hermite ones) take complex inputs too. The
modules ``bessel`` (j0 ... kve; complex for jv, yv, iv, kv), ``airy_functions``,
``spherical_bessel``, ``integrals`` (expi, exp1, expn, sici, shichi, fresnel, dawsn, erfi),
``elliptic``, ``hypergeometric`` (hyp0f1, hyp1f1, hyp2f1, hyperu, struve, modstruve) and
``kelvin`` add ops exported here only as well; each function's docstring says which
inputs may be complex and where its singular points are.

Arguments without a derivative (gammainc's ``a``, zeta's ``x``, polygamma's ``n``) raise
``NotImplementedError`` when their derivative is needed; integer orders are static Python ints.

>>> import dualad
>>> import dualad.special as special
>>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
>>> special.gammaln(x)
tensor([0.57236494, 0.        ], grad_fn=<GammalnBackward0>)
>>> dualad.autograd.grad(special.gammaln(x).sum(), x)
(tensor([-1.96351003,  0.42278434]),)
"""

from __future__ import annotations

from .._creation import as_tensor
from .._dtypes import result_type
from ..ops import (
    abs,
    amax,
    betaln,
    digamma,
    entr,
    eq,
    erf,
    erfc,
    erfcinv,
    erfcx,
    erfinv,
    exp,
    expit,
    gammainc,
    gammaincc,
    gammaln,
    i0,
    i0e,
    i1,
    i1e,
    isfinite,
    log,
    log_ndtr,
    logit,
    movedim,
    multigammaln,
    ndtr,
    ndtri,
    polygamma,
    rel_entr,
    sign,
    sinc,
    where,
    xlog1py,
    xlogy,
)
from ..ops import log_softmax as log_softmax_op
from ..ops import logsumexp as _logsumexp_op
from ..ops import softmax as softmax_op
from ..ops import sum as _sum
from ..ops import zeta as _hurwitz_zeta
from ..ops.entropies import _kl_div
from ..ops.gamma_functions import _riemann_zeta

__all__ = [
    "betaln",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcinv",
    "erfcx",
    "erfinv",
    "expit",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "logit",
    "logsumexp",
    "log_softmax",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "rel_entr",
    "sinc",
    "softmax",
    "xlog1py",
    "xlogy",
    "zeta",
]

psi = digamma


def kl_div(x, y):
    """scipy's elementwise ``kl_div``: ``x log(x / y) - x + y`` for x, y > 0; ``y`` for x = 0
    and y >= 0; inf otherwise (not ``nn.functional.kl_div``, the loss). Partials ``log(x / y)``
    (-inf at x = 0, the one-sided limit) and ``1 - x / y``.

    >>> import dualad
    >>> from dualad.special import kl_div
    >>> kl_div(dualad.tensor([0.0, 0.5]), 0.25)
    tensor([0.25      , 0.09657359])
    """
    return _kl_div(x, y)


def zeta(x, q=None):
    """The Hurwitz zeta function ``zeta(x, q)`` (differentiable in ``q``), or with ``q`` None
    Riemann's zeta function (continued to ``x < 1``; ``zeta(1) = inf``). The order ``x`` has no
    derivative: a tracked ``x`` raises ``NotImplementedError`` when its derivative is needed.

    >>> import dualad
    >>> from dualad.special import zeta
    >>> zeta(dualad.tensor([2.0, -1.0]))
    tensor([ 1.64493407, -0.08333333])
    """
    if q is None:
        return _riemann_zeta(x)
    return _hurwitz_zeta(x, q)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, *, dim=None, keepdim=None):
    """``log(sum(b * exp(a)))`` over ``axis`` (all axes by default), computed stably; scipy's
    signature (``dim=``/``keepdim=`` are accepted too). With ``b`` (weights broadcast against
    ``a``; terms with ``b == 0`` are left out, even where ``a`` is inf) the sum may be negative:
    the result is then nan, unless ``return_sign=True``, which returns ``(log|sum|,
    sign(sum))``. Over only -inf terms the result is -inf and its gradient 0 (not nan); a sum
    that cancels to 0 gives -inf with an infinite gradient. ``b`` and ``return_sign`` need real
    input.

    >>> import dualad
    >>> from dualad.special import logsumexp
    >>> a = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> logsumexp(a, b=dualad.tensor([1.0, -2.0]), return_sign=True)
    (tensor(1.48988013, grad_fn=<ViewBackward0>), tensor(-1., grad_fn=<ViewBackward0>))
    >>> dualad.autograd.grad(logsumexp(a, b=dualad.tensor([2.0, 1.0])), a)
    (tensor([0.42388312, 0.57611688]),)
    """
    axis = _one_of("axis", axis, "dim", dim, None)
    keepdims = bool(_one_of("keepdims", keepdims, "keepdim", keepdim, False))
    a = as_tensor(a)
    if b is None and not return_sign:
        return _logsumexp_op(a, axis, keepdims)
    b = None if b is None else as_tensor(b)
    if a.dtype.kind == "c" or (b is not None and b.dtype.kind == "c"):
        raise TypeError(
            "dualad.special.logsumexp: b= and return_sign= are not supported for complex input"
        )
    a = a.to(dtype=result_type(a, 1.0) if b is None else result_type(a, b, 1.0))
    if b is not None:
        b = b.to(dtype=a.dtype)
        a = where(eq(b, 0), -float("inf"), a)  # scipy leaves out the terms with b == 0
    # the shift changes nothing mathematically: a constant (no derivative), finite or 0
    peak = amax(a.detach(), dim=axis, keepdim=True)
    none = eq(peak, -float("inf"))  # no term: -inf with gradient 0
    shift = where(isfinite(peak), peak, 0.0)
    terms = exp(a - shift)
    total = _sum(terms if b is None else b * terms, dim=axis, keepdim=True)
    magnitude = abs(where(none, 1.0, total))
    out = where(none, -float("inf"), log(magnitude) + shift)
    sign_ = sign(total)  # (zero derivatives, as a tracked output of its own)
    if not return_sign:
        out = where(sign_ < 0, float("nan"), out)
    if not keepdims:
        out, sign_ = _squeeze(out, a.ndim, axis), _squeeze(sign_, a.ndim, axis)
    return (out, sign_) if return_sign else out


def _over_axes(op, x, axis):
    """``op`` (``dualad.softmax``/``log_softmax``) over ``axis`` as scipy reads it: ``None``
    is every axis, a tuple several (moved last and flattened into one)."""
    x = as_tensor(x)
    if isinstance(axis, int):
        return op(x, dim=axis)
    axes = tuple(range(x.ndim)) if axis is None else tuple(ax % x.ndim for ax in axis)
    if x.ndim == 0:
        return op(x, dim=0)
    rest = [d for d in range(x.ndim) if d not in axes]
    moved = movedim(x, axes, tuple(range(len(rest), x.ndim)))
    lead = tuple(moved.shape[: len(rest)])
    out = op(moved.reshape((*lead, -1)), dim=-1).reshape(moved.shape)
    return movedim(out, tuple(range(len(rest), x.ndim)), axes)


def softmax(x, axis=None):
    """scipy's ``softmax``: ``exp(x) / sum(exp(x))`` over ``axis`` (every axis by default, unlike
    ``dualad.softmax``, whose ``dim`` is PyTorch's; a tuple of axes normalises over them
    jointly). A slice of only -inf gives 0 with gradient 0 (``dualad.softmax``'s rule).

    >>> import dualad
    >>> from dualad.special import softmax
    >>> softmax(dualad.tensor([[0.0, 0.0], [0.0, 0.0]]))
    tensor([[0.25, 0.25],
            [0.25, 0.25]])
    """
    return _over_axes(softmax_op, x, axis)


def log_softmax(x, axis=None):
    """scipy's ``log_softmax``: ``x - logsumexp(x)`` over ``axis`` (every axis by default; see
    ``softmax``). A slice of only -inf gives -inf with gradient 0.

    >>> import dualad
    >>> from dualad.special import log_softmax
    >>> log_softmax(dualad.tensor([0.0, 0.0]), axis=0)
    tensor([-0.69314718, -0.69314718])
    """
    return _over_axes(log_softmax_op, x, axis)


def _one_of(name, value, alias, alias_value, default):
    """``value`` or its PyTorch spelling ``alias_value`` (not both)."""
    if alias_value is None:
        return value
    if value is not default and value is not None:
        raise TypeError(f"dualad.special.logsumexp: got both {name}= and {alias}=")
    return alias_value


def _squeeze(t, ndim, axis):
    if axis is None:
        return t.reshape(())
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return t.squeeze(tuple(sorted(ax % ndim for ax in axes)))


# subjects in modules of their own (one import each; their names join __all__)
from . import gamma_family  # noqa: E402
from .gamma_family import *  # noqa: E402

__all__ += gamma_family.__all__
from . import elementary  # noqa: E402
from .elementary import *  # noqa: E402

__all__ += elementary.__all__
from . import distributions  # noqa: E402
from .distributions import *  # noqa: E402

__all__ += distributions.__all__
from . import polynomials  # noqa: E402
from .polynomials import *  # noqa: E402

__all__ += polynomials.__all__
from . import bessel as _bessel_module  # noqa: E402 (the families added after the core set)
from .bessel import *  # noqa: E402

__all__ += _bessel_module.__all__

from . import airy_functions as _airy_module  # noqa: E402 (not .airy: the function's name)
from .airy_functions import *  # noqa: E402

__all__ += _airy_module.__all__

from . import spherical_bessel as _spherical_module  # noqa: E402
from .spherical_bessel import *  # noqa: E402

__all__ += _spherical_module.__all__

from . import integrals as _integrals_module  # noqa: E402
from .integrals import *  # noqa: E402

__all__ += _integrals_module.__all__

from . import elliptic as _elliptic_module  # noqa: E402
from .elliptic import *  # noqa: E402

__all__ += _elliptic_module.__all__

from . import hypergeometric as _hypergeometric_module  # noqa: E402
from .hypergeometric import *  # noqa: E402

__all__ += _hypergeometric_module.__all__

from . import kelvin as _kelvin_module  # noqa: E402
from .kelvin import *  # noqa: E402

__all__ += _kelvin_module.__all__
