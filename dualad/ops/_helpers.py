"""Category helpers: one call defines an op with its impl, VJP, JVP and batching rule.

- ``unary``: elementwise, from one derivative formula ``deriv(x, y)`` written in dualad ops.
- ``binary``: broadcasting elementwise, from the partial derivatives ``(d/da, d/db)``; the
  engine reduces broadcast cotangents to each argument's shape in one place (node validation).
- ``linear`` (in ``base.py``): ops linear in their tensor argument: JVP the op, VJP a transpose.
- ``piecewise_constant``: floor, sign and the like: outputs require grad, derivatives are zero.
- ``nondiff``: comparisons, predicates and the like: outputs never require grad; still batchable.
- ``explicit``: anything else, with its rules given by hand next to its impl.

Complex numbers follow PyTorch: a VJP multiplies by the conjugate of the derivative.

``conj`` and ``clone`` are defined here: the rules of every category use them. So are the small
rule helpers the op modules share (``_output_tangent``, ``_sum_tangents``, ``_scalar_like``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._backend import allocate_on
from .._creation import as_tensor, zeros_like
from .._dispatch import EMPTY, OpDef, binary_caller, dispatch, register, unary_caller
from .._opdef import ELEMENTWISE_AFFINE
from .._tensor import Tensor
from . import _batching as batching
from ._exports import Exports
from ._promotion import _PY_SCALARS
from .base import broadcast_to

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _conj_if_complex(d):
    if type(d) is Tensor:
        if d._data.dtype.kind != "c":
            return d
        return conj(d)
    if isinstance(d, Tensor) and d.dtype.kind == "c":
        return conj(d)
    if isinstance(d, complex):
        return d.conjugate()
    return d


# ---------------------------------------------------------------------------------------------
# conj and clone: the ops the rules of every category use


def _conj_impl(xp, x):
    return xp.conj(x)


_conj_op = register(
    OpDef(
        "conj",
        _conj_impl,
        vjp=lambda cts, outs, args, params, needs: (conj(cts[0]),),
        jvp=lambda tangents, outs, args, params: conj(tangents[0]),
        batch=batching.elementwise,
        save_args=False,
        node_name="ConjBackward0",
        sparsity=ELEMENTWISE_AFFINE,
    )
)


def identity_on_real(op, doc):
    """The function of an op that is the identity on real numbers (conj, real): it returns a real
    tensor itself (no copy, no graph node) and runs ``op`` on anything else."""

    def fn(x):
        if isinstance(x, Tensor) and x._data.dtype.kind != "c":
            return x
        return dispatch(op, (x,), EMPTY)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = doc
    return fn


conj = public.method(
    identity_on_real(
        _conj_op,
        """Complex conjugate; returns ``x`` itself for real tensors (no copy, no graph node).

        >>> import dualad
        >>> dualad.conj(dualad.tensor([1.0 + 2.0j, 3.0 - 1.0j]))
        tensor([1.-2.j, 3.+1.j])
        """,
    )
)


_clone_op = register(
    OpDef(
        "clone",
        lambda xp, x: x.copy(),
        vjp=lambda cts, outs, args, params, needs: (cts[0],),
        jvp=lambda tangents, outs, args, params: clone(tangents[0]),
        batch=batching.elementwise,
        save_args=False,
        sparsity=ELEMENTWISE_AFFINE,
    )
)


clone = public.method(
    unary_caller(
        _clone_op,
        doc="""A copy of ``x`` with its own memory (differentiable).

        >>> import dualad
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> dualad.clone(x)
        tensor([1., 2.], grad_fn=<CloneBackward0>)
        >>> dualad.autograd.grad(dualad.clone(x).sum(), x)
        (tensor([1., 1.]),)
        """,
    )
)


def _elementwise_op(
    name, impl, vjp, jvp, save_args, uses, node_name, kernel, save_mask=None, curvature=None
):
    """Register the OpDef of an elementwise op (``unary_op``, ``binary``): batched elementwise,
    saving the output where ``uses`` has ``"y"``. ``curvature`` (its sparsity rule's): "affine"
    when the derivative reads neither the arguments nor the output (``uses=""``: neg, add),
    else "nonlinear" unless the caller knows better (``bilinear``)."""
    if curvature is None:
        curvature = "affine" if uses == "" else "nonlinear"
    return register(
        OpDef(
            name,
            impl,
            vjp=vjp,
            jvp=jvp,
            batch=batching.elementwise,
            save_args=save_args,
            save_out="y" in uses,
            node_name=node_name,
            save_mask=save_mask,
            kernel=kernel,
            sparsity=("elementwise", curvature),
        )
    )


def unary_op(
    name: str,
    impl: Callable,
    deriv: Callable,
    *,
    uses: str = "x",
    node_name: str | None = None,
    takes_params: bool = False,
    kernel: Callable | None = None,
    fused: Callable | None = None,
) -> OpDef:
    """The OpDef of an elementwise unary op from ``deriv(x, y)`` (x the input, y the output).

    ``uses`` says what ``deriv`` reads: "x", "y" or "xy"; only that is saved for backward. With
    ``takes_params`` the op has static parameters and ``deriv`` gets them as keywords
    (``deriv(x, y, **params)``); without, the rules skip the keyword call (a hot path).

    ``fused(t, v)``, a dualad op computing ``t * deriv`` from ``v`` (x or y, as ``uses`` says:
    one of them) in one impl call (``tanh_backward``), makes the rules one op instead of
    several. The VJP passes ``conj(v)``: the derivatives fused this way have real Taylor
    coefficients, so ``f'(conj(v)) == conj(f'(v))``.
    """
    if fused is not None:
        from_output = uses == "y"

        def vjp(cts, outs, args, params, needs):
            v = outs[0] if from_output else args[0]
            if type(v) is not Tensor or v._data.dtype.kind == "c":
                v = _conj_if_complex(v)
            return (fused(cts[0], v),)

        def jvp(tangents, outs, args, params):
            return fused(tangents[0], outs[0] if from_output else args[0])

    elif takes_params:

        def vjp(cts, outs, args, params, needs):
            d = deriv(args[0], None if outs is None else outs[0], **params)
            return (cts[0] * _conj_if_complex(d),)

        def jvp(tangents, outs, args, params):
            return tangents[0] * deriv(args[0], outs[0], **params)

    else:

        def vjp(cts, outs, args, params, needs):
            d = deriv(args[0], None if outs is None else outs[0])
            if type(d) is Tensor:
                if d._data.dtype.kind == "c":
                    d = _conj_if_complex(d)
            elif isinstance(d, (Tensor, complex)):
                d = _conj_if_complex(d)
            return (cts[0] * d,)

        def jvp(tangents, outs, args, params):
            return tangents[0] * deriv(args[0], outs[0])

    return _elementwise_op(name, impl, vjp, jvp, "x" in uses, uses, node_name, kernel)


def unary(
    name: str,
    impl: Callable,
    deriv: Callable | None,
    *,
    uses: str = "x",
    doc: str | None = None,
    node_name: str | None = None,
    kernel: Callable | None = None,
    fused: Callable | None = None,
) -> Callable[[object], Tensor]:
    """The public function of an elementwise unary op without parameters (see ``unary_op``)."""
    op = unary_op(name, impl, deriv, uses=uses, node_name=node_name, kernel=kernel, fused=fused)
    return unary_caller(op, doc=doc)


def binary(
    name: str,
    impl: Callable,
    partials: tuple[Callable | None, Callable | None],
    *,
    uses: str = "ab",
    doc: str | None = None,
    node_name: str | None = None,
    save_mask: Callable | None = None,
    kernel: Callable | None = None,
    rules: tuple[Callable, Callable] | None = None,
) -> Callable[[object, object], Tensor]:
    """A broadcasting binary op from its partials ``(da(a, b, y), db(a, b, y))``.

    A partial is a function, a constant (``1`` or ``-1``: add, sub) or None (the op is not
    differentiable in that argument). ``impl`` may be None when ``kernel`` (the impl without
    the array module, e.g. ``operator.add``) is given. ``rules``: a ``(vjp, jvp)`` pair written
    out for speed, computing what the partials give (``bilinear``, which also gives ``x * x``
    its one-product derivative ``2 x``).
    """
    da, db = partials
    const_a = da if type(da) is int else None
    const_b = db if type(db) is int else None

    # the two arguments' branches are alike on purpose, not one helper called twice: this is the
    # backward of every binary op, and a helper would cost two Python calls more on it
    def vjp(cts, outs, args, params, needs):
        ct = cts[0]
        grad_a = grad_b = None
        if needs[0] and da is not None:
            if const_a == 1:
                grad_a = ct
            else:
                a, b = args
                grad_a = _cotangent_term(ct, const_a or da(a, b, outs[0] if outs else None))
        if needs[1] and db is not None:
            if const_b == 1:
                grad_b = ct
            else:
                a, b = args
                grad_b = _cotangent_term(ct, const_b or db(a, b, outs[0] if outs else None))
        return grad_a, grad_b

    def jvp(tangents, outs, args, params):
        a, b = args
        y = outs[0]
        t_a, t_b = tangents
        total = None
        if t_a is not None and da is not None:
            total = _tangent_times(t_a, const_a or da(a, b, y))
        if t_b is not None and db is not None:
            if const_b == -1 and total is not None:
                total = total - t_b  # (sub: the same bits as adding -t_b, without the negation)
            else:
                term = _tangent_times(t_b, const_b or db(a, b, y))
                total = term if total is None else total + term
        return _broadcast_to_output(total, y)

    if rules is not None:
        vjp, jvp = rules

    save_args = "a" in uses or "b" in uses
    # constant partials (add, sub) or none: no second derivative
    affine = all(p is None or type(p) is int for p in partials)
    curvature = "affine" if affine else ("bilinear" if rules is _BILINEAR_RULES else None)
    op = _elementwise_op(
        name, impl, vjp, jvp, save_args, uses, node_name, kernel, save_mask, curvature
    )
    return binary_caller(op, doc=doc)


def _cotangent_term(ct, d):
    """``ct * conj(d)``; constant partials (add, sub) cost at most a negation."""
    if type(d) is Tensor:
        if d._data.dtype.kind != "c":
            return ct * d
    elif type(d) is int:
        if d == 1:
            return ct
        if d == -1:
            return -ct  # (Tensor.__neg__ is neg)
    return ct * _conj_if_complex(d)


def _tangent_times(tangent, d):
    if type(d) is int:  # constant partials (add, sub) cost at most a negation
        if d == 1:
            return tangent
        if d == -1:
            return -tangent
    return tangent * d


def _broadcast_to_output(tangent, y):
    if type(tangent) is Tensor and type(y) is Tensor:
        if tangent._data.shape == y._data.shape:
            return tangent
    elif tangent is None or not isinstance(tangent, Tensor):
        return tangent
    if tangent.shape != y.shape:
        # a copy: a broadcast view is read-only and aliases the input's tangent
        tangent = clone(broadcast_to(tangent, y.shape))
    return tangent


def bilinear(
    name: str,
    impl: Callable | None,
    *,
    doc: str | None = None,
    node_name: str | None = None,
    kernel: Callable | None = None,
) -> Callable[[object, object], Tensor]:
    """A broadcasting op linear in each argument (``mul``): d/da = b, d/db = a."""
    return binary(
        name,
        impl,
        (lambda a, b, y: b, lambda a, b, y: a),
        doc=doc,
        node_name=node_name,
        save_mask=_bilinear_saves,  # a is read only for b's gradient and vice versa
        kernel=kernel,
        rules=_BILINEAR_RULES,
    )


def _bilinear_vjp(cts, outs, args, params, needs):
    # the partials b and a, without the generic binary rule's calls (mul is the hottest op)
    ct = cts[0]
    a, b = args
    if a is b:
        # one value in both slots: both partials are ct * conj(x), made once. Not (2 ct x,
        # None): the two slots can be different inputs with one value (at a grad level the
        # saved arguments are the values under the wrappers: grad(lambda a, b: a * b,
        # argnums=(0, 1))(x, x) is (x, x)), or one slot a constant. For x * x the engine
        # sums the two (exactly 2 ct x).
        g = ct * _conj_if_complex(a)
        return (g if needs[0] else None), (g if needs[1] else None)
    grad_a = grad_b = None
    if needs[0]:
        if type(b) is Tensor and b._data.dtype.kind != "c":
            grad_a = ct * b
        else:
            grad_a = _cotangent_term(ct, b)
    if needs[1]:
        if type(a) is Tensor and a._data.dtype.kind != "c":
            grad_b = ct * a
        else:
            grad_b = _cotangent_term(ct, a)
    return grad_a, grad_b


def _bilinear_jvp(tangents, outs, args, params):
    a, b = args
    t_a, t_b = tangents
    if a is b and t_a is t_b and t_a is not None:  # x * x: 2 x dx (one tangent in both slots)
        return _broadcast_to_output((t_a * a) * 2, outs[0])
    if t_a is None:
        total = None if t_b is None else t_b * a
    else:
        total = t_a * b if t_b is None else t_a * b + t_b * a
    return _broadcast_to_output(total, outs[0])


_BILINEAR_RULES = (_bilinear_vjp, _bilinear_jvp)


def _bilinear_saves(needs):
    return needs[1], needs[0]


def zero_vjp(cts, outs, args, params, needs):
    """The VJP of a piecewise-constant op (floor, sign, ...): zero cotangents wherever it is
    differentiable (PyTorch's ``zeros_like(grad)``, JAX's zeros). Zeros, not ``ct * 0``, so that
    an infinite cotangent gives 0, not NaN."""
    ct = cts[0]
    return tuple(zeros_like(ct) if need else None for need in needs)


def zero_jvp(tangents, outs, args, params):
    """The JVP of a piecewise-constant op: a zero tangent of the output's shape and dtype."""
    return zeros_like(outs[0])


