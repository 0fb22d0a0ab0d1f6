"""Products and contractions: matmul, mm, bmm, dot, vdot, inner, outer, tensordot, kron, trace.

matmul/mm/bmm/dot/vdot/trace are ops with their own rules; inner and tensordot are einsums
(``ops/einsums.py``, contracted through opt_einsum with cached paths), outer and kron are
broadcasting products of reshaped views. Complex gradients follow PyTorch: the VJP of
``a @ b`` is ``ct @ b^H`` for ``a`` and ``a^H @ ct`` for ``b``.

Impls validate shapes only where NumPy would silently do something else (``bmm`` batch sizes,
``dot`` on matrices); other shape errors are caught from the array call and re-raised with the
op's name and the shapes.
"""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor, eye
from .._dispatch import OpDef, apply, apply1, binary_caller, register
from .._opdef import LINEAR_DENSE
from .._tensor import Tensor
from ._dims import normalize_dim
from ._exports import Exports
from ._helpers import conj
from .arithmetic import mul
from .base import linear, move_bdim_to_front, reshape, unsqueeze
from .einsums import contract
from .views import matrix_transpose

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _ndim(x) -> int:
    return getattr(x, "ndim", 0)


def _shape(x) -> tuple:
    return tuple(getattr(x, "shape", ()))


def _mH(x):
    return conj(matrix_transpose(x))


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    return as_tensor(x)


# ---------------------------------------------------------------------------------------------
# matmul


def _matmul_message(op: str, a, b) -> str:
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return (
            f"dualad.{op}: both arguments to {op} need to be at least 1D, but they are "
            f"{len(sa)}D and {len(sb)}D"
        )
    if len(sa) == 1 and len(sb) == 1:
        return (
            f"dualad.{op}: inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] "
            f"to have the same number of elements, but got {sa[0]} and {sb[0]} elements "
            "respectively"
        )
    if len(sa) <= 2 and len(sb) <= 2:
        left = "x".join(map(str, sa if len(sa) == 2 else (1, *sa)))
        right = "x".join(map(str, sb if len(sb) == 2 else (*sb, 1)))
        return f"dualad.{op}: mat1 and mat2 shapes cannot be multiplied ({left} and {right})"
    inner_b = sb[-2] if len(sb) >= 2 else sb[0]
    if sa[-1] != inner_b:
        why = f"the contracted dimensions differ ({sa[-1]} != {inner_b})"
    else:
        why = f"the batch dimensions {sa[:-2]} and {sb[:-2]} do not broadcast"
    return f"dualad.{op}: shapes {sa} and {sb} cannot be multiplied: {why}"


def _matmul_impl(xp, a, b):
    try:
        return xp.matmul(a, b)
    except (ValueError, TypeError):
        raise RuntimeError(_matmul_message("matmul", a, b)) from None


def _matmul_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    a, b = args
    grad_a = grad_b = None
    a_vector, b_vector = a.ndim == 1, b.ndim == 1
    if a_vector and b_vector:  # dot product: ct is 0-d
        if needs[0]:
            grad_a = ct * conj(b)
        if needs[1]:
            grad_b = ct * conj(a)
        return grad_a, grad_b
    if needs[0]:
        if a_vector and b.ndim == 2:  # (n,) @ (n, m) -> (m,): one matrix-vector product
            grad_a = matmul(conj(b), ct)
        elif a_vector:  # (n,) @ (..., n, m) -> (..., m): grad (..., n), summed by the engine
            grad_a = _drop_last(matmul(conj(b), _unsqueeze(ct, -1)))
        elif b_vector:  # (..., n, m) @ (m,) -> (..., n)
            grad_a = _unsqueeze(ct, -1) * conj(b)
        else:
            grad_a = matmul(ct, _mH(b))
    if needs[1]:
        if b_vector and a.ndim == 2:  # (k, n) @ (n,) -> (k,): ct @ conj(a), no transpose
            grad_b = matmul(ct, conj(a))
        elif b_vector:
            grad_b = _drop_last(matmul(_mH(a), _unsqueeze(ct, -1)))
        elif a_vector:
            grad_b = _unsqueeze(conj(a), -1) * _unsqueeze(ct, -2)
        else:
            grad_b = matmul(_mH(a), ct)
    # broadcast batch dims are reduced to each input's shape by the engine (rev/node.py)
    return grad_a, grad_b


