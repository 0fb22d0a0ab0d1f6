"""Classical orthogonal polynomials in ``dualad.special``: eval_chebyt, eval_chebyu,
eval_chebyc, eval_chebys, eval_legendre, eval_sh_legendre, eval_laguerre, eval_genlaguerre,
eval_hermite, eval_hermitenorm, eval_gegenbauer, eval_jacobi, eval_sh_chebyt, eval_sh_chebyu,
eval_sh_jacobi (scipy's names and signatures).

Each is one op of ``dualad.ops`` (``orthogonal_polynomials``), differentiable in ``x`` at every
order; the degree ``n`` is a static integer and ``alpha``/``beta`` static numbers (scipy also
takes arrays of degrees; here one per call).
"""

from __future__ import annotations

from ..ops.orthogonal_polynomials import polynomial

__all__ = [
    "eval_chebyc",
    "eval_chebys",
    "eval_chebyt",
    "eval_chebyu",
    "eval_gegenbauer",
    "eval_genlaguerre",
    "eval_hermite",
    "eval_hermitenorm",
    "eval_jacobi",
    "eval_laguerre",
    "eval_legendre",
    "eval_sh_chebyt",
    "eval_sh_chebyu",
    "eval_sh_jacobi",
    "eval_sh_legendre",
]


def eval_chebyt(n, x):
    """The Chebyshev polynomial of the first kind ``T_n(x)`` of static degree ``n >= 0``. Its
    derivative in ``x`` is ``n U_(n-1)(x)`` (0 for ``n = 0``), another op of the family, so every
    order is exact. Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the parameters)
    are static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_chebyt
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_chebyt(3, x)
    tensor([-1.,  9.], grad_fn=<EvalChebytBackward0>)
    >>> dualad.autograd.grad(eval_chebyt(3, x).sum(), x)
    (tensor([ 0., 24.]),)
    """
    return polynomial("eval_chebyt", n, x)


def eval_chebyu(n, x):
    """The Chebyshev polynomial of the second kind ``U_n(x)`` of static degree ``n >= 0``. Its
    derivative in ``x`` is ``2 C_(n-1)^(2)(x)`` (0 for ``n = 0``), another op of the family, so
    every order is exact. Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the
    parameters) are static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_chebyu
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_chebyu(3, x)
    tensor([-1., 21.], grad_fn=<EvalChebyuBackward0>)
    >>> dualad.autograd.grad(eval_chebyu(3, x).sum(), x)
    (tensor([ 2., 50.]),)
    """
    return polynomial("eval_chebyu", n, x)


def eval_chebyc(n, x):
    """The Chebyshev polynomial ``C_n(x) = 2 T_n(x/2)`` on [-2, 2] of static degree ``n >= 0``. Its
    derivative in ``x`` is ``n U_(n-1)(x/2)`` (0 for ``n = 0``), another op of the family, so every
    order is exact. Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the parameters)
    are static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_chebyc
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_chebyc(3, x)
    tensor([-1.375, -1.125], grad_fn=<EvalChebycBackward0>)
    >>> dualad.autograd.grad(eval_chebyc(3, x).sum(), x)
    (tensor([-2.25,  3.75]),)
    """
    return polynomial("eval_chebyc", n, x)


def eval_chebys(n, x):
    """The Chebyshev polynomial ``S_n(x) = U_n(x/2)`` on [-2, 2] of static degree ``n >= 0``. Its
    derivative in ``x`` is ``C_(n-1)^(2)(x/2)`` (0 for ``n = 0``), another op of the family, so
    every order is exact. Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the
    parameters) are static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_chebys
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_chebys(3, x)
    tensor([-0.875,  0.375], grad_fn=<EvalChebysBackward0>)
    >>> dualad.autograd.grad(eval_chebys(3, x).sum(), x)
    (tensor([-1.25,  4.75]),)
    """
    return polynomial("eval_chebys", n, x)


def eval_legendre(n, x):
    """The Legendre polynomial ``P_n(x)`` of static degree ``n >= 0``. Its derivative in ``x`` is
    ``C_(n-1)^(3/2)(x)`` (0 for ``n = 0``), another op of the family, so every order is exact.
    Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the parameters) are static: a
    tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_legendre
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_legendre(3, x)
    tensor([-0.4375,  6.1875], grad_fn=<EvalLegendreBackward0>)
    >>> dualad.autograd.grad(eval_legendre(3, x).sum(), x)
    (tensor([ 0.375, 15.375]),)
    """
    return polynomial("eval_legendre", n, x)


