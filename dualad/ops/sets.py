"""Set operations (no gradient): ``unique`` (values, first indices, inverse, counts),
``unique_values``, ``isin``, ``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``.

Their public functions, with NumPy's signatures, are in ``dualad.numpy``
(``dualad/numpy/sets.py``). The size of a set operation's result depends on the values, so
under vmap these run once per example (``LOOP_BATCHED`` in ``dualad/vmap/rules.py``: the
results stack when their shapes agree, else vmap says so); ``isin`` keeps its input's shape
and has a batching rule.
"""

from __future__ import annotations

from . import _xp_compat
from .searching import nondiff_op, options, per_row, rowwise_batch


def _unique_impl(xp, x, *, axis, equal_nan):
    # every output at once: which ones the caller asked for does not change the values (with
    # any of them NumPy sorts; only the values alone may come unsorted: unique_values)
    values, index, inverse, counts = xp.unique(
        x,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        axis=axis,
        equal_nan=equal_nan,
    )
    return values, index, inverse, counts


def _unique_values_impl(xp, x, *, equal_nan, sorted):
    return _xp_compat.unique(xp, x, **options(equal_nan=(equal_nan, True), sorted=(sorted, True)))


def _isin_impl(xp, element, test_elements, *, assume_unique, invert, kind, rows=0):
    def isin(e, t):
        return xp.isin(e, t, assume_unique=assume_unique, invert=invert, **options(kind=kind))

    return per_row(xp, isin, rows, element, test_elements)


def _intersect1d_impl(xp, a, b, *, assume_unique):
    return xp.intersect1d(a, b, assume_unique=assume_unique, return_indices=True)


unique_op = nondiff_op("unique", _unique_impl, None, nout=4)
unique_values_op = nondiff_op("unique_values", _unique_values_impl, None)
isin_op = nondiff_op("isin", _isin_impl, rowwise_batch(1))
intersect1d_op = nondiff_op("intersect1d", _intersect1d_impl, None, nout=3)
union1d_op = nondiff_op("union1d", lambda xp, a, b: xp.union1d(a, b), None)
setdiff1d_op = nondiff_op(
    "setdiff1d", lambda xp, a, b, *, assume_unique: xp.setdiff1d(a, b, assume_unique), None
)
setxor1d_op = nondiff_op(
    "setxor1d", lambda xp, a, b, *, assume_unique: xp.setxor1d(a, b, assume_unique), None
)