def piecewise_constant_op(name: str, impl: Callable) -> OpDef:
    """The OpDef of an elementwise op that is constant between its jumps (floor, ceil, trunc,
    sign, round): its output requires grad and every derivative is zero, so ``grad``, ``jacrev``,
    ``jacfwd``, ``hessian`` and ``vmap`` of them give zeros (as PyTorch and JAX) instead of
    cutting the graph. Nothing is saved (the rules read only the cotangent's shape)."""
    return register(
        OpDef(
            name,
            impl,
            vjp=zero_vjp,
            jvp=zero_jvp,
            batch=batching.elementwise,
            save_args=False,
            sparsity=("zero", "affine"),
        )
    )


def piecewise_constant(
    name: str, impl: Callable, *, doc: str | None = None
) -> Callable[[object], Tensor]:
    """The public function of a parameterless piecewise-constant op (see
    ``piecewise_constant_op``)."""
    return unary_caller(piecewise_constant_op(name, impl), doc=doc)


def nondiff_unary(
    name: str, impl: Callable, *, doc: str | None = None
) -> Callable[[object], Tensor]:
    """An elementwise op whose output carries no gradient (predicates, rounding to ints, ...)."""
    op = register(OpDef(name, impl, batch=batching.elementwise, differentiable=False))
    return unary_caller(op, doc=doc)