def eval_sh_legendre(n, x):
    """The shifted Legendre polynomial ``P_n(2x - 1)`` on [0, 1] of static degree ``n >= 0``. Its
    derivative in ``x`` is ``2 C_(n-1)^(3/2)(2x - 1)`` (0 for ``n = 0``), another op of the family,
    so every order is exact. Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the
    parameters) are static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_sh_legendre
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_sh_legendre(3, x)
    tensor([ 0., 17.], grad_fn=<EvalShLegendreBackward0>)
    >>> dualad.autograd.grad(eval_sh_legendre(3, x).sum(), x)
    (tensor([-3., 57.]),)
    """
    return polynomial("eval_sh_legendre", n, x)


def eval_laguerre(n, x):
    """The Laguerre polynomial ``L_n(x)`` of static degree ``n >= 0``. Its derivative in ``x`` is
    ``-L_(n-1)^(1)(x)`` (0 for ``n = 0``), another op of the family, so every order is exact.
    Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the parameters) are static: a
    tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_laguerre
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_laguerre(3, x)
    tensor([-0.14583333, -0.6875    ], grad_fn=<EvalLaguerreBackward0>)
    >>> dualad.autograd.grad(eval_laguerre(3, x).sum(), x)
    (tensor([-1.625,  0.375]),)
    """
    return polynomial("eval_laguerre", n, x)


def eval_hermite(n, x):
    """The physicists' Hermite polynomial ``H_n(x)`` (real ``x``: scipy has no complex version) of
    static degree ``n >= 0``. Its derivative in ``x`` is ``2n H_(n-1)(x)`` (0 for ``n = 0``),
    another op of the family, so every order is exact. Complex ``x`` raises TypeError. ``n`` (and
    the parameters) are static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_hermite
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_hermite(3, x)
    tensor([-5.,  9.], grad_fn=<EvalHermiteBackward0>)
    >>> dualad.autograd.grad(eval_hermite(3, x).sum(), x)
    (tensor([-6., 42.]),)
    """
    return polynomial("eval_hermite", n, x)


def eval_hermitenorm(n, x):
    """The probabilists' Hermite polynomial ``He_n(x)`` (real ``x``) of static degree ``n >= 0``.
    Its derivative in ``x`` is ``n He_(n-1)(x)`` (0 for ``n = 0``), another op of the family, so
    every order is exact. Complex ``x`` raises TypeError. ``n`` (and the parameters) are static: a
    tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_hermitenorm
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_hermitenorm(3, x)
    tensor([-1.375, -1.125], grad_fn=<EvalHermitenormBackward0>)
    >>> dualad.autograd.grad(eval_hermitenorm(3, x).sum(), x)
    (tensor([-2.25,  3.75]),)
    """
    return polynomial("eval_hermitenorm", n, x)


def eval_gegenbauer(n, alpha, x):
    """The Gegenbauer polynomial ``C_n^(alpha)(x)`` (static ``alpha``; scipy gives 0 for
    ``alpha = 0``, ``n >= 1``) of static degree ``n >= 0``. Its derivative in ``x`` is
    ``2 alpha C_(n-1)^(alpha+1)(x)`` (0 for ``n = 0``), another op of the family, so every order is
    exact. Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the parameters) are
    static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_gegenbauer
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_gegenbauer(3, 0.8, x)
    tensor([-0.768, 13.824], grad_fn=<EvalGegenbauerBackward0>)
    >>> dualad.autograd.grad(eval_gegenbauer(3, 0.8, x).sum(), x)
    (tensor([ 1.152, 33.408]),)
    """
    return polynomial("eval_gegenbauer", n, x, alpha=alpha)


