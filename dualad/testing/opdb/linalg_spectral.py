"""Op database entries for the spectral half of ``dualad.linalg`` (``dualad/ops/eigen.py``,
``svd.py``, ``qr.py``, ``matrix_functions.py``).

Eigen- and singular vectors are defined up to a sign (a phase), so the entries differentiate
gauge-invariant functions of them: ``V diag(w) V^H`` for eigenvectors, ``U diag(w) Vh`` for
singular vector pairs (``w`` fixed weights, so each vector matters), which is how PyTorch's
OpInfos test them. ``eigh``'s input is made Hermitian inside the entry (``(a + a^H) / 2``) so that
finite differences move along Hermitian directions, the derivative's convention. Samples are
built with well separated eigen/singular values (``Q diag(values) Q^H`` for random unitary
``Q``): the rules are checked away from repeated values here; tests/linalg test those.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

import dualad
from dualad.linalg import spectral
from dualad.ops import eigen, eigen_general
from dualad.ops import qr as qr_ops
from dualad.ops import svd as svd_ops

from . import SampleInput, entry, uniform


def _unitary(rng, n, dtype):
    q, _ = np.linalg.qr(uniform(rng, (n, n), dtype))
    return q


def _with_values(rng, dtype, batch, n, values):
    """Hermitian matrices ``Q diag(values) Q^H`` (..., n, n) with random unitary ``Q``."""
    out = np.empty((*batch, n, n), dtype)
    for index in np.ndindex(*batch):
        q = _unitary(rng, n, dtype)
        out[index] = (q * values) @ q.conj().T
    return out


def _with_singular_values(rng, dtype, batch, m, n, values):
    out = np.empty((*batch, m, n), dtype)
    k = min(m, n)
    for index in np.ndindex(*batch):
        u = _unitary(rng, m, dtype)[:, :k]
        v = _unitary(rng, n, dtype)[:, :k]
        out[index] = (u * values[:k]) @ v.conj().T
    return out


_EIGENVALUES = np.array([-1.7, -0.6, 0.5, 1.4])
_SINGULAR_VALUES = np.array([2.6, 1.7, 1.0, 0.4])


def _hermitian_samples(rng, dtype):
    return [
        SampleInput((_with_values(rng, dtype, (), 3, _EIGENVALUES[:3]),), note="3x3"),
        SampleInput((_with_values(rng, dtype, (2,), 4, _EIGENVALUES),), note="batch of 4x4"),
        SampleInput(
            (_with_values(rng, dtype, (), 2, _EIGENVALUES[1:3]),), {"UPLO": "U"}, note="UPLO=U"
        ),
    ]


def _weights(n, like):
    """Fixed weights ``1..n`` in the real dtype of ``like``."""
    return np.arange(1.0, n + 1.0).astype(np.empty(0, like.dtype).real.dtype)


def _weights_of(n, like):
    """``_weights`` as a tensor on ``like``'s device (made there: no host array copied)."""
    real = np.empty(0, like.dtype).real.dtype
    return dualad.arange(1.0, n + 1.0, dtype=real, device=like.device)


def _sym(a):
    return (a + spectral_mH(a)) * 0.5


def spectral_mH(a):
    return dualad.conj(a.mT)


def _np_sym(a):
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def _projected(V, w):
    """``V diag(w) V^H`` (invariant to the phase of each column)."""
    return (V * w) @ spectral_mH(V)


def _np_projected(V, w):
    return (V * w[..., None, :]) @ np.conj(np.swapaxes(V, -1, -2))


def _eigh_fn(a, UPLO="L"):
    L, V = spectral.eigh(_sym(a), UPLO)
    return L, _projected(V, _weights_of(V.shape[-1], V))


def _eigh_ref(a, UPLO="L"):
    L, V = np.linalg.eigh(_np_sym(a), UPLO)
    return L, _np_projected(V, _weights(V.shape[-1], V))