def nondiff_binary(
    name: str, impl: Callable, *, doc: str | None = None
) -> Callable[[object, object], Tensor]:
    """A broadcasting binary op whose output carries no gradient (comparisons, logical ops)."""
    op = register(OpDef(name, impl, batch=batching.elementwise, differentiable=False))
    return binary_caller(op, doc=doc)


# ---------------------------------------------------------------------------------------------
# rule helpers the op modules share


def _unary_with_params(name, impl, deriv, *, uses="x", node_name=None):
    """An elementwise op with static params, from ``deriv(x, y, **params)`` in dualad ops."""
    return unary_op(name, impl, deriv, uses=uses, node_name=node_name, takes_params=True)


def _sum_tangents(terms, out):
    """The sum of the non-None ``terms``, broadcast to the output's shape (None if all are)."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return _output_tangent(total, out)


def _output_tangent(tangent, out):
    """``tangent`` broadcast to the output's shape, in memory of its own.

    An in-place op on the output writes into its tangent, so the tangent of an op that is not a
    view may be neither a broadcast view (read-only) nor share memory with an input's tangent.
    """
    result = _broadcast_to_output(tangent, out)
    if result is not tangent:
        return clone(result)
    return result


def _scalar_like(value, like: Tensor):
    """A Python scalar as a 0-d tensor of ``like``'s dtype (NumPy's where would widen it)."""
    if isinstance(value, Tensor):
        return value
    kind = like.dtype.kind
    if kind == "c" or (kind == "f" and not isinstance(value, complex)):
        if type(like._data) is np.ndarray:
            return as_tensor(np.asarray(value, dtype=like.dtype))
        # made by the array module of ``like`` (no NumPy array copied to the device)
        return as_tensor(allocate_on(like.device, lambda xp: xp.asarray(value, dtype=like.dtype)))
    return value


def _as_scalar_tensor(value, like):
    """A Python scalar as a 0-d tensor of ``like``'s dtype (keeps float32 rules in float32)."""
    return _scalar_like(value, like) if type(value) in _PY_SCALARS else value
