"""Op database entries for ``scipy.linalg``'s matrix functions and matrix equations in
``dualad.linalg`` (``dualad/ops/analytic_functions.py``, ``matrix_equations.py``).

Samples keep clear of the singular points: ``logm``, ``sqrtm`` and fractional powers get
matrices near the identity (eigenvalues far from the branch cut on the negative real axis and
from 0), ``signm`` gets ``X diag(values) X^{-1}`` with eigenvalues far from the imaginary axis
(both signs, so the derivative is not zero), ``tanm``/``tanhm`` small matrices (far from the
poles), and the equations coefficients whose eigenvalues keep the equation well conditioned.
The references are SciPy's functions in the input's dtype (dualad keeps float32 where SciPy's
``logm`` and ``fractional_matrix_power`` return float64). ``tests/linalg`` test the singular
points and repeated eigenvalues.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

import dualad

from . import SampleInput, entry, uniform

_SHAPES = ((3, 3), (2, 3, 3), (1, 1))


def _same_dtype(fn):
    """``fn`` of SciPy with the result in the input's dtype."""
    return lambda a, *args: np.asarray(fn(_double(a), *args)).astype(a.dtype)


def _double(a):
    return a.astype(np.result_type(a.dtype, np.float64))


def _near_identity(rng, dtype):
    return [
        SampleInput((np.eye(s[-1], dtype=dtype) + uniform(rng, s, dtype, -0.3, 0.3),), note=str(s))
        for s in _SHAPES
    ]


def _small(rng, dtype):
    return [SampleInput((uniform(rng, s, dtype, -0.6, 0.6),), note=str(s)) for s in _SHAPES]


def _sign_samples(rng, dtype):
    """Eigenvalues -1.5, 0.8, 1.2 (times ``1 + 0.5j`` for complex): both signs."""
    values = np.array([-1.5, 0.8, 1.2]) * (1 + 0.5j if dtype.kind == "c" else 1)
    out = []
    for batch in ((), (2,)):
        a = np.empty((*batch, 3, 3), dtype)
        for index in np.ndindex(*batch):
            x = np.eye(3) + 0.3 * uniform(rng, (3, 3), dtype)
            a[index] = (x * values) @ np.linalg.inv(x)
        out.append(SampleInput((a,), note=str(batch)))
    return out


def _power_samples(rng, dtype):
    out = []
    for t in (0.5, -0.7, 2.0):
        (sample,) = _near_identity(rng, dtype)[:1]
        out.append(SampleInput(sample.args, {"t": t}, note=f"t={t}"))
    batch = np.eye(3, dtype=dtype) + uniform(rng, (2, 3, 3), dtype, -0.3, 0.3)
    out.append(SampleInput((batch,), {"t": 1.5}, note="batch, t=1.5"))
    return out


def _dominant(rng, shape, dtype, shift):
    """``shift I`` plus a small random matrix (eigenvalues near ``shift``)."""
    n = shape[-1]
    return (shift * np.eye(n) + uniform(rng, shape, dtype, -0.4, 0.4)).astype(dtype)


def _sylvester_samples(rng, dtype):
    return [
        SampleInput(
            (
                _dominant(rng, (3, 3), dtype, 2.0),
                _dominant(rng, (2, 2), dtype, 1.0),
                uniform(rng, (3, 2), dtype),
            ),
            diff=(0, 1, 2),
            note="3x2",
        ),
        SampleInput(
            (
                _dominant(rng, (2, 3, 3), dtype, 1.5),
                _dominant(rng, (2, 2), dtype, 1.0),
                uniform(rng, (2, 3, 2), dtype),
            ),
            diff=(0, 1, 2),
            note="batch, b broadcast",
        ),
    ]


def _lyapunov_samples(shift):
    def samples(rng, dtype):
        return [
            SampleInput(
                (_dominant(rng, (*batch, 3, 3), dtype, shift), uniform(rng, (*batch, 3, 3), dtype)),
                diff=(0, 1),
                note=str(batch),
            )
            for batch in ((), (2,))
        ]

    return samples


def _polar_samples(rng, dtype):
    """Full rank (the derivative needs an invertible P): tall, square, a batch, and wide
    matrices with side="left"."""
    out = [
        SampleInput((_dominant(rng, (*batch, n, n), dtype, 1.5)[..., :m, :],), note=f"{m}x{n}")
        for m, n, batch in ((3, 3, ()), (2, 2, (2,)))
    ]
    tall = uniform(rng, (4, 3), dtype) + 1.5 * np.eye(4, 3, dtype=dtype)
    out.append(SampleInput((tall,), note="4x3"))
    out.append(SampleInput((np.conj(tall.T).copy(),), {"side": "left"}, note="3x4 left"))
    return out


