"""The gamma function family: gammaln (lgamma), digamma, polygamma, multigammaln (mvlgamma),
gammainc (igamma), gammaincc (igammac), betaln, zeta.

Values come from ``scipy.special`` (``cupyx.scipy.special`` on CuPy), computed in float64 and
returned in the input's dtype (also for polygamma and multigammaln, which scipy returns in
float64 for float32 input). Real inputs only. The derivatives are written in dualad ops and
chain into each other (gammaln' = digamma, digamma' = polygamma(1, .), polygamma(n)' =
polygamma(n + 1, .)), so every order works.

Arguments without a derivative here (gammainc's and gammaincc's ``a``, zeta's order ``x``) raise
``NotImplementedError`` when a derivative with respect to them is asked for (forward mode at the
call, reverse mode at the backward pass); as constants (plain tensors, numbers, batched by vmap)
they are fine. The integer orders of polygamma and multigammaln are static Python integers.
"""

from __future__ import annotations

import math as _math
import numbers

import numpy as np
import scipy.special

from .._dispatch import apply1
from .._tensor import Tensor
from ._exports import Exports
from ._helpers import _sum_tangents, _unary_with_params, binary, unary
from ._promotion import _float_array, _float_operands, _reject_complex
from .special import _no_derivative, _special_binary_impl, _special_impl, _special_module

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _untracked_item(
    name: str, argument: str, value, kind: str = "an integer order", unit="integer"
):
    """``value``, or the number in a one-element tensor that carries no derivative: a static
    argument (``kind``) without a derivative raises when it is tracked or batched."""
    if isinstance(value, Tensor):
        if value.requires_grad or value._fw or type(value) is not Tensor:
            raise NotImplementedError(
                f"dualad.{name}: {argument} is {kind} without a derivative, but a tracked or "
                f"batched tensor was given; pass a Python {unit}"
            )
        if value.numel() != 1:
            raise ValueError(
                f"dualad.{name}: {argument} must be one {unit}, got a tensor of shape "
                f"{tuple(value.shape)}"
            )
        value = value.item()
    return value


def _static_int(name: str, argument: str, value, minimum: int) -> int:
    """An integer order given as a Python/NumPy integer (or an integral float, or a one-element
    tensor that carries no derivative) as a Python int, at least ``minimum``."""
    value = _untracked_item(name, argument, value)
    integral = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if integral and float(value).is_integer() and int(value) >= minimum:
        return int(value)
    raise ValueError(f"dualad.{name}: {argument} must be an integer >= {minimum}, got {value!r}")


# ---------------------------------------------------------------------------------------------
# gammaln, digamma, polygamma


gammaln = public.inplace(
    unary(
        "gammaln",
        _special_impl("gammaln"),
        lambda x, y: digamma(x),
        doc="""``log|Gamma(x)|`` (scipy's ``gammaln``, PyTorch's ``lgamma``). Poles (+inf, the
    derivative nan) at 0, -1, -2, ...; the derivative is ``digamma(x)``.

    >>> import dualad
    >>> x = dualad.tensor([0.5, 3.0], requires_grad=True)
    >>> dualad.gammaln(x)
    tensor([0.57236494, 0.69314718], grad_fn=<GammalnBackward0>)
    >>> dualad.autograd.grad(dualad.gammaln(x).sum(), x)
    (tensor([-1.96351003,  0.92278434]),)
    """,
    )
)
lgamma = public.inplace(gammaln, "lgamma")

digamma = public.inplace(
    unary(
        "digamma",
        _special_impl("digamma"),
        lambda x, y: polygamma(1, x),
        doc="""``psi(x) = d/dx log Gamma(x)``; poles at 0, -1, -2, ... (scipy gives -inf at 0 and
    nan at the negative integers). Its derivative is ``polygamma(1, x)``.

    >>> import dualad
    >>> dualad.digamma(dualad.tensor([1.0, 0.5]))
    tensor([-0.57721566, -1.96351003])
    """,
    )
)


def _polygamma_impl(xp, x, *, n):
    x = _float_array(x)
    _reject_complex("polygamma", x)
    wide = x.astype(np.float64, copy=False)
    if xp is np and n == 1:
        out = _trigamma(wide)
    else:
        # (n as an array: cupyx's polygamma compares it as one, and a Python int breaks it)
        out = _special_module(xp).polygamma(xp.asarray(n), wide)
    return xp.asarray(out).astype(x.dtype, copy=False)