def _drop_last(x):
    return reshape(x, tuple(x.shape[:-1]))


def _unsqueeze(x, dim):
    return unsqueeze(x, dim)


def product_jvp(fn):
    """JVP of a bilinear product ``fn(a, b, **params)``: ``fn(ta, b) + fn(a, tb)`` (matmul and
    friends here, the convolutions in ``convolution.py``)."""

    def jvp(tangents, outs, args, params):
        a, b = args
        t_a, t_b = tangents
        total = None
        if t_a is not None:
            total = fn(t_a, b, **params)
        if t_b is not None:
            term = fn(a, t_b, **params)
            total = term if total is None else total + term
        return total

    return jvp


def _matrix_product_vjp(fn):
    """VJP of a product of matrices (or stacks of them) ``fn(a, b)``: ``fn(ct, b^H)`` and
    ``fn(a^H, ct)``."""

    def vjp(cts, outs, args, params, needs):
        ct = cts[0]
        a, b = args
        grad_a = fn(ct, _mH(b)) if needs[0] else None
        grad_b = fn(_mH(a), ct) if needs[1] else None
        return grad_a, grad_b

    return vjp


_PRODUCT = ("matmul", "bilinear")


def _product(name, impl, *, vjp, batch, node_name, doc):
    """Register a bilinear product op and return its public function (JVP from itself)."""

    def product(a, b):
        return caller(a, b)

    # sparsity: of matrices and vectors (stacks of them get the dense rule)
    rules = {"vjp": vjp, "jvp": product_jvp(product), "batch": batch, "sparsity": _PRODUCT}
    op = OpDef(name, impl, node_name=node_name, **rules)
    caller = binary_caller(register(op), doc=doc)
    return caller


def _matmul_shape(sa: tuple, sb: tuple) -> tuple:
    if len(sa) == 1 and len(sb) == 1:
        return ()
    if len(sa) == 1:
        return (*sb[:-2], sb[-1])
    if len(sb) == 1:
        return tuple(sa[:-1])
    return (*np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])), sa[-2], sb[-1])


def _matmul_batch(op, args, bdims, params):
    """Batch dim first; a batched vector becomes a one-row (column) matrix; batched operands are
    padded to the largest logical rank so their batch dim broadcasts against nothing else."""
    moved, logical = [], []
    for x, bdim in zip(args, bdims):
        x = move_bdim_to_front(x, bdim)
        moved.append(x)
        logical.append(tuple(x.shape[1:]) if bdim is not None else tuple(x.shape))
    size = next(x.shape[0] for x, bdim in zip(moved, bdims) if bdim is not None)
    # One batched operand against a plain matrix: fold the batch into the rows of a single
    # matrix product (one BLAS call) instead of a stack of B small products.
    (a, b), (la, lb) = moved, logical
    if bdims[1] is None and len(lb) == 2 and len(la) in (1, 2):
        if len(la) == 1:  # (B, n) @ (n, m)
            return matmul(a, b), 0
        rows = reshape(a, (size * la[0], la[1]))  # (B*k, n) @ (n, m)
        return reshape(matmul(rows, b), (size, la[0], lb[1])), 0
    if len(lb) == 1 and len(la) == 1:  # dot products: (B, n) @ (n,) or (n,) @ (B, n) -> (B,)
        if bdims[1] is None:
            return matmul(a, b), 0
        if bdims[0] is None:
            return matmul(b, a), 0
    if bdims[0] is None and len(la) == 2 and len(lb) == 1:  # (k, n) @ (B, n) -> (B, k)
        return matmul(b, matrix_transpose(a)), 0
    if bdims[0] is None and len(la) == 2 and len(lb) == 2:  # (k, n) @ (B, n, m) -> (B, k, m)
        columns = reshape(matrix_transpose(b), (size * lb[1], lb[0]))  # (B*m, n)
        out = reshape(matmul(columns, matrix_transpose(a)), (size, lb[1], la[0]))
        return matrix_transpose(out), 0
    out_shape = (size, *_matmul_shape(*logical))
    ranks = [
        max(len(s), 2) if bdim is not None or len(s) >= 2 else 1 for s, bdim in zip(logical, bdims)
    ]
    rank = max(ranks)
    operands = []
    for i, (x, s, bdim) in enumerate(zip(moved, logical, bdims)):
        if bdim is not None:
            if len(s) == 1:
                s = (1, *s) if i == 0 else (*s, 1)
            x = reshape(x, (size, *(1,) * (rank - len(s)), *s))
        operands.append(x)
    out = matmul(*operands)
    return reshape(out, out_shape), 0


