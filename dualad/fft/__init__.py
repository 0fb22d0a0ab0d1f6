"""``dualad.fft``: discrete Fourier transforms with reverse, forward and batching rules.

PyTorch's ``torch.fft`` spellings (``fft(input, n=None, dim=-1, norm=None)``,
``fftn(input, s=None, dim=None, norm=None)``, ...) that also take NumPy's ``axis=``/``axes=``:
``fft ifft rfft irfft hfft ihfft``, ``fft2 ifft2 rfft2 irfft2 hfft2 ihfft2``, ``fftn ifftn
rfftn irfftn hfftn ihfftn``, ``fftshift ifftshift fftfreq rfftfreq``. ``norm`` is "backward"
(None), "ortho" or "forward"; ``n``/``s`` crop or zero-pad the input (-1 in ``s``: keep the
size); a dim may be transformed once (PyTorch's "FFT dims must be unique").

Every transform is one of three ops (``dualad/ops/fft.py``) with its own VJP (the adjoint
transform, the one-sided transforms with their Hermitian weights), JVP and batching rule: the
gradient of any spectral loss, at any order, under ``vmap`` and ``jvp``, complex inputs with
PyTorch's convention. ``dualad.numpy.fft`` holds NumPy's versions (``out=``, repeated axes).

Dtypes: float32 -> complex64, float64 -> complex128; integers and bools as the default float
dtype; a complex input to ``rfft``/``ihfft`` is a TypeError.

>>> import dualad
>>> x = dualad.tensor([1.0, 2.0, 0.0, -1.0], requires_grad=True)
>>> power = dualad.fft.rfft(x).abs() ** 2  # the power spectrum
>>> power
tensor([ 4., 10.,  0.], grad_fn=<PowBackward0>)
>>> dualad.autograd.grad(power.sum(), x)[0]  # 4 x + sum(x) (+ a Nyquist term, 0 here)
tensor([ 6., 10.,  2., -2.])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import _dtypes, ops
from .._backend import DeviceArg
from .._dtypes import DTypeArg
from .._tensor import Tensor
from ..numpy import fft as _np_fft
from ..numpy.fft import cook_nd_args, one_axis, swapped_norm, transform_input, transform_nd

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "hfft2",
    "ihfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfftn",
    "ihfftn",
    "fftshift",
    "ifftshift",
    "fftfreq",
    "rfftfreq",
]


def _either(name: str, dim, numpy_name: str, numpy_value, default):
    """PyTorch's ``dim`` or NumPy's ``axis``/``axes`` (not both), else ``default``."""
    if numpy_value is not None:
        if dim is not None:
            raise TypeError(f"dualad.fft.{name}: got both dim= and {numpy_name}= (give one)")
        return numpy_value
    return default if dim is None else dim


def _input(x, kind: str, name: str):
    return transform_input(x, kind, f"fft.{name}", integer_dtype=_dtypes.get_default_dtype())


def _one_dim(
    name: str, kind: str, forward: bool = True, hermitian: bool = False, doc: str = ""
) -> Callable[..., Tensor]:
    """``torch.fft.<name>``: the 1-D transform; ``hermitian``: hfft (irfft of the conjugate)
    or ihfft (the conjugate of rfft), with the norm of the other direction."""

    def transform(
        input: Any,
        n: int | None = None,
        dim: int | None = None,
        norm: str | None = None,
        *,
        axis: int | None = None,
    ) -> Tensor:
        x = _input(input, kind, name)
        axis = _either(name, dim, "axis", axis, -1)
        if hermitian:
            norm = swapped_norm(norm)
            if kind == "c2r":
                x = ops.conj(x)
        out = one_axis(kind, x, n, axis, norm, forward)
        return ops.conj(out) if hermitian and kind == "r2c" else out

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


def _n_dims(
    name: str, kind: str, forward=True, hermitian=False, default_dim=None, doc=""
) -> Callable[..., Tensor]:
    """``torch.fft.<name>``: the n-D (``default_dim`` (-2, -1): 2-D) transform."""

    def transform(
        input: Any,
        s: Sequence[int] | None = None,
        dim: int | Sequence[int] | None = None,
        norm: str | None = None,
        *,
        axes: int | Sequence[int] | None = None,
    ) -> Tensor:
        x = _input(input, kind, name)
        dims = _either(name, dim, "axes", axes, default_dim)
        if dims is not None and s is not None and len(tuple(s)) != len(tuple(dims)):
            raise ValueError(
                f"dualad.fft.{name}: when given, dim and shape arguments must have the same "
                f"length (got s={tuple(s)}, dim={tuple(dims)})"
            )
        sizes, dims = cook_nd_args(x, s, dims, name, warn=False)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dualad.fft.{name}: FFT dims must be unique (got {tuple(dims)})")
        if not dims:
            raise ValueError(f"dualad.fft.{name}: no dims to transform (input of shape ())")
        if hermitian:
            norm = swapped_norm(norm)
            if kind == "c2r":
                x = ops.conj(x)
        if kind == "c2r" and s is None:
            sizes[-1] = None  # 2 (m - 1) samples from m bins
        out = transform_nd(kind, x, sizes, dims, norm, forward)
        return ops.conj(out) if hermitian and kind == "r2c" else out

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


_X = ">>> x = dualad.tensor([1.0, 2.0, 0.0, -1.0])"

fft = _one_dim(
    "fft",
    "c2c",
    doc=f"""The 1-D DFT of ``input`` along ``dim`` (``axis``) with ``n`` points (cropped or
    zero-padded): ``X[k] = sum_j x[j] exp(-2 pi i j k / n)`` ("backward" norm; "ortho": times
    ``1/sqrt(n)``, "forward": ``1/n``). Linear: its gradient is the adjoint transform.

    >>> import dualad
    {_X}
    >>> dualad.fft.fft(x)
    tensor([2.+0.j, 1.-3.j, 0.+0.j, 1.+3.j])
    >>> dualad.fft.fft(x, n=2, norm="ortho")
    tensor([ 2.12132034+0.j, -0.70710678+0.j])
    """,
)
ifft = _one_dim(
    "ifft",
    "c2c",
    forward=False,
    doc=f"""The inverse of ``fft``: ``x[j] = (1/n) sum_k X[k] exp(2 pi i j k / n)`` ("backward").

    >>> import dualad
    {_X}
    >>> dualad.fft.ifft(dualad.fft.fft(x)).real
    tensor([ 1.,  2.,  0., -1.])
    """,
)
rfft = _one_dim(
    "rfft",
    "r2c",
    doc=f"""The DFT of real ``input``: its ``n // 2 + 1`` non-negative frequencies (the others
    are their conjugates). The gradient counts each bin between DC and Nyquist twice in the
    adjoint's inverse (``dualad/ops/fft.py``), so it is that of the full ``fft``.

    >>> import dualad
    {_X}
    >>> dualad.fft.rfft(x)
    tensor([2.+0.j, 1.-3.j, 0.+0.j])
    """,
)
irfft = _one_dim(
    "irfft",
    "c2r",
    doc=f"""The inverse of ``rfft``: ``n`` real samples (default ``2 (m - 1)`` from ``m`` bins)
    from the non-negative frequencies. The imaginary parts of the DC bin (and of the Nyquist
    bin when ``n`` is even) do not reach the output, so their gradients are 0.

    >>> import dualad
    {_X}
    >>> dualad.fft.irfft(dualad.fft.rfft(x))
    tensor([ 1.,  2.,  0., -1.])
    >>> dualad.fft.irfft(dualad.fft.rfft(x), n=3).shape
    (3,)
    """,
)
hfft = _one_dim(
    "hfft",
    "c2r",
    hermitian=True,
    doc=f"""The DFT of a Hermitian-symmetric signal given by its first half: ``n`` real
    frequencies (default ``2 (m - 1)``), ``irfft(conj(input))`` with the other direction's norm.

    >>> import dualad
    {_X}
    >>> dualad.fft.hfft(dualad.fft.ihfft(x))
    tensor([ 1.,  2.,  0., -1.])
    """,
)
ihfft = _one_dim(
    "ihfft",
    "r2c",
    hermitian=True,
    doc=f"""The inverse of ``hfft``: the first ``n // 2 + 1`` bins of ``ifft`` of real
    ``input`` (``conj(rfft(input))`` with the other direction's norm).

    >>> import dualad
    {_X}
    >>> dualad.fft.ihfft(x)
    tensor([0.5 -0.j  , 0.25+0.75j, 0.  -0.j  ])
    """,
)

_Y = ">>> y = dualad.arange(6.0).reshape(2, 3)"

fftn = _n_dims(
    "fftn",
    "c2c",
    doc=f"""The n-D DFT over ``dim`` (``axes``; default: the last ``len(s)`` dims, or all),
    each cropped or zero-padded to ``s``.

    >>> import dualad
    {_Y}
    >>> dualad.fft.fftn(y)
    tensor([[15.+0.j        , -3.+1.73205081j, -3.-1.73205081j],
            [-9.+0.j        ,  0.+0.j        ,  0.+0.j        ]])
    """,
)
ifftn = _n_dims(
    "ifftn",
    "c2c",
    forward=False,
    doc=f"""The inverse of ``fftn``.

    >>> import dualad
    {_Y}
    >>> dualad.fft.ifftn(dualad.fft.fftn(y), s=(2, 3)).real
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """,
)
rfftn = _n_dims(
    "rfftn",
    "r2c",
    doc=f"""The n-D DFT of real ``input``, one-sided along the last of ``dim``.

    >>> import dualad
    {_Y}
    >>> dualad.fft.rfftn(y).shape
    (2, 2)
    """,
)
irfftn = _n_dims(
    "irfftn",
    "c2r",
    doc=f"""The inverse of ``rfftn``: ``s`` is the output's shape over ``dim`` (default: the
    input's, and ``2 (m - 1)`` along the last of ``dim``).

    >>> import dualad
    {_Y}
    >>> dualad.fft.irfftn(dualad.fft.rfftn(y), s=y.shape)
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """,
)
hfftn = _n_dims(
    "hfftn",
    "c2r",
    hermitian=True,
    doc=f"""The n-D DFT of a Hermitian-symmetric signal given by its half along the last of
    ``dim``: ``irfftn(conj(input))`` with the other direction's norm.

    >>> import dualad
    {_Y}
    >>> dualad.fft.hfftn(dualad.fft.ihfftn(y), s=y.shape)
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """,
)
ihfftn = _n_dims(
    "ihfftn",
    "r2c",
    hermitian=True,
    doc=f"""The inverse of ``hfftn``: ``conj(rfftn(input))`` with the other direction's norm.

    >>> import dualad
    {_Y}
    >>> dualad.fft.ihfftn(y).shape
    (2, 2)
    """,
)


_2D = (-2, -1)


def _doc_2d(name: str, nd: str) -> str:
    return f"""``{nd}`` over ``dim`` (``axes``), by default the last two dims.

    >>> import dualad
    {_Y}
    >>> dualad.fft.{name}(y).shape == dualad.fft.{nd}(y, dim=(-2, -1)).shape
    True
    """


fft2 = _n_dims("fft2", "c2c", default_dim=_2D, doc=_doc_2d("fft2", "fftn"))
ifft2 = _n_dims("ifft2", "c2c", forward=False, default_dim=_2D, doc=_doc_2d("ifft2", "ifftn"))
rfft2 = _n_dims("rfft2", "r2c", default_dim=_2D, doc=_doc_2d("rfft2", "rfftn"))
irfft2 = _n_dims("irfft2", "c2r", default_dim=_2D, doc=_doc_2d("irfft2", "irfftn"))
hfft2 = _n_dims("hfft2", "c2r", hermitian=True, default_dim=_2D, doc=_doc_2d("hfft2", "hfftn"))
ihfft2 = _n_dims("ihfft2", "r2c", hermitian=True, default_dim=_2D, doc=_doc_2d("ihfft2", "ihfftn"))


def _shift(name: str, doc: str) -> Callable[..., Tensor]:
    """``torch.fft.<name>``: NumPy's roll by half of each of ``dim`` (``axes``; default: all)."""

    def shift(
        input: Any,
        dim: int | Sequence[int] | None = None,
        *,
        axes: int | Sequence[int] | None = None,
    ) -> Tensor:
        return getattr(_np_fft, name)(input, _either(name, dim, "axes", axes, None))

    shift.__name__ = shift.__qualname__ = name
    shift.__doc__ = doc
    return shift


fftshift = _shift(
    "fftshift",
    """The zero frequency moved to the centre of ``dim`` (``axes``; default: all dims).

    >>> import dualad
    >>> dualad.fft.fftshift(dualad.fft.fftfreq(5))
    tensor([-0.4, -0.2,  0. ,  0.2,  0.4])
    """,
)
ifftshift = _shift(
    "ifftshift",
    """The inverse of ``fftshift``.

    >>> import dualad
    >>> dualad.fft.ifftshift(dualad.fft.fftshift(dualad.arange(5)))
    tensor([0, 1, 2, 3, 4])
    """,
)


def _frequencies(name: str, doc: str) -> Callable[..., Tensor]:
    """``torch.fft.<name>``: NumPy's frequencies, in ``dtype`` when given."""

    def frequencies(
        n: int, d: Any = 1.0, *, dtype: DTypeArg = None, device: DeviceArg = None
    ) -> Tensor:
        out = getattr(_np_fft, name)(n, d=d, device=device)
        return out if dtype is None else ops.astype(out, dtype)

    frequencies.__name__ = frequencies.__qualname__ = name
    frequencies.__doc__ = doc
    return frequencies


fftfreq = _frequencies(
    "fftfreq",
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d`` (a tensor ``d``:
    differentiable in it).

    >>> import dualad
    >>> dualad.fft.fftfreq(4, d=0.25)
    tensor([ 0.,  1., -2., -1.])
    """,
)
rfftfreq = _frequencies(
    "rfftfreq",
    """The sample frequencies of ``rfft``'s ``n // 2 + 1`` bins.

    >>> import dualad
    >>> dualad.fft.rfftfreq(5)
    tensor([0. , 0.2, 0.4])
    """,
)
