"""Op database entries for ``dualad.linalg``'s solvers, factorisations and determinants
(``dualad/ops/triangular.py``, ``factorizations.py``, ``solvers.py``, ``determinants.py``,
``least_squares.py``).

Samples keep clear of the singular points, where finite differences mean nothing: matrices
are well conditioned (a random matrix plus a multiple of the identity), triangular ones have a
diagonal away from 0, Cholesky's inputs are made positive definite inside ``fn`` (``fn``
symmetrises, so the finite differences see the Hermitian function the op differentiates).
det is the exception: it is a polynomial, so its samples include singular matrices (its
derivatives exist and are tested there too).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

import dualad
from dualad.ops import factorizations

from . import SampleInput, entry, uniform


def _well_conditioned(rng, shape, dtype):
    n = shape[-1]
    return (uniform(rng, shape, dtype, -1.0, 1.0) + 2.5 * np.eye(n)).astype(dtype)


def _triangular(rng, shape, dtype, upper):
    a = uniform(rng, shape, dtype, -1.0, 1.0)
    a = a + (2.0 * np.sign(a.real.diagonal(0, -2, -1)) + (a.real.diagonal(0, -2, -1) == 0))[
        ..., None
    ] * np.eye(shape[-1])
    return (np.triu(a) if upper else np.tril(a)).astype(dtype)


def _mh(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _pd(a):
    """The positive-definite matrix the Cholesky entries build from a sample."""
    return a @ _mh(a) + a.shape[-1] * np.eye(a.shape[-1], dtype=a.dtype)


def _pd_tensor(a):
    return a @ a.mH + a.shape[-1] * dualad.eye(a.shape[-1], dtype=a.dtype, device=a.device)


# ---------------------------------------------------------------------------------------------
# samples


_SOLVE_CASES = [  # (A's shape, B's shape, left)
    ((3, 3), (3,), True),
    ((3, 3), (3, 2), True),
    ((2, 3, 3), (3, 2), True),
    ((2, 3, 3), (2, 3, 1), True),
    ((3, 3), (2, 3, 4), True),
    ((2, 1, 2, 2), (3, 2, 2), True),
    ((3, 3), (2, 3), False),
    ((2, 3, 3), (3,), False),
]


def _solve_samples(rng, dtype):
    return [
        SampleInput(
            (_well_conditioned(rng, sa, dtype), uniform(rng, sb, dtype)),
            {"left": left},
            diff=(0, 1),
            note=f"{sa} {sb} left={left}",
        )
        for sa, sb, left in _SOLVE_CASES
    ]


def _solve_ref(a, b, left=True):
    if left:
        return np.linalg.solve(a, b)
    if b.ndim == 1:
        return np.linalg.solve(np.swapaxes(a, -1, -2), b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _triangular_samples(rng, dtype):
    out = []
    for shape_a, shape_b, upper, left, unit in [
        ((3, 3), (3, 2), True, True, False),
        ((3, 3), (3, 2), False, True, False),
        ((2, 3, 3), (3, 1), True, True, True),
        ((3, 3), (2, 2, 3), False, False, False),
        ((2, 3, 3), (2, 3, 2), False, True, True),
    ]:
        a = _triangular(rng, shape_a, dtype, upper)
        out.append(
            SampleInput(
                (a, uniform(rng, shape_b, dtype)),
                {"upper": upper, "left": left, "unitriangular": unit},
                diff=(0, 1),
                note=f"upper={upper} left={left} unit={unit}",
            )
        )
    return out


def _triangular_ref(a, b, upper, left=True, unitriangular=False):
    a = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        identity = np.eye(a.shape[-1], dtype=a.dtype)
        a = a - a * identity + identity
    return _solve_ref(a, b, left)


def _square_samples(shapes):
    def samples(rng, dtype):
        return [SampleInput((_well_conditioned(rng, s, dtype),), note=str(s)) for s in shapes]

    return samples


def _lu_samples(rng, dtype):
    """Square stacks, and wide matrices whose leading square block is well conditioned (its
    pivots are the whole factorisation's)."""
    out = _square_samples([(3, 3), (2, 3, 3)])(rng, dtype)
    for batch, m, extra in (((), 3, 2), ((2,), 2, 3)):
        a = _well_conditioned(rng, (*batch, m, m), dtype)
        wide = np.concatenate([a, uniform(rng, (*batch, m, extra), dtype)], axis=-1)
        out.append(SampleInput((wide,), note=f"wide {wide.shape}"))
    return out


def _det_samples(rng, dtype):
    out = [SampleInput((uniform(rng, s, dtype),), note=str(s)) for s in ((3, 3), (2, 4, 4))]
    u, v = uniform(rng, (3, 2), dtype), uniform(rng, (2, 3), dtype)
    out.append(SampleInput(((u @ v).astype(dtype),), note="singular, rank 2 of 3"))
    out.append(SampleInput((np.eye(3, dtype=dtype),), note="identity: repeated eigenvalues"))
    return out


def _slogdet_samples(rng, dtype):
    out = [SampleInput((_well_conditioned(rng, (3, 3), dtype),), note="3x3")]
    negative = _well_conditioned(rng, (2, 3, 3), dtype)
    negative[0] = negative[0][::-1]  # a row swap: a negative determinant
    out.append(SampleInput((negative,), note="batch, one negative"))
    return out


def _cholesky_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, s, dtype, -1.0, 1.0),), {"upper": upper}, note=f"{s} {upper}")
        for s, upper in (((3, 3), False), ((2, 3, 3), True), ((1, 1), False))
    ]


