"""Analytic functions of square matrices, SciPy's ``scipy.linalg`` ones as ops: ``linalg_logm``,
``linalg_sqrtm``, ``linalg_fractional_matrix_power``, ``linalg_signm``, ``linalg_cosm``,
``linalg_sinm``, ``linalg_tanm``, ``linalg_coshm``, ``linalg_sinhm``, ``linalg_tanhm``.

Derivatives. For ``f`` with a real power series (``f(conj z) = conj f(z)``: all of these, on
their principal branches), the Frechet derivative ``L_f(A, E)`` is the upper right block of
``f([[A, E], [0, A]])`` (``matrix_functions.frechet_block``, as for ``matrix_exp``); that is
the JVP, and the VJP is ``L_f(A^H, G)`` (the adjoint of ``L_f(A, .)``: PyTorch's convention for
complex inputs). The rules call the op itself on the 2n x 2n block matrix, so every order and
transform composes, and they are exact at repeated eigenvalues and at defective matrices (no
eigendecomposition). The cost is ``f`` on a matrix twice the size (about 8 times the flops of
the forward). ``sqrtm`` has a cheaper exact rule: ``X dX + dX X = dA`` is one Sylvester
equation with ``X = sqrtm(A)`` (``matrix_equations``; its adjoint ``X^H Y + Y X^H = G``).

Values are SciPy's (``sqrtm`` calls it; ``logm`` and ``fractional_matrix_power`` are SciPy's
algorithms, inverse scaling and squaring on the Schur form, with exact norms where SciPy draws
random numbers for a norm estimate: deterministic, thread-safe, equal to SciPy's to rounding;
on CuPy arrays through the host; the trigonometric and hyperbolic functions use SciPy's formulas
on ``expm``, ``cupyx.scipy.linalg.expm`` on CuPy). ``signm`` is the scaled Newton iteration
``X <- (mu X + (mu X)^{-1}) / 2`` (Higham, Functions of Matrices, 5.3), whose limit SciPy's
``signm`` approximates: SciPy's fallback for defective matrices shifts the matrix, which would
give the derivative of the shifted matrix. Two differences from SciPy, both for types: a real
input whose result is not real (``logm``, ``sqrtm`` and fractional powers of a real matrix with
an eigenvalue on the negative real axis, where SciPy returns a complex result) raises
``ValueError`` (pass a complex matrix); float32 inputs give float32 results (SciPy's ``logm`` and
``fractional_matrix_power`` give float64; these three compute single precision in double).

Singular points (stated in each docstring, tested in ``tests/linalg/test_matrix_functions.py``):
``logm`` of an exactly singular matrix raises ``LinAlgError`` (SciPy warns and returns a finite
meaningless value); the derivatives of ``sqrtm`` and of non-integer powers at an exactly singular
matrix do not exist and are NaN; an eigenvalue on the negative real axis of a complex matrix
(the branch cut of ``logm``, ``sqrtm`` and powers) gives the value and the derivative of the
branch continuous from above (``Im log = +pi``), one-sided; ``signm`` of a matrix with an
eigenvalue on the imaginary axis raises ``LinAlgError``; ``tanm``/``tanhm`` at a pole (singular
``cosm``/``coshm``) raises ``LinAlgError``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg

from .._creation import _is_tracked
from .._tensor import Tensor
from ._exports import Exports
from ._lapack import LinAlgError, lu_factor, per_matrix
from ._spectral import call, floating_array, linalg_op, mH
from .matrix_equations import on_host, sylvester
from .matrix_functions import _expm_module, frechet_block

public = Exports()
__all__, TENSOR_METHODS, INPLACE_METHODS = public.lists()


def _expm(xp, a):
    if xp is np:
        return scipy.linalg.expm(a)
    return per_matrix(_expm_module(xp).expm, a.shape[:-2], (2,), a)


def _not_real(name: str, a) -> ValueError:
    return ValueError(
        f"dualad.linalg.{name}: the real matrix of shape {a.shape} has an eigenvalue on the "
        "negative real axis, so its result is not real (scipy.linalg returns a complex one): "
        "pass a complex matrix"
    )


# ---------------------------------------------------------------------------------------------
# inverse scaling and squaring, deterministic: SciPy's logm and fractional powers choose their
# parameters with a randomised norm estimate (onenormest) that draws from NumPy's global
# generator, so their results could change from one call to the next and seeding that
# generator is not thread-safe; these use exact 1-norms and no random numbers (Higham,
# Functions of Matrices, 11.5; Higham and Lin 2011), on the complex Schur form.

_PADE_NODES = 8  # Gauss-Legendre nodes: the [8/8] Pade approximant of log(1 + x)
_SQRT_UNTIL = 0.25  # ||R - I||_1 from which the approximant is used (error < 1e-18 there)


def _from_above(d):
    """Eigenvalues with a -0.0 imaginary part made +0.0: on the negative real axis, the
    branch continuous from above (``log(-1) = i pi``), SciPy's."""
    return d.real + 1j * (d.imag + 0.0)