def _eigvalsh_grad_samples(rng, dtype):
    out = []
    for batch, n in (((), 3), ((2,), 3)):
        a = _with_values(rng, dtype, batch, n, _EIGENVALUES[:n])
        g = uniform(rng, (*batch, n), np.empty(0, dtype).real.dtype)
        out.append(SampleInput((a, g), diff=(0, 1), note=f"{batch}"))
    return out


def _eigvalsh_grad_ref(a, g):
    V = np.linalg.eigh(_np_sym(a))[1]
    return _np_projected(V, g)


# (m, n, batch): tall, wide, square and a batch
_SVD_SHAPES = ((4, 3, ()), (3, 4, ()), (3, 3, ()), (3, 2, (2,)))


def _matrix_samples(rng, dtype):
    return [
        SampleInput(
            (_with_singular_values(rng, dtype, batch, m, n, _SINGULAR_VALUES),),
            note=f"{(*batch, m, n)}",
        )
        for m, n, batch in _SVD_SHAPES
    ]


def _svd_fn(a, full_matrices=False):
    U, S, Vh = spectral.svd(a, full_matrices=full_matrices)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return S, (U * _weights_of(k, U)) @ Vh


def _svd_ref(a, full_matrices=False):
    U, S, Vh = np.linalg.svd(a, full_matrices=full_matrices)
    k = S.shape[-1]
    return S, (U[..., :k] * _weights(k, U)) @ Vh[..., :k, :]


def _svd_full_samples(rng, dtype):
    return [
        SampleInput(s.args, {"full_matrices": True}, note=s.note + " full_matrices")
        for s in _matrix_samples(rng, dtype)
    ]


def _svdvals_grad_samples(rng, dtype):
    out = []
    for m, n, batch in _SVD_SHAPES:
        a = _with_singular_values(rng, dtype, batch, m, n, _SINGULAR_VALUES)
        g = uniform(rng, (*batch, min(m, n)), np.empty(0, dtype).real.dtype)
        out.append(SampleInput((a, g), diff=(0, 1), note=f"{(*batch, m, n)}"))
    return out


def _svdvals_grad_ref(a, g):
    U, _, Vh = np.linalg.svd(a, full_matrices=False)
    return (U * g[..., None, :]) @ Vh


def _matrix_exp_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, shape, dtype, -0.8, 0.8),), note=str(shape))
        for shape in ((3, 3), (2, 2, 2), (1, 1))
    ]


def _qr_samples(rng, dtype):
    # full column rank (singular values 0.4 to 2.6): R's diagonal stays clear of 0
    out = []
    for m, n, batch in ((4, 3, ()), (3, 3, ()), (3, 2, (2,))):
        a = _with_singular_values(rng, dtype, batch, m, n, _SINGULAR_VALUES)
        out.append(SampleInput((a,), note=f"{(*batch, m, n)}"))
    out.append(SampleInput((out[1].args[0],), {"mode": "complete"}, note="complete, square"))
    out.append(SampleInput((out[0].args[0],), {"mode": "r"}, note="r"))
    # wide (m < n): the leading m x m block of full rank, every mode
    wide = _with_singular_values(rng, dtype, (), 3, 3, _SINGULAR_VALUES)
    wide = np.concatenate([wide, uniform(rng, (3, 2), dtype)], axis=-1)
    batched = _with_singular_values(rng, dtype, (2,), 2, 2, _SINGULAR_VALUES)
    batched = np.concatenate([batched, uniform(rng, (2, 2, 3), dtype)], axis=-1)
    out.append(SampleInput((wide,), note="wide (3, 5)"))
    out.append(SampleInput((batched,), note="wide (2, 2, 5)"))
    out.append(SampleInput((wide,), {"mode": "complete"}, note="complete, wide"))
    out.append(SampleInput((wide,), {"mode": "r"}, note="r, wide"))
    return out


def _qr_fn(a, mode="reduced"):
    return spectral.qr(a, mode) if mode != "r" else spectral.qr(a, mode).R


def _qr_ref(a, mode="reduced"):
    return np.linalg.qr(a, mode)