# B_2k of the asymptotic series polygamma(1, z) ~ 1/z + 1/(2 z**2) + sum_k B_2k / z**(2k+1):
# exact to double precision for z >= 12
_TRIGAMMA_SERIES = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _trigamma(x):
    """polygamma(1, x) of a float64 array, as scipy's to a few ulp but faster (scipy goes
    through the Hurwitz zeta function; this is digamma's derivative, on every backward pass):
    polygamma(1, z) = sum_{j<12} 1/(z + j)**2 + polygamma(1, z + 12), the asymptotic series at
    z + 12 >= 12, and for x < 0 the reflection pi**2 / sin(pi x)**2 - polygamma(1, 1 - x)."""
    negative = x < 0
    z = np.where(negative, 1.0 - x, x)
    total = np.zeros_like(z)
    term = np.empty_like(z)
    with np.errstate(divide="ignore", over="ignore"):
        for j in range(12):  # (in place: this loop is the cost)
            np.add(z, float(j), out=term)
            np.multiply(term, term, out=term)
            np.divide(1.0, term, out=term)
            total += term
        z = z + 12.0
        u = 1.0 / (z * z)
        series = 0.0
        for coefficient in reversed(_TRIGAMMA_SERIES):
            series = (series + coefficient) * u
        total += 1.0 / z + 0.5 * u + series / z
        if negative.any():
            # sin(pi x) from x's distance to the nearest integer (exact): no loss for large |x|
            with np.errstate(invalid="ignore"):
                pole = (np.pi / np.sin(np.pi * (x - np.round(x)))) ** 2
            total = np.where(negative, pole - total, total)
            total = np.where(x == -np.inf, np.inf, total)  # scipy's value there
    return total


_polygamma_op = _unary_with_params(
    "polygamma", _polygamma_impl, lambda x, y, *, n: polygamma(n + 1, x)
)


@public.function
def polygamma(n, x):
    """``polygamma(n, x)``: the n-th derivative of ``digamma`` (``polygamma(0, x)`` is
    ``digamma(x)``), for a static integer ``n >= 0`` (scipy also takes arrays of orders; here one
    order per call). Poles at 0, -1, -2, ...; the derivative in x is ``polygamma(n + 1, x)``;
    ``n`` has none (it is an integer).

    >>> import dualad
    >>> dualad.polygamma(1, dualad.tensor([1.0, 2.0]))
    tensor([1.64493407, 0.64493407])
    """
    n = _static_int("polygamma", "n", n, 0)
    if n == 0:
        return digamma(x)
    return apply1(_polygamma_op, x, {"n": n})


def _multigammaln_impl(xp, a, *, d):
    a = _float_array(a)
    _reject_complex("multigammaln", a)
    # scipy's condition (and its ValueError): every a > (d - 1) / 2
    if bool(xp.any(a <= 0.5 * (d - 1))):
        raise ValueError(
            f"dualad.multigammaln: condition a > (d - 1) / 2 = {0.5 * (d - 1)} not met for "
            f"every element of a (d = {d})"
        )
    special = _special_module(xp)
    wide = a.astype(np.float64, copy=False)  # summed in float64, rounded once
    total = special.gammaln(wide)
    for j in range(1, d):
        total = total + special.gammaln(wide - 0.5 * j)
    total = total + d * (d - 1) / 4 * _math.log(_math.pi)
    return xp.asarray(total).astype(a.dtype, copy=False)


def _multigammaln_deriv(a, y, *, d):
    total = digamma(a)
    for j in range(1, d):
        total = total + digamma(a - 0.5 * j)
    return total


_multigammaln_op = _unary_with_params("multigammaln", _multigammaln_impl, _multigammaln_deriv)


