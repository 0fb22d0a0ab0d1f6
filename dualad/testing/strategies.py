"""Hypothesis strategies for property tests of code built on dualad.

Needs `hypothesis <https://hypothesis.readthedocs.io>`_ (``pip install "dualad[test]"``).

- ``shapes`` / ``broadcastable_shapes``: array shapes (small by default);
- ``arrays`` / ``tensors``: NumPy arrays / dualad tensors with finite values in a bounded range;
- ``ops``: entries of the op database (``dualad.testing.opdb.OpInfo``);
- ``programs``: random differentiable programs composed of registry elementwise ops, each op's
  input mapped smoothly into its domain, so any real input is valid.

A property test (see also ``dualad.testing.check_grads``)::

    from hypothesis import given
    from dualad.testing import check_grads, strategies as ds

    @given(ds.programs(), ds.arrays(shape=ds.shapes(max_dims=2)))
    def test_my_program(program, x):
        check_grads(program, (x,))

Drawing an op and calling it on its samples::

    @given(ds.ops(unary=True))
    def test_op(info):
        for sample in info.sample_inputs("float64"):
            args, kwargs, leaves = sample.tensors()   # leaves: the tensors requiring grad
            out = info.fn(*args, **kwargs)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as exc:  # pragma: no cover - exercised only without hypothesis
    raise ImportError(
        "dualad.testing.strategies needs hypothesis, which comes with the 'test' extra: "
        "pip install 'dualad[test]' (or pip install hypothesis)"
    ) from exc

from typing import Literal

import numpy as np

import dualad
from dualad._dispatch import REGISTRY

from .opdb import all_ops

__all__ = [
    "BINARY_DOMAINS",
    "DOMAIN_MAPS",
    "Program",
    "UNARY_DOMAINS",
    "arrays",
    "available",
    "bounded",
    "broadcastable_shapes",
    "chain",
    "op_infos",
    "ops",
    "programs",
    "shapes",
    "tensors",
]


# ---------------------------------------------------------------------------------------------
# shapes


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4):
    """Array shapes (tuples) with ``min_dims..max_dims`` dims of ``min_side..max_side``."""
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def broadcastable_shapes(
    shape: Sequence[int],
    min_dims: int = 0,
    max_dims: int | None = None,
    min_side: int = 1,
    max_side: int | None = None,
):
    """Shapes that broadcast with ``shape`` (``np.broadcast_shapes(shape, drawn)`` works)."""
    return hnp.broadcastable_shapes(
        tuple(shape), min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


# ---------------------------------------------------------------------------------------------
# arrays and tensors


def _elements(dtype: np.dtype, low: float, high: float):
    width: Literal[16, 32, 64] = 32 if dtype in (np.float32, np.complex64) else 64
    if dtype.kind == "f":
        if dtype == np.float16:
            width = 16
        return st.floats(low, high, allow_nan=False, allow_infinity=False, width=width)
    if dtype.kind == "c":
        part = st.floats(low, high, allow_nan=False, allow_infinity=False, width=width)
        return st.builds(complex, part, part)
    if dtype.kind in "iu":
        return st.integers(int(np.ceil(low)), int(np.floor(high)))
    if dtype.kind == "b":
        return st.booleans()
    raise ValueError(f"arrays: unsupported dtype {dtype}")


def arrays(dtype="float64", shape=None, *, low: float = -2.0, high: float = 2.0):
    """NumPy arrays of ``dtype`` with finite values in ``[low, high]`` (complex: both parts).

    ``shape``: a tuple, a strategy of tuples, or None for ``shapes()``. Integer dtypes draw
    integers in the range; bool draws booleans.
    """
    dtype = np.dtype(dtype)
    if shape is None:
        shape = shapes()
    return hnp.arrays(dtype, shape, elements=_elements(dtype, low, high))


def tensors(
    dtype="float64",
    shape=None,
    *,
    requires_grad: bool = False,
    low: float = -2.0,
    high: float = 2.0,
):
    """dualad tensors made from ``arrays(dtype, shape, low=, high=)``; ``requires_grad`` makes
    them leaves that require gradients (floating and complex dtypes only)."""
    return arrays(dtype, shape, low=low, high=high).map(
        lambda a: dualad.tensor(a, requires_grad=requires_grad)
    )


# ---------------------------------------------------------------------------------------------
# the op database


def _is_unary(info) -> bool:
    """Whether every float64 sample of ``info`` calls it with one array and no keywords."""
    dtype = info.dtypes[0] if info.dtypes else "float64"
    try:
        samples = info.sample_inputs(dtype)
    except Exception:  # an entry whose samples fail is simply not unary
        return False
    return bool(samples) and all(
        len(s.args) == 1 and isinstance(s.args[0], np.ndarray) and not s.kwargs for s in samples
    )


def ops(differentiable: bool | None = True, unary: bool | None = None):
    """``OpInfo`` entries of ``dualad.testing.opdb.all_ops()``.

    ``differentiable``: True (default) only ops with gradients, False only ops without, None
    any. ``unary``: True only ops called with a single array (``sin``, ``sum`` with its default
    arguments...), False only the others, None any.

    Call a drawn entry on its samples (arrays in, arrays out of ``info.ref`` when it has one)::

        for sample in info.sample_inputs("float64"):   # or any dtype in info.dtypes
            args, kwargs, leaves = sample.tensors()
            out = info.fn(*args, **kwargs)              # leaves: the tensors to differentiate
    """
    infos = op_infos(differentiable, unary)
    if not infos:
        raise ValueError(f"ops: no op with differentiable={differentiable}, unary={unary}")
    return st.sampled_from(infos)


def op_infos(differentiable: bool | None = True, unary: bool | None = None) -> list:
    """The list ``ops(differentiable, unary)`` draws from."""
    infos = [
        info
        for info in all_ops()
        if differentiable is None or bool(info.differentiable) == differentiable
    ]
    if unary is not None:
        infos = [info for info in infos if _is_unary(info) == unary]
    return infos


# ---------------------------------------------------------------------------------------------
# domain-safe programs of elementwise ops


def available(names) -> list[str]:
    """The names that are both registered ops and public ``dualad`` functions, sorted."""
    return sorted(n for n in names if n in REGISTRY and callable(getattr(dualad, n, None)))


def bounded(x):
    """A smooth map of the reals onto (-1, 1): x / sqrt(1 + x^2)."""
    return x * dualad.rsqrt(1 + x * x)


# each op's input is mapped into its domain, away from poles and the domain's edges
DOMAIN_MAPS: dict[str, Callable] = {
    "any": lambda x: 2 * bounded(x),
    "positive": lambda x: 1.5 + bounded(x),  # (0.5, 2.5)
    "unit": lambda x: 0.9 * bounded(x),  # (-0.9, 0.9)
    "above_one": lambda x: 2 + bounded(x),  # (1, 3)
    "probability": lambda x: 0.5 + 0.4 * bounded(x),  # (0.1, 0.9)
}
UNARY_DOMAINS = {
    "sin": "any", "cos": "any", "tan": "unit", "tanh": "any", "sinh": "any", "cosh": "any",
    "exp": "any", "exp2": "any", "expm1": "any", "neg": "any", "square": "any",
    "sigmoid": "any", "atan": "any", "asinh": "any", "erf": "any", "erfc": "any",
    "softplus": "any", "log": "positive", "log2": "positive", "log10": "positive",
    "log1p": "positive", "sqrt": "positive", "rsqrt": "positive", "reciprocal": "positive",
    "asin": "unit", "acos": "unit", "atanh": "unit", "erfinv": "unit", "acosh": "above_one",
    "logit": "probability",
}  # fmt: skip
# name -> (domain of a, domain of b) as intervals; values drawn uniformly in them
BINARY_DOMAINS = {
    "add": ((-2, 2), (-2, 2)),
    "sub": ((-2, 2), (-2, 2)),
    "mul": ((-2, 2), (-2, 2)),
    "div": ((-2, 2), (0.5, 2)),
    "true_divide": ((-2, 2), (0.5, 2)),
    "pow": ((0.5, 2), (-2, 2)),
    "maximum": ((-2, 2), (-2, 2)),
    "minimum": ((-2, 2), (-2, 2)),
    "fmax": ((-2, 2), (-2, 2)),
    "fmin": ((-2, 2), (-2, 2)),
    "atan2": ((0.5, 2), (-2, 2)),
    "hypot": ((0.5, 2), (-2, 2)),
    "xlogy": ((-2, 2), (0.5, 2)),
}
# binary ops smooth everywhere in their domains (no kinks: programs must be twice
# differentiable)
SMOOTH_BINARY = ("add", "sub", "mul", "div", "pow", "atan2", "hypot", "xlogy")
# narrower domains for programs: pow's base gradient and xlogy's are masked to 0 where the
# exponent / x is 0 (as in PyTorch), which drops a term of the second derivative there
_PROGRAM_DOMAINS = {"pow": ((0.5, 2), (0.5, 2)), "xlogy": ((0.5, 2), (0.5, 2))}


def _into(interval) -> Callable:
    """A smooth map of the reals into the middle 90% of ``interval``."""
    low, high = interval
    middle, half = (low + high) / 2, 0.45 * (high - low)
    return lambda x: middle + half * bounded(x)


def chain(names: Sequence[str]) -> Callable:
    """``x -> op_k(... op_1(x))`` with each op's input mapped into its domain first."""
    names = tuple(names)

    def fn(x):
        for name in names:
            x = getattr(dualad, name)(DOMAIN_MAPS[UNARY_DOMAINS[name]](x))
        return x

    return fn


