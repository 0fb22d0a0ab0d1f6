"""Op database entries for ``dualad.fft`` (the ops of ``dualad/ops/fft.py``): every public
function with even and odd sizes, cropping and zero-padding ``n``/``s``, each ``norm``, and
PyTorch's ``dim=`` as well as NumPy's ``axis=``/``axes=`` spellings, against ``numpy.fft``
(the Hermitian n-D transforms against their definitions in ``numpy.fft``)."""

from __future__ import annotations

import numpy as np

import dualad

from . import ALL_DIFF, FLOATING, SampleInput, entry, uniform

_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _numpy_spelling(kwargs: dict, nd: bool) -> dict:
    """PyTorch's ``dim=`` as NumPy's ``axis=``/``axes=`` (for the reference), and the last
    ``len(s)`` axes named when only ``s`` is given (NumPy 2 deprecates leaving them out)."""
    kwargs = dict(kwargs)
    if "dim" in kwargs:
        kwargs["axes" if nd else "axis"] = kwargs.pop("dim")
    if nd and kwargs.get("s") is not None and kwargs.get("axes") is None:
        kwargs["axes"] = tuple(range(-len(kwargs["s"]), 0))
    return kwargs


def _ref(numpy_fn, nd: bool = False):
    return lambda a, **kwargs: numpy_fn(a, **_numpy_spelling(kwargs, nd))


def _hfftn_ref(a, norm=None, **kwargs):
    kwargs = _numpy_spelling(kwargs, nd=True)
    return np.fft.irfftn(np.conj(a), norm=_SWAP[norm], **kwargs)


def _ihfftn_ref(a, norm=None, **kwargs):
    return np.conj(np.fft.rfftn(a, norm=_SWAP[norm], **_numpy_spelling(kwargs, nd=True)))


def _hfft2_ref(a, **kwargs):
    return _hfftn_ref(a, **{"axes": (-2, -1), **kwargs})


def _ihfft2_ref(a, **kwargs):
    return _ihfftn_ref(a, **{"axes": (-2, -1), **kwargs})


# (input shape, keyword arguments): 1-D transforms; even and odd lengths, n cropping and padding
ONE_DIM = [
    ((6,), {}),
    ((5,), {"norm": "ortho"}),
    ((2, 7), {"n": 4, "norm": "forward"}),
    ((4, 3), {"n": 6, "dim": 0}),
    ((3, 4), {"axis": -1, "n": 5, "norm": "backward"}),
]
# the one-sided inputs of irfft/hfft: n even and odd (the Nyquist bin or none), the bins cropped
# and zero-padded
ONE_SIDED = [
    ((4,), {}),  # 6 samples: DC, 2 bins counted twice, Nyquist
    ((4,), {"n": 7, "norm": "ortho"}),  # 7 samples: no Nyquist bin
    ((2, 5), {"n": 4, "norm": "forward"}),  # the bins cropped to 3
    ((3, 3), {"n": 9, "dim": 0}),  # zero-padded to 5 bins
]
# n-D transforms: all dims, some, s cropping and padding (-1: keep), each norm
N_DIMS = [
    ((3, 4), {}),
    ((2, 3, 5), {"axes": (0, 2), "norm": "ortho"}),
    ((4, 3), {"s": (3, 5), "norm": "forward"}),
    ((2, 4, 3), {"s": (-1, 6), "dim": (2, 0)}),
]
ONE_SIDED_N_DIMS = [
    ((3, 4), {}),
    ((2, 3, 3), {"axes": (0, 2), "s": (3, 5), "norm": "ortho"}),
    ((4, 3), {"s": (3, 4), "norm": "forward"}),
    ((2, 3, 4), {"dim": (1, 2), "s": (2, 7)}),
]
TWO_DIMS = [
    ((3, 4), {}),
    ((2, 3, 5), {"norm": "ortho"}),
    ((4, 3), {"s": (5, 2), "norm": "forward"}),
    ((3, 2, 4), {"axes": (0, 2), "s": (2, 6)}),
]