matmul = public.method(
    _product(
        "matmul",
        _matmul_impl,
        vjp=_matmul_vjp,
        batch=_matmul_batch,
        node_name="MmBackward0",
        doc="""Matrix product with NumPy/PyTorch broadcasting (``a @ b``).

    1-D operands are vectors (a dot product for two of them, a matrix-vector or vector-matrix
    product otherwise); N-D operands are stacks of matrices whose batch dims broadcast.

    >>> import dualad
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dualad.matmul(a, dualad.tensor([1.0, -1.0]))
    tensor([-1., -1.])
    """,
    )
)


# ---------------------------------------------------------------------------------------------
# mm, bmm


def _mm_impl(xp, a, b):
    if _ndim(a) != 2:
        raise RuntimeError(f"dualad.mm: self must be a matrix, but got shape {_shape(a)}")
    if _ndim(b) != 2:
        raise RuntimeError(f"dualad.mm: mat2 must be a matrix, but got shape {_shape(b)}")
    try:
        return xp.matmul(a, b)
    except ValueError:
        raise RuntimeError(_matmul_message("mm", a, b)) from None


def _batch_via_matmul(op, args, bdims, params):
    a = move_bdim_to_front(args[0], bdims[0])
    b = move_bdim_to_front(args[1], bdims[1])
    return matmul(a, b), 0


mm = public.method(
    _product(
        "mm",
        _mm_impl,
        vjp=_matrix_product_vjp(lambda a, b: mm(a, b)),
        batch=_batch_via_matmul,
        node_name="MmBackward0",
        doc="""Product of two matrices (2-D only; see ``matmul`` for vectors and batches).

    >>> import dualad
    >>> dualad.mm(dualad.eye(2), dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[1., 2.],
            [3., 4.]])
    """,
    )
)


def _bmm_impl(xp, a, b):
    sa, sb = _shape(a), _shape(b)
    if len(sa) != 3:
        raise RuntimeError(f"dualad.bmm: batch1 must be a 3D tensor, but got shape {sa}")
    if len(sb) != 3:
        raise RuntimeError(f"dualad.bmm: batch2 must be a 3D tensor, but got shape {sb}")
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(
            f"dualad.bmm: Expected size for first two dimensions of batch2 tensor to be: "
            f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}] (shapes {sa} and {sb})."
        )
    return xp.matmul(a, b)


bmm = public.method(
    _product(
        "bmm",
        _bmm_impl,
        vjp=_matrix_product_vjp(lambda a, b: bmm(a, b)),
        batch=_batch_via_matmul,
        node_name="BmmBackward0",
        doc="""Batched matrix product: ``(B, n, k) @ (B, k, m) -> (B, n, m)``, no broadcasting.

    >>> import dualad
    >>> dualad.bmm(dualad.ones(4, 2, 3), dualad.ones(4, 3, 5)).shape
    (4, 2, 5)
    """,
    )
)


# ---------------------------------------------------------------------------------------------
# dot, vdot


def _vector_check(op: str, a, b) -> None:
    sa, sb = _shape(a), _shape(b)
    if len(sa) != 1 or len(sb) != 1:
        raise RuntimeError(
            f"dualad.{op}: 1D tensors expected, but got {len(sa)}D and {len(sb)}D tensors "
            f"(shapes {sa} and {sb})"
        )
    if sa[0] != sb[0]:
        raise RuntimeError(
            f"dualad.{op}: inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] "
            f"to have the same number of elements, but got {sa[0]} and {sb[0]} elements "
            "respectively"
        )


# dot and vdot are written alike (check, NumPy call; a VJP of one line) as two ops' rules: they
# differ in the conjugation, which a shared helper would only hide behind a flag
def _dot_impl(xp, a, b):
    _vector_check("dot", a, b)
    return xp.dot(a, b)


def _dot_vjp(cts, outs, args, params, needs):
    ct = cts[0]
    a, b = args
    return (ct * conj(b) if needs[0] else None, ct * conj(a) if needs[1] else None)


