"""vmap: the batching transform.

``dualad.vmap`` (the function, ``vmap/api.py``) runs a function once on ``BatchedTensor`` inputs
(``vmap/batched.py``: the tensor wrapper and the ``VmapLevel`` on the dispatch stack); every op
is batched by the batching rule its ``OpDef`` carries (``dualad/ops``; the shared ones in
``ops/_batching.py``); ``vmap/rules.py`` lists the ops that may fall back to a loop.
"""

from .batched import BatchedTensor, PerformanceWarning, VmapLevel

__all__ = ["BatchedTensor", "PerformanceWarning", "VmapLevel"]
