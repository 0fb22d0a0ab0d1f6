"""Colourings that compress a sparse Jacobian or Hessian into a few products, and the
decompressions that read its entries back (``scipy.sparse`` for the graph work).

- ``colour_columns(P)``: a distance-1 colouring of the column intersection graph of ``P``
  (columns sharing a row get different colours): ``J @ S`` with ``S[j, colour[j]] = 1`` holds
  every entry, ``J[i, j] = (J S)[i, colour[j]]`` (forward mode: one jvp per colour). Rows
  are coloured the same way on ``P.T`` (reverse mode: one vjp per colour).
- ``colour_symmetric(H)``: a star colouring of the adjacency graph of a symmetric pattern
  (a distance-1 colouring in which every path on four vertices uses at least three colours):
  every entry is read directly, ``H[i, j] = (H S)[i, colour[j]]`` when ``j`` is the only
  neighbour of ``i`` of its colour, else from its mirror ``(H S)[j, colour[i]]``. The
  colouring is checked to allow that for every entry before it is used.

The colourings are greedy. Two vectorised candidates come first: the cyclic colourings
``colour[j] = j % k``, valid when no conflicting pair is ``k`` apart (banded and stencil
patterns, checked on the set of distances between conflicting vertices, for ``k`` from the
lower bound up); when one reaches the lower bound (the most nonzeros in one row: those
columns all conflict) it is optimal and used at once. Otherwise a sequential greedy colouring
in natural order (largest-first too, for graphs small enough) runs, in plain Python over
lists (a few seconds for a million vertices of small degree), and the fewest colours win.

>>> import numpy as np, scipy.sparse as sp
>>> tridiagonal = sp.diags([1, 1, 1], [-1, 0, 1], shape=(6, 6), dtype=bool).tocsr()
>>> colours, k = colour_columns(tridiagonal)
>>> k, colours.tolist()
(3, [0, 1, 2, 0, 1, 2])
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# graphs up to this many (vertex, neighbour) pairs also try the largest-first ordering
_LARGEST_FIRST_LIMIT = 2_000_000
# the star colouring's greedy visits neighbours of neighbours: up to this many steps
_STAR_GREEDY_LIMIT = 20_000_000
# cyclic colourings tried, at most this many colours
_CYCLIC_MAX = 64


def _conflicts(pattern) -> sp.csr_matrix:
    """The column intersection graph of ``pattern`` (no self loops), CSR."""
    ones = pattern.astype(np.float32)
    graph = (ones.T @ ones).tocsr()
    graph.setdiag(0)
    graph.eliminate_zeros()
    return graph


def _lower_bound(pattern) -> int:
    counts = np.diff(pattern.indptr)
    return int(counts.max()) if counts.size else 0


def _cyclic(graph, n: int, start: int):
    """``j % k`` for the smallest valid ``k >= start`` (at most ``_CYCLIC_MAX``), or None."""
    coo = graph.tocoo()
    gaps = np.unique(np.abs(coo.row.astype(np.int64) - coo.col))
    for k in range(max(start, 1), min(_CYCLIC_MAX, max(n, 1)) + 1):
        if not np.any(gaps % k == 0):
            return np.arange(n) % k
    return None


def _greedy(graph, order) -> np.ndarray:
    """Sequential greedy distance-1 colouring of ``graph`` visiting ``order``."""
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    colour = [-1] * graph.shape[0]
    for v in order:
        used = {colour[u] for u in indices[indptr[v] : indptr[v + 1]]}
        c = 0
        while c in used:
            c += 1
        colour[v] = c
    return np.asarray(colour, dtype=np.int64)


def _count(colours) -> int:
    return int(colours.max()) + 1 if colours.size else 0


def _best_distance1(graph, n: int, bound: int) -> np.ndarray:
    cyclic = _cyclic(graph, n, bound)
    if cyclic is not None and _count(cyclic) <= max(bound, 1):
        return cyclic
    candidates = [] if cyclic is None else [cyclic]
    candidates.append(_greedy(graph, range(n)))
    if graph.nnz <= _LARGEST_FIRST_LIMIT:
        degrees = np.diff(graph.indptr)
        candidates.append(_greedy(graph, np.argsort(-degrees, kind="stable").tolist()))
    return min(candidates, key=_count)


def colour_columns(pattern) -> tuple:
    """``(colours, k)``: a distance-1 colouring of the columns of CSR ``pattern`` (see the
    module docstring), colours ``0 .. k-1``."""
    n = pattern.shape[1]
    if pattern.nnz == 0:
        return np.zeros(n, dtype=np.int64), 0
    colours = _best_distance1(_conflicts(pattern), n, _lower_bound(pattern))
    return colours, _count(colours)


def colour_rows(pattern) -> tuple:
    """``(colours, k)`` for the rows of ``pattern``: no two rows sharing a column alike."""
    return colour_columns(pattern.T.tocsr())


# ---------------------------------------------------------------------------------------------
# star colouring


def _star_greedy(graph) -> np.ndarray:
    """Greedy star colouring (Gebremedhin, Manne and Pothen 2005, algorithm 4.1): a vertex
    takes the smallest colour not used by a neighbour, nor by a coloured vertex ``x`` two
    steps away through a neighbour ``w`` when ``w`` is uncoloured, or when ``w``'s colour is
    already used by another neighbour of ``x`` (that would make a two-coloured path on four
    vertices)."""
    n = graph.shape[0]
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    colour = [-1] * n
    for v in range(n):
        forbidden = set()
        for w in indices[indptr[v] : indptr[v + 1]]:
            cw = colour[w]
            if cw >= 0:
                forbidden.add(cw)
            for x in indices[indptr[w] : indptr[w + 1]]:
                cx = colour[x]
                if x == v or cx < 0:
                    continue
                if cw < 0:
                    forbidden.add(cx)
                else:
                    for y in indices[indptr[x] : indptr[x + 1]]:
                        if y != w and colour[y] == cw:
                            forbidden.add(cx)
                            break
        c = 0
        while c in forbidden:
            c += 1
        colour[v] = c
    return np.asarray(colour, dtype=np.int64)


def _symmetric_readable(pattern, colours, k: int) -> bool:
    """Whether every entry of symmetric ``pattern`` can be read directly or from its mirror."""
    coo = pattern.tocoo()
    unique = _unique_in_row(coo.row, colours[coo.col], pattern.shape[0], k)
    direct = unique[coo.row, colours[coo.col]]
    mirror = unique[coo.col, colours[coo.row]]
    return bool(np.all(direct | mirror))


def _unique_in_row(rows, cols_colours, n: int, k: int):
    """``(n, k)`` booleans: whether row i has exactly one entry of each colour."""
    counts = np.bincount(rows.astype(np.int64) * k + cols_colours, minlength=n * k)
    return (counts == 1).reshape(n, k)


def colour_symmetric(pattern) -> tuple:
    """``(colours, k)``: a star colouring of symmetric CSR ``pattern`` (see the module
    docstring). A distance-2 colouring (the columns' distance-1 colouring) is a star colouring
    too; the one with fewer colours is kept."""
    n = pattern.shape[0]
    if pattern.nnz == 0:
        return np.zeros(n, dtype=np.int64), 0
    candidates = [colour_columns(pattern)[0]]
    graph = pattern.tocsr(copy=True)
    graph.setdiag(False)
    graph.eliminate_zeros()
    degrees = np.diff(graph.indptr)
    if int((degrees.astype(np.int64) ** 3).sum()) <= _STAR_GREEDY_LIMIT:
        star = _star_greedy(graph)
        if _symmetric_readable(pattern, star, _count(star)):
            candidates.append(star)
    colours = min(candidates, key=_count)
    return colours, _count(colours)


# ---------------------------------------------------------------------------------------------
# decompression: indices into the compressed products


def column_reads(pattern, colours) -> tuple:
    """For ``J @ S`` given as ``B`` of shape ``(k, m)`` (one jvp per colour): the entries of
    CSR ``pattern`` are ``B[first, second]``."""
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    return colours[pattern.indices], rows


def row_reads(pattern, colours) -> tuple:
    """For ``S^T @ J`` given as ``B`` of shape ``(k, n)`` (one vjp per colour)."""
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    return colours[rows], pattern.indices


def symmetric_reads(pattern, colours, k: int) -> tuple:
    """For ``H @ S`` given as ``B`` of shape ``(k, n)`` (one hvp per colour, ``H``
    symmetric): each entry read directly where it can be, else from its mirror."""
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    cols = pattern.indices
    unique = _unique_in_row(rows, colours[cols], pattern.shape[0], k)
    direct = unique[rows, colours[cols]]
    if not np.all(direct | unique[cols, colours[rows]]):
        raise AssertionError("dualad: the colouring does not determine the Hessian")
    first = np.where(direct, colours[cols], colours[rows])
    second = np.where(direct, rows, cols)
    return first, second


__all__ = [
    "colour_columns",
    "colour_rows",
    "colour_symmetric",
    "column_reads",
    "row_reads",
    "symmetric_reads",
]