def _cholesky_grad_samples(rng, dtype):
    # nonsingular lower factors (the op reads their lower triangle) and broadcast batch dims
    return [
        SampleInput(
            (_triangular(rng, sl, dtype, False), uniform(rng, sg, dtype)),
            diff=(0, 1),
            note=f"{sl} {sg}",
        )
        for sl, sg in (((3, 3), (3, 3)), ((2, 3, 3), (3, 3)), ((3, 3), (2, 3, 3)), ((1, 1), (1, 1)))
    ]


def _cholesky_grad_ref(lower, g):
    dtype = np.result_type(lower, g)
    lower, g = np.tril(lower), np.tril(g)
    if dtype.kind == "c":  # the op reads the real part of the factor's diagonal
        lower = lower - 1j * np.imag(lower) * np.eye(lower.shape[-1])
    x = _mh(lower) @ g
    p = np.tril(x, -1) + 0.5 * x * np.eye(x.shape[-1])
    inv = np.linalg.inv(lower)
    return (0.5 * (_mh(inv) @ (p + _mh(p)) @ inv)).astype(dtype)


def _cholesky_solve_samples(rng, dtype):
    out = []
    for shape_b, shape_l, upper in (((3, 2), (3, 3), False), ((2, 3, 1), (3, 3), True)):
        factor = _triangular(rng, shape_l, dtype, upper)
        out.append(
            SampleInput((uniform(rng, shape_b, dtype), factor), {"upper": upper}, diff=(0, 1))
        )
    return out


def _cholesky_solve_ref(b, factor, upper=False):
    factor = np.triu(factor) if upper else np.tril(factor)
    a = _mh(factor) @ factor if upper else factor @ _mh(factor)
    return np.linalg.solve(a, b)


def _lu_factor_ref(a):
    lu, piv = scipy.linalg.lu_factor(a)
    return lu, piv.astype(np.int32) + 1


def _lu_solve_samples(rng, dtype):
    out = []
    for shape_lu, pivots, shape_b, left, adjoint in (
        ((3, 3), [2, 3, 3], (3, 2), True, False),
        ((3, 3), [3, 2, 3], (3, 1), True, True),
        ((2, 3, 3), [[1, 3, 3], [2, 2, 3]], (2, 3), False, False),
    ):
        lu = _triangular(rng, shape_lu, dtype, True) + np.tril(
            uniform(rng, shape_lu, dtype, -1.0, 1.0), -1
        )
        out.append(
            SampleInput(
                (lu.astype(dtype), np.array(pivots, np.int32), uniform(rng, shape_b, dtype)),
                {"left": left, "adjoint": adjoint},
                diff=(0, 2),
                note=f"left={left} adjoint={adjoint}",
            )
        )
    return out


def _lu_solve_ref(lu, pivots, b, left=True, adjoint=False):
    a = np.empty_like(lu)
    for index in np.ndindex(*lu.shape[:-2]):
        m, p = lu[index], pivots[index] - 1
        lower, upper = np.tril(m, -1) + np.eye(m.shape[0]), np.triu(m)
        perm = np.arange(m.shape[0])
        for i, j in enumerate(p):
            perm[[i, j]] = perm[[j, i]]
        a[index] = (lower @ upper)[np.argsort(perm)]
    if adjoint:
        a = _mh(a)
    return _solve_ref(a, b, left)


def _lstsq_samples(rng, dtype):
    cases = (((4, 2), (4,)), ((4, 3), (4, 2)), ((2, 4), (2,)), ((2, 4, 3), (2, 4, 2)))
    return [
        SampleInput((uniform(rng, sa, dtype), uniform(rng, sb, dtype)), diff=(0, 1), note=str(sa))
        for sa, sb in cases
    ]


def _lstsq_ref(a, b):
    if a.ndim == 2:
        return np.linalg.lstsq(a, b, rcond=None)[0]
    return np.stack([np.linalg.lstsq(a[i], b[i], rcond=None)[0] for i in range(a.shape[0])])


def _pinv_samples(rng, dtype):
    out = [SampleInput((uniform(rng, s, dtype),), note=str(s)) for s in ((3, 3), (4, 2), (2, 2, 4))]
    out.append(SampleInput((_well_conditioned(rng, (3, 3), dtype),), {"hermitian": True}))
    return out


def _pinv_fn(a, hermitian=False):
    if hermitian:
        a = a + a.mH
    return dualad.linalg.pinv(a, hermitian=hermitian)


def _pinv_ref(a, hermitian=False):
    if hermitian:
        a = a + _mh(a)
    return np.linalg.pinv(a, hermitian=hermitian)