@public.method
def multigammaln(a, d):
    """Log of the multivariate gamma function of dimension ``d`` (a static integer >= 1):
    ``d (d-1)/4 log(pi) + sum_{j<d} gammaln(a - j/2)``; PyTorch's ``mvlgamma(a, p)``.
    Every ``a`` must exceed ``(d - 1) / 2`` (ValueError otherwise, as scipy). The derivative in
    ``a`` is ``sum_{j<d} digamma(a - j/2)``.

    >>> import dualad
    >>> dualad.multigammaln(dualad.tensor([2.5, 4.0]), 3)
    tensor([1.88099546, 5.40297508])
    """
    d = _static_int("multigammaln", "d", d, 1)
    return apply1(_multigammaln_op, a, {"d": d})


mvlgamma = public.method(multigammaln, "mvlgamma")


# ---------------------------------------------------------------------------------------------
# regularised incomplete gamma functions, betaln


def _gamma_density_impl(xp, a, x):
    _reject_complex("gammainc", a, x)
    a, x = _float_operands(xp, a, x)
    wide_a, wide_x = a.astype(np.float64, copy=False), x.astype(np.float64, copy=False)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # x**(a-1) exp(-x) / Gamma(a) in logs; x**0 = 1 at x = 0 (the limit for a == 1)
        power = xp.where((wide_x == 0) & (wide_a == 1), 0.0, (wide_a - 1) * xp.log(wide_x))
        out = xp.exp(power - wide_x - _special_module(xp).gammaln(wide_a))
        gamma_sign = 1.0 - 2.0 * (xp.ceil(-wide_a) % 2)  # (-1)**ceil(-a): Gamma's sign, a < 0
        out = xp.where(wide_a > 0, out, gamma_sign * out)
        # 1/Gamma(a) = 0 at its poles a = 0, -1, ...; no density mass left at x = inf
        pole = (wide_a <= 0) & (wide_a == xp.floor(wide_a))
        out = xp.where(pole | (wide_x == xp.inf), 0.0, out)
    return out.astype(a.dtype, copy=False)


# d/dx gammainc(a, x) = x**(a-1) exp(-x) / Gamma(a), as an op of its own whose derivative in x
# is gamma_density(a - 1, x) - gamma_density(a, x): every order is then right at x = 0 too (the
# one-sided limits: 0, 1 or inf at first order as a > 1, == 1 or < 1), where the derivatives of
# a formula in x**(a-1) would be 0 * inf or 0 / 0
_gamma_density = binary(
    "gamma_density",
    _gamma_density_impl,
    (
        _no_derivative("gammainc", "a", "its derivative in a has no closed form"),
        lambda a, x, y: _gamma_density(a - 1, x) - y,
    ),
    uses="aby",
    doc="The gamma density ``x**(a-1) exp(-x) / Gamma(a)``: gammainc's derivative in x.",
)


_A_WHY = "the derivative of the incomplete gamma function in its parameter a has no closed form"

gammainc = public.method(
    binary(
        "gammainc",
        _special_binary_impl("gammainc"),
        (_no_derivative("gammainc", "a", _A_WHY), lambda a, x, y: _gamma_density(a, x)),
        doc="""Regularised lower incomplete gamma function ``P(a, x)`` (PyTorch's ``igamma``)
    for ``a > 0``, ``x >= 0`` (nan outside). Differentiable in ``x`` only: the derivative
    ``x**(a-1) exp(-x) / Gamma(a)`` is, at ``x = 0``, its one-sided limit (0 for a > 1, 1 for
    a = 1, inf for a < 1), and so are the derivatives of every order there. A tracked ``a``
    raises ``NotImplementedError`` when its derivative is needed.

    >>> import dualad
    >>> x = dualad.tensor([0.5, 2.0], requires_grad=True)
    >>> dualad.gammainc(2.0, x)
    tensor([0.09020401, 0.59399415], grad_fn=<GammaincBackward0>)
    >>> dualad.autograd.grad(dualad.gammainc(2.0, x).sum(), x)
    (tensor([0.30326533, 0.27067057]),)
    """,
    )
)
igamma = public.method(gammainc, "igamma")

