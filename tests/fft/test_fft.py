"""``dualad.fft`` and ``dualad.numpy.fft``: values, dtypes and shapes against ``numpy.fft`` for
every function and norm; gradients against the exact Jacobian of NumPy's transform (they are
linear, so the Jacobian is NumPy's transform of the unit vectors: no finite-difference error),
for real and complex inputs, even and odd sizes (the Nyquist bin of rfft/irfft), cropped and
zero-padded; forward mode; vmap against a loop; grad of grad; ``np.fft`` on tensors under
``func.grad``; a spectral loss; the errors.

(The registry tests run the op database's entries, ``dualad/testing/opdb/fft.py``, through
finite differences, JVP, second order and vmap as well.)
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad
import dualad.numpy as dnp
from dualad import func
from dualad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(14)
NORMS = [None, "backward", "ortho", "forward"]
SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def real(*shape):
    return RNG.normal(size=shape)


def cplx(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


# (function name, input maker, keyword arguments in NumPy's spelling): even and odd sizes,
# n cropping and padding, the one-sided inputs of irfft/hfft for an even n (a Nyquist bin) and
# an odd one (none)
CALLS = [
    ("fft", cplx(6), {}),
    ("fft", real(2, 5), {"n": 7}),
    ("fft", cplx(4, 3), {"n": 2, "axis": 0}),
    ("ifft", cplx(5), {}),
    ("ifft", real(3, 4), {"n": 6, "axis": -1}),
    ("rfft", real(6), {}),
    ("rfft", real(7), {}),
    ("rfft", real(3, 5), {"n": 8, "axis": 0}),
    ("rfft", real(2, 6), {"n": 3}),
    ("irfft", cplx(4), {}),
    ("irfft", cplx(4), {"n": 7}),
    ("irfft", cplx(3, 4), {"n": 4, "axis": 0}),
    ("irfft", cplx(5), {"n": 12}),
    ("irfft", cplx(6), {"n": 5}),
    ("hfft", cplx(4), {}),
    ("hfft", cplx(2, 3), {"n": 5}),
    ("ihfft", real(6), {}),
    ("ihfft", real(2, 5), {"n": 4, "axis": 0}),
    ("fftn", cplx(2, 3, 4), {}),
    ("fftn", real(3, 4), {"s": (5, 2), "axes": (1, 0)}),
    ("ifftn", cplx(3, 4), {"axes": (0,)}),
    ("rfftn", real(3, 4), {}),
    ("rfftn", real(3, 5, 2), {"s": (4, 3), "axes": (2, 1)}),
    ("irfftn", cplx(3, 3), {}),
    ("irfftn", cplx(2, 4), {"s": (3, 5), "axes": (0, 1)}),
    ("irfftn", cplx(2, 3, 4), {"s": (2, 6), "axes": (0, 1)}),
    ("fft2", cplx(3, 2, 3), {}),
    ("ifft2", real(3, 4), {"s": (2, 5), "axes": (0, 1)}),
    ("rfft2", real(4, 5), {}),
    ("irfft2", cplx(3, 4), {"s": (3, 7), "axes": (-2, -1)}),
]
CALL_IDS = [f"{name}-{a.shape}-{kwargs}" for name, a, kwargs in CALLS]


def torch_spelling(kwargs: dict) -> dict:
    """NumPy's ``axis``/``axes`` as PyTorch's ``dim``."""
    kwargs = dict(kwargs)
    for key in ("axis", "axes"):
        if key in kwargs:
            kwargs["dim"] = kwargs.pop(key)
    return kwargs


def jacobian_vjp(numpy_fn, a: np.ndarray, ct: np.ndarray) -> np.ndarray:
    """The exact VJP of the linear ``numpy_fn`` at any point: its Jacobian from unit vectors
    (real ones, and imaginary ones for a complex input), contracted with ``ct`` (PyTorch's
    convention: the gradient of Re<ct, f(a)> is d/dRe + i d/dIm)."""
    grad = np.zeros(a.shape, complex if np.iscomplexobj(a) else float)
    for index in np.ndindex(a.shape):
        for unit in (1.0, 1j) if np.iscomplexobj(a) else (1.0,):
            e = np.zeros(a.shape, grad.dtype)
            e[index] = unit
            # the directional derivative along e, paired with ct by the real inner product
            slope = np.sum(np.real(np.conj(ct) * numpy_fn(e)))
            grad[index] += slope * (1 if unit == 1.0 else 1j)
    return grad


# ---------------------------------------------------------------------------------------------
# values, dtypes and shapes


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(("name", "a", "kwargs"), CALLS, ids=CALL_IDS)
def test_values_dtypes_and_shapes_match_numpy(name, a, kwargs, norm):
    if name in ("rfft", "ihfft", "rfftn", "rfft2") and np.iscomplexobj(a):
        pytest.skip("real input only")
    kwargs = dict(kwargs, norm=norm)
    expected = getattr(np.fft, name)(a, **kwargs)
    for dtype in (np.float32, np.float64) if a.dtype.kind == "f" else (np.complex64, np.complex128):
        x = a.astype(dtype)
        expected = getattr(np.fft, name)(x, **kwargs)
        for out in (
            getattr(dnp.fft, name)(dualad.tensor(x), **kwargs),
            getattr(dualad.fft, name)(dualad.tensor(x), **torch_spelling(kwargs)),
            getattr(dualad.fft, name)(dualad.tensor(x), **kwargs),  # NumPy's spelling too
            getattr(np.fft, name)(dualad.tensor(x), **kwargs),  # __array_function__
        ):
            assert isinstance(out, dualad.Tensor)
            assert out.dtype == expected.dtype and out.shape == expected.shape
            tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
            np.testing.assert_allclose(out.numpy(), expected, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.bool_, np.float16])
def test_integer_bool_and_half_inputs_get_numpys_dtypes(dtype):
    a = (np.arange(6) % 3).astype(dtype)
    for name in ("fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfftn"):
        expected = getattr(np.fft, name)(a)
        out = getattr(dnp.fft, name)(dualad.tensor(a))
        assert out.dtype == expected.dtype, name
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-3, atol=1e-3)


def test_torch_facade_promotes_integers_to_the_default_dtype():
    a = dualad.tensor([1, 2, 3, 4])
    assert dualad.fft.fft(a).dtype == np.complex128
    assert dualad.fft.irfft(a).dtype == np.float64
    assert dualad.fft.rfft(dualad.tensor([1.0, 2.0], dtype=dualad.float32)).dtype == np.complex64


def test_numpy_repeated_axes_transform_again_and_empty_axes_return_the_input():
    a = cplx(3, 4)
    for name in ("fftn", "ifftn"):
        out = getattr(dnp.fft, name)(dualad.tensor(a), s=(2, 5, 3), axes=(1, 0, 1))
        np.testing.assert_allclose(
            out.numpy(), getattr(np.fft, name)(a, s=(2, 5, 3), axes=(1, 0, 1)), atol=1e-12
        )
    b = real(3, 4)
    np.testing.assert_allclose(
        dnp.fft.rfftn(dualad.tensor(b), axes=(1, 0, 1)).numpy(),
        np.fft.rfftn(b, axes=(1, 0, 1)),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        dnp.fft.irfftn(dualad.tensor(a), axes=(0, 1, 1)).numpy(),
        np.fft.irfftn(a, axes=(0, 1, 1)),
        atol=1e-12,
    )
    t = dualad.tensor(b)
    assert dnp.fft.fftn(t, axes=()) is t


def test_numpy_out_argument():
    a = real(2, 5)
    out = dualad.zeros(2, 3, dtype=dualad.complex128)
    result = dnp.fft.rfft(dualad.tensor(a), out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), np.fft.rfft(a), atol=1e-12)
    with pytest.raises(TypeError, match="out="):
        dnp.fft.fft(dualad.tensor(a), out=np.zeros((2, 5), complex))


# ---------------------------------------------------------------------------------------------
# gradients: the exact Jacobian of NumPy's (linear) transform, real and complex inputs


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(("name", "a", "kwargs"), CALLS, ids=CALL_IDS)
def test_gradient_is_the_exact_adjoint(name, a, kwargs, norm):
    kwargs = dict(kwargs, norm=norm)
    inputs = [a]
    if name not in ("rfft", "ihfft", "rfftn", "rfft2"):
        # complex transforms of real input, and complex inputs of the real-input ones' inverses
        inputs.append(a.real if np.iscomplexobj(a) else a + 1j * real(*a.shape))
    for x in inputs:
        y = getattr(np.fft, name)(x, **kwargs)
        ct = real(*y.shape) + (1j * real(*y.shape) if np.iscomplexobj(y) else 0)
        expected = jacobian_vjp(lambda e: getattr(np.fft, name)(e, **kwargs), x, ct)
        t = dualad.tensor(x, requires_grad=True)
        out = getattr(dualad.fft, name)(t, **torch_spelling(kwargs))
        (grad,) = dualad.autograd.grad(out, t, dualad.tensor(ct))
        assert grad.dtype == t.dtype
        np.testing.assert_allclose(grad.numpy(), expected, atol=1e-12)


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_irfft_ignores_the_imaginary_dc_and_nyquist_parts(n):
    """The DC bin's imaginary part (and the Nyquist bin's, for even n) never reach irfft's
    output: their gradient is exactly 0, and the other bins count twice."""
    bins = n // 2 + 1
    y = dualad.tensor(cplx(bins), requires_grad=True)
    (grad,) = dualad.autograd.grad(dualad.fft.irfft(y, n=n).sum(), y)
    # the sum of the output is n * mean = the DC bin's real part: d/dRe y0 = 1, nothing else
    expected = np.zeros(bins, complex)
    expected[0] = 1.0
    np.testing.assert_allclose(grad.numpy(), expected, atol=1e-14)
    w = dualad.tensor(real(n))
    (grad,) = dualad.autograd.grad((dualad.fft.irfft(y, n=n) * w).sum(), y)
    assert grad.numpy()[0].imag == 0
    if n % 2 == 0:
        assert grad.numpy()[-1].imag == 0
    else:
        assert grad.numpy()[-1].imag != 0


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    ("name", "shape", "kwargs"),
    [
        ("fft", (5,), {"n": 6}),
        ("ifft", (2, 4), {"dim": 0}),
        ("rfft", (7,), {}),
        ("irfft", (4,), {"n": 7}),
        ("irfft", (4,), {"n": 6}),
        ("hfft", (3,), {}),
        ("ihfft", (5,), {}),
        ("fftn", (2, 3), {"s": (3, 2)}),
        ("rfftn", (3, 4), {}),
        ("irfftn", (2, 3), {"s": (2, 5)}),
        ("hfftn", (2, 3), {}),
        ("ihfftn", (3, 4), {"s": (3, 5)}),
        ("hfft2", (2, 3), {}),
        ("ihfft2", (3, 3), {}),
    ],
)
def test_gradcheck_forward_mode_and_second_order(name, shape, kwargs, norm):
    fn = getattr(dualad.fft, name)
    real_only = name in ("rfft", "ihfft", "rfftn", "ihfftn", "ihfft2")
    for data in (real(*shape),) if real_only else (real(*shape), cplx(*shape)):
        x = dualad.tensor(data, requires_grad=True)
        f = lambda t: fn(t, **kwargs, norm=norm)
        assert gradcheck(f, (x,), check_forward_ad=True)
        assert gradgradcheck(f, (x,))


def test_forward_mode_is_the_transform_of_the_tangent():
    x, t = real(3, 8), real(3, 8)
    primal, tangent = func.jvp(
        lambda v: dualad.fft.rfft(v, n=6, norm="ortho"), (dualad.tensor(x),), (dualad.tensor(t),)
    )
    np.testing.assert_allclose(primal.numpy(), np.fft.rfft(x, n=6, norm="ortho"), atol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), np.fft.rfft(t, n=6, norm="ortho"), atol=1e-12)
    z, dz = cplx(5), cplx(5)
    _, tangent = func.jvp(
        lambda v: dualad.fft.irfft(v, n=9), (dualad.tensor(z),), (dualad.tensor(dz),)
    )
    np.testing.assert_allclose(tangent.numpy(), np.fft.irfft(dz, n=9), atol=1e-12)


# ---------------------------------------------------------------------------------------------
# vmap, higher order, NumPy's protocol, a spectral loss


@pytest.mark.parametrize(
    ("name", "kwargs", "complex_input"),
    [
        ("fft", {"n": 5}, True),
        ("rfft", {"dim": 0}, False),
        ("irfft", {"n": 5, "dim": -1}, True),
        ("fftn", {"s": (3, 2)}, False),
        ("rfft2", {"s": (2, 5)}, False),
        ("irfftn", {"dim": (0, 1)}, True),
        ("hfft", {}, True),
        ("ihfftn", {}, False),
        ("fftshift", {}, False),
    ],
)
@pytest.mark.parametrize("in_dim", [0, 1, 2])
def test_vmap_matches_a_loop(name, kwargs, complex_input, in_dim):
    fn = lambda t: getattr(dualad.fft, name)(t, **kwargs)
    data = cplx(3, 4, 5) if complex_input else real(3, 4, 5)
    batched = dualad.vmap(fn, in_dims=in_dim)(dualad.tensor(data))
    looped = [fn(dualad.tensor(np.take(data, i, axis=in_dim))) for i in range(data.shape[in_dim])]
    np.testing.assert_allclose(batched.numpy(), np.stack([t.numpy() for t in looped]), atol=1e-12)
    # the gradient through vmap is the loop's too
    x = dualad.tensor(data, requires_grad=True)
    loss = dualad.abs(dualad.vmap(fn, in_dims=in_dim)(x)).pow(2).sum()
    (grad,) = dualad.autograd.grad(loss, x)
    xs = [
        dualad.tensor(np.take(data, i, axis=in_dim), requires_grad=True)
        for i in range(data.shape[in_dim])
    ]
    grads = [dualad.autograd.grad(dualad.abs(fn(xi)).pow(2).sum(), xi)[0].numpy() for xi in xs]
    np.testing.assert_allclose(grad.numpy(), np.stack(grads, axis=in_dim), atol=1e-10)


def test_jacobian_and_hessian_of_a_power_spectrum():
    """d/dx sum |rfft(x)|^2 is linear in x, its Hessian constant: 2 Re(F^H W F) with the
    one-sided weights (Parseval on the half spectrum)."""
    n = 6
    x = dualad.tensor(real(n))
    loss = lambda v: (dualad.fft.rfft(v).abs() ** 2).sum()
    hessian = func.hessian(loss)(x).numpy()
    dft = np.fft.rfft(np.eye(n), axis=0)  # (bins, n): the one-sided DFT matrix
    expected = 2 * np.real(dft.conj().T @ dft)
    np.testing.assert_allclose(hessian, expected, atol=1e-12)
    jac = func.jacfwd(func.grad(loss))(x).numpy()
    np.testing.assert_allclose(jac, expected, atol=1e-12)


def test_numpy_protocol_under_func_grad():
    a = real(8)

    def loss(t):
        spectrum = np.fft.rfft(t)  # NumPy's own function on a GradTensor
        return np.sum(np.abs(spectrum) ** 2)

    grad = func.grad(loss)(dualad.tensor(a))
    dft = np.fft.rfft(np.eye(8), axis=0)
    np.testing.assert_allclose(grad.numpy(), 2 * np.real(dft.conj().T @ dft) @ a, atol=1e-12)
    # and the 2-D / inverse ones
    g2 = func.grad(lambda t: np.sum(np.fft.irfft2(np.fft.rfft2(t)) * t))(dualad.tensor(real(3, 4)))
    assert g2.shape == (3, 4)


def test_spectral_loss_gradient_matches_the_hand_written_one():
    """A band-limited power-spectrum match: L = sum_k w_k (|X_k|^2 - P_k)^2 with X = rfft(x).
    By hand: dL/dx = 2 Re(F^H (2 w (|X|^2 - P) X)) over the one-sided bins, the middle ones
    counted once (the rfft's adjoint: no doubling, it is the full DFT restricted to them)."""
    n = 64
    t = np.arange(n)
    signal = np.sin(2 * np.pi * 5 * t / n) + 0.3 * RNG.normal(size=n)
    target = np.abs(np.fft.rfft(np.sin(2 * np.pi * 5 * t / n))) ** 2
    weights = np.exp(-np.arange(n // 2 + 1) / 10)
    x = dualad.tensor(signal, requires_grad=True)
    spectrum = dualad.fft.rfft(x)
    loss = (dualad.tensor(weights) * (spectrum.abs() ** 2 - dualad.tensor(target)) ** 2).sum()
    loss.backward()
    X = np.fft.rfft(signal)
    g_bins = 2 * weights * (np.abs(X) ** 2 - target) * 2 * X  # dL/dRe X + i dL/dIm X
    dft = np.fft.rfft(np.eye(n), axis=0)
    expected = np.real(dft.conj().T @ g_bins)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10, atol=1e-8)
    # and against finite differences, through the squared magnitudes
    small = dualad.tensor(signal[:16], requires_grad=True)
    target16 = dualad.tensor(target[:9])
    assert gradcheck(lambda v: ((dualad.fft.rfft(v).abs() ** 2 - target16) ** 2).sum(), (small,))


def test_inputs_are_never_mutated():
    for name, a, kwargs in CALLS:
        copy = a.copy()
        t = dualad.tensor(a, requires_grad=True)
        out = getattr(dualad.fft, name)(t, **kwargs)
        (dualad.abs(out) ** 2).sum().backward()
        getattr(dnp.fft, name)(a, **kwargs)
        np.testing.assert_array_equal(a, copy)
        np.testing.assert_array_equal(t.detach().numpy(), copy)


# ---------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("module", [dualad.fft, dnp.fft])
@pytest.mark.parametrize(
    "name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfftn"]
)
def test_bad_norm_is_numpys_value_error(module, name):
    x = dualad.tensor(real(4))
    with pytest.raises(ValueError, match='Invalid norm value bad; should be "backward"'):
        getattr(module, name)(x, norm="bad")
    with pytest.raises(ValueError, match="Invalid norm value"):
        getattr(np.fft, name)(np.zeros(4), norm="bad")  # (NumPy's class, for comparison)


@pytest.mark.parametrize("module", [dualad.fft, dnp.fft])
def test_bad_sizes_are_value_errors(module):
    x = dualad.tensor(real(4))
    for call in (
        lambda: module.fft(x, n=0),
        lambda: module.rfft(x, -1),
        lambda: module.irfft(x[:1]),  # 2 (1 - 1) = 0 samples
        lambda: module.fftn(x, s=(0,), axes=(0,)),
    ):
        with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(-?\d+\)"):
            call()
    with pytest.raises(ValueError, match=r"same length|different lengths"):
        module.fftn(dualad.tensor(real(2, 3)), s=(2, 3), axes=(0,))


def test_torch_facade_refuses_repeated_dims_and_both_spellings():
    x = dualad.tensor(real(2, 3))
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        dualad.fft.fftn(x, dim=(0, 0))
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        dualad.fft.rfft2(x, dim=(1, -1))
    with pytest.raises(TypeError, match="both dim= and axis="):
        dualad.fft.fft(x, dim=0, axis=0)
    with pytest.raises(ValueError, match="no dims"):
        dualad.fft.fftn(dualad.tensor(1.0))


@pytest.mark.parametrize("module", [dualad.fft, dnp.fft])
def test_complex_input_to_a_real_transform_and_bad_axes(module):
    z = dualad.tensor(cplx(4))
    for name in ("rfft", "ihfft", "rfftn", "rfft2"):
        with pytest.raises(TypeError, match="must be real"):
            getattr(module, name)(dualad.tensor(cplx(2, 4)) if name == "rfft2" else z)
    with pytest.raises(np.exceptions.AxisError):
        module.fft(z, axis=1) if module is dnp.fft else module.fft(z, dim=1)
    with pytest.raises(IndexError):  # (AxisError is an IndexError, as NumPy's and PyTorch's)
        module.fft(dualad.tensor(1.0))


@pytest.mark.gpu
def test_cuda_matches_cpu():
    """CuPy's transforms with the same rules: values and gradients (the complex-to-real one on
    an input that is not Hermitian on its DC plane: the map the rules assume is NumPy's)."""
    a, z, weights = real(4, 6), cplx(3, 4), real(3, 6)

    def run(device):
        x = dualad.tensor(a, device=device, requires_grad=True)
        y = dualad.tensor(z, device=device, requires_grad=True)
        w = dualad.tensor(weights, device=device)
        loss = (
            (dualad.fft.rfft(x, n=7, norm="ortho").abs() ** 2).sum()
            + (dualad.fft.irfftn(y, s=(3, 6)) * w).sum()
            + dualad.fft.fft2(y).real.sum()
            + (dualad.fft.hfft(y, n=5) ** 2).sum()
            + dualad.fft.ihfftn(x).imag.sum()
        )
        grads = dualad.autograd.grad(loss, (x, y))
        return [np.asarray(t.detach().cpu()._data) for t in (loss, *grads)]

    for got, expected in zip(run("cuda"), run("cpu")):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
