"""vmap: the batching transform.

``dualad.vmap`` (the function, ``vmap/api.py``) runs a function once on ``BatchedTensor`` inputs
(``vmap/batched.py``: the tensor wrapper and the ``VmapLevel`` on the dispatch stack); every op
is batched by its rule (``vmap/rules.py`` holds the shared ones). This package is imported early,
by the op modules (for ``rules``), so it must not import the op modules at import time.
"""

from .batched import BatchedTensor, PerformanceWarning, VmapLevel

__all__ = ["BatchedTensor", "PerformanceWarning", "VmapLevel"]
