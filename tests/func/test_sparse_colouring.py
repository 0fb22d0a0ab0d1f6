"""The colourings of ``dualad.func._colouring``: valid on random patterns, few colours on
banded ones, fast at a million columns, and their decompressions exact."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from dualad.func import _colouring as colouring
from dualad.func._colouring import colour_columns, colour_rows, colour_symmetric


def _random_pattern(seed: int, m: int, n: int, density: float):
    return sp.random(m, n, density=density, random_state=seed, format="csr", dtype=bool)


def _distinct_in_rows(pattern, colours) -> bool:
    coo = pattern.tocoo()
    pairs = np.stack([coo.row, colours[coo.col]], axis=1)
    return len(np.unique(pairs, axis=0)) == len(pairs)


@given(st.integers(0, 10_000), st.integers(1, 30), st.integers(1, 30), st.floats(0.0, 0.5))
def test_column_and_row_colourings_are_valid_and_decompress(seed, m, n, density):
    pattern = _random_pattern(seed, m, n, density)
    values = pattern.astype(np.float64).multiply(np.random.default_rng(seed).random((m, n)))
    values = sp.csr_matrix(values)
    pattern = sp.csr_matrix(values, dtype=bool)
    pattern.sort_indices()
    colours, k = colour_columns(pattern)
    assert _distinct_in_rows(pattern, colours)
    if pattern.nnz:
        seeds = np.zeros((n, k))
        seeds[np.arange(n), colours] = 1
        compressed = (values @ seeds).T  # (k, m): one jvp per colour
        first, second = colouring.column_reads(pattern, colours)
        np.testing.assert_allclose(compressed[first, second], values[pattern].A1)
    colours, k = colour_rows(pattern)
    assert _distinct_in_rows(pattern.T.tocsr(), colours)
    if pattern.nnz:
        seeds = np.zeros((m, k))
        seeds[np.arange(m), colours] = 1
        compressed = seeds.T @ values  # (k, n): one vjp per colour
        first, second = colouring.row_reads(pattern, colours)
        np.testing.assert_allclose(compressed[first, second], values[pattern].A1)


@given(st.integers(0, 10_000), st.integers(1, 30), st.floats(0.0, 0.4))
def test_star_colouring_decompresses_symmetric_matrices(seed, n, density):
    half = sp.random(n, n, density=density, random_state=seed, format="csr")
    values = (half + half.T + sp.eye(n)).tocsr()
    pattern = sp.csr_matrix(values, dtype=bool)
    pattern.sort_indices()
    colours, k = colour_symmetric(pattern)
    coo = pattern.tocoo()
    off = coo.row != coo.col
    assert np.all(colours[coo.row[off]] != colours[coo.col[off]])  # neighbours differ
    seeds = np.zeros((n, k))
    seeds[np.arange(n), colours] = 1
    compressed = (values @ seeds).T  # (k, n): one hvp per colour
    first, second = colouring.symmetric_reads(pattern, colours, k)
    np.testing.assert_allclose(compressed[first, second], values[pattern].A1, atol=1e-12)


def test_banded_patterns_take_their_bandwidth():
    for width in (1, 2, 3, 5):
        offsets = list(range(width))
        pattern = sp.diags([1] * width, offsets, shape=(40, 40 + width), dtype=bool, format="csr")
        assert colour_columns(pattern)[1] == width
    tridiagonal = sp.diags([1, 1, 1], [-1, 0, 1], shape=(50, 50), dtype=bool, format="csr")
    assert colour_symmetric(tridiagonal)[1] == 3


def test_a_million_columns_in_seconds():
    n = 1_000_000
    pattern = sp.diags([1, 1, 1], [0, 1, 2], shape=(n - 2, n), dtype=bool, format="csr")
    start = time.perf_counter()
    colours, k = colour_columns(pattern)
    assert k == 3
    # a five-point stencil: the cyclic candidates miss the lower bound, the greedy runs too
    side = 500
    grid = sp.diags([1, 1, 1, 1, 1], [-side, -1, 0, 1, side], shape=(side**2, side**2), dtype=bool)
    colours, k = colour_columns(grid.tocsr())
    assert _distinct_in_rows(grid.tocsr(), colours) and k <= 8
    assert time.perf_counter() - start < 120  # (seconds on an idle machine; generous here)
