"""Linear matrix equations: ``linalg_solve_sylvester`` (``A X + X B = Q``),
``linalg_solve_continuous_lyapunov`` (``A X + X A^H = Q``) and
``linalg_solve_discrete_lyapunov`` (``A X A^H - X + Q = 0``) and ``linalg_solve_continuous_are``
(the Riccati equation ``A^H X + X A - X B R^{-1} B^H X + Q = 0``, whose derivative is a Lyapunov
equation with the closed-loop matrix), SciPy's ``scipy.linalg`` solvers as ops.

Each equation is linear in ``X``, ``L(X) = Q``, so its derivatives solve the same equation
again: the JVP moves the tangents of the coefficients to the right-hand side
(``dX = L^{-1}(dQ - dA X - X dB)`` for Sylvester), and the VJP solves the adjoint equation
(``A^H Y + Y B^H = G``: the same solver with the coefficients conjugate-transposed) and gives
``gQ = Y``, ``gA = -Y X^H``, ``gB = -X^H Y``. The rules call the ops themselves, so every order
and transform composes, and each costs one more solve (one Schur factorisation per coefficient).

Singular points: the equation is singular when ``A`` and ``-B`` share an eigenvalue (Sylvester;
``lambda_i + conj(lambda_j) = 0`` for the continuous Lyapunov equation, ``lambda_i conj(lambda_j)
= 1`` for the discrete one). There the solvers raise ``numpy.linalg.LinAlgError`` naming the op
and the shapes; SciPy's Sylvester and continuous Lyapunov solvers return LAPACK's solution of a
perturbed equation instead (a finite, wrong number: ``*TRSYL``'s ``info = 1``, which also
reports eigenvalues so close that LAPACK perturbed them). ``mode="nan"`` (for the rules of
``sqrtm``, whose derivative does not exist at a singular matrix) returns NaN there instead.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._backend import unavailable_on_cuda
from .._dispatch import OpDef, apply, register
from .._tensor import Tensor
from ._exports import Exports
from ._lapack import LinAlgError, linalg_dtype, stack_batch
from ._reducing import _as_tensor
from .base import broadcast_to
from .casts import astype
from .linalg import matmul
from .solvers import linalg_solve
from .triangular import mH

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def on_host(xp, fn, *arrays, what: str = "this matrix function"):
    """``fn`` of NumPy ``arrays``. SciPy's Schur-based solvers have no CuPy version (CuPy has
    no Schur decomposition), and dualad copies nothing to the host behind the caller's back:
    CuPy arrays raise NotImplementedError naming ``what``."""
    if xp is np:
        return fn(*arrays)
    raise unavailable_on_cuda(what, "CuPy has no Schur decomposition (scipy.linalg.schur)")


def _schur(a):
    return scipy.linalg.schur(a, output="complex" if a.dtype.kind == "c" else "real")


def _sylvester_one(a, b, q, singular: str, where: str, same: bool = False):
    """Bartels-Stewart for one equation ``A X + X B = Q``: ``b is None`` means ``B = A^H``,
    ``same`` means ``B = A`` (one Schur factorisation ``A = U T U^H`` serves both sides:
    ``T Y + Y T = U^H Q U``); ``*TRSYL``'s ``info = 1`` means a singular equation."""
    if 0 in q.shape:  # an empty solution (SciPy's; trsyl rejects empty matrices)
        return np.zeros(q.shape, q.dtype)
    r, u = _schur(a)
    if same:
        s, v, transposed = r, u, "N"
    else:
        s, v = (r, u) if b is None else _schur(b.conj().T)
        transposed = "C"
    f = u.conj().T @ q @ v
    (trsyl,) = scipy.linalg.get_lapack_funcs(("trsyl",), (r, s, f))
    y, scale, info = trsyl(r, s, f, tranb=transposed)
    if info < 0:  # pragma: no cover - LAPACK's argument checks; the shapes are checked before
        raise LinAlgError(f"{where}: illegal value in argument {-info} of trsyl")
    if info == 1:
        if singular == "nan":
            return np.full(q.shape, np.nan, q.dtype)
        raise LinAlgError(
            f"{where}: the equation is singular (the coefficients have eigenvalues that cancel: "
            "no unique solution)"
        )
    return u @ (y * scale) @ v.conj().T


