"""Entropy-style functions: entr, rel_entr, xlog1py (``xlogy`` is in ``exp_log``) and scipy's
elementwise ``kl_div`` (the op ``special_kl_div``: ``dualad.special.kl_div`` only, so that
``kl_div`` names nothing else than the loss outside that namespace).

Values come from ``scipy.special`` (``cupyx.scipy.special`` on CuPy) in the input's dtype;
real inputs only. Each function's value at ``x = 0`` is its limit (0), and the derivatives
there are the one-sided limits (stated per function).
"""

from __future__ import annotations

from ._exports import Exports
from ._helpers import binary, unary
from .comparison import where
from .exp_log import log, log1p
from .special import _special_binary_impl, _special_impl

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


entr = public.inplace(
    unary(
        "entr",
        _special_impl("entr"),
        lambda x, y: -(log(x) + 1),
        doc="""``-x log(x)`` for x > 0, 0 at x = 0, -inf for x < 0. The derivative
    ``-(log(x) + 1)`` is +inf at 0 (the one-sided limit) and nan for x < 0.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 0.5], requires_grad=True)
    >>> dualad.entr(x)
    tensor([0.        , 0.34657359], grad_fn=<EntrBackward0>)
    >>> dualad.autograd.grad(dualad.entr(x).sum(), x)
    (tensor([        inf, -0.30685282]),)
    """,
    )
)

rel_entr = public.method(
    binary(
        "rel_entr",
        _special_binary_impl("rel_entr"),
        (lambda x, y, out: log(x) - log(y) + 1, lambda x, y, out: -x / y),
        doc="""``x log(x / y)`` for x, y > 0; 0 for x = 0 and y >= 0; inf otherwise. Partials
    ``log(x / y) + 1`` (-inf at x = 0, the one-sided limit) and ``-x / y`` (0 at x = 0).

    >>> import dualad
    >>> x = dualad.tensor([0.0, 0.5], requires_grad=True)
    >>> dualad.rel_entr(x, 0.25)
    tensor([0.        , 0.34657359], grad_fn=<RelEntrBackward0>)
    >>> dualad.autograd.grad(dualad.rel_entr(x, 0.25).sum(), x)
    (tensor([      -inf, 1.69314718]),)
    """,
    )
)


def _xlog1py_dx(x, y, out):
    # PyTorch: log1p(y), but 0 where x == 0 and y <= -1 (where log1p(y) is not finite)
    masked = (x == 0) & (y <= -1)
    return where(masked, 0.0, log1p(where(masked, 0.0, y)))  # no log1p(-1) warnings there


xlog1py = public.inplace(
    binary(
        "xlog1py",
        _special_binary_impl("xlog1py"),
        (_xlog1py_dx, lambda x, y, out: x / (y + 1)),
        doc="""``x * log1p(y)``, 0 where ``x == 0`` (unless y is nan), as scipy. Partials (as
    PyTorch's): ``log1p(y)`` (0 where x == 0 and y <= -1) and ``x / (1 + y)`` (0 where x == 0
    and y != -1).

    >>> import dualad
    >>> x = dualad.tensor([0.0, 2.0], requires_grad=True)
    >>> dualad.xlog1py(x, dualad.tensor([-1.0, 1e-10]))
    tensor([0.e+00, 2.e-10], grad_fn=<Xlog1pyBackward0>)
    >>> dualad.autograd.grad(dualad.xlog1py(x, dualad.tensor([-1.0, 1e-10])).sum(), x)
    (tensor([0.e+00, 1.e-10]),)
    """,
    )
)


# scipy's elementwise kl_div: exported by dualad.special only (dualad.kl_div would be the loss of
# nn.functional to a PyTorch user); one op, not rel_entr(x, y) - x + y, whose rounding loses
# the small differences near x == y in float32
_kl_div = binary(
    "special_kl_div",
    _special_binary_impl("kl_div"),
    (lambda x, y, out: log(x) - log(y), lambda x, y, out: 1 - x / y),
    doc="scipy's elementwise kl_div (see dualad.special.kl_div).",
)