def _sqrt_triangular(t):
    """The principal square root of a nonsingular upper triangular ``t`` (Bjorck and
    Hammarling's recurrence, one superdiagonal at a time)."""
    n = t.shape[-1]
    u = np.zeros_like(t)
    idx = np.arange(n)
    u[idx, idx] = np.sqrt(_from_above(np.diagonal(t)))
    for d in range(1, n):
        i = np.arange(n - d)
        j = i + d
        k = i[:, None] + np.arange(1, d)[None, :]
        inner = np.sum(u[i[:, None], k] * u[k, j[:, None]], axis=1)
        u[i, j] = (t[i, j] - inner) / (u[i, i] + u[j, j])
    return u


def _inverse_scaling(t):
    """``(R, k)``: ``R = t^(1 / 2^k)``, the fewest square roots with ``||R - I||_1`` at most
    ``_SQRT_UNTIL``."""
    eye = np.eye(t.shape[-1])
    k = 0
    while np.abs(t - eye).sum(axis=0).max(initial=0.0) > _SQRT_UNTIL and k < 64:
        t = _sqrt_triangular(t)
        k += 1
    return t, k


def _log_pade(x):
    """``log(I + X)`` for upper triangular ``X`` of 1-norm at most ``_SQRT_UNTIL``: the Pade
    approximant as Gauss-Legendre quadrature, ``sum_j w_j X (I + x_j X)^{-1}``."""
    nodes, weights = np.polynomial.legendre.leggauss(_PADE_NODES)
    eye = np.eye(x.shape[-1])
    out = np.zeros_like(x)
    for node, weight in zip((nodes + 1) / 2, weights / 2):
        out += weight * scipy.linalg.solve_triangular(eye + node * x, x, check_finite=False)
    return out


def _logm_triangular(t):
    r, k = _inverse_scaling(t)
    out = 2.0**k * _log_pade(r - np.eye(t.shape[-1]))
    idx = np.arange(t.shape[-1])
    out[idx, idx] = np.log(_from_above(np.diagonal(t)))  # the diagonal exactly
    return out


def _power_triangular(t, p):
    """``t^p`` for ``-1 < p < 1``: ``exp(p log R)`` squared back k times, each stage's
    diagonal set exactly (``t_ii^(p / 2^i)``)."""
    r, k = _inverse_scaling(t)
    u = np.triu(scipy.linalg.expm(p * _log_pade(r - np.eye(t.shape[-1]))))
    idx = np.arange(t.shape[-1])
    diagonal = _from_above(np.diagonal(t))
    for i in range(k, -1, -1):
        if i < k:
            u = u @ u
        u[idx, idx] = diagonal ** (p / 2.0**i)
    return u


