"""The op database: for each public op, how to call it and with what inputs.

Each family module (``elementwise``, ``reductions``, ``shape``, ``linalg`` ...) defines a list
``OPS`` of ``OpInfo`` entries. Tests iterate over ``all_ops()`` to check every registered op
against finite differences, its own JVP, vmap and so on (like PyTorch's OpInfo).

An entry describes one public function (``fn``) and produces ``SampleInput``s: NumPy arrays for
the tensor arguments (differentiable ones first-class), plus static keyword arguments. Inputs are
drawn inside the op's domain and away from its kinks so that central differences are accurate.

>>> from dualad.testing.opdb import all_ops
>>> any(info.name == "sin" for info in all_ops())
True
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import import_module

import numpy as np

import dualad

from .._numeric import replace_leaves, sample_leaves, sample_to_tensors, upcast

FLOATING = ("float32", "float64")
ALL_DIFF = ("float32", "float64", "complex64", "complex128")


@dataclass
class SampleInput:
    """One call of an op: ``fn(*args, **kwargs)``.

    ``args`` holds NumPy arrays (become tensors), Python scalars and other static values, in
    call order. ``diff`` lists the positions in ``args`` that are differentiable tensor inputs
    (the others, e.g. integer index arrays, become constant tensors).

    Extensions (see ``dualad.testing._numeric.sample_to_tensors``):

    - an entry of ``diff`` may also be a keyword name: ``kwargs[name]`` is then a
      differentiable array (``lerp(a, b, weight=w)``); arrays in ``kwargs`` that are not named
      in ``diff`` become constant tensors;
    - an argument may be a list/tuple of arrays (``stack([a, b])``); it becomes a list/tuple of
      tensors, each differentiable when the position is in ``diff``;
    - floating/complex arrays not in ``diff`` become tensors that do not require grad.
    """

    args: tuple
    kwargs: dict = field(default_factory=dict)
    diff: tuple[int | str, ...] = (0,)
    note: str = ""

    def leaves(self) -> list[np.ndarray]:
        """The arrays at the differentiable positions, lists flattened, in ``diff`` order."""
        return sample_leaves(self)[1]

    def with_leaves(self, arrays) -> SampleInput:
        """A copy with the differentiable arrays replaced (same order as ``leaves()``)."""
        return replace_leaves(self, arrays)

    def upcast(self) -> SampleInput:
        """A copy with float32 arrays as float64 and complex64 as complex128 (for references)."""
        return replace(
            self, args=upcast(self.args), kwargs={k: upcast(v) for k, v in self.kwargs.items()}
        )

    def tensors(self, *, requires_grad: bool = True, device=None) -> tuple[tuple, dict, list]:
        """``(args, kwargs, leaves)`` with arrays as dualad tensors on ``device`` (the test
        device by default; see ``sample_to_tensors``)."""
        return sample_to_tensors(self, requires_grad=requires_grad, device=device)


@dataclass
class OpInfo:
    """How to test one public op.

    name: the public name (``dualad.<name>`` or the ``fn`` given).
    fn: the dualad callable; it receives tensors for array arguments.
    samples: ``samples(rng, dtype) -> list[SampleInput]`` (dtype a NumPy dtype).
    ops: names of the registry ops this entry exercises (for the completeness test).
    dtypes: dtypes the op claims to support for differentiation.
    differentiable: False for comparisons, predicates and other ops without gradients.
    twice_differentiable: whether grad-of-grad is meaningful (False for piecewise-linear ops).
    ref: optional NumPy reference ``ref(*arrays, **kwargs)`` for forward values.
    atol/rtol: tolerances for finite-difference checks in float64 (float32 is looser).
    skips: check name -> reason, for checks that do not apply (see ``skip_reason``).
    """

    name: str
    fn: Callable
    samples: Callable[[np.random.Generator, np.dtype], list[SampleInput]]
    ops: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = FLOATING
    differentiable: bool = True
    twice_differentiable: bool = True
    ref: Callable | None = None
    atol: float = 1e-5
    rtol: float = 1e-4
    skips: dict[str, str] = field(default_factory=dict)  # check name -> reason

    def __post_init__(self) -> None:
        if not self.ops:
            self.ops = (self.name,)

    def sample_inputs(self, dtype, rng: np.random.Generator | None = None) -> list[SampleInput]:
        """The samples for ``dtype``; the default generator is seeded from name and dtype, so
        every run (and every test process) sees the same inputs."""
        dtype = np.dtype(dtype)
        if rng is None:
            rng = np.random.default_rng(zlib.crc32(f"{self.name}:{dtype.name}".encode()))
        return list(self.samples(rng, dtype))

    def skip_reason(self, check: str) -> str | None:
        """Why ``check`` is skipped for this op, or None. Check names used by the registry
        tests: "fd" (VJP vs finite differences), "gradgrad", "float32" (all float32 checks),
        "complex" (all complex checks), "ref" (forward values, dtype and shape vs ``ref``)."""
        return self.skips.get(check)


def entry(name: str, samples, ref, *ops: str, fn: Callable | None = None, **options) -> OpInfo:
    """A table row on one line: ``dualad.<name>`` (or ``fn``) on every differentiable dtype
    (``dtypes=`` among ``options`` for others), checked against ``ref``, exercising the registry
    ops ``ops`` (by default the op called ``name``)."""
    options.setdefault("dtypes", ALL_DIFF)
    fn = getattr(dualad, name) if fn is None else fn
    return OpInfo(name, fn, samples, ops=ops, ref=ref, **options)


def uniform(rng, shape, dtype, low=-2.0, high=2.0) -> np.ndarray:
    """Random values in [low, high) of ``dtype`` (complex: real and imaginary parts)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        values = rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)
    else:
        values = rng.uniform(low, high, shape)
    return np.asarray(values).astype(dtype)


def away_from(rng, shape, dtype, points=(0.0,), margin=0.2, low=-2.0, high=2.0) -> np.ndarray:
    """Like ``uniform`` but at least ``margin`` away from each of ``points`` (kinks, poles)."""
    values = uniform(rng, shape, dtype, low, high)
    flat = values.reshape(-1)
    for i in range(flat.size):
        while any(abs(flat[i] - p) < margin for p in points):
            flat[i] = uniform(rng, (), dtype, low, high)
    return flat.reshape(values.shape) if values.ndim else flat.reshape(())


def all_ops() -> list[OpInfo]:
    """Every OpInfo of every family module."""
    infos: list[OpInfo] = []
    for family in FAMILIES:
        try:
            module = import_module(f"{__name__}.{family}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{family}":
                continue
            raise
        infos.extend(module.OPS)
    return infos


FAMILIES = (
    "elementwise",
    "reductions",
    "shape",
    "indexing",
    "linalg",
    "nn",
    "forward",
    "searching",
    "fft",
    "selection",
    "convolution",
    "special",
    "linalg_solvers",
    "linalg_spectral",
    "nn_primitives",
    "special_scipy",
    "special_functions",
    "linalg_functions",
)