def _right_solve_samples(rng, dtype):
    out = []
    for batch, lower in (((), False), ((2,), True)):
        r = uniform(rng, (*batch, 3, 3), dtype, -0.5, 0.5) + 2.0 * np.eye(3, dtype=dtype)
        b = uniform(rng, (*batch, 2, 3), dtype)
        out.append(SampleInput((b, r), {"lower": lower}, diff=(0, 1), note=f"lower={lower}"))
    return out


def _right_solve_ref(b, r, lower=False):
    r = np.tril(r) if lower else np.triu(r)
    return np.swapaxes(np.linalg.solve(np.swapaxes(r, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _general_samples(rng, dtype):
    """``X diag(values) X^{-1}`` with ``X`` near the identity: distinct eigenvalues, real ones
    for real matrices, plus a real matrix with a complex conjugate pair."""
    n = 3
    out = []
    for batch in ((), (2,)):
        a = np.empty((*batch, n, n), dtype)
        for index in np.ndindex(*batch):
            x = np.eye(n) + 0.3 * uniform(rng, (n, n), dtype)
            values = _EIGENVALUES[:n] if dtype.kind == "f" else _EIGENVALUES[:n] * (1 + 0.5j)
            a[index] = (x * values) @ np.linalg.inv(x)
        out.append(SampleInput((a,), note=f"{batch}"))
    if dtype.kind == "f":
        x = np.eye(n) + 0.3 * uniform(rng, (n, n), dtype)
        block = np.array([[0.4, -1.2, 0.0], [1.2, 0.4, 0.0], [0.0, 0.0, -1.0]])
        out.append(SampleInput(((x @ block @ np.linalg.inv(x)).astype(dtype),), note="pair"))
    return out


def _complex_of(x):
    return np.asarray(x).astype(np.result_type(x.dtype, np.complex64))


def _eig_fn(a):
    L, V = eigen_general.eig(a)
    return L, _projected(V, _weights_of(V.shape[-1], V))


def _eig_ref(a):
    L, V = np.linalg.eig(a)
    L, V = _complex_of(L), _complex_of(V)
    return L, _np_projected(V, _weights(V.shape[-1], V))


OPS = [
    entry("linalg.eigh", _hermitian_samples, _eigh_ref, "linalg_eigh", fn=_eigh_fn),
    entry(
        "linalg.eigvalsh",
        _hermitian_samples,
        lambda a, UPLO="L": np.linalg.eigvalsh(_np_sym(a), UPLO),
        "linalg_eigvalsh",
        fn=lambda a, UPLO="L": spectral.eigvalsh(_sym(a), UPLO),
    ),
    entry(
        "linalg_eigvalsh_grad",
        _eigvalsh_grad_samples,
        _eigvalsh_grad_ref,
        fn=lambda a, g: eigen.eigvalsh_grad(_sym(a), g),
    ),
    entry("linalg.svd", _matrix_samples, _svd_ref, "linalg_svd", fn=_svd_fn),
    entry("linalg.svd_full", _svd_full_samples, _svd_ref, "linalg_svd", fn=_svd_fn),
    entry(
        "linalg.svdvals",
        _matrix_samples,
        lambda a: np.linalg.svd(a, compute_uv=False),
        "linalg_svdvals",
        fn=spectral.svdvals,
    ),
    entry(
        "linalg_svdvals_grad",
        _svdvals_grad_samples,
        _svdvals_grad_ref,
        fn=svd_ops.svdvals_grad,
    ),
    entry("linalg.eig", _general_samples, _eig_ref, "linalg_eig", fn=_eig_fn),
    entry(
        "linalg.eigvals",
        _general_samples,
        lambda a: _complex_of(np.linalg.eigvals(a)),
        "linalg_eigvals",
        fn=spectral.eigvals,
    ),
    entry("matrix_exp", _matrix_exp_samples, scipy.linalg.expm),
    entry("linalg.qr", _qr_samples, _qr_ref, "linalg_qr", "linalg_qr_r", fn=_qr_fn),
    entry(
        "triangular_right_solve",
        _right_solve_samples,
        _right_solve_ref,
        "linalg_solve_triangular",
        fn=qr_ops.triangular_right_solve,
    ),
]