def _triangular_form(a):
    """``(T, Z)``: ``a = Z T Z^H`` with ``T`` upper triangular, complex: SciPy's way (the real
    Schur form of a real matrix, made complex where it has 2 x 2 blocks), so that an exactly
    zero eigenvalue is found where SciPy finds it."""
    if a.dtype.kind == "c":
        t, z = scipy.linalg.schur(a, output="complex")
    else:
        t, z = scipy.linalg.schur(a)
        if not np.array_equal(t, np.triu(t)):
            t, z = scipy.linalg.rsf2csf(t, z)
    return t.astype(np.result_type(t.dtype, np.complex64)), z


def _fractional_power_one(a, p):
    """SciPy's ``fractional_matrix_power(a, p)`` (its choices of floor and ceiling, its
    fallbacks), with the remainder power computed by ``_power_triangular``."""
    if p == int(p):
        return np.linalg.matrix_power(a, int(p))
    s = scipy.linalg.svdvals(a)
    if s[-1]:
        cond = s[0] / s[-1]
        low, high = p - np.floor(p), p - np.ceil(p)
        whole, rest = (
            (int(np.floor(p)), low)
            if low * cond ** (1 - low) <= -high * cond
            else (int(np.ceil(p)), high)
        )
        schur, z = _triangular_form(a)
        if np.count_nonzero(np.diagonal(schur)) == a.shape[-1]:
            remainder = z @ _power_triangular(schur, rest) @ z.conj().T
            return np.linalg.matrix_power(a, whole) @ remainder
    # singular: SciPy's own fallbacks (NaN for p < 0, funm otherwise), which draw no random
    # numbers (its norm estimates are on the path above only)
    return scipy.linalg.fractional_matrix_power(a, p)


def _scipy_value(name: str, fn, xp, a):
    """SciPy's ``fn(a)`` in ``a``'s dtype; a non-real result of a real ``a`` raises."""
    a = floating_array(xp, a)
    if a.shape[-1] == 0:
        return a.copy()
    # single precision is computed in double (SciPy's logm of float32 is float64 anyway, and its
    # float32 results can carry rounding-level imaginary parts that its own real test misses)
    wide = a.astype(np.result_type(a.dtype, np.float64), copy=False)
    out = on_host(xp, fn, wide, what=f"linalg.{name}")
    if a.dtype.kind != "c" and out.dtype.kind == "c":
        # SciPy's rule for a real result (its _maybe_real): an imaginary part at rounding level
        tol = 1e6 * float(np.finfo(out.real.dtype).eps)
        if not bool(xp.all(xp.abs(out.imag) <= tol)):
            raise _not_real(name, a)
        out = out.real
    return out.astype(a.dtype, copy=False)


def _analytic(name: str, impl):
    """The op ``linalg_<name>`` with the block-matrix rules (``frechet_block``)."""

    def apply_op(x, **params):
        return call(op, name, x, square=True, **params)

    def block_op(params):
        if "derivative" in params:  # the op knows it computes a derivative (powers: NaN at 0)
            params = {**params, "derivative": True}
        return lambda x: apply_op(x, **params)

    def vjp(cts, outs, args, params, needs):
        return (frechet_block(block_op(params), mH(args[0]), cts[0]),)

    def jvp(tangents, outs, args, params):
        return frechet_block(block_op(params), args[0], tangents[0])

    op = linalg_op(f"linalg_{name}", impl, vjp, jvp)
    return apply_op


# ---------------------------------------------------------------------------------------------
# logarithm, square root, powers


def _logm_one(a):
    schur, z = _triangular_form(a)
    if bool(np.any(np.diagonal(schur) == 0)):
        raise LinAlgError(
            f"dualad.linalg.logm: the matrix of shape {a.shape} is singular (its logarithm "
            "does not exist)"
        )
    return z @ _logm_triangular(schur) @ z.conj().T


def _logm_impl(xp, a):
    return _scipy_value("logm", lambda m: per_matrix(_logm_one, m.shape[:-2], (2,), m), xp, a)


_logm = _analytic("logm", _logm_impl)