def _batched(fn, q, *coefficients):
    """``fn(*coefficients_i, q_i)`` over the batch dims of every argument, broadcast (a
    batching rule passes unbatched arguments without a batch dim)."""
    present = [c for c in coefficients if c is not None]
    batch = np.broadcast_shapes(*(x.shape[:-2] for x in (*present, q)))
    q = np.broadcast_to(q, batch + q.shape[-2:])
    coefficients = [
        None if c is None else np.broadcast_to(c, batch + c.shape[-2:]) for c in coefficients
    ]
    out = np.empty(q.shape, q.dtype)
    for index in np.ndindex(*batch):
        out[index] = fn(*(c[index] if c is not None else None for c in coefficients), q[index])
    return out


def _dtype_of(*arrays):
    dtype = np.result_type(*arrays)
    return np.float64 if dtype.kind in "biu" else dtype


def _equation_op(name: str, impl, vjp, jvp) -> OpDef:
    """A matrix equation's op: rules on the solution, batch dims broadcast (``stack_batch``)."""
    return register(OpDef(name, impl, vjp=vjp, jvp=jvp, batch=stack_batch(2), save_out=True))


def _sylvester_impl(xp, a, b, q, *, singular, same):
    dtype = _dtype_of(a, b, q)
    where = f"dualad.linalg.solve_sylvester (a {a.shape}, b {b.shape}, q {q.shape})"

    def solve(a, b, q):
        one = lambda a, b, q: _sylvester_one(a, b, q, singular, where, same)
        return _batched(one, q.astype(dtype), a.astype(dtype), b.astype(dtype))

    return on_host(xp, solve, a, b, q, what="linalg.solve_sylvester")


def sylvester(a, b, q, singular: str = "raise", same: bool = False):
    """``X`` with ``A X + X B = Q`` on tensors of broadcastable batch dims (the op; no checks).
    ``singular="nan"``: NaN where the equation is singular; ``same``: ``b`` is ``a`` (one Schur
    factorisation)."""
    return apply(_sylvester_op, a, b, q, singular=singular, same=same)


def _sylvester_vjp(cts, outs, args, params, needs):
    a, b, _ = args
    x = outs[0]
    y = sylvester(mH(a), mH(b), cts[0], params["singular"], params["same"])
    return (
        -matmul(y, mH(x)) if needs[0] else None,
        -matmul(mH(x), y) if needs[1] else None,
        y,
    )


def _moved(rhs, term):
    return -term if rhs is None else rhs - term


def _sylvester_jvp(tangents, outs, args, params):
    t_a, t_b, rhs = tangents
    x = outs[0]
    if t_a is not None:
        rhs = _moved(rhs, matmul(t_a, x))
    if t_b is not None:
        rhs = _moved(rhs, matmul(x, t_b))
    return sylvester(args[0], args[1], rhs, params["singular"], params["same"])


_sylvester_op = _equation_op(
    "linalg_solve_sylvester", _sylvester_impl, _sylvester_vjp, _sylvester_jvp
)


def _check_square(op: str, name: str, x: Tensor, shapes: str) -> None:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"dualad.linalg.{op}: {name} must be a square matrix ({shapes})")


def _prepared(op: str, names: str, *args) -> list[Tensor]:
    """The arguments as tensors of one linalg dtype and one (broadcast) batch shape, after
    SciPy's checks: square coefficients, a right-hand side of matching shape."""
    args = [_as_tensor(x) for x in args]
    shapes = ", ".join(f"{n} {tuple(x.shape)}" for n, x in zip(names.split(), args))
    for name, x in zip(names.split()[:-1], args[:-1]):
        _check_square(op, name, x, shapes)
    q = args[-1]
    rows = args[0].shape[-1]
    cols = args[1].shape[-1] if len(args) == 3 else rows
    if q.ndim < 2 or tuple(q.shape[-2:]) != (rows, cols):
        raise ValueError(f"dualad.linalg.{op}: q must be a {rows}x{cols} matrix ({shapes})")
    return _common(op, args, shapes)


