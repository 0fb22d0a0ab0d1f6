"""``dualad.array_api.fft`` against the standard's reference implementation (array_api_strict):
values, dtypes, the dtype errors, and a derivative through it."""

from __future__ import annotations

import array_api_strict as strict
import numpy as np
import pytest

import dualad
import dualad.array_api as xp

RNG = np.random.default_rng(7)
Z = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
R = RNG.normal(size=(3, 5))

COMPLEX_IN = ["fft", "ifft", "irfft", "hfft", "fftn", "ifftn", "irfftn"]
REAL_IN = ["rfft", "ihfft", "rfftn", "fftshift", "ifftshift"]


def _same(ours, theirs, single: bool):
    assert str(theirs.dtype).endswith(str(ours.dtype))
    tol = 1e-5 if single else 1e-12
    np.testing.assert_allclose(ours.numpy(), np.asarray(theirs), rtol=tol, atol=tol)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", COMPLEX_IN)
def test_complex_input_transforms_match_the_reference(name, dtype, norm):
    z = Z.astype(dtype)
    _same(
        getattr(xp.fft, name)(dualad.tensor(z), norm=norm),
        getattr(strict.fft, name)(strict.asarray(z), norm=norm),
        dtype == np.complex64,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", REAL_IN)
def test_real_input_functions_match_the_reference(name, dtype):
    r = R.astype(dtype)
    _same(
        getattr(xp.fft, name)(dualad.tensor(r)),
        getattr(strict.fft, name)(strict.asarray(r)),
        dtype == np.float32,
    )


def test_sizes_axes_and_frequencies():
    _same(
        xp.fft.irfftn(dualad.tensor(Z), s=(2, 7), axes=(0, 1)),
        strict.fft.irfftn(strict.asarray(Z), s=(2, 7), axes=(0, 1)),
        False,
    )
    _same(
        xp.fft.rfft(dualad.tensor(R), n=8, axis=0),
        strict.fft.rfft(strict.asarray(R), n=8, axis=0),
        False,
    )
    _same(
        xp.fft.fftfreq(5, d=2.0, dtype=xp.float32),
        strict.fft.fftfreq(5, d=2.0, dtype=strict.float32),
        True,
    )
    _same(xp.fft.rfftfreq(6), strict.fft.rfftfreq(6), False)
    with pytest.raises(ValueError, match="real floating-point"):
        xp.fft.fftfreq(4, dtype=xp.complex64)


def test_the_standards_dtype_errors():
    with pytest.raises(TypeError, match="complex floating-point"):
        xp.fft.fft(dualad.tensor(R))
    with pytest.raises(TypeError, match="real floating-point"):
        xp.fft.rfft(dualad.tensor(Z))
    with pytest.raises(TypeError, match="floating-point"):
        xp.fft.fftshift(dualad.tensor([1, 2, 3]))


def test_array_api_code_is_differentiable():
    def power(x):
        ns = x.__array_namespace__()
        return ns.sum(ns.abs(ns.fft.rfft(x)) ** 2)

    x = dualad.tensor(R[0], requires_grad=True)
    (grad,) = dualad.autograd.grad(power(x), x)
    dft = np.fft.rfft(np.eye(5), axis=0)
    np.testing.assert_allclose(grad.numpy(), 2 * np.real(dft.conj().T @ dft) @ R[0], atol=1e-12)