@public.function
def linalg_logm(A) -> Tensor:
    """The principal matrix logarithm of the square matrices ``A`` (..., n, n)
    (``dualad.linalg.logm``: SciPy's algorithm, inverse scaling and squaring, deterministic:
    no random norm estimate; equal to SciPy's values to rounding).

    Derivatives are the Frechet derivative (the logarithm of a 2n x 2n block matrix), exact at
    repeated eigenvalues (``A = I``) and defective matrices. A singular ``A`` raises
    ``LinAlgError``; a real ``A`` with an eigenvalue on the negative real axis raises
    ``ValueError`` (its logarithm is not real; SciPy returns a complex one); for complex ``A``
    such an eigenvalue is on the branch cut: value and derivative of the branch with
    ``Im log = +pi`` (one-sided).

    >>> import dualad
    >>> a = dualad.tensor([[1.0, 1.0], [0.0, 1.0]], requires_grad=True)
    >>> dualad.linalg_logm(a)
    tensor([[0., 1.],
            [0., 0.]], grad_fn=<LinalgLogmBackward0>)
    >>> dualad.autograd.grad(dualad.linalg_logm(a).trace(), a)[0]
    tensor([[ 1.,  0.],
            [-1.,  1.]])
    """
    return _logm(A)


def _sqrtm_impl(xp, a):
    return _scipy_value("sqrtm", scipy.linalg.sqrtm, xp, a)


def _sqrtm_vjp(cts, outs, args, params, needs):
    x = mH(outs[0])  # the adjoint of dX -> X dX + dX X
    return (sylvester(x, x, cts[0], "nan", same=True),)


def _sqrtm_jvp(tangents, outs, args, params):
    return sylvester(outs[0], outs[0], tangents[0], "nan", same=True)


_sqrtm_op = linalg_op("linalg_sqrtm", _sqrtm_impl, _sqrtm_vjp, _sqrtm_jvp, save_out=True)


@public.function
def linalg_sqrtm(A) -> Tensor:
    """The principal square root of the square matrices ``A`` (..., n, n)
    (``dualad.linalg.sqrtm``: SciPy's values).

    Derivatives solve the Sylvester equation ``X dX + dX X = dA`` (``X = sqrtm(A)``), exact at
    repeated eigenvalues (``A = I``). At an exactly singular ``A`` the derivative does not exist
    (infinite): it is NaN. A real ``A`` with an eigenvalue on the negative real axis raises
    ``ValueError`` (SciPy returns a complex root); for complex ``A`` the branch with
    ``sqrt(-1) = i`` is used (one-sided).

    >>> import dualad
    >>> a = dualad.tensor([[4.0, 0.0], [0.0, 9.0]], requires_grad=True)
    >>> dualad.linalg_sqrtm(a)
    tensor([[2., 0.],
            [0., 3.]], grad_fn=<LinalgSqrtmBackward0>)
    >>> dualad.autograd.grad(dualad.linalg_sqrtm(a).trace(), a)[0]
    tensor([[0.25      , 0.        ],
            [0.        , 0.16666667]])
    """
    return call(_sqrtm_op, "sqrtm", A, square=True)