gammaincc = public.method(
    binary(
        "gammaincc",
        _special_binary_impl("gammaincc"),
        (_no_derivative("gammaincc", "a", _A_WHY), lambda a, x, y: -_gamma_density(a, x)),
        doc="""Regularised upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)`` (PyTorch's
    ``igammac``), accurate where P is close to 1. Differentiable in ``x`` only (the negative of
    ``gammainc``'s derivative, with its limits at ``x = 0``); a tracked ``a`` raises
    ``NotImplementedError`` when its derivative is needed.

    >>> import dualad
    >>> dualad.gammaincc(2.0, dualad.tensor([0.5, 30.0]))
    tensor([9.09795990e-01, 2.90086312e-12])
    """,
    )
)
igammac = public.method(gammaincc, "igammac")


def _betaln_vjp(cts, outs, args, params, needs):
    # the partials digamma(a) - digamma(a + b) and digamma(b) - digamma(a + b), with the
    # digamma(a + b) they share computed once
    a, b = args
    shared = digamma(a + b)
    grad_a = cts[0] * (digamma(a) - shared) if needs[0] else None
    grad_b = cts[0] * (digamma(b) - shared) if needs[1] else None
    return grad_a, grad_b


def _betaln_jvp(tangents, outs, args, params):
    a, b = args
    t_a, t_b = tangents
    shared = digamma(a + b)
    terms = (
        None if t_a is None else t_a * (digamma(a) - shared),
        None if t_b is None else t_b * (digamma(b) - shared),
    )
    return _sum_tangents(terms, outs[0])


betaln = public.method(
    binary(
        "betaln",
        _special_binary_impl("betaln"),
        (
            lambda a, b, y: digamma(a) - digamma(a + b),
            lambda a, b, y: digamma(b) - digamma(a + b),
        ),
        rules=(_betaln_vjp, _betaln_jvp),
        doc="""``log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``, without the
    overflow of the Gamma functions. Partials ``digamma(a) - digamma(a + b)`` and
    ``digamma(b) - digamma(a + b)``; poles where a or b is 0, -1, -2, ...

    >>> import dualad
    >>> a = dualad.tensor(2.0, requires_grad=True)
    >>> dualad.betaln(a, 3.0)
    tensor(-2.48490665, grad_fn=<BetalnBackward0>)
    >>> dualad.autograd.grad(dualad.betaln(a, 3.0), a)
    (tensor(-1.08333333),)
    """,
    )
)


# ---------------------------------------------------------------------------------------------
# zeta

_X_WHY = "the derivative of the zeta function in its order x has no closed form"

zeta = public.method(
    binary(
        "zeta",
        _special_binary_impl("zeta"),
        (_no_derivative("zeta", "x", _X_WHY), lambda x, q, y: -x * zeta(x + 1, q)),
        doc="""Hurwitz zeta function ``zeta(x, q) = sum_k (k + q)**-x`` for ``x > 1`` (nan for
    ``x < 1``, inf at ``x == 1``; poles at q = 0, -1, ...). Differentiable in ``q`` only:
    ``-x zeta(x + 1, q)``; a tracked ``x`` raises ``NotImplementedError`` when its derivative is
    needed. ``dualad.special.zeta(x)`` (no q) is Riemann's zeta function.

    >>> import dualad
    >>> q = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dualad.zeta(2.0, q)
    tensor([1.64493407, 0.64493407], grad_fn=<ZetaBackward0>)
    >>> dualad.autograd.grad(dualad.zeta(2.0, q).sum(), q)
    (tensor([-2.40411381, -0.40411381]),)
    """,
    )
)


# Riemann's zeta function (zeta(x) of dualad.special): its only argument is the order, which
# has no derivative here; the name starts with _ so that only the facade exports it
def _riemann_zeta_impl(xp, x):
    x = _float_array(x)
    _reject_complex("zeta", x)
    wide = x.astype(np.float64, copy=False)
    if xp is np:
        return np.asarray(scipy.special.zeta(wide), dtype=x.dtype)
    # cupyx.scipy.special.zeta is Hurwitz's only; its zetac (zeta - 1) is Riemann's, for all x
    from cupyx.scipy.special import zetac  # CuPy's SciPy functions: imported on first GPU use

    return (1.0 + zetac(wide)).astype(x.dtype, copy=False)


_riemann_zeta = unary(
    "riemann_zeta",
    _riemann_zeta_impl,
    _no_derivative("zeta", "x", _X_WHY),
    doc="Riemann's zeta function (continued to x < 1); not differentiable in x (raises).",
)
