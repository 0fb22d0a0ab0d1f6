"""Op database entries for the ops behind ``dualad.fwd`` (``alias``: make_dual/unpack_dual)."""

from __future__ import annotations

from ... import fwd
from . import ALL_DIFF, OpInfo, SampleInput, uniform


def _unpacked_primal(x):
    """unpack_dual's primal: an alias of x (differentiable, shares memory)."""
    with fwd.dual_level():
        return fwd.unpack_dual(x).primal


def _alias_samples(rng, dtype):
    return [SampleInput((uniform(rng, shape, dtype),)) for shape in [(), (3,), (2, 3)]]


OPS = [
    OpInfo("alias", _unpacked_primal, _alias_samples, dtypes=ALL_DIFF, ref=lambda x: x),
]