def _vector_batch(conj_first: bool):
    def batch(op, args, bdims, params):
        a, b = args
        if conj_first:
            a = conj(a)
        terms = []
        moved = []
        for x, bdim in zip((a, b), bdims):
            moved.append(move_bdim_to_front(x, bdim))
            terms.append("i" if bdim is None else "zi")
        return contract(",".join(terms) + "->z", moved), 0

    return batch


dot = public.method(
    _product(
        "dot",
        _dot_impl,
        vjp=_dot_vjp,
        batch=_vector_batch(conj_first=False),
        node_name="DotBackward0",
        doc="""Dot product of two 1-D tensors (no conjugation; see ``vdot``).

    >>> import dualad
    >>> dualad.dot(dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, 4.0]))
    tensor(11.)
    """,
    )
)


def _vdot_impl(xp, a, b):
    _vector_check("vdot", a, b)
    return xp.vdot(a, b)


def _vdot_vjp(cts, outs, args, params, needs):
    # vdot(a, b) = sum(conj(a) * b): antiholomorphic in a, holomorphic in b
    ct = cts[0]
    a, b = args
    return (conj(ct) * b if needs[0] else None, ct * a if needs[1] else None)


vdot = public.method(
    _product(
        "vdot",
        _vdot_impl,
        vjp=_vdot_vjp,
        batch=_vector_batch(conj_first=True),
        node_name="VdotBackward0",
        doc="""``sum(conj(a) * b)`` for two 1-D tensors (conjugates the first argument).

    >>> import dualad
    >>> dualad.vdot(dualad.tensor([1j, 2.0]), dualad.tensor([1j, 1.0]))
    tensor(3.+0.j)
    """,
    )
)


# ---------------------------------------------------------------------------------------------
# inner, outer, tensordot, kron: compositions of einsum / mul / reshape


def _symbols(n: int, start: int = 0) -> str:
    import opt_einsum

    return "".join(opt_einsum.get_symbol(i) for i in range(start, start + n))


@public.method
def inner(a, b) -> Tensor:
    """Inner product over the last dimension: ``out[i..., j...] = sum_k a[i..., k] b[j..., k]``.

    A 0-d operand multiplies instead. No conjugation.

    >>> import dualad
    >>> dualad.inner(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]), dualad.tensor([1.0, 1.0]))
    tensor([3., 7.])
    """
    a, b = _as_tensor(a), _as_tensor(b)
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            f"dualad.inner: inner() the last dimension must match on both input tensors but got "
            f"shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    letters_a = _symbols(a.ndim)
    letters_b = _symbols(b.ndim - 1, a.ndim) + letters_a[-1]
    equation = f"{letters_a},{letters_b}->{letters_a[:-1]}{letters_b[:-1]}"
    return contract(equation, (a, b))


@public.method
def outer(a, b) -> Tensor:
    """Outer product of two 1-D tensors: ``out[i, j] = a[i] * b[j]``.

    >>> import dualad
    >>> dualad.outer(dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 10.0]))
    tensor([[ 1., 10.],
            [ 2., 20.]])
    """
    a, b = _as_tensor(a), _as_tensor(b)
    for name, x in (("self", a), ("vec2", b)):
        if x.ndim != 1:
            raise RuntimeError(
                f"dualad.outer: Expected 1-D argument {name}, but got {x.ndim}-D "
                f"(shape {tuple(x.shape)})"
            )
    return mul(unsqueeze(a, 1), b)


ger = public.function(outer, "ger")


def _dim_list(dims, ndim: int, which: str) -> list:
    if isinstance(dims, (int, np.integer)):
        dims = [dims]
    return [normalize_dim(int(d), ndim, op=f"tensordot ({which})") for d in dims]