def _singular_pivot(xp, a) -> np.ndarray:
    """(...,) bool: an exact zero pivot in the LU factors of ``a`` (an exactly singular
    matrix, the test SciPy's fractional powers make on the Schur form)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu = lu_factor(xp, a)[0]
    return xp.any(xp.diagonal(lu, axis1=-2, axis2=-1) == 0, axis=-1)


def _power_impl(xp, a, *, t, derivative):
    def power(m):
        return per_matrix(lambda x: _fractional_power_one(x, t), m.shape[:-2], (2,), m)

    out = _scipy_value("fractional_matrix_power", power, xp, a)
    if derivative and t != math.floor(t):
        # the block matrix [[A, E], [0, A]] is singular with A: A^t is not differentiable there
        out = xp.where(_singular_pivot(xp, a)[..., None, None], xp.nan, out)
    return out


_power = _analytic("fractional_matrix_power", _power_impl)


@public.function
def linalg_fractional_matrix_power(A, t) -> Tensor:
    """``A`` to the real power ``t`` (a Python number, not differentiated), principal branch
    (``dualad.linalg.fractional_matrix_power``: SciPy's algorithm, deterministic; integer ``t``
    is a matrix power, negative ones of the inverse).

    Derivatives in ``A`` are the Frechet derivative (from a 2n x 2n block matrix). At an
    exactly singular ``A`` the derivative of a non-integer power does not exist: NaN. A real
    ``A`` with an eigenvalue on the negative real axis raises ``ValueError`` for non-integer
    ``t`` (the result is not real). A tensor ``t`` that requires grad raises ``TypeError``.

    >>> import dualad
    >>> a = dualad.tensor([[4.0, 0.0], [0.0, 9.0]], requires_grad=True)
    >>> dualad.linalg_fractional_matrix_power(a, 0.5)
    tensor([[2., 0.],
            [0., 3.]], grad_fn=<LinalgFractionalMatrixPowerBackward0>)
    """
    if isinstance(t, Tensor):
        if t.requires_grad or _is_tracked(t) or t.ndim:
            raise TypeError(
                "dualad.linalg.fractional_matrix_power: t is a static number (no derivative "
                f"in t), got a tensor of shape {tuple(t.shape)} that is differentiated or not 0-d"
            )
        t = t.item()
    if not isinstance(t, (int, float)) or isinstance(t, bool):
        raise TypeError(
            f"dualad.linalg.fractional_matrix_power: t must be a real number, got {t!r}"
        )
    return _power(A, t=float(t), derivative=False)


# ---------------------------------------------------------------------------------------------
# sign


def _sign_impl(xp, a):
    a = floating_array(xp, a)
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    x = a.astype(xp.complex128 if a.dtype.kind == "c" else xp.float64)
    tol = n * float(np.finfo(np.float64).eps)
    scale = True
    for _ in range(100):
        try:
            inverse = xp.linalg.inv(x)
        except LinAlgError:
            break
        if scale:  # determinant scaling: fast convergence from far away
            logdet = xp.linalg.slogdet(x)[1]
            mu = xp.exp(-logdet / n)[..., None, None]
        else:
            mu = 1.0
        new = 0.5 * (mu * x + inverse / mu)
        change = xp.abs(new - x).sum(axis=-2).max(axis=-1)
        size = xp.abs(new).sum(axis=-2).max(axis=-1)
        x = new
        scale = bool(xp.any(change > 1e-2 * size))
        if bool(xp.all(change <= tol * size)):
            if xp.all(xp.isfinite(x)):
                return x.astype(a.dtype, copy=False)
            break
    raise LinAlgError(
        f"dualad.linalg.signm: the matrix of shape {a.shape} has an eigenvalue on the imaginary "
        "axis (its sign is not defined)"
    )


_signm = _analytic("signm", _sign_impl)


@public.function
def linalg_signm(A) -> Tensor:
    """The matrix sign function of the square matrices ``A`` (..., n, n)
    (``dualad.linalg.signm``): ``sign(A) = A (A^2)^{-1/2}``, from the scaled Newton iteration.

    Its derivative (the Frechet derivative, from a 2n x 2n block matrix) is not zero for
    non-normal ``A``. An eigenvalue on the imaginary axis (``sign`` undefined) raises
    ``LinAlgError``.

    >>> import dualad
    >>> dualad.linalg_signm(dualad.tensor([[2.0, 1.0], [0.0, -3.0]]))
    tensor([[ 1. ,  0.4],
            [ 0. , -1. ]])
    """
    return _signm(A)


# ---------------------------------------------------------------------------------------------
# trigonometric and hyperbolic functions (SciPy's formulas on expm)


def _cos(xp, a):
    a = floating_array(xp, a)
    if a.dtype.kind != "c":
        return _expm(xp, 1j * a).real.astype(a.dtype, copy=False)
    return 0.5 * (_expm(xp, 1j * a) + _expm(xp, -1j * a))


def _sin(xp, a):
    a = floating_array(xp, a)
    if a.dtype.kind != "c":
        return _expm(xp, 1j * a).imag.astype(a.dtype, copy=False)
    return -0.5j * (_expm(xp, 1j * a) - _expm(xp, -1j * a))


def _cosh(xp, a):
    a = floating_array(xp, a)
    return 0.5 * (_expm(xp, a) + _expm(xp, -a))


def _sinh(xp, a):
    a = floating_array(xp, a)
    return 0.5 * (_expm(xp, a) - _expm(xp, -a))


def _quotient(name, numerator, denominator):
    def impl(xp, a):
        try:
            return xp.linalg.solve(denominator(xp, a), numerator(xp, a))
        except LinAlgError:
            raise LinAlgError(
                f"dualad.linalg.{name}: the matrix of shape {a.shape} is at a pole ("
                f"{denominator.__name__[1:]}m of it is singular)"
            ) from None

    return impl


_cosm = _analytic("cosm", _cos)
_sinm = _analytic("sinm", _sin)
_tanm = _analytic("tanm", _quotient("tanm", _sin, _cos))
_coshm = _analytic("coshm", _cosh)
_sinhm = _analytic("sinhm", _sinh)
_tanhm = _analytic("tanhm", _quotient("tanhm", _sinh, _cosh))


@public.function
def linalg_cosm(A) -> Tensor:
    """The matrix cosine of the square matrices ``A`` (..., n, n) (``dualad.linalg.cosm``:
    SciPy's formula on ``expm``). Derivatives: the Frechet derivative, from a 2n x 2n block
    matrix, exact everywhere (an entire function).

    >>> import dualad
    >>> dualad.linalg_cosm(dualad.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _cosm(A)


@public.function
def linalg_sinm(A) -> Tensor:
    """The matrix sine of the square matrices ``A`` (..., n, n) (``dualad.linalg.sinm``:
    SciPy's formula on ``expm``). Derivatives: the Frechet derivative, from a 2n x 2n block
    matrix, exact everywhere (an entire function).

    >>> import dualad
    >>> dualad.linalg_sinm(dualad.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _sinm(A)


@public.function
def linalg_tanm(A) -> Tensor:
    """The matrix tangent ``cosm(A)^{-1} sinm(A)`` of the square matrices ``A`` (..., n, n)
    (``dualad.linalg.tanm``: SciPy's formula). Derivatives: the Frechet derivative, from a
    2n x 2n block matrix. At a pole (``cosm(A)`` singular) it raises ``LinAlgError``.

    >>> import dualad
    >>> dualad.linalg_tanm(dualad.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _tanm(A)


@public.function
def linalg_coshm(A) -> Tensor:
    """The matrix hyperbolic cosine of the square matrices ``A`` (..., n, n)
    (``dualad.linalg.coshm``: SciPy's formula on ``expm``). Derivatives: the Frechet
    derivative, from a 2n x 2n block matrix, exact everywhere (an entire function).

    >>> import dualad
    >>> dualad.linalg_coshm(dualad.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _coshm(A)


@public.function
def linalg_sinhm(A) -> Tensor:
    """The matrix hyperbolic sine of the square matrices ``A`` (..., n, n)
    (``dualad.linalg.sinhm``: SciPy's formula on ``expm``). Derivatives: the Frechet
    derivative, from a 2n x 2n block matrix, exact everywhere (an entire function).

    >>> import dualad
    >>> dualad.linalg_sinhm(dualad.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _sinhm(A)


@public.function
def linalg_tanhm(A) -> Tensor:
    """The matrix hyperbolic tangent ``coshm(A)^{-1} sinhm(A)`` of the square matrices ``A``
    (..., n, n) (``dualad.linalg.tanhm``: SciPy's formula). Derivatives: the Frechet
    derivative, from a 2n x 2n block matrix. At a pole (``coshm(A)`` singular) it raises
    ``LinAlgError``.

    >>> import dualad
    >>> dualad.linalg_tanhm(dualad.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[0., 1.],
            [0., 0.]])
    """
    return _tanhm(A)