def _rank_samples(rng, dtype):
    u, v = uniform(rng, (2, 4, 2), dtype), uniform(rng, (2, 2, 3), dtype)
    return [
        SampleInput(((u @ v).astype(dtype),), note="rank 2"),
        SampleInput((uniform(rng, (3, 3), dtype),), note="full rank"),
        SampleInput((np.zeros((2, 2), dtype),), note="zero"),
    ]


def _tensorsolve_samples(rng, dtype):
    a = _well_conditioned(rng, (6, 6), dtype).reshape(2, 3, 6)
    b = _well_conditioned(rng, (4, 4), dtype).reshape(4, 2, 2)
    return [
        SampleInput((a, uniform(rng, (2, 3), dtype)), diff=(0, 1)),
        SampleInput((b, uniform(rng, (4,), dtype)), diff=(0, 1)),
    ]


def _tensorinv_samples(rng, dtype):
    return [
        SampleInput((_well_conditioned(rng, (6, 6), dtype).reshape(6, 2, 3),), {"ind": 1}),
        SampleInput((_well_conditioned(rng, (4, 4), dtype).reshape(2, 2, 2, 2),), {"ind": 2}),
    ]


def _matrix_power_samples(rng, dtype):
    return [
        SampleInput((_well_conditioned(rng, s, dtype) / 2, n), note=f"n={n}")
        for s, n in (((3, 3), 3), ((2, 3, 3), -2), ((3, 3), 0), ((3, 3), 1), ((2, 2), -1))
    ]


OPS = [
    entry(
        "solve",
        _solve_samples,
        _solve_ref,
        "linalg_solve",
        "linalg_lu_factor",
        fn=dualad.linalg.solve,
    ),
    entry(
        "solve_triangular",
        _triangular_samples,
        _triangular_ref,
        "linalg_solve_triangular",
        fn=dualad.linalg.solve_triangular,
    ),
    entry(
        "inv",
        _square_samples([(3, 3), (2, 2, 2)]),
        np.linalg.inv,
        "linalg_inv",
        fn=dualad.linalg.inv,
    ),
    entry("det", _det_samples, np.linalg.det, "linalg_det", "linalg_det_grad"),
    entry("slogdet", _slogdet_samples, np.linalg.slogdet, "linalg_slogdet"),
    entry(
        "logdet",
        _square_samples([(3, 3), (2, 2, 2)]),
        lambda a: np.log(np.linalg.det(a)),
        "linalg_slogdet",
        dtypes=("float32", "float64"),
    ),
    entry(
        "cholesky",
        _cholesky_samples,
        lambda a, upper: np.linalg.cholesky(_pd(a), upper=upper),
        "linalg_cholesky",
        fn=lambda a, upper: dualad.linalg.cholesky(_pd_tensor(a), upper=upper),
    ),
    entry(
        "linalg_cholesky_grad",
        _cholesky_grad_samples,
        _cholesky_grad_ref,
        fn=factorizations.cholesky_grad,
    ),
    entry(
        "cholesky_solve",
        _cholesky_solve_samples,
        _cholesky_solve_ref,
        "linalg_solve_triangular",
    ),
    entry(
        "lu_factor",
        _square_samples([(3, 3), (2, 3, 3)]),
        _lu_factor_ref,
        "linalg_lu_factor",
        "linalg_pivots_one_based",
        fn=dualad.linalg.lu_factor,
    ),
    entry(
        "lu",
        _lu_samples,
        lambda a: tuple(f.astype(a.dtype) for f in scipy.linalg.lu(a)),
        "linalg_lu_factor",
        "linalg_lu_permutation",
        fn=dualad.linalg.lu,
    ),
    entry(
        "lu_solve",
        _lu_solve_samples,
        _lu_solve_ref,
        "linalg_solve_triangular",
        "linalg_lu_permutation",
        fn=dualad.linalg.lu_solve,
    ),
    entry(
        "lstsq",
        _lstsq_samples,
        _lstsq_ref,
        "linalg_lstsq",
        "linalg_pinv",
        fn=lambda a, b: dualad.linalg.lstsq(a, b).solution,
    ),
    entry("pinv", _pinv_samples, _pinv_ref, "linalg_pinv", fn=_pinv_fn),
    entry(
        "matrix_rank",
        _rank_samples,
        np.linalg.matrix_rank,
        "linalg_matrix_rank",
        fn=dualad.linalg.matrix_rank,
        differentiable=False,
    ),
    entry(
        "tensorsolve",
        _tensorsolve_samples,
        np.linalg.tensorsolve,
        "linalg_solve",
        fn=dualad.linalg.tensorsolve,
    ),
    entry(
        "tensorinv",
        _tensorinv_samples,
        np.linalg.tensorinv,
        "linalg_inv",
        fn=dualad.linalg.tensorinv,
    ),
    entry(
        "matrix_power",
        _matrix_power_samples,
        np.linalg.matrix_power,
        "linalg_inv",
        "matmul",
        fn=dualad.linalg.matrix_power,
    ),
]
