"""Comparisons, logical and bitwise ops (shifts, ``bitwise_count``), the integer ops ``gcd`` and
``lcm``, and predicates (no gradient, still batchable), and ``where``.
"""

from __future__ import annotations

from .._dispatch import EMPTY, OpDef, dispatch, register
from .._tensor import Tensor
from . import _batching as batching
from ._exports import Exports
from ._helpers import _output_tangent, _scalar_like, nondiff_binary, nondiff_unary

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


# ---------------------------------------------------------------------------------------------
# comparisons and logical ops: no gradient, still batchable

eq = public.method(nondiff_binary("eq", lambda xp, a, b: a == b, doc="``a == b`` elementwise."))
ne = public.method(nondiff_binary("ne", lambda xp, a, b: a != b, doc="``a != b`` elementwise."))
lt = public.method(nondiff_binary("lt", lambda xp, a, b: a < b, doc="``a < b`` elementwise."))
le = public.method(nondiff_binary("le", lambda xp, a, b: a <= b, doc="``a <= b`` elementwise."))
gt = public.method(nondiff_binary("gt", lambda xp, a, b: a > b, doc="``a > b`` elementwise."))
ge = public.method(nondiff_binary("ge", lambda xp, a, b: a >= b, doc="``a >= b`` elementwise."))
logical_and = public.inplace(nondiff_binary("logical_and", lambda xp, a, b: xp.logical_and(a, b)))
logical_or = public.inplace(nondiff_binary("logical_or", lambda xp, a, b: xp.logical_or(a, b)))
logical_xor = public.method(nondiff_binary("logical_xor", lambda xp, a, b: xp.logical_xor(a, b)))
logical_not = public.inplace(nondiff_unary("logical_not", lambda xp, x: xp.logical_not(x)))
bitwise_and = public.method(nondiff_binary("bitwise_and", lambda xp, a, b: a & b))
bitwise_or = public.method(nondiff_binary("bitwise_or", lambda xp, a, b: a | b))
bitwise_xor = public.method(nondiff_binary("bitwise_xor", lambda xp, a, b: a ^ b))
bitwise_not = public.method(nondiff_unary("bitwise_not", lambda xp, x: ~x))
left_shift = public.method(
    nondiff_binary("left_shift", lambda xp, a, b: xp.left_shift(a, b), doc="``a << b``.")
)
right_shift = public.method(
    nondiff_binary("right_shift", lambda xp, a, b: xp.right_shift(a, b), doc="``a >> b``.")
)
bitwise_count = public.method(
    nondiff_unary(
        "bitwise_count",
        lambda xp, x: xp.bitwise_count(x),
        doc="The number of 1 bits in ``abs(x)`` (NumPy's ``bitwise_count``).",
    )
)
gcd = public.method(
    nondiff_binary("gcd", lambda xp, a, b: xp.gcd(a, b), doc="Greatest common divisor.")
)
lcm = public.method(
    nondiff_binary("lcm", lambda xp, a, b: xp.lcm(a, b), doc="Least common multiple.")
)
isnan = public.method(nondiff_unary("isnan", lambda xp, x: xp.isnan(x), doc="True where x is NaN."))
isinf = public.method(
    nondiff_unary("isinf", lambda xp, x: xp.isinf(x), doc="True where x is +-inf.")
)
isfinite = public.method(
    nondiff_unary("isfinite", lambda xp, x: xp.isfinite(x), doc="True where finite.")
)
# NumPy's names (one line an alias: the name it is exported as, the op it is; the alias lists of
# comparison and trigonometric look alike on purpose: one greppable line a name, not a loop)
greater = public.method(gt, "greater")
greater_equal = public.method(ge, "greater_equal")
less = public.method(lt, "less")
less_equal = public.method(le, "less_equal")
equal = public.method(eq, "equal")
not_equal = public.method(ne, "not_equal")


signbit = public.method(
    nondiff_unary(
        "signbit", lambda xp, x: xp.signbit(x), doc="True where the sign bit is set (also -0.0)."
    )
)


# ---------------------------------------------------------------------------------------------
# selection


def _where_vjp(cts, outs, args, params, needs):
    condition = args[0]
    ct = cts[0]
    zero = 0.0
    return (
        None,
        where(condition, ct, zero) if needs[1] else None,
        where(condition, zero, ct) if needs[2] else None,
    )


def _where_jvp(tangents, outs, args, params):
    condition = args[0]
    _, t_a, t_b = tangents
    t_a = 0.0 if t_a is None else t_a
    t_b = 0.0 if t_b is None else t_b
    out = where(condition, t_a, t_b)
    return _output_tangent(out, outs[0])


_where_op = register(
    OpDef(
        "where",
        lambda xp, c, a, b: xp.where(c, a, b),
        vjp=_where_vjp,
        jvp=_where_jvp,
        batch=batching.elementwise,
        node_name="WhereBackward0",
    )
)


@public.method
def where(condition, a, b):
    """``a`` where ``condition`` is true, else ``b`` (broadcasting).

    The derivative flows to ``a`` where ``condition`` holds and to ``b`` elsewhere; the other
    branch gets 0 there. That 0 multiplies the untaken branch's own derivative, so a branch
    whose derivative is inf or NaN at the masked points still poisons the result (``0 * inf``
    is NaN): ``where(x > 0, sqrt(x), 0)`` has a NaN gradient at ``x = 0``, as in PyTorch and
    JAX. The cure is the "double where": make the unsafe branch's *input* safe too, so its
    derivative is finite where it is not taken.

    >>> import dualad
    >>> x = dualad.tensor([0.0, 4.0], requires_grad=True)
    >>> dualad.autograd.grad(dualad.where(x > 0, dualad.sqrt(x), 0.0).sum(), x)[0]
    tensor([ nan, 0.25])
    >>> safe = dualad.where(x > 0, x, 1.0)
    >>> dualad.autograd.grad(dualad.where(x > 0, dualad.sqrt(safe), 0.0).sum(), x)[0]
    tensor([0.  , 0.25])
    """
    if isinstance(a, Tensor) and not isinstance(b, Tensor) and b is not None:
        b = _scalar_like(b, a)
    elif isinstance(b, Tensor) and not isinstance(a, Tensor) and a is not None:
        a = _scalar_like(a, b)
    return dispatch(_where_op, (condition, a, b), EMPTY)
