"""``dualad.tracing``: ``dualad.jit``, trace once and replay straight-line array code (DESIGN 9).

- ``tracer``: the trace level (``TraceLevel``, ``TraceTensor``): runs and records every op;
- ``program``: the recorded program and its passes (no-op views, CSE, DCE);
- ``codegen``: the program as the source of one Python function, compiled;
- ``signature``: the cache key of a call (pytree structure, shapes, dtypes, static values);
- ``api``: ``jit`` itself, its cache, guards and eager fallbacks;
- ``graphs``: plain backward passes compiled whole (installed into the engine here);
- ``tangents``: forward mode's per-op rules compiled (installed into the dual levels here).
- ``sparsity``: dependency patterns of a traced call (installed into ``dualad.func``'s
  ``sparse_jacobian``/``sparse_hessian`` here).

>>> import dualad
>>> dualad.jit(lambda x: x * 2)(dualad.tensor([1.0]))
tensor([2.])
"""

from __future__ import annotations

from ..func import _sparse

# (importing them installs compiled backward passes and compiled forward rules)
from . import graphs, tangents  # noqa: F401
from .api import CacheInfo, Jitted, RetraceWarning, jit
from .sparsity import detect

_sparse.install_detector(detect, jit)

__all__ = ["CacheInfo", "Jitted", "RetraceWarning", "jit"]
