"""Which ops vmap may run as a loop over the examples.

The batching rules themselves live with their ops (``dualad/ops``; the shared ones in
``ops/_batching.py``).
"""

from __future__ import annotations

# ops without a rule of their own that may run as a loop over the examples under vmap (with a
# one-time PerformanceWarning); every other op needs a batching rule (registry test). All are
# data-dependent: the per-example results stack only when their shapes agree.

LOOP_BATCHED = frozenset(
    {"nonzero", "repeat_interleave_index"}
    # set operations and bincount (dualad/ops/sets.py, counting.py): sizes depend on the values
    | {"unique", "unique_values", "intersect1d", "union1d", "setdiff1d", "setxor1d", "bincount"}
)