def _common(op: str, args, shapes: str) -> list[Tensor]:
    """``args`` in one linalg dtype, broadcast to one batch shape (so the rules' gradients have
    the inputs' shapes: broadcast_to's VJP sums them down)."""
    try:
        batch = np.broadcast_shapes(*(tuple(x.shape[:-2]) for x in args))
    except ValueError:
        raise ValueError(f"dualad.linalg.{op}: batch dims do not broadcast ({shapes})") from None
    dtype = linalg_dtype(op, *(x.dtype for x in args))
    out = []
    for x in args:
        x = x if x.dtype == dtype else astype(x, dtype)
        target = batch + tuple(x.shape[-2:])
        out.append(x if tuple(x.shape) == target else broadcast_to(x, target))
    return out


@public.function
def linalg_solve_sylvester(a, b, q) -> Tensor:
    """``X`` with ``A X + X B = Q`` for ``A`` (..., m, m), ``B`` (..., n, n) and ``Q``
    (..., m, n), batch dims broadcast (``dualad.linalg.solve_sylvester`` is the public
    spelling; SciPy's Bartels-Stewart algorithm).

    Derivatives in every argument solve the same equation again (the adjoint equation
    ``A^H Y + Y B^H = G`` for the VJP). A singular equation (``A`` and ``-B`` share an
    eigenvalue) raises ``LinAlgError``, where SciPy returns a perturbed solution.

    >>> import dualad
    >>> a = dualad.tensor([[2.0, 0.0], [0.0, 3.0]])
    >>> dualad.linalg_solve_sylvester(a, dualad.tensor([[1.0]]), dualad.tensor([[3.0], [8.0]]))
    tensor([[1.],
            [2.]])
    """
    same = a is b  # solve_sylvester(a, a, q): one Schur factorisation
    a, b, q = _prepared("solve_sylvester", "a b q", a, b, q)
    return sylvester(a, b, q, same=same)


# ---------------------------------------------------------------------------------------------
# Lyapunov equations


def _continuous_impl(xp, a, q):
    dtype = _dtype_of(a, q)
    where = f"dualad.linalg.solve_continuous_lyapunov (a {a.shape}, q {q.shape})"

    def solve(a, q):
        one = lambda a, q: _sylvester_one(a, None, q, "raise", where)
        return _batched(one, q.astype(dtype), a.astype(dtype))

    return on_host(xp, solve, a, q, what="linalg.solve_continuous_lyapunov")


def continuous_lyapunov(a, q):
    """``X`` with ``A X + X A^H = Q`` (the op; no checks)."""
    return apply(_continuous_op, a, q)


def _continuous_vjp(cts, outs, args, params, needs):
    x = outs[0]
    y = continuous_lyapunov(mH(args[0]), cts[0])  # the adjoint of X -> A X + X A^H
    return (-(matmul(y, mH(x)) + matmul(mH(y), x)) if needs[0] else None), y


def _continuous_jvp(tangents, outs, args, params):
    t_a, rhs = tangents
    if t_a is not None:
        moved = matmul(t_a, outs[0])
        rhs = _moved(rhs, moved + matmul(outs[0], mH(t_a)))
    return continuous_lyapunov(args[0], rhs)


_continuous_op = _equation_op(
    "linalg_solve_continuous_lyapunov", _continuous_impl, _continuous_vjp, _continuous_jvp
)