def eval_genlaguerre(n, alpha, x):
    """The generalised Laguerre polynomial ``L_n^(alpha)(x)`` (static ``alpha > -1``; nan otherwise,
    as scipy, and so is the derivative) of static degree ``n >= 0``. Its derivative in ``x`` is
    ``-L_(n-1)^(alpha+1)(x)`` (0 for ``n = 0``), another op of the family, so every order is exact.
    Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the parameters) are static: a
    tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_genlaguerre
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_genlaguerre(3, 0.5, x)
    tensor([ 0.41666667, -1.        ], grad_fn=<EvalGenlaguerreBackward0>)
    >>> dualad.autograd.grad(eval_genlaguerre(3, 0.5, x).sum(), x)
    (tensor([-2.75, -0.25]),)
    """
    return polynomial("eval_genlaguerre", n, x, alpha=alpha)


def eval_jacobi(n, alpha, beta, x):
    """The Jacobi polynomial ``P_n^(alpha,beta)(x)`` (static ``alpha``, ``beta``) of static degree
    ``n >= 0``. Its derivative in ``x`` is ``(n + alpha + beta + 1)/2 P_(n-1)^(alpha+1,beta+1)(x)``
    (0 for ``n = 0``), another op of the family, so every order is exact. Complex ``x`` is accepted
    (the rule is holomorphic). ``n`` (and the parameters) are static: a tracked one raises
    ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_jacobi
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> eval_jacobi(3, 0.5, -0.3, x)
    tensor([-0.370125,  9.522625], grad_fn=<EvalJacobiBackward0>)
    >>> dualad.autograd.grad(eval_jacobi(3, 0.5, -0.3, x).sum(), x)
    (tensor([ 1.74825, 20.85825]),)
    """
    return polynomial("eval_jacobi", n, x, alpha=alpha, beta=beta)


def eval_sh_chebyt(n, x):
    """The shifted Chebyshev polynomial ``T_n(2x - 1)`` on [0, 1] of static degree ``n >= 0``. Its
    derivative in ``x`` is ``2n U_(n-1)(2x - 1)`` (0 for ``n = 0``), another op of the family, so
    every order is exact. Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the
    parameters) are static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_sh_chebyt
    >>> x = dualad.tensor([0.25, 0.75], requires_grad=True)
    >>> eval_sh_chebyt(3, x)
    tensor([ 1., -1.], grad_fn=<EvalShChebytBackward0>)
    >>> dualad.autograd.grad(eval_sh_chebyt(3, x).sum(), x)
    (tensor([0., 0.]),)
    """
    return polynomial("eval_sh_chebyt", n, x)


def eval_sh_chebyu(n, x):
    """The shifted Chebyshev polynomial ``U_n(2x - 1)`` on [0, 1] of static degree ``n >= 0``. Its
    derivative in ``x`` is ``4 C_(n-1)^(2)(2x - 1)`` (0 for ``n = 0``), another op of the family, so
    every order is exact. Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the
    parameters) are static: a tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_sh_chebyu
    >>> x = dualad.tensor([0.25, 0.75], requires_grad=True)
    >>> eval_sh_chebyu(3, x)
    tensor([ 1., -1.], grad_fn=<EvalShChebyuBackward0>)
    >>> dualad.autograd.grad(eval_sh_chebyu(3, x).sum(), x)
    (tensor([4., 4.]),)
    """
    return polynomial("eval_sh_chebyu", n, x)


def eval_sh_jacobi(n, p, q, x):
    """The shifted Jacobi polynomial ``G_n^(p,q)(x) = P_n^(p-q,q-1)(2x - 1) / binom(2n + p - 1, n)``
    (static ``p``, ``q``) of static degree ``n >= 0``. Its derivative in ``x`` is
    ``n G_(n-1)^(p+2,q+1)(x)`` (0 for ``n = 0``), another op of the family, so every order is exact.
    Complex ``x`` is accepted (the rule is holomorphic). ``n`` (and the parameters) are static: a
    tracked one raises ``NotImplementedError``.

    >>> import dualad
    >>> from dualad.special import eval_sh_jacobi
    >>> x = dualad.tensor([0.25, 0.75], requires_grad=True)
    >>> eval_sh_jacobi(3, 2.5, 1.3, x)
    tensor([ 0.01309423, -0.00711731], grad_fn=<EvalShJacobiBackward0>)
    >>> dualad.autograd.grad(eval_sh_jacobi(3, 2.5, 1.3, x).sum(), x)
    (tensor([-0.00542308,  0.17457692]),)
    """
    return polynomial("eval_sh_jacobi", n, x, p=p, q=q)