@dataclass(frozen=True)
class Program:
    """A random elementwise program of one tensor: call it, read ``description``.

    ``steps``: ``(op name, None)`` for a unary step ``y = op(map(y))``, ``(op name, "x")`` for a
    binary step ``y = op(map_a(y), map_b(x))`` with the program's input ``x``.
    """

    steps: tuple

    def __call__(self, x):
        y = x
        for name, other in self.steps:
            op = getattr(dualad, name)
            if other is None:
                y = op(DOMAIN_MAPS[UNARY_DOMAINS[name]](y))
            else:
                domain_a, domain_b = _PROGRAM_DOMAINS.get(name, BINARY_DOMAINS[name])
                y = op(_into(domain_a)(y), _into(domain_b)(x))
        return y

    @property
    def description(self) -> str:
        text = "x"
        for name, other in self.steps:
            text = f"{name}({text})" if other is None else f"{name}({text}, x)"
        return text

    def __repr__(self) -> str:
        return f"Program({self.description})"


def programs(
    min_ops: int = 1,
    max_ops: int = 4,
    *,
    unary_ops: Sequence[str] | None = None,
    binary_ops: Sequence[str] | None = None,
):
    """Random differentiable (and twice differentiable) ``Program``s of one tensor argument.

    Each step applies a registered unary elementwise op, or a smooth binary one to the running
    value and the input (broadcasting as the input does). Inputs are mapped into each op's
    domain by smooth bounded maps (``bounded``), so the program is defined, smooth and
    well-conditioned for every finite real input. ``unary_ops``/``binary_ops`` restrict the
    names drawn (default: every registered one this module knows the domain of; an empty
    ``binary_ops`` gives plain chains).
    """
    unary = available(UNARY_DOMAINS if unary_ops is None else unary_ops)
    binary = available(SMOOTH_BINARY if binary_ops is None else binary_ops)
    unknown = [n for n in unary if n not in UNARY_DOMAINS] + [
        n for n in binary if n not in BINARY_DOMAINS
    ]
    if unknown:
        raise ValueError(f"programs: no known domain for {unknown}")
    if "rsqrt" not in REGISTRY or not unary:
        raise ValueError("programs: no unary elementwise ops are registered")
    step = st.tuples(st.sampled_from(unary), st.none())
    if binary:
        step = step | st.tuples(st.sampled_from(binary), st.just("x"))
    return st.lists(step, min_size=min_ops, max_size=max_ops).map(
        lambda steps: Program(tuple(steps))
    )