@public.function
def linalg_solve_continuous_lyapunov(a, q) -> Tensor:
    """``X`` with ``A X + X A^H = Q`` for ``A`` and ``Q`` (..., n, n), batch dims broadcast
    (``dualad.linalg.solve_continuous_lyapunov`` is the public spelling; SciPy's values).

    Derivatives solve the same equation (the VJP with ``A^H``). A singular equation
    (``lambda_i + conj(lambda_j) = 0`` for eigenvalues of ``A``) raises ``LinAlgError``.

    >>> import dualad
    >>> a = dualad.tensor([[-1.0, 0.0], [0.0, -2.0]])
    >>> dualad.linalg_solve_continuous_lyapunov(a, dualad.tensor([[-2.0, 0.0], [0.0, -8.0]]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    a, q = _prepared("solve_continuous_lyapunov", "a q", a, q)
    return continuous_lyapunov(a, q)


def _discrete_one(a, q, where):
    try:
        x = scipy.linalg.solve_discrete_lyapunov(a, q)
    except LinAlgError:
        x = None
    if x is None or not np.all(np.isfinite(x)):
        raise LinAlgError(
            f"{where}: the equation is singular (eigenvalues of a with "
            "lambda_i conj(lambda_j) = 1: no unique solution)"
        )
    return x


def _discrete_impl(xp, a, q):
    dtype = _dtype_of(a, q)
    where = f"dualad.linalg.solve_discrete_lyapunov (a {a.shape}, q {q.shape})"

    def solve(a, q):
        one = lambda a, q: _discrete_one(a, q, where)
        return _batched(one, q.astype(dtype), a.astype(dtype))

    return on_host(xp, solve, a, q, what="linalg.solve_discrete_lyapunov")


def discrete_lyapunov(a, q):
    """``X`` with ``A X A^H - X + Q = 0`` (the op; no checks)."""
    return apply(_discrete_op, a, q)


def _discrete_vjp(cts, outs, args, params, needs):
    a, x = args[0], outs[0]
    y = discrete_lyapunov(mH(a), cts[0])  # the adjoint of X -> X - A X A^H
    g_a = matmul(matmul(y, a), mH(x)) + matmul(matmul(mH(y), a), x) if needs[0] else None
    return g_a, y


def _discrete_jvp(tangents, outs, args, params):
    t_a, rhs = tangents
    if t_a is not None:
        a, x = args[0], outs[0]
        moved = matmul(matmul(t_a, x), mH(a)) + matmul(matmul(a, x), mH(t_a))
        rhs = moved if rhs is None else rhs + moved
    return discrete_lyapunov(args[0], rhs)


_discrete_op = _equation_op(
    "linalg_solve_discrete_lyapunov", _discrete_impl, _discrete_vjp, _discrete_jvp
)


@public.function
def linalg_solve_discrete_lyapunov(a, q) -> Tensor:
    """``X`` with ``A X A^H - X + Q = 0`` for ``A`` and ``Q`` (..., n, n), batch dims broadcast
    (``dualad.linalg.solve_discrete_lyapunov`` is the public spelling; SciPy's values, its
    ``method=None`` choice: Kronecker for n < 10, the bilinear transformation above).

    Derivatives solve the same equation (the VJP with ``A^H``). A singular equation
    (``lambda_i conj(lambda_j) = 1`` for eigenvalues of ``A``) raises ``LinAlgError``.

    >>> import dualad
    >>> a = dualad.tensor([[0.5, 0.0], [0.0, 0.0]])
    >>> dualad.linalg_solve_discrete_lyapunov(a, dualad.tensor([[3.0, 0.0], [0.0, 1.0]]))
    tensor([[4., 0.],
            [0., 1.]])
    """
    a, q = _prepared("solve_discrete_lyapunov", "a q", a, q)
    return discrete_lyapunov(a, q)


# ---------------------------------------------------------------------------------------------
# the continuous algebraic Riccati equation


def _care_one(a, b, r, q, where):
    try:
        return scipy.linalg.solve_continuous_are(a, b, q, r)
    except (LinAlgError, ValueError) as exc:
        raise type(exc)(f"{where}: {exc}") from None


def _care_impl(xp, a, b, q, r):
    dtype = _dtype_of(a, b, q, r)
    where = (
        f"dualad.linalg.solve_continuous_are (a {a.shape}, b {b.shape}, q {q.shape}, r {r.shape})"
    )

    def solve(a, b, q, r):
        one = lambda a, b, r, q: _care_one(a, b, r, q, where)
        return _batched(one, q.astype(dtype), a.astype(dtype), b.astype(dtype), r.astype(dtype))

    return on_host(xp, solve, a, b, q, r, what="linalg.solve_continuous_are")


def _closed_loop(a, b, r, x):
    """``(A - B K, W B^H)`` with ``W = R^{-1}``, ``K = W B^H X``: the closed-loop matrix whose
    Lyapunov equation the derivatives solve."""
    wbh = linalg_solve(r, mH(b))
    return a - matmul(b, matmul(wbh, x)), wbh


def _care_vjp(cts, outs, args, params, needs):
    a, b, _, r = args
    x = outs[0]
    closed, wbh = _closed_loop(a, b, r, x)
    y = continuous_lyapunov(closed, cts[0])  # the adjoint of dX -> Acl^H dX + dX Acl
    g_a = -(matmul(x, mH(y)) + matmul(mH(x), y)) if needs[0] else None
    g_b = g_r = None
    if needs[1] or needs[3]:
        g_s = matmul(matmul(mH(x), y), mH(x))  # dX carries + X dS X, S = B W B^H
        if needs[1]:
            g_b = matmul(g_s, mH(wbh)) + matmul(mH(g_s), mH(wbh))
        if needs[3]:
            g_r = -matmul(matmul(wbh, g_s), mH(wbh))
    return g_a, g_b, -y, g_r


def _care_jvp(tangents, outs, args, params):
    a, b, _, r = args
    t_a, t_b, t_q, t_r = tangents
    x = outs[0]
    closed, wbh = _closed_loop(a, b, r, x)
    rhs = None if t_q is None else -t_q
    if t_a is not None:
        rhs = _moved(rhs, matmul(mH(t_a), x) + matmul(x, t_a))
    d_s = None
    if t_b is not None:
        term = matmul(t_b, wbh)
        d_s = term + mH(term)
    if t_r is not None:
        term = -matmul(matmul(mH(wbh), t_r), wbh)
        d_s = term if d_s is None else d_s + term
    if d_s is not None:
        moved = matmul(matmul(x, d_s), x)
        rhs = moved if rhs is None else rhs + moved
    return continuous_lyapunov(mH(closed), rhs)


_care_op = _equation_op("linalg_solve_continuous_are", _care_impl, _care_vjp, _care_jvp)


@public.function
def linalg_solve_continuous_are(a, b, q, r) -> Tensor:
    """``X`` with ``A^H X + X A - X B R^{-1} B^H X + Q = 0``, the stabilising solution, for
    ``A`` (..., n, n), ``B`` (..., n, m), Hermitian ``Q`` (..., n, n) and ``R`` (..., m, m)
    (``dualad.linalg.solve_continuous_are``: SciPy's values; its ``e``, ``s`` and ``balanced``
    are not offered).

    Derivatives solve one Lyapunov equation with the closed-loop matrix
    ``A - B R^{-1} B^H X``; as for ``eigh``, they are taken along Hermitian ``Q`` and ``R``.
    Where SciPy finds no stabilising solution (eigenvalues of the Hamiltonian on the imaginary
    axis) it raises ``LinAlgError``, naming the op and the shapes.

    >>> import dualad
    >>> one = dualad.tensor([[1.0]])
    >>> dualad.linalg_solve_continuous_are(one * 0, one, one, one)
    tensor([[1.]])
    """
    a, b, q, r = (_as_tensor(x) for x in (a, b, q, r))
    shapes = f"a {tuple(a.shape)}, b {tuple(b.shape)}, q {tuple(q.shape)}, r {tuple(r.shape)}"
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"dualad.linalg.solve_continuous_are: b must be n x m ({shapes})")
    for name, x, size in (("a", a, a.shape[-1]), ("q", q, a.shape[-1]), ("r", r, b.shape[-1])):
        _check_square("solve_continuous_are", name, x, shapes)
        if x.shape[-1] != size:
            raise ValueError(
                f"dualad.linalg.solve_continuous_are: {name} must be {size}x{size} ({shapes})"
            )
    return apply(_care_op, *_common("solve_continuous_are", (a, b, q, r), shapes))
