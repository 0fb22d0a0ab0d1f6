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

eq = public.method(
    nondiff_binary(
        "eq",
        lambda xp, a, b: a == b,
        doc="""``a == b`` elementwise.

    >>> import dualad
    >>> dualad.eq(dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 3.0]))
    tensor([ True, False])
    """,
    )
)
ne = public.method(
    nondiff_binary(
        "ne",
        lambda xp, a, b: a != b,
        doc="""``a != b`` elementwise.

    >>> import dualad
    >>> dualad.ne(dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 3.0]))
    tensor([False,  True])
    """,
    )
)
lt = public.method(
    nondiff_binary(
        "lt",
        lambda xp, a, b: a < b,
        doc="""``a < b`` elementwise.

    >>> import dualad
    >>> dualad.lt(dualad.tensor([1.0, 2.0]), 2.0)
    tensor([ True, False])
    """,
    )
)
le = public.method(
    nondiff_binary(
        "le",
        lambda xp, a, b: a <= b,
        doc="""``a <= b`` elementwise.

    >>> import dualad
    >>> dualad.le(dualad.tensor([1.0, 2.0]), 1.0)
    tensor([ True, False])
    """,
    )
)
gt = public.method(
    nondiff_binary(
        "gt",
        lambda xp, a, b: a > b,
        doc="""``a > b`` elementwise.

    >>> import dualad
    >>> dualad.gt(dualad.tensor([1.0, 2.0]), 1.5)
    tensor([False,  True])
    """,
    )
)
ge = public.method(
    nondiff_binary(
        "ge",
        lambda xp, a, b: a >= b,
        doc="""``a >= b`` elementwise.

    >>> import dualad
    >>> dualad.ge(dualad.tensor([1.0, 2.0]), 1.5)
    tensor([False,  True])
    """,
    )
)
logical_and = public.inplace(
    nondiff_binary(
        "logical_and",
        lambda xp, a, b: xp.logical_and(a, b),
        doc="""Elementwise logical and of the truth values of ``a`` and ``b`` (a bool tensor).

    >>> import dualad
    >>> dualad.logical_and(dualad.tensor([1.0, 0.0, 2.0]), dualad.tensor([True, True, False]))
    tensor([ True, False, False])
    """,
    )
)
logical_or = public.inplace(
    nondiff_binary(
        "logical_or",
        lambda xp, a, b: xp.logical_or(a, b),
        doc="""Elementwise logical or of the truth values of ``a`` and ``b`` (a bool tensor).

    >>> import dualad
    >>> dualad.logical_or(dualad.tensor([1.0, 0.0, 0.0]), dualad.tensor([False, True, False]))
    tensor([ True,  True, False])
    """,
    )
)
logical_xor = public.method(
    nondiff_binary(
        "logical_xor",
        lambda xp, a, b: xp.logical_xor(a, b),
        doc="""Elementwise exclusive or of the truth values of ``a`` and ``b`` (a bool tensor).

    >>> import dualad
    >>> dualad.logical_xor(dualad.tensor([1.0, 0.0, 2.0]), dualad.tensor([True, True, False]))
    tensor([False,  True,  True])
    """,
    )
)
logical_not = public.inplace(
    nondiff_unary(
        "logical_not",
        lambda xp, x: xp.logical_not(x),
        doc="""Elementwise logical not of the truth values of ``x`` (a bool tensor).

    >>> import dualad
    >>> dualad.logical_not(dualad.tensor([0.0, 2.0]))
    tensor([ True, False])
    """,
    )
)
bitwise_and = public.method(
    nondiff_binary(
        "bitwise_and",
        lambda xp, a, b: a & b,
        doc="""``a & b`` elementwise, for integer and bool tensors (no derivative).

    >>> import dualad
    >>> dualad.bitwise_and(dualad.tensor([12, 10]), dualad.tensor([10, 6]))
    tensor([8, 2])
    """,
    )
)
bitwise_or = public.method(
    nondiff_binary(
        "bitwise_or",
        lambda xp, a, b: a | b,
        doc="""``a | b`` elementwise, for integer and bool tensors (no derivative).

    >>> import dualad
    >>> dualad.bitwise_or(dualad.tensor([12, 10]), dualad.tensor([10, 6]))
    tensor([14, 14])
    """,
    )
)
bitwise_xor = public.method(
    nondiff_binary(
        "bitwise_xor",
        lambda xp, a, b: a ^ b,
        doc="""``a ^ b`` elementwise, for integer and bool tensors (no derivative).

    >>> import dualad
    >>> dualad.bitwise_xor(dualad.tensor([12, 10]), dualad.tensor([10, 6]))
    tensor([ 6, 12])
    """,
    )
)
bitwise_not = public.method(
    nondiff_unary(
        "bitwise_not",
        lambda xp, x: ~x,
        doc="""``~x`` elementwise, for integer and bool tensors (no derivative).

    >>> import dualad
    >>> dualad.bitwise_not(dualad.tensor([0, 5]))
    tensor([-1, -6])
    >>> dualad.bitwise_not(dualad.tensor([True, False]))
    tensor([False,  True])
    """,
    )
)
left_shift = public.method(
    nondiff_binary(
        "left_shift",
        lambda xp, a, b: xp.left_shift(a, b),
        doc="""``a << b``.

        >>> import dualad
        >>> dualad.left_shift(dualad.tensor([1, 3]), dualad.tensor([2, 1]))
        tensor([4, 6])
        """,
    )
)
right_shift = public.method(
    nondiff_binary(
        "right_shift",
        lambda xp, a, b: xp.right_shift(a, b),
        doc="""``a >> b``.

        >>> import dualad
        >>> dualad.right_shift(dualad.tensor([8, 7]), dualad.tensor([2, 1]))
        tensor([2, 3])
        """,
    )
)
bitwise_count = public.method(
    nondiff_unary(
        "bitwise_count",
        lambda xp, x: xp.bitwise_count(x),
        doc="""The number of 1 bits in ``abs(x)`` (NumPy's ``bitwise_count``).

        >>> import dualad
        >>> dualad.bitwise_count(dualad.tensor([0, 7, -8]))
        tensor([0, 3, 1], dtype=uint8)
        """,
    )
)
gcd = public.method(
    nondiff_binary(
        "gcd",
        lambda xp, a, b: xp.gcd(a, b),
        doc="""Greatest common divisor.

        >>> import dualad
        >>> dualad.gcd(dualad.tensor([12, 18]), dualad.tensor([8, 27]))
        tensor([4, 9])
        """,
    )
)
lcm = public.method(
    nondiff_binary(
        "lcm",
        lambda xp, a, b: xp.lcm(a, b),
        doc="""Least common multiple.

        >>> import dualad
        >>> dualad.lcm(dualad.tensor([4, 6]), dualad.tensor([6, 10]))
        tensor([12, 30])
        """,
    )
)
isnan = public.method(
    nondiff_unary(
        "isnan",
        lambda xp, x: xp.isnan(x),
        doc="""True where x is NaN.

    >>> import dualad
    >>> import math
    >>> dualad.isnan(dualad.tensor([1.0, math.inf, math.nan]))
    tensor([False, False,  True])
    """,
    )
)
isinf = public.method(
    nondiff_unary(
        "isinf",
        lambda xp, x: xp.isinf(x),
        doc="""True where x is +-inf.

        >>> import dualad
        >>> import math
        >>> dualad.isinf(dualad.tensor([1.0, -math.inf, math.nan]))
        tensor([False,  True, False])
        """,
    )
)
isfinite = public.method(
    nondiff_unary(
        "isfinite",
        lambda xp, x: xp.isfinite(x),
        doc="""True where finite.

        >>> import dualad
        >>> import math
        >>> dualad.isfinite(dualad.tensor([1.0, math.inf, math.nan]))
        tensor([ True, False, False])
        """,
    )
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
        "signbit",
        lambda xp, x: xp.signbit(x),
        doc="""True where the sign bit is set (also -0.0).

        >>> import dualad
        >>> dualad.signbit(dualad.tensor([-1.0, -0.0, 0.0, 2.0]))
        tensor([ True,  True, False, False])
        """,
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