def _cases(cases):
    def samples(rng, dtype):
        return [
            SampleInput((uniform(rng, shape, dtype),), dict(kwargs), note=f"{shape} {kwargs}")
            for shape, kwargs in cases
        ]

    return samples


def _fft_entry(name, cases, ref, op, dtypes=ALL_DIFF, *extra_ops):
    return entry(
        f"fft.{name}",
        _cases(cases),
        ref,
        op,
        *extra_ops,
        fn=getattr(dualad.fft, name),
        dtypes=dtypes,
    )


def _shift_samples(rng, dtype):
    return [
        SampleInput((uniform(rng, (5,), dtype),)),
        SampleInput((uniform(rng, (4, 3), dtype),), {"dim": 1}),
        SampleInput((uniform(rng, (2, 3, 4), dtype),), {"axes": (0, 2)}),
    ]


def _shift_ref(name):
    return lambda a, dim=None, axes=None: getattr(np.fft, name)(a, axes if dim is None else dim)


def _frequency_samples(rng, dtype):
    spacing = np.asarray(rng.uniform(0.5, 2.0), dtype=dtype)
    return [SampleInput((n, spacing), diff=(1,), note=f"n={n}") for n in (4, 5)]


OPS = [
    _fft_entry("fft", ONE_DIM, _ref(np.fft.fft), "fft_c2c"),
    _fft_entry("ifft", ONE_DIM, _ref(np.fft.ifft), "fft_c2c"),
    _fft_entry("rfft", ONE_DIM, _ref(np.fft.rfft), "fft_r2c", FLOATING),
    _fft_entry("irfft", ONE_SIDED, _ref(np.fft.irfft), "fft_c2r"),
    _fft_entry("hfft", ONE_SIDED, _ref(np.fft.hfft), "fft_c2r", ALL_DIFF, "conj"),
    _fft_entry("ihfft", ONE_DIM, _ref(np.fft.ihfft), "fft_r2c", FLOATING, "conj"),
    _fft_entry("fftn", N_DIMS, _ref(np.fft.fftn, nd=True), "fft_c2c"),
    _fft_entry("ifftn", N_DIMS, _ref(np.fft.ifftn, nd=True), "fft_c2c"),
    _fft_entry("rfftn", N_DIMS, _ref(np.fft.rfftn, nd=True), "fft_r2c", FLOATING),
    _fft_entry("irfftn", ONE_SIDED_N_DIMS, _ref(np.fft.irfftn, nd=True), "fft_c2r"),
    _fft_entry("hfftn", ONE_SIDED_N_DIMS, _hfftn_ref, "fft_c2r", ALL_DIFF, "conj"),
    _fft_entry("ihfftn", N_DIMS, _ihfftn_ref, "fft_r2c", FLOATING, "conj"),
    _fft_entry("fft2", TWO_DIMS, _ref(np.fft.fft2, nd=True), "fft_c2c"),
    _fft_entry("ifft2", TWO_DIMS, _ref(np.fft.ifft2, nd=True), "fft_c2c"),
    _fft_entry("rfft2", TWO_DIMS, _ref(np.fft.rfft2, nd=True), "fft_r2c", FLOATING),
    _fft_entry("irfft2", TWO_DIMS, _ref(np.fft.irfft2, nd=True), "fft_c2r"),
    _fft_entry("hfft2", TWO_DIMS, _hfft2_ref, "fft_c2r", ALL_DIFF, "conj"),
    _fft_entry("ihfft2", TWO_DIMS, _ihfft2_ref, "fft_r2c", FLOATING, "conj"),
    *(
        entry(f"fft.{name}", _shift_samples, _shift_ref(name), "roll", fn=getattr(dualad.fft, name))
        for name in ("fftshift", "ifftshift")
    ),
    # the frequencies k / (n d): differentiable in a tensor spacing d
    *(
        entry(
            f"fft.{name}",
            _frequency_samples,
            getattr(np.fft, name),
            "div",
            fn=getattr(dualad.fft, name),
            dtypes=("float64",),
        )
        for name in ("fftfreq", "rfftfreq")
    ),
]