def _positive(rng, shape, dtype):
    m = uniform(rng, shape, dtype, -0.5, 0.5)
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + np.eye(shape[-1])).astype(dtype)


def _riccati_samples(rng, dtype):
    samples = [
        SampleInput(
            (
                uniform(rng, (*batch, 3, 3), dtype),
                uniform(rng, (*batch, 3, 2), dtype),
                _positive(rng, (*batch, 3, 3), dtype),
                _positive(rng, (2, 2), dtype),
            ),
            diff=(0, 1, 2, 3),
            note=str(batch),
        )
        for batch in ((), (2,))
    ]
    if np.dtype(dtype) == np.float64:
        # first, for the checks that put one tensor in every slot of a shape (a is then also
        # q): a positive definite ``a`` keeps a stabilising solution when q = a (a random one
        # need not have one: SciPy raises LinAlgError). float64 only: with a's eigenvalues
        # near 1 the gradient in ``b`` is too ill-conditioned for float32's differences.
        samples.insert(
            0,
            SampleInput(
                (
                    _positive(rng, (3, 3), dtype),
                    uniform(rng, (3, 2), dtype),
                    _positive(rng, (3, 3), dtype),
                    _positive(rng, (2, 2), dtype),
                ),
                diff=(0, 1, 2, 3),
                note="positive definite a",
            ),
        )
    return samples


def _hermitian(x):
    return (x + dualad.conj(x.mT)) * 0.5


def _riccati_fn(a, b, q, r):
    """Q and R made Hermitian inside (SciPy's domain): differences move along Hermitian
    directions."""
    return dualad.linalg.solve_continuous_are(a, b, _hermitian(q), _hermitian(r))


def _riccati_ref(a, b, q, r):
    herm = lambda x: (x + np.conj(np.swapaxes(x, -1, -2))) / 2
    if a.ndim == 2:
        return scipy.linalg.solve_continuous_are(a, b, herm(q), herm(r)).astype(a.dtype)
    return np.stack(
        [scipy.linalg.solve_continuous_are(a[k], b[k], herm(q[k]), herm(r)) for k in range(len(a))]
    ).astype(a.dtype)


def _linalg(name):
    return getattr(dualad.linalg, name)


OPS = (
    [
        entry(
            f"linalg.{name}",
            samples,
            _same_dtype(getattr(scipy.linalg, name)),
            f"linalg_{name}",
            fn=_linalg(name),
        )
        for name, samples in (
            ("logm", _near_identity),
            ("sqrtm", _near_identity),
            ("signm", _sign_samples),
            ("cosm", _small),
            ("sinm", _small),
            ("tanm", _small),
            ("coshm", _small),
            ("sinhm", _small),
            ("tanhm", _small),
        )
    ]
    + [
        entry(
            "linalg.fractional_matrix_power",
            _power_samples,
            lambda a, t: (
                np.asarray(
                    [
                        np.real_if_close(scipy.linalg.fractional_matrix_power(m, t), tol=1e6)
                        for m in _double(a).reshape(-1, 3, 3)
                    ]
                )
                .reshape(a.shape)
                .astype(a.dtype)
            ),
            "linalg_fractional_matrix_power",
            fn=dualad.linalg.fractional_matrix_power,
        ),
        entry(
            "linalg.polar",
            _polar_samples,
            lambda a, side="right": scipy.linalg.polar(a, side),
            "linalg_polar",
            fn=dualad.linalg.polar,
        ),
        entry(
            "linalg.solve_continuous_are",
            _riccati_samples,
            _riccati_ref,
            "linalg_solve_continuous_are",
            fn=_riccati_fn,
        ),
    ]
    + [
        entry(
            f"linalg.{name}",
            samples,
            _same_dtype(ref),
            f"linalg_{name.split('(')[0]}",
            fn=fn or _linalg(name),
        )
        for name, samples, ref, fn in (
            ("solve_sylvester", _sylvester_samples, scipy.linalg.solve_sylvester, None),
            (
                "solve_sylvester(a, a, q)",
                _lyapunov_samples(1.5),
                lambda a, q: scipy.linalg.solve_sylvester(a, a, q),
                lambda a, q: dualad.linalg.solve_sylvester(a, a, q),
            ),
            (
                "solve_continuous_lyapunov",
                _lyapunov_samples(-1.5),
                scipy.linalg.solve_continuous_lyapunov,
                None,
            ),
            (
                "solve_discrete_lyapunov",
                _lyapunov_samples(0.3),
                scipy.linalg.solve_discrete_lyapunov,
                None,
            ),
        )
    ]
)
