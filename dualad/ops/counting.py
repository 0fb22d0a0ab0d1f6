"""Counting (no gradient: integer counts): ``bincount`` without weights, ``histogram``'s
counts and bin edges, and ``histogramdd``'s counts for given edges.

Their public functions, with NumPy's signatures, are in ``dualad.numpy``
(``dualad/numpy/counting.py``), which also gives weighted ``bincount`` (differentiable in the
weights, made of ``index_add``) and the bin edges' derivative where they depend on the data.
``bincount``'s length depends on the values (``LOOP_BATCHED`` under vmap); ``histogram``'s
shapes are static, and the batching rule of both histograms runs one per leading row.
"""

from __future__ import annotations

from .searching import front_batch, nondiff_op, per_row


def _bincount_impl(xp, x, *, minlength):
    return xp.bincount(x, minlength=minlength)


def _histogram_impl(xp, a, edges=None, *, bins, range, rows=0):
    def histogram(values, given=None):
        return xp.histogram(values, bins=bins if given is None else given, range=range)

    return per_row(xp, histogram, rows, *((a,) if edges is None else (a, edges)))


bincount_op = nondiff_op("bincount", _bincount_impl, None)
histogram_op = nondiff_op("histogram", _histogram_impl, front_batch, nout=2)


def _histogramdd_impl(xp, sample, *edges, drawn, rows=0):
    # ``drawn``: per dimension, whether its edges come from the data's range, which NumPy
    # requires finite (checked here, where the values are, whatever level asked)
    for e, check in zip(edges, drawn):
        if check and not bool(xp.isfinite(e).all()):
            raise ValueError("autodetected range of the sample is not finite (NaN or inf)")
    return per_row(xp, lambda s, *e: xp.histogramdd(s, bins=e)[0], rows, sample, *edges)


# the counts only: dualad.numpy makes the edges (from the data's range: differentiable)
histogramdd_op = nondiff_op("histogramdd", _histogramdd_impl, front_batch)
