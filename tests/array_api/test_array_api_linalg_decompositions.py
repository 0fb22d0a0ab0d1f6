"""The array API's decompositions and solvers (``dualad.array_api.linalg``) against the
reference implementation, array_api_strict: values (decompositions through what they
reconstruct, as signs and phases of vectors are free), named results, derivatives."""

from __future__ import annotations

import array_api_strict as strict
import numpy as np
import pytest

import dualad
import dualad.array_api as xp
from dualad.autograd import gradcheck

RNG = np.random.default_rng(11)
M = RNG.normal(size=(2, 3, 3))
SPD = M @ np.swapaxes(M, -1, -2) + 3 * np.eye(3)
RECT = RNG.normal(size=(2, 4, 3))


def _ours(name, *arrays, **kwargs):
    return getattr(xp.linalg, name)(*[dualad.tensor(a) for a in arrays], **kwargs)


def _theirs(name, *arrays, **kwargs):
    return getattr(strict.linalg, name)(*[strict.asarray(a) for a in arrays], **kwargs)


@pytest.mark.parametrize(
    "name, arrays, kwargs",
    [
        ("det", (M,), {}),
        ("inv", (M,), {}),
        ("solve", (M, RNG.normal(size=(2, 3, 2))), {}),
        ("cholesky", (SPD,), {}),
        ("cholesky", (SPD,), {"upper": True}),
        ("eigvalsh", (SPD,), {}),
        ("svdvals", (RECT,), {}),
        ("matrix_rank", (RECT,), {}),
        ("pinv", (RECT,), {}),
        ("matrix_power", (M, -2), {}),
        ("matrix_norm", (RECT,), {"ord": 2}),
        ("matrix_norm", (RECT,), {"ord": "nuc"}),
    ],
)
def test_values_match_the_reference(name, arrays, kwargs):
    tensors = [a for a in arrays if isinstance(a, np.ndarray)]
    extra = [a for a in arrays if not isinstance(a, np.ndarray)]
    ours = getattr(xp.linalg, name)(*[dualad.tensor(a) for a in tensors], *extra, **kwargs)
    theirs = getattr(strict.linalg, name)(*[strict.asarray(a) for a in tensors], *extra, **kwargs)
    np.testing.assert_allclose(ours.numpy(), np.asarray(theirs), rtol=1e-10, atol=1e-12)


def test_named_results():
    sign, logabsdet = _ours("slogdet", M)
    ref = _theirs("slogdet", M)
    np.testing.assert_allclose(sign.numpy(), np.asarray(ref.sign))
    np.testing.assert_allclose(logabsdet.numpy(), np.asarray(ref.logabsdet))
    w, v = _ours("eigh", SPD)
    np.testing.assert_allclose(((v * w[..., None, :]) @ v.mT).numpy(), SPD)
    q, r = _ours("qr", RECT)
    assert tuple(q.shape) == (2, 4, 3) and tuple(r.shape) == (2, 3, 3)
    np.testing.assert_allclose((q @ r).numpy(), RECT)
    q, r = _ours("qr", RECT, mode="complete")
    assert tuple(q.shape) == (2, 4, 4)
    u, s, vh = _ours("svd", RECT, full_matrices=False)
    np.testing.assert_allclose(((u * s[..., None, :]) @ vh).numpy(), RECT)


def test_derivatives():
    a = dualad.tensor(M[0], requires_grad=True)
    assert gradcheck(lambda t: xp.linalg.det(t), (a,), check_forward_ad=True)
    assert gradcheck(lambda t: xp.linalg.slogdet(t).logabsdet, (a,))
    assert gradcheck(lambda t: xp.linalg.solve(t, dualad.tensor([1.0, 2.0, 3.0])), (a,))
    assert gradcheck(lambda t: xp.linalg.svdvals(t), (a,))


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        xp.linalg.det(dualad.tensor(RECT))
    with pytest.raises(np.linalg.LinAlgError):
        xp.linalg.inv(dualad.tensor(np.zeros((2, 2))))
    with pytest.raises(ValueError, match="mode"):
        xp.linalg.qr(dualad.tensor(RECT), mode="r")
