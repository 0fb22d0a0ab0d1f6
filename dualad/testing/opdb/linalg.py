"""Op database entries for products and contractions (``dualad/ops/linalg.py``, ``einsum``)."""

from __future__ import annotations

import numpy as np

from . import SampleInput, entry, uniform

# (shape of a, shape of b, note): every matmul case, broadcasting batch dims included
MATMUL_SHAPES = [
    ((3,), (3,), "vector-vector"),
    ((3,), (3, 2), "vector-matrix"),
    ((2, 3), (3,), "matrix-vector"),
    ((2, 3), (3, 4), "matrix-matrix"),
    ((2, 2, 3), (3, 4), "batched-matrix"),
    ((2, 3), (2, 3, 2), "matrix-batched"),
    ((2, 1, 2, 3), (3, 3, 2), "broadcast-batch"),
    ((3,), (2, 3, 2), "vector-batched"),
    ((2, 2, 3), (3,), "batched-vector"),
]

# (equation, operand shapes, note)
EINSUM_CASES = [
    ("ij,jk->ik", ((2, 3), (3, 4)), "matrix product"),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 2)), "batch"),
    ("ii->", ((3, 3),), "trace"),
    ("ii->i", ((3, 3),), "diagonal"),
    ("bii->bi", ((2, 3, 3),), "batched diagonal"),
    ("i,j->ij", ((3,), (2,)), "outer"),
    ("...ij,...jk->...ik", ((2, 1, 2, 3), (3, 3, 2)), "ellipsis broadcast"),
    ("ij->ji", ((2, 3),), "transpose"),
    ("ji", ((2, 3),), "implicit transpose"),
    ("ij->j", ((2, 3),), "sum-out"),
    ("ij,jk,kl->il", ((2, 3), (3, 2), (2, 2)), "three operands"),
    ("i,i,i->i", ((3,), (3,), (3,)), "three-way product"),
    ("ij,jk", ((2, 3), (3, 2)), "implicit output"),
    ("iij->j", ((2, 2, 3),), "diagonal summed"),
    ("ii,i->i", ((3, 3), (3,)), "diagonal times vector"),
    ("ijk,ikl->jl", ((2, 2, 3), (2, 3, 2)), "two contracted"),
    ("ij,jk->ik", ((2, 1), (3, 2)), "size-1 broadcast"),
    ("...i,...i->...", ((2, 3), (3,)), "ellipsis dot"),
]


def _pair_samples(pairs):
    def samples(rng, dtype):
        return [
            SampleInput((uniform(rng, sa, dtype), uniform(rng, sb, dtype)), diff=(0, 1), note=note)
            for sa, sb, note in pairs
        ]

    return samples


def _einsum_samples(rng, dtype):
    out = []
    for equation, shapes, note in EINSUM_CASES:
        arrays = tuple(uniform(rng, shape, dtype) for shape in shapes)
        out.append(
            SampleInput((equation, *arrays), diff=tuple(range(1, len(arrays) + 1)), note=note)
        )
    # the operands as one list (torch accepts both spellings)
    a, b = uniform(rng, (2, 3), dtype), uniform(rng, (3,), dtype)
    out.append(SampleInput(("ij,j->i", [a, b]), diff=(1,), note="operand list"))
    return out


def _tensordot_samples(rng, dtype):
    cases = [
        ((2, 3, 4), (3, 4, 2), 2),
        ((3, 4), (4, 2), 1),
        ((2, 3), (3, 2), ([0, 1], [1, 0])),
        ((2, 3), (2,), 0),
        ((2, 3, 2), (2, 3), ([2, 1], [0, 1])),
    ]
    return [
        SampleInput(
            (uniform(rng, sa, dtype), uniform(rng, sb, dtype)),
            {"dims": dims},
            diff=(0, 1),
            note=f"dims={dims}",
        )
        for sa, sb, dims in cases
    ]


def _trace_samples(rng, dtype):
    return [SampleInput((uniform(rng, shape, dtype),)) for shape in ((3, 3), (2, 4), (4, 2))]


OPS = [
    entry("matmul", _pair_samples(MATMUL_SHAPES), np.matmul),
    entry("mm", _pair_samples([((2, 3), (3, 4), ""), ((1, 3), (3, 1), "row-column")]), np.matmul),
    entry("bmm", _pair_samples([((2, 2, 3), (2, 3, 4), "")]), np.matmul),
    entry("dot", _pair_samples([((4,), (4,), "")]), np.dot),
    entry("vdot", _pair_samples([((4,), (4,), "")]), np.vdot),
    entry(
        "inner",
        _pair_samples(
            [((2, 3), (4, 3), "matrices"), ((3,), (3,), "vectors"), ((), (2, 3), "scalar")]
        ),
        np.inner,
        *("einsum", "mul"),
    ),
    entry("outer", _pair_samples([((3,), (2,), "")]), np.outer, "mul"),
    entry(
        "tensordot",
        _tensordot_samples,
        lambda a, b, dims: np.tensordot(a, b, axes=dims),
        "einsum",
    ),
    entry(
        "kron",
        _pair_samples(
            [
                ((2, 2), (2, 3), "matrices"),
                ((3,), (2,), "vectors"),
                ((2, 3), (2,), "ranks differ"),
                ((2, 1, 2), (2, 2), "3-D"),
            ]
        ),
        np.kron,
        "mul",
    ),
    entry("trace", _trace_samples, np.trace),
    entry(
        "einsum",
        _einsum_samples,
        lambda equation, *operands: np.einsum(
            equation, *(operands[0] if isinstance(operands[0], list) else operands)
        ),
    ),
]