@public.function
def tensordot(a, b, dims=2, *, axes=None) -> Tensor:
    """Contract ``a`` and ``b`` over the given dimensions (an einsum through opt_einsum).

    ``dims`` is an int ``n`` (the last ``n`` dims of ``a`` with the first ``n`` of ``b``) or a
    pair of lists ``(dims_a, dims_b)``; NumPy's ``axes=`` is accepted too. The output holds the
    remaining dims of ``a`` then those of ``b``.

    >>> import dualad
    >>> dualad.tensordot(dualad.ones(2, 3, 4), dualad.ones(3, 4, 5), dims=2).shape
    (2, 5)
    >>> dualad.tensordot(dualad.ones(2, 3), dualad.ones(3, 2), dims=([0, 1], [1, 0]))
    tensor(6.)
    """
    a, b = _as_tensor(a), _as_tensor(b)
    if axes is not None:
        dims = axes
    if isinstance(dims, (int, np.integer)):
        n = int(dims)
        if n < 0:
            raise RuntimeError(f"dualad.tensordot: tensordot expects dims >= 0, but got dims={n}")
        if n > a.ndim or n > b.ndim:
            raise RuntimeError(
                f"dualad.tensordot: dims={n} is larger than the number of dimensions of the "
                f"operands (shapes {tuple(a.shape)} and {tuple(b.shape)})"
            )
        dims_a = list(range(a.ndim - n, a.ndim))
        dims_b = list(range(n))
    else:
        try:
            first, second = dims
        except (TypeError, ValueError):
            raise RuntimeError(
                f"dualad.tensordot: dims must be an int or a pair of lists, got {dims!r}"
            ) from None
        dims_a = _dim_list(first, a.ndim, "dims for the first operand")
        dims_b = _dim_list(second, b.ndim, "dims for the second operand")
    if len(dims_a) != len(dims_b):
        raise RuntimeError(
            f"dualad.tensordot: both dimension lists should have same length, got {dims_a} and "
            f"{dims_b}"
        )
    if len(set(dims_a)) != len(dims_a) or len(set(dims_b)) != len(dims_b):
        raise RuntimeError(f"dualad.tensordot: repeated dims in {dims_a} or {dims_b}")
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(
                f"dualad.tensordot: contracted dimensions need to match, but first has size "
                f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} in dim {db} "
                f"(shapes {tuple(a.shape)} and {tuple(b.shape)})"
            )
    letters_a = _symbols(a.ndim)
    fresh = iter(_symbols(b.ndim, a.ndim))
    shared = dict(zip(dims_b, dims_a))
    letters_b = "".join(letters_a[shared[d]] if d in shared else next(fresh) for d in range(b.ndim))
    output = "".join(letters_a[d] for d in range(a.ndim) if d not in dims_a) + "".join(
        letters_b[d] for d in range(b.ndim) if d not in shared
    )
    return contract(f"{letters_a},{letters_b}->{output}", (a, b))


@public.method
def kron(a, b) -> Tensor:
    """Kronecker product; operands of different rank are padded with leading 1s.

    >>> import dualad
    >>> dualad.kron(dualad.eye(2), dualad.tensor([[1.0, 2.0]]))
    tensor([[1., 2., 0., 0.],
            [0., 0., 1., 2.]])
    """
    a, b = _as_tensor(a), _as_tensor(b)
    ndim = max(a.ndim, b.ndim)
    if ndim == 0:
        return mul(a, b)
    sa = (1,) * (ndim - a.ndim) + tuple(a.shape)
    sb = (1,) * (ndim - b.ndim) + tuple(b.shape)
    # (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...) -> (a0, b0, a1, b1, ...) -> (a0*b0, a1*b1, ...)
    spread_a = reshape(a, tuple(s for size in sa for s in (size, 1)))
    spread_b = reshape(b, tuple(s for size in sb for s in (1, size)))
    return reshape(mul(spread_a, spread_b), tuple(x * y for x, y in zip(sa, sb)))


# ---------------------------------------------------------------------------------------------
# trace


def _real_dtype(dtype):
    return np.empty(0, dtype).real.dtype


def _trace_transpose(ct, x):
    n, m = x.shape[-2:]
    ct = reshape(ct, (*ct.shape, 1, 1))
    return ct * eye(n, m, dtype=_real_dtype(ct.dtype), device=ct.device)


def _trace_batch(op, args, bdims, params):
    return apply(op, move_bdim_to_front(args[0], bdims[0])), 0


# the op sums the diagonal of the last two dims, so the batch rule reuses it unchanged
_trace_op = linear(
    "trace",
    lambda xp, x: xp.trace(x, axis1=-2, axis2=-1),
    _trace_transpose,
    batch=_trace_batch,
    sparsity=LINEAR_DENSE,
)


@public.method
def trace(x) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor (not necessarily square).

    >>> import dualad
    >>> dualad.trace(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    x = _as_tensor(x)
    if x.ndim != 2:
        raise RuntimeError(
            f"dualad.trace: expected a matrix, but got tensor with dim {x.ndim} "
            f"(shape {tuple(x.shape)})"
        )
    return apply1(_trace_op, x, {})
